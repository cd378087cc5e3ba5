//! File-system helpers shared by every command:
//!
//! - [`read_user_file`] and friends (`read`): regular files only, with a documented maximum size;
//! - atomic writes: [`write_atomic`] for one file, [`stage`] / [`commit`] for an all-or-nothing batch;
//! - [`Batch`] (`batch`): a batch announced by a marker file at the root of the tree, interrupted
//!   cleanly by SIGINT, and [`recover`], which finishes what a killed process left;
//! - [`confine`]: nothing is written, renamed or deleted through a symbolic link that leaves the
//!   root a command writes under (every [`Batch`] checks it; [`write_atomic_within`] and
//!   [`create_dir_all_within`] for single writes);
//! - [`file_name_component`] (`name`): the one check of a table or statement name that becomes part
//!   of a file name;
//! - path display ([`slash_path`]).

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};

mod batch;
pub mod confine;
mod name;
mod read;
mod record;

pub use batch::{
    BATCH_MARKER_PREFIX, Batch, BatchError, BatchPhase, Durability, InterruptedBatch, Recovery,
    SigintScope, catch_sigint, interrupted_batches, is_stale_leftover, recover,
};
pub use confine::{
    Confinement, Escape, EscapeReason, create_dir_all_within, resolve, write_atomic_within,
};
pub use name::{MAX_NAME_BYTES, UnsafeName, file_name_component, shown_name};
pub use read::{
    MAX_DATA_FILE_BYTES, MAX_EXTERNAL_MANIFEST_BYTES, MAX_GENERATED_FILE_BYTES, MAX_SQL_FILE_BYTES,
    byte_size, is_refusal, max_bytes_for, read_data_file, read_data_file_within, read_diagnostic,
    read_project_file, read_user_file, read_user_file_stamped, read_user_text, utf8_error_position,
};
pub use record::{Entry as RecordEntry, RACY, Stamp, WrittenRecord, content_hash};

/// Writes `contents` to `path` atomically: a temporary file in the same folder, then renamed over the
/// target. Readers see the old file or the new one, never half of it; on error the target is untouched
/// and the temporary file is removed. A target whose content is already byte-identical is not rewritten
/// (same result, fewer syscalls, and its mtime stays, so `make` and editors see no change).
///
/// The temporary file is `.<name>.flinkpipe-tmp-<pid>` next to the target, created with `create_new`
/// (never follows or reuses an existing file) and the target's mode, or 0644 (less the umask) for a new
/// file. The pid makes the name unique between concurrent flinkpipe processes; within one process each
/// target is written by one thread at a time. A temporary left by a killed process is removed by
/// [`recover`], which every command that writes the tree runs first.
///
/// Errors: the folder does not exist or is not writable, or the rename fails (the target is untouched).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    write_atomic_changed(path, contents).map(|_| ())
}

/// [`write_atomic`], saying whether the file was written (`false`: it already held `contents` and was
/// left untouched).
pub fn write_atomic_changed(path: &Path, contents: &[u8]) -> std::io::Result<bool> {
    // One open of the target tells both whether it is unchanged and which mode to keep.
    let mode = match File::open(path) {
        Ok(mut f) => {
            let meta = f.metadata()?;
            if meta.is_file() && meta.len() == contents.len() as u64 {
                let mut old = Vec::with_capacity(contents.len());
                f.read_to_end(&mut old)?;
                if old == contents {
                    return Ok(false);
                }
            }
            file_mode(&meta)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        // Unreadable target (e.g. write-only): fall through to the write, which reports real problems.
        Err(_) => std::fs::metadata(path).ok().and_then(|m| file_mode(&m)),
    };
    let tmp = temp_path(path);
    let result = write_new(&tmp, contents, mode, false).and_then(|f| {
        drop(f); // closed before the rename (Windows cannot rename an open file)
        std::fs::rename(&tmp, path)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| true)
}

/// Replaces `path` with `contents` atomically (a temporary file renamed over it) even when it already
/// holds them, unlike [`write_atomic`]: for files whose modification time itself carries meaning (the
/// records of [`WrittenRecord`], whose entries must be older than the record). Not synced.
pub fn replace_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mode = std::fs::metadata(path).ok().and_then(|m| file_mode(&m));
    let tmp = temp_path(path);
    let result = write_new(&tmp, contents, mode, false).and_then(|f| {
        drop(f); // closed before the rename (Windows cannot rename an open file)
        std::fs::rename(&tmp, path)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A new content written to a temporary file beside its target, not yet renamed over it.
#[derive(Debug)]
pub struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    /// The temporary's stamp once written (kept by the rename), for a [`WrittenRecord`].
    stamp: Option<Stamp>,
    /// The content's [`content_hash`], when a [`Batch`] keeps a record.
    hash: Option<u128>,
}

/// An I/O error with the file it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct PathError {
    /// The file being written.
    pub path: PathBuf,
    /// What failed.
    pub source: std::io::Error,
}

/// Phase one of an all-or-nothing batch: writes `contents` to a temporary file beside `path`. Returns
/// `None` when the target already holds exactly these bytes (nothing to do).
pub fn stage(path: &Path, contents: &[u8]) -> Result<Option<Staged>, PathError> {
    let err = |source| PathError {
        path: path.to_path_buf(),
        source,
    };
    let mode = match File::open(path) {
        Ok(mut f) => {
            let meta = f.metadata().map_err(err)?;
            if meta.is_file() && meta.len() == contents.len() as u64 {
                let mut old = Vec::with_capacity(contents.len());
                f.read_to_end(&mut old).map_err(err)?;
                if old == contents {
                    return Ok(None);
                }
            }
            if !meta.is_file() {
                return Err(err(std::io::Error::other(
                    "exists and is not a regular file",
                )));
            }
            file_mode(&meta)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(_) => std::fs::metadata(path).ok().and_then(|m| file_mode(&m)),
    };
    let tmp = temp_path(path);
    match write_new(&tmp, contents, mode, false) {
        Ok(f) => Ok(Some(Staged {
            tmp,
            target: path.to_path_buf(),
            // One fstat of the open temporary: the rename keeps device, inode, size and mtime.
            stamp: f.metadata().ok().as_ref().and_then(Stamp::of),
            hash: None,
        })),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(err(e))
        }
    }
}

/// Removes staged temporaries (the batch is abandoned; no target was touched).
pub fn discard(staged: Vec<Staged>) {
    for s in staged {
        let _ = std::fs::remove_file(&s.tmp);
    }
}

/// Phase two: renames every staged temporary over its target, all or nothing. Each existing target is
/// first kept under a backup name by a hard link (no copy of its bytes; a copy where links are not
/// supported); a target that cannot be kept (a folder, an unreadable file) stops the batch before any
/// rename. If a rename still fails, the targets replaced get their previous file back (or are removed
/// if they did not exist), and the temporaries are removed. The error names the file (the first in
/// `staged` order that failed).
///
/// The backups, the renames and the removal of the backups each run on the thread pool: they are
/// independent system calls, and at 100,000 files one thread making them was a tenth of a first
/// `build-all-metadata`. Every rename is attempted before a failure is acted on.
pub fn commit(staged: Vec<Staged>) -> Result<(), PathError> {
    commit_with(staged, || true)
}

/// [`commit`], calling `on_rollback` before putting back the files already replaced (a [`Batch`]
/// records it in its marker). When `on_rollback` answers `false` (the rollback could not be
/// recorded), nothing is put back and nothing is removed: the targets renamed stay new, the
/// temporaries that failed and the backups stay, so that a later [`recover`] completes the commit as
/// the marker still says; the error says so.
pub(crate) fn commit_with(
    staged: Vec<Staged>,
    mut on_rollback: impl FnMut() -> bool,
) -> Result<(), PathError> {
    use rayon::prelude::*;
    // The same target twice would have its two renames (and rollbacks) race on one temporary and one
    // backup: refused before anything changes. A batch never stages a file twice; this is a guard.
    let mut targets = std::collections::HashSet::with_capacity(staged.len());
    if let Some(dup) = staged.iter().find(|s| !targets.insert(s.target.as_path())) {
        let target = dup.target.clone();
        discard(staged);
        return Err(PathError {
            path: target,
            source: std::io::Error::other("staged twice in one batch: nothing was replaced"),
        });
    }
    let (kept, failed) = first_failure(staged.par_iter().map(|s| backup(&s.target)).collect());
    let backups: Vec<Option<PathBuf>> = kept.into_iter().flatten().collect();
    if let Some((i, source)) = failed {
        remove_backups(&backups);
        let target = staged[i].target.clone();
        discard(staged);
        return Err(PathError {
            path: target,
            source,
        });
    }
    let (renamed, failed) = first_failure(
        staged
            .par_iter()
            .map(|s| std::fs::rename(&s.tmp, &s.target))
            .collect(),
    );
    let Some((first, source)) = failed else {
        remove_backups(&backups);
        return Ok(());
    };
    let target = staged[first].target.clone();
    if !on_rollback() {
        return Err(PathError {
            path: target,
            source: std::io::Error::new(
                source.kind(),
                format!(
                    "{source}; the batch could not be marked as rolling back, so the files already replaced were left new and the rest staged: the next flinkpipe command that writes this tree completes the batch"
                ),
            ),
        });
    }
    staged
        .into_par_iter()
        .zip(backups)
        .zip(renamed)
        .for_each(|((s, old), renamed)| match (renamed, old) {
            (Some(()), Some(old)) => {
                let _ = std::fs::rename(&old, &s.target);
            }
            (Some(()), None) => {
                let _ = std::fs::remove_file(&s.target);
            }
            (None, old) => {
                let _ = std::fs::remove_file(&s.tmp);
                if let Some(old) = old {
                    let _ = std::fs::remove_file(old);
                }
            }
        });
    Err(PathError {
        path: target,
        source,
    })
}

/// The values of `results` in order (`None` where one failed) and the first failure with its index.
fn first_failure<T>(
    results: Vec<std::io::Result<T>>,
) -> (Vec<Option<T>>, Option<(usize, std::io::Error)>) {
    let mut failed = None;
    let values = results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.map_err(|source| {
                failed.get_or_insert((i, source));
            })
            .ok()
        })
        .collect();
    (values, failed)
}

/// Flushes every staged temporary to the disk, then the folders that hold them, before a [`Batch`]'s
/// marker says `committing`, so that a power cut cannot leave a committing marker over temporaries
/// that are not all on the disk.
///
/// On Linux one `syncfs` per file system the temporaries are on does it (thousands of `fsync`s cost
/// seconds: about 4 ms each on a shared disk, against under a second for one `syncfs` after 2,000
/// files); elsewhere, or if `syncfs` fails, each temporary is `fsync`ed and each folder synced where
/// the platform allows (a folder that cannot be opened or synced is skipped).
///
/// Errors: a temporary that cannot be opened or synced (named).
pub(crate) fn sync_staged(staged: &[Staged]) -> Result<(), PathError> {
    let mut rest: Vec<&Staged> = staged.iter().collect();
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        let mut synced: Vec<u64> = Vec::new();
        let mut failed: Vec<u64> = Vec::new();
        rest.retain(|s| {
            let Ok(f) = File::open(&s.tmp) else {
                return true;
            };
            let Ok(dev) = f.metadata().map(|m| m.dev()) else {
                return true;
            };
            if synced.contains(&dev) {
                return false;
            }
            if failed.contains(&dev) {
                return true;
            }
            // SAFETY: `f` is an open file descriptor for the duration of the call.
            if unsafe { libc::syncfs(f.as_raw_fd()) } == 0 {
                synced.push(dev);
                false
            } else {
                failed.push(dev);
                true
            }
        });
    }
    for s in &rest {
        File::open(&s.tmp)
            .and_then(|f| f.sync_all())
            .map_err(|source| PathError {
                path: s.tmp.clone(),
                source,
            })?;
    }
    sync_dirs(rest.iter().map(|s| s.target.as_path()));
    Ok(())
}

/// `fsync`s the folders holding `files`, once each; best effort (not every platform or file system
/// lets a folder be synced).
pub(crate) fn sync_dirs<'a>(files: impl IntoIterator<Item = &'a Path>) {
    let mut dirs: Vec<&Path> = files
        .into_iter()
        .map(|f| match f.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    for d in dirs {
        if let Ok(f) = File::open(d) {
            let _ = f.sync_all();
        }
    }
}

/// [`write_atomic`] made durable: the temporary is synced before the rename and the folder after it,
/// so that after a crash the file holds the old content or the new one, whole. Used for batch markers
/// and for files a user cannot rebuild (`pipelines/blue_green.json`).
///
/// Errors: as [`write_atomic`], or a failed `fsync` of the temporary (the target is untouched).
pub fn write_atomic_synced(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mode = std::fs::metadata(path).ok().and_then(|m| file_mode(&m));
    let tmp = temp_path(path);
    let result = write_new(&tmp, contents, mode, true).and_then(|f| {
        drop(f); // closed before the rename (Windows cannot rename an open file)
        std::fs::rename(&tmp, path)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    } else {
        sync_dirs([path]);
    }
    result
}

/// Keeps the current file at `target` under `.<name>.flinkpipe-old-<pid>` (hard link, else copy);
/// `None` when there is no file.
fn backup(target: &Path) -> std::io::Result<Option<PathBuf>> {
    // A symbolic link is kept as the link (hard-linking a link links the link itself), as the rename
    // replaces the link, not what it points to.
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(m) if m.is_dir() => {
            return Err(std::io::Error::other("exists and is not a regular file"));
        }
        Ok(_) => {}
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old = target.with_file_name(format!(".{name}{}{}", batch::OLD_TAG, std::process::id()));
    let _ = std::fs::remove_file(&old);
    // Without hard links (vfat, some network file systems, protected_hardlinks): a copy. An immutable
    // file fails here or at its rename, which is then undone.
    match std::fs::hard_link(target, &old) {
        Ok(()) => Ok(Some(old)),
        Err(_) => std::fs::copy(target, &old).map(|_| Some(old)),
    }
}

fn remove_backups(backups: &[Option<PathBuf>]) {
    use rayon::prelude::*;
    backups.par_iter().flatten().for_each(|b| {
        let _ = std::fs::remove_file(b);
    });
}

impl Staged {
    /// Renames this temporary over its target (one step of [`commit`]). On error the temporary is
    /// removed.
    #[cfg(test)]
    fn persist(self) -> Result<(), PathError> {
        std::fs::rename(&self.tmp, &self.target).map_err(|source| {
            let _ = std::fs::remove_file(&self.tmp);
            PathError {
                path: self.target,
                source,
            }
        })
    }
}

/// `.<name>.flinkpipe-tmp-<pid>` in the target's folder.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = format!(".{name}{}{}", batch::TMP_TAG, std::process::id());
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

#[cfg(unix)]
fn file_mode(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn file_mode(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

/// Creates `tmp` (which must not exist: a leftover of this pid is removed first) and writes `contents`;
/// `sync`: flushes it to the disk too. Returns the open file.
fn write_new(tmp: &Path, contents: &[u8], mode: Option<u32>, sync: bool) -> std::io::Result<File> {
    let open = || {
        let mut o = OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(mode.unwrap_or(0o644));
        }
        o.open(tmp)
    };
    let mut f = match open() {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            // Left by an earlier process that had our pid and was killed mid-write.
            std::fs::remove_file(tmp)?;
            open()?
        }
        other => other?,
    };
    // `mode` on open is reduced by the umask; an existing target's mode is restored exactly (as before).
    #[cfg(unix)]
    if let Some(m) = mode {
        use std::os::unix::fs::PermissionsExt;
        if f.metadata()?.permissions().mode() & 0o7777 != m {
            f.set_permissions(std::fs::Permissions::from_mode(m))?;
        }
    }
    // No fsync here by default: the rename makes the switch atomic for every reader. A [`Batch`] syncs
    // its temporaries once they are all written ([`sync_staged`]), before its marker says committing.
    f.write_all(contents)?;
    if sync {
        f.sync_all()?;
    }
    Ok(f)
}

/// Serialises `value` as pretty JSON (4-space indent, as shift_left writes its files) with a final newline.
pub fn to_json_pretty<T: serde::Serialize>(value: &T) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    value
        .serialize(&mut ser)
        .expect("JSON serialisation of plain data cannot fail");
    buf.push(b'\n');
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

/// A path as `/`-separated text, whatever the platform: the form stored in JSON files.
pub fn slash_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.components() {
        if c == std::path::Component::RootDir {
            out.push('/');
            continue;
        }
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(&c.as_os_str().to_string_lossy());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_paths_have_one_leading_slash() {
        assert_eq!(slash_path(Path::new("/tmp/x/y.sql")), "/tmp/x/y.sql");
        assert_eq!(slash_path(Path::new("facts/p1/x")), "facts/p1/x");
        assert_eq!(slash_path(Path::new("")), "");
    }

    #[test]
    fn atomic_write_replaces_content_and_keeps_a_readable_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o644
            );
        }
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn identical_content_is_not_rewritten_and_modes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        write_atomic(&p, b"same").unwrap();
        let ino = |p: &Path| {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                std::fs::metadata(p).unwrap().ino()
            }
            #[cfg(not(unix))]
            0
        };
        let before = ino(&p);
        write_atomic(&p, b"same").unwrap();
        assert_eq!(ino(&p), before, "an identical file is left in place");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
            write_atomic(&p, b"different").unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), b"different");
            assert_eq!(
                std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o640
            );
        }
        // A stale temporary file of this pid (a killed earlier run) does not block the write.
        std::fs::write(temp_path(&p), b"junk").unwrap();
        write_atomic(&p, b"third").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"third");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn failed_rename_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty folder where the file should go: the rename fails.
        let p = dir.path().join("taken");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("inside"), b"x").unwrap();
        assert!(write_atomic(&p, b"new").is_err());
        assert!(p.is_dir());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// Whichever rename fails (the renames run in parallel), every file is as before: replaced ones
    /// get their old content back, new ones are removed, and no temporary or backup is left.
    #[test]
    fn a_batch_whose_rename_fails_anywhere_puts_every_file_back() {
        for failing in 0..6 {
            let dir = tempfile::tempdir().unwrap();
            let paths: Vec<PathBuf> = (0..6)
                .map(|i| dir.path().join(format!("f{i}.json")))
                .collect();
            // Even files exist before the batch, odd ones are new.
            for p in paths.iter().step_by(2) {
                std::fs::write(p, b"old").unwrap();
            }
            let staged: Vec<Staged> = paths
                .iter()
                .map(|p| stage(p, b"new").unwrap().unwrap())
                .collect();
            std::fs::remove_file(&staged[failing].tmp).unwrap();
            let err = commit(staged).unwrap_err();
            assert_eq!(err.path, paths[failing]);
            for (i, p) in paths.iter().enumerate() {
                if i % 2 == 0 {
                    assert_eq!(std::fs::read(p).unwrap(), b"old", "f{i}, failing {failing}");
                } else {
                    assert!(!p.exists(), "f{i} did not exist before (failing {failing})");
                }
            }
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                3,
                "failing {failing}"
            );
        }
    }

    #[test]
    fn a_target_staged_twice_is_refused_before_anything_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, b"old a").unwrap();
        let first = stage(&a, b"new a").unwrap().unwrap();
        let again = Staged {
            tmp: first.tmp.clone(),
            target: a.clone(),
            stamp: None,
            hash: None,
        };
        let other = stage(&b, b"new b").unwrap().unwrap();
        let err = commit(vec![first, other, again]).unwrap_err();
        assert_eq!(err.path, a);
        assert!(err.to_string().contains("staged twice"), "{err}");
        assert_eq!(std::fs::read(&a).unwrap(), b"old a");
        assert!(!b.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_batch_that_fails_midway_puts_every_file_back() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.json"),
            dir.path().join("b.json"),
            dir.path().join("c.json"),
        );
        std::fs::write(&a, b"old a").unwrap();
        std::fs::write(&c, b"old c").unwrap();
        let staged: Vec<Staged> = [(&a, "new a"), (&b, "new b"), (&c, "new c")]
            .into_iter()
            .map(|(p, t)| stage(p, t.as_bytes()).unwrap().unwrap())
            .collect();
        // The last rename fails (its temporary vanished): a and b, already replaced, are put back.
        std::fs::remove_file(&staged[2].tmp).unwrap();
        let err = commit(staged).unwrap_err();
        assert_eq!(err.path, c);
        assert_eq!(std::fs::read(&a).unwrap(), b"old a");
        assert!(!b.exists(), "b did not exist before");
        assert_eq!(std::fs::read(&c).unwrap(), b"old c");
        let left = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(left(), ["a.json", "c.json"], "no temporary or backup left");
        // A folder where a target should be stops the batch before any rename.
        std::fs::create_dir(&b).unwrap();
        let staged = vec![stage(&a, b"new a").unwrap().unwrap()];
        let mut more = staged;
        more.push(Staged {
            tmp: dir.path().join(".b.json.tmp"),
            target: b.clone(),
            stamp: None,
            hash: None,
        });
        std::fs::write(dir.path().join(".b.json.tmp"), b"x").unwrap();
        assert!(commit(more).is_err());
        assert_eq!(std::fs::read(&a).unwrap(), b"old a");
        assert_eq!(
            left(),
            ["a.json", "b.json", "c.json"],
            "no temporary or backup left"
        );
    }

    #[test]
    fn failed_write_leaves_the_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing-folder").join("f.json");
        assert!(write_atomic(&p, b"x").is_err());
        assert!(!p.exists());
    }
}
