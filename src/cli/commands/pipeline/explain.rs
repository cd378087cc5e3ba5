//! `flinkpipe pipeline explain [DIR] SCOPE`: the engine's plan of each statement of the scope's
//! tables (shift_left's `explain`), as text or JSON; with `--changelog-mode`, the changelog each sink
//! receives and its upsert key.

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
            changelog_mode: args.changelog_mode,
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
        // With --changelog-mode a DDL statement (no sink, no plan) is left out.
        if args.changelog_mode && s.explain.is_none() && !s.failed {
            continue;
        }
        println!("\n== {} ({})", s.statement, s.table_name);
        if let Some(sinks) = &s.sinks {
            if sinks.is_empty() {
                println!("no sink in the plan");
            }
            for k in sinks {
                let kinds: Vec<&str> = k.kinds.iter().map(|k| k.short()).collect();
                println!(
                    "sink {}: {}{}, upsert key {}{}",
                    k.table,
                    k.mode,
                    if kinds.is_empty() {
                        String::new()
                    } else {
                        format!(" [{}]", kinds.join(", "))
                    },
                    k.upsert_key
                        .as_ref()
                        .map(|c| format!("({})", c.join(", ")))
                        .unwrap_or_else(|| "none".into()),
                    k.primary_key
                        .as_ref()
                        .map(|c| format!(", primary key ({})", c.join(", ")))
                        .unwrap_or_default(),
                );
            }
            if let Some(e) = &s.error {
                println!("FAILED: {e}");
            }
            continue;
        }
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
        r.statements
            .iter()
            .filter(|s| s.plan.is_some() || s.sinks.is_some())
            .count()
    );
    Ok(r.success())
}
