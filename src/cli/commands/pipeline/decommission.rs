//! `flinkpipe pipeline decommission [DIR] [--stop|--delete] [--orphans] [--dry-run] [--no-ack]
//! [--force]`: after a blue-green, stops or deletes the blue statements (and orphans), children
//! first; a blue statement whose green successor is not ready, or whose table something outside the
//! project still reads (a running statement, a consumer group with members), is refused (exit 1)
//! unless `--force`.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{confirm, print_json, table};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::decommission::{
    self, DecommissionPlan, DecommissionRequest, GreenSuccessor, MaterializedAction, RefusalReason,
    Refused, Why,
};
use crate::ops::readers::{Blocker, GroupCheck};
use crate::ops::statement::StatementVerb;
use std::collections::BTreeSet;
use std::time::Duration;

/// Options of `pipeline decommission`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Stop the statements (resumable; the default).
    #[arg(long, conflicts_with = "delete")]
    pub stop: bool,
    /// Delete the statements (their tables and topics stay).
    #[arg(long)]
    pub delete: bool,
    /// Also every orphan: a statement under the statement-name prefix that no table of the tree owns.
    #[arg(long)]
    pub orphans: bool,
    /// List what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one statement to stop or disappear, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
    /// Also stop or delete a blue statement whose green successor is not RUNNING (a declaration:
    /// COMPLETED); what was ignored is printed.
    #[arg(long)]
    pub force: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let prepared = decommission::prepare(
        &inv.ctx,
        &DecommissionRequest {
            pipelines: args.project.dir.pipelines.clone(),
            verb: if args.delete {
                StatementVerb::Delete
            } else {
                StatementVerb::Stop
            },
            orphans: args.orphans,
            timeout: Duration::from_secs(args.timeout),
            allow_unknown: args.project.allow_unknown,
            listen_early: args.no_ack && !args.dry_run,
            force: args.force,
        },
    )?;
    let plan = &prepared.plan;
    if args.dry_run || !plan.has_work() {
        if inv.json() {
            print_json(&PlanView {
                dry_run: args.dry_run,
                plan,
            });
        } else {
            print!("{}", plan_text(plan));
            if !plan.has_work() {
                println!("nothing to {}", plan.action);
            } else {
                println!("dry run: nothing was changed");
            }
            print_refusals(plan);
        }
        // Refused blue statements fail the command, a dry run too: it would refuse them.
        return Ok(!plan.blocked());
    }
    if !inv.json() {
        print!("{}", plan_text(plan));
    }
    if !args.no_ack && !confirm(&format!("{} them?", plan.action.capitalised()))? {
        println!("nothing changed");
        return Ok(false);
    }
    let report = prepared.execute()?;
    if inv.json() {
        print_json(&report);
        return interrupted_or(args, &report, report.success());
    }
    for r in &report.results {
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
    for m in &report.materialized_results {
        match &m.error {
            None => println!(
                "stopped the query of materialized table {} (the table, its topic and its data are kept)",
                m.table_name
            ),
            Some(e) => eprintln!("error: materialized table {}: {e}", m.table_name),
        }
    }
    print_refusals(&report.plan);
    if report.recorded {
        println!(
            "recorded in blue_green.json: the released tables' blue statements are {} (statement prefix '{}')",
            report.plan.action.past(),
            report.plan.statement_prefix
        );
    }
    interrupted_or(args, &report, report.success())
}

/// After an interrupt (SIGINT, SIGTERM, SIGHUP), what was done is printed above: exit 130 with how
/// to finish; otherwise `done`.
fn interrupted_or(args: &Args, report: &decommission::DecommissionReport, done: bool) -> CmdResult {
    let Some(which) = report.interrupted else {
        return Ok(done);
    };
    let acted = report.results.iter().filter(|r| r.error.is_none()).count();
    Err(Failure::release_interrupted(
        which,
        acted,
        report.plan.statements.len(),
        "statement(s)",
        report.plan.action,
        &args.project.dir.pipelines,
    ))
}

/// On stderr: each refused blue statement and why (green successors not ready, readers left,
/// readers that could not be told); with `--force`, what was ignored.
fn print_refusals(plan: &DecommissionPlan) {
    if let GroupCheck::NotChecked { reason } = &plan.readers.consumer_groups {
        eprintln!("warning: consumer groups of the blue topics not checked: {reason}");
    }
    for r in &plan.refused {
        let greens = refusal_text(r);
        if plan.forced {
            eprintln!(
                "warning: --force: {} {} although {greens}",
                plan.action.past(),
                r.statement
            );
        } else {
            eprintln!(
                "error: refused to {} {}: {greens}",
                plan.action, r.statement
            );
        }
    }
    for m in &plan.materialized_tables {
        match &m.action {
            MaterializedAction::Refused { holds } => eprintln!(
                "error: refused to stop the query of materialized table {}: {}",
                m.blue_table_name,
                holds_text(&holds.not_ready, &holds.readers, &holds.unknown)
            ),
            MaterializedAction::Stop { ignored } if !ignored.is_empty() => eprintln!(
                "warning: --force: stopped the query of materialized table {} although {}",
                m.blue_table_name,
                holds_text(&ignored.not_ready, &ignored.readers, &ignored.unknown)
            ),
            _ => {}
        }
    }
    if plan.blocked() && !plan.refused.is_empty() {
        eprintln!(
            "error: {} blue statement(s) refused: {}, or pass --force; the release stays open",
            plan.refused.len(),
            refusal_hint(plan)
        );
    } else if plan.blocked() {
        eprintln!(
            "error: blue materialized table(s) refused: wait until their green successors run and nothing reads them, or pass --force; the release stays open"
        );
    }
}

/// What to do about the refusals, by the reasons found.
fn refusal_hint(plan: &DecommissionPlan) -> String {
    let reasons: BTreeSet<RefusalReason> = plan
        .refused
        .iter()
        .flat_map(|r| r.reasons.iter().copied())
        .collect();
    reasons
        .iter()
        .map(|r| match r {
            RefusalReason::GreenNotReady => {
                "deploy the green set (`pipeline deploy --blue-green`) and wait until it runs"
            }
            RefusalReason::StillRead => {
                "move the readers named above to the green tables (or stop them)"
            }
            RefusalReason::ReadersUnknown => "fix what kept the readers from being read",
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every reason a blue statement is refused, in one line.
fn refusal_text(r: &Refused) -> String {
    holds_text(&r.not_ready, &r.readers, &r.unknown_readers)
}

/// What holds a blue statement or materialized table, in one line: green successors not ready,
/// readers left, readers unknown.
fn holds_text(not_ready: &[GreenSuccessor], readers: &[Blocker], unknown: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !not_ready.is_empty() {
        parts.push(not_ready_text(not_ready));
    }
    parts.extend(readers.iter().map(|b| format!("still read: {b}")));
    parts.extend(unknown.iter().map(|e| format!("readers unknown: {e}")));
    parts.join("; ")
}

fn not_ready_text(not_ready: &[GreenSuccessor]) -> String {
    not_ready
        .iter()
        .map(|g| {
            let text = if g.statement.is_empty() {
                "the release records no green statement for its table".to_string()
            } else if g.materialized.is_some() {
                format!(
                    "green statement {}'s materialized table is {} (needs its query running)",
                    g.statement,
                    g.phase_text()
                )
            } else {
                format!(
                    "green statement {} is {} (needs {})",
                    g.statement,
                    g.phase_text(),
                    g.needed
                )
            };
            match &g.upstream_of {
                Some(green) => {
                    format!("{text}, upstream of green {green}, which would run on no input")
                }
                None => text,
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn plan_text(plan: &DecommissionPlan) -> String {
    let mut out = String::new();
    if plan.releases.is_empty() {
        out.push_str(&format!(
            "No blue-green release is open for statement prefix '{}' (pipelines/blue_green.json).\n",
            plan.statement_prefix
        ));
    } else {
        out.push_str(&format!(
            "Blue-green releases open for statement prefix '{}': {}\n",
            plan.statement_prefix,
            plan.releases.join(", ")
        ));
    }
    if !plan.statements.is_empty() {
        out.push_str(&format!(
            "\nStatements to {}, in this order (children first):\n\n",
            plan.action
        ));
        let rows: Vec<Vec<String>> = plan
            .statements
            .iter()
            .map(|t| {
                vec![
                    t.statement.clone(),
                    t.phase.to_string(),
                    match &t.why {
                        Why::Blue {
                            blue_table_name,
                            green_table_name,
                            ..
                        } => format!("blue {blue_table_name}, replaced by {green_table_name}"),
                        Why::Orphan => "orphan: no table of the tree owns it".into(),
                    },
                ]
            })
            .collect();
        out.push_str(&table(&["statement", "phase", "why"], &rows));
    }
    if !plan.refused.is_empty() {
        out.push_str(if plan.forced {
            "\nRefused, acted on anyway (--force):\n"
        } else {
            "\nRefused, left running:\n"
        });
        for r in &plan.refused {
            out.push_str(&format!("  {}: {}\n", r.statement, refusal_text(r)));
        }
    }
    if !plan.materialized_tables.is_empty() {
        out.push_str(
            "\nBlue materialized tables (their query runs apart from their statements):\n\n",
        );
        let rows: Vec<Vec<String>> = plan
            .materialized_tables
            .iter()
            .map(|m| {
                vec![
                    m.blue_table_name.clone(),
                    m.materialized.describe(),
                    match &m.action {
                        MaterializedAction::Stop { .. } => format!(
                            "stop its query (kept: table, topic, data), replaced by {}",
                            m.green_table_name
                        ),
                        MaterializedAction::AlreadyStopped => "already stopped".into(),
                        MaterializedAction::Refused { holds } => format!(
                            "refused: {}",
                            holds_text(&holds.not_ready, &holds.readers, &holds.unknown)
                        ),
                    },
                ]
            })
            .collect();
        out.push_str(&table(&["materialized table", "phase", "what"], &rows));
    }
    out.push_str(&crate::cli::render::blue_readers(&plan.readers));
    if !plan.left_alone.is_empty() {
        out.push_str("\nLeft alone:\n");
        for l in &plan.left_alone {
            out.push_str(&format!("  {}: {}\n", l.statement, l.reason));
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
