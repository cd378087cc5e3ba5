//! A content-addressed cache of SQL file analyses, so that consecutive commands on the same tree
//! (`table build-inventory` then `pipeline build-all-metadata`, `validate` then `graph`, …) parse each
//! unchanged file once.
//!
//! **Where**: `$XDG_CACHE_HOME/flinkpipe/` (else `~/.cache/flinkpipe/`), one file per pipelines root,
//! named after a hash of the root's canonical path. Outside the project on purpose: commands that read
//! (`validate`, `graph`, …) never write into the user's tree, and nothing needs a `.gitignore`.
//!
//! **Why it is safe** (it can only ever save time, never change a result):
//! - the key is the 128-bit XXH3 hash of the file's bytes, a stable, specified hash (the same bytes
//!   give the same key on every platform, build and release), so an edited file is a miss;
//! - the first line names the cache format, the crate version and a fingerprint of the SQL front end's
//!   sources and `Cargo.lock` (computed by `build.rs`): any change to the analysis code, to sqlparser or
//!   to the format makes the whole file a miss, even between two builds of one version;
//! - the body carries its own XXH3 checksum: a truncated or damaged file is ignored (and rebuilt), and an
//!   entry that does not deserialise is a miss; no cache problem is ever reported or fatal;
//! - the file is written atomically ([`write_atomic`]), so concurrent runs see a whole file or none;
//! - `FLINKPIPE_NO_CACHE=1` turns it off, as does a missing home folder.
//!
//! **Format** (text, one entry per line, so that loading indexes lines and deserialises only the entries
//! it uses, in parallel, and saving reuses the lines of unchanged files):
//!
//! ```text
//! flinkpipe-analysis-cache format=1 version=0.1.0 build=<fingerprint> body=<xxh3-64 of the rest>
//! <32 hex digits of the key> <8 hex digits: length of the JSON> <FileAnalysis as JSON>
//! …
//! ```
//!
//! Old cache files (of trees that no longer exist, such as temporary copies) are removed when they
//! have not been written for 30 days.

use crate::fsutil::write_atomic;
use crate::sql::FileAnalysis;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// The cache key of a file: XXH3-128 of its bytes.
pub type Key = u128;

/// Bumped whenever the layout of the cache file changes.
const FORMAT: u32 = 1;

/// Cache files older than this are removed when another cache file is written.
const MAX_AGE: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// The key of a file's content.
pub fn key(bytes: &[u8]) -> Key {
    xxh3_128(bytes)
}

/// Adds one field of a key of many fields to `h`: its length (8 bytes, little-endian), then its
/// bytes, so that no two different sequences of fields hash the same bytes.
pub fn hash_field(h: &mut xxhash_rust::xxh3::Xxh3, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// Key → byte range of the entry's JSON in the loaded file.
type Index = HashMap<Key, std::ops::Range<usize>>;

/// A loaded cache: the entries of the last run on the same root, deserialised on demand.
#[derive(Debug, Default)]
pub struct AnalysisCache {
    /// Where the cache lives; `None` when caching is off.
    file: Option<PathBuf>,
    /// The loaded file (mapped, not copied: see [`Body`]).
    body: Body,
    /// Where each entry's JSON is in `body`.
    index: Index,
}

impl AnalysisCache {
    /// No cache: every lookup misses and [`save`](Self::save) does nothing.
    pub fn disabled() -> Self {
        AnalysisCache::default()
    }

    /// The cache of the pipelines tree at `root`, or a disabled cache when `FLINKPIPE_NO_CACHE` is set
    /// (to anything but empty or `0`) or there is no cache folder. Never fails: an unreadable, foreign or
    /// damaged file loads as an empty cache.
    pub fn for_root(root: &Path) -> Self {
        if std::env::var_os("FLINKPIPE_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
            return Self::disabled();
        }
        match root_file(root, "analysis") {
            Some(file) => Self::at(file),
            None => Self::disabled(),
        }
    }

    /// The cache stored in `file` (loaded now if it exists and is valid).
    pub fn at(file: PathBuf) -> Self {
        let mut cache = AnalysisCache {
            file: Some(file),
            ..Default::default()
        };
        if let Some(path) = &cache.file
            && let Ok(body) = Body::load(path)
            && let Some(index) = parse(&body)
        {
            cache.body = body;
            cache.index = index;
        }
        cache
    }

    /// Whether the cache is on (has a file to load from and save to).
    pub fn enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Number of entries loaded.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no entry was loaded.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The stored analysis of the file whose content has this key, if any.
    pub fn get(&self, key: Key) -> Option<FileAnalysis> {
        let range = self.index.get(&key)?;
        serde_json::from_slice(&self.body[range.clone()]).ok()
    }

    /// Replaces the stored entries with `current` (the analyses of this run, by key), so entries of
    /// deleted or edited files do not pile up. Skipped when nothing changed (every key was a hit and no
    /// entry went stale). Errors are ignored: the cache is only ever an optimisation.
    pub fn save(&self, current: Vec<(Key, Stored<'_>)>) {
        let Some(path) = &self.file else { return };
        let mut entries = current;
        entries.sort_unstable_by_key(|(k, _)| *k);
        entries.dedup_by_key(|(k, _)| *k);
        if entries.len() == self.index.len()
            && entries.iter().all(|(k, _)| self.index.contains_key(k))
        {
            return;
        }
        // Unchanged entries reuse their stored line; new ones are serialised, in parallel by batches
        // appended to one buffer (the peak is one file plus a batch, not two copies of the file).
        // The whole file is reserved at once where its size is known (a growing buffer would hold
        // two copies while it is moved), and each serialised entry is freed once copied.
        let known: usize = entries
            .iter()
            .map(|(k, e)| match (self.index.get(k), e) {
                (Some(r), _) => r.len() + 43,
                (None, Stored::Json(json)) => json.len() + 43,
                (None, Stored::Analysis(_)) => 0,
            })
            .sum();
        let mut out = header(0).into_bytes();
        out.reserve(known);
        let head_len = out.len();
        let mut rest = entries.into_iter();
        loop {
            let batch: Vec<(Key, Stored<'_>)> = rest.by_ref().take(1024).collect();
            if batch.is_empty() {
                break;
            }
            let lines: Vec<Vec<u8>> = batch
                .into_par_iter()
                .map(|(k, analysis)| {
                    let mut line = format!("{k:032x} 00000000 ").into_bytes();
                    match (self.index.get(&k), analysis) {
                        (Some(r), _) => line.extend_from_slice(&self.body[r.clone()]),
                        (None, Stored::Json(json)) => line.extend_from_slice(&json),
                        (None, Stored::Analysis(analysis)) => {
                            serde_json::to_writer(&mut line, analysis)
                                .expect("plain data serialises")
                        }
                    }
                    let len = format!("{:08x}", line.len() - 42);
                    line[33..41].copy_from_slice(len.as_bytes());
                    line.push(b'\n');
                    line
                })
                .collect();
            for line in lines {
                out.extend_from_slice(&line);
            }
        }
        // The header ends with ` body=<16 hex digits>\n`: fill in the body's checksum.
        let sum = format!("{:016x}", xxh3_64(&out[head_len..]));
        out[head_len - 17..head_len - 1].copy_from_slice(sum.as_bytes());
        if let Some(dir) = path.parent() {
            if std::fs::create_dir_all(dir).is_err() {
                return;
            }
            prune(dir, path);
        }
        if let Err(e) = write_atomic(path, &out) {
            tracing::debug!(error = %e, cache = %path.display(), "analysis cache not written");
        }
    }
}

/// An analysis to store ([`AnalysisCache::save`]): as it is, or already serialised by
/// [`serialise`] (a lean scan serialises each new analysis on the thread that made it, then keeps
/// only its lean form).
#[derive(Debug, Clone)]
pub enum Stored<'a> {
    Analysis(&'a FileAnalysis),
    Json(Vec<u8>),
}

impl<'a> From<&'a FileAnalysis> for Stored<'a> {
    fn from(a: &'a FileAnalysis) -> Stored<'a> {
        Stored::Analysis(a)
    }
}

/// An analysis as the cache stores it (its JSON), for [`Stored::Json`].
pub fn serialise(analysis: &FileAnalysis) -> Vec<u8> {
    serde_json::to_vec(analysis).expect("plain data serialises")
}

/// The cache file of kind `kind` (`analysis`, `written`) of the pipelines tree at `root`:
/// `<cache folder>/<kind>-<XXH3-64 of the root's canonical path>.cache`; `None` when caching is off
/// (`FLINKPIPE_NO_CACHE` set to anything but empty or `0`, or no cache folder).
pub fn root_file(root: &Path, kind: &str) -> Option<PathBuf> {
    if std::env::var_os("FLINKPIPE_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
        return None;
    }
    let dir = cache_dir()?;
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let id = xxh3_64(canonical.as_os_str().as_encoded_bytes());
    Some(dir.join(format!("{kind}-{id:016x}.cache")))
}

/// `$XDG_CACHE_HOME/flinkpipe` (absolute paths only, as the XDG spec says), else `~/.cache/flinkpipe`.
fn cache_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".cache"))
    })?;
    Some(base.join("flinkpipe"))
}

/// The header line, up to ` body=`; the analysis code's fingerprint comes from `build.rs`.
fn header_prefix() -> String {
    format!(
        "flinkpipe-analysis-cache format={FORMAT} version={} build={}",
        env!("CARGO_PKG_VERSION"),
        env!("FLINKPIPE_SQL_FINGERPRINT")
    )
}

fn header(body_hash: u64) -> String {
    format!("{} body={body_hash:016x}\n", header_prefix())
}

/// The bytes of a loaded cache file. On Unix the file is mapped read-only rather than read: at
/// 100,000 tables it is ≈ 500 MB, which a read would copy into freshly zeroed memory, while a mapping
/// shares the pages the kernel already caches and holds only the ones touched.
///
/// A mapping is only as stable as the file under it: flinkpipe never changes a cache file in place
/// (it replaces it by a rename, [`write_atomic`], which leaves the mapped inode whole), so only
/// another program truncating the very file while a command runs could fault the process.
#[derive(Debug, Default)]
enum Body {
    #[default]
    Empty,
    Read(Vec<u8>),
    #[cfg(unix)]
    Mapped(Mapping),
}

impl Body {
    fn load(path: &Path) -> std::io::Result<Body> {
        #[cfg(unix)]
        {
            let file = std::fs::File::open(path)?;
            let len = file.metadata()?.len();
            if len == 0 {
                return Ok(Body::Empty);
            }
            if let Ok(len) = usize::try_from(len)
                && let Some(m) = Mapping::of(&file, len)
            {
                return Ok(Body::Mapped(m));
            }
        }
        std::fs::read(path).map(Body::Read)
    }
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Empty => &[],
            Body::Read(v) => v,
            #[cfg(unix)]
            Body::Mapped(m) => m.bytes(),
        }
    }
}

/// A read-only private mapping of a whole file (see [`Body`]).
#[cfg(unix)]
#[derive(Debug)]
struct Mapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is read-only and owned: sharing or moving it between threads is as for `&[u8]`.
#[cfg(unix)]
unsafe impl Send for Mapping {}
#[cfg(unix)]
unsafe impl Sync for Mapping {}

#[cfg(unix)]
impl Mapping {
    /// Maps `len` (> 0) bytes of `file`; `None` when the system refuses (the file is then read).
    fn of(file: &std::fs::File, len: usize) -> Option<Mapping> {
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh read-only private mapping of an open file; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        std::ptr::NonNull::new(ptr.cast()).map(|ptr| Mapping { ptr, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until `drop`; nothing writes them (see `Body`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(unix)]
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `of`, once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// Checks the header and the body's checksum, and indexes the entries (ranges into the whole file, which
/// is kept as is: no copy). `None` for anything unexpected.
fn parse(bytes: &[u8]) -> Option<Index> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let head = std::str::from_utf8(&bytes[..nl]).ok()?;
    let sum = head
        .strip_prefix(&header_prefix())?
        .strip_prefix(" body=")?;
    let sum = u64::from_str_radix(sum, 16).ok()?;
    if xxh3_64(&bytes[nl + 1..]) != sum {
        return None;
    }
    // Each line says how long its JSON is, so indexing jumps from line to line without scanning.
    let mut index = HashMap::new();
    let mut start = nl + 1;
    while start < bytes.len() {
        let line = bytes.get(start..start + 42)?;
        if line[32] != b' ' || line[41] != b' ' {
            return None;
        }
        let key = Key::from_str_radix(std::str::from_utf8(&line[..32]).ok()?, 16).ok()?;
        let len = usize::from_str_radix(std::str::from_utf8(&line[33..41]).ok()?, 16).ok()?;
        let json = start + 42..start + 42 + len;
        if bytes.get(json.end) != Some(&b'\n') {
            return None;
        }
        index.insert(key, json.clone());
        start = json.end + 1;
    }
    Some(index)
}

/// Removes other cache files that have not been written for [`MAX_AGE`].
fn prune(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for e in entries.flatten() {
        let p = e.path();
        let ours = p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            (n.starts_with("analysis-") || n.starts_with("written-") || n.starts_with("read-"))
                && n.ends_with(".cache")
        });
        if !ours || p == keep {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > MAX_AGE);
        if old {
            let _ = std::fs::remove_file(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(sql: &str) -> (Key, FileAnalysis) {
        (key(sql.as_bytes()), crate::sql::analyze(sql))
    }

    #[test]
    fn round_trip_and_hits() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("analysis-x.cache");
        let (k1, a1) = sample("INSERT INTO t SELECT a FROM s JOIN u ON s.id = u.id;");
        let (k2, a2) = sample(
            "SET 'a' = 'b';\nCREATE TABLE t (a INT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'kafka');",
        );
        let empty = AnalysisCache::at(file.clone());
        assert!(empty.enabled() && empty.is_empty());
        empty.save(vec![
            (k1, (&a1).into()),
            (k2, (&a2).into()),
            (k1, (&a1).into()),
        ]);

        let loaded = AnalysisCache::at(file.clone());
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded.get(k1).as_ref(), Some(&a1));
        assert_eq!(loaded.get(k2).as_ref(), Some(&a2));
        assert_eq!(loaded.get(key(b"other")), None);

        // Unchanged set: not rewritten. A smaller set: stale entries are dropped.
        let before = std::fs::read(&file).unwrap();
        loaded.save(vec![(k2, (&a2).into()), (k1, (&a1).into())]);
        assert_eq!(std::fs::read(&file).unwrap(), before);
        loaded.save(vec![(k2, Stored::Json(serialise(&a2)))]);
        let pruned = AnalysisCache::at(file.clone());
        assert_eq!(pruned.len(), 1);
        assert_eq!(pruned.get(k2).as_ref(), Some(&a2));
    }

    #[test]
    fn damaged_or_foreign_files_load_empty() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("analysis-y.cache");
        let (k, a) = sample("INSERT INTO t SELECT * FROM s");
        AnalysisCache::at(file.clone()).save(vec![(k, (&a).into())]);
        let good = std::fs::read(&file).unwrap();

        // Truncated body.
        std::fs::write(&file, &good[..good.len() - 5]).unwrap();
        assert!(AnalysisCache::at(file.clone()).is_empty());
        // One flipped byte in the body.
        let mut flipped = good.clone();
        let last = flipped.len() - 3;
        flipped[last] ^= 1;
        std::fs::write(&file, &flipped).unwrap();
        assert!(AnalysisCache::at(file.clone()).is_empty());
        // Another format or build.
        let other = String::from_utf8(good.clone())
            .unwrap()
            .replacen("format=1", "format=0", 1);
        std::fs::write(&file, other).unwrap();
        assert!(AnalysisCache::at(file.clone()).is_empty());
        // Garbage, and a folder where the file should be.
        std::fs::write(&file, b"\x00\xffgarbage").unwrap();
        assert!(AnalysisCache::at(file.clone()).is_empty());
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        let c = AnalysisCache::at(file.clone());
        assert!(c.is_empty());
        c.save(vec![(k, (&a).into())]); // cannot write: ignored
    }

    #[test]
    fn disabled_cache_never_hits_or_writes() {
        let c = AnalysisCache::disabled();
        assert!(!c.enabled());
        let (k, a) = sample("SELECT 1");
        c.save(vec![(k, (&a).into())]);
        assert_eq!(c.get(k), None);
    }
}
