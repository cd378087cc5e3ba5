//! The empirical tier of `pipeline upgrade-check` (`--empirical`): a real restore of the new SQL from
//! a savepoint of the old one, on the table's unit-test fixtures, on the local Apache Flink SQL
//! Gateway and its Kafka broker.
//!
//! The suite is prepared as for a unit test ([`super::prepare`]: foundations and outputs mapped to
//! `_ut` tables on the broker, the DML renamed onto them), with the old SQL renamed the same way
//! ([`rename_onto`]). The first test case whose inputs are `INSERT … VALUES` rows (CSV inputs always
//! are) is split: each insert's first half of rows (rounded up) is the first half, the rest the
//! second ([`halves`]). Then ([`run`]):
//!
//! 1. the test topics are emptied and the test tables created, the foundations **unbounded**
//!    ([`super::rewrite::unbounded`]), so that the statements reading them run until stopped;
//! 2. the first half is inserted, the old SQL started (`upg-old`) and, once its sources have read
//!    every row of the first half (the JobManager's `numRecordsOut` of its source operators, see
//!    [`crate::target::metrics`]), stopped with `STOP JOB '<id>' WITH SAVEPOINT`;
//! 3. the new SQL starts from that savepoint (`upg-new`, `execution.state-recovery.path`, without
//!    `ignore-unclaimed-state`: state it cannot map fails it), the second half is inserted, and once
//!    its sources have read it the job is stopped with a savepoint too (which flushes its sinks);
//!    each output is read (a bounded `SELECT *`, folded by its primary key);
//! 4. the outputs' topics are emptied and the new SQL runs fresh (`upg-ref`) on both halves, stopped
//!    the same way, and its outputs read;
//! 5. cleanup, whatever happened (success, failure, timeout, Ctrl-C): every statement created is
//!    deleted (a live job is cancelled), the test topics deleted, the savepoints disposed.
//!
//! The restored run's outputs equal the fresh run's: [`Outcome::SameResult`]; they differ:
//! [`Outcome::DifferentResult`] (the state was kept, but computed under other semantics); the new job
//! failed on the restore (`StateMigrationException`, state it cannot map): [`Outcome::RestoreFailed`];
//! anything else (a timeout, a job that did not restore from the savepoint): [`Outcome::Inconclusive`].

use super::TestNaming;
use super::prepare::{Role, Suite, TestedStatement};
use super::rewrite::{self, Storage};
use super::run::Topics;
use crate::deploy::executor::{Cancel, delete_within, wait_until};
use crate::sql::dialect::FlinkDialect;
use crate::sql::split::LineIndex;
use crate::sql::{StatementKind as SqlKind, quote_identifier};
use crate::target::read::{Quiet, ReadOptions, read};
use crate::target::{Backoff, Phase, Restore, StatementKind, StatementSpec, Target};
use serde::Serialize;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The rows of `INSERT … VALUES`: the text before the first row (`INSERT INTO t (a, b) VALUES`),
/// each row's `( … )` text, and the text after the last one. `None`: not an `INSERT … VALUES`.
fn value_rows(insert: &str) -> Option<(String, Vec<String>, String)> {
    let lines = LineIndex::new(insert);
    let mut raw = Vec::new();
    Tokenizer::new(&FlinkDialect, insert)
        .tokenize_with_location_into_buf(&mut raw)
        .ok()?;
    let toks: Vec<(Token, std::ops::Range<usize>)> = raw
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| (t.token.clone(), lines.range(t.span)))
        .collect();
    let is_values = |t: &Token| matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("VALUES"));
    let mut depth = 0i32;
    let mut at = None;
    for (i, (t, _)) in toks.iter().enumerate() {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && is_values(t) => {
                at = Some(i);
                break;
            }
            _ => {}
        }
    }
    let first = toks.get(at? + 1)?;
    if first.0 != Token::LParen {
        return None;
    }
    let head = insert[..first.1.start].to_string();
    let mut rows = Vec::new();
    let mut i = at? + 1;
    let mut tail_start = insert.len();
    while i < toks.len() {
        let (t, r) = &toks[i];
        match t {
            Token::LParen => {
                let start = r.start;
                let j = rewrite::closing_paren(&toks, i);
                let end = toks.get(j)?.1.end;
                rows.push(insert[start..end].to_string());
                tail_start = end;
                i = j + 1;
            }
            Token::Comma => i += 1,
            Token::SemiColon | Token::EOF => break,
            // Anything else after the rows (a nested query): not plain rows.
            _ => return None,
        }
    }
    Some((head, rows, insert[tail_start..].to_string()))
}

/// A test case's inserts cut in two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Halves {
    /// The `INSERT`s of the first half (each insert's first rows, rounded up).
    pub first: Vec<String>,
    /// The `INSERT`s of the second half.
    pub second: Vec<String>,
    /// Rows in the first half.
    pub first_rows: u64,
    /// Rows in the second half.
    pub second_rows: u64,
}

/// Each insert's rows split in two halves (see module docs). `None` when an insert is not
/// `INSERT … VALUES`.
pub fn halves(inserts: &[String]) -> Option<Halves> {
    let mut h = Halves {
        first: Vec::new(),
        second: Vec::new(),
        first_rows: 0,
        second_rows: 0,
    };
    for ins in inserts {
        let (head, rows, tail) = value_rows(ins)?;
        let cut = rows.len().div_ceil(2);
        let (a, b) = rows.split_at(cut);
        let text = |part: &[String]| format!("{head}{}{tail}", part.join(",\n  "));
        if !a.is_empty() {
            h.first.push(text(a));
        }
        if !b.is_empty() {
            h.second.push(text(b));
        }
        h.first_rows += a.len() as u64;
        h.second_rows += b.len() as u64;
    }
    Some(h)
}

/// `old_sql` (the statement's text at the base commit) renamed onto the suite's test tables, as
/// [`super::prepare::prepare`] renames the head's text, with the suite's properties of the head.
///
/// Errors: the front end cannot locate a name (its message).
pub fn rename_onto(
    suite: &Suite,
    cfg: &crate::config::Config,
    old_sql: &str,
) -> Result<Vec<TestedStatement>, String> {
    let tables: Vec<&str> = suite.tables.iter().map(|t| t.table.as_str()).collect();
    let renamed = rewrite::rename(old_sql, &|n| {
        let k = crate::inventory::resolve_name(n, cfg);
        tables
            .contains(&k.as_str())
            .then(|| suite.suffix.table(n.table()))
    })
    .map_err(|e| e.to_string())?;
    let props = suite
        .tested
        .first()
        .map(|t| t.properties.clone())
        .unwrap_or_default();
    Ok(
        crate::deploy::spec::steps_from_sql(&renamed, "tested", StatementKind::Dml, props.clone())
            .into_iter()
            .filter(|s| {
                matches!(
                    crate::sql::analyze(&s.spec.sql)
                        .statements
                        .first()
                        .map(|x| x.kind),
                    Some(SqlKind::Insert | SqlKind::StatementSet)
                )
            })
            .map(|s| TestedStatement {
                table: suite.table.clone(),
                sql: s.spec.sql,
                properties: super::prepare::without_idleness(s.spec.properties),
            })
            .collect(),
    )
}

/// What a run needs, checked before anything is contacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The test case whose inputs are used.
    pub case: String,
    pub halves: Halves,
    /// The old statement, on the test tables.
    pub old: TestedStatement,
    /// The new statement, on the test tables.
    pub new: TestedStatement,
}

/// The plan of a run, or why the empirical tier cannot run (a sentence for the report's reasons):
/// the suite is not on a Kafka broker (the SQL Gateway), a side is not one INSERT or statement set,
/// no test case has `INSERT … VALUES` inputs with rows for both halves.
pub fn plan(
    suite: &Suite,
    old: &[TestedStatement],
    new: &[TestedStatement],
) -> Result<Plan, String> {
    if !matches!(suite.storage, Storage::Kafka { .. }) {
        return Err("the empirical run needs the SQL Gateway and its Kafka broker".into());
    }
    let one = |side: &str, s: &[TestedStatement]| match s {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "the {side} SQL is not one INSERT or statement set ({} statements to run): no empirical run",
            s.len()
        )),
    };
    let (old, new) = (one("old", old)?, one("new", new)?);
    let mut why = String::from("no test case of the suite");
    for c in &suite.cases {
        match halves(&c.inserts) {
            None => {
                why = format!(
                    "the inputs of test case {} are not INSERT … VALUES rows",
                    c.name
                )
            }
            Some(h) if h.first_rows == 0 || h.second_rows == 0 => {
                why = format!(
                    "test case {} has {} input row(s): too few to split in two halves",
                    c.name,
                    h.first_rows + h.second_rows
                )
            }
            Some(h) => {
                return Ok(Plan {
                    case: c.name.clone(),
                    halves: h,
                    old,
                    new,
                });
            }
        }
    }
    Err(format!("{why}: no empirical run"))
}

/// What the run showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The new SQL restored the old one's state and its outputs equal a fresh run's.
    SameResult,
    /// It restored, and its outputs differ from a fresh run's.
    DifferentResult,
    /// The new job failed on the restore.
    RestoreFailed,
    /// Nothing proven: the run failed, timed out, was interrupted, or the job did not restore.
    Inconclusive,
    /// The run did not take place (`why_not`).
    NotRun,
}

/// The evidence of an empirical run (the report's `empirical`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub outcome: Outcome,
    /// Why the run did not take place, or is inconclusive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// The test case whose inputs were used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// Rows inserted before the savepoint and after it.
    pub rows_first_half: u64,
    pub rows_second_half: u64,
    /// The old job was stopped with a savepoint.
    pub savepoint_taken: bool,
    /// The new job restored from that savepoint (`None`: not known, it did not get there).
    pub restored: Option<bool>,
    /// The restore's failure, or the step that failed: the deepest cause Flink gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Output rows that are in only one of the restored and the fresh run.
    pub rows_differing: usize,
    /// The first of them (`restored only: {…}`, `fresh only: {…}`).
    pub differing_rows: Vec<String>,
    /// What could not be removed (statements, topics, savepoints).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cleanup_errors: Vec<String>,
    pub seconds: f64,
}

impl Evidence {
    /// No run, and why.
    pub fn not_run(why: impl Into<String>) -> Evidence {
        Evidence {
            outcome: Outcome::NotRun,
            why_not: Some(why.into()),
            case: None,
            rows_first_half: 0,
            rows_second_half: 0,
            savepoint_taken: false,
            restored: None,
            error: None,
            rows_differing: 0,
            differing_rows: Vec::new(),
            cleanup_errors: Vec::new(),
            seconds: 0.0,
        }
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub naming: TestNaming,
    /// The whole run's time limit (cleanup comes after it, with its own).
    pub timeout: Duration,
    /// Polls of phases and metrics.
    pub poll: Duration,
}

/// At most this many differing rows are shown.
pub const MAX_DIFFERING: usize = 5;

/// Why a step stopped the run.
enum Stop {
    /// The new job failed on the restore.
    Restore(String),
    /// Anything else.
    Other(String),
}

struct Runner<'a> {
    target: &'a dyn Target,
    suite: &'a Suite,
    opts: &'a RunOptions,
    deadline: Instant,
    created: Mutex<Vec<String>>,
    savepoints: Mutex<Vec<String>>,
}

fn poll_backoff(d: Duration) -> Backoff {
    Backoff {
        initial: d,
        factor: 1.0,
        max: d,
        jitter: 0.0,
        max_attempts: u32::MAX,
    }
}

impl Runner<'_> {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    fn spec(&self, name: String, sql: String, kind: StatementKind) -> StatementSpec {
        StatementSpec {
            name,
            sql,
            properties: BTreeMap::new(),
            kind,
            compute_pool: None,
        }
    }

    fn add(&self, name: &str) {
        self.created
            .lock()
            .expect("not poisoned")
            .push(name.to_string());
    }

    /// Creates a statement and waits until it COMPLETES.
    async fn complete(&self, spec: StatementSpec) -> Result<(), Stop> {
        self.add(&spec.name);
        let st = self
            .target
            .create_statement(&spec)
            .await
            .map_err(|e| Stop::Other(format!("{}: {e}", spec.name)))?;
        if st.phase == Phase::Failed {
            return Err(Stop::Other(format!("{}: FAILED: {}", spec.name, st.detail)));
        }
        wait_until(
            self.target,
            &spec.name,
            self.left(),
            poll_backoff(self.opts.poll),
            |s| s.is_some_and(|s| s.phase == Phase::Completed),
        )
        .await
        .map_err(|e| Stop::Other(e.to_string()))?;
        Ok(())
    }

    async fn inserts(&self, step: usize, inserts: &[String]) -> Result<(), Stop> {
        let sql = if inserts.len() == 1 {
            inserts[0].clone()
        } else {
            format!(
                "EXECUTE STATEMENT SET\nBEGIN\n{};\nEND",
                inserts.join(";\n")
            )
        };
        let name = self.opts.naming.ins(step, &self.suite.table);
        self.complete(self.spec(name, sql, StatementKind::Dml))
            .await
    }

    /// Waits until the job of `name` has read `rows` records from its sources. A job that fails
    /// meanwhile is `failed(detail)`.
    async fn consumed(
        &self,
        name: &str,
        rows: u64,
        failed: &dyn Fn(String) -> Stop,
    ) -> Result<(), Stop> {
        let mut last = None;
        loop {
            let st = self
                .target
                .get_statement(name)
                .await
                .map_err(|e| Stop::Other(format!("{name}: {e}")))?;
            if let Some(s) = &st
                && (matches!(s.phase, Phase::Failed | Phase::Failing)
                    || (s.phase == Phase::Degraded && is_restore_failure(&s.detail)))
            {
                return Err(failed(s.detail.clone()));
            }
            if st.as_ref().is_some_and(|s| s.phase == Phase::Running) {
                let m = self
                    .target
                    .runtime_metrics(&[name.to_string()])
                    .await
                    .map_err(|e| Stop::Other(format!("{name}: metrics: {e}")))?;
                last = m.get(name).and_then(|m| m.records_in);
                if last.is_some_and(|n| n >= rows) {
                    return Ok(());
                }
            }
            if Instant::now() >= self.deadline {
                return Err(Stop::Other(format!(
                    "{name}: its sources read {} of {rows} rows within the time limit (phase {})",
                    last.map_or("none".to_string(), |n| n.to_string()),
                    crate::plan::status::phase_or_absent(st.as_ref().map(|s| &s.phase))
                )));
            }
            tokio::time::sleep(self.opts.poll).await;
        }
    }

    /// Stops `name` with a savepoint; its path.
    async fn stop(&self, name: &str) -> Result<String, Stop> {
        self.target
            .stop_statement(name)
            .await
            .map_err(|e| Stop::Other(format!("stopping {name} with a savepoint: {e}")))?;
        wait_until(
            self.target,
            name,
            self.left(),
            poll_backoff(self.opts.poll),
            |s| {
                s.is_some_and(|s| {
                    matches!(s.phase, Phase::Stopped | Phase::Failed | Phase::Completed)
                })
            },
        )
        .await
        .map_err(|e| Stop::Other(e.to_string()))?;
        let sp = self
            .target
            .stop_savepoint(name)
            .await
            .map_err(|e| Stop::Other(format!("{name}: {e}")))?
            .ok_or_else(|| Stop::Other(format!("{name}: stopped without a savepoint")))?;
        self.savepoints
            .lock()
            .expect("not poisoned")
            .push(sp.clone());
        Ok(sp)
    }

    /// Every output's rows (folded by its primary key), each as `{"col": value, …}`, sorted.
    async fn outputs(&self, step: usize) -> Result<Vec<String>, Stop> {
        let mut all = Vec::new();
        for t in self.suite.tables.iter().filter(|t| t.role == Role::Output) {
            let name = self.opts.naming.out(step, &t.table);
            let spec = self.spec(
                name.clone(),
                format!("SELECT * FROM {}", quote_identifier(&t.ut_name)),
                StatementKind::Dml,
            );
            self.add(&name);
            let mut stream = self
                .target
                .start_query(&spec)
                .await
                .map_err(|e| Stop::Other(format!("{name}: {e}")))?;
            let key = (!t.primary_key.is_empty()).then(|| t.primary_key.clone());
            let options = ReadOptions {
                key_columns: key,
                timeout: Some(self.left()),
                idle: self.left(),
                poll: Duration::from_millis(200),
                ..ReadOptions::default()
            };
            let never = std::future::pending::<()>();
            let r = read(stream.as_mut(), &options, false, &Quiet, never)
                .await
                .map_err(|e| Stop::Other(format!("{name}: {e}")))?;
            if !r.complete {
                return Err(Stop::Other(format!(
                    "{name}: the output's read did not end ({:?})",
                    r.stopped_by
                )));
            }
            for row in &r.rows {
                let cells: serde_json::Map<String, serde_json::Value> = r
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| (c.name.clone(), v.clone()))
                    .collect();
                all.push(format!("{}: {}", t.table, serde_json::Value::Object(cells)));
            }
        }
        all.sort();
        Ok(all)
    }

    async fn work(
        &self,
        topics: &dyn Topics,
        plan: &Plan,
        ev: &Mutex<Evidence>,
    ) -> Result<(), Stop> {
        let naming = &self.opts.naming;
        let table = &self.suite.table;
        let other = |e: super::run::RunError| Stop::Other(e.to_string());
        topics.reset(&self.suite.ut_names()).await.map_err(other)?;
        for t in &self.suite.tables {
            let Some(ddl) = &t.ddl else { continue };
            let ddl = match t.role {
                Role::Foundation => rewrite::unbounded(ddl),
                Role::Output => ddl.clone(),
            };
            self.complete(self.spec(naming.ddl(&t.table), ddl, StatementKind::Ddl))
                .await?;
        }
        // 1. The old SQL on the first half, stopped with a savepoint.
        self.inserts(1, &plan.halves.first).await?;
        let with = |st: &TestedStatement, name: String| {
            let mut s = self.spec(name, st.sql.clone(), StatementKind::Dml);
            s.properties = st.properties.clone();
            s
        };
        let old = with(&plan.old, naming.upgrade("old", table));
        self.add(&old.name);
        let st = self
            .target
            .create_statement(&old)
            .await
            .map_err(|e| Stop::Other(format!("the old SQL: {}: {e}", old.name)))?;
        if st.phase == Phase::Failed {
            return Err(Stop::Other(format!("the old SQL: {}", st.detail)));
        }
        let old_failed = |d: String| Stop::Other(format!("the old SQL failed: {d}"));
        self.consumed(&old.name, plan.halves.first_rows, &old_failed)
            .await?;
        let savepoint = self.stop(&old.name).await?;
        ev.lock().expect("not poisoned").savepoint_taken = true;

        // 2. The new SQL from the savepoint, on the second half.
        let new = with(&plan.new, naming.upgrade("new", table));
        self.add(&new.name);
        let st = match self
            .target
            .start_from_savepoint(&new, &savepoint, Restore::State)
            .await
        {
            Ok(st) => st,
            Err(e) if e.is_retryable() => return Err(Stop::Other(format!("{}: {e}", new.name))),
            Err(e) => return Err(Stop::Restore(e.to_string())),
        };
        if st.phase == Phase::Failed {
            return Err(Stop::Restore(st.detail));
        }
        self.inserts(2, &plan.halves.second).await?;
        self.consumed(&new.name, plan.halves.second_rows, &Stop::Restore)
            .await?;
        let restored = self
            .target
            .restored_from(&new.name)
            .await
            .map_err(|e| Stop::Other(format!("{}: {e}", new.name)))?;
        let from_it = restored.as_ref().is_some_and(|r| r.savepoint);
        ev.lock().expect("not poisoned").restored = Some(from_it);
        if !from_it {
            return Err(Stop::Other(format!(
                "the new job did not restore from savepoint {savepoint}"
            )));
        }
        self.stop(&new.name).await?;
        let after_restore = self.outputs(1).await?;

        // 3. The new SQL fresh on both halves.
        let outputs: Vec<String> = self
            .suite
            .tables
            .iter()
            .filter(|t| t.role == Role::Output)
            .map(|t| t.ut_name.clone())
            .collect();
        topics.reset(&outputs).await.map_err(other)?;
        let fresh = with(&plan.new, naming.upgrade("ref", table));
        self.add(&fresh.name);
        let st = self
            .target
            .create_statement(&fresh)
            .await
            .map_err(|e| Stop::Other(format!("the fresh run: {}: {e}", fresh.name)))?;
        if st.phase == Phase::Failed {
            return Err(Stop::Other(format!("the fresh run: {}", st.detail)));
        }
        let fresh_failed = |d: String| Stop::Other(format!("the fresh run failed: {d}"));
        self.consumed(
            &fresh.name,
            plan.halves.first_rows + plan.halves.second_rows,
            &fresh_failed,
        )
        .await?;
        self.stop(&fresh.name).await?;
        let reference = self.outputs(2).await?;
        let diff = differing(&after_restore, &reference);
        let mut e = ev.lock().expect("not poisoned");
        e.rows_differing = diff.len();
        e.differing_rows = diff.into_iter().take(MAX_DIFFERING).collect();
        e.outcome = if e.rows_differing == 0 {
            Outcome::SameResult
        } else {
            Outcome::DifferentResult
        };
        Ok(())
    }

    /// Deletes every statement created (cancelling live jobs), the test topics, the savepoints.
    async fn cleanup(&self, topics: &dyn Topics) -> Vec<String> {
        let mut errors = Vec::new();
        let grace = Duration::from_secs(60);
        let names = self.created.lock().expect("not poisoned").clone();
        for n in names.iter().rev() {
            if let Err(g) = delete_within(self.target, n, grace).await {
                errors.push(format!("deleting {n}: {}", g.error));
                continue;
            }
            if let Err(e) = wait_until(self.target, n, grace, poll_backoff(self.opts.poll), |s| {
                s.is_none()
            })
            .await
            {
                errors.push(e.to_string());
            }
        }
        if let Err(e) = topics.remove(&self.suite.ut_names()).await {
            errors.push(e.to_string());
        }
        let savepoints = self.savepoints.lock().expect("not poisoned").clone();
        for sp in savepoints {
            if let Err(e) = self.target.dispose_savepoint(&sp).await {
                errors.push(e.to_string());
            }
        }
        errors
    }
}

/// Whether a restarting job's failure is its restore's (a cluster that restarts it forever never
/// reaches FAILED): Flink's `StateMigrationException`, or a savepoint whose state it cannot map or
/// restore.
fn is_restore_failure(detail: &str) -> bool {
    [
        "StateMigrationException",
        "Cannot map checkpoint/savepoint state",
        "Failed to restore",
        "restoreState",
    ]
    .iter()
    .any(|m| detail.contains(m))
}

/// The rows only one side has (as multisets): `restored only: …`, then `fresh only: …`.
pub fn differing(restored: &[String], fresh: &[String]) -> Vec<String> {
    let mut count: BTreeMap<&str, i64> = BTreeMap::new();
    for r in restored {
        *count.entry(r).or_default() += 1;
    }
    for r in fresh {
        *count.entry(r).or_default() -= 1;
    }
    let mut out = Vec::new();
    for (row, n) in &count {
        for _ in 0..n.max(&0).unsigned_abs() {
            out.push(format!("restored only: {row}"));
        }
    }
    for (row, n) in &count {
        for _ in 0..(-n).max(0) {
            out.push(format!("fresh only: {row}"));
        }
    }
    out
}

/// Runs `plan` on `target` (see module docs). Never fails: every problem is in the evidence, and
/// everything the run created is removed whatever happened.
pub async fn run(
    target: &dyn Target,
    topics: &dyn Topics,
    suite: &Suite,
    plan: &Plan,
    opts: &RunOptions,
    cancel: &Cancel,
) -> Evidence {
    let start = Instant::now();
    let r = Runner {
        target,
        suite,
        opts,
        deadline: start + opts.timeout,
        created: Mutex::new(Vec::new()),
        savepoints: Mutex::new(Vec::new()),
    };
    let mut first = Evidence::not_run("");
    first.outcome = Outcome::Inconclusive;
    first.why_not = None;
    first.case = Some(plan.case.clone());
    first.rows_first_half = plan.halves.first_rows;
    first.rows_second_half = plan.halves.second_rows;
    let ev = Mutex::new(first);
    let result = tokio::select! {
        x = r.work(topics, plan, &ev) => x,
        _ = cancel.cancelled() => Err(Stop::Other("interrupted".into())),
    };
    let cleanup = r.cleanup(topics).await;
    let mut ev = ev.into_inner().expect("not poisoned");
    match result {
        Ok(()) => {}
        Err(Stop::Restore(cause)) => {
            ev.outcome = Outcome::RestoreFailed;
            ev.restored = Some(false);
            ev.error = Some(crate::target::gateway::wire::deepest_cause(&cause));
        }
        Err(Stop::Other(why)) => {
            ev.outcome = Outcome::Inconclusive;
            ev.error = Some(crate::target::gateway::wire::deepest_cause(&why));
        }
    }
    ev.cleanup_errors = cleanup;
    ev.seconds = start.elapsed().as_secs_f64();
    ev
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_rows_are_cut_in_two_halves_the_first_rounded_up() {
        let ins = "INSERT INTO `o_ut` (`id`, `s`)\nVALUES\n  (1, 'a,b'),\n  (2, CAST('x' AS STRING)),\n  (3, 'c')".to_string();
        let h = halves(&[ins, "INSERT INTO p_ut VALUES (9, 'z');".into()]).unwrap();
        assert_eq!(
            h.first,
            [
                "INSERT INTO `o_ut` (`id`, `s`)\nVALUES\n  (1, 'a,b'),\n  (2, CAST('x' AS STRING))",
                "INSERT INTO p_ut VALUES (9, 'z');"
            ]
        );
        assert_eq!(
            h.second,
            ["INSERT INTO `o_ut` (`id`, `s`)\nVALUES\n  (3, 'c')"]
        );
        assert_eq!((h.first_rows, h.second_rows), (3, 1));
        assert_eq!(halves(&["INSERT INTO o_ut SELECT * FROM x".into()]), None);
    }

    fn suite(storage: Storage, inserts: &[&str]) -> Suite {
        Suite {
            table: "t".into(),
            product: "p".into(),
            definitions_file: "pipelines/t/tests/test_definitions.yaml".into(),
            suffix: super::super::Suffix::default(),
            storage,
            tables: Vec::new(),
            tested: Vec::new(),
            cases: vec![super::super::prepare::Case {
                name: "c1".into(),
                index: 1,
                inserts: inserts.iter().map(|s| s.to_string()).collect(),
                checks: Vec::new(),
            }],
        }
    }

    fn st(sql: &str) -> TestedStatement {
        TestedStatement {
            table: "t".into(),
            sql: sql.into(),
            properties: BTreeMap::new(),
        }
    }

    /// Why a suite cannot be run empirically, in the words the report gives.
    #[test]
    fn plans_say_why_the_empirical_run_cannot_take_place() {
        let kafka = Storage::Kafka {
            bootstrap: "b:1".into(),
        };
        let one = [st("INSERT INTO o_ut SELECT * FROM s_ut")];
        let two_rows = "INSERT INTO s_ut VALUES (1), (2)";
        let p = plan(&suite(kafka.clone(), &[two_rows]), &one, &one).unwrap();
        assert_eq!(
            (p.case.as_str(), p.halves.first_rows, p.halves.second_rows),
            ("c1", 1, 1)
        );
        assert_eq!(
            plan(&suite(Storage::Confluent, &[two_rows]), &one, &one).unwrap_err(),
            "the empirical run needs the SQL Gateway and its Kafka broker"
        );
        assert_eq!(
            plan(&suite(kafka.clone(), &[two_rows]), &[], &one).unwrap_err(),
            "the old SQL is not one INSERT or statement set (0 statements to run): no empirical run"
        );
        assert_eq!(
            plan(
                &suite(kafka.clone(), &["INSERT INTO s_ut SELECT 1"]),
                &one,
                &one
            )
            .unwrap_err(),
            "the inputs of test case c1 are not INSERT … VALUES rows: no empirical run"
        );
        assert_eq!(
            plan(&suite(kafka, &["INSERT INTO s_ut VALUES (1)"]), &one, &one).unwrap_err(),
            "test case c1 has 1 input row(s): too few to split in two halves: no empirical run"
        );
    }

    #[test]
    fn a_restarting_job_failed_its_restore_only_when_flink_says_so() {
        assert!(is_restore_failure(
            "StateMigrationException: The new state serializer … must not be incompatible with the old state serializer"
        ));
        assert!(!is_restore_failure(
            "TimeoutException: Timed out waiting for a node assignment"
        ));
    }

    #[test]
    fn differing_rows_are_a_multiset_difference() {
        let a = ["t: {\"k\":1}".to_string(), "t: {\"k\":2}".into()];
        let b = ["t: {\"k\":1}".to_string(), "t: {\"k\":3}".into()];
        assert_eq!(
            differing(&a, &b),
            ["restored only: t: {\"k\":2}", "fresh only: t: {\"k\":3}"]
        );
        assert!(differing(&a, &a).is_empty());
    }
}
