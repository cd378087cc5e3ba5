//! `flinkpipe project delete-all-compute-pools PRODUCT [--compute-pool-list-file F] [--no-ack]
//! [--dry-run] [--force]`: lists the selected pools and what is in them, keeps the protected ones,
//! asks, deletes.

use crate::cli::args::DeleteAllComputePoolsArgs;
use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools::{self, DeleteAllPoolsRequest};

pub fn exec(inv: &Invocation, args: &DeleteAllComputePoolsArgs) -> CmdResult {
    let prepared = pools::prepare_delete_all(
        &inv.ctx,
        &DeleteAllPoolsRequest {
            pipelines: args.pipelines.clone(),
            product: args.product.clone(),
            list_file: args.compute_pool_list_file.clone(),
            allow_unknown: args.allow_unknown,
            force: args.force,
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
                eprintln!("warning: --force: {i}");
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
            print_json(&serde_json::json!({"plan": plan, "deleted": [], "dry_run": args.dry_run}));
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
        print_json(&serde_json::json!({"plan": plan, "deleted": outcomes, "dry_run": false}));
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
