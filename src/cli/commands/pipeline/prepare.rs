//! `flinkpipe pipeline prepare SQL_FILE [DIR] [--compute-pool-id P]`: one-off SQL on the target.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::prepare;
use std::time::Duration;

/// Options of `pipeline prepare`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The SQL file.
    pub sql_file: std::path::PathBuf,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// The compute pool to run them in [default: flink.compute_pool_id].
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
    /// Longest wait for one statement, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let sql_file = args.sql_file.as_path();
    let pool = args.compute_pool_id.as_deref();
    let timeout = args.timeout;
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
    if let Some(note) = &r.note {
        println!("note: {note}");
    }
    Ok(r.success())
}
