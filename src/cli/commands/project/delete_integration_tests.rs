//! `flinkpipe project delete-integration-tests --table-name SINK [DIR]`: removes what runs of the
//! sink's integration tests created.

use crate::cli::args::{IntegrationTarget, PoolArgs};
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::OpsError;
use crate::ops::integration_tests::{self, DeleteRequest};

/// `project delete-integration-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub target: IntegrationTarget,
    /// shift_left's option: the command never asks.
    #[arg(long)]
    pub no_confirm: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let (table, pipelines) = args.target.resolve().map_err(OpsError::Usage)?;
    let d = integration_tests::delete(
        &inv.ctx.with_overrides(args.pool.overrides()),
        &DeleteRequest {
            pipelines,
            table,
            suffix: args.target.post_fix_integration_test.clone(),
            allow_unknown: args.target.allow_unknown,
        },
    )?;
    if inv.json() {
        print_json(&d);
        return Ok(true);
    }
    println!("integration-test artefacts of {} removed:", d.table_name);
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    println!("  statements: {}", list(&d.statements));
    println!("  tables:     {}", list(&d.tables));
    if !d.topics.is_empty() {
        println!("  topics:     {}", list(&d.topics));
    }
    Ok(true)
}
