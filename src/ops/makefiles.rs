//! `table update-makefile T` / `table update-all-makefiles`: regenerate the per-table `Makefile`s from
//! the current template ([`crate::scaffold::table_makefile`]), keeping what the user wrote below
//! [`crate::scaffold::USER_TARGETS_MARKER`]. shift_left's commands of the same names rewrote the whole
//! file from its template, losing any target a team had added.

use super::{Context, OpsError};
use crate::fsutil::Batch;
use crate::scaffold::{self, USER_TARGETS_MARKER};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What happened to one table's `Makefile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MakefileChange {
    /// There was none: written.
    Created,
    /// Regenerated; the lines below the marker were kept.
    Updated,
    /// Regenerated; the old file had no marker line, so none of it was the user's (a `table init` or
    /// shift_left Makefile) and all of it was replaced, as shift_left does.
    Replaced,
    /// Already what the template gives.
    Unchanged,
    /// Not written: the table's type is no layer of the convention (`unknown-type`, a mapped folder
    /// of another kind), so the template has nothing to say (`update-all-makefiles` only; naming the
    /// table is an error).
    Skipped,
}

/// One table's `Makefile`.
#[derive(Debug, Clone, Serialize)]
pub struct MakefileUpdate {
    pub table_name: String,
    pub path: PathBuf,
    pub change: MakefileChange,
    /// Lines kept below the marker.
    pub kept_lines: usize,
}

/// Every `Makefile` the command regenerated, by table name.
#[derive(Debug, Clone, Serialize)]
pub struct MakefilesReport {
    pub makefiles: Vec<MakefileUpdate>,
}

/// Regenerates the `Makefile` of `table` (resolved as every table name is), or of every table of the
/// project with a folder of its own (`None`), all or nothing.
///
/// Errors: errors in the project (nothing written), an unknown table, a template error, a file that
/// cannot be written (every file as it was).
pub fn update_makefiles(
    ctx: &Context,
    pipelines: &Path,
    table: Option<&str>,
    allow_unknown: bool,
) -> Result<MakefilesReport, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    ctx.recover_tree(pipelines, None)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        allow_unknown,
        "no Makefile written: fix the errors above",
    )?;
    let inv = &project.inventory;
    let names: Vec<String> = match table {
        Some(t) => vec![ctx.resolve_table(&project, t)?],
        None => inv
            .tables
            .values()
            .filter(|t| !t.external && !t.unknown)
            .map(|t| t.name.clone())
            .collect(),
    };
    let command = if table.is_some() {
        "flinkpipe table update-makefile"
    } else {
        "flinkpipe table update-all-makefiles"
    };
    let batch = Batch::begin(pipelines, command, "flinkpipe table update-all-makefiles")?;
    let mut staged = Vec::new();
    let mut out = Vec::new();
    for name in names {
        let t = &inv.tables[&name];
        if t.external || t.unknown {
            batch.abandon(staged);
            return Err(OpsError::Refused(format!(
                "table '{name}' is external: it has no folder of this project, so no Makefile"
            )));
        }
        let folder_rel = PathBuf::from(inv.rel_to_root(&t.folder));
        let sources: Vec<String> = project
            .graph
            .parents(&name)
            .into_iter()
            .map(str::to_string)
            .collect();
        let fresh = match scaffold::table_makefile(
            pipelines,
            &folder_rel,
            &name,
            &t.table_type,
            &t.product,
            &sources,
            &cfg,
        ) {
            Ok(f) => f,
            Err(scaffold::ScaffoldError::UnknownLayer(_)) if table.is_none() => {
                out.push(MakefileUpdate {
                    table_name: name,
                    path: inv.disk_path(&t.folder).join("Makefile"),
                    change: MakefileChange::Skipped,
                    kept_lines: 0,
                });
                continue;
            }
            Err(e) => {
                batch.abandon(staged);
                return Err(e.into());
            }
        };
        let path = inv.disk_path(&t.folder).join("Makefile");
        let old = std::fs::read_to_string(&path).ok();
        let (text, change, kept) = merge(&fresh, old.as_deref());
        if change != MakefileChange::Unchanged {
            match batch.stage(&path, text.as_bytes()) {
                Ok(s) => staged.extend(s),
                Err(e) => {
                    batch.abandon(staged);
                    return Err(e.into());
                }
            }
        }
        out.push(MakefileUpdate {
            table_name: name,
            path,
            change,
            kept_lines: kept,
        });
    }
    batch.commit(staged)?;
    Ok(MakefilesReport { makefiles: out })
}

/// The new file: the template's text, the marker line, and what the old file had below its marker.
fn merge(fresh: &str, old: Option<&str>) -> (String, MakefileChange, usize) {
    let mut text = scaffold::makefile_with_marker(fresh);
    let Some(old) = old else {
        return (text, MakefileChange::Created, 0);
    };
    let Some(at) = old.find(USER_TARGETS_MARKER) else {
        return (text, MakefileChange::Replaced, 0);
    };
    let below = &old[at + USER_TARGETS_MARKER.len()..];
    let below = below.strip_prefix('\n').unwrap_or(below);
    text.push_str(below);
    let kept = below.lines().count();
    if text == old {
        (text, MakefileChange::Unchanged, kept)
    } else {
        (text, MakefileChange::Updated, kept)
    }
}
