//! `pipeline build-execution-plan`: the execution plan of a scope, from the statement phases of a
//! status file, of the configured target, or none (offline). Writes nothing anywhere.

use super::scope::{self, PlanRequest};
use super::target::{self, TargetKind};
use super::{Context, OpsError};
use crate::config::Config;
use crate::plan::{self, StatementNaming, StatementStatus};
use crate::project::Project;
use std::path::{Path, PathBuf};

pub use crate::plan::{Action, ExecutionPlan, PlanNode};

/// Where the current statement phases come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PhaseSource {
    /// The configured target when one is fully configured (settings and secrets), else none.
    #[default]
    Auto,
    /// Never ask a target: every statement counts as not deployed.
    Offline,
    /// The configured target; an incomplete configuration is an error.
    Live,
    /// A JSON map statement name → phase (`--statement-status FILE`).
    File(PathBuf),
}

/// Builds the plan of `req` with the phases of `phases`.
///
/// Errors: errors in the project ([`OpsError::ProjectHasErrors`]), no scope (usage), an unknown
/// start table or empty product/folder, an unreadable status file or table list, a target that
/// cannot be listed.
pub fn build_execution_plan(
    ctx: &Context,
    req: &PlanRequest,
    phases: &PhaseSource,
) -> Result<ExecutionPlan, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no plan: fix the errors above",
    )?;
    let (scope, mut options) = scope::resolve(req, &project, ctx.console)?;
    options.pools = pools_of(&cfg, req);
    let naming = StatementNaming::from_config(&cfg);
    // The target and its live statements, when it is read: their phases plan, their SQL is checked
    // below.
    let mut live = None;
    let read_live = || -> Result<LiveTarget, OpsError> {
        let c = target::connect(&cfg, Some(&project))?;
        let rt = target::runtime()?;
        let statements = rt.block_on(target::live_statements(&c))?;
        Ok(LiveTarget { c, rt, statements })
    };
    let status = match phases {
        PhaseSource::File(f) => {
            let status = StatementStatus::read(f)?;
            warn_status_file(ctx, f, &status, &project, &naming);
            status
        }
        PhaseSource::Live => target::status_of(&live.insert(read_live()?).statements),
        PhaseSource::Offline => {
            ctx.console.note(
                "note: --offline: no target was read, so every statement counts as not deployed (a running one is planned as `create`)",
            );
            StatementStatus::default()
        }
        PhaseSource::Auto if TargetKind::is_configured(&cfg) => {
            target::status_of(&live.insert(read_live()?).statements)
        }
        PhaseSource::Auto => {
            ctx.console.note(
                "note: no target is configured, so no statement phase was read: every statement counts as not deployed (configure a target, see `flinkpipe version --config`, or pass --statement-status FILE)",
            );
            StatementStatus::default()
        }
    };
    let mut plan = plan::build_plan(&project, &naming, &status, &scope, &options)?;
    if let Some(LiveTarget { c, rt, statements }) = &live {
        // The deploy of this plan would be refused for two writers of a table: say it now.
        let env = crate::deploy::env_sql::EnvSql::from_config(&cfg, &crate::config::process_env)?;
        let nodes = crate::deploy::spec::deploy_nodes(&project, &plan, &env)?;
        super::preflight::one_writer(
            &cfg,
            &project,
            &nodes,
            statements,
            c.target.default_namespace(),
            c.target.session_scoped_tables(),
        )?;
        // On the SQL Gateway the planner judges each changed restarted job, as the deploy will.
        let verdicts = super::preflight::engine_verdicts(c, rt, &nodes, statements);
        let known = crate::deploy::executor::Known::of_target(c.target.as_ref());
        mark_in_place(&mut plan, &nodes, statements, known, &verdicts);
    }
    Ok(plan)
}

/// The plan of `req` on a loaded project with known phases (deploy, status, undeploy); notes on
/// resolved table names go to `console`.
pub fn plan_with(
    cfg: &Config,
    project: &Project,
    req: &PlanRequest,
    status: &StatementStatus,
    console: &dyn super::Console,
) -> Result<ExecutionPlan, OpsError> {
    let (scope, mut options) = scope::resolve(req, project, console)?;
    options.pools = pools_of(cfg, req);
    let naming = StatementNaming::from_config(cfg);
    Ok(plan::build_plan(
        project, &naming, status, &scope, &options,
    )?)
}

/// The compute pools of a plan: `--compute-pool-id`, `flinkpipe.compute_pools` (table, then
/// product), `flink.compute_pool_id` (with `$SL_FLINK_COMPUTE_POOL_ID`); none on the SQL Gateway.
pub fn pools_of(cfg: &Config, req: &PlanRequest) -> plan::PoolAssignment {
    if TargetKind::of(cfg) == TargetKind::SqlGateway {
        return plan::PoolAssignment::default();
    }
    plan::PoolAssignment {
        run: req.compute_pool_id.clone(),
        by_name: cfg.flinkpipe.compute_pools.clone(),
        default: cfg.flink.compute_pool_id.clone(),
    }
}

/// Warnings about a `--statement-status` file that would silently plan the wrong actions: a file none of
/// whose statements this project names (another prefix, region or environment). (Phases that are not
/// statement phases are refused by [`StatementStatus::read`].)
fn warn_status_file(
    ctx: &Context,
    file: &Path,
    status: &StatementStatus,
    project: &Project,
    naming: &StatementNaming,
) {
    if status.phases.is_empty() {
        return;
    }
    let ours = project
        .inventory
        .tables
        .values()
        .filter(|t| !t.external)
        .flat_map(|t| {
            [
                naming.ddl(&t.product, &t.name),
                naming.dml(&t.product, &t.name),
            ]
        })
        .any(|n| status.phases.contains_key(&n));
    if !ours {
        let example = project
            .inventory
            .tables
            .values()
            .find(|t| !t.external)
            .map(|t| format!(" (e.g. '{}')", naming.dml(&t.product, &t.name)))
            .unwrap_or_default();
        ctx.console.warn(&format!(
            "warning[statement-status]: {}: none of its {} statements is a statement of this project{example}: every table counts as not running; check kafka.cluster_type, confluent_cloud.cloud_region and flinkpipe.statement_prefix",
            file.display(),
            status.phases.len()
        ));
    }
}

/// A target read for a plan: the connection, its runtime and the live statements by name.
struct LiveTarget {
    c: target::Connected,
    rt: tokio::runtime::Runtime,
    statements: std::collections::BTreeMap<String, crate::target::StatementState>,
}

/// Marks the restarted tables whose running job the deploy would take over from a savepoint
/// ([`PlanNode::in_place`]), by the executor's own decision
/// ([`crate::deploy::executor::decide::decide`]) on the live statements, with the target's
/// planner's verdicts (`verdicts`) and what the target can do (`known`).
fn mark_in_place(
    plan: &mut ExecutionPlan,
    nodes: &[crate::deploy::DeployNode],
    live: &std::collections::BTreeMap<String, crate::target::StatementState>,
    known: crate::deploy::executor::Known,
    verdicts: &super::preflight::EngineVerdicts,
) {
    use crate::deploy::executor::{DeployOptions, StepPlan};
    let options = DeployOptions::default();
    for (pn, n) in plan.nodes.iter_mut().zip(nodes) {
        if n.action != Action::Restart {
            continue;
        }
        pn.in_place = n.steps.iter().find_map(|s| {
            match super::preflight::intended(
                live.get(&s.spec.name),
                n,
                s,
                &options,
                known,
                verdicts,
            ) {
                StepPlan::SavepointRestart { restore, .. } => Some(restore),
                _ => None,
            }
        });
    }
}
