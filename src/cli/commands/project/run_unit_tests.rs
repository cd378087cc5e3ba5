//! `flinkpipe project run-unit-tests [DIR] [SCOPE]`: the unit tests of many tables, one summary.

use crate::cli::args::ProjectRunUnitTestsArgs;
use crate::cli::render::unit_test_report;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, ProjectRunRequest, ProjectScope, RunSettings};
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &ProjectRunUnitTestsArgs) -> CmdResult {
    let scope = if !args.table_name.is_empty() {
        ProjectScope::Tables(args.table_name.clone())
    } else if let Some(p) = &args.product_name {
        ProjectScope::Product(p.clone())
    } else if let Some(d) = &args.scope_dir {
        ProjectScope::Dir(d.clone())
    } else if args.impacted {
        ProjectScope::Impacted(args.refs.request())
    } else {
        ProjectScope::All
    };
    let report = unit_tests::run_project(
        &inv.ctx,
        &ProjectRunRequest {
            pipelines: args.dir.pipelines.clone(),
            scope,
            max_parallel: args.max_parallel,
            settings: RunSettings {
                case: None,
                keep: args.run.keep,
                timeout: args.run.timeout.map(Duration::from_secs),
                suffix: args.run.post_fix_unit_test.clone(),
                junit: args.run.junit.clone(),
            },
        },
    )?;
    unit_test_report(inv.json(), &report);
    Ok(report.passed())
}
