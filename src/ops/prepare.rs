//! `pipeline prepare SQL_FILE [--compute-pool-id P]`: one-off SQL (ALTERs, a table to create by
//! hand) run on the configured target with the project's catalog and database, statement by
//! statement in file order, each waited for until COMPLETED and then removed
//! ([`super::oneoff::run_to_completion`]); the first failure stops the run (later statements are
//! not sent). shift_left sent them all without waiting and left the statements behind.
//!
//! On the SQL Gateway the catalog is the session's: every table a statement names (read, written,
//! altered or dropped) is declared first from the project's DDL, and what the statements change
//! lasts as long as the run's session (the note in [`PrepareReport::note`]).

use super::target;
use super::{Context, OpsError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One statement of the file and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreparedStatement {
    /// The statement name used (`<prefix>-prepare-<file>-<n>-<yyyymmdd>-<hhmmss>`).
    pub statement: String,
    /// Its first line in the file.
    pub line: usize,
    pub sql: String,
    /// `done`, `failed` or `not_run` (after a failure).
    pub outcome: &'static str,
    pub error: Option<String>,
}

/// The run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrepareReport {
    pub file: PathBuf,
    pub statements: Vec<PreparedStatement>,
    /// What the reader should know of the target (the SQL Gateway's session-scoped catalog).
    pub note: Option<String>,
}

impl PrepareReport {
    /// Whether every statement completed.
    pub fn success(&self) -> bool {
        self.statements.iter().all(|s| s.outcome == "done")
    }
}

/// Runs the statements of `sql_file` on the target of the project at `pipelines`.
///
/// Errors: an unreadable or empty file, the target's configuration or connection, another command
/// holding the project's target lock. A statement that fails is in the report, not an error.
pub fn prepare(
    ctx: &Context,
    pipelines: &Path,
    sql_file: &Path,
    compute_pool_id: Option<&str>,
    timeout: Duration,
) -> Result<PrepareReport, OpsError> {
    let text = crate::fsutil::read_project_file(sql_file).map_err(|source| OpsError::Read {
        what: "the SQL file",
        path: sql_file.to_path_buf(),
        source,
    })?;
    let analysis = crate::sql::analyze(&text);
    if analysis.statements.is_empty() {
        return Err(OpsError::Refused(format!(
            "{}: no SQL statement in it",
            sql_file.display()
        )));
    }
    let cfg = ctx.project_config(pipelines)?;
    // On the SQL Gateway the catalog lives in the session: the tables the statements name are
    // declared first from the project's DDL, so the project is loaded (Confluent Cloud keeps its
    // tables and needs none).
    let project = match target::TargetKind::of(&cfg) {
        target::TargetKind::SqlGateway => Some(ctx.load_valid_project(
            &cfg,
            pipelines,
            false,
            "nothing prepared: fix the errors above (the SQL Gateway declares the project's tables from its DDL)",
        )?),
        target::TargetKind::ConfluentCloud => None,
    };
    let c = target::connect(&cfg, project.as_ref())?;
    let naming = crate::plan::StatementNaming::from_config(&cfg);
    let _lock = super::lock::lock_target(pipelines, &c, &naming.prefix, "pipeline prepare")?;
    let rt = target::runtime()?;
    let stem = sql_file
        .file_stem()
        .map(|s| crate::plan::naming::kebab(&s.to_string_lossy()))
        .unwrap_or_default();
    // One name per run and statement: the same file prepared twice runs twice.
    let run_id = super::now_compact().replace('_', "-");
    let mut out = Vec::new();
    let mut failed = false;
    for (i, st) in analysis.statements.iter().enumerate() {
        let name = crate::plan::naming::fit_length(format!(
            "{}-prepare-{stem}-{}-{run_id}",
            naming.prefix,
            i + 1
        ));
        let sql = st.text.trim().trim_end_matches(';').to_string();
        let (outcome, error) = if failed {
            ("not_run", None)
        } else {
            match rt.block_on(super::oneoff::run_to_completion(
                &c,
                &name,
                &sql,
                compute_pool_id.map(str::to_string),
                timeout,
            )) {
                Ok(()) => ("done", None),
                Err(e) => {
                    failed = true;
                    ("failed", Some(e))
                }
            }
        };
        out.push(PreparedStatement {
            statement: name,
            line: st.line,
            sql,
            outcome,
            error,
        });
    }
    let note = (c.kind == target::TargetKind::SqlGateway).then(|| {
        "on the SQL Gateway the catalog is in memory per session: the project's tables were declared from its DDL, and what these statements changed in the catalog ends with this run (data they wrote stays)".to_string()
    });
    Ok(PrepareReport {
        file: sql_file.to_path_buf(),
        statements: out,
        note,
    })
}
