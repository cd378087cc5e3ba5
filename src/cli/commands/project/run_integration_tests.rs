//! `flinkpipe project run-integration-tests --table-name SINK [DIR]`: the sink's integration tests on
//! the configured target, a result table, exit 1 when one fails; `--dry-run` only checks the suite.

use crate::cli::args::RunIntegrationTestsArgs;
use crate::cli::render::{dry_run_report, unit_test_report};
use crate::cli::{CmdResult, Invocation};
use crate::ops::OpsError;
use crate::ops::integration_tests::{self, RunRequest};
use crate::ops::unit_tests::RunSettings;
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &RunIntegrationTestsArgs) -> CmdResult {
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
