//! `flinkpipe pipeline validate [DIR] [--strict] [--deny CLASS …]`: the project's errors and warnings,
//! each with file and line, and one summary line that says `ok` only when every statement was parsed.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::validate::{self, Gate, Verdict};
use std::path::Path;

pub fn exec(inv: &Invocation, pipelines: &Path, allow_unknown: bool, gate: Gate) -> CmdResult {
    let v = validate::validate(&inv.ctx, pipelines, allow_unknown, &gate)?;
    if inv.json() {
        print_json(&v.diagnostics);
        return Ok(!v.has_errors());
    }
    let counts = format!(
        "{} tables, {} edges, {} warning(s)",
        v.tables,
        v.edges,
        v.diagnostics.iter().filter(|d| !d.is_error()).count()
    );
    match v.verdict() {
        Verdict::Ok => println!("ok: {counts}"),
        Verdict::Unverified => println!(
            "not verified: {counts}; {} statement(s) could not be parsed and were read by the token-level fallback (references and statefulness estimated): fix them, or gate with --strict",
            v.unparsed_statements
        ),
        // The console's diagnostics end with their count (`1 error(s), 0 warning(s)`).
        Verdict::Failed => {}
    }
    Ok(!v.has_errors())
}
