//! `pipeline graph`: the dependency graph, or a dbt-style selection of it, as DOT, Mermaid, JSON, an
//! SVG picture or a self-contained HTML lineage page.

use super::{Context, OpsError};
use crate::graph;
use std::path::Path;

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Mermaid,
    Json,
    /// Layers in columns, products as colours (rendered in-process).
    Svg,
    /// Search a table, highlight its ancestors and descendants; works offline.
    Html,
}

/// The exported graph.
#[derive(Debug, Clone)]
pub struct GraphExport {
    /// The document, ready to print as is.
    pub text: String,
    /// Errors in the project (reported through the console); the export is still made.
    pub project_has_errors: bool,
}

/// Exports the graph, or the selection `select` (`t`, `+t`, `t+`, `@t`, `product:P`, `layer:L`,
/// `path:DIR`; space = union, comma = intersection; `path:` accepts a folder from the current one).
///
/// Errors: a malformed selection ([`OpsError::is_usage`]), one naming an unknown table, the tree
/// cannot be read.
pub fn export(
    ctx: &Context,
    pipelines: &Path,
    select: Option<&str>,
    format: GraphFormat,
    allow_unknown: bool,
) -> Result<GraphExport, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_project(&cfg, pipelines, allow_unknown)?;
    let subset = match select {
        Some(expr) => {
            let mut notes = Vec::new();
            let set = graph::select_noting(
                &project.graph,
                &super::scope::select_paths(pipelines, expr),
                &mut notes,
            )?;
            for n in &notes {
                ctx.console.note(n);
            }
            Some(set)
        }
        None => None,
    };
    let subset = subset.as_ref();
    let g = &project.graph;
    let text = match format {
        GraphFormat::Dot => graph::to_dot(g, subset),
        GraphFormat::Mermaid => graph::to_mermaid(g, subset),
        GraphFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&graph::to_json(g, subset)).expect("plain data")
        ),
        GraphFormat::Svg => graph::to_svg(g, subset),
        GraphFormat::Html => graph::to_html(g, subset),
    };
    Ok(GraphExport {
        text,
        project_has_errors: project.has_errors(),
    })
}
