//! `pipeline undeploy`: deletes the statements of the scope's tables and of their descendants
//! (a child reads its parent), children before parents; drops the tables only when asked. Two steps,
//! so that the caller can show the list and ask before anything is deleted: [`prepare`] reads the
//! target and returns the list, [`Prepared::execute`] deletes.

use super::scope::PlanRequest;
use super::statement::{self, StatementVerb};
use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::plan::{StatementNaming, StatementStatus};
use crate::project::Project;
use crate::target::{Phase, StatementKind, StatementSpec};
use serde::Serialize;
use std::time::Duration;

/// What to undeploy.
#[derive(Debug, Clone)]
pub struct UndeployRequest {
    pub plan: PlanRequest,
    /// Also `DROP TABLE` every table of the scope (their topics' data is deleted).
    pub allow_drop: bool,
    /// Longest wait for one statement to disappear.
    pub timeout: Duration,
}

/// One statement to delete, with its table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndeployStatement {
    pub table_name: String,
    pub statement: String,
}

/// What an undeploy will do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndeployPlan {
    /// The scope's tables and their descendants, children first.
    pub tables: Vec<String>,
    /// Their existing statements, children first.
    pub statements: Vec<UndeployStatement>,
    /// Whether the tables are dropped afterwards.
    pub drop_tables: bool,
}

/// The result of one deletion or drop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndeployStep {
    pub table_name: String,
    /// The statement deleted, or the drop statement run.
    pub statement: String,
    /// `None`: done; else the (masked) error.
    pub error: Option<String>,
}

/// What an undeploy did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndeployReport {
    pub deleted: Vec<UndeployStep>,
    pub dropped: Vec<UndeployStep>,
}

impl UndeployReport {
    pub fn success(&self) -> bool {
        self.deleted
            .iter()
            .chain(&self.dropped)
            .all(|s| s.error.is_none())
    }
}

/// An undeploy ready to run: the target, the project and the list.
pub struct Prepared {
    /// This project's target lock ([`super::lock`]), held until the run ends.
    _lock: Option<super::lock::TargetLock>,
    connected: Connected,
    rt: tokio::runtime::Runtime,
    project: Project,
    naming: StatementNaming,
    timeout: Duration,
    pub plan: UndeployPlan,
}

/// Works out what to delete: the scope's tables (not their ancestors) and every descendant, children
/// first, and their statements that exist on the target.
///
/// Errors: errors in the project, an unknown scope, a target that cannot be listed.
pub fn prepare(ctx: &Context, req: &UndeployRequest) -> Result<Prepared, OpsError> {
    let cfg = ctx.project_config(&req.plan.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.plan.pipelines,
        req.plan.allow_unknown,
        "nothing deployed: fix the errors above",
    )?;
    let scope_only = PlanRequest {
        may_start_descendants: false,
        force_ancestors: false,
        cross_product: false,
        dml_only: false,
        exclude_file: None,
        ..req.plan.clone()
    };
    let plan = super::plan::plan_with(
        &cfg,
        &project,
        &scope_only,
        &StatementStatus::default(),
        ctx.console,
    )?;
    let connected = target::connect(&cfg, Some(&project))?;
    let naming = StatementNaming::from_config(&cfg);
    let lock = super::lock::lock_target(
        &req.plan.pipelines,
        &connected,
        &naming.prefix,
        "pipeline undeploy",
    )?;
    // The scope's tables (not their ancestors) and every descendant: a child reads its parent. A
    // statement set is deleted whole, so every table it writes goes too, with its descendants.
    let start: Vec<&str> = plan
        .nodes
        .iter()
        .filter(|n| n.origin.is_start())
        .map(|n| n.table_name.as_str())
        .collect();
    let mut set = crate::graph::StatementIndex::from_inventory(&project.inventory)
        .closure_set(&start, |t| project.graph.children(t));
    set.retain(|t| project.inventory.tables.get(t).is_some_and(|t| !t.external));
    let mut order: Vec<String> = project.graph.topo_order(Some(&set))?;
    order.reverse();
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&connected))?;
    let mut statements: Vec<UndeployStatement> = Vec::new();
    for t in &order {
        for name in naming.table_statements(&project, t) {
            if live.contains_key(&name) && !statements.iter().any(|s| s.statement == name) {
                statements.push(UndeployStatement {
                    table_name: t.clone(),
                    statement: name,
                });
            }
        }
    }
    Ok(Prepared {
        _lock: lock,
        connected,
        rt,
        project,
        naming,
        timeout: req.timeout,
        plan: UndeployPlan {
            tables: order,
            statements,
            drop_tables: req.allow_drop,
        },
    })
}

impl Prepared {
    /// Deletes the statements in order (each waited for until gone), then, when asked and every
    /// deletion succeeded, drops the tables children first. A failure is recorded and the next
    /// statement is tried.
    pub fn execute(self) -> UndeployReport {
        let c = &self.connected;
        let timeout = self.timeout;
        let mut report = UndeployReport {
            deleted: Vec::new(),
            dropped: Vec::new(),
        };
        self.rt.block_on(async {
            for s in &self.plan.statements {
                let r = statement::apply(c, &s.statement, StatementVerb::Delete, timeout).await;
                report.deleted.push(UndeployStep {
                    table_name: s.table_name.clone(),
                    statement: s.statement.clone(),
                    error: r
                        .err()
                        .map(|e| c.scrubber.scrub(&format!("deleting {}: {e}", s.statement))),
                });
            }
            if !self.plan.drop_tables || !report.success() {
                return;
            }
            for t in &self.plan.tables {
                let tb = &self.project.inventory.tables[t];
                let name = crate::plan::naming::fit_length(format!(
                    "{}-drop",
                    self.naming.ddl(&tb.product, &tb.name)
                ));
                let spec = StatementSpec {
                    name: name.clone(),
                    sql: format!("DROP TABLE IF EXISTS {}", crate::sql::quote_identifier(t)),
                    properties: Default::default(),
                    kind: StatementKind::Ddl,
                    compute_pool: None,
                };
                let target = c.target.as_ref();
                let r = async {
                    if target.get_statement(&name).await?.is_none() {
                        target.create_statement(&spec).await?;
                    }
                    crate::deploy::executor::wait_until(
                        target,
                        &name,
                        timeout,
                        crate::target::Backoff::POLL,
                        |s| s.is_some_and(|s| s.phase == Phase::Completed),
                    )
                    .await?;
                    target.delete_statement(&name).await
                }
                .await;
                report.dropped.push(UndeployStep {
                    table_name: t.clone(),
                    statement: name,
                    error: r
                        .err()
                        .map(|e| c.scrubber.scrub(&format!("dropping {t}: {e}"))),
                });
            }
        });
        report
    }
}
