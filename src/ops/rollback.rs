//! `pipeline rollback`: green is not trusted, blue stays production. For the newest blue-green
//! release of `pipelines/blue_green.json` still open in this environment, stops or deletes its green
//! statements (children first: the release lists its tables parents first, and a table's job goes
//! before its declaration), never a blue statement, and records the release as rolled back there
//! (`rolled_back`, written atomically and synced), which closes it
//! ([`crate::versioning::record::Release::is_open_in`]). It also works out the git command that
//! puts the blue SQL back in the files ([`crate::versioning::restore()`]); the command is printed, never
//! run.
//!
//! A release whose blue statements were deleted here (`decommission --delete`) cannot be rolled
//! back: green is all that is left ([`OpsError::Refused`]). Two steps, so that the caller can show
//! the list and ask first: [`prepare`] reads the target, [`Prepared::execute`] acts and records.
//! The planning ([`plan`]) and acting ([`act`]) steps take the live statements and any
//! [`Target`], so that they are tested on an in-memory target.

use super::statement::{self, Done, StatementVerb};
use super::status::{blue_green_statements, green_statements};
use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::deploy::journal::ReleaseCommand;
use crate::plan::StatementNaming;
use crate::target::{Phase, Scrubber, StatementState, Target};
use crate::versioning::record::{BLUE_GREEN_FILE, BlueGreenRecord, Rollback, StatementRole};
use crate::versioning::restore::{self, Restore};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

/// What to roll back.
#[derive(Debug, Clone)]
pub struct RollbackRequest {
    pub pipelines: PathBuf,
    /// [`StatementVerb::Stop`] (resumable, the default) or [`StatementVerb::Delete`].
    pub verb: StatementVerb,
    /// Longest wait for one statement to reach the goal.
    pub timeout: Duration,
    pub allow_unknown: bool,
    /// Listen for SIGINT, SIGTERM and SIGHUP from the first look at the target on (no question
    /// will be asked): one that arrives before the first statement is acted on ends the run there,
    /// with nothing done. Otherwise they are listened for from [`Prepared::execute`] on.
    pub listen_early: bool,
    /// Roll back only the tables whose blue writer is still there ([`Guard::partial`]).
    pub partial: bool,
}

/// What keeps a rollback from leaving a table of the release without a running writer.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// Blue statements that a `decommission` run of the release deleted here (the release journal,
    /// [`super::release_journal::acted_on`]): gone even while the target still lists them.
    pub deleted_blue: BTreeSet<String>,
    /// Each green table of the release → the green tables upstream of it (the tree's graph).
    pub upstream: BTreeMap<String, BTreeSet<String>>,
    /// Instead of refusing when the blue writer of a table is gone ([`WithoutBlue`]), keep that
    /// table's green statements and those of every green table upstream of it, and roll back the
    /// rest.
    pub partial: bool,
}

/// A table of the release whose blue writer is gone (its blue job absent, FAILED, or deleted by a
/// decommission) while its green job is live: green is its only writer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WithoutBlue {
    pub blue_table_name: String,
    pub green_table_name: String,
    /// The blue job and what became of it (`absent`, `FAILED`, `deleted by decommission`).
    pub blue_statement: String,
    pub blue_state: String,
}

/// One green statement to act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GreenTarget {
    pub statement: String,
    /// Its phase now.
    pub phase: crate::target::Phase,
    pub role: StatementRole,
    pub green_table_name: String,
    pub blue_table_name: String,
}

/// A green statement left alone, and why (absent, already STOPPED, a declaration with `stop`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftAlone {
    pub statement: String,
    pub reason: String,
}

/// A blue statement of the release, left untouched, and its phase now (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlueStatement {
    pub statement: String,
    pub role: StatementRole,
    pub phase: Option<Phase>,
}

impl BlueStatement {
    /// Whether this blue statement does not serve production now: a job that is not RUNNING (a
    /// `decommission --stop` stopped it, it failed, it is absent). The caller says so: rolling back
    /// green does not restart blue.
    pub fn needs_attention(&self) -> bool {
        self.role == StatementRole::Job && self.phase != Some(Phase::Running)
    }
}

/// What a rollback will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RollbackPlan {
    pub action: StatementVerb,
    /// The statement-name prefix of this environment.
    pub statement_prefix: String,
    /// `created_at` of the release rolled back.
    pub release: String,
    /// The green statements to act on, children first (a job before its declaration).
    pub statements: Vec<GreenTarget>,
    /// Green statements not acted on.
    pub left_alone: Vec<LeftAlone>,
    /// The release's blue statements, untouched, with their phases.
    pub blue: Vec<BlueStatement>,
    /// With [`Guard::partial`]: the tables whose blue writer is gone; their green statements (and
    /// those upstream of them) are in `kept`, not acted on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub without_blue: Vec<WithoutBlue>,
    /// Green statements kept running so that no table of the release is left without a writer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<LeftAlone>,
}

/// What a rollback did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RollbackReport {
    pub plan: RollbackPlan,
    pub results: Vec<Done>,
    /// Whether `pipelines/blue_green.json` now records the release as rolled back here (only when
    /// every green statement reached its goal; otherwise the release stays open and the command can
    /// be run again).
    pub recorded: bool,
    /// The signal (`SIGINT`, `SIGTERM`, `SIGHUP`) that ended the run before its last statement:
    /// `results` lists what was done, the release journal records it, the release stays open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<super::signals::Interrupt>,
}

impl RollbackReport {
    /// Every green statement reached its goal, uninterrupted.
    pub fn success(&self) -> bool {
        self.interrupted.is_none() && self.results.iter().all(|r| r.error.is_none())
    }
}

/// The index of the release a rollback acts on: the newest one not rolled back in the environment
/// of `prefix`.
///
/// Errors ([`OpsError::Refused`]): none left.
pub fn release_index(record: &BlueGreenRecord, prefix: &str) -> Result<usize, OpsError> {
    record
        .releases
        .iter()
        .rposition(|r| !r.rolled_back_in(prefix))
        .ok_or_else(|| {
            OpsError::Refused(format!(
                "{BLUE_GREEN_FILE} records no blue-green release to roll back for statement prefix '{prefix}'"
            ))
        })
}

/// [`plan_guarded`] with the default [`Guard`]: the live phases alone tell which blue writers are
/// gone, and a table whose blue writer is gone refuses the rollback.
pub fn plan(
    record: &BlueGreenRecord,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
    verb: StatementVerb,
) -> Result<RollbackPlan, OpsError> {
    plan_guarded(record, naming, live, verb, &Guard::default())
}

/// Works out the rollback of the newest release not rolled back in the environment of `naming`.
/// No table of the release is left without a running writer: when the blue job of a table is gone
/// (absent, FAILED, or deleted by a decommission per `guard`) while its green job is live, the
/// rollback is refused naming the tables, unless [`Guard::partial`], which keeps those tables'
/// green statements and those upstream of them.
///
/// Errors ([`OpsError::Refused`]): no release left to roll back; the newest one was decommissioned
/// here (its blue statements deleted); tables whose blue writer is gone.
pub fn plan_guarded(
    record: &BlueGreenRecord,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
    verb: StatementVerb,
    guard: &Guard,
) -> Result<RollbackPlan, OpsError> {
    let prefix = &naming.prefix;
    let release = &record.releases[release_index(record, prefix)?];
    if release.decommissioned_in(prefix) {
        let at = release
            .decommissioned
            .iter()
            .find(|d| d.statement_prefix == *prefix && d.action == "delete")
            .map(|d| d.at.as_str())
            .unwrap_or_default();
        return Err(OpsError::Refused(format!(
            "the blue-green release of {} cannot be rolled back for statement prefix '{prefix}': it was decommissioned at {at} (its blue statements were deleted, green is production); deploy the previous SQL as a new change instead",
            release.created_at
        )));
    }
    let without_blue = without_blue(release, naming, live, guard);
    if !without_blue.is_empty() && !guard.partial {
        let tables: Vec<String> = without_blue
            .iter()
            .map(|w| {
                format!(
                    "{} (blue {} {}; green {} is its only writer)",
                    w.blue_table_name, w.blue_statement, w.blue_state, w.green_table_name
                )
            })
            .collect();
        return Err(OpsError::Refused(format!(
            "the blue-green release of {} cannot be rolled back for statement prefix '{prefix}': the blue side of {} table(s) is no longer there, and stopping or deleting green would leave them without a writer: {}; nothing was stopped or deleted. Finish the decommission instead (`pipeline decommission --delete`), or redeploy blue for those tables first, or roll back only the other tables with --partial (their green statements, and those upstream of them, keep running)",
            release.created_at,
            without_blue.len(),
            tables.join(", ")
        )));
    }
    // The tables that stay on green: those without blue, and those downstream of them (their blue
    // jobs would read a blue table nothing writes any more); then every green table upstream of
    // those, which feeds them.
    let gone: BTreeSet<&str> = without_blue
        .iter()
        .map(|w| w.green_table_name.as_str())
        .collect();
    let mut keep_tables: BTreeSet<&str> = gone.clone();
    for (green, up) in &guard.upstream {
        if up.iter().any(|u| gone.contains(u.as_str())) {
            keep_tables.insert(green);
        }
    }
    for green in keep_tables.clone() {
        if let Some(up) = guard.upstream.get(green) {
            keep_tables.extend(up.iter().map(String::as_str));
        }
    }
    let keep: BTreeMap<String, String> = release
        .tables
        .iter()
        .filter(|t| keep_tables.contains(t.green_table_name.as_str()))
        .flat_map(|t| {
            green_statements(naming, &release.statement_prefix, t)
                .into_iter()
                .map(|g| (g.name, t.green_table_name.clone()))
        })
        .collect();
    let mut kept = Vec::new();
    let mut statements = Vec::new();
    let mut left_alone = Vec::new();
    let mut seen = BTreeSet::new();
    for t in release.tables.iter().rev() {
        // The record lists a table's declaration first: its job goes first.
        for g in green_statements(naming, &release.statement_prefix, t)
            .into_iter()
            .rev()
        {
            if !seen.insert(g.name.clone()) {
                continue;
            }
            if let Some(table) = keep.get(&g.name) {
                kept.push(LeftAlone {
                    statement: g.name,
                    reason: format!(
                        "kept: green {table} is, or feeds, the only writer of a table whose blue side is gone"
                    ),
                });
                continue;
            }
            let reason = match live.get(&g.name) {
                None => Some("absent".to_string()),
                Some(s) if verb == StatementVerb::Stop && g.role == StatementRole::Declaration => {
                    Some(format!(
                        "declares the table, runs no job ({}): nothing to stop",
                        s.phase
                    ))
                }
                Some(s) if verb == StatementVerb::Stop && s.phase == Phase::Stopped => {
                    Some("already STOPPED".to_string())
                }
                Some(_) => None,
            };
            if let Some(reason) = reason {
                left_alone.push(LeftAlone {
                    statement: g.name,
                    reason,
                });
                continue;
            }
            statements.push(GreenTarget {
                phase: live[&g.name].phase.clone(),
                role: g.role,
                statement: g.name,
                green_table_name: t.green_table_name.clone(),
                blue_table_name: t.blue_table_name.clone(),
            });
        }
    }
    let mut blue = Vec::new();
    let mut seen_blue = BTreeSet::new();
    for t in &release.tables {
        for (b, _) in blue_green_statements(naming, &release.statement_prefix, t) {
            if seen_blue.insert(b.name.clone()) {
                blue.push(BlueStatement {
                    phase: live.get(&b.name).map(|s| s.phase.clone()),
                    statement: b.name,
                    role: b.role,
                });
            }
        }
    }
    Ok(RollbackPlan {
        action: verb,
        statement_prefix: prefix.clone(),
        release: release.created_at.clone(),
        statements,
        left_alone,
        blue,
        without_blue,
        kept,
    })
}

/// The tables of `release` whose blue job is gone (absent, FAILED, or deleted by a decommission per
/// `guard`) while a green job of theirs is live ([`WithoutBlue`]). A table without a blue job (a
/// declaration only) has no blue writer to lose.
fn without_blue(
    release: &crate::versioning::record::Release,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
    guard: &Guard,
) -> Vec<WithoutBlue> {
    let mut out = Vec::new();
    for t in &release.tables {
        let jobs: Vec<String> = blue_green_statements(naming, &release.statement_prefix, t)
            .into_iter()
            .filter(|(b, _)| b.role == StatementRole::Job)
            .map(|(b, _)| b.name)
            .collect();
        let state = |name: &String| -> Option<String> {
            if guard.deleted_blue.contains(name) {
                return Some("deleted by decommission".into());
            }
            match live.get(name).map(|s| &s.phase) {
                None => Some("absent".into()),
                Some(Phase::Failed) => Some("FAILED".into()),
                Some(_) => None,
            }
        };
        let gone: Vec<(String, String)> = jobs
            .iter()
            .filter_map(|j| state(j).map(|s| (j.clone(), s)))
            .collect();
        if jobs.is_empty() || gone.len() < jobs.len() {
            continue;
        }
        let green_live = green_statements(naming, &release.statement_prefix, t)
            .iter()
            .any(|g| {
                // A green job that runs (or is about to): a FAILED or stopped one writes nothing.
                g.role == StatementRole::Job
                    && live.get(&g.name).is_some_and(|s| {
                        matches!(
                            s.phase,
                            crate::target::Phase::Pending
                                | crate::target::Phase::Running
                                | crate::target::Phase::Degraded
                        )
                    })
            });
        if !green_live {
            continue;
        }
        let (blue_statement, blue_state) = gone[0].clone();
        out.push(WithoutBlue {
            blue_table_name: t.blue_table_name.clone(),
            green_table_name: t.green_table_name.clone(),
            blue_statement,
            blue_state,
        });
    }
    out
}

/// Acts on the plan's statements in order, waiting for each goal (a failure is reported and the
/// next one tried); errors are masked with `scrubber`.
pub async fn act(
    target: &dyn Target,
    plan: &RollbackPlan,
    timeout: Duration,
    scrubber: &Scrubber,
) -> Vec<Done> {
    statement::act_in_order(
        target,
        plan.statements.iter().map(|t| t.statement.as_str()),
        plan.action,
        timeout,
        scrubber,
    )
    .await
}

/// The record with the plan's release marked rolled back in its environment at `at`; `None` when a
/// statement failed, or a partial rollback kept green statements running (`plan.kept`: those
/// tables are still on green, so the release stays open and their files are not to be restored),
/// or the release is no longer in the record.
pub fn recorded(
    record: &BlueGreenRecord,
    plan: &RollbackPlan,
    results: &[Done],
    at: &str,
) -> Option<BlueGreenRecord> {
    if results.iter().any(|r| r.error.is_some()) || !plan.kept.is_empty() {
        return None;
    }
    let mut record = record.clone();
    let release = record
        .releases
        .iter_mut()
        .rev()
        .find(|r| r.created_at == plan.release && !r.rolled_back_in(&plan.statement_prefix))?;
    release.rolled_back.push(Rollback {
        statement_prefix: plan.statement_prefix.clone(),
        at: at.to_string(),
        action: plan.action.as_str().to_string(),
        statements: plan
            .statements
            .iter()
            .map(|t| t.statement.clone())
            .collect(),
    });
    Some(record)
}

/// A rollback ready to run.
pub struct Prepared {
    /// This project's target lock, held from [`prepare`] to the end of [`Prepared::execute`].
    _lock: Option<super::lock::TargetLock>,
    connected: Connected,
    rt: tokio::runtime::Runtime,
    /// Listening since [`prepare`] ([`RollbackRequest::listen_early`]).
    signals: Option<super::signals::Interrupts>,
    pipelines: PathBuf,
    record: BlueGreenRecord,
    timeout: Duration,
    pub plan: RollbackPlan,
    /// How to put the blue SQL back in the files, or why it cannot be worked out (not a git
    /// repository, a base commit the clone does not have).
    pub restore: Result<Restore, String>,
}

/// Works out what to stop or delete and how to restore the files.
///
/// Errors: errors in the project, an unreadable `blue_green.json`, a target that cannot be listed,
/// the refusals of [`plan`].
pub fn prepare(ctx: &Context, req: &RollbackRequest) -> Result<Prepared, OpsError> {
    if req.verb == StatementVerb::Resume {
        return Err(OpsError::Usage(
            "rollback stops or deletes the green statements".into(),
        ));
    }
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing rolled back: fix the errors above",
    )?;
    let naming = StatementNaming::from_config(&cfg);
    let record = BlueGreenRecord::read(&req.pipelines)?;
    let index = release_index(&record, &naming.prefix)?;
    // The record is input, not truth: only entries that follow from the tree are acted on.
    record.check_releases(&project, &req.pipelines, [index])?;
    let release = &record.releases[index];
    let greens: BTreeSet<&str> = release
        .tables
        .iter()
        .map(|t| t.green_table_name.as_str())
        .collect();
    let guard = Guard {
        deleted_blue: super::release_journal::acted_on(
            &req.pipelines,
            ReleaseCommand::Decommission,
            &naming.prefix,
            &release.created_at,
            StatementVerb::Delete,
        )?,
        upstream: greens
            .iter()
            .map(|g| {
                let up = project
                    .graph
                    .ancestors(&[g])
                    .into_iter()
                    .filter(|a| a != g && greens.contains(a.as_str()))
                    .collect();
                (g.to_string(), up)
            })
            .collect(),
        partial: req.partial,
    };
    let connected = target::connect(&cfg, Some(&project))?;
    let lock = super::lock::lock_target(
        &req.pipelines,
        &connected,
        &naming.prefix,
        "pipeline rollback",
    )?;
    let rt = target::runtime()?;
    let signals = req.listen_early.then(|| {
        let _in = rt.enter();
        super::signals::Interrupts::listen()
    });
    let live = rt.block_on(target::live_statements(&connected))?;
    let plan = plan_guarded(&record, &naming, &live, req.verb, &guard)?;
    let release = record
        .releases
        .iter()
        .rev()
        .find(|r| r.created_at == plan.release)
        .expect("the planned release is in the record");
    let restore = restore::restore_for(&req.pipelines, release).map_err(|e| e.to_string());
    Ok(Prepared {
        _lock: lock,
        connected,
        rt,
        signals,
        pipelines: req.pipelines.clone(),
        record,
        timeout: req.timeout,
        plan,
        restore,
    })
}

impl Prepared {
    /// Acts on every green statement in order, then, when each reached its goal, records the
    /// release as rolled back in this environment (`pipelines/blue_green.json`, atomic and synced).
    ///
    /// Errors: the record cannot be written (the statements were acted on; the report says which).
    pub fn execute(self) -> Result<RollbackReport, OpsError> {
        let c = &self.connected;
        let names: Vec<String> = self
            .plan
            .statements
            .iter()
            .map(|t| t.statement.clone())
            .collect();
        let mut run = super::release_journal::Run::start(
            &self.pipelines,
            ReleaseCommand::Rollback,
            self.plan.action,
            &self.plan.statement_prefix,
            std::slice::from_ref(&self.plan.release),
            &names,
        )?;
        let table_of: BTreeMap<&str, &str> = self
            .plan
            .statements
            .iter()
            .map(|t| (t.statement.as_str(), t.green_table_name.as_str()))
            .collect();
        let early = self.signals;
        let acted = self.rt.block_on(async {
            let mut signals = early.unwrap_or_else(super::signals::Interrupts::listen);
            statement::act_watched(
                c.target.as_ref(),
                names.iter().map(String::as_str),
                self.plan.action,
                self.timeout,
                &c.scrubber,
                &mut |name| run.acted(table_of.get(name).copied().unwrap_or_default(), name),
                Some(&mut signals),
            )
            .await
        });
        run.end(acted.interrupted.is_some())?;
        let (results, interrupted) = (acted.results, acted.interrupted);
        let mut done = false;
        let closed = if interrupted.is_none() {
            recorded(&self.record, &self.plan, &results, &super::now_utc())
        } else {
            None
        };
        if let Some(record) = closed {
            let path = BlueGreenRecord::path(&self.pipelines);
            crate::fsutil::write_atomic_synced(&path, record.to_text().as_bytes())
                .map_err(|source| OpsError::Write { path, source })?;
            done = true;
        }
        Ok(RollbackReport {
            plan: self.plan,
            results,
            recorded: done,
            interrupted,
        })
    }
}
