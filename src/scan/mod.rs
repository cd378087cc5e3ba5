//! Walks a pipelines tree, finds table folders (folders holding `sql-scripts/`), reads their DDL and DML
//! files and parses them in parallel (rayon). Pure with respect to the tree: it reads, never writes.
//!
//! File contract (shift_left 0.1.52's, <https://github.com/jbcodeforce/shift_left_utils>; see
//! `docs/src/concepts/layout.md`): in `sql-scripts/`, the DDL is `ddl.*.sql` (names containing
//! `dlq` are dead-letter DDLs, kept aside), the DML is `dml.*.sql`, and `*.properties` hold
//! statement options. Several candidates for one role are an error (shift_left picked one at random).

pub mod cache;
pub mod layout;

pub use layout::Layout;

use crate::diagnostics::Diagnostic;
use crate::fsutil::{RecordEntry, Stamp, WrittenRecord, slash_path};
use crate::sql::{self, FileAnalysis};
use cache::{AnalysisCache, Key};
use std::path::{Path, PathBuf};

/// The code of the warning about temporary files of killed flinkpipe runs found in the tree: commands
/// that write the tree remove them when they see it ([`crate::fsutil::recover`]).
pub const STALE_FILES: &str = "stale-temporary-files";
/// The code of a [`layout::TODO_MARKER`] left in a SQL file (a warning; an error with
/// `pipeline validate --strict`).
pub const TODO_CODE: &str = "scaffold-todo";

/// A SQL file of a table folder, read and analysed.
#[derive(Debug, Clone)]
pub struct SqlFile {
    /// Path relative to the parent of the pipelines root, starting with the root's name
    /// (`pipelines/facts/p1/fct_order/sql-scripts/dml.p1_fct_order.sql`).
    pub rel: String,
    /// Absolute (or as given) path on disk.
    pub path: PathBuf,
    /// The file's text once read ([`SqlFile::text`]): a file the stat record shows unchanged is
    /// analysed from the cache without being read.
    text: std::sync::OnceLock<String>,
    pub analysis: FileAnalysis,
    /// For a new cache entry of a lean scan: the whole analysis as the cache stores it, serialised
    /// before [`analysis`](Self::analysis) was made lean; dropped once the cache is saved.
    stored: Option<Vec<u8>>,
    /// `false` when the file could not be read or is not UTF-8 (a diagnostic says why).
    pub readable: bool,
}

impl SqlFile {
    /// A file that could not be read or decoded (its diagnostic says why): no text, no analysis.
    fn unreadable(rel: String, path: &Path) -> SqlFile {
        SqlFile {
            rel,
            path: path.to_path_buf(),
            text: std::sync::OnceLock::from(String::new()),
            analysis: FileAnalysis::default(),
            stored: None,
            readable: false,
        }
    }

    /// The file's text; empty when it could not be read. A file whose analysis came from the cache
    /// by its stamp alone (see [`cache`]) is read on the first call: if it changed since the scan
    /// (or became unreadable), the text is what it holds now (empty if unreadable), as any file
    /// read after a scan would be.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            crate::fsutil::read_user_file(&self.path, crate::fsutil::MAX_SQL_FILE_BYTES)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default()
        })
    }
}

/// A table folder: `<layer>/[<product>/]<folder>` holding `sql-scripts/`.
#[derive(Debug, Clone)]
pub struct TableFolder {
    /// Relative path starting with the pipelines root's name (`pipelines/facts/p1/fct_order`).
    pub rel: String,
    /// Absolute (or as given) path on disk.
    pub path: PathBuf,
    /// Table type from the layer folder (`fact`), see [`Layout`].
    pub table_type: String,
    /// Product folder name, or `"None"`.
    pub product: String,
    pub ddl: Option<SqlFile>,
    pub dml: Option<SqlFile>,
    /// Dead-letter-queue DDL files (`ddl.*dlq*.sql`), relative paths.
    pub dlq_ddl: Vec<String>,
    /// `.properties` files, relative paths.
    pub properties: Vec<String>,
}

/// Everything the scan found.
#[derive(Debug, Clone)]
pub struct ScanResult {
    /// The pipelines root as given.
    pub root: PathBuf,
    /// Its last component (`pipelines`), the first component of every stored path.
    pub root_name: String,
    /// Table folders sorted by relative path.
    pub folders: Vec<TableFolder>,
    /// Every `seeds/external_tables.json` under the root (not below a hidden folder, `sql-scripts/` or
    /// `tests/`), in walk order: found by the same walk as the table folders, read by the inventory.
    pub external_manifests: Vec<PathBuf>,
    pub diagnostics: Vec<Diagnostic>,
    /// The key of everything read: this build of flinkpipe, the root, every table folder's path,
    /// layer, product and file names, and every SQL file's content key (XXH3-128); the external-table
    /// manifests, read by the inventory, are keyed there
    /// ([`crate::inventory::Inventory::manifests_key`]). `None` when a SQL file has no content key
    /// (the cache is off, or the file could not be read). See [`inputs_key`].
    pub inputs: Option<u128>,
    /// Whether the walk found nothing to report (no stale temporary file, misplaced table file,
    /// symlink loop or unreadable folder): only such a scan is keyed.
    pub walk_clean: bool,
}

/// Errors that stop a scan before it starts.
/// A relative path as given and where it points (`pipelines (/home/me/pipelines)`).
fn shown(p: &Path) -> String {
    match std::path::absolute(p) {
        Ok(abs) if p.is_relative() => format!("{} ({})", p.display(), abs.display()),
        _ => p.display().to_string(),
    }
}

/// Why a pipelines folder could not be scanned.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("pipelines folder {} does not exist or is not a folder (pass DIR, set $PIPELINES, or run the command inside a project: a folder with pipelines/ or below it)", shown(.0))]
    NotADirectory(PathBuf),
}

/// Scans the pipelines tree under `root`, with the analysis cache of the tree (see [`cache`];
/// off with `FLINKPIPE_NO_CACHE=1`).
///
/// Errors: `root` is not a folder. Every other problem (unreadable file, non-UTF-8 text, empty file,
/// SQL the parser rejects, ambiguous files) becomes a diagnostic with the file and, where known, the line.
pub fn scan(root: &Path, layout: &Layout) -> Result<ScanResult, ScanError> {
    scan_with(root, layout, Detail::Full)
}

/// How much of each SQL file a scan keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Whole analyses and the files' texts: for commands that read statements and columns
    /// (`pipeline validate`, the scaffold, `sql refs`).
    Full,
    /// Lean analyses ([`FileAnalysis::strip_to_references`]: no statement texts, no column lists)
    /// and no file texts ([`SqlFile::text`] reads the file again if asked): what
    /// [`crate::inventory::Inventory::build`] reads, in a fraction of the memory and of the time
    /// of loading the cache.
    Inventory,
}

/// [`scan`] keeping the [`Detail`] asked for.
///
/// Errors: as [`scan`].
pub fn scan_with(root: &Path, layout: &Layout, detail: Detail) -> Result<ScanResult, ScanError> {
    if !root.is_dir() {
        return Err(ScanError::NotADirectory(root.to_path_buf()));
    }
    let cache = AnalysisCache::for_root(root);
    // The stamps of the SQL files read last time, beside the cache: an unchanged file is known from
    // one stat, its analysis taken from the cache by its recorded content key without reading it.
    let seen = if cache.enabled() {
        cache::root_file(root, "read").map_or_else(WrittenRecord::disabled, WrittenRecord::at)
    } else {
        WrittenRecord::disabled()
    };
    let (result, stamps) = scan_with_cache(root, layout, &cache, &seen, detail);
    let mut result = (result, stamps.0);
    if cache.enabled() {
        let current: Vec<(Key, cache::Stored)> = result
            .1
            .iter()
            .zip(result.0.folders.iter_mut())
            .flat_map(|(keys, f)| {
                [(keys[0], &mut f.ddl), (keys[1], &mut f.dml)]
                    .into_iter()
                    .filter_map(|(k, file)| {
                        let file = file.as_mut()?;
                        let stored = match file.stored.take() {
                            Some(json) => cache::Stored::Json(json),
                            None => cache::Stored::Analysis(&file.analysis),
                        };
                        Some((k?, stored))
                    })
            })
            .collect();
        cache.save(current);
        seen.save(stamps.1);
        // A walk with something to say (a stale temporary file, a misplaced table file, a symlink
        // loop) is not keyed: what it says is not in the key, and a [`probe`] does not report it.
        if result.0.walk_clean {
            let scanned = &result.0;
            result.0.inputs = inputs_key(
                root,
                &scanned.root_name,
                scanned
                    .folders
                    .iter()
                    .zip(&result.1)
                    .map(|(f, k)| FolderInputs::of_scan(f, *k)),
            );
        }
    }
    Ok(result.0)
}

/// What [`inputs_key`] keys of one table folder: the same for a scan ([`TableFolder`]) and a
/// [`probe`] ([`Listing`]), so that both give one key for one tree.
struct FolderInputs<'a> {
    rel: &'a str,
    table_type: &'a str,
    product: &'a str,
    /// The DDL's and the DML's relative path and content key (`None`: no key known).
    files: [Option<(String, Option<Key>)>; 2],
    dlq_ddl: &'a [String],
    properties: &'a [String],
}

impl<'a> FolderInputs<'a> {
    fn of_scan(f: &'a TableFolder, keys: FolderKeys) -> Self {
        let file = |file: &Option<SqlFile>, key| file.as_ref().map(|s| (s.rel.clone(), key));
        FolderInputs {
            rel: &f.rel,
            table_type: &f.table_type,
            product: &f.product,
            files: [file(&f.ddl, keys[0]), file(&f.dml, keys[1])],
            dlq_ddl: &f.dlq_ddl,
            properties: &f.properties,
        }
    }

    fn of_listing(l: &'a Listing, keys: FolderKeys) -> Self {
        FolderInputs {
            rel: &l.rel,
            table_type: &l.table_type,
            product: &l.product,
            files: [
                l.file_rel(0).map(|r| (r, keys[0])),
                l.file_rel(1).map(|r| (r, keys[1])),
            ],
            dlq_ddl: &l.dlq_ddl,
            properties: &l.properties,
        }
    }
}

/// The key of the inputs of a scan (see [`ScanResult::inputs`]): two scans with the same key read
/// the same bytes in the same places with the same build, so whatever is derived from them alone is
/// the same. Each field is hashed with its length, so no two different inputs run together. `folders`
/// in the order of their relative paths.
fn inputs_key<'a>(
    root: &Path,
    root_name: &str,
    folders: impl Iterator<Item = FolderInputs<'a>>,
) -> Option<u128> {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut field = |bytes: &[u8]| cache::hash_field(&mut h, bytes);
    field(env!("CARGO_PKG_VERSION").as_bytes());
    // This very binary (another build may derive other files from the same inputs).
    let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    field(format!("{:?}", Stamp::of(&exe)?).as_bytes());
    let canonical = root.canonicalize().ok()?;
    field(canonical.as_os_str().as_encoded_bytes());
    field(root_name.as_bytes());
    for f in folders {
        field(f.rel.as_bytes());
        field(f.table_type.as_bytes());
        field(f.product.as_bytes());
        for file in &f.files {
            match file {
                None => field(b"-"),
                Some((rel, key)) => {
                    field(rel.as_bytes());
                    field(&(*key)?.to_le_bytes());
                }
            }
        }
        field(&(f.dlq_ddl.len() as u64).to_le_bytes());
        for d in f.dlq_ddl {
            field(d.as_bytes());
        }
        field(&(f.properties.len() as u64).to_le_bytes());
        for p in f.properties {
            field(p.as_bytes());
        }
    }
    Some(h.digest128())
}

/// The key a scan of `root` would give as [`ScanResult::inputs`], from the stamps of its files
/// alone, and the external-table manifests the walk found (for the inventory's part of the key,
/// [`crate::inventory::external::manifests_key`]): the tree is walked, each `sql-scripts/` listed
/// and each SQL file `stat`ed, and no file is read. `None` — so that the caller scans — when the
/// cache is off, when any SQL file is not as the record of files read last time has it (changed,
/// new, racy, or never recorded clean: see [`read_sql_cached`]), or when the walk or a listing
/// has anything to report (a diagnostic, which only a scan reports). Stops at the first such file.
///
/// Cost: one walk, one listing per table folder and one `stat` per SQL file, on the thread pool;
/// at 100,000 tables a fraction of a scan from the cache.
pub fn probe(root: &Path, layout: &Layout) -> Option<(u128, Vec<PathBuf>)> {
    if !root.is_dir() {
        return None;
    }
    let seen = WrittenRecord::at(cache::root_file(root, "read")?);
    if seen.is_empty() {
        return None;
    }
    let root_name = root_name_of(root);
    // Each folder's stats on the thread pool while the walk goes on.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let found = std::sync::Mutex::new(Vec::new());
    let walked = rayon::in_place_scope(|s| {
        walk(root, &root_name, Some(&stop), |folder| {
            let (found, root_name, stop, seen) = (&found, &root_name, &stop, &seen);
            s.spawn(move |_| {
                use std::sync::atomic::Ordering::Relaxed;
                if stop.load(Relaxed) {
                    return;
                }
                let listing = list_folder(root, root_name, folder, layout);
                let mut keys: FolderKeys = [None, None];
                for (slot, key) in keys.iter_mut().enumerate() {
                    if let Some(name) = &listing.files[slot] {
                        *key = seen
                            .current(&listing.scripts.join(name))
                            .map(|entry| entry.hash);
                        if key.is_none() {
                            stop.store(true, Relaxed);
                        }
                    }
                }
                if !listing.diags.is_empty() {
                    stop.store(true, Relaxed);
                }
                found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push((listing, keys));
            });
        })
    });
    if stop.into_inner() || !walked.diagnostics.is_empty() {
        return None;
    }
    let mut found = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    found.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
    let key = inputs_key(
        root,
        &root_name,
        found.iter().map(|(l, k)| FolderInputs::of_listing(l, *k)),
    )?;
    Some((key, walked.external_manifests))
}

/// The name of the pipelines root as stored paths start with it (`pipelines`): the last component
/// of its canonical path.
fn root_name_of(root: &Path) -> String {
    root.canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "pipelines".to_string())
}

/// Content keys of a folder's DDL and DML (`None`: no such file, or unreadable).
type FolderKeys = [Option<Key>; 2];

/// A file's path and its stamp with its content key, for the record of files read.
type Seen = (PathBuf, RecordEntry);

/// The scan proper; also returns each folder's content keys, in the order of `folders`.
fn scan_with_cache(
    root: &Path,
    layout: &Layout,
    cache: &AnalysisCache,
    seen: &WrittenRecord,
    detail: Detail,
) -> (ScanResult, (Vec<FolderKeys>, Vec<Seen>)) {
    let root_name = root_name_of(root);

    // One walk finds table folders and external-table manifests (see [`walk`]); each folder found is
    // read and parsed on the thread pool while the walk goes on, so that the walk's system calls and
    // the parsing overlap.
    let found = std::sync::Mutex::new(Vec::new());
    let walked = rayon::in_place_scope(|s| {
        walk(root, &root_name, None, |folder| {
            let (found, root_name) = (&found, &root_name);
            s.spawn(move |_| {
                let read = read_folder(root, root_name, folder, layout, cache, seen, detail);
                found
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(read);
            });
        })
    });
    let mut results: Vec<(TableFolder, Vec<Diagnostic>, FolderKeys, Vec<Seen>)> = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    tracing::debug!(
        folders = results.len(),
        cached = cache.len(),
        "table folders read"
    );
    results.sort_by(|a, b| a.0.rel.cmp(&b.0.rel));
    let mut folders = Vec::with_capacity(results.len());
    let mut keys = Vec::with_capacity(results.len());
    let walk_clean = walked.diagnostics.is_empty();
    let mut diagnostics = walked.diagnostics;
    let mut stamps = Vec::with_capacity(results.len() * 2);
    for (f, d, k, s) in results {
        folders.push(f);
        keys.push(k);
        diagnostics.extend(d);
        stamps.extend(s);
    }
    (
        ScanResult {
            root: root.to_path_buf(),
            root_name,
            folders,
            external_manifests: walked.external_manifests,
            diagnostics,
            inputs: None,
            walk_clean,
        },
        (keys, stamps),
    )
}

/// What [`walk`] found besides the table folders.
struct Walked {
    /// Every `seeds/external_tables.json`, in walk order.
    external_manifests: Vec<PathBuf>,
    /// Unreadable folders, symlink loops, misplaced table files, stale temporary files.
    diagnostics: Vec<Diagnostic>,
}

/// A table folder the walk found: its path, and the names of the files in its `sql-scripts/`
/// (`None`: the walk could not list it, see [`walk`]).
struct FoundFolder {
    path: PathBuf,
    listed: Option<Vec<String>>,
}

/// One sequential walk of the tree at `root` (named `root_name` in diagnostics): calls `on_folder`
/// with every table folder (a folder holding `sql-scripts/`) as it is found, and returns the
/// external-table manifests and the walk's diagnostics. Table folders are not searched below
/// `target/` or `node_modules/`, manifests not below `sql-scripts/` or `tests/`, and neither below
/// hidden folders. The names of the files in `sql-scripts/` come with the folder (walkdir has listed
/// it to walk it: listing it again cost one more open and read of every `sql-scripts/`), `None` when
/// the walk could not list it (an unreadable entry): [`list_folder`] then lists it and reports what
/// it finds. Nothing below `sql-scripts/` is walked. The walk ends early once `stop` is set (what it
/// returns is then partial).
fn walk(
    root: &Path,
    root_name: &str,
    stop: Option<&std::sync::atomic::AtomicBool>,
    mut on_folder: impl FnMut(FoundFolder),
) -> Walked {
    let mut external_manifests: Vec<PathBuf> = Vec::new();
    // Symlinked folders are followed (teams link shared tables in); walkdir detects loops.
    let mut walk_diagnostics: Vec<Diagnostic> = Vec::new();
    // Temporary files and backups of flinkpipe processes that died while writing (reported once).
    let mut stale: Vec<PathBuf> = Vec::new();
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    let below = |path: &Path, names: [&str; 2]| {
        path.strip_prefix(root).is_ok_and(|rel| {
            rel.components()
                .any(|c| names.iter().any(|n| c.as_os_str() == *n))
        })
    };
    // The `sql-scripts/` being listed: its table folder, its path, the names so far (`None` once an
    // entry could not be read).
    let mut listing: Option<(PathBuf, PathBuf, Option<Vec<String>>)> = None;
    let stopped = || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
    while let Some(entry) = walker.next() {
        if stopped() {
            break;
        }
        if let Some((_, scripts, names)) = &mut listing {
            let inside = match &entry {
                Ok(e) => e.path() != scripts.as_path() && e.path().starts_with(&*scripts),
                // An error listing the folder (its own path), one of its entries, or one without a
                // path while it is listed (a failed read of the folder): the folder lists itself, and
                // reports what it finds.
                Err(e) => e.path().is_none_or(|p| p.starts_with(&*scripts)),
            };
            if inside {
                match &entry {
                    Ok(e) => {
                        let is_dir = e.file_type().is_dir();
                        if is_dir {
                            walker.skip_current_dir();
                        }
                        if let Some(names) = names
                            && let Some(name) = e.file_name().to_str()
                        {
                            // walkdir follows links: the type is the target's.
                            if listed_in_scripts(name, || e.file_type().is_file()) {
                                names.push(name.to_string());
                            }
                        } else {
                            *names = None;
                        }
                    }
                    Err(_) => *names = None,
                }
                continue;
            }
            if let Some((path, _, listed)) = listing.take() {
                on_folder(FoundFolder { path, listed });
            }
        }
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let at = e
                    .path()
                    .map(|p| slash_path(p.strip_prefix(root).unwrap_or(p)))
                    .unwrap_or_default();
                let at = if at.is_empty() {
                    root_name.to_string()
                } else {
                    format!("{root_name}/{at}")
                };
                walk_diagnostics.push(match e.loop_ancestor() {
                    Some(a) => Diagnostic::warning(
                        "symlink-loop",
                        format!("symbolic link loops back to {}: not followed", a.display()),
                    )
                    .at(at, None, None),
                    None => Diagnostic::error(
                        "unreadable-folder",
                        format!(
                            "cannot read: {}",
                            e.io_error()
                                .map(|i| i.to_string())
                                .unwrap_or_else(|| e.to_string())
                        ),
                    )
                    .at(at, None, None),
                });
                continue;
            }
        };
        let name = entry.file_name();
        if entry.depth() > 0 && name.as_encoded_bytes().starts_with(b".") {
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            } else if crate::fsutil::is_stale_leftover(name) {
                stale.push(entry.path().to_path_buf());
            }
            continue;
        }
        if name == "sql-scripts" && entry.file_type().is_dir() {
            if entry.depth() >= 2
                && !below(entry.path(), ["target", "node_modules"])
                && let Some(parent) = entry.path().parent()
            {
                // Its entries come next (walkdir has listed it): collected until the walk leaves it.
                listing = Some((
                    parent.to_path_buf(),
                    entry.path().to_path_buf(),
                    Some(Vec::new()),
                ));
            } else {
                walker.skip_current_dir();
            }
        } else if name == "sql-scripts" && entry.depth() >= 2 {
            // Not a folder (a file, a FIFO, a dangling link): the table would be lost silently.
            let rel = slash_path(entry.path().strip_prefix(root).unwrap_or(entry.path()));
            walk_diagnostics.push(
                Diagnostic::error(
                    "sql-scripts-not-a-folder",
                    "sql-scripts is not a folder: this table folder is not read (sql-scripts/ must be a folder holding ddl.<table>.sql and dml.<table>.sql)",
                )
                .at(format!("{root_name}/{rel}"), None, None),
            );
        } else if name == "external_tables.json"
            && entry.depth() > 0
            && entry
                .path()
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|n| n == "seeds")
            && !below(entry.path(), ["sql-scripts", "tests"])
        {
            external_manifests.push(entry.into_path());
        } else if entry.depth() > 0
            && !entry.file_type().is_dir()
            && is_table_file_name(&name.to_string_lossy())
            && !below(entry.path(), ["tests", "target"])
            && !below(entry.path(), ["node_modules", "tests"])
        {
            // A table file outside `sql-scripts/` is never read: say so rather than lose the table.
            let rel = slash_path(entry.path().strip_prefix(root).unwrap_or(entry.path()));
            walk_diagnostics.push(
                Diagnostic::warning(
                    "file-outside-sql-scripts",
                    "not read: table files belong in the table folder's sql-scripts/ folder",
                )
                .at(format!("{root_name}/{rel}"), None, None),
            );
        }
    }

    if let Some((path, _, listed)) = listing.take()
        && !stopped()
    {
        on_folder(FoundFolder { path, listed });
    }
    if let Some(first) = stale.first() {
        let rel = slash_path(first.strip_prefix(root).unwrap_or(first));
        walk_diagnostics.push(
            Diagnostic::warning(
                STALE_FILES,
                format!(
                    "{} temporary file(s) left by flinkpipe runs that were killed while writing (this one and others); the next command that writes the tree removes them (e.g. `flinkpipe pipeline build-all-metadata`)",
                    stale.len()
                ),
            )
            .at(format!("{root_name}/{rel}"), None, None),
        );
    }
    Walked {
        external_manifests,
        diagnostics: walk_diagnostics,
    }
}

/// Whether `name` is a table file's name: `ddl.*.sql` or `dml.*.sql`, in any case.
fn is_table_file_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    (n.starts_with("ddl.") || n.starts_with("dml.")) && n.ends_with(".sql")
}

/// Whether an entry of `sql-scripts/` named `name` is listed: a table file whatever it is (a folder,
/// a dangling link: reading it reports it, rather than the table losing it silently), else only a
/// regular file (`is_file`, links followed).
fn listed_in_scripts(name: &str, is_file: impl FnOnce() -> bool) -> bool {
    is_table_file_name(name) || is_file()
}

/// What a table folder's `sql-scripts/` listing says, before any SQL file is read: everything of the
/// folder that [`inputs_key`] keys besides the files' contents.
struct Listing {
    /// As [`TableFolder::rel`].
    rel: String,
    table_type: String,
    product: String,
    scripts: PathBuf,
    /// The DDL's and the DML's file name (the first of each role, by name).
    files: [Option<String>; 2],
    dlq_ddl: Vec<String>,
    properties: Vec<String>,
    /// Unreadable `sql-scripts/`, several files of one role, no DDL nor DML.
    diags: Vec<Diagnostic>,
}

impl Listing {
    /// The relative path of the DDL (`slot` 0) or the DML (1), as [`SqlFile::rel`].
    fn file_rel(&self, slot: usize) -> Option<String> {
        self.files[slot]
            .as_ref()
            .map(|n| format!("{}/sql-scripts/{n}", self.rel))
    }
}

/// Lists a table folder's `sql-scripts/` and classifies its files (nothing is read).
/// The names of the files in `sql-scripts/` are the walk's ([`FoundFolder::listed`]), or listed here.
fn list_folder(root: &Path, root_name: &str, found: FoundFolder, layout: &Layout) -> Listing {
    let FoundFolder {
        path: folder,
        listed,
    } = found;
    let folder = folder.as_path();
    let mut diags = Vec::new();
    let rel_to_root = folder.strip_prefix(root).unwrap_or(folder);
    let comps: Vec<String> = rel_to_root
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let comp_refs: Vec<&str> = comps.iter().map(String::as_str).collect();
    let (table_type, product) = layout.classify(&comp_refs);
    let rel = if comps.is_empty() {
        root_name.to_string()
    } else {
        format!("{root_name}/{}", slash_path(rel_to_root))
    };

    let scripts = folder.join("sql-scripts");
    let mut names: Vec<String> = match listed {
        Some(names) => names,
        None => match std::fs::read_dir(&scripts) {
            // The entry's type comes with the listing; only symlinks need a stat (to their target).
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter(|e| {
                    listed_in_scripts(&e.file_name().to_string_lossy(), || match e.file_type() {
                        Ok(t) if t.is_symlink() => e.path().is_file(),
                        Ok(t) => t.is_file(),
                        Err(_) => e.path().is_file(),
                    })
                })
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(e) => {
                diags.push(
                    Diagnostic::error("unreadable-folder", format!("cannot list sql-scripts: {e}"))
                        .at(format!("{rel}/sql-scripts"), None, None),
                );
                Vec::new()
            }
        },
    };
    names.sort();

    let mut ddl_names = Vec::new();
    let mut dml_names = Vec::new();
    let mut dlq_ddl = Vec::new();
    let mut properties = Vec::new();
    for n in names {
        let lower = n.to_ascii_lowercase();
        if lower.ends_with(".properties") {
            properties.push(format!("{rel}/sql-scripts/{n}"));
        } else if lower.starts_with("ddl.") && lower.ends_with(".sql") {
            if lower.contains("dlq") {
                dlq_ddl.push(format!("{rel}/sql-scripts/{n}"));
            } else {
                ddl_names.push(n);
            }
        } else if lower.starts_with("dml.") && lower.ends_with(".sql") {
            dml_names.push(n);
        }
    }
    for (role, list) in [("DDL", &ddl_names), ("DML", &dml_names)] {
        if list.len() > 1 {
            diags.push(
                Diagnostic::error(
                    "ambiguous-file",
                    format!(
                        "several {role} files in one table folder: {}; keep one",
                        list.join(", ")
                    ),
                )
                .at(format!("{rel}/sql-scripts"), None, None),
            );
        }
    }
    if ddl_names.is_empty() && dml_names.is_empty() {
        diags.push(
            Diagnostic::error(
                "empty-table-folder",
                "table folder has neither a ddl.<table>.sql nor a dml.<table>.sql file",
            )
            .at(format!("{rel}/sql-scripts"), None, None),
        );
    }
    Listing {
        rel,
        table_type,
        product,
        scripts,
        files: [ddl_names.into_iter().next(), dml_names.into_iter().next()],
        dlq_ddl,
        properties,
        diags,
    }
}

fn read_folder(
    root: &Path,
    root_name: &str,
    folder: FoundFolder,
    layout: &Layout,
    cache: &AnalysisCache,
    seen: &WrittenRecord,
    detail: Detail,
) -> (TableFolder, Vec<Diagnostic>, FolderKeys, Vec<Seen>) {
    let path = folder.path.clone();
    let listing = list_folder(root, root_name, folder, layout);
    let mut diags = listing.diags;
    let mut keys: FolderKeys = [None, None];
    let mut stamps = Vec::new();
    let mut read = |slot: usize| {
        let name = listing.files[slot].as_ref()?;
        let (file, key, stamp) = read_sql_cached(
            &listing.scripts.join(name),
            format!("{}/sql-scripts/{name}", listing.rel),
            &mut diags,
            cache,
            seen,
            detail,
        );
        keys[slot] = key;
        stamps.extend(stamp);
        Some(file)
    };
    let ddl = read(0);
    let dml = read(1);
    (
        TableFolder {
            rel: listing.rel,
            path,
            table_type: listing.table_type,
            product: listing.product,
            ddl,
            dml,
            dlq_ddl: listing.dlq_ddl,
            properties: listing.properties,
        },
        diags,
        keys,
        stamps,
    )
}

/// Reads and analyses one SQL file, turning every problem into a diagnostic on `diags`.
pub fn read_sql(path: &Path, rel: String, diags: &mut Vec<Diagnostic>) -> SqlFile {
    read_sql_cached(
        path,
        rel,
        diags,
        &AnalysisCache::disabled(),
        &WrittenRecord::disabled(),
        Detail::Full,
    )
    .0
}

/// [`read_sql`] with an analysis cache and the record of the files read last time (`seen`); also
/// returns the content key of a readable file and, for a file whose diagnostics all come from its
/// analysis (no forbidden character, no [`layout::TODO_MARKER`]), its stamp to record.
///
/// A file `seen` shows unchanged (same device, inode, size and modification time, older than the
/// record by [`crate::fsutil::RACY`]) whose recorded key is in the cache is not read: its analysis
/// is the cached one, its text is read only if asked for ([`SqlFile::text`]).
fn read_sql_cached(
    path: &Path,
    rel: String,
    diags: &mut Vec<Diagnostic>,
    cache: &AnalysisCache,
    seen: &WrittenRecord,
    detail: Detail,
) -> (SqlFile, Option<Key>, Option<Seen>) {
    let cached = |key: Key| match detail {
        Detail::Full => cache.get(key),
        Detail::Inventory => sql::deserialize_lean(|| cache.get(key)),
    };
    if cache.enabled()
        && let Some(entry) = seen.current(path)
        && let Some(analysis) = cached(entry.hash)
    {
        empty_file_diagnostic(&analysis, &rel, diags);
        warning_diagnostics(&analysis, &rel, diags);
        return (
            SqlFile {
                rel,
                path: path.to_path_buf(),
                text: std::sync::OnceLock::new(),
                analysis,
                stored: None,
                readable: true,
            },
            Some(entry.hash),
            Some((path.to_path_buf(), entry)),
        );
    }
    // Regular files only, at most MAX_SQL_FILE_BYTES: a FIFO would block forever, /dev/zero never end.
    let (bytes, meta) =
        match crate::fsutil::read_user_file_stamped(path, crate::fsutil::MAX_SQL_FILE_BYTES) {
            Ok(b) => b,
            Err(e) => {
                diags.push(crate::fsutil::read_diagnostic(&e).at(rel.clone(), None, None));
                return (SqlFile::unreadable(rel, path), None, None);
            }
        };
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let pos = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = bytes[..pos].iter().filter(|&&b| b == b'\n').count() + 1;
            let col = pos
                - bytes[..pos]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map(|p| p + 1)
                    .unwrap_or(0)
                + 1;
            diags.push(
                Diagnostic::error(
                    "not-utf8",
                    format!(
                        "file is not valid UTF-8 (invalid byte at offset {pos}); save it as UTF-8"
                    ),
                )
                .at(rel.clone(), Some(line), Some(col)),
            );
            return (SqlFile::unreadable(rel, path), None, None);
        }
    };
    // Characters no SQL file holds, which would be sent as they are (#29): a NUL byte, and a byte
    // order mark anywhere but at the very start (a doubled BOM sent "\u{feff}" as a statement).
    let forbidden = forbidden_character(&text);
    if let Some((at, what)) = forbidden {
        let (line, col) = line_col(&text, at);
        diags.push(Diagnostic::error("sql-character", what.to_string()).at(
            rel.clone(),
            Some(line),
            Some(col),
        ));
    }
    // A hit is the stored result of `sql::analyze` on these exact bytes (see `cache` for why that holds).
    let key = cache.enabled().then(|| cache::key(text.as_bytes()));
    let mut hit = false;
    let mut analysis = key
        .and_then(cached)
        .inspect(|_| hit = true)
        .unwrap_or_else(|| sql::analyze(&text));
    empty_file_diagnostic(&analysis, &rel, diags);
    let mut todo = false;
    // A decision `table init` left to the user (the join condition of sources without a shared key).
    // One search of the whole text first: most files have none, and a search per line builds the
    // substring searcher once per line.
    let lines = if text.contains(layout::TODO_MARKER) {
        text.lines()
    } else {
        "".lines()
    };
    for (i, l) in lines.enumerate() {
        if let Some(at) = l.find(layout::TODO_MARKER) {
            let col = l[..at].chars().count() + 1;
            todo = true;
            diags.push(
                Diagnostic::warning(
                    TODO_CODE,
                    format!(
                        "{}: a decision left by `flinkpipe table init`: {}",
                        layout::TODO_MARKER,
                        l[at + layout::TODO_MARKER.len()..]
                            .trim_start_matches(':')
                            .trim()
                    ),
                )
                .at(rel.clone(), Some(i + 1), Some(col)),
            );
        }
    }
    warning_diagnostics(&analysis, &rel, diags);
    // Only a file with no diagnostic of its text may be known later from its stamp alone.
    let clean = forbidden.is_none() && !todo;
    let stamp = key
        .zip(Stamp::of(&meta))
        .filter(|_| clean)
        .map(|(hash, stamp)| (path.to_path_buf(), RecordEntry { stamp, hash }));
    let mut stored = None;
    let text = match detail {
        Detail::Full => std::sync::OnceLock::from(text),
        Detail::Inventory => {
            // A new entry of the cache is serialised whole here, on this thread, and the analysis
            // kept lean: the scan never holds every whole analysis at once.
            if cache.enabled() && !hit {
                stored = Some(cache::serialise(&analysis));
            }
            analysis.strip_to_references();
            std::sync::OnceLock::new()
        }
    };
    (
        SqlFile {
            rel,
            path: path.to_path_buf(),
            text,
            analysis,
            stored,
            readable: true,
        },
        key,
        stamp,
    )
}

/// The warning about a file with no statement (from its analysis alone).
fn empty_file_diagnostic(analysis: &FileAnalysis, rel: &str, diags: &mut Vec<Diagnostic>) {
    // A file over a limit has no statement either; its own error says why.
    if analysis.statements.is_empty() && !analysis.warnings.iter().any(|w| w.kind.is_error()) {
        diags.push(
            Diagnostic::warning("empty-file", "file has no SQL statement").at(rel, None, None),
        );
    }
}

/// The diagnostics of a file's analysis warnings (tokenizer, parser, limits).
fn warning_diagnostics(analysis: &FileAnalysis, rel: &str, diags: &mut Vec<Diagnostic>) {
    for w in &analysis.warnings {
        let message = match w.kind {
            sql::WarningKind::Fallback => format!(
                "{}; references were read by the token-level extractor",
                w.message
            ),
            _ => w.message.clone(),
        };
        let d = if w.kind.is_error() {
            Diagnostic::error(w.kind.code(), message)
        } else {
            Diagnostic::warning(w.kind.code(), message)
        };
        diags.push(d.at(rel, Some(w.line), Some(w.column)));
    }
}

/// The first character of `text` that no SQL file may hold — a NUL byte, or a byte order mark
/// (U+FEFF) other than one at the very start — as its byte offset and what to say about it.
fn forbidden_character(text: &str) -> Option<(usize, &'static str)> {
    let start = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    text[start..]
        .char_indices()
        .find_map(|(i, c)| match c {
            '\0' => Some((
                start + i,
                "a NUL character in the SQL text: remove it (nothing is sent while the file holds it)",
            )),
            '\u{feff}' => Some((
                start + i,
                "a byte order mark (U+FEFF) inside the SQL text (a second one at the start?): remove it (nothing is sent while the file holds it)",
            )),
            _ => None,
        })
}

/// The 1-based line and column (in characters) of byte offset `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing as compared: relative path, DDL and DML names, DLQ DDLs, properties, diagnostics.
    type Shown = (String, [Option<String>; 2], Vec<String>, Vec<String>, usize);

    /// What `list_folder` makes of a folder with the walk's names and with its own listing.
    fn listings(root: &Path) -> Vec<Shown> {
        let mut found = Vec::new();
        let walked = walk(root, "pipelines", None, |f| found.push(f));
        assert!(walked.diagnostics.is_empty(), "{:?}", walked.diagnostics);
        let layout = Layout::default();
        let show = |l: Listing| (l.rel, l.files, l.dlq_ddl, l.properties, l.diags.len());
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found
            .into_iter()
            .map(|f| {
                let own = FoundFolder {
                    path: f.path.clone(),
                    listed: None,
                };
                let by_walk = show(list_folder(root, "pipelines", f, &layout));
                let by_itself = show(list_folder(root, "pipelines", own, &layout));
                assert_eq!(by_walk, by_itself);
                by_walk
            })
            .collect()
    }

    /// The walk lists each `sql-scripts/` once, for the folder: the same files as a listing of its
    /// own, whatever the folder holds (subfolders, hidden files, links to files, to folders and
    /// dangling), and nothing below it is walked.
    #[test]
    fn the_walks_listing_of_sql_scripts_is_the_folders_own() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("pipelines");
        let scripts = root.join("facts/p/fct/sql-scripts");
        std::fs::create_dir_all(scripts.join("sub/sql-scripts")).unwrap();
        std::fs::create_dir_all(scripts.join("ddl.folder.sql")).unwrap();
        for (name, text) in [
            ("ddl.fct.sql", "CREATE TABLE fct (id INT);"),
            ("dml.fct.sql", "INSERT INTO fct SELECT 1;"),
            ("ddl.fct_dlq.sql", "CREATE TABLE fct_dlq (id INT);"),
            ("kafka.properties", "a=b"),
            (".hidden.properties", "a=b"),
            ("README.md", "notes"),
            (
                "sub/sql-scripts/ddl.deep.sql",
                "CREATE TABLE deep (id INT);",
            ),
        ] {
            std::fs::write(scripts.join(name), text).unwrap();
        }
        let src = root.join("sources/p/src/sql-scripts");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("ddl.src.sql"), "CREATE TABLE src (id INT);").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(scripts.join("dml.fct.sql"), src.join("dml.src.sql"))
                .unwrap();
            std::os::unix::fs::symlink(scripts.join("sub"), src.join("linked-folder")).unwrap();
            std::os::unix::fs::symlink(scripts.join("kafka.properties"), src.join("x.properties"))
                .unwrap();
            // Not regular files: never listed.
            std::os::unix::fs::symlink("/dev/null", src.join("null.properties")).unwrap();
            let fifo = std::process::Command::new("mkfifo")
                .arg(src.join("fifo.properties"))
                .status();
            assert!(fifo.is_ok_and(|s| s.success()));
        }
        let all = listings(&root);
        assert_eq!(all.len(), 2, "{all:?}");
        assert_eq!(all[0].0, "pipelines/facts/p/fct");
        assert_eq!(
            all[0].1,
            [
                Some("ddl.fct.sql".to_string()),
                Some("dml.fct.sql".to_string())
            ]
        );
        assert_eq!(
            all[0].2,
            ["pipelines/facts/p/fct/sql-scripts/ddl.fct_dlq.sql"]
        );
        assert_eq!(
            all[0].3,
            [
                "pipelines/facts/p/fct/sql-scripts/.hidden.properties",
                "pipelines/facts/p/fct/sql-scripts/kafka.properties"
            ]
        );
        // Two DDL files (the folder named like one counts): a diagnostic.
        assert_eq!(all[0].4, 1);
        #[cfg(unix)]
        {
            assert_eq!(
                all[1].1,
                [
                    Some("ddl.src.sql".to_string()),
                    Some("dml.src.sql".to_string())
                ]
            );
            assert_eq!(
                all[1].3,
                ["pipelines/sources/p/src/sql-scripts/x.properties"]
            );
            // A dangling link: the walk cannot list the folder, which lists itself.
            std::os::unix::fs::symlink(src.join("gone"), src.join("dangling.sql")).unwrap();
            let mut found = Vec::new();
            walk(&root, "pipelines", None, |f| found.push(f));
            found.sort_by(|a, b| a.path.cmp(&b.path));
            assert!(found[0].listed.is_some());
            assert!(found[1].listed.is_none());
            assert_eq!(listings(&root).len(), 2);
        }
    }
}
