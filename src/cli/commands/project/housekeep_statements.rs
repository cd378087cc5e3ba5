//! `flinkpipe project housekeep-statements [DIR] [--starts-with P] [--status S] [--age DAYS]
//! [--action delete|stop|resume] [--statement-name N] [--dry-run] [--no-ack]`: cleans up statements
//! chosen from one listing; never a running statement of the project, a statement of an open
//! blue-green release, or (without a pipelines folder) any live statement, unless named.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{confirm, print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::housekeep::{self, HousekeepPlan, HousekeepRequest, Phase};
use crate::ops::statement::StatementVerb;
use std::time::Duration;

/// Statement phases `housekeep-statements` filters on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum StatusArg {
    Completed,
    Failed,
    Stopped,
    Running,
    Degraded,
    Pending,
}

/// What `housekeep-statements` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HousekeepAction {
    Delete,
    Stop,
    Resume,
}

/// Options of `project housekeep-statements`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Statements whose name starts with this [default: workspace, unless --statement-name is given].
    #[arg(long, value_name = "PREFIX")]
    pub starts_with: Option<String>,
    /// Statements in this phase (repeatable) [default: COMPLETED and FAILED to delete, RUNNING and
    /// DEGRADED to stop, STOPPED to resume].
    #[arg(long, value_enum, ignore_case = true, value_name = "PHASE")]
    pub status: Vec<StatusArg>,
    /// Statements created at least this many days ago.
    #[arg(long, default_value_t = 0, value_name = "DAYS")]
    pub age: u64,
    /// What to do with them.
    #[arg(long, value_enum, ignore_case = true, default_value_t = HousekeepAction::Delete)]
    pub action: HousekeepAction,
    /// A statement to act on whatever its prefix, phase or age, even a running one of the project
    /// (repeatable).
    #[arg(long, value_name = "NAME")]
    pub statement_name: Vec<String>,
    /// Only statements in this compute pool.
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
    /// List what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one statement, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let prepared = housekeep::prepare(
        &inv.ctx,
        &HousekeepRequest {
            pipelines: args.project.dir.pipelines.clone(),
            starts_with: args.starts_with.clone(),
            status: args
                .status
                .iter()
                .map(|s| match s {
                    StatusArg::Completed => Phase::Completed,
                    StatusArg::Failed => Phase::Failed,
                    StatusArg::Stopped => Phase::Stopped,
                    StatusArg::Running => Phase::Running,
                    StatusArg::Degraded => Phase::Degraded,
                    StatusArg::Pending => Phase::Pending,
                })
                .collect(),
            age_days: args.age,
            action: match args.action {
                HousekeepAction::Delete => StatementVerb::Delete,
                HousekeepAction::Stop => StatementVerb::Stop,
                HousekeepAction::Resume => StatementVerb::Resume,
            },
            statement_names: args.statement_name.clone(),
            compute_pool_id: args.compute_pool_id.clone(),
            timeout: Duration::from_secs(args.timeout),
            allow_unknown: args.project.allow_unknown,
        },
    )?;
    let plan = &prepared.plan;
    if args.dry_run || plan.statements.is_empty() {
        if inv.json() {
            print_json(&PlanView {
                dry_run: args.dry_run,
                plan,
            });
        } else {
            print!("{}", plan_text(plan));
            println!(
                "{}",
                if plan.statements.is_empty() {
                    format!("nothing to {}", plan.action)
                } else {
                    "dry run: nothing was changed".to_string()
                }
            );
        }
        return Ok(true);
    }
    if !inv.json() {
        print!("{}", plan_text(plan));
    }
    if !args.no_ack
        && !confirm(&format!(
            "{} these {} statement(s)?",
            plan.action.capitalised(),
            plan.statements.len()
        ))?
    {
        println!("nothing changed");
        return Ok(false);
    }
    let report = prepared.execute();
    if inv.json() {
        print_json(&report);
        return Ok(report.success());
    }
    for r in &report.results {
        if let Some(why) = &r.skipped {
            println!("skipped {}: {why}", r.statement);
            continue;
        }
        match &r.error {
            None => println!(
                "{} {} (phase {})",
                report.plan.action.past(),
                r.statement,
                r.phase
                    .as_ref()
                    .map_or("-", |p| crate::plan::status::phase_or_absent(p.as_ref()))
            ),
            Some(e) => eprintln!("error: {e}"),
        }
    }
    let skipped = report
        .results
        .iter()
        .filter(|r| r.skipped.is_some())
        .count();
    println!(
        "{} of {} statement(s) {}{}",
        report
            .results
            .iter()
            .filter(|r| r.error.is_none() && r.skipped.is_none())
            .count(),
        report.results.len(),
        report.plan.action.past(),
        if skipped > 0 {
            format!(", {skipped} skipped (changed since the listing)")
        } else {
            String::new()
        }
    );
    Ok(report.success())
}

fn plan_text(plan: &HousekeepPlan) -> String {
    let mut out = format!(
        "Housekeeping: {} statements where {} ({} listed)\n",
        plan.action, plan.filters, plan.listed
    );
    if !plan.statements.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = plan
            .statements
            .iter()
            .map(|c| {
                vec![
                    c.statement.clone(),
                    c.phase.to_string(),
                    c.age_days
                        .map(|a| format!("{a} d"))
                        .unwrap_or_else(|| "-".into()),
                    c.table_name.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        out.push_str(&table(&["statement", "phase", "age", "table"], &rows));
    }
    if !plan.left_alone.is_empty() {
        out.push_str("\nLeft alone:\n");
        for k in &plan.left_alone {
            out.push_str(&format!("  {} ({}): {}\n", k.statement, k.phase, k.reason));
        }
    }
    out
}

/// `--output json` when nothing is changed (a dry run, or nothing to do): the plan.
#[derive(serde::Serialize)]
struct PlanView<'a, P> {
    dry_run: bool,
    plan: &'a P,
}
