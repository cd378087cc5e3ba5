//! `pipeline test-live` (issue #25 §2) against the Confluent fake with scripted results: every kind
//! of check passing on good rows and failing on bad ones (with the failing rows, capped by
//! `--max-failing-rows`), the JUnit file, the JSON report, every query statement deleted, a bad
//! `live_tests.yaml` refused with its file and line before any query, and `--blue-green`
//! selecting the open release's green tables.

use crate::fake_confluent::{FakeConfluent, QueryScript};
use crate::support::Test;
use crate::support::confluent::col;
use serde_json::{Value, json};

const TABLE: &str = "c360_fct_customer_orders";
const TESTS_FILE: &str = "pipelines/facts/c360/fct_customer_orders/tests/live_tests.yaml";

const TESTS: &str = "# live data tests of c360_fct_customer_orders
tests:
  - not_null: [loyalty_tier]
  - unique: key
  - unique: [loyalty_tier, paid_orders]
  - accepted_values: {column: loyalty_tier, values: [gold, silver]}
  - row_count: {min: 2, max: 3}
  - freshness: {column: updated_at, max_age: 15m}
  - name: no_negative_orders
    sql: SELECT * FROM {table} WHERE paid_orders < 0
";

/// The example project on `fake`, with `tests` as the live tests of [`TABLE`].
fn project(fake: &FakeConfluent, tests: &str) -> Test {
    Test::fixture()
        .confluent(fake)
        .file(TESTS_FILE.strip_prefix("pipelines/").unwrap(), tests)
}

fn script(rows: &[Value]) -> QueryScript {
    QueryScript {
        columns: json!([
            col("customer_id", "BIGINT"),
            col("loyalty_tier", "STRING"),
            col("paid_orders", "BIGINT"),
            col("updated_at", "TIMESTAMP")
        ]),
        upsert_columns: None,
        pages: vec![rows.iter().map(|r| (None, r.clone())).collect()],
        bounded: true,
        ..QueryScript::default()
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC), `ago` seconds before now.
fn stamp(ago: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    flinkpipe::time::utc_timestamp(now - ago)[..19].to_string()
}

/// A `TIMESTAMP` value as the read types it (ISO, `T` between date and time).
fn iso(stamp: &str) -> String {
    stamp.replace(' ', "T")
}

/// Every query statement created was deleted, and there was at least one.
fn queries_deleted(fake: &FakeConfluent) -> usize {
    let deleted = fake.deletes();
    let queries = fake.queries();
    for q in &queries {
        assert!(deleted.contains(q), "{q} not deleted: {deleted:?}");
        assert!(
            fake.phase(q).is_none_or(|p| p == "DELETING"),
            "{q}: {:?}",
            fake.phase(q)
        );
    }
    queries.len()
}

/// `report` with what changes from run to run replaced: `seconds`, query statement names, the
/// JUnit path, and `old` (a timestamp relative to the clock) wherever it appears.
fn normalised(report: &Value, old: &str) -> Value {
    fn walk(v: &mut Value, old: &str) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    match k.as_str() {
                        "seconds" => *x = json!(0),
                        "statement" if x.is_string() => *x = json!("<query>"),
                        "junit" if x.is_string() => *x = json!("<junit>"),
                        _ => walk(x, old),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, old)),
            Value::String(s) => *s = s.replace(old, "<old>"),
            _ => {}
        }
    }
    let mut v = report.clone();
    walk(&mut v, old);
    v
}

fn by_name(report: &Value) -> std::collections::BTreeMap<String, Value> {
    report["tables"][0]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

#[test]
fn every_kind_of_live_test_passes_on_good_rows_with_junit_and_no_query_left() {
    let fake = FakeConfluent::start();
    let t = project(&fake, TESTS);
    fake.add_query("WHERE paid_orders < 0", script(&[]));
    fake.add_query(
        &format!("FROM `{TABLE}`"),
        script(&[
            json!(["1", "gold", "3", stamp(60)]),
            json!(["2", "silver", "5", stamp(120)]),
        ]),
    );
    let junit = t.root.join("out/live.xml");
    std::fs::create_dir_all(junit.parent().unwrap()).unwrap();
    let o = t.cmd(&[
        "--output",
        "json",
        "pipeline",
        "test-live",
        "pipelines",
        "--junit",
        junit.to_str().unwrap(),
        "--idle",
        "1",
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert_eq!(
        (&v["passed"], &v["failed"], &v["errors"]),
        (&json!(7), &json!(0), &json!(0)),
        "{v:#}"
    );
    assert_eq!(v["tables"][0]["table"], TABLE);
    assert_eq!(v["tables"][0]["file"], TESTS_FILE);
    let t = by_name(&v);
    let names: Vec<&str> = t.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "accepted_values_loyalty_tier",
            "freshness_updated_at",
            "no_negative_orders",
            "not_null_loyalty_tier",
            "row_count",
            "unique_key",
            "unique_loyalty_tier_paid_orders"
        ]
    );
    assert_eq!(
        t["row_count"]["message"],
        "2 rows, expected between 2 and 3"
    );
    assert_eq!(t["not_null_loyalty_tier"]["line"], 3);
    assert_eq!(t["no_negative_orders"]["line"], 9);
    assert_eq!(
        t["no_negative_orders"]["sql"],
        format!("SELECT * FROM `{TABLE}` WHERE paid_orders < 0")
    );
    assert!(
        t["freshness_updated_at"]["message"]
            .as_str()
            .unwrap()
            .starts_with("newest updated_at "),
        "{:#}",
        t["freshness_updated_at"]
    );
    // Three reads: the folded snapshot, the unfolded one for `unique: key`, the custom query; all
    // deleted.
    assert_eq!(queries_deleted(&fake), 3);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            r#"<testsuites name="flinkpipe live tests" tests="7" failures="0" errors="0""#
        ),
        "{xml}"
    );
    assert!(
        xml.contains(&format!(
            r#"<testcase classname="{TABLE}" name="{TABLE}.no_negative_orders""#
        )),
        "{xml}"
    );
    assert!(!xml.contains("<failure"), "{xml}");
}

#[test]
fn every_kind_of_live_test_fails_on_bad_rows_with_its_failing_rows() {
    let fake = FakeConfluent::start();
    let t = project(&fake, TESTS);
    let old_wire = stamp(7200);
    let old = iso(&old_wire);
    fake.add_query(
        "WHERE paid_orders < 0",
        script(&[json!(["5", "gold", "-1", old_wire])]),
    );
    fake.add_query(
        &format!("FROM `{TABLE}`"),
        script(&[
            json!(["1", null, "3", old_wire]),
            json!(["2", "bronze", "3", old_wire]),
            json!(["3", "gold", "3", old_wire]),
            json!(["4", "gold", "3", old_wire]),
            json!(["2", "bronze", "3", old_wire]),
        ]),
    );
    let junit = t.root.join("live.xml");
    let o = t.cmd(&[
        "--output",
        "json",
        "pipeline",
        "test-live",
        "pipelines",
        "--table-name",
        TABLE,
        "--max-failing-rows",
        "1",
        "--junit",
        junit.to_str().unwrap(),
        "--idle",
        "1",
    ]);
    let o = o.code(1);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    assert_eq!(
        (&v["passed"], &v["failed"], &v["errors"]),
        (&json!(0), &json!(7), &json!(0)),
        "{v:#}"
    );
    let tests = by_name(&v);
    let got = |n: &str| {
        (
            tests[n]["message"].as_str().unwrap().to_string(),
            tests[n]["failing_count"].as_u64().unwrap(),
            tests[n]["failing_rows"].clone(),
        )
    };
    assert_eq!(
        got("not_null_loyalty_tier"),
        (
            "1 row(s) NULL in loyalty_tier".into(),
            1,
            json!([[1, null, 3, old]])
        )
    );
    // The upsert key, on the unfolded read: key 2 arrived twice.
    assert_eq!(
        got("unique_key"),
        (
            "2 row(s) sharing a value of (customer_id) (1 duplicated value(s))".into(),
            2,
            json!([[2, "bronze", 3, old]])
        )
    );
    // Columns, on the snapshot folded by the key: (gold, 3) twice.
    assert_eq!(
        got("unique_loyalty_tier_paid_orders"),
        (
            "2 row(s) sharing a value of (loyalty_tier, paid_orders) (1 duplicated value(s))"
                .into(),
            2,
            json!([[3, "gold", 3, old]])
        )
    );
    assert_eq!(
        got("accepted_values_loyalty_tier"),
        (
            "1 row(s) loyalty_tier not in [gold, silver]".into(),
            1,
            json!([[2, "bronze", 3, old]])
        )
    );
    assert_eq!(
        got("row_count"),
        ("4 rows, expected between 2 and 3".into(), 0, json!([]))
    );
    assert_eq!(
        got("freshness_updated_at").0,
        format!("newest updated_at {old} is 2h00m old (max 15m)")
    );
    assert_eq!(
        got("no_negative_orders"),
        (
            "1 row(s) returned by the query".into(),
            1,
            json!([[5, "gold", -1, old]])
        )
    );
    assert_eq!(queries_deleted(&fake), 3);
    // The whole report, as a golden file (times, query names, paths and the clock's timestamps
    // normalised).
    insta::assert_json_snapshot!("live_tests_failing_report", normalised(&v, &old));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            r#"<testsuites name="flinkpipe live tests" tests="7" failures="7" errors="0""#
        ),
        "{xml}"
    );
    assert_eq!(xml.matches("<failure ").count(), 7, "{xml}");
    assert!(
        xml.contains(&format!(
            "{TESTS_FILE}:4: 2 row(s) sharing a value of (customer_id) (1 duplicated value(s))\n  customer_id=2, loyalty_tier=bronze, paid_orders=3, updated_at={old}\n  … 1 more</failure>"
        )),
        "{xml}"
    );
    // The text report names each failure with its file and line.
    let o = t.cmd(&["pipeline", "test-live", "pipelines", "--idle", "1"]);
    let o = o.code(1);
    let text = o.stdout();
    assert!(
        text.contains(&format!(
            "FAIL {TABLE}.not_null_loyalty_tier: {TESTS_FILE}:3: 1 row(s) NULL in loyalty_tier\n  customer_id=1, loyalty_tier=NULL, paid_orders=3, updated_at={old}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("0 passed, 7 failed, 0 errors (Confluent Cloud)"),
        "{text}"
    );
}

#[test]
fn a_bad_live_tests_file_is_refused_with_file_and_line_before_any_query() {
    let fake = FakeConfluent::start();
    let t = project(
        &fake,
        "tests:\n  - not_null: [a]\n  - row_count: {min: 1}\n    freshness: {column: ts, max_age: 1h}\n",
    );
    t.cmd(&["pipeline", "test-live", "pipelines"])
        .code(1)
        .stderr_is(&format!(
            "error: {TESTS_FILE}:3: one check per test (row_count, freshness given): make them separate items\n"
        ));
    assert!(fake.created().is_empty(), "{:?}", fake.created());
    // A custom query that writes is refused the same way.
    std::fs::write(
        t.root.join(TESTS_FILE),
        "tests:\n  - row_count: {min: 1}\n  - sql: INSERT INTO {table} SELECT * FROM {table}\n",
    )
    .unwrap();
    t.cmd(&["pipeline", "test-live", "pipelines"])
        .code(2)
        .stderr_is(&format!(
            "error: {TESTS_FILE}:3:1: `sql query` is for reading: this INSERT statement writes or defines (deploy it with `pipeline deploy`)\n"
        ));
    assert!(fake.created().is_empty(), "{:?}", fake.created());
}

#[test]
fn blue_green_tests_the_green_tables_of_the_open_release() {
    let fake = FakeConfluent::start();
    let t = project(&fake, "tests:\n  - row_count: {min: 1}\n");
    std::fs::write(
        t.root.join("pipelines/blue_green.json"),
        serde_json::to_string_pretty(&json!({
            "format": 1,
            "releases": [{
                "created_at": "2026-12-01T10:00:00Z",
                "base_ref": "main",
                "base_commit": "0".repeat(40),
                "statement_prefix": "dev-usw2",
                "tables": [{
                    "blue_table_name": "c360_fct_customer_orders_old",
                    "green_table_name": TABLE,
                    "product_name": "c360",
                    "blue_statements": [],
                    "green_statements": [],
                    "reason": "logic change"
                }]
            }]
        }))
        .unwrap(),
    )
    .unwrap();
    fake.add_query(
        &format!("FROM `{TABLE}`"),
        script(&[json!(["1", "gold", "3", stamp(0)])]),
    );
    let o = t.cmd(&[
        "--output",
        "json",
        "pipeline",
        "test-live",
        "pipelines",
        "--blue-green",
        "--idle",
        "1",
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    let tables: Vec<&str> = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["table"].as_str().unwrap())
        .collect();
    assert_eq!(tables, [TABLE]);
    assert_eq!(v["passed"], 1);
    assert_eq!(queries_deleted(&fake), 1);
    // A table outside the release is refused with --blue-green.
    let o = t.cmd(&[
        "pipeline",
        "test-live",
        "pipelines",
        "--blue-green",
        "--table-name",
        "c360_dim_customers",
    ]);
    let o = o.code(2);
    assert!(
        o.stderr().contains("not a green table of the open release"),
        "{}",
        o.stderr()
    );
}

/// A read cut by `--idle` (the result never ends) is a partial snapshot: the test that would pass
/// is an ERROR, the command fails, and the query is deleted all the same.
#[test]
fn a_partial_read_never_passes() {
    let fake = FakeConfluent::start();
    let t = project(&fake, "tests:\n  - not_null: [loyalty_tier]\n");
    let mut s = script(&[json!(["1", "gold", "3", stamp(0)])]);
    s.bounded = false;
    fake.add_query(&format!("FROM `{TABLE}`"), s);
    let o = t.cmd(&[
        "--output",
        "json",
        "pipeline",
        "test-live",
        "pipelines",
        "--idle",
        "1",
    ]);
    let o = o.code(1);
    let v: Value = serde_json::from_str(&o.stdout()).unwrap();
    let t = &v["tables"][0]["tests"][0];
    assert_eq!(t["verdict"], "ERROR", "{t:#}");
    assert_eq!(
        t["message"],
        "no NULL in loyalty_tier (1 rows), but the read stopped before the table's end (idle or timeout): a partial snapshot proves nothing"
    );
    assert_eq!((&v["passed"], &v["errors"]), (&json!(0), &json!(1)));
    assert_eq!(queries_deleted(&fake), 1);
}
