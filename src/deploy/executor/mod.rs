//! The executor: runs the deploy nodes of a plan against a [`Target`].
//!
//! Three parts, each testable alone:
//! - `schedule`: a ready queue, not a wave barrier: a node starts as soon as every parent in the
//!   plan is done (skipped parents count as done), up to `max_parallel` nodes at once, so a slow branch
//!   never holds back an independent one. Inside a node, statements run in order (DDL, then DML).
//! - [`decide`]: per statement, a pure decision ([`decide::decide`] → [`StepPlan`]) from what the
//!   target says about the statement, the step, the node and the options; unit-tested without HTTP.
//! - `effects`: carrying a decision out against the target: create, wait, stop/resume, delete,
//!   carry-over handovers, drops.
//!
//! Per statement (phases and lifecycle:
//! <https://docs.confluent.io/cloud/current/flink/concepts/statements.html>;
//! API: <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>):
//! - **GET before create**: absent → POST; present with the same (normalised) SQL → adopt it and wait;
//!   present with different SQL → fail "exists with different SQL" unless the plan restarts the table.
//!   A 409 on POST, or a POST whose outcome is unknown (connection dropped, 5xx), leads back to the GET:
//!   nothing is ever created twice, nothing is deleted to "fix" a conflict (shift_left 0.1.52
//!   deleted and recreated on a 409).
//! - **Restart** (plan action): a stateless DML whose SQL did not change is stopped and resumed in place
//!   (Confluent resumes from the stopped statement's offsets: nothing is replayed, the name stays), or,
//!   when its properties changed, handed over with carry-over offsets ([`carry_temp_name`]); any other
//!   DML is deleted (wait for 404) and created again. A DDL statement whose SQL did not change is
//!   kept (the table is already defined that way); a changed DDL needs `DROP TABLE`, done only with
//!   `--allow-drop` (shift_left 0.1.52 dropped every table it redeployed).
//! - **Wait**: a DDL until COMPLETED, a DML until RUNNING (COMPLETED also counts: bounded inserts).
//!   FAILED/FAILING fail with `status.detail`; DEGRADED fails once it lasts longer than the grace period;
//!   every wait has a timeout (shift_left 0.1.52 could wait forever); polls back off
//!   ([`Backoff::POLL`]).
//! - **Failure**: a failed node's descendants are skipped with the reason; independent branches go on
//!   (shift_left 0.1.52 still deployed the descendants). **Cancellation** (Ctrl-C): no new node
//!   starts, running ones are abandoned at their
//!   next await (the journal stays whole: entries are written synchronously), and the report lists
//!   what was in flight.

pub mod decide;
mod effects;
pub mod error;
mod schedule;
pub mod verdict;

pub use decide::{Known, Refusal, StepPlan};
pub use error::{Failure, StepError};

use super::journal::{Journal, JournalState};
use super::progress::Progress;
use super::spec::DeployNode;
use crate::plan::Action;
use crate::target::retry::{Backoff, Limit, retry, seed_of};
use crate::target::secrets::Scrubber;
use crate::target::{Phase, StatementState, Target, TargetError};
use serde::Serialize;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Options of a deploy run.
#[derive(Debug, Clone)]
pub struct DeployOptions {
    /// Nodes running at once (≥ 1).
    pub max_parallel: usize,
    /// Longest wait for one statement to reach its goal phase (`--timeout`), and for one call to
    /// get past transient errors.
    pub statement_timeout: Duration,
    /// How long DEGRADED may last before it counts as a failure.
    pub degraded_grace: Duration,
    /// Poll spacing.
    pub poll: Backoff,
    /// Spacing of retries after a transient failure (429, 5xx, no answer or unknown outcome) of any
    /// call, creates included; they go on for as long as `statement_timeout` allows (its attempt
    /// count is not used).
    pub create_retry: Backoff,
    /// Allow `DROP` statements (and drops needed by changed DDL) on restarted tables.
    pub allow_drop: bool,
    /// Tables (or statement names) whose stateful DML may be restarted with new SQL although its
    /// state is lost (`--allow-state-loss`; `all`: every one). Without it such a restart is refused.
    pub allow_state_loss: Vec<String>,
    /// How long a statement may be absent from the target's answers after a wait began before it
    /// counts as deleted: a job just submitted is listed by the Flink JobManager (and a materialized
    /// table's refresh job found by its tags) only after a moment, longer on a loaded cluster.
    pub visibility_grace: Duration,
}

impl Default for DeployOptions {
    fn default() -> Self {
        DeployOptions {
            max_parallel: 4,
            statement_timeout: Duration::from_secs(600),
            degraded_grace: Duration::from_secs(60),
            poll: Backoff::POLL,
            create_retry: Backoff::HTTP,
            allow_drop: false,
            allow_state_loss: Vec::new(),
            visibility_grace: Duration::from_secs(30),
        }
    }
}

/// How a node ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum Outcome {
    /// Every statement reached its goal.
    Done,
    /// Not run: skipped by the plan, done by an earlier run (`--resume`), or a parent failed
    /// ([`Skip`]; serialised as its text).
    Skipped(Skip),
    /// A statement failed, timed out or was refused ([`Failure`]; serialised as its text).
    Failed(Failure),
    /// Ctrl-C arrived while it ran ([`Interruption`]; serialised as its text).
    Interrupted(Interruption),
    /// Ctrl-C arrived before it started.
    NotStarted,
}

/// Why a node was not run. [`Display`](std::fmt::Display) is the reason the report, the progress
/// lines and the CLI print, and it serialises as that text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// The plan skips it (running already, out of scope, excluded…): the plan's reason
    /// ([`crate::plan::PlanNode::reason`]).
    Plan(String),
    /// The interrupted run that `--resume` continues finished it (its journal says so), and the
    /// target shows its statements done.
    Journal,
    /// Its parent `parent` failed.
    ParentFailed {
        /// The failed parent's table.
        parent: String,
    },
    /// Its ancestor `ancestor` was skipped for a failure further up (`because`).
    AncestorNotDeployed {
        /// The skipped ancestor's table.
        ancestor: String,
        /// Why that ancestor was skipped.
        because: Box<Skip>,
    },
}

impl Skip {
    /// Whether this skip blocks the node's children: only a skip caused by a failure above does;
    /// a node the plan skips (running already, out of scope) or the journal finished does not,
    /// whatever its reason says.
    pub fn blocks_children(&self) -> bool {
        matches!(
            self,
            Skip::ParentFailed { .. } | Skip::AncestorNotDeployed { .. }
        )
    }
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::Plan(reason) => f.write_str(reason),
            Skip::Journal => f.write_str("done by the interrupted run (journal)"),
            Skip::ParentFailed { parent } => write!(f, "parent {parent} failed"),
            Skip::AncestorNotDeployed { ancestor, because } => {
                write!(f, "ancestor {ancestor} not deployed ({because})")
            }
        }
    }
}

impl serde::Serialize for Skip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where a node was when Ctrl-C arrived. [`Display`](std::fmt::Display) is the reason printed and
/// serialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// Its statements were being created or waited for: they may still be starting on the target.
    WhileRunning,
}

impl std::fmt::Display for Interruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interruption::WhileRunning => f.write_str(
                "was running when interrupted; its statements may still be starting on the target",
            ),
        }
    }
}

impl serde::Serialize for Interruption {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What the executor did with a statement, or where it stopped when it failed. Serialised as the
/// strings of the JSON report (`"created"`, `"carried over"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum StatementAction {
    /// Absent, so created (POST), then waited for.
    #[serde(rename = "created")]
    Created,
    /// Present with the same SQL (or created by an earlier attempt whose answer was lost): waited for.
    #[serde(rename = "adopted")]
    Adopted,
    /// A DDL of a restarted table whose SQL did not change: the table is already defined that way.
    #[serde(rename = "kept")]
    Kept,
    /// Stopped (if needed) and resumed in place: offsets carry over, the name stays.
    #[serde(rename = "resumed")]
    Resumed,
    /// Deleted (waited until gone) and created again.
    #[serde(rename = "recreated")]
    Recreated,
    /// Restarted with new properties through carry-over offsets (`<name>` → `<name>-co` → `<name>`).
    #[serde(rename = "carried over")]
    CarriedOver,
    /// Stopped with a savepoint and started with the new SQL from it, its state restored (SQL
    /// Gateway, a `state-compatible` change).
    #[serde(rename = "upgraded")]
    Upgraded,
    /// Stopped with a savepoint and started with the new SQL from its sources' offsets (SQL Gateway,
    /// a `stateless` change).
    #[serde(rename = "restarted from offsets")]
    RestartedFromOffsets,
    /// Failed while upgrading from a savepoint (the old SQL was started again from it, or the
    /// message says what is left).
    #[serde(rename = "upgrade")]
    Upgrade,
    /// The helper `DROP TABLE` of a changed DDL ran.
    #[serde(rename = "dropped")]
    Dropped,
    /// A `DROP` statement of the files, not run: drops need `--allow-drop` on a restart.
    #[serde(rename = "drop skipped")]
    DropSkipped,
    /// Left alone because running the step would lose data or replace a running statement.
    #[serde(rename = "refused")]
    Refused,
    /// A statement the plan keeps, waited for because it was still starting (PENDING).
    #[serde(rename = "awaited")]
    Awaited,
    /// Failed while reading the statement.
    #[serde(rename = "read")]
    Read,
    /// Failed while requesting a stop.
    #[serde(rename = "stop")]
    Stop,
    /// Failed while requesting a resume.
    #[serde(rename = "resume")]
    Resume,
    /// Failed while deleting.
    #[serde(rename = "delete")]
    Delete,
    /// Failed while waiting for a phase.
    #[serde(rename = "wait")]
    Wait,
    /// Failed while creating the helper `DROP TABLE`.
    #[serde(rename = "drop")]
    Drop,
}

impl StatementAction {
    /// The report's spelling (`carried over`).
    pub fn as_str(&self) -> &'static str {
        match self {
            StatementAction::Created => "created",
            StatementAction::Adopted => "adopted",
            StatementAction::Kept => "kept",
            StatementAction::Resumed => "resumed",
            StatementAction::Recreated => "recreated",
            StatementAction::CarriedOver => "carried over",
            StatementAction::Upgraded => "upgraded",
            StatementAction::RestartedFromOffsets => "restarted from offsets",
            StatementAction::Upgrade => "upgrade",
            StatementAction::Dropped => "dropped",
            StatementAction::DropSkipped => "drop skipped",
            StatementAction::Refused => "refused",
            StatementAction::Awaited => "awaited",
            StatementAction::Read => "read",
            StatementAction::Stop => "stop",
            StatementAction::Resume => "resume",
            StatementAction::Delete => "delete",
            StatementAction::Wait => "wait",
            StatementAction::Drop => "drop",
        }
    }
}

impl fmt::Display for StatementAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for StatementAction {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for StatementAction {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The result of one statement of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementResult {
    /// The statement name.
    pub name: String,
    /// What was done (or where it failed).
    pub action: StatementAction,
    /// Last phase seen (`None`: none, e.g. absent).
    pub phase: Option<Phase>,
    /// `status.detail` at the end (the error text of a failure).
    pub detail: String,
}

impl StatementResult {
    /// The result of `action` on statement `name`, with the last state seen.
    pub fn new(name: &str, action: StatementAction, seen: Option<&StatementState>) -> Self {
        StatementResult {
            name: name.to_string(),
            action,
            phase: seen.map(|s| s.phase.clone()),
            detail: seen.map(|s| s.detail.clone()).unwrap_or_default(),
        }
    }
}

/// The result of one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeResult {
    /// The table.
    pub table_name: String,
    /// The plan's action.
    pub action: Action,
    #[serde(flatten)]
    /// How it ended.
    pub outcome: Outcome,
    /// Its statements, in execution order.
    pub statements: Vec<StatementResult>,
    /// Wall time of the node, seconds.
    pub seconds: f64,
}

/// The result of a run, in plan order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeployReport {
    /// Every node of the plan, in plan order.
    pub nodes: Vec<NodeResult>,
    /// Ctrl-C stopped the run.
    pub interrupted: bool,
    /// Wall time of the run, seconds.
    pub seconds: f64,
}

impl DeployReport {
    /// Whether every node is done or skipped by the plan.
    pub fn success(&self) -> bool {
        !self.interrupted
            && self
                .nodes
                .iter()
                .all(|n| matches!(n.outcome, Outcome::Done | Outcome::Skipped(_)))
    }
}

/// A cancellation signal (set on Ctrl-C).
#[derive(Debug, Clone)]
pub struct Cancel {
    tx: std::sync::Arc<tokio::sync::watch::Sender<bool>>,
    rx: tokio::sync::watch::Receiver<bool>,
}

impl Default for Cancel {
    fn default() -> Self {
        let (tx, rx) = tokio::sync::watch::channel(false);
        Cancel {
            tx: std::sync::Arc::new(tx),
            rx,
        }
    }
}

impl Cancel {
    /// Requests cancellation.
    pub fn cancel(&self) {
        let _ = self.tx.send(true);
    }

    /// Whether cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves when cancellation is requested.
    pub async fn cancelled(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|c| *c).await;
    }
}

/// The surroundings of a run: journal, what an earlier run achieved, progress display, secret
/// scrubber and cancellation signal.
pub struct Session<'a> {
    /// Where to record steps (`None`: no journal).
    pub journal: Option<&'a Mutex<Journal>>,
    /// What an earlier, interrupted run achieved (`--resume`): its finished nodes are skipped, its
    /// statements adopted.
    pub resume: JournalState,
    /// Progress display.
    pub progress: &'a dyn Progress,
    /// Applied to every error text.
    pub scrubber: Scrubber,
    /// Set on Ctrl-C.
    pub cancel: Cancel,
}

impl Session<'static> {
    /// No journal, no resume state, no progress output, no secrets to scrub.
    pub fn quiet() -> Self {
        Session {
            journal: None,
            resume: JournalState::default(),
            progress: &super::progress::Silent,
            scrubber: Scrubber::default(),
            cancel: Cancel::default(),
        }
    }
}

/// Runs the nodes (in plan order, parents before children) and reports on each.
pub async fn deploy(
    target: &dyn Target,
    nodes: &[DeployNode],
    options: &DeployOptions,
    session: &Session<'_>,
) -> DeployReport {
    schedule::run(target, nodes, options, session).await
}

/// Polls `name` until `done` says so (`None` = the statement is absent), within `timeout`; a transient
/// error of a poll (429, 5xx, no answer) is retried within the same timeout. Used by
/// `statement stop|resume|delete` and undeploy. Errors: [`TargetError::Failed`] when the statement
/// FAILED, [`TargetError::TimedOut`] with the last phase seen, or the target's error.
pub async fn wait_until(
    target: &dyn Target,
    name: &str,
    timeout: Duration,
    poll: Backoff,
    done: impl Fn(Option<&StatementState>) -> bool,
) -> Result<Option<StatementState>, TargetError> {
    let deadline = Instant::now() + timeout;
    let mut n = 0;
    loop {
        let s = retry(
            &Backoff::HTTP,
            Limit::Until(deadline),
            seed_of(name),
            || target.get_statement(name),
        )
        .await
        .map_err(|g| g.error)?;
        if done(s.as_ref()) {
            return Ok(s);
        }
        if let Some(st) = &s
            && matches!(st.phase, Phase::Failed)
        {
            return Err(TargetError::Failed {
                name: name.to_string(),
                phase: st.phase.clone(),
                detail: st.detail.clone(),
            });
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(TargetError::TimedOut {
                name: name.to_string(),
                after: timeout,
                phase: s.map(|s| s.phase),
            });
        }
        tokio::time::sleep(poll.delay(n, seed_of(name)).min(deadline - now)).await;
        n += 1;
    }
}

/// Deletes `name` (a clean-up: a query, a test statement), retrying transient errors (429, 5xx, no
/// answer) for up to `timeout` rather than a number of times: a burst of 429s outlasts any attempt
/// count, and a clean-up that gives up leaves the statement running. `Ok(false)`: it did not exist.
///
/// Errors: a permanent error, or the last transient one once `timeout` is up, with what was retried.
pub async fn delete_within(
    target: &dyn Target,
    name: &str,
    timeout: Duration,
) -> Result<bool, crate::target::retry::GaveUp<TargetError>> {
    retry(
        &Backoff::HTTP,
        Limit::Until(Instant::now() + timeout),
        seed_of(name),
        || target.delete_statement(name),
    )
    .await
}

/// The temporary statement of a carry-over handover: `<name>-co`.
pub fn carry_temp_name(name: &str) -> String {
    crate::plan::naming::fit_length(format!("{name}-co"))
}
