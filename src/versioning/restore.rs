//! The git command that puts back the SQL a blue-green release replaced (`pipeline rollback`).
//!
//! Read-only (`git2`): nothing is checked out, staged or committed; the caller prints the command.
//!
//! - **The release commit** is the commit that added the release to `pipelines/blue_green.json`: the
//!   oldest commit of HEAD's first-parent chain whose record holds the release (same `created_at`
//!   and `statement_prefix`) and whose first parent's does not (after a merge, the merge commit).
//!   `None` while the applied release is not committed.
//! - **The source** the files are restored from is the release's `base_commit` (`blue-green --since
//!   REF` versioned everything changed since `merge-base(REF, HEAD)`: the logic change and the renaming
//!   together); a listed versioning (`update-tables-version`, no base) restores from the release
//!   commit's first parent.
//! - **The paths** are the files under the pipelines folder that differ between the source and the
//!   release commit (the work tree, index included, while the release is not committed), except
//!   `blue_green.json` itself, which keeps the record of the release and of its roll-back.
//!
//! The command is `git restore --source=<source> --staged --worktree -- <paths>` (git ≥ 2.23; a path
//! the source does not have — a file the release added — is removed), run from the repository's root.
//! Not `git revert <release commit>`: that would also take the release and its roll-back out of
//! `blue_green.json`, and would keep a logic change committed before the versioning commit.
//! Paths changed again after the release commit are listed in [`Restore::changed_since`]: restoring
//! them drops those later edits too, so the caller says to review them.

use crate::changes::ChangeError;
use crate::changes::git::open;
use crate::versioning::record::{BLUE_GREEN_FILE, BlueGreenRecord, Release};
use git2::{DiffOptions, Oid, Repository, Tree};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where the files are restored from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreSource {
    /// The release's `base_commit` (a blue-green).
    BaseCommit,
    /// The first parent of the release commit (a listed versioning).
    ReleaseCommitParent,
}

/// How to put the blue SQL back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Restore {
    /// The repository's work tree (the commands run there).
    pub repository: PathBuf,
    /// The commit that added the release to the record (40 hex digits); `None`: not committed yet.
    pub release_commit: Option<String>,
    /// The commit the files come from (40 hex digits).
    pub source: String,
    /// What `source` is.
    pub source_kind: RestoreSource,
    /// The files to restore, relative to the repository's root, sorted.
    pub paths: Vec<String>,
    /// Those of `paths` changed again after the release commit (in a later commit or in the work
    /// tree): restoring drops those edits too.
    pub changed_since: Vec<String>,
    /// The record's path relative to the repository's root.
    pub record: String,
}

impl Restore {
    /// The commands to run from the repository's root, in order: restore the files (when there are
    /// any), then commit them with the record.
    pub fn commands(&self, created_at: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !self.paths.is_empty() {
            let paths: Vec<String> = self.paths.iter().map(|p| shell_quote(p)).collect();
            out.push(format!(
                "git restore --source={} --staged --worktree -- {}",
                self.source,
                paths.join(" ")
            ));
        }
        out.push(format!("git add {}", shell_quote(&self.record)));
        out.push(format!(
            "git commit -m {}",
            shell_quote(&format!("Roll back the blue-green release of {created_at}"))
        ));
        out
    }
}

/// Why no restore command can be given.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// Not a git work tree, an unknown base commit, unreadable objects.
    #[error(transparent)]
    Git(#[from] ChangeError),
    /// A listed versioning (no base commit) whose release was never committed.
    #[error(
        "the release of {created_at} has no base commit and no commit adds it to {record}: restore the files it rewrote by hand (`git status`)"
    )]
    NoSource {
        /// `created_at` of the release.
        created_at: String,
        /// The record's path relative to the repository's root.
        record: String,
    },
}

/// Works out how to put back the SQL `release` replaced (see the module doc).
///
/// Errors: `pipelines` not in a git work tree, a base commit the repository does not have,
/// unreadable objects, [`RestoreError::NoSource`].
pub fn restore_for(pipelines: &Path, release: &Release) -> Result<Restore, RestoreError> {
    let (repo, workdir, prefix) = open(pipelines)?;
    let record = if prefix.is_empty() {
        BLUE_GREEN_FILE.to_string()
    } else {
        format!("{prefix}/{BLUE_GREEN_FILE}")
    };
    let release_commit = release_commit(&repo, &record, release)?;
    let (source, source_kind) = match (&release.base_commit, release_commit) {
        (Some(base), _) => {
            let oid = Oid::from_str(base)
                .and_then(|o| repo.find_commit(o))
                .map_err(|e| ChangeError::git(format!("reading the base commit {base}"), e))?
                .id();
            (oid, RestoreSource::BaseCommit)
        }
        (None, Some(c)) => {
            let commit = repo
                .find_commit(c)
                .map_err(|e| ChangeError::git(format!("reading {c}"), e))?;
            let parent = commit.parent_id(0).map_err(|e| {
                ChangeError::git(format!("the release commit {c} has no parent"), e)
            })?;
            (parent, RestoreSource::ReleaseCommitParent)
        }
        (None, None) => {
            return Err(RestoreError::NoSource {
                created_at: release.created_at.clone(),
                record,
            });
        }
    };
    let source_tree = tree(&repo, source)?;
    let scope = |o: &mut DiffOptions| {
        if !prefix.is_empty() {
            o.pathspec(format!("{prefix}/"));
        }
        o.ignore_submodules(true);
    };
    let mut opts = DiffOptions::new();
    scope(&mut opts);
    let diff = match release_commit {
        Some(c) => {
            let t = tree(&repo, c)?;
            repo.diff_tree_to_tree(Some(&source_tree), Some(&t), Some(&mut opts))
        }
        None => {
            opts.include_untracked(true).recurse_untracked_dirs(true);
            repo.diff_tree_to_workdir_with_index(Some(&source_tree), Some(&mut opts))
        }
    }
    .map_err(|e| ChangeError::git("diffing the release's files", e))?;
    let paths = delta_paths(&diff, &record);
    let changed_since = match release_commit {
        None => Vec::new(),
        Some(c) => {
            let t = tree(&repo, c)?;
            let mut opts = DiffOptions::new();
            scope(&mut opts);
            opts.include_untracked(true).recurse_untracked_dirs(true);
            let later = repo
                .diff_tree_to_workdir_with_index(Some(&t), Some(&mut opts))
                .map_err(|e| {
                    ChangeError::git("diffing the release commit with the work tree", e)
                })?;
            let later = delta_paths(&later, &record);
            paths
                .iter()
                .filter(|p| later.contains(p))
                .cloned()
                .collect()
        }
    };
    Ok(Restore {
        repository: workdir,
        release_commit: release_commit.map(|c| c.to_string()),
        source: source.to_string(),
        source_kind,
        paths,
        changed_since,
        record,
    })
}

/// Both sides' paths of every delta, except the record.
fn delta_paths(diff: &git2::Diff<'_>, record: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path().map(crate::fsutil::slash_path)
                && p != record
            {
                out.insert(p);
            }
        }
    }
    out.into_iter().collect()
}

fn tree(repo: &Repository, oid: Oid) -> Result<Tree<'_>, ChangeError> {
    repo.find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(|e| ChangeError::git(format!("reading the tree of {oid}"), e))
}

/// The commit of HEAD's first-parent chain that added `release` to the record (see the module doc).
fn release_commit(
    repo: &Repository,
    record: &str,
    release: &Release,
) -> Result<Option<Oid>, ChangeError> {
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else {
        // An unborn branch: nothing committed.
        return Ok(None);
    };
    let holds = |c: &git2::Commit<'_>| -> bool {
        let Ok(t) = c.tree() else { return false };
        let Ok(entry) = t.get_path(Path::new(record)) else {
            return false;
        };
        let Ok(blob) = repo.find_blob(entry.id()) else {
            return false;
        };
        let Ok(text) = std::str::from_utf8(blob.content()) else {
            return false;
        };
        serde_json::from_str::<BlueGreenRecord>(text.trim_start_matches('\u{feff}'))
            .map(|r| {
                r.releases.iter().any(|x| {
                    x.created_at == release.created_at
                        && x.statement_prefix == release.statement_prefix
                })
            })
            .unwrap_or(false)
    };
    let mut found = None;
    let mut current = head;
    loop {
        if !holds(&current) {
            break;
        }
        found = Some(current.id());
        match current.parent(0) {
            Ok(p) => current = p,
            Err(_) => break,
        }
    }
    Ok(found)
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(
            shell_quote("pipelines/a/dml.x.sql"),
            "pipelines/a/dml.x.sql"
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
