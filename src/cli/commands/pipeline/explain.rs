//! `flinkpipe pipeline explain [DIR] SCOPE`: the engine's plan of each statement of the scope's
//! tables (shift_left's `explain`), as text or JSON; with `--changelog-mode`, the changelog each sink
//! receives and its upsert key.

use crate::cli::args::{PoolArgs, ProjectArgs, ScopeArgs};
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::explain::{self, ExplainRequest};
use crate::ops::scope::PlanRequest;
use std::time::Duration;

/// Options of `pipeline explain`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Longest wait for one plan, in seconds.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub timeout: u64,
    /// Print, instead of the plan, the changelog each sink receives (append-only, upsert or
    /// retract, with its +I/-U/+U/-D kinds) and its upsert key.
    #[arg(long)]
    pub changelog_mode: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
    /// Also write each plan to <table>_explain_report.json (shift_left's shape) in
    /// $FLINKPIPE_OUTPUT_DIR, else the project's .flinkpipe/.
    #[arg(long)]
    pub persist_report: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let r = explain::explain(
        &inv.ctx.with_overrides(args.pool.overrides()),
        &ExplainRequest {
            plan: PlanRequest {
                pipelines: args.project.dir.pipelines.clone(),
                scope: args.scope.request(),
                allow_unknown: args.project.allow_unknown,
                ..PlanRequest::default()
            },
            timeout: Duration::from_secs(args.timeout),
            changelog_mode: args.changelog_mode,
            persist_report: args.persist_report,
        },
    )?;
    for p in &r.persisted {
        eprintln!("wrote {}", p.display());
    }
    if inv.json() {
        print_json(&ExplainView {
            success: r.success(),
            report: &r,
        });
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

/// `--output json`: the report and whether every statement was explained.
#[derive(serde::Serialize)]
struct ExplainView<'a> {
    #[serde(flatten)]
    report: &'a explain::ExplainReport,
    success: bool,
}
