//! `flinkpipe project create-compute-pool NAME [DIR] --max-cfu N`: a compute pool in the
//! environment's cloud and region, waited for until PROVISIONED.

use crate::cli::args::CreateComputePoolArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools::{self, CreatePoolRequest};
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &CreateComputePoolArgs) -> CmdResult {
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
