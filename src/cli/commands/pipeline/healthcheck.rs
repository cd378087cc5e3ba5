//! `flinkpipe pipeline healthcheck PRODUCT [DIR]`: shift_left's health verdict per table of a product.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::health;

/// Options of `pipeline healthcheck`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The product.
    pub product_name: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
}

fn n(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let (pipelines, product) = (args.dir.pipelines.as_path(), args.product_name.as_str());
    let r = health::healthcheck(&inv.ctx, pipelines, product)?;
    if inv.json() {
        print_json(&r);
        return Ok(r.healthy());
    }
    println!("Health of product {} on {}:", r.product_name, r.target);
    for t in &r.tables {
        let verdict = serde_json::to_value(t.health).unwrap_or_default();
        println!(
            "  {:<40} {:<12} pending {:>8}  {}",
            t.table_name,
            verdict.as_str().unwrap_or_default(),
            n(t.pending_records),
            t.statements
                .iter()
                .map(|(s, p)| format!("{s} {}", crate::plan::status::phase_or_absent(p.as_ref())))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(d) = &t.detail {
            println!("      {d}");
        }
        for n in &t.server {
            for line in n.notes.lines() {
                println!("      {}: {line}", n.statement);
            }
        }
    }
    println!(
        "{}",
        r.summary
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(why) = &r.metrics_skipped {
        eprintln!("warning: no runtime metrics: {why}");
    }
    Ok(r.healthy())
}
