//! Day-2 operations on a real Apache Flink 2.2 + SQL Gateway (`scripts/local-flink.sh up`), on a
//! two-table project that needs no Kafka (a `datagen` source, a `blackhole` sink): `deploy --dry-run`
//! plans the DML with `EXPLAIN`, `status --lag` reads the job's records and backpressure from the
//! JobManager, `pipeline explain` prints Flink's plan, a restart with SQL the planner rejects leaves
//! the running job alone, and `undeploy` removes everything.
//!
//! Skips without the stack, like `e2e_gateway` (`FLINKPIPE_E2E=required` turns that into a failure).

use crate::support::Test;
use crate::support::e2e::E2e;
use crate::support::stack::{job_of, script, stack_available};
use crate::support::test::Outcome;
use serde_json::Value;
use std::time::{Duration, Instant};

const SRC_DDL: &str = "CREATE TABLE IF NOT EXISTS src_p_numbers (\n  id BIGINT,\n  v INT\n) WITH (\n  'connector' = 'datagen',\n  'rows-per-second' = '20'\n);\n";
const INT_DDL: &str = "CREATE TABLE IF NOT EXISTS int_p_numbers (\n  id BIGINT,\n  v INT\n) WITH (\n  'connector' = 'blackhole'\n);\n";
const INT_DML: &str = "INSERT INTO int_p_numbers\nSELECT id, v FROM src_p_numbers;\n";
const INT_DML_FILE: &str = "intermediates/p/int_numbers/sql-scripts/dml.int_p_numbers.sql";

#[test]
fn dry_run_lag_explain_and_a_rejected_restart_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let env = E2e::new(
        &format!("e2eops{:x}", std::process::id()),
        &[
            (
                "sources/p/src_numbers/sql-scripts/ddl.src_p_numbers.sql",
                SRC_DDL,
            ),
            (
                "intermediates/p/int_numbers/sql-scripts/ddl.int_p_numbers.sql",
                INT_DDL,
            ),
            (INT_DML_FILE, INT_DML),
        ],
    )
    .pipelines_last()
    .undeploy_on_drop();
    let dml = env.dml("p", "int_p_numbers");

    // 1. The dry run plans the DML with EXPLAIN in the session; DDL cannot be checked there.
    let (v, out) = env.json(&["pipeline", "deploy", "--dir", "pipelines", "--dry-run"]);
    out.success();
    let rows = v["statements"].as_array().unwrap();
    let check = |name: &str| {
        rows.iter()
            .find(|s| s["statement"] == name)
            .unwrap_or_else(|| panic!("{name}: {v:#}"))["check"]
            .clone()
    };
    assert_eq!(check(&dml)["status"], "valid", "{v:#}");
    assert_eq!(
        check(&format!("{}-p-ddl-int-p-numbers", env.prefix))["status"],
        "not_checked"
    );
    assert!(job_of(&dml).is_none(), "a dry run starts nothing");

    // 2. Deploy, then the job's runtime metrics from the JobManager.
    let (v, out) = env.json(&["pipeline", "deploy", "--dir", "pipelines"]);
    assert_eq!(v["success"], true, "{v:#}\n{}", out.stderr_raw());
    let (jid, state) = job_of(&dml).unwrap();
    assert_eq!(state, "RUNNING");
    let start = Instant::now();
    let lag = loop {
        let (v, out) = env.json(&["pipeline", "status", "--lag"]);
        out.success();
        let lag = v["statements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["statement"] == dml.as_str())
            .unwrap()["lag"]
            .clone();
        if lag["records_in"].as_u64().unwrap_or(0) > 0
            && lag["records_out"].as_u64().unwrap_or(0) > 0
        {
            break lag;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "no records counted after 90 s: {v:#}"
        );
        std::thread::sleep(Duration::from_secs(3));
    };
    assert_eq!(lag["counted"]["kind"], "since_start", "{lag}");
    assert!(
        matches!(lag["backpressure"].as_str(), Some("ok" | "low" | "high")),
        "{lag}"
    );
    // A datagen source has no Kafka backlog, and no watermark is defined.
    assert_eq!(lag["pending_records"], Value::Null, "{lag}");
    assert_eq!(lag["watermark_ms"], Value::Null, "{lag}");

    // 3. Flink's plan of the DML.
    let (v, out) = env.json(&["pipeline", "explain", "--dir", "pipelines"]);
    out.success();
    let plan = v["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["statement"] == dml.as_str())
        .unwrap()["plan"]
        .as_str()
        .unwrap_or_else(|| panic!("{v:#}"))
        .to_string();
    assert!(
        plan.contains("Physical Plan ==") && plan.contains("int_p_numbers"),
        "{plan}"
    );

    // 4. A restart with SQL the planner rejects leaves the running job alone.
    std::fs::write(
        env.pipelines.join(INT_DML_FILE),
        "INSERT INTO int_p_numbers\nSELECT id, no_such_column FROM src_p_numbers;\n",
    )
    .unwrap();
    let (v, _) = env.json(&["pipeline", "deploy", "--table-name", "int_p_numbers"]);
    assert_eq!(v["success"], false, "{v:#}");
    let reason = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["table_name"] == "int_p_numbers")
        .unwrap()["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("does not validate, so the running statement was left alone")
            && reason.contains("no_such_column"),
        "{reason}"
    );
    assert_eq!(job_of(&dml), Some((jid, "RUNNING".to_string())));

    // 5. Undeploy: nothing of this run keeps running.
    let out = env.run(&["pipeline", "undeploy", "--dir", "pipelines", "--no-ack"]);
    out.success();
    assert_ne!(job_of(&dml).map(|j| j.1).as_deref(), Some("RUNNING"));
}

/// #22: what `table init` writes in a project that deploys to the SQL Gateway deploys to the real
/// Flink unchanged — a `kafka` source, an `upsert-kafka` intermediate reading it and a fact joining
/// two tables on their shared key — every job RUNNING. Skips without the stack.
#[test]
fn table_init_on_a_gateway_project_deploys_unchanged_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let product = format!("e2e{:x}", std::process::id());
    let prefix = format!("e2einit{:x}", std::process::id());
    let o = Test::outside(&[
        "project",
        "init",
        "shop",
        tmp.path().to_str().unwrap(),
        "--project-type",
        "data_product",
        "--product",
        &product,
    ]);
    o.success();
    let root = tmp.path().join("shop");
    let env = E2e::at(&prefix, tmp, &root)
        .pipelines_last()
        .undeploy_on_drop();
    let init = |args: &[&str]| {
        let o = crate::support::command()
            .arg("--config")
            .arg(&env.config)
            .args(["table", "init"])
            .args(args)
            .args(["--product", &product, "--pipelines"])
            .arg(&env.pipelines)
            .output()
            .unwrap();
        Outcome::of(&args.join(" "), o, None).success();
    };
    let src = format!("src_{product}_orders");
    let int = format!("int_{product}_orders");
    init(&["orders", "sources"]);
    init(&["orders", "intermediates", "--source", &src]);
    init(&["orders", "facts", "--source", &int, "--source", &src]);
    let fct = format!("{product}_fct_orders");
    let fct_dml = std::fs::read_to_string(env.pipelines.join(format!(
        "facts/{product}/fct_orders/sql-scripts/dml.{fct}.sql"
    )))
    .unwrap();
    assert!(fct_dml.contains("ON t2.id = t1.id"), "{fct_dml}");
    // The topics the DDLs name (the local broker also creates them on first use).
    script(&["topics", env.p()]);
    let (v, out) = env.json(&["pipeline", "deploy", "--dir", "pipelines"]);
    assert_eq!(v["success"], true, "{v:#}\n{}", out.stderr_raw());
    for table in [&int, &fct] {
        let name = format!("{}-{product}-dml-{}", env.prefix, table.replace('_', "-"));
        let start = Instant::now();
        loop {
            let state = job_of(&name).map(|(_, s)| s);
            if state.as_deref() == Some("RUNNING") {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "{name}: {state:?}"
            );
            std::thread::sleep(Duration::from_secs(2));
        }
    }
}
