//! `pipeline healthcheck` on the local Flink 2.2 + SQL Gateway stack (`scripts/local-flink.sh up`)
//! reads each table's job from the JobManager: a one-fact project whose aggregate's checkpoints all
//! expire (the session's `execution.checkpointing.timeout` is Flink's minimum, 10 ms, for about
//! 10 MB of state: 5,000 keys of 2,000-character values; failures tolerated, so the job keeps
//! running) is `degraded`
//! with Flink's own reason, while its job RUNS; `status --lag` shows the job's checkpoints and
//! restarts.
//!
//! Skips without the stack (`FLINKPIPE_E2E=required` turns that into a failure). The run's job
//! (`<prefix>-…`) is cancelled whatever happens.

use crate::support::stack::{GATEWAY, JOBMANAGER, http_get, is_ours, run_prefix, stack_available};
use crate::support::test::Outcome;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// Cancels this run's running jobs, whatever happened.
struct Jobs(String);

impl Drop for Jobs {
    fn drop(&mut self) {
        let Some(v) = http_get(&format!("{JOBMANAGER}/jobs/overview")) else {
            return;
        };
        for j in v["jobs"].as_array().into_iter().flatten() {
            let (id, name) = (
                j["jid"].as_str().unwrap_or(""),
                j["name"].as_str().unwrap_or(""),
            );
            if is_ours(name, &self.0) && j["state"] == "RUNNING" {
                let _ = Command::new("curl")
                    .args(["-fsS", "-X", "PATCH"])
                    .arg(format!("{JOBMANAGER}/jobs/{id}?mode=cancel"))
                    .output();
            }
        }
    }
}

#[test]
fn a_job_whose_checkpoints_fail_is_degraded_with_flinks_reason_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let prefix = run_prefix("e2ehealth");
    let jobs = Jobs(prefix.clone());
    let (tmp, pipelines) = crate::support::project(&[
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
    ]);
    let root = tmp.path();
    let config = root.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "flinkpipe:\n  statement_prefix: {prefix}\n  gateway:\n    url: {GATEWAY}\n    jobmanager_url: {JOBMANAGER}\n    session_properties:\n      execution.checkpointing.interval: 1s\n      execution.checkpointing.timeout: 10ms\n      execution.checkpointing.tolerable-failed-checkpoints: '100000'\n"
        ),
    )
    .unwrap();
    let pipelines_arg = pipelines.to_str().unwrap().to_string();
    let run = |args: &[&str]| -> Outcome {
        let o = crate::support::command()
            .arg("--config")
            .arg(&config)
            .args(args)
            .current_dir(root)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        Outcome::of(&args.join(" "), o, None)
    };
    run(&["pipeline", "deploy", &pipelines_arg, "--product-name", "hc"]).success();

    // The job runs; its checkpoints expire one after the other.
    let began = Instant::now();
    let health = loop {
        let o = run(&[
            "--output",
            "json",
            "pipeline",
            "healthcheck",
            "hc",
            &pipelines_arg,
        ]);
        let v: Value = serde_json::from_str(&o.stdout_raw())
            .unwrap_or_else(|e| panic!("not JSON ({e})\n{}\n{}", o.stdout_raw(), o.stderr_raw()));
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
    assert_eq!(health["restarts"], 0, "{health:#}");

    // `status --lag`: the job's checkpoints and restarts, as the JobManager counts them.
    let o = run(&["pipeline", "status", &pipelines_arg, "--lag"]).success();
    let text = o.stdout_raw();
    assert!(
        text.contains("checkpoints") && text.contains("restarts") && text.contains(" failed"),
        "{text}"
    );
    drop(jobs);
}
