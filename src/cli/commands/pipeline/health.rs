//! `flinkpipe pipeline healthcheck PRODUCT [DIR]`, `pipeline report-running-statements [DIR]
//! [--table-name T | --product-name P | --dir D] [--from-date TS]`, `pipeline analyze-pool-usage
//! [DIR] [-p P] [-d D]`: shift_left's live reports.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::health;
use crate::ops::scope::{PlanRequest, ScopeRequest};
use std::path::Path;

fn n(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

pub fn healthcheck(inv: &Invocation, pipelines: &Path, product: &str) -> CmdResult {
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

pub fn running(
    inv: &Invocation,
    pipelines: &Path,
    table: Option<&str>,
    product: Option<&str>,
    dir: Option<&str>,
    from_date: Option<&str>,
) -> CmdResult {
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

pub fn pool_usage(
    inv: &Invocation,
    pipelines: &Path,
    product: Option<&str>,
    directory: Option<&str>,
) -> CmdResult {
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
