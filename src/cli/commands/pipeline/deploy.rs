//! `flinkpipe pipeline deploy [DIR] SCOPE`: executes the plan on the configured target and prints a
//! summary table (`--dry-run`: what each statement would get, the server's dry run of what it would
//! create and the compute pool check; exit 1 when the real deploy would stop).

use crate::cli::args::{PlanArgs, PoolArgs};
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::deploy::{self, DeployOutcome, DeployRequest, Deployed, DryRun, Outcome};
use crate::ops::preflight::ServerCheck;
use std::path::PathBuf;
use std::time::Duration;

/// Options of `pipeline deploy`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub pool: PoolArgs,
    /// Tables deployed at once (each waits for its parents); `--max-thread` is shift_left's name.
    #[arg(
        long,
        visible_alias = "max-thread",
        default_value_t = 4,
        value_name = "N"
    )]
    pub max_parallel: usize,
    /// shift_left's flag, accepted: a deploy is parallel whenever --max-parallel is above 1.
    #[arg(long, hide = true)]
    pub parallel: bool,
    /// When a compute pool the statements go to is missing or full, create one they fit in (sized
    /// under flink.max_cfu_percent_before_allocation; a Cloud API key), wait until it is
    /// PROVISIONED and send them there; with --dry-run, say which pools it would create.
    #[arg(long)]
    pub pool_creation: bool,
    /// Deploy the tables recorded at version V (`_v2`, `v2` or `2`) by blue-green releases in
    /// pipelines/blue_green.json (and their non-running ancestors), instead of a scope.
    #[arg(long = "version", value_name = "V", conflicts_with_all = ["scope", "blue_green"])]
    pub release_version: Option<String>,
    /// Print what would be sent, contact the target read-only, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Longest wait for one statement to reach RUNNING (DML) or COMPLETED (DDL), in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,
    /// Continue an interrupted deploy from its journal without creating anything twice.
    #[arg(long)]
    pub resume: bool,
    /// Allow DROP TABLE for restarted tables whose DDL changed (data loss).
    #[arg(long)]
    pub allow_drop: bool,
    /// Let this table's (or statement's) stateful DML be recreated with its new SQL, losing its
    /// state (repeatable; `all`: every one). Without it such a restart is refused.
    #[arg(long, value_name = "TABLE")]
    pub allow_state_loss: Vec<String>,
    /// Journal file (default: `<project>/.flinkpipe/deploy-journal.jsonl`).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Deploy the green tables recorded by `pipeline blue-green --apply` in pipelines/blue_green.json
    /// (and their non-running ancestors), instead of a scope.
    #[arg(long, conflicts_with = "scope")]
    pub blue_green: bool,
    /// Deploy even when the statements would push a compute pool past
    /// flink.max_cfu_percent_before_allocation.
    #[arg(long)]
    pub allow_pool_overcommit: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let req = DeployRequest {
        plan: args.plan.request_in(&args.pool),
        max_parallel: args.max_parallel,
        dry_run: args.dry_run,
        timeout: Duration::from_secs(args.timeout),
        resume: args.resume,
        allow_drop: args.allow_drop,
        allow_state_loss: args.allow_state_loss.clone(),
        journal: args.journal.clone(),
        blue_green: args.blue_green,
        version: args.release_version.clone(),
        allow_pool_overcommit: args.allow_pool_overcommit,
        pool_creation: args.pool_creation,
    };
    match deploy::deploy(&inv.ctx, &req)? {
        DeployOutcome::DryRun(d) => {
            dry_run(inv.json(), &d);
            Ok(d.success())
        }
        DeployOutcome::Deployed(d) => {
            report(inv.json(), &d);
            if d.report.interrupted {
                // A clean interruption (Ctrl-C, SIGTERM, SIGHUP): nothing new started and the
                // journal records the run's end; 130 is what a shell reports for Ctrl-C.
                return Err(Failure {
                    message: "interrupted: the deploy stopped cleanly; run the same command with --resume to continue".into(),
                    usage: false,
                    plain: true,
                    interrupted: true,
                });
            }
            Ok(d.report.success())
        }
    }
}

fn dry_run(json: bool, d: &DryRun) {
    if json {
        print_json(&DryRunView {
            dry_run: true,
            success: d.success(),
            report: d,
        });
        return;
    }
    println!(
        "Dry run for {}: nothing is created, changed or deleted (server-side dry runs only)\n",
        d.scope
    );
    let rows: Vec<Vec<String>> = d
        .statements
        .iter()
        .map(|s| {
            vec![
                s.table_name.clone(),
                s.action.clone(),
                s.statement.clone(),
                s.check
                    .as_ref()
                    .map(|c| c.label().to_string())
                    .unwrap_or_else(|| "-".into()),
                s.compute_pool.clone().unwrap_or_else(|| "-".into()),
                if s.rewritten_by.is_empty() {
                    "-".into()
                } else {
                    s.rewritten_by.join(" ")
                },
                s.reason.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "table",
                "action",
                "statement",
                "server check",
                "pool",
                "rewritten by",
                "reason"
            ],
            &rows
        )
    );
    let mut details = Vec::new();
    for s in &d.statements {
        match &s.check {
            Some(ServerCheck::Invalid(m)) => details.push(format!("INVALID {}: {m}", s.statement)),
            Some(ServerCheck::Error(m)) => details.push(format!("ERROR {}: {m}", s.statement)),
            Some(ServerCheck::NotChecked(m)) => {
                details.push(format!("not checked {}: {m}", s.statement))
            }
            _ => {}
        }
    }
    if !details.is_empty() {
        println!();
        for l in details {
            println!("{l}");
        }
    }
    let count = |f: fn(&ServerCheck) -> bool| {
        d.statements
            .iter()
            .filter(|s| s.check.as_ref().is_some_and(f))
            .count()
    };
    println!(
        "\nServer checks on {} (SQL rewritten by the rules of environment '{}'): {} valid, {} invalid, {} not checked, {} errors",
        d.target,
        d.environment,
        count(|c| matches!(c, ServerCheck::Valid)),
        count(|c| matches!(c, ServerCheck::Invalid(_))),
        count(|c| matches!(c, ServerCheck::NotChecked(_))),
        count(|c| matches!(c, ServerCheck::Error(_))),
    );
    if let Some(cap) = &d.capacity {
        println!();
        let blocking = d.blocking_pools();
        for p in &cap.pools {
            let blocks = blocking.iter().any(|b| b.pool == p.pool);
            println!(
                "{}{}",
                if blocks { "STOP: " } else { "" },
                p.describe(cap.ratio)
            );
        }
        for n in &cap.notes {
            println!("note: {n}");
        }
        for n in &d.pools_to_create {
            println!(
                "--pool-creation would create a compute pool of {} CFUs for {} statement(s) that do not fit in {}: {}",
                n.max_cfu,
                n.statements.len(),
                n.instead_of,
                n.statements.join(", ")
            );
        }
    }
    if !d.success() {
        println!("\nThe deploy would stop: fix the above first.");
    }
}

fn outcome_text(o: &Outcome) -> (String, String) {
    match o {
        Outcome::Done => ("done".into(), String::new()),
        Outcome::Skipped(r) => ("skipped".into(), r.to_string()),
        Outcome::Failed(r) => ("FAILED".into(), r.to_string()),
        Outcome::Interrupted(r) => ("interrupted".into(), r.to_string()),
        Outcome::NotStarted => ("not started".into(), String::new()),
    }
}

fn report(json: bool, d: &Deployed) {
    let report = &d.report;
    if json {
        print_json(&DeployedView {
            scope: &d.scope,
            success: report.success(),
            journal: &d.journal,
            report,
        });
        return;
    }
    let rows: Vec<Vec<String>> = report
        .nodes
        .iter()
        .map(|n| {
            let (status, reason) = outcome_text(&n.outcome);
            let stmts = n
                .statements
                .iter()
                .map(|s| {
                    format!(
                        "{} {}{}",
                        s.name,
                        s.action,
                        s.phase
                            .as_ref()
                            .map(|p| format!(" {p}"))
                            .unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                n.table_name.clone(),
                n.action.as_str().to_string(),
                status,
                format!("{:.1}s", n.seconds),
                if stmts.is_empty() { "-".into() } else { stmts },
                reason,
            ]
        })
        .collect();
    println!("Deploy of {}\n", d.scope);
    print!(
        "{}",
        table(
            &["table", "action", "result", "time", "statements", "reason"],
            &rows
        )
    );
    let count = |f: fn(&Outcome) -> bool| report.nodes.iter().filter(|n| f(&n.outcome)).count();
    println!(
        "\n{} done, {} failed, {} skipped, {} interrupted or not started in {:.1}s",
        count(|o| matches!(o, Outcome::Done)),
        count(|o| matches!(o, Outcome::Failed(_))),
        count(|o| matches!(o, Outcome::Skipped(_))),
        count(|o| matches!(o, Outcome::Interrupted(_) | Outcome::NotStarted)),
        report.seconds
    );
    if report.interrupted {
        let running: Vec<&str> = report
            .nodes
            .iter()
            .filter(|n| matches!(n.outcome, Outcome::Interrupted(_)))
            .map(|n| n.table_name.as_str())
            .collect();
        if !running.is_empty() {
            println!(
                "in flight when interrupted (statements may still be starting): {}",
                running.join(", ")
            );
        }
        println!(
            "journal: {} — run the same command with --resume to continue",
            d.journal.display()
        );
    }
}

/// `--output json` of `--dry-run`: the dry run's report, marked as one, and whether it would pass.
#[derive(serde::Serialize)]
struct DryRunView<'a> {
    #[serde(flatten)]
    report: &'a DryRun,
    dry_run: bool,
    success: bool,
}

/// `--output json` of a deploy: the scope, the journal, whether it succeeded and the run's report
/// (`nodes`, `interrupted`, `seconds`) at the top level.
#[derive(serde::Serialize)]
struct DeployedView<'a> {
    scope: &'a str,
    success: bool,
    journal: &'a std::path::Path,
    #[serde(flatten)]
    report: &'a crate::ops::deploy::DeployReport,
}
