//! `flinkpipe pipeline analyze-pool-usage [DIR] [-p P] [-d D]`: CFUs per compute pool and
//! consolidation advice.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::health;

/// Options of `pipeline analyze-pool-usage`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Count only the statements of this product.
    #[arg(short = 'p', long = "product-name", value_name = "P")]
    pub product_name: Option<String>,
    /// Count only the statements of tables under this folder.
    #[arg(short = 'd', long = "directory", value_name = "D")]
    pub directory: Option<String>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let (product, directory) = (args.product_name.as_deref(), args.directory.as_deref());
    let r = health::analyze_pool_usage(&inv.ctx, pipelines, product, directory)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    println!("Compute pools of environment {}:", r.environment);
    for p in &r.pools {
        println!(
            "  {:<16} {:<24} {:>3}/{:<3} CFU {:>5}  {} running, ours: {}",
            p.id,
            p.display_name,
            p.current_cfu
                .map_or_else(|| "?".to_string(), |c| c.to_string()),
            p.max_cfu,
            p.usage_percent
                .map_or_else(|| "?".to_string(), |u| format!("{u:.0}%")),
            p.running_statements,
            if p.project_statements.is_empty() {
                "none".to_string()
            } else {
                p.project_statements
                    .iter()
                    .map(|(k, v)| format!("{v} of {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
    }
    for a in &r.advice {
        println!("advice: {a}");
    }
    Ok(true)
}
