//! The Flink dialect's coverage: expressions and statements of real Flink SQL that must parse with
//! `FlinkDialect` (no fallback, no warning). Extraction itself is tested in `sql_tricky.rs` and
//! `sql_corpus.rs`.

fn assert_parses(sql: &str) {
    let a = flinkpipe::sql::analyze(sql);
    assert!(a.warnings.is_empty(), "{sql}: {:?}", a.warnings);
    assert!(a.statements.iter().all(|s| !s.fallback), "{sql}");
}

#[test]
fn expressions() {
    let exprs = [
        "JSON_OBJECT(KEY 'a' VALUE b)",
        "JSON_OBJECT('a' VALUE b, 'c' VALUE d NULL ON NULL)",
        "JSON_ARRAY(a, b)",
        "JSON_QUERY(p, '$.a' WITH WRAPPER)",
        "IF(a, b, c)",
        "a || b",
        "CURRENT_WATERMARK(ts)",
        "TO_TIMESTAMP_LTZ(x, 3)",
        "TIMESTAMPADD(DAY, 1, ts)",
        "TIMESTAMPDIFF(SECOND, a, b)",
        "CEIL(ts TO HOUR)",
        "FLOOR(ts TO DAY)",
        "ARRAY[1,2]",
        "MAP['a', 1]",
        "x IS JSON",
        "a SIMILAR TO b",
        "ROW(a, b)",
        "CAST(x AS ROW<a INT>)",
        "PROCTIME()",
        "TUMBLE_START(ts, INTERVAL '1' HOUR)",
        "CURRENT_TIMESTAMP",
        "LOCALTIMESTAMP",
        "a.b.c",
        "arr[1]",
        "m['k']",
        "ts + INTERVAL '1' HOUR",
        "DATE '2020-01-01'",
        "TIMESTAMP '2020-01-01 00:00:00'",
        "x LIKE 'a%' ESCAPE '!'",
        "COUNT(DISTINCT x)",
        "LISTAGG(x, ',')",
        "SUM(x) FILTER (WHERE y > 1)",
        "CARDINALITY(a)",
        "JSON_EXISTS(p, '$.a')",
        "JSON_VALUE(p, '$.a' RETURNING INTEGER DEFAULT 0 ON EMPTY)",
        "INTERVAL '10' MINUTES",
        "INTERVAL '1 2' DAY TO HOUR",
        "CAST(x AS TIMESTAMP(3))",
        "CAST(x AS TIMESTAMP_LTZ(3))",
        "CAST(x AS DECIMAL(10, 2))",
        "CAST(x AS MAP<STRING, INT>)",
        "CAST(x AS ARRAY<ROW<a INT>>)",
        "TRY_CAST(x AS INT)",
        "x IS NOT DISTINCT FROM y",
        "CAST(x AS STRING)",
        "CAST(x AS BYTES)",
        "CAST(x AS VARCHAR(2147483647))",
        "DATE_FORMAT(ts, 'yyyy')",
        "`timestamp`",
        "e.`value`",
        "o.$rowtime",
        "$rowtime",
        "UNIX_TIMESTAMP()",
        "SESSION_START(ts, INTERVAL '1' HOUR)",
        "POSITION('a' IN b)",
        "CHAR_LENGTH(a)",
        "x NOT IN (1, 2)",
        "CAST(x AS TIMESTAMP(3) WITH LOCAL TIME ZONE)",
        "CAST(x AS INT NOT NULL)",
        "TRY_CAST(x AS ROW<a INT> NOT NULL)",
        "CAST(x AS BOOLEAN)",
        "NOW()",
        "CONCAT_WS('-', a, b)",
        "CAST(x AS TIME(0))",
        "EXTRACT(EPOCH FROM ts)",
        "ELEMENT(a)",
        "a -> 'b'",
        "CURRENT_DATE",
        "USER",
        "CAST(x AS DOUBLE)",
        "CAST(x AS FLOAT)",
        "CAST(x AS TINYINT)",
        "CAST(x AS BINARY(3))",
        "CAST(x AS MULTISET<STRING>)",
        "ARRAY_AGG(x)",
        "JSON_ARRAYAGG(x)",
        "CAST(NULL AS ARRAY<STRING>)",
        "CASE x WHEN 1 THEN 'a' END",
        "REGEXP_EXTRACT(a, '(\\d+)', 1)",
        "`order`.`value`",
    ];
    for e in exprs {
        assert_parses(&format!("INSERT INTO o SELECT {e} AS c FROM t"));
    }
}

#[test]
fn statements() {
    let stmts = [
        "CREATE TABLE t (a INT) WITH ('connector' = 'kafka', 'properties.bootstrap.servers' = 'x:9092', 'scan.startup.mode' = 'earliest-offset')",
        "CREATE TABLE `c`.`d`.`t` (`a` INT COMMENT 'x', b STRING NOT NULL, CONSTRAINT pk PRIMARY KEY (a) NOT ENFORCED) COMMENT 'tbl' PARTITIONED BY (b) WITH ('a'='b')",
        "CREATE TABLE t (a INT, ts AS TO_TIMESTAMP(x) COMMENT 'c', WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,) WITH ('a'='b')",
        "CREATE TEMPORARY TABLE IF NOT EXISTS t (a INT) LIKE s",
        "CREATE TABLE t WITH ('a' = 'b') LIKE s (INCLUDING ALL OVERWRITING OPTIONS)",
        "CREATE TABLE t (`ts` TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL, `m` MAP<STRING, ARRAY<INT>> NOT NULL)",
        "CREATE VIEW IF NOT EXISTS v COMMENT 'c' AS SELECT 1",
        "CREATE OR REPLACE VIEW v AS SELECT * FROM t",
        "CREATE TEMPORARY VIEW v(a, b) AS SELECT a, b FROM t",
        "CREATE FUNCTION f AS 'com.x.F' LANGUAGE JAVA USING JAR 'x.jar'",
        "CREATE TEMPORARY SYSTEM FUNCTION f AS 'com.x.F'",
        "CREATE MODEL m INPUT (a STRING) OUTPUT (b STRING) WITH ('provider' = 'openai')",
        "CREATE CATALOG c WITH ('type' = 'hive')",
        "CREATE DATABASE IF NOT EXISTS db",
        "USE MODULES core",
        "SET",
        "RESET 'a'",
        "RESET",
        "SET execution.runtime-mode = batch",
        "SET 'table.exec.state.ttl' = '1 h'",
        "INSERT OVERWRITE TABLE x SELECT * FROM y",
        "INSERT INTO x PARTITION (dt='1') SELECT * FROM y",
        "SELECT * FROM t LIMIT 10",
        "SELECT * FROM t ORDER BY a FETCH FIRST 10 ROWS ONLY",
        "SELECT a, COUNT(*) FROM t GROUP BY GROUPING SETS ((a), ())",
        "SELECT a FROM t GROUP BY ROLLUP (a)",
        "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(id, name)",
        "SELECT window_start, COUNT(*) FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '1' MINUTE, SIZE => INTERVAL '5' MINUTE)) GROUP BY window_start",
        "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.a AND t2.ts BETWEEN t1.ts - INTERVAL '1' HOUR AND t1.ts",
        "SELECT * FROM t1 FULL OUTER JOIN t2 USING (a)",
        "SELECT * FROM t1 NATURAL JOIN t2",
        "EXPLAIN PLAN FOR SELECT 1",
        "SHOW TABLES",
        "DESCRIBE t",
        "DROP TEMPORARY VIEW IF EXISTS v",
        "ALTER TABLE t SET ('a' = 'b')",
        "SELECT * FROM t1 WHERE a IN (SELECT a FROM t2) AND b = ANY (SELECT b FROM t3)",
        "WITH a AS (SELECT 1) SELECT * FROM a",
        "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY a ORDER BY ts MEASURES A.x AS x, MATCH_ROWTIME() AS mt ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW PATTERN (A B*? C) WITHIN INTERVAL '1' HOUR DEFINE A AS A.x > 0, C AS C.x < 0)",
        "CREATE TABLE t (id INT) DISTRIBUTED BY HASH(id) INTO 4 BUCKETS",
        "CREATE OR REPLACE TABLE t (PRIMARY KEY (a) NOT ENFORCED) DISTRIBUTED BY (a) INTO 1 BUCKETS AS SELECT a FROM s",
        "CREATE MATERIALIZED TABLE m (CONSTRAINT pk PRIMARY KEY (a) NOT ENFORCED) PARTITIONED BY (ds) WITH ('format' = 'json') FRESHNESS = INTERVAL '30' SECOND REFRESH_MODE = FULL AS SELECT a, ds FROM s",
        "SELECT a FROM t /*+ OPTIONS('a'='b') */ WHERE x",
        "SELECT * FROM t1 JOIN t2 FOR SYSTEM_TIME AS OF PROCTIME() ON TRUE",
        "SELECT * FROM t1, LATERAL (SELECT * FROM t2 WHERE t2.a = t1.a LIMIT 1)",
        "SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY (a, b), DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
        "SELECT * FROM ML_PREDICT(TABLE t, MODEL `m`, DESCRIPTOR(a, b), MAP['async', 'true'])",
        "SELECT * FROM TABLE(ML_PREDICT(INPUT => TABLE t, MODEL => MODEL m, ARGS => DESCRIPTOR(a)))",
        "SELECT * FROM ML_EVALUATE(TABLE t, MODEL m, DESCRIPTOR(a))",
    ];
    for s in stmts {
        assert_parses(s);
    }
}

/// Flink built-ins whose syntax sqlparser does not know (Flink SQL reference, System (Built-in) Functions):
/// each once parsed through the token-level fallback with a warning, although valid.
#[test]
fn built_ins_with_their_own_syntax() {
    let exprs = [
        "JSON_OBJECTAGG(KEY k VALUE v)",
        "JSON_OBJECTAGG(k VALUE v NULL ON NULL)",
        "JSON_ARRAYAGG(x ABSENT ON NULL)",
        "JSON_ARRAYAGG(x ORDER BY y)",
        "JSON_ARRAY(a, b NULL ON NULL)",
        "JSON_OBJECT()",
        "JSON_QUERY(p, '$.a' RETURNING ARRAY<STRING> EMPTY ARRAY ON EMPTY)",
        "JSON_VALUE(x, 'lax $.a' NULL ON ERROR)",
        "JSON_EXISTS(x, '$.a' FALSE ON ERROR)",
        "x BETWEEN SYMMETRIC a AND b",
        "x NOT BETWEEN ASYMMETRIC a AND b",
        "x BETWEEN ASYMMETRIC a AND b AND y",
        "TRIM(BOTH FROM s)",
        "TRIM(LEADING FROM s)",
        "TRIM(TRAILING FROM s)",
        "TRIM(LEADING 'x' FROM s)",
        "OVERLAY(s PLACING 'x' FROM 2 FOR 3)",
        "SUBSTRING(s FROM 2 FOR 3)",
        "EXTRACT(DOW FROM ts)",
        "INTERVAL '1-2' YEAR TO MONTH",
        "x IS JSON SCALAR",
        "x IS NOT JSON OBJECT",
        "a SIMILAR TO b ESCAPE 'c'",
        "a ILIKE b",
        "SUM(x) OVER (PARTITION BY a ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)",
        "GROUPING_ID(a, b)",
        "CURRENT_ROW_TIMESTAMP()",
        "TYPEOF(x, TRUE)",
        "CAST(x AS ARRAY<INT NOT NULL>)",
        "CURRENT_TIMESTAMP AT TIME ZONE 'UTC'",
    ];
    for e in exprs {
        assert_parses(&format!("INSERT INTO o SELECT {e} AS c FROM t"));
    }
    for s in [
        "REPLACE TABLE r WITH ('connector' = 'kafka') AS SELECT * FROM s",
        "CREATE OR REPLACE TABLE r AS SELECT * FROM s",
        "ALTER VIEW v AS SELECT * FROM s",
        "ALTER MATERIALIZED TABLE m AS SELECT * FROM s",
        "SHOW CREATE TABLE t",
        "STOP JOB 'abc' WITH SAVEPOINT",
        "COMPILE PLAN 'p.json' FOR INSERT INTO a SELECT * FROM b",
    ] {
        assert_parses(s);
    }
}
