//! `flinkpipe project get-statement-list POOL [DIR]`: every statement on a compute pool, with its
//! phase, owner table (or not ours) and age.

use crate::cli::args::ProjectArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools;

/// Options of `project get-statement-list`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The compute pool id (`lfcp-…`).
    pub compute_pool_id: String,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let pool = args.compute_pool_id.as_str();
    let r = pools::statements_on_pool(&inv.ctx, pipelines, pool, allow_unknown)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    if r.statements.is_empty() {
        println!("No statement on compute pool {}.", r.compute_pool_id);
        return Ok(true);
    }
    println!(
        "{} statement(s) on compute pool {}:",
        r.statements.len(),
        r.compute_pool_id
    );
    println!("{:<48} {:<10} {:<32} age", "statement", "phase", "table");
    for s in &r.statements {
        println!(
            "{:<48} {:<10} {:<32} {}",
            s.statement,
            s.phase,
            s.table_name.as_deref().unwrap_or("(not ours)"),
            s.age_days
                .map_or_else(|| "?".to_string(), |d| format!("{d}d"))
        );
    }
    Ok(true)
}
