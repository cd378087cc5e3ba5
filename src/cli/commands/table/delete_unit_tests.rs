//! `flinkpipe table delete-unit-tests TABLE [DIR]`: removes what runs of the table's tests created.

use crate::cli::args::{PoolArgs, ProjectArgs};
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, DeleteRequest};

/// `table delete-unit-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The table whose test artefacts are removed.
    pub table: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Test suffix [default: app.post_fix_unit_test, else _ut].
    #[arg(long, value_name = "S")]
    pub post_fix_unit_test: Option<String>,
    #[command(flatten)]
    pub pool: PoolArgs,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let d = unit_tests::delete(
        &inv.ctx.with_overrides(args.pool.overrides()),
        &DeleteRequest {
            pipelines: args.project.dir.pipelines.clone(),
            table: args.table.clone(),
            suffix: args.post_fix_unit_test.clone(),
            allow_unknown: args.project.allow_unknown,
        },
    )?;
    if inv.json() {
        print_json(&d);
        return Ok(true);
    }
    println!("unit-test artefacts of {} removed:", d.table_name);
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
