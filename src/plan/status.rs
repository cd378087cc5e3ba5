//! Running status of statements, keyed by statement name. Until live targets exist it comes from a JSON
//! file (`--statement-status FILE`): `{"<statement name>": "RUNNING", …}` or
//! `{"<statement name>": {"phase": "RUNNING"}, …}`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Statement name → phase (`RUNNING`, `PENDING`, `COMPLETED`, `FAILED`, `STOPPED`, `DEGRADED`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementStatus {
    /// The phase of each statement the status knows; a phase this version does not know is kept as
    /// [`Phase::Unknown`] (upper-cased).
    pub phases: BTreeMap<String, Phase>,
}

impl FromIterator<(String, Phase)> for StatementStatus {
    fn from_iter<I: IntoIterator<Item = (String, Phase)>>(iter: I) -> Self {
        StatementStatus {
            phases: iter.into_iter().collect(),
        }
    }
}

/// Confluent Cloud's statement phases
/// (<https://docs.confluent.io/cloud/current/flink/concepts/statements.html>;
/// the SQL Gateway target reports the same names). The API calls the list extensible.
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
                Entry::Phase(p) => Some((k, Phase::parse(&p))),
                Entry::Object {
                    phase,
                    status_phase,
                } => phase.or(status_phase).map(|p| (k, Phase::parse(&p))),
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
            .filter(|(_, p)| matches!(p, Phase::Unknown(_)))
            .map(|(s, p)| (s.as_str(), p.as_str()))
            .collect()
    }

    /// The phase of a statement, if known.
    pub fn phase(&self, statement: &str) -> Option<&Phase> {
        self.phases.get(statement)
    }

    /// Whether a statement counts as running for the plan ([`Phase::counts_as_deployed`]).
    pub fn is_running(&self, statement: &str) -> bool {
        self.phase(statement).is_some_and(Phase::counts_as_deployed)
    }
}

/// A statement phase (<https://docs.confluent.io/cloud/current/flink/concepts/statements.html>);
/// unknown values are kept, never rejected.
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

    /// Every phase this version knows, in [`PHASES`] order (no [`Phase::Unknown`]).
    pub const KNOWN: [Phase; 9] = [
        Phase::Pending,
        Phase::Running,
        Phase::Completed,
        Phase::Deleting,
        Phase::Failing,
        Phase::Failed,
        Phase::Stopping,
        Phase::Stopped,
        Phase::Degraded,
    ];

    /// Live: a job runs, or is about to (PENDING, RUNNING, DEGRADED). A live statement holds its
    /// compute pool's CFUs (capacity, `pipeline pools`), is adopted rather than recreated when its
    /// SQL is unchanged (the executor), and is never touched by housekeeping unless named.
    /// Confluent's phases: <https://docs.confluent.io/cloud/current/flink/concepts/statements.html#flink-sql-statements-lifecycle>.
    pub fn is_live(&self) -> bool {
        matches!(self, Phase::Pending | Phase::Running | Phase::Degraded)
    }

    /// Processing records now: RUNNING or DEGRADED (a PENDING statement has not started;
    /// `pipeline report-running-statements`).
    pub fn is_processing(&self) -> bool {
        matches!(self, Phase::Running | Phase::Degraded)
    }

    /// Ended and settled: COMPLETED, FAILED or STOPPED. Nothing runs and nothing is in transition,
    /// so a statement in such a phase is not checked before it is replaced, and a stop has reached
    /// its goal. FAILING, STOPPING, DELETING and unknown phases have not ended (they may still run).
    pub fn has_ended(&self) -> bool {
        matches!(self, Phase::Completed | Phase::Failed | Phase::Stopped)
    }

    /// Failed or failing (FAILED, FAILING): the statement will not recover by itself.
    pub fn has_failed(&self) -> bool {
        matches!(self, Phase::Failed | Phase::Failing)
    }

    /// Counts as deployed for the plan: RUNNING, PENDING or COMPLETED (a bounded statement that
    /// completed is not re-run), as shift_left's `pipeline_mgr` decides what to restart
    /// (<https://github.com/jbcodeforce/shift_left_utils>). DEGRADED, FAILED, STOPPED and the rest are
    /// "not running": the plan starts the table again.
    pub fn counts_as_deployed(&self) -> bool {
        matches!(self, Phase::Running | Phase::Pending | Phase::Completed)
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

/// A phase, `absent` when there is none (the statement does not exist): how reports print and
/// serialise a phase that may be missing.
pub fn phase_or_absent(phase: Option<&Phase>) -> &str {
    phase.map_or("absent", Phase::as_str)
}

/// Serialises an `Option<Phase>` as its wire spelling, or `"absent"` for `None` (reports whose JSON
/// always said `absent`); use with `#[serde(serialize_with = "…")]`.
pub fn serialize_or_absent<S: serde::Serializer>(
    phase: &Option<Phase>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(phase_or_absent(phase.as_ref()))
}

/// Serialises the phase an action reached: `null` when it did not get there (`None`: it failed),
/// `"absent"` for a statement that is gone (`Some(None)`), else the wire spelling.
pub fn serialize_reached<S: serde::Serializer>(
    phase: &Option<Option<Phase>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match phase {
        None => s.serialize_none(),
        Some(p) => s.serialize_str(phase_or_absent(p.as_ref())),
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
        assert_eq!(s.phase("b"), Some(&Phase::Failed));
        assert!(s.unknown_phases().is_empty());
    }

    #[test]
    fn unknown_phases_are_listed() {
        let s =
            StatementStatus::parse(r#"{"b": "RUNNIN", "a": "Stopped", "c": "deleted"}"#).unwrap();
        assert_eq!(s.unknown_phases(), vec![("b", "RUNNIN"), ("c", "DELETED")]);
        assert!(!s.is_running("b"));
    }

    /// Each class of phases, pinned for every phase (the known ones and an unknown one): `L` live,
    /// `P` processing, `E` ended, `F` failed, `D` counts as deployed.
    #[test]
    fn phase_classes_for_every_phase() {
        let want = [
            (Phase::Pending, "L...D"),
            (Phase::Running, "LP..D"),
            (Phase::Completed, "..E.D"),
            (Phase::Deleting, "....."),
            (Phase::Failing, "...F."),
            (Phase::Failed, "..EF."),
            (Phase::Stopping, "....."),
            (Phase::Stopped, "..E.."),
            (Phase::Degraded, "LP..."),
            (Phase::Unknown("PAUSED".into()), "....."),
        ];
        assert_eq!(want.len(), Phase::KNOWN.len() + 1, "every phase is pinned");
        for (phase, classes) in want {
            let got: String = [
                (phase.is_live(), 'L'),
                (phase.is_processing(), 'P'),
                (phase.has_ended(), 'E'),
                (phase.has_failed(), 'F'),
                (phase.counts_as_deployed(), 'D'),
            ]
            .iter()
            .map(|&(on, c)| if on { c } else { '.' })
            .collect();
            assert_eq!(got, classes, "{phase}");
        }
    }

    /// The known phases are exactly [`PHASES`], and each parses back from its spelling (any case).
    #[test]
    fn known_phases_round_trip() {
        let spelled: Vec<&str> = Phase::KNOWN.iter().map(Phase::as_str).collect();
        assert_eq!(spelled, PHASES);
        for p in Phase::KNOWN {
            assert_eq!(Phase::parse(&p.as_str().to_ascii_lowercase()), p);
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
        }
        assert_eq!(Phase::parse("paused"), Phase::Unknown("PAUSED".into()));
        assert_eq!(phase_or_absent(None), "absent");
    }
}
