//! Unit tests of one table's SQL (`table init-unit-tests`, `run-unit-tests`, `delete-unit-tests`):
//! the real binary on copies of our example project, against the Confluent fake (bounded statements
//! complete, outputs come from scripted changelogs), and every kind of bad input refused with file
//! and line before anything is sent.

use crate::fake_confluent::{FakeConfluent, QueryScript};
use crate::support::Test;
use crate::support::confluent::stock_levels;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The example project on `fake`, the Flink catalog and database named; every command takes the
/// pipelines folder last.
fn project(fake: &FakeConfluent) -> Test {
    Test::fixture()
        .confluent(fake)
        .flink_catalog()
        .pipelines_last()
}

const LEVELS: &str = "intermediates/inventory/int_stock_levels/tests";

/// The stock-level output as Confluent sends it: an upsert changelog (updates of key (10, 1)).
fn stock_levels_script() -> QueryScript {
    QueryScript {
        not_ready_reads: 1,
        ..stock_levels(vec![
            vec![
                (
                    None,
                    json!(["10", "1", "50", "1", "2025-01-01 10:00:00.000"]),
                ),
                (
                    Some(1),
                    json!(["10", "1", "50", "1", "2025-01-01 10:00:00.000"]),
                ),
                (
                    Some(2),
                    json!(["10", "1", "45", "2", "2025-01-01 10:01:00.000"]),
                ),
            ],
            vec![
                (
                    Some(2),
                    json!(["10", "1", "42", "3", "2025-01-01 10:02:00.000"]),
                ),
                (
                    Some(0),
                    json!(["11", "1", "20", "1", "2025-01-01 10:00:00.000"]),
                ),
                (
                    Some(0),
                    json!(["10", "2", "7", "1", "2025-01-01 10:03:00.000"]),
                ),
            ],
        ])
    }
}

#[test]
fn suite_passes_on_confluent_and_leaves_nothing_behind() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    fake.add_query("int_inventory_stock_levels_ut`", stock_levels_script());
    let junit = t.root.join("junit.xml");
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "run-unit-tests",
        "int_inventory_stock_levels",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let out = o.stdout();
    o.success();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let case = &v["suites"][0]["cases"][0];
    assert_eq!(case["name"], "on_hand_after_receipts_and_sales");
    assert_eq!(case["result"], "PASS");
    assert_eq!(case["outputs"][0]["expected_rows"], 3);
    assert_eq!(case["outputs"][0]["actual_rows"], 3);
    // Statements named after shift_left's convention with the suffix; the SQL under test reads and
    // writes test tables only, with bounded reads.
    let created = fake.created();
    for name in [
        "dev-usw2-drop-int-inventory-movements-typed-ut",
        "dev-usw2-ddl-int-inventory-movements-typed-ut",
        "dev-usw2-ddl-int-inventory-stock-levels-ut",
        "dev-usw2-ins-1-int-inventory-stock-levels-ut",
        "dev-usw2-dml-int-inventory-stock-levels-ut",
        "dev-usw2-out-1-int-inventory-stock-levels-ut",
    ] {
        assert!(
            created.iter().any(|c| c == name),
            "{name} not in {created:?}"
        );
    }
    assert!(created.iter().all(|c| c.ends_with("-ut")), "{created:?}");
    let posts = fake.requests();
    let dml = posts
        .iter()
        .find(|r| {
            r.method == "POST"
                && r.body
                    .contains("dev-usw2-dml-int-inventory-stock-levels-ut")
        })
        .expect("the DML was posted");
    assert!(
        dml.body
            .contains("INSERT INTO int_inventory_stock_levels_ut"),
        "{}",
        dml.body
    );
    assert!(
        dml.body.contains("FROM int_inventory_movements_typed_ut"),
        "{}",
        dml.body
    );
    assert!(
        dml.body.contains("sql.tables.scan.bounded.mode"),
        "{}",
        dml.body
    );
    // Nothing is left: every statement the run created was deleted.
    let left: Vec<String> = fake
        .names()
        .into_iter()
        .filter(|n| n.ends_with("-ut"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            r#"<testsuite name="int_inventory_stock_levels" tests="1" failures="0" errors="0""#
        ),
        "{xml}"
    );
    assert!(xml.contains(r#"<testcase classname="int_inventory_stock_levels" name="int_inventory_stock_levels.on_hand_after_receipts_and_sales.int_inventory_stock_levels""#), "{xml}");
}

#[test]
fn a_wrong_expectation_fails_with_a_clear_diff() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let file = t
        .pipelines
        .join(LEVELS)
        .join("expected_int_inventory_stock_levels_1.csv");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("10,1,42,3", "10,1,41,3")).unwrap();
    fake.add_query("int_inventory_stock_levels_ut`", stock_levels_script());
    let junit = t.root.join("junit.xml");
    let o = t.cmd(&[
        "table",
        "run-unit-tests",
        "int_inventory_stock_levels",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let out = o.stdout();
    o.code(1);
    assert!(out.contains("FAIL"), "{out}");
    assert!(
        out.contains("key {sku_id=10, warehouse_id=1}: expected {sku_id=10, warehouse_id=1, on_hand=41, movements=3, last_movement_at='2025-01-01T10:02:00'} (line 3), got {sku_id=10, warehouse_id=1, on_hand=42, movements=3, last_movement_at='2025-01-01T10:02:00.000'}"),
        "{out}"
    );
    assert!(out.contains("0 passed, 1 failed, 0 error(s)"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            r#"<failure message="1 difference(s); expected 3 row(s), got 3" type="FAIL">"#
        ),
        "{xml}"
    );
    let left: Vec<String> = fake
        .names()
        .into_iter()
        .filter(|n| n.ends_with("-ut"))
        .collect();
    assert!(left.is_empty(), "left behind after a failure: {left:?}");
}

/// Rewrites `rel` under the pipelines folder with `f` of its text.
fn edit(t: &Test, rel: &str, f: impl Fn(&str) -> String) {
    let path = t.pipelines.join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, f(&text)).unwrap();
}

#[test]
fn bad_input_is_named_with_file_and_line_before_anything_is_sent() {
    let rev = "facts/sales/fct_store_revenue_1m/tests";
    type Setup = Box<dyn Fn(&Test)>;
    let cases: Vec<(&str, Setup, &str)> = vec![
        (
            "int_sales_paid_orders",
            Box::new(|_| {}),
            "pipelines/intermediates/sales/int_paid_orders/tests/test_definitions.yaml: no test definitions: run `flinkpipe table init-unit-tests TABLE` first",
        ),
        (
            "int_inventory_stock_levels",
            Box::new(|p| {
                edit(p, &format!("{LEVELS}/test_definitions.yaml"), |t| {
                    t.replace("  inputs:\n", "  inputs: [\n")
                })
            }),
            "pipelines/intermediates/inventory/int_stock_levels/tests/test_definitions.yaml:8: not a test definition",
        ),
        (
            "int_inventory_stock_levels",
            Box::new(|p| {
                edit(p, &format!("{LEVELS}/test_definitions.yaml"), |t| {
                    t.replacen(
                        "  - table_name: int_inventory_movements_typed\n    file_name",
                        "  - table_name: src_inventory_products\n    file_name",
                        1,
                    )
                })
            }),
            "pipelines/intermediates/inventory/int_stock_levels/tests/test_definitions.yaml:8: input for 'src_inventory_products', which int_inventory_stock_levels's SQL does not read",
        ),
        (
            "sales_fct_store_revenue_1m",
            Box::new(move |p| {
                edit(
                    p,
                    &format!("{rev}/insert_int_sales_order_lines_1.csv"),
                    |t| t.replacen(",qty,", ",qtty,", 1),
                )
            }),
            "pipelines/facts/sales/fct_store_revenue_1m/tests/insert_int_sales_order_lines_1.csv:1: column 'qtty' is not a column of int_sales_order_lines",
        ),
        (
            "sales_fct_store_revenue_1m",
            Box::new(move |p| {
                edit(
                    p,
                    &format!("{rev}/insert_int_sales_order_lines_1.csv"),
                    |t| t.replacen("10.00,20.00", "10.00,twenty", 1),
                )
            }),
            "pipelines/facts/sales/fct_store_revenue_1m/tests/insert_int_sales_order_lines_1.csv:2: column 'line_amount_eur' is DECIMAL(12, 2): 'twenty' is not a decimal number (12.50)",
        ),
        (
            "sales_fct_store_revenue_1m",
            Box::new(move |p| {
                edit(
                    p,
                    &format!("{rev}/validate_sales_fct_store_revenue_1m_1.sql"),
                    |_| "SELECT COUNT(*) AS n\nFROM sales_fct_store_revenue_1m_ut;\n".into(),
                )
            }),
            "pipelines/facts/sales/fct_store_revenue_1m/tests/validate_sales_fct_store_revenue_1m_1.sql:1: the validation query does not return PASS/FAIL",
        ),
        (
            "sales_fct_store_revenue_1m",
            Box::new(move |p| {
                edit(
                    p,
                    &format!("{rev}/validate_sales_fct_store_revenue_1m_1.sql"),
                    |_| {
                        "SELECT CASE WHEN COUNT(*) = 3 THEN 'PASS' ELSE 'FAIL' END\nFROM sales_dim_stores;\n".into()
                    },
                )
            }),
            "pipelines/facts/sales/fct_store_revenue_1m/tests/validate_sales_fct_store_revenue_1m_1.sql:2: reads 'sales_dim_stores', which is not a table of this test",
        ),
        (
            "int_inventory_stock_levels",
            Box::new(|p| {
                edit(
                    p,
                    "intermediates/inventory/int_x/sql-scripts/ddl.int_inventory_stock_levels_ut.sql",
                    |_| {
                        "CREATE TABLE int_inventory_stock_levels_ut (a INT) WITH ('connector' = 'datagen');\n".into()
                    },
                )
            }),
            "the test table int_inventory_stock_levels_ut would be the project's table of pipelines/intermediates/inventory/int_x : refused",
        ),
    ];
    for (table, setup, want) in cases {
        let fake = FakeConfluent::start();
        let t = project(&fake);
        setup(&t);
        let o = t.cmd(&["table", "run-unit-tests", table]);
        let err = o.stderr();
        o.code(1);
        assert!(err.contains(want), "want: {want}\ngot: {err}");
        assert_eq!(fake.request_count(), 0, "{want}: the target was contacted");
    }
}

#[test]
fn init_writes_a_runnable_suite_and_never_overwrites() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "init-unit-tests",
        "int_sales_paid_orders",
        "--create-csv",
    ]);
    let out = o.stdout();
    o.success();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["inputs"],
        json!(["src_sales_orders", "src_sales_payments"])
    );
    let dir = "pipelines/intermediates/sales/int_paid_orders/tests";
    let written: Vec<String> = v["written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    for f in [
        "ddl_src_sales_orders.sql",
        "ddl_src_sales_payments.sql",
        "insert_src_sales_orders_1.sql",
        "insert_src_sales_payments_2.csv",
        "expected_int_sales_paid_orders_1.csv",
        "validate_int_sales_paid_orders_2.sql",
        "test_definitions.yaml",
    ] {
        assert!(
            written.contains(&format!("{dir}/{f}")),
            "{f} not in {written:?}"
        );
    }
    let tests = t
        .pipelines
        .join("intermediates/sales/int_paid_orders/tests");
    let ddl = std::fs::read_to_string(tests.join("ddl_src_sales_orders.sql")).unwrap();
    assert!(
        ddl.starts_with("-- Orders placed")
            || ddl.contains("CREATE TABLE IF NOT EXISTS src_sales_orders_ut ("),
        "{ddl}"
    );
    let ins = std::fs::read_to_string(tests.join("insert_src_sales_payments_1.sql")).unwrap();
    assert!(
        ins.starts_with("INSERT INTO src_sales_payments_ut ("),
        "{ins}"
    );
    // Keys match across parents: order_id 1..3 in both inputs of the first test case.
    let orders = std::fs::read_to_string(tests.join("insert_src_sales_orders_1.sql")).unwrap();
    assert!(
        orders.contains("\n  (1, ") && ins.contains("(1, 1, "),
        "{orders}\n{ins}"
    );
    // Sample rows pass the query's filters where the project says how: status_code within the
    // datagen range of the production DDL (0..3), so `status` (a computed CASE on it) is CAPTURED
    // for rows 1..3.
    let pay = std::fs::read_to_string(tests.join("insert_src_sales_payments_1.sql")).unwrap();
    assert!(
        pay.contains("(1, 1, 10.50, 0, 0, ") && pay.contains("(3, 3, 30.50, 2, 2, "),
        "{pay}"
    );
    // The expected rows are not an expectation until the marker line is deleted.
    let exp = std::fs::read_to_string(tests.join("expected_int_sales_paid_orders_1.csv")).unwrap();
    assert!(
        exp.contains(flinkpipe::unittest::data::NOT_FILLED_IN),
        "{exp}"
    );
    // Again: every file kept.
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "init-unit-tests",
        "int_sales_paid_orders",
        "--create-csv",
    ]);
    let v: serde_json::Value = serde_json::from_str(&(o.stdout(), o.stderr()).0).unwrap();
    assert_eq!(v["written"], json!([]));
    assert_eq!(v["kept"].as_array().unwrap().len(), written.len());
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn delete_removes_what_a_killed_run_left() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    fake.seed(
        "dev-usw2-dml-int-inventory-stock-levels-ut",
        "INSERT INTO int_inventory_stock_levels_ut SELECT 1",
        "RUNNING",
    );
    fake.seed(
        "dev-usw2-val-2-int-inventory-stock-levels-ut",
        "SELECT 'PASS'",
        "RUNNING",
    );
    fake.seed(
        "dev-usw2-dml-int-inventory-stock-levels",
        "INSERT INTO int_inventory_stock_levels SELECT 1",
        "RUNNING",
    );
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "delete-unit-tests",
        "int_inventory_stock_levels",
    ]);
    let out = o.stdout();
    o.success();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["statements"],
        json!([
            "dev-usw2-dml-int-inventory-stock-levels-ut",
            "dev-usw2-val-2-int-inventory-stock-levels-ut"
        ])
    );
    assert_eq!(
        v["tables"],
        json!([
            "int_inventory_movements_typed_ut",
            "int_inventory_stock_levels_ut"
        ])
    );
    // The production statement is untouched.
    assert_eq!(
        fake.phase("dev-usw2-dml-int-inventory-stock-levels")
            .as_deref(),
        Some("RUNNING")
    );
    let drops: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.body)
        .collect();
    assert!(
        drops
            .iter()
            .any(|b| b.contains("DROP TABLE IF EXISTS `int_inventory_stock_levels_ut`")),
        "{drops:?}"
    );
    assert!(
        !drops
            .iter()
            .any(|b| b.contains("DROP TABLE IF EXISTS `int_inventory_stock_levels`"))
    );
}

/// shift_left's own test folders: what is refused before anything runs (and why), and what is
/// accepted as is (then run on the target), as the README reports.
#[test]
fn shift_left_test_folders_report() {
    let t = Test::shift_left_fixture();
    let cfg = t.root.join("config.yaml");
    // A gateway on a closed port: accepted suites fail only when the target is contacted.
    std::fs::write(
        &cfg,
        "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:1\n",
    )
    .unwrap();
    let want: &[(&str, &str)] = &[
        (
            "p1_fct_order",
            "dml.p1_fct_order.sql:8: p1_fct_order reads 'int_p1_table_2', which no foundation",
        ),
        (
            "sl_c360_dim_groups",
            "dml.c360_dim_groups.sql:11: sl_c360_dim_groups reads 'sl_c360_src_groups', which no foundation",
        ),
        (
            "e",
            "tests/insert_c_2.csv:1: column 'c_value' is not a column of c (its DDL has: default_key, c_ut_value, z_value, b_value)",
        ),
        (
            "int_p3_user_role",
            "tests/insert_src_p3_tenants_2.csv:1: column 'updated_at' of src_p3_tenants is NOT NULL and missing from the header",
        ),
        (
            "src_p1_table_2",
            "tests/test_definitions.yaml:10: not a test definition: test_suite[0].inputs[0]: unknown field `sql_file_name`",
        ),
        ("a", "connection failed"),
        ("sl_c360_dim_users", "connection failed"),
    ];
    for (table, msg) in want {
        let o = t.cmd(&[
            "--config",
            cfg.to_str().unwrap(),
            "table",
            "run-unit-tests",
            table,
            "[PIPELINES]",
            "--allow-unknown",
            "--timeout",
            "2",
        ]);
        let (out, err) = (o.stdout(), o.stderr());
        o.code(1);
        assert!(
            out.contains(msg) || err.contains(msg),
            "{table}: want {msg}\n{out}\n{err}"
        );
    }
    let _ = Path::new(".");
}

/// `project run-unit-tests`: the suites of several tables, two at once, one summary; a failing suite
/// makes the run exit 1 and the others still run to their end.
#[test]
fn project_run_unit_tests_runs_several_suites_with_one_summary() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    // The stock levels get their changelog; the web orders get none: the fake answers their output
    // queries without a schema and without rows — an empty output, whose columns are the test
    // table's declared ones: the expected row is missing (FAIL), on every run.
    fake.add_query("int_inventory_stock_levels_ut`", stock_levels_script());
    let o = t.cmd(&[
        "--output",
        "json",
        "project",
        "run-unit-tests",
        "--table-name",
        "int_inventory_stock_levels",
        "--table-name",
        "int_sales_web_orders",
        "--max-parallel",
        "2",
    ]);
    let out = o.stdout();
    o.code(1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let results: std::collections::BTreeMap<String, String> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["table"].as_str().unwrap().to_string(),
                s["cases"][0]["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        results,
        std::collections::BTreeMap::from([
            ("int_inventory_stock_levels".to_string(), "PASS".to_string()),
            ("int_sales_web_orders".to_string(), "FAIL".to_string()),
        ]),
        "{v:#}"
    );
    // Every statement of both suites is gone afterwards.
    for name in fake.created() {
        assert!(
            fake.phase(&name).is_none_or(|p| p == "DELETING"),
            "{name} left {:?}",
            fake.phase(&name)
        );
    }
}

/// Issue #29 item 5: `run-unit-tests` stopped by SIGTERM or SIGHUP while its check query runs — and
/// with its clean-up answered 429 more often than one request retries — ends by itself (not killed)
/// and leaves no statement of the run behind: the query and every test statement are deleted.
#[test]
fn run_unit_tests_stopped_by_sigterm_or_sighup_cleans_up_through_429s() {
    use crate::fake_confluent::Fault;
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let fake = FakeConfluent::start();
        let t = project(&fake);
        let mut script = stock_levels_script();
        script.bounded = false;
        script.pages.push(vec![]);
        fake.add_query("int_inventory_stock_levels_ut`", script);
        let child = t
            .command(&[
                "table",
                "run-unit-tests",
                "int_inventory_stock_levels",
                "--timeout",
                "60",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !fake
            .requests()
            .iter()
            .any(|r| r.method == "GET" && r.path.ends_with("/results"))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "{name}: never queried"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let before: Vec<String> = fake
            .names()
            .into_iter()
            .filter(|n| n.ends_with("-ut"))
            .collect();
        assert!(before.len() >= 4, "{name}: {before:?}");
        fake.add_fault(Fault::too_many(Some("DELETE"), 1, 7));
        // SAFETY: our own child, still running (its query reads until 60 s).
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let out = t.outcome(name, child.wait_with_output().unwrap());
        let (o, e) = (out.stdout(), out.stderr());
        let out = out.output;
        assert!(
            out.status.code().is_some(),
            "{name}: killed by the signal: {:?}\n{o}\n{e}",
            out.status
        );
        let left: Vec<String> = fake
            .names()
            .into_iter()
            .filter(|n| n.ends_with("-ut"))
            .collect();
        assert!(left.is_empty(), "{name}: left behind: {left:?}\n{o}\n{e}");
    }
}

/// Issue #29 item 6: a table name used in a test file name is validated as a name first — a
/// backquoted `q/../../PWNED` (or one with `..`, or a backslash) writes nothing anywhere, and the
/// error names the file it comes from; the tree is as it was.
#[test]
fn init_unit_tests_refuses_table_names_that_are_paths_and_writes_nothing() {
    for bad in ["q/../../PWNED", "a..b", "x\\\\y"] {
        let fake = FakeConfluent::start();
        let t = project(&fake);
        let dml = t
            .pipelines
            .join("intermediates/sales/int_paid_orders/sql-scripts/dml.int_sales_paid_orders.sql");
        let text = std::fs::read_to_string(&dml).unwrap();
        std::fs::write(
            &dml,
            text.replace("src_sales_payments p", &format!("`{bad}` p")),
        )
        .unwrap();
        let before = tree(&t.root);
        let o = t.cmd(&[
            "table",
            "init-unit-tests",
            "int_sales_paid_orders",
            "--allow-unknown",
        ]);
        let err = o.stderr();
        o.code(1);
        assert!(
            err.contains("pipelines/intermediates/sales/int_paid_orders/sql-scripts/dml.int_sales_paid_orders.sql")
                && err.contains(&format!("table name `{bad}` cannot name a test file"))
                && err.contains("nothing was written"),
            "{bad}: {err}"
        );
        assert_eq!(tree(&t.root), before, "{bad}: files were written");
    }
}

/// Every file under `root` (relative path → content).
fn tree(root: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    walk(root)
        .into_iter()
        .map(|f| {
            (
                f.strip_prefix(root).unwrap().to_path_buf(),
                std::fs::read(&f).unwrap(),
            )
        })
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != ".flinkpipe" {
                out.extend(walk(&path));
            }
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_dry_run_refuses_what_a_run_fails_and_an_unfilled_case_prints_csv_to_paste() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let file = t
        .pipelines
        .join(LEVELS)
        .join("expected_int_inventory_stock_levels_1.csv");
    let header = "sku_id,warehouse_id,on_hand,movements,last_movement_at";
    std::fs::write(
        &file,
        format!("{header}\n{}\n", flinkpipe::unittest::data::NOT_FILLED_IN),
    )
    .unwrap();
    // The dry run says "not ready", names the file, exits 1 and contacts nothing.
    let o = t.cmd(&[
        "table",
        "run-unit-tests",
        "int_inventory_stock_levels",
        "--dry-run",
    ]);
    let out = o.stdout();
    o.code(1);
    assert!(!out.contains(" ready ("), "{out}");
    assert!(
        out.contains("1 test case(s) checked (on_hand_after_receipts_and_sales), 1 check(s) not ready: a run would fail them"),
        "{out}"
    );
    assert!(
        out.contains("  on_hand_after_receipts_and_sales / int_inventory_stock_levels (pipelines/intermediates/inventory/int_stock_levels/tests/expected_int_inventory_stock_levels_1.csv): not filled in yet"),
        "{out}"
    );
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "run-unit-tests",
        "int_inventory_stock_levels",
        "--dry-run",
    ]);
    let o = o.code(1);
    let v: serde_json::Value = serde_json::from_str(&(o.stdout(), o.stderr()).0).unwrap();
    assert_eq!(v["not_ready"][0]["reason"], "not_filled_in");
    assert_eq!(v["not_ready"][0]["output"], "int_inventory_stock_levels");
    assert_eq!(fake.request_count(), 0);

    // The real run fails the check and prints the rows as CSV lines of the file's header.
    fake.add_query("int_inventory_stock_levels_ut`", stock_levels_script());
    let o = t.cmd(&["table", "run-unit-tests", "int_inventory_stock_levels"]);
    let out = o.stdout();
    o.code(1);
    assert!(!out.contains("{sku_id="), "{out}");
    let csv_block = [
        header,
        "10,1,42,3,2025-01-01 10:02:00.000",
        "11,1,20,1,2025-01-01 10:00:00.000",
        "10,2,7,1,2025-01-01 10:03:00.000",
    ]
    .map(|l| format!("      {l}\n"))
    .concat();
    assert!(out.contains(&csv_block), "{out}");
    // Pasted as printed (the marker line deleted), they are the expectation and the run passes.
    let pasted: String = csv_block
        .lines()
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    std::fs::write(&file, pasted).unwrap();
    let o = t.cmd(&[
        "table",
        "run-unit-tests",
        "int_inventory_stock_levels",
        "--dry-run",
    ]);
    let o = o.code(0);
    assert!(
        (o.stdout(), o.stderr()).0.contains("1 test case(s) ready"),
        "{}",
        (o.stdout(), o.stderr()).0
    );
    fake.add_query("int_inventory_stock_levels_ut`", stock_levels_script());
    let o = t.cmd(&["table", "run-unit-tests", "int_inventory_stock_levels"]);
    let out = o.stdout();
    o.code(0);
    assert!(out.contains("1 passed, 0 failed"), "{out}");
}

#[test]
fn junit_test_case_names_are_unique() {
    use flinkpipe::unittest::run::{CaseResult, CheckMode, OutputResult, SuiteResult, Verdict};
    let output = |table: &str, file: &str, check: CheckMode| OutputResult {
        table: table.into(),
        file: file.into(),
        check,
        result: Verdict::Pass,
        expected_rows: None,
        actual_rows: None,
        differences: Vec::new(),
        difference_count: 0,
        detail: None,
        actual_csv: Vec::new(),
        seconds: 0.0,
    };
    let case = |name: &str, outputs: Vec<OutputResult>| CaseResult {
        name: name.into(),
        result: Verdict::Pass,
        outputs,
        error: None,
        seconds: 0.0,
    };
    let suite = |table: &str, cases: Vec<CaseResult>| SuiteResult {
        table: table.into(),
        target: "fake".into(),
        cases,
        error: None,
        cleanup_errors: Vec::new(),
        kept: false,
        interrupted: false,
        seconds: 0.0,
    };
    let suites = vec![
        suite(
            "fct",
            vec![
                // One output checked twice (rows and a validation query), a second output, and a
                // test case name used twice.
                case(
                    "c1",
                    vec![
                        output("fct", "tests/expected_fct_1.csv", CheckMode::ExpectedRows),
                        output("fct", "tests/validate_fct_1.sql", CheckMode::ValidationSql),
                        output(
                            "other",
                            "tests/expected_other_1.csv",
                            CheckMode::ExpectedRows,
                        ),
                    ],
                ),
                case(
                    "c1",
                    vec![output(
                        "other",
                        "tests/expected_other_2.csv",
                        CheckMode::ExpectedRows,
                    )],
                ),
            ],
        ),
        suite(
            "dim",
            vec![case(
                "c1",
                vec![output(
                    "other",
                    "tests/expected_other_1.csv",
                    CheckMode::ExpectedRows,
                )],
            )],
        ),
    ];
    let xml = flinkpipe::unittest::junit::to_xml(&suites);
    let names: Vec<&str> = xml
        .match_indices(" name=\"")
        .map(|(i, m)| {
            let rest = &xml[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .filter(|n| n.contains('.'))
        .collect();
    assert_eq!(
        names,
        vec![
            "fct.c1.fct.expected_fct_1.csv",
            "fct.c1.fct.validate_fct_1.sql",
            "fct.c1.other",
            "fct.c1.other#2",
            "dim.c1.other",
        ],
        "{xml}"
    );
}

/// Issue #21 item 4 in unit tests: a DECIMAL(14, 2) output compares by value (`55.5` sent, `55.50`
/// expected, and `8` sent, `8.00` expected, pass) and a difference prints both sides with the
/// declared scale (`revenue_eur=9.00` expected, `revenue_eur=8.00` got).
#[test]
fn decimal_outputs_compare_by_value_and_print_with_their_declared_scale() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let dir = "facts/sales/fct_store_revenue_1m/tests";
    // Only the expected rows (the validation query is another test's concern).
    edit(&t, &format!("{dir}/test_definitions.yaml"), |t| {
        let cut = t
            .find("  - table_name: sales_fct_store_revenue_1m\n    file_name: ./tests/validate")
            .unwrap();
        t[..cut].to_string()
    });
    let ty = |t: &str| json!({"type": t, "nullable": true});
    let ts = json!({"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 3});
    let script = || QueryScript {
        columns: json!([
            {"name": "store_id", "type": ty("INTEGER")},
            {"name": "window_start", "type": ts},
            {"name": "window_end", "type": ts},
            {"name": "order_count", "type": ty("BIGINT")},
            {"name": "units", "type": ty("BIGINT")},
            {"name": "revenue_eur", "type": {"type": "DECIMAL", "precision": 14, "scale": 2}},
        ]),
        pages: vec![vec![
            (
                None,
                json!([
                    "1",
                    "2025-01-01 10:00:00.000",
                    "2025-01-01 10:01:00.000",
                    "2",
                    "6",
                    "55.5"
                ]),
            ),
            (
                None,
                json!([
                    "2",
                    "2025-01-01 10:00:00.000",
                    "2025-01-01 10:01:00.000",
                    "1",
                    "1",
                    "12.25"
                ]),
            ),
            (
                None,
                json!([
                    "1",
                    "2025-01-01 10:01:00.000",
                    "2025-01-01 10:02:00.000",
                    "1",
                    "1",
                    "8"
                ]),
            ),
        ]],
        bounded: true,
        ..QueryScript::default()
    };
    fake.add_query("sales_fct_store_revenue_1m_ut`", script());
    let o = t.cmd(&["table", "run-unit-tests", "sales_fct_store_revenue_1m"]);
    let out = o.stdout();
    o.code(0);
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    edit(
        &t,
        &format!("{dir}/expected_sales_fct_store_revenue_1m_1.csv"),
        |t| t.replace(",1,1,8.00", ",1,1,9.00"),
    );
    // A fresh fake: the project's target is the new one.
    let fake = FakeConfluent::start();
    fake.add_query("sales_fct_store_revenue_1m_ut`", script());
    let endpoint = fake.endpoint();
    let o = t.cmd_env(
        &["table", "run-unit-tests", "sales_fct_store_revenue_1m"],
        &[("SL_FLINK_SQL_ENDPOINT", &endpoint)],
    );
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("missing (expected line 5): {store_id=1, window_start='2025-01-01T10:01:00', window_end='2025-01-01T10:02:00', order_count=1, units=1, revenue_eur=9.00}"),
        "{out}"
    );
    assert!(out.contains("unexpected: {store_id=1, window_start='2025-01-01T10:01:00.000', window_end='2025-01-01T10:02:00.000', order_count=1, units=1, revenue_eur=8.00}"), "{out}");
}

/// A unit test's inputs are written before the SQL under test starts and are bounded, so the SQL
/// runs with Flink's source idleness disabled: a `table.exec.source.idle-timeout` from the table's
/// `.properties` (the fixture's FX join sets `10 s`) would let a source that starts late be marked
/// idle on a loaded machine, and the temporal join would drop the orders it had not read yet.
#[test]
fn the_sql_under_test_runs_without_source_idleness() {
    use flinkpipe::unittest::Suffix;
    use flinkpipe::unittest::prepare::{self, PrepareOptions};
    use flinkpipe::unittest::rewrite::Storage;
    let pipelines = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pipelines");
    let file = pipelines.join(
        "intermediates/sales/int_orders_enriched/sql-scripts/dml.int_sales_orders_enriched.properties",
    );
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("table.exec.source.idle-timeout=10 s")
    );
    let cfg = flinkpipe::config::Config::default();
    let project =
        flinkpipe::project::load(&pipelines, &cfg, flinkpipe::project::LoadOptions::default())
            .unwrap();
    let suite = prepare::prepare(
        &project,
        &cfg,
        "int_sales_orders_enriched",
        &PrepareOptions {
            suffix: Suffix::parse("_ut").unwrap(),
            storage: Storage::Kafka {
                bootstrap: "localhost:9092".into(),
            },
            case: None,
        },
    )
    .unwrap();
    assert_eq!(suite.tested.len(), 1);
    assert_eq!(
        suite.tested[0]
            .properties
            .get(prepare::SOURCE_IDLE_TIMEOUT)
            .map(String::as_str),
        Some("0 ms")
    );
}

/// Issue #44 item 5: a statement set writes several tables; init-unit-tests writes an expected CSV
/// per sink and per case, each with that sink's columns, and the definitions check every one.
#[test]
fn init_unit_tests_writes_an_expected_csv_per_sink_of_a_statement_set() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let dir = t.pipelines.join("intermediates/sales/int_web_orders/tests");
    std::fs::remove_dir_all(&dir).unwrap();
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "init-unit-tests",
        "int_sales_web_orders",
    ]);
    let out = o.stdout();
    o.success();
    for sink in ["int_sales_web_orders", "int_sales_store_orders"] {
        for i in 1..=2 {
            let f = dir.join(format!("expected_{sink}_{i}.csv"));
            let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{e}: {out}"));
            assert!(
                text.lines()
                    .any(|l| l.starts_with("order_id,customer_id,store_id")),
                "{sink}: {text}"
            );
        }
    }
    let defs = std::fs::read_to_string(dir.join("test_definitions.yaml")).unwrap();
    assert_eq!(
        defs.matches("table_name: int_sales_store_orders").count(),
        2,
        "{defs}"
    );
    // The dry run names both outputs of each case as not filled in yet.
    let o = t.cmd(&[
        "--output",
        "json",
        "table",
        "run-unit-tests",
        "int_sales_web_orders",
        "--dry-run",
    ]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout()).unwrap();
    let not_ready: Vec<String> = v["not_ready"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["output"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        not_ready
            .iter()
            .filter(|o| *o == "int_sales_store_orders")
            .count(),
        2,
        "{v:#}"
    );
}

/// Issue #44 item 4: the summary counts the rows the table shows, and a folder whose tests/ holds no
/// test_definitions.yaml is said to have no unit tests (not "no tests/ folder").
#[test]
fn the_summary_counts_the_rows_of_the_table() {
    let fake = FakeConfluent::start();
    let t = project(&fake).file(
        "pipelines/facts/sales/fct_order_payments/tests/README.md",
        "notes\n",
    );
    std::fs::remove_file(
        t.pipelines
            .join("facts/sales/fct_order_payments/tests/test_definitions.yaml"),
    )
    .unwrap();
    fake.add_query("int_inventory_stock_levels_ut`", stock_levels_script());
    let o = t.cmd(&[
        "project",
        "run-unit-tests",
        "--table-name",
        "int_inventory_stock_levels",
        "--table-name",
        "int_sales_web_orders",
        "--table-name",
        "sales_fct_order_payments",
    ]);
    let out = o.stdout();
    o.code(1);
    let count = |verdict: &str| {
        out.lines()
            .filter(|l| l.split("  ").any(|c| c.trim() == verdict))
            .count()
    };
    let (pass, fail, error) = (count("PASS"), count("FAIL"), count("ERROR"));
    assert!(pass > 0 && fail > 0, "{out}");
    assert!(
        out.contains(&format!("{pass} passed, {fail} failed, {error} error(s)")),
        "{out}"
    );
    assert!(
        out.contains("no unit tests (no tests/test_definitions.yaml): sales_fct_order_payments"),
        "{out}"
    );
}
