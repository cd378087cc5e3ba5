//! The unit-test harness on a real Apache Flink (SQL Gateway + Kafka, `scripts/local-flink.sh up`): every
//! fixtures suite passes (a regular join, a temporal join, a window aggregation, a dedup, a statement
//! set, an aggregate with updates), a deliberately wrong expectation fails with a clear difference, and
//! nothing a run created is left behind; the integration test of a three-table subgraph (a source, a
//! CTAS, an aggregate) passes and a wrong expectation fails. Skips without the stack, like `e2e_gateway`.

use crate::support::e2e::E2e;
use crate::support::our_fixture;
use crate::support::stack::{JOBMANAGER, gateway_config, stack_available};
use serde_json::Value;
use std::process::Command;

/// Jobs of this run still live on the cluster.
fn live_jobs(prefix: &str) -> Vec<String> {
    let out = Command::new("curl")
        .args(["-fsS", &format!("{JOBMANAGER}/jobs/overview")])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|j| {
            j["name"].as_str().is_some_and(|n| n.starts_with(prefix))
                && matches!(
                    j["state"].as_str(),
                    Some("RUNNING" | "CREATED" | "RESTARTING")
                )
        })
        .map(|j| j["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn fixtures_suites_pass_and_a_wrong_expectation_fails_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let prefix = format!("e2eut{}", std::process::id() % 100_000);
    let e = E2e::copy(&prefix, our_fixture());
    let run = |args: &[&str]| e.run(args);
    let p = e.p();

    // 1. Every suite of the fixtures, with one summary.
    let junit = e.root.join("junit.xml");
    let o = run(&[
        "--output",
        "json",
        "project",
        "run-unit-tests",
        p,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let text = v.to_string();
    for table in [
        "sales_fct_order_payments",
        "int_sales_orders_enriched",
        "sales_fct_store_revenue_1m",
        "int_c360_customers_latest",
        "int_sales_web_orders",
        "int_sales_store_orders",
        "int_inventory_stock_levels",
    ] {
        assert!(text.contains(table), "{table} not in the report: {v:#}");
    }
    assert!(
        !text.contains("\"FAIL\"") && !text.contains("\"ERROR\""),
        "{v:#}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuite") && !xml.contains("<failure"),
        "{xml}"
    );

    // 2. A wrong expectation fails with the key, the expected row and the actual one.
    let expected = e.pipelines.join(
        "intermediates/inventory/int_stock_levels/tests/expected_int_inventory_stock_levels_1.csv",
    );
    let csv = std::fs::read_to_string(&expected).unwrap();
    std::fs::write(&expected, csv.replace("10,1,42,3,", "10,1,41,3,")).unwrap();
    let o = run(&["table", "run-unit-tests", "int_inventory_stock_levels", p]);
    let o = o.code(1);
    let out = o.stdout_raw();
    assert!(out.contains("FAIL"), "{out}");
    assert!(
        out.contains("41") && out.contains("42"),
        "the difference shows both values: {out}"
    );
    assert!(out.contains("0 passed, 1 failed"), "{out}");

    // 3. Nothing a run created is left: no live job of this run, delete-unit-tests finds nothing.
    assert_eq!(live_jobs(&prefix), Vec::<String>::new());
    let o = run(&[
        "table",
        "delete-unit-tests",
        "int_inventory_stock_levels",
        p,
    ]);
    o.success();
}

#[test]
fn a_three_table_subgraph_passes_and_a_wrong_expectation_fails_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let prefix = format!("e2eit{}", std::process::id() % 100_000);
    let e = E2e::copy(&prefix, our_fixture());
    let run = |args: &[&str]| e.run(args);
    let p = e.p();
    let sink = "int_inventory_stock_levels";
    // src_inventory_stock_movements → int_inventory_movements_typed (a CTAS) → the sink.
    let o = run(&["project", "init-integration-tests", "--table-name", sink, p]);
    o.success();

    // 1. Not filled in yet: FAIL, with the sink's rows as CSV lines to paste.
    let o = run(&["project", "run-integration-tests", "--table-name", sink, p]);
    let o = o.code(1);
    let out = o.stdout_raw();
    assert!(out.contains("not filled in yet"), "{out}");
    for row in [
        "1,1,-10,1,2025-01-01 10:01:00",
        "2,2,-9,1,2025-01-01 10:02:00",
        "3,3,-8,1,2025-01-01 10:03:00",
    ] {
        assert!(out.contains(row), "{row} not in {out}");
    }

    // 2. Filled in: PASS (the sale of row 2 made negative by the CTAS, one movement per key).
    let expected = e.pipelines.join(
        "intermediates/inventory/int_stock_levels/tests/integration/expected_int_inventory_stock_levels_1.csv",
    );
    let good = "sku_id,warehouse_id,on_hand,movements,last_movement_at\n1,1,-10,1,2025-01-01 10:01:00\n2,2,-9,1,2025-01-01 10:02:00\n3,3,-8,1,2025-01-01 10:03:00\n";
    std::fs::write(&expected, good).unwrap();
    let junit = e.root.join("it-junit.xml");
    let o = run(&[
        "--output",
        "json",
        "project",
        "run-integration-tests",
        "--table-name",
        sink,
        p,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(v["passed"], true, "{v:#}");
    assert_eq!(v["suites"][0]["cases"][0]["result"], "PASS", "{v:#}");
    assert!(
        !std::fs::read_to_string(&junit)
            .unwrap()
            .contains("<failure")
    );

    // 3. A wrong expectation: FAIL with both values, exit 1.
    std::fs::write(&expected, good.replace("2,2,-9,1,", "2,2,9,1,")).unwrap();
    let o = run(&["project", "run-integration-tests", "--table-name", sink, p]);
    let o = o.code(1);
    let out = o.stdout_raw();
    assert!(out.contains("FAIL") && out.contains("-9"), "{out}");
    assert!(out.contains("0 passed, 1 failed"), "{out}");

    // 4. A wider subgraph through a statement set (int_sales_web_orders writes
    // int_sales_store_orders), an interval join and two seeds: seven tables, four sources.
    let o = run(&[
        "project",
        "init-integration-tests",
        "--table-name",
        "sales_mv_top_stores",
        p,
    ]);
    o.success();
    std::fs::write(
        e.pipelines
            .join("views/sales/mv_top_stores/tests/integration/expected_sales_mv_top_stores_1.csv"),
        "region,store_rank,store_id,store_name,revenue\nregion_2,1,2,store_name_2,20.5\n",
    )
    .unwrap();
    let o = run(&[
        "project",
        "run-integration-tests",
        "--table-name",
        "sales_mv_top_stores",
        p,
    ]);
    let o = o.success();
    assert!(
        o.stdout_raw().contains("1 passed, 0 failed"),
        "{}",
        o.stdout_raw()
    );

    // 5. Nothing left running; delete-integration-tests finds no statement.
    assert_eq!(live_jobs(&prefix), Vec::<String>::new());
    let o = run(&[
        "--output",
        "json",
        "project",
        "delete-integration-tests",
        "--table-name",
        sink,
        p,
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(v["statements"], serde_json::json!([]), "{v:#}");
}

/// Issue #44 item 3: "no rows expected" is an assertion like any other — a statement set whose
/// inputs no filter lets through gives two empty outputs, and both header-only expected CSVs pass,
/// with the same report on every run (an empty result may come without its schema).
#[test]
fn no_rows_expected_passes_the_same_on_every_run_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let prefix = format!("e2enr{}", std::process::id() % 100_000);
    // Its own unit-test suffix, so its tables and topics (`<table>_nr`) are not the fixtures
    // suites' (`<table>_ut`), which run beside it on the same Kafka with other input rows.
    let e = E2e::copy(&prefix, our_fixture()).config(&format!(
        "app:\n  post_fix_unit_test: _nr\n{}",
        gateway_config(&prefix)
    ));
    let tests = e.pipelines.join("intermediates/sales/int_web_orders/tests");
    let inputs = tests.join("insert_int_sales_paid_orders_1.csv");
    let csv = std::fs::read_to_string(&inputs).unwrap();
    std::fs::write(
        &inputs,
        csv.replace(",web,", ",phone,")
            .replace(",store,", ",phone,"),
    )
    .unwrap();
    for sink in ["int_sales_web_orders", "int_sales_store_orders"] {
        let f = tests.join(format!("expected_{sink}_1.csv"));
        let text = std::fs::read_to_string(&f).unwrap();
        let header = text.lines().find(|l| !l.starts_with('#')).unwrap();
        std::fs::write(&f, format!("{header}\n")).unwrap();
    }
    let p = e.p();
    let mut reports = Vec::new();
    for _ in 0..3 {
        let o = e.run(&[
            "--output",
            "json",
            "table",
            "run-unit-tests",
            "int_sales_web_orders",
            p,
        ]);
        let out = o.stdout_raw();
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let outputs: Vec<(String, String, u64, u64)> = v["suites"][0]["cases"][0]["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["table"].as_str().unwrap().to_string(),
                    o["result"].as_str().unwrap().to_string(),
                    o["expected_rows"].as_u64().unwrap(),
                    o["actual_rows"].as_u64().unwrap(),
                )
            })
            .collect();
        o.success();
        reports.push(outputs);
    }
    assert_eq!(
        reports[0],
        [
            ("int_sales_web_orders".to_string(), "PASS".to_string(), 0, 0),
            (
                "int_sales_store_orders".to_string(),
                "PASS".to_string(),
                0,
                0
            ),
        ]
    );
    assert!(reports.iter().all(|r| *r == reports[0]), "{reports:?}");
    assert_eq!(live_jobs(&prefix), Vec::<String>::new());
}
