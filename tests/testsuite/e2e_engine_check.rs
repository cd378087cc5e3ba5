//! The Flink planner as a CI gate, on a real Apache Flink 2.2 SQL Gateway (`scripts/local-flink.sh
//! up`): `pipeline validate --engine local` explains every statement with the project's DDL and
//! reports what the planner rejects at its file and line; `pipeline explain --changelog-mode`
//! prints the changelog each sink receives and its upsert key. Nothing is deployed: EXPLAIN and
//! COMPILE PLAN start no job.
//!
//! Skips without the stack, like `e2e_gateway` (`FLINKPIPE_E2E=required` turns that into a failure).

use crate::support::e2e::E2e;
use crate::support::stack::stack_available;
use serde_json::Value;

const SRC_DDL: &str = "CREATE TABLE IF NOT EXISTS src_e_orders (\n  id BIGINT,\n  store_id INT,\n  amount DECIMAL(10, 2)\n) WITH (\n  'connector' = 'datagen'\n);\n";
const TOTALS_DDL: &str = "CREATE TABLE IF NOT EXISTS fct_e_totals (\n  store_id INT,\n  total DECIMAL(38, 2),\n  PRIMARY KEY (store_id) NOT ENFORCED\n) WITH (\n  'connector' = 'blackhole'\n);\n";
const TOTALS_DML: &str = "-- revenue per store\nINSERT INTO fct_e_totals\nSELECT store_id,\n  SUM(amount) AS total\nFROM src_e_orders\nGROUP BY store_id;\n";
const LINES_DDL: &str = "CREATE TABLE IF NOT EXISTS int_e_lines (\n  id BIGINT,\n  store_id INT\n) WITH (\n  'connector' = 'kafka',\n  'topic' = 'int_e_lines',\n  'properties.bootstrap.servers' = 'localhost:9092',\n  'format' = 'json'\n);\n";
const LINES_DML: &str = "INSERT INTO int_e_lines\nSELECT id, store_id\nFROM src_e_orders;\n";

const TOTALS_DML_FILE: &str = "facts/e/fct_totals/sql-scripts/dml.fct_e_totals.sql";
const LINES_DML_FILE: &str = "intermediates/e/int_lines/sql-scripts/dml.int_e_lines.sql";
const LINES_DDL_FILE: &str = "intermediates/e/int_lines/sql-scripts/ddl.int_e_lines.sql";

fn rejections(v: &Value) -> Vec<(String, String, u64)> {
    v["engine_check"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["file"].as_str().unwrap_or("").to_string(),
                d["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn the_planner_gates_a_project_and_names_each_sinks_changelog_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let e = E2e::new(
        "e2eeng",
        &[
            (
                "sources/e/src_orders/sql-scripts/ddl.src_e_orders.sql",
                SRC_DDL,
            ),
            (
                "facts/e/fct_totals/sql-scripts/ddl.fct_e_totals.sql",
                TOTALS_DDL,
            ),
            (TOTALS_DML_FILE, TOTALS_DML),
            (LINES_DDL_FILE, LINES_DDL),
            (LINES_DML_FILE, LINES_DML),
        ],
    )
    .pipelines_last();

    // 1. A valid project: every statement explained, nothing rejected.
    let (v, out) = e.json(&["pipeline", "validate", "--engine", "local"]);
    out.success();
    let statements = v["engine_check"]["statements"].as_array().unwrap();
    let outcome = |name: &str| -> String {
        statements
            .iter()
            .find(|s| s["statement"] == name)
            .unwrap_or_else(|| panic!("{name}: {v:#}"))["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(outcome("e2eeng-e-dml-fct-e-totals"), "valid");
    assert_eq!(outcome("e2eeng-e-dml-int-e-lines"), "valid");
    assert_eq!(outcome("e2eeng-e-ddl-src-e-orders"), "declared");
    assert!(rejections(&v).is_empty(), "{v:#}");

    // 2. The changelog each sink receives: the aggregate upserts by its key, the projection appends.
    let (v, out) = e.json(&["pipeline", "explain", "--changelog-mode", "--dir", "facts"]);
    out.success();
    let sink = v["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["statement"] == "e2eeng-e-dml-fct-e-totals")
        .unwrap_or_else(|| panic!("{v:#}"))["sinks"][0]
        .clone();
    assert_eq!(
        sink["table"],
        "default_catalog.default_database.fct_e_totals"
    );
    assert_eq!(sink["mode"], "upsert");
    assert_eq!(sink["kinds"], serde_json::json!(["+I", "+U"]));
    assert_eq!(sink["upsert_key"], serde_json::json!(["store_id"]));
    let (v, _) = e.json(&[
        "pipeline",
        "explain",
        "--changelog-mode",
        "--dir",
        "intermediates",
    ]);
    let sink = &v["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["statement"] == "e2eeng-e-dml-int-e-lines")
        .unwrap()["sinks"][0];
    assert_eq!(sink["mode"], "append-only", "{v:#}");
    assert_eq!(sink["upsert_key"], Value::Null);

    // 3. An unknown column: an error at the line the planner names, in the file.
    let lines_dml = e.pipelines.join(LINES_DML_FILE);
    std::fs::write(
        &lines_dml,
        "INSERT INTO int_e_lines\nSELECT id,\n  shop_id\nFROM src_e_orders;\n",
    )
    .unwrap();
    let (v, out) = e.json(&["pipeline", "validate", "--engine", "local"]);
    out.code(1);
    assert_eq!(
        rejections(&v),
        vec![(
            "engine-rejected".to_string(),
            format!("pipelines/{LINES_DML_FILE}"),
            3
        )],
        "{v:#}"
    );

    // 4. An updating query into an append-only Kafka table: a changelog mismatch.
    std::fs::write(
        &lines_dml,
        "INSERT INTO int_e_lines\nSELECT MAX(id), store_id\nFROM src_e_orders\nGROUP BY store_id;\n",
    )
    .unwrap();
    let (v, out) = e.json(&["pipeline", "validate", "--engine", "local"]);
    out.code(1);
    assert_eq!(rejections(&v)[0].0, "engine-changelog-mismatch", "{v:#}");

    // 5. A DDL type error is the DDL's error, once, at its line, the unknown type
    //    named in the message.
    std::fs::write(&lines_dml, LINES_DML).unwrap();
    std::fs::write(
        e.pipelines.join(LINES_DDL_FILE),
        LINES_DDL.replace("store_id INT", "store_id INTT"),
    )
    .unwrap();
    let (v, out) = e.json(&["pipeline", "validate", "--engine", "local"]);
    out.code(1);
    assert_eq!(
        rejections(&v),
        vec![(
            "engine-rejected".to_string(),
            format!("pipelines/{LINES_DDL_FILE}"),
            3
        )],
        "{v:#}"
    );
    assert!(
        v["engine_check"]["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("INTT"),
        "{v:#}"
    );
}
