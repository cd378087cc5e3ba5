//! `flinkpipe project list-compute-pools [DIR]`: the compute pools of the Confluent Cloud
//! environment, with their capacity and what of the configuration uses each.

use crate::cli::args::PipelinesDir;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools;

/// Options of `project list-compute-pools`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// shift_left's option: the environment [default: confluent_cloud.environment_id].
    #[arg(long, value_name = "ENV_ID")]
    pub environment_id: Option<String>,
    /// shift_left's option: the cloud region [default: confluent_cloud.cloud_region].
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let ctx = inv.ctx.with_overrides(crate::ops::ConfigOverrides {
        environment_id: args.environment_id.clone(),
        cloud_region: args.region.clone(),
        ..Default::default()
    });
    let r = pools::list(&ctx, pipelines)?;
    if inv.json() {
        print_json(&r);
        return Ok(r.missing.is_empty());
    }
    println!("Compute pools of environment {}\n", r.environment);
    let rows: Vec<Vec<String>> = r
        .pools
        .iter()
        .map(|p| {
            vec![
                p.pool.id.clone(),
                p.pool.display_name.clone(),
                p.pool.phase.as_str().to_string(),
                format!(
                    "{}/{}",
                    p.pool
                        .current_cfu
                        .map_or_else(|| "?".to_string(), |c| c.to_string()),
                    p.pool.max_cfu
                ),
                p.usage_percent
                    .map_or_else(|| "unknown".to_string(), |u| format!("{u:.0} %")),
                format!("{} {}", p.pool.cloud, p.pool.region),
                if p.configured_for.is_empty() {
                    "-".into()
                } else {
                    p.configured_for.join("; ")
                },
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "pool",
                "name",
                "phase",
                "CFU",
                "used",
                "region",
                "configured for"
            ],
            &rows
        )
    );
    println!("\n{} pool(s)", rows.len());
    for m in &r.missing {
        eprintln!(
            "error: the configuration names compute pool {m}, which this environment does not have"
        );
    }
    Ok(r.missing.is_empty())
}
