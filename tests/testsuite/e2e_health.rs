//! `pipeline healthcheck` on the local Flink 2.2 + SQL Gateway stack (`scripts/local-flink.sh up`)
//! reads each table's job from the JobManager: a one-fact project whose aggregate's checkpoints all
//! expire (the session's `execution.checkpointing.timeout` is Flink's minimum, 10 ms, for about
//! 10 MB of state: 5,000 keys of 2,000-character values; failures tolerated, so the job keeps
//! running) is `degraded` with Flink's own reason, while its job RUNS; `status --lag` shows the
//! job's checkpoints and restarts.
//!
//! Skips without the stack (`FLINKPIPE_E2E=required` turns that into a failure). The run's job
//! (`<prefix>-…`) is cancelled whatever happens ([`E2e`]).

use crate::support::e2e::E2e;
use crate::support::stack::{gateway_config, run_prefix, stack_available};
use std::time::{Duration, Instant};

#[test]
fn a_job_whose_checkpoints_fail_is_degraded_with_flinks_reason_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let prefix = run_prefix("e2ehealth");
    let e = E2e::new(
        &prefix,
        &[
            (
                "sources/hc/src_hc/sql-scripts/ddl.src_hc.sql",
                "CREATE TABLE IF NOT EXISTS src_hc (\n  k INT,\n  v STRING\n) WITH (\n  'connector' = 'datagen',\n  'rows-per-second' = '5000',\n  'fields.k.min' = '1',\n  'fields.k.max' = '5000',\n  'fields.v.length' = '2000'\n);\n",
            ),
            (
                "facts/hc/hc_fct_totals/sql-scripts/ddl.hc_fct_totals.sql",
                "CREATE TABLE IF NOT EXISTS hc_fct_totals (\n  k INT,\n  v STRING\n) WITH (\n  'connector' = 'blackhole'\n);\n",
            ),
            (
                "facts/hc/hc_fct_totals/sql-scripts/dml.hc_fct_totals.sql",
                "INSERT INTO hc_fct_totals\nSELECT k, MAX(v) AS v FROM src_hc GROUP BY k;\n",
            ),
        ],
    )
    .config(&format!(
        "{}    session_properties:\n      execution.checkpointing.interval: 1s\n      execution.checkpointing.timeout: 10ms\n      execution.checkpointing.tolerable-failed-checkpoints: '100000'\n",
        gateway_config(&prefix)
    ));
    e.run(&["pipeline", "deploy", e.p(), "--product-name", "hc"])
        .success();

    // The job runs; its checkpoints expire one after the other.
    let began = Instant::now();
    let health = loop {
        let (v, _) = e.json(&["pipeline", "healthcheck", "hc", e.p()]);
        let t = v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["table_name"] == "hc_fct_totals")
            .cloned()
            .unwrap_or_else(|| panic!("{v:#}"));
        if t["health"] == "degraded" || began.elapsed() > Duration::from_secs(60) {
            break t;
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    assert_eq!(health["health"], "degraded", "{health:#}");
    assert_eq!(health["statements"][0][1], "RUNNING", "{health:#}");
    let detail = health["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&format!("{prefix}-"))
            && detail.contains("checkpoint")
            && detail.contains("failed at")
            && detail.contains("Checkpoint expired before completing."),
        "{health:#}"
    );
    assert!(
        health["checkpoints"]["failed"].as_u64().unwrap_or(0) >= 1,
        "{health:#}"
    );
    // The JobManager's metric fetcher may not have read the job yet: then the count is left out.
    assert!(
        health["restarts"].is_null() || health["restarts"] == 0,
        "{health:#}"
    );

    // `status --lag`: the job's checkpoints and restarts, as the JobManager counts them.
    let o = e.run(&["pipeline", "status", e.p(), "--lag"]).success();
    let text = o.stdout_raw();
    assert!(
        text.contains("checkpoints") && text.contains("restarts") && text.contains(" failed"),
        "{text}"
    );
}
