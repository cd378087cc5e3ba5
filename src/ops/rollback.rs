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
}

impl RollbackReport {
    /// Every green statement reached its goal.
    pub fn success(&self) -> bool {
        self.results.iter().all(|r| r.error.is_none())
    }
}

/// Works out the rollback of the newest release not rolled back in the environment of `naming`.
///
/// Errors ([`OpsError::Refused`]): no release left to roll back; the newest one was decommissioned
/// here (its blue statements deleted).
pub fn plan(
    record: &BlueGreenRecord,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
    verb: StatementVerb,
) -> Result<RollbackPlan, OpsError> {
    let prefix = &naming.prefix;
    let Some(release) = record
        .releases
        .iter()
        .rev()
        .find(|r| !r.rolled_back_in(prefix))
    else {
        return Err(OpsError::Refused(format!(
            "{BLUE_GREEN_FILE} records no blue-green release to roll back for statement prefix '{prefix}'"
        )));
    };
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
    })
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
/// statement failed (the release stays open) or the release is no longer in the record.
pub fn recorded(
    record: &BlueGreenRecord,
    plan: &RollbackPlan,
    results: &[Done],
    at: &str,
) -> Option<BlueGreenRecord> {
    if results.iter().any(|r| r.error.is_some()) {
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
    let connected = target::connect(&cfg, Some(&project))?;
    let lock = super::lock::lock_target(
        &req.pipelines,
        &connected,
        &naming.prefix,
        "pipeline rollback",
    )?;
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&connected))?;
    let plan = plan(&record, &naming, &live, req.verb)?;
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
        let results = self.rt.block_on(act(
            self.connected.target.as_ref(),
            &self.plan,
            self.timeout,
            &self.connected.scrubber,
        ));
        let mut done = false;
        if let Some(record) = recorded(&self.record, &self.plan, &results, &super::now_utc()) {
            let path = BlueGreenRecord::path(&self.pipelines);
            crate::fsutil::write_atomic_synced(&path, record.to_text().as_bytes())
                .map_err(|source| OpsError::Write { path, source })?;
            done = true;
        }
        Ok(RollbackReport {
            plan: self.plan,
            results,
            recorded: done,
        })
    }
}
