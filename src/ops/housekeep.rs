//! `project housekeep-statements`: deletes (or stops, or resumes) the statements that pile up in an
//! environment — COMPLETED DDL and queries, FAILED attempts, workspace statements — chosen from
//! **one** paginated listing by name prefix, phase, age (`metadata.created_at`) and compute pool.
//! shift_left's command, with its defaults (`--starts-with workspace`, COMPLETED and FAILED, delete),
//! and a safer guard: where shift_left refused prefixes starting with `dev`/`stage`/`prod`, flinkpipe
//! never touches a **running** statement of the project's own pipeline (owned by a table of the
//! tree: PENDING, RUNNING, DEGRADED or STOPPING) unless it is named with `--statement-name`.
//!
//! Two steps, so that the caller can list and ask first: [`prepare`] reads the target,
//! [`Prepared::execute`] acts, one statement at a time, each waited for.

use super::statement::{self, StatementVerb};
use super::target::{self, Connected};
use super::{Context, OpsError};
pub use crate::deploy::Phase;
use crate::deploy::cloud::parse_rfc3339;
use crate::plan::StatementNaming;
use serde::Serialize;
use std::collections::BTreeSet;
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
    pub phase: String,
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
    pub phase: String,
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
    /// The phase reached, `absent` once deleted.
    pub phase: Option<String>,
    /// `None`: done; else the (masked) error.
    pub error: Option<String>,
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
    connected: Connected,
    rt: tokio::runtime::Runtime,
    timeout: Duration,
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

/// Phases of a statement the project is running: never touched unless named.
fn is_running(p: &Phase) -> bool {
    matches!(
        p,
        Phase::Pending | Phase::Running | Phase::Degraded | Phase::Stopping
    )
}

/// Works out what to act on, from one listing of the target.
///
/// Errors (before any server is contacted): a status the action cannot apply to (`--action resume
/// --status FAILED`); then errors in the project, a target that cannot be listed, a named statement
/// the target does not know.
pub fn prepare(ctx: &Context, req: &HousekeepRequest) -> Result<Prepared, OpsError> {
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
    let owned = if req.pipelines.is_dir() {
        let project = ctx.load_valid_project(
            &cfg,
            &req.pipelines,
            req.allow_unknown,
            "nothing housekept: fix the errors above",
        )?;
        StatementNaming::from_config(&cfg).owned_statements(&project)
    } else {
        ctx.console.note(&format!(
            "note: no pipelines folder at {}: the project's statements cannot be recognised, so no running statement is touched unless named",
            req.pipelines.display()
        ));
        Default::default()
    };
    let connected = target::connect(&cfg, None)?;
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
    let named: BTreeSet<&String> = req.statement_names.iter().collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let mut statements = Vec::new();
    let mut left_alone = Vec::new();
    for s in live.values() {
        let age = s
            .meta
            .created_at
            .as_deref()
            .and_then(parse_rfc3339)
            .map(|t| ((now - t).max(0) / 86_400) as u64);
        let candidate = Candidate {
            statement: s.name.clone(),
            phase: s.phase.to_string(),
            created_at: s.meta.created_at.clone(),
            age_days: age,
            table_name: owned.get(&s.name).cloned(),
        };
        if named.contains(&s.name) {
            statements.push(candidate);
            continue;
        }
        let Some(prefix) = &prefix else {
            continue;
        };
        if !s.name.starts_with(prefix.as_str())
            || !phases.contains(&s.phase)
            || req
                .compute_pool_id
                .as_ref()
                .is_some_and(|p| s.meta.compute_pool_id.as_ref() != Some(p))
        {
            continue;
        }
        let keep = |reason: String| Kept {
            statement: s.name.clone(),
            phase: s.phase.to_string(),
            reason,
        };
        match age {
            Some(a) if a < req.age_days => continue,
            None if req.age_days > 0 => {
                left_alone.push(keep(format!(
                    "its age is unknown (the target gives no creation time), --age {} asks for older ones",
                    req.age_days
                )));
                continue;
            }
            _ => {}
        }
        if let Some(table) = &candidate.table_name
            && is_running(&s.phase)
        {
            left_alone.push(keep(format!(
                "a running statement of the project's pipeline (table {table}): name it with --statement-name to {} it",
                req.action.as_str()
            )));
            continue;
        }
        statements.push(candidate);
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
        connected,
        rt,
        timeout: req.timeout,
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
    /// Acts on every statement in order; a failure is recorded and the next one tried.
    pub fn execute(self) -> HousekeepReport {
        let c = &self.connected;
        let verb = self.plan.action;
        let results = self.rt.block_on(async {
            let mut out = Vec::new();
            for t in &self.plan.statements {
                let r = statement::apply(c, &t.statement, verb, self.timeout).await;
                out.push(match r {
                    Ok(s) => Done {
                        statement: t.statement.clone(),
                        phase: Some(
                            s.map(|s| s.phase.to_string())
                                .unwrap_or_else(|| "absent".into()),
                        ),
                        error: None,
                    },
                    Err(e) => Done {
                        statement: t.statement.clone(),
                        phase: None,
                        error: Some(c.scrubber.scrub(&format!("{verb} {}: {e}", t.statement))),
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
