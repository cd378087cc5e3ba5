//! `flinkpipe project delete-compute-pool ID [DIR] [--no-ack]`: deletes a compute pool after
//! listing what is in it and asking; refused while statements of the project or of an open release
//! are there (any phase), unless `--force`.

use crate::cli::args::DeleteComputePoolArgs;
use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools::{self, DeletePoolRequest};

pub fn exec(inv: &Invocation, args: &DeleteComputePoolArgs) -> CmdResult {
    let prepared = pools::prepare_delete(
        &inv.ctx,
        &DeletePoolRequest {
            pipelines: args.dir.pipelines.clone(),
            id: args.id.clone(),
            allow_unknown: args.allow_unknown,
            force: args.force,
        },
    )?;
    let plan = &prepared.plan;
    if !inv.json() {
        println!(
            "Compute pool {} ({}): {}, {} of {} CFUs in use",
            plan.pool.id,
            plan.pool.display_name,
            plan.pool.phase.as_str(),
            plan.pool
                .current_cfu
                .map_or_else(|| "?".to_string(), |c| c.to_string()),
            plan.pool.max_cfu
        );
        if plan.statements.is_empty() {
            println!("No statement is in it.");
        } else {
            println!("Statements in it, deleted with it:");
            for s in &plan.statements {
                match &s.table_name {
                    Some(t) => {
                        println!("  {} ({}): table {t} of this project", s.statement, s.phase)
                    }
                    None => println!("  {} ({})", s.statement, s.phase),
                }
            }
        }
    }
    for i in &plan.ignored {
        eprintln!("warning: --force: {i}");
    }
    if !args.no_ack && !confirm(&format!("Delete compute pool {}?", plan.pool.id))? {
        println!("nothing deleted");
        return Ok(false);
    }
    let pool = plan.pool.id.clone();
    let plan = plan.clone();
    let deleted = prepared.execute()?;
    if inv.json() {
        print_json(
            &serde_json::json!({"pool": plan.pool, "statements": plan.statements, "deleted": deleted}),
        );
    } else if deleted {
        println!("deleted compute pool {pool}");
    } else {
        println!("compute pool {pool} was already gone");
    }
    Ok(true)
}
