//! `flinkpipe project delete-all-compute-pools PRODUCT [--compute-pool-list-file F] [--no-ack]
//! [--dry-run] [--force]`: lists the selected pools and what is in them, keeps the protected ones,
//! asks, deletes.

use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools::{self, DeleteAllPoolsRequest};
use std::path::PathBuf;

/// Options of `project delete-all-compute-pools`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Delete the pools whose display name contains this.
    #[arg(
        value_name = "PRODUCT",
        required_unless_present = "compute_pool_list_file"
    )]
    pub product: Option<String>,
    /// A file with one compute pool id per line: only these pools are deleted.
    #[arg(long, value_name = "FILE")]
    pub compute_pool_list_file: Option<PathBuf>,
    /// The pipelines folder (the project whose statements protect a pool) [default: $PIPELINES, else
    /// ./pipelines].
    #[arg(
        long = "pipelines",
        value_name = "DIR",
        env = "PIPELINES",
        default_value = "pipelines"
    )]
    pub pipelines: PathBuf,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// List what would be deleted, delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Delete protected pools too (what was overridden is printed).
    #[arg(long)]
    pub force: bool,
    /// Delete the pool even though statements this project does not own (another team's, in any
    /// phase but COMPLETED; without a pipelines folder, every statement) are in it: they are deleted
    /// with it. `--force` does not cover them.
    #[arg(long)]
    pub delete_foreign_statements: bool,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let prepared = pools::prepare_delete_all(
        &inv.ctx,
        &DeleteAllPoolsRequest {
            pipelines: args.pipelines.clone(),
            product: args.product.clone(),
            list_file: args.compute_pool_list_file.clone(),
            allow_unknown: args.allow_unknown,
            force: args.force,
            delete_foreign_statements: args.delete_foreign_statements,
        },
    )?;
    let plan = prepared.plan.clone();
    if !inv.json() {
        println!(
            "Compute pools of environment {} ({}):",
            plan.environment, plan.selection
        );
        for p in &plan.pools {
            println!(
                "  delete {} ({}): {}, {} statement(s) go with it",
                p.pool.id,
                p.pool.display_name,
                p.pool.phase.as_str(),
                p.statements.len()
            );
            for s in &p.statements {
                println!("      {} ({})", s.statement, s.phase);
            }
            for i in &p.ignored {
                eprintln!("warning: overridden: {i}");
            }
        }
        for k in &plan.kept {
            println!(
                "  keep   {}{}: {}",
                k.id,
                k.display_name
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                k.reason
            );
        }
    }
    let kept_any = !plan.kept.is_empty();
    if args.dry_run || plan.pools.is_empty() {
        if inv.json() {
            print_json(&DeleteAllView {
                plan: &plan,
                deleted: &[],
                dry_run: args.dry_run,
            });
        } else {
            println!(
                "nothing deleted{}",
                if args.dry_run { " (dry run)" } else { "" }
            );
        }
        return Ok(!kept_any);
    }
    if !args.no_ack
        && !confirm(&format!(
            "Delete these {} compute pool(s)?",
            plan.pools.len()
        ))?
    {
        println!("nothing deleted");
        return Ok(false);
    }
    let outcomes = prepared.execute();
    let failed = outcomes.iter().any(|o| o.error.is_some());
    if inv.json() {
        print_json(&DeleteAllView {
            plan: &plan,
            deleted: &outcomes,
            dry_run: false,
        });
    } else {
        for o in &outcomes {
            match (&o.error, o.deleted) {
                (Some(e), _) => eprintln!("error: {}: {e}", o.id),
                (None, true) => println!("deleted compute pool {}", o.id),
                (None, false) => println!("compute pool {} was already gone", o.id),
            }
        }
    }
    Ok(!failed && !kept_any)
}

/// `--output json`: the plan (pools to delete, pools kept and why) and each deletion's outcome.
#[derive(serde::Serialize)]
struct DeleteAllView<'a> {
    plan: &'a pools::DeleteAllPlan,
    deleted: &'a [pools::PoolDeleteOutcome],
    dry_run: bool,
}
