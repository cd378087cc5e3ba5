//! `flinkpipe project create-compute-pool NAME [DIR] --max-cfu N`: a compute pool in the
//! environment's cloud and region, waited for until PROVISIONED.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools::{self, CreatePoolRequest};
use std::time::Duration;

/// Options of `project create-compute-pool`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The pool's display name (letters, digits, '_', '.', '-'; at most 64).
    pub name: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// The pool's maximum CFUs: 5, 10, 20, 30, 40 or 50.
    #[arg(long, value_name = "N")]
    pub max_cfu: u32,
    /// Longest wait for PROVISIONED, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,
    /// Return as soon as the pool is requested (PROVISIONING).
    #[arg(long)]
    pub no_wait: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pool = pools::create(
        &inv.ctx,
        &CreatePoolRequest {
            pipelines: args.dir.pipelines.clone(),
            name: args.name.clone(),
            max_cfu: args.max_cfu,
            wait: (!args.no_wait).then(|| Duration::from_secs(args.timeout)),
        },
    )?;
    if inv.json() {
        print_json(&pool);
    } else {
        println!(
            "created compute pool {} ({}): {}, max {} CFU, {} {}",
            pool.id,
            pool.display_name,
            pool.phase.as_str(),
            pool.max_cfu,
            pool.cloud,
            pool.region
        );
    }
    Ok(true)
}
