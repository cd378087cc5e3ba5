//! `flinkpipe pipeline graph [DIR] [--select EXPR] --format dot|mermaid|json|svg|html`.

use crate::cli::args::ProjectArgs;
use crate::cli::{CmdResult, Invocation};
use crate::ops::graph;

/// Graph export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    Dot,
    Mermaid,
    Json,
    /// A picture: layers in columns, products as colours (rendered in-process).
    Svg,
    /// A self-contained lineage page: search a table, highlight its ancestors and descendants.
    Html,
}

/// Options of `pipeline graph`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// dbt-style selection: `t`, `+t`, `t+`, `+t+`, `@t`, `product:P`, `layer:L`, `path:DIR`;
    /// space = union, comma = intersection.
    #[arg(long, value_name = "EXPR")]
    pub select: Option<String>,
    /// Graph format.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let select = args.select.as_deref();
    let format = args.format;
    let format = match format {
        GraphFormat::Dot => graph::GraphFormat::Dot,
        GraphFormat::Mermaid => graph::GraphFormat::Mermaid,
        GraphFormat::Json => graph::GraphFormat::Json,
        GraphFormat::Svg => graph::GraphFormat::Svg,
        GraphFormat::Html => graph::GraphFormat::Html,
    };
    let g = graph::export(&inv.ctx, pipelines, select, format, allow_unknown)?;
    print!("{}", g.text);
    Ok(!g.project_has_errors)
}
