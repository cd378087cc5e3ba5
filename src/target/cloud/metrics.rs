//! Statement metrics from Confluent Cloud's Metrics API (`/v2/metrics/cloud/query`):
//! <https://api.telemetry.confluent.cloud/docs>.

use super::CloudClient;
use crate::target::TargetError;
use crate::target::metrics::{Counted, RuntimeMetrics};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The metric of records read by a statement (a counter, one minute per point).
pub const RECORDS_IN: &str = "io.confluent.flink/num_records_in";
/// The metric of records written by a statement (a counter).
pub const RECORDS_OUT: &str = "io.confluent.flink/num_records_out";
/// The metric of records waiting in a statement's source topics (its consumer lag).
pub const PENDING_RECORDS: &str = "io.confluent.flink/pending_records";

impl CloudClient {
    /// The metrics of the statements running in `pools` over the last `window_minutes` (ending now),
    /// by statement name: three queries (records in, records out, pending records), each grouped by
    /// statement. Counters are summed over the window; the backlog is the newest point.
    ///
    /// Errors: no pool given (the `cloud` dataset requires a resource filter), the API's errors.
    pub async fn statement_metrics(
        &self,
        pools: &[String],
        window_minutes: u32,
    ) -> Result<BTreeMap<String, RuntimeMetrics>, TargetError> {
        if pools.is_empty() {
            return Err(TargetError::Config(
                "the Metrics API needs a compute pool to filter on: set flink.compute_pool_id"
                    .into(),
            ));
        }
        let end = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
            / 60
            * 60;
        let start = end - i64::from(window_minutes) * 60;
        let interval = format!("{}/{}", iso_minute(start), iso_minute(end));
        let filter = if let [only] = pools {
            json!({"field": "resource.compute_pool.id", "op": "EQ", "value": only})
        } else {
            json!({"op": "OR", "filters": pools.iter().map(|p| json!({"field": "resource.compute_pool.id", "op": "EQ", "value": p})).collect::<Vec<_>>()})
        };
        let mut out: BTreeMap<String, RuntimeMetrics> = BTreeMap::new();
        for metric in [RECORDS_IN, RECORDS_OUT, PENDING_RECORDS] {
            let body = json!({
                "aggregations": [{"metric": metric}],
                "filter": filter,
                "group_by": ["resource.flink_statement.name"],
                "granularity": "PT1M",
                "intervals": [interval],
                "limit": 1000,
                "format": "GROUPED",
            });
            for (name, points) in self.query_metric(&body).await? {
                let m = out
                    .entry(name)
                    .or_insert_with(|| RuntimeMetrics::empty(Counted::LastMinutes(window_minutes)));
                let total = points.iter().map(|(_, v)| *v).sum::<f64>().max(0.0) as u64;
                let newest = points
                    .iter()
                    .max_by(|a, b| a.0.cmp(&b.0))
                    .map(|(_, v)| v.max(0.0) as u64);
                match metric {
                    RECORDS_IN => m.records_in = Some(total),
                    RECORDS_OUT => m.records_out = Some(total),
                    _ => m.pending_records = newest,
                }
            }
        }
        Ok(out)
    }

    /// One metrics query (with its pages): statement name → points `(timestamp, value)`.
    async fn query_metric(
        &self,
        body: &Value,
    ) -> Result<BTreeMap<String, Vec<(String, f64)>>, TargetError> {
        let mut out: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let mut url = self.url(&self.settings.metrics_url, "/v2/metrics/cloud/query");
            if let Some(t) = &token {
                url.query_pairs_mut().append_pair("page_token", t);
            }
            let a = self.send_retrying(Method::POST, &url, Some(body)).await?;
            if !a.status.is_success() {
                return Err(self.fail(&Method::POST, &url, &a));
            }
            let v = self.parse(&Method::POST, &url, &a)?;
            for row in v["data"].as_array().into_iter().flatten() {
                let Some(name) = row
                    .get("resource.flink_statement.name")
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                let points = out.entry(name.to_string()).or_default();
                match row.get("points").and_then(Value::as_array) {
                    Some(ps) => points.extend(ps.iter().filter_map(point)),
                    None => points.extend(point(row)),
                }
            }
            let next = v
                .pointer("/meta/pagination/next_page_token")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            match next {
                Some(t) if seen.insert(t.clone()) => token = Some(t),
                _ => break,
            }
        }
        Ok(out)
    }
}

/// `(timestamp, value)` of a metrics point.
fn point(v: &Value) -> Option<(String, f64)> {
    Some((
        v.get("timestamp")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        v.get("value").and_then(Value::as_f64)?,
    ))
}

/// `YYYY-MM-DDTHH:MM:SSZ` of seconds since the epoch.
fn iso_minute(secs: i64) -> String {
    format!(
        "{}Z",
        crate::time::utc_timestamp(secs)
            .trim_end_matches(" UTC")
            .replace(' ', "T")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_minutes() {
        assert_eq!(iso_minute(1_762_541_100), "2025-11-07T18:45:00Z");
    }
}
