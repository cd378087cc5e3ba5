//! `flinkpipe table run-unit-tests TABLE [DIR]` (and shift_left's `run-validation-tests`): the table's
//! unit tests on the configured target, a result table, exit 1 when any fails; `--dry-run` only checks
//! the suite (nothing contacted).

use crate::cli::args::{PoolArgs, ProjectArgs, UnitTestRunOptions};
use crate::cli::render::{dry_run_report, unit_test_report};
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, RunRequest, RunSettings};
use std::time::Duration;

/// `table run-unit-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The table under test.
    pub table: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Run only this test case.
    #[arg(long, value_name = "NAME")]
    pub test_case_name: Option<String>,
    /// shift_left's option (run the validation SQL too), accepted with or without --test-case-name:
    /// every run inserts, runs the statement under test and checks the outputs.
    #[arg(long)]
    pub run_all: bool,
    #[command(flatten)]
    pub pool: PoolArgs,
    /// Check the suite (test definitions, every file they name, the SQL under test) as a run does
    /// first, and stop there: nothing is contacted.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub run: UnitTestRunOptions,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let ctx = inv.ctx.with_overrides(args.pool.overrides());
    let req = RunRequest {
        pipelines: args.project.dir.pipelines.clone(),
        table: args.table.clone(),
        allow_unknown: args.project.allow_unknown,
        settings: RunSettings {
            case: args.test_case_name.clone(),
            keep: args.run.keep,
            timeout: args.run.timeout.map(Duration::from_secs),
            suffix: args.run.post_fix_unit_test.clone(),
            junit: args.run.junit.clone(),
        },
    };
    if args.dry_run {
        let d = unit_tests::dry_run_table(&ctx, &req)?;
        dry_run_report(inv.json(), &d);
        return Ok(d.ready());
    }
    let report = unit_tests::run_table(&ctx, &req)?;
    unit_test_report(inv.json(), &report);
    Ok(report.passed())
}
