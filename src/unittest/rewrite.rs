//! SQL of a run: every table renamed to its test name by the front end's token spans
//! ([`crate::sql::rewrite::rename_tables_with`], the rewrite blue-green uses — never text search), and
//! each test table's storage mapped to the target.
//!
//! - **Local Apache Flink + Kafka** ([`Storage::Kafka`]): a test table must live on the local broker
//!   whatever its production DDL says (Confluent-style DDLs have no `'connector'`, and carry
//!   `changelog.mode`, `DISTRIBUTED BY`, Avro-registry formats; ours may read `datagen`). Its
//!   `DISTRIBUTED BY`/`INTO` clause is removed and its `WITH` options are replaced by: `upsert-kafka`
//!   with JSON key and value when it has a primary key; else `kafka` with `debezium-json` when its
//!   `changelog.mode` is `retract` (a changelog an append-only topic can carry), else `kafka` with
//!   `json`; topic = the test table's name; `scan.startup.mode = earliest-offset` and
//!   `scan.bounded.mode = latest-offset`, so a statement reading it consumes what the test inserted and
//!   finishes. Columns, computed and metadata columns, watermarks and the primary key stay as written.
//! - **Confluent Cloud** ([`Storage::Confluent`]): the DDL keeps its options; `scan.startup.mode` becomes
//!   `earliest-offset` and `scan.bounded.mode` `latest-offset` (shift_left replaced `unbounded` by
//!   `latest-offset` the same way).

use crate::sql::dialect::FlinkDialect;
use crate::sql::rewrite::{RewriteError, rename_tables_with};
use crate::sql::split::LineIndex;
use crate::sql::{StatementKind, TableName};
use sqlparser::tokenizer::{Token, Tokenizer};
use std::ops::Range;

/// Where test tables are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// A Kafka broker reached by the Flink cluster at `bootstrap` (`localhost:9092`).
    Kafka { bootstrap: String },
    /// Confluent Cloud: a table is its topic.
    Confluent,
}

/// Renames the tables for which `rename(name as written)` gives a new last part; the storage location
/// of a renamed table (`'topic' = '<old>'`) follows it.
///
/// Errors: the front end cannot locate a name, or the result does not re-parse to the renamed
/// references (nothing is guessed).
pub fn rename(
    sql: &str,
    rename: &dyn Fn(&TableName) -> Option<String>,
) -> Result<String, RewriteError> {
    Ok(rename_tables_with(sql, rename, &|_| true)?.text)
}

/// A `'key' = 'value'` list.
fn options_text(options: &[(String, String)]) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let lines: Vec<String> = options
        .iter()
        .map(|(k, v)| format!("  {} = {}", q(k), q(v)))
        .collect();
    format!("WITH (\n{}\n)", lines.join(",\n"))
}

/// The local-broker options of a test table (see module docs).
pub fn kafka_options(
    topic: &str,
    bootstrap: &str,
    has_key: bool,
    changelog_mode: Option<&str>,
) -> Vec<(String, String)> {
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    let mut o = vec![
        kv("connector", if has_key { "upsert-kafka" } else { "kafka" }),
        kv("topic", topic),
        kv("properties.bootstrap.servers", bootstrap),
    ];
    if has_key {
        o.push(kv("key.format", "json"));
        o.push(kv("value.format", "json"));
    } else {
        let retract = changelog_mode.is_some_and(|m| m.eq_ignore_ascii_case("retract"));
        o.push(kv("format", if retract { "debezium-json" } else { "json" }));
        o.push(kv("scan.startup.mode", "earliest-offset"));
    }
    o.push(kv("scan.bounded.mode", "latest-offset"));
    o
}

/// Byte ranges of the top-level clauses of a `CREATE TABLE` statement.
struct Clauses {
    /// `WITH ( … )`.
    with: Option<Range<usize>>,
    /// `DISTRIBUTED BY …` / `DISTRIBUTED INTO …`, up to the next clause.
    distributed: Option<Range<usize>>,
    /// The top-level `AS` of a CTAS.
    as_kw: Option<usize>,
    /// End of the statement's text (before a final `;`).
    end: usize,
}

fn clauses(sql: &str) -> Clauses {
    let lines = LineIndex::new(sql);
    let mut raw = Vec::new();
    let _ = Tokenizer::new(&FlinkDialect, sql).tokenize_with_location_into_buf(&mut raw);
    let toks: Vec<(Token, Range<usize>)> = raw
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| (t.token.clone(), lines.range(t.span)))
        .collect();
    let word = |t: &Token, w: &str| matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    let stop = ["WITH", "AS", "LIKE", "COMMENT", "PARTITIONED"];
    let mut c = Clauses {
        with: None,
        distributed: None,
        as_kw: None,
        end: toks
            .iter()
            .rev()
            .find(|(t, _)| *t != Token::SemiColon && *t != Token::EOF)
            .map_or(sql.len(), |(_, r)| r.end),
    };
    let mut depth = 0i32;
    let mut i = 0;
    while i < toks.len() {
        let (t, r) = &toks[i];
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && c.as_kw.is_none() => {
                if word(t, "WITH") && toks.get(i + 1).is_some_and(|(n, _)| *n == Token::LParen) {
                    let j = closing_paren(&toks, i + 1);
                    let end = toks.get(j).map_or(sql.len(), |(_, r)| r.end);
                    c.with = Some(r.start..end);
                    i = j;
                } else if word(t, "DISTRIBUTED") {
                    let mut j = i + 1;
                    let mut d = 0i32;
                    let mut last = r.end;
                    while j < toks.len() {
                        let (tj, rj) = &toks[j];
                        match tj {
                            Token::LParen => d += 1,
                            Token::RParen => d -= 1,
                            Token::SemiColon | Token::EOF if d == 0 => break,
                            _ if d == 0 && stop.iter().any(|s| word(tj, s)) => break,
                            _ => {}
                        }
                        last = rj.end;
                        j += 1;
                    }
                    c.distributed = Some(r.start..last);
                    i = j;
                    continue;
                } else if word(t, "AS") {
                    c.as_kw = Some(r.start);
                }
            }
            _ => {}
        }
        i += 1;
    }
    c
}

/// The index of the `)` that closes the `(` at `open` in `toks` (tokens without whitespace, with
/// their byte ranges), or `toks.len()` when it is never closed.
pub(super) fn closing_paren(toks: &[(Token, Range<usize>)], open: usize) -> usize {
    let mut d = 0i32;
    let mut j = open;
    while j < toks.len() {
        match toks[j].0 {
            Token::LParen => d += 1,
            Token::RParen => {
                d -= 1;
                if d == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// The `CREATE TABLE` or CTAS statement of a DDL, if it has one.
fn create_statement(analysis: &crate::sql::FileAnalysis) -> Option<&crate::sql::StatementInfo> {
    analysis
        .statements
        .iter()
        .find(|s| matches!(s.kind, StatementKind::CreateTable | StatementKind::Ctas))
}

/// Maps the storage of a test table's DDL (one `CREATE TABLE`, already renamed to `table`; see module
/// docs). Statements other than `CREATE TABLE` / CTAS are returned unchanged.
pub fn map_storage(ddl: &str, table: &str, storage: &Storage) -> String {
    let analysis = crate::sql::analyze(ddl);
    let Some(st) = create_statement(&analysis) else {
        return ddl.to_string();
    };
    let option = |k: &str| {
        st.with_options
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    };
    let options = match storage {
        Storage::Kafka { bootstrap } => kafka_options(
            table,
            bootstrap,
            !st.primary_key.is_empty(),
            option("changelog.mode"),
        ),
        Storage::Confluent => {
            let mut o: Vec<(String, String)> = st
                .with_options
                .iter()
                .filter(|(k, _)| k != "scan.bounded.mode" && k != "scan.startup.mode")
                .cloned()
                .collect();
            o.push(("scan.startup.mode".into(), "earliest-offset".into()));
            o.push(("scan.bounded.mode".into(), "latest-offset".into()));
            o
        }
    };
    let c = clauses(ddl);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    if matches!(storage, Storage::Kafka { .. })
        && let Some(d) = c.distributed.clone()
    {
        edits.push((d, String::new()));
    }
    let text = options_text(&options);
    match (c.with.clone(), c.as_kw) {
        (Some(w), _) => edits.push((w, text)),
        (None, Some(a)) => edits.push((a..a, format!("{text}\n"))),
        (None, None) => edits.push((c.end..c.end, format!("\n{text}"))),
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(ddl.len() + 200);
    let mut at = 0;
    for (r, t) in edits {
        out.push_str(&ddl[at..r.start]);
        out.push_str(&t);
        at = r.end;
    }
    out.push_str(&ddl[at..]);
    out
}

/// The DDL of a test table without its `'scan.bounded.mode'` option: a statement reading it runs
/// until stopped (the empirical upgrade check stops it with a savepoint, which needs a job that is
/// still running; see [`super::upgrade`]). A DDL without that option is returned unchanged.
pub fn unbounded(ddl: &str) -> String {
    let analysis = crate::sql::analyze(ddl);
    let Some(st) = create_statement(&analysis) else {
        return ddl.to_string();
    };
    if !st
        .with_options
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("scan.bounded.mode"))
    {
        return ddl.to_string();
    }
    let options: Vec<(String, String)> = st
        .with_options
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("scan.bounded.mode"))
        .cloned()
        .collect();
    let Some(w) = clauses(ddl).with else {
        return ddl.to_string();
    };
    format!(
        "{}{}{}",
        &ddl[..w.start],
        options_text(&options),
        &ddl[w.end..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CC: &str = "CREATE TABLE IF NOT EXISTS src_a_ut (\n  id STRING,\n  v INT,\n  PRIMARY KEY(id) NOT ENFORCED\n) DISTRIBUTED BY HASH(id) INTO 1 BUCKETS\nWITH (\n  'changelog.mode' = 'upsert',\n  'key.format' = 'avro-registry',\n  'scan.bounded.mode' = 'unbounded'\n);";

    #[test]
    fn confluent_style_ddl_runs_on_the_local_broker() {
        let out = map_storage(
            CC,
            "src_a_ut",
            &Storage::Kafka {
                bootstrap: "localhost:9092".into(),
            },
        );
        assert_eq!(
            out,
            "CREATE TABLE IF NOT EXISTS src_a_ut (\n  id STRING,\n  v INT,\n  PRIMARY KEY(id) NOT ENFORCED\n) \nWITH (\n  'connector' = 'upsert-kafka',\n  'topic' = 'src_a_ut',\n  'properties.bootstrap.servers' = 'localhost:9092',\n  'key.format' = 'json',\n  'value.format' = 'json',\n  'scan.bounded.mode' = 'latest-offset'\n);"
        );
        let a = crate::sql::analyze(&out);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }

    #[test]
    fn append_and_retract_tables_and_missing_with() {
        let plain = "CREATE TABLE e_ut (k STRING, v STRING) DISTRIBUTED INTO 1 BUCKETS";
        let out = map_storage(
            plain,
            "e_ut",
            &Storage::Kafka {
                bootstrap: "b:1".into(),
            },
        );
        assert!(
            out.starts_with(
                "CREATE TABLE e_ut (k STRING, v STRING) \nWITH (\n  'connector' = 'kafka',"
            ),
            "{out}"
        );
        assert!(
            out.contains("'format' = 'json'")
                && out.contains("'scan.startup.mode' = 'earliest-offset'")
        );
        let retract = "CREATE TABLE f_ut (k STRING) WITH ('changelog.mode' = 'retract')";
        let out = map_storage(
            retract,
            "f_ut",
            &Storage::Kafka {
                bootstrap: "b:1".into(),
            },
        );
        assert!(out.contains("'format' = 'debezium-json'"), "{out}");
        let ctas = "CREATE TABLE m_ut WITH ('connector' = 'datagen') AS SELECT 1 AS x";
        let out = map_storage(
            ctas,
            "m_ut",
            &Storage::Kafka {
                bootstrap: "b:1".into(),
            },
        );
        assert!(
            out.contains("'connector' = 'kafka'") && out.ends_with(") AS SELECT 1 AS x"),
            "{out}"
        );
    }

    #[test]
    fn confluent_keeps_options_and_bounds_reads() {
        let out = map_storage(CC, "src_a_ut", &Storage::Confluent);
        assert!(out.contains("DISTRIBUTED BY HASH(id) INTO 1 BUCKETS"));
        assert!(out.contains("'changelog.mode' = 'upsert'"));
        assert!(out.contains("'scan.bounded.mode' = 'latest-offset'"));
        assert!(!out.contains("unbounded"));
    }

    #[test]
    fn unbounded_drops_the_bound_only() {
        let kafka = Storage::Kafka {
            bootstrap: "b:1".into(),
        };
        let bounded = map_storage("CREATE TABLE e_ut (k STRING, v INT)", "e_ut", &kafka);
        let out = unbounded(&bounded);
        assert_eq!(
            out,
            "CREATE TABLE e_ut (k STRING, v INT)\nWITH (\n  'connector' = 'kafka',\n  'topic' = 'e_ut',\n  'properties.bootstrap.servers' = 'b:1',\n  'format' = 'json',\n  'scan.startup.mode' = 'earliest-offset'\n)"
        );
        assert_eq!(unbounded(&out), out);
    }

    #[test]
    fn renames_by_span_not_text() {
        let sql = "INSERT INTO a SELECT a.x, 'from src' FROM src AS a -- src\n";
        let out = rename(sql, &|n: &TableName| {
            (n.table() == "src" || n.table() == "a").then(|| format!("{}_ut", n.table()))
        })
        .unwrap();
        assert_eq!(
            out,
            "INSERT INTO a_ut SELECT a.x, 'from src' FROM src_ut AS a -- src\n"
        );
    }
}
