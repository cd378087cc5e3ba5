//! `flinkpipe pipeline analyze-pool-usage [DIR] [-p P] [-d D] [--apply]`: CFUs per compute pool,
//! consolidation advice, and pools to resize in place (`--apply` resizes them).

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
    /// Resize the pools the advice names (`spec.max_cfu`, in place); without it the advice is only
    /// shown. Exit 1 when a resize fails.
    #[arg(long)]
    pub apply: bool,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let (product, directory) = (args.product_name.as_deref(), args.directory.as_deref());
    let r = health::analyze_pool_usage(&inv.ctx, pipelines, product, directory, args.apply)?;
    let ok = !r
        .resizes
        .iter()
        .any(|x| matches!(x.outcome, health::ResizeOutcome::Failed(_)));
    if inv.json() {
        print_json(&r);
        return Ok(ok);
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
    for x in &r.resizes {
        let what = format!(
            "{} ({}) uses {} of {} CFUs, at or past {:.0}%",
            x.id,
            x.display_name,
            x.current_cfu,
            x.from_max_cfu,
            r.ratio * 100.0
        );
        match &x.outcome {
            health::ResizeOutcome::Advised => println!(
                "advice: {what}: resize it to {} CFUs (rerun with --apply)",
                x.to_max_cfu
            ),
            health::ResizeOutcome::Resized => {
                println!("resized: {what}: now {} CFUs", x.to_max_cfu)
            }
            health::ResizeOutcome::Failed(e) => println!("FAILED: {what}: {e}"),
        }
    }
    Ok(ok)
}
