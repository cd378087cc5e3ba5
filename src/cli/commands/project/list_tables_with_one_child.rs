//! `flinkpipe project list-tables-with-one-child [DIR]`: tables with exactly one child.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::report;

/// Options of `project list-tables-with-one-child`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let l = report::tables_with_one_child(&inv.ctx, pipelines, allow_unknown)?;
    if inv.json() {
        print_json(&l.rows);
    } else {
        let body: Vec<Vec<String>> = l
            .rows
            .iter()
            .map(|r| vec![r.table_name.clone(), r.child.clone()])
            .collect();
        print!("{}", table(&["table", "only child"], &body));
    }
    Ok(!l.project_has_errors)
}
