//! Loading the head graph for the impact computation, the cheapest correct way:
//!
//! 1. `--head REF` naming another commit than `HEAD` (without `--include-uncommitted`): the pipelines
//!    folder at REF is exported to a temporary folder (objects only) and loaded there;
//! 2. else, when no table was deleted or renamed away (by a file rename, an edit or an external tables
//!    manifest) and `pipeline_graph.json` (written by `pipeline build-all-metadata`) is newer than every
//!    input of the tree ([`graph_file_is_fresh`]): that file (tens of milliseconds for 10,000 tables);
//! 3. else a full load of the work tree, unknown references kept as externals so that children of deleted
//!    tables still point at them and can be named.
//!
//! Cases 2 and 3 read the work tree: uncommitted edits there are part of the head graph.

use super::{
    ChangeError, ChangeKind, ChangeOptions, ExternalTableChange, FileChange, HeadGraph, git,
};
use crate::config::Config;
use crate::metadata::GRAPH_FILE;
use crate::project::LoadOptions;
use std::path::Path;
use std::time::SystemTime;

/// Where the head graph came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadSource {
    /// `pipeline_graph.json`, fresh.
    GraphFile,
    /// A full load of the work tree.
    WorkTree,
    /// A full load of the tree at this commit ref, exported to a temporary folder.
    Commit(String),
}

/// Loads the head graph (see the module doc). `files` are the changed table files and `externals` the
/// external tables' manifest changes (to see whether any table was deleted).
///
/// Errors: the project folder cannot be scanned or exported.
pub fn load_head_graph(
    pipelines_dir: &Path,
    config: &Config,
    opts: &ChangeOptions,
    files: &[FileChange],
    externals: &[ExternalTableChange],
) -> Result<(HeadGraph, HeadSource), ChangeError> {
    let load = |dir: &Path| -> Result<HeadGraph, ChangeError> {
        let project = crate::project::load(
            dir,
            config,
            LoadOptions {
                allow_unknown: true,
            },
        )
        .map_err(|e| ChangeError::Io {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(HeadGraph::from_project(&project))
    };
    if let Some(head) = &opts.head
        && !opts.include_uncommitted
        && !git::is_head_commit(pipelines_dir, head)?
    {
        let tmp = tempfile::tempdir().map_err(|e| ChangeError::Io {
            path: std::env::temp_dir(),
            message: e.to_string(),
        })?;
        let root = git::export_tree(pipelines_dir, head, tmp.path())?;
        return Ok((load(&root)?, HeadSource::Commit(head.clone())));
    }
    let deletes = files.iter().any(|f| {
        f.change_kind == ChangeKind::Deleted
            || (f.change_kind == ChangeKind::Renamed && f.table_name != f.new_table_name)
            || f.base_table_name.is_some()
    }) || externals
        .iter()
        .any(|x| x.change_kind == ChangeKind::Deleted);
    let graph_file = pipelines_dir.join(GRAPH_FILE);
    if !deletes && graph_file_is_fresh(pipelines_dir, &graph_file, opts.include_uncommitted) {
        return Ok((
            HeadGraph::from_graph_file(&graph_file)?,
            HeadSource::GraphFile,
        ));
    }
    Ok((load(pipelines_dir)?, HeadSource::WorkTree))
}

/// Whether `graph_file` exists and is at least as new as every input of the tree (`.sql`,
/// `.properties`, `.json` other than generated files).
///
/// Without `work_tree`, the input times are those the git index records (when the files of the commit
/// entered the work tree: checkout, pull, `git add`), read from the index file alone; a graph built
/// after them describes the checked-out commit. With `work_tree` (`--include-uncommitted`), or outside
/// git, every input file is `stat`ed.
pub fn graph_file_is_fresh(root: &Path, graph_file: &Path, work_tree: bool) -> bool {
    let Some(stamp) = mtime(graph_file) else {
        return false;
    };
    if !work_tree && let Ok(newest) = git::index_newest_mtime(root) {
        return newest.is_none_or(|t| t <= stamp);
    }
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
    {
        if !entry.file_type().is_file() || !git::is_input(&entry.file_name().to_string_lossy()) {
            continue;
        }
        match entry.metadata().ok().and_then(|m| m.modified().ok()) {
            Some(t) if t <= stamp => {}
            _ => return false,
        }
    }
    true
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).ok()?.modified().ok()
}
