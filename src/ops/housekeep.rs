//! `project housekeep-statements`: deletes (or stops, or resumes) the statements that pile up in an
//! environment — COMPLETED DDL and queries, FAILED attempts, workspace statements — chosen from
//! **one** paginated listing by name prefix, phase, age (`metadata.created_at`) and compute pool.
//! shift_left's command, with its defaults (`--starts-with workspace`, COMPLETED and FAILED, delete),
//! and a safer guard: where shift_left refused prefixes starting with `dev`/`stage`/`prod`, flinkpipe
//! never touches, unless it is named with `--statement-name`:
//! - a **running** statement of the project's own pipeline (owned by a table of the tree: PENDING,
//!   RUNNING, DEGRADED or STOPPING);
//! - any live statement at all when there is no pipelines folder (the project's cannot be told apart);
//! - a blue or green statement of a blue-green release still open in this environment
//!   (`pipelines/blue_green.json`), whatever its phase: the blue ones serve production until
//!   decommissioned.
//!
//! Each statement is read again right before it is acted on (the listing may be minutes old after
//! the confirmation prompt); one the filters no longer select is skipped and reported.
//!
//! Two steps, so that the caller can list and ask first: [`prepare`] reads the target,
//! [`Prepared::execute`] acts, one statement at a time, each waited for.

use super::statement::{self, StatementVerb};
use super::status::blue_green_statements;
use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::plan::StatementNaming;
pub use crate::target::Phase;
use crate::target::StatementState;
use crate::time::parse_rfc3339;
use crate::versioning::record::{BLUE_GREEN_FILE, BlueGreenRecord};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

/// shift_left's default name prefix: the statements Confluent's workspaces leave behind.
pub const DEFAULT_PREFIX: &str = "workspace";

/// What to housekeep.
#[derive(Debug, Clone)]
pub struct HousekeepRequest {
    pub pipelines: PathBuf,
    /// Names starting with this (default [`DEFAULT_PREFIX`] unless statements are named).
    pub starts_with: Option<String>,
    /// Phases to act on (default: COMPLETED and FAILED to delete, RUNNING and DEGRADED to stop,
    /// STOPPED to resume).
    pub status: Vec<Phase>,
    /// Only statements created at least this many days ago.
    pub age_days: u64,
    /// Delete (default), stop or resume.
    pub action: StatementVerb,
    /// Statements named explicitly (`--statement-name`, repeatable): acted on whatever their
    /// phase, prefix or age, and even when the project runs them.
    pub statement_names: Vec<String>,
    /// Only statements in this compute pool.
    pub compute_pool_id: Option<String>,
    /// Longest wait for one statement.
    pub timeout: Duration,
    pub allow_unknown: bool,
}

/// One statement to act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub statement: String,
    pub phase: crate::target::Phase,
    /// `metadata.created_at`, when the target says.
    pub created_at: Option<String>,
    /// Whole days since it was created.
    pub age_days: Option<u64>,
    /// The table of the project that owns it.
    pub table_name: Option<String>,
}

/// A statement the filters matched but that is left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kept {
    pub statement: String,
    pub phase: crate::target::Phase,
    pub reason: String,
}

/// What housekeeping will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HousekeepPlan {
    pub action: StatementVerb,
    /// The filters in words (`name starts with 'workspace', COMPLETED or FAILED, created ≥ 0 days ago`).
    pub filters: String,
    /// Statements listed (the whole environment).
    pub listed: usize,
    pub statements: Vec<Candidate>,
    pub left_alone: Vec<Kept>,
}

/// The result of one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Done {
    pub statement: String,
    /// The phase reached: `None` when acting failed (serialised `null`), `Some(None)` once gone
    /// (serialised `absent`).
    #[serde(serialize_with = "crate::plan::status::serialize_reached")]
    pub phase: Option<Option<Phase>>,
    /// `None`: done (or skipped); else the (masked) error.
    pub error: Option<String>,
    /// Why it was not acted on after all (read again right before acting: gone, or no longer
    /// selected); `None` when it was acted on or failed.
    pub skipped: Option<String>,
}

/// What housekeeping did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HousekeepReport {
    pub plan: HousekeepPlan,
    pub results: Vec<Done>,
}

impl HousekeepReport {
    pub fn success(&self) -> bool {
        self.results.iter().all(|r| r.error.is_none())
    }
}

/// Housekeeping ready to run.
pub struct Prepared {
    /// This project's target lock ([`super::lock`]), held until the run ends.
    _lock: Option<super::lock::TargetLock>,
    connected: Connected,
    rt: tokio::runtime::Runtime,
    timeout: Duration,
    selector: Selector,
    pub plan: HousekeepPlan,
}

/// The phases an action applies to by default, and those it can apply to at all.
fn phases_for(action: StatementVerb) -> (&'static [Phase], &'static [Phase]) {
    match action {
        StatementVerb::Delete => (
            &[Phase::Completed, Phase::Failed],
            &[
                Phase::Completed,
                Phase::Failed,
                Phase::Stopped,
                Phase::Running,
                Phase::Degraded,
                Phase::Pending,
            ],
        ),
        StatementVerb::Stop => (
            &[Phase::Running, Phase::Degraded],
            &[Phase::Running, Phase::Degraded, Phase::Pending],
        ),
        StatementVerb::Resume => (&[Phase::Stopped], &[Phase::Stopped]),
    }
}

/// Phases of a statement the project is running: never touched unless named. Live
/// ([`Phase::is_live`]), or being stopped.
fn is_running(p: &Phase) -> bool {
    p.is_live() || *p == Phase::Stopping
}

/// The statements of the releases still open in this environment (`pipelines/blue_green.json`): the
/// blue ones still serve production until decommissioned, the green ones replace them. Name →
/// why it is protected.
pub fn open_release_statements(
    record: &BlueGreenRecord,
    naming: &StatementNaming,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for release in record
        .releases
        .iter()
        .filter(|r| r.is_open_in(&naming.prefix))
    {
        for t in &release.tables {
            for (blue, green) in blue_green_statements(naming, &release.statement_prefix, t) {
                out.entry(blue.name).or_insert_with(|| {
                    format!(
                        "a blue statement of table {} in the open blue-green release of {} ({})",
                        t.blue_table_name, release.created_at, BLUE_GREEN_FILE
                    )
                });
                if let Some(g) = green {
                    out.entry(g).or_insert_with(|| {
                        format!(
                            "a green statement of table {} in the open blue-green release of {} ({})",
                            t.green_table_name, release.created_at, BLUE_GREEN_FILE
                        )
                    });
                }
            }
        }
    }
    out
}

/// What the filters say of one statement.
enum Judged {
    /// Act on it.
    Act(Candidate),
    /// The filters do not select it.
    Ignore,
    /// The filters select it but it is protected (why).
    Keep(Kept),
}

/// The filters and protections, applied to the listing and again to each statement right before
/// acting on it.
struct Selector {
    action: StatementVerb,
    named: BTreeSet<String>,
    prefix: Option<String>,
    phases: Vec<Phase>,
    age_days: u64,
    compute_pool_id: Option<String>,
    /// Statement → table of the project.
    owned: BTreeMap<String, String>,
    /// Statements of open blue-green releases → why.
    releases: BTreeMap<String, String>,
    /// Whether a project was read: without one, no live statement can be told apart from the
    /// project's, so none is touched unless named.
    has_project: bool,
    /// Seconds since the epoch.
    now: i64,
}

impl Selector {
    fn judge(&self, s: &StatementState) -> Judged {
        let age = s
            .meta
            .created_at
            .as_deref()
            .and_then(parse_rfc3339)
            .map(|t| ((self.now - t).max(0) / 86_400) as u64);
        let candidate = Candidate {
            statement: s.name.clone(),
            phase: s.phase.clone(),
            created_at: s.meta.created_at.clone(),
            age_days: age,
            table_name: self.owned.get(&s.name).cloned(),
        };
        if self.named.contains(&s.name) {
            return Judged::Act(candidate);
        }
        let Some(prefix) = &self.prefix else {
            return Judged::Ignore;
        };
        if !s.name.starts_with(prefix.as_str())
            || !self.phases.contains(&s.phase)
            || self
                .compute_pool_id
                .as_ref()
                .is_some_and(|p| s.meta.compute_pool_id.as_ref() != Some(p))
        {
            return Judged::Ignore;
        }
        let keep = |reason: String| {
            Judged::Keep(Kept {
                statement: s.name.clone(),
                phase: s.phase.clone(),
                reason,
            })
        };
        let verb = self.action.as_str();
        match age {
            Some(a) if a < self.age_days => return Judged::Ignore,
            None if self.age_days > 0 => {
                return keep(format!(
                    "its age is unknown (the target gives no creation time), --age {} asks for older ones",
                    self.age_days
                ));
            }
            _ => {}
        }
        if let Some(why) = self.releases.get(&s.name) {
            return keep(format!(
                "{why}: decommission it with `pipeline decommission`, or name it with --statement-name to {verb} it"
            ));
        }
        if is_running(&s.phase) {
            if let Some(table) = &candidate.table_name {
                return keep(format!(
                    "a running statement of the project's pipeline (table {table}): name it with --statement-name to {verb} it"
                ));
            }
            if !self.has_project {
                return keep(format!(
                    "a live statement, and without a pipelines folder the project's statements cannot be told apart: name it with --statement-name to {verb} it"
                ));
            }
        }
        Judged::Act(candidate)
    }
}

/// Works out what to act on, from one listing of the target.
///
/// Errors (before any server is contacted): an empty or blank `starts_with` (it would select every
/// statement of the environment); a status the action cannot apply to (`--action resume
/// --status FAILED`); then errors in the project or its blue-green record, a target that cannot be
/// listed, a named statement the target does not know.
pub fn prepare(ctx: &Context, req: &HousekeepRequest) -> Result<Prepared, OpsError> {
    if let Some(p) = &req.starts_with
        && p.trim().is_empty()
    {
        return Err(OpsError::Usage(format!(
            "--starts-with {p:?}: an empty (or blank) prefix would match every statement of the environment; give a prefix, or name statements with --statement-name"
        )));
    }
    let (defaults, possible) = phases_for(req.action);
    for p in &req.status {
        if !possible.contains(p) {
            return Err(OpsError::Usage(format!(
                "--action {} does not apply to {p} statements (it applies to {})",
                req.action.as_str(),
                possible
                    .iter()
                    .map(Phase::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let phases: Vec<Phase> = if req.status.is_empty() {
        defaults.to_vec()
    } else {
        req.status.clone()
    };
    let prefix = req.starts_with.clone().or_else(|| {
        req.statement_names
            .is_empty()
            .then(|| DEFAULT_PREFIX.to_string())
    });
    let cfg = ctx.project_config(&req.pipelines)?;
    let has_project = req.pipelines.is_dir();
    let (owned, releases) = if has_project {
        let project = ctx.load_valid_project(
            &cfg,
            &req.pipelines,
            req.allow_unknown,
            "nothing housekept: fix the errors above",
        )?;
        let naming = StatementNaming::from_config(&cfg);
        let record = BlueGreenRecord::read(&req.pipelines)?;
        (
            naming.owned_statements(&project),
            open_release_statements(&record, &naming),
        )
    } else {
        ctx.console.note(&format!(
            "note: no pipelines folder at {}: the project's statements cannot be recognised, so no live (PENDING, RUNNING, DEGRADED or STOPPING) statement is touched unless named with --statement-name",
            req.pipelines.display()
        ));
        Default::default()
    };
    let connected = target::connect(&cfg, None)?;
    let lock = super::lock::lock_target(
        &req.pipelines,
        &connected,
        &StatementNaming::from_config(&cfg).prefix,
        "project housekeep-statements",
    )?;
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&connected))?;
    for n in &req.statement_names {
        if !live.contains_key(n) {
            return Err(OpsError::StatementNotFound {
                name: n.clone(),
                target: connected.scrubber.scrub(&connected.target.describe()),
                hint: crate::plan::suggest(n, live.keys()),
            });
        }
    }
    let selector = Selector {
        action: req.action,
        named: req.statement_names.iter().cloned().collect(),
        prefix: prefix.clone(),
        phases: phases.clone(),
        age_days: req.age_days,
        compute_pool_id: req.compute_pool_id.clone(),
        owned,
        releases,
        has_project,
        now: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    let mut statements = Vec::new();
    let mut left_alone = Vec::new();
    for s in live.values() {
        match selector.judge(s) {
            Judged::Act(c) => statements.push(c),
            Judged::Keep(k) => left_alone.push(k),
            Judged::Ignore => {}
        }
    }
    let filters = {
        let mut parts = Vec::new();
        if let Some(p) = &prefix {
            parts.push(format!("name starts with '{p}'"));
        }
        parts.push(
            phases
                .iter()
                .map(Phase::as_str)
                .collect::<Vec<_>>()
                .join(" or "),
        );
        parts.push(format!("created ≥ {} day(s) ago", req.age_days));
        if let Some(p) = &req.compute_pool_id {
            parts.push(format!("in compute pool {p}"));
        }
        if !req.statement_names.is_empty() {
            parts.push(format!("plus {}", req.statement_names.join(", ")));
        }
        parts.join(", ")
    };
    Ok(Prepared {
        _lock: lock,
        connected,
        rt,
        timeout: req.timeout,
        selector,
        plan: HousekeepPlan {
            action: req.action,
            filters,
            listed: live.len(),
            statements,
            left_alone,
        },
    })
}

impl Prepared {
    /// Acts on every statement in order; a failure is recorded and the next one tried. Each
    /// statement is read again right before acting on it: one that is gone, or that the filters and
    /// protections no longer select (its phase changed since the listing, say), is skipped and
    /// reported, never acted on.
    pub fn execute(self) -> HousekeepReport {
        let c = &self.connected;
        let verb = self.plan.action;
        let selector = &self.selector;
        let results = self.rt.block_on(async {
            let mut out = Vec::new();
            for t in &self.plan.statements {
                let skip = |phase: Option<Phase>, why: String| Done {
                    statement: t.statement.clone(),
                    phase: Some(phase),
                    error: None,
                    skipped: Some(why),
                };
                match c.target.get_statement(&t.statement).await {
                    Err(e) => {
                        out.push(Done {
                            statement: t.statement.clone(),
                            phase: None,
                            error: Some(c.scrubber.scrub(&format!(
                                "{verb} {}: reading it again first: {e}",
                                t.statement
                            ))),
                            skipped: None,
                        });
                        continue;
                    }
                    Ok(None) => {
                        out.push(skip(None, "it no longer exists".into()));
                        continue;
                    }
                    Ok(Some(now)) => match selector.judge(&now) {
                        Judged::Act(_) => {}
                        Judged::Keep(k) => {
                            out.push(skip(
                                Some(now.phase.clone()),
                                format!("it is {} now: {}", now.phase, k.reason),
                            ));
                            continue;
                        }
                        Judged::Ignore => {
                            out.push(skip(
                                Some(now.phase.clone()),
                                format!(
                                    "it was {} when listed and is {} now, which the filters do not select",
                                    t.phase, now.phase
                                ),
                            ));
                            continue;
                        }
                    },
                }
                let r = statement::apply(c, &t.statement, verb, self.timeout).await;
                out.push(match r {
                    Ok(s) => Done {
                        statement: t.statement.clone(),
                        phase: Some(s.map(|s| s.phase)),
                        error: None,
                        skipped: None,
                    },
                    Err(e) => Done {
                        statement: t.statement.clone(),
                        phase: None,
                        error: Some(c.scrubber.scrub(&format!("{verb} {}: {e}", t.statement))),
                        skipped: None,
                    },
                });
            }
            out
        });
        HousekeepReport {
            plan: self.plan,
            results,
        }
    }
}
