//! The release journal of `pipeline decommission` and `pipeline rollback`:
//! `<project>/.flinkpipe/release-journal.jsonl`, written with the deploy journal's machinery
//! ([`crate::deploy::journal`]: one writer under a lock, whole lines, `sync_data` after each). A run
//! appends an [`Entry::ReleaseRun`] line, then one [`Entry::Deleted`] or [`Entry::Stopped`] line per
//! statement as soon as the target accepted the request, then [`Entry::RunEnded`]. It is only ever
//! appended to, so that what an interrupted or killed run did is still known to the next one: a
//! rerun of `decommission` records the earlier deletions in `pipelines/blue_green.json` when it
//! closes the release, and `rollback` refuses a release whose blue statements a decommission
//! deleted ([`acted_on`]).

use super::OpsError;
use super::statement::StatementVerb;
use crate::deploy::journal::{self, Entry, Journal, ReleaseCommand};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The journal's path for a pipelines folder.
pub fn path(pipelines: &Path) -> PathBuf {
    super::state_dir(pipelines).join("release-journal.jsonl")
}

/// The statements that runs of `command` for the release `release` (its `created_at`) in the
/// environment of `prefix` were accepted to `verb`, in every run so far (an empty set without a
/// journal).
///
/// Errors: the journal cannot be read, or a line other than the last is not an entry.
pub fn acted_on(
    pipelines: &Path,
    command: ReleaseCommand,
    prefix: &str,
    release: &str,
    verb: StatementVerb,
) -> Result<BTreeSet<String>, OpsError> {
    let p = path(pipelines);
    if !p.exists() {
        return Ok(BTreeSet::new());
    }
    let entries = journal::read(&p)?;
    let mut mine = false;
    let mut out = BTreeSet::new();
    for e in &entries {
        match e {
            Entry::ReleaseRun {
                command: c,
                statement_prefix,
                releases,
                ..
            } => {
                mine = *c == command
                    && statement_prefix == prefix
                    && releases.iter().any(|r| r == release);
            }
            // A deploy journal's first line never appears here; any other run ends the last one.
            Entry::Run { .. } => mine = false,
            Entry::Deleted { statement, .. } if mine && verb == StatementVerb::Delete => {
                out.insert(statement.clone());
            }
            Entry::Stopped { statement, .. } if mine && verb == StatementVerb::Stop => {
                out.insert(statement.clone());
            }
            _ => {}
        }
    }
    Ok(out)
}

/// An open run of the release journal.
pub struct Run {
    journal: Journal,
    verb: StatementVerb,
}

impl Run {
    /// Opens the journal (appending, under its lock) and writes the run's first line.
    ///
    /// Errors: the journal cannot be written, or another command holds its lock.
    pub fn start(
        pipelines: &Path,
        command: ReleaseCommand,
        verb: StatementVerb,
        prefix: &str,
        releases: &[String],
        statements: &[String],
    ) -> Result<Run, OpsError> {
        let mut j = Journal::append(&path(pipelines))?;
        j.record(&Entry::ReleaseRun {
            command,
            action: verb.as_str().to_string(),
            statement_prefix: prefix.to_string(),
            releases: releases.to_vec(),
            statements: statements.to_vec(),
            at: journal::now_secs(),
        })?;
        Ok(Run { journal: j, verb })
    }

    /// Records that the target accepted the verb for `statement` (of `table`).
    pub fn acted(&mut self, table: &str, statement: &str) -> Result<(), String> {
        let (table, statement) = (table.to_string(), statement.to_string());
        let e = match self.verb {
            StatementVerb::Delete => Entry::Deleted { table, statement },
            StatementVerb::Stop => Entry::Stopped { table, statement },
            StatementVerb::Resume => Entry::Resumed { table, statement },
        };
        self.journal.record(&e).map_err(|e| e.to_string())
    }

    /// Records the run's end.
    pub fn end(mut self, interrupted: bool) -> Result<(), OpsError> {
        self.journal.record(&Entry::RunEnded {
            interrupted,
            at: journal::now_secs(),
        })?;
        Ok(())
    }
}
