//! `flinkpipe pipeline report-running-statements [DIR] [--table-name T | --product-name P | --dir D]
//! [--from-date TS]`: shift_left's report of the running statements with their metrics.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::health;
use crate::ops::scope::{PlanRequest, ScopeRequest};

/// Options of `pipeline report-running-statements`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Only this table.
    #[arg(long, group = "running_scope", value_name = "T")]
    pub table_name: Option<String>,
    /// Only the tables of this product.
    #[arg(long, group = "running_scope", value_name = "P")]
    pub product_name: Option<String>,
    /// Only the tables under this folder.
    #[arg(long = "dir", group = "running_scope", value_name = "D")]
    pub scope_dir: Option<String>,
    /// Metrics from this time on (UTC).
    #[arg(long, value_name = "YYYY-MM-DDThh:mm:ss")]
    pub from_date: Option<String>,
}

fn n(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let (table, product, dir) = (
        args.table_name.as_deref(),
        args.product_name.as_deref(),
        args.scope_dir.as_deref(),
    );
    let from_date = args.from_date.as_deref();
    let scope = match (table, product, dir) {
        (Some(t), _, _) => ScopeRequest::Tables(vec![t.to_string()]),
        (_, Some(p), _) => ScopeRequest::Product(p.to_string()),
        (_, _, Some(d)) => ScopeRequest::Dir(d.to_string()),
        _ => ScopeRequest::None,
    };
    let plan = PlanRequest {
        pipelines: pipelines.to_path_buf(),
        scope,
        ..PlanRequest::default()
    };
    let r = health::report_running_statements(&inv.ctx, plan, from_date)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    println!(
        "{} running statement(s) of {} (metrics of the last {} min):",
        r.statements.len(),
        r.scope,
        r.window_minutes
    );
    println!(
        "  {:<48} {:<10} {:>10} {:>10} {:>10}",
        "statement", "phase", "in", "out", "pending"
    );
    for s in &r.statements {
        let m = s.metrics.as_ref();
        println!(
            "  {:<48} {:<10} {:>10} {:>10} {:>10}",
            s.statement,
            s.phase,
            n(m.and_then(|m| m.records_in)),
            n(m.and_then(|m| m.records_out)),
            n(m.and_then(|m| m.pending_records))
        );
    }
    if let Some(why) = &r.metrics_skipped {
        eprintln!("warning: no runtime metrics: {why}");
    }
    Ok(true)
}
