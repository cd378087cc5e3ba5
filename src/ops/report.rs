//! Reports on the graph: `pipeline report` (a table's parent and child trees),
//! `project report-table-cross-products`, `project list-tables-with-one-child`.

use super::{Context, OpsError};
use crate::graph::{self, TreeNode};
use serde::Serialize;
use std::path::Path;

/// A table's trees.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    pub table_name: String,
    pub parents: TreeNode,
    /// With `children_too`.
    pub children: Option<TreeNode>,
    /// Errors in the project (reported through the console); the report is still built.
    #[serde(skip)]
    pub project_has_errors: bool,
}

impl TableReport {
    /// Whether the report can be written as nested JSON: each tree at most [`graph::MAX_JSON_DEPTH`]
    /// levels deep (one nested object per level; serialisers and JSON readers recurse per level).
    ///
    /// Errors: [`OpsError::Refused`] naming the tree, its depth, the limit and the flat alternatives.
    pub fn check_json_depth(&self) -> Result<(), OpsError> {
        let trees = [
            ("parent", Some(&self.parents)),
            ("child", self.children.as_ref()),
        ];
        for (kind, tree) in trees {
            let Some(depth) = tree.map(TreeNode::depth) else {
                continue;
            };
            if depth > graph::MAX_JSON_DEPTH {
                let (t, sel) = (&self.table_name, if kind == "parent" { "+" } else { "" });
                let sel_after = if kind == "child" { "+" } else { "" };
                return Err(OpsError::Refused(format!(
                    "the {kind} tree of '{t}' is {depth} levels deep; --output json nests one object per level and writes at most {} (JSON readers stop far earlier): use the text report, or `flinkpipe pipeline graph --select '{sel}{t}{sel_after}' --format json` for the same tables and edges as a flat list",
                    graph::MAX_JSON_DEPTH
                )));
            }
        }
        Ok(())
    }
}

/// The parent tree of `table` (and its child tree with `children_too`); `parent_only` keeps one level.
///
/// Errors: an unknown table (with a suggestion), the tree cannot be read.
pub fn table_report(
    ctx: &Context,
    pipelines: &Path,
    table: &str,
    children_too: bool,
    parent_only: bool,
    allow_unknown: bool,
) -> Result<TableReport, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_project(&cfg, pipelines, allow_unknown)?;
    let resolved =
        crate::inventory::names::resolve(table, project.graph.nodes().map(|n| n.name.as_str()))?;
    if let Some(note) = resolved.note() {
        ctx.console.note(&note);
    }
    let table = resolved.name.as_str();
    let depth = parent_only.then_some(1);
    let parents = graph::parent_tree(&project.graph, table, depth)?;
    let children = if children_too {
        Some(graph::child_tree(&project.graph, table, depth)?)
    } else {
        None
    };
    Ok(TableReport {
        table_name: table.to_string(),
        parents,
        children,
        project_has_errors: project.has_errors(),
    })
}

/// A table with parents or children in another product.
#[derive(Debug, Clone, Serialize)]
pub struct CrossProduct {
    pub table_name: String,
    pub product_name: String,
    /// Parents in another product.
    pub parents: Vec<String>,
    /// Children in another product.
    pub children: Vec<String>,
}

/// A listing, and whether the project had errors (reported through the console).
#[derive(Debug, Clone)]
pub struct Listing<T> {
    pub rows: Vec<T>,
    pub project_has_errors: bool,
}

/// Tables whose parents or children belong to another product.
pub fn cross_products(
    ctx: &Context,
    pipelines: &Path,
    allow_unknown: bool,
) -> Result<Listing<CrossProduct>, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_project(&cfg, pipelines, allow_unknown)?;
    let inv = &project.inventory;
    let product = |n: &str| inv.tables.get(n).map(|t| t.product.as_str()).unwrap_or("");
    let rows = inv
        .tables
        .values()
        .filter(|t| !t.external)
        .map(|t| CrossProduct {
            table_name: t.name.clone(),
            product_name: t.product.clone(),
            parents: project
                .graph
                .parents(&t.name)
                .into_iter()
                .filter(|p| product(p) != t.product && !inv.tables[*p].external)
                .map(str::to_string)
                .collect(),
            children: project
                .graph
                .children(&t.name)
                .into_iter()
                .filter(|c| product(c) != t.product)
                .map(str::to_string)
                .collect(),
        })
        .filter(|r| !r.parents.is_empty() || !r.children.is_empty())
        .collect();
    Ok(Listing {
        rows,
        project_has_errors: project.has_errors(),
    })
}

/// A table with exactly one child.
#[derive(Debug, Clone, Serialize)]
pub struct OneChild {
    pub table_name: String,
    pub child: String,
}

/// Tables that have exactly one child (candidates for merging statements).
pub fn tables_with_one_child(
    ctx: &Context,
    pipelines: &Path,
    allow_unknown: bool,
) -> Result<Listing<OneChild>, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_project(&cfg, pipelines, allow_unknown)?;
    let rows = project
        .inventory
        .tables
        .values()
        .filter_map(|t| {
            let c = project.graph.children(&t.name);
            (c.len() == 1).then(|| OneChild {
                table_name: t.name.clone(),
                child: c[0].to_string(),
            })
        })
        .collect();
    Ok(Listing {
        rows,
        project_has_errors: project.has_errors(),
    })
}

/// The report as shift_left's `--yaml` / `--json` print it (the same [`TableReport`] as `--output
/// json`): YAML when `yaml`, else pretty JSON; ends with a newline.
///
/// Errors: a tree deeper than [`graph::MAX_JSON_DEPTH`] ([`TableReport::check_json_depth`]).
pub fn report_document(r: &TableReport, yaml: bool) -> Result<String, OpsError> {
    r.check_json_depth()?;
    if yaml {
        Ok(serde_yaml_ng::to_string(r)?)
    } else {
        Ok(format!(
            "{}\n",
            serde_json::to_string_pretty(r).expect("plain data serialises")
        ))
    }
}

/// Writes a report document to `path` atomically (shift_left's `--output-file-name`).
///
/// Errors: the file cannot be written (the previous one, if any, is left as it was).
pub fn write_report_file(path: &Path, text: &str) -> Result<(), OpsError> {
    crate::fsutil::write_atomic(path, text.as_bytes()).map_err(|source| OpsError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The file name of `table`'s `report --open` page, `<table>_pipeline_graph.html`.
///
/// Errors: a name that cannot be a file name ([`crate::fsutil::file_name_component`]): refused,
/// nothing written.
pub fn page_file_name(table: &str) -> Result<String, OpsError> {
    let name = crate::fsutil::file_name_component(table).map_err(|why| {
        OpsError::Refused(format!(
            "table name {shown} cannot name a file in the output folder: it {why}; nothing was written", shown = crate::fsutil::shown_name(table)
        ))
    })?;
    Ok(format!("{name}_pipeline_graph.html"))
}

/// shift_left's `report --open` page: the lineage page ([`crate::graph::to_html`]) of `table` and
/// its ancestors (and descendants with `children_too`), written to `<table>_pipeline_graph.html` in
/// `out_dir`, else `$FLINKPIPE_OUTPUT_DIR`, else the project's `.flinkpipe/` ([`super::output_dir`]).
/// Returns the file's path.
///
/// Errors: an unknown table, a folder or file that cannot be written.
pub fn write_report_page(
    ctx: &Context,
    pipelines: &Path,
    table: &str,
    children_too: bool,
    allow_unknown: bool,
    out_dir: Option<&Path>,
) -> Result<std::path::PathBuf, OpsError> {
    let select = if children_too {
        format!("+{table}+")
    } else {
        format!("+{table}")
    };
    let page = super::graph::export(
        ctx,
        pipelines,
        Some(&select),
        super::graph::GraphFormat::Html,
        allow_unknown,
    )?;
    let name = page_file_name(table)?;
    let dir = super::output_dir(out_dir, pipelines)?;
    let path = dir.join(name);
    write_report_file(&path, &page.text)?;
    Ok(path)
}
