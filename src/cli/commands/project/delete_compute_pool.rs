//! `flinkpipe project delete-compute-pool ID [DIR] [--no-ack]`: deletes a compute pool after
//! listing what is in it and asking; refused while statements of the project or of an open release
//! are there (any phase), unless `--force`.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools::{self, DeletePoolRequest};

/// Options of `project delete-compute-pool`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The pool id (`lfcp-…`).
    pub id: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Delete it although statements of the project or of an open blue-green release are in it
    /// (in any phase); what was ignored is printed.
    #[arg(long)]
    pub force: bool,
    /// Delete the pool even though statements this project does not own (another team's, in any
    /// phase but COMPLETED; without a pipelines folder, every statement) are in it: they are deleted
    /// with it. `--force` does not cover them.
    #[arg(long)]
    pub delete_foreign_statements: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let prepared = pools::prepare_delete(
        &inv.ctx,
        &DeletePoolRequest {
            pipelines: args.project.dir.pipelines.clone(),
            id: args.id.clone(),
            allow_unknown: args.project.allow_unknown,
            force: args.force,
            delete_foreign_statements: args.delete_foreign_statements,
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
        eprintln!("warning: overridden: {i}");
    }
    if !args.no_ack && !confirm(&format!("Delete compute pool {}?", plan.pool.id))? {
        println!("nothing deleted");
        return Ok(false);
    }
    let pool = plan.pool.id.clone();
    let plan = plan.clone();
    let deleted = prepared.execute()?;
    if inv.json() {
        print_json(&DeletedView {
            plan: &plan,
            deleted,
        });
    } else if deleted {
        println!("deleted compute pool {pool}");
    } else {
        println!("compute pool {pool} was already gone");
    }
    Ok(true)
}

/// `--output json`: the plan (the pool, its statements, what `--force` overrode) and whether the
/// pool was deleted (false: it was already gone).
#[derive(serde::Serialize)]
struct DeletedView<'a> {
    #[serde(flatten)]
    plan: &'a pools::DeletePlan,
    deleted: bool,
}
