//! `flinkpipe pipeline report TABLE [DIR]`: the parent tree (and child tree with `--children-too`).

use crate::cli::render::{print_json, tree_text};
use crate::cli::{CmdResult, Invocation};
use crate::ops::report;
use std::path::Path;

pub fn exec(
    inv: &Invocation,
    pipelines: &Path,
    table: &str,
    children_too: bool,
    parent_only: bool,
    allow_unknown: bool,
) -> CmdResult {
    let r = report::table_report(
        &inv.ctx,
        pipelines,
        table,
        children_too,
        parent_only,
        allow_unknown,
    )?;
    if inv.json() {
        r.check_json_depth()?;
        print_json(&r);
    } else {
        println!("Parents of {table}:");
        print!("{}", tree_text(&r.parents));
        if let Some(c) = &r.children {
            println!("\nChildren of {table}:");
            print!("{}", tree_text(c));
        }
    }
    Ok(!r.project_has_errors)
}
