//! `flinkpipe pipeline test-live [DIR] [--blue-green] [--table-name T …] [--max-failing-rows N]
//! [--junit FILE]`: the data tests of `tests/live_tests.yaml` on the deployed tables; exit 1 unless
//! every test passes.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::live_tests::{self, LiveTestReport, LiveTestRequest};
use crate::ops::query::ReadOptions;
use crate::unittest::run::Verdict;
use std::path::PathBuf;
use std::time::Duration;

/// Options of `pipeline test-live`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Test the green tables of the open blue-green release (pipelines/blue_green.json).
    #[arg(long)]
    pub blue_green: bool,
    /// Test only this table (repeatable); default: every table with a tests/live_tests.yaml.
    #[arg(long, value_name = "T")]
    pub table_name: Vec<String>,
    /// Failing rows shown per test.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub max_failing_rows: usize,
    /// Write the results as JUnit XML to FILE (for CI).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Stop a read after this many seconds without a new row, once rows have arrived.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub idle: f64,
    /// Stop a read after this many seconds in all.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    pub timeout: f64,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let secs = |v: f64, what: &str| {
        if v.is_finite() && v >= 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(Failure::usage(format!(
                "--{what} {v}: a number of seconds ≥ 0"
            )))
        }
    };
    let report = live_tests::run(
        &inv.ctx,
        &LiveTestRequest {
            pipelines: args.project.dir.pipelines.clone(),
            tables: args.table_name.clone(),
            blue_green: args.blue_green,
            max_failing_rows: args.max_failing_rows,
            read: ReadOptions {
                idle: secs(args.idle, "idle")?,
                timeout: Some(secs(args.timeout, "timeout")?),
                ..ReadOptions::default()
            },
            allow_unknown: args.project.allow_unknown,
            junit: args.junit.clone(),
        },
    )?;
    if inv.json() {
        print_json(&report);
    } else {
        print!("{}", text(&report));
    }
    Ok(report.success())
}

fn text(r: &LiveTestReport) -> String {
    let mut out = String::new();
    let rows: Vec<Vec<String>> = r
        .tables
        .iter()
        .flat_map(|t| {
            t.tests.iter().map(move |x| {
                vec![
                    t.table.clone(),
                    x.name.clone(),
                    x.verdict.as_str().to_string(),
                    x.message.clone(),
                ]
            })
        })
        .collect();
    out.push_str(&table(&["table", "test", "result", "detail"], &rows));
    for t in &r.tables {
        for x in t.tests.iter().filter(|x| x.verdict != Verdict::Pass) {
            out.push_str(&format!(
                "\n{} {}.{}: {}\n",
                x.verdict.as_str(),
                t.table,
                x.name,
                live_tests::failure_text(t, x)
            ));
        }
    }
    if !r.without_tests.is_empty() {
        out.push_str(&format!(
            "\nno tests/live_tests.yaml: {}\n",
            r.without_tests.join(", ")
        ));
    }
    out.push_str(&format!(
        "\n{} passed, {} failed, {} errors ({})\n",
        r.passed, r.failed, r.errors, r.target
    ));
    if let Some(j) = &r.junit {
        out.push_str(&format!("JUnit written to {}\n", j.display()));
    }
    out
}
