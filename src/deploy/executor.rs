//! The executor: runs the deploy nodes of a plan against a [`Target`].
//!
//! Scheduling is a ready queue, not a wave barrier: a node starts as soon as every parent in the plan
//! is done (skipped parents count as done), up to `max_parallel` nodes at once, so a slow branch never
//! holds back an independent one. Inside a node, statements run in order (DDL, then DML).
//!
//! Per statement (`confluent-cloud-flink-api.md` §4, §11):
//! - **GET before create**: absent → POST; present with the same (normalised) SQL → adopt it and wait;
//!   present with different SQL → fail "exists with different SQL" unless the plan restarts the table.
//!   A 409 on POST, or a POST whose outcome is unknown (connection dropped, 5xx), leads back to the GET:
//!   nothing is ever created twice, nothing is deleted to "fix" a conflict (shift_left defect 16).
//! - **Restart** (plan action): a stateless DML whose SQL did not change is stopped and resumed in place
//!   (Confluent resumes from the stopped statement's offsets: nothing is replayed, the name stays), or,
//!   when its properties changed, handed over with carry-over offsets ([`carry_temp_name`]); any other
//!   DML is deleted (wait for 404) and created again. A DDL statement whose SQL did not change is
//!   kept (the table is already defined that way); a changed DDL needs `DROP TABLE`, done only with
//!   `--allow-drop` (shift_left dropped every table it redeployed, defect 10).
//! - **Wait**: a DDL until COMPLETED, a DML until RUNNING (COMPLETED also counts: bounded inserts).
//!   FAILED/FAILING fail with `status.detail`; DEGRADED fails once it lasts longer than the grace period;
//!   every wait has a timeout (defect 11); polls back off ([`Backoff::POLL`]).
//! - **Failure**: a failed node's descendants are skipped with the reason; independent branches go on
//!   (defect 15). **Cancellation** (Ctrl-C): no new node starts, running ones are abandoned at their
//!   next await (the journal stays whole: entries are written synchronously), and the report lists
//!   what was in flight.

use super::journal::{Entry, Journal, JournalState};
use super::progress::Progress;
use super::retry::{Backoff, seed_of};
use super::secrets::Scrubber;
use super::spec::{DeployNode, Step, normalize_sql};
use super::target::{Phase, StatementKind, StatementSpec, StatementState, Target, TargetError};
use crate::plan::Action;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of a deploy run.
#[derive(Debug, Clone)]
pub struct DeployOptions {
    /// Nodes running at once (≥ 1).
    pub max_parallel: usize,
    /// Longest wait for one statement to reach its goal phase.
    pub statement_timeout: Duration,
    /// How long DEGRADED may last before it counts as a failure.
    pub degraded_grace: Duration,
    /// Poll spacing.
    pub poll: Backoff,
    /// Spacing of create attempts after a retryable failure (429, 5xx, unknown outcome).
    pub create_retry: Backoff,
    /// Allow `DROP` statements (and drops needed by changed DDL) on restarted tables.
    pub allow_drop: bool,
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
        }
    }
}

/// How a node ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum Outcome {
    /// Every statement reached its goal.
    Done,
    /// Not run: skipped by the plan, done by an earlier run (`--resume`), or a parent failed.
    Skipped(String),
    /// A statement failed, timed out or was refused.
    Failed(String),
    /// Ctrl-C arrived while it ran; the text says the last known state.
    Interrupted(String),
    /// Ctrl-C arrived before it started.
    NotStarted,
}

/// The result of one statement of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementResult {
    /// The statement name.
    pub name: String,
    /// `created`, `adopted`, `resumed`, `recreated`, `kept`, `drop skipped`.
    pub action: String,
    /// Last phase seen.
    pub phase: Option<String>,
    /// `status.detail` at the end (the error text of a failure).
    pub detail: String,
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

/// Everything a node run needs.
struct Ctx<'a> {
    target: &'a dyn Target,
    options: &'a DeployOptions,
    journal: Option<&'a Mutex<Journal>>,
    progress: &'a dyn Progress,
    scrubber: &'a Scrubber,
    resume: &'a JournalState,
}

impl Ctx<'_> {
    fn record(&self, e: Entry) {
        if let Some(j) = self.journal
            && let Err(err) = j.lock().expect("journal lock").record(&e)
        {
            tracing::error!("{err}");
        }
    }

    fn err(&self, e: &TargetError) -> String {
        self.scrubber.scrub(&e.to_string())
    }
}

/// Runs the nodes (in plan order, parents before children) and reports on each.
pub async fn deploy(
    target: &dyn Target,
    nodes: &[DeployNode],
    options: &DeployOptions,
    session: &Session<'_>,
) -> DeployReport {
    let start = Instant::now();
    let cancel = &session.cancel;
    let resume = &session.resume;
    let ctx = Ctx {
        target,
        options,
        journal: session.journal,
        progress: session.progress,
        scrubber: &session.scrubber,
        resume,
    };
    let index: BTreeMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.table.as_str(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut waiting: Vec<usize> = vec![0; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for p in &n.parents {
            if let Some(&pi) = index.get(p.as_str()) {
                children[pi].push(i);
                waiting[i] += 1;
            }
        }
    }
    let ready: std::collections::VecDeque<usize> =
        (0..nodes.len()).filter(|&i| waiting[i] == 0).collect();
    let mut sched = Sched {
        nodes,
        children,
        waiting,
        results: vec![None; nodes.len()],
        blocked: vec![false; nodes.len()],
        ready,
    };
    let mut running = FuturesUnordered::new();
    let mut in_flight: BTreeSet<usize> = BTreeSet::new();
    let mut interrupted = false;

    loop {
        if !interrupted && cancel.is_cancelled() {
            interrupted = true;
        }
        // Start what may start.
        while !interrupted && in_flight.len() < options.max_parallel.max(1) {
            let Some(i) = sched.ready.pop_front() else {
                break;
            };
            if sched.results[i].is_some() {
                continue;
            }
            let n = &nodes[i];
            let immediate = if n.action == Action::Skip {
                Some(Outcome::Skipped(n.reason.clone()))
            } else if resume.done.contains(&n.table) {
                Some(Outcome::Skipped(
                    "done by the interrupted run (journal)".into(),
                ))
            } else {
                None
            };
            if let Some(o) = immediate {
                let r = NodeResult {
                    table_name: n.table.clone(),
                    action: n.action,
                    outcome: o,
                    statements: vec![],
                    seconds: 0.0,
                };
                sched.finish(i, r, &ctx);
                continue;
            }
            in_flight.insert(i);
            let ctx = &ctx;
            running.push(async move { (i, run_node(ctx, n).await) });
        }
        if in_flight.is_empty() {
            break;
        }
        tokio::select! {
            Some((i, r)) = running.next() => {
                in_flight.remove(&i);
                sched.finish(i, r, &ctx);
            }
            _ = cancel.cancelled(), if !interrupted => {
                interrupted = true;
            }
        }
        if interrupted {
            break;
        }
    }
    // In-flight nodes are abandoned (their futures are dropped here).
    drop(running);
    let mut out = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        let r = sched.results[i].take().unwrap_or_else(|| NodeResult {
            table_name: n.table.clone(),
            action: n.action,
            outcome: if !interrupted {
                // Only a dependency cycle leaves a node unreached without an interruption.
                Outcome::Failed("never became ready: its parents form a cycle".into())
            } else if in_flight.contains(&i) {
                Outcome::Interrupted(
                    "was running when interrupted; its statements may still be starting on the target"
                        .into(),
                )
            } else {
                Outcome::NotStarted
            },
            statements: vec![],
            seconds: 0.0,
        });
        out.push(r);
    }
    ctx.record(Entry::RunEnded {
        interrupted,
        at: super::journal::now_secs(),
    });
    DeployReport {
        nodes: out,
        interrupted,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The ready queue and what is known about each node.
struct Sched<'n> {
    nodes: &'n [DeployNode],
    children: Vec<Vec<usize>>,
    /// Parents not finished yet, per node.
    waiting: Vec<usize>,
    results: Vec<Option<NodeResult>>,
    /// Skipped because a parent failed or was itself blocked.
    blocked: Vec<bool>,
    ready: std::collections::VecDeque<usize>,
}

impl Sched<'_> {
    /// Marks node `i` finished and releases its children, or skips them (recursively) when it failed.
    fn finish(&mut self, i: usize, result: NodeResult, ctx: &Ctx<'_>) {
        let nodes = self.nodes;
        let blocked_reason = match &result.outcome {
            Outcome::Failed(_) => Some(format!("parent {} failed", nodes[i].table)),
            // Only a skip caused by a failure blocks the children; a node the plan skips (running
            // already, out of scope) does not, whatever its reason says.
            Outcome::Skipped(r) if self.blocked[i] => {
                Some(format!("ancestor {} not deployed ({r})", nodes[i].table))
            }
            _ => None,
        };
        self.results[i] = Some(result);
        for c in self.children[i].clone() {
            if self.results[c].is_some() {
                continue;
            }
            if let Some(reason) = &blocked_reason {
                let r = NodeResult {
                    table_name: nodes[c].table.clone(),
                    action: nodes[c].action,
                    outcome: Outcome::Skipped(reason.clone()),
                    statements: vec![],
                    seconds: 0.0,
                };
                self.blocked[c] = true;
                ctx.progress
                    .node_finished(&nodes[c].table, &format!("skipped: {reason}"));
                self.finish(c, r, ctx);
            } else {
                self.waiting[c] -= 1;
                if self.waiting[c] == 0 {
                    self.ready.push_back(c);
                }
            }
        }
    }
}

async fn run_node(ctx: &Ctx<'_>, node: &DeployNode) -> NodeResult {
    let start = Instant::now();
    ctx.progress.node_started(&node.table);
    ctx.record(Entry::NodeStarted {
        table: node.table.clone(),
    });
    let mut statements = Vec::new();
    let mut outcome = Outcome::Done;
    for step in &node.steps {
        match run_step(ctx, node, step).await {
            Ok(r) => statements.push(r),
            Err((r, reason)) => {
                statements.push(r);
                outcome = Outcome::Failed(ctx.scrubber.scrub(&reason));
                break;
            }
        }
    }
    match &outcome {
        Outcome::Done => {
            ctx.record(Entry::NodeDone {
                table: node.table.clone(),
            });
            ctx.progress.node_finished(&node.table, "done");
        }
        Outcome::Failed(r) => {
            ctx.record(Entry::NodeFailed {
                table: node.table.clone(),
                reason: r.clone(),
            });
            ctx.progress
                .node_finished(&node.table, &format!("failed: {r}"));
        }
        _ => {}
    }
    NodeResult {
        table_name: node.table.clone(),
        action: node.action,
        outcome,
        statements,
        seconds: start.elapsed().as_secs_f64(),
    }
}

type StepResult = Result<StatementResult, (StatementResult, String)>;

fn result(spec: &StatementSpec, action: &str, s: Option<&StatementState>) -> StatementResult {
    StatementResult {
        name: spec.name.clone(),
        action: action.to_string(),
        phase: s.map(|s| s.phase.to_string()),
        detail: s.map(|s| s.detail.clone()).unwrap_or_default(),
    }
}

async fn run_step(ctx: &Ctx<'_>, node: &DeployNode, step: &Step) -> StepResult {
    let spec = &step.spec;
    let table = &node.table;
    let fail =
        |action: &str, s: Option<&StatementState>, why: String| Err((result(spec, action, s), why));
    if step.is_drop && !(ctx.options.allow_drop && node.action == Action::Restart) {
        ctx.progress.statement(table, &spec.name, "DROP skipped");
        return Ok(StatementResult {
            name: spec.name.clone(),
            action: "drop skipped".into(),
            phase: None,
            detail: "DROP statements run only on a restart with --allow-drop".into(),
        });
    }
    let existing = match ctx.target.get_statement(&spec.name).await {
        Ok(s) => s,
        Err(e) => return fail("read", None, format!("{}: {}", spec.name, ctx.err(&e))),
    };
    let ours = ctx.resume.ours.contains(&spec.name);
    let mut action = "created";
    let temp = carry_temp_name(&spec.name);
    if ctx.resume.ours.contains(&temp)
        && existing
            .as_ref()
            .is_none_or(|e| e.properties.get("sql.tables.initial-offset-from") == Some(&temp))
        && let Ok(Some(_)) = ctx.target.get_statement(&temp).await
    {
        // An interrupted carry-over handover: the temporary statement holds the offsets; finish the
        // second handover.
        return carry_over(ctx, table, spec, None).await;
    }
    if let Some(s) = existing {
        let same = normalize_sql(&s.sql) == normalize_sql(&spec.sql);
        let restart = node.action == Action::Restart && !ours;
        match (same, &s.phase) {
            // Same SQL, a live statement: adopt it (or restart it in place).
            (true, Phase::Pending | Phase::Running | Phase::Degraded | Phase::Completed)
                if !restart || spec.kind == StatementKind::Ddl =>
            {
                let what = if restart { "kept" } else { "adopted" };
                ctx.record(Entry::Adopted {
                    table: table.clone(),
                    statement: spec.name.clone(),
                });
                ctx.progress.statement(table, &spec.name, what);
                return wait(ctx, table, spec, what).await;
            }
            (true, Phase::Running | Phase::Pending | Phase::Degraded | Phase::Stopped)
                if spec.kind == StatementKind::Dml
                    && restart
                    && node.stateless
                    && !same_properties(&s, spec)
                    && ctx.target.supports_carry_over() =>
            {
                // Properties cannot change in place: hand the offsets over (§10).
                return carry_over(ctx, table, spec, Some(s)).await;
            }
            (true, Phase::Stopped | Phase::Stopping)
            | (true, Phase::Running | Phase::Pending | Phase::Degraded)
                if spec.kind == StatementKind::Dml && (node.stateless || !restart) =>
            {
                // Stop (if needed) and resume in place: offsets carry over, the name stays.
                if !matches!(s.phase, Phase::Stopped) {
                    if let Err(e) = ctx.target.stop_statement(&spec.name).await {
                        return fail("stop", Some(&s), ctx.err(&e));
                    }
                    ctx.record(Entry::Stopped {
                        table: table.clone(),
                        statement: spec.name.clone(),
                    });
                    ctx.progress.statement(table, &spec.name, "stopping");
                    wait_phase(ctx, table, spec, &[Phase::Stopped]).await?;
                }
                if let Err(e) = ctx.target.resume_statement(&spec.name).await {
                    return fail("resume", Some(&s), ctx.err(&e));
                }
                ctx.record(Entry::Resumed {
                    table: table.clone(),
                    statement: spec.name.clone(),
                });
                ctx.progress.statement(table, &spec.name, "resuming");
                return wait(ctx, table, spec, "resumed").await;
            }
            (false, _)
                if spec.kind == StatementKind::Ddl
                    && !matches!(s.phase, Phase::Failed | Phase::Failing) =>
            {
                if !(restart && ctx.options.allow_drop) {
                    return fail(
                        "refused",
                        Some(&s),
                        format!(
                            "statement {} exists with different SQL; the table definition changed and would need DROP TABLE (data loss): rerun with --allow-drop on a restart, or version the table",
                            spec.name
                        ),
                    );
                }
                drop_table(ctx, table, spec).await?;
                delete_and_wait(ctx, table, spec).await?;
                action = "recreated";
            }
            (false, _)
                if !restart
                    && !matches!(s.phase, Phase::Failed | Phase::Failing | Phase::Stopped) =>
            {
                return fail(
                    "refused",
                    Some(&s),
                    format!(
                        "statement {} exists with different SQL (phase {}); the plan does not restart it, so it was left alone",
                        spec.name, s.phase
                    ),
                );
            }
            _ => {
                // Restart of a DML (stateful, or SQL changed), or a FAILED/STOPPED statement: the SQL
                // of a statement cannot change in place (§11): delete, wait for 404, create. A live
                // statement is deleted only once the new text validates, so a broken file never takes
                // a running job down.
                if matches!(s.phase, Phase::Running | Phase::Pending | Phase::Degraded)
                    && let Err(why) = validate(ctx, spec).await
                {
                    return fail("refused", Some(&s), why);
                }
                delete_and_wait(ctx, table, spec).await?;
                action = "recreated";
            }
        }
    }
    match create(ctx, table, spec).await {
        Ok(Created::New) => {}
        Ok(Created::Existing(s)) => {
            if normalize_sql(&s.sql) != normalize_sql(&spec.sql) {
                return fail(
                    "refused",
                    Some(&s),
                    format!(
                        "statement {} appeared with different SQL while creating it",
                        spec.name
                    ),
                );
            }
            action = "adopted";
        }
        Err(why) => return fail(action, None, why),
    }
    wait(ctx, table, spec, action).await
}

/// Properties the target adds itself or that carry-over sets: not compared.
const MANAGED_PROPERTIES: &[&str] = &[
    "sql.current-catalog",
    "sql.current-database",
    "sql.tables.initial-offset-from",
];

/// Whether the deployed properties equal the files' (ignoring [`MANAGED_PROPERTIES`]).
fn same_properties(s: &StatementState, spec: &StatementSpec) -> bool {
    let relevant = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        m.iter()
            .filter(|(k, _)| !MANAGED_PROPERTIES.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    relevant(&s.properties) == relevant(&spec.properties)
}

/// The temporary statement of a carry-over handover: `<name>-co`.
pub fn carry_temp_name(name: &str) -> String {
    crate::plan::naming::fit_length(format!("{name}-co"))
}

/// Restarts a stateless DML under the same name without losing its place in the sources, with
/// Confluent's carry-over offsets (`sql.tables.initial-offset-from`, `confluent-cloud-flink-api.md` §10):
/// the new statement must have a new name and waits PENDING until the old one is STOPPED. Two
/// handovers keep the name: `<name>` → `<name>-co` → `<name>` (each: create the new one, stop the old,
/// wait for the new RUNNING, delete the old). Re-entrant after an interruption: each step looks at
/// what exists first. `existing`: the old statement, `None` when it is already gone.
async fn carry_over(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    existing: Option<StatementState>,
) -> StepResult {
    let temp_name = carry_temp_name(&spec.name);
    let with_ref = |name: String, from: &str| {
        let mut properties = spec.properties.clone();
        properties.insert("sql.tables.initial-offset-from".into(), from.to_string());
        StatementSpec {
            name,
            sql: spec.sql.clone(),
            properties,
            kind: StatementKind::Dml,
        }
    };
    let temp = with_ref(temp_name.clone(), &spec.name);
    let target_spec = with_ref(spec.name.clone(), &temp_name);
    let fail = |why: String| Err((result(spec, "carried over", None), why));
    if let Some(old) = &existing {
        // First handover: <name> → <name>-co.
        let temp_state = match ctx.target.get_statement(&temp_name).await {
            Ok(t) => t,
            Err(e) => return fail(ctx.err(&e)),
        };
        if temp_state.is_none()
            && let Err(why) = create(ctx, table, &temp).await
        {
            return fail(why);
        }
        ctx.progress.statement(
            table,
            &temp_name,
            "carry-over: waiting for the old statement to stop",
        );
        handover(ctx, table, old.phase.clone(), spec, &temp).await?;
    }
    // Second handover: <name>-co → <name> (GET first: after an interruption it may exist already).
    match ctx.target.get_statement(&spec.name).await {
        Ok(None) => {
            if let Err(why) = create(ctx, table, &target_spec).await {
                return fail(why);
            }
        }
        Ok(Some(c)) if c.properties.get("sql.tables.initial-offset-from") == Some(&temp_name) => {}
        Ok(Some(c)) => {
            return fail(format!(
                "{}: exists (phase {}) without carrying over from {temp_name}; left alone",
                spec.name, c.phase
            ));
        }
        Err(e) => return fail(ctx.err(&e)),
    }
    let temp_phase = match ctx.target.get_statement(&temp_name).await {
        Ok(Some(t)) => t.phase,
        Ok(None) => Phase::Stopped,
        Err(e) => return fail(ctx.err(&e)),
    };
    handover(ctx, table, temp_phase, &temp, &target_spec).await?;
    let r = wait(ctx, table, &target_spec, "carried over").await?;
    Ok(r)
}

/// Stops `old` (unless already stopped), waits for `new` to run, deletes `old`.
async fn handover(
    ctx: &Ctx<'_>,
    table: &str,
    old_phase: Phase,
    old: &StatementSpec,
    new: &StatementSpec,
) -> Result<(), (StatementResult, String)> {
    if old_phase != Phase::Stopped {
        if let Err(e) = ctx.target.stop_statement(&old.name).await
            && !matches!(e, TargetError::NotFound(_))
        {
            return Err((result(old, "stop", None), ctx.err(&e)));
        }
        ctx.record(Entry::Stopped {
            table: table.to_string(),
            statement: old.name.clone(),
        });
    }
    wait(ctx, table, new, "carried over").await?;
    delete_and_wait(ctx, table, old).await
}

enum Created {
    New,
    /// The name existed (409, or a POST whose outcome was unknown succeeded after all).
    Existing(StatementState),
}

/// POST with the §11 recipe: on 409 or an unknown outcome, GET the name; absent → POST again
/// (bounded attempts), present → return it for comparison. Never two POSTs without a GET between them.
async fn create(ctx: &Ctx<'_>, table: &str, spec: &StatementSpec) -> Result<Created, String> {
    let policy = ctx.options.create_retry;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        ctx.progress.statement(table, &spec.name, "creating");
        let err = match ctx.target.create_statement(spec).await {
            Ok(_) => {
                ctx.record(Entry::Created {
                    table: table.to_string(),
                    statement: spec.name.clone(),
                });
                return Ok(Created::New);
            }
            Err(TargetError::AlreadyExists(_)) => None,
            Err(e) if e.is_retryable() && policy.may_retry(attempt) => Some(e),
            Err(e) => return Err(format!("creating {}: {}", spec.name, ctx.err(&e))),
        };
        if let Some(e) = &err {
            tracing::info!("creating {}: {}; checking by name", spec.name, ctx.err(e));
            tokio::time::sleep(policy.delay(attempt - 1, seed_of(&spec.name))).await;
        }
        match ctx.target.get_statement(&spec.name).await {
            Ok(Some(s)) => {
                ctx.record(Entry::Adopted {
                    table: table.to_string(),
                    statement: spec.name.clone(),
                });
                return Ok(Created::Existing(s));
            }
            Ok(None) if err.is_none() => {
                // 409 but gone now (it was DELETING): try again after a pause.
                if !policy.may_retry(attempt) {
                    return Err(format!(
                        "{}: name still taken after {attempt} attempts",
                        spec.name
                    ));
                }
                tokio::time::sleep(policy.delay(attempt - 1, seed_of(&spec.name))).await;
            }
            Ok(None) => {}
            Err(e) => return Err(format!("reading {}: {}", spec.name, ctx.err(&e))),
        }
    }
}

/// Validates the new text of a statement about to replace a live one: its planner's rejection, or a
/// check that kept failing (retried like a create), leaves the live statement alone.
async fn validate(ctx: &Ctx<'_>, spec: &StatementSpec) -> Result<(), String> {
    let policy = ctx.options.create_retry;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        match ctx.target.validate_statement(spec).await {
            Ok(()) => return Ok(()),
            Err(TargetError::Invalid(cause)) => {
                return Err(format!(
                    "{}: the new SQL does not validate, so the running statement was left alone: {}",
                    spec.name,
                    ctx.scrubber.scrub(&cause)
                ));
            }
            Err(e) if e.is_retryable() && policy.may_retry(attempt) => {
                tokio::time::sleep(policy.delay(attempt - 1, seed_of(&spec.name))).await;
            }
            Err(e) => {
                return Err(format!(
                    "{}: could not validate the new SQL, so the running statement was left alone: {}",
                    spec.name,
                    ctx.err(&e)
                ));
            }
        }
    }
}

/// Deletes a statement and waits until it is gone (404).
async fn delete_and_wait(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
) -> Result<(), (StatementResult, String)> {
    ctx.progress.statement(table, &spec.name, "deleting");
    if let Err(e) = ctx.target.delete_statement(&spec.name).await {
        return Err((result(spec, "delete", None), ctx.err(&e)));
    }
    ctx.record(Entry::Deleted {
        table: table.to_string(),
        statement: spec.name.clone(),
    });
    wait_gone(ctx, &spec.name)
        .await
        .map_err(|why| (result(spec, "delete", None), why))
}

/// Polls until `name` is gone, within the statement timeout.
pub(crate) async fn wait_gone_with(
    target: &dyn Target,
    options: &DeployOptions,
    scrubber: &Scrubber,
    name: &str,
) -> Result<(), String> {
    let deadline = Instant::now() + options.statement_timeout;
    let mut n = 0;
    loop {
        match target.get_statement(name).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => {}
            Err(e) => return Err(scrubber.scrub(&e.to_string())),
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{name}: still present {}s after the delete request",
                options.statement_timeout.as_secs()
            ));
        }
        tokio::time::sleep(options.poll.delay(n, seed_of(name))).await;
        n += 1;
    }
}

/// Polls `name` until `done` says so (`None` = the statement is absent), within `timeout`; the
/// error says the last phase seen. Used by `statement stop|resume|delete` and undeploy.
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
        let s = target.get_statement(name).await?;
        if done(s.as_ref()) {
            return Ok(s);
        }
        if let Some(st) = &s
            && matches!(st.phase, Phase::Failed)
        {
            return Err(TargetError::Config(format!(
                "{name}: FAILED: {}",
                st.detail
            )));
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(TargetError::Config(format!(
                "{name}: timed out after {}s (phase {})",
                timeout.as_secs(),
                s.map(|s| s.phase.to_string())
                    .unwrap_or_else(|| "absent".into())
            )));
        }
        tokio::time::sleep(poll.delay(n, seed_of(name)).min(deadline - now)).await;
        n += 1;
    }
}

async fn wait_gone(ctx: &Ctx<'_>, name: &str) -> Result<(), String> {
    wait_gone_with(ctx.target, ctx.options, ctx.scrubber, name).await
}

/// Runs `DROP TABLE IF EXISTS` for the table of a changed DDL (only with `--allow-drop` on a restart).
async fn drop_table(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
) -> Result<(), (StatementResult, String)> {
    let drop = StatementSpec {
        name: crate::plan::naming::fit_length(format!("{}-drop", spec.name)),
        sql: format!(
            "DROP TABLE IF EXISTS {}",
            crate::sql::quote_identifier(table)
        ),
        properties: spec.properties.clone(),
        kind: StatementKind::Ddl,
    };
    // A leftover helper from an earlier run is removed first.
    if let Ok(Some(_)) = ctx.target.get_statement(&drop.name).await {
        delete_and_wait(ctx, table, &drop).await?;
    }
    match create(ctx, table, &drop).await {
        Ok(_) => {}
        Err(why) => return Err((result(&drop, "drop", None), why)),
    }
    wait(ctx, table, &drop, "dropped").await?;
    delete_and_wait(ctx, table, &drop).await
}

/// Waits for the goal phase of the statement's kind.
async fn wait(ctx: &Ctx<'_>, table: &str, spec: &StatementSpec, action: &str) -> StepResult {
    let goal: &[Phase] = match spec.kind {
        StatementKind::Ddl => &[Phase::Completed],
        StatementKind::Dml => &[Phase::Running, Phase::Completed],
    };
    match wait_phase(ctx, table, spec, goal).await {
        Ok(s) => Ok(result(spec, action, Some(&s))),
        Err((mut r, why)) => {
            r.action = action.to_string();
            Err((r, why))
        }
    }
}

async fn wait_phase(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    goal: &[Phase],
) -> Result<StatementState, (StatementResult, String)> {
    let start = Instant::now();
    let deadline = start + ctx.options.statement_timeout;
    let mut degraded_since: Option<Instant> = None;
    let mut last: Option<StatementState> = None;
    let mut n = 0u32;
    loop {
        let s = match ctx.target.get_statement(&spec.name).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err((
                    result(spec, "wait", last.as_ref()),
                    format!(
                        "{}: disappeared while waiting (deleted by someone else?)",
                        spec.name
                    ),
                ));
            }
            Err(e) => return Err((result(spec, "wait", last.as_ref()), ctx.err(&e))),
        };
        if last.as_ref().is_none_or(|l| l.phase != s.phase) {
            ctx.progress.statement(table, &spec.name, s.phase.as_str());
        }
        if goal.contains(&s.phase) {
            return Ok(s);
        }
        match s.phase {
            Phase::Failed | Phase::Failing => {
                let why = format!(
                    "{}: {}: {}",
                    spec.name,
                    s.phase,
                    if s.detail.is_empty() {
                        "no detail given"
                    } else {
                        &s.detail
                    }
                );
                return Err((result(spec, "wait", Some(&s)), why));
            }
            Phase::Degraded => {
                let since = *degraded_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= ctx.options.degraded_grace {
                    let why = format!(
                        "{}: DEGRADED for more than {:.0?}: {}",
                        spec.name, ctx.options.degraded_grace, s.detail
                    );
                    return Err((result(spec, "wait", Some(&s)), why));
                }
            }
            // Right after a resume request the phase may still read STOPPED (the change is
            // asynchronous, §5); only a requested stop is final.
            Phase::Stopped if !goal.contains(&Phase::Stopped) && s.stopped => {
                return Err((
                    result(spec, "wait", Some(&s)),
                    format!("{}: STOPPED while waiting for {}", spec.name, goal[0]),
                ));
            }
            _ => degraded_since = None,
        }
        let now = Instant::now();
        if now >= deadline {
            let why = format!(
                "{}: timed out after {:.0?} in phase {}{}",
                spec.name,
                ctx.options.statement_timeout,
                s.phase,
                if s.detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", s.detail)
                }
            );
            return Err((result(spec, "wait", Some(&s)), why));
        }
        let delay = ctx
            .options
            .poll
            .delay(n, seed_of(&spec.name))
            .min(deadline - now);
        last = Some(s);
        n += 1;
        tokio::time::sleep(delay).await;
    }
}
