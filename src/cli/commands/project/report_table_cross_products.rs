//! `flinkpipe project report-table-cross-products [DIR]`: tables with parents or children in another
//! product.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::report;

/// Options of `project report-table-cross-products`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let l = report::cross_products(&inv.ctx, pipelines, allow_unknown)?;
    if inv.json() {
        print_json(&l.rows);
    } else {
        let body: Vec<Vec<String>> = l
            .rows
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
            table(
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
    Ok(!l.project_has_errors)
}
