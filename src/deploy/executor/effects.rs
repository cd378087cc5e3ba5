//! Carrying a [`StepPlan`] out against the target: the facts are read ([`run_step`]), [`decide`]
//! decides, and the side effects follow — create idempotently (GET before POST), wait for a phase,
//! stop/resume,
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
use crate::deploy::spec::{DeployNode, Step};
use crate::sql::text::normalize_sql;
use crate::target::retry::{Limit, RetryLog, Retryable, retry, seed_of};
use crate::target::secrets::Scrubber;
use crate::target::{
    Checked, Phase, StatementKind, StatementSpec, StatementState, Target, TargetError,
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
    let mut known = Known {
        ours: ctx.resume.ours.contains(&spec.name),
        handover_pending,
        ..Known::of_target(ctx.target)
    };
    if let Some(s) = existing.as_ref()
        && super::verdict::asks_for_engine_verdict(s, step, node, known)
    {
        ctx.progress
            .statement(table, &spec.name, "compiling the running and the new SQL");
        known.engine_verdict = super::verdict::engine_verdict(ctx.target, s, spec).await;
    }
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
        // The old statement keeps running until the new one has its offsets: a new text that
        // does not validate never starts the handover (checked in `carry_over`, before anything is
        // created or deleted).
        StepPlan::CarryOver => return carry_over(ctx, table, spec, existing).await,
        StepPlan::SavepointRestart {
            restore,
            stop_first,
            ..
        } => {
            let Some(old) = existing else {
                return Err(failure(
                    spec,
                    StatementAction::Read,
                    None,
                    StepError::Disappeared { statement: name() },
                ));
            };
            return savepoint_restart(ctx, table, spec, old, restore, stop_first).await;
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
                Refusal::PoolChanged { from, to } => StepError::PoolChanged {
                    statement: name(),
                    from,
                    to,
                },
                Refusal::StateLoss { verdict } => StepError::StateLoss {
                    statement: name(),
                    table: table.to_string(),
                    verdict,
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
            // The new definition is checked before the table is dropped: a DDL the server rejects
            // drops nothing.
            if let Err(error) = check_ddl(ctx, spec).await {
                return Err(failure(
                    spec,
                    StatementAction::Refused,
                    existing.as_ref(),
                    error,
                ));
            }
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

/// Replaces the running job of `old` by the new SQL of `spec` from a savepoint (SQL Gateway): the new
/// text is checked first (a text the planner rejects stops nothing), the job is stopped with a
/// savepoint (unless `old` is STOPPED already), the new SQL starts from that savepoint (`restore`:
/// all the state, or the sources' offsets), runs, and must have restored from that very savepoint
/// (`latest.restored` on the JobManager). Otherwise the new job is removed and the old SQL starts
/// again from the same savepoint ([`rollback`]): nothing is lost either way, and the step fails with
/// [`StepError::UpgradeFailed`].
async fn savepoint_restart(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    old: StatementState,
    restore: crate::target::Restore,
    stop_first: bool,
) -> StepResult {
    use crate::target::Restore;
    let name = || spec.name.clone();
    validate(ctx, spec)
        .await
        .map_err(|error| failure(spec, StatementAction::Refused, Some(&old), error))?;
    if stop_first {
        ctx.call(&spec.name, "stop", ctx.deadline(), || {
            ctx.target.stop_statement(&spec.name)
        })
        .await
        .map_err(|e| {
            let error = e.or(|source| StepError::Request {
                statement: name(),
                source,
            });
            failure(spec, StatementAction::Stop, Some(&old), error)
        })?;
        ctx.record(Entry::Stopped {
            table: table.to_string(),
            statement: name(),
        });
        ctx.progress
            .statement(table, &spec.name, "stopping with a savepoint");
        wait_phase(ctx, table, spec, &[Phase::Stopped]).await?;
    }
    let savepoint = ctx
        .call(&spec.name, "savepoint", ctx.deadline(), || {
            ctx.target.stop_savepoint(&spec.name)
        })
        .await
        .map_err(|e| {
            let error = e.or(|source| StepError::Read {
                statement: name(),
                source,
            });
            failure(spec, StatementAction::Read, Some(&old), error)
        })?
        .ok_or_else(|| {
            failure(
                spec,
                StatementAction::Upgrade,
                Some(&old),
                StepError::NoSavepoint { statement: name() },
            )
        })?;
    let action = match restore {
        Restore::State => StatementAction::Upgraded,
        Restore::Offsets => StatementAction::RestartedFromOffsets,
    };
    ctx.progress.statement(
        table,
        &spec.name,
        &format!("starting the new SQL from savepoint {savepoint}"),
    );
    let cause = match start_from(ctx, table, spec, &savepoint, restore, action).await {
        Ok(done) => return Ok(done),
        Err(cause) => cause,
    };
    ctx.progress.statement(
        table,
        &spec.name,
        &format!(
            "the new SQL did not take over ({cause}): starting the old SQL again from the savepoint"
        ),
    );
    let old_spec = StatementSpec {
        name: name(),
        sql: old.sql.clone(),
        properties: old.properties.clone(),
        kind: StatementKind::Dml,
        compute_pool: spec.compute_pool.clone(),
    };
    let rollback = rollback(ctx, table, spec, &old_spec, &savepoint)
        .await
        .err();
    Err(failure(
        spec,
        StatementAction::Upgrade,
        None,
        StepError::UpgradeFailed {
            statement: name(),
            savepoint,
            cause,
            rollback,
        },
    ))
}

/// Starts `spec` from `savepoint`, waits until it runs, and checks that its job restored from that
/// savepoint. `Err`: why it did not take over (its text, for [`StepError::UpgradeFailed`]).
async fn start_from(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    savepoint: &str,
    restore: crate::target::Restore,
    action: StatementAction,
) -> Result<StatementResult, String> {
    // A submission is never sent twice blindly: an unknown outcome is a failure, and the rollback
    // removes whatever job it may have started.
    let started = ctx
        .target
        .start_from_savepoint(spec, savepoint, restore)
        .await
        .map_err(|e| e.to_string())?;
    if started.phase == Phase::Failed {
        return Err(started.detail);
    }
    ctx.record(Entry::Created {
        table: table.to_string(),
        statement: spec.name.clone(),
    });
    let done = wait(ctx, table, spec, action)
        .await
        .map_err(|f| f.error.to_string())?;
    // The restore is recorded when the job starts; a JobManager that answers late is asked again
    // within the visibility grace.
    let deadline = Instant::now() + ctx.options.visibility_grace;
    let mut n = 0;
    loop {
        let restored = ctx
            .call(&spec.name, "GET checkpoints", ctx.deadline(), || {
                ctx.target.restored_from(&spec.name)
            })
            .await
            .map_err(|e| {
                e.or(|source| StepError::Read {
                    statement: spec.name.clone(),
                    source,
                })
                .to_string()
            })?;
        match restored {
            Some(r) if same_savepoint(&r.path, savepoint) && r.savepoint => {
                tracing::info!(
                    "{}: job {} restored from savepoint {}",
                    spec.name,
                    r.job,
                    r.path
                );
                return Ok(done);
            }
            Some(r) => {
                return Err(format!(
                    "its job {} restored from {} instead",
                    r.job, r.path
                ));
            }
            None if Instant::now() >= deadline => {
                return Err("its job started without restoring any state".into());
            }
            None => {
                tokio::time::sleep(ctx.options.poll.delay(n, seed_of(&spec.name))).await;
                n += 1;
            }
        }
    }
}

/// Whether two savepoint paths name the same place (`file:/sp/x`, `file:///sp/x`, `/sp/x/`).
fn same_savepoint(a: &str, b: &str) -> bool {
    let norm = |p: &str| {
        let p = p.trim().trim_end_matches('/');
        let p = p.strip_prefix("file:").unwrap_or(p);
        p.trim_start_matches('/').to_string()
    };
    norm(a) == norm(b)
}

/// After a failed upgrade: removes the new job (cancels it, or hides it once failed) and starts the
/// old SQL again from the same savepoint, waiting until it runs. `Err`: why that failed.
async fn rollback(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    old: &StatementSpec,
    savepoint: &str,
) -> Result<(), String> {
    use crate::target::Restore;
    delete_and_wait(ctx, table, spec)
        .await
        .map_err(|f| f.error.to_string())?;
    let started = ctx
        .target
        .start_from_savepoint(old, savepoint, Restore::State)
        .await
        .map_err(|e| e.to_string())?;
    if started.phase == Phase::Failed {
        return Err(started.detail);
    }
    wait(ctx, table, old, StatementAction::Resumed)
        .await
        .map(|_| ())
        .map_err(|f| f.error.to_string())
}

/// Restarts a stateless DML under the same name without losing its place in the sources, with
/// Confluent's carry-over offsets (`sql.tables.initial-offset-from`,
/// <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/carry-over-offsets.html>):
/// the new statement must have a new name and waits PENDING until the old one is STOPPED. Two
/// handovers keep the name: `<name>` → `<name>-co` → `<name>` (each: make sure the new one exists,
/// live, with the files' SQL and properties ([`successor`]), stop the old, wait for the new RUNNING,
/// delete the old). Re-entrant after an interruption (`--resume`): each step looks at what exists
/// first. The new text is checked on the server (dry run) before any statement is created, deleted
/// or stopped. `existing`: the old statement, `None` when it is already gone.
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
    let mut checked = false;
    if let Some(old) = &existing {
        // First handover: <name> → <name>-co. The new text is checked before anything else, even
        // when a temporary statement of an earlier run is reused.
        validate(ctx, spec)
            .await
            .map_err(|error| failure(spec, StatementAction::Refused, Some(old), error))?;
        checked = true;
        successor(ctx, table, spec, &temp, true, &mut checked).await?;
        ctx.progress.statement(
            table,
            &temp_name,
            "carry-over: waiting for the old statement to stop",
        );
        handover(ctx, table, old.phase.clone(), spec, &temp).await?;
    }
    // Second handover: <name>-co → <name> (GET first: after an interruption it may exist already).
    let temp_state = ctx
        .get(&temp_name, ctx.deadline())
        .await
        .map_err(|e| read(&temp_name, e))?;
    match ctx.get(&spec.name, ctx.deadline()).await {
        Ok(Some(c)) if c.properties.get(OFFSET_FROM) != Some(&temp_name) => {
            return Err(fail(StepError::HandoverConflict {
                statement: spec.name.clone(),
                phase: c.phase,
                temp: temp_name.clone(),
            }));
        }
        Ok(_) => {}
        Err(e) => return Err(read(&spec.name, e)),
    }
    successor(
        ctx,
        table,
        spec,
        &target_spec,
        temp_state.is_some(),
        &mut checked,
    )
    .await?;
    let temp_phase = temp_state.map(|t| t.phase).unwrap_or(Phase::Stopped);
    handover(ctx, table, temp_phase, &temp, &target_spec).await?;
    wait(ctx, table, &target_spec, StatementAction::CarriedOver).await
}

/// Whether `s` is what the files ask `new` to be: the same (normalised) SQL, the same properties
/// (those the target adds itself aside, the carry-over source included) and no other compute pool.
fn is_successor(s: &StatementState, new: &StatementSpec) -> bool {
    normalize_sql(&s.sql) == normalize_sql(&new.sql)
        && decide::same_properties(s, new)
        && s.properties.get(OFFSET_FROM) == new.properties.get(OFFSET_FROM)
        && decide::pool_moved(s, new).is_none()
}

/// Makes sure the statement `new` that takes over in a carry-over handover exists, live (PENDING or
/// RUNNING), with the files' SQL and properties ([`is_successor`]). One left by an earlier run that is
/// FAILED, stopped, or has other SQL, properties or pool is deleted and created again — but only
/// while the statement it carries offsets from is present (`from_present`), and only after the new
/// text passed the server's dry run (`spec`; once per handover, `checked`). Nothing is stopped here.
async fn successor(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
    new: &StatementSpec,
    from_present: bool,
    checked: &mut bool,
) -> Result<(), Box<StepFailure>> {
    let live = |s: &StatementState| matches!(s.phase, Phase::Pending | Phase::Running);
    let state = ctx.get(&new.name, ctx.deadline()).await.map_err(|e| {
        let error = e.or(|source| StepError::Read {
            statement: new.name.clone(),
            source,
        });
        failure(new, StatementAction::Read, None, error)
    })?;
    if let Some(s) = &state {
        if live(s) && is_successor(s, new) {
            return Ok(());
        }
        if !from_present {
            return Err(failure(
                new,
                StatementAction::Refused,
                Some(s),
                StepError::StaleSuccessor {
                    statement: new.name.clone(),
                    phase: s.phase.clone(),
                    from: new.properties.get(OFFSET_FROM).cloned().unwrap_or_default(),
                },
            ));
        }
    }
    if !*checked {
        validate(ctx, spec)
            .await
            .map_err(|error| failure(spec, StatementAction::Refused, state.as_ref(), error))?;
        *checked = true;
    }
    if state.is_some() {
        // A leftover of an earlier run: replaced before anything is stopped.
        ctx.progress.statement(
            table,
            &new.name,
            "carry-over: replacing a leftover that is not live or not up to date",
        );
        delete_and_wait(ctx, table, new).await?;
    }
    match create(ctx, table, new).await {
        Ok(Created::New) => Ok(()),
        Ok(Created::Existing(s)) if live(&s) && is_successor(&s, new) => Ok(()),
        Ok(Created::Existing(s)) => Err(failure(
            new,
            StatementAction::Refused,
            Some(&s),
            StepError::AppearedDifferent {
                statement: new.name.clone(),
            },
        )),
        Err(error) => Err(failure(new, StatementAction::CarriedOver, None, error)),
    }
}

/// Stops `old` (unless already stopped), waits for `new` to run, deletes `old`. `old` is stopped only
/// while `new` reads as live (PENDING or RUNNING): a FAILED or missing successor never takes the
/// running statement down.
async fn handover(
    ctx: &Ctx<'_>,
    table: &str,
    old_phase: Phase,
    old: &StatementSpec,
    new: &StatementSpec,
) -> Result<(), Box<StepFailure>> {
    if old_phase != Phase::Stopped {
        let now = ctx.get(&new.name, ctx.deadline()).await.map_err(|e| {
            let error = e.or(|source| StepError::Read {
                statement: new.name.clone(),
                source,
            });
            failure(new, StatementAction::Read, None, error)
        })?;
        match &now {
            Some(s) if matches!(s.phase, Phase::Pending | Phase::Running) => {}
            other => {
                return Err(failure(
                    new,
                    StatementAction::Refused,
                    other.as_ref(),
                    StepError::SuccessorNotLive {
                        statement: old.name.clone(),
                        successor: new.name.clone(),
                        phase: other.as_ref().map(|s| s.phase.clone()),
                        detail: other.as_ref().map(|s| s.detail.clone()).unwrap_or_default(),
                    },
                ));
            }
        }
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

/// POST idempotently, the statement name being the key: on 409 or an unknown outcome, GET the name;
/// absent → POST again,
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

/// Validates the new text of a statement about to replace one that may still run, with the target's
/// dry run ([`Target::dry_run_statement`]: Confluent `sql.dry-run=true`, SQL Gateway `EXPLAIN`): its
/// planner's rejection, a check that kept failing (transient errors until the statement timeout), or
/// a job the target cannot check at all leaves the running statement alone.
async fn validate(ctx: &Ctx<'_>, spec: &StatementSpec) -> Result<(), StepError> {
    match dry_run(ctx, spec).await? {
        Checked::Valid => Ok(()),
        // A DDL replaces no job; a job that cannot be checked must not replace a running one.
        Checked::NotChecked(_) if spec.kind == StatementKind::Ddl => Ok(()),
        Checked::NotChecked(why) => Err(StepError::Unchecked {
            statement: spec.name.clone(),
            why,
        }),
    }
}

/// The target's dry run of `spec`, retried on transient errors until the statement timeout; the
/// planner's rejection is [`StepError::Invalid`], any other failure [`StepError::Unvalidated`].
async fn dry_run(ctx: &Ctx<'_>, spec: &StatementSpec) -> Result<Checked, StepError> {
    let checked = ctx
        .call(&spec.name, "validate", ctx.deadline(), || {
            ctx.target.dry_run_statement(spec)
        })
        .await;
    match checked {
        Ok(c) => Ok(c),
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

/// Checks the changed DDL of a table about to be dropped and recreated: the server's rejection drops
/// nothing ([`StepError::InvalidDdl`] with its message). A target that cannot check a DDL (the SQL
/// Gateway runs DDL in its session) lets it through: no job depends on the check.
async fn check_ddl(ctx: &Ctx<'_>, spec: &StatementSpec) -> Result<(), StepError> {
    match dry_run(ctx, spec).await {
        Ok(Checked::Valid) => Ok(()),
        Ok(Checked::NotChecked(why)) => {
            tracing::info!("{}: not checked before the drop: {why}", spec.name);
            Ok(())
        }
        Err(StepError::Invalid { statement, cause }) => {
            Err(StepError::InvalidDdl { statement, cause })
        }
        Err(e) => Err(e),
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

/// The `DROP … IF EXISTS` of what a (rewritten) DDL text creates: built from the text that is sent,
/// after the environment's rewrite rules, so the drop names the table the DDL recreates (a rule that
/// renames or qualifies the table applies to both). `None` when the text creates no table or view the
/// SQL front end can name.
pub(super) fn drop_sql(ddl: &str) -> Option<String> {
    use crate::sql::StatementKind as SqlKind;
    let analysis = crate::sql::analyze(ddl);
    let st = analysis.statements.iter().find(|st| {
        matches!(
            st.kind,
            SqlKind::CreateTable
                | SqlKind::CreateView
                | SqlKind::Ctas
                | SqlKind::CreateMaterializedTable
        )
    })?;
    let name = st.sinks.first()?;
    let quoted = name
        .name
        .parts
        .iter()
        .map(|p| crate::sql::quote_identifier(p))
        .collect::<Vec<_>>()
        .join(".");
    let what = match st.kind {
        SqlKind::CreateView => "VIEW",
        SqlKind::CreateMaterializedTable => "MATERIALIZED TABLE",
        _ => "TABLE",
    };
    let temporary = if st.temporary { "TEMPORARY " } else { "" };
    Some(format!("DROP {temporary}{what} IF EXISTS {quoted}"))
}

/// Runs the `DROP … IF EXISTS` of what a changed DDL creates ([`drop_sql`]; only with `--allow-drop`
/// on a restart, after the new DDL was checked).
async fn drop_table(
    ctx: &Ctx<'_>,
    table: &str,
    spec: &StatementSpec,
) -> Result<(), Box<StepFailure>> {
    let Some(sql) = drop_sql(&spec.sql) else {
        return Err(failure(
            spec,
            StatementAction::Refused,
            None,
            StepError::NothingToDrop {
                statement: spec.name.clone(),
            },
        ));
    };
    let drop = StatementSpec {
        name: crate::plan::naming::fit_length(format!("{}-drop", spec.name)),
        sql,
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
    /// Neither done nor starting (its state; `None`: absent).
    NotDone(Option<StatementState>),
}

/// Checks a statement that should be running already; one still starting (PENDING) is waited for
/// until its goal phase, within the statement timeout: PENDING is not done, and a child started on a
/// PENDING parent reads from a statement that may never run (#15).
///
/// Errors: the statement cannot be read, or it was PENDING and did not reach its goal phase (FAILED,
/// timed out, …).
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
        // Still starting: waited for; one that goes FAILED meanwhile fails the wait.
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
        s => Ok(Settled::NotDone(s)),
    }
}

/// Whether a PENDING statement waits for its compute pool: `status.scaling_status.scaling_state` is
/// `POOL_EXHAUSTED` (the Statement resource,
/// <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>), or
/// its detail says so.
/// `detail` followed by the statement's newest exception ([`Target::exceptions`]: Confluent Cloud's
/// `GET …/statements/{name}/exceptions`) when the server has one that says more; the detail alone
/// when it has none or cannot be read (the failure is reported either way).
async fn with_latest_exception(target: &dyn Target, name: &str, detail: &str) -> String {
    let Ok(list) = target.exceptions(name).await else {
        return detail.to_string();
    };
    match list.first() {
        Some(e) if !e.message.is_empty() && !detail.contains(e.message.as_str()) => {
            let e = format!("latest exception: {}: {}", e.name, e.message);
            if detail.is_empty() {
                e
            } else {
                format!("{detail}; {e}")
            }
        }
        _ => detail.to_string(),
    }
}

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
            // Not listed yet (a job the JobManager has not registered), or deleted: only the
            // grace tells them apart.
            Ok(None)
                if last.is_none()
                    && start.elapsed()
                        < ctx
                            .options
                            .visibility_grace
                            .min(ctx.options.statement_timeout) =>
            {
                let delay = ctx
                    .options
                    .poll
                    .delay(n, seed_of(&spec.name))
                    .min(deadline.saturating_duration_since(Instant::now()));
                n = n.saturating_add(1);
                tokio::time::sleep(delay).await;
                continue;
            }
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
                    detail: with_latest_exception(ctx.target, &spec.name, &s.detail).await,
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
            // asynchronous,
            // <https://docs.confluent.io/cloud/current/flink/concepts/statements.html>); only a
            // requested stop is final.
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
