//! Runtime metrics for `pipeline status --lag`: on Confluent Cloud from the Metrics API (Cloud API
//! key; [`crate::target::cloud::CloudClient::statement_metrics`]), on the SQL Gateway from the
//! JobManager ([`crate::target::Target::runtime_metrics`]). What blue-green needs to judge, before
//! consumers move, whether the green statements have caught up: records in and out, the backlog,
//! the watermark, backpressure.

use super::OpsError;
use super::target::{Connected, TargetKind};
use crate::target::StatementState;
use crate::target::cloud::{self, CloudClient};
use crate::target::metrics::RuntimeMetrics;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Where the metrics came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LagSource {
    /// `Confluent Cloud Metrics API (last 10 min, data about 3 min behind)`, `JobManager http://…`.
    pub source: String,
}

/// The metrics of `names` (statements that exist; others are left out).
///
/// Errors: on Confluent Cloud, no Cloud API key (named, with its variables) or the API's errors;
/// on the gateway, the JobManager's errors.
pub fn collect(
    cfg: &crate::config::Config,
    c: &Connected,
    rt: &tokio::runtime::Runtime,
    live: &BTreeMap<String, StatementState>,
    names: &BTreeSet<String>,
    window_minutes: u32,
) -> Result<(BTreeMap<String, RuntimeMetrics>, LagSource), OpsError> {
    let names: Vec<String> = names
        .iter()
        .filter(|n| live.contains_key(*n))
        .cloned()
        .collect();
    match c.kind {
        TargetKind::SqlGateway => {
            let metrics = rt
                .block_on(c.target.runtime_metrics(&names))
                .map_err(|e| c.error("reading job metrics", e))?;
            Ok((
                metrics,
                LagSource {
                    source: format!(
                        "JobManager REST API (counters since each job started) of {}",
                        c.target.describe()
                    ),
                },
            ))
        }
        TargetKind::ConfluentCloud => {
            let settings = cloud::settings(cfg, &crate::config::process_env)?;
            let client = CloudClient::new(settings).map_err(|e| c.error("the Metrics API", e))?;
            let mut pools: BTreeSet<String> = names
                .iter()
                .filter_map(|n| live.get(n).and_then(|s| s.meta.compute_pool_id.clone()))
                .collect();
            pools.extend(cfg.flink.compute_pool_id.clone());
            pools.extend(cfg.flinkpipe.compute_pools.values().cloned());
            let pools: Vec<String> = pools.into_iter().collect();
            let all = rt
                .block_on(client.statement_metrics(&pools, window_minutes))
                .map_err(|e| c.error("reading the Metrics API", e))?;
            let wanted: BTreeSet<&String> = names.iter().collect();
            Ok((
                all.into_iter()
                    .filter(|(n, _)| wanted.contains(n))
                    .collect(),
                LagSource {
                    source: format!(
                        "Confluent Cloud Metrics API (records over the last {window_minutes} min; its data lags about 3 min)"
                    ),
                },
            ))
        }
    }
}
