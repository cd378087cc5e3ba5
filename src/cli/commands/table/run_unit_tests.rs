//! `flinkpipe table run-unit-tests TABLE [DIR]` (and shift_left's `run-validation-tests`): the table's
//! unit tests on the configured target, a result table, exit 1 when any fails.

use crate::cli::args::RunUnitTestsArgs;
use crate::cli::render::unit_test_report;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, RunRequest, RunSettings};
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &RunUnitTestsArgs) -> CmdResult {
    let report = unit_tests::run_table(
        &inv.ctx,
        &RunRequest {
            pipelines: args.dir.pipelines.clone(),
            table: args.table.clone(),
            allow_unknown: args.allow_unknown,
            settings: RunSettings {
                case: args.test_case_name.clone(),
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
