//! Runtime metrics of a running statement: what `pipeline status --lag` shows to judge lag and
//! freshness before consumers move from a blue statement to its green successor.
//!
//! Both targets answer in the same shape, from different sources with different meanings, and the
//! shape says which ([`Counted`]):
//! - **Confluent Cloud**: the Metrics API (`POST https://api.telemetry.confluent.cloud/v2/metrics/cloud/query`,
//!   Cloud API key; [`crate::target::cloud`]). `io.confluent.flink/num_records_in` and
//!   `…/num_records_out` are counters (each one-minute point counts that minute; summed over the
//!   window), `io.confluent.flink/pending_records` is the source backlog (the newest point is the
//!   current value). Points lag about 3 minutes behind (the API's documented data latency).
//! - **SQL Gateway**: the JobManager REST API of the job named after the statement: its source
//!   operators' `numRecordsOut` and `pendingRecords` (the Kafka source's backlog), its sink operators'
//!   `numRecordsIn` (records that reached the sinks), the sink vertex's input watermark and the worst
//!   backpressure level of its vertices — counters since the job started; and the job's own health:
//!   its checkpoints (`/jobs/{id}/checkpoints`) and restarts (the job metric `numRestarts`).

use serde::{Deserialize, Serialize};

/// Over what the record counts are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "minutes")]
pub enum Counted {
    /// Since the job started (JobManager counters).
    SinceStart,
    /// Over the last N minutes (Metrics API counters, summed).
    LastMinutes(u32),
}

impl Counted {
    /// `since start`, `last 10 min`.
    pub fn describe(&self) -> String {
        match self {
            Counted::SinceStart => "since start".into(),
            Counted::LastMinutes(m) => format!("last {m} min"),
        }
    }
}

/// The worst backpressure level of a job's vertices (JobManager `/jobs/{id}/vertices/{v}/backpressure`:
/// `ok` below 10 % of the time back-pressured, `low` up to 50 %, `high` above).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backpressure {
    Ok,
    Low,
    High,
}

impl Backpressure {
    /// Parses the JobManager's level (`ok`, `low`, `high`, any case); anything else is `None`.
    pub fn parse(s: &str) -> Option<Backpressure> {
        match s.to_ascii_lowercase().as_str() {
            "ok" => Some(Backpressure::Ok),
            "low" => Some(Backpressure::Low),
            "high" => Some(Backpressure::High),
            _ => None,
        }
    }

    /// `ok`, `low`, `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backpressure::Ok => "ok",
            Backpressure::Low => "low",
            Backpressure::High => "high",
        }
    }
}

/// The runtime metrics of one statement. Every value is `None` when the source does not report it
/// (no point in the window, an operator without the metric).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeMetrics {
    /// Records read from the statement's sources.
    pub records_in: Option<u64>,
    /// Records written to its sinks.
    pub records_out: Option<u64>,
    /// Records waiting in its sources' topics (consumer lag), now.
    pub pending_records: Option<u64>,
    /// The event-time watermark at its sinks, milliseconds since the epoch (`None`: no watermark yet,
    /// or none reported).
    pub watermark_ms: Option<i64>,
    /// The worst backpressure level of its vertices (SQL Gateway only).
    pub backpressure: Option<Backpressure>,
    /// Its job's checkpoints since it started (SQL Gateway only: the JobManager's
    /// `/jobs/{id}/checkpoints`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<Checkpoints>,
    /// How many times its job restarted since it was submitted (SQL Gateway only: the job metric
    /// `numRestarts`; the cluster's `restart-strategy` decides how many a job gets before it fails).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// How long ago its job last failed (and so restarted), milliseconds, by the JobManager's clock:
    /// its newest `/jobs/{id}/exceptions` history entry (SQL Gateway only; `None` when none is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure_ms_ago: Option<i64>,
    /// Over what `records_in` and `records_out` are counted.
    pub counted: Counted,
}

/// A job's checkpoints, from the JobManager's `GET /jobs/{id}/checkpoints` (`counts` and
/// `latest.completed` / `latest.failed`, shapes observed on Flink 2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoints {
    /// Checkpoints completed since the job started.
    pub completed: u64,
    /// Checkpoints that failed (expired, declined, or could not be triggered) since the job started.
    pub failed: u64,
    /// When the newest completed checkpoint was acknowledged, milliseconds since the epoch.
    pub latest_completed_ms: Option<i64>,
    /// The newest completed checkpoint's id (ids count up, one per checkpoint triggered).
    pub latest_completed_id: Option<u64>,
    /// The newest failed checkpoint that the JobManager kept (a failure to trigger one, before the
    /// tasks run, is counted in `failed` but not kept).
    pub latest_failure: Option<CheckpointFailure>,
}

/// One failed checkpoint (`latest.failed`: `id`, `failure_timestamp`, `failure_message`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointFailure {
    /// The checkpoint's id.
    pub id: u64,
    /// When it failed, milliseconds since the epoch.
    pub at_ms: i64,
    /// Flink's reason (`Checkpoint expired before completing.`).
    pub message: String,
}

/// Checkpoints failed in a row (with some completed before) that make checkpointing "failing".
pub const FAILING_IN_A_ROW: u64 = 2;

impl Checkpoints {
    /// Checkpoints that failed in a row since the newest completed one: the ids between them
    /// (ids count up, one per checkpoint triggered); 0 when the newest checkpoint completed.
    pub fn failed_in_a_row(&self) -> u64 {
        match (&self.latest_failure, self.latest_completed_id) {
            (None, _) => 0,
            (Some(f), Some(done)) => f.id.saturating_sub(done),
            (Some(f), None) => f.id.max(1),
        }
    }

    /// The failure that says checkpointing is failing now: the newest failed checkpoint, when at
    /// least [`FAILING_IN_A_ROW`] failed in a row since the newest completed one, or none ever
    /// completed. One checkpoint that expired among completed ones is a blip, not a verdict;
    /// a failure followed by a completed checkpoint is history.
    pub fn failing(&self) -> Option<&CheckpointFailure> {
        let f = self.latest_failure.as_ref()?;
        let never = self.latest_completed_id.is_none();
        (never || self.failed_in_a_row() >= FAILING_IN_A_ROW).then_some(f)
    }

    /// `12 completed, 1 failed` (`, failing` when [`Checkpoints::failing`]).
    pub fn describe(&self) -> String {
        format!(
            "{} completed, {} failed{}",
            self.completed,
            self.failed,
            if self.failing().is_some() {
                ", failing"
            } else {
                ""
            }
        )
    }
}

impl RuntimeMetrics {
    /// Metrics with nothing known yet, counted as `counted`.
    pub fn empty(counted: Counted) -> Self {
        RuntimeMetrics {
            records_in: None,
            records_out: None,
            pending_records: None,
            watermark_ms: None,
            backpressure: None,
            checkpoints: None,
            restarts: None,
            last_failure_ms_ago: None,
            counted,
        }
    }
}

/// A watermark in milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC); `Long.MIN_VALUE` and other
/// values before 1970 (Flink's "no watermark yet") give `None`.
pub fn watermark_text(ms: i64) -> Option<String> {
    if ms < 0 {
        return None;
    }
    let secs = ms / 1000;
    // `YYYY-MM-DD HH:MM:SS UTC` → `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    let base = crate::time::utc_timestamp(secs);
    Some(format!(
        "{}.{:03}Z",
        base.trim_end_matches(" UTC").replace(' ', "T"),
        ms % 1000
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermarks_as_text() {
        assert_eq!(watermark_text(i64::MIN), None);
        assert_eq!(
            watermark_text(1_700_000_000_123).as_deref(),
            Some("2023-11-14T22:13:20.123Z")
        );
    }

    #[test]
    fn a_failure_counts_until_a_checkpoint_completes_after_it() {
        let failure = CheckpointFailure {
            id: 10,
            at_ms: 2_000,
            message: "Checkpoint expired before completing.".into(),
        };
        let mut c = Checkpoints {
            completed: 0,
            failed: 10,
            latest_completed_ms: None,
            latest_completed_id: None,
            latest_failure: Some(failure.clone()),
        };
        // None ever completed: failing.
        assert_eq!(c.failing(), Some(&failure));
        assert_eq!(c.describe(), "0 completed, 10 failed, failing");
        // 8 completed, then 9 and 10 failed: failing.
        (c.completed, c.latest_completed_id) = (8, Some(8));
        assert_eq!(c.failed_in_a_row(), 2);
        assert!(c.failing().is_some());
        // 9 completed, 10 failed: a blip.
        c.latest_completed_id = Some(9);
        assert_eq!(c.failed_in_a_row(), 1);
        assert_eq!(c.failing(), None);
        assert_eq!(c.describe(), "8 completed, 10 failed");
        // 11 completed after the failure: history.
        c.latest_completed_id = Some(11);
        assert_eq!((c.failed_in_a_row(), c.failing()), (0, None));
        c.latest_failure = None;
        assert_eq!(c.failing(), None);
    }

    #[test]
    fn backpressure_levels() {
        assert_eq!(Backpressure::parse("HIGH"), Some(Backpressure::High));
        assert!(Backpressure::High > Backpressure::Low && Backpressure::Low > Backpressure::Ok);
        assert_eq!(Backpressure::parse("deprecated"), None);
    }
}
