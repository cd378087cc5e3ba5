//! `flinkpipe pipeline explain [DIR] SCOPE`: the engine's plan of each statement of the scope's
//! tables (shift_left's `explain`), as text or JSON.

use crate::cli::args::ExplainArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::explain::{self, ExplainRequest};
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &ExplainArgs) -> CmdResult {
    let r = explain::explain(
        &inv.ctx,
        &ExplainRequest {
            plan: args.request(),
            timeout: Duration::from_secs(args.timeout),
        },
    )?;
    if inv.json() {
        print_json(&serde_json::json!({
            "scope": r.scope,
            "target": r.target,
            "success": r.success(),
            "statements": r.statements,
        }));
        return Ok(r.success());
    }
    println!("Plans of {} on {}", r.scope, r.target);
    for s in &r.statements {
        println!("\n== {} ({})", s.statement, s.table_name);
        match (&s.plan, &s.error) {
            (Some(plan), _) => println!("{plan}"),
            (None, Some(e)) if s.failed => println!("FAILED: {e}"),
            (None, Some(e)) => println!("no plan: {e}"),
            (None, None) => println!("no plan"),
        }
    }
    let failed = r.statements.iter().filter(|s| s.failed).count();
    println!(
        "\n{} statement(s), {} explained, {failed} failed",
        r.statements.len(),
        r.statements.iter().filter(|s| s.plan.is_some()).count()
    );
    Ok(r.success())
}
