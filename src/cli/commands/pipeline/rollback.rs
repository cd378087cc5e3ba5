//! `flinkpipe pipeline rollback [DIR] [--stop|--delete] [--dry-run] [--no-ack]`: stops or deletes the
//! green statements of the open blue-green release (children first), leaves blue untouched, records
//! the rollback in `pipelines/blue_green.json` and prints the git command that restores the blue SQL.
//! A decommissioned release is refused (exit 1).

use crate::cli::args::ProjectArgs;
use crate::cli::render::{confirm, print_json, table};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::rollback::{self, RollbackPlan, RollbackRequest};
use crate::ops::statement::StatementVerb;
use crate::versioning::restore::{Restore, RestoreSource};
use std::time::Duration;

/// Options of `pipeline rollback`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Stop the green statements (resumable; the default).
    #[arg(long, conflicts_with = "delete")]
    pub stop: bool,
    /// Delete the green statements (their tables and topics stay).
    #[arg(long)]
    pub delete: bool,
    /// List what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one statement to stop or disappear, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
    /// When the blue side of some tables is gone (deleted by a decommission, absent, FAILED), roll
    /// back only the other tables: the green statements of those tables, and of the green tables
    /// upstream of them, keep running (without it the rollback is refused).
    #[arg(long)]
    pub partial: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let verb = if args.delete {
        StatementVerb::Delete
    } else {
        StatementVerb::Stop
    };
    let prepared = rollback::prepare(
        &inv.ctx,
        &RollbackRequest {
            pipelines: args.project.dir.pipelines.clone(),
            verb,
            timeout: Duration::from_secs(args.timeout),
            allow_unknown: args.project.allow_unknown,
            listen_early: args.no_ack && !args.dry_run,
            partial: args.partial,
        },
    )?;
    let plan = &prepared.plan;
    let restore = prepared.restore.clone();
    let restore_json = || match &restore {
        Ok(r) => GitView::Restore {
            restore: r.clone(),
            commands: r.commands(&plan.release),
        },
        Err(e) => GitView::Error { error: e.clone() },
    };
    if args.dry_run {
        if inv.json() {
            print_json(&DryRunView {
                dry_run: true,
                plan,
                git: restore_json(),
            });
        } else {
            print!("{}", plan_text(plan));
            println!("dry run: nothing was changed");
            print_restore(&restore, &plan.release, false);
        }
        return Ok(true);
    }
    if !inv.json() {
        print!("{}", plan_text(plan));
    }
    // Closing the release is an action of its own: asked even when no green statement runs.
    let question = if plan.statements.is_empty() {
        "Record the release as rolled back?".to_string()
    } else {
        format!(
            "{} them and record the release as rolled back?",
            match verb {
                StatementVerb::Delete => "Delete",
                _ => "Stop",
            }
        )
    };
    if !args.no_ack && !confirm(&question)? {
        println!("nothing changed");
        return Ok(false);
    }
    let git = restore_json();
    let report = prepared.execute()?;
    if inv.json() {
        print_json(&RolledBackView {
            report: &report,
            git,
        });
        return interrupted_or(args, &report);
    }
    for r in &report.results {
        match &r.error {
            None => println!(
                "{} {} (phase {})",
                verb.past(),
                r.statement,
                r.phase
                    .as_ref()
                    .map_or("-", |p| crate::plan::status::phase_or_absent(p.as_ref()))
            ),
            Some(e) => eprintln!("error: {e}"),
        }
    }
    if report.interrupted.is_some() {
        return interrupted_or(args, &report);
    }
    if report.recorded {
        println!(
            "recorded in blue_green.json: release {} rolled back ({}) for statement prefix '{}'",
            report.plan.release,
            verb.past(),
            report.plan.statement_prefix
        );
        print_restore(&restore, &report.plan.release, true);
    } else if report.success() && !report.plan.kept.is_empty() {
        println!(
            "partial rollback: {} green statement(s) kept running (the only writers of tables whose blue side is gone), so release {} stays open in blue_green.json and its files are not restored; roll those tables forward, or redeploy their blue side, then run `pipeline rollback` again",
            report.plan.kept.len(),
            report.plan.release
        );
    } else {
        eprintln!(
            "error: not every green statement was {}: the release stays open; run `pipeline rollback` again",
            verb.past()
        );
    }
    Ok(report.success())
}

/// After an interrupt (SIGINT, SIGTERM, SIGHUP), what was done is printed above: exit 130 with how
/// to finish; otherwise whether every green statement reached its goal.
fn interrupted_or(args: &Args, report: &rollback::RollbackReport) -> CmdResult {
    let Some(which) = report.interrupted else {
        return Ok(report.success());
    };
    let acted = report.results.iter().filter(|r| r.error.is_none()).count();
    Err(Failure::release_interrupted(
        which,
        acted,
        report.plan.statements.len(),
        "green statement(s)",
        report.plan.action,
        &args.project.dir.pipelines,
    ))
}

/// The git commands that put the blue SQL back, or why there are none.
fn print_restore(restore: &Result<Restore, String>, release: &str, done: bool) {
    match restore {
        Err(e) => eprintln!("warning: no git command to restore the blue SQL: {e}"),
        Ok(r) => {
            let from = match r.source_kind {
                RestoreSource::BaseCommit => "the release's base commit",
                RestoreSource::ReleaseCommitParent => "the parent of the release commit",
            };
            println!(
                "\n{} the blue SQL back in the files ({} path(s), from {from} {}{}); run from {}:\n",
                if done {
                    "Now put"
                } else {
                    "After the rollback, put"
                },
                r.paths.len(),
                short(&r.source),
                r.release_commit
                    .as_deref()
                    .map(|c| format!("; the release was committed in {}", short(c)))
                    .unwrap_or_else(|| "; the release is not committed".into()),
                r.repository.display()
            );
            for c in r.commands(release) {
                println!("  {c}");
            }
            if !r.changed_since.is_empty() {
                eprintln!(
                    "warning: changed after the release commit, review before committing (the restore drops those edits): {}",
                    r.changed_since.join(", ")
                );
            }
        }
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

fn plan_text(plan: &RollbackPlan) -> String {
    let mut out = format!(
        "Blue-green release {} for statement prefix '{}': green is rolled back, blue stays.\n",
        plan.release, plan.statement_prefix
    );
    if plan.statements.is_empty() {
        out.push_str(&format!(
            "\nNo green statement to {} (the release is still recorded as rolled back).\n",
            plan.action
        ));
    } else {
        out.push_str(&format!(
            "\nGreen statements to {}, in this order (children first):\n\n",
            plan.action
        ));
        let rows: Vec<Vec<String>> = plan
            .statements
            .iter()
            .map(|t| {
                vec![
                    t.statement.clone(),
                    t.phase.to_string(),
                    format!(
                        "green {}, of blue {}",
                        t.green_table_name, t.blue_table_name
                    ),
                ]
            })
            .collect();
        out.push_str(&table(&["statement", "phase", "table"], &rows));
    }
    if !plan.left_alone.is_empty() {
        out.push_str("\nLeft alone:\n");
        for l in &plan.left_alone {
            out.push_str(&format!("  {}: {}\n", l.statement, l.reason));
        }
    }
    if !plan.without_blue.is_empty() {
        out.push_str("\nTables whose blue side is gone (--partial: they stay on green):\n");
        for w in &plan.without_blue {
            out.push_str(&format!(
                "  {}: blue {} {}, green {} kept\n",
                w.blue_table_name, w.blue_statement, w.blue_state, w.green_table_name
            ));
        }
    }
    if !plan.kept.is_empty() {
        out.push_str("\nGreen statements kept running:\n");
        for l in &plan.kept {
            out.push_str(&format!("  {}: {}\n", l.statement, l.reason));
        }
    }
    out.push_str("\nBlue statements, untouched:\n");
    for b in &plan.blue {
        let phase = crate::plan::status::phase_or_absent(b.phase.as_ref());
        out.push_str(&format!("  {} ({phase})", b.statement));
        if b.needs_attention() {
            out.push_str(&format!(
                " — not RUNNING: resume it (`flinkpipe statement resume {}`) or redeploy blue",
                b.statement
            ));
        }
        out.push('\n');
    }
    out
}

/// `--output json`: how to restore the blue SQL in the files (the git commands), or why it cannot
/// be worked out.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum GitView {
    Restore {
        restore: Restore,
        commands: Vec<String>,
    },
    Error {
        error: String,
    },
}

/// `--output json` of `--dry-run`: what would be stopped or deleted and the git restore.
#[derive(serde::Serialize)]
struct DryRunView<'a> {
    dry_run: bool,
    plan: &'a RollbackPlan,
    git: GitView,
}

/// `--output json` of a rollback: its report and the git restore.
#[derive(serde::Serialize)]
struct RolledBackView<'a> {
    report: &'a rollback::RollbackReport,
    git: GitView,
}
