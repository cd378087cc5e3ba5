//! `flinkpipe pipeline build-execution-plan [DIR] SCOPE`: the execution plan, as a table or JSON.

use crate::cli::args::{PhaseSourceArgs, PlanArgs, PoolArgs};
use crate::cli::render::{self, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::plan;

/// Options of `pipeline build-execution-plan`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub phases: PhaseSourceArgs,
    #[command(flatten)]
    pub pool: PoolArgs,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let p = plan::build_execution_plan(
        &inv.ctx,
        &args.plan.request_in(&args.pool),
        &args.phases.phase_source(),
    )?;
    if inv.json() {
        print_json(&p);
    } else {
        print!("{}", render::plan(&p));
    }
    Ok(true)
}
