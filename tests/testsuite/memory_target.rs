//! An in-memory [`Target`] for executor tests: statements in a map, phases advanced by a script (one
//! transition per read, like the Confluent fake), every call logged in order with what it answered,
//! and faults injected per call. No HTTP and no sockets, so tests run on tokio's paused clock: waits
//! and retries cost no real time and nothing depends on the machine's speed. Wire-level behaviour
//! (HTTP statuses, headers, redirects, dropped connections) stays with `fake_confluent`.
//!
//! Lifecycle: a created DDL goes PENDING → COMPLETED, a DML PENDING → RUNNING (a per-name script
//! overrides); a stop goes STOPPING → STOPPED, a resume PENDING → RUNNING; a delete reads DELETING
//! once, then absent; a statement carrying offsets over (`sql.tables.initial-offset-from`) stays
//! PENDING until the old one is STOPPED or gone.

#![allow(dead_code)]

use async_trait::async_trait;
use flinkpipe::target::{
    Phase, Restore, Restored, StatementKind, StatementSpec, StatementState, Target, TargetError,
};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

/// One call, as the target saw and answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    List,
    /// A read, with the phase it answered (`None`: absent, or an error).
    Get(String, Option<Phase>),
    Create(String),
    Stop(String),
    Resume(String),
    Delete(String),
    Validate(String),
    /// A start from a savepoint: (name, savepoint, restore).
    StartFrom(String, String, Restore),
}

/// Which calls a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Create,
    Stop,
    Resume,
    Delete,
    Validate,
    Any,
}

/// An error for the next `times` matching calls.
#[derive(Debug, Clone)]
struct Fault {
    op: Op,
    name: Option<String>,
    error: TargetError,
    times: usize,
    /// The call is carried out before the error is returned (an answer lost on the way back).
    processed: bool,
}

#[derive(Debug, Clone)]
struct Stmt {
    state: StatementState,
    /// Transitions still to come, one per read.
    next: VecDeque<(Phase, String)>,
    /// Reads left before a DELETING statement is gone.
    deleting_reads: u32,
}

#[derive(Default)]
struct State {
    statements: BTreeMap<String, Stmt>,
    /// The compiled plan (`COMPILE PLAN` JSON) the target's planner gives each SQL text (savepoint
    /// targets).
    plans: BTreeMap<String, serde_json::Value>,
    /// The SQL texts compiled, in order.
    compiled: Vec<String>,
    /// Per-name transitions after a create (instead of → COMPLETED / → RUNNING).
    scripts: BTreeMap<String, Vec<(Phase, String)>>,
    faults: Vec<Fault>,
    log: Vec<Call>,
    /// Statements actually created, in order.
    created: Vec<String>,
    /// (name, SQL) of every statement actually created, in order.
    created_sql: Vec<(String, String)>,
    /// Dry runs answer "not checked" for DML (as the SQL Gateway for a text EXPLAIN does not take).
    cannot_check: bool,
    /// Per name: reads after its create that answer "absent" (a job the JobManager lists late).
    unlisted_reads: BTreeMap<String, u32>,
    /// Per name: the savepoint its last stop took (savepoint targets).
    savepoints: BTreeMap<String, String>,
    /// Per name: the savepoint its current job restored from.
    restored: BTreeMap<String, String>,
    /// Starts from a savepoint whose SQL contains the text: their job goes FAILED with the detail.
    failing_starts: Vec<(String, String)>,
    /// Starts from a savepoint whose SQL contains the text: their job runs but restores nothing.
    unrestored_starts: Vec<String>,
    /// SQL of every start from a savepoint, in order.
    started_sql: Vec<String>,
}

/// The in-memory target.
pub struct MemoryTarget {
    state: Mutex<State>,
    carry_over: bool,
    savepoints: bool,
}

/// A retryable HTTP error, as a target reports a 429 or a 5xx.
pub fn http(status: u16, retry_after_secs: Option<u64>) -> TargetError {
    TargetError::Http {
        method: "GET".into(),
        path: "/statements/x".into(),
        status,
        message: "(empty body)".into(),
        kind: if matches!(status, 429 | 500 | 502 | 503 | 504) {
            flinkpipe::target::ErrorKind::Retryable
        } else {
            flinkpipe::target::ErrorKind::Permanent
        },
        retry_after: retry_after_secs.map(std::time::Duration::from_secs),
    }
}

impl MemoryTarget {
    /// An empty target that can carry offsets over (as Confluent can).
    pub fn new() -> Self {
        MemoryTarget {
            state: Mutex::new(State::default()),
            carry_over: true,
            savepoints: false,
        }
    }

    /// An empty target that stops with savepoints and starts new SQL from them, without carry-over
    /// (as the SQL Gateway): a stop records a savepoint `sp-<name>-<n>`.
    pub fn with_savepoints() -> Self {
        MemoryTarget {
            carry_over: false,
            savepoints: true,
            ..Self::new()
        }
    }

    /// Jobs started from a savepoint with SQL containing `sql` go PENDING → FAILED with `detail`.
    pub fn fail_starts_of(&self, sql: &str, detail: &str) {
        self.st()
            .failing_starts
            .push((sql.to_string(), detail.to_string()));
    }

    /// The planner compiles `sql` into `plan` (a savepoint target: as the SQL Gateway's `COMPILE
    /// PLAN`); other texts cannot be compiled.
    pub fn compiles(&self, sql: &str, plan: serde_json::Value) {
        self.st().plans.insert(sql.to_string(), plan);
    }

    /// The SQL texts the planner was asked to compile, in order.
    pub fn compiled(&self) -> Vec<String> {
        self.st().compiled.clone()
    }

    /// Jobs started from a savepoint with SQL containing `sql` run but restore no state.
    pub fn restore_nothing_for(&self, sql: &str) {
        self.st().unrestored_starts.push(sql.to_string());
    }

    /// SQL of every start from a savepoint, in order.
    pub fn started_sql(&self) -> Vec<String> {
        self.st().started_sql.clone()
    }

    /// An empty target without carry-over (as the SQL Gateway).
    pub fn without_carry_over() -> Self {
        MemoryTarget {
            carry_over: false,
            ..Self::new()
        }
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Sets the properties of a seeded statement.
    pub fn set_properties(&self, name: &str, properties: &[(&str, &str)]) {
        let mut st = self.st();
        let s = st.statements.get_mut(name).expect("seeded");
        s.state.properties = properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    }

    /// Sets the compute pool a seeded statement runs in.
    pub fn set_pool(&self, name: &str, pool: &str) {
        let mut st = self.st();
        let s = st.statements.get_mut(name).expect("seeded");
        s.state.meta.compute_pool_id = Some(pool.to_string());
    }

    /// From now on, dry runs of DML answer "not checked" (the target has no way to check them).
    pub fn cannot_check_dml(&self) {
        self.st().cannot_check = true;
    }

    /// A statement deployed earlier, in `phase`, with `then` transitions still to come (one per read).
    pub fn seed(&self, name: &str, sql: &str, phase: Phase, then: &[Phase]) {
        self.st().statements.insert(
            name.to_string(),
            Stmt {
                state: StatementState {
                    name: name.to_string(),
                    stopped: phase == Phase::Stopped,
                    meta: Default::default(),
                    phase,
                    detail: String::new(),
                    sql: sql.to_string(),
                    properties: BTreeMap::new(),
                },
                next: then.iter().map(|p| (p.clone(), String::new())).collect(),
                deleting_reads: 0,
            },
        );
    }

    /// The transitions a statement created later goes through (instead of → COMPLETED / → RUNNING).
    pub fn script(&self, name: &str, phases: &[(Phase, &str)]) {
        self.st().scripts.insert(
            name.to_string(),
            phases
                .iter()
                .map(|(p, d)| (p.clone(), d.to_string()))
                .collect(),
        );
    }

    /// `error` for the next `times` calls of `op` (on `name`, or any statement).
    pub fn fail(&self, op: Op, name: Option<&str>, error: TargetError, times: usize) {
        self.st().faults.push(Fault {
            op,
            name: name.map(str::to_string),
            error,
            times,
            processed: false,
        });
    }

    /// The next `times` creates of `name` are carried out, but answer a transport error (the client
    /// cannot know the outcome).
    pub fn lose_create_answers(&self, name: &str, times: usize) {
        self.st().faults.push(Fault {
            op: Op::Create,
            name: Some(name.to_string()),
            error: TargetError::Transport {
                method: "POST".into(),
                path: "/statements".into(),
                message: "connection reset".into(),
            },
            times,
            processed: true,
        });
    }

    /// Every call so far, in order.
    /// The next `reads` reads of `name` after it is created answer "absent", as a Flink JobManager
    /// does for a job it has not registered yet.
    pub fn listed_late(&self, name: &str, reads: u32) {
        self.st().unlisted_reads.insert(name.to_string(), reads);
    }

    pub fn log(&self) -> Vec<Call> {
        self.st().log.clone()
    }

    /// Names of the statements actually created, in order (a create that failed before it was carried
    /// out is not one).
    pub fn created(&self) -> Vec<String> {
        self.st().created.clone()
    }

    /// (name, SQL) of the statements actually created, in order.
    pub fn created_sql(&self) -> Vec<(String, String)> {
        self.st().created_sql.clone()
    }

    /// A statement's state now, without a read (no transition applied).
    pub fn state(&self, name: &str) -> Option<StatementState> {
        self.st().statements.get(name).map(|s| s.state.clone())
    }

    /// Names of every create call, in order (failed ones included).
    pub fn creates(&self) -> Vec<String> {
        self.log()
            .into_iter()
            .filter_map(|c| match c {
                Call::Create(n) => Some(n),
                _ => None,
            })
            .collect()
    }

    /// Names deleted, in order.
    pub fn deletes(&self) -> Vec<String> {
        self.log()
            .into_iter()
            .filter_map(|c| match c {
                Call::Delete(n) => Some(n),
                _ => None,
            })
            .collect()
    }

    /// The phase of a statement now (`None`: absent).
    pub fn phase(&self, name: &str) -> Option<Phase> {
        self.st()
            .statements
            .get(name)
            .map(|s| s.state.phase.clone())
    }

    /// Position in the log of the first call matching `f`.
    pub fn first(&self, f: impl Fn(&Call) -> bool) -> Option<usize> {
        self.log().iter().position(f)
    }

    /// Position in the log of the last call matching `f`.
    pub fn last(&self, f: impl Fn(&Call) -> bool) -> Option<usize> {
        self.log().iter().rposition(f)
    }

    /// The injected error for this call, if any (consumed), and whether the call is carried out first.
    fn fault_of(st: &mut State, op: Op, name: &str) -> Option<(TargetError, bool)> {
        let i = st.faults.iter().position(|f| {
            f.times > 0
                && (f.op == op || f.op == Op::Any)
                && f.name.as_deref().is_none_or(|n| n == name)
        })?;
        st.faults[i].times -= 1;
        let e = (st.faults[i].error.clone(), st.faults[i].processed);
        if st.faults[i].times == 0 {
            st.faults.remove(i);
        }
        Some(e)
    }

    /// The injected error for a call that is not carried out, if any.
    fn fault(st: &mut State, op: Op, name: &str) -> Option<TargetError> {
        Self::fault_of(st, op, name).map(|(e, _)| e)
    }

    /// Applies one pending transition of `name` (a carry-over waits for its old statement).
    fn advance(st: &mut State, name: &str) {
        let from = st.statements.get(name).and_then(|s| {
            s.state
                .properties
                .get("sql.tables.initial-offset-from")
                .cloned()
        });
        // The old statement stops meanwhile, whether or not it is read (as on the service): a read
        // of the waiting one applies one pending transition of its old one too.
        if let Some(o) = &from
            && st
                .statements
                .get(name)
                .is_some_and(|s| s.state.phase == Phase::Pending)
            && let Some(old) = st.statements.get_mut(o)
            && old.state.stopped
            && let Some((p, d)) = old.next.pop_front()
        {
            old.state.phase = p;
            old.state.detail = d;
        }
        let old_stopped = from.as_ref().is_none_or(|o| {
            st.statements
                .get(o)
                .is_none_or(|s| s.state.phase == Phase::Stopped)
        });
        let Some(s) = st.statements.get_mut(name) else {
            return;
        };
        if s.state.phase == Phase::Pending && !old_stopped {
            return;
        }
        if let Some((p, d)) = s.next.pop_front() {
            s.state.phase = p;
            s.state.detail = d;
        }
    }
}

#[async_trait]
impl Target for MemoryTarget {
    fn describe(&self) -> String {
        "in-memory target".into()
    }

    async fn list_statements(&self) -> Result<Vec<StatementState>, TargetError> {
        let mut st = self.st();
        st.log.push(Call::List);
        Ok(st.statements.values().map(|s| s.state.clone()).collect())
    }

    async fn get_statement(&self, name: &str) -> Result<Option<StatementState>, TargetError> {
        let mut st = self.st();
        if let Some(e) = Self::fault(&mut st, Op::Get, name) {
            st.log.push(Call::Get(name.to_string(), None));
            return Err(e);
        }
        let gone = match st.statements.get_mut(name) {
            Some(s) if s.state.phase == Phase::Deleting => {
                if s.deleting_reads == 0 {
                    true
                } else {
                    s.deleting_reads -= 1;
                    false
                }
            }
            _ => false,
        };
        if gone {
            st.statements.remove(name);
        }
        if st.statements.contains_key(name)
            && let Some(left) = st.unlisted_reads.get_mut(name)
            && *left > 0
        {
            *left -= 1;
            st.log.push(Call::Get(name.to_string(), None));
            return Ok(None);
        }
        Self::advance(&mut st, name);
        let s = st.statements.get(name).map(|s| s.state.clone());
        st.log.push(Call::Get(
            name.to_string(),
            s.as_ref().map(|s| s.phase.clone()),
        ));
        Ok(s)
    }

    async fn create_statement(&self, spec: &StatementSpec) -> Result<StatementState, TargetError> {
        let mut st = self.st();
        st.log.push(Call::Create(spec.name.clone()));
        let fault = Self::fault_of(&mut st, Op::Create, &spec.name);
        let lost = match fault {
            Some((e, false)) => return Err(e),
            Some((e, true)) => Some(e),
            None => None,
        };
        if st.statements.contains_key(&spec.name) {
            return Err(TargetError::AlreadyExists(spec.name.clone()));
        }
        let next: VecDeque<(Phase, String)> = match st.scripts.get(&spec.name) {
            Some(s) => s.iter().cloned().collect(),
            None => match spec.kind {
                StatementKind::Ddl => [(Phase::Completed, String::new())].into(),
                StatementKind::Dml => [(Phase::Running, String::new())].into(),
            },
        };
        let state = StatementState {
            name: spec.name.clone(),
            phase: Phase::Pending,
            detail: String::new(),
            sql: spec.sql.clone(),
            properties: spec.properties.clone(),
            stopped: false,
            meta: flinkpipe::target::StatementMeta {
                compute_pool_id: spec.compute_pool.clone(),
                ..Default::default()
            },
        };
        st.statements.insert(
            spec.name.clone(),
            Stmt {
                state: state.clone(),
                next,
                deleting_reads: 0,
            },
        );
        st.created.push(spec.name.clone());
        st.created_sql.push((spec.name.clone(), spec.sql.clone()));
        match lost {
            Some(e) => Err(e),
            None => Ok(state),
        }
    }

    async fn stop_statement(&self, name: &str) -> Result<(), TargetError> {
        let mut st = self.st();
        st.log.push(Call::Stop(name.to_string()));
        if let Some(e) = Self::fault(&mut st, Op::Stop, name) {
            return Err(e);
        }
        let s = st
            .statements
            .get_mut(name)
            .ok_or_else(|| TargetError::NotFound(name.to_string()))?;
        s.state.stopped = true;
        if self.savepoints {
            let n = st.savepoints.len() + 1;
            st.savepoints
                .insert(name.to_string(), format!("sp-{name}-{n}"));
        }
        let s = st.statements.get_mut(name).expect("present");
        if matches!(
            s.state.phase,
            Phase::Pending | Phase::Running | Phase::Degraded
        ) {
            s.next = [
                (Phase::Stopping, String::new()),
                (Phase::Stopped, String::new()),
            ]
            .into();
        }
        Ok(())
    }

    async fn resume_statement(&self, name: &str) -> Result<(), TargetError> {
        let mut st = self.st();
        st.log.push(Call::Resume(name.to_string()));
        if let Some(e) = Self::fault(&mut st, Op::Resume, name) {
            return Err(e);
        }
        let s = st
            .statements
            .get_mut(name)
            .ok_or_else(|| TargetError::NotFound(name.to_string()))?;
        if s.state.phase == Phase::Stopped {
            s.state.stopped = false;
            s.next = [
                (Phase::Pending, String::new()),
                (Phase::Running, String::new()),
            ]
            .into();
        }
        Ok(())
    }

    async fn delete_statement(&self, name: &str) -> Result<bool, TargetError> {
        let mut st = self.st();
        st.log.push(Call::Delete(name.to_string()));
        if let Some(e) = Self::fault(&mut st, Op::Delete, name) {
            return Err(e);
        }
        match st.statements.get_mut(name) {
            None => Ok(false),
            Some(s) => {
                s.state.phase = Phase::Deleting;
                s.next.clear();
                s.deleting_reads = 1;
                Ok(true)
            }
        }
    }

    async fn validate_statement(&self, spec: &StatementSpec) -> Result<(), TargetError> {
        let mut st = self.st();
        st.log.push(Call::Validate(spec.name.clone()));
        match Self::fault(&mut st, Op::Validate, &spec.name) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    async fn dry_run_statement(
        &self,
        spec: &StatementSpec,
    ) -> Result<flinkpipe::target::Checked, TargetError> {
        if spec.kind == StatementKind::Dml && self.st().cannot_check {
            self.st().log.push(Call::Validate(spec.name.clone()));
            return Ok(flinkpipe::target::Checked::NotChecked(
                "this target cannot check it".into(),
            ));
        }
        self.validate_statement(spec)
            .await
            .map(|()| flinkpipe::target::Checked::Valid)
    }

    async fn check_compute_pool(&self) -> Result<(), TargetError> {
        Ok(())
    }

    fn supports_carry_over(&self) -> bool {
        self.carry_over
    }

    fn supports_savepoint_restart(&self) -> bool {
        self.savepoints
    }

    async fn compiled_plan(
        &self,
        spec: &StatementSpec,
    ) -> Result<Option<serde_json::Value>, TargetError> {
        if !self.savepoints {
            return Ok(None);
        }
        let mut st = self.st();
        st.compiled.push(spec.sql.clone());
        match st.plans.get(&spec.sql) {
            Some(p) => Ok(Some(p.clone())),
            None => Err(TargetError::Invalid(format!(
                "cannot compile: {}",
                spec.sql
            ))),
        }
    }

    async fn stop_savepoint(&self, name: &str) -> Result<Option<String>, TargetError> {
        let st = self.st();
        match st.statements.get(name) {
            Some(s) if s.state.phase == Phase::Stopped => Ok(st.savepoints.get(name).cloned()),
            Some(_) => Ok(None),
            None => Err(TargetError::NotFound(name.to_string())),
        }
    }

    async fn start_from_savepoint(
        &self,
        spec: &StatementSpec,
        savepoint: &str,
        restore: Restore,
    ) -> Result<StatementState, TargetError> {
        let mut st = self.st();
        st.log.push(Call::StartFrom(
            spec.name.clone(),
            savepoint.to_string(),
            restore,
        ));
        if st.statements.get(&spec.name).is_some_and(|s| {
            matches!(
                s.state.phase,
                Phase::Pending | Phase::Running | Phase::Degraded
            )
        }) {
            return Err(TargetError::AlreadyExists(spec.name.clone()));
        }
        let next: VecDeque<(Phase, String)> = match st
            .failing_starts
            .iter()
            .find(|(k, _)| spec.sql.contains(k.as_str()))
        {
            Some((_, d)) => [(Phase::Failed, d.clone())].into(),
            None => [(Phase::Running, String::new())].into(),
        };
        if st
            .unrestored_starts
            .iter()
            .any(|k| spec.sql.contains(k.as_str()))
        {
            st.restored.remove(&spec.name);
        } else {
            st.restored.insert(spec.name.clone(), savepoint.to_string());
        }
        let state = StatementState {
            name: spec.name.clone(),
            phase: Phase::Pending,
            detail: String::new(),
            sql: spec.sql.clone(),
            properties: spec.properties.clone(),
            stopped: false,
            meta: Default::default(),
        };
        st.statements.insert(
            spec.name.clone(),
            Stmt {
                state: state.clone(),
                next,
                deleting_reads: 0,
            },
        );
        st.started_sql.push(spec.sql.clone());
        Ok(state)
    }

    async fn restored_from(&self, name: &str) -> Result<Option<Restored>, TargetError> {
        Ok(self.st().restored.get(name).map(|p| Restored {
            job: format!("job-{name}"),
            path: p.clone(),
            savepoint: true,
        }))
    }
}
