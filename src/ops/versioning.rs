//! `pipeline blue-green` (version the subgraph impacted since a git ref: `t` → `t_v2`) and
//! `project update-tables-version` (the same for listed tables and their descendants): plan the
//! rewrite, and with `apply` rewrite the files and rebuild the inventory and metadata, all or nothing.

use super::{Context, OpsError};
use crate::changes;
use crate::config::Config;
use crate::plan::StatementNaming;
use crate::project::Project;
use crate::versioning::record::{
    BlueGreenRecord, GreenTable, RecordedStatement, Release, StatementRole,
};
use crate::versioning::{self, VersionRequest};
use std::path::Path;

pub use crate::versioning::VersionPlan;

/// What was versioned.
#[derive(Debug, Clone)]
pub struct Versioned {
    pub plan: VersionPlan,
    /// Whether rewriting was asked for (`--apply`, or `update-tables-version` without `--dry-run`).
    pub apply: bool,
    /// Whether files were rewritten (`apply` and something to rewrite).
    pub applied: bool,
    /// The base ref of a blue-green (`None` for `update-tables-version`).
    pub baseline_ref: Option<String>,
    /// The release added to `pipelines/blue_green.json` when files were rewritten.
    pub recorded: Option<Release>,
}

/// `pipeline blue-green`: the tables with a `logic` or `schema` change since `changes` and all their
/// descendants get their next version.
///
/// Errors: a bad suffix (usage), errors in the project, git errors, a file that cannot be rewritten
/// safely (nothing is written).
pub fn blue_green(
    ctx: &Context,
    pipelines: &Path,
    changes: &super::changes::ChangeRequest,
    default_version: &str,
    apply: bool,
    allow_unknown: bool,
) -> Result<Versioned, OpsError> {
    check_suffix(default_version)?;
    let cfg = ctx.project_config(pipelines)?;
    let project = loaded(ctx, &cfg, pipelines, allow_unknown, apply)?;
    let set = changes::list_changes(pipelines, &super::changes::change_options(changes)?, &cfg)?;
    let req = versioning::blue_green_request(&project, &cfg, pipelines, &set, default_version)?;
    run(
        ctx,
        &cfg,
        &project,
        &req,
        pipelines,
        apply,
        allow_unknown,
        Some(Baseline {
            base_ref: set.baseline_ref.clone(),
            base_commit: set.base_commit.clone(),
        }),
    )
}

/// `project update-tables-version`: the listed tables and their descendants get their next version.
///
/// Errors: as [`blue_green`], and an unreadable table list.
pub fn update_tables_version(
    ctx: &Context,
    pipelines: &Path,
    table_list: &Path,
    default_version: &str,
    apply: bool,
    allow_unknown: bool,
) -> Result<Versioned, OpsError> {
    check_suffix(default_version)?;
    let cfg = ctx.project_config(pipelines)?;
    let project = loaded(ctx, &cfg, pipelines, allow_unknown, apply)?;
    let seeds = ctx.resolve_tables(&project, &super::scope::read_table_list(table_list)?)?;
    let req = VersionRequest {
        seed_reasons: seeds
            .iter()
            .map(|s| (s.clone(), "listed".to_string()))
            .collect(),
        seeds,
        default_suffix: default_version.to_string(),
        ..Default::default()
    };
    run(
        ctx,
        &cfg,
        &project,
        &req,
        pipelines,
        apply,
        allow_unknown,
        None,
    )
}

/// `--default-version` must be `_v<digits>` (a usage error otherwise).
fn check_suffix(suffix: &str) -> Result<(), OpsError> {
    versioning::names::next_version("t", suffix)
        .map(|_| ())
        .map_err(OpsError::Usage)
}

/// The project, checked for errors; with `apply`, what killed runs left in the tree is cleaned up
/// first ([`Context::recover_tree`]), since the files are about to be rewritten.
fn loaded(
    ctx: &Context,
    cfg: &Config,
    pipelines: &Path,
    allow_unknown: bool,
    apply: bool,
) -> Result<Project, OpsError> {
    if apply {
        ctx.recover_tree(pipelines, None)?;
    }
    let project = ctx.load_project(cfg, pipelines, allow_unknown)?;
    if project.has_errors() {
        return Err(OpsError::Refused(
            "the project has errors (above): fix them before versioning".into(),
        ));
    }
    if apply {
        ctx.recover_tree(pipelines, Some(&project.diagnostics))?;
    }
    Ok(project)
}

#[allow(clippy::too_many_arguments)]
fn run(
    ctx: &Context,
    cfg: &Config,
    project: &Project,
    req: &VersionRequest,
    pipelines: &Path,
    apply: bool,
    allow_unknown: bool,
    baseline: Option<Baseline>,
) -> Result<Versioned, OpsError> {
    let naming = StatementNaming::from_config(cfg);
    let plan = versioning::plan_versions(project, cfg, &naming, req)?;
    for e in &plan.edits {
        for n in &e.notes {
            ctx.console
                .warn(&format!("warning[storage]: {}: {n}", e.file));
        }
    }
    let applied = apply && !plan.edits.is_empty();
    let mut recorded = None;
    if applied {
        // SIGINT from here on is caught: the SQL files and the metadata change together or not at all.
        let sigint = crate::fsutil::catch_sigint();
        let command = if baseline.is_some() {
            "flinkpipe pipeline blue-green --apply"
        } else {
            "flinkpipe project update-tables-version"
        };
        versioning::apply(&plan, pipelines, command).map_err(|e| match e {
            versioning::VersionError::Interrupted { committed } => {
                OpsError::Interrupted { committed }
            }
            e => e.into(),
        })?;
        // The SQL files, the metadata and the blue-green record change together: if the rebuild
        // fails, the files go back.
        let rebuilt = ctx
            .load_project(cfg, pipelines, allow_unknown)
            .and_then(|p| {
                if sigint.received() {
                    return Err(OpsError::Interrupted { committed: false });
                }
                if p.has_errors() {
                    return Err(OpsError::Refused(
                        "the rewritten project has errors (above); nothing was changed".into(),
                    ));
                }
                let (record, release) =
                    record_release(pipelines, &p, &naming, &plan, baseline.as_ref())?;
                super::metadata::write_metadata_with(
                    &p,
                    pipelines,
                    command,
                    vec![(BlueGreenRecord::path(pipelines), record.to_text())],
                )?;
                Ok(release)
            });
        match rebuilt {
            Ok(release) => recorded = Some(release),
            // Interrupted while the metadata was being replaced: it was finished, with the record.
            Err(e @ OpsError::Interrupted { committed: true }) => return Err(e),
            Err(e) => {
                let stuck = versioning::restore(&plan);
                if !stuck.is_empty() {
                    return Err(OpsError::RestoreFailed {
                        cause: e.to_string(),
                        stuck,
                    });
                }
                return Err(e);
            }
        }
    }
    Ok(Versioned {
        plan,
        apply,
        applied,
        baseline_ref: baseline.map(|b| b.base_ref),
        recorded,
    })
}

/// The base of a blue-green versioning.
#[derive(Debug, Clone)]
struct Baseline {
    base_ref: String,
    base_commit: String,
}

/// The record with a new release for `plan` appended, and that release. Statement names are those of
/// the configuration in effect; green tables are read from the rebuilt project.
fn record_release(
    pipelines: &Path,
    project: &Project,
    naming: &StatementNaming,
    plan: &VersionPlan,
    baseline: Option<&Baseline>,
) -> Result<(BlueGreenRecord, Release), OpsError> {
    let mut record = BlueGreenRecord::read(pipelines)?;
    record.format = 1;
    let blue_of = |green: &str| -> String {
        plan.renames
            .iter()
            .find(|(_, g)| g.as_str() == green)
            .map(|(b, _)| b.clone())
            .unwrap_or_else(|| green.to_string())
    };
    let tables = plan
        .green
        .iter()
        .filter_map(|g| {
            let t = project.inventory.tables.get(&g.table_name)?;
            // The blue table had the same files: its statements carry the blue names (a statement set
            // that writes it is named after its writer's blue name). A CTAS or materialized table's
            // DDL runs its job.
            let owner = t.written_by.as_deref().unwrap_or(&t.name);
            let owner_table = project.inventory.tables.get(owner);
            let owner_product = owner_table.map_or(t.product.as_str(), |o| o.product.as_str());
            let dml = t.written_by.is_some() || owner_table.is_some_and(|o| o.dml_ref.is_some());
            let ddl_runs_job = matches!(
                t.ddl_kind,
                Some(
                    crate::sql::StatementKind::Ctas
                        | crate::sql::StatementKind::CreateMaterializedTable
                )
            );
            let ddl_role = if ddl_runs_job && !dml {
                StatementRole::Job
            } else {
                StatementRole::Declaration
            };
            let statements = |blue: bool| -> Vec<RecordedStatement> {
                let (table, writer) = if blue {
                    (g.blue_table_name.clone(), blue_of(owner))
                } else {
                    (g.table_name.clone(), owner.to_string())
                };
                let mut v = Vec::new();
                if dml {
                    v.push(RecordedStatement {
                        name: naming.dml(owner_product, &writer),
                        role: StatementRole::Job,
                    });
                }
                if t.ddl_ref.is_some() {
                    v.push(RecordedStatement {
                        name: naming.ddl(&t.product, &table),
                        role: ddl_role,
                    });
                }
                v
            };
            let blue_statements = statements(true);
            let mut green_statements = statements(false);
            green_statements.reverse();
            Some(GreenTable {
                blue_table_name: g.blue_table_name.clone(),
                green_table_name: g.table_name.clone(),
                product_name: t.product.clone(),
                blue_statements,
                green_statements,
                reason: g.reason.clone(),
            })
        })
        .collect();
    let release = Release {
        created_at: super::now_utc(),
        base_ref: baseline.map(|b| b.base_ref.clone()),
        base_commit: baseline.map(|b| b.base_commit.clone()),
        statement_prefix: naming.prefix.clone(),
        tables,
        decommissioned: Vec::new(),
    };
    record.releases.push(release.clone());
    Ok((record, release))
}
