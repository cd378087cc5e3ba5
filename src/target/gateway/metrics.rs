//! Runtime metrics of a statement's job from the JobManager REST API (observed on the local Flink
//! 2.2 stack): `GET /jobs/{id}` lists the vertices; `GET /jobs/{id}/vertices/{v}/metrics` lists the
//! metric ids (`<subtask>.<operator>.<metric>`) and, with `?get=id,…`, their values (strings);
//! `GET /jobs/{id}/vertices/{v}/backpressure` gives `backpressureLevel` (`ok`, `low`, `high`) once
//! sampled (`status: ok`); `GET /jobs/{id}/vertices/{v}/watermarks` the input watermark of each
//! subtask (`Long.MIN_VALUE` before the first one).
//!
//! What is read: records in = the source operators' (`Source__<table>[n]`) `numRecordsOut`, the
//! records they read and emitted (a Kafka source also counts them as `numRecordsIn`, a `datagen`
//! source does not: observed); records out = the sink operators' `numRecordsIn`, the records that
//! reached them (a chained sink is `Sink__<table>[n]`, a Sink V2 writer on its own vertex
//! `<table>[n]__Writer`: observed); pending = the source operators' `pendingRecords` (the Kafka
//! source's backlog, FLIP-33); the watermark = the smallest input watermark of the vertices holding
//! a sink; backpressure = the worst level of any vertex. All counters since the job started, summed
//! over subtasks. The job's health beside them: `GET /jobs/{id}/checkpoints` (counts, the newest
//! completed and failed checkpoint: [`super::wire::checkpoint_stats`]) and the job metric
//! `GET /jobs/{id}/metrics?get=numRestarts` ([`super::wire::restart_count`]) and, after a
//! restart, when it last failed (`GET /jobs/{id}/exceptions`,
//! [`super::wire::last_failure_ms_ago`]); each is left unknown when the JobManager does not
//! answer it.

use super::GatewayTarget;
use crate::target::TargetError;
use crate::target::metrics::{Backpressure, Counted, RuntimeMetrics};
use serde_json::Value;

/// What one metric id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wanted {
    /// Records a source read (its `numRecordsOut`).
    SourceOut,
    /// Records that reached a sink (its `numRecordsIn`).
    SinkIn,
    /// A source's backlog.
    Pending,
}

/// Which of our metrics a JobManager metric id is (`0.Source__orders[12].numRecordsOut`,
/// `0.orders_out[13]__Writer.numRecordsIn`).
pub(super) fn wanted(id: &str) -> Option<Wanted> {
    let source = id.contains(".Source__");
    let sink = id.contains(".Sink__") || id.contains("__Writer.");
    if source && id.ends_with(".numRecordsOut") {
        Some(Wanted::SourceOut)
    } else if source && id.ends_with(".pendingRecords") {
        Some(Wanted::Pending)
    } else if sink && id.ends_with(".numRecordsIn") {
        Some(Wanted::SinkIn)
    } else {
        None
    }
}

/// Whether a vertex holds a sink (`… -> Sink: orders_out[13]`, `orders_out[13]: Writer`).
fn holds_sink(vertex_name: &str) -> bool {
    vertex_name.contains("Sink:") || vertex_name.contains(": Writer")
}

fn add(slot: &mut Option<u64>, v: u64) {
    *slot = Some(slot.unwrap_or(0) + v);
}

impl GatewayTarget {
    /// The metrics of job `jid`.
    pub(super) async fn job_metrics(&self, jid: &str) -> Result<RuntimeMetrics, TargetError> {
        let details = self.http.get(self.http.jm(&format!("jobs/{jid}"))).await?;
        let mut m = RuntimeMetrics::empty(Counted::SinceStart);
        let mut watermark: Option<i64> = None;
        for v in details["vertices"].as_array().into_iter().flatten() {
            let Some(vid) = v["id"].as_str() else {
                continue;
            };
            let vname = v["name"].as_str().unwrap_or("");
            let base = format!("jobs/{jid}/vertices/{vid}");
            let ids = self
                .http
                .get(self.http.jm(&format!("{base}/metrics")))
                .await?;
            let want: Vec<String> = ids
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x["id"].as_str())
                .filter(|id| wanted(id).is_some())
                .map(str::to_string)
                .collect();
            if !want.is_empty() {
                let mut url = self.http.jm(&format!("{base}/metrics"));
                url.query_pairs_mut().append_pair("get", &want.join(","));
                let values = self.http.get(url).await?;
                for x in values.as_array().into_iter().flatten() {
                    let (Some(id), Some(value)) = (x["id"].as_str(), x["value"].as_str()) else {
                        continue;
                    };
                    let Some(n) = value.parse::<f64>().ok().filter(|n| *n >= 0.0) else {
                        continue;
                    };
                    match wanted(id) {
                        Some(Wanted::SourceOut) => add(&mut m.records_in, n as u64),
                        Some(Wanted::SinkIn) => add(&mut m.records_out, n as u64),
                        Some(Wanted::Pending) => add(&mut m.pending_records, n as u64),
                        None => {}
                    }
                }
            }
            // Backpressure is sampled on demand: the first answer may not have a level yet.
            if let Ok(bp) = self
                .http
                .get(self.http.jm(&format!("{base}/backpressure")))
                .await
            {
                let level = bp
                    .get("backpressureLevel")
                    .or_else(|| bp.get("backpressure-level"))
                    .and_then(Value::as_str)
                    .and_then(Backpressure::parse);
                if bp["status"].as_str() == Some("ok")
                    && let Some(l) = level
                {
                    m.backpressure = Some(m.backpressure.map_or(l, |b| b.max(l)));
                }
            }
            if holds_sink(vname)
                && let Ok(w) = self
                    .http
                    .get(self.http.jm(&format!("{base}/watermarks")))
                    .await
            {
                for x in w.as_array().into_iter().flatten() {
                    if let Some(ms) = x["value"]
                        .as_str()
                        .and_then(|s| s.parse::<i64>().ok())
                        .filter(|ms| *ms >= 0)
                    {
                        watermark = Some(watermark.map_or(ms, |w| w.min(ms)));
                    }
                }
            }
        }
        m.watermark_ms = watermark;
        match self
            .http
            .get(self.http.jm(&format!("jobs/{jid}/checkpoints")))
            .await
        {
            Ok(c) => m.checkpoints = super::wire::checkpoint_stats(&c),
            Err(e) => tracing::debug!("job {jid}: checkpoints not read: {e}"),
        }
        let mut url = self.http.jm(&format!("jobs/{jid}/metrics"));
        url.query_pairs_mut().append_pair("get", "numRestarts");
        match self.http.get(url).await {
            Ok(r) => m.restarts = super::wire::restart_count(&r),
            Err(e) => tracing::debug!("job {jid}: numRestarts not read: {e}"),
        }
        if m.restarts.is_some_and(|n| n > 0)
            && let Some(now) = details.get("now").and_then(Value::as_i64)
        {
            match self
                .http
                .get(self.http.jm(&format!("jobs/{jid}/exceptions")))
                .await
            {
                Ok(x) => m.last_failure_ms_ago = super::wire::last_failure_ms_ago(&x, now),
                Err(e) => tracing::debug!("job {jid}: exceptions not read: {e}"),
            }
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_ids() {
        assert_eq!(
            wanted("0.Source__orders[12].numRecordsOut"),
            Some(Wanted::SourceOut)
        );
        assert_eq!(wanted("0.Source__orders[12].numRecordsIn"), None);
        assert_eq!(
            wanted("0.orders_out[13]__Writer.numRecordsIn"),
            Some(Wanted::SinkIn)
        );
        assert_eq!(wanted("0.orders_out[13]__Committer.numRecordsIn"), None);
        assert!(holds_sink("orders_out[13]: Writer") && holds_sink("Calc[2] -> Sink: x[3]"));
        assert!(!holds_sink("Source: src[1] -> Calc[2]"));
        assert_eq!(
            wanted("1.Source__orders[12].pendingRecords"),
            Some(Wanted::Pending)
        );
        assert_eq!(
            wanted("0.Sink__fct_orders[20].numRecordsIn"),
            Some(Wanted::SinkIn)
        );
        assert_eq!(wanted("0.Sink__fct_orders[20].numRecordsOut"), None);
        assert_eq!(wanted("0.numRecordsIn"), None);
        assert_eq!(wanted("0.Source__orders[12].numRecordsOutPerSecond"), None);
    }
}
