//! A record of the derived files a [`super::Batch`] left on the disk, so that the next run can tell a
//! file already holds its new content from one `stat`, without reading it back.
//!
//! Each entry is a file's path, its stamp ([`Stamp`]: device, inode, size, modification time in
//! nanoseconds) as it was once the batch committed, and the XXH3-128 hash of the content flinkpipe
//! wrote (or found) there. A later batch that would write the same bytes (same hash) to a file whose
//! stamp is still the recorded one leaves it alone without opening it. Any other writer changes the
//! stamp: an atomic replacement (editors, `git checkout`, another flinkpipe command) gives a new
//! inode, an in-place edit a new modification time, so the file is read and compared as without a
//! record.
//!
//! A stamp is trusted only if the file's modification time is at least [`RACY`] older than the
//! record itself (the record file's own modification time, from the same clock): an edit made in
//! the same clock tick as flinkpipe's write could keep the time (the rule git's index applies to
//! "racily clean" entries). Such entries are read and compared on the next run, then recorded again;
//! a batch avoids that for the files it has just written by settling them before it saves the record
//! ([`settle`]: a wait of at most [`RACY`] plus a tick, then a second read of those files).
//!
//! The record is only ever an optimisation, like the analysis cache it lives beside
//! (`$XDG_CACHE_HOME/flinkpipe/written-<hash of the root>.cache`, off with `FLINKPIPE_NO_CACHE=1`):
//! a missing, foreign or damaged record loads empty (its body carries an XXH3-64 checksum), and a
//! record that cannot be written is ignored.
//!
//! A record may also name the **inputs** its files were derived from ([`WrittenRecord::inputs`]: a
//! key of every SQL file's content, the tree's layout, the configuration and the build, see
//! [`crate::project::Project::inputs`]): when the inputs of a new run have that key and every
//! recorded file is still as recorded, every derived file already holds what the run would write,
//! and `build-all-metadata` need not generate them to compare.
//!
//! Format (text): a header `flinkpipe-written format=2 inputs=<32 hex digits, or -> body=<16 hex
//! digits>`, then one line per file: `<32 hex: content hash> <dev> <ino> <size> <mtime ns> <path>`
//! (decimal numbers; a path holding a newline is not recorded).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// Bumped whenever the record's layout changes.
const FORMAT: u32 = 2;

/// How much older than the record a file's modification time must be for its stamp to be trusted:
/// more than one tick of the clock file times come from (Linux's coarse clock ticks every 1–10 ms,
/// Windows' every 15.6 ms). A time of whole seconds (FAT, HFS+, ext3, some NFS servers: the file
/// system keeps no fraction) counts from the end of its second ([`trusted_from`]).
pub const RACY: std::time::Duration = std::time::Duration::from_millis(30);

/// The earliest record time (nanoseconds since the epoch) at which a file stamped `mtime_ns` can be
/// trusted: [`RACY`] after its modification time, or after the end of its second when the time has
/// no fraction (a file system of whole seconds gives every write of that second the same time).
fn trusted_from(mtime_ns: i128) -> i128 {
    let whole_second = if mtime_ns.rem_euclid(1_000_000_000) == 0 {
        1_000_000_000
    } else {
        0
    };
    mtime_ns + whole_second + RACY.as_nanos() as i128
}

/// The hash of a content, as recorded: XXH3-128 of its bytes.
pub fn content_hash(bytes: &[u8]) -> u128 {
    xxh3_128(bytes)
}

/// What identifies one state of a file without reading it: device, inode, size, modification time
/// (nanoseconds since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl Stamp {
    /// The stamp of `meta` (`None` where the platform has no inode numbers).
    pub fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Stamp {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// One recorded file: its stamp and the hash of its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub stamp: Stamp,
    pub hash: u128,
}

/// A loaded record (see the module docs).
#[derive(Debug, Default)]
pub struct WrittenRecord {
    /// Where it lives; `None` when off.
    file: Option<PathBuf>,
    /// The record file's own modification time, in nanoseconds (entries must be [`RACY`] older).
    saved_at_ns: i128,
    /// The key of the inputs the recorded files were derived from, if the saving batch knew it.
    inputs: Option<u128>,
    entries: HashMap<PathBuf, Entry>,
}

impl WrittenRecord {
    /// No record: nothing matches, nothing is saved.
    pub fn disabled() -> Self {
        WrittenRecord::default()
    }

    /// The record stored in `file` (loaded now if it exists and is whole).
    pub fn at(file: PathBuf) -> Self {
        let mut record = WrittenRecord {
            file: Some(file),
            ..Default::default()
        };
        if let Some(path) = &record.file
            && let Ok(meta) = std::fs::metadata(path)
            && let Some(stamp) = Stamp::of(&meta)
            && let Ok(bytes) = std::fs::read(path)
            && let Some((inputs, entries)) = parse(&bytes)
        {
            record.saved_at_ns = stamp.mtime_ns;
            record.inputs = inputs;
            record.entries = entries;
        }
        record
    }

    /// Whether the record is on.
    pub fn enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Number of entries loaded.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry was loaded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The key of the inputs every recorded file was derived from (see the module docs), when the
    /// batch that saved the record gave one.
    pub fn inputs(&self) -> Option<u128> {
        self.inputs
    }

    /// Whether the record holds exactly the files `paths` (no more, no fewer) and each is still as
    /// recorded (same stamp, not racy): one `stat` per file, stopping at the first that is not.
    pub fn holds_exactly(&self, paths: &[PathBuf]) -> bool {
        paths.len() == self.entries.len() && paths.iter().all(|p| self.current(p).is_some())
    }

    /// Whether every recorded file is still as recorded (same stamp, not racy) and `paths` are all
    /// among them: one `stat` per recorded file, on the thread pool. A record with no entry holds
    /// nothing (`false`).
    pub fn all_current(&self, paths: &[&Path]) -> bool {
        use rayon::prelude::*;
        !self.entries.is_empty()
            && paths.iter().all(|p| self.entries.contains_key(*p))
            && self
                .entries
                .par_iter()
                .all(|(path, entry)| self.is_current(path, entry))
    }

    /// The recorded entry of `path` if the file is still as recorded (same stamp, not racy) and its
    /// recorded content has this `hash`: the file already holds the content. One `stat` of `path`.
    pub fn holds(&self, path: &Path, hash: u128) -> Option<Entry> {
        if self.entries.get(path)?.hash != hash {
            return None;
        }
        self.current(path)
    }

    /// The recorded entry of `path` if the file is still as recorded (same stamp, not racy): the hash
    /// of its content is the recorded one. One `stat` of `path` (following symbolic links).
    pub fn current(&self, path: &Path) -> Option<Entry> {
        let entry = self.entries.get(path)?;
        self.is_current(path, entry).then_some(*entry)
    }

    /// Whether the file at `path`, recorded as `entry`, is still as recorded and not racy.
    fn is_current(&self, path: &Path, entry: &Entry) -> bool {
        trusted_from(entry.stamp.mtime_ns) <= self.saved_at_ns
            && std::fs::metadata(path)
                .ok()
                .and_then(|m| Stamp::of(&m))
                .is_some_and(|now| now == entry.stamp)
    }

    /// Replaces the record with `entries`, unless every one of them is already recorded as it is
    /// (nothing to save). Errors are ignored: the record is only an optimisation.
    pub fn save(&self, entries: Vec<(PathBuf, Entry)>) {
        self.save_with_inputs(entries, None);
    }

    /// [`save`](Self::save), the record naming the key of the `inputs` every file of `entries` was
    /// derived from (`None`: not known).
    pub fn save_with_inputs(&self, mut entries: Vec<(PathBuf, Entry)>, inputs: Option<u128>) {
        let Some(path) = &self.file else { return };
        if inputs == self.inputs
            && entries.len() == self.entries.len()
            && entries.iter().all(|(p, e)| {
                self.entries.get(p).is_some_and(|old| {
                    old == e && trusted_from(e.stamp.mtime_ns) <= self.saved_at_ns
                })
            })
        {
            return;
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut body = String::with_capacity(entries.len() * 160);
        for (p, e) in &entries {
            let Some(text) = p.to_str() else { continue };
            if text.contains('\n') {
                continue;
            }
            use std::fmt::Write;
            let s = e.stamp;
            let _ = writeln!(
                body,
                "{:032x} {} {} {} {} {text}",
                e.hash, s.dev, s.ino, s.size, s.mtime_ns
            );
        }
        let inputs = inputs.map_or_else(|| "-".to_string(), |k| format!("{k:032x}"));
        let out = format!(
            "{} inputs={inputs} body={:016x}\n{body}",
            header_prefix(),
            xxh3_64(body.as_bytes())
        );
        if let Some(dir) = path.parent()
            && std::fs::create_dir_all(dir).is_err()
        {
            return;
        }
        // Always replaced, even with the same bytes: the record's own modification time is what its
        // entries must be older than, so a record saved again after a racy run must get a new one (or
        // its racy entries would stay untrusted, and their files be read, on every later run).
        if let Err(e) = super::replace_atomic(path, out.as_bytes()) {
            tracing::debug!(error = %e, record = %path.display(), "record of written files not written");
        }
    }
}

/// How far the file system's clock may lag the system's precise clock: file times come from the
/// kernel's coarse clock, which is updated once per tick (1–10 ms on Linux).
const COARSE_CLOCK_LAG: std::time::Duration = std::time::Duration::from_millis(10);

/// Makes the entries of files written just now trustworthy for the next run, instead of leaving
/// them racy (see the module docs) so that the next run reads and compares them all: when some
/// entry's modification time is less than [`RACY`] old, waits until it is [`RACY`] old (at most
/// [`RACY`] plus the coarse clock's lag, once for all of them), then reads each such file again
/// and keeps its entry only if its stamp is unchanged and its content still has the recorded hash
/// ([`content_hash`]). A later edit then gets a later modification time, so a record saved after
/// this holds nothing racy. Entries that are not racy are returned as they are, and so are those
/// whose time is in the future or has no fraction (whole seconds: a wait of up to a second), which
/// stay racy for the next run.
///
/// Without it, the run right after a `build-all-metadata` that wrote files read every racy file back
/// (at 10,000 tables the second run took 0.7 s instead of 0.2 s).
pub fn settle(entries: Vec<(PathBuf, Entry)>) -> Vec<(PathBuf, Entry)> {
    use rayon::prelude::*;
    let now_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128)
    };
    let lag = COARSE_CLOCK_LAG.as_nanos() as i128;
    let start = now_ns();
    // Racy now, and worth waiting for: a time with a fraction, not in the future (a clock set back,
    // a file from another machine) and not of whole seconds (a wait of up to a second): those stay
    // racy for the next run, as before.
    let waits_for = |mtime_ns: i128| {
        trusted_from(mtime_ns) + lag > start
            && mtime_ns <= start
            && mtime_ns.rem_euclid(1_000_000_000) != 0
    };
    let Some(until) = entries
        .iter()
        .map(|(_, e)| e.stamp.mtime_ns)
        .filter(|m| waits_for(*m))
        .map(|m| trusted_from(m) + lag)
        .max()
    else {
        return entries;
    };
    let ns = (until - start).clamp(0, (RACY + COARSE_CLOCK_LAG).as_nanos() as i128);
    std::thread::sleep(std::time::Duration::from_nanos(ns as u64));
    entries
        .into_par_iter()
        .filter(|(path, e)| {
            !waits_for(e.stamp.mtime_ns)
                || (std::fs::metadata(path)
                    .ok()
                    .and_then(|m| Stamp::of(&m))
                    .is_some_and(|now| now == e.stamp)
                    && std::fs::read(path).is_ok_and(|bytes| content_hash(&bytes) == e.hash))
        })
        .collect()
}

fn header_prefix() -> String {
    format!("flinkpipe-written format={FORMAT}")
}

/// The inputs key and the entries of a whole record; `None` for anything unexpected.
type Parsed = (Option<u128>, HashMap<PathBuf, Entry>);

fn parse(bytes: &[u8]) -> Option<Parsed> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (head, body) = text.split_once('\n')?;
    let (inputs, sum) = head
        .strip_prefix(&header_prefix())?
        .strip_prefix(" inputs=")?
        .split_once(" body=")?;
    let inputs = match inputs {
        "-" => None,
        k => Some(u128::from_str_radix(k, 16).ok()?),
    };
    if u64::from_str_radix(sum, 16).ok()? != xxh3_64(body.as_bytes()) {
        return None;
    }
    let mut entries = HashMap::new();
    for line in body.lines() {
        let mut f = line.splitn(6, ' ');
        let hash = u128::from_str_radix(f.next()?, 16).ok()?;
        let dev = f.next()?.parse().ok()?;
        let ino = f.next()?.parse().ok()?;
        let size = f.next()?.parse().ok()?;
        let mtime_ns = f.next()?.parse().ok()?;
        let path = PathBuf::from(f.next()?);
        entries.insert(
            path,
            Entry {
                stamp: Stamp {
                    dev,
                    ino,
                    size,
                    mtime_ns,
                },
                hash,
            },
        );
    }
    Some((inputs, entries))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn entry_of(p: &Path, content: &[u8]) -> (PathBuf, Entry) {
        let stamp = Stamp::of(&std::fs::metadata(p).unwrap()).unwrap();
        (
            p.to_path_buf(),
            Entry {
                stamp,
                hash: content_hash(content),
            },
        )
    }

    /// Sets a file's modification time `secs` seconds into the past (so it is not racy).
    fn age(p: &Path, secs: u64) {
        set_mtime(
            p,
            std::time::SystemTime::now() - std::time::Duration::from_secs(secs),
        );
    }

    /// Sets a file's modification time, keeping its inode and size.
    fn set_mtime(p: &Path, t: std::time::SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn a_recorded_file_matches_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let rec_file = dir.path().join("cache").join("written-x.cache");
        let a = dir.path().join("a.json");
        std::fs::write(&a, b"{\"a\": 1}\n").unwrap();
        age(&a, 10);
        WrittenRecord::at(rec_file.clone()).save(vec![entry_of(&a, b"{\"a\": 1}\n")]);

        let rec = WrittenRecord::at(rec_file.clone());
        assert_eq!(rec.len(), 1);
        assert!(rec.holds(&a, content_hash(b"{\"a\": 1}\n")).is_some());
        // Another content wanted: no match (the file is read and compared, then rewritten).
        assert!(rec.holds(&a, content_hash(b"{\"a\": 2}\n")).is_none());
        // Same size, edited in place: the modification time changed.
        std::fs::write(&a, b"{\"a\": 3}\n").unwrap();
        assert!(rec.holds(&a, content_hash(b"{\"a\": 1}\n")).is_none());
        // Put back with its old time but as a new file (an atomic replacement): a new inode.
        let b = dir.path().join("b.json");
        std::fs::write(&b, b"{\"a\": 1}\n").unwrap();
        std::fs::rename(&b, &a).unwrap();
        age(&a, 10);
        assert!(rec.holds(&a, content_hash(b"{\"a\": 1}\n")).is_none());
        // A path not recorded, a removed file.
        assert!(rec.holds(&b, content_hash(b"x")).is_none());
        std::fs::remove_file(&a).unwrap();
        assert!(rec.holds(&a, content_hash(b"{\"a\": 1}\n")).is_none());
    }

    #[test]
    fn a_file_written_just_before_the_record_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let rec_file = dir.path().join("written-y.cache");
        let a = dir.path().join("a.json");
        std::fs::write(&a, b"new").unwrap();
        WrittenRecord::at(rec_file.clone()).save(vec![entry_of(&a, b"new")]);
        // The record was written within RACY of the file: the file is read again next time.
        let rec = WrittenRecord::at(rec_file.clone());
        assert_eq!(rec.len(), 1);
        assert!(rec.holds(&a, content_hash(b"new")).is_none());
    }

    /// A file written just now is made trustworthy by `settle` (after the clock moved on, its content
    /// read again), so a record saved after it holds it; one that changed meanwhile, even keeping its
    /// size and time, is left out.
    #[test]
    fn settled_entries_are_trusted_and_changed_files_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let rec_file = dir.path().join("written-s.cache");
        let (a, b, old) = (
            dir.path().join("a.json"),
            dir.path().join("b.json"),
            dir.path().join("old.json"),
        );
        std::fs::write(&old, b"old").unwrap();
        age(&old, 10);
        std::fs::write(&a, b"new a").unwrap();
        std::fs::write(&b, b"new b").unwrap();
        let entries = vec![
            entry_of(&old, b"old"),
            entry_of(&a, b"new a"),
            entry_of(&b, b"new b"),
        ];
        // b is rewritten with other bytes of the same size, its time put back: the stamp is the one
        // recorded, only the content tells.
        let mtime = std::fs::metadata(&b).unwrap().modified().unwrap();
        std::fs::write(&b, b"new B").unwrap();
        set_mtime(&b, mtime);
        let settled = settle(entries);
        let kept: Vec<&PathBuf> = settled.iter().map(|(p, _)| p).collect();
        assert_eq!(kept, [&old, &a]);
        WrittenRecord::at(rec_file.clone()).save(settled);
        let rec = WrittenRecord::at(rec_file);
        assert!(rec.holds(&a, content_hash(b"new a")).is_some());
        assert!(rec.holds(&old, content_hash(b"old")).is_some());
        assert!(rec.holds(&b, content_hash(b"new b")).is_none());
    }

    /// A time of whole seconds (a file system without fractions) is trusted only after its second
    /// has ended, whatever the record's own clock.
    #[test]
    fn a_whole_second_time_is_racy_until_its_second_ends() {
        let dir = tempfile::tempdir().unwrap();
        let rec_file = dir.path().join("written-w.cache");
        let a = dir.path().join("a.json");
        std::fs::write(&a, b"x").unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let this_second = std::time::UNIX_EPOCH + std::time::Duration::from_secs(now.as_secs());
        set_mtime(&a, this_second);
        WrittenRecord::at(rec_file.clone()).save(settle(vec![entry_of(&a, b"x")]));
        assert!(
            WrittenRecord::at(rec_file.clone())
                .holds(&a, content_hash(b"x"))
                .is_none()
        );
        set_mtime(&a, this_second - std::time::Duration::from_secs(10));
        WrittenRecord::at(rec_file.clone()).save(vec![entry_of(&a, b"x")]);
        assert!(
            WrittenRecord::at(rec_file)
                .holds(&a, content_hash(b"x"))
                .is_some()
        );
    }

    #[test]
    fn damaged_or_foreign_records_load_empty() {
        let dir = tempfile::tempdir().unwrap();
        let rec_file = dir.path().join("written-z.cache");
        let a = dir.path().join("a.json");
        std::fs::write(&a, b"x").unwrap();
        age(&a, 10);
        WrittenRecord::at(rec_file.clone()).save(vec![entry_of(&a, b"x")]);
        let good = std::fs::read(&rec_file).unwrap();
        assert_eq!(WrittenRecord::at(rec_file.clone()).len(), 1);
        std::fs::write(&rec_file, &good[..good.len() - 3]).unwrap();
        assert!(WrittenRecord::at(rec_file.clone()).is_empty());
        let other = String::from_utf8(good)
            .unwrap()
            .replacen("format=2", "format=0", 1);
        std::fs::write(&rec_file, other).unwrap();
        assert!(WrittenRecord::at(rec_file.clone()).is_empty());
        let off = WrittenRecord::disabled();
        assert!(!off.enabled());
        off.save(vec![entry_of(&a, b"x")]);
        assert!(off.holds(&a, content_hash(b"x")).is_none());
    }
}
