//! Integration tests of a subgraph (`project init-integration-tests`, `run-integration-tests`,
//! `delete-integration-tests`): the files init writes, the subgraph's order and renaming (a CTAS in
//! the middle, a statement set writing two tables), the refusals, and a run against the Confluent
//! fake that passes and leaves nothing behind. The run on a real Flink is in `e2e_unit_tests`.

use crate::fake_confluent::{FakeConfluent, QueryScript};
use crate::support::Test;
use crate::support::confluent::stock_levels;
use crate::support::test::Outcome;
use flinkpipe::config::Config;
use flinkpipe::project::LoadOptions;
use flinkpipe::unittest::Suffix;
use flinkpipe::unittest::integration::{self, Step};
use flinkpipe::unittest::prepare::{PrepareOptions, Role};
use flinkpipe::unittest::rewrite::Storage;
use serde_json::json;
use std::path::Path;

const LEVELS: &str = "intermediates/inventory/int_stock_levels/tests/integration";

fn init(t: &Test, sink: &str) -> Outcome {
    t.cmd(&[
        "project",
        "init-integration-tests",
        "--table-name",
        sink,
        "[PIPELINES]",
    ])
}

fn load(pipelines: &Path) -> flinkpipe::project::Project {
    flinkpipe::project::load(pipelines, &Config::default(), LoadOptions::default()).unwrap()
}

fn it() -> Suffix {
    Suffix::parse(integration::DEFAULT_SUFFIX).unwrap()
}

#[test]
fn init_writes_source_rows_an_unfilled_expectation_and_the_definitions() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    init(&t, "int_inventory_stock_levels")
        .success()
        .stdout_is(&format!(
            "integration tests of int_inventory_stock_levels in pipelines/{LEVELS} (sources: src_inventory_stock_movements)
  wrote pipelines/{LEVELS}/insert_src_inventory_stock_movements_1.sql
  wrote pipelines/{LEVELS}/expected_int_inventory_stock_levels_1.csv
  wrote pipelines/{LEVELS}/integration_test_definitions.yaml
next: check the input rows, write the expected rows of int_inventory_stock_levels (a first run lists what it holds), then `flinkpipe project run-integration-tests --table-name int_inventory_stock_levels`
"
        ));
    let dir = pipelines.join(LEVELS);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "expected_int_inventory_stock_levels_1.csv",
            "insert_src_inventory_stock_movements_1.sql",
            "integration_test_definitions.yaml",
        ]
    );
    // Typed rows; keys by row number, the other integers within the datagen ranges of the DDL
    // (qty_delta from -10, movement_code 0..2); computed columns (movement_type) left out.
    assert_eq!(
        std::fs::read_to_string(dir.join("insert_src_inventory_stock_movements_1.sql")).unwrap(),
        "INSERT INTO src_inventory_stock_movements_it (`movement_id`, `sku_id`, `warehouse_id`, `qty_delta`, `movement_code`, `moved_at`)\nVALUES\n  (1, 1, 1, -10, 0, TIMESTAMP '2025-01-01 10:01:00'),\n  (2, 2, 2, -9, 1, TIMESTAMP '2025-01-01 10:02:00'),\n  (3, 3, 3, -8, 2, TIMESTAMP '2025-01-01 10:03:00');\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("expected_int_inventory_stock_levels_1.csv")).unwrap(),
        "# The rows int_inventory_stock_levels must hold at the end of it_int_inventory_stock_levels_1: one line per row, in any order (see README: integration tests).\n# flinkpipe: not filled in yet: write the expected rows below the header, then delete this line\nsku_id,warehouse_id,on_hand,movements,last_movement_at\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("integration_test_definitions.yaml")).unwrap(),
        "# Integration test of int_inventory_stock_levels: the rows of its sources (src_inventory_stock_movements) go through int_inventory_movements_typed → int_inventory_stock_levels (see README: integration tests).\n# `flinkpipe project run-integration-tests --table-name int_inventory_stock_levels` runs it.\nfoundations: []\ntest_suite:\n- name: it_int_inventory_stock_levels_1\n  inputs:\n  - table_name: src_inventory_stock_movements\n    file_name: ./tests/integration/insert_src_inventory_stock_movements_1.sql\n    file_type: sql\n  outputs:\n  - table_name: int_inventory_stock_levels\n    file_name: ./tests/integration/expected_int_inventory_stock_levels_1.csv\n    file_type: csv\n"
    );
    // The unit tests of the table are untouched.
    assert!(
        pipelines
            .join("intermediates/inventory/int_stock_levels/tests/test_definitions.yaml")
            .is_file()
    );
    // Never overwrites: an edited file is kept, and said so.
    std::fs::write(
        dir.join("expected_int_inventory_stock_levels_1.csv"),
        "sku_id,warehouse_id,on_hand,movements,last_movement_at\n",
    )
    .unwrap();
    let o = init(&t, "int_inventory_stock_levels");
    let out = o.stdout();
    o.success();
    assert_eq!(out.matches("(exists)").count(), 3, "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.join("expected_int_inventory_stock_levels_1.csv")).unwrap(),
        "sku_id,warehouse_id,on_hand,movements,last_movement_at\n"
    );
    // shift_left's form: the sink as a positional, --project-path, and a JSON report.
    let o = t.cmd(&[
        "--output",
        "json",
        "project",
        "init-integration-tests",
        "sales_fct_store_revenue_1m",
        "--project-path",
        "[PIPELINES]",
    ]);
    let out = o.stdout();
    o.success();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["inputs"],
        json!(["src_sales_fx_rates", "src_sales_orders"])
    );
    assert_eq!(v["written"].as_array().unwrap().len(), 4, "{v:#}");
}

#[test]
fn the_subgraph_runs_parents_first_and_statement_sets_once() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    let project = load(&pipelines);
    let sg = integration::subgraph(&project, "sales_fct_store_revenue_1m").unwrap();
    assert_eq!(sg.sources, ["src_sales_fx_rates", "src_sales_orders"]);
    let owners: Vec<&str> = sg.steps.iter().map(|s| s.owner.as_str()).collect();
    assert_eq!(
        owners,
        [
            "int_sales_fx_rates",
            "int_sales_orders_enriched",
            "int_sales_order_lines",
            "sales_fct_store_revenue_1m"
        ]
    );
    // int_sales_store_orders has no DML: the statement set of int_sales_web_orders writes it (and
    // int_sales_web_orders), and runs once, after int_sales_paid_orders; the seeds are sources.
    let sg = integration::subgraph(&project, "sales_mv_top_stores").unwrap();
    assert_eq!(
        sg.sources,
        [
            "seed_inventory_warehouses",
            "seed_sales_stores",
            "src_sales_orders",
            "src_sales_payments"
        ]
    );
    let web = sg
        .steps
        .iter()
        .position(|s| s.owner == "int_sales_web_orders")
        .unwrap();
    let paid = sg
        .steps
        .iter()
        .position(|s| s.owner == "int_sales_paid_orders")
        .unwrap();
    assert!(paid < web, "{:?}", sg.steps);
    assert_eq!(
        sg.steps[web],
        Step {
            owner: "int_sales_web_orders".into(),
            file: "pipelines/intermediates/sales/int_web_orders/sql-scripts/dml.int_sales_web_orders.sql".into(),
            ctas: false,
            writes: vec!["int_sales_store_orders".into(), "int_sales_web_orders".into()],
        }
    );
    assert_eq!(sg.steps.len(), 4, "{:?}", sg.steps);
    assert_eq!(sg.steps.last().unwrap().owner, "sales_mv_top_stores");
    assert!(sg.computed.contains(&"int_sales_web_orders".to_string()));
    // A table without parents has no subgraph; an unknown one is named.
    let e = integration::subgraph(&project, "src_sales_orders").unwrap_err();
    assert!(e.to_string().contains("has no parents"), "{e}");
    let e = integration::subgraph(&project, "nope").unwrap_err();
    assert!(e.to_string().contains("unknown table 'nope'"), "{e}");
}

#[test]
fn every_table_of_the_subgraph_is_renamed_and_mapped_to_the_test_broker() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    init(&t, "int_inventory_stock_levels").success();
    let project = load(&pipelines);
    let opts = PrepareOptions {
        suffix: it(),
        storage: Storage::Kafka {
            bootstrap: "localhost:9092".into(),
        },
        case: None,
    };
    let suite = integration::prepare(
        &project,
        &Config::default(),
        "int_inventory_stock_levels",
        &opts,
    )
    .unwrap();
    let tables: Vec<(&str, Role, bool)> = suite
        .tables
        .iter()
        .map(|t| (t.ut_name.as_str(), t.role, t.ddl.is_some()))
        .collect();
    assert_eq!(
        tables,
        [
            ("src_inventory_stock_movements_it", Role::Foundation, true),
            // Created by its CTAS.
            ("int_inventory_movements_typed_it", Role::Output, false),
            ("int_inventory_stock_levels_it", Role::Output, true),
        ]
    );
    let src = suite.tables[0].ddl.as_deref().unwrap();
    assert!(
        src.contains("CREATE TABLE IF NOT EXISTS src_inventory_stock_movements_it (")
            && src.contains("'connector' = 'kafka'")
            && src.contains("'topic' = 'src_inventory_stock_movements_it'")
            && !src.contains("datagen"),
        "{src}"
    );
    let tested: Vec<&str> = suite.tested.iter().map(|t| t.table.as_str()).collect();
    assert_eq!(
        tested,
        [
            "int_inventory_movements_typed",
            "int_inventory_stock_levels"
        ]
    );
    let ctas = &suite.tested[0].sql;
    assert!(
        ctas.contains("CREATE TABLE IF NOT EXISTS int_inventory_movements_typed_it")
            && ctas.contains("FROM src_inventory_stock_movements_it AS m")
            && ctas.contains("'topic' = 'int_inventory_movements_typed_it'")
            && ctas.contains("'scan.bounded.mode' = 'latest-offset'"),
        "{ctas}"
    );
    let dml = &suite.tested[1].sql;
    assert!(
        dml.contains("INSERT INTO int_inventory_stock_levels_it")
            && dml.contains("FROM int_inventory_movements_typed_it"),
        "{dml}"
    );
    assert_eq!(suite.cases.len(), 1);
    assert_eq!(
        suite.cases[0].inserts[0].lines().next().unwrap(),
        "INSERT INTO src_inventory_stock_movements_it (`movement_id`, `sku_id`, `warehouse_id`, `qty_delta`, `movement_code`, `moved_at`)"
    );
    assert_eq!(
        suite.definitions_file,
        format!("pipelines/{LEVELS}/integration_test_definitions.yaml")
    );
}

#[test]
fn bad_definitions_are_refused_with_file_and_line_before_anything_runs() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    let run = |args: &[&str]| {
        t.cmd(
            &[
                &["project", "run-integration-tests"],
                args,
                &["[PIPELINES]"],
            ]
            .concat(),
        )
    };
    // No definitions yet: says how to write them.
    run(&["--table-name", "int_inventory_stock_levels"])
        .code(1)
        .stderr_is(&format!(
            "error: pipelines/{LEVELS}/integration_test_definitions.yaml: no integration test definitions: run `flinkpipe project init-integration-tests --table-name int_inventory_stock_levels` first\n"
        ));
    // An input for a table that is not a source: the line of the entry.
    init(&t, "int_inventory_stock_levels").success();
    let defs = pipelines
        .join(LEVELS)
        .join("integration_test_definitions.yaml");
    let text = std::fs::read_to_string(&defs).unwrap();
    std::fs::write(
        &defs,
        text.replacen(
            "  - table_name: src_inventory_stock_movements",
            "  - table_name: int_inventory_movements_typed",
            1,
        ),
    )
    .unwrap();
    run(&["--table-name", "int_inventory_stock_levels"])
        .code(1)
        .stderr_is(&format!("error: pipelines/{LEVELS}/integration_test_definitions.yaml:7: input for 'int_inventory_movements_typed', which is not a source of the subgraph of int_inventory_stock_levels (its sources: src_inventory_stock_movements)\n"));
    // --dry-run: the repaired suite is checked offline; the expectation not filled in yet is said.
    std::fs::write(&defs, text).unwrap();
    run(&["--dry-run", "--table-name", "int_inventory_stock_levels"])
        .code(1)
        .stdout_is(&format!("int_inventory_stock_levels: 1 test case(s) checked (it_int_inventory_stock_levels_1), 1 check(s) not ready: a run would fail them; test tables: src_inventory_stock_movements_it, int_inventory_movements_typed_it, int_inventory_stock_levels_it; nothing was run (--dry-run)
  it_int_inventory_stock_levels_1 / int_inventory_stock_levels (pipelines/{LEVELS}/expected_int_inventory_stock_levels_1.csv): not filled in yet: write the expected rows (a run lists what the output holds, as CSV lines) and delete its `# flinkpipe: not filled in yet` line
"));
    std::fs::write(
        pipelines
            .join(LEVELS)
            .join("expected_int_inventory_stock_levels_1.csv"),
        "sku_id,warehouse_id,on_hand,movements,last_movement_at\n1,1,-10,1,2025-01-01 10:01:00\n",
    )
    .unwrap();
    run(&["--dry-run", "--table-name", "int_inventory_stock_levels"])
        .success()
        .stdout_is("int_inventory_stock_levels: 1 test case(s) ready (it_int_inventory_stock_levels_1); test tables: src_inventory_stock_movements_it, int_inventory_movements_typed_it, int_inventory_stock_levels_it; nothing was run (--dry-run)\n");
    // No sink: a usage error.
    Test::new()
        .args(&["project", "run-integration-tests"])
        .run()
        .failure()
        .stderr_has("--table-name SINK");
}

/// The sink as Confluent sends it: an upsert changelog with one update.
fn levels_script() -> QueryScript {
    stock_levels(vec![vec![
        (
            None,
            json!(["1", "1", "-10", "1", "2025-01-01 10:01:00.000"]),
        ),
        (
            None,
            json!(["2", "2", "-9", "1", "2025-01-01 10:02:00.000"]),
        ),
        (
            Some(1),
            json!(["3", "3", "-8", "1", "2025-01-01 10:03:00.000"]),
        ),
        (
            Some(2),
            json!(["3", "3", "-8", "1", "2025-01-01 10:03:00.000"]),
        ),
    ]])
}

#[test]
fn a_run_on_confluent_passes_and_leaves_nothing_behind() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake).flink_catalog();
    let pipelines = t.pipelines.clone();
    init(&t, "int_inventory_stock_levels").success();
    std::fs::write(
        pipelines.join(LEVELS).join("expected_int_inventory_stock_levels_1.csv"),
        "sku_id,warehouse_id,on_hand,movements,last_movement_at\n1,1,-10,1,2025-01-01 10:01:00\n2,2,-9,1,2025-01-01 10:02:00\n3,3,-8,1,2025-01-01 10:03:00\n",
    )
    .unwrap();
    fake.add_query("int_inventory_stock_levels_it`", levels_script());
    let run = |args: &[&str]| t.cmd(&[args, &["[PIPELINES]"]].concat());
    let junit = t.root.join("junit.xml");
    let o = run(&[
        "--output",
        "json",
        "project",
        "run-integration-tests",
        "--junit",
        junit.to_str().unwrap(),
        "--table-name",
        "int_inventory_stock_levels",
    ]);
    let out = o.stdout();
    o.success();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let case = &v["suites"][0]["cases"][0];
    assert_eq!(case["name"], "it_int_inventory_stock_levels_1");
    assert_eq!(case["result"], "PASS", "{v:#}");
    assert_eq!(case["outputs"][0]["actual_rows"], 3);
    // Every statement of the subgraph ran on _it tables, parents first, bounded.
    let created = fake.created();
    let pos = |n: &str| {
        created
            .iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("{n} not in {created:?}"))
    };
    assert!(
        pos("dev-usw2-ddl-src-inventory-stock-movements-it")
            < pos("dev-usw2-ins-1-int-inventory-stock-levels-it")
    );
    assert!(
        pos("dev-usw2-ins-1-int-inventory-stock-levels-it")
            < pos("dev-usw2-dml-int-inventory-movements-typed-it")
    );
    assert!(
        pos("dev-usw2-dml-int-inventory-movements-typed-it")
            < pos("dev-usw2-dml-int-inventory-stock-levels-it")
    );
    assert!(created.iter().all(|c| c.ends_with("-it")), "{created:?}");
    let posts = fake.requests();
    let ctas = posts
        .iter()
        .find(|r| {
            r.method == "POST"
                && r.body
                    .contains("dev-usw2-dml-int-inventory-movements-typed-it")
        })
        .expect("the CTAS was posted");
    assert!(
        ctas.body
            .contains("FROM src_inventory_stock_movements_it AS m")
            && ctas.body.contains("sql.tables.scan.bounded.mode"),
        "{}",
        ctas.body
    );
    let left: Vec<String> = fake
        .names()
        .into_iter()
        .filter(|n| n.ends_with("-it"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(std::fs::read_to_string(&junit).unwrap().contains(
        r#"<testsuite name="int_inventory_stock_levels" tests="1" failures="0" errors="0""#
    ));
    // delete-integration-tests finds nothing left but drops the tables again, harmlessly.
    let o = run(&[
        "project",
        "delete-integration-tests",
        "--table-name",
        "int_inventory_stock_levels",
    ]);
    o.success().stdout_is(
        "integration-test artefacts of int_inventory_stock_levels removed:
  statements: none
  tables:     src_inventory_stock_movements_it, int_inventory_movements_typed_it, int_inventory_stock_levels_it
",
    );
}

#[test]
fn an_external_source_needs_a_ddl_and_gets_a_foundation() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    let sink = "c360_dim_customers";
    // No DDL for ext_c360_loyalty_members: refused, nothing written, the way out said.
    init(&t, sink).code(1).stderr_is("error: pipelines/dimensions/c360/dim_customers/sql-scripts/dml.c360_dim_customers.sql: source 'ext_c360_loyalty_members' of the subgraph of c360_dim_customers has no DDL in the project (an external table): add its DDL to flinkpipe.gateway.external_ddl, or write pipelines/dimensions/c360/dim_customers/tests/integration/ddl_ext_c360_loyalty_members.sql and declare it under foundations in pipelines/dimensions/c360/dim_customers/tests/integration/integration_test_definitions.yaml; nothing was written\n");
    let dir = pipelines.join("dimensions/c360/dim_customers/tests/integration");
    assert!(!dir.exists());
    // With the external DDL configured: a copy renamed to _it, declared as a foundation.
    let ext = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/external");
    let config = t.root.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:1\n    external_ddl: [{}]\n",
            ext.display()
        ),
    )
    .unwrap();
    let o = t.cmd(&[
        "--config",
        config.to_str().unwrap(),
        "project",
        "init-integration-tests",
        "--table-name",
        sink,
        "[PIPELINES]",
    ]);
    o.success();
    let ddl = std::fs::read_to_string(dir.join("ddl_ext_c360_loyalty_members.sql")).unwrap();
    assert!(
        ddl.contains("CREATE TABLE IF NOT EXISTS ext_c360_loyalty_members_it"),
        "{ddl}"
    );
    let defs = std::fs::read_to_string(dir.join("integration_test_definitions.yaml")).unwrap();
    assert!(
        defs.contains("foundations:\n- table_name: ext_c360_loyalty_members\n  ddl_for_test: ./tests/integration/ddl_ext_c360_loyalty_members.sql\n"),
        "{defs}"
    );
    // The run's offline checks accept it.
    let o = t.cmd(&[
        "--config",
        config.to_str().unwrap(),
        "project",
        "run-integration-tests",
        "--dry-run",
        "--table-name",
        sink,
        "[PIPELINES]",
    ]);
    o.code(1).stdout_is("c360_dim_customers: 1 test case(s) checked (it_c360_dim_customers_1), 1 check(s) not ready: a run would fail them; test tables: ext_c360_loyalty_members_it, seed_c360_segments_it, src_c360_customers_it, int_c360_customers_latest_it, c360_dim_customers_it; nothing was run (--dry-run)
  it_c360_dim_customers_1 / c360_dim_customers (pipelines/dimensions/c360/dim_customers/tests/integration/expected_c360_dim_customers_1.csv): not filled in yet: write the expected rows (a run lists what the output holds, as CSV lines) and delete its `# flinkpipe: not filled in yet` line
");
}

#[test]
fn every_subgraph_of_the_example_runs_each_statement_after_the_statements_it_reads() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    let project = load(&pipelines);
    let mut checked = 0;
    for (name, t) in &project.inventory.tables {
        if t.external || project.graph.parents(name).is_empty() {
            continue;
        }
        let sg = match integration::subgraph(&project, name) {
            Ok(sg) => sg,
            Err(e) => {
                // Only a materialized table (or one above it) is refused in the example.
                assert!(e.to_string().contains("materialized table"), "{name}: {e}");
                continue;
            }
        };
        checked += 1;
        // The sink is computed (a co-sink of its statement set may come after it).
        assert!(sg.computed.contains(name), "{name}: {sg:?}");
        let tables: std::collections::BTreeSet<String> = sg.tables().into_iter().collect();
        assert_eq!(tables.len(), sg.sources.len() + sg.computed.len(), "{name}");
        let mut written: std::collections::BTreeSet<String> = sg.sources.iter().cloned().collect();
        for s in &sg.steps {
            for w in &s.writes {
                for p in project.graph.parents(w) {
                    assert!(
                        tables.contains(p),
                        "{name}: {w} reads {p}, outside {tables:?}"
                    );
                    assert!(
                        written.contains(p) || s.writes.iter().any(|x| x == p),
                        "{name}: {} runs before {p} is written ({:?})",
                        s.owner,
                        sg.steps
                    );
                }
            }
            written.extend(s.writes.iter().cloned());
        }
        // Every computed table is written by exactly one step; sources by none.
        for c in &sg.computed {
            assert_eq!(
                sg.steps.iter().filter(|s| s.writes.contains(c)).count(),
                1,
                "{name}: {c}"
            );
        }
        for src in &sg.sources {
            assert!(project.graph.parents(src).is_empty(), "{name}: {src}");
        }
    }
    assert!(checked >= 20, "{checked}");
}
