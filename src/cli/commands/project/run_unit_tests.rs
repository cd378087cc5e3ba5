//! `flinkpipe project run-unit-tests [DIR] [SCOPE]`: the unit tests of many tables, one summary.

use crate::cli::args::{ChangeRefs, PipelinesDir, UnitTestRunOptions};
use crate::cli::render::unit_test_report;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, ProjectRunRequest, ProjectScope, RunSettings};
use std::time::Duration;

/// `project run-unit-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Only these tables.
    #[arg(long, group = "ut_scope", value_name = "T")]
    pub table_name: Vec<String>,
    /// Only the tables of this product.
    #[arg(long, group = "ut_scope", value_name = "P")]
    pub product_name: Option<String>,
    /// Only the tables under this folder.
    #[arg(long = "dir", group = "ut_scope", value_name = "D")]
    pub scope_dir: Option<String>,
    /// Only the tables changed since --since REF and their descendants (list-impacted-tables).
    #[arg(long, group = "ut_scope")]
    pub impacted: bool,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Suites run at once (suites sharing a test table wait for each other).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_parallel: usize,
    #[command(flatten)]
    pub run: UnitTestRunOptions,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
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
