//! Upgrades that keep state (issue #23) end to end on the local Flink 2.2 + SQL Gateway + Kafka stack
//! (`scripts/local-flink.sh up`), on a three-table project whose source topic the test fills itself:
//! `src_up_orders` (Kafka) → `int_up_totals` (upsert-kafka, `SUM`/`COUNT … GROUP BY k`) and
//! `int_up_clean` (Kafka, a projection).
//!
//! 1. Six orders, deployed: the totals count them.
//! 2. A `state-compatible` change of the aggregate (aliases only): `deploy --dry-run` says `upgrade
//!    (savepoint)`, the deploy stops the job with a savepoint and starts the new SQL from it (its
//!    job restored from that savepoint); six more orders, and every total and count is exact — no
//!    reset (the first six still count), no double count (nothing read again).
//! 3. A `stateless` change of the projection: `restart (offsets)`; six more orders, and the sink
//!    holds every order exactly once, the new projection from the restart on.
//! 4. A `state-incompatible` change (`MAX` added to the aggregate): refused without
//!    `--allow-state-loss`, the running job untouched (same job, RUNNING).
//!
//! Skips without the stack (`FLINKPIPE_E2E=required` turns that into a failure). Run it alone under
//! the stack's lock: `flock /tmp/flinkpipe-stack.lock env FLINKPIPE_E2E=required cargo test --test
//! testsuite e2e_upgrade`.

use crate::support::e2e::E2e;
use crate::support::repo::T_CHANGE;
use flinkpipe::target::kafka::KafkaAdmin;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::stack::{JOBMANAGER, KAFKA, http_get, job_of, kafka_ddl, stack_available};
const TOPICS: [&str; 3] = ["src_up_orders", "int_up_totals", "int_up_clean"];
const TOTALS_DML: &str = "intermediates/up/int_totals/sql-scripts/dml.int_up_totals.sql";
const CLEAN_DML: &str = "intermediates/up/int_clean/sql-scripts/dml.int_up_clean.sql";

/// The newest job of statement `name`: (jid, state).
fn newest(name: &str) -> (String, String) {
    job_of(name).unwrap_or_else(|| panic!("no job {name}"))
}

const ORDER_COLUMNS: &str = "  id BIGINT,\n  k STRING,\n  x BIGINT";
const TOTALS_DDL: &str = "CREATE TABLE IF NOT EXISTS int_up_totals (\n  k STRING,\n  total BIGINT,\n  n BIGINT,\n  m BIGINT,\n  PRIMARY KEY (k) NOT ENFORCED\n) WITH (\n  'connector' = 'upsert-kafka',\n  'topic' = 'int_up_totals',\n  'properties.bootstrap.servers' = '127.0.0.1:9092',\n  'key.format' = 'json',\n  'value.format' = 'json'\n);\n";

/// Order `i`: key `a`, `b` or `c` by `i % 3`, amount `i`.
fn order(i: i64) -> Vec<u8> {
    format!(
        "{{\"id\":{i},\"k\":\"{}\",\"x\":{i}}}",
        ["a", "b", "c"][(i % 3) as usize]
    )
    .into_bytes()
}

/// Per key, (sum, count) of orders `1..=last`.
fn expected_totals(last: i64) -> BTreeMap<String, (i64, i64)> {
    let mut out: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for i in 1..=last {
        let e = out
            .entry(["a", "b", "c"][(i % 3) as usize].to_string())
            .or_default();
        e.0 += i;
        e.1 += 1;
    }
    out
}

#[test]
fn state_compatible_changes_upgrade_in_place_and_stateless_ones_restart_from_offsets_on_a_real_flink()
 {
    if !stack_available() {
        return;
    }
    let pid = std::process::id();
    let prefix = format!("e2eup{pid:x}");
    let e = E2e::git(
        &prefix,
        &[
            (
                "sources/up/src_orders/sql-scripts/ddl.src_up_orders.sql",
                &kafka_ddl("src_up_orders", ORDER_COLUMNS),
            ),
            (
                "intermediates/up/int_totals/sql-scripts/ddl.int_up_totals.sql",
                TOTALS_DDL,
            ),
            (
                TOTALS_DML,
                "INSERT INTO int_up_totals\nSELECT k, SUM(x), COUNT(*), CAST(0 AS BIGINT)\nFROM src_up_orders\nGROUP BY k;\n",
            ),
            (
                "intermediates/up/int_clean/sql-scripts/ddl.int_up_clean.sql",
                &kafka_ddl("int_up_clean", ORDER_COLUMNS),
            ),
            (
                CLEAN_DML,
                "INSERT INTO int_up_clean\nSELECT id, k, x FROM src_up_orders WHERE x >= 0;\n",
            ),
        ],
    )
    .topics(&TOPICS);
    let repo = e.repo();
    let pipelines = e.p();
    let run = |args: &[&str]| e.run(args);
    let json = |args: &[&str]| -> Value { e.json(args).0 };
    let dml = |table: &str| e.dml("up", table);
    let (totals, clean) = (dml("int_up_totals"), dml("int_up_clean"));
    let deploy = |table: &str, dry: bool| -> Value {
        let mut args = vec!["pipeline", "deploy", pipelines, "--table-name", table];
        if dry {
            args.push("--dry-run");
        }
        json(&args)
    };
    // The dry run's action for the table's DML statement.
    let planned = |table: &str| -> String {
        let v = deploy(table, true);
        v["statements"]
            .as_array()
            .unwrap_or_else(|| panic!("{v:#}"))
            .iter()
            .find(|s| s["statement"] == dml(table).as_str())
            .unwrap_or_else(|| panic!("{table} not in the dry run: {v:#}"))["action"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let node = |report: &Value, table: &str| -> Value {
        report["nodes"]
            .as_array()
            .unwrap_or_else(|| panic!("{report:#}"))
            .iter()
            .find(|n| n["table_name"] == table)
            .cloned()
            .unwrap_or_else(|| panic!("{table} not in the report: {report:#}"))
    };
    let dml_action = |report: &Value, table: &str| -> String {
        node(report, table)["statements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == dml(table).as_str())
            .map(|s| s["action"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{table}: {report:#}"))
    };
    let rows = |table: &str| -> Vec<Value> {
        let v = json(&["table", "preview", table, pipelines]);
        v["rows"]
            .as_array()
            .unwrap_or_else(|| panic!("{v:#}"))
            .clone()
    };
    let totals_now = || -> BTreeMap<String, (i64, i64)> {
        rows("int_up_totals")
            .iter()
            .map(|r| {
                (
                    r["k"].as_str().unwrap().to_string(),
                    (r["total"].as_i64().unwrap(), r["n"].as_i64().unwrap()),
                )
            })
            .collect()
    };
    let wait = |what: &str, ok: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !ok() {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "{what}: not after 120 s"
            );
            std::thread::sleep(Duration::from_secs(3));
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = KafkaAdmin::new(KAFKA);
    let produce = |from: i64, to: i64| {
        let orders: Vec<Vec<u8>> = (from..=to).map(order).collect();
        let refs: Vec<&[u8]> = orders.iter().map(Vec::as_slice).collect();
        let start = Instant::now();
        while let Err(e) = rt.block_on(admin.produce("src_up_orders", 0, &refs)) {
            assert!(start.elapsed() < Duration::from_secs(20), "{e}");
            std::thread::sleep(Duration::from_millis(500));
        }
    };

    // ---- 1. six orders, deployed: the totals count them ---------------------------------------
    produce(1, 6);
    let first = json(&["pipeline", "deploy", pipelines, "--dir", "pipelines"]);
    assert_eq!(first["success"], true, "{first:#}");
    wait("the first six orders counted", &|| {
        totals_now() == expected_totals(6)
    });
    wait("the first six orders cleaned", &|| {
        rows("int_up_clean").len() == 6
    });

    // ---- 2. aliases only: upgraded in place from a savepoint; counts continue -----------------
    repo.edit(TOTALS_DML, |s| {
        s.replace(
            "SELECT k, SUM(x), COUNT(*), CAST(0 AS BIGINT)",
            "SELECT k, SUM(x) AS total, COUNT(*) AS n, CAST(0 AS BIGINT) AS m",
        )
    });
    repo.commit("name the totals' columns", T_CHANGE);
    let check = json(&["pipeline", "upgrade-check", pipelines, "--since", "HEAD~1"]);
    assert_eq!(
        check["statements"][0]["verdict"], "state-compatible",
        "{check:#}"
    );
    let action = planned("int_up_totals");
    assert!(action.starts_with("upgrade (savepoint)"), "{action}");
    // The execution plan (read from the live target) says so too, in JSON and in text.
    let args = [
        "pipeline",
        "build-execution-plan",
        pipelines,
        "--table-name",
        "int_up_totals",
    ];
    let plan = json(&args);
    let planned_node = node(&plan, "int_up_totals");
    assert_eq!(planned_node["action"], "restart", "{plan:#}");
    assert_eq!(planned_node["in_place"], "upgrade (savepoint)", "{plan:#}");
    let text = run(&args).stdout_raw();
    assert!(
        text.lines()
            .any(|l| l.contains("upgrade (savepoint)") && l.contains("int_up_totals")),
        "{text}"
    );
    let (old_job, _) = newest(&totals);
    let report = deploy("int_up_totals", false);
    assert_eq!(report["success"], true, "{report:#}");
    assert_eq!(
        dml_action(&report, "int_up_totals"),
        "upgraded",
        "{report:#}"
    );
    let (new_job, state) = newest(&totals);
    assert_ne!(new_job, old_job);
    assert_eq!(state, "RUNNING");
    let old_cps = http_get(&format!("{JOBMANAGER}/jobs/{old_job}/checkpoints")).unwrap();
    let savepoint = old_cps["latest"]["savepoint"]["external_path"]
        .as_str()
        .unwrap_or_else(|| panic!("{old_cps:#}"))
        .to_string();
    let new_cps = http_get(&format!("{JOBMANAGER}/jobs/{new_job}/checkpoints")).unwrap();
    assert_eq!(
        new_cps["latest"]["restored"]["external_path"].as_str(),
        Some(savepoint.as_str()),
        "{new_cps:#}"
    );
    assert_eq!(new_cps["latest"]["restored"]["is_savepoint"], true);
    produce(7, 12);
    // Exact: a reset state would count only 7..12, offsets read again would count 1..6 twice.
    wait("the totals of twelve orders", &|| {
        totals_now() == expected_totals(12)
    });
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(totals_now(), expected_totals(12), "nothing counted twice");

    // ---- 3. a projection change: restarted from the old job's offsets -------------------------
    wait("twelve orders cleaned", &|| {
        rows("int_up_clean").len() == 12
    });
    repo.edit(CLEAN_DML, |s| {
        s.replace("SELECT id, k, x", "SELECT id, k, x * 10")
    });
    repo.commit("scale the cleaned amounts", T_CHANGE + 60);
    let action = planned("int_up_clean");
    assert!(action.starts_with("restart (offsets)"), "{action}");
    let plan = json(&[
        "pipeline",
        "build-execution-plan",
        pipelines,
        "--table-name",
        "int_up_clean",
    ]);
    assert_eq!(
        node(&plan, "int_up_clean")["in_place"],
        "restart (offsets)",
        "{plan:#}"
    );
    let report = deploy("int_up_clean", false);
    assert_eq!(report["success"], true, "{report:#}");
    assert_eq!(
        dml_action(&report, "int_up_clean"),
        "restarted from offsets",
        "{report:#}"
    );
    produce(13, 18);
    wait("eighteen orders cleaned", &|| {
        rows("int_up_clean").len() >= 18
    });
    std::thread::sleep(Duration::from_secs(5));
    let mut got: Vec<(i64, i64)> = rows("int_up_clean")
        .iter()
        .map(|r| (r["id"].as_i64().unwrap(), r["x"].as_i64().unwrap()))
        .collect();
    got.sort();
    let want: Vec<(i64, i64)> = (1..=18)
        .map(|i| (i, if i <= 12 { i } else { i * 10 }))
        .collect();
    assert_eq!(
        got, want,
        "every order exactly once, the new projection after the restart"
    );
    wait("the totals of eighteen orders", &|| {
        totals_now() == expected_totals(18)
    });

    // ---- 4. an aggregate call added: refused, the running job untouched -----------------------
    let (running_job, _) = newest(&totals);
    repo.edit(TOTALS_DML, |s| {
        s.replace("CAST(0 AS BIGINT) AS m", "MAX(x) AS m")
    });
    repo.commit("the largest order per key", T_CHANGE + 120);
    let action = planned("int_up_totals");
    assert!(
        action.starts_with("refuse") && action.contains("state-incompatible"),
        "{action}"
    );
    let report = deploy("int_up_totals", false);
    assert_eq!(report["success"], false, "{report:#}");
    let why = node(&report, "int_up_totals")["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        why.contains("state-incompatible") && why.contains("--allow-state-loss int_up_totals"),
        "{why}"
    );
    assert_eq!(newest(&totals), (running_job, "RUNNING".to_string()));
    assert_eq!(totals_now(), expected_totals(18));
    let (_, clean_state) = newest(&clean);
    assert_eq!(clean_state, "RUNNING");
}
