//! `flinkpipe project …`: project-wide reports.

use super::args::{GlobalArgs, ProjectCommand};
use super::{CmdResult, is_json, load_project, print_json, render};
use serde::Serialize;

#[derive(Serialize)]
struct CrossProduct {
    table_name: String,
    product_name: String,
    /// Parents in another product.
    parents: Vec<String>,
    /// Children in another product.
    children: Vec<String>,
}

pub(super) fn run(global: &GlobalArgs, cmd: &ProjectCommand) -> CmdResult {
    match cmd {
        ProjectCommand::ReportTableCrossProducts { dir, allow_unknown } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            let inv = &project.inventory;
            let product = |n: &str| inv.tables.get(n).map(|t| t.product.as_str()).unwrap_or("");
            let rows: Vec<CrossProduct> = inv
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
            if is_json(global) {
                print_json(&rows);
            } else {
                let body: Vec<Vec<String>> = rows
                    .iter()
                    .map(|r| {
                        vec![
                            r.table_name.clone(),
                            r.product_name.clone(),
                            r.parents.join(", "),
                            r.children.join(", "),
                        ]
                    })
                    .collect();
                print!(
                    "{}",
                    render::table(
                        &[
                            "table",
                            "product",
                            "parents in other products",
                            "children in other products"
                        ],
                        &body
                    )
                );
            }
            Ok(!project.has_errors())
        }
        ProjectCommand::ListTablesWithOneChild { dir, allow_unknown } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            let rows: Vec<(String, String)> = project
                .inventory
                .tables
                .values()
                .filter_map(|t| {
                    let c = project.graph.children(&t.name);
                    (c.len() == 1).then(|| (t.name.clone(), c[0].to_string()))
                })
                .collect();
            if is_json(global) {
                print_json(
                    &rows
                        .iter()
                        .map(|(t, c)| serde_json::json!({"table_name": t, "child": c}))
                        .collect::<Vec<_>>(),
                );
            } else {
                let body: Vec<Vec<String>> = rows
                    .iter()
                    .map(|(t, c)| vec![t.clone(), c.clone()])
                    .collect();
                print!("{}", render::table(&["table", "only child"], &body));
            }
            Ok(!project.has_errors())
        }
    }
}
