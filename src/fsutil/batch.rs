//! Batches of files written all or nothing under one root, and what happens when the process writing
//! them is interrupted.
//!
//! A [`Batch`] announces itself with a marker file at the root of the tree it writes,
//! `<root>/.flinkpipe-batch-<pid>` (JSON: pid, process start time, command, the command that repairs
//! it, phase), before its first temporary file exists, and removes it after the last rename:
//!
//! - phase `staging`: new contents are written to temporary files beside their targets
//!   (`.<name>.flinkpipe-tmp-<pid>`); no target has changed;
//! - phase `committing`: every temporary is complete and flushed to the disk (one `syncfs` per file
//!   system on Linux, else an `fsync` of each and of their folders where the platform allows) before
//!   the marker says so; targets are linked to backups
//!   (`.<name>.flinkpipe-old-<pid>`) and the temporaries renamed over them;
//! - phase `rolling-back`: a rename failed and the replaced targets are getting their backups back.
//!   The rollback starts only once the marker says `rolling-back`; if that cannot be written, nothing
//!   is put back, the marker stays `committing` and the next command completes the batch (all new).
//!
//! The marker itself is written durably (synced before its rename, its folder after), and the
//! folders of the targets are synced after the last rename, before the marker is removed. A batch of
//! derived files ([`Durability::Derived`], [`Batch::begin_derived`]) skips both syncs of its files:
//! a killed process still leaves them all old or all new, and a power cut leaves the marker, which
//! names the command that rebuilds them.
//!
//! **SIGINT** while a batch is open does not kill the process: during staging the batch stops at the
//! next file, removes its temporaries and reports [`BatchError::Interrupted`] (every file is as it
//! was); during the commit the renames (fast, no data written) are finished first, and the interrupt is
//! reported after (every file is new). The command then exits with status 130, as a shell expects.
//!
//! **SIGKILL** (or a crash, a power cut) cannot be caught: the marker stays. [`recover`], which every
//! command that writes the tree runs first, finds markers whose process is gone and finishes their
//! work — a batch killed while staging loses its temporaries (all old), one killed while committing
//! has its remaining temporaries renamed into place (all new: every temporary was complete), one
//! killed while rolling back gets its backups back (all old). It also removes any leftover temporary
//! or backup of a dead process. [`interrupted_batches`] lets `pipeline validate` report such a batch,
//! with the command that repairs it, without writing anything.
//!
//! A process counts as gone when no process has its pid, or when the process with that pid started at
//! another time than the one recorded (Linux `/proc/<pid>/stat`), so a reused pid is not mistaken for
//! the writer.

use super::confine::Confinement;
use super::record::{Entry, Stamp, WrittenRecord, content_hash};
use super::{PathError, Staged, discard};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The name of a batch marker at the root of the tree, before the pid: `.flinkpipe-batch-<pid>`.
pub const BATCH_MARKER_PREFIX: &str = ".flinkpipe-batch-";
/// In the name of a temporary file: `.<name>.flinkpipe-tmp-<pid>`.
pub(super) const TMP_TAG: &str = ".flinkpipe-tmp-";
/// In the name of a backup: `.<name>.flinkpipe-old-<pid>`.
pub(super) const OLD_TAG: &str = ".flinkpipe-old-";

/// Where a batch was when its marker was last written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BatchPhase {
    /// Writing temporary files; no target changed.
    Staging,
    /// Every temporary is complete; they are being renamed over their targets.
    Committing,
    /// A rename failed; replaced targets are getting their previous content back.
    RollingBack,
}

/// The marker file's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Marker {
    format: u32,
    pid: u32,
    /// The writer's start time (clock ticks since boot, `/proc/<pid>/stat` field 22), when known.
    process_start: Option<u64>,
    /// What was running, e.g. `flinkpipe pipeline build-all-metadata`.
    command: String,
    /// The command that repairs the tree if this batch was interrupted.
    repair: String,
    phase: BatchPhase,
    /// Seconds since the Unix epoch.
    started_at: u64,
}

/// Why a batch did not complete.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// A file could not be staged or replaced; every file is as it was.
    #[error(transparent)]
    File(#[from] PathError),
    /// SIGINT arrived. `committed`: the batch was committing and was finished first (every file is
    /// new); otherwise it was abandoned (every file is as it was).
    #[error("interrupted (SIGINT): {}", if *committed {
        "the files were being replaced and were all written first"
    } else {
        "no file was changed"
    })]
    Interrupted { committed: bool },
}

/// How much a [`Batch`] protects its files against a crash of the machine (a power cut); against a
/// killed process both are all-or-nothing, through the marker and [`recover`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Files a user cannot rebuild (SQL rewritten by `update-tables-version`, `update-ut-ddl`,
    /// `blue-green --apply`; test files): the temporaries reach the disk (`syncfs`) before the marker
    /// says `committing`, and their folders are synced after the renames.
    Full,
    /// Files rebuilt from the SQL on the next run (`inventory.json`, `pipeline_definition.json`,
    /// `pipeline_graph.json`): atomic renames under the (synced) marker, no `fsync` of the files or
    /// their folders. After a power cut some may be old, or empty; the marker left behind makes
    /// `pipeline validate` name the command that rebuilds them.
    Derived,
}

/// An all-or-nothing write of many files under one root (see the module docs). Dropping it (on any
/// error path) removes its marker and gives SIGINT its previous disposition back.
#[derive(Debug)]
pub struct Batch {
    path: PathBuf,
    marker: Marker,
    durability: Durability,
    /// The marker stays when the batch ends: a rollback could not be recorded, so recovery must
    /// complete the commit.
    keep_marker: bool,
    /// The record of derived files consulted and renewed by this batch ([`Batch::with_record`]).
    record: Option<BatchRecord>,
    /// Every staged file must be reached through no link that leaves the root.
    confine: Confinement,
    _sigint: SigintGuard,
}

/// A [`WrittenRecord`] and the files found already up to date during staging.
#[derive(Debug)]
struct BatchRecord {
    record: WrittenRecord,
    unchanged: Mutex<Vec<(PathBuf, Entry)>>,
    /// The key of the inputs every file of the batch derives from ([`Batch::deriving_from`]).
    inputs: Option<u128>,
}

impl Batch {
    /// Opens a batch under `root`: SIGINT is caught from now on, then the marker is written.
    /// `command` is what runs (`flinkpipe pipeline build-all-metadata`), `repair` the command that
    /// completes the tree if this batch is killed (given to the user by `pipeline validate`).
    ///
    /// Errors: the marker cannot be written (the root is not writable).
    pub fn begin(root: &Path, command: &str, repair: &str) -> Result<Batch, PathError> {
        Batch::begin_with(root, command, repair, Durability::Full)
    }

    /// [`Batch::begin`] for derived files ([`Durability::Derived`]): no `fsync` of the files written
    /// or of their folders.
    ///
    /// Errors: the marker cannot be written (the root is not writable).
    pub fn begin_derived(root: &Path, command: &str, repair: &str) -> Result<Batch, PathError> {
        Batch::begin_with(root, command, repair, Durability::Derived)
    }

    fn begin_with(
        root: &Path,
        command: &str,
        repair: &str,
        durability: Durability,
    ) -> Result<Batch, PathError> {
        let sigint = SigintGuard::install();
        let pid = std::process::id();
        let batch = Batch {
            path: root.join(format!("{BATCH_MARKER_PREFIX}{pid}")),
            marker: Marker {
                format: 1,
                pid,
                process_start: process_start(pid),
                command: command.to_string(),
                repair: repair.to_string(),
                phase: BatchPhase::Staging,
                started_at: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            },
            durability,
            keep_marker: false,
            record: None,
            confine: Confinement::new(root),
            _sigint: sigint,
        };
        batch.write_marker()?;
        Ok(batch)
    }

    /// Whether SIGINT arrived since the batch began: staging should stop.
    pub fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }

    /// Consults `record` when staging: a target whose stamp and recorded content hash say it already
    /// holds the new bytes is left alone without being read (one `stat`). After a successful commit
    /// the record is replaced by this batch's files, as they are on the disk. For batches that write
    /// every derived file of a tree (`build-all-metadata`), so that the record stays whole.
    pub fn with_record(mut self, record: WrittenRecord) -> Batch {
        if record.enabled() {
            self.record = Some(BatchRecord {
                record,
                unchanged: Mutex::new(Vec::new()),
                inputs: None,
            });
        }
        self
    }

    /// Says that every file this batch writes or finds up to date derives from the inputs of key
    /// `inputs` alone (see [`WrittenRecord::inputs`]): the renewed record names it. Only for a batch
    /// of [`Batch::with_record`] that stages *every* derived file of the tree and nothing else.
    pub fn deriving_from(mut self, inputs: Option<u128>) -> Batch {
        if let Some(rec) = &mut self.record {
            rec.inputs = inputs;
        }
        self
    }

    /// Stages one file (see [`super::stage`]) unless SIGINT arrived; `None`: the target already holds
    /// these bytes (read and compared, or known from the record of [`Batch::with_record`]).
    ///
    /// Errors: [`BatchError::File`] for a file that cannot be staged, or whose folder is reached
    /// through a symbolic link that leaves the batch's root (an [`super::Escape`], see
    /// [`super::confine`]: nothing is written there); [`BatchError::Interrupted`].
    pub fn stage(&self, path: &Path, contents: &[u8]) -> Result<Option<Staged>, BatchError> {
        if self.interrupted() {
            return Err(BatchError::Interrupted { committed: false });
        }
        self.confine.check_file(path).map_err(|e| PathError {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let Some(rec) = &self.record else {
            return Ok(super::stage(path, contents)?);
        };
        let hash = content_hash(contents);
        let unchanged = |entry: Entry| {
            rec.unchanged
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((path.to_path_buf(), entry));
        };
        if let Some(entry) = rec.record.holds(path, hash) {
            unchanged(entry);
            return Ok(None);
        }
        match super::stage(path, contents)? {
            Some(mut s) => {
                s.hash = Some(hash);
                Ok(Some(s))
            }
            None => {
                if let Some(stamp) = std::fs::metadata(path).ok().as_ref().and_then(Stamp::of) {
                    unchanged(Entry { stamp, hash });
                }
                Ok(None)
            }
        }
    }

    /// Commits `staged` (every temporary complete) as [`super::commit`] does, the marker saying so,
    /// then removes the marker. A SIGINT that arrived before the commit abandons the batch instead.
    ///
    /// Errors: [`BatchError::File`] (every file put back), [`BatchError::Interrupted`] (before: nothing
    /// changed; during: every file was replaced first).
    pub fn commit(mut self, staged: Vec<Staged>) -> Result<(), BatchError> {
        if self.interrupted() {
            discard(staged);
            return Err(BatchError::Interrupted { committed: false });
        }
        // Every temporary on the disk before the marker says so: after a power cut a committing
        // marker never stands over a temporary that is not whole (derived files are rebuilt instead).
        if self.durability == Durability::Full
            && let Err(e) = super::sync_staged(&staged)
        {
            discard(staged);
            return Err(e.into());
        }
        // Nothing to rename (every file was up to date): no phase to record.
        if !staged.is_empty() {
            self.marker.phase = BatchPhase::Committing;
            if let Err(e) = self.write_marker() {
                discard(staged);
                return Err(e.into());
            }
        }
        let record = self.record.take().map(|rec| {
            let mut entries = rec
                .unchanged
                .into_inner()
                .unwrap_or_else(|e| e.into_inner());
            entries.extend(staged.iter().filter_map(|s| {
                Some((
                    s.target.clone(),
                    Entry {
                        stamp: s.stamp?,
                        hash: s.hash?,
                    },
                ))
            }));
            (rec.record, entries, rec.inputs)
        });
        self.rename_all(staged)?;
        if let Some((record, entries, inputs)) = record {
            record.save_with_inputs(super::record::settle(entries), inputs);
        }
        Ok(())
    }

    /// The renames of [`Batch::commit`] (its marker already says committing), then the folders
    /// synced. A failed rename rolls back only once the marker says `rolling-back`; if that cannot be
    /// written, nothing is put back and the marker stays (`committing`), so that the next
    /// [`recover`] completes the batch, as the marker says.
    fn rename_all(mut self, staged: Vec<Staged>) -> Result<(), BatchError> {
        let targets: Vec<PathBuf> = if self.durability == Durability::Full {
            staged.iter().map(|s| s.target.clone()).collect()
        } else {
            Vec::new()
        };
        let mut unrecorded = false;
        let result = super::commit_with(staged, || {
            self.marker.phase = BatchPhase::RollingBack;
            match self.write_marker() {
                Ok(()) => true,
                Err(_) => {
                    unrecorded = true;
                    false
                }
            }
        });
        if unrecorded {
            self.keep_marker = true;
        }
        result?;
        if self.durability == Durability::Full {
            super::sync_dirs(targets.iter().map(PathBuf::as_path));
        }
        if self.interrupted() {
            return Err(BatchError::Interrupted { committed: true });
        }
        Ok(())
    }

    /// Gives up: removes the staged temporaries (and, when dropped, the marker).
    pub fn abandon(self, staged: Vec<Staged>) {
        discard(staged);
    }

    /// Writes the marker durably (synced before and after its rename): its phase is what recovery
    /// acts on.
    fn write_marker(&self) -> Result<(), PathError> {
        let text = serde_json::to_string(&self.marker).expect("plain data serialises");
        #[cfg(test)]
        if FAIL_MARKER_WRITES.with(|f| f.get()) {
            return Err(PathError {
                path: self.path.clone(),
                source: std::io::Error::other("marker write refused (test)"),
            });
        }
        super::write_atomic_synced(&self.path, text.as_bytes()).map_err(|source| PathError {
            path: self.path.clone(),
            source,
        })
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if !self.keep_marker {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Makes [`Batch::write_marker`] fail (tests of a marker that cannot be written).
    static FAIL_MARKER_WRITES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A batch whose process is gone, as its marker describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InterruptedBatch {
    /// The marker file.
    pub marker: PathBuf,
    pub pid: u32,
    /// What was running (`flinkpipe pipeline build-all-metadata`); empty for an unreadable marker.
    pub command: String,
    /// The command that completes the tree.
    pub repair: String,
    /// `None` for an unreadable marker (treated as staging: its temporaries are removed).
    pub phase: Option<BatchPhase>,
    /// Seconds since the Unix epoch; 0 when unknown.
    pub started_at: u64,
}

/// The batches under `root` whose process is gone, by pid. Reads the root folder only; writes
/// nothing.
pub fn interrupted_batches(root: &Path) -> Vec<InterruptedBatch> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut found: Vec<InterruptedBatch> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let pid: u32 = name
                .to_str()?
                .strip_prefix(BATCH_MARKER_PREFIX)?
                .parse()
                .ok()?;
            let path = e.path();
            let marker: Option<Marker> = super::read_user_file(&path, 1 << 20)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            let start = marker.as_ref().and_then(|m| m.process_start);
            if process_alive(pid, start) {
                return None;
            }
            Some(match marker {
                Some(m) => InterruptedBatch {
                    marker: path,
                    pid,
                    command: m.command,
                    repair: m.repair,
                    phase: Some(m.phase),
                    started_at: m.started_at,
                },
                None => InterruptedBatch {
                    marker: path,
                    pid,
                    command: String::new(),
                    repair: String::new(),
                    phase: None,
                    started_at: 0,
                },
            })
        })
        .collect();
    found.sort_by_key(|b| b.pid);
    found
}

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// The interrupted batches found (their markers are removed).
    pub batches: Vec<InterruptedBatch>,
    /// Temporaries of a committing batch renamed over their targets.
    pub completed: usize,
    /// Backups of a batch that was rolling back put back over their targets.
    pub restored: usize,
    /// Temporaries and backups removed.
    pub removed: usize,
}

impl Recovery {
    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty() && self.completed == 0 && self.restored == 0 && self.removed == 0
    }
}

/// Finishes what flinkpipe processes that died while writing under `root` left behind (see the module
/// docs): interrupted batches are completed or undone, and temporaries and backups of dead processes
/// are removed. The root folder is always checked; the whole tree is walked (hidden folders excepted)
/// when an interrupted batch is found or `walk_tree` is set (the scan saw leftovers).
///
/// Errors: a temporary that cannot be renamed into place (the tree stays as it was found, and the
/// marker stays, so the next command tries again).
pub fn recover(root: &Path, walk_tree: bool) -> Result<Recovery, PathError> {
    let batches = interrupted_batches(root);
    let mut rec = Recovery::default();
    let phase_of = |pid: u32| {
        batches
            .iter()
            .find(|b| b.pid == pid)
            .map(|b| b.phase.unwrap_or(BatchPhase::Staging))
    };
    let handle = |path: &Path, rec: &mut Recovery| -> Result<(), PathError> {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return Ok(());
        };
        let Some(left) = Leftover::parse(name) else {
            return Ok(());
        };
        let phase = phase_of(left.pid);
        if phase.is_none() && process_alive(left.pid, None) {
            return Ok(()); // a concurrent flinkpipe's file
        }
        let target = path.with_file_name(left.target);
        let err = |source| PathError {
            path: target.clone(),
            source,
        };
        match (left.backup, phase) {
            (false, Some(BatchPhase::Committing)) => {
                std::fs::rename(path, &target).map_err(err)?;
                rec.completed += 1;
            }
            (true, Some(BatchPhase::RollingBack)) => {
                std::fs::rename(path, &target).map_err(err)?;
                rec.restored += 1;
            }
            _ => {
                if std::fs::remove_file(path).is_ok() {
                    rec.removed += 1;
                }
            }
        }
        Ok(())
    };
    if walk_tree || !batches.is_empty() {
        // Symbolic links are not followed: a leftover-named file reached through a link lies outside
        // the tree (or is another path to a file of it) and is not this batch's to rename or remove.
        let walker = walkdir::WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| {
                e.depth() == 0
                    || !e.file_type().is_dir()
                    || !e.file_name().as_encoded_bytes().starts_with(b".")
            });
        for entry in walker.filter_map(|e| e.ok()) {
            if !entry.file_type().is_dir() {
                handle(entry.path(), &mut rec)?;
            }
        }
    } else if let Ok(rd) = std::fs::read_dir(root) {
        for e in rd.filter_map(|e| e.ok()) {
            handle(&e.path(), &mut rec)?;
        }
    }
    for b in &batches {
        let _ = std::fs::remove_file(&b.marker);
    }
    rec.batches = batches;
    Ok(rec)
}

/// Whether a file name is a temporary or backup of a flinkpipe process that is gone (for the scan,
/// which reports them).
pub fn is_stale_leftover(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .and_then(Leftover::parse)
        .is_some_and(|l| !process_alive(l.pid, None))
}

/// A temporary (`.<target>.flinkpipe-tmp-<pid>`) or backup (`.<target>.flinkpipe-old-<pid>`).
struct Leftover<'a> {
    target: &'a str,
    pid: u32,
    backup: bool,
}

impl<'a> Leftover<'a> {
    fn parse(name: &'a str) -> Option<Leftover<'a>> {
        let rest = name.strip_prefix('.')?;
        let (target, pid, backup) = if let Some((t, p)) = rest.rsplit_once(TMP_TAG) {
            (t, p, false)
        } else {
            let (t, p) = rest.rsplit_once(OLD_TAG)?;
            (t, p, true)
        };
        if target.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Leftover {
            target,
            pid: pid.parse().ok()?,
            backup,
        })
    }
}

/// Whether process `pid` still runs (and, when `start` is known, is the same process). This process
/// counts as gone: a leftover with its pid was left by an earlier process with the same pid.
fn process_alive(pid: u32, start: Option<u64>) -> bool {
    if pid == std::process::id() {
        return false;
    }
    #[cfg(unix)]
    {
        let Ok(p) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists and may be signalled.
        let r = unsafe { libc::kill(p, 0) };
        if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
            return false;
        }
        match (start, process_start(pid)) {
            (Some(recorded), Some(now)) => recorded == now,
            _ => true,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = start;
        true
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22); `None` where
/// there is no `/proc`.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so count after the last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

// ---- SIGINT while a batch is open ---------------------------------------------------------------

/// SIGINT (and SIGTERM, SIGHUP) caught for a span longer than one batch (several batches that
/// belong together, and the work between them): until the scope is dropped, they only set a flag that [`Batch`]es and
/// [`SigintScope::received`] see.
#[derive(Debug)]
pub struct SigintScope {
    _guard: SigintGuard,
}

impl SigintScope {
    /// Whether SIGINT arrived since the scope began.
    pub fn received(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }
}

/// Catches SIGINT until the returned scope is dropped (see [`SigintScope`]).
pub fn catch_sigint() -> SigintScope {
    SigintScope {
        _guard: SigintGuard::install(),
    }
}

/// Set by the SIGINT handler while a batch is open.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Open batches (the handler is installed by the first, restored by the last).
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// The signals a batch catches: SIGINT, and SIGTERM and SIGHUP alike (`kill`, `timeout`, CI
/// cancellation, a closed terminal ask a command to stop just as Ctrl-C does, #29).
#[cfg(unix)]
const CAUGHT: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Catches SIGINT, SIGTERM and SIGHUP while it lives (the handler only sets [`INTERRUPTED`], which
/// is async-signal-safe) and puts the previous dispositions back when dropped.
#[derive(Debug)]
struct SigintGuard {
    #[cfg(unix)]
    previous: Vec<(libc::c_int, Box<libc::sigaction>)>,
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

impl SigintGuard {
    fn install() -> SigintGuard {
        if OPEN.fetch_add(1, Ordering::SeqCst) > 0 {
            #[cfg(unix)]
            return SigintGuard {
                previous: Vec::new(),
            };
            #[cfg(not(unix))]
            return SigintGuard {};
        }
        INTERRUPTED.store(false, Ordering::SeqCst);
        #[cfg(unix)]
        {
            let mut previous = Vec::new();
            for signal in CAUGHT {
                // SAFETY: a zeroed sigaction is a valid starting value; the handler only stores to
                // an atomic; `old` receives the old disposition.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = on_sigint as *const () as libc::sighandler_t;
                    action.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut action.sa_mask);
                    let mut old: Box<libc::sigaction> = Box::new(std::mem::zeroed());
                    if libc::sigaction(signal, &action, &mut *old) == 0 {
                        previous.push((signal, old));
                    }
                }
            }
            SigintGuard { previous }
        }
        #[cfg(not(unix))]
        SigintGuard {}
    }
}

impl Drop for SigintGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        for (signal, previous) in self.previous.drain(..) {
            // SAFETY: restores the disposition saved by `install`.
            unsafe {
                libc::sigaction(signal, &*previous, std::ptr::null_mut());
            }
        }
        OPEN.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_names_parse() {
        let l = Leftover::parse(".pipeline_definition.json.flinkpipe-tmp-123").unwrap();
        assert_eq!(
            (l.target, l.pid, l.backup),
            ("pipeline_definition.json", 123, false)
        );
        let l = Leftover::parse(".a.sql.flinkpipe-old-9").unwrap();
        assert_eq!((l.target, l.pid, l.backup), ("a.sql", 9, true));
        assert!(Leftover::parse("a.flinkpipe-tmp-1").is_none());
        assert!(Leftover::parse(".a.flinkpipe-tmp-x1").is_none());
        assert!(Leftover::parse(".flinkpipe-tmp-1").is_none());
    }

    /// A rename fails during the commit and the `rolling-back` marker cannot be written: nothing is
    /// put back (a kill now would be recovered as committing, which must then be true), the marker
    /// stays, and the next recovery completes the batch — every file new.
    #[test]
    fn a_rollback_that_cannot_be_recorded_is_not_started_and_recovery_completes_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (a, b, c) = (
            root.join("a.json"),
            root.join("b.json"),
            root.join("c.json"),
        );
        for (p, t) in [(&a, "old a"), (&b, "old b"), (&c, "old c")] {
            std::fs::write(p, t).unwrap();
        }
        let mut batch = Batch::begin(root, "flinkpipe test", "flinkpipe repair").unwrap();
        let staged = vec![
            batch.stage(&a, b"new a").unwrap().unwrap(),
            batch.stage(&b, b"new b").unwrap().unwrap(),
            batch.stage(&c, b"new c").unwrap().unwrap(),
        ];
        batch.marker.phase = BatchPhase::Committing;
        batch.write_marker().unwrap();
        // b's rename fails: its temporary is moved away for the rename, and put back after.
        let b_tmp = staged[1].tmp.clone();
        let aside = root.join("b-aside");
        std::fs::rename(&b_tmp, &aside).unwrap();
        FAIL_MARKER_WRITES.with(|f| f.set(true));
        let err = batch.rename_all(staged).unwrap_err();
        FAIL_MARKER_WRITES.with(|f| f.set(false));
        assert!(
            err.to_string()
                .contains("could not be marked as rolling back"),
            "{err}"
        );
        // Not rolled back: a and c are new (every rename was attempted), b is old and its backup
        // stays.
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "old b");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "new c");
        let found = interrupted_batches(root);
        assert_eq!(found.len(), 1, "the marker stays");
        assert_eq!(found[0].phase, Some(BatchPhase::Committing));
        std::fs::rename(&aside, &b_tmp).unwrap();
        let rec = recover(root, false).unwrap();
        assert_eq!(rec.completed, 1, "{rec:?}");
        for (p, t) in [(&a, "new a"), (&b, "new b"), (&c, "new c")] {
            assert_eq!(std::fs::read_to_string(p).unwrap(), t);
        }
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.json", "b.json", "c.json"]);
    }

    /// A rename fails and the marker can be written: the marker says rolling-back before anything is
    /// put back, and every file is old afterwards.
    #[test]
    fn a_recorded_rollback_puts_every_file_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (a, b) = (root.join("a.json"), root.join("b.json"));
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&b, "old b").unwrap();
        let mut batch = Batch::begin(root, "flinkpipe test", "flinkpipe repair").unwrap();
        let staged = vec![
            batch.stage(&a, b"new a").unwrap().unwrap(),
            batch.stage(&b, b"new b").unwrap().unwrap(),
        ];
        batch.marker.phase = BatchPhase::Committing;
        batch.write_marker().unwrap();
        std::fs::remove_file(&staged[1].tmp).unwrap();
        assert!(batch.rename_all(staged).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "old b");
        assert!(interrupted_batches(root).is_empty());
        assert_eq!(std::fs::read_dir(root).unwrap().count(), 2);
    }

    #[test]
    fn this_process_counts_as_gone_and_a_running_one_as_alive() {
        assert!(!process_alive(std::process::id(), None));
        let parent = std::os::unix::process::parent_id();
        assert!(process_alive(parent, process_start(parent)));
        assert!(!process_alive(parent, process_start(parent).map(|s| s + 1)));
    }

    /// A committing batch killed midway: the next recovery renames the remaining temporaries into
    /// place and removes the backups; the tree is all new.
    #[test]
    fn a_killed_commit_is_completed_and_a_killed_staging_is_undone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("t")).unwrap();
        let (a, b) = (root.join("t/a.json"), root.join("b.json"));
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&b, "old b").unwrap();
        // As a process with our pid left it (this pid counts as gone).
        let pid = std::process::id();
        let mut batch = Batch::begin(root, "flinkpipe test", "flinkpipe repair").unwrap();
        let staged = vec![
            batch.stage(&a, b"new a").unwrap().unwrap(),
            batch.stage(&b, b"new b").unwrap().unwrap(),
        ];
        batch.marker.phase = BatchPhase::Committing;
        batch.write_marker().unwrap();
        // b was replaced (its backup kept), a not yet.
        std::fs::hard_link(&b, root.join(format!(".b.json{OLD_TAG}{pid}"))).unwrap();
        let mut staged = staged.into_iter();
        let _a = staged.next().unwrap();
        staged.next().unwrap().persist().unwrap();
        std::mem::forget(batch); // killed: the marker stays
        assert_eq!(interrupted_batches(root).len(), 1);
        let rec = recover(root, false).unwrap();
        assert_eq!((rec.completed, rec.removed), (1, 1));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        assert!(interrupted_batches(root).is_empty());
        let names = |d: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(root), ["b.json", "t"]);
        assert_eq!(names(&root.join("t")), ["a.json"]);

        // Killed while staging: temporaries go, targets stay as they were.
        let batch = Batch::begin(root, "flinkpipe test", "flinkpipe repair").unwrap();
        batch.stage(&a, b"newer a").unwrap().unwrap();
        std::mem::forget(batch);
        let rec = recover(root, false).unwrap();
        assert_eq!((rec.completed, rec.removed), (0, 1));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(names(&root.join("t")), ["a.json"]);
        assert_eq!(names(root), ["b.json", "t"]);
    }
}
