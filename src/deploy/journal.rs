//! The deploy journal: one JSON object per line recording each step of a run, so that `--resume` after a
//! crash or Ctrl-C continues where the run stopped without creating anything twice.
//!
//! Writing: each entry is serialised first, then written with **one** `write_all` of the whole line
//! (newline included) and `sync_data`, so a crash leaves at most a torn last line, never an interleaved
//! one. Reading is tolerant: a last line that does not parse (torn) is ignored; a bad line elsewhere is an
//! error, since the file was then changed by hand.
//!
//! What `--resume` uses ([`JournalState`]): the tables whose node finished, and the statements this run
//! created (found again by GET, they are adopted, never deleted and recreated as a restart would).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
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
    /// The run ended (normally or interrupted).
    RunEnded {
        /// Whether Ctrl-C ended it.
        interrupted: bool,
        /// Unix time, seconds.
        at: u64,
    },
}

/// Errors of the journal file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot write the deploy journal {path}: {source}")]
    /// The journal cannot be created or appended to.
    Write {
        /// The journal file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    #[error("cannot read the deploy journal {path}: {source}")]
    /// The journal cannot be read.
    Read {
        /// The journal file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    #[error("deploy journal {path}:{line}: not a journal entry ({message})")]
    /// A line other than the last is not an entry.
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The parser's message.
        message: String,
    },
}

/// An open journal, appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Creates (truncating) a journal for a new run.
    pub fn create(path: &Path) -> Result<Self, JournalError> {
        Self::open_with(path, true)
    }

    /// Opens an existing journal to continue it (`--resume`), creating it if absent.
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
        let mut opts = OpenOptions::new();
        opts.create(true);
        if truncate {
            opts.write(true).truncate(true);
        } else {
            opts.append(true);
        }
        let file = opts.open(path).map_err(werr)?;
        let mut j = Journal {
            path: path.to_path_buf(),
            file,
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
            self.file
                .write_all(b"\n")
                .map_err(|source| JournalError::Write {
                    path: self.path.clone(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Appends one entry: a single `write_all` of the line, then `sync_data`.
    pub fn record(&mut self, entry: &Entry) -> Result<(), JournalError> {
        let mut line = serde_json::to_string(entry).expect("plain data serialises");
        line.push('\n');
        let werr = |source| JournalError::Write {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(line.as_bytes()).map_err(werr)?;
        self.file.sync_data().map_err(werr)
    }

    /// The journal's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads every entry; a torn last line is ignored.
pub fn read(path: &Path) -> Result<Vec<Entry>, JournalError> {
    let text = std::fs::read_to_string(path).map_err(|source| JournalError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(l) {
            Ok(e) => out.push(e),
            // A torn line: the last one, or one healed by a newline before the next run appended.
            Err(_) if i + 1 == lines.len() || !text.ends_with('\n') => {}
            Err(_) if is_torn_prefix(l) => {}
            Err(e) => {
                return Err(JournalError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

/// A line that starts like an entry but is cut short (unbalanced braces or an open string).
fn is_torn_prefix(line: &str) -> bool {
    line.starts_with("{\"event\"") && serde_json::from_str::<serde_json::Value>(line).is_err()
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
}
