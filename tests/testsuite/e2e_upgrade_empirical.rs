//! `pipeline upgrade-check --empirical` (issue #23) on the local Flink 2.2 + SQL Gateway + Kafka stack
//! (`scripts/local-flink.sh up`): three changes of a `SUM(amount) … GROUP BY store_id` aggregate,
//! each restored for real on the table's unit-test fixtures (six orders; the old SQL on the first
//! three, stopped with a savepoint, the new SQL started from it on the last three, compared with a
//! fresh run of the new SQL on all six):
//!
//! 1. an alias → `state-compatible` (same result);
//! 2. a filter before the aggregate → `state-compatible-semantics-changed` (the state holds a sum of
//!    rows the new filter drops: store 1 is 35 restored, 30 fresh);
//! 3. `COUNT(*)` added (in a `HAVING`) → `state-incompatible` (the savepoint's state cannot be mapped);
//! 4. `SUM` → `MAX` of a `BIGINT` on an append-only input: the restore succeeds (both accumulators
//!    are one `BIGINT`, measured) and the six orders give the same totals restored and fresh, but the
//!    plan computes the state otherwise: `state-compatible-semantics-changed`, never `state-compatible`.
//!
//! Every verdict is of tier `empirical`, and nothing the runs started is left running.
//!
//! Skips without the stack (`FLINKPIPE_E2E=required` turns that into a failure). Run it alone under
//! the stack's lock: `flock /tmp/flinkpipe-stack.lock env FLINKPIPE_E2E=required cargo test --test
//! testsuite e2e_upgrade_empirical`.

use crate::support::e2e::E2e;
use crate::support::repo::T_CHANGE;
use crate::support::stack::{jobs, stack_available};

const DML: &str = "facts/em/fct_totals/sql-scripts/dml.fct_em_totals.sql";
const SRC_DDL: &str = "CREATE TABLE IF NOT EXISTS src_em_orders (\n  id BIGINT,\n  store_id INT,\n  amount BIGINT\n) WITH (\n  'connector' = 'kafka',\n  'topic' = 'src_em_orders',\n  'properties.bootstrap.servers' = '127.0.0.1:9092',\n  'scan.startup.mode' = 'earliest-offset',\n  'format' = 'json'\n);\n";
const TOTALS_DDL: &str = "CREATE TABLE IF NOT EXISTS fct_em_totals (\n  store_id INT,\n  total BIGINT,\n  PRIMARY KEY (store_id) NOT ENFORCED\n) WITH (\n  'connector' = 'upsert-kafka',\n  'topic' = 'fct_em_totals',\n  'properties.bootstrap.servers' = '127.0.0.1:9092',\n  'key.format' = 'json',\n  'value.format' = 'json'\n);\n";
const TOTALS_DML: &str = "INSERT INTO fct_em_totals\nSELECT store_id, SUM(amount)\nFROM src_em_orders\nGROUP BY store_id;\n";
const DEFINITIONS: &str = "foundations:\n- table_name: src_em_orders\n  ddl_for_test: ./tests/ddl_src_em_orders.sql\ntest_suite:\n- name: six_orders\n  inputs:\n  - table_name: src_em_orders\n    file_name: ./tests/insert_src_em_orders_1.csv\n    file_type: csv\n  outputs:\n  - table_name: fct_em_totals\n    file_name: ./tests/expected_fct_em_totals_1.csv\n    file_type: csv\n";
const ORDERS: &str = "id,store_id,amount\n1,1,5\n2,2,20\n3,1,30\n4,2,3\n5,1,7\n6,2,40\n";
const EXPECTED: &str = "store_id,total\n1,42\n2,63\n";

/// Jobs of this run that are not over.
fn live_jobs(prefix: &str) -> Vec<String> {
    jobs()
        .into_iter()
        .filter(|j| j.name.starts_with(prefix) && !j.is_over())
        .map(|j| j.name)
        .collect()
}

#[test]
fn empirical_restores_prove_compatible_semantics_changed_and_incompatible_changes_on_a_real_flink()
{
    if !stack_available() {
        return;
    }
    let prefix = format!("e2eem{:x}", std::process::id());
    let tests = "facts/em/fct_totals/tests";
    let e = E2e::git(
        &prefix,
        &[
            (
                "sources/em/src_orders/sql-scripts/ddl.src_em_orders.sql",
                SRC_DDL,
            ),
            (
                "facts/em/fct_totals/sql-scripts/ddl.fct_em_totals.sql",
                TOTALS_DDL,
            ),
            (DML, TOTALS_DML),
            (&format!("{tests}/test_definitions.yaml"), DEFINITIONS),
            (
                &format!("{tests}/ddl_src_em_orders.sql"),
                &SRC_DDL.replace("src_em_orders (", "src_em_orders_ut ("),
            ),
            (&format!("{tests}/insert_src_em_orders_1.csv"), ORDERS),
            (&format!("{tests}/expected_fct_em_totals_1.csv"), EXPECTED),
        ],
    );
    let repo = e.repo();
    let check = || {
        e.json(&[
            "pipeline",
            "upgrade-check",
            e.p(),
            "--since",
            "HEAD~1",
            "--empirical",
            "--timeout",
            "180",
        ])
    };
    let steps: [(&str, &str, &str, &str, bool); 4] = [
        (
            "SUM(amount)\n",
            "SUM(amount) AS total\n",
            "state-compatible",
            "same-result",
            true,
        ),
        (
            "FROM src_em_orders\n",
            "FROM src_em_orders\nWHERE amount > 10\n",
            "state-compatible-semantics-changed",
            "different-result",
            false,
        ),
        (
            "GROUP BY store_id;",
            "GROUP BY store_id\nHAVING COUNT(*) > 0;",
            "state-incompatible",
            "restore-failed",
            false,
        ),
        (
            "SUM(amount) AS total",
            "MAX(amount) AS total",
            "state-compatible-semantics-changed",
            "same-result",
            false,
        ),
    ];
    for (i, (from, to, verdict, outcome, in_place)) in steps.into_iter().enumerate() {
        repo.edit(DML, |s| s.replace(from, to));
        repo.commit(&format!("change {i}"), T_CHANGE + 60 * i as i64);
        let started = std::time::Instant::now();
        let (v, o) = check();
        eprintln!(
            "{verdict}: {:.1} s: {}",
            started.elapsed().as_secs_f64(),
            v["statements"][0]["empirical"]
        );
        assert_eq!(
            o.output.status.success(),
            in_place,
            "{v:#}\n{}",
            o.stderr_raw()
        );
        let s = &v["statements"][0];
        assert_eq!(s["verdict"], verdict, "{v:#}");
        assert_eq!(s["tier"], "empirical", "{v:#}");
        let ev = &s["empirical"];
        assert_eq!(ev["outcome"], outcome, "{v:#}");
        assert_eq!(ev["case"], "six_orders");
        assert_eq!(
            (
                ev["rows_first_half"].clone(),
                ev["rows_second_half"].clone()
            ),
            (3.into(), 3.into())
        );
        assert_eq!(ev["savepoint_taken"], true, "{v:#}");
        assert!(ev.get("cleanup_errors").is_none(), "{v:#}");
        match outcome {
            "same-result" => {
                assert_eq!(ev["restored"], true);
                assert_eq!(ev["rows_differing"], 0);
                let reasons = s["reasons"][0].as_str().unwrap_or_default();
                assert!(reasons.starts_with("empirical: "), "{v:#}");
            }
            "different-result" => {
                assert_eq!(ev["restored"], true);
                // Store 1: 5 + 30 restored (the old SQL had no filter), 30 fresh.
                assert_eq!(ev["rows_differing"], 2, "{v:#}");
                let rows = ev["differing_rows"].to_string();
                assert!(
                    rows.contains("\\\"total\\\":35") && rows.contains("\\\"total\\\":30"),
                    "{rows}"
                );
            }
            _ => {
                assert_eq!(ev["restored"], false);
                // The deepest cause Flink gives, on one line.
                let why = ev["error"].as_str().unwrap_or_default();
                assert!(
                    why.starts_with(
                        "IllegalStateException: Failed to rollback to checkpoint/savepoint"
                    ) && why.contains("Cannot map checkpoint/savepoint state"),
                    "{v:#}"
                );
                assert!(!why.contains('\n'), "{why}");
            }
        }
        assert_eq!(
            live_jobs(&prefix),
            Vec::<String>::new(),
            "nothing left running"
        );
    }
}
