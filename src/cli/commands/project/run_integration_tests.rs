//! `flinkpipe project run-integration-tests --table-name SINK [DIR]`: the sink's integration tests on
//! the configured target, a result table, exit 1 when one fails; `--dry-run` only checks the suite.

use crate::cli::args::IntegrationTarget;
use crate::cli::render::{dry_run_report, unit_test_report};
use crate::cli::{CmdResult, Invocation};
use crate::ops::OpsError;
use crate::ops::integration_tests::{self, RunRequest};
use crate::ops::unit_tests::RunSettings;
use std::path::PathBuf;
use std::time::Duration;

/// `project run-integration-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub target: IntegrationTarget,
    /// Run only this scenario (a test case of the definitions).
    #[arg(long, value_name = "NAME")]
    pub scenario_name: Option<String>,
    /// Check the subgraph and the definitions (every file they name, every statement renamed) as a
    /// run does first, and stop there: nothing is contacted.
    #[arg(long)]
    pub dry_run: bool,
    /// The compute pool of the test statements (Confluent Cloud) [default: flink.compute_pool_id].
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
    /// shift_left's option: each scenario's time is in the report whatever it says.
    #[arg(long, overrides_with = "no_measure_latency")]
    pub measure_latency: bool,
    /// shift_left's option (see --measure-latency).
    #[arg(long)]
    pub no_measure_latency: bool,
    /// Also write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Leave the test tables, topics and statements in place (to inspect them);
    /// delete-integration-tests removes them.
    #[arg(long)]
    pub keep: bool,
    /// Write the results as JUnit XML to FILE (for CI).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Longest wait for one statement, in seconds [default: flinkpipe.unit_tests.timeout_seconds, else 300].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let (table, pipelines) = args.target.resolve().map_err(OpsError::Usage)?;
    let req = RunRequest {
        pipelines,
        table,
        allow_unknown: args.target.allow_unknown,
        compute_pool: args.compute_pool_id.clone(),
        settings: RunSettings {
            case: args.scenario_name.clone(),
            keep: args.keep,
            timeout: args.timeout.map(Duration::from_secs),
            suffix: args.target.post_fix_integration_test.clone(),
            junit: args.junit.clone(),
        },
    };
    if args.dry_run {
        let d = integration_tests::dry_run(&inv.ctx, &req)?;
        dry_run_report(inv.json(), &d);
        return Ok(d.ready());
    }
    let report = integration_tests::run(&inv.ctx, &req)?;
    if let Some(path) = &args.output_file {
        let json = serde_json::to_string_pretty(&report).expect("plain data");
        crate::fsutil::write_atomic(path, json.as_bytes()).map_err(|source| OpsError::Write {
            path: path.clone(),
            source,
        })?;
    }
    unit_test_report(inv.json(), &report);
    Ok(report.passed())
}
