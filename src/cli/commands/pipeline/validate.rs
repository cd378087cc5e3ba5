//! `flinkpipe pipeline validate [DIR]`: the project's errors and warnings, each with file and line.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::validate;
use std::path::Path;

pub fn exec(inv: &Invocation, pipelines: &Path, allow_unknown: bool) -> CmdResult {
    let v = validate::validate(&inv.ctx, pipelines, allow_unknown)?;
    if inv.json() {
        print_json(&v.diagnostics);
    } else if !v.has_errors() {
        println!(
            "ok: {} tables, {} edges, {} warning(s)",
            v.tables,
            v.edges,
            v.diagnostics.len()
        );
    }
    Ok(!v.has_errors())
}
