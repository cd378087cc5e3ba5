//! `flinkpipe project list-tables-with-one-child [DIR]`: tables with exactly one child.

use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::report;
use std::path::Path;

pub fn exec(inv: &Invocation, pipelines: &Path, allow_unknown: bool) -> CmdResult {
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
