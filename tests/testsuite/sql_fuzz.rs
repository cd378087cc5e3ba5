//! Fuzzing the SQL front end: token-level mutations of real Flink SQL (the shared corpus and the cases of
//! issue #14), plus the pathological shapes of issue #14. No input may panic,
//! hang or break the answer's invariants (below).
//!
//! Each run mutates for `FLINKPIPE_FUZZ_SECS` seconds (default 3; the figure of a long run is in
//! BENCHMARKS.md) from the seed `FLINKPIPE_FUZZ_SEED` (default fixed, so a failure reproduces; the seed
//! and the failing input are printed). With `FLINKPIPE_FUZZ_SAVE=FILE` each input is written to FILE
//! before it is analysed, so one that kills the process (a stack overflow) can be found. Mutations work on sqlparser's tokens (whitespace and comments
//! included): delete, duplicate, swap, replace or insert a token, drop a `;`, truncate, splice a range of
//! another file, repeat a token hundreds of times, wrap in parentheses.
//!
//! Invariants checked on every input:
//! - no panic; the same text gives the same answer twice;
//! - every statement and warning line lies in the file, every reported name has non-empty parts and a
//!   span inside the file;
//! - a statement read by the fallback has a warning; a SELECT-only statement has no statefulness;
//! - time: within a generous bound of the input's size (a quadratic walk on a 50 KB input shows).

use crate::support::Rng;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flinkpipe::sql::{self, Statefulness, StatementKind};
use sqlparser::tokenizer::{Token, Tokenizer};

/// Tokens worth inserting: statement keywords, clause keywords, Flink constructs, punctuation, quotes,
/// placeholders, comments.
const VOCABULARY: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "LIMIT 3",
    "JOIN",
    "LEFT JOIN",
    "ON",
    "INSERT INTO",
    "CREATE TABLE",
    "CREATE VIEW",
    "AS",
    "WITH",
    "UNION",
    "UNION ALL",
    "EXECUTE STATEMENT SET BEGIN",
    "BEGIN STATEMENT SET;",
    "END",
    "SET",
    "USE",
    "DROP",
    "ALTER",
    "REPLACE TABLE",
    "VALUES",
    "TABLE",
    "LATERAL",
    "UNNEST",
    "FOR SYSTEM_TIME AS OF",
    "OVER",
    "PARTITION BY",
    "MATCH_RECOGNIZE",
    "WATERMARK FOR",
    "DISTRIBUTED BY",
    "INTO 4 BUCKETS",
    "METADATA",
    "(",
    ")",
    ",",
    ";",
    ".",
    "*",
    "=",
    "<",
    ">",
    ">>",
    "'",
    "`",
    "\"",
    "'s'",
    "`q`",
    "$rowtime",
    "${env}",
    "{{ v }}",
    "--c\n",
    "/*c*/",
    "/*+ OPTIONS('a'='b') */",
    "\n",
    "TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
    "ROW<a INT>",
    "ARRAY<ROW<b INT>>",
    "MAP['k', 1]",
    "JSON_OBJECTAGG(KEY k VALUE v)",
    "BETWEEN SYMMETRIC 1 AND 2",
    "CASE WHEN a THEN b END",
    "SUM(x)",
    "COUNT(*)",
    "ROW_NUMBER()",
    "DISTINCT",
    "IN (SELECT a FROM b)",
    "EXISTS",
    "é",
    "😀",
    "\u{feff}",
];

fn seeds() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    collect(&root.join("../shared/corpus/sql"), &mut out);
    out.extend(
        [
            "SELECT * FROM src_a WHERE id = 'x'\nINSERT INTO int_b SELECT id, SUM(v) FROM src_a GROUP BY id;",
            "WITH x AS (SELECT * FROM a) INSERT INTO t SELECT * FROM x;",
            "REPLACE TABLE r AS SELECT * FROM s;",
            "SELECT * FROM ${NEXMARK_TABLE}",
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM s; INSERT INTO b SELECT * FROM s; END;",
        ]
        .map(String::from),
    );
    assert!(out.len() > 100, "seeds: {}", out.len());
    out
}

fn collect(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "sql")
            && let Ok(text) = std::fs::read_to_string(&p)
        {
            out.push(text);
        }
    }
}

/// The text of each token of `sql`, whitespace and comments included (empty on a tokenizer error).
fn token_texts(sql: &str) -> Vec<String> {
    let dialect = sql::dialect::FlinkDialect;
    match Tokenizer::new(&dialect, sql).tokenize() {
        Ok(tokens) => tokens.iter().map(Token::to_string).collect(),
        Err(_) => sql.split_inclusive(' ').map(String::from).collect(),
    }
}

fn mutate(rng: &mut Rng, seeds: &[String], tokens: &mut Vec<String>) {
    let n = tokens.len();
    let word = || VOCABULARY;
    match rng.below(11) {
        0 if n > 0 => {
            tokens.remove(rng.below(n));
        }
        1 if n > 0 => {
            let i = rng.below(n);
            let t = tokens[i].clone();
            tokens.insert(i, t);
        }
        2 if n > 1 => {
            let i = rng.below(n - 1);
            tokens.swap(i, i + 1);
        }
        3 if n > 0 => {
            let i = rng.below(n);
            tokens[i] = word()[rng.below(word().len())].to_string();
        }
        4 => {
            let i = rng.below(n + 1);
            let w = word()[rng.below(word().len())];
            tokens.insert(i, format!(" {w} "));
        }
        5 => {
            if let Some(i) = tokens.iter().position(|t| t == ";") {
                tokens.remove(i);
            }
        }
        6 if n > 0 => tokens.truncate(rng.below(n)),
        7 => {
            let other = token_texts(&seeds[rng.below(seeds.len())]);
            if !other.is_empty() {
                let a = rng.below(other.len());
                let b = (a + rng.below(200)).min(other.len());
                let at = rng.below(n + 1);
                tokens.splice(at..at, other[a..b].iter().cloned());
            }
        }
        8 if n > 0 => {
            let i = rng.below(n);
            let t = tokens[i].clone();
            let times = 100 + rng.below(900);
            tokens.splice(i..i, std::iter::repeat_n(format!("{t} "), times));
        }
        9 if n > 1 => {
            let a = rng.below(n);
            let b = a + rng.below(n - a);
            tokens.insert(b, ")".into());
            tokens.insert(a, "(".into());
        }
        _ => {
            let i = rng.below(n + 1);
            tokens.insert(i, "\n".into());
        }
    }
}

/// Analyses `sql` and checks the invariants; returns a description of the first one broken.
fn check(sql: &str) -> Result<(), String> {
    let started = Instant::now();
    let a = catch_unwind(AssertUnwindSafe(|| sql::analyze(sql)))
        .map_err(|e| format!("panic: {:?}", e.downcast_ref::<String>()))?;
    let elapsed = started.elapsed();
    // Debug build, shared 2-core machine: 1 s plus 0.2 ms per byte is far above linear behaviour
    // (~2-5 µs per byte) and far below a quadratic walk on the larger mutated inputs.
    let budget = Duration::from_secs(1) + Duration::from_micros(200) * sql.len() as u32;
    if elapsed > budget {
        return Err(format!("took {elapsed:?} for {} bytes", sql.len()));
    }
    let lines = sql.split('\n').count();
    for w in &a.warnings {
        if w.line == 0 || w.line > lines + 1 || w.column == 0 {
            return Err(format!("warning outside the file: {w:?}"));
        }
    }
    for s in &a.statements {
        if s.line == 0 || s.line > lines {
            return Err(format!("statement line {} outside the file", s.line));
        }
        if s.fallback && a.warnings.is_empty() {
            return Err("a statement read by the fallback without any warning".into());
        }
        if s.kind == StatementKind::Select && s.statefulness != Statefulness::None {
            return Err("a SELECT-only statement with a statefulness".into());
        }
        for r in s.sinks.iter().chain(&s.sources) {
            if r.name.parts.is_empty() || r.name.parts.iter().any(String::is_empty) {
                return Err(format!("empty name part in {:?}", r.name));
            }
            if let Some(span) = r.span
                && (span.start.line == 0 || span.end.line > lines || span.start > span.end)
            {
                return Err(format!("span outside the file: {span:?} for {}", r.name));
            }
        }
    }
    if sql::analyze(sql) != a {
        return Err("two analyses of the same text differ".into());
    }
    Ok(())
}

/// A number from the environment, decimal or `0x` hexadecimal.
fn env_u64(name: &str, default: u64) -> u64 {
    let Ok(v) = std::env::var(name) else {
        return default;
    };
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
    .unwrap_or_else(|| panic!("{name}={v} is not a number"))
}

#[test]
fn token_mutations_of_real_sql() {
    let seeds = seeds();
    let secs = env_u64("FLINKPIPE_FUZZ_SECS", 3);
    let seed = env_u64("FLINKPIPE_FUZZ_SEED", 0x5EED_F11E_0014_0001);
    let mut rng = Rng(seed | 1);
    let save = std::env::var_os("FLINKPIPE_FUZZ_SAVE");
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut runs, mut bytes) = (0u64, 0u64);
    while Instant::now() < deadline {
        let base = &seeds[rng.below(seeds.len())];
        let mut tokens = token_texts(base);
        for _ in 0..1 + rng.below(8) {
            mutate(&mut rng, &seeds, &mut tokens);
        }
        let text: String = tokens.concat();
        if let Some(path) = &save {
            // A crash that kills the process (a stack overflow) leaves its input here.
            let _ = std::fs::write(path, &text);
        }
        if let Err(e) = check(&text) {
            panic!("seed {seed:#x}, run {runs}: {e}\n--- input ---\n{text}\n---");
        }
        runs += 1;
        bytes += text.len() as u64;
    }
    println!("fuzz: {runs} inputs ({bytes} bytes) in {secs} s from seed {seed:#x}, no failure");
    assert!(runs > 0);
}

/// The shapes of issue #14 that aborted or took quadratic time, at sizes a debug test can afford; each
/// must answer, and doubling its size must not take much more than double the (thread CPU) time.
#[test]
fn pathological_shapes_answer_in_linear_time() {
    type Shape = (
        &'static str,
        fn(usize) -> String,
        usize,
        &'static [&'static str],
    );
    let shapes: &[Shape] = &[
        ("OR chain", or_chain, 20_000, &["s"]),
        ("+ chain", plus_chain, 20_000, &["s"]),
        ("one-line minified statements", minified, 2_000, &["s0"]),
        ("nested WITH", nested_with, 2_000, &[]),
        ("chain of CTEs", cte_chain, 5_000, &["s"]),
        ("UNION ALL chain", union_chain, 5_000, &["s"]),
        ("nested subqueries", nested_subqueries, 2_000, &["s"]),
        (
            "distinct placeholders on one line",
            placeholders,
            3_000,
            &["${t0}"],
        ),
        ("repeated MATCH_RECOGNIZE WITHIN", within, 3_000, &["s"]),
    ];
    for (name, make, n, sources) in shapes {
        let time = |n: usize| {
            let sql = make(n);
            let start = thread_cpu_time();
            let a = sql::analyze(&sql);
            let t = thread_cpu_time().saturating_sub(start);
            let got: Vec<String> = a.sources().iter().map(|s| s.dotted()).collect();
            for s in *sources {
                assert!(got.iter().any(|g| g == s), "{name}: source {s} missing");
            }
            assert!(!a.sinks().is_empty(), "{name}: no sink");
            t
        };
        let small = time(*n).min(time(*n));
        let large = time(2 * n).min(time(2 * n));
        println!("{name}: n={n} {small:?}, 2n {large:?}");
        // Linear: about 2×; quadratic: 4×. Generous for a busy machine, and small inputs are exempt.
        assert!(
            large < small * 3 + Duration::from_millis(250),
            "{name}: {small:?} for n={n} but {large:?} for 2n"
        );
    }
}

/// CPU time of the calling thread: unlike wall time, not inflated by the other tests of this binary and
/// other processes on a busy machine (the linearity check compares two measurements).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the valid pointer it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// A chain long enough to be parsed (under the token limit) and deep enough that dropping its tree
/// recursively would overflow a test thread's 2 MiB stack.
#[test]
fn a_deep_operator_chain_is_dropped_without_overflowing_the_stack() {
    let between = format!(
        "INSERT INTO t SELECT * FROM s WHERE {} BETWEEN SYMMETRIC 1 AND 2",
        vec!["a"; 30_000].join(" + ")
    );
    for sql in [
        or_chain(30_000),
        plus_chain(40_000),
        union_chain(12_000),
        between,
    ] {
        let a = sql::analyze(&sql);
        assert!(a.statements.iter().all(|s| !s.fallback), "{:?}", a.warnings);
        assert_eq!(a.sinks()[0].dotted(), "t");
    }
    // Beyond the parser's token limit: the fallback answers, with a warning naming the limit.
    let a = sql::analyze(&or_chain(131_316));
    assert_eq!(a.sources()[0].dotted(), "s");
    assert!(
        a.warnings[0].message.contains("200000 tokens"),
        "{:?}",
        a.warnings
    );
}

fn or_chain(n: usize) -> String {
    let terms: Vec<String> = (0..n).map(|i| format!("a = {}", i % 10)).collect();
    format!(
        "INSERT INTO t SELECT * FROM s WHERE {};",
        terms.join(" OR ")
    )
}

fn plus_chain(n: usize) -> String {
    let terms: Vec<String> = (0..n).map(|i| format!("a{}", i % 10)).collect();
    format!("INSERT INTO t SELECT {} FROM s;", terms.join(" + "))
}

fn minified(n: usize) -> String {
    (0..n)
        .map(|i| format!("INSERT INTO t{i} SELECT a FROM s{i};"))
        .collect()
}

fn nested_with(n: usize) -> String {
    let mut s = String::from("INSERT INTO t ");
    for i in 0..n {
        s.push_str(&format!("WITH c{i} AS ("));
    }
    s.push_str("SELECT 1");
    for i in (0..n).rev() {
        s.push_str(&format!(") SELECT * FROM c{i}"));
    }
    s
}

fn cte_chain(n: usize) -> String {
    let mut s = String::from("INSERT INTO t WITH c0 AS (SELECT * FROM s)");
    for i in 1..n {
        s.push_str(&format!(", c{i} AS (SELECT * FROM c{})", i - 1));
    }
    s.push_str(&format!(" SELECT * FROM c{};", n - 1));
    s
}

fn union_chain(n: usize) -> String {
    let branches: Vec<String> = (0..n).map(|i| format!("SELECT {i} FROM s")).collect();
    format!("INSERT INTO t {};", branches.join(" UNION ALL "))
}

fn within(n: usize) -> String {
    format!(
        "INSERT INTO t SELECT * FROM s MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS x PATTERN (A B) {} DEFINE A AS TRUE)",
        ") WITHIN INTERVAL '1' HOUR".repeat(n)
    )
}

fn placeholders(n: usize) -> String {
    let branches: Vec<String> = (0..n).map(|i| format!("SELECT * FROM ${{t{i}}}")).collect();
    format!("INSERT INTO t {};", branches.join(" UNION ALL "))
}

fn nested_subqueries(n: usize) -> String {
    format!(
        "INSERT INTO t SELECT * FROM {}s{}",
        "(SELECT * FROM ".repeat(n),
        ")".repeat(n)
    )
}

/// Found by the fuzz: MATCH_RECOGNIZE's `PATTERN` grammar recurses in the parser without its nesting
/// limit; a thousand parentheses there overflowed the stack.
#[test]
fn deep_parentheses_anywhere_are_read_by_the_fallback() {
    for shape in [
        "INSERT INTO t SELECT * FROM s MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS x PATTERN ({o}A B{c}) DEFINE A AS A.x > 0)",
        "INSERT INTO t SELECT {o}a{c} FROM s",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO t SELECT * FROM s MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x AS x PATTERN ({o}A{c}) DEFINE A AS TRUE); END",
    ] {
        let sql = shape
            .replace("{o}", &"(".repeat(5_000))
            .replace("{c}", &")".repeat(5_000));
        let a = sql::analyze(&sql);
        assert_eq!(a.sinks()[0].dotted(), "t");
        assert_eq!(a.sources()[0].dotted(), "s");
        assert!(
            a.warnings[0].message.contains("50 levels"),
            "{:?}",
            a.warnings
        );
    }
}
