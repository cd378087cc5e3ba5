//! Day-2 commands on the local Flink 2.2 + SQL Gateway + Kafka stack (`scripts/local-flink.sh up`),
//! on a one-table project over a topic of this run's own (`day2_src_<pid>`) holding five records:
//! - `pipeline test-live` custom `sql:` checks read the project's Kafka tables to their current end
//!   (the bounded-read hint is added to every table the query reads), so a GROUP BY check finishes
//!   with a verdict (a PASS, and a FAIL with exactly its rows) instead of an ERROR after the timeout;
//! - `pipeline prepare` declares the tables its statements name (an `ALTER TABLE` of a project
//!   table) in the gateway session from the project's DDL, instead of failing with `Cannot find table`.
//!
//! Skips without the stack (`FLINKPIPE_E2E=required` turns that into a failure). It starts no job
//! that outlives it (each query's job is bounded and stopped) and deletes its topic.

use crate::support::e2e::E2e;
use crate::support::stack::{KAFKA, kafka_ddl, stack_available};
use flinkpipe::target::kafka::KafkaAdmin;
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn live_sql_checks_read_to_the_end_and_prepare_declares_the_tables_it_alters_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let pid = std::process::id();
    let table = format!("day2_src_{pid:x}");
    let ddl = kafka_ddl(&table, "  id BIGINT,\n  k STRING");
    let live = "tests:\n  - name: no_key_twice_over\n    sql: SELECT k, COUNT(*) AS n FROM {table} GROUP BY k HAVING COUNT(*) > 3\n  - name: some_key_read\n    sql: SELECT k FROM {table} WHERE k = 'a'\n";
    let e = E2e::new(
        &format!("e2eday2{pid:x}"),
        &[
            (&format!("sources/d2/src/sql-scripts/ddl.{table}.sql"), &ddl),
            ("sources/d2/src/tests/live_tests.yaml", live),
        ],
    )
    .topics(&[&table]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = KafkaAdmin::new(KAFKA);
    let records: Vec<Vec<u8>> = (1..=5)
        .map(|i| format!("{{\"id\":{i},\"k\":\"{}\"}}", ["a", "b"][i % 2]).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let start = Instant::now();
    while let Err(err) = rt.block_on(admin.produce(&table, 0, &refs)) {
        assert!(start.elapsed() < Duration::from_secs(20), "{err}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let pipelines_arg = e.p();
    let run = |args: &[&str]| e.run(args);

    // ---- test-live: both sql checks end with a verdict well before the timeout -----------------
    let began = Instant::now();
    let o = run(&[
        "--output",
        "json",
        "pipeline",
        "test-live",
        pipelines_arg,
        "--timeout",
        "90",
    ]);
    let took = began.elapsed();
    let v: Value = serde_json::from_str(&o.stdout_raw())
        .unwrap_or_else(|e| panic!("not JSON ({e})\n{}\n{}", o.stdout_raw(), o.stderr_raw()));
    // One check passes (no key read more than 3 times), the other fails with exactly the two rows
    // of key `a` (records 2 and 4): both read the whole topic, none is an ERROR.
    let o = o.code(1);
    let text = serde_json::to_string(&v).unwrap();
    assert!(!text.contains("stopped before the table's end"), "{v:#}");
    assert_eq!(
        (&v["passed"], &v["failed"], &v["errors"]),
        (&1.into(), &1.into(), &0.into()),
        "{v:#}"
    );
    let tests = v["tables"][0]["tests"].as_array().unwrap();
    assert_eq!(tests[0]["verdict"], "PASS", "{v:#}");
    assert_eq!(tests[1]["verdict"], "FAIL", "{v:#}");
    assert_eq!(tests[1]["failing_count"], 2, "{v:#}");
    assert!(
        took < Duration::from_secs(85),
        "took {took:?}: {}",
        o.stderr_raw()
    );

    // ---- prepare: an ALTER of the project's table runs in a session that knows it --------------
    let alter = e.root.join("alter.sql");
    std::fs::write(
        &alter,
        format!("ALTER TABLE {table} SET ('scan.startup.mode' = 'latest-offset');\n"),
    )
    .unwrap();
    let o = run(&[
        "pipeline",
        "prepare",
        alter.to_str().unwrap(),
        pipelines_arg,
    ]);
    let o = o.success();
    let out = o.stdout_raw();
    assert!(out.contains("done     "), "{out}\n{}", o.stderr_raw());
    assert!(
        out.contains("note: on the SQL Gateway the catalog is in memory per session"),
        "{out}"
    );
}
