//! `pipeline decommission`: after the green tables of a blue-green release are validated, stops or
//! deletes the blue statements of every release of `pipelines/blue_green.json` still open in this
//! environment (children first), and with `orphans` every statement under the project's
//! statement-name prefix that no table of the tree owns. Never a statement that a table of the tree
//! owns. A blue statement is stopped or deleted only when every green successor of its tables is
//! ready (the green jobs RUNNING; a green table without a job: its declaration COMPLETED), and
//! only when nothing outside the project still reads its table ([`super::readers`]: a running
//! statement not the project's, a Kafka consumer group with members on its topic; issue #25):
//! otherwise it is refused ([`Refused`], with its [`RefusalReason`]s), the release stays open and
//! the command fails, unless `force` (issue #29). Two steps, so that the caller can show the list and ask first: [`prepare`]
//! reads the target, [`Prepared::execute`] acts and records the decommission in the file.

use super::readers::{self, Blocker, GroupCheck, ReadersReport};
use super::statement::{self, Done, StatementVerb};
use super::status::{blue_green_statements, green_statements, orphans};
use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::deploy::journal::ReleaseCommand;
use crate::plan::StatementNaming;
use crate::target::{Phase, StatementState};
use crate::versioning::record::{BlueGreenRecord, Decommission, StatementRole};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

/// What to decommission.
#[derive(Debug, Clone)]
pub struct DecommissionRequest {
    pub pipelines: PathBuf,
    /// [`StatementVerb::Stop`] (resumable) or [`StatementVerb::Delete`].
    pub verb: StatementVerb,
    /// Also every orphan statement under the prefix.
    pub orphans: bool,
    /// Longest wait for one statement to reach the goal.
    pub timeout: Duration,
    pub allow_unknown: bool,
    /// Listen for SIGINT, SIGTERM and SIGHUP from the first look at the target on (no question
    /// will be asked): one that arrives before the first statement is acted on ends the run there,
    /// with nothing done. Otherwise they are listened for from [`Prepared::execute`] on.
    pub listen_early: bool,
    /// Act on blue statements that are refused — green successors not ready, readers left, readers
    /// that could not be read (each one is reported in [`DecommissionPlan::refused`] and
    /// [`DecommissionPlan::forced`]).
    pub force: bool,
}

/// Why a statement is decommissioned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Why {
    /// A blue statement whose table was versioned as `green_table_name`.
    Blue {
        blue_table_name: String,
        green_table_name: String,
        /// `created_at` of the release.
        release: String,
    },
    /// Under the prefix, owned by no table of the tree.
    Orphan,
}

/// One statement to act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    pub statement: String,
    /// Its phase now.
    pub phase: crate::target::Phase,
    pub why: Why,
}

/// A statement left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftAlone {
    pub statement: String,
    pub reason: String,
}

/// A green successor of a blue statement and the phase it must reach before the blue statement may
/// go: each job of the green table RUNNING; for a green table without a job, its declaration
/// COMPLETED (`docs/src/guide/blue-green-runbook.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GreenSuccessor {
    pub statement: String,
    /// Its phase now; `None` when the target does not have it (never deployed, deleted).
    pub phase: Option<Phase>,
    /// The phase it needs: RUNNING (a job) or COMPLETED (a declaration).
    pub needed: Phase,
    /// Set when it is not a successor of the blue statement's own tables but a green statement
    /// upstream of its green table (named here): that green table counts as live only when
    /// everything upstream of it in green is, or it would run on no input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_of: Option<String>,
    /// Set when its green table is a materialized table that the target's materialized-tables API
    /// lists: that resource's state decides, not the creating statement's phase (which may well be
    /// COMPLETED while the query runs apart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub materialized: Option<GreenMaterialized>,
}

/// A green materialized table as the materialized-tables API tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GreenMaterialized {
    /// `RUNNING, version 1` ([`crate::target::materialized::MaterializedTable::describe`]).
    pub state: String,
    /// Whether its query runs the active version
    /// ([`crate::target::materialized::MaterializedTable::is_live`]).
    pub live: bool,
}

impl GreenSuccessor {
    /// Its phase (`absent` when the target does not have it), or the state of its materialized
    /// table.
    pub fn phase_text(&self) -> &str {
        match &self.materialized {
            Some(m) => &m.state,
            None => crate::plan::status::phase_or_absent(self.phase.as_ref()),
        }
    }

    /// Whether it is in the phase it needs (a materialized table: its query runs).
    pub fn ready(&self) -> bool {
        match &self.materialized {
            Some(m) => m.live,
            None => self.phase.as_ref() == Some(&self.needed),
        }
    }
}

/// Why a blue statement may not go yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalReason {
    /// A green successor of one of its tables is not ready ([`Refused::not_ready`]).
    GreenNotReady,
    /// Something outside the project still reads one of its tables ([`Refused::readers`]).
    StillRead,
    /// Who reads its tables could not be told ([`Refused::unknown_readers`]): the consumer groups
    /// or a job plan could not be read.
    ReadersUnknown,
}

/// A blue statement that may not go yet, and why (at least one reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    pub statement: String,
    /// Its phase now.
    pub phase: crate::target::Phase,
    pub why: Why,
    /// Every reason, in [`RefusalReason`] order.
    pub reasons: Vec<RefusalReason>,
    /// The green successors that are not ready. A table whose release records no green statement
    /// has one with an empty name: nothing replaces it.
    pub not_ready: Vec<GreenSuccessor>,
    /// The readers of its tables that keep it (running statements, groups with members).
    pub readers: Vec<Blocker>,
    /// Why its readers could not be told (the error, secrets masked).
    pub unknown_readers: Vec<String>,
}

/// What a decommission will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecommissionPlan {
    pub action: StatementVerb,
    /// The statement-name prefix of this environment.
    pub statement_prefix: String,
    /// `created_at` of the open releases it closes.
    pub releases: Vec<String>,
    /// In order: blue statements children first (DML before DDL), then orphans.
    pub statements: Vec<Target>,
    /// Blue statements not acted on (owned by a table of the tree, absent, already stopped).
    pub left_alone: Vec<LeftAlone>,
    /// Blue statements that may not go yet ([`Refused`]). Without `force` they are not acted
    /// on, the command fails and the releases stay open; with `force` they are in `statements` too.
    pub refused: Vec<Refused>,
    /// Who reads the blue tables: statements not the project's, consumer groups on their topics,
    /// and how the groups were read.
    pub readers: ReadersReport,
    /// Whether `force` was given: `refused` lists what it ignored.
    pub forced: bool,
    /// The blue tables that are materialized tables on a target with a materialized-tables API
    /// (Confluent Cloud): their continuous query runs apart from the statement that created them,
    /// so it is stopped through that API (`spec.stopped`, with either verb: the table, its topic and
    /// its data are kept; `DROP MATERIALIZED TABLE` removes them when they are no longer needed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub materialized_tables: Vec<BlueMaterialized>,
}

impl DecommissionPlan {
    /// Whether there is anything to act on: a statement, or a blue materialized table to stop.
    pub fn has_work(&self) -> bool {
        !self.statements.is_empty()
            || self
                .materialized_tables
                .iter()
                .any(|m| matches!(m.action, MaterializedAction::Stop { .. }))
    }

    /// Whether blue statements (or blue materialized tables) are refused and not acted on (the
    /// command fails).
    pub fn blocked(&self) -> bool {
        !self.forced
            && (!self.refused.is_empty()
                || self
                    .materialized_tables
                    .iter()
                    .any(|m| matches!(m.action, MaterializedAction::Refused { .. })))
    }
}

/// A blue table that is a materialized table, and what the decommission does with its query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlueMaterialized {
    /// The blue table (the materialized table's name).
    pub blue_table_name: String,
    /// The table that replaces it.
    pub green_table_name: String,
    /// The blue table as the API lists it.
    pub materialized: crate::target::materialized::MaterializedTable,
    pub action: MaterializedAction,
}

/// What keeps a blue materialized table's query running: the same rules as a blue statement's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Holds {
    /// Green successors not ready (its own green materialized table judged by the API).
    pub not_ready: Vec<GreenSuccessor>,
    /// Readers still on it (running statements not the project's, consumer groups with members).
    pub readers: Vec<Blocker>,
    /// Readers that could not be told, or a table the API cannot tell apart.
    pub unknown: Vec<String>,
}

impl Holds {
    /// Nothing holds it.
    pub fn is_empty(&self) -> bool {
        self.not_ready.is_empty() && self.readers.is_empty() && self.unknown.is_empty()
    }

    /// What holds blue statement `statement`: its green successors not ready, the readers of its
    /// tables (`blockers`), and the readers that could not be told (`unknown`).
    fn of(
        statement: &str,
        successors: &BTreeMap<String, Vec<GreenSuccessor>>,
        blockers: &BTreeMap<String, Vec<Blocker>>,
        unknown: &[String],
    ) -> Holds {
        Holds {
            not_ready: successors
                .get(statement)
                .into_iter()
                .flatten()
                .filter(|g| !g.ready())
                .cloned()
                .collect(),
            readers: blockers.get(statement).cloned().unwrap_or_default(),
            unknown: unknown.to_vec(),
        }
    }

    /// `other` added, without repeats.
    fn merge(&mut self, other: Holds) {
        fn add<T: PartialEq>(to: &mut Vec<T>, from: Vec<T>) {
            for x in from {
                if !to.contains(&x) {
                    to.push(x);
                }
            }
        }
        add(&mut self.not_ready, other.not_ready);
        add(&mut self.readers, other.readers);
        add(&mut self.unknown, other.unknown);
    }
}

/// What happens to a blue materialized table's query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MaterializedAction {
    /// Its query is stopped (`spec.stopped = true`); with `--force`, `ignored` lists what would
    /// have refused it.
    Stop { ignored: Holds },
    /// Already stopped: nothing to do.
    AlreadyStopped,
    /// Not yet: something holds it ([`Holds`]), and `force` was not given.
    Refused { holds: Holds },
}

/// What a decommission did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecommissionReport {
    pub plan: DecommissionPlan,
    pub results: Vec<Done>,
    /// Whether `pipelines/blue_green.json` now records the releases as decommissioned here.
    pub recorded: bool,
    /// The signal (`SIGINT`, `SIGTERM`, `SIGHUP`) that ended the run before its last statement:
    /// `results` lists what was done, the release journal records it, and a rerun finishes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<super::signals::Interrupt>,
    /// Each blue materialized table whose query was to be stopped: its name and the error, if the
    /// stop failed (a rerun stops what is left: a stopped one is left alone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub materialized_results: Vec<MaterializedStopped>,
}

/// The stop of one blue materialized table's query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaterializedStopped {
    pub table_name: String,
    /// Why the stop failed (secrets masked); `None`: stopped.
    pub error: Option<String>,
}

impl DecommissionReport {
    /// Every statement and materialized table reached its goal and none was refused (or `force`
    /// was given).
    pub fn success(&self) -> bool {
        self.interrupted.is_none()
            && !self.plan.blocked()
            && self.results.iter().all(|r| r.error.is_none())
            && self.materialized_results.iter().all(|r| r.error.is_none())
    }
}

/// A decommission ready to run.
pub struct Prepared {
    /// This project's target lock, held from [`prepare`] to the end of [`Prepared::execute`].
    _lock: Option<super::lock::TargetLock>,
    connected: Connected,
    rt: tokio::runtime::Runtime,
    /// Listening since [`prepare`] ([`DecommissionRequest::listen_early`]).
    signals: Option<super::signals::Interrupts>,
    pipelines: PathBuf,
    record: BlueGreenRecord,
    timeout: Duration,
    pub plan: DecommissionPlan,
}

/// Works out what to stop or delete.
///
/// Errors: errors in the project, an unreadable `blue_green.json`, a target that cannot be listed.
pub fn prepare(ctx: &Context, req: &DecommissionRequest) -> Result<Prepared, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing decommissioned: fix the errors above",
    )?;
    let naming = StatementNaming::from_config(&cfg);
    let suffix = super::unit_tests::suffix(&cfg, None)?;
    let record = BlueGreenRecord::read(&req.pipelines)?;
    // The record is input, not truth: only entries that follow from the tree are acted on.
    record.check_releases(
        &project,
        &req.pipelines,
        (0..record.releases.len()).filter(|i| record.releases[*i].is_open_in(&naming.prefix)),
    )?;
    let connected = target::connect(&cfg, Some(&project))?;
    let lock = super::lock::lock_target(
        &req.pipelines,
        &connected,
        &naming.prefix,
        "pipeline decommission",
    )?;
    let rt = target::runtime()?;
    let signals = req.listen_early.then(|| {
        let _in = rt.enter();
        super::signals::Interrupts::listen()
    });
    let live = rt.block_on(target::live_statements(&connected))?;
    let owned = naming.owned_statements(&project);
    let found = rt.block_on(readers::blue_readers(
        &cfg, &project, &record, &naming, &connected, &live,
    ));
    // Readers that could not be told keep every blue statement (unless forced).
    let mut unknown: Vec<String> = found
        .unknown_statements
        .iter()
        .map(|(n, e)| format!("what statement {n} reads: {e}"))
        .collect();
    if let GroupCheck::Failed { error } = &found.consumer_groups {
        unknown.push(format!("consumer groups: {error}"));
    }
    // With `orphans`, the orphans go in the same run: they keep no blue statement.
    let going: BTreeSet<String> = if req.orphans {
        orphans(&project, &naming, &suffix, &live)
            .into_iter()
            .map(|o| o.statement)
            .collect()
    } else {
        BTreeSet::new()
    };
    let mut statements = Vec::new();
    let mut left_alone = Vec::new();
    let mut seen = BTreeSet::new();
    let mut releases = Vec::new();
    let open: Vec<_> = record
        .releases
        .iter()
        .filter(|r| r.is_open_in(&naming.prefix))
        .collect();
    let mts = materialized_of_releases(&project, &open, &connected, &cfg, &rt)?;
    let (successors, mut blockers) =
        successors_and_blockers(&open, &naming, &project.graph, &found, &going, &live, &mts);
    let mut materialized_tables: Vec<BlueMaterialized> = Vec::new();
    let mut refused = Vec::new();
    for release in &open {
        releases.push(release.created_at.clone());
        // Children first: the release lists parents first; DML before DDL within a table.
        for t in release.tables.iter().rev() {
            // A blue materialized table: its query is stopped through the API, its statements
            // left alone; the same rules hold it as a blue statement.
            if let Some(blue_mt) = mts.blue.get(&t.blue_table_name) {
                if materialized_tables
                    .iter()
                    .any(|m| m.blue_table_name == t.blue_table_name)
                {
                    continue;
                }
                let mut holds = Holds::default();
                let mut job: Option<String> = None;
                let mut own: Vec<String> = Vec::new();
                for (recorded, _) in blue_green_statements(&naming, &release.statement_prefix, t) {
                    let blue = recorded.name;
                    if !seen.insert(blue.clone()) {
                        continue;
                    }
                    holds.merge(Holds::of(&blue, &successors, &blockers, &[]));
                    if recorded.role == StatementRole::Job {
                        job.get_or_insert(blue.clone());
                    }
                    own.push(blue);
                }
                holds.unknown.extend(unknown.iter().cloned());
                let action = if blue_mt.stopped {
                    MaterializedAction::AlreadyStopped
                } else if holds.is_empty() || req.force {
                    MaterializedAction::Stop { ignored: holds }
                } else {
                    // Its query keeps reading its parents' blue tables: they stay too.
                    keep_blue_parents(
                        &mut blockers,
                        &project.graph,
                        &naming,
                        &open,
                        t,
                        job.as_deref().unwrap_or(&t.blue_table_name),
                        blue_mt.phase.clone(),
                    );
                    MaterializedAction::Refused { holds }
                };
                // `--delete` also deletes its creating statements once its query may stop (the
                // table is a resource of its own: they do not drop it); otherwise they stay.
                let delete_own = req.verb == StatementVerb::Delete
                    && matches!(action, MaterializedAction::Stop { .. });
                for blue in own {
                    match live.get(&blue) {
                        Some(l) if delete_own && !owned.contains_key(&blue) => {
                            statements.push(Target {
                                phase: l.phase.clone(),
                                why: Why::Blue {
                                    blue_table_name: t.blue_table_name.clone(),
                                    green_table_name: t.green_table_name.clone(),
                                    release: release.created_at.clone(),
                                },
                                statement: blue,
                            });
                        }
                        _ => left_alone.push(LeftAlone {
                            statement: blue,
                            reason: format!(
                                "creates materialized table {}, whose query runs apart: it is stopped through the materialized-tables API",
                                t.blue_table_name
                            ),
                        }),
                    }
                }
                materialized_tables.push(BlueMaterialized {
                    blue_table_name: t.blue_table_name.clone(),
                    green_table_name: t.green_table_name.clone(),
                    materialized: blue_mt.clone(),
                    action,
                });
                continue;
            }
            let unclear = mts.unclear.get(&t.blue_table_name);
            for (recorded, _) in blue_green_statements(&naming, &release.statement_prefix, t) {
                let blue = recorded.name;
                if !seen.insert(blue.clone()) {
                    continue;
                }
                if let Some(reason) =
                    left_alone_because(owned.get(&blue), live.get(&blue), req.verb, recorded.role)
                {
                    left_alone.push(LeftAlone {
                        statement: blue,
                        reason,
                    });
                    continue;
                }
                let target = Target {
                    phase: live[&blue].phase.clone(),
                    why: Why::Blue {
                        blue_table_name: t.blue_table_name.clone(),
                        green_table_name: t.green_table_name.clone(),
                        release: release.created_at.clone(),
                    },
                    statement: blue,
                };
                let unknown_here: Vec<String> = unknown.iter().chain(unclear).cloned().collect();
                if let Some(r) = refusal(&target, &successors, &blockers, &unknown_here) {
                    refused.push(r);
                    if !req.force {
                        // The refused blue job keeps reading its parents' blue tables: their blue
                        // statements stay too, or it would be left without input.
                        if recorded.role == StatementRole::Job {
                            keep_blue_parents(
                                &mut blockers,
                                &project.graph,
                                &naming,
                                &open,
                                t,
                                &target.statement,
                                live.get(&target.statement).map(|s| s.phase.clone()),
                            );
                        }
                        continue;
                    }
                }
                statements.push(target);
            }
        }
    }
    if req.orphans {
        add_orphans(
            orphans(&project, &naming, &suffix, &live),
            req.verb,
            &mut seen,
            &mut statements,
            &mut left_alone,
        );
    }
    Ok(Prepared {
        _lock: lock,
        connected,
        rt,
        signals,
        pipelines: req.pipelines.clone(),
        record,
        timeout: req.timeout,
        plan: DecommissionPlan {
            action: req.verb,
            statement_prefix: naming.prefix,
            releases,
            statements,
            left_alone,
            refused,
            readers: found,
            forced: req.force,
            materialized_tables,
        },
    })
}

/// Why blue statement `target` must not go yet, if it must not: a green successor not ready, a
/// reader still on its tables (`blockers`), or readers that could not be told (`unknown`).
fn refusal(
    target: &Target,
    successors: &BTreeMap<String, Vec<GreenSuccessor>>,
    blockers: &BTreeMap<String, Vec<Blocker>>,
    unknown: &[String],
) -> Option<Refused> {
    let holds = Holds::of(&target.statement, successors, blockers, unknown);
    let mut reasons = Vec::new();
    if !holds.not_ready.is_empty() {
        reasons.push(RefusalReason::GreenNotReady);
    }
    if !holds.readers.is_empty() {
        reasons.push(RefusalReason::StillRead);
    }
    if !holds.unknown.is_empty() {
        reasons.push(RefusalReason::ReadersUnknown);
    }
    (!reasons.is_empty()).then(|| Refused {
        statement: target.statement.clone(),
        phase: target.phase.clone(),
        why: target.why.clone(),
        reasons,
        not_ready: holds.not_ready,
        readers: holds.readers,
        unknown_readers: holds.unknown,
    })
}

/// `--orphans`: the statements under the prefix that no table owns (`found`) go too. Orphans are names only:
/// those built as DML names (jobs) go first, a reader before the table it reads; the order of the
/// rest does not matter. A stopped one is left alone by `stop`.
fn add_orphans(
    mut found: Vec<super::status::Orphan>,
    verb: StatementVerb,
    seen: &mut BTreeSet<String>,
    statements: &mut Vec<Target>,
    left_alone: &mut Vec<LeftAlone>,
) {
    found.sort_by_key(|o| (!o.statement.contains("-dml-"), o.statement.clone()));
    for o in found {
        if !seen.insert(o.statement.clone()) {
            continue;
        }
        if verb == StatementVerb::Stop && o.phase == Phase::Stopped {
            left_alone.push(LeftAlone {
                statement: o.statement,
                reason: "already STOPPED".into(),
            });
            continue;
        }
        statements.push(Target {
            statement: o.statement,
            phase: o.phase,
            why: Why::Orphan,
        });
    }
}

/// For each blue statement of the open releases: its green successors, over every table whose blue
/// statements include it (a statement set writing two tables has the greens of both), then the
/// green statements upstream of those green tables in `graph` (a green table counts as live only
/// when everything upstream of it in green is), and its blockers, over every table it writes or
/// declares (the readers of those blue tables, except the statements `going` in the same run).
fn successors_and_blockers(
    open: &[&crate::versioning::record::Release],
    naming: &StatementNaming,
    graph: &crate::graph::PipelineGraph,
    found: &ReadersReport,
    going: &BTreeSet<String>,
    live: &BTreeMap<String, StatementState>,
    mts: &ReleaseMaterialized,
) -> (
    BTreeMap<String, Vec<GreenSuccessor>>,
    BTreeMap<String, Vec<Blocker>>,
) {
    // The green successors of each blue statement, over every table (of every open release) whose
    // blue statements include it: a statement set writing two tables has the greens of both.
    let mut successors: BTreeMap<String, Vec<GreenSuccessor>> = BTreeMap::new();
    // The blockers of each blue statement, over every table it writes or declares.
    let mut blockers: BTreeMap<String, Vec<Blocker>> = BTreeMap::new();
    // Each green table's own successors, and the blue statements of each green table.
    let mut green_of: BTreeMap<String, Vec<GreenSuccessor>> = BTreeMap::new();
    let mut users: Vec<(String, Vec<String>)> = Vec::new();
    for release in open {
        for t in &release.tables {
            let table_blockers = found
                .of(&t.blue_table_name)
                .map(readers::TableReaders::blockers)
                .unwrap_or_default();
            for (blue, _) in blue_green_statements(naming, &release.statement_prefix, t) {
                let list = blockers.entry(blue.name).or_default();
                for b in &table_blockers {
                    let leaving = matches!(b, Blocker::RunningStatement { statement, .. } if going.contains(statement));
                    if !leaving && !list.contains(b) {
                        list.push(b.clone());
                    }
                }
            }
            let mut greens = green_statements(naming, &release.statement_prefix, t);
            // A green table with a job is ready when its jobs run (its declaration may have been
            // deleted once COMPLETED, as Confluent users do); one without a job needs its
            // declaration COMPLETED.
            if greens.iter().any(|g| g.role == StatementRole::Job) {
                greens.retain(|g| g.role == StatementRole::Job);
            }
            let mut own: Vec<GreenSuccessor> = greens
                .iter()
                .map(|g| GreenSuccessor {
                    statement: g.name.clone(),
                    phase: live.get(&g.name).map(|s| s.phase.clone()),
                    needed: match g.role {
                        StatementRole::Job => Phase::Running,
                        StatementRole::Declaration => Phase::Completed,
                    },
                    upstream_of: None,
                    materialized: mts.green.get(&t.green_table_name).cloned(),
                })
                .collect();
            if own.is_empty() {
                own.push(GreenSuccessor {
                    statement: String::new(),
                    phase: None,
                    needed: Phase::Running,
                    upstream_of: None,
                    materialized: None,
                });
            }
            green_of.insert(t.green_table_name.clone(), own);
            users.push((
                t.green_table_name.clone(),
                blue_green_statements(naming, &release.statement_prefix, t)
                    .into_iter()
                    .map(|(b, _)| b.name)
                    .collect(),
            ));
        }
    }
    for (green, blues) in users {
        // Its own green statements, then those of every green table upstream of it.
        let mut all: Vec<GreenSuccessor> = green_of[&green].clone();
        for a in graph.ancestors(&[green.as_str()]) {
            if a == green {
                continue;
            }
            for g in green_of.get(&a).into_iter().flatten() {
                all.push(GreenSuccessor {
                    upstream_of: Some(green.clone()),
                    ..g.clone()
                });
            }
        }
        for blue in blues {
            let list = successors.entry(blue).or_default();
            for g in &all {
                let dup = list.iter().any(|s| {
                    s.statement == g.statement
                        && (!s.statement.is_empty() || s.upstream_of == g.upstream_of)
                });
                if !dup {
                    list.push(g.clone());
                }
            }
        }
    }
    (successors, blockers)
}

/// Why the blue statement is not touched, if it is not: the tree owns it (a table of the tree is
/// named so), it is absent, or `stop` has nothing to stop (a declaration, or STOPPED already).
fn left_alone_because(
    owner: Option<&String>,
    live: Option<&StatementState>,
    verb: StatementVerb,
    role: StatementRole,
) -> Option<String> {
    if let Some(owner) = owner {
        return Some(format!("owned by table {owner} of the tree"));
    }
    match live {
        None => Some("absent".to_string()),
        Some(s) if verb == StatementVerb::Stop && role == StatementRole::Declaration => {
            Some(format!(
                "declares the table, runs no job ({}): nothing to stop",
                s.phase
            ))
        }
        Some(s) if verb == StatementVerb::Stop && matches!(s.phase, Phase::Stopped) => {
            Some("already STOPPED".to_string())
        }
        Some(_) => None,
    }
}

/// The materialized tables of the open releases, as the target's materialized-tables API lists
/// them (Confluent Cloud), by table name.
#[derive(Debug, Default)]
struct ReleaseMaterialized {
    /// Blue tables the API lists (and no table of the tree is named so).
    blue: BTreeMap<String, crate::target::materialized::MaterializedTable>,
    /// Green materialized tables of the tree, as the API tells them (one it does not list, or
    /// cannot tell apart, is not live).
    green: BTreeMap<String, GreenMaterialized>,
    /// Blue tables whose materialized table cannot be told apart (several of that name in the
    /// environment, no cluster id known): why.
    unclear: BTreeMap<String, String>,
}

/// [`ReleaseMaterialized`]: listed once when a green table of an open release is a materialized
/// table in the tree, each name looked up in the project's Kafka cluster
/// ([`crate::target::materialized::find`]). Empty on a target without the API.
///
/// Errors: the API answers an error (nothing is acted on).
fn materialized_of_releases(
    project: &crate::project::Project,
    open: &[&crate::versioning::record::Release],
    c: &Connected,
    cfg: &crate::config::Config,
    rt: &tokio::runtime::Runtime,
) -> Result<ReleaseMaterialized, OpsError> {
    let mut out = ReleaseMaterialized::default();
    let tables: Vec<&crate::versioning::record::GreenTable> = open
        .iter()
        .flat_map(|r| r.tables.iter())
        .filter(|t| {
            project
                .inventory
                .tables
                .get(&t.green_table_name)
                .is_some_and(|t| t.is_materialized_table())
        })
        .collect();
    if tables.is_empty() {
        return Ok(out);
    }
    let Some(listed) = rt
        .block_on(c.target.materialized_tables())
        .map_err(|e| c.error("listing materialized tables", e))?
    else {
        return Ok(out);
    };
    let cluster = crate::target::kafka_rest::cluster_id(cfg);
    for t in tables {
        use crate::target::materialized::find;
        let green = match find(&listed, &t.green_table_name, cluster.as_deref()) {
            Ok(Some(g)) => GreenMaterialized {
                state: g.describe(),
                live: g.is_live(),
            },
            Ok(None) => GreenMaterialized {
                state: "not listed by the materialized-tables API".into(),
                live: false,
            },
            Err(why) => GreenMaterialized {
                state: why,
                live: false,
            },
        };
        out.green.insert(t.green_table_name.clone(), green);
        if project.inventory.tables.contains_key(&t.blue_table_name) {
            continue;
        }
        match find(&listed, &t.blue_table_name, cluster.as_deref()) {
            Ok(Some(b)) => {
                out.blue.insert(t.blue_table_name.clone(), b.clone());
            }
            Ok(None) => {}
            Err(why) => {
                out.unclear.insert(t.blue_table_name.clone(), why);
            }
        }
    }
    Ok(out)
}

/// Adds, to the blockers of the blue statements of every parent of `t`'s green table that is a
/// green table of an open release, the refused blue job `kept` of `t` (which reads that parent's
/// blue table). Called children first, so a refusal travels up to the sources of the release.
fn keep_blue_parents(
    blockers: &mut BTreeMap<String, Vec<Blocker>>,
    graph: &crate::graph::PipelineGraph,
    naming: &StatementNaming,
    open: &[&crate::versioning::record::Release],
    t: &crate::versioning::record::GreenTable,
    kept: &str,
    phase: Option<Phase>,
) {
    let phase = phase.unwrap_or(Phase::Running);
    for parent in graph.parents(&t.green_table_name) {
        for release in open {
            for pt in release
                .tables
                .iter()
                .filter(|pt| pt.green_table_name == parent)
            {
                let b = Blocker::RunningStatement {
                    table: pt.blue_table_name.clone(),
                    statement: kept.to_string(),
                    phase: phase.clone(),
                };
                for (blue, _) in blue_green_statements(naming, &release.statement_prefix, pt) {
                    let list = blockers.entry(blue.name).or_default();
                    if !list.contains(&b) {
                        list.push(b.clone());
                    }
                }
            }
        }
    }
}

impl Prepared {
    /// Acts on every statement in order (a failure is recorded and the next one tried), each one
    /// written to the release journal ([`super::release_journal`]) as soon as the target accepted
    /// it; SIGINT, SIGTERM or SIGHUP ends the run after the request under way
    /// ([`DecommissionReport::interrupted`]). Then, when every blue statement reached its goal and
    /// none was refused (or `force` was given), records the open releases as decommissioned in this
    /// environment (`pipelines/blue_green.json`, written atomically), with the blue statements that
    /// earlier interrupted or refused runs had already acted on.
    ///
    /// Errors: the journal cannot be opened, or the record cannot be written (the statements were
    /// acted on; the journal says which).
    pub fn execute(self) -> Result<DecommissionReport, OpsError> {
        let c = &self.connected;
        let verb = self.plan.action;
        let names: Vec<String> = self
            .plan
            .statements
            .iter()
            .map(|t| t.statement.clone())
            .collect();
        let mut run = super::release_journal::Run::start(
            &self.pipelines,
            ReleaseCommand::Decommission,
            verb,
            &self.plan.statement_prefix,
            &self.plan.releases,
            &names,
        )?;
        let table_of: BTreeMap<&str, &str> = self
            .plan
            .statements
            .iter()
            .map(|t| {
                let table = match &t.why {
                    Why::Blue {
                        blue_table_name, ..
                    } => blue_table_name.as_str(),
                    Why::Orphan => "",
                };
                (t.statement.as_str(), table)
            })
            .collect();
        let early = self.signals;
        let acted = self.rt.block_on(async {
            let mut signals = early.unwrap_or_else(super::signals::Interrupts::listen);
            statement::act_watched(
                c.target.as_ref(),
                names.iter().map(String::as_str),
                verb,
                self.timeout,
                &c.scrubber,
                &mut |name| run.acted(table_of.get(name).copied().unwrap_or_default(), name),
                Some(&mut signals),
            )
            .await
        });
        run.end(acted.interrupted.is_some())?;
        let results = acted.results;
        let interrupted = acted.interrupted;
        // The blue materialized tables' queries, once their statements are done.
        let mut materialized_results = Vec::new();
        if interrupted.is_none() {
            for m in &self.plan.materialized_tables {
                if !matches!(m.action, MaterializedAction::Stop { .. }) {
                    continue;
                }
                let r = self.rt.block_on(
                    c.target
                        .set_materialized_table_stopped(&m.materialized, true),
                );
                materialized_results.push(MaterializedStopped {
                    table_name: m.blue_table_name.clone(),
                    error: r.err().map(|e| c.scrubber.scrub(&e.to_string())),
                });
            }
        }
        let materialized_failed = materialized_results.iter().any(|r| r.error.is_some());
        let blue_failed = results
            .iter()
            .zip(&self.plan.statements)
            .any(|(r, t)| r.error.is_some() && matches!(t.why, Why::Blue { .. }));
        let mut recorded = false;
        // A refused blue statement keeps its release open (unless forced); so does an interrupt.
        if interrupted.is_none()
            && !blue_failed
            && !materialized_failed
            && !self.plan.blocked()
            && !self.plan.releases.is_empty()
        {
            let mut record = self.record.clone();
            let at = super::now_utc();
            for release in record
                .releases
                .iter_mut()
                .filter(|r| self.plan.releases.contains(&r.created_at))
            {
                if release.decommissioned_in(&self.plan.statement_prefix) {
                    continue;
                }
                let mut names: BTreeSet<String> = self
                    .plan
                    .statements
                    .iter()
                    .filter(|t| matches!(&t.why, Why::Blue { release: r, .. } if *r == release.created_at))
                    .map(|t| t.statement.clone())
                    .collect();
                // What earlier runs (interrupted, killed, refused in part) did to this release: of
                // the statements a run journalled (it may have served several releases and orphans),
                // this release's blue statements only.
                let here = StatementNaming {
                    prefix: self.plan.statement_prefix.clone(),
                };
                let own: BTreeSet<String> = release
                    .tables
                    .iter()
                    .flat_map(|t| blue_green_statements(&here, &release.statement_prefix, t))
                    .map(|(b, _)| b.name)
                    .collect();
                names.extend(
                    super::release_journal::acted_on(
                        &self.pipelines,
                        ReleaseCommand::Decommission,
                        &self.plan.statement_prefix,
                        &release.created_at,
                        verb,
                    )?
                    .into_iter()
                    .filter(|n| own.contains(n)),
                );
                release.decommissioned.push(Decommission {
                    statement_prefix: self.plan.statement_prefix.clone(),
                    at: at.clone(),
                    action: verb.as_str().to_string(),
                    statements: names.into_iter().collect(),
                });
            }
            let path = BlueGreenRecord::path(&self.pipelines);
            crate::fsutil::write_atomic_synced(&path, record.to_text().as_bytes())
                .map_err(|source| OpsError::Write { path, source })?;
            recorded = true;
        }
        Ok(DecommissionReport {
            plan: self.plan,
            results,
            recorded,
            interrupted,
            materialized_results,
        })
    }
}
