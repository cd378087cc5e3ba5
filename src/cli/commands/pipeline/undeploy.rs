//! `flinkpipe pipeline undeploy [DIR] SCOPE`: deletes the statements of the scope's tables and their
//! descendants, children first, after confirmation (unless `--no-ack`).

use crate::cli::args::UndeployArgs;
use crate::cli::render::confirm;
use crate::cli::{CmdResult, Invocation};
use crate::ops::undeploy::{self, UndeployRequest};
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &UndeployArgs) -> CmdResult {
    let prepared = undeploy::prepare(
        &inv.ctx,
        &UndeployRequest {
            plan: args.plan.request(),
            allow_drop: args.allow_drop,
            timeout: Duration::from_secs(args.timeout),
        },
    )?;
    let plan = &prepared.plan;
    if plan.statements.is_empty() {
        println!(
            "nothing to undeploy: no statement of the {} table(s) exists",
            plan.tables.len()
        );
        return Ok(true);
    }
    println!("Statements to delete, in this order (children before parents):");
    for s in &plan.statements {
        println!("  {}  ({})", s.statement, s.table_name);
    }
    if plan.drop_tables {
        println!("Tables to drop (--allow-drop): {}", plan.tables.join(", "));
    }
    if !args.no_ack && !confirm("Delete them?")? {
        println!("nothing deleted");
        return Ok(false);
    }
    let report = prepared.execute();
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
