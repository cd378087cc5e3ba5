//! `pipeline blue-green` (version the subgraph impacted since a git ref: `t` → `t_v2`) and
//! `project update-tables-version` (the same for listed tables and their descendants): plan the
//! rewrite, and with `apply` rewrite the files and rebuild the inventory and metadata, all or nothing.

use super::{Context, OpsError};
use crate::changes;
use crate::config::Config;
use crate::lineage::Project;
use crate::plan::StatementNaming;
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
    let cfg = ctx.config()?;
    let project = loaded(ctx, &cfg, pipelines, allow_unknown)?;
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
        Some(set.baseline_ref.clone()),
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
    let cfg = ctx.config()?;
    let project = loaded(ctx, &cfg, pipelines, allow_unknown)?;
    let seeds = super::scope::read_table_list(table_list)?;
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

fn loaded(
    ctx: &Context,
    cfg: &Config,
    pipelines: &Path,
    allow_unknown: bool,
) -> Result<Project, OpsError> {
    let project = ctx.load_project(cfg, pipelines, allow_unknown)?;
    if project.has_errors() {
        return Err(OpsError::Refused(
            "the project has errors (above): fix them before versioning".into(),
        ));
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
    baseline_ref: Option<String>,
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
    if applied {
        versioning::apply(&plan)?;
        // The SQL files and the metadata change together: if the rebuild fails, the files go back.
        let rebuilt = ctx
            .load_project(cfg, pipelines, allow_unknown)
            .and_then(|p| {
                if p.has_errors() {
                    Err(OpsError::Refused(
                        "the rewritten project has errors (above); nothing was changed".into(),
                    ))
                } else {
                    super::metadata::write_metadata(&p, pipelines).map(|_| ())
                }
            });
        if let Err(e) = rebuilt {
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
    Ok(Versioned {
        plan,
        apply,
        applied,
        baseline_ref,
    })
}
