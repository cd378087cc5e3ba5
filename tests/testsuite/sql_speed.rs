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
