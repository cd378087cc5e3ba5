//! `table update-tables FOLDER --string-to-change-from A --string-to-change-to B [--ddl |
//! --both-ddl-dml]`: shift_left's bulk edit of the SQL files, made token-aware
//! ([`crate::sql::rewrite::replace_in_identifiers`]: names only, never strings or comments), with a
//! diff first and all files written or none. shift_left's Python processor classes (its positional
//! CLASS) cannot run here and are refused with the `flinkpipe.sql_rewrites` rule to write instead.

use super::OpsError;
use crate::fsutil::Batch;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// shift_left's default processor: a plain string replacement, which this command does (token-aware).
pub const DEFAULT_CLASS: &str = "shift_left.core.utils.table_worker.TableWorker";

/// Which files of `sql-scripts/` are edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SqlKinds {
    /// `dml.*.sql` (shift_left's default).
    Dml,
    /// `ddl.*.sql` (`--ddl`).
    Ddl,
    /// Both (`--both-ddl-dml`).
    Both,
}

/// What to do.
#[derive(Debug, Clone)]
pub struct UpdateTablesRequest {
    pub folder: PathBuf,
    pub kinds: SqlKinds,
    pub from: String,
    pub to: String,
    /// shift_left's processor class, if one was given.
    pub class_to_use: Option<String>,
    /// Show the diff, write nothing.
    pub dry_run: bool,
}

/// One file that changes.
#[derive(Debug, Clone, Serialize)]
pub struct ChangedFile {
    pub path: PathBuf,
    pub edits: usize,
    /// Unified diff of the change.
    pub diff: String,
}

/// The result.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateTablesReport {
    /// SQL files of the selected kinds under the folder.
    pub files_seen: usize,
    pub changed: Vec<ChangedFile>,
    /// Whether the files were written (false with `dry_run` or when nothing changes).
    pub applied: bool,
}

/// Replaces `from` by `to` in the names of every selected SQL file under `folder`; every file is
/// checked and rewritten in memory first, then all are written in one batch.
///
/// Errors: a processor class other than shift_left's default (with the `sql_rewrites` rule to use),
/// no `--string-to-change-from`, a file that cannot be read or rewritten safely (naming it: nothing
/// is written), a write failure (every file as it was).
pub fn update_tables(req: &UpdateTablesRequest) -> Result<UpdateTablesReport, OpsError> {
    if let Some(class) = req.class_to_use.as_deref().filter(|c| *c != DEFAULT_CLASS) {
        return Err(OpsError::Refused(format!(
            "'{class}' is a Python class (shift_left's SQL processor plugin), which flinkpipe cannot run; nothing was changed. A rewrite of the files is `--string-to-change-from A --string-to-change-to B` (names only); a rewrite of what is deployed per environment, without touching the files, is a rule in config.yaml:\nflinkpipe:\n  sql_rewrites:\n    <environment>:\n      - in: table_names      # or option_values, statements\n        literal: A\n        replace: B"
        )));
    }
    if req.from.is_empty() {
        return Err(OpsError::Usage(
            "--string-to-change-from is required (and not empty)".into(),
        ));
    }
    if !req.folder.is_dir() {
        return Err(OpsError::Refused(format!(
            "{} is not a folder",
            req.folder.display()
        )));
    }
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(&req.folder).sort_by_file_name() {
        let e = e.map_err(|e| OpsError::Io(std::io::Error::other(e.to_string())))?;
        if e.file_type().is_file() && selected(e.path(), req.kinds) {
            files.push(e.path().to_path_buf());
        }
    }
    let mut changed = Vec::new();
    let mut texts = Vec::new();
    for f in &files {
        let old = crate::fsutil::read_project_file(f).map_err(|source| OpsError::Read {
            what: "a SQL file",
            path: f.clone(),
            source,
        })?;
        let edit = crate::sql::rewrite::replace_in_identifiers(&old, &req.from, &req.to)
            .map_err(|e| OpsError::Refused(format!("{}: {e}; no file was changed", f.display())))?;
        if edit.edits == 0 {
            continue;
        }
        let shown = f
            .strip_prefix(&req.folder)
            .unwrap_or(f)
            .display()
            .to_string();
        let diff = similar::TextDiff::from_lines(&old, &edit.text)
            .unified_diff()
            .context_radius(2)
            .header(&format!("a/{shown}"), &format!("b/{shown}"))
            .to_string();
        changed.push(ChangedFile {
            path: f.clone(),
            edits: edit.edits,
            diff,
        });
        texts.push((f.clone(), edit.text));
    }
    let applied = !req.dry_run && !texts.is_empty();
    if applied {
        let batch = Batch::begin(
            &req.folder,
            "flinkpipe table update-tables",
            "git checkout the files, then run the command again",
        )?;
        let mut staged = Vec::new();
        for (path, text) in &texts {
            match batch.stage(path, text.as_bytes()) {
                Ok(s) => staged.extend(s),
                Err(e) => {
                    batch.abandon(staged);
                    return Err(e.into());
                }
            }
        }
        batch.commit(staged)?;
    }
    Ok(UpdateTablesReport {
        files_seen: files.len(),
        changed,
        applied,
    })
}

/// shift_left's choice of files: in a `sql-scripts` folder, `dml.*` or `ddl.*` ending `.sql`.
fn selected(path: &Path, kinds: SqlKinds) -> bool {
    let in_scripts = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "sql-scripts");
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if !in_scripts || !name.ends_with(".sql") {
        return false;
    }
    let dml = name.starts_with("dml.");
    let ddl = name.starts_with("ddl.");
    match kinds {
        SqlKinds::Dml => dml,
        SqlKinds::Ddl => ddl,
        SqlKinds::Both => dml || ddl,
    }
}
