//! One test per Flink SQL construct that is hard for dependency extraction (CTEs, subqueries, joins
//! and table functions, window TVFs, statement sets, CTAS/LIKE, names, strings, hints, DDL details;
//! Flink's SQL reference:
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/>), numbered
//! `tNN_…`: exact sinks, sources and statefulness at file level, plus kinds, spans and DDL facts
//! where the entry is about them.
//!
//! Statefulness uses the vocabulary of `docs/src/concepts/statefulness.md`: `none` when no query
//! writes to a table, `stateless`/`stateful` otherwise. A plain projection (entries 29–32) keeps no
//! state, so such an INSERT … SELECT is `stateless`.

use flinkpipe::sql::{
    self, FileAnalysis, SessionChange, StateReason, Statefulness, StatementKind, TableName,
    WarningKind,
};

use Statefulness::{None as NoState, Stateful, Stateless};

/// Analyses `sql`, requires that every statement parsed (no fallback), and checks the file-level answer.
fn check(sql: &str, sinks: &[&str], sources: &[&str], state: Statefulness) -> FileAnalysis {
    let a = sql::analyze(sql);
    assert!(
        a.warnings.is_empty(),
        "unexpected warnings: {:?}",
        a.warnings
    );
    assert!(a.statements.iter().all(|s| !s.fallback));
    let got_sinks: Vec<String> = a.sinks().iter().map(TableName::dotted).collect();
    let got_sources: Vec<String> = a.sources().iter().map(TableName::dotted).collect();
    assert_eq!(got_sinks, sinks, "sinks");
    assert_eq!(got_sources, sources, "sources");
    assert_eq!(a.statefulness(), state, "statefulness");
    a
}

fn has(a: &FileAnalysis, r: StateReason) -> bool {
    a.statements.iter().any(|s| s.state_reasons.contains(&r))
}

// ---------- A. Query structure ----------

#[test]
fn t01_cte() {
    check(
        "INSERT INTO big_orders\nWITH recent AS (SELECT id, amount FROM orders WHERE amount > 100)\nSELECT id, amount FROM recent;",
        &["big_orders"],
        &["orders"],
        Stateless,
    );
}

#[test]
fn t02_chained_ctes_column_lists_shadowing() {
    let a = check(
        "INSERT INTO user_totals
WITH paid AS (SELECT * FROM payments WHERE status = 'OK'),
     per_user (user_id, total) AS (SELECT user_id, SUM(amount) FROM paid GROUP BY user_id),
     orders AS (SELECT * FROM orders WHERE is_test = FALSE)
SELECT p.user_id, p.total, COUNT(o.id) FROM per_user p JOIN orders o ON p.user_id = o.user_id
GROUP BY p.user_id, p.total;",
        &["user_totals"],
        &["orders", "payments"],
        Stateful,
    );
    // `orders` is read once: inside the CTE body (line 4), not in the main query where it is the CTE.
    let s = &a.statements[0];
    assert_eq!(
        s.sources
            .iter()
            .filter(|r| r.name.dotted() == "orders")
            .count(),
        1
    );
    assert_eq!(
        s.sources
            .iter()
            .find(|r| r.name.dotted() == "orders")
            .unwrap()
            .span
            .unwrap()
            .start
            .line,
        4
    );
}

#[test]
fn t03_where_subqueries() {
    let a = check(
        "INSERT INTO allowed_orders SELECT * FROM orders o
WHERE o.customer_id NOT IN (SELECT customer_id FROM blocked_customers)
  AND EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id);",
        &["allowed_orders"],
        &["blocked_customers", "orders", "payments"],
        Stateful,
    );
    assert!(has(&a, StateReason::SubqueryJoin));
}

#[test]
fn t04_scalar_subqueries_in_case() {
    check(
        "INSERT INTO scored_orders SELECT o.id,
  CASE WHEN o.amount > (SELECT MAX(limit_amount) FROM credit_limits) THEN 'high'
       WHEN o.amount > (SELECT MAX(soft_limit) FROM soft_limits) THEN 'mid' ELSE 'ok' END FROM orders o;",
        &["scored_orders"],
        &["credit_limits", "orders", "soft_limits"],
        Stateful,
    );
}

#[test]
fn t05_derived_table() {
    let a = check(
        "INSERT INTO enriched SELECT d.id, c.name
FROM (SELECT id, cust_id FROM orders WHERE amount > 0) AS d JOIN customers c ON d.cust_id = c.id;",
        &["enriched"],
        &["customers", "orders"],
        Stateful,
    );
    assert_eq!(a.statements[0].joins.regular, 1);
    // Derived table without alias.
    check(
        "INSERT INTO x SELECT * FROM (SELECT id FROM orders) WHERE id > 1",
        &["x"],
        &["orders"],
        Stateless,
    );
}

// ---------- B. Joins and table functions ----------

#[test]
fn t06_lateral_table() {
    for sql in [
        "INSERT INTO order_tags SELECT o.id, t.tag FROM orders AS o LEFT JOIN LATERAL TABLE(split_tags(o.tags)) AS t(tag) ON TRUE;",
        "INSERT INTO order_tags SELECT o.id, t.tag FROM orders o, LATERAL TABLE(split_tags(o.tags)) AS t(tag)",
        "INSERT INTO order_tags SELECT o.id, t.tag FROM orders o CROSS JOIN LATERAL TABLE(split_tags(o.tags)) AS t(tag)",
        "INSERT INTO order_tags SELECT o.id, t.tag FROM orders o LEFT JOIN LATERAL split_tags(o.tags) AS t(tag) ON TRUE",
    ] {
        let a = check(sql, &["order_tags"], &["orders"], Stateless);
        // Join counts follow shift_left: by JOIN keyword, cross and comma joins excluded.
        let left = if sql.contains("LEFT JOIN") { 1 } else { 0 };
        assert_eq!(a.statements[0].joins.left, left, "{sql}");
        assert_eq!(a.statements[0].joins.regular, 0, "{sql}");
    }
}

#[test]
fn t07_cross_join_unnest() {
    for sql in [
        "INSERT INTO order_lines SELECT o.id, i.sku, i.qty FROM orders o CROSS JOIN UNNEST(o.items) AS i(sku, qty);",
        "INSERT INTO order_lines SELECT o.id, i.sku, i.qty FROM orders o, UNNEST(o.items) AS i(sku, qty)",
    ] {
        check(sql, &["order_lines"], &["orders"], Stateless);
    }
}

#[test]
fn t08_event_time_temporal_join() {
    for sql in [
        "INSERT INTO orders_eur SELECT o.id, o.amount * r.rate
FROM orders AS o JOIN fx_rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency;",
        "INSERT INTO orders_eur SELECT o.id, o.amount * r.rate
FROM orders AS o JOIN fx_rates FOR SYSTEM_TIME AS OF o.$rowtime AS r ON o.currency = r.currency;",
    ] {
        let a = check(sql, &["orders_eur"], &["fx_rates", "orders"], Stateful);
        let s = &a.statements[0];
        assert_eq!(s.temporal_join_sources, vec![TableName::new(["fx_rates"])]);
        assert_eq!(s.state_reasons, vec![StateReason::TemporalJoin]);
        assert!(!s.state_reasons.contains(&StateReason::RegularJoin));
        // Counted by its JOIN keyword, as shift_left's complexity block does.
        assert_eq!(s.joins.regular, 1);
    }
}

#[test]
fn t09_lookup_join() {
    let a = check(
        "INSERT INTO orders_named SELECT o.id, c.name
FROM orders AS o JOIN customers_db FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.cust_id = c.id;",
        &["orders_named"],
        &["customers_db", "orders"],
        Stateful,
    );
    assert_eq!(
        a.statements[0].temporal_join_sources,
        vec![TableName::new(["customers_db"])]
    );
}

#[test]
fn t10_interval_join_comma_form() {
    let a = check(
        "INSERT INTO shipped_in_time
SELECT o.id, s.ship_time FROM orders o, shipments s
WHERE o.id = s.order_id AND s.ship_time BETWEEN o.order_time AND o.order_time + INTERVAL '4' HOUR;",
        &["shipped_in_time"],
        &["orders", "shipments"],
        Stateful,
    );
    assert!(has(&a, StateReason::IntervalJoin));
}

#[test]
fn t11_comma_join() {
    let a = check(
        "INSERT INTO order_customer
SELECT o.id, c.name, r.label FROM orders o, customers c, regions r
WHERE o.cust_id = c.id AND c.region_id = r.id;",
        &["order_customer"],
        &["customers", "orders", "regions"],
        Stateful,
    );
    assert!(has(&a, StateReason::RegularJoin));
    // No JOIN keyword: not in shift_left's join counts.
    assert_eq!(a.statements[0].joins, Default::default());
}

#[test]
fn t12_window_tvfs() {
    let agg = |tvf: &str| {
        format!(
            "INSERT INTO clicks_per_minute SELECT window_start, window_end, COUNT(*) AS clicks
FROM TABLE({tvf}) GROUP BY window_start, window_end;"
        )
    };
    for tvf in [
        "TUMBLE(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '1' MINUTE)",
        "HOP(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)",
        "CUMULATE(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '1' MINUTE, INTERVAL '1' HOUR)",
        "SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(click_time), INTERVAL '5' MINUTES)",
        "TUMBLE(DATA => TABLE clicks, TIMECOL => DESCRIPTOR(click_time), SIZE => INTERVAL '1' MINUTE)",
        "TUMBLE((SELECT * FROM clicks WHERE bot = FALSE), DESCRIPTOR(click_time), INTERVAL '1' HOUR)",
    ] {
        let a = check(&agg(tvf), &["clicks_per_minute"], &["clicks"], Stateful);
        assert_eq!(
            a.statements[0].state_reasons,
            vec![StateReason::WindowAggregate],
            "{tvf}"
        );
    }
    // A CTE as the TABLE argument is resolved to what it reads.
    check(
        "INSERT INTO o WITH c AS (SELECT * FROM clicks) SELECT * FROM TABLE(TUMBLE(TABLE c, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
        &["o"],
        &["clicks"],
        Stateless,
    );
    // Bare TVF projection: stateless.
    check(
        "INSERT INTO windowed SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(click_time), INTERVAL '1' MINUTE))",
        &["windowed"],
        &["clicks"],
        Stateless,
    );
    // Span of the TABLE argument: the name only.
    let a = sql::analyze(
        "SELECT * FROM TABLE(TUMBLE(TABLE db.clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
    );
    let span = a.statements[0].sources[0].span.unwrap();
    assert_eq!(
        (span.start.line, span.start.column, span.end.column),
        (1, 34, 43)
    );
}

#[test]
fn t13_ml_predict() {
    check(
        "INSERT INTO review_sentiment SELECT * FROM ML_PREDICT(TABLE reviews, MODEL sentiment_model, DESCRIPTOR(review_text));",
        &["review_sentiment"],
        &["reviews"],
        Stateless,
    );
    check(
        "INSERT INTO review_sentiment SELECT r.id, p.label FROM reviews r, LATERAL TABLE(ML_PREDICT('sentiment_model', r.review_text)) AS p(label)",
        &["review_sentiment"],
        &["reviews"],
        Stateless,
    );
}

// ---------- C. Aggregation-like operators ----------

#[test]
fn t14_over() {
    let a = check(
        "INSERT INTO running_totals
SELECT id, user_id, SUM(amount) OVER (PARTITION BY user_id ORDER BY order_time
       RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS last_hour
FROM orders;",
        &["running_totals"],
        &["orders"],
        Stateful,
    );
    assert_eq!(a.statements[0].state_reasons, vec![StateReason::Over]);
    check(
        "INSERT INTO r SELECT id, SUM(amount) OVER w FROM orders WINDOW w AS (PARTITION BY user_id ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
        &["r"],
        &["orders"],
        Stateful,
    );
    check(
        "INSERT INTO r SELECT id, LAG(amount) OVER (PARTITION BY u ORDER BY ts) FROM orders",
        &["r"],
        &["orders"],
        Stateful,
    );
}

#[test]
fn t15_distinct_and_global_aggregates() {
    let a = check(
        "INSERT INTO distinct_users SELECT DISTINCT user_id FROM clicks;",
        &["distinct_users"],
        &["clicks"],
        Stateful,
    );
    assert_eq!(a.statements[0].state_reasons, vec![StateReason::Distinct]);
    let a = check(
        "INSERT INTO order_count SELECT COUNT(*) AS n FROM orders;",
        &["order_count"],
        &["orders"],
        Stateful,
    );
    assert_eq!(
        a.statements[0].state_reasons,
        vec![StateReason::GlobalAggregate]
    );
}

#[test]
fn t16_dedup_top_n() {
    let a = check(
        "INSERT INTO latest_profile
SELECT user_id, email FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY updated_at DESC) AS rn FROM profiles_raw)
WHERE rn = 1;",
        &["latest_profile"],
        &["profiles_raw"],
        Stateful,
    );
    assert_eq!(a.statements[0].state_reasons, vec![StateReason::TopN]);
}

#[test]
fn t17_union_vs_union_all() {
    check(
        "INSERT INTO all_events
SELECT id, 'web' AS channel FROM web_events
UNION ALL
SELECT id, 'app' FROM app_events;",
        &["all_events"],
        &["app_events", "web_events"],
        Stateless,
    );
    for op in ["UNION", "INTERSECT", "EXCEPT"] {
        let a = check(
            &format!("INSERT INTO e SELECT id FROM web_events {op} SELECT id FROM app_events"),
            &["e"],
            &["app_events", "web_events"],
            Stateful,
        );
        assert_eq!(a.statements[0].state_reasons, vec![StateReason::Union]);
    }
    // Branches after a CTE are kept.
    check(
        "INSERT INTO e WITH w AS (SELECT id FROM web_events) SELECT id FROM w UNION ALL SELECT id FROM app_events UNION ALL SELECT id FROM b2",
        &["e"],
        &["app_events", "b2", "web_events"],
        Stateless,
    );
}

#[test]
fn t18_match_recognize() {
    let a = check(
        "INSERT INTO price_drops
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY tick_time
  MEASURES FIRST(A.price) AS start_price, LAST(B.price) AS low_price
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (A B+) DEFINE B AS B.price < A.price
) AS m;",
        &["price_drops"],
        &["ticks"],
        Stateful,
    );
    assert_eq!(
        a.statements[0].state_reasons,
        vec![StateReason::MatchRecognize]
    );
}

// ---------- D. Multi-sink and DDL-with-query statements ----------

#[test]
fn t19_execute_statement_set() {
    let a = check(
        "EXECUTE STATEMENT SET BEGIN
  INSERT INTO eu_orders SELECT * FROM orders WHERE region = 'EU';
  INSERT INTO us_orders SELECT * FROM orders WHERE region = 'US';
END;",
        &["eu_orders", "us_orders"],
        &["orders"],
        Stateless,
    );
    assert_eq!(a.statements.len(), 1);
    assert_eq!(a.statements[0].kind, StatementKind::StatementSet);
    assert_eq!(a.statements[0].sinks.len(), 2);
}

#[test]
fn t20_begin_statement_set_and_execute_insert() {
    let a = check(
        "BEGIN STATEMENT SET;
INSERT INTO eu_orders SELECT * FROM orders WHERE region = 'EU';
INSERT INTO us_orders SELECT * FROM orders WHERE region = 'US';
END;
EXECUTE INSERT INTO audit SELECT * FROM orders;",
        &["audit", "eu_orders", "us_orders"],
        &["orders"],
        Stateless,
    );
    let kinds: Vec<_> = a.statements.iter().map(|s| (s.kind, s.line)).collect();
    assert_eq!(
        kinds,
        vec![(StatementKind::StatementSet, 1), (StatementKind::Insert, 5)]
    );
}

#[test]
fn t21_ctas() {
    let a = check(
        "CREATE TABLE orders_enriched (PRIMARY KEY (id) NOT ENFORCED)
DISTRIBUTED BY HASH(id) INTO 4 BUCKETS WITH ('changelog.mode' = 'upsert')
AS SELECT o.id, o.amount, c.tier FROM orders o JOIN customers c ON o.cust_id = c.id;",
        &["orders_enriched"],
        &["customers", "orders"],
        Stateful,
    );
    let s = &a.statements[0];
    assert_eq!(s.kind, StatementKind::Ctas);
    assert_eq!(s.primary_key, vec!["id"]);
    assert_eq!(
        s.distribution.as_deref(),
        Some("DISTRIBUTED BY HASH(id) INTO 4 BUCKETS")
    );
    assert_eq!(
        s.with_options,
        vec![("changelog.mode".to_string(), "upsert".to_string())]
    );
    check(
        "CREATE OR REPLACE TABLE t2 AS SELECT id, COUNT(*) AS n FROM orders GROUP BY id",
        &["t2"],
        &["orders"],
        Stateful,
    );
}

#[test]
fn t22_create_table_like() {
    let a = check(
        "CREATE TABLE orders_archive (archived_at TIMESTAMP_LTZ(3))
WITH ('topic' = 'orders-archive')
LIKE orders (EXCLUDING WATERMARKS);",
        &["orders_archive"],
        &["orders"],
        NoState,
    );
    let s = &a.statements[0];
    assert_eq!(s.kind, StatementKind::CreateTable);
    assert_eq!(s.like_sources, vec![TableName::new(["orders"])]);
}

#[test]
fn t23_materialized_table() {
    let a = check(
        "CREATE OR ALTER MATERIALIZED TABLE revenue_by_region
  DISTRIBUTED BY HASH(region) INTO 4 BUCKETS
  START_MODE = FROM_BEGINNING
AS SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region;",
        &["revenue_by_region"],
        &["orders"],
        Stateful,
    );
    assert_eq!(a.statements[0].kind, StatementKind::CreateMaterializedTable);
    assert_eq!(
        a.statements[0].distribution.as_deref(),
        Some("DISTRIBUTED BY HASH(region) INTO 4 BUCKETS")
    );
    let a = check(
        "CREATE MATERIALIZED TABLE mt FRESHNESS = INTERVAL '1' MINUTE AS SELECT id FROM t",
        &["mt"],
        &["t"],
        Stateless,
    );
    assert_eq!(a.statements[0].kind, StatementKind::CreateMaterializedTable);
}

#[test]
fn t24_views() {
    let a = check(
        "CREATE VIEW paid_orders (id, amount) AS (SELECT id, amount FROM orders WHERE status = 'PAID');
INSERT INTO paid_totals SELECT SUM(amount) AS total FROM paid_orders;",
        &["paid_orders", "paid_totals"],
        &["orders", "paid_orders"],
        Stateful,
    );
    let (v, i) = (&a.statements[0], &a.statements[1]);
    assert_eq!(v.kind, StatementKind::CreateView);
    assert_eq!(v.sources[0].name.dotted(), "orders");
    // A view's query counts in the file's statefulness: this one is a filter.
    assert_eq!(v.statefulness, Stateless);
    assert_eq!(i.sources[0].name.dotted(), "paid_orders");
    assert_eq!(i.statefulness, Stateful);
}

#[test]
fn t25_insert_variants() {
    check(
        "INSERT INTO events_by_day PARTITION (dt = '2024-01-01') (id, payload) SELECT id, payload FROM events;",
        &["events_by_day"],
        &["events"],
        Stateless,
    );
    check(
        "INSERT OVERWRITE daily_report SELECT * FROM report_staging;",
        &["daily_report"],
        &["report_staging"],
        Stateless,
    );
    check(
        "INSERT INTO seed_countries VALUES ('FR', 'France'), ('DE', 'Germany');",
        &["seed_countries"],
        &[],
        NoState,
    );
}

#[test]
fn t26_self_reference() {
    check(
        "INSERT INTO tranlog SELECT * FROM tranlog_staging s WHERE s.id NOT IN (SELECT id FROM tranlog);",
        &["tranlog"],
        &["tranlog", "tranlog_staging"],
        Stateful,
    );
}

#[test]
fn t27_several_statements_temporary_objects() {
    let a = check(
        "CREATE TEMPORARY TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TEMPORARY VIEW evens AS SELECT id FROM gen WHERE MOD(id, 2) = 0;
INSERT INTO numbers SELECT id FROM evens;",
        &["evens", "gen", "numbers"],
        &["evens", "gen"],
        Stateless,
    );
    let temp: Vec<bool> = a.statements.iter().map(|s| s.temporary).collect();
    assert_eq!(temp, vec![true, true, false]);
    assert_eq!(
        a.statements.iter().map(|s| s.line).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}

// ---------- E. Names, strings, comments, hints ----------

#[test]
fn t28_quoted_qualified_hyphenated_names() {
    let a = check(
        "INSERT INTO `prod-env`.`cluster_0`.`orders.v1`
SELECT * FROM `prod-env`.`cluster_0`.`orders-raw`
UNION ALL SELECT * FROM cluster_0.orders_legacy;",
        &["prod-env.cluster_0.orders.v1"],
        &["cluster_0.orders_legacy", "prod-env.cluster_0.orders-raw"],
        Stateless,
    );
    let s = &a.statements[0];
    assert_eq!(
        s.sinks[0].name.parts,
        vec!["prod-env", "cluster_0", "orders.v1"]
    );
    assert_eq!(
        s.sources[0].name.parts,
        vec!["prod-env", "cluster_0", "orders-raw"]
    );
    assert_eq!(s.sources[1].name.parts, vec!["cluster_0", "orders_legacy"]);
    // Spans cover the whole qualified name, quotes included.
    let sink = s.sinks[0].span.unwrap();
    assert_eq!(
        (
            sink.start.line,
            sink.start.column,
            sink.end.line,
            sink.end.column
        ),
        (1, 13, 1, 47)
    );
    let src = s.sources[1].span.unwrap();
    assert_eq!(
        (src.start.line, src.start.column, src.end.column),
        (3, 25, 48)
    );
}

#[test]
fn t29_column_paths() {
    check(
        "INSERT INTO customer_ids SELECT o.payload.customer.id, o.tags[1] FROM orders AS o;",
        &["customer_ids"],
        &["orders"],
        Stateless,
    );
}

#[test]
fn t30_from_in_strings_and_comments() {
    check(
        "INSERT INTO audit_log   -- copies rows from legacy_audit (comment, not a source)
SELECT id, 'moved from legacy' AS note, '--' AS sep /* FROM fake_table */
FROM events WHERE msg <> 'it''s from x';",
        &["audit_log"],
        &["events"],
        Stateless,
    );
}

#[test]
fn t31_from_in_functions_and_predicates() {
    check(
        "INSERT INTO clean_users
SELECT id, EXTRACT(YEAR FROM birth_date) AS birth_year, TRIM(BOTH ' ' FROM full_name) AS full_name,
       SUBSTRING(COALESCE(phone, '') FROM 2 FOR 3) AS area_code,
       OVERLAY(code PLACING 'X' FROM 1 FOR 1) AS masked_code, POSITION('@' IN email) AS at_pos
FROM users WHERE email IS DISTINCT FROM previous_email;",
        &["clean_users"],
        &["users"],
        Stateless,
    );
    // Batch DELETE writes its target.
    check(
        "DELETE FROM users WHERE id IN (SELECT id FROM deleted_ids)",
        &["users"],
        &["deleted_ids"],
        NoState,
    );
}

#[test]
fn t32_keywords_as_names() {
    check(
        "INSERT INTO `order` SELECT `key`, `value`, `timestamp`, `user` FROM `user-events`;",
        &["order"],
        &["user-events"],
        Stateless,
    );
}

#[test]
fn t33_hints() {
    check(
        "INSERT INTO enriched /*+ OPTIONS('sink.parallelism' = '2') */
SELECT /*+ STATE_TTL('orders' = '1d', 'c' = '12h') */ orders.id, c.name
FROM orders /*+ OPTIONS('scan.startup.mode' = 'earliest-offset') */
JOIN customers AS c ON orders.cust_id = c.id;",
        &["enriched"],
        &["customers", "orders"],
        Stateful,
    );
}

#[test]
fn t34_set_use_explain() {
    let a = check(
        "SET 'sql.state-ttl' = '12 hours';
SET 'client.statement-name' = 'dev-usw2-p1-dml-orders-enriched-v2';
SET 'pipeline.name' = 'orders-enriched';
SET sql.state-ttl = '1h';
USE CATALOG prod_env;
USE cluster_0;
EXPLAIN INSERT INTO orders_enriched SELECT * FROM orders;
INSERT INTO orders_enriched SELECT * FROM orders;",
        // Names as written; resolving them against USE is the inventory's job (qualified names
        // resolve against the current catalog and database:
        // https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/use/).
        &["orders_enriched"],
        &["orders"],
        Stateless,
    );
    let kinds: Vec<StatementKind> = a.statements.iter().map(|s| s.kind).collect();
    use StatementKind::*;
    assert_eq!(kinds, vec![Set, Set, Set, Set, Use, Use, Other, Insert]);
    assert!(a.statements[6].sinks.is_empty() && a.statements[6].sources.is_empty());
    // The session changes, for statement properties and for resolving later names.
    let set = |k: &str, v: &str| {
        Some(SessionChange::Set {
            key: k.into(),
            value: v.into(),
        })
    };
    let sessions: Vec<_> = a.statements.iter().map(|s| s.session.clone()).collect();
    assert_eq!(
        sessions,
        vec![
            set("sql.state-ttl", "12 hours"),
            set(
                "client.statement-name",
                "dev-usw2-p1-dml-orders-enriched-v2"
            ),
            set("pipeline.name", "orders-enriched"),
            set("sql.state-ttl", "1h"),
            Some(SessionChange::UseCatalog {
                catalog: "prod_env".into()
            }),
            Some(SessionChange::UseDatabase {
                database: TableName::new(["cluster_0"])
            }),
            None,
            None,
        ]
    );
    let a = check(
        "RESET 'sql.state-ttl';\nRESET;\nUSE `my-env`.`cluster-1`",
        &[],
        &[],
        NoState,
    );
    let sessions: Vec<_> = a.statements.iter().map(|s| s.session.clone()).collect();
    assert_eq!(
        sessions,
        vec![
            Some(SessionChange::Reset {
                key: Some("sql.state-ttl".into())
            }),
            Some(SessionChange::Reset { key: None }),
            Some(SessionChange::UseDatabase {
                database: TableName::new(["my-env", "cluster-1"])
            }),
        ]
    );
}

// ---------- F. DDL details ----------

#[test]
fn t35_distributed_by() {
    let a = check(
        "CREATE TABLE orders_by_customer (cust_id STRING, total DECIMAL(10, 2), PRIMARY KEY (cust_id) NOT ENFORCED)
DISTRIBUTED BY HASH(cust_id) INTO 6 BUCKETS
WITH ('changelog.mode' = 'upsert', 'kafka.cleanup-policy' = 'compact');",
        &["orders_by_customer"],
        &[],
        NoState,
    );
    let s = &a.statements[0];
    assert_eq!(s.primary_key, vec!["cust_id"]);
    assert_eq!(
        s.distribution.as_deref(),
        Some("DISTRIBUTED BY HASH(cust_id) INTO 6 BUCKETS")
    );
    assert_eq!(s.with_options.len(), 2);
    assert_eq!(
        s.columns
            .iter()
            .map(|c| (c.name.as_str(), c.data_type.as_str(), c.nullable))
            .collect::<Vec<_>>(),
        vec![
            ("cust_id", "STRING", false),
            ("total", "DECIMAL(10, 2)", true)
        ]
    );
    for (clause, text) in [
        (
            "DISTRIBUTED BY (cust_id) INTO 6 BUCKETS",
            "DISTRIBUTED BY (cust_id) INTO 6 BUCKETS",
        ),
        ("DISTRIBUTED INTO 6 BUCKETS", "DISTRIBUTED INTO 6 BUCKETS"),
        (
            "DISTRIBUTED BY HASH(cust_id)",
            "DISTRIBUTED BY HASH(cust_id)",
        ),
    ] {
        let a = check(
            &format!("CREATE TABLE t (cust_id STRING) {clause} WITH ('a' = 'b')"),
            &["t"],
            &[],
            NoState,
        );
        assert_eq!(a.statements[0].distribution.as_deref(), Some(text));
    }
    // Column-level primary key.
    let a = check(
        "CREATE TABLE t (id STRING PRIMARY KEY NOT ENFORCED, v INT)",
        &["t"],
        &[],
        NoState,
    );
    assert_eq!(a.statements[0].primary_key, vec!["id"]);
}

#[test]
fn t36_watermark() {
    check(
        "CREATE TABLE clicks (user_id STRING, url STRING, click_time TIMESTAMP(3),
  WATERMARK FOR click_time AS click_time - INTERVAL '5' SECOND)
WITH ('connector' = 'kafka', 'topic' = 'clicks', 'format' = 'json');",
        &["clicks"],
        &[],
        NoState,
    );
    let a = check(
        "ALTER TABLE clicks MODIFY WATERMARK FOR $rowtime AS $rowtime - INTERVAL '2' SECOND;",
        &[],
        &[],
        NoState,
    );
    assert_eq!(a.statements[0].kind, StatementKind::Alter);
}

#[test]
fn t37_metadata_computed_complex_types() {
    let a = check(
        "CREATE TABLE payments (
  id STRING, amount DECIMAL(10, 2),
  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL, headers MAP<STRING, BYTES> METADATA,
  card ROW<`number` STRING, expiry DATE>, items ARRAY<ROW<sku STRING, qty INT>>,
  tags MULTISET<STRING>, ltz TIMESTAMP(3) WITH LOCAL TIME ZONE,
  proc_time AS PROCTIME(), pay_year AS EXTRACT(YEAR FROM event_time)
) WITH ('connector' = 'kafka', 'topic' = 'payments', 'format' = 'json');",
        &["payments"],
        &[],
        NoState,
    );
    let cols = &a.statements[0].columns;
    let get = |n: &str| cols.iter().find(|c| c.name == n).unwrap();
    assert!(get("event_time").metadata && get("event_time").computed);
    assert!(get("offset").metadata && get("offset").computed);
    assert!(get("headers").metadata && !get("headers").computed);
    assert_eq!(get("headers").data_type, "MAP<STRING, BYTES>");
    assert_eq!(get("card").data_type, "ROW<`number` STRING, expiry DATE>");
    assert_eq!(get("items").data_type, "ARRAY<ROW<sku STRING, qty INT>>");
    assert_eq!(get("ltz").data_type, "TIMESTAMP(3) WITH LOCAL TIME ZONE");
    assert!(get("proc_time").computed && !get("proc_time").metadata);
    assert_eq!(get("pay_year").data_type, "EXTRACT(YEAR FROM event_time)");
    assert!(!get("id").computed);
    // Angle-bracket types inside CAST.
    check(
        "INSERT INTO o SELECT CAST(x AS ROW<a INT, b ARRAY<STRING>>) FROM i",
        &["o"],
        &["i"],
        Stateless,
    );
}

// ---------- Robustness ----------

#[test]
fn empty_and_comment_only_files() {
    for sql in [
        "",
        "   \n",
        "-- nothing\n",
        "/* nothing */",
        ";;",
        "/*+ hint */",
    ] {
        let a = sql::analyze(sql);
        assert!(a.statements.is_empty(), "{sql:?}");
        assert!(a.warnings.is_empty(), "{sql:?}");
    }
}

#[test]
fn broken_statement_falls_back_with_warning() {
    let a = sql::analyze(
        "INSERT INTO out SELECT a b c FROM src JOIN other ON x;\nINSERT INTO ok SELECT * FROM t;",
    );
    assert_eq!(a.statements.len(), 2);
    assert!(a.statements[0].fallback);
    assert!(!a.statements[1].fallback);
    assert_eq!(a.warnings.len(), 1);
    assert_eq!(a.warnings[0].line, 1);
    let names: Vec<String> = a.sources().iter().map(TableName::dotted).collect();
    assert_eq!(names, vec!["other", "src", "t"]);
    assert_eq!(
        a.sinks().iter().map(TableName::dotted).collect::<Vec<_>>(),
        vec!["ok", "out"]
    );
}

#[test]
fn warnings_point_into_the_file() {
    let a = sql::analyze("SELECT 1;\n\nCREATE TABLE t (\n  a INT,");
    assert_eq!(a.warnings.len(), 1);
    let w = &a.warnings[0];
    assert!(w.line >= 3 && w.column >= 1, "{w:?}");
    let a = sql::analyze("INSERT INTO t SELECT * FROM a WHERE x = = 1");
    assert_eq!((a.warnings[0].line, a.warnings[0].column), (1, 41));
    assert!(
        a.warnings[0].message.starts_with("Expected"),
        "{:?}",
        a.warnings[0]
    );
}

#[test]
fn never_panics_on_garbage_or_truncated_input() {
    let samples = [
        "CREATE TABLE t (a ROW<b INT",
        "CREATE TABLE t (a ARRAY<ROW<b INT>>, WATERMARK FOR",
        "INSERT INTO",
        "SELECT * FROM TABLE(TUMBLE(TABLE",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;",
        "BEGIN STATEMENT SET; END; END; END;",
        "SELECT 'unterminated",
        "SELECT `unterminated",
        "/* unterminated comment",
        "))))((((",
        "SET",
        "USE",
        "CREATE",
        "CREATE MATERIALIZED TABLE",
        "WITH a AS (SELECT * FROM b) ",
        "SELECT * FROM t FOR SYSTEM_TIME AS OF",
        "\u{0}\u{1}ÿ€😀 FROM JOIN ,,, TABLE MODEL",
        "CREATE TABLE x LIKE",
        "CREATE TABLE x (a INT) DISTRIBUTED",
        "INSERT INTO t SELECT * FROM a MATCH_RECOGNIZE (",
    ];
    for s in samples {
        let _ = sql::analyze(s);
        // Every prefix too (truncation at any character).
        for (i, _) in s.char_indices() {
            let _ = sql::analyze(&s[..i]);
        }
    }
    // Truncations of a real multi-statement file.
    let file = "CREATE TABLE clicks (user_id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
                DISTRIBUTED BY HASH(user_id) INTO 4 BUCKETS WITH ('connector' = 'kafka');\n\
                EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)); END;";
    for (i, _) in file.char_indices() {
        let _ = sql::analyze(&file[..i]);
    }
}

#[test]
fn never_panics_on_deep_nesting_and_token_soup() {
    // Deep nesting: the parser's recursion limit turns into a warning and the fallback still runs.
    let deep = format!(
        "INSERT INTO o SELECT * FROM {}t{}",
        "(SELECT * FROM ".repeat(300),
        ")".repeat(300)
    );
    let a = sql::analyze(&deep);
    assert_eq!(
        a.sinks().iter().map(TableName::dotted).collect::<Vec<_>>(),
        vec!["o"]
    );
    assert_eq!(
        a.sources()
            .iter()
            .map(TableName::dotted)
            .collect::<Vec<_>>(),
        vec!["t"]
    );
    let parens = format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(4000));
    let _ = sql::analyze(&parens);

    // Token soup from a fixed pseudo-random sequence (deterministic, no extra dependency).
    const WORDS: &[&str] = &[
        "SELECT",
        "FROM",
        "JOIN",
        "LEFT",
        "ON",
        "WHERE",
        "GROUP",
        "BY",
        "INSERT",
        "INTO",
        "CREATE",
        "TABLE",
        "VIEW",
        "AS",
        "WITH",
        "(",
        ")",
        ",",
        ";",
        ".",
        "'s'",
        "`q`",
        "\"d\"",
        "t",
        "u",
        "1",
        "*",
        "=",
        "<",
        ">",
        ">>",
        "LATERAL",
        "UNNEST",
        "FOR",
        "SYSTEM_TIME",
        "OF",
        "EXECUTE",
        "STATEMENT",
        "SET",
        "BEGIN",
        "END",
        "TUMBLE",
        "DESCRIPTOR",
        "MODEL",
        "ROW",
        "ARRAY",
        "MAP",
        "[",
        "]",
        "DISTRIBUTED",
        "INTO",
        "BUCKETS",
        "WATERMARK",
        "METADATA",
        "VIRTUAL",
        "LIKE",
        "PARTITION",
        "MATCH_RECOGNIZE",
        "PATTERN",
        "DEFINE",
        "WITHIN",
        "INTERVAL",
        "--c\n",
        "/*c*/",
        "/*+ h */",
        "\n",
        "$rowtime",
        "JSON_VALUE",
        "KEY",
        "VALUE",
        "OVER",
        "UNION",
        "ALL",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..3000 {
        let mut sql = String::new();
        let len = (seed % 40) as usize + 1;
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            sql.push_str(WORDS[(seed % WORDS.len() as u64) as usize]);
            sql.push(' ');
        }
        let _ = sql::analyze(&sql);
    }
}

#[test]
fn crlf_line_endings() {
    let sql = "-- header\r\nINSERT INTO `out`\r\nSELECT *\r\nFROM src;\r\n";
    let a = check(sql, &["out"], &["src"], Stateless);
    let s = &a.statements[0];
    assert_eq!(s.line, 2);
    assert_eq!(s.text, "INSERT INTO `out`\r\nSELECT *\r\nFROM src");
    let span = s.sources[0].span.unwrap();
    assert_eq!(
        (span.start.line, span.start.column, span.end.column),
        (4, 6, 9)
    );
    let span = s.sinks[0].span.unwrap();
    assert_eq!(
        (span.start.line, span.start.column, span.end.column),
        (2, 13, 18)
    );
}

// ---------- I. SQL as real repositories hold it: broken, templated, migrated (issue #14) ----------

/// Analyses `sql` and checks the file-level answer without requiring a clean parse; returns the analysis.
fn answer(sql: &str, sinks: &[&str], sources: &[&str], state: Statefulness) -> FileAnalysis {
    let a = sql::analyze(sql);
    let got_sinks: Vec<String> = a.sinks().iter().map(TableName::dotted).collect();
    let got_sources: Vec<String> = a.sources().iter().map(TableName::dotted).collect();
    assert_eq!(got_sinks, sinks, "sinks of {sql:?}");
    assert_eq!(got_sources, sources, "sources of {sql:?}");
    assert_eq!(a.statefulness(), state, "statefulness of {sql:?}");
    a
}

fn warned(a: &FileAnalysis, kind: WarningKind, line: usize) -> bool {
    a.warnings.iter().any(|w| w.kind == kind && w.line == line)
}

#[test]
fn i01_missing_semicolon_keeps_the_insert_and_its_state() {
    let a = answer(
        "SELECT * FROM src_a WHERE id = 'x'\nINSERT INTO int_b SELECT id, SUM(v) FROM src_a GROUP BY id;",
        &["int_b"],
        &["src_a"],
        Stateful,
    );
    assert_eq!(a.statements.len(), 2);
    assert_eq!(a.statements[0].kind, StatementKind::Select);
    assert_eq!(a.statements[1].kind, StatementKind::Insert);
    assert_eq!(a.statements[1].line, 2);
    // Both pieces parsed: the answer is the parser's, and the missing `;` is reported where it bites.
    assert!(a.statements.iter().all(|s| !s.fallback));
    assert!(
        warned(&a, WarningKind::MissingSemicolon, 2),
        "{:?}",
        a.warnings
    );
    // CREATE TABLE, then an INSERT with a join.
    answer(
        "CREATE TABLE t (id INT) WITH ('connector' = 'datagen')\nINSERT INTO u SELECT * FROM t JOIN s ON t.id = s.id",
        &["t", "u"],
        &["s", "t"],
        Stateful,
    );
    // INSERT … VALUES, then an INSERT of a query.
    answer(
        "INSERT INTO t VALUES (1)\nINSERT INTO u SELECT DISTINCT a FROM s",
        &["t", "u"],
        &["s"],
        Stateful,
    );
}

/// Every pair of statements written without `;` between them gives the answer the two give with it: the
/// union of sinks and sources and the larger statefulness. A property over statements of every kind.
#[test]
fn i01_any_two_statements_without_semicolon_read_as_with_it() {
    let statements = [
        "SELECT * FROM a WHERE x = 1",
        "SELECT a, COUNT(*) FROM a GROUP BY a",
        "INSERT INTO b SELECT * FROM a",
        "INSERT INTO b SELECT id, SUM(v) FROM a GROUP BY id",
        "INSERT INTO b (x, y) SELECT x, y FROM a UNION ALL SELECT x, y FROM c",
        "INSERT INTO b VALUES (1, 'x')",
        "INSERT INTO b WITH w AS (SELECT * FROM a) SELECT * FROM w",
        "CREATE TABLE c (x INT) WITH ('connector' = 'datagen')",
        "CREATE TABLE d WITH ('connector' = 'kafka') AS SELECT x, COUNT(*) AS n FROM a GROUP BY x",
        "CREATE TEMPORARY VIEW v AS SELECT * FROM a WHERE x > 0",
        "CREATE TABLE e (x INT) LIKE c",
        "DROP TABLE IF EXISTS z",
        "SET 'parallelism.default' = '2'",
        "USE CATALOG cat",
        "ALTER TABLE a SET ('k' = 'v')",
        "EXECUTE INSERT INTO f SELECT * FROM a",
        "WITH w AS (SELECT * FROM a) SELECT * FROM w",
        "CREATE FUNCTION fn AS 'com.example.Fn'",
        "REPLACE TABLE r AS SELECT * FROM a",
    ];
    for first in statements {
        for second in statements {
            let joined = sql::analyze(&format!("{first}\n{second}"));
            let apart = sql::analyze(&format!("{first};\n{second};"));
            assert!(
                apart.warnings.is_empty(),
                "{first} / {second}: {:?}",
                apart.warnings
            );
            assert_eq!(joined.sinks(), apart.sinks(), "sinks of {first} / {second}");
            assert_eq!(
                joined.sources(),
                apart.sources(),
                "sources of {first} / {second}"
            );
            assert_eq!(
                joined.statefulness(),
                apart.statefulness(),
                "statefulness of {first} / {second}"
            );
            assert_eq!(joined.statements.len(), 2, "{first} / {second}");
            assert!(
                warned(&joined, WarningKind::MissingSemicolon, 2),
                "{first} / {second}: {:?}",
                joined.warnings
            );
        }
    }
}

#[test]
fn i02_every_create_of_a_chunk_is_kept() {
    let a = answer(
        "CREATE TABLE a (x INT) WITH ('connector'='datagen')\nCREATE TABLE c (x INT) WITH ('connector'='datagen')",
        &["a", "c"],
        &[],
        NoState,
    );
    assert_eq!(a.statements.len(), 2);
    // After a SELECT, a DROP, a shell line and a `##` heading.
    answer(
        "SELECT 1\nCREATE TABLE a (x INT)\nDROP TABLE b\nCREATE VIEW c AS SELECT * FROM a",
        &["a", "c"],
        &["a"],
        Stateless,
    );
    let a = answer(
        "$ ./bin/sql-client.sh -f job.sql\nCREATE TABLE a (x INT) WITH ('connector' = 'datagen');\n## Sink\nCREATE TABLE c (x INT) WITH ('connector' = 'print');\nINSERT INTO c SELECT * FROM a;",
        &["a", "c"],
        &["a"],
        Stateless,
    );
    // The shell line and the heading are reported, each at its own line.
    assert!(warned(&a, WarningKind::Fallback, 1), "{:?}", a.warnings);
    assert!(warned(&a, WarningKind::Fallback, 3), "{:?}", a.warnings);
}

#[test]
fn i03_with_before_insert_is_read_and_reported() {
    let a = answer(
        "WITH x AS (SELECT * FROM a) INSERT INTO t SELECT * FROM x;",
        &["t"],
        &["a"],
        Stateless,
    );
    assert_eq!(a.statements[0].kind, StatementKind::Insert);
    assert!(!a.statements[0].fallback);
    assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
    assert_eq!(a.warnings[0].kind, WarningKind::Syntax);
    assert!(
        a.warnings[0].message.contains("INSERT INTO t WITH"),
        "{:?}",
        a.warnings[0]
    );
    // Siblings: OVERWRITE, a column list, several CTEs, a stateful query, a CTE shadowing a table.
    answer(
        "WITH x AS (SELECT * FROM a), y AS (SELECT k, COUNT(*) AS n FROM x GROUP BY k)\nINSERT OVERWRITE t (k, n) SELECT * FROM y",
        &["t"],
        &["a"],
        Stateful,
    );
    answer(
        "WITH a AS (SELECT * FROM a) INSERT INTO `db`.t SELECT * FROM a JOIN b ON a.id = b.id",
        &["db.t"],
        &["a", "b"],
        Stateful,
    );
}

#[test]
fn i04_replace_table_and_alter_as_query() {
    let a = check(
        "REPLACE TABLE r WITH ('connector' = 'kafka') AS SELECT id, COUNT(*) AS n FROM s GROUP BY id;",
        &["r"],
        &["s"],
        Stateful,
    );
    assert_eq!(a.statements[0].kind, StatementKind::Ctas);
    check(
        "CREATE OR REPLACE TABLE r (PRIMARY KEY (id) NOT ENFORCED) AS SELECT id FROM s;",
        &["r"],
        &["s"],
        Stateless,
    );
    // ALTER is never a sink, but the new query reads its sources and its state counts.
    let a = check(
        "ALTER VIEW v AS SELECT a.id FROM a JOIN b ON a.id = b.id;",
        &[],
        &["a", "b"],
        Stateful,
    );
    assert_eq!(a.statements[0].kind, StatementKind::Alter);
    check(
        "ALTER MATERIALIZED TABLE `c`.`d`.m AS SELECT ds, SUM(x) FROM s GROUP BY ds;",
        &[],
        &["s"],
        Stateful,
    );
    // Confluent Cloud's form: columns, distribution, options and start mode before the query.
    check(
        "ALTER MATERIALIZED TABLE m (PRIMARY KEY (a) NOT ENFORCED) DISTRIBUTED BY (a) INTO 2 BUCKETS WITH ('k' = 'v') START_MODE = RESUME_OR_FROM_BEGINNING AS SELECT a, COUNT(*) FROM s GROUP BY a;",
        &[],
        &["s"],
        Stateful,
    );
    // The other ALTER forms stay opaque, a watermark expression in parentheses included.
    check("ALTER MATERIALIZED TABLE m SUSPEND;", &[], &[], NoState);
    check(
        "ALTER MATERIALIZED TABLE m MODIFY WATERMARK FOR ts AS (ts - INTERVAL '1' SECOND);",
        &[],
        &[],
        NoState,
    );
    // Without `;`, each of the family starts a statement of its own.
    answer(
        "REPLACE TABLE r AS SELECT * FROM s\nREPLACE TABLE q AS SELECT * FROM r",
        &["q", "r"],
        &["r", "s"],
        Stateless,
    );
}

#[test]
fn i05_reserved_words_are_never_tables() {
    let a = answer(
        "SELECT a, SUM(b) FROM\n-- t\nGROUP BY a;",
        &[],
        &[],
        NoState,
    );
    assert!(warned(&a, WarningKind::Syntax, 3), "{:?}", a.warnings);
    answer(
        "INSERT INTO t SELECT * FROM WHERE x = 1",
        &["t"],
        &[],
        Stateless,
    );
    answer(
        "INSERT INTO t SELECT * FROM a JOIN ON a.x = 1",
        &["t"],
        &["a"],
        Stateful,
    );
    // The parser itself accepts `FROM ORDER` inside a subquery: still not a table, and said so.
    let a = answer(
        "INSERT INTO t SELECT a FROM s WHERE a IN (SELECT b FROM ORDER)",
        &["t"],
        &["s"],
        Stateful,
    );
    assert!(!a.statements[0].fallback);
    assert!(warned(&a, WarningKind::Syntax, 1), "{:?}", a.warnings);
    // Quoted, a reserved word is a name.
    check(
        "INSERT INTO t SELECT * FROM `ORDER`",
        &["t"],
        &["ORDER"],
        Stateless,
    );
}

/// No reserved word, in any relation position, is ever reported as a table unquoted.
#[test]
fn i05_no_reserved_word_in_any_relation_position_is_a_table() {
    let words = [
        "ALL",
        "AND",
        "AS",
        "BETWEEN",
        "BY",
        "CASE",
        "CROSS",
        "DISTINCT",
        "ELSE",
        "END",
        "EXCEPT",
        "EXISTS",
        "FETCH",
        "FOR",
        "FROM",
        "FULL",
        "GROUP",
        "HAVING",
        "IN",
        "INNER",
        "INTERSECT",
        "IS",
        "JOIN",
        "LEFT",
        "LIKE",
        "LIMIT",
        "NATURAL",
        "NOT",
        "NULL",
        "OFFSET",
        "ON",
        "OR",
        "ORDER",
        "OUTER",
        "OVER",
        "PARTITION",
        "RIGHT",
        "SET",
        "THEN",
        "UNION",
        "USING",
        "WHEN",
        "WHERE",
        "WINDOW",
        "group",
        "Order",
    ];
    for w in words {
        for shape in [
            "INSERT INTO t SELECT * FROM {w}",
            "INSERT INTO t SELECT * FROM a JOIN {w} ON TRUE",
            "INSERT INTO t SELECT * FROM a, {w}",
            "INSERT INTO t SELECT * FROM a WHERE x IN (SELECT y FROM {w})",
            "SELECT * FROM {w} x",
        ] {
            let sql = shape.replace("{w}", w);
            let a = sql::analyze(&sql);
            let names: Vec<String> = a.sources().iter().map(TableName::dotted).collect();
            assert!(
                !names.iter().any(|n| n.eq_ignore_ascii_case(w)),
                "{sql}: {names:?}"
            );
            assert!(!a.warnings.is_empty(), "{sql}: no warning");
        }
    }
}

#[test]
fn i06_template_placeholders_are_kept_whole_and_reported() {
    let a = answer(
        "INSERT INTO results SELECT * FROM ${NEXMARK_TABLE}",
        &["results"],
        &["${NEXMARK_TABLE}"],
        Stateless,
    );
    let w: Vec<_> = a
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::Placeholder)
        .collect();
    assert_eq!(w.len(), 1, "{:?}", a.warnings);
    assert_eq!((w[0].line, w[0].column), (1, 35));
    assert!(w[0].message.contains("${NEXMARK_TABLE}"));
    // Jinja style, placeholders inside names, qualified names, quoted names, options; comments ignored.
    let a = answer(
        "-- run with ${ENV} set\nCREATE TABLE `${db}`.orders_${env} (id INT) WITH ('topic' = '${env}.orders');\nINSERT INTO {{ target }} SELECT id, COUNT(*) FROM cat.${db}.orders_${env} GROUP BY id;",
        &["${db}.orders_${env}", "{{ target }}"],
        &["cat.${db}.orders_${env}"],
        Stateful,
    );
    let mut names: Vec<&str> = a
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::Placeholder)
        .map(|w| w.message.split_whitespace().nth(3).unwrap_or(""))
        .collect();
    names.sort();
    assert_eq!(names, vec!["${db}", "${env}", "{{"]);
    assert!(a.statements.iter().all(|s| !s.fallback), "{:?}", a.warnings);
    // Spans still cover the names as written (the rename by span works on templated files).
    let sink = &a.statements[1].sinks[0];
    assert_eq!(sink.span.unwrap().start.line, 3);
    assert_eq!(sink.span.unwrap().start.column, 13);
}

#[test]
fn i07_valid_built_ins_do_not_fall_back() {
    let a = check(
        "INSERT INTO o SELECT k, JSON_OBJECTAGG(KEY k VALUE v) FROM t WHERE v BETWEEN SYMMETRIC 10 AND 1 GROUP BY k",
        &["o"],
        &["t"],
        Stateful,
    );
    assert!(has(&a, StateReason::GroupAggregate));
    // A JSON aggregate alone is a global aggregate.
    let a = check(
        "INSERT INTO o SELECT JSON_ARRAYAGG(v ORDER BY v ABSENT ON NULL) FROM t",
        &["o"],
        &["t"],
        Stateful,
    );
    assert!(has(&a, StateReason::GlobalAggregate));
    check(
        "INSERT INTO o SELECT TRIM(BOTH FROM a), TRIM(LEADING FROM b) FROM t WHERE x NOT BETWEEN ASYMMETRIC 1 AND 2",
        &["o"],
        &["t"],
        Stateless,
    );
}

#[test]
fn i08_streaming_order_by_is_stateful() {
    let a = check(
        "INSERT INTO o SELECT * FROM clicks ORDER BY click_time",
        &["o"],
        &["clicks"],
        Stateful,
    );
    assert!(has(&a, StateReason::Sort));
    check(
        "INSERT INTO o SELECT * FROM clicks ORDER BY click_time, user_id LIMIT 3",
        &["o"],
        &["clicks"],
        Stateful,
    );
    check(
        "INSERT INTO o SELECT * FROM (SELECT * FROM clicks ORDER BY amount DESC LIMIT 10)",
        &["o"],
        &["clicks"],
        Stateful,
    );
    // Not a query's ORDER BY: inside OVER and inside an aggregate call.
    let a = check(
        "INSERT INTO o SELECT LAST_VALUE(x) OVER (PARTITION BY k ORDER BY ts) FROM clicks",
        &["o"],
        &["clicks"],
        Stateful,
    );
    assert!(!has(&a, StateReason::Sort));
    // A SELECT alone writes nothing.
    check(
        "SELECT * FROM clicks ORDER BY ts",
        &[],
        &["clicks"],
        NoState,
    );
    // The fallback says the same of a statement it reads.
    let a = answer(
        "INSERT INTO o SELECT a b c FROM clicks ORDER BY ts",
        &["o"],
        &["clicks"],
        Stateful,
    );
    assert!(a.statements[0].fallback);
    assert!(has(&a, StateReason::Sort));
}

#[test]
fn i09_limits_are_clear_errors() {
    let big = format!(
        "INSERT INTO t SELECT * FROM s;\n{}",
        "-- padding\n".repeat(sql::limits::MAX_SQL_FILE_BYTES / 11 + 1)
    );
    let a = sql::analyze(&big);
    assert!(a.statements.is_empty());
    assert_eq!(a.warnings.len(), 1);
    assert_eq!(a.warnings[0].kind, WarningKind::Limit);
    assert!(a.warnings[0].kind.is_error());
    assert!(
        a.warnings[0].message.contains("8 MiB"),
        "{:?}",
        a.warnings[0]
    );
    assert!(sql::limits::check_file_size(sql::limits::MAX_SQL_FILE_BYTES).is_ok());
    // Deeper than the parser's nesting limit: read by the fallback, and the warning names the limit.
    let deep = format!(
        "INSERT INTO o SELECT * FROM {}t{}",
        "(SELECT * FROM ".repeat(60),
        ")".repeat(60)
    );
    let a = answer(&deep, &["o"], &["t"], Stateless);
    assert!(
        a.warnings[0].message.contains("50 levels"),
        "{:?}",
        a.warnings
    );
}

#[test]
fn i05_reserved_words_are_never_sinks_either() {
    // A notes line read by the fallback: `create table by pgadmin` names no table `by`.
    let a = answer(
        "# create table by pgadmin\nCREATE TABLE t (id INT);\nINSERT INTO `by` SELECT * FROM t;",
        &["by", "t"],
        &["t"],
        Stateless,
    );
    assert!(warned(&a, WarningKind::Syntax, 1), "{:?}", a.warnings);
}
