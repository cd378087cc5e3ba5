//! `pipeline test-live`: the data tests of `tests/live_tests.yaml` ([`crate::livetest`]) run on the
//! deployed tables. Per table, one bounded read of its current snapshot (as `table preview` reads
//! it: from the start to the current end, folded by its primary key) serves every check but
//! `unique: key` (a second read folded by the result's own changelog, [`query::snapshot_unfolded`])
//! and `sql` (each query its own bounded read, [`query::bounded_query`]); the checks are evaluated in
//! Rust ([`crate::livetest::check`]). Every query is stopped and deleted when its read ends (a
//! failure to do so is warned with the statement to clean up). With `blue_green`, the tables tested
//! are the green tables of the open release of `pipelines/blue_green.json`.

use super::query::{self, QueryOutcome, ReadOptions};
use super::{Context, OpsError};
use crate::livetest::check::{self, Evaluation};
use crate::livetest::{Check, FILE_NAME, LiveTests, UniqueOn};
use crate::project::Project;
use crate::results::Row;
use crate::unittest::run::{CaseResult, SuiteResult, Verdict};
use crate::versioning::record::BlueGreenRecord;
use serde::Serialize;
use std::path::PathBuf;

/// What to test.
#[derive(Debug, Clone)]
pub struct LiveTestRequest {
    pub pipelines: PathBuf,
    /// Only these tables (as written; resolved like `table preview`); empty: every table with a
    /// `tests/live_tests.yaml` (with `blue_green`: every green table of the open release that has
    /// one).
    pub tables: Vec<String>,
    /// Test the green tables of the open blue-green release.
    pub blue_green: bool,
    /// Failing rows kept per test.
    pub max_failing_rows: usize,
    /// How each read is bounded (idle, timeout).
    pub read: ReadOptions,
    pub allow_unknown: bool,
    /// Write the results as JUnit XML to this file (atomically).
    pub junit: Option<PathBuf>,
}

/// The result of one test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestOutcome {
    pub name: String,
    /// `not_null`, `unique`, `accepted_values`, `row_count`, `freshness`, `sql`.
    pub kind: &'static str,
    /// Line of the test in the file.
    pub line: usize,
    pub verdict: Verdict,
    pub message: String,
    pub failing_count: usize,
    /// Column names of `failing_rows`.
    pub columns: Vec<String>,
    /// Up to `max_failing_rows`.
    pub failing_rows: Vec<Row>,
    /// The statement the read ran as (deleted since).
    pub statement: Option<String>,
    /// The SQL of a `sql` test as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    pub seconds: f64,
}

/// The tests of one table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableOutcome {
    pub table: String,
    /// The tests file, relative to the pipelines folder's parent (`pipelines/…/tests/live_tests.yaml`).
    pub file: String,
    pub tests: Vec<TestOutcome>,
}

/// What `test-live` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveTestReport {
    /// The target (`Confluent Cloud`, `Apache Flink SQL Gateway`).
    pub target: String,
    pub tables: Vec<TableOutcome>,
    /// Selected tables without a tests file (nothing run for them).
    pub without_tests: Vec<String>,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    /// The JUnit file written.
    pub junit: Option<PathBuf>,
}

impl LiveTestReport {
    /// Every test passed (and at least one ran).
    pub fn success(&self) -> bool {
        self.failed == 0 && self.errors == 0 && self.passed > 0
    }

    /// The JUnit XML: one `<testsuite>` per table, one `<testcase>` per test named
    /// `<table>.<test>`, a FAIL with the message and failing rows as `<failure>`, an ERROR as
    /// `<error>` (the unit-test runner's writer, [`crate::unittest::junit`]).
    pub fn junit(&self) -> String {
        let suites: Vec<SuiteResult> = self
            .tables
            .iter()
            .map(|t| SuiteResult {
                table: t.table.clone(),
                target: self.target.clone(),
                cases: t
                    .tests
                    .iter()
                    .map(|x| CaseResult {
                        name: x.name.clone(),
                        result: x.verdict,
                        outputs: Vec::new(),
                        error: (x.verdict != Verdict::Pass).then(|| failure_text(t, x)),
                        seconds: x.seconds,
                    })
                    .collect(),
                error: None,
                cleanup_errors: Vec::new(),
                kept: false,
                interrupted: false,
                seconds: t.tests.iter().map(|x| x.seconds).sum(),
            })
            .collect();
        crate::unittest::junit::to_xml_named("flinkpipe live tests", &suites)
    }
}

/// The message and failing rows of a test that did not pass, one per line.
pub fn failure_text(t: &TableOutcome, x: &TestOutcome) -> String {
    let columns: Vec<crate::results::Column> = x
        .columns
        .iter()
        .map(|n| crate::results::Column {
            name: n.clone(),
            type_name: String::new(),
        })
        .collect();
    let mut out = format!("{}:{}: {}", t.file, x.line, x.message);
    for r in &x.failing_rows {
        out.push_str("\n  ");
        out.push_str(&check::row_text(&columns, r));
    }
    if x.failing_count > x.failing_rows.len() {
        out.push_str(&format!(
            "\n  … {} more",
            x.failing_count - x.failing_rows.len()
        ));
    }
    out
}

/// Runs the tests (see the module doc).
///
/// Errors: errors in the project, a JUnit file that cannot be written, a `live_tests.yaml` that is not the documented shape (file and
/// line; nothing runs), a custom `sql` test that is not one read-only query, an unknown table, `--table-name` naming a table without a tests file,
/// `blue_green` without an open release, nothing to test. A read that fails is an ERROR of its
/// tests, not an error of the command.
pub fn run(ctx: &Context, req: &LiveTestRequest) -> Result<LiveTestReport, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no live test run: fix the errors above",
    )?;
    let file_of = |table: &str| -> PathBuf {
        let t = &project.inventory.tables[table];
        project
            .inventory
            .disk_path(&t.folder)
            .join("tests")
            .join(FILE_NAME)
    };
    let mut selected: Vec<String> = Vec::new();
    if req.blue_green {
        let naming = crate::plan::StatementNaming::from_config(&cfg);
        let record = BlueGreenRecord::read(&req.pipelines)?;
        let release = record.open_release(&naming.prefix).ok_or_else(|| {
            OpsError::Refused(format!(
                "--blue-green: {} records no release open for statement prefix '{}'",
                BlueGreenRecord::path(&req.pipelines).display(),
                naming.prefix
            ))
        })?;
        for t in &release.tables {
            let name = ctx.resolve_table(&project, &t.green_table_name)?;
            if !selected.contains(&name) {
                selected.push(name);
            }
        }
        if !req.tables.is_empty() {
            let keep = ctx.resolve_tables(&project, &req.tables)?;
            if let Some(k) = keep.iter().find(|k| !selected.contains(k)) {
                return Err(OpsError::Usage(format!(
                    "--table-name {k}: not a green table of the open release"
                )));
            }
            selected.retain(|s| keep.contains(s));
        }
    } else if !req.tables.is_empty() {
        selected = ctx.resolve_tables(&project, &req.tables)?;
        if let Some(t) = selected.iter().find(|t| !file_of(t).is_file()) {
            return Err(OpsError::Usage(format!(
                "--table-name {t}: no {} in its folder",
                rel(&project, &file_of(t))
            )));
        }
    } else {
        selected = project
            .inventory
            .tables
            .iter()
            .filter(|(_, t)| !t.external && !t.unknown)
            .map(|(n, _)| n.clone())
            .filter(|n| file_of(n).is_file())
            .collect();
    }
    // Every file is read first: a bad one stops the run before any query.
    let mut suites = Vec::new();
    let mut without_tests = Vec::new();
    for t in &selected {
        let path = file_of(t);
        if !path.is_file() {
            without_tests.push(t.clone());
            continue;
        }
        let mut tests = LiveTests::read(&path)?;
        tests.file = PathBuf::from(rel(&project, &path));
        // A custom query must only read: refused here, before any query runs.
        for x in &tests.tests {
            if let Check::Sql { sql } = &x.check {
                query::check_read_only(
                    &custom_sql(sql, t),
                    &format!("{}:{}", tests.file.display(), x.line),
                )?;
            }
        }
        suites.push((t.clone(), tests));
    }
    if suites.iter().all(|(_, s)| s.tests.is_empty()) {
        return Err(OpsError::Usage(format!(
            "no live test to run: declare them in <table folder>/tests/{FILE_NAME} (see README, \"Data tests on live tables\")"
        )));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let mut tables = Vec::new();
    for (table, suite) in suites {
        tables.push(run_table(ctx, &cfg, &project, &table, &suite, req, now));
    }
    let count = |v: Verdict| {
        tables
            .iter()
            .flat_map(|t: &TableOutcome| &t.tests)
            .filter(|x| x.verdict == v)
            .count()
    };
    let report = LiveTestReport {
        target: super::target::TargetKind::of(&cfg).describe().to_string(),
        passed: count(Verdict::Pass),
        failed: count(Verdict::Fail),
        errors: count(Verdict::Error),
        tables,
        without_tests,
        junit: req.junit.clone(),
    };
    if let Some(p) = &req.junit {
        crate::fsutil::write_atomic(p, report.junit().as_bytes()).map_err(|source| {
            OpsError::Write {
                path: p.clone(),
                source,
            }
        })?;
    }
    Ok(report)
}

fn rel(project: &Project, path: &std::path::Path) -> String {
    let root = project
        .inventory
        .root
        .parent()
        .unwrap_or(std::path::Path::new(""));
    crate::fsutil::slash_path(path.strip_prefix(root).unwrap_or(path))
}

/// A custom test's SQL as sent: `{table}` replaced by the quoted name of the table tested.
fn custom_sql(sql: &str, table: &str) -> String {
    sql.replace("{table}", &crate::sql::quote_identifier(table))
}

/// One read, kept for every test that uses it.
type Read = Result<QueryOutcome, String>;

fn run_table(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    table: &str,
    suite: &LiveTests,
    req: &LiveTestRequest,
    now: f64,
) -> TableOutcome {
    let key = project.inventory.tables[table].primary_key.clone();
    let mut folded: Option<(Read, f64)> = None;
    let mut unfolded: Option<(Read, f64)> = None;
    let timed = |f: &dyn Fn() -> Result<QueryOutcome, OpsError>| -> (Read, f64) {
        let start = std::time::Instant::now();
        let r = f().map_err(|e| e.to_string());
        (r, start.elapsed().as_secs_f64())
    };
    let mut tests = Vec::new();
    for t in &suite.tests {
        let (read, seconds, sql) = match &t.check {
            Check::Sql { sql } => {
                let sql = custom_sql(sql, table);
                let origin = format!("{}:{}", suite.file.display(), t.line);
                let (r, s) =
                    timed(&|| query::bounded_query(ctx, cfg, project, &sql, &origin, &req.read));
                (r, s, Some(sql))
            }
            Check::Unique { on: UniqueOn::Key } if !key.is_empty() => {
                let (r, s) = unfolded.get_or_insert_with(|| {
                    timed(&|| query::snapshot_unfolded(ctx, cfg, project, table, &req.read))
                });
                (r.clone(), *s, None)
            }
            _ => {
                let (r, s) = folded.get_or_insert_with(|| {
                    timed(&|| query::snapshot_as(ctx, cfg, project, table, table, &req.read))
                });
                (r.clone(), *s, None)
            }
        };
        let (e, columns, statement) = match &read {
            Err(e) => (
                Evaluation {
                    verdict: Verdict::Error,
                    message: format!("the read failed: {e}"),
                    failing_count: 0,
                    failing_rows: Vec::new(),
                },
                Vec::new(),
                None,
            ),
            Ok(q) => (
                check::evaluate(
                    &t.check,
                    &q.result.columns,
                    &q.result.rows,
                    q.result.complete,
                    &key,
                    now,
                    req.max_failing_rows,
                ),
                q.result.columns.iter().map(|c| c.name.clone()).collect(),
                Some(q.result.statement.clone()),
            ),
        };
        tests.push(TestOutcome {
            name: t.name.clone(),
            kind: t.check.kind(),
            line: t.line,
            verdict: e.verdict,
            message: e.message,
            failing_count: e.failing_count,
            columns,
            failing_rows: e.failing_rows,
            statement,
            sql,
            seconds,
        });
    }
    TableOutcome {
        table: table.to_string(),
        file: crate::fsutil::slash_path(&suite.file),
        tests,
    }
}
