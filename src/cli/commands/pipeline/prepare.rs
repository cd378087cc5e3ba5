//! `flinkpipe pipeline prepare SQL_FILE [DIR] [--compute-pool-id P]`: one-off SQL on the target.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::prepare;
use std::path::Path;
use std::time::Duration;

pub fn exec(
    inv: &Invocation,
    sql_file: &Path,
    pipelines: &Path,
    pool: Option<&str>,
    timeout: u64,
) -> CmdResult {
    let r = prepare::prepare(
        &inv.ctx,
        pipelines,
        sql_file,
        pool,
        Duration::from_secs(timeout),
    )?;
    if inv.json() {
        print_json(&r);
        return Ok(r.success());
    }
    for s in &r.statements {
        let first = s.sql.lines().next().unwrap_or_default();
        match (s.outcome, &s.error) {
            ("done", _) => println!("done     {}:{} {first}", r.file.display(), s.line),
            (_, Some(e)) => eprintln!("failed   {}:{} {first}: {e}", r.file.display(), s.line),
            _ => println!(
                "not run  {}:{} {first} (after the failure above)",
                r.file.display(),
                s.line
            ),
        }
    }
    Ok(r.success())
}
