//! `pipeline status`: the live phase of every statement of a scope (default: every table), the plan's
//! action for its table, and whether the deployed SQL differs from the files (drift).

use super::scope::{PlanRequest, ScopeRequest};
use super::target::{self, TargetKind};
use super::{Context, OpsError};
use crate::deploy::spec::{self, normalize_sql};
use crate::plan::Action;
use serde::Serialize;

/// One statement of the status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementRow {
    pub table_name: String,
    pub statement: String,
    /// The live phase; `None`: absent.
    pub phase: Option<String>,
    /// Whether the deployed SQL differs from the files (whitespace normalised); `None`: absent.
    pub sql_drift: Option<bool>,
    /// The plan's action for the table.
    pub plan_action: Action,
    /// The target's detail; `None`: absent.
    pub detail: Option<String>,
}

/// The status of a scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    pub scope: String,
    /// The target, secrets masked.
    pub target: String,
    #[serde(skip)]
    pub target_kind: TargetKind,
    pub statements: Vec<StatementRow>,
}

impl StatusReport {
    /// Statements whose deployed SQL differs from the files.
    pub fn drifted(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| s.sql_drift == Some(true))
            .count()
    }
}

/// The status of `req`'s scope; with no scope, of every table.
///
/// Errors: errors in the project, a target that cannot be listed, unreadable SQL files.
pub fn status(ctx: &Context, req: &PlanRequest) -> Result<StatusReport, OpsError> {
    let cfg = ctx.config()?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing deployed: fix the errors above",
    )?;
    let mut req = req.clone();
    if req.scope.is_none() {
        req.scope = ScopeRequest::Dir(project.inventory.root_name.clone());
    }
    let c = target::connect(&cfg, Some(&project))?;
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&c))?;
    let plan = super::plan::plan_with(&cfg, &project, &req, &target::status_of(&live))?;
    let mut statements = Vec::new();
    for n in &plan.nodes {
        for st in spec::statements_of(&project, n, true)? {
            let l = live.get(&st.spec.name);
            statements.push(StatementRow {
                table_name: n.table_name.clone(),
                statement: st.spec.name.clone(),
                phase: l.map(|l| l.phase.to_string()),
                sql_drift: l.map(|l| normalize_sql(&l.sql) != normalize_sql(&st.spec.sql)),
                plan_action: n.action,
                detail: l.map(|l| l.detail.clone()),
            });
        }
    }
    Ok(StatusReport {
        scope: plan.scope,
        target: c.scrubber.scrub(&c.target.describe()),
        target_kind: c.kind,
        statements,
    })
}
