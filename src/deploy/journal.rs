//! The deploy journal: one JSON object per line recording each step of a run, so that `--resume` after a
//! crash or Ctrl-C continues where the run stopped without creating anything twice.
//!
//! **One writer.** A journal is written by one deploy at a time: [`Journal::create`] and
//! [`Journal::append`] take an exclusive advisory lock (`flock`) on `<journal>.lock` and write the
//! holder there (pid, host, start time); a second deploy of the same project is refused with
//! [`JournalError::Locked`] naming the holder, before it touches the journal. The lock goes with the
//! process (closing the file, or dying, releases it), so a crashed deploy never leaves it behind. Two
//! deploys at once used to interleave their lines (`{"e{"event":…`) and race on the same statements.
//!
//! **Whole lines.** Each entry is serialised first, then written with one `write_all` of the whole
//! line (newline included) and `sync_data`; a write that fails half-way is cut back to the previous
//! end, so a line is in the file whole or not at all. Only a crash in the middle of a write can leave a
//! torn last line.
//!
//! **Tolerant reading** ([`read_checked`]): a line cut short (the last one after a crash, or one
//! healed by the newline [`Journal::append`] adds before continuing) is reported and ignored, and a
//! complete entry that follows a torn piece on the same line is kept; any other line that is not an
//! entry is an error, since the file was then changed by hand.
//!
//! The same machinery writes the release journal of `pipeline decommission` and `pipeline rollback`
//! (`crate::ops::release_journal`): its runs start with [`Entry::ReleaseRun`] and list the
//! statements stopped or deleted as [`Entry::Stopped`] and [`Entry::Deleted`].
//!
//! What `--resume` uses ([`JournalState`]): the tables whose node finished, and the statements this run
//! created (found again by GET, they are adopted, never deleted and recreated as a restart would).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    /// First line of a run: the plan's scope and its tables.
    Run {
        /// The plan's scope, e.g. `product sales`.
        scope: String,
        /// The plan's tables, in plan order.
        tables: Vec<String>,
        /// Unix time, seconds.
        at: u64,
    },
    /// A node began.
    NodeStarted {
        /// The table (plan node).
        table: String,
    },
    /// A statement was created (POST answered 2xx).
    Created {
        /// The table (plan node).
        table: String,
        /// The statement name.
        statement: String,
    },
    /// An existing statement with the same SQL was adopted.
    Adopted {
        /// The table (plan node).
        table: String,
        /// The statement name.
        statement: String,
    },
    /// A statement was deleted (for a restart or an undeploy).
    Deleted {
        /// The table (plan node).
        table: String,
        /// The statement name.
        statement: String,
    },
    /// A stop was requested.
    Stopped {
        /// The table (plan node).
        table: String,
        /// The statement name.
        statement: String,
    },
    /// A resume was requested.
    Resumed {
        /// The table (plan node).
        table: String,
        /// The statement name.
        statement: String,
    },
    /// A node reached its goal (every statement RUNNING or COMPLETED).
    NodeDone {
        /// The table (plan node).
        table: String,
    },
    /// A node failed; `reason` is scrubbed of secrets.
    NodeFailed {
        /// The table (plan node).
        table: String,
        /// Why, scrubbed of secrets.
        reason: String,
    },
    /// First line of a `pipeline decommission` or `pipeline rollback` run, in the release journal
    /// (`<project>/.flinkpipe/release-journal.jsonl`): what it acts on. The statements it stopped or
    /// deleted follow as [`Entry::Stopped`] and [`Entry::Deleted`] (their `table`: the table whose
    /// statement it is), each written once the target accepted the request.
    ReleaseRun {
        /// Which command.
        command: ReleaseCommand,
        /// `stop` or `delete`.
        action: String,
        /// The environment's statement prefix.
        statement_prefix: String,
        /// `created_at` of the releases it acts on.
        releases: Vec<String>,
        /// The statements it will act on, in order.
        statements: Vec<String>,
        /// Unix time, seconds.
        at: u64,
    },
    /// The run ended (normally or interrupted).
    RunEnded {
        /// Whether Ctrl-C ended it.
        interrupted: bool,
        /// Unix time, seconds.
        at: u64,
    },
}

/// The command of an [`Entry::ReleaseRun`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseCommand {
    /// `pipeline decommission`: blue statements.
    Decommission,
    /// `pipeline rollback`: green statements.
    Rollback,
}

/// Errors of the journal file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot write the journal {path}: {source}")]
    /// The journal cannot be created or appended to.
    Write {
        /// The journal file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    #[error("cannot read the journal {path}: {source}")]
    /// The journal cannot be read.
    Read {
        /// The journal file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    #[error("journal {path}:{line}: not a journal entry ({message})")]
    /// A line other than the last is not an entry.
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// Another run (a deploy; a decommission or rollback, for the release journal) holds the
    /// journal's lock.
    #[error(
        "another run is writing the journal {path}: it is locked by {}; wait for it to finish (or stop it); a deploy can also be given a journal of its own (--journal)",
        holder.as_ref().map_or_else(|| "a process that did not say who it is".to_string(), Holder::to_string)
    )]
    Locked {
        /// The journal file.
        path: PathBuf,
        /// Who holds it, as it wrote itself into the lock file (`None`: unreadable).
        holder: Option<Holder>,
    },
}

/// The deploy holding a journal's lock, as it recorded itself in `<journal>.lock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The host it runs on.
    pub host: String,
    /// When it took the lock, Unix time in seconds.
    pub since: u64,
}

impl Holder {
    /// This process, now.
    pub fn me() -> Holder {
        Holder {
            pid: std::process::id(),
            host: hostname(),
            since: now_secs(),
        }
    }
}

impl fmt::Display for Holder {
    /// `pid 4242 on host build-7 since 2025-06-01 12:00:00 UTC`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pid {} on host {} since {}",
            self.pid,
            self.host,
            crate::time::utc_timestamp(self.since as i64)
        )
    }
}

/// The host name (`gethostname`), or `unknown host`.
pub(crate) fn hostname() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; the name is NUL-terminated when it fits.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc == 0 {
            let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
            let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
            if !name.is_empty() {
                return name;
            }
        }
    }
    "unknown host".to_string()
}

/// `<journal>.lock`: where the lock is taken and its holder written.
pub fn lock_path(journal: &Path) -> PathBuf {
    let mut name = journal.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    journal.with_file_name(name)
}

/// Takes the exclusive lock of `journal` without waiting, and writes this process into it.
fn take_lock(journal: &Path) -> Result<File, JournalError> {
    let path = lock_path(journal);
    let werr = |source| JournalError::Write {
        path: path.clone(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(werr)?;
    if !try_lock(&file).map_err(werr)? {
        // The holder writes itself just after taking the lock: an empty file is read again for a
        // moment before the holder counts as unknown.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let holder = loop {
            let mut text = String::new();
            let _ = file.rewind().and_then(|_| file.read_to_string(&mut text));
            if let Ok(h) = serde_json::from_str(&text) {
                break Some(h);
            }
            if std::time::Instant::now() >= until {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        return Err(JournalError::Locked {
            path: journal.to_path_buf(),
            holder,
        });
    }
    let me = serde_json::to_string(&Holder::me()).expect("plain data serialises");
    file.set_len(0).map_err(werr)?;
    file.rewind().map_err(werr)?;
    file.write_all(me.as_bytes()).map_err(werr)?;
    file.sync_data().map_err(werr)?;
    Ok(file)
}

/// `flock(LOCK_EX | LOCK_NB)`: `Ok(false)` when another open file holds the lock.
#[cfg(unix)]
pub(crate) fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the lifetime of `file`.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// No advisory locks here: a second deploy is not detected.
#[cfg(not(unix))]
pub(crate) fn try_lock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

/// An open journal, appending, and its lock (held until the journal is dropped).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The end of the last whole line: a failed write is cut back to it.
    len: u64,
    _lock: File,
}

impl Journal {
    /// Creates (truncating) a journal for a new run, once its lock is taken. Errors:
    /// [`JournalError::Locked`] when another deploy holds it (the journal is left untouched).
    pub fn create(path: &Path) -> Result<Self, JournalError> {
        Self::open_with(path, true)
    }

    /// Opens an existing journal to continue it (`--resume`), creating it if absent, once its lock is
    /// taken; a torn last line is ended so the next entry starts on its own line. Errors:
    /// [`JournalError::Locked`] when another deploy holds it.
    pub fn append(path: &Path) -> Result<Self, JournalError> {
        Self::open_with(path, false)
    }

    fn open_with(path: &Path, truncate: bool) -> Result<Self, JournalError> {
        let werr = |source| JournalError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(werr)?;
        }
        let lock = take_lock(path)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(werr)?;
        if truncate {
            file.set_len(0).map_err(werr)?;
        }
        let len = file.metadata().map_err(werr)?.len();
        let mut j = Journal {
            path: path.to_path_buf(),
            file,
            len,
            _lock: lock,
        };
        if !truncate {
            j.heal()?;
        }
        Ok(j)
    }

    /// After a crash the last line may be torn: end it so that the next entry starts on its own line.
    fn heal(&mut self) -> Result<(), JournalError> {
        let text = std::fs::read(&self.path).unwrap_or_default();
        if !text.is_empty() && !text.ends_with(b"\n") {
            self.write_line(b"\n")?;
        }
        Ok(())
    }

    /// Writes `bytes` at the end with one `write_all` and `sync_data`; a failed write is cut back to
    /// the previous end, so that nothing of it stays.
    fn write_line(&mut self, bytes: &[u8]) -> Result<(), JournalError> {
        let written = self
            .file
            .write_all(bytes)
            .and_then(|()| self.file.sync_data());
        if let Err(source) = written {
            let _ = self.file.set_len(self.len);
            return Err(JournalError::Write {
                path: self.path.clone(),
                source,
            });
        }
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Appends one entry: a single `write_all` of the whole line, then `sync_data`.
    pub fn record(&mut self, entry: &Entry) -> Result<(), JournalError> {
        let mut line = serde_json::to_string(entry).expect("plain data serialises");
        line.push('\n');
        self.write_line(line.as_bytes())
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A journal as read: its entries, and the damaged lines that were ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalRead {
    /// Every whole entry, in order.
    pub entries: Vec<Entry>,
    /// Lines (or pieces of a line) cut short by a crash and ignored: (1-based line, text).
    pub damaged: Vec<(usize, String)>,
}

/// Reads every entry, reporting (and ignoring) lines cut short: the last line after a crash (whatever
/// it holds), or pieces of entries on a line beside whole ones. Errors: the file cannot be read; a line that is neither
/// an entry nor a piece of one ([`JournalError::Corrupt`]: changed by hand).
pub fn read_checked(path: &Path) -> Result<JournalRead, JournalError> {
    let text = std::fs::read_to_string(path).map_err(|source| JournalError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = JournalRead::default();
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        if let Ok(e) = serde_json::from_str::<Entry>(l) {
            out.entries.push(e);
            continue;
        }
        let last = i + 1 == lines.len();
        match split_torn(l) {
            Some((entries, torn)) => {
                out.damaged
                    .extend(torn.into_iter().map(|t| (i + 1, t.to_string())));
                out.entries.extend(entries);
            }
            None if last => out.damaged.push((i + 1, l.to_string())),
            None => {
                let message = serde_json::from_str::<Entry>(l)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                return Err(JournalError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message,
                });
            }
        }
    }
    Ok(out)
}

/// Reads every entry; damaged lines ([`read_checked`]) are reported as warnings and ignored.
pub fn read(path: &Path) -> Result<Vec<Entry>, JournalError> {
    let r = read_checked(path)?;
    for (line, text) in &r.damaged {
        let shown: String = text.chars().take(80).collect();
        tracing::warn!(
            "journal {}:{line}: ignored a line cut short by a crash: {shown}",
            path.display()
        );
    }
    Ok(r.entries)
}

/// A line that is not an entry, read as whole entries and pieces cut short: it is cut before each
/// `{"event"`, and every piece must be an entry or the start of one (a prefix of `{"event"…` that does
/// not parse). Returns (entries, pieces cut short); `None` when the line is anything else.
fn split_torn(line: &str) -> Option<(Vec<Entry>, Vec<&str>)> {
    const START: &str = "{\"event\"";
    let mut cuts: Vec<usize> = line.match_indices(START).map(|(i, _)| i).collect();
    if cuts.first() != Some(&0) {
        cuts.insert(0, 0);
    }
    let mut entries = Vec::new();
    let mut torn = Vec::new();
    for (k, &from) in cuts.iter().enumerate() {
        let piece = &line[from..cuts.get(k + 1).copied().unwrap_or(line.len())];
        match serde_json::from_str::<Entry>(piece) {
            Ok(e) => entries.push(e),
            Err(_)
                if !piece.is_empty()
                    && (START.starts_with(piece) || piece.starts_with(START))
                    && serde_json::from_str::<serde_json::Value>(piece).is_err() =>
            {
                torn.push(piece);
            }
            Err(_) => return None,
        }
    }
    Some((entries, torn))
}

/// What a previous run achieved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalState {
    /// The scope of the last run.
    pub scope: Option<String>,
    /// Tables whose node finished.
    pub done: BTreeSet<String>,
    /// Statements created or adopted by the run (must not be restarted again).
    pub ours: BTreeSet<String>,
    /// Whether the last run ended normally.
    pub ended: bool,
}

impl JournalState {
    /// Replays the entries of a journal.
    pub fn replay(entries: &[Entry]) -> Self {
        let mut s = JournalState::default();
        for e in entries {
            match e {
                Entry::Run { scope, .. } => {
                    s.scope = Some(scope.clone());
                    s.ended = false;
                }
                Entry::NodeDone { table } => {
                    s.done.insert(table.clone());
                }
                Entry::Created { statement, .. }
                | Entry::Adopted { statement, .. }
                | Entry::Resumed { statement, .. } => {
                    s.ours.insert(statement.clone());
                }
                Entry::Deleted { statement, .. } => {
                    s.ours.remove(statement);
                }
                Entry::RunEnded { interrupted, .. } => s.ended = !interrupted,
                _ => {}
            }
        }
        s
    }
}

/// Unix time in seconds.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j/deploy.jsonl");
        let mut j = Journal::create(&p).unwrap();
        j.record(&Entry::Run {
            scope: "table a".into(),
            tables: vec!["a".into()],
            at: 1,
        })
        .unwrap();
        j.record(&Entry::Created {
            table: "a".into(),
            statement: "dev-dml-a".into(),
        })
        .unwrap();
        j.record(&Entry::NodeDone { table: "a".into() }).unwrap();
        drop(j);
        // Simulate a crash in the middle of a write.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"event\":\"created\",\"table\":\"b\",\"sta")
            .unwrap();
        drop(f);
        let entries = read(&p).unwrap();
        assert_eq!(entries.len(), 3);
        let st = JournalState::replay(&entries);
        assert!(st.done.contains("a"));
        assert!(st.ours.contains("dev-dml-a"));
        assert!(!st.ended);
        // Resuming heals the torn line and keeps appending.
        let mut j = Journal::append(&p).unwrap();
        j.record(&Entry::NodeDone { table: "b".into() }).unwrap();
        let entries = read(&p).unwrap();
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[3], Entry::NodeDone { table: "b".into() });
    }

    #[test]
    fn corrupt_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        std::fs::write(&p, "{\"event\":\"node_done\",\"table\":\"a\"}\nhello\n{\"event\":\"node_done\",\"table\":\"b\"}\n").unwrap();
        assert!(matches!(
            read(&p),
            Err(JournalError::Corrupt { line: 2, .. })
        ));
    }

    /// #15: a damaged trailing line is reported and ignored on resume, not fatal; so is a line torn by
    /// two writers at once (`{"e{"event":…`, from before the lock), whose whole entry is kept.
    #[test]
    fn damaged_lines_are_reported_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let a = r#"{"event":"node_done","table":"a"}"#;
        let b = r#"{"event":"created","table":"b","statement":"dev-b"}"#;
        for (text, entries, damaged) in [
            // Torn last line, with and without a final newline.
            (
                format!("{a}\n{{\"event\":\"crea"),
                1,
                vec![(2, "{\"event\":\"crea")],
            ),
            (
                format!("{a}\n{{\"event\":\"crea\n"),
                1,
                vec![(2, "{\"event\":\"crea")],
            ),
            // Healed by a resume, then continued.
            (format!("{{\"ev\n{a}\n"), 1, vec![(1, "{\"ev")]),
            // Two writers interleaved: a piece, then a whole entry on the same line.
            (format!("{{\"e{b}\n{a}\n"), 2, vec![(1, "{\"e")]),
            (
                format!("{a}{{\"event\":\"node_st\n"),
                1,
                vec![(1, "{\"event\":\"node_st")],
            ),
            // A last line that is not an entry at all: a crash may leave anything.
            (format!("{a}\n\u{0}\u{0}"), 1, vec![(2, "\u{0}\u{0}")]),
        ] {
            std::fs::write(&p, &text).unwrap();
            let r = read_checked(&p).unwrap();
            assert_eq!(r.entries.len(), entries, "{text:?}: {r:?}");
            let damaged: Vec<(usize, String)> = damaged
                .into_iter()
                .map(|(l, t)| (l, t.to_string()))
                .collect();
            assert_eq!(r.damaged, damaged, "{text:?}");
            assert_eq!(read(&p).unwrap(), r.entries);
        }
    }

    /// #15: two deploys at once tore the journal in 8 of 8 runs. The second one is refused, names the
    /// holder, and leaves the first one's journal alone; the lock goes with the first journal.
    #[test]
    fn a_second_writer_is_refused_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".flinkpipe/deploy-journal.jsonl");
        let mut first = Journal::create(&p).unwrap();
        first
            .record(&Entry::NodeDone { table: "a".into() })
            .unwrap();
        for second in [Journal::create(&p), Journal::append(&p)] {
            let Err(e) = second else {
                panic!("a second journal on {} was opened", p.display())
            };
            let JournalError::Locked {
                holder: Some(h), ..
            } = &e
            else {
                panic!("{e:?}")
            };
            assert_eq!(h.pid, std::process::id());
            assert_eq!(h.host, hostname());
            assert!(now_secs() - h.since < 3600, "{h:?}");
            let text = e.to_string();
            assert!(
                text.contains(&format!("locked by pid {} on host {}", h.pid, h.host))
                    && text.contains(" UTC")
                    && text.contains(&p.display().to_string()),
                "{text}"
            );
        }
        // The refused ones changed nothing: the first keeps writing whole lines.
        first
            .record(&Entry::NodeDone { table: "b".into() })
            .unwrap();
        assert_eq!(read(&p).unwrap().len(), 2);
        drop(first);
        let mut again = Journal::append(&p).unwrap();
        again
            .record(&Entry::NodeDone { table: "c".into() })
            .unwrap();
        assert_eq!(read(&p).unwrap().len(), 3);
    }
}
