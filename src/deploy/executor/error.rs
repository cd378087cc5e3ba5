//! Why a statement step failed: a typed value carrying the statement and the cause; its text is the
//! node's failure reason in the report (scrubbed of secrets there).

use crate::target::Scrubber;
use crate::target::retry::RetryLog;
use crate::target::{Phase, TargetError};
use std::time::Duration;

/// A failed statement step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// Reading the statement failed.
    #[error("{statement}: {source}")]
    Read {
        /// The statement.
        statement: String,
        /// The target's error.
        source: TargetError,
    },
    /// A stop, resume or delete request failed.
    #[error("{source}")]
    Request {
        /// The statement.
        statement: String,
        /// The target's error (its text names the request and path).
        source: TargetError,
    },
    /// The POST failed for good.
    #[error("creating {statement}: {source}")]
    Create {
        /// The statement.
        statement: String,
        /// The target's error.
        source: TargetError,
    },
    /// Reading the statement back after a conflict or an unknown outcome failed.
    #[error("reading {statement}: {source}")]
    ReadBack {
        /// The statement.
        statement: String,
        /// The target's error.
        source: TargetError,
    },
    /// A 409 kept coming while the name read as absent (it was being deleted) until the deadline.
    #[error("{statement}: name still taken after {attempts} attempts")]
    NameTaken {
        /// The statement.
        statement: String,
        /// POSTs made.
        attempts: u32,
    },
    /// The target's planner rejects the new text of a statement about to replace a live one.
    #[error(
        "{statement}: the new SQL does not validate, so the running statement was left alone: {cause}"
    )]
    Invalid {
        /// The statement.
        statement: String,
        /// The planner's cause.
        cause: String,
    },
    /// The new text could not be checked, so the live statement was not replaced.
    #[error(
        "{statement}: could not validate the new SQL, so the running statement was left alone: {source}"
    )]
    Unvalidated {
        /// The statement.
        statement: String,
        /// The target's error.
        source: TargetError,
    },
    /// The target has no way to check the new text of a job about to replace a running one, so the
    /// running one was kept: replacing it unchecked could take it down for good.
    #[error(
        "{statement}: the new SQL cannot be checked on this target, so the running statement was left alone ({why}); stop or delete it yourself to replace it"
    )]
    Unchecked {
        /// The statement.
        statement: String,
        /// Why the target cannot check it.
        why: String,
    },
    /// The changed DDL of a table to drop and recreate does not validate: nothing was dropped.
    #[error("{statement}: the new DDL does not validate, so the table was not dropped: {cause}")]
    InvalidDdl {
        /// The statement.
        statement: String,
        /// The server's cause.
        cause: String,
    },
    /// The DDL of a table to drop and recreate creates no table the SQL front end can name.
    #[error(
        "{statement}: cannot tell which table the new DDL creates, so nothing was dropped (only CREATE TABLE and CREATE VIEW are dropped and recreated)"
    )]
    NothingToDrop {
        /// The statement.
        statement: String,
    },
    /// The statement that should take a carry-over handover is not live (or was replaced by
    /// someone), so the running statement was not stopped.
    #[error(
        "{statement}: the carry-over statement {successor} is {}{}, so {statement} was not stopped",
        crate::plan::status::phase_or_absent(phase.as_ref()),
        if detail.is_empty() { String::new() } else { format!(" ({detail})") }
    )]
    SuccessorNotLive {
        /// The statement being replaced.
        statement: String,
        /// The statement that should take over.
        successor: String,
        /// Its phase (`None`: absent).
        phase: Option<Phase>,
        /// Its `status.detail`.
        detail: String,
    },
    /// A leftover carry-over statement cannot be replaced because the statement it would carry
    /// offsets from is gone.
    #[error(
        "{statement}: exists (phase {phase}) with other SQL, properties or pool than the files, and {from} it would carry offsets from is gone; left alone: delete it and deploy again"
    )]
    StaleSuccessor {
        /// The statement.
        statement: String,
        /// Its phase.
        phase: Phase,
        /// The statement it carried offsets from.
        from: String,
    },
    /// The statement runs in another compute pool and the plan does not restart it.
    #[error(
        "statement {statement} runs in compute pool {from} but the plan gives it {to}; the plan does not restart it, so it was left alone: restart the table (--table-name) to move it"
    )]
    PoolChanged {
        /// The statement.
        statement: String,
        /// Its pool.
        from: String,
        /// The plan's pool.
        to: String,
    },
    /// A deleted statement did not go away in time.
    #[error("{statement}: still present {}s after the delete request", after.as_secs())]
    StillPresent {
        /// The statement.
        statement: String,
        /// How long it was waited for.
        after: Duration,
    },
    /// The statement vanished while it was waited for.
    #[error("{statement}: disappeared while waiting (deleted by someone else?)")]
    Disappeared {
        /// The statement.
        statement: String,
    },
    /// The statement reached FAILED or FAILING.
    #[error(
        "{statement}: {phase}: {}",
        if detail.is_empty() { "no detail given" } else { detail.as_str() }
    )]
    Failed {
        /// The statement.
        statement: String,
        /// FAILED or FAILING.
        phase: Phase,
        /// `status.detail`.
        detail: String,
    },
    /// A statement the plan kept because it ran (RUNNING, PENDING or COMPLETED when the plan read it)
    /// reads otherwise when its children are about to start (STOPPED, absent, …): they are not
    /// started on it. (FAILED and FAILING are [`StepError::Failed`].)
    #[error(
        "{statement}: {} when its children were about to start, although the plan kept it as running: its children are not started; plan again",
        .phase.as_ref().map_or("absent".to_string(), |p| format!("phase {p}"))
    )]
    NoLongerRunning {
        /// The statement.
        statement: String,
        /// The phase read (`None`: absent).
        phase: Option<Phase>,
    },
    /// DEGRADED for longer than the grace period.
    #[error("{statement}: DEGRADED for more than {grace:.0?}: {detail}")]
    Degraded {
        /// The statement.
        statement: String,
        /// The grace period.
        grace: Duration,
        /// `status.detail`.
        detail: String,
    },
    /// A requested stop ended the wait for another phase.
    #[error("{statement}: STOPPED while waiting for {goal}")]
    StoppedWhileWaiting {
        /// The statement.
        statement: String,
        /// The phase waited for.
        goal: Phase,
    },
    /// The goal phase was not reached within the statement timeout.
    #[error(
        "{statement}: timed out after {after:.0?} in phase {phase}{}",
        if detail.is_empty() { String::new() } else { format!(": {detail}") }
    )]
    TimedOut {
        /// The statement.
        statement: String,
        /// The timeout.
        after: Duration,
        /// The last phase seen.
        phase: Phase,
        /// `status.detail` at the end.
        detail: String,
    },
    /// Still PENDING at the statement timeout because its compute pool has no CFU left
    /// (`POOL_EXHAUSTED`): not a generic timeout, the pool is full.
    #[error(
        "{statement}: compute pool {} is exhausted (POOL_EXHAUSTED): still PENDING after {after:.0?}, waiting for a free CFU; free capacity in the pool, raise its max CFU, or give the table another pool (flinkpipe.compute_pools), then deploy again",
        pool.as_deref().unwrap_or("(the environment's default pool)")
    )]
    PoolExhausted {
        /// The statement.
        statement: String,
        /// The statement timeout.
        after: Duration,
        /// Its pool (`spec.compute_pool_id`), when the target says.
        pool: Option<String>,
    },
    /// Transient errors (429, 5xx, no answer) lasted until the statement timeout.
    #[error("{statement}: {what} kept failing for {after:.0?}, {log}; last error: {source}")]
    GaveUp {
        /// The statement.
        statement: String,
        /// The call (`GET`, `stop`, `create`, …).
        what: String,
        /// The statement timeout.
        after: Duration,
        /// What was retried.
        log: RetryLog,
        /// The last error.
        source: TargetError,
    },
    /// A statement of the target's name exists that does not carry offsets over from the temporary
    /// statement: someone else's, left alone.
    #[error("{statement}: exists (phase {phase}) without carrying over from {temp}; left alone")]
    HandoverConflict {
        /// The statement.
        statement: String,
        /// Its phase.
        phase: Phase,
        /// The temporary statement of the handover.
        temp: String,
    },
    /// The table definition changed; running it needs `DROP TABLE`.
    #[error(
        "statement {statement} exists with different SQL; the table definition changed and would need DROP TABLE (data loss): rerun with --allow-drop on a restart, or version the table"
    )]
    DdlChanged {
        /// The statement.
        statement: String,
    },
    /// A stateful statement with new SQL would lose its state if recreated.
    #[error(
        "statement {statement} keeps state and its SQL changed ({verdict} by the offline reading): recreating it would start it from nothing and lose that state, so it was left as it is; deploy a new version beside it (`pipeline blue-green`), or rerun with --allow-state-loss {table} to accept the loss"
    )]
    StateLoss {
        /// The statement.
        statement: String,
        /// Its table.
        table: String,
        verdict: crate::changes::upgrade::Verdict,
    },
    /// The statement was stopped for a restart from its savepoint, but its job has no stop savepoint.
    #[error(
        "{statement}: stopped, but its job has no stop savepoint to start the new SQL from; nothing was started (deploy again to restart it, or --allow-state-loss {statement} to start it from its sources)"
    )]
    NoSavepoint {
        /// The statement.
        statement: String,
    },
    /// The new SQL did not start from the old job's savepoint (its job failed, or did not restore
    /// from that savepoint); the old SQL was started again from the same savepoint (`rolled_back`),
    /// or could not be and the message says where the state is.
    #[error(
        "{statement}: the new SQL did not start from savepoint {savepoint}: {cause}; {}",
        match rollback {
            None => "the old SQL runs again from that savepoint, nothing lost (fix the SQL, or version the table with `pipeline blue-green`)".to_string(),
            Some(e) => format!("starting the old SQL again from it failed too ({e}): the state is kept in that savepoint (start a job from it with execution.state-recovery.path)"),
        }
    )]
    UpgradeFailed {
        /// The statement.
        statement: String,
        /// The savepoint of the old job.
        savepoint: String,
        /// Why the new SQL did not take over.
        cause: String,
        /// `None`: the old SQL runs again from the savepoint; else why it could not be started.
        rollback: Option<String>,
    },
    /// The statement exists with different SQL and the plan does not restart it.
    #[error(
        "statement {statement} exists with different SQL (phase {phase}); the plan does not restart it, so it was left alone"
    )]
    SqlChanged {
        /// The statement.
        statement: String,
        /// Its phase.
        phase: Phase,
    },
    /// Another client created the statement with different SQL while this one was creating it.
    #[error("statement {statement} appeared with different SQL while creating it")]
    AppearedDifferent {
        /// The statement.
        statement: String,
    },
}

/// Why a node failed ([`super::Outcome::Failed`]). Tests and callers match on the variant; its one
/// [`Display`](std::fmt::Display) is the reason the report, the journal and the CLI print, and it
/// serialises as that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// One of its statements failed.
    Step {
        /// What went wrong, typed.
        error: Box<StepError>,
        /// `error`'s text with secrets masked (the deploy's [`Scrubber`]): what is shown.
        reason: String,
    },
    /// It never became ready: its parents in the plan form a cycle.
    Cycle,
}

impl StepError {
    /// The target's error behind this failure, when a target call failed (a read, a request, a
    /// create, a validation or a retried call that gave up).
    pub fn target_error(&self) -> Option<&TargetError> {
        match self {
            StepError::Read { source, .. }
            | StepError::Request { source, .. }
            | StepError::Create { source, .. }
            | StepError::ReadBack { source, .. }
            | StepError::Unvalidated { source, .. }
            | StepError::GaveUp { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl Failure {
    /// The failure of a statement step, its text masked with `scrubber`.
    pub fn step(error: StepError, scrubber: &Scrubber) -> Self {
        let reason = scrubber.scrub(&error.to_string());
        Failure::Step {
            error: Box::new(error),
            reason,
        }
    }

    /// The statement step's error, `None` for a [`Failure::Cycle`].
    pub fn step_error(&self) -> Option<&StepError> {
        match self {
            Failure::Step { error, .. } => Some(error),
            Failure::Cycle => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Step { reason, .. } => f.write_str(reason),
            Failure::Cycle => f.write_str("never became ready: its parents form a cycle"),
        }
    }
}

impl serde::Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
