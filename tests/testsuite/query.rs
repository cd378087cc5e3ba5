//! `sql query` and `table preview` against the Confluent fake's results endpoint: snapshots folded
//! from changelogs (keyed and not), `--changelog`, bounded and unbounded results (end, idle,
//! max rows), 409 not ready, typed values, every output format, the query statement always deleted,
//! and bad input refused before any server is contacted.

use crate::fake_confluent::{FakeConfluent, QueryScript};
use crate::support::Test;
use crate::support::confluent::col;
use serde_json::{Value, json};

/// A per-store count that is updated: two keys, one update pair, then an upsert without -U.
fn counts() -> QueryScript {
    QueryScript {
        columns: json!([
            col("store_id", "INTEGER"),
            col("orders", "BIGINT"),
            json!({"name": "amount", "type": {"type": "DECIMAL", "precision": 10, "scale": 2}})
        ]),
        upsert_columns: Some(vec![0]),
        pages: vec![
            vec![
                (None, json!(["1", "1", "10.50"])),
                (Some(0), json!(["2", "1", "3.00"])),
            ],
            vec![],
            vec![
                (Some(1), json!(["1", "1", "10.50"])),
                (Some(2), json!(["1", "2", "21"])),
            ],
            vec![(Some(2), json!(["2", "2", "6.25"]))],
        ],
        bounded: true,
        not_ready_reads: 2,
        ..QueryScript::default()
    }
}

/// Every query statement was deleted (the fake shows DELETING until the next read).
fn queries_deleted(fake: &FakeConfluent) -> bool {
    let queries = fake.queries();
    !queries.is_empty() && queries.iter().all(|q| fake.was_deleted(q))
}

#[test]
fn a_changelog_folds_into_one_row_per_key_and_the_statement_is_deleted() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query("FROM orders_by_store", counts());
    let o = t.cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT store_id, COUNT(*) AS orders, SUM(amount) AS amount FROM orders_by_store GROUP BY store_id",
        ],
    );
    let o = o.success();
    let v = o.stdout_json();
    // Each row object keeps the columns' order (scripts and people read it so).
    let raw = o.stdout();
    let rows_at = raw.find("\"rows\"").unwrap();
    let at = |k: &str| raw[rows_at..].find(k).unwrap();
    assert!(
        at("\"store_id\"") < at("\"orders\"") && at("\"orders\"") < at("\"amount\""),
        "{raw}"
    );
    assert_eq!(
        v["columns"],
        json!([
            {"name": "store_id", "type": "INTEGER"},
            {"name": "orders", "type": "BIGINT"},
            {"name": "amount", "type": "DECIMAL(10, 2)"}
        ])
    );
    // A DECIMAL is a JSON number with its declared scale (`21` sent, `21.00` written).
    assert!(raw.contains(r#""amount": 21.00"#), "{raw}");
    assert_eq!(
        v["rows"],
        json!([
            {"store_id": 1, "orders": 2, "amount": 21.0},
            {"store_id": 2, "orders": 2, "amount": 6.25}
        ])
    );
    assert_eq!(v["complete"], true);
    assert_eq!(v["stopped_by"], "end");
    assert_eq!(v["key"], json!(["store_id"]));
    assert_eq!(v["change_count"], 5);
    let name = v["statement"].as_str().unwrap();
    assert!(name.starts_with("dev-usw2-query-"), "{name}");
    assert!(flinkpipe::plan::naming::is_valid_statement_name(name));
    assert!(queries_deleted(&fake), "{:?}", fake.deletes());
}

#[test]
fn changelog_output_lists_every_change_in_arrival_order() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query("FROM orders_by_store", counts());
    let v = t
        .cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM orders_by_store",
            "--changelog",
        ])
        .success()
        .stdout_json();
    let kinds: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["+I", "+I", "-U", "+U", "+U"]);
    assert_eq!(
        v["changes"][2]["row"],
        json!({"store_id": 1, "orders": 1, "amount": 10.5})
    );
    // Text: an op column, aligned columns with names and types.
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT * FROM orders_by_store",
        "--changelog",
    ]);
    let out = o.stdout();
    let o = o.success();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["op", "store_id", "orders", "amount"]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["INTEGER", "BIGINT", "DECIMAL(10,", "2)"]
    );
    assert!(lines[2].starts_with("--"));
    assert_eq!(
        lines[5].split_whitespace().collect::<Vec<_>>(),
        ["-U", "1", "1", "10.50"]
    );
    assert!(
        o.stderr().contains("2 row(s) from 5 change(s); complete"),
        "{}",
        o.stderr()
    );
}

#[test]
fn an_unbounded_query_stops_when_idle_or_at_max_rows_with_the_snapshot_so_far() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let mut script = counts();
    script.bounded = false;
    script.upsert_columns = None;
    fake.add_query("FROM endless", script);
    let v = t
        .cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM endless",
            "--idle",
            "0.5",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["complete"], false);
    assert_eq!(v["stopped_by"], "idle");
    // No key: a multiset of whole rows, -U removes one equal row.
    assert_eq!(v["key"], Value::Null);
    assert_eq!(v["rows"].as_array().unwrap().len(), 3, "{v:#}");
    assert!(queries_deleted(&fake));
    let v = t
        .cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM endless",
            "--max-rows",
            "1",
            "--idle",
            "0.5",
        ])
        .success()
        .stdout_json();
    // An updating result is folded to the stop condition, then its first row printed.
    assert_eq!(v["stopped_by"], "idle");
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    assert_eq!(v["total_rows"], 3);
    assert_eq!(v["partial"], true);
}

#[test]
fn csv_and_jsonl_formats() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query("FROM orders_by_store", counts());
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT * FROM orders_by_store",
        "--format",
        "csv",
    ]);
    assert_eq!(o.stdout(), "store_id,orders,amount\n1,2,21.00\n2,2,6.25\n");
    fake.add_query("FROM orders_by_store", counts());
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT * FROM orders_by_store",
        "--format",
        "jsonl",
    ]);
    assert_eq!(
        o.stdout(),
        "{\"store_id\":1,\"orders\":2,\"amount\":21.00}\n{\"store_id\":2,\"orders\":2,\"amount\":6.25}\n"
    );
}

#[test]
fn a_preview_reads_the_table_from_the_start_keyed_by_its_primary_key() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query(
        "FROM `c360_fct_customer_orders`",
        QueryScript {
            columns: json!([col("customer_id", "BIGINT"), col("orders", "BIGINT")]),
            upsert_columns: None,
            pages: vec![vec![
                (None, json!(["7", "1"])),
                (Some(2), json!(["7", "2"])),
                (None, json!(["8", "1"])),
            ]],
            bounded: true,
            not_ready_reads: 0,
            ..QueryScript::default()
        },
    );
    let v = t
        .cmd(&[
            "--output",
            "json",
            "table",
            "preview",
            "c360_fct_customer_orders",
            "pipelines",
            "--where",
            "orders > 0",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["table_name"], "c360_fct_customer_orders");
    assert_eq!(
        v["sql"],
        "SELECT * FROM `c360_fct_customer_orders` WHERE orders > 0"
    );
    // Keyed by the table's primary key (customer_id): the +U replaces customer 7's row.
    assert_eq!(v["key"], json!(["customer_id"]));
    assert_eq!(
        v["rows"],
        json!([{"customer_id": 7, "orders": 2}, {"customer_id": 8, "orders": 1}])
    );
    let name = v["statement"].as_str().unwrap();
    let post = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "POST" && r.body_name.as_deref() == Some(name))
        .unwrap();
    let body: Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(
        body["spec"]["properties"]["sql.tables.scan.startup.mode"],
        "earliest-offset"
    );
    assert_eq!(
        body["spec"]["properties"]["sql.tables.scan.bounded.mode"],
        "latest-offset"
    );
    // The current version of a table is found from its unversioned name; unknown names get a hint.
    t.cmd(&["table", "preview", "c360_fct_customer_order", "pipelines"])
        .code(1)
        .stderr_is(
            "error: unknown table 'c360_fct_customer_order' (did you mean 'c360_fct_customer_orders'?)\n",
        );
}

#[test]
fn a_query_that_fails_reports_the_engine_message_and_is_deleted() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let o = t.cmd(&["sql", "query", "SELECT * FROM FAIL_ME"]);
    let o = o.code(1);
    assert!(
        o.stderr()
            .contains("SQL validation failed. Object 'FAIL_ME' not found"),
        "{}",
        o.stderr()
    );
    assert!(queries_deleted(&fake), "{:?}", fake.deletes());
}

#[test]
fn writing_sql_and_several_statements_are_refused_before_any_server_is_contacted() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    for (sql, expected) in [
        (
            "INSERT INTO t SELECT * FROM s",
            "error: command line:1: `sql query` is for reading: this INSERT statement writes or defines (deploy it with `pipeline deploy`)\n",
        ),
        (
            "CREATE TABLE t (a INT) WITH ('connector' = 'datagen')",
            "error: command line:1: `sql query` is for reading: this CREATE statement writes or defines (deploy it with `pipeline deploy`)\n",
        ),
        (
            "SELECT 1;\nSELECT 2;",
            "error: command line:2: one query at a time (2 statements given)\n",
        ),
        ("   ", "error: command line: no query to run\n"),
    ] {
        t.cmd(&["sql", "query", sql]).code(2).stderr_is(expected);
    }
    assert_eq!(fake.request_count(), 0);
}

/// `--follow` prints a snapshot each time the result changes (one JSON line each with
/// `--output json`), never the same one twice, until the timeout; the query is then deleted.
#[test]
fn follow_prints_each_changed_snapshot_once() {
    let fake = FakeConfluent::start();
    let mut script = counts();
    script.bounded = false;
    fake.add_query("FROM live_counts", script);
    let t = Test::fixture().confluent(&fake).args(&[
        "--output",
        "json",
        "sql",
        "query",
        "SELECT * FROM live_counts",
        "--follow",
        "--timeout",
        "4",
    ]);
    let out = t.run().success().stdout();
    let snapshots: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // After the first page (two stores), then after the updates (store 1 at 2 orders, store 2 at 2).
    assert_eq!(snapshots.len(), 2, "{out}");
    assert_eq!(
        snapshots[0]["rows"],
        json!([
            {"store_id": 1, "orders": 1, "amount": 10.5},
            {"store_id": 2, "orders": 1, "amount": 3.0}
        ])
    );
    assert_eq!(
        snapshots[1]["rows"],
        json!([
            {"store_id": 1, "orders": 2, "amount": 21.0},
            {"store_id": 2, "orders": 2, "amount": 6.25}
        ])
    );
    assert!(queries_deleted(&fake));
}

/// Waits (up to 20 s) until `ready` holds.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue #29 item 5: `sql query` and `table preview` stopped by SIGTERM (`kill`, `timeout`, CI
/// cancellation), SIGHUP (a closed terminal) or SIGINT while their query runs: the query statement is
/// deleted before the process ends, whichever signal it was.
#[test]
fn a_query_stopped_by_any_signal_deletes_its_statement() {
    let endless = |fake: &FakeConfluent, from: &str| {
        let mut script = counts();
        script.bounded = false;
        script.pages.push(vec![]);
        fake.add_query(from, script);
    };
    for (signal, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
    ] {
        for preview in [false, true] {
            let case = format!("{name} {}", if preview { "preview" } else { "query" });
            let fake = FakeConfluent::start();
            endless(&fake, "FROM endless");
            endless(&fake, "FROM `c360_fct_customer_orders`");
            let args: Vec<&str> = if preview {
                vec![
                    "table",
                    "preview",
                    "c360_fct_customer_orders",
                    "pipelines",
                    "--idle",
                    "60",
                    "--timeout",
                    "60",
                ]
            } else {
                vec![
                    "sql",
                    "query",
                    "SELECT * FROM endless",
                    "--idle",
                    "60",
                    "--timeout",
                    "60",
                ]
            };
            let t = Test::fixture().confluent(&fake);
            let child = t
                .command(&args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // Its results are being read: the query runs.
            wait_for(&format!("{case}: reading results"), || {
                fake.requests()
                    .iter()
                    .any(|r| r.method == "GET" && r.path.ends_with("/results"))
            });
            // SAFETY: our own child, still running (it reads until 60 s).
            unsafe { libc::kill(child.id() as libc::pid_t, signal) };
            let out = t.outcome(&case, child.wait_with_output().unwrap()).output;
            assert!(
                out.status.code().is_some(),
                "{case}: killed by the signal instead of handling it: {:?}",
                out.status
            );
            assert!(queries_deleted(&fake), "{case}: {:?}", fake.phases());
        }
    }
}

/// A query whose create answer is lost (the server stored the statement, the connection dropped):
/// the command fails, and the stored statement is looked up by name and deleted.
#[test]
fn a_query_whose_create_answer_is_lost_is_deleted() {
    use crate::fake_confluent::{Fault, FaultAction};
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let mut script = counts();
    script.bounded = false;
    fake.add_query("FROM endless", script);
    fake.add_fault(Fault::new(Some("POST"), None, FaultAction::DropAfter, 1));
    let o = t.cmd(&["sql", "query", "SELECT * FROM endless"]);
    o.code(1);
    let stored: Vec<String> = fake
        .created()
        .into_iter()
        .filter(|n| n.contains("-query-"))
        .collect();
    assert_eq!(stored.len(), 1, "the POST was processed: {stored:?}");
    assert!(queries_deleted(&fake), "{:?}", fake.phases());
}

/// The clean-up of a query retries its delete through a burst of 429s longer than one request's
/// own retries (bounded in time), instead of giving up and leaving the query running.
#[test]
fn a_query_clean_up_retries_through_429s() {
    use crate::fake_confluent::Fault;
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query("FROM bounded", counts());
    fake.add_fault(Fault::too_many(Some("DELETE"), 1, 7));
    let o = t.cmd(&["--output", "json", "sql", "query", "SELECT * FROM bounded"]);
    let o = o.success();
    assert!(
        !o.stderr().contains("could not be stopped"),
        "{}",
        o.stderr()
    );
    let deletes = fake
        .requests()
        .iter()
        .filter(|r| r.method == "DELETE")
        .count();
    assert_eq!(deletes, 8, "7 answered 429, the 8th deleted it");
    assert!(queries_deleted(&fake), "{:?}", fake.phases());
}

/// Two keys whose updates interleave; a read that stops between a `-U` and its `+U`.
fn regions(pages: Vec<Vec<(Option<u8>, Value)>>, bounded: bool) -> QueryScript {
    QueryScript {
        columns: json!([col("region", "STRING"), col("n", "BIGINT")]),
        upsert_columns: Some(vec![0]),
        pages,
        bounded,
        ..QueryScript::default()
    }
}

#[test]
fn a_keyed_result_keeps_a_key_between_its_update_before_and_after() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    // Unbounded: the read idles out right after the -U page, before its +U arrives.
    fake.add_query(
        "FROM by_region",
        regions(
            vec![
                vec![(None, json!(["EU", "1"])), (None, json!(["US", "1"]))],
                vec![(Some(1), json!(["EU", "1"]))],
            ],
            false,
        ),
    );
    let v = t
        .cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM by_region",
            "--idle",
            "0.5",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["key"], json!(["region"]));
    assert_eq!(
        v["rows"],
        json!([{"region": "EU", "n": 1}, {"region": "US", "n": 1}])
    );
    assert_eq!(v["inconsistencies"], json!([]));
    // Bounded, with the +U and a -D: only the -D removes a key.
    fake.add_query(
        "FROM region_totals",
        regions(
            vec![
                vec![(None, json!(["EU", "1"])), (None, json!(["US", "1"]))],
                vec![(Some(1), json!(["EU", "1"])), (Some(2), json!(["EU", "2"]))],
                vec![(Some(1), json!(["US", "1"])), (Some(3), json!(["US", "1"]))],
            ],
            true,
        ),
    );
    let v = t
        .cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM region_totals",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["rows"], json!([{"region": "EU", "n": 2}]));
    assert_eq!(v["complete"], true);
}

#[test]
fn a_statement_that_fails_and_then_ends_is_a_failure_and_is_deleted() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let mut s = regions(
        vec![
            vec![(None, json!(["EU", "1"]))],
            vec![(None, json!(["US", "1"]))],
        ],
        true,
    );
    s.fail_at = Some((1, "Deserialization error at offset 42".into()));
    s.fail_ends = true;
    fake.add_query("FROM failing_end", s);
    let o = t.cmd(&[
        "--output",
        "json",
        "sql",
        "query",
        "SELECT * FROM failing_end",
    ]);
    let o = o.code(1);
    assert!(
        o.stderr().contains("Deserialization error at offset 42"),
        "{}",
        o.stderr()
    );
    assert!(!o.stdout().contains("\"complete\": true"), "{}", o.stdout());
    assert!(queries_deleted(&fake), "{:?}", fake.deletes());
}

#[test]
fn a_statement_that_fails_mid_stream_is_a_failure_whatever_stops_the_read() {
    for stop in [
        &["--idle", "0.3"][..],
        &["--timeout", "1"][..],
        &["--max-rows", "2"][..],
    ] {
        let fake = FakeConfluent::start();
        let t = Test::fixture().confluent(&fake);
        let mut s = regions(
            vec![
                vec![(None, json!(["EU", "1"]))],
                vec![(None, json!(["US", "1"]))],
            ],
            false,
        );
        s.fail_at = Some((1, "Table 'x' does not exist".into()));
        fake.add_query("FROM failing_mid", s);
        let mut args = vec![
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM failing_mid",
        ];
        args.extend_from_slice(stop);
        let o = t.cmd(&args);
        let o = o.code(1);
        assert!(
            o.stderr().contains("Table 'x' does not exist"),
            "{stop:?}: {}",
            o.stderr()
        );
        assert!(queries_deleted(&fake), "{stop:?}");
    }
}

#[test]
fn next_links_are_followed_as_given_with_the_parameters_the_service_adds() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let mut s = regions(
        vec![
            vec![(None, json!(["EU", "1"]))],
            vec![(None, json!(["US", "1"]))],
            vec![(Some(2), json!(["US", "3"]))],
        ],
        true,
    );
    s.next_param = Some(("cursor_hint".into(), "abc".into()));
    fake.add_query("FROM linked", s);
    let v = t
        .cmd(&["--output", "json", "sql", "query", "SELECT * FROM linked"])
        .success()
        .stdout_json();
    assert_eq!(
        v["rows"],
        json!([{"region": "EU", "n": 1}, {"region": "US", "n": 3}])
    );
    assert_eq!(v["complete"], true);
}

#[test]
fn nested_types_on_confluent_are_named_and_typed_recursively() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query(
        "FROM nested_things",
        QueryScript {
            columns: json!([
                {"name": "ids", "type": {"type": "ARRAY", "nullable": true, "element_type": {"type": "INTEGER", "nullable": true}}},
                {"name": "tags", "type": {"type": "MAP", "nullable": true, "key_type": {"type": "VARCHAR", "length": 2147483647}, "value_type": {"type": "BIGINT"}}},
                {"name": "by_id", "type": {"type": "MAP", "nullable": true, "key_type": {"type": "INTEGER"}, "value_type": {"type": "VARCHAR", "length": 2147483647}}},
                {"name": "bag", "type": {"type": "MULTISET", "nullable": true, "element_type": {"type": "VARCHAR", "length": 2147483647}}},
                {"name": "who", "type": {"type": "ROW", "nullable": true, "fields": [
                    {"name": "id", "field_type": {"type": "BIGINT"}},
                    {"name": "at", "field_type": {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 3}}
                ]}}
            ]),
            pages: vec![vec![(
                None,
                json!([
                    ["1", "2", null],
                    [["a", "7"]],
                    [["3", "x"]],
                    [["red", "2"]],
                    ["42", "2025-01-01 10:00:00.000"]
                ]),
            )]],
            bounded: true,
            ..QueryScript::default()
        },
    );
    let v = t
        .cmd(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM nested_things",
        ])
        .success()
        .stdout_json();
    let types: Vec<&str> = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "ARRAY<INTEGER>",
            "MAP<STRING, BIGINT>",
            "MAP<INTEGER, STRING>",
            "MULTISET<STRING>",
            "ROW<id BIGINT, at TIMESTAMP(3)>"
        ]
    );
    assert_eq!(
        v["rows"][0],
        json!({
            "ids": [1, 2, null],
            "tags": {"a": 7},
            "by_id": [[3, "x"]],
            "bag": {"red": 2},
            "who": {"id": 42, "at": "2025-01-01T10:00:00.000"}
        })
    );
}

#[test]
fn csv_tells_null_from_the_empty_string() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query(
        "FROM notes",
        QueryScript {
            columns: json!([col("id", "INTEGER"), col("note", "STRING")]),
            pages: vec![vec![
                (None, json!(["1", null])),
                (None, json!(["2", ""])),
                (None, json!(["3", "a, \"b\""])),
            ]],
            bounded: true,
            ..QueryScript::default()
        },
    );
    let o = t.cmd(&["sql", "query", "SELECT * FROM notes", "--format", "csv"]);
    let o = o.success();
    assert_eq!(o.stdout(), "id,note\n1,\n2,\"\"\n3,\"a, \"\"b\"\"\"\n");
}

/// A bounded result of `(customer_id, orders)` rows, one page: what release-check reads on each side.
fn orders_script(rows: &[(&str, &str)]) -> QueryScript {
    QueryScript {
        columns: json!([col("customer_id", "BIGINT"), col("orders", "BIGINT")]),
        pages: vec![rows.iter().map(|(k, v)| (None, json!([k, v]))).collect()],
        bounded: true,
        ..QueryScript::default()
    }
}

/// `pipeline release-check` reads blue and green as `table preview` does and compares them by the
/// green table's primary key: a key only in blue and a changed value are `differs` (exit 1) until
/// they are declared with `--expect-diff`; every query statement is deleted.
#[test]
fn release_check_compares_blue_and_green_by_key_and_honours_declared_differences() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let script = |rows: &[(&str, &str)]| orders_script(rows);
    fake.add_query(
        "FROM `c360_fct_customer_orders_blue`",
        script(&[("7", "2"), ("8", "1"), ("9", "1")]),
    );
    fake.add_query(
        "FROM `c360_fct_customer_orders`",
        script(&[("7", "2"), ("8", "5")]),
    );
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "--output",
            "json",
            "pipeline",
            "release-check",
            "pipelines",
            "--table-name",
            "c360_fct_customer_orders_blue=c360_fct_customer_orders",
            "--idle",
            "1",
        ];
        a.extend_from_slice(extra);
        a
    };
    let o = t.cmd(&args(&[]));
    let o = o.code(1);
    let v = o.stdout_json();
    assert_eq!(v["verdict"], "differs", "{v:#}");
    let table = &v["tables"][0];
    assert_eq!(table["key"], json!(["customer_id"]));
    assert_eq!(
        (
            &table["blue_rows"],
            &table["green_rows"],
            &table["only_in_blue"],
            &table["only_in_green"],
            &table["values_differ"]
        ),
        (&json!(3), &json!(2), &json!(1), &json!(0), &json!(1)),
        "{table:#}"
    );
    // Sample rows in column order.
    assert_eq!(table["only_in_blue_samples"], json!([[9, 1]]));
    // Declared: the orders column changes and keys may leave.
    let o = t.cmd(&args(&[
        "--expect-diff",
        "c360_fct_customer_orders.orders",
        "--expect-diff",
        "c360_fct_customer_orders.customer_id",
    ]));
    let v = o.success().stdout_json();
    assert_eq!(v["verdict"], "expected-difference", "{v:#}");
    assert!(queries_deleted(&fake));
}

/// A pair that cannot be read does not stop the check: every pair is reported, the unreadable one
/// `unreadable` with the target's reason (masked), and the release fails; the others are compared.
#[test]
fn release_check_reports_every_pair_and_marks_the_unreadable_one() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let script = |rows: &[(&str, &str)], fail: Option<&str>| QueryScript {
        fail_at: fail.map(|d| (0, d.to_string())),
        fail_ends: fail.is_some(),
        ..orders_script(rows)
    };
    // The first pair's blue side fails to read; the second pair is identical on both sides.
    fake.add_query(
        "FROM `c360_fct_customer_orders_blue`",
        script(
            &[],
            Some("Object 'c360_fct_customer_orders_blue' not found"),
        ),
    );
    fake.add_query(
        "FROM `c360_fct_customer_orders`",
        script(&[("7", "2")], None),
    );
    fake.add_query(
        "FROM `c360_fct_engagement_blue`",
        script(&[("7", "2")], None),
    );
    fake.add_query("FROM `c360_fct_engagement`", script(&[("7", "2")], None));
    let o = t.cmd(&[
        "--output",
        "json",
        "pipeline",
        "release-check",
        "pipelines",
        "--table-name",
        "c360_fct_customer_orders_blue=c360_fct_customer_orders",
        "--table-name",
        "c360_fct_engagement_blue=c360_fct_engagement",
        "--idle",
        "1",
    ]);
    let v = o.code(1).stdout_json();
    assert_eq!(v["verdict"], "unreadable", "{v:#}");
    let tables = v["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2, "{v:#}");
    assert_eq!(tables[0]["verdict"], "unreadable");
    let why = tables[0]["unreadable"].as_str().unwrap();
    assert!(
        why.contains("c360_fct_customer_orders_blue") && why.contains("not found"),
        "{why}"
    );
    assert_eq!(tables[1]["verdict"], "same", "{v:#}");
    assert_eq!(tables[1]["unreadable"], Value::Null);
    let o = t.cmd(&[
        "pipeline",
        "release-check",
        "pipelines",
        "--table-name",
        "c360_fct_customer_orders_blue=c360_fct_customer_orders",
        "--table-name",
        "c360_fct_engagement_blue=c360_fct_engagement",
        "--idle",
        "1",
    ]);
    let o = o.code(1);
    let text = o.stdout();
    assert!(
        text.contains("unreadable: reading c360_fct_customer_orders_blue"),
        "{text}"
    );
    assert!(text.contains("release: unreadable"), "{text}");
    assert!(queries_deleted(&fake));
}

/// `release-check` also lists who still reads each blue table of the open release — here another
/// team's running statement, found in its SQL — without changing the verdict, in JSON, text and the
/// pull-request markdown; its own bounded queries are never listed.
#[test]
fn release_check_lists_who_still_reads_blue() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let script = |rows: &[(&str, &str)]| orders_script(rows);
    fake.add_query(
        "FROM `c360_fct_customer_orders_blue`",
        script(&[("7", "2"), ("8", "1")]),
    );
    fake.add_query(
        "FROM `c360_fct_customer_orders`",
        script(&[("7", "2"), ("8", "1")]),
    );
    let record = json!({"format": 1, "releases": [{
        "created_at": "2026-12-02T00:00:00Z", "base_ref": "main", "base_commit": null,
        "statement_prefix": "dev-usw2",
        "tables": [{"blue_table_name": "c360_fct_customer_orders_blue",
            "green_table_name": "c360_fct_customer_orders", "product_name": "c360",
            "blue_statements": [{"name": "dev-usw2-c360-dml-c360-fct-customer-orders-blue", "role": "job"}],
            "green_statements": [{"name": "dev-usw2-c360-dml-c360-fct-customer-orders", "role": "job"}],
            "reason": "logic change"}],
        "decommissioned": []}]});
    std::fs::write(
        t.root.join("pipelines/blue_green.json"),
        serde_json::to_string_pretty(&record).unwrap(),
    )
    .unwrap();
    fake.seed(
        "team-x-dml-churn",
        "INSERT INTO team_x_churn SELECT customer_id, orders FROM c360_fct_customer_orders_blue",
        "RUNNING",
    );
    let base = ["pipeline", "release-check", "pipelines", "--idle", "1"];
    let mut args = vec!["--output", "json"];
    args.extend(base);
    let v = t.cmd(&args).success().stdout_json();
    assert_eq!(v["verdict"], "same", "{v:#}");
    assert_eq!(
        v["readers"]["tables"],
        json!([{"blue_table_name": "c360_fct_customer_orders_blue",
            "green_table_name": "c360_fct_customer_orders",
            "topic": "c360_fct_customer_orders_blue", "cluster": null,
            "statements": [{"statement": "team-x-dml-churn", "phase": "RUNNING", "found_in": "sql_text"}],
            "consumer_groups": []}]),
        "{v:#}"
    );
    assert_eq!(v["readers"]["consumer_groups"]["kind"], "not_checked");
    let mut args = base.to_vec();
    args.extend(["--format", "markdown"]);
    let o = t.cmd(&args);
    let o = o.success();
    let md = o.stdout();
    assert!(md.contains("#### Who still reads blue"), "{md}");
    assert!(
        md.contains(
            "    statement team-x-dml-churn RUNNING (read in its SQL), blocks decommission\n"
        ),
        "{md}"
    );
    assert!(queries_deleted(&fake));
}

/// Issue #21 item 4: a DECIMAL keeps its exact digits and declared scale in every format — a JSON
/// number written with exactly those digits (one JSON type per column, whatever the wire sent: a
/// string, a short string, a number), the same text in table, CSV and JSONL; TIMESTAMP(9) keeps its
/// nanoseconds.
#[test]
fn decimals_keep_their_digits_and_scale_and_timestamps_their_nanoseconds_in_every_format() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let script = || QueryScript {
        columns: json!([
            col("id", "INTEGER"),
            {"name": "price", "type": {"type": "DECIMAL", "precision": 10, "scale": 2}},
            {"name": "big", "type": {"type": "DECIMAL", "precision": 38, "scale": 10}},
            {"name": "at", "type": {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 9}},
            {"name": "prices", "type": {"type": "ARRAY", "element_type": {"type": "DECIMAL", "precision": 5, "scale": 1}}}
        ]),
        pages: vec![vec![
            (
                None,
                json!([
                    "1",
                    "12.50",
                    "12345678901234567890.1234567890",
                    "2025-01-01 10:00:00.123456789",
                    ["1", "2.5"]
                ]),
            ),
            (
                None,
                json!([
                    "2",
                    "35",
                    "922337203685477.5807",
                    "2025-01-01 10:00:00.000000001",
                    []
                ]),
            ),
            (None, json!(["3", 0.1, "0E-10", null, null])),
        ]],
        bounded: true,
        ..QueryScript::default()
    };
    let sql = "SELECT * FROM prices";
    fake.add_query("FROM prices", script());
    let o = t.cmd(&["--output", "json", "sql", "query", sql]);
    let raw = o.stdout();
    for exact in [
        r#""price": 12.50"#,
        r#""big": 12345678901234567890.1234567890"#,
        r#""price": 35.00"#,
        r#""big": 922337203685477.5807000000"#,
        r#""price": 0.10"#,
        r#""big": 0.0000000000"#,
        r#""at": "2025-01-01T10:00:00.123456789""#,
        r#""at": "2025-01-01T10:00:00.000000001""#,
    ] {
        assert!(raw.contains(exact), "{exact} not in {raw}");
    }
    // One JSON type per column: numbers only (never a string next to a number).
    let v = o.success().stdout_json();
    for r in v["rows"].as_array().unwrap() {
        assert!(r["price"].is_number() && r["big"].is_number(), "{r}");
    }
    assert!(
        raw.replace([' ', '\n'], "")
            .contains(r#""prices":[1.0,2.5]"#),
        "{raw}"
    );
    fake.add_query("FROM prices", script());
    let o = t.cmd(&["sql", "query", sql, "--format", "csv"]);
    assert_eq!(
        o.stdout(),
        "id,price,big,at,prices\n\
         1,12.50,12345678901234567890.1234567890,2025-01-01T10:00:00.123456789,\"[1.0,2.5]\"\n\
         2,35.00,922337203685477.5807000000,2025-01-01T10:00:00.000000001,[]\n\
         3,0.10,0.0000000000,,\n"
    );
    fake.add_query("FROM prices", script());
    let o = t.cmd(&["sql", "query", sql, "--format", "jsonl"]);
    assert_eq!(
        o.stdout().lines().next().unwrap(),
        r#"{"id":1,"price":12.50,"big":12345678901234567890.1234567890,"at":"2025-01-01T10:00:00.123456789","prices":[1.0,2.5]}"#
    );
    fake.add_query("FROM prices", script());
    let o = t.cmd(&["sql", "query", sql]);
    let out = o.stdout();
    let row2: Vec<&str> = out.lines().nth(4).unwrap().split_whitespace().collect();
    assert_eq!(
        row2[..4],
        [
            "2",
            "35.00",
            "922337203685477.5807000000",
            "2025-01-01T10:00:00.000000001"
        ]
    );
}

/// Issue #21 item 5: `--max-rows N` / `table preview --limit N` on an updating result fold the
/// changelog to the stop condition, then print the first N rows of that snapshot (a customer's
/// current value, never an early one); a read that stopped early says the snapshot is partial. An
/// append-only result stops at N rows (its rows are final), partial too.
#[test]
fn a_row_limit_prints_the_first_rows_of_the_folded_snapshot_never_a_changelog_cut_midway() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    let windows = |bounded: bool| QueryScript {
        columns: json!([col("customer_id", "BIGINT"), col("orders", "BIGINT")]),
        upsert_columns: Some(vec![0]),
        pages: vec![
            vec![(None, json!(["7", "2"])), (None, json!(["8", "3"]))],
            vec![(Some(1), json!(["7", "2"])), (Some(2), json!(["7", "9"]))],
            vec![
                (Some(1), json!(["7", "9"])),
                (Some(2), json!(["7", "27"])),
                (Some(1), json!(["8", "3"])),
                (Some(2), json!(["8", "176"])),
            ],
        ],
        bounded,
        ..QueryScript::default()
    };
    fake.add_query("FROM customer_windows", windows(true));
    let o = t.cmd(&[
        "--output",
        "json",
        "sql",
        "query",
        "SELECT * FROM customer_windows",
        "--max-rows",
        "1",
    ]);
    let v = o.success().stdout_json();
    assert_eq!(v["rows"], json!([{"customer_id": 7, "orders": 27}]));
    assert_eq!(v["total_rows"], 2);
    assert_eq!(v["stopped_by"], "end");
    assert_eq!(
        (v["complete"].clone(), v["partial"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(v["change_count"], 8);
    assert!(queries_deleted(&fake));
    // Text: the summary says how many of the snapshot's rows are shown.
    fake.add_query("FROM customer_windows", windows(true));
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT * FROM customer_windows",
        "--max-rows",
        "1",
        "--format",
        "csv",
    ]);
    assert_eq!(o.stdout(), "customer_id,orders\n7,27\n");
    assert!(
        o.stderr()
            .contains("first 1 of 2 row(s) from 8 change(s); complete"),
        "{}",
        o.stderr()
    );
    // Unbounded: read to the idle stop, then cut; the snapshot is partial and the summary says so.
    fake.add_query("FROM live_windows", windows(false));
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT * FROM live_windows",
        "--max-rows",
        "2",
        "--idle",
        "0.5",
        "--format",
        "csv",
    ]);
    assert_eq!(o.stdout(), "customer_id,orders\n7,27\n8,176\n");
    assert!(
        o.stderr_raw().contains(
            "2 row(s) from 8 change(s); partial snapshot, stopped after 0.5s without new rows"
        ),
        "{}",
        o.stderr_raw()
    );
    // `table preview --limit` folds by the table's primary key the same way.
    fake.add_query("FROM `c360_fct_customer_orders`", {
        let mut s = windows(true);
        s.upsert_columns = None;
        s
    });
    let v = t
        .cmd(&[
            "--output",
            "json",
            "table",
            "preview",
            "c360_fct_customer_orders",
            "pipelines",
            "--limit",
            "1",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["key"], json!(["customer_id"]));
    assert_eq!(v["rows"], json!([{"customer_id": 7, "orders": 27}]));
    assert_eq!(v["total_rows"], 2);
    // An append-only result (`is_append_only`): its first rows are final, the read stops at them.
    fake.add_query(
        "FROM clicks",
        QueryScript {
            columns: json!([col("id", "BIGINT")]),
            pages: vec![
                vec![(None, json!(["1"])), (None, json!(["2"]))],
                vec![(None, json!(["3"]))],
            ],
            bounded: false,
            ..QueryScript::default()
        },
    );
    let o = t.cmd(&[
        "--output",
        "json",
        "sql",
        "query",
        "SELECT * FROM clicks",
        "--max-rows",
        "2",
    ]);
    let v = o.success().stdout_json();
    assert_eq!(v["rows"], json!([{"id": 1}, {"id": 2}]));
    assert_eq!(v["stopped_by"], "max_rows");
    assert_eq!(v["partial"], true);
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT * FROM clicks",
        "--max-rows",
        "2",
        "--format",
        "csv",
    ]);
    assert_eq!(o.stdout(), "id\n1\n2\n");
    assert!(
        o.stderr()
            .contains("2 row(s) from 2 change(s); partial snapshot, stopped at the row limit"),
        "{}",
        o.stderr()
    );
    assert!(queries_deleted(&fake));
}

/// Issue #21 item 1 with `--follow`: a keyed result whose `-U` and `+U` arrive in different pages,
/// with a snapshot boundary (an empty poll) between them, only ever shows states the result had:
/// `[(EU,1),(US,1)] → [(EU,2),(US,1)] → [(EU,2),(US,3)]`, never a snapshot without a key.
#[test]
fn follow_on_a_keyed_result_never_shows_a_state_the_result_never_had() {
    let fake = FakeConfluent::start();
    fake.add_query(
        "FROM live_regions",
        regions(
            vec![
                vec![(None, json!(["EU", "1"])), (None, json!(["US", "1"]))],
                vec![],
                vec![(Some(1), json!(["EU", "1"]))],
                vec![],
                vec![(Some(2), json!(["EU", "2"]))],
                vec![],
                vec![(Some(1), json!(["US", "1"]))],
                vec![],
                vec![(Some(2), json!(["US", "3"]))],
            ],
            false,
        ),
    );
    let out = Test::fixture()
        .confluent(&fake)
        .args(&[
            "--output",
            "json",
            "sql",
            "query",
            "SELECT * FROM live_regions",
            "--follow",
            "--timeout",
            "3",
        ])
        .run()
        .success()
        .stdout();
    let snapshots: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["rows"].clone())
        .collect();
    assert_eq!(
        snapshots,
        [
            json!([{"region": "EU", "n": 1}, {"region": "US", "n": 1}]),
            json!([{"region": "EU", "n": 2}, {"region": "US", "n": 1}]),
            json!([{"region": "EU", "n": 2}, {"region": "US", "n": 3}]),
        ],
        "{out}"
    );
    assert!(queries_deleted(&fake));
}

/// A retraction of a row the result does not hold is reported (stderr warning, JSON
/// `inconsistencies`), its values typed like the rows: a DECIMAL is a number with its scale.
#[test]
fn a_retraction_of_a_missing_row_is_reported_with_typed_values() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query(
        "FROM refunds",
        QueryScript {
            columns: json!([
                col("id", "INTEGER"),
                {"name": "amount", "type": {"type": "DECIMAL", "precision": 5, "scale": 2}}
            ]),
            pages: vec![vec![
                (None, json!(["1", "2.5"])),
                (Some(3), json!(["9", "1"])),
            ]],
            bounded: true,
            ..QueryScript::default()
        },
    );
    let o = t.cmd(&["--output", "json", "sql", "query", "SELECT * FROM refunds"]);
    assert!(
        o.stderr().contains(
            "warning[changelog]: change #2 -D retracts a row that is not in the result: [9,1.00]"
        ),
        "{}",
        o.stderr()
    );
    let raw = o.stdout().replace([' ', '\n'], "");
    assert!(
        raw.contains(r#""inconsistencies":[{"position":1,"kind":"-D","row":[9,1.00]}]"#),
        "{raw}"
    );
    assert!(raw.contains(r#""rows":[{"id":1,"amount":2.50}]"#), "{raw}");
}

/// Issue #44 item 8: `table preview NAME --side blue` reads the blue table of a blue-green pair (the
/// version before the one the name resolves to) through the green definition; an unversioned table
/// has no blue side.
#[test]
fn preview_side_blue_reads_the_version_before() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake).file(
        "pipelines/sources/sales/src_refunds/sql-scripts/ddl.src_sales_refunds_v2.sql",
        "CREATE TABLE IF NOT EXISTS src_sales_refunds_v2 (\n  refund_id BIGINT,\n  amount DECIMAL(10, 2),\n  PRIMARY KEY (refund_id) NOT ENFORCED\n);\n",
    );
    fake.add_query(
        "FROM `src_sales_refunds`",
        QueryScript {
            columns: json!([col("refund_id", "BIGINT"), col("amount", "DECIMAL(10, 2)")]),
            pages: vec![vec![(None, json!(["1", "2.50"]))]],
            bounded: true,
            ..QueryScript::default()
        },
    );
    let v = t
        .cmd(&[
            "--output",
            "json",
            "table",
            "preview",
            "src_sales_refunds",
            "pipelines",
            "--side",
            "blue",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["sql"], "SELECT * FROM `src_sales_refunds`", "{v:#}");
    assert_eq!(v["rows"], json!([{"refund_id": 1, "amount": 2.5}]), "{v:#}");
    t.cmd(&[
        "table",
        "preview",
        "c360_fct_customer_orders",
        "pipelines",
        "--side",
        "blue",
    ])
    .code(2)
    .stderr_has("--side blue: c360_fct_customer_orders has no version suffix");
}

/// Issue #44 item 9: an aggregate over tables read without a bound says up front that only --idle or
/// --timeout ends it, and how to bound it.
#[test]
fn an_unbounded_aggregate_says_so_up_front() {
    let fake = FakeConfluent::start();
    let t = Test::fixture().confluent(&fake);
    fake.add_query(
        "GROUP BY",
        QueryScript {
            columns: json!([col("store_id", "BIGINT"), col("n", "BIGINT")]),
            pages: vec![vec![(None, json!(["1", "2"]))]],
            bounded: true,
            ..QueryScript::default()
        },
    );
    let o = t.cmd(&[
        "sql",
        "query",
        "SELECT store_id, COUNT(*) AS n FROM src_sales_orders GROUP BY store_id",
    ]);
    let o = o.success();
    assert!(
        o.stderr_raw()
            .contains("warning[unbounded]: the query aggregates over tables read without a bound")
            && o.stderr_raw().contains("scan.bounded.mode"),
        "{}",
        o.stderr_raw()
    );
}
