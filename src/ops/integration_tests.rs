//! `project init-integration-tests`, `project run-integration-tests` and `project
//! delete-integration-tests`: the integration tests of a sink's subgraph
//! ([`crate::unittest::integration`]), run like unit tests ([`super::unit_tests`]) on the configured
//! target — the local Apache Flink SQL Gateway with its Kafka broker, or Confluent Cloud.
//!
//! Every input is checked before the target is contacted; everything a run creates (statements,
//! test tables, topics) is removed on success, failure, timeout and Ctrl-C unless `keep`.

use super::target::TargetKind;
use super::unit_tests::{
    Deleted, DryRun, Prepared, RunReport, RunSettings, TestKind, dry_run_of, remove_test_objects,
    run_prepared, storage_of,
};
use super::{Context, OpsError};
use crate::config::Config;
use crate::plan::StatementNaming;
use crate::unittest::generate::Generated;
use crate::unittest::integration::{self, GenerateOptions};
use crate::unittest::prepare::PrepareOptions;
use crate::unittest::{Suffix, TestNaming};
use std::path::PathBuf;

/// The suffix: given, else `app.post_fix_integration_test`, else `_it`
/// ([`integration::DEFAULT_SUFFIX`]). Errors (usage): shift_left's rule (`_` and 2–3 letters or
/// digits) broken.
pub fn suffix(cfg: &Config, given: Option<&str>) -> Result<Suffix, OpsError> {
    Suffix::parse(
        given
            .or(cfg.app.post_fix_integration_test.as_deref())
            .unwrap_or(integration::DEFAULT_SUFFIX),
    )
    .map_err(|e| OpsError::Usage(e.to_string()))
}

/// `project init-integration-tests`.
#[derive(Debug, Clone)]
pub struct InitRequest {
    pub pipelines: PathBuf,
    /// The sink table.
    pub table: String,
    /// Scenarios (default 1).
    pub nb_scenarios: usize,
    pub create_csv: bool,
    pub suffix: Option<String>,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
}

/// Writes the sink's `tests/integration/` folder (never overwriting a file).
///
/// Errors: errors in the project, an unknown table, those of [`integration::generate`].
pub fn init(ctx: &Context, req: &InitRequest) -> Result<Generated, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no test written: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    Ok(integration::generate(
        &project,
        &cfg,
        &table,
        &GenerateOptions {
            nb_scenarios: req.nb_scenarios,
            create_csv: req.create_csv,
            suffix: suffix(&cfg, req.suffix.as_deref())?,
        },
    )?)
}

/// `project run-integration-tests`.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub pipelines: PathBuf,
    /// The sink table.
    pub table: String,
    /// `case` is a scenario name; `suffix` the integration suffix.
    pub settings: RunSettings,
    /// The compute pool of the test statements, instead of `flink.compute_pool_id` (Confluent Cloud).
    pub compute_pool: Option<String>,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
}

/// Runs the integration tests of a sink on the configured target.
///
/// Errors: errors in the project, an unknown table, a subgraph or a test folder that breaks a rule
/// of [`integration::prepare`] (file and line; nothing is created then), a target that cannot be
/// reached.
pub fn run(ctx: &Context, req: &RunRequest) -> Result<RunReport, OpsError> {
    let started = std::time::Instant::now();
    let mut cfg = ctx.project_config(&req.pipelines)?;
    if let Some(p) = &req.compute_pool {
        cfg.flink.compute_pool_id = Some(p.clone());
    }
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no test run: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let suffix = suffix(&cfg, req.settings.suffix.as_deref())?;
    run_prepared(
        ctx,
        &Prepared {
            cfg: &cfg,
            project: &project,
            table: &table,
            suffix,
            settings: &req.settings,
            kind: TestKind::Integration,
            started,
        },
        integration::prepare,
    )
}

/// Checks the integration suite of `req.table` as a run would before contacting anything (the
/// subgraph, the definitions and every file they name, every statement renamed:
/// [`integration::prepare`]) and contacts nothing; expected CSVs not filled in yet are listed in
/// [`DryRun::not_ready`].
///
/// Errors: those of [`run`] before it connects.
pub fn dry_run(ctx: &Context, req: &RunRequest) -> Result<DryRun, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no test run: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let suite = integration::prepare(
        &project,
        &cfg,
        &table,
        &PrepareOptions {
            suffix: suffix(&cfg, req.settings.suffix.as_deref())?,
            storage: storage_of(TargetKind::of(&cfg), &cfg),
            case: req.settings.case.clone(),
        },
    )?;
    Ok(dry_run_of(&table, &suite))
}

/// `project delete-integration-tests`.
#[derive(Debug, Clone)]
pub struct DeleteRequest {
    pub pipelines: PathBuf,
    /// The sink table.
    pub table: String,
    pub suffix: Option<String>,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
}

/// Removes every statement, test table and topic a run of the sink's integration tests creates —
/// also what a killed run left: statements are found by name on the target ([`TestNaming::owns`]),
/// for every table of the subgraph.
///
/// Errors: errors in the project, an unknown table, a test name that is a table of the project
/// (refused), the target.
pub fn delete(ctx: &Context, req: &DeleteRequest) -> Result<Deleted, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing deleted: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let suffix = suffix(&cfg, req.suffix.as_deref())?;
    let sg = integration::subgraph(&project, &table)?;
    let tables = sg.tables();
    for t in &tables {
        if project.inventory.tables.contains_key(&suffix.table(t)) {
            return Err(OpsError::Usage(format!(
                "{} is a table of the project: refused (choose another suffix with --post-fix-integration-test)",
                suffix.table(t)
            )));
        }
    }
    let naming = TestNaming {
        prefix: StatementNaming::from_config(&cfg).prefix,
        suffix,
    };
    remove_test_objects(&cfg, &project, &naming, &table, &tables)
}
