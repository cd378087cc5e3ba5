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
//!   backpressure level of its vertices — counters since the job started.

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
    /// Over what `records_in` and `records_out` are counted.
    pub counted: Counted,
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
    fn backpressure_levels() {
        assert_eq!(Backpressure::parse("HIGH"), Some(Backpressure::High));
        assert!(Backpressure::High > Backpressure::Low && Backpressure::Low > Backpressure::Ok);
        assert_eq!(Backpressure::parse("deprecated"), None);
    }
}
