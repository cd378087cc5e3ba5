//! The operations layer: one module per thing a user asks flinkpipe to do, between the command line
//! and the library. Each operation takes a typed request, does the work and returns a serialisable
//! report or a typed [`OpsError`]; it never parses arguments and never prints. What must reach the
//! user while an operation runs — the project's diagnostics, warnings, a confirmation — goes through
//! the [`Console`] of its [`Context`], which the CLI implements on stderr/stdin and tests implement in
//! memory (cargo's `ops` and its shell are the model).
//!
//! | operation | command |
//! |---|---|
//! | [`inventory`] | `table build-inventory` |
//! | [`metadata`] | `pipeline build-all-metadata` |
//! | [`validate`] | `pipeline validate`, `table validate-table-names` |
//! | [`report`] | `pipeline report`, `project report-table-cross-products`, `project list-tables-with-one-child` |
//! | [`graph`] | `pipeline graph` |
//! | [`plan`] | `pipeline build-execution-plan` |
//! | [`deploy`] | `pipeline deploy` |
//! | [`undeploy`] | `pipeline undeploy` |
//! | [`status`] | `pipeline status` |
//! | [`decommission`] | `pipeline decommission` |
//! | [`explain`] | `pipeline explain` |
//! | [`pools`] | `project list-compute-pools`, `project create-compute-pool`, `project delete-compute-pool` |
//! | [`housekeep`] | `project housekeep-statements` |
//! | [`statement`] | `statement stop\|resume\|delete` |
//! | [`changes`] | `project list-modified-files`, `project list-impacted-tables` |
//! | [`versioning`] | `pipeline blue-green`, `project update-tables-version` |
//! | [`scaffold`] | `project init`, `table init` |
//! | [`refs`] | `sql refs` |
//! | [`query`] | `sql query`, `table preview` |
//! | [`unit_tests`] | `table init-unit-tests`, `table run-unit-tests`, `table delete-unit-tests`, `project run-unit-tests` |
//! | [`version`] | `version [--config]` |
//! | [`metadata`] | `pipeline build-metadata`, `pipeline delete-all-metadata` |
//! | [`makefiles`] | `table update-makefile`, `table update-all-makefiles` |
//! | [`update_tables`] | `table update-tables` |
//! | [`config_check`] | `project validate-config` |
//! | [`pools`] | `project get-statement-list`, `project delete-all-compute-pools`, `project list-environments` |
//! | [`topics`] | `project list-topics` |
//! | [`unused`] | `project assess-unused-tables`, `project delete-unused-tables` |
//! | [`isolate`] | `project isolate-data-product` |
//! | [`prepare`] | `pipeline prepare` |
//! | [`health`] | `pipeline healthcheck`, `pipeline report-running-statements`, `pipeline analyze-pool-usage` |
//!
//! Shared parts: [`Context`] (configuration lookup, loading the project, the console), [`target`]
//! (the one place where the deploy target is chosen and connected), [`scope`] (plan scopes from their
//! command-line forms, table lists), [`preflight`] (a deploy's server-side dry runs and its pool
//! check), [`capacity`] (compute pool arithmetic), [`lag`] (runtime metrics for `status --lag`),
//! [`oneoff`] (a statement run to COMPLETED, then removed).

pub mod capacity;
pub mod changes;
pub mod column_lineage;
pub mod config_check;
pub mod decommission;
pub mod deploy;
pub mod engine_check;
pub mod explain;
pub mod graph;
pub mod health;
pub mod housekeep;
pub mod integration_tests;
pub mod inventory;
pub mod isolate;
pub mod lag;
pub mod live_tests;
pub mod lock;
pub mod makefiles;
pub mod metadata;
pub mod oneoff;
pub mod plan;
pub mod pools;
pub mod preflight;
pub mod prepare;
pub mod query;
pub mod readers;
pub mod refs;
pub mod release_check;
pub mod release_journal;
pub mod report;
pub mod rollback;
pub mod scaffold;
pub mod schema_changes;
pub mod scope;
pub mod signals;
pub mod statement;
pub mod status;
pub mod target;
pub mod topics;
pub mod undeploy;
pub mod unit_tests;
pub mod unused;
pub mod update_tables;
pub mod update_ut_ddl;
pub mod upgrade_check;
pub mod validate;
pub mod version;
pub mod versioning;

mod error;

pub use error::OpsError;

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::project::{LoadOptions, Project};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// What an operation tells the user while it runs. Results are returned, never sent here.
pub trait Console: Sync {
    /// Diagnostics found while reading the project; file paths are relative to `base` (the pipelines
    /// folder's parent), where the source line of each can be read.
    fn diagnostics(&self, diagnostics: &[Diagnostic], base: Option<&Path>);
    /// One warning line, already prefixed (`warning[drift]: …`).
    fn warn(&self, message: &str);
    /// One informational line (`nothing deployed: fix the errors above`).
    fn note(&self, message: &str);
}

/// A console that drops everything (library callers that only want the report).
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Console for Silent {
    fn diagnostics(&self, _: &[Diagnostic], _: Option<&Path>) {}
    fn warn(&self, _: &str) {}
    fn note(&self, _: &str) {}
}

/// What every operation gets: where the configuration comes from and the console.
pub struct Context<'a> {
    /// `--config FILE`, if given.
    pub config_file: Option<PathBuf>,
    pub console: &'a dyn Console,
    /// Settings a command's options put over the configuration and the environment.
    pub overrides: ConfigOverrides,
    reported: Once,
}

/// Settings given on the command line over `config.yaml` and the environment: shift_left's
/// `--compute-pool-id` (its `$SL_FLINK_COMPUTE_POOL_ID`), `--environment-id`, `--region`. `None`
/// leaves the configured value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigOverrides {
    /// Over `flink.compute_pool_id`.
    pub compute_pool_id: Option<String>,
    /// Over `confluent_cloud.environment_id`.
    pub environment_id: Option<String>,
    /// Over `confluent_cloud.cloud_region`.
    pub cloud_region: Option<String>,
}

impl<'a> Context<'a> {
    pub fn new(config_file: Option<PathBuf>, console: &'a dyn Console) -> Self {
        Context {
            config_file,
            console,
            overrides: ConfigOverrides::default(),
            reported: Once::new(),
        }
    }

    /// This context with `overrides` over its configuration (the fields they leave `None` keep
    /// this context's).
    pub fn with_overrides(&self, overrides: ConfigOverrides) -> Context<'a> {
        let keep = |new: Option<String>, old: &Option<String>| new.or_else(|| old.clone());
        Context {
            config_file: self.config_file.clone(),
            console: self.console,
            overrides: ConfigOverrides {
                compute_pool_id: keep(overrides.compute_pool_id, &self.overrides.compute_pool_id),
                environment_id: keep(overrides.environment_id, &self.overrides.environment_id),
                cloud_region: keep(overrides.cloud_region, &self.overrides.cloud_region),
            },
            reported: Once::new(),
        }
    }

    /// The configuration: `--config FILE`, `$SL_CONFIG_FILE`, `$CONFIG_FILE` or `./config.yaml`
    /// ([`Config::locate`]), with the environment's overrides ([`Config::with_env`]). Unknown keys are
    /// reported once per context, however many times an operation asks.
    ///
    /// Errors: an unreadable or invalid file.
    pub fn config(&self) -> Result<Config, OpsError> {
        let path = Config::locate(self.config_file.as_deref());
        self.load_config(path.as_deref())
    }

    /// The configuration for an operation on the project at `pipelines`: as [`Context::config`], else,
    /// when none of those files exists, the project's own `config.yaml` beside the pipelines folder —
    /// so a command run from a table folder (its `Makefile`) uses the project's configuration.
    pub fn project_config(&self, pipelines: &Path) -> Result<Config, OpsError> {
        if let Some(p) = Config::locate(self.config_file.as_deref()) {
            return self.load_config(Some(&p));
        }
        // `../..` has no useful parent: resolve the folder first.
        let pipelines = pipelines
            .canonicalize()
            .unwrap_or_else(|_| pipelines.to_path_buf());
        let beside = pipelines
            .parent()
            .map(|p| p.join("config.yaml"))
            .filter(|p| p.is_file());
        self.load_config(beside.as_deref())
    }

    fn load_config(&self, path: Option<&Path>) -> Result<Config, OpsError> {
        let mut cfg = Config::load(path)?.with_env(crate::config::process_env);
        let o = &self.overrides;
        if let Some(p) = &o.compute_pool_id {
            cfg.flink.compute_pool_id = Some(p.clone());
        }
        if let Some(e) = &o.environment_id {
            cfg.confluent_cloud.environment_id = Some(e.clone());
        }
        if let Some(r) = &o.cloud_region {
            cfg.confluent_cloud.cloud_region = Some(r.clone());
        }
        self.reported.call_once(|| {
            for k in &cfg.unknown_keys {
                let hint = crate::config::closest_key(k)
                    .map(|c| format!(" (did you mean '{c}'?)"))
                    .unwrap_or_default();
                self.console.warn(&format!(
                    "warning[config]: {}: unknown key '{k}' ignored{hint}",
                    cfg.source
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                ));
            }
        });
        Ok(cfg)
    }

    /// Loads the project at `pipelines` (scan, parse, inventory, graph) and sends its diagnostics to
    /// the console. The caller decides what errors in the project mean for its operation.
    ///
    /// Errors: the folder cannot be read.
    pub fn load_project(
        &self,
        cfg: &Config,
        pipelines: &Path,
        allow_unknown: bool,
    ) -> Result<Project, OpsError> {
        let project = crate::project::load(pipelines, cfg, LoadOptions { allow_unknown })?;
        self.console
            .diagnostics(&project.diagnostics, source_base(pipelines).as_deref());
        Ok(project)
    }

    /// Before an operation writes into the tree at `pipelines`: finishes the batches of flinkpipe
    /// processes that died while writing there and removes their temporary files
    /// ([`crate::fsutil::recover`]), and says so on the console. With `loaded`, the project the
    /// operation loaded, by its diagnostics: the whole tree is walked when its scan saw such files
    /// ([`crate::scan::STALE_FILES`]); without, only the root and the trees of interrupted
    /// batches are.
    ///
    /// Errors: a temporary file that cannot be put into place (nothing is lost: the next command
    /// tries again).
    pub fn recover_tree(
        &self,
        pipelines: &Path,
        loaded: Option<&[Diagnostic]>,
    ) -> Result<(), OpsError> {
        let walk = loaded.is_some_and(|diagnostics| {
            diagnostics
                .iter()
                .any(|d| d.code == crate::scan::STALE_FILES)
        });
        if loaded.is_some() && !walk {
            return Ok(());
        }
        let rec = crate::fsutil::recover(pipelines, walk)?;
        for b in &rec.batches {
            let what = if b.command.is_empty() {
                "a flinkpipe command".to_string()
            } else {
                format!("`{}`", b.command)
            };
            let state = match b.phase {
                Some(crate::fsutil::BatchPhase::Committing) => {
                    "while replacing files: its remaining files were put into place"
                }
                Some(crate::fsutil::BatchPhase::RollingBack) => {
                    "while putting files back: the previous files were restored"
                }
                _ => "before replacing any file: its temporary files were removed",
            };
            self.console
                .note(&format!("note: {what} (pid {}) was killed {state}", b.pid));
        }
        if rec.batches.is_empty() && rec.removed > 0 {
            self.console.note(&format!(
                "note: removed {} temporary file(s) left by killed flinkpipe runs",
                rec.removed
            ));
        }
        Ok(())
    }

    /// Resolves a table name the user gave ([`crate::inventory::names`]: exact, else ignoring case, else
    /// its newest `_vN` version) and notes on the console when it names another table
    /// (`note: 'int_b' is 'int_b_v2' (its newest version)`).
    ///
    /// Errors: an unknown name (with the closest one), an ambiguous one (with its candidates).
    pub fn resolve_table(&self, project: &Project, given: &str) -> Result<String, OpsError> {
        let r = project.resolve_table(given)?;
        if let Some(note) = r.note() {
            self.console.note(&note);
        }
        Ok(r.name)
    }

    /// [`Context::resolve_table`] for each name, in order, without duplicates.
    ///
    /// Errors: the first name that does not resolve.
    pub fn resolve_tables(
        &self,
        project: &Project,
        given: &[String],
    ) -> Result<Vec<String>, OpsError> {
        let mut out: Vec<String> = Vec::with_capacity(given.len());
        for g in given {
            let n = self.resolve_table(project, g)?;
            if !out.contains(&n) {
                out.push(n);
            }
        }
        Ok(out)
    }

    /// [`Context::load_project`] for operations that cannot go on with errors in the project: those
    /// errors end the operation with [`OpsError::ProjectHasErrors`] and `what` (`nothing deployed`).
    pub fn load_valid_project(
        &self,
        cfg: &Config,
        pipelines: &Path,
        allow_unknown: bool,
        what: &'static str,
    ) -> Result<Project, OpsError> {
        let project = self.load_project(cfg, pipelines, allow_unknown)?;
        if project.has_errors() {
            return Err(OpsError::ProjectHasErrors(what));
        }
        Ok(project)
    }
}

/// The folder that diagnostic file paths (`pipelines/…`) are relative to: the pipelines folder's parent.
pub fn source_base(pipelines: &Path) -> Option<PathBuf> {
    pipelines
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
}

/// `<project>/.flinkpipe/`: where deploy state is kept (the project is the folder holding the
/// pipelines folder).
pub fn state_dir(pipelines: &Path) -> PathBuf {
    let root = pipelines
        .canonicalize()
        .unwrap_or_else(|_| pipelines.to_path_buf());
    root.parent().unwrap_or(Path::new(".")).join(".flinkpipe")
}

/// Where a command writes the reports it makes (`modified_flink_files.json` / `.txt`,
/// `impacted_tables.json`, `unused_tables_<time>.txt`, lineage and report pages, explain reports):
/// the folder the user gave, else `$FLINKPIPE_OUTPUT_DIR`, else the project's own
/// `<project>/.flinkpipe/` ([`state_dir`], ignored by the project's `.gitignore`) — never a folder
/// shared by every project (shift_left 0.1.52 writes them all into `~/.shift_left/`, so a second
/// project overwrites the first's) nor the current folder. Created if needed.
///
/// Errors: a folder that cannot be created.
pub fn output_dir(given: Option<&Path>, pipelines: &Path) -> Result<PathBuf, OpsError> {
    let dir = match given {
        Some(d) => d.to_path_buf(),
        None => match crate::config::process_env("FLINKPIPE_OUTPUT_DIR") {
            Some(d) => PathBuf::from(d),
            None => state_dir(pipelines),
        },
    };
    std::fs::create_dir_all(&dir).map_err(|source| OpsError::Write {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    crate::time::utc_timestamp(secs)
}

/// The current time as `YYYYMMDD_HHMMSS` (UTC), for file and statement names.
pub fn now_compact() -> String {
    let digits: String = now_utc()
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    if digits.len() == 14 {
        format!("{}_{}", &digits[..8], &digits[8..])
    } else {
        digits
    }
}
