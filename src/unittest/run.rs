//! Runs a prepared [`Suite`] on a [`Target`]: one connected target for the whole suite (on the SQL
//! Gateway, tables live in its session), statements named by [`TestNaming`].
//!
//! 1. Storage: on a Kafka broker the test topics are emptied (deleted and created); on Confluent Cloud
//!    the test tables are dropped (a table is its topic).
//! 2. The test tables are created (`ddl-<t>_ut`), each waited for COMPLETED.
//! 3. For each test case: storage emptied again (from the second case on; Confluent: dropped and
//!    created again), every input's `INSERT` run as one statement (a statement set when there are
//!    several, `ins-<i>`) until COMPLETED, then the SQL under test (`dml-<t>_ut`) until COMPLETED — its
//!    inputs are bounded (`scan.bounded.mode = latest-offset`), so it ends once it has consumed them;
//!    then each output is read (`out-<i>`: `SELECT * FROM <t>_ut`, a bounded query folded by the
//!    table's primary key through [`crate::target::read`]) and compared with the expected rows
//!    ([`super::compare`]), or its validation query (`val-<i>`) is run and must return `PASS`.
//! 4. Cleanup, whatever happened (success, failure, timeout, Ctrl-C), unless `keep`: every statement
//!    the run created is deleted, the test tables dropped, the test topics deleted.
//!
//! A step that fails makes its test case ERROR (the target's cause is kept); other cases still run.

use super::TestNaming;
use super::compare::{self, Difference};
use super::prepare::{CheckKind, Suite};
use super::rewrite::Storage;
use crate::deploy::executor::{Cancel, wait_until};
use crate::sql::quote_identifier;
use crate::target::read::{Quiet, ReadOptions, read};
use crate::target::{Backoff, Phase, StatementKind, StatementSpec, Target};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why a step of a unit-test run failed: the statement (or test file) it concerns and the cause,
/// as its one [`Display`](std::fmt::Display) prints it in the report, the JUnit file and the CLI.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The target refused or failed a call for a statement the run sent (create, start a query,
    /// read its result): the target's cause.
    #[error("{statement}: {cause}")]
    Statement {
        /// The statement (`ddl-<t>_ut`, `ins-<i>-…`, `out-<i>-…`).
        statement: String,
        /// The target's error text.
        cause: String,
    },
    /// The statement was answered FAILED at once.
    #[error("{statement}: FAILED: {detail}")]
    Failed {
        /// The statement.
        statement: String,
        /// `status.detail`.
        detail: String,
    },
    /// Waiting for a statement's goal failed: FAILED later, a timeout, the target's error.
    #[error("{0}")]
    Wait(crate::target::TargetError),
    /// Deleting a statement failed (retried through transient errors until the run's timeout).
    #[error("deleting {statement}: {cause}{}", log.as_ref().map(|l| format!(" ({l})")).unwrap_or_default())]
    Delete {
        /// The statement.
        statement: String,
        /// The last error.
        cause: String,
        /// What was retried, when anything was.
        log: Option<String>,
    },
    /// The test topics could not be emptied or removed (Kafka admin).
    #[error(transparent)]
    Topics(#[from] crate::target::kafka::KafkaError),
    /// A bounded query's result did not end within the run's timeout.
    #[error(
        "{statement}: the result did not end (stopped: {stopped_by} after {seconds:.1}s, {changes} change(s))"
    )]
    Unended {
        /// The query statement (`out-<i>-…`, `val-<i>-…`).
        statement: String,
        /// What stopped the read (its `Debug` form).
        stopped_by: String,
        /// How long it was read.
        seconds: f64,
        /// Changes read.
        changes: usize,
    },
    /// The output could not be compared with the expected rows (the comparison's message names the
    /// expected file and its line).
    #[error("{0}")]
    Compare(String),
    /// A validation query returned no row.
    #[error(
        "{file}: the validation query returned no row (expected one row whose first column is 'PASS' or 'FAIL')"
    )]
    NoValidationRow {
        /// The validation file, relative.
        file: String,
    },
    /// A validation query returned something else than `PASS` or `FAIL` in its first column.
    #[error(
        "{file}: the validation query returned {value} in its first column, not 'PASS' or 'FAIL'"
    )]
    NotPassOrFail {
        /// The validation file, relative.
        file: String,
        /// The value, quoted, or `NULL or a non-text value`.
        value: String,
    },
    /// Running a case's inputs failed.
    #[error("inputs: {0}")]
    Inputs(Box<RunError>),
    /// Running the SQL under test failed.
    #[error("the SQL under test: {0}")]
    UnderTest(Box<RunError>),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

/// Where test tables keep their rows, between runs: what must be emptied and removed besides tables.
#[async_trait::async_trait]
pub trait Topics: Send + Sync {
    /// Makes `topics` exist and be empty. Errors: [`RunError::Topics`].
    async fn reset(&self, topics: &[String]) -> Result<(), RunError>;
    /// Removes `topics`. Errors: [`RunError::Topics`].
    async fn remove(&self, topics: &[String]) -> Result<(), RunError>;
}

#[async_trait::async_trait]
impl Topics for crate::target::kafka::KafkaAdmin {
    async fn reset(&self, topics: &[String]) -> Result<(), RunError> {
        self.recreate(topics).await.map_err(RunError::Topics)
    }
    async fn remove(&self, topics: &[String]) -> Result<(), RunError> {
        self.delete(topics).await.map_err(RunError::Topics)
    }
}

/// No topics to manage (Confluent Cloud: `DROP TABLE` deletes the topic).
pub struct NoTopics;

#[async_trait::async_trait]
impl Topics for NoTopics {
    async fn reset(&self, _: &[String]) -> Result<(), RunError> {
        Ok(())
    }
    async fn remove(&self, _: &[String]) -> Result<(), RunError> {
        Ok(())
    }
}

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub naming: TestNaming,
    /// Longest wait for one statement (DDL, inputs, the SQL under test, one output read).
    pub timeout: Duration,
    /// Phase polls.
    pub poll: Backoff,
    /// Leave tables, topics and statements in place (to inspect them).
    pub keep: bool,
}

/// PASS, FAIL or ERROR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Fail,
    /// The check could not run (a statement failed, a timeout, Ctrl-C, a validation that returned
    /// neither PASS nor FAIL).
    Error,
}

impl Verdict {
    /// `PASS`, `FAIL`, `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Error => "ERROR",
        }
    }
}

/// How an output was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckMode {
    /// Against `expected_<t>_<i>.csv`.
    ExpectedRows,
    /// By a validation query.
    ValidationSql,
}

/// The result of one output check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputResult {
    /// The output table (project name).
    pub table: String,
    /// The expected-rows or validation file, relative.
    pub file: String,
    pub check: CheckMode,
    pub result: Verdict,
    pub expected_rows: Option<usize>,
    pub actual_rows: Option<usize>,
    /// The first differences (expected rows), or the validation rows that are not PASS.
    pub differences: Vec<String>,
    /// Differences in all.
    pub difference_count: usize,
    /// Why ERROR, or a note (retractions of missing rows).
    pub detail: Option<String>,
    /// For an expected file still marked "not filled in yet": every row the output holds, as CSV
    /// lines of that file's header (the header first), ready to paste below it
    /// ([`super::compare::csv_lines`]). Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actual_csv: Vec<String>,
    pub seconds: f64,
}

/// The result of one test case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub result: Verdict,
    pub outputs: Vec<OutputResult>,
    /// Why the case could not run (inputs or the SQL under test failed).
    pub error: Option<String>,
    pub seconds: f64,
}

/// One line of a run's report: a suite's setup failure, a case without output checks (its inputs or
/// the SQL under test failed before any), or the check of one output of a case. The report's table
/// shows one row per line and its summary counts these same lines, so the two always agree.
#[derive(Debug, Clone, Copy)]
pub enum ReportLine<'a> {
    /// The suite could not be set up (its message).
    Setup(&'a str),
    /// A case that checked no output.
    Case(&'a CaseResult),
    /// One output of a case.
    Output(&'a CaseResult, &'a OutputResult),
}

impl ReportLine<'_> {
    /// The verdict the line shows (a setup failure is an error).
    pub fn verdict(&self) -> Verdict {
        match self {
            ReportLine::Setup(_) => Verdict::Error,
            ReportLine::Case(c) => c.result,
            ReportLine::Output(_, o) => o.result,
        }
    }
}

impl SuiteResult {
    /// The lines of this suite's report, in order.
    pub fn lines(&self) -> Vec<ReportLine<'_>> {
        let mut lines: Vec<ReportLine<'_>> = self
            .error
            .as_deref()
            .map(ReportLine::Setup)
            .into_iter()
            .collect();
        for c in &self.cases {
            if c.outputs.is_empty() {
                lines.push(ReportLine::Case(c));
            }
            lines.extend(c.outputs.iter().map(|o| ReportLine::Output(c, o)));
        }
        lines
    }
}

/// The result of a suite.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteResult {
    pub table: String,
    pub target: String,
    pub cases: Vec<CaseResult>,
    /// Setup failure (storage, test tables): every case is ERROR.
    pub error: Option<String>,
    /// Cleanup problems (something may be left: `delete-unit-tests` removes it).
    pub cleanup_errors: Vec<String>,
    /// Statements, tables and topics were left in place (`--keep`).
    pub kept: bool,
    pub interrupted: bool,
    pub seconds: f64,
}

impl SuiteResult {
    /// Whether every case passed.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && !self.cases.is_empty()
            && self.cases.iter().all(|c| c.result == Verdict::Pass)
    }
}

/// What the run created, for cleanup.
#[derive(Default)]
struct Created {
    statements: Mutex<Vec<String>>,
}

impl Created {
    fn add(&self, name: &str) {
        let mut v = self.statements.lock().expect("not poisoned");
        if !v.iter().any(|n| n == name) {
            v.push(name.to_string());
        }
    }
    fn take(&self, name: &str) {
        self.statements
            .lock()
            .expect("not poisoned")
            .retain(|n| n != name);
    }
    fn all(&self) -> Vec<String> {
        self.statements.lock().expect("not poisoned").clone()
    }
}

struct Runner<'a> {
    target: &'a dyn Target,
    topics: &'a dyn Topics,
    suite: &'a Suite,
    opts: &'a RunOptions,
    created: Created,
}

fn done(s: Option<&crate::target::StatementState>) -> bool {
    s.is_some_and(|s| s.phase == Phase::Completed)
}

impl Runner<'_> {
    /// Creates a statement and waits until it COMPLETES; the error carries the target's cause.
    async fn complete(&self, spec: StatementSpec) -> Result<(), RunError> {
        self.created.add(&spec.name);
        let st = self
            .target
            .create_statement(&spec)
            .await
            .map_err(|e| RunError::Statement {
                statement: spec.name.clone(),
                cause: e.to_string(),
            })?;
        if st.phase == Phase::Failed {
            return Err(RunError::Failed {
                statement: spec.name,
                detail: st.detail,
            });
        }
        wait_until(
            self.target,
            &spec.name,
            self.opts.timeout,
            self.opts.poll,
            done,
        )
        .await
        .map_err(RunError::Wait)?;
        Ok(())
    }

    /// Deletes a statement and waits until it is gone. The delete is retried through 429s, 5xx and
    /// dropped connections for up to the run's timeout (a clean-up that gives up at the first 429
    /// leaves test statements behind).
    async fn remove(&self, name: &str) -> Result<(), RunError> {
        crate::deploy::executor::delete_within(self.target, name, self.opts.timeout)
            .await
            .map_err(|g| RunError::Delete {
                statement: name.to_string(),
                cause: g.error.to_string(),
                log: (!g.log.is_empty()).then(|| g.log.to_string()),
            })?;
        wait_until(self.target, name, self.opts.timeout, self.opts.poll, |s| {
            s.is_none()
        })
        .await
        .map_err(RunError::Wait)?;
        self.created.take(name);
        Ok(())
    }

    /// The names of the statements under test, in order: `dml-<table><suffix>` for the first
    /// statement of each table, `…-2`, `…-3` for its next ones.
    fn tested_names(&self) -> Vec<String> {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        self.suite
            .tested
            .iter()
            .map(|st| {
                let n = seen.entry(st.table.as_str()).or_insert(0);
                *n += 1;
                let name = self.opts.naming.dml(&st.table);
                if *n == 1 {
                    name
                } else {
                    crate::plan::naming::fit_length(format!("{name}-{n}"))
                }
            })
            .collect()
    }

    fn spec(&self, name: String, sql: String, kind: StatementKind) -> StatementSpec {
        let mut properties = BTreeMap::new();
        if self.suite.storage == Storage::Confluent && kind == StatementKind::Dml {
            properties.insert(
                "sql.tables.scan.bounded.mode".into(),
                "latest-offset".into(),
            );
        }
        StatementSpec {
            name,
            sql,
            properties,
            kind,
            compute_pool: None,
        }
    }

    async fn drop_tables(&self) -> Result<(), RunError> {
        for t in self.suite.tables.iter().rev() {
            let name = self.opts.naming.drop(&t.table);
            let sql = format!("DROP TABLE IF EXISTS {}", quote_identifier(&t.ut_name));
            self.complete(self.spec(name.clone(), sql, StatementKind::Ddl))
                .await?;
            self.remove(&name).await?;
        }
        Ok(())
    }

    async fn create_tables(&self) -> Result<(), RunError> {
        for t in &self.suite.tables {
            let Some(ddl) = &t.ddl else { continue };
            let name = self.opts.naming.ddl(&t.table);
            self.complete(self.spec(name, ddl.clone(), StatementKind::Ddl))
                .await?;
        }
        Ok(())
    }

    /// Empties the storage of every test table (see module docs).
    async fn reset(&self, first: bool) -> Result<(), RunError> {
        match self.suite.storage {
            Storage::Kafka { .. } => {
                self.topics.reset(&self.suite.ut_names()).await?;
                if first {
                    self.create_tables().await?;
                }
            }
            Storage::Confluent => {
                for t in &self.suite.tables {
                    if t.ddl.is_some() {
                        let name = self.opts.naming.ddl(&t.table);
                        if !first {
                            self.remove(&name).await?;
                        }
                    }
                }
                self.drop_tables().await?;
                self.create_tables().await?;
            }
        }
        Ok(())
    }

    async fn case(&self, case: &super::prepare::Case, cancel: &Cancel) -> CaseResult {
        let start = Instant::now();
        let naming = &self.opts.naming;
        let table = &self.suite.table;
        let mut result = CaseResult {
            name: case.name.clone(),
            result: Verdict::Error,
            outputs: Vec::new(),
            error: None,
            seconds: 0.0,
        };
        let setup = async {
            if !case.inserts.is_empty() {
                let sql = if case.inserts.len() == 1 {
                    case.inserts[0].clone()
                } else {
                    format!(
                        "EXECUTE STATEMENT SET\nBEGIN\n{};\nEND",
                        case.inserts.join(";\n")
                    )
                };
                let name = naming.ins(case.index, table);
                self.complete(self.spec(name, sql, StatementKind::Dml))
                    .await
                    .map_err(|e| RunError::Inputs(Box::new(e)))?;
            }
            for (st, name) in self.suite.tested.iter().zip(self.tested_names()) {
                let mut spec = self.spec(name, st.sql.clone(), StatementKind::Dml);
                spec.properties.extend(st.properties.clone());
                self.complete(spec)
                    .await
                    .map_err(|e| RunError::UnderTest(Box::new(e)))?;
            }
            Ok::<(), RunError>(())
        };
        let setup = tokio::select! {
            r = setup => r,
            _ = cancel.cancelled() => Err(RunError::Interrupted),
        };
        if let Err(e) = setup {
            result.error = Some(e.to_string());
            result.seconds = start.elapsed().as_secs_f64();
            return result;
        }
        for check in &case.checks {
            let t0 = Instant::now();
            let out = tokio::select! {
                o = self.check(case, check, cancel) => o,
                _ = cancel.cancelled() => Err(RunError::Interrupted),
            };
            let mut r = match out {
                Ok(r) => r,
                Err(e) => OutputResult {
                    table: check.table.clone(),
                    file: check.file.clone(),
                    check: mode(&check.kind),
                    result: Verdict::Error,
                    expected_rows: None,
                    actual_rows: None,
                    differences: Vec::new(),
                    difference_count: 0,
                    detail: Some(e.to_string()),
                    actual_csv: Vec::new(),
                    seconds: 0.0,
                },
            };
            r.seconds = t0.elapsed().as_secs_f64();
            result.outputs.push(r);
        }
        result.result = if result.outputs.iter().all(|o| o.result == Verdict::Pass) {
            Verdict::Pass
        } else if result.outputs.iter().any(|o| o.result == Verdict::Error) {
            Verdict::Error
        } else {
            Verdict::Fail
        };
        result.seconds = start.elapsed().as_secs_f64();
        result
    }

    async fn query(
        &self,
        name: String,
        sql: String,
        key: Option<Vec<String>>,
        cancel: &Cancel,
    ) -> Result<crate::target::read::QueryResult, RunError> {
        let spec = self.spec(name.clone(), sql, StatementKind::Dml);
        self.created.add(&name);
        let mut stream = self
            .target
            .start_query(&spec)
            .await
            .map_err(|e| RunError::Statement {
                statement: name.clone(),
                cause: e.to_string(),
            })?;
        let options = ReadOptions {
            key_columns: key,
            timeout: Some(self.opts.timeout),
            idle: self.opts.timeout,
            poll: Duration::from_millis(200),
            ..ReadOptions::default()
        };
        let r = read(stream.as_mut(), &options, false, &Quiet, cancel.cancelled())
            .await
            .map_err(|e| RunError::Statement {
                statement: name.clone(),
                cause: e.to_string(),
            })?;
        // The read closed the query (deleted its statement); wait until it is gone.
        self.remove(&name).await?;
        if !r.complete {
            return Err(RunError::Unended {
                statement: name,
                stopped_by: format!("{:?}", r.stopped_by),
                seconds: r.seconds,
                changes: r.change_count,
            });
        }
        Ok(r)
    }

    async fn check(
        &self,
        case: &super::prepare::Case,
        check: &super::prepare::Check,
        cancel: &Cancel,
    ) -> Result<OutputResult, RunError> {
        let naming = &self.opts.naming;
        let mut out = OutputResult {
            table: check.table.clone(),
            file: check.file.clone(),
            check: mode(&check.kind),
            result: Verdict::Error,
            expected_rows: None,
            actual_rows: None,
            differences: Vec::new(),
            difference_count: 0,
            detail: None,
            actual_csv: Vec::new(),
            seconds: 0.0,
        };
        match &check.kind {
            CheckKind::Expected(data) => {
                let key = self
                    .suite
                    .test_table(&check.table)
                    .map(|t| t.primary_key.clone())
                    .unwrap_or_default();
                let r = self
                    .query(
                        naming.out(case.index, &check.table),
                        format!("SELECT * FROM {}", quote_identifier(&check.ut_name)),
                        (!key.is_empty()).then(|| key.clone()),
                        cancel,
                    )
                    .await?;
                // The SQL Gateway sends a result's columns with its first rows: an empty read
                // may end without them. The output's columns are then the test table's
                // declared ones, so an empty output compares the same on every run.
                let columns: Vec<crate::results::Column> = if r.columns.is_empty() {
                    self.suite
                        .test_table(&check.table)
                        .map(|t| {
                            t.columns
                                .iter()
                                .map(|c| crate::results::Column {
                                    name: c.name.clone(),
                                    type_name: c.data_type.clone(),
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                } else {
                    r.columns.clone()
                };
                // An expected file not filled in yet reports the output's rows, whatever
                // columns its header names.
                let c = match compare::compare(data, &columns, &r.rows, &key) {
                    Ok(c) => c,
                    Err(_) if data.not_filled_in => compare::Comparison {
                        passed: false,
                        expected_rows: data.rows.len(),
                        actual_rows: r.rows.len(),
                        differences: Vec::new(),
                        difference_count: 0,
                    },
                    Err(e) => return Err(RunError::Compare(e.to_string())),
                };
                out.result = if c.passed && !data.not_filled_in {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                };
                out.expected_rows = Some(c.expected_rows);
                out.actual_rows = Some(c.actual_rows);
                out.differences = c.differences.iter().map(Difference::to_string).collect();
                out.difference_count = c.difference_count;
                if data.not_filled_in {
                    out.detail = Some(format!(
                        "{} is not filled in yet: the output holds {} row(s){}; write the expected rows and delete its `# flinkpipe: not filled in yet` line",
                        check.file,
                        r.rows.len(),
                        if r.rows.is_empty() {
                            " (are the input rows filtered out by the SQL? edit the insert files)"
                        } else {
                            ", below as CSV lines of its header: check them and paste them below the header"
                        }
                    ));
                    // The rows, not differences against an expectation that does not exist yet.
                    out.differences.clear();
                    out.difference_count = 0;
                    if !r.rows.is_empty() {
                        out.actual_csv = compare::csv_lines(&data.columns, &columns, &r.rows);
                    }
                } else if !r.inconsistencies.is_empty() {
                    out.detail = Some(format!(
                        "{} retraction(s) of rows not in the output: {}",
                        r.inconsistencies.len(),
                        r.inconsistencies[0]
                    ));
                }
            }
            CheckKind::Validation(sql) => {
                let r = self
                    .query(
                        naming.val(case.index, &check.table),
                        sql.clone(),
                        None,
                        cancel,
                    )
                    .await?;
                out.actual_rows = Some(r.rows.len());
                let firsts: Vec<Option<&str>> = r
                    .rows
                    .iter()
                    .map(|row| row.first().and_then(Value::as_str))
                    .collect();
                if firsts.is_empty() {
                    return Err(RunError::NoValidationRow {
                        file: check.file.clone(),
                    });
                }
                if let Some(bad) = firsts
                    .iter()
                    .find(|v| !matches!(v.map(str::trim), Some("PASS" | "FAIL")))
                {
                    return Err(RunError::NotPassOrFail {
                        file: check.file.clone(),
                        value: bad
                            .map(|s| format!("'{s}'"))
                            .unwrap_or_else(|| "NULL or a non-text value".into()),
                    });
                }
                let fails: Vec<String> = r
                    .rows
                    .iter()
                    .filter(|row| {
                        row.first().and_then(Value::as_str).map(str::trim) == Some("FAIL")
                    })
                    .map(|row| {
                        let cells: Vec<String> = r
                            .columns
                            .iter()
                            .zip(row)
                            .map(|(c, v)| format!("{}={v}", c.name))
                            .collect();
                        format!("FAIL: {{{}}}", cells.join(", "))
                    })
                    .collect();
                out.result = if fails.is_empty() {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                };
                out.difference_count = fails.len();
                out.differences = fails.into_iter().take(compare::MAX_DIFFERENCES).collect();
            }
        }
        Ok(out)
    }

    async fn cleanup_case(&self, case: &super::prepare::Case) -> Vec<RunError> {
        let naming = &self.opts.naming;
        let mut names = vec![naming.ins(case.index, &self.suite.table)];
        names.extend(self.tested_names());
        let mut errors = Vec::new();
        for n in names {
            if let Err(e) = self.remove(&n).await {
                errors.push(e);
            }
        }
        errors
    }

    async fn cleanup(&self) -> Vec<RunError> {
        let mut errors = Vec::new();
        for n in self.created.all() {
            if let Err(e) = self.remove(&n).await {
                errors.push(e);
            }
        }
        if let Err(e) = self.drop_tables().await {
            errors.push(e);
        }
        if let Err(e) = self.topics.remove(&self.suite.ut_names()).await {
            errors.push(e);
        }
        errors
    }
}

fn mode(k: &CheckKind) -> CheckMode {
    match k {
        CheckKind::Expected(_) => CheckMode::ExpectedRows,
        CheckKind::Validation(_) => CheckMode::ValidationSql,
    }
}

/// Runs `suite` on `target` (see module docs). Never fails: every problem is in the result.
pub async fn run_suite(
    target: &dyn Target,
    topics: &dyn Topics,
    suite: &Suite,
    opts: &RunOptions,
    cancel: &Cancel,
) -> SuiteResult {
    let start = Instant::now();
    let r = Runner {
        target,
        topics,
        suite,
        opts,
        created: Created::default(),
    };
    let mut out = SuiteResult {
        table: suite.table.clone(),
        target: target.describe(),
        cases: Vec::new(),
        error: None,
        cleanup_errors: Vec::new(),
        kept: opts.keep,
        interrupted: false,
        seconds: 0.0,
    };
    for (i, case) in suite.cases.iter().enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        let reset = tokio::select! {
            x = r.reset(i == 0) => x,
            _ = cancel.cancelled() => Err(RunError::Interrupted),
        };
        if let Err(e) = reset {
            out.error = Some(format!("preparing the test tables: {e}"));
            break;
        }
        let c = r.case(case, cancel).await;
        out.cases.push(c);
        // With `keep`, the last case's statements stay for inspection.
        if !opts.keep || i + 1 < suite.cases.len() {
            let errors = r.cleanup_case(case).await;
            out.cleanup_errors
                .extend(errors.iter().map(RunError::to_string));
        }
    }
    out.interrupted = cancel.is_cancelled();
    if !opts.keep {
        let errors = r.cleanup().await;
        out.cleanup_errors
            .extend(errors.iter().map(RunError::to_string));
    }
    out.seconds = start.elapsed().as_secs_f64();
    out
}

#[cfg(test)]
mod tests {
    use super::RunError;

    /// The one Display names the statement or file and keeps the step it failed in.
    #[test]
    fn run_errors_name_the_statement_file_and_step() {
        let failed = RunError::Failed {
            statement: "dml-t_ut".into(),
            detail: "boom".into(),
        };
        assert_eq!(failed.to_string(), "dml-t_ut: FAILED: boom");
        assert_eq!(
            RunError::UnderTest(Box::new(failed)).to_string(),
            "the SQL under test: dml-t_ut: FAILED: boom"
        );
        assert_eq!(
            RunError::Inputs(Box::new(RunError::Statement {
                statement: "ins-1-t_ut".into(),
                cause: "HTTP 400".into()
            }))
            .to_string(),
            "inputs: ins-1-t_ut: HTTP 400"
        );
        let delete = |log: Option<&str>| RunError::Delete {
            statement: "out-1".into(),
            cause: "HTTP 503".into(),
            log: log.map(str::to_string),
        };
        assert_eq!(delete(None).to_string(), "deleting out-1: HTTP 503");
        assert_eq!(
            delete(Some("retried 3 times")).to_string(),
            "deleting out-1: HTTP 503 (retried 3 times)"
        );
        assert_eq!(
            RunError::NotPassOrFail {
                file: "tests/validate_t_1.sql".into(),
                value: "'MAYBE'".into()
            }
            .to_string(),
            "tests/validate_t_1.sql: the validation query returned 'MAYBE' in its first column, not 'PASS' or 'FAIL'"
        );
        assert_eq!(
            RunError::Unended {
                statement: "out-1".into(),
                stopped_by: "Idle".into(),
                seconds: 2.04,
                changes: 3
            }
            .to_string(),
            "out-1: the result did not end (stopped: Idle after 2.0s, 3 change(s))"
        );
        assert_eq!(RunError::Interrupted.to_string(), "interrupted");
    }
}
