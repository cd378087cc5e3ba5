//! Throughput of `sql::analyze` on 20,000 small DDL/DML files (~30 lines each), as the project scan runs
//! it (in parallel). Run with `cargo test --release --test testsuite sql_speed:: -- --ignored --nocapture`; the target
//! is well under 1 s on 2 cores.

use std::time::Instant;

use rayon::prelude::*;

const DDL: &str = "-- orders, keyed by id
CREATE TABLE IF NOT EXISTS `orders_enriched_N` (
  id STRING NOT NULL,
  customer_id STRING,
  amount DECIMAL(10, 2),
  currency STRING,
  tags ARRAY<STRING>,
  address ROW<street STRING, city STRING, zip STRING>,
  event_time TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
  proc_time AS PROCTIME(),
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) DISTRIBUTED BY HASH(id) INTO 6 BUCKETS
WITH (
  'changelog.mode' = 'upsert',
  'kafka.cleanup-policy' = 'compact',
  'value.format' = 'avro-registry',
  'key.format' = 'avro-registry'
);
";

const DML: &str = "INSERT INTO orders_enriched_N
WITH recent AS (
  SELECT id, customer_id, amount, currency, event_time
  FROM orders_raw
  WHERE amount > 0
)
SELECT
  r.id,
  r.customer_id,
  r.amount * fx.rate AS amount_eur,
  c.name,
  COALESCE(c.tier, 'none') AS tier,
  CASE WHEN r.amount > 1000 THEN 'big' ELSE 'small' END AS size_class
FROM recent r
JOIN customers c ON r.customer_id = c.id
LEFT JOIN fx_rates FOR SYSTEM_TIME AS OF r.event_time AS fx ON r.currency = fx.currency
WHERE c.active = TRUE
  AND r.customer_id NOT IN (SELECT id FROM blocked_customers);
";

#[test]
#[ignore = "benchmark: run in release mode"]
fn analyze_20000_small_files() {
    let files: Vec<String> = (0..20_000)
        .map(|i| if i % 2 == 0 { DDL } else { DML }.replace("_N", &format!("_{i}")))
        .collect();
    let start = Instant::now();
    let statements: usize = files
        .par_iter()
        .map(|f| flinkpipe::sql::analyze(f).statements.len())
        .sum();
    let elapsed = start.elapsed();
    println!(
        "20000 files, {statements} statements in {elapsed:?} ({} threads)",
        rayon::current_num_threads()
    );
    assert_eq!(statements, 20_000);
}

#[test]
#[ignore = "benchmark: run in release mode"]
fn phases() {
    let files: Vec<String> = (0..20_000)
        .map(|i| if i % 2 == 0 { DDL } else { DML }.replace("_N", &format!("_{i}")))
        .collect();
    let d = flinkpipe::sql::dialect::FlinkDialect;
    let start = Instant::now();
    let n: usize = files
        .iter()
        .map(|f| flinkpipe::sql::split::split(&d, f).tokens.len())
        .sum();
    println!("split (1 thread): {:?} {n}", start.elapsed());
    let start = Instant::now();
    let n: usize = files
        .iter()
        .map(|f| {
            sqlparser::tokenizer::Tokenizer::new(&d, f)
                .tokenize_with_location()
                .unwrap()
                .len()
        })
        .sum();
    println!("tokenize only (1 thread): {:?} {n}", start.elapsed());
    // sqlparser's own tokenizer + parser with our dialect, nothing of ours after it: the floor of any
    // analysis built on sqlparser.
    let start = Instant::now();
    let n: usize = files
        .iter()
        .map(|f| {
            sqlparser::parser::Parser::parse_sql(&d, f)
                .expect("the benchmark's SQL parses")
                .len()
        })
        .sum();
    println!("sqlparser parse only (1 thread): {:?} {n}", start.elapsed());
    let start = Instant::now();
    let n: usize = files
        .iter()
        .map(|f| flinkpipe::sql::analyze(f).statements.len())
        .sum();
    println!("analyze (1 thread): {:?} {n}", start.elapsed());
}

#[test]
#[ignore = "benchmark: run in release mode"]
fn analyze_one_thread() {
    let files: Vec<String> = (0..20_000)
        .map(|i| if i % 2 == 0 { DDL } else { DML }.replace("_N", &format!("_{i}")))
        .collect();
    let start = Instant::now();
    let n: usize = files
        .iter()
        .map(|f| flinkpipe::sql::analyze(f).statements.len())
        .sum();
    println!("analyze (1 thread): {:?} {n}", start.elapsed());
}

/// The pathological shapes of issue #14 at the sizes the issue reports (and the two files over the size
/// limit), each analysed once: time, statements and warnings. Linear time is checked at smaller sizes by
/// `tests/testsuite/sql_fuzz.rs`; BENCHMARKS.md has the `sql refs` figures with peak memory.
#[test]
#[ignore = "benchmark: run in release mode"]
fn pathological_sizes() {
    let terms = |n: usize, sep: &str, f: &dyn Fn(usize) -> String| {
        (0..n).map(f).collect::<Vec<_>>().join(sep)
    };
    let shapes: Vec<(&str, String)> = vec![
        (
            "OR chain, 131,316 terms",
            format!(
                "INSERT INTO t SELECT * FROM s WHERE {};",
                terms(131_316, " OR ", &|i| format!("a = {}", i % 10))
            ),
        ),
        (
            "+ chain, 200,000 terms",
            format!(
                "INSERT INTO t SELECT {} FROM s;",
                terms(200_000, " + ", &|i| format!("a{}", i % 10))
            ),
        ),
        (
            "20,000 statements on one line",
            (0..20_000)
                .map(|i| format!("INSERT INTO t{i} SELECT a FROM s{i};"))
                .collect(),
        ),
        ("30,000 nested WITH", {
            let mut s = String::from("INSERT INTO t ");
            (0..30_000).for_each(|i| s.push_str(&format!("WITH c{i} AS (")));
            s.push_str("SELECT 1");
            (0..30_000)
                .rev()
                .for_each(|i| s.push_str(&format!(") SELECT * FROM c{i}")));
            s
        }),
        ("100,000 CTEs", {
            let mut s = String::from("INSERT INTO t WITH c0 AS (SELECT * FROM s)");
            (1..100_000).for_each(|i| s.push_str(&format!(", c{i} AS (SELECT * FROM c{})", i - 1)));
            s.push_str(" SELECT * FROM c99999;");
            s
        }),
        (
            "6,000,000 columns (53 MB, over the limit)",
            format!(
                "INSERT INTO t SELECT {} FROM s;",
                terms(6_000_000, ", ", &|i| format!("c{i}"))
            ),
        ),
    ];
    for (name, sql) in shapes {
        let start = Instant::now();
        let a = flinkpipe::sql::analyze(&sql);
        println!(
            "{name}: {} bytes, {:?}, {} statements, {} warnings",
            sql.len(),
            start.elapsed(),
            a.statements.len(),
            a.warnings.len()
        );
    }
}
