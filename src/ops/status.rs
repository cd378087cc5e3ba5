//! `pipeline status`: the live phase of every statement of a scope (default: every table), the plan's
//! action for its table, and whether the deployed SQL differs from the files (drift).

use super::scope::{PlanRequest, ScopeRequest};
use super::target::{self, TargetKind};
use super::{Context, OpsError};
use crate::deploy::StatementState;
use crate::deploy::spec::{self, normalize_sql};
use crate::plan::{Action, StatementNaming};
use crate::versioning::record::{BlueGreenRecord, GreenTable, RecordedStatement, StatementRole};
use serde::Serialize;
use std::collections::BTreeMap;

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

/// A blue statement of an open blue-green release next to its green successor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlueGreenRow {
    pub blue_table_name: String,
    pub green_table_name: String,
    pub blue_statement: String,
    /// `None`: absent.
    pub blue_phase: Option<String>,
    pub green_statement: Option<String>,
    /// `None`: absent.
    pub green_phase: Option<String>,
}

/// A statement under the project's statement-name prefix that no table of the tree owns (a blue
/// statement after a rename, a deleted table, a query left by a killed run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Orphan {
    pub statement: String,
    pub phase: String,
    pub detail: String,
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
    /// Blue statements of the blue-green releases still open in this environment, with their green
    /// successors.
    pub blue_green: Vec<BlueGreenRow>,
    /// Statements under the prefix that no table owns.
    pub orphans: Vec<Orphan>,
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
    let cfg = ctx.project_config(&req.pipelines)?;
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
    // Inputs are checked before any server is contacted: the scope and the SQL files.
    let offline = super::plan::plan_with(
        &cfg,
        &project,
        &req,
        &crate::plan::StatementStatus::default(),
    )?;
    for n in &offline.nodes {
        spec::statements_of(&project, n, true)?;
    }
    let record = BlueGreenRecord::read(&req.pipelines)?;
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
    let naming = StatementNaming::from_config(&cfg);
    let blue_green = blue_green_rows(&record, &naming, &live);
    // Blue statements of an open release are shown with their green successors, not as orphans.
    let orphans = orphans(&project, &naming, &live)
        .into_iter()
        .filter(|o| !blue_green.iter().any(|b| b.blue_statement == o.statement))
        .collect();
    Ok(StatusReport {
        scope: plan.scope,
        target: c.scrubber.scrub(&c.target.describe()),
        target_kind: c.kind,
        statements,
        blue_green,
        orphans,
    })
}

/// Blue statements of the releases still open for `naming`'s prefix, each with its green successor
/// (DML to DML, DDL to DDL), names recomputed with `naming`.
pub fn blue_green_rows(
    record: &BlueGreenRecord,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
) -> Vec<BlueGreenRow> {
    let phase = |n: &str| live.get(n).map(|s| s.phase.to_string());
    let mut rows = Vec::new();
    for release in record
        .releases
        .iter()
        .filter(|r| !r.decommissioned_in(&naming.prefix))
    {
        for t in &release.tables {
            for (blue, green) in blue_green_statements(naming, &release.statement_prefix, t) {
                rows.push(BlueGreenRow {
                    blue_table_name: t.blue_table_name.clone(),
                    green_table_name: t.green_table_name.clone(),
                    blue_phase: phase(&blue.name),
                    green_phase: green.as_deref().and_then(phase),
                    blue_statement: blue.name,
                    green_statement: green,
                });
            }
        }
    }
    rows
}

/// The blue statements of a versioned table as named in the environment of `naming` (its job
/// first), each with its green counterpart of the same role. The release recorded them under its own
/// prefix (`release_prefix`): the prefix is replaced and the rest of each name kept (a statement
/// set's DML is named after the table that writes it); a name that was shortened with a hash is
/// computed again from the table name.
pub fn blue_green_statements(
    naming: &StatementNaming,
    release_prefix: &str,
    t: &GreenTable,
) -> Vec<(RecordedStatement, Option<String>)> {
    use crate::plan::naming::{MAX_STATEMENT_NAME, fit_length};
    let here = |recorded: &RecordedStatement, table: &str| -> String {
        match recorded.name.strip_prefix(release_prefix) {
            Some(rest) if rest.starts_with('-') && recorded.name.len() < MAX_STATEMENT_NAME => {
                fit_length(format!("{}{rest}", naming.prefix))
            }
            // The DDL of a CTAS or materialized table runs its job: recomputed as a DDL name.
            _ if recorded.role == StatementRole::Job && !recorded.name.contains("-ddl-") => {
                naming.dml(&t.product_name, table)
            }
            _ => naming.ddl(&t.product_name, table),
        }
    };
    t.blue_statements
        .iter()
        .map(|b| {
            let green = t
                .green_statements
                .iter()
                .find(|g| g.role == b.role)
                .map(|g| here(g, &t.green_table_name));
            (
                RecordedStatement {
                    name: here(b, &t.blue_table_name),
                    role: b.role,
                },
                green,
            )
        })
        .collect()
}

/// Live statements under `naming`'s prefix that no table of the project owns, sorted by name.
pub fn orphans(
    project: &crate::project::Project,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
) -> Vec<Orphan> {
    let owned = naming.owned_statements(project);
    live.values()
        .filter(|s| naming.is_under_prefix(&s.name) && !owned.contains_key(&s.name))
        .map(|s| Orphan {
            statement: s.name.clone(),
            phase: s.phase.to_string(),
            detail: s.detail.clone(),
        })
        .collect()
}
