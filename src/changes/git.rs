//! Reads a git repository with `git2` and lists the files that changed under the pipelines folder.
//!
//! Read-only: no checkout, no branch switch, no write to the work tree or the index (libgit2 diffs do not
//! refresh the index unless asked). The base is `merge-base(since, head)` (what a pull request changes,
//! `git diff since...head`), or with `--since-date D` the newest commit on the head's first-parent chain
//! committed before `D 00:00 UTC`. The head is a commit's tree, or the work tree read through the index
//! (`--include-uncommitted`: staged, unstaged and untracked files). Renames are found by content
//! similarity (`find_similar`), deletions are included (shift_left's `git log --name-only` skipped them,
//! defect 8).

use super::classify::{self, SchemaDiff};
use super::{ChangeError, ChangeKind, ChangeSet, FileChange, FileRole};
use crate::config::Config;
use crate::inventory::{first_created, first_insert_target, resolve_name};
use crate::sql::{self, FileAnalysis};
use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository, Tree};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What to compare.
#[derive(Debug, Clone, Default)]
pub struct ChangeOptions {
    /// Base ref; default `origin/main` if it exists, else `main`.
    pub since: Option<String>,
    /// Head ref; default `HEAD`.
    pub head: Option<String>,
    /// `YYYY-MM-DD`: base = newest first-parent commit of the head committed before that day (UTC).
    pub since_date: Option<String>,
    /// Keep only files whose name ends with this extension (`sql` or `.sql`); default `.sql` and
    /// `.properties`.
    pub file_filter: Option<String>,
    /// Compare with the work tree (index + unstaged + untracked) instead of the head commit.
    pub include_uncommitted: bool,
}

/// Lists the files changed under `pipelines_dir` between the base and the head (see the module doc).
///
/// Errors: `pipelines_dir` missing or outside a git work tree, a ref that does not resolve, no merge
/// base (unrelated histories, shallow clone), no commit before `--since-date`, unreadable objects.
/// Binary or non-UTF-8 files are not errors: they are `logic` changes with a note.
pub fn list_changes(
    pipelines_dir: &Path,
    opts: &ChangeOptions,
    config: &Config,
) -> Result<ChangeSet, ChangeError> {
    let started = std::time::Instant::now();
    // libgit2 re-hashes every object it reads by default; flinkpipe only reads, and object integrity is
    // git's own concern (`git fsck`). Process-wide setting.
    git2::opts::strict_hash_verification(false);
    let (repo, workdir, prefix) = open(pipelines_dir)?;
    let head_name = opts.head.clone().unwrap_or_else(|| "HEAD".to_string());
    let head_oid = commit_of(&repo, &head_name)?;
    let (baseline_ref, base_oid) = baseline(&repo, &workdir, opts, &head_name, head_oid)?;
    let tree_of = |oid: Oid, what: &str| -> Result<Tree<'_>, ChangeError> {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| ChangeError::git(format!("reading the tree of {what} ({oid})"), e))
    };
    let base_tree = tree_of(base_oid, &baseline_ref)?;
    let mut dopts = DiffOptions::new();
    if !prefix.is_empty() {
        dopts.pathspec(format!("{prefix}/"));
    }
    dopts.ignore_submodules(true);
    let (mut diff, head_side) = if opts.include_uncommitted {
        dopts.include_untracked(true).recurse_untracked_dirs(true);
        let d = repo
            .diff_tree_to_workdir_with_index(Some(&base_tree), Some(&mut dopts))
            .map_err(|e| ChangeError::git("diffing the base with the work tree", e))?;
        (d, Side::Workdir(workdir.clone()))
    } else {
        let head_tree = tree_of(head_oid, &head_name)?;
        let d = repo
            .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut dopts))
            .map_err(|e| ChangeError::git(format!("diffing {baseline_ref} with {head_name}"), e))?;
        (d, Side::Tree(head_tree))
    };
    let mut fopts = DiffFindOptions::new();
    fopts.renames(true).for_untracked(opts.include_uncommitted);
    diff.find_similar(Some(&mut fopts))
        .map_err(|e| ChangeError::git("finding renames", e))?;
    let base_side = Side::Tree(base_tree);

    // 1. Collect the deltas and read both sides (libgit2 objects stay on this thread).
    let filter = opts
        .file_filter
        .as_deref()
        .map(|f| format!(".{}", f.trim_start_matches('.')));
    let read = DiffReader {
        repo: &repo,
        workdir: &workdir,
        prefix: &prefix,
        head_side: &head_side,
        filter: filter.as_deref(),
    };
    let mut collected = Collected::default();
    for delta in diff.deltas() {
        read.delta(&delta, &mut collected)?;
    }
    tracing::info!(
        files = collected.raw.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "diffed and read"
    );
    // 2. Classify and name, in parallel (pure work on owned data).
    let processed: Vec<(FileChange, Option<String>, Option<String>)> = collected
        .raw
        .into_par_iter()
        .map(|r| process(r, &baseline_ref, config))
        .collect();
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        "classified"
    );
    // 3. Files whose SQL names no table (properties, tests, empty SQL): the folder's table.
    let mut ctx = Ctx {
        repo: &repo,
        config,
        prefix: &prefix,
        folder_cache: HashMap::new(),
    };
    let mut files = Vec::new();
    let mut tests = Vec::new();
    for (change, old_name, new_name) in processed {
        let change = ctx.named(change, old_name, new_name, &base_side, &head_side);
        if change.role == FileRole::Test {
            tests.push(change);
        } else {
            files.push(change);
        }
    }
    tracing::info!(elapsed_ms = started.elapsed().as_millis() as u64, "named");
    files.sort_by(|a, b| a.path.cmp(&b.path));
    tests.sort_by(|a, b| a.path.cmp(&b.path));
    let mut ignored = collected.ignored;
    ignored.sort();
    let external_tables =
        super::external::diff_manifests(&collected.manifests).map_err(|(path, message)| {
            let at = if opts.include_uncommitted {
                "the work tree".to_string()
            } else {
                head_name.clone()
            };
            ChangeError::BadFile {
                path: PathBuf::from(format!("{path} at {at}")),
                what: "external tables manifest ({\"tables\": [{\"table_name\", …}]})",
                message,
            }
        })?;
    Ok(ChangeSet {
        baseline_ref,
        base_commit: base_oid.to_string(),
        head_ref: if opts.include_uncommitted {
            "work tree".into()
        } else {
            head_name
        },
        head_commit: head_oid.to_string(),
        files,
        tests,
        external_tables,
        ignored,
    })
}

/// The baseline the changes are listed against: `(how the report names it, its commit)`. With
/// `--since-date`, the last first-parent commit of the head before that date; else the merge base
/// of `--since` (default `origin/main`, else `main`) and the head.
///
/// Errors: a bad date, no commit before it, no default base, no merge base (a shallow clone is
/// named as the likely cause).
fn baseline(
    repo: &Repository,
    workdir: &Path,
    opts: &ChangeOptions,
    head_name: &str,
    head_oid: Oid,
) -> Result<(String, Oid), ChangeError> {
    let shallow = if repo.is_shallow() {
        " (shallow clone: fetch more history, e.g. git fetch --unshallow)"
    } else {
        ""
    };
    if let Some(date) = &opts.since_date {
        let cutoff = parse_date(date).ok_or_else(|| ChangeError::BadDate(date.clone()))?;
        let oid = first_parent_before(repo, head_oid, cutoff).ok_or_else(|| {
            ChangeError::NoCommitBefore {
                date: date.clone(),
                head: head_name.to_string(),
                shallow,
            }
        })?;
        return Ok((format!("since:{date}"), oid));
    }
    let since = match &opts.since {
        Some(s) => s.clone(),
        None => ["origin/main", "main"]
            .into_iter()
            .find(|r| commit_of(repo, r).is_ok())
            .ok_or_else(|| ChangeError::NoDefaultBase(workdir.to_path_buf()))?
            .to_string(),
    };
    let since_oid = commit_of(repo, &since)?;
    let base = repo
        .merge_base(since_oid, head_oid)
        .map_err(|e| ChangeError::NoMergeBase {
            since: since.clone(),
            head: head_name.to_string(),
            shallow,
            message: e.message().to_string(),
        })?;
    Ok((since, base))
}

/// What the diff's deltas hold, read: the files of tables, the external-table manifests on either
/// side, and the paths that are neither.
#[derive(Default)]
struct Collected {
    raw: Vec<RawDelta>,
    /// `seeds/external_tables.json` manifests: (path, base bytes, head bytes).
    manifests: Vec<super::external::ManifestVersions>,
    ignored: Vec<String>,
}

/// Reads the deltas of one diff: both sides' bytes, paths relative to the pipelines folder.
struct DiffReader<'a> {
    repo: &'a Repository,
    workdir: &'a Path,
    /// The pipelines folder relative to the work tree (empty at its root).
    prefix: &'a str,
    head_side: &'a Side<'a>,
    /// `.sql`-style extension filter (`--file-filter`).
    filter: Option<&'a str>,
}

impl DiffReader<'_> {
    /// The path relative to the pipelines folder.
    fn rel(&self, p: &str) -> String {
        if self.prefix.is_empty() {
            p.to_string()
        } else {
            p.strip_prefix(&format!("{}/", self.prefix))
                .unwrap_or(p)
                .to_string()
        }
    }

    /// Files `delta` into `out`: a manifest, a table's file (read on both sides), or ignored.
    fn delta(&self, delta: &git2::DiffDelta<'_>, out: &mut Collected) -> Result<(), ChangeError> {
        let kind = match delta.status() {
            Delta::Added | Delta::Untracked => ChangeKind::Added,
            Delta::Deleted => ChangeKind::Deleted,
            Delta::Modified | Delta::Typechange => ChangeKind::Logic,
            Delta::Renamed => ChangeKind::Renamed,
            // Copies are reported as additions of the copy.
            Delta::Copied => ChangeKind::Added,
            _ => return Ok(()),
        };
        let repo_path = |f: git2::DiffFile<'_>| f.path().map(crate::fsutil::slash_path);
        let (Some(old_repo), Some(new_repo)) =
            (repo_path(delta.old_file()), repo_path(delta.new_file()))
        else {
            return Ok(());
        };
        let (old_rel, new_rel) = (self.rel(&old_repo), self.rel(&new_repo));
        let path_rel = if kind == ChangeKind::Deleted {
            &old_rel
        } else {
            &new_rel
        };
        let read_old = || read_blob(self.repo, delta.old_file().id(), &old_repo);
        let read_new = || {
            self.head_side
                .read(self.repo, delta.new_file().id(), &new_repo)
        };
        // A manifest on either side (a rename may move one in or out of a `seeds/` folder).
        let old_is = kind != ChangeKind::Added && super::external::is_manifest(&old_rel);
        let new_is = kind != ChangeKind::Deleted && super::external::is_manifest(&new_rel);
        if (old_is || new_is) && self.filter.is_none_or(|ext| ext == ".json") {
            let old_bytes = old_is.then(read_old).transpose()?;
            let new_bytes = new_is.then(read_new).transpose()?;
            let path = if new_is { &new_rel } else { &old_rel };
            out.manifests.push((path.clone(), old_bytes, new_bytes));
            return Ok(());
        }
        let Some(role) = role_of(path_rel) else {
            out.ignored.push(path_rel.clone());
            return Ok(());
        };
        if let Some(ext) = self.filter
            && !path_rel.ends_with(ext)
        {
            out.ignored.push(path_rel.clone());
            return Ok(());
        }
        let old_bytes = (kind != ChangeKind::Added).then(read_old).transpose()?;
        let new_bytes = (kind != ChangeKind::Deleted).then(read_new).transpose()?;
        let abs_path = self.workdir.join(if kind == ChangeKind::Deleted {
            &old_repo
        } else {
            &new_repo
        });
        out.raw.push(RawDelta {
            kind,
            role,
            path: path_rel.clone(),
            old_rel,
            abs_path,
            old_bytes,
            new_bytes,
        });
        Ok(())
    }
}

/// The repository holding `pipelines_dir`: `(repo, canonical work tree, pipelines folder relative to it)`.
pub(crate) fn open(pipelines_dir: &Path) -> Result<(Repository, PathBuf, String), ChangeError> {
    if !pipelines_dir.is_dir() {
        return Err(ChangeError::NoDirectory(pipelines_dir.to_path_buf()));
    }
    let io = |e: std::io::Error| ChangeError::Io {
        path: pipelines_dir.to_path_buf(),
        message: e.to_string(),
    };
    let abs_dir = pipelines_dir.canonicalize().map_err(io)?;
    let repo = Repository::discover(&abs_dir)
        .map_err(|_| ChangeError::NotARepository(pipelines_dir.to_path_buf()))?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| ChangeError::Bare(repo.path().to_path_buf()))?
        .canonicalize()
        .map_err(io)?;
    let prefix = abs_dir
        .strip_prefix(&workdir)
        .map(crate::fsutil::slash_path)
        .map_err(|_| ChangeError::NotARepository(pipelines_dir.to_path_buf()))?;
    Ok((repo, workdir, prefix))
}

/// The text of `rel` (relative to the pipelines folder) at `commit`, `None` when the commit has no such
/// file (or it is not UTF-8).
///
/// Errors: not a git repository, an unknown commit.
pub fn read_at(
    pipelines_dir: &Path,
    commit: &str,
    rel: &str,
) -> Result<Option<String>, ChangeError> {
    let (repo, _, prefix) = open(pipelines_dir)?;
    let tree = repo
        .revparse_single(commit)
        .and_then(|o| o.peel_to_tree())
        .map_err(|e| ChangeError::BadRef {
            name: commit.to_string(),
            message: e.message().to_string(),
        })?;
    let path = if prefix.is_empty() {
        rel.to_string()
    } else {
        format!("{prefix}/{rel}")
    };
    let Ok(entry) = tree.get_path(Path::new(&path)) else {
        return Ok(None);
    };
    Ok(repo
        .find_blob(entry.id())
        .ok()
        .and_then(|b| String::from_utf8(b.content().to_vec()).ok()))
}

/// Whether `head_ref` names the same commit as `HEAD` in the repository of `pipelines_dir`.
///
/// Errors: as [`list_changes`] for the folder and the refs.
pub fn is_head_commit(pipelines_dir: &Path, head_ref: &str) -> Result<bool, ChangeError> {
    let (repo, _, _) = open(pipelines_dir)?;
    Ok(commit_of(&repo, head_ref)? == commit_of(&repo, "HEAD")?)
}

/// Writes the files of the pipelines folder as they are at commit `head_ref` under `dest` (which must
/// exist), as `dest/<name of the pipelines folder>`, and returns that path. Reads objects only: the work
/// tree, index and `HEAD` are untouched. Used to load the head graph of a `--head` that is not checked
/// out.
///
/// Errors: as [`list_changes`]; a file that cannot be written.
pub fn export_tree(
    pipelines_dir: &Path,
    head_ref: &str,
    dest: &Path,
) -> Result<PathBuf, ChangeError> {
    let (repo, _, prefix) = open(pipelines_dir)?;
    let oid = commit_of(&repo, head_ref)?;
    let tree = repo
        .find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(|e| ChangeError::git(format!("reading the tree of {head_ref}"), e))?;
    let sub = if prefix.is_empty() {
        tree
    } else {
        let entry = tree
            .get_path(Path::new(&prefix))
            .map_err(|e| ChangeError::git(format!("{prefix} at {head_ref}"), e))?;
        repo.find_tree(entry.id())
            .map_err(|e| ChangeError::git(format!("{prefix} at {head_ref}"), e))?
    };
    let name = pipelines_dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_os_string()))
        .unwrap_or_else(|| "pipelines".into());
    let root = dest.join(name);
    let mut failure: Option<ChangeError> = None;
    sub.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let Ok(name) = entry.name() else {
            return git2::TreeWalkResult::Skip;
        };
        let path = root.join(dir).join(name);
        let res = match entry.kind() {
            Some(git2::ObjectType::Tree) => std::fs::create_dir_all(&path),
            Some(git2::ObjectType::Blob) => match repo.find_blob(entry.id()) {
                Ok(b) => std::fs::write(&path, b.content()),
                Err(_) => Ok(()),
            },
            _ => Ok(()),
        };
        match res {
            Ok(()) => git2::TreeWalkResult::Ok,
            Err(e) => {
                failure = Some(ChangeError::Io {
                    path,
                    message: e.to_string(),
                });
                git2::TreeWalkResult::Abort
            }
        }
    })
    .ok();
    std::fs::create_dir_all(&root).map_err(|e| ChangeError::Io {
        path: root.clone(),
        message: e.to_string(),
    })?;
    match failure {
        Some(e) => Err(e),
        None => Ok(root),
    }
}

/// The newest modification time the git index records for a project input under `pipelines_dir`
/// (`.sql`, `.properties`, `.json` other than generated `pipeline_definition.json`, `inventory.json` and
/// `pipeline_graph.json`): when the files of the commit entered the work tree (checkout, pull, `git
/// add`). Reads the index file only, no `stat` of the work tree. `None` when no entry matches.
///
/// Errors: as [`list_changes`] for the folder; an unreadable index.
pub fn index_newest_mtime(pipelines_dir: &Path) -> Result<Option<SystemTime>, ChangeError> {
    let (repo, _, prefix) = open(pipelines_dir)?;
    let index = repo
        .index()
        .map_err(|e| ChangeError::git("reading the index", e))?;
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{prefix}/")
    };
    let mut newest: Option<SystemTime> = None;
    for e in index.iter() {
        let Ok(path) = std::str::from_utf8(&e.path) else {
            continue;
        };
        if !path.starts_with(&prefix) || !is_input(path) {
            continue;
        }
        let t = SystemTime::UNIX_EPOCH
            + std::time::Duration::new(e.mtime.seconds().max(0) as u64, e.mtime.nanoseconds());
        newest = newest.max(Some(t));
    }
    Ok(newest)
}

/// Whether a file (by name) is an input of the project graph, not a generated file.
pub fn is_input(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".sql")
        || name.ends_with(".properties")
        || (name.ends_with(".json")
            && ![
                crate::metadata::DEFINITION_FILE,
                crate::inventory::shift_left::INVENTORY_FILE,
                crate::metadata::GRAPH_FILE,
                crate::scan::layout::BLUE_GREEN_FILE,
            ]
            .contains(&name))
}

/// The role of a file from its path relative to the pipelines folder; `None` for files outside the
/// table-folder contract (README, seeds JSON, …).
pub fn role_of(rel: &str) -> Option<FileRole> {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = *parts.last()?;
    let dirs = &parts[..parts.len() - 1];
    if dirs.contains(&"tests") {
        return Some(FileRole::Test);
    }
    if dirs.last() != Some(&"sql-scripts") {
        return None;
    }
    if name.ends_with(".properties") {
        Some(FileRole::Properties)
    } else if !name.ends_with(".sql") {
        None
    } else if name.starts_with("ddl.") {
        Some(FileRole::Ddl)
    } else if name.starts_with("dml.") {
        Some(FileRole::Dml)
    } else {
        Some(FileRole::OtherSql)
    }
}

/// The commit a ref (branch, tag, remote branch, sha, `HEAD~3`, …) points to.
fn commit_of(repo: &Repository, name: &str) -> Result<Oid, ChangeError> {
    repo.revparse_single(name)
        .and_then(|o| o.peel_to_commit())
        .map(|c| c.id())
        .map_err(|e| ChangeError::BadRef {
            name: name.to_string(),
            message: e.message().to_string(),
        })
}

/// Seconds since the epoch of `YYYY-MM-DD 00:00 UTC`.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.trim().splitn(3, '-');
    let (y, m, d) = (it.next()?, it.next()?, it.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if d < 1 || d > crate::time::days_in_month(y, m)? {
        return None;
    }
    Some(crate::time::days_from_civil(y, m, d) * 86_400)
}

/// The newest commit on the first-parent chain from `head` whose commit time is before `cutoff`.
fn first_parent_before(repo: &Repository, head: Oid, cutoff: i64) -> Option<Oid> {
    let mut c = repo.find_commit(head).ok()?;
    loop {
        if c.time().seconds() < cutoff {
            return Some(c.id());
        }
        c = c.parent(0).ok()?;
    }
}

fn read_blob(repo: &Repository, oid: Oid, path: &str) -> Result<Vec<u8>, ChangeError> {
    repo.find_blob(oid)
        .map(|b| b.content().to_vec())
        .map_err(|e| ChangeError::git(format!("reading {path} ({oid})"), e))
}

/// Where the files of one side of the diff are read.
enum Side<'r> {
    Tree(Tree<'r>),
    Workdir(PathBuf),
}

impl Side<'_> {
    fn read(&self, repo: &Repository, oid: Oid, repo_path: &str) -> Result<Vec<u8>, ChangeError> {
        match self {
            Side::Tree(_) => read_blob(repo, oid, repo_path),
            Side::Workdir(w) => {
                let p = w.join(repo_path);
                crate::fsutil::read_user_file(&p, crate::fsutil::max_bytes_for(&p)).map_err(|e| {
                    ChangeError::Io {
                        path: p,
                        message: e.to_string(),
                    }
                })
            }
        }
    }

    /// File names directly in a folder (repo-relative), with their content on demand.
    fn list(&self, repo: &Repository, dir: &str) -> Vec<(String, Option<Vec<u8>>)> {
        match self {
            Side::Tree(t) => {
                let Ok(entry) = t.get_path(Path::new(dir)) else {
                    return vec![];
                };
                let Ok(sub) = repo.find_tree(entry.id()) else {
                    return vec![];
                };
                sub.iter()
                    .filter_map(|e| {
                        let name = e.name().ok()?.to_string();
                        let blob = repo.find_blob(e.id()).ok().map(|b| b.content().to_vec());
                        Some((name, blob))
                    })
                    .collect()
            }
            Side::Workdir(w) => {
                let Ok(rd) = std::fs::read_dir(w.join(dir)) else {
                    return vec![];
                };
                rd.filter_map(|e| {
                    let e = e.ok()?;
                    let name = e.file_name().to_str()?.to_string();
                    let bytes = crate::fsutil::read_user_file(
                        &e.path(),
                        crate::fsutil::max_bytes_for(&e.path()),
                    );
                    Some((name, bytes.ok()))
                })
                .collect()
            }
        }
    }
}

/// One delta with both sides read, before classification.
struct RawDelta {
    kind: ChangeKind,
    role: FileRole,
    path: String,
    old_rel: String,
    abs_path: PathBuf,
    old_bytes: Option<Vec<u8>>,
    new_bytes: Option<Vec<u8>>,
}

/// The table a SQL file names, as the inventory names tables: a DDL's first created table, a DML's
/// first INSERT target (each falling back on the other).
fn name_in(a: &FileAnalysis, role: FileRole, config: &Config) -> Option<String> {
    let dml = || first_insert_target(a).map(|r| resolve_name(&r.name, config));
    let ddl = || first_created(a).map(|(r, _)| resolve_name(&r.name, config));
    match role {
        FileRole::Ddl => ddl().or_else(dml),
        FileRole::Dml | FileRole::OtherSql => dml().or_else(ddl),
        FileRole::Properties | FileRole::Test => None,
    }
}

/// Classifies one delta; returns the change (names left empty) and the table names its own SQL gives
/// on the old and new side. Each side is parsed at most once, the old side only when needed.
fn process(
    r: RawDelta,
    baseline_ref: &str,
    config: &Config,
) -> (FileChange, Option<String>, Option<String>) {
    let kind = r.kind;
    let mut change = FileChange {
        path: r.path,
        old_path: (kind == ChangeKind::Renamed).then(|| r.old_rel.clone()),
        abs_path: r.abs_path,
        role: r.role,
        table_name: String::new(),
        new_table_name: String::new(),
        base_table_name: None,
        change_kind: kind,
        content_kind: kind,
        same_sql_content: false,
        schema_diff: None,
        note: None,
    };
    let old_text = r.old_bytes.as_deref().map(std::str::from_utf8);
    let new_text = r.new_bytes.as_deref().map(std::str::from_utf8);
    let (mut a_old, mut a_new): (Option<FileAnalysis>, Option<FileAnalysis>) = (None, None);
    match (old_text, new_text) {
        (Some(Ok(o)), Some(Ok(n))) => {
            let c = classify::classify_cached(o, n, r.role, &mut a_old, &mut a_new);
            change.content_kind = c.kind;
            change.same_sql_content = c.same_sql_content;
            change.schema_diff = c.schema_diff.map(|d| SchemaDiff {
                baseline_ref: baseline_ref.to_string(),
                ..d
            });
        }
        (Some(_), Some(_)) => {
            let same = r.old_bytes == r.new_bytes;
            change.same_sql_content = same;
            change.content_kind = if same {
                ChangeKind::Cosmetic
            } else {
                ChangeKind::Logic
            };
            change.note = Some("not UTF-8 text: compared as bytes".into());
        }
        (Some(Err(_)), None) | (None, Some(Err(_))) => {
            change.note = Some("not UTF-8 text".into());
        }
        _ => {}
    }
    if kind != ChangeKind::Renamed && r.old_bytes.is_some() && r.new_bytes.is_some() {
        change.change_kind = change.content_kind;
    }
    if r.role != FileRole::Ddl || change.content_kind != ChangeKind::Schema {
        change.schema_diff = None;
    }
    let names_sql = matches!(r.role, FileRole::Ddl | FileRole::Dml | FileRole::OtherSql);
    // The old side names the table at the base (a modified file may now name another table:
    // blue-green's `orders` → `orders_v2`); the new side at the head.
    let old_name = match old_text {
        Some(Ok(t)) if names_sql => {
            name_in(a_old.get_or_insert_with(|| sql::analyze(t)), r.role, config)
        }
        _ => None,
    };
    let new_name = match new_text {
        Some(Ok(t)) if names_sql => {
            name_in(a_new.get_or_insert_with(|| sql::analyze(t)), r.role, config)
        }
        _ => None,
    };
    (change, old_name, new_name)
}

struct Ctx<'a> {
    repo: &'a Repository,
    config: &'a Config,
    prefix: &'a str,
    /// (side is head, folder) → table name.
    folder_cache: HashMap<(bool, String), Option<String>>,
}

impl Ctx<'_> {
    /// The table of the folder holding `rel` (`<folder>/sql-scripts/<file>` or `<folder>/tests/…`) on
    /// one side, else the folder's name.
    /// `change` with its table names: the names its SQL gave (`old_name` at the base, `new_name`
    /// at the head), else its folder's table. Deleted and renamed files are named at the base
    /// (shift_left's `table_name`); a modified file at the head, with the base name kept apart
    /// when the edit renamed the table (a committed blue-green: `orders` → `orders_v2`).
    fn named(
        &mut self,
        mut change: FileChange,
        old_name: Option<String>,
        new_name: Option<String>,
        base_side: &Side<'_>,
        head_side: &Side<'_>,
    ) -> FileChange {
        let old_path = change
            .old_path
            .clone()
            .unwrap_or_else(|| change.path.clone());
        let old_name = match (change.change_kind, old_name) {
            (ChangeKind::Added, _) => None,
            (_, Some(n)) => Some(n),
            (ChangeKind::Deleted | ChangeKind::Renamed, None) => {
                Some(self.folder_table_or_name(base_side, false, &old_path))
            }
            (_, None) => None,
        };
        let new_name = match (change.change_kind, new_name) {
            (ChangeKind::Deleted, _) => None,
            (_, Some(n)) => Some(n),
            (_, None) => Some(self.folder_table_or_name(head_side, true, &change.path)),
        };
        let at_base = matches!(
            change.change_kind,
            ChangeKind::Deleted | ChangeKind::Renamed
        );
        if !at_base
            && change.change_kind != ChangeKind::Added
            && let (Some(o), Some(n)) = (&old_name, &new_name)
            && o != n
        {
            change.base_table_name = Some(o.clone());
        }
        change.table_name = if at_base {
            old_name.clone().or(new_name.clone())
        } else {
            new_name.clone().or(old_name.clone())
        }
        .unwrap_or_default();
        change.new_table_name = new_name.or(old_name).unwrap_or_default();
        change
    }

    fn folder_table_or_name(&mut self, side: &Side<'_>, is_head: bool, rel: &str) -> String {
        let parts: Vec<&str> = rel.split('/').collect();
        let cut = parts
            .iter()
            .rposition(|p| *p == "sql-scripts" || *p == "tests")
            .unwrap_or(parts.len().saturating_sub(1));
        let folder = parts[..cut].join("/");
        let key = (is_head, folder.clone());
        let found = match self.folder_cache.get(&key) {
            Some(n) => n.clone(),
            None => {
                let n = self.folder_table(side, &folder);
                self.folder_cache.insert(key, n.clone());
                n
            }
        };
        found.unwrap_or_else(|| folder.rsplit('/').next().unwrap_or("").to_string())
    }

    /// The folder's table: its DML's first INSERT target, else its DDL's created table.
    fn folder_table(&self, side: &Side<'_>, folder: &str) -> Option<String> {
        let dir = if self.prefix.is_empty() {
            format!("{folder}/sql-scripts")
        } else {
            format!("{}/{folder}/sql-scripts", self.prefix)
        };
        let files = side.list(self.repo, &dir);
        let pick = |start: &str, role: FileRole| {
            files
                .iter()
                .filter(|(n, _)| n.starts_with(start) && n.ends_with(".sql") && !n.contains("dlq"))
                .find_map(|(_, c)| {
                    let t = std::str::from_utf8(c.as_ref()?).ok()?;
                    name_in(&sql::analyze(t), role, self.config)
                })
        };
        pick("dml.", FileRole::Dml).or_else(|| pick("ddl.", FileRole::Ddl))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2000-03-01"), Some(951_868_800));
        assert_eq!(parse_date("2024-02-29"), Some(1_709_164_800));
        assert_eq!(parse_date("2023-02-29"), None);
        assert_eq!(parse_date("2023-2-01"), None);
        assert_eq!(parse_date("yesterday"), None);
    }

    #[test]
    fn roles() {
        assert_eq!(
            role_of("facts/p/t/sql-scripts/ddl.t.sql"),
            Some(FileRole::Ddl)
        );
        assert_eq!(
            role_of("facts/p/t/sql-scripts/dml.t.sql"),
            Some(FileRole::Dml)
        );
        assert_eq!(
            role_of("facts/p/t/sql-scripts/dml.t.properties"),
            Some(FileRole::Properties)
        );
        assert_eq!(role_of("facts/p/t/tests/ddl_src.sql"), Some(FileRole::Test));
        assert_eq!(role_of("facts/p/t/README.md"), None);
        assert_eq!(role_of("seeds/external_tables.json"), None);
    }
}
