//! `flinkpipe project delete-integration-tests --table-name SINK [DIR]`: removes what runs of the
//! sink's integration tests created.

use crate::cli::args::DeleteIntegrationTestsArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::OpsError;
use crate::ops::integration_tests::{self, DeleteRequest};

pub fn exec(inv: &Invocation, args: &DeleteIntegrationTestsArgs) -> CmdResult {
    let (table, pipelines) = args.target.resolve().map_err(OpsError::Usage)?;
    let d = integration_tests::delete(
        &inv.ctx,
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
