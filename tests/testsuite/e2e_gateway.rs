//! End to end on a real Apache Flink 2.2 + SQL Gateway + Kafka stack (`scripts/local-flink.sh up`):
//! deploy `fixtures/`, read rows back from the sink topics, a blue-green of an intermediate, a broken
//! DML, and an undeploy. One scenario in order, because every step changes the same cluster.
//!
//! Needs the stack: `make test` starts it and sets `FLINKPIPE_E2E=required`; a plain `cargo test`
//! without a stack prints why it skips (unless `FLINKPIPE_E2E=required`, which turns that into a
//! failure).

use crate::support::e2e::E2e;
use crate::support::our_fixture;
use crate::support::repo::{Repo, T_CHANGE};
use crate::support::stack::{JOBMANAGER, gateway_config, http_get, script, stack_available};
use crate::support::stack::{is_ours, own_topics, run_prefix};
use crate::support::test::Outcome;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Records per topic (-1: no such topic).
fn offsets(topics: &[&str]) -> BTreeMap<String, i64> {
    let mut args = vec!["offsets"];
    args.extend_from_slice(topics);
    script(&args)
        .lines()
        .filter_map(|l| {
            let (t, n) = l.split_once('\t')?;
            Some((t.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

/// Jobs on the cluster: name → states (newest first).
fn jobs() -> BTreeMap<String, Vec<String>> {
    let v = http_get(&format!("{JOBMANAGER}/jobs/overview")).expect("jobs/overview");
    let mut list: Vec<(i64, String, String)> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["start-time"].as_i64().unwrap_or(0),
                j["name"].as_str().unwrap().to_string(),
                j["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    list.sort_by_key(|j| std::cmp::Reverse(j.0));
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, n, s) in list {
        out.entry(n).or_default().push(s);
    }
    out
}

fn running(jobs: &BTreeMap<String, Vec<String>>, name: &str) -> usize {
    jobs.get(name)
        .map(|s| s.iter().filter(|s| *s == "RUNNING").count())
        .unwrap_or(0)
}

struct Env {
    repo: Repo,
    config: PathBuf,
    prefix: String,
    /// A table's topic name → this run's topic ([`own_topics`]).
    topic: Box<dyn Fn(&str) -> String>,
}

impl Env {
    /// Records in each table's topic (this run's own, [`own_topics`]), keyed by table (-1: no topic).
    fn offsets(&self, tables: &[&str]) -> BTreeMap<String, i64> {
        let topics: Vec<String> = tables.iter().map(|t| (self.topic)(t)).collect();
        let by_topic = offsets(&topics.iter().map(String::as_str).collect::<Vec<_>>());
        tables
            .iter()
            .zip(&topics)
            .filter_map(|(t, topic)| Some((t.to_string(), *by_topic.get(topic)?)))
            .collect()
    }

    /// Waits until every table's topic holds more records than in `before` (keyed by table).
    fn wait_for_rows(
        &self,
        tables: &[&str],
        before: &BTreeMap<String, i64>,
        timeout: Duration,
    ) -> BTreeMap<String, i64> {
        let start = Instant::now();
        loop {
            let now = self.offsets(tables);
            let missing: Vec<&str> = tables
                .iter()
                .copied()
                .filter(|t| {
                    now.get(*t).copied().unwrap_or(-1)
                        <= before.get(*t).copied().unwrap_or(0).max(0)
                })
                .collect();
            if missing.is_empty() {
                return now;
            }
            assert!(
                start.elapsed() < timeout,
                "no new rows after {timeout:?} in {missing:?} (offsets {now:?})"
            );
            std::thread::sleep(Duration::from_secs(3));
        }
    }

    fn run(&self, args: &[&str]) -> Outcome {
        let o = crate::support::command()
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env_remove("PIPELINES")
            .env_remove("FLINKPIPE_GATEWAY_URL")
            .env_remove("FLINKPIPE_JOBMANAGER_URL")
            .current_dir(&self.repo.root)
            .output()
            .unwrap();
        Outcome::of(&args.join(" "), o, None)
    }

    /// `statement …` commands find the project through `$PIPELINES` (resume needs its SQL).
    fn statement(&self, args: &[&str]) -> Value {
        let mut all = vec!["statement"];
        all.extend_from_slice(args);
        all.extend(["--output", "json"]);
        let out = crate::support::command()
            .arg("--config")
            .arg(&self.config)
            .args(&all)
            .env("PIPELINES", &self.repo.pipelines)
            .current_dir(&self.repo.root)
            .output()
            .unwrap();
        let out = Outcome::of("flinkpipe", out, None);
        let out = out.success();
        serde_json::from_str(&out.stdout_raw()).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--output", "json"]);
        let out = self.run(&all);
        serde_json::from_str(&out.stdout_raw()).unwrap_or_else(|e| {
            panic!(
                "flinkpipe {args:?}: not JSON ({e}); exit {:?}\nstdout: {}\nstderr: {}",
                out.output.status.code(),
                out.stdout_raw(),
                out.stderr_raw()
            )
        })
    }

    /// `pipeline deploy` of the whole project, descendants included, as JSON.
    fn deploy_all(&self) -> Value {
        self.json(&[
            "pipeline",
            "deploy",
            self.pipelines(),
            "--dir",
            "pipelines",
            "--may-start-descendants",
        ])
    }

    fn pipelines(&self) -> &str {
        self.repo.pipelines.to_str().unwrap()
    }

    fn dml(&self, product: &str, table: &str) -> String {
        format!("{}-{product}-dml-{}", self.prefix, table.replace('_', "-"))
    }
}

/// Cancels this run's jobs when the scenario fails half-way (best effort), so that the next run
/// finds free task slots.
impl Drop for Env {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let Some(v) = http_get(&format!("{JOBMANAGER}/jobs/overview")) else {
            return;
        };
        for j in v["jobs"].as_array().into_iter().flatten() {
            let (id, name, state) = (
                j["jid"].as_str().unwrap_or(""),
                j["name"].as_str().unwrap_or(""),
                j["state"].as_str().unwrap_or(""),
            );
            let ours = is_ours(name, &self.prefix)
                || http_get(&format!("{JOBMANAGER}/jobs/{id}/config")).is_some_and(|c| {
                    c.pointer("/execution-config/user-config/flinkpipe.statement")
                        .and_then(Value::as_str)
                        .is_some_and(|n| is_ours(n, &self.prefix))
                });
            if ours && !matches!(state, "FINISHED" | "FAILED" | "CANCELED") {
                let _ = Command::new("curl")
                    .args([
                        "-fsS",
                        "-X",
                        "PATCH",
                        &format!("{JOBMANAGER}/jobs/{id}?mode=cancel"),
                    ])
                    .output();
            }
        }
    }
}

fn node<'a>(report: &'a Value, table: &str) -> &'a Value {
    report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["table_name"] == table)
        .unwrap_or_else(|| panic!("{table} not in the report: {report}"))
}

#[test]
fn fixtures_deploy_blue_green_and_failures_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    // A prefix and topics of our own: neither job names nor topics collide with `make demo`'s (the
    // same fixtures under the prefix `demo` and the fixtures' topic names) or another run's.
    let prefix = run_prefix("e2e");
    let fixture = our_fixture();
    let topic = own_topics(&fixture.1, &prefix);
    let repo = Repo::new(fixture);
    let config = repo.root.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "{}    external_ddl: [{}]\n",
            gateway_config(&prefix),
            root().join("fixtures/external").display()
        ),
    )
    .unwrap();
    let env = Env {
        repo,
        config,
        prefix,
        topic: Box::new(topic),
    };
    script(&[
        "topics",
        env.pipelines(),
        root().join("fixtures/external").to_str().unwrap(),
    ]);

    // ---- 1. deploy everything: every job RUNNING (seeds are bounded: FINISHED) ----------------
    let sinks = [
        "int_c360_clickstream_clean",
        "int_sales_orders_enriched",
        "int_inventory_stock_levels",
        "c360_dim_customers",
        "sales_fct_order_payments",
    ];
    let before = env.offsets(&sinks);
    let t0 = Instant::now();
    let report = env.deploy_all();
    let deploy_secs = t0.elapsed().as_secs_f64();
    assert_eq!(report["success"], true, "deploy failed: {report:#}");
    let nodes = report["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 36, "35 tables + 1 external");
    for n in nodes {
        let ok = n["status"] == "done"
            || (n["table_name"] == "ext_c360_loyalty_members" && n["status"] == "skipped");
        assert!(ok, "{}: {}", n["table_name"], n["status"]);
    }
    let j = jobs();
    for (product, table) in [
        ("c360", "int_c360_clickstream_clean"),
        ("sales", "int_sales_orders_enriched"),
        ("sales", "int_sales_web_orders"),
        ("inventory", "int_inventory_stock_levels"),
        ("c360", "c360_dim_customers"),
        ("sales", "sales_fct_store_revenue_1m"),
    ] {
        assert_eq!(
            running(&j, &env.dml(product, table)),
            1,
            "{table}: {:?}",
            j.get(&env.dml(product, table))
        );
    }
    // The materialized table's refresh job (Flink names it) runs too.
    assert!(
        j.iter()
            .any(|(n, s)| n.contains("c360_mv_customer_360") && s[0] == "RUNNING"),
        "{j:?}"
    );
    let status = env.json(&["pipeline", "status", env.pipelines()]);
    let dml_phases: Vec<(String, String)> = status["statements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["statement"].as_str().unwrap().contains("-dml-"))
        .map(|s| {
            (
                s["statement"].as_str().unwrap().to_string(),
                s["phase"].as_str().unwrap_or("absent").to_string(),
            )
        })
        .collect();
    assert_eq!(dml_phases.len(), 24, "{dml_phases:?}");
    for (n, p) in &dml_phases {
        assert!(
            p == "RUNNING" || (n.contains("-seed-") && p == "COMPLETED"),
            "{n}: {p}"
        );
    }
    // Rows arrive in the sink topics.
    env.wait_for_rows(&sinks, &before, Duration::from_secs(120));
    eprintln!("deploy of fixtures/: {deploy_secs:.1} s");

    // ---- 2. a second deploy changes nothing and starts no duplicate ---------------------------
    let again = env.deploy_all();
    assert_eq!(again["success"], true, "{again:#}");
    assert_eq!(node(&again, "int_c360_clickstream_clean")["action"], "skip");
    let j = jobs();
    assert_eq!(
        running(&j, &env.dml("c360", "int_c360_clickstream_clean")),
        1
    );
    // A restart never spreads to tables that did not change: the sources are only declared again in
    // the session, so readers of the same sources that do not descend from the table keep running.
    let plan = env.json(&[
        "pipeline",
        "build-execution-plan",
        env.pipelines(),
        "--table-name",
        "int_sales_order_lines",
        "--may-start-descendants",
    ]);
    for n in plan["nodes"].as_array().unwrap() {
        let t = n["table_name"].as_str().unwrap();
        if [
            "int_sales_paid_orders",
            "sales_fct_order_payments",
            "sales_mv_top_stores",
        ]
        .contains(&t)
        {
            assert_eq!(n["action"], "skip", "{n}");
        }
        if t == "src_sales_orders" {
            assert_eq!(n["cause"]["kind"], "redeclared", "{n}");
        }
    }

    // ---- 3. stop with savepoint, resume from it; SQL drift ----------------------------------
    let top = env.dml("sales", "sales_mv_top_stores");
    let stopped = env.statement(&["stop", &top]);
    assert_eq!(stopped["phase"], "STOPPED", "{stopped}");
    let last = |name: &str| -> Value {
        let v = http_get(&format!("{JOBMANAGER}/jobs/overview")).unwrap();
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| j["name"] == name)
            .max_by_key(|j| j["start-time"].as_i64())
            .cloned()
            .unwrap()
    };
    let old = last(&top);
    assert_eq!(
        old["state"], "FINISHED",
        "stop with savepoint ends the job FINISHED"
    );
    let cps = http_get(&format!(
        "{JOBMANAGER}/jobs/{}/checkpoints",
        old["jid"].as_str().unwrap()
    ))
    .unwrap();
    let savepoint = cps["latest"]["savepoint"]["external_path"]
        .as_str()
        .unwrap()
        .to_string();
    let resumed = env.statement(&["resume", &top]);
    assert_eq!(resumed["phase"], "RUNNING", "{resumed}");
    let new = last(&top);
    assert_ne!(new["jid"], old["jid"]);
    let restored = http_get(&format!(
        "{JOBMANAGER}/jobs/{}/checkpoints",
        new["jid"].as_str().unwrap()
    ))
    .unwrap();
    assert_eq!(
        restored["latest"]["restored"]["external_path"].as_str(),
        Some(savepoint.as_str()),
        "resumed from the stop's savepoint: {restored}"
    );
    assert_eq!(running(&jobs(), &top), 1);
    // A file changed but not deployed shows as drift.
    let top_dml = "views/sales/mv_top_stores/sql-scripts/dml.sales_mv_top_stores.sql";
    let original = std::fs::read_to_string(env.repo.path(top_dml)).unwrap();
    env.repo.edit(top_dml, |s| format!("{s}\n-- reviewed\n"));
    env.repo
        .edit(top_dml, |s| s.replacen("SELECT", "SELECT /* v2 */", 1));
    let status = env.json(&["pipeline", "status", env.pipelines()]);
    let row = status["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["statement"] == top.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["sql_drift"], true, "{row}");
    std::fs::write(env.repo.path(top_dml), original).unwrap();

    // ---- 4. blue-green: change an intermediate's logic, deploy the green subgraph -------------
    let dml =
        "intermediates/c360/int_clickstream_clean/sql-scripts/dml.int_c360_clickstream_clean.sql";
    env.repo.edit(dml, |s| {
        s.replace(
            "WHERE page <> 'healthcheck'",
            "WHERE page <> 'healthcheck' AND page <> 'robots'",
        )
    });
    env.repo.commit("filter robots", T_CHANGE);
    let bg = env.json(&[
        "pipeline",
        "blue-green",
        env.pipelines(),
        "--since",
        "HEAD~1",
        "--apply",
    ]);
    assert_eq!(bg["applied"], true, "{bg:#}");
    let green: Vec<&Value> = bg["green"].as_array().unwrap().iter().collect();
    let green_tables: Vec<String> = green
        .iter()
        .map(|g| g["table_name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        green_tables.contains(&"int_c360_clickstream_clean_v2".to_string()),
        "{green_tables:?}"
    );
    assert!(
        green_tables.contains(&"int_c360_page_views_hop_v2".to_string()),
        "{green_tables:?}"
    );
    // The release is recorded beside the pipelines and committed with the rewritten files.
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(env.repo.pipelines.join("blue_green.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        record["releases"][0]["tables"].as_array().unwrap().len(),
        green_tables.len(),
        "{record:#}"
    );
    env.repo
        .commit("version the impacted tables", T_CHANGE + 60);
    // Flink does not create Kafka topics: `deploy --blue-green` creates the green tables' new topics
    // on their broker first.
    // (A stack kept from an earlier run may have the topic already: its rows so far are the base.)
    let before_v2 = env.offsets(&["int_c360_clickstream_clean_v2"]);
    let deployed = env.json(&["pipeline", "deploy", env.pipelines(), "--blue-green"]);
    assert_eq!(deployed["success"], true, "{deployed:#}");
    let j = jobs();
    let blue = env.dml("c360", "int_c360_clickstream_clean");
    let green_name = env.dml("c360", "int_c360_clickstream_clean_v2");
    assert_eq!(running(&j, &blue), 1, "blue keeps running beside green");
    assert_eq!(
        running(&j, &green_name),
        1,
        "green runs: {:?}",
        j.get(&green_name)
    );
    env.wait_for_rows(
        &["int_c360_clickstream_clean_v2"],
        &before_v2,
        Duration::from_secs(90),
    );
    // Status shows each blue statement next to its green successor, and no orphan.
    let status = env.json(&["pipeline", "status", env.pipelines()]);
    let row = status["blue_green"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["blue_statement"] == blue.as_str())
        .unwrap_or_else(|| panic!("{status:#}"))
        .clone();
    assert_eq!(row["blue_phase"], "RUNNING", "{row}");
    assert_eq!(row["green_statement"], green_name.as_str(), "{row}");
    assert_eq!(row["green_phase"], "RUNNING", "{row}");
    assert_eq!(status["orphans"], serde_json::json!([]), "{status:#}");
    // Decommission the blue statements.
    let out = env.run(&[
        "pipeline",
        "decommission",
        env.pipelines(),
        "--delete",
        "--no-ack",
    ]);
    out.success();
    let status = env.json(&["pipeline", "status", env.pipelines()]);
    assert_eq!(status["blue_green"], serde_json::json!([]), "{status:#}");
    assert_eq!(status["orphans"], serde_json::json!([]), "{status:#}");
    let j = jobs();
    assert_eq!(running(&j, &blue), 0, "blue stopped: {:?}", j.get(&blue));
    assert_eq!(running(&j, &green_name), 1);
    // The materialized table's blue refresh job is decommissioned too (its DDL runs the query).
    let mv = green
        .iter()
        .find(|g| g["table_name"] == "c360_mv_customer_360_v2")
        .expect("MV is green");
    assert_eq!(
        mv["blue_dml_statement_name"],
        format!("{}-c360-ddl-c360-mv-customer-360", env.prefix)
    );
    // Flink names refresh jobs after the table, whoever deployed them: count this run's only (its
    // statement name is in the job parameters), so that another run on the same stack does not count.
    let prefix = env.prefix.clone();
    let mv_jobs = move |_: &BTreeMap<String, Vec<String>>, t: &str| -> usize {
        let v = http_get(&format!("{JOBMANAGER}/jobs/overview")).expect("jobs/overview");
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| {
                j["state"] == "RUNNING"
                    && j["name"]
                        .as_str()
                        .is_some_and(|n| n.ends_with(&format!(".`{t}`_continuous_refresh_job")))
            })
            .filter(|j| {
                http_get(&format!(
                    "{JOBMANAGER}/jobs/{}/config",
                    j["jid"].as_str().unwrap_or("")
                ))
                .and_then(|c| {
                    c.pointer("/execution-config/user-config/flinkpipe.statement")
                        .and_then(Value::as_str)
                        .map(|n| n.starts_with(&format!("{prefix}-")))
                })
                .unwrap_or(false)
            })
            .count()
    };
    assert_eq!(mv_jobs(&j, "c360_mv_customer_360"), 0, "blue MV stopped");
    assert_eq!(mv_jobs(&j, "c360_mv_customer_360_v2"), 1, "green MV runs");

    // ---- 4b. a statement set changed in its second INSERT: both sinks go green ---------------
    // (issue: green wrote the blue `int_sales_store_orders` topic beside blue, doubling its rows.)
    let set_dml = "intermediates/sales/int_web_orders/sql-scripts/dml.int_sales_web_orders.sql";
    env.repo.edit(set_dml, |s| {
        s.replace(
            "WHERE channel = 'store';",
            "WHERE channel = 'store' AND amount >= 5;",
        )
    });
    env.repo.commit("store orders of 5 or more", T_CHANGE + 120);
    let bg = env.json(&[
        "pipeline",
        "blue-green",
        env.pipelines(),
        "--since",
        "HEAD~1",
        "--apply",
    ]);
    assert_eq!(bg["applied"], true, "{bg:#}");
    let set_green: Vec<String> = bg["green"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["table_name"].as_str().unwrap().to_string())
        .collect();
    for t in [
        "int_sales_web_orders_v2",
        "int_sales_store_orders_v2",
        "sales_mv_top_stores_v2",
        // versioned once already in step 4 (it reads the clickstream too)
        "c360_fct_engagement_v3",
    ] {
        assert!(set_green.contains(&t.to_string()), "{t}: {set_green:?}");
    }
    env.repo.commit("version the statement set", T_CHANGE + 180);
    let blue_set = env.dml("sales", "int_sales_web_orders");
    let green_set = env.dml("sales", "int_sales_web_orders_v2");
    let before_green = env.offsets(&["int_sales_store_orders_v2", "int_sales_web_orders_v2"]);
    let deployed = env.json(&["pipeline", "deploy", env.pipelines(), "--blue-green"]);
    assert_eq!(deployed["success"], true, "{deployed:#}");
    let j = jobs();
    assert_eq!(
        running(&j, &blue_set),
        1,
        "blue set keeps running beside green"
    );
    assert_eq!(
        running(&j, &green_set),
        1,
        "green set runs: {:?}",
        j.get(&green_set)
    );
    env.wait_for_rows(
        &["int_sales_store_orders_v2", "int_sales_web_orders_v2"],
        &before_green,
        Duration::from_secs(120),
    );
    let out = env.run(&[
        "pipeline",
        "decommission",
        env.pipelines(),
        "--delete",
        "--no-ack",
    ]);
    out.success();
    let j = jobs();
    assert_eq!(running(&j, &blue_set), 0, "blue set deleted");
    assert_eq!(running(&j, &green_set), 1, "green set runs");
    // No job writes the blue topic any more, while green keeps writing its own: had green kept the
    // blue sink, the blue topic would still grow.
    let quiet_from = env.offsets(&["int_sales_store_orders", "int_sales_store_orders_v2"]);
    let grown = env.wait_for_rows(
        &["int_sales_store_orders_v2"],
        &quiet_from,
        Duration::from_secs(120),
    );
    std::thread::sleep(Duration::from_secs(5));
    let after = env.offsets(&["int_sales_store_orders"]);
    assert_eq!(
        after["int_sales_store_orders"], quiet_from["int_sales_store_orders"],
        "the blue topic still receives records (green {:?})",
        grown
    );

    // ---- 4c. blue-green below a table written by a statement set (#41.6) ---------------------
    // `sales_mv_top_stores_v2` reads `int_sales_store_orders_v2`, which the set of
    // `int_sales_web_orders_v2` writes: a kept ancestor whose DDL statement the gateway never lists
    // (session-scoped). It is live because the set's job runs, so the green view starts on it.
    let dim = "dimensions/sales/dim_stores/sql-scripts/dml.sales_dim_stores.sql";
    env.repo.edit(dim, |s| {
        s.replacen(
            "CONCAT(s.store_name, ' -- '",
            "CONCAT(s.store_name, ' / '",
            1,
        )
    });
    env.repo.commit("store label with a slash", T_CHANGE + 240);
    let bg = env.json(&[
        "pipeline",
        "blue-green",
        env.pipelines(),
        "--since",
        "HEAD~1",
        "--apply",
    ]);
    assert_eq!(bg["applied"], true, "{bg:#}");
    env.repo
        .commit("version below the store dimension", T_CHANGE + 300);
    let deployed = env.json(&["pipeline", "deploy", env.pipelines(), "--blue-green"]);
    assert_eq!(deployed["success"], true, "{deployed:#}");
    let kept = node(&deployed, "int_sales_store_orders_v2");
    assert_eq!(kept["status"], "skipped", "{kept}");
    assert_eq!(node(&deployed, "sales_mv_top_stores_v3")["status"], "done");
    assert_eq!(
        running(&jobs(), &env.dml("sales", "sales_mv_top_stores_v3")),
        1
    );
    // Health on the gateway is the jobs: every table of the product is healthy while they run,
    // whatever the session-scoped DDL statements (#43.1).
    let health = env.run(&[
        "--output",
        "json",
        "pipeline",
        "healthcheck",
        "sales",
        env.pipelines(),
    ]);
    let health = health.success();
    let health: Value = serde_json::from_str(&health.stdout_raw()).unwrap();
    for t in health["tables"].as_array().unwrap() {
        assert!(
            t["health"] == "healthy" || t["health"] == "declared" || t["health"] == "drifted",
            "{t}"
        );
    }
    let out = env.run(&[
        "pipeline",
        "decommission",
        env.pipelines(),
        "--delete",
        "--no-ack",
    ]);
    out.success();

    // ---- 5. a broken DML fails with the gateway's message; its descendants are skipped --------
    let stock = env.dml("inventory", "inventory_fct_stock_alerts");
    let child = env.dml("inventory", "inventory_mv_replenishment");
    let broken = "facts/inventory/fct_stock_alerts/sql-scripts/dml.inventory_fct_stock_alerts.sql";
    env.repo.edit(broken, |s| {
        s.replacen("SELECT", "SELECT no_such_column,", 1)
    });
    // Restarting the stateful running statement with new SQL would lose its state: refused.
    let refused = env.json(&[
        "pipeline",
        "deploy",
        env.pipelines(),
        "--table-name",
        "inventory_fct_stock_alerts",
    ]);
    assert_eq!(refused["success"], false, "{refused:#}");
    let why = node(&refused, "inventory_fct_stock_alerts")["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        why.contains("keeps state and its SQL changed")
            && why.contains("--allow-state-loss inventory_fct_stock_alerts"),
        "{why}"
    );
    // With the loss accepted, the broken text is still refused before anything is deleted.
    let refused = env.json(&[
        "pipeline",
        "deploy",
        env.pipelines(),
        "--table-name",
        "inventory_fct_stock_alerts",
        "--allow-state-loss",
        "inventory_fct_stock_alerts",
    ]);
    assert_eq!(refused["success"], false, "{refused:#}");
    let n = node(&refused, "inventory_fct_stock_alerts");
    assert_eq!(n["action"], "restart", "{n}");
    let why = n["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("does not validate") && why.contains("no_such_column"),
        "{why}"
    );
    assert_eq!(
        running(&jobs(), &stock),
        1,
        "the running job was left alone"
    );
    for n in [&child, &stock] {
        let out = env.run(&["statement", "delete", n]);
        out.success();
    }
    let r = env.json(&[
        "pipeline",
        "deploy",
        env.pipelines(),
        "--table-name",
        "inventory_fct_stock_alerts",
        "--may-start-descendants",
    ]);
    assert_eq!(r["success"], false);
    let failed = node(&r, "inventory_fct_stock_alerts");
    assert_eq!(failed["status"], "failed", "{failed}");
    let why = failed["reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("no_such_column") && why.contains("not found"),
        "gateway cause: {why}"
    );
    let skipped = node(&r, "inventory_mv_replenishment");
    assert_eq!(skipped["status"], "skipped", "{skipped}");
    assert!(
        skipped["reason"]
            .as_str()
            .is_some_and(|s| s.contains("failed")),
        "{skipped}"
    );
    let j = jobs();
    assert_eq!(running(&j, &stock), 0);
    assert_eq!(
        running(&j, &env.dml("inventory", "int_inventory_stock_levels")),
        1,
        "the rest keeps running"
    );
    assert_eq!(running(&j, &green_name), 1);

    // ---- 6. undeploy: every job of this run stops ---------------------------------------------
    let out = env.run(&[
        "pipeline",
        "undeploy",
        env.pipelines(),
        "--dir",
        "pipelines",
        "--no-ack",
    ]);
    out.success();
    let j = jobs();
    let left: Vec<&String> = j
        .iter()
        .filter(|(n, s)| is_ours(n, &env.prefix) && s.iter().any(|s| s == "RUNNING"))
        .map(|(n, _)| n)
        .collect();
    assert!(left.is_empty(), "still running after undeploy: {left:?}");
    assert_eq!(
        mv_jobs(&j, "c360_mv_customer_360_v2"),
        0,
        "undeploy stops the MV"
    );
}

/// A table created by a CTAS (no `IF NOT EXISTS`), with mixed-case names, read by a child deployed in
/// a later run: the new gateway session must declare it from the `DESCRIBE` of the CTAS query, under
/// its name as written.
#[test]
fn a_ctas_table_is_declared_in_a_later_session_under_its_exact_name() {
    if !stack_available() {
        return;
    }
    let prefix = format!("e2ectas{}", std::process::id() % 100_000);
    let topic = format!("{prefix}_typed");
    let e = E2e::new(
        &prefix,
        &[
            (
                "sources/src_events/sql-scripts/ddl.Src_Events.sql",
                "CREATE TABLE Src_Events (id INT, amount INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5', 'fields.id.min' = '1', 'fields.id.max' = '10', 'fields.amount.min' = '1', 'fields.amount.max' = '100');\n",
            ),
            (
                "intermediates/int_typed/sql-scripts/ddl.Int_Typed.sql",
                &format!(
                    "CREATE TABLE Int_Typed WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json')\nAS SELECT id, amount * 2 AS Doubled FROM Src_Events;\n"
                ),
            ),
            (
                "facts/fct_total/sql-scripts/ddl.Fct_Total.sql",
                "CREATE TABLE Fct_Total (id INT, total INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'blackhole');\n",
            ),
            (
                "facts/fct_total/sql-scripts/dml.Fct_Total.sql",
                "INSERT INTO Fct_Total SELECT id, SUM(Doubled) FROM Int_Typed GROUP BY id;\n",
            ),
            // The SQL client's statement-set form: one job writing two tables.
            (
                "facts/fct_split/sql-scripts/ddl.Fct_Low.sql",
                "CREATE TABLE Fct_Low (id INT, amount INT) WITH ('connector' = 'blackhole');\n",
            ),
            (
                "facts/fct_split/sql-scripts/dml.Fct_Low.sql",
                "BEGIN STATEMENT SET;\nINSERT INTO Fct_Low SELECT id, amount FROM Src_Events WHERE amount < 50;\nINSERT INTO Fct_High SELECT id, amount FROM Src_Events WHERE amount >= 50;\nEND;\n",
            ),
            (
                "facts/fct_high/sql-scripts/ddl.Fct_High.sql",
                "CREATE TABLE Fct_High (id INT, amount INT) WITH ('connector' = 'blackhole');\n",
            ),
        ],
    );
    script(&["topics", e.p()]);
    let run = |args: &[&str]| -> Value { e.json(args).0 };
    let p = e.p();
    // Run 1: the source and the CTAS.
    let first = run(&["pipeline", "deploy", p, "--table-name", "Int_Typed"]);
    assert_eq!(first["success"], true, "{first:#}");
    // Run 2, a new process and session: the child reads the CTAS table.
    let second = run(&["pipeline", "deploy", p, "--table-name", "Fct_Total"]);
    assert_eq!(second["success"], true, "{second:#}");
    assert_eq!(node(&second, "Int_Typed")["action"], "skip", "{second:#}");
    let j = jobs();
    let ctas = format!("{prefix}-ddl-int-typed");
    let child = format!("{prefix}-dml-fct-total");
    assert_eq!(running(&j, &ctas), 1, "{j:?}");
    assert_eq!(running(&j, &child), 1, "{j:?}");
    // `BEGIN STATEMENT SET; … END;` runs as one gateway statement, and a restart EXPLAINs it first.
    let set = format!("{prefix}-dml-fct-low");
    for _ in 0..2 {
        let r = run(&["pipeline", "deploy", p, "--table-name", "Fct_Low"]);
        assert_eq!(r["success"], true, "{r:#}");
        assert_eq!(running(&jobs(), &set), 1, "{:?}", jobs().get(&set));
    }
    e.run(&["pipeline", "undeploy", p, "--dir", "pipelines", "--no-ack"])
        .success();
    let j = jobs();
    assert_eq!(
        running(&j, &ctas) + running(&j, &child) + running(&j, &set),
        0,
        "{j:?}"
    );
}

/// `table preview` and `sql query` on a real Flink: a seed table of `fixtures/` previewed with its
/// exact rows (known from its DML), an aggregate over it whose changelog has updates (one row per key,
/// counts computed here from the DML), the raw `-U/+U` pairs, an exact `--max-rows` cut of an
/// unbounded source, and no query job left running afterwards.
#[test]
fn queries_and_previews_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let prefix = run_prefix("e2eq");
    let fixture = our_fixture();
    let _ = own_topics(&fixture.1, &prefix);
    let e = E2e::copy(&prefix, fixture).config(&format!(
        "{}    external_ddl: [{}]\n",
        gateway_config(&prefix),
        root().join("fixtures/external").display()
    ));
    let pipelines = &e.pipelines;
    // The seed writes a topic of this run's own, so its rows are exactly the DML's.
    let topic = format!("{prefix}_seed_sales_stores");
    let ddl = pipelines.join("seeds/sales/seed_stores/sql-scripts/ddl.seed_sales_stores.sql");
    let text = std::fs::read_to_string(&ddl).unwrap();
    std::fs::write(
        &ddl,
        text.replace(
            &format!("'topic' = '{prefix}_seed_sales_stores'"),
            &format!("'topic' = '{topic}'"),
        ),
    )
    .unwrap();
    script(&["topics", pipelines.to_str().unwrap()]);
    let p = pipelines.to_str().unwrap();
    // Every run has `$PIPELINES` set to the project as well.
    let run = |args: &[&str]| -> Outcome {
        let o = e
            .command(args)
            .env("PIPELINES", pipelines)
            .output()
            .unwrap();
        Outcome::of(&args.join(" "), o, None)
    };
    let json = |args: &[&str]| -> Value {
        let mut all = vec!["--output", "json"];
        all.extend_from_slice(args);
        let o = run(&all);
        let o = o.success();
        serde_json::from_str(&o.stdout_raw()).unwrap()
    };
    let d = json(&["pipeline", "deploy", p, "--table-name", "seed_sales_stores"]);
    assert_eq!(d["success"], true, "{d:#}");

    // The seed's rows, read from its DML: (store_id, name, region, warehouse_id).
    let dml = std::fs::read_to_string(
        pipelines.join("seeds/sales/seed_stores/sql-scripts/dml.seed_sales_stores.sql"),
    )
    .unwrap();
    let expected: Vec<(i64, String, String, i64)> = dml
        .lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix('(')?;
            let (id, rest) = l.split_once(',')?;
            let rest = rest.trim().strip_prefix('\'')?;
            let (name, rest) = rest.split_once("',")?;
            let rest = rest.trim().strip_prefix('\'')?;
            let (region, rest) = rest.split_once("',")?;
            let (wh, _) = rest.split_once(',')?;
            Some((
                id.trim().parse().ok()?,
                name.to_string(),
                region.to_string(),
                wh.trim().parse().ok()?,
            ))
        })
        .collect();
    assert_eq!(expected.len(), 12);

    // 1. Preview: exactly the seed's rows, complete (read to the topic's end).
    let v = json(&["table", "preview", "seed_sales_stores", p]);
    assert_eq!(v["complete"], true, "{v:#}");
    let mut got: Vec<(i64, String, String, i64)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["store_id"].as_i64().unwrap(),
                r["store_name"].as_str().unwrap().to_string(),
                r["region"].as_str().unwrap().to_string(),
                r["warehouse_id"].as_i64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, expected);
    assert_eq!(v["rows"][0]["opened_on"].as_str().map(str::len), Some(10));
    eprintln!(
        "preview of seed_sales_stores: first row after {:.1} s, complete in {:.1} s",
        v["first_row_seconds"].as_f64().unwrap_or(-1.0),
        v["seconds"].as_f64().unwrap_or(-1.0)
    );

    // 2. An aggregate with updates: one row per region, counts equal to the DML's.
    let bounded = "/*+ OPTIONS('scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset') */";
    let agg = format!(
        "SELECT region, COUNT(*) AS stores, SUM(warehouse_id) AS wh FROM seed_sales_stores {bounded} GROUP BY region"
    );
    let v = json(&["sql", "query", &agg, "--pipelines", p]);
    assert_eq!(v["complete"], true, "{v:#}");
    let mut counts: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (_, _, region, wh) in &expected {
        let e = counts.entry(region.clone()).or_default();
        e.0 += 1;
        e.1 += wh;
    }
    let got: BTreeMap<String, (i64, i64)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap().to_string(),
                (r["stores"].as_i64().unwrap(), r["wh"].as_i64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, counts, "one row per region");
    assert!(
        v["change_count"].as_u64().unwrap() > got.len() as u64,
        "{v:#}"
    );

    // 3. The raw changelog: every update is a -U/+U pair of the same region.
    let v = json(&["sql", "query", &agg, "--pipelines", p, "--changelog"]);
    let changes = v["changes"].as_array().unwrap();
    let kinds: Vec<&str> = changes
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"-U") && kinds.contains(&"+U"), "{kinds:?}");
    for (i, k) in kinds.iter().enumerate() {
        if *k == "-U" {
            assert_eq!(kinds[i + 1], "+U", "{kinds:?}");
            assert_eq!(changes[i]["row"]["region"], changes[i + 1]["row"]["region"]);
        }
    }

    // 4. An unbounded source cut at exactly --max-rows.
    let v = json(&[
        "sql",
        "query",
        "SELECT order_id, store_id FROM src_sales_orders",
        "--pipelines",
        p,
        "--max-rows",
        "7",
    ]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 7);
    assert_eq!(v["stopped_by"], "max_rows");
    assert_eq!(v["complete"], false);

    // 5. Nothing left running: no job of this run's queries is live, and status finds no orphan.
    std::thread::sleep(Duration::from_secs(2));
    let j = jobs();
    let live: Vec<&String> = j
        .iter()
        .filter(|(n, s)| n.starts_with(&format!("{prefix}-query-")) && s[0] == "RUNNING")
        .map(|(n, _)| n)
        .collect();
    assert!(live.is_empty(), "{live:?}");
    let s = json(&["pipeline", "status", p, "--table-name", "seed_sales_stores"]);
    assert_eq!(s["orphans"], serde_json::json!([]), "{s:#}");
    let out = run(&["pipeline", "undeploy", p, "--dir", "pipelines", "--no-ack"]);
    out.success();
}

/// `make demo` and the end-to-end tests share one stack (#41.5): a run's copy of `fixtures/` gets
/// topics no other project uses — none of the fixtures' own topics (the demo's), every topic of the
/// tree renamed, the project still valid — and a run cancels only `<prefix>-…` jobs, never `demo-…`
/// nor those of a run whose prefix starts with its own. Runs without the stack.
#[test]
fn an_end_to_end_run_owns_its_topics_and_cancels_only_its_own_jobs() {
    let topics = |dir: &std::path::Path| -> std::collections::BTreeSet<String> {
        let re = regex::Regex::new(r"'topic'\s*=\s*'([^']+)'").unwrap();
        crate::support::sql_files(dir)
            .iter()
            .flat_map(|f| {
                let text = std::fs::read_to_string(f).unwrap();
                re.captures_iter(&text)
                    .map(|c| c[1].to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let demo = topics(&root().join("fixtures/pipelines"));
    assert!(demo.contains("int_sales_web_orders"), "{demo:?}");
    let a = run_prefix("e2e");
    let b = run_prefix("e2e");
    assert_ne!(a, b);
    for prefix in [&a, &b] {
        let (_tmp, pipelines) = our_fixture();
        let topic = own_topics(&pipelines, prefix);
        let mine = topics(&pipelines);
        assert_eq!(mine.len(), demo.len());
        assert!(mine.is_disjoint(&demo), "{mine:?}");
        for t in &demo {
            assert!(mine.contains(&topic(t)), "{t}");
        }
        crate::support::command()
            .args(["pipeline", "validate"])
            .arg(&pipelines)
            .output()
            .map(|o| assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr)))
            .unwrap();
    }
    let p = "e2e123";
    assert!(is_ours("e2e123-sales-dml-x", p));
    for other in [
        "demo-sales-dml-int-sales-web-orders",
        "e2e1234-sales-dml-x",
        "e2e123",
        "xe2e123-sales-dml-x",
    ] {
        assert!(!is_ours(other, p), "{other}");
    }
}
