//! `flinkpipe pipeline undeploy [DIR] SCOPE`: deletes the statements of the scope's tables and their
//! descendants, children first, after confirmation (unless `--no-ack`).

use crate::cli::args::{PoolArgs, ProjectArgs, ScopeArgs};
use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::scope::PlanRequest;
use crate::ops::undeploy::{self, UndeployRequest};
use std::time::Duration;

/// Options of `pipeline undeploy`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// shift_left's flag, accepted: an undeploy always deletes every descendant of the scope, in
    /// any product (a child cannot run without its parent); shift_left 0.1.52 ignores it too.
    #[arg(long)]
    pub cross_product: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
    /// Also drop the tables (DROP TABLE: deletes their topics' data).
    #[arg(long)]
    pub allow_drop: bool,
    /// Longest wait for one statement to disappear, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let ctx = inv.ctx.with_overrides(args.pool.overrides());
    let prepared = undeploy::prepare(
        &ctx,
        &UndeployRequest {
            plan: PlanRequest {
                pipelines: args.project.dir.pipelines.clone(),
                scope: args.scope.request(),
                allow_unknown: args.project.allow_unknown,
                ..PlanRequest::default()
            },
            allow_drop: args.allow_drop,
            timeout: Duration::from_secs(args.timeout),
        },
    )?;
    let plan = &prepared.plan;
    if plan.statements.is_empty() {
        if inv.json() {
            print_json(&UndeployView {
                plan,
                report: None,
                success: true,
            });
        } else {
            println!(
                "nothing to undeploy: no statement of the {} table(s) exists",
                plan.tables.len()
            );
        }
        return Ok(true);
    }
    if !inv.json() {
        println!("Statements to delete, in this order (children before parents):");
        for s in &plan.statements {
            println!("  {}  ({})", s.statement, s.table_name);
        }
        if plan.drop_tables {
            println!("Tables to drop (--allow-drop): {}", plan.tables.join(", "));
        }
    }
    if !args.no_ack && !confirm("Delete them?")? {
        println!("nothing deleted");
        return Ok(false);
    }
    let plan = plan.clone();
    let report = prepared.execute();
    if inv.json() {
        print_json(&UndeployView {
            plan: &plan,
            report: Some(&report),
            success: report.success(),
        });
        return Ok(report.success());
    }
    for s in &report.deleted {
        match &s.error {
            None => println!("deleted {} ({})", s.statement, s.table_name),
            Some(e) => eprintln!("error: {e}"),
        }
    }
    for s in &report.dropped {
        match &s.error {
            None => println!("dropped table {}", s.table_name),
            Some(e) => eprintln!("error: {e}"),
        }
    }
    Ok(report.success())
}

/// `--output json`: what was to be deleted (statements children first, tables to drop) and the
/// report of the deletions (`null` when there was nothing to delete).
#[derive(serde::Serialize)]
struct UndeployView<'a> {
    plan: &'a undeploy::UndeployPlan,
    report: Option<&'a undeploy::UndeployReport>,
    success: bool,
}
