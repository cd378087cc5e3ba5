//! Running status of statements, keyed by statement name. Until live targets exist it comes from a JSON
//! file (`--statement-status FILE`): `{"<statement name>": "RUNNING", …}` or
//! `{"<statement name>": {"phase": "RUNNING"}, …}`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Statement name → phase (`RUNNING`, `PENDING`, `COMPLETED`, `FAILED`, `STOPPED`, `DEGRADED`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementStatus {
    pub phases: BTreeMap<String, String>,
}

/// Confluent Cloud's statement phases (`confluent-cloud-flink-api.md` §4; the SQL Gateway target reports
/// the same names). The API calls the list extensible.
pub const PHASES: &[&str] = &[
    "PENDING",
    "RUNNING",
    "COMPLETED",
    "DELETING",
    "FAILING",
    "FAILED",
    "STOPPING",
    "STOPPED",
    "DEGRADED",
];

#[derive(Deserialize)]
#[serde(untagged)]
enum Entry {
    Phase(String),
    Object {
        phase: Option<String>,
        status_phase: Option<String>,
    },
}

/// Errors reading a status file.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("cannot read statement status file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "invalid statement status file {path}: {message} (expected {{\"<statement name>\": \"RUNNING\", …}})"
    )]
    Parse { path: String, message: String },
    /// Phases that are none of [`PHASES`] (a typo would count as not running and restart the
    /// statement): `(statement, phase)`, sorted by statement.
    #[error(
        "invalid statement status file {path}: {}: not a statement phase (valid phases: {})",
        unknown.iter().map(|(s, p)| format!("'{s}' has phase '{p}'")).collect::<Vec<_>>().join(", "),
        PHASES.join(", ")
    )]
    UnknownPhase {
        path: String,
        unknown: Vec<(String, String)>,
    },
}

impl StatementStatus {
    /// Reads a status file (see module docs): a regular file of at most
    /// [`crate::fsutil::MAX_DATA_FILE_BYTES`], every phase one of [`PHASES`] (any case).
    ///
    /// Errors: an unreadable or refused file, invalid JSON, a phase that is not a statement phase
    /// ([`StatusError::UnknownPhase`], naming every such statement and the valid phases).
    pub fn read(path: &Path) -> Result<Self, StatusError> {
        let p = path.display().to_string();
        let text = crate::fsutil::read_data_file(path).map_err(|source| StatusError::Read {
            path: p.clone(),
            source,
        })?;
        let status = Self::parse(&text).map_err(|message| StatusError::Parse {
            path: p.clone(),
            message,
        })?;
        let unknown: Vec<(String, String)> = status
            .unknown_phases()
            .into_iter()
            .map(|(s, ph)| (s.to_string(), ph.to_string()))
            .collect();
        if !unknown.is_empty() {
            return Err(StatusError::UnknownPhase { path: p, unknown });
        }
        Ok(status)
    }

    /// Parses status JSON text; the error is serde's message with line and column.
    pub fn parse(text: &str) -> Result<Self, String> {
        let raw: BTreeMap<String, Entry> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let phases = raw
            .into_iter()
            .filter_map(|(k, v)| match v {
                Entry::Phase(p) => Some((k, p.to_ascii_uppercase())),
                Entry::Object {
                    phase,
                    status_phase,
                } => phase.or(status_phase).map(|p| (k, p.to_ascii_uppercase())),
            })
            .collect();
        Ok(StatementStatus { phases })
    }

    /// Entries whose phase is none of Confluent Cloud's statement phases ([`PHASES`]), e.g. a typo such
    /// as `RUNNIN`: `(statement, phase)`, sorted. They count as not running. A status file with any is
    /// refused ([`Self::read`]); a live target may report phases newer than this list.
    pub fn unknown_phases(&self) -> Vec<(&str, &str)> {
        self.phases
            .iter()
            .filter(|(_, p)| !PHASES.contains(&p.as_str()))
            .map(|(s, p)| (s.as_str(), p.as_str()))
            .collect()
    }

    /// The phase of a statement, if known.
    pub fn phase(&self, statement: &str) -> Option<&str> {
        self.phases.get(statement).map(String::as_str)
    }

    /// Whether a statement counts as running: phase RUNNING, PENDING or COMPLETED (a bounded statement
    /// that completed is not re-run), as in shift_left (`shift-left-compatibility.md` §7).
    pub fn is_running(&self, statement: &str) -> bool {
        matches!(
            self.phase(statement),
            Some("RUNNING" | "PENDING" | "COMPLETED")
        )
    }
}

/// A statement phase (`confluent-cloud-flink-api.md` §4); unknown values are kept, never rejected.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Submitted, not started yet (waiting for resources, a carried-over reference, or a retryable server problem when `detail` is set).
    Pending,
    /// Running: success for INSERT, CTAS and statement sets on unbounded sources.
    Running,
    /// Finished: success for DDL and bounded statements.
    Completed,
    /// Running but unhealthy; not a failure by itself.
    Degraded,
    /// Failing: a failure in progress.
    Failing,
    /// Failed: `detail` says why.
    Failed,
    /// A stop was requested.
    Stopping,
    /// Stopped; INSERT, CTAS and statement sets can be resumed.
    Stopped,
    /// A delete was requested; a GET soon answers 404.
    Deleting,
    /// A phase this version does not know, as the server spelled it.
    Unknown(String),
}

impl Phase {
    /// Parses a wire value (case-insensitive).
    pub fn parse(s: &str) -> Phase {
        match s.to_ascii_uppercase().as_str() {
            "PENDING" => Phase::Pending,
            "RUNNING" => Phase::Running,
            "COMPLETED" => Phase::Completed,
            "DEGRADED" => Phase::Degraded,
            "FAILING" => Phase::Failing,
            "FAILED" => Phase::Failed,
            "STOPPING" => Phase::Stopping,
            "STOPPED" => Phase::Stopped,
            "DELETING" => Phase::Deleting,
            other => Phase::Unknown(other.to_string()),
        }
    }

    /// The wire spelling (`RUNNING`).
    pub fn as_str(&self) -> &str {
        match self {
            Phase::Pending => "PENDING",
            Phase::Running => "RUNNING",
            Phase::Completed => "COMPLETED",
            Phase::Degraded => "DEGRADED",
            Phase::Failing => "FAILING",
            Phase::Failed => "FAILED",
            Phase::Stopping => "STOPPING",
            Phase::Stopped => "STOPPED",
            Phase::Deleting => "DELETING",
            Phase::Unknown(s) => s,
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Phase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Phase {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Phase::parse(&String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes() {
        let s = StatementStatus::parse(
            r#"{"a": "running", "b": {"phase": "FAILED"}, "c": {"status_phase": "COMPLETED"}}"#,
        )
        .unwrap();
        assert!(s.is_running("a"));
        assert!(!s.is_running("b"));
        assert!(s.is_running("c"));
        assert!(!s.is_running("zzz"));
        assert_eq!(s.phase("b"), Some("FAILED"));
        assert!(s.unknown_phases().is_empty());
    }

    #[test]
    fn unknown_phases_are_listed() {
        let s =
            StatementStatus::parse(r#"{"b": "RUNNIN", "a": "Stopped", "c": "deleted"}"#).unwrap();
        assert_eq!(s.unknown_phases(), vec![("b", "RUNNIN"), ("c", "DELETED")]);
        assert!(!s.is_running("b"));
    }
}
