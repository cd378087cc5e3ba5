//! Carrying a [`StepPlan`] out against the target: the facts are read ([`run_step`]), [`decide`]
//! decides, and the side effects follow — create with the §11 recipe, wait for a phase, stop/resume,
//! delete and wait until gone, carry-over handovers, the helper `DROP TABLE` — each recorded in the
//! journal and shown as progress.
//!
//! Transient errors (429, 5xx, no answer) are retried **for as long as the statement's timeout
//! allows**, not a number of times (`Ctx::call`): under rate limiting a burst of 429s outlasts any
//! attempt count, and failing then skipped every descendant. When the time is up, the step fails with
//! a summary of what was retried ([`StepError::GaveUp`]).

use super::decide::{self, Known, OFFSET_FROM, Refusal, StepPlan};
use super::error::StepError;
use super::{DeployOptions, StatementAction, StatementResult, carry_temp_name};
use crate::deploy::journal::{Entry, Journal, JournalState};
use crate::deploy::progress::Progress;
use crate::deploy::retry::{Limit, RetryLog, Retryable, retry, seed_of};
use crate::deploy::secrets::Scrubber;
use crate::deploy::spec::{DeployNode, Step, normalize_sql};
use crate::deploy::target::{
    Phase, StatementKind, StatementSpec, StatementState, Target, TargetError,
};
use std::future::Future;
use std::sync::Mutex;
use tokio::time::Instant;

/// Everything a node run needs.
pub(super) struct Ctx<'a> {
    pub target: &'a dyn Target,
    pub options: &'a DeployOptions,
    pub journal: Option<&'a Mutex<Journal>>,
    pub progress: &'a dyn Progress,
    pub scrubber: &'a Scrubber,
    pub resume: &'a JournalState,
}

impl Ctx<'_> {
    /// Appends to the journal; a journal that cannot be written is logged, not fatal to the run.
    pub fn record(&self, e: Entry) {
        if let Some(j) = self.journal
            && let Err(err) = j.lock().unwrap_or_else(|p| p.into_inner()).record(&e)
        {
            tracing::error!("{err}");
        }
    }
}

/// Why a retried call failed.
enum CallError {
    /// A permanent error: the caller says what it means for the step.
    Permanent(TargetError),
    /// Transient errors until the deadline ([`StepError::GaveUp`]).
    Exhausted(StepError),
}

impl CallError {
    /// The step error: `permanent` names a permanent error.
    fn or(self, permanent: impl FnOnce(TargetError) -> StepError) -> StepError {
        match self {
            CallError::Permanent(e) => permanent(e),
            CallError::Exhausted(e) => e,
        }
    }
}

impl Ctx<'_> {
    /// Runs a call of `statement`'s step (`what`: `GET`, `stop`, … for the message), retrying
    /// transient errors until `deadline` ([`Limit::Until`]) with the retry spacing of the options.
    async fn call<T, F, Fut>(
        &self,
        statement: &str,
        what: &str,
        deadline: Instant,
        op: F,
    ) -> Result<T, CallError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, TargetError>>,
    {
        let start = Instant::now();
        retry(
            &self.options.create_retry,
            Limit::Until(deadline),
            seed_of(statement),
            op,
        )
        .await
        .map_err(|g| {
            if g.error.transient().is_some() {
                CallError::Exhausted(StepError::GaveUp {
                    statement: statement.to_string(),
                    what: what.to_string(),
                    after: start.elapsed(),
                    log: g.log,
                    source: g.error,
                })
            } else {
                CallError::Permanent(g.error)
            }
        })
    }

    /// The deadline of a call that starts now: the statement timeout from now.
    fn deadline(&self) -> Instant {
        Instant::now() + self.options.statement_timeout
    }

    /// GET of a statement, retried until `deadline`.
    async fn get(
        &self,
        name: &str,
        deadline: Instant,
    ) -> Result<Option<StatementState>, CallError> {
        self.call(name, "GET", deadline, || self.target.get_statement(name))
            .await
    }
}

/// A failed step: what was done so far, and why it stopped.
#[derive(Debug)]
pub(super) struct StepFailure {
    pub result: StatementResult,
    pub error: StepError,
}

/// A step's result; the failure is boxed (it is large and rare).
pub(super) type StepResult = Result<StatementResult, Box<StepFailure>>;

fn failure(
    spec: &StatementSpec,
    action: StatementAction,
    seen: Option<&StatementState>,
    error: StepError,
) -> Box<StepFailure> {
    Box::new(StepFailure {
        result: StatementResult::new(&spec.name, action, seen),
        error,
    })
}

/// Reads the facts about one statement, decides, and carries the decision out.
pub(super) async fn run_step(ctx: &Ctx<'_>, node: &DeployNode, step: &Step) -> StepResult {
    let spec = &step.spec;
    let table = &node.table;
    // Decided before reading: a skipped DROP costs no request.
    if decide::skips_drop(step, node, ctx.options) {
        return Ok(drop_skipped(ctx, table, spec));
    }
    let existing = ctx.get(&spec.name, ctx.deadline()).await.map_err(|e| {
        let error = e.or(|source| StepError::Read {
            statement: spec.name.clone(),
            source,
        });
        failure(spec, StatementAction::Read, None, error)
    })?;
    let temp = carry_temp_name(&spec.name);
    let handover_pending =
        decide::handover_candidate(existing.as_ref(), spec, ctx.resume.ours.contains(&temp))
            && matches!(ctx.get(&temp, ctx.deadline()).await, Ok(Some(_)));
    let known = Known {
        ours: ctx.resume.ours.contains(&spec.name),
        handover_pending,
        carry_over: ctx.target.supports_carry_over(),
    };
    let plan = decide::decide(existing.as_ref(), step, node, ctx.options, known);
    apply(ctx, table, spec, existing, plan).await
}

/// The result of a `DROP` statement that does not run.
fn drop_skipped(ctx: &Ctx<'_>, table: &str, spec: &StatementSpec) -> StatementResult {
    ctx.progress.statement(table, &spec.name, "DROP skipped");
    StatementResult {
        name: spec.name.clone(),
        action: StatementAction::DropSkipped,
        phase: None,
        detail: "DROP statements run only on a restart with --allow-drop".into(),
    }
}

/// Carries out `plan` for `spec` (`existing`: its state as read).
async fn apply(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    existing: Option<StatementState>,
    plan: StepPlan,
) -> StepResult {
    let name = || spec.name.clone();
    let mut action = StatementAction::Created;
    match plan {
        StepPlan::SkipDrop => return Ok(drop_skipped(ctx, table, spec)),
        // An interrupted carry-over handover: the temporary statement holds the offsets; finish the
        // second handover.
        StepPlan::FinishHandover => return carry_over(ctx, table, spec, None).await,
        StepPlan::Create => {}
        StepPlan::Adopt { keep } => {
            let what = if keep {
                StatementAction::Kept
            } else {
                StatementAction::Adopted
            };
            ctx.record(Entry::Adopted {
                table: table.to_string(),
                statement: name(),
            });
            ctx.progress.statement(table, &spec.name, what.as_str());
            return wait(ctx, table, spec, what).await;
        }
        StepPlan::CarryOver => {
            // The old statement keeps running until the new one has its offsets: a new text that
            // does not validate must not even start the handover.
            let live = existing.as_ref().is_some_and(|s| {
                matches!(s.phase, Phase::Running | Phase::Pending | Phase::Degraded)
            });
            if live && let Err(error) = validate(ctx, spec).await {
                return Err(failure(
                    spec,
                    StatementAction::Refused,
                    existing.as_ref(),
                    error,
                ));
            }
            return carry_over(ctx, table, spec, existing).await;
        }
        StepPlan::StopResume { stop_first } => {
            let s = existing.as_ref();
            let request = |source| StepError::Request {
                statement: name(),
                source,
            };
            if stop_first {
                ctx.call(&spec.name, "stop", ctx.deadline(), || {
                    ctx.target.stop_statement(&spec.name)
                })
                .await
                .map_err(|e| failure(spec, StatementAction::Stop, s, e.or(request)))?;
                ctx.record(Entry::Stopped {
                    table: table.to_string(),
                    statement: name(),
                });
                ctx.progress.statement(table, &spec.name, "stopping");
                wait_phase(ctx, table, spec, &[Phase::Stopped]).await?;
            }
            ctx.call(&spec.name, "resume", ctx.deadline(), || {
                ctx.target.resume_statement(&spec.name)
            })
            .await
            .map_err(|e| failure(spec, StatementAction::Resume, s, e.or(request)))?;
            ctx.record(Entry::Resumed {
                table: table.to_string(),
                statement: name(),
            });
            ctx.progress.statement(table, &spec.name, "resuming");
            return wait(ctx, table, spec, StatementAction::Resumed).await;
        }
        StepPlan::Refuse(why) => {
            let error = match why {
                Refusal::DdlChanged => StepError::DdlChanged { statement: name() },
                Refusal::SqlChanged { phase } => StepError::SqlChanged {
                    statement: name(),
                    phase,
                },
            };
            return Err(failure(
                spec,
                StatementAction::Refused,
                existing.as_ref(),
                error,
            ));
        }
        StepPlan::DropAndRecreate => {
            drop_table(ctx, table, spec).await?;
            delete_and_wait(ctx, table, spec).await?;
            action = StatementAction::Recreated;
        }
        StepPlan::Recreate { validate_first } => {
            if validate_first && let Err(error) = validate(ctx, spec).await {
                return Err(failure(
                    spec,
                    StatementAction::Refused,
                    existing.as_ref(),
                    error,
                ));
            }
            delete_and_wait(ctx, table, spec).await?;
            action = StatementAction::Recreated;
        }
    }
    match create(ctx, table, spec).await {
        Ok(Created::New) => {}
        Ok(Created::Existing(s)) => {
            if normalize_sql(&s.sql) != normalize_sql(&spec.sql) {
                return Err(failure(
                    spec,
                    StatementAction::Refused,
                    Some(&s),
                    StepError::AppearedDifferent { statement: name() },
                ));
            }
            action = StatementAction::Adopted;
        }
        Err(error) => return Err(failure(spec, action, None, error)),
    }
    wait(ctx, table, spec, action).await
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
        properties.insert(OFFSET_FROM.into(), from.to_string());
        StatementSpec {
            name,
            sql: spec.sql.clone(),
            properties,
            kind: StatementKind::Dml,
            compute_pool: spec.compute_pool.clone(),
        }
    };
    let temp = with_ref(temp_name.clone(), &spec.name);
    let target_spec = with_ref(spec.name.clone(), &temp_name);
    let fail = |error: StepError| failure(spec, StatementAction::CarriedOver, None, error);
    let read = |statement: &str, e: CallError| {
        fail(e.or(|source| StepError::Request {
            statement: statement.to_string(),
            source,
        }))
    };
    if let Some(old) = &existing {
        // First handover: <name> → <name>-co.
        let temp_state = ctx
            .get(&temp_name, ctx.deadline())
            .await
            .map_err(|e| read(&temp_name, e))?;
        if temp_state.is_none() {
            create(ctx, table, &temp).await.map_err(fail)?;
        }
        ctx.progress.statement(
            table,
            &temp_name,
            "carry-over: waiting for the old statement to stop",
        );
        handover(ctx, table, old.phase.clone(), spec, &temp).await?;
    }
    // Second handover: <name>-co → <name> (GET first: after an interruption it may exist already).
    match ctx.get(&spec.name, ctx.deadline()).await {
        Ok(None) => {
            create(ctx, table, &target_spec).await.map_err(fail)?;
        }
        Ok(Some(c)) if c.properties.get(OFFSET_FROM) == Some(&temp_name) => {}
        Ok(Some(c)) => {
            return Err(fail(StepError::HandoverConflict {
                statement: spec.name.clone(),
                phase: c.phase,
                temp: temp_name.clone(),
            }));
        }
        Err(e) => return Err(read(&spec.name, e)),
    }
    let temp_phase = match ctx.get(&temp_name, ctx.deadline()).await {
        Ok(Some(t)) => t.phase,
        Ok(None) => Phase::Stopped,
        Err(e) => return Err(read(&temp_name, e)),
    };
    handover(ctx, table, temp_phase, &temp, &target_spec).await?;
    wait(ctx, table, &target_spec, StatementAction::CarriedOver).await
}

/// Stops `old` (unless already stopped), waits for `new` to run, deletes `old`.
async fn handover(
    ctx: &Ctx<'_>,
    table: &str,
    old_phase: Phase,
    old: &StatementSpec,
    new: &StatementSpec,
) -> Result<(), Box<StepFailure>> {
    if old_phase != Phase::Stopped {
        let stopped = ctx
            .call(&old.name, "stop", ctx.deadline(), || {
                ctx.target.stop_statement(&old.name)
            })
            .await;
        match stopped {
            Ok(()) | Err(CallError::Permanent(TargetError::NotFound(_))) => {}
            Err(e) => {
                let error = e.or(|source| StepError::Request {
                    statement: old.name.clone(),
                    source,
                });
                return Err(failure(old, StatementAction::Stop, None, error));
            }
        }
        ctx.record(Entry::Stopped {
            table: table.to_string(),
            statement: old.name.clone(),
        });
    }
    wait(ctx, table, new, StatementAction::CarriedOver).await?;
    delete_and_wait(ctx, table, old).await
}

/// How a create ended.
enum Created {
    New,
    /// The name existed (409, or a POST whose outcome was unknown succeeded after all).
    Existing(StatementState),
}

/// POST with the §11 recipe: on 409 or an unknown outcome, GET the name; absent → POST again,
/// present → return it for comparison. Never two POSTs without a GET between them. Transient
/// failures are retried until the statement timeout.
async fn create(ctx: &Ctx<'_>, table: &str, spec: &StatementSpec) -> Result<Created, StepError> {
    let policy = ctx.options.create_retry;
    let start = Instant::now();
    let deadline = ctx.deadline();
    let seed = seed_of(&spec.name);
    let mut log = RetryLog::default();
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
            Err(e) => match e.transient() {
                Some(t) if Instant::now() < deadline => Some((e, t)),
                Some(_) => {
                    return Err(StepError::GaveUp {
                        statement: spec.name.clone(),
                        what: "create".into(),
                        after: start.elapsed(),
                        log,
                        source: e,
                    });
                }
                None => {
                    return Err(StepError::Create {
                        statement: spec.name.clone(),
                        source: e,
                    });
                }
            },
        };
        let pause = |retry_after| {
            policy
                .delay_after(attempt - 1, seed, retry_after)
                .min(deadline.saturating_duration_since(Instant::now()))
        };
        if let Some((e, t)) = &err {
            tracing::info!(
                "creating {}: {}; checking by name",
                spec.name,
                ctx.scrubber.scrub(&e.to_string())
            );
            let delay = pause(t.retry_after);
            log.note(&t.cause, delay);
            tokio::time::sleep(delay).await;
        }
        match ctx.get(&spec.name, deadline).await {
            Ok(Some(s)) => {
                ctx.record(Entry::Adopted {
                    table: table.to_string(),
                    statement: spec.name.clone(),
                });
                return Ok(Created::Existing(s));
            }
            Ok(None) if err.is_none() => {
                // 409 but gone now (it was DELETING): try again after a pause.
                if Instant::now() >= deadline {
                    return Err(StepError::NameTaken {
                        statement: spec.name.clone(),
                        attempts: attempt,
                    });
                }
                tokio::time::sleep(pause(None)).await;
            }
            Ok(None) => {}
            Err(e) => {
                return Err(e.or(|source| StepError::ReadBack {
                    statement: spec.name.clone(),
                    source,
                }));
            }
        }
    }
}

/// Validates the new text of a statement about to replace a live one: its planner's rejection, or a
/// check that kept failing (transient errors until the statement timeout), leaves the live statement
/// alone.
async fn validate(ctx: &Ctx<'_>, spec: &StatementSpec) -> Result<(), StepError> {
    let checked = ctx
        .call(&spec.name, "validate", ctx.deadline(), || {
            ctx.target.validate_statement(spec)
        })
        .await;
    match checked {
        Ok(()) => Ok(()),
        Err(CallError::Permanent(TargetError::Invalid(cause))) => Err(StepError::Invalid {
            statement: spec.name.clone(),
            cause,
        }),
        Err(CallError::Permanent(source))
        | Err(CallError::Exhausted(StepError::GaveUp { source, .. })) => {
            Err(StepError::Unvalidated {
                statement: spec.name.clone(),
                source,
            })
        }
        Err(CallError::Exhausted(e)) => Err(e),
    }
}

/// Deletes a statement and waits until it is gone (404).
async fn delete_and_wait(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
) -> Result<(), Box<StepFailure>> {
    ctx.progress.statement(table, &spec.name, "deleting");
    let fail = |error| failure(spec, StatementAction::Delete, None, error);
    ctx.call(&spec.name, "delete", ctx.deadline(), || {
        ctx.target.delete_statement(&spec.name)
    })
    .await
    .map_err(|e| {
        fail(e.or(|source| StepError::Request {
            statement: spec.name.clone(),
            source,
        }))
    })?;
    ctx.record(Entry::Deleted {
        table: table.to_string(),
        statement: spec.name.clone(),
    });
    wait_gone(ctx, &spec.name).await.map_err(fail)
}

/// Polls until `name` is gone, within the statement timeout.
async fn wait_gone(ctx: &Ctx<'_>, name: &str) -> Result<(), StepError> {
    let deadline = Instant::now() + ctx.options.statement_timeout;
    let mut n = 0;
    loop {
        match ctx.get(name, deadline).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => {}
            Err(e) => {
                return Err(e.or(|source| StepError::Request {
                    statement: name.to_string(),
                    source,
                }));
            }
        }
        if Instant::now() >= deadline {
            return Err(StepError::StillPresent {
                statement: name.to_string(),
                after: ctx.options.statement_timeout,
            });
        }
        tokio::time::sleep(ctx.options.poll.delay(n, seed_of(name))).await;
        n += 1;
    }
}

/// Runs `DROP TABLE IF EXISTS` for the table of a changed DDL (only with `--allow-drop` on a restart).
async fn drop_table(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
) -> Result<(), Box<StepFailure>> {
    let drop = StatementSpec {
        name: crate::plan::naming::fit_length(format!("{}-drop", spec.name)),
        sql: format!(
            "DROP TABLE IF EXISTS {}",
            crate::sql::quote_identifier(table)
        ),
        properties: spec.properties.clone(),
        kind: StatementKind::Ddl,
        compute_pool: spec.compute_pool.clone(),
    };
    // A leftover helper from an earlier run is removed first.
    if let Ok(Some(_)) = ctx.get(&drop.name, ctx.deadline()).await {
        delete_and_wait(ctx, table, &drop).await?;
    }
    create(ctx, table, &drop)
        .await
        .map_err(|error| failure(&drop, StatementAction::Drop, None, error))?;
    wait(ctx, table, &drop, StatementAction::Dropped).await?;
    delete_and_wait(ctx, table, &drop).await
}

/// The phases in which a statement of this kind is done: COMPLETED for a DDL, RUNNING or COMPLETED
/// (a bounded statement) for a DML. PENDING is never done.
fn goal_of(kind: StatementKind) -> &'static [Phase] {
    match kind {
        StatementKind::Ddl => &[Phase::Completed],
        StatementKind::Dml => &[Phase::Running, Phase::Completed],
    }
}

/// Waits for the goal phase of the statement's kind; the result (or failure) reports `action`.
async fn wait(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    action: StatementAction,
) -> StepResult {
    match wait_phase(ctx, table, spec, goal_of(spec.kind)).await {
        Ok(s) => Ok(StatementResult::new(&spec.name, action, Some(&s))),
        Err(mut f) => {
            f.result.action = action;
            Err(f)
        }
    }
}

/// What a statement that should be running already (kept by the plan, or done by the interrupted
/// run) reads as on the target.
pub(super) enum Settled {
    /// In its goal phase.
    Done,
    /// It was still starting (PENDING) and has reached its goal phase since.
    Awaited(StatementResult),
    /// Neither done nor starting (the phase; `None`: absent).
    NotDone(Option<Phase>),
}

/// Checks a statement that should be running already; one still starting (PENDING) is waited for
/// until its goal phase, within the statement timeout: PENDING is not done, and a child started on a
/// PENDING parent reads from a statement that may never run (#15).
pub(super) async fn settle(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
) -> Result<Settled, Box<StepFailure>> {
    let s = ctx.get(&spec.name, ctx.deadline()).await.map_err(|e| {
        let error = e.or(|source| StepError::Read {
            statement: spec.name.clone(),
            source,
        });
        failure(spec, StatementAction::Read, None, error)
    })?;
    match s {
        Some(s) if goal_of(spec.kind).contains(&s.phase) => Ok(Settled::Done),
        Some(s) if s.phase == Phase::Pending => {
            ctx.progress.statement(
                table,
                &spec.name,
                "PENDING: waiting for it before its children start",
            );
            wait(ctx, table, spec, StatementAction::Awaited)
                .await
                .map(Settled::Awaited)
        }
        s => Ok(Settled::NotDone(s.map(|s| s.phase))),
    }
}

/// Whether a PENDING statement waits for its compute pool: `status.scaling_status.scaling_state` is
/// `POOL_EXHAUSTED` (`confluent-cloud-flink-api.md` §3.2), or its detail says so.
fn pool_exhausted(s: &StatementState) -> bool {
    s.meta.pool_exhausted || s.detail.contains("POOL_EXHAUSTED")
}

/// Polls the statement until it reaches a phase of `goal`; FAILED/FAILING, DEGRADED past the grace
/// period, a requested stop, its disappearance and the statement timeout end the wait.
async fn wait_phase(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    goal: &[Phase],
) -> Result<StatementState, Box<StepFailure>> {
    let start = Instant::now();
    let deadline = start + ctx.options.statement_timeout;
    let mut degraded_since: Option<Instant> = None;
    let mut last: Option<StatementState> = None;
    let mut n = 0u32;
    let statement = || spec.name.clone();
    loop {
        let s = match ctx.get(&spec.name, deadline).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err(failure(
                    spec,
                    StatementAction::Wait,
                    last.as_ref(),
                    StepError::Disappeared {
                        statement: statement(),
                    },
                ));
            }
            Err(e) => {
                let error = e.or(|source| StepError::Request {
                    statement: statement(),
                    source,
                });
                return Err(failure(spec, StatementAction::Wait, last.as_ref(), error));
            }
        };
        if last.as_ref().is_none_or(|l| l.phase != s.phase) {
            ctx.progress.statement(table, &spec.name, s.phase.as_str());
        }
        if goal.contains(&s.phase) {
            return Ok(s);
        }
        let stop = |error| Err(failure(spec, StatementAction::Wait, Some(&s), error));
        match s.phase {
            Phase::Failed | Phase::Failing => {
                return stop(StepError::Failed {
                    statement: statement(),
                    phase: s.phase.clone(),
                    detail: s.detail.clone(),
                });
            }
            Phase::Degraded => {
                let since = *degraded_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= ctx.options.degraded_grace {
                    return stop(StepError::Degraded {
                        statement: statement(),
                        grace: ctx.options.degraded_grace,
                        detail: s.detail.clone(),
                    });
                }
            }
            // Right after a resume request the phase may still read STOPPED (the change is
            // asynchronous, §5); only a requested stop is final.
            Phase::Stopped if !goal.contains(&Phase::Stopped) && s.stopped => {
                return stop(StepError::StoppedWhileWaiting {
                    statement: statement(),
                    goal: goal[0].clone(),
                });
            }
            _ => degraded_since = None,
        }
        let now = Instant::now();
        if now >= deadline && s.phase == Phase::Pending && pool_exhausted(&s) {
            return stop(StepError::PoolExhausted {
                statement: statement(),
                after: ctx.options.statement_timeout,
                pool: s.meta.compute_pool_id.clone(),
            });
        }
        if now >= deadline {
            return stop(StepError::TimedOut {
                statement: statement(),
                after: ctx.options.statement_timeout,
                phase: s.phase.clone(),
                detail: s.detail.clone(),
            });
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
