//! Pure classification of one file's change: old text + new text → [`ChangeKind`] + [`SchemaDiff`].
//!
//! Normalisation goes through the same tokenizer as the SQL front end (our Flink dialect of `sqlparser`):
//! comments and whitespace are dropped, unquoted keywords are upper-cased, identifiers (quoted or not)
//! and literals are kept exactly as written (Flink identifiers are case-sensitive), empty statements and
//! `;` are ignored. Hints (`/*+ … */`) are kept: they change the plan. So `'--'` inside a string is a
//! string, not a comment (shift_left 0.1.52's regex stripper got this wrong).
//!
//! Rules, in order, for a file present on both sides:
//! 1. equal after normalisation → `cosmetic`;
//! 2. a `.properties` file → `options` (`cosmetic` when the `key=value` pairs are equal);
//! 3. DDL: columns (name, type, nullability, primary-key membership), primary key or distribution
//!    differ → `schema` with a [`SchemaDiff`] (also when options changed too);
//! 4. only the `WITH (…)` options of CREATE statements differ → `options` (`cosmetic` when only their
//!    order differs);
//! 5. a DDL whose statements carry no query (plain `CREATE TABLE`) → `schema` (e.g. watermark change,
//!    empty diff); otherwise → `logic`.

use super::{ChangeKind, FileRole};
use crate::sql::dialect::FlinkDialect;
use crate::sql::{self, FileAnalysis, StatementInfo, StatementKind};
use serde::{Deserialize, Serialize};
use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};
use std::collections::BTreeMap;

/// Column-level differences of a DDL (the `schema_diff` of shift_left 0.1.52's
/// `modified_flink_files.json`, <https://github.com/jbcodeforce/shift_left_utils>), plus primary
/// key and distribution changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SchemaDiff {
    /// The base as asked (`origin/main`, `since:2025-12-01`).
    #[serde(default)]
    pub baseline_ref: String,
    /// Names of added columns, in the new order.
    #[serde(default)]
    pub added: Vec<String>,
    /// Names of removed columns, in the old order.
    #[serde(default)]
    pub removed: Vec<String>,
    /// Columns whose type, nullability or primary-key membership changed, in the new order.
    #[serde(default)]
    pub modified: Vec<ColumnChange>,
    /// flinkpipe: `[old, new]` primary key columns when the key changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_key: Option<[Vec<String>; 2]>,
    /// flinkpipe: `[old, new]` `DISTRIBUTED BY` clauses when they changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<[Option<String>; 2]>,
}

impl SchemaDiff {
    /// Whether nothing differs (an empty diff can still come with a `schema` change: watermark, …).
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.modified.is_empty()
            && self.primary_key.is_none()
            && self.distribution.is_none()
    }

    /// One-line summary for text output: `+email_verified -legacy ~user_name STRING→VARCHAR`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.added.iter().map(|c| format!("+{c}")));
        parts.extend(self.removed.iter().map(|c| format!("-{c}")));
        for m in &self.modified {
            let mut s = format!("~{}", m.name);
            if m.old_type != m.new_type {
                s.push_str(&format!(" {}→{}", m.old_type, m.new_type));
            }
            if m.old_nullable != m.new_nullable {
                s.push_str(if m.new_nullable { " NULL" } else { " NOT NULL" });
            }
            parts.push(s);
        }
        if let Some([o, n]) = &self.primary_key {
            parts.push(format!("pk ({})→({})", o.join(", "), n.join(", ")));
        }
        if self.distribution.is_some() {
            parts.push("distribution".into());
        }
        parts.join(" ")
    }
}

/// A modified column (shift_left's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnChange {
    /// Column name.
    pub name: String,
    /// Always `modified`.
    pub change_type: String,
    /// Type as written at the base.
    pub old_type: String,
    /// Type as written at the head.
    pub new_type: String,
    /// Nullability at the base.
    pub old_nullable: bool,
    /// Nullability at the head.
    pub new_nullable: bool,
    /// Primary-key membership at the base.
    pub old_primary_key: bool,
    /// Primary-key membership at the head.
    pub new_primary_key: bool,
}

/// The result of classifying one file present on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The kind of change.
    pub kind: ChangeKind,
    /// For DDL `schema` changes: the column-level diff (`baseline_ref` left empty for the caller).
    pub schema_diff: Option<SchemaDiff>,
    /// Equal after normalisation.
    pub same_sql_content: bool,
}

/// The normalised token stream of a SQL text, one `Vec` per statement. Returns `None` when the text does
/// not tokenize (an unterminated string, …): the caller then compares raw text.
pub fn normalize(sql: &str) -> Option<Vec<Vec<String>>> {
    let tokens = Tokenizer::new(&FlinkDialect, sql).tokenize().ok()?;
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for (i, t) in tokens.iter().enumerate() {
        let s = match t {
            Token::Whitespace(Whitespace::MultiLineComment(c)) if c.starts_with('+') => {
                format!("/*{}*/", c.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            Token::Whitespace(_) => continue,
            Token::SemiColon => {
                if !out.last().is_some_and(Vec::is_empty) {
                    out.push(Vec::new());
                }
                continue;
            }
            Token::Word(w) if w.quote_style.is_none() => {
                let up = w.value.to_uppercase();
                let prev = out.last().and_then(|s| s.last()).map(String::as_str);
                let keyword = is_reserved(&up)
                    || (up == "KEY" && prev == Some("PRIMARY"))
                    || (up == "COMMENT"
                        && matches!(
                            next_significant(&tokens, i),
                            Some(Token::SingleQuotedString(_))
                        ));
                if keyword { up } else { w.value.clone() }
            }
            // `>>` closes nested types (`ARRAY<ROW<a INT>>`): the same as `> >`.
            Token::ShiftRight => {
                out.last_mut().expect("never empty").push(">".into());
                ">".into()
            }
            other => other.to_string(),
        };
        out.last_mut().expect("never empty").push(s);
    }
    if out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    Some(out)
}

/// Words upper-cased by [`normalize`]: SQL and Flink reserved words (statements, clauses, operators,
/// types, time units, common built-in functions). Other words, keywords to `sqlparser` or not, keep their
/// case because Flink accepts many non-reserved keywords as identifiers (`name`, `value`, `type`, `key`),
/// and unquoted identifiers are case-sensitive. `KEY` after `PRIMARY` and `COMMENT` before a string are
/// keywords too.
const RESERVED: &[&str] = &[
    "ALL",
    "ALTER",
    "AND",
    "ANY",
    "ARRAY",
    "AS",
    "ASC",
    "AVG",
    "BEGIN",
    "BETWEEN",
    "BIGINT",
    "BINARY",
    "BOOLEAN",
    "BOTH",
    "BUCKETS",
    "BY",
    "BYTES",
    "CASCADE",
    "CASE",
    "CAST",
    "CATALOG",
    "CHAR",
    "CHARACTER",
    "COALESCE",
    "CONCAT",
    "COUNT",
    "CREATE",
    "CROSS",
    "CUMULATE",
    "CURRENT",
    "CURRENT_DATE",
    "CURRENT_TIMESTAMP",
    "DATABASE",
    "DATE",
    "DAY",
    "DEC",
    "DECIMAL",
    "DELETE",
    "DESC",
    "DESCRIPTOR",
    "DISTINCT",
    "DISTRIBUTED",
    "DOUBLE",
    "DROP",
    "ELSE",
    "END",
    "ENFORCED",
    "ESCAPE",
    "EXCEPT",
    "EXECUTE",
    "EXISTS",
    "EXPLAIN",
    "EXTRACT",
    "FALSE",
    "FETCH",
    "FIRST",
    "FLOAT",
    "FOLLOWING",
    "FOR",
    "FROM",
    "FULL",
    "FUNCTION",
    "GROUP",
    "GROUPING",
    "HAVING",
    "HOP",
    "HOUR",
    "IF",
    "IN",
    "INNER",
    "INSERT",
    "INT",
    "INTEGER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IS",
    "JOIN",
    "LAG",
    "LAST",
    "LATERAL",
    "LEAD",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LOCAL",
    "LOCALTIMESTAMP",
    "MAP",
    "MATCH_RECOGNIZE",
    "MATERIALIZED",
    "MAX",
    "METADATA",
    "MIN",
    "MINUTE",
    "MONTH",
    "MULTISET",
    "NATURAL",
    "NOT",
    "NULL",
    "NULLIF",
    "NULLS",
    "NUMERIC",
    "OF",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "OVERWRITE",
    "PARTITION",
    "PARTITIONED",
    "PRECEDING",
    "PRECISION",
    "PRIMARY",
    "PROCTIME",
    "RANGE",
    "RANK",
    "REPLACE",
    "RESET",
    "RIGHT",
    "ROW",
    "ROWS",
    "ROW_NUMBER",
    "SECOND",
    "SELECT",
    "SET",
    "SHOW",
    "SIMILAR",
    "SMALLINT",
    "STATEMENT",
    "STRING",
    "SUM",
    "SYSTEM_TIME",
    "TABLE",
    "TEMPORARY",
    "THEN",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMP_LTZ",
    "TINYINT",
    "TO",
    "TRAILING",
    "TRIM",
    "TRUE",
    "TRY_CAST",
    "TUMBLE",
    "UNBOUNDED",
    "UNION",
    "UNNEST",
    "UPDATE",
    "USE",
    "USING",
    "VALUES",
    "VARBINARY",
    "VARCHAR",
    "VIEW",
    "VIRTUAL",
    "WATERMARK",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "WITHOUT",
    "YEAR",
    "ZONE",
];

fn is_reserved(upper: &str) -> bool {
    RESERVED.binary_search(&upper).is_ok()
}

fn next_significant(tokens: &[Token], i: usize) -> Option<&Token> {
    tokens[i + 1..]
        .iter()
        .find(|t| !matches!(t, Token::Whitespace(_)))
}

/// Whether two SQL texts are equal after [`normalize`] (raw equality when either does not tokenize).
pub fn same_sql(old: &str, new: &str) -> bool {
    match (normalize(old), normalize(new)) {
        (Some(a), Some(b)) => a == b,
        _ => old == new,
    }
}

/// Classifies a change of a file present on both sides.
pub fn classify(old: &str, new: &str, role: FileRole) -> Classification {
    classify_cached(old, new, role, &mut None, &mut None)
}

/// [`classify`], reusing (and filling) the callers' analyses of `old` and `new`: a SQL file is parsed
/// only when the normalised texts differ, and at most once.
pub fn classify_cached(
    old: &str,
    new: &str,
    role: FileRole,
    analysis_old: &mut Option<FileAnalysis>,
    analysis_new: &mut Option<FileAnalysis>,
) -> Classification {
    let (norm_old, norm_new) = (normalize(old), normalize(new));
    let same = match (&norm_old, &norm_new) {
        (Some(a), Some(b)) => a == b,
        _ => old == new,
    };
    let done = |kind, schema_diff| Classification {
        kind,
        schema_diff,
        same_sql_content: same,
    };
    if role == FileRole::Properties {
        let same = properties(old) == properties(new);
        return Classification {
            kind: if same {
                ChangeKind::Cosmetic
            } else {
                ChangeKind::Options
            },
            schema_diff: None,
            same_sql_content: same,
        };
    }
    if same {
        return done(ChangeKind::Cosmetic, None);
    }
    let a_old: &FileAnalysis = analysis_old.get_or_insert_with(|| sql::analyze(old));
    let a_new: &FileAnalysis = analysis_new.get_or_insert_with(|| sql::analyze(new));
    if role == FileRole::Ddl {
        let diff = schema_diff(a_old, a_new);
        if !diff.is_empty() {
            return done(ChangeKind::Schema, Some(diff));
        }
    }
    if let (Some(o), Some(n)) = (&norm_old, &norm_new)
        && strip_with_options(o) == strip_with_options(n)
    {
        return if options_of(a_old) == options_of(a_new) {
            done(ChangeKind::Cosmetic, None)
        } else {
            done(ChangeKind::Options, None)
        };
    }
    let has_query = |a: &FileAnalysis| {
        a.statements.iter().any(|s| {
            matches!(
                s.kind,
                StatementKind::Ctas
                    | StatementKind::CreateMaterializedTable
                    | StatementKind::CreateView
                    | StatementKind::Insert
                    | StatementKind::StatementSet
                    | StatementKind::Select
            )
        })
    };
    if role == FileRole::Ddl && !has_query(a_old) && !has_query(a_new) {
        return done(ChangeKind::Schema, Some(SchemaDiff::default()));
    }
    done(ChangeKind::Logic, None)
}

/// The `key=value` pairs of a `.properties` file, read by the parser deploy uses
/// ([`crate::sql::text::parse_properties`], where the rules are): a file is a change exactly when
/// what deploy would send changes.
pub fn properties(text: &str) -> BTreeMap<String, String> {
    crate::sql::text::parse_properties(text)
}

/// The statement that defines the table of a DDL: the first persistent CREATE.
fn defining(a: &FileAnalysis) -> Option<&StatementInfo> {
    crate::inventory::first_created_statement(a)
}

/// WITH options of every CREATE statement, as a map per statement (order of options does not matter).
fn options_of(a: &FileAnalysis) -> Vec<BTreeMap<&str, &str>> {
    a.statements
        .iter()
        .filter(|s| s.kind.creates_relation())
        .map(|s| {
            s.with_options
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        })
        .collect()
}

/// The statements with `WITH ( … )` option lists of CREATE statements removed (a `WITH` at parenthesis
/// depth 0 directly followed by `(`; a CTE's `WITH name AS (` is not).
fn strip_with_options(stmts: &[Vec<String>]) -> Vec<Vec<&str>> {
    stmts
        .iter()
        .map(|s| {
            let create = s.first().is_some_and(|t| t == "CREATE");
            let mut out = Vec::with_capacity(s.len());
            let mut depth = 0usize;
            let mut i = 0;
            while i < s.len() {
                let t = s[i].as_str();
                if create && depth == 0 && t == "WITH" && s.get(i + 1).is_some_and(|n| n == "(") {
                    let mut d = 0usize;
                    i += 1;
                    while i < s.len() {
                        match s[i].as_str() {
                            "(" => d += 1,
                            ")" => {
                                d -= 1;
                                if d == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    i += 1;
                    continue;
                }
                match t {
                    "(" => depth += 1,
                    ")" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                out.push(t);
                i += 1;
            }
            out
        })
        .collect()
}

/// A type or expression normalised for comparison (keyword case and whitespace ignored).
fn norm_type(t: &str) -> String {
    match normalize(t) {
        Some(stmts) => stmts.concat().join(" "),
        None => t.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// Column-level diff of the defining CREATE statements of two DDLs (empty when either has none).
pub fn schema_diff(old: &FileAnalysis, new: &FileAnalysis) -> SchemaDiff {
    let mut diff = SchemaDiff::default();
    let (Some(o), Some(n)) = (defining(old), defining(new)) else {
        return diff;
    };
    let old_cols: BTreeMap<&str, &sql::Column> =
        o.columns.iter().map(|c| (c.name.as_str(), c)).collect();
    let new_cols: BTreeMap<&str, &sql::Column> =
        n.columns.iter().map(|c| (c.name.as_str(), c)).collect();
    let in_pk = |s: &StatementInfo, c: &str| s.primary_key.iter().any(|k| k == c);
    for c in &n.columns {
        match old_cols.get(c.name.as_str()) {
            None => diff.added.push(c.name.clone()),
            Some(oc) => {
                let (op, np) = (in_pk(o, &c.name), in_pk(n, &c.name));
                if norm_type(&oc.data_type) != norm_type(&c.data_type)
                    || oc.nullable != c.nullable
                    || op != np
                {
                    diff.modified.push(ColumnChange {
                        name: c.name.clone(),
                        change_type: "modified".into(),
                        old_type: oc.data_type.clone(),
                        new_type: c.data_type.clone(),
                        old_nullable: oc.nullable,
                        new_nullable: c.nullable,
                        old_primary_key: op,
                        new_primary_key: np,
                    });
                }
            }
        }
    }
    for c in &o.columns {
        if !new_cols.contains_key(c.name.as_str()) {
            diff.removed.push(c.name.clone());
        }
    }
    if o.primary_key != n.primary_key {
        diff.primary_key = Some([o.primary_key.clone(), n.primary_key.clone()]);
    }
    let dist = |s: &StatementInfo| s.distribution.as_deref().map(norm_type);
    if dist(o) != dist(n) {
        diff.distribution = Some([o.distribution.clone(), n.distribution.clone()]);
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    const DDL: &str = "CREATE TABLE t (\n  id BIGINT,\n  name STRING,\n  PRIMARY KEY (id) NOT ENFORCED\n) WITH (\n  'connector' = 'kafka',\n  'topic' = 't'\n);\n";
    const DML: &str = "INSERT INTO t SELECT id, name FROM s WHERE sep = '--' AND x > 1;";

    fn kind(old: &str, new: &str, role: FileRole) -> ChangeKind {
        classify(old, new, role).kind
    }

    #[test]
    fn comments_whitespace_and_keyword_case_are_cosmetic() {
        let new = "-- a comment\ninsert   into t\n/* block */ select id,\n name from s where sep = '--' and x > 1";
        assert_eq!(kind(DML, new, FileRole::Dml), ChangeKind::Cosmetic);
        assert!(classify(DML, new, FileRole::Dml).same_sql_content);
    }

    #[test]
    fn dashes_inside_a_string_are_not_a_comment() {
        // If `--` started a comment, both would normalise to `… WHERE sep =` and compare equal.
        let new = "INSERT INTO t SELECT id, name FROM s WHERE sep = '-- x' AND x > 1;";
        assert_eq!(kind(DML, new, FileRole::Dml), ChangeKind::Logic);
        let n = normalize("SELECT '--' AS a -- real comment\nFROM t").unwrap();
        assert_eq!(n, vec![vec!["SELECT", "'--'", "AS", "a", "FROM", "t"]]);
    }

    #[test]
    fn identifiers_and_literals_keep_their_case() {
        assert_eq!(
            kind(DML, &DML.replace("FROM s", "FROM S"), FileRole::Dml),
            ChangeKind::Logic
        );
        assert_eq!(
            kind(DML, &DML.replace("'--'", "'-+'"), FileRole::Dml),
            ChangeKind::Logic
        );
        assert_eq!(
            normalize("select `Name`, name from T").unwrap(),
            vec![vec!["SELECT", "`Name`", ",", "name", "FROM", "T"]]
        );
    }

    #[test]
    fn reserved_list_is_sorted() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn non_reserved_keywords_used_as_identifiers_keep_their_case() {
        let a = "CREATE TABLE t (name STRING, `value` INT, comment STRING COMMENT 'c', PRIMARY KEY (name) NOT ENFORCED)";
        let n = normalize(&a.to_lowercase()).unwrap();
        assert_eq!(
            n[0].join(" "),
            "CREATE TABLE t ( name STRING , `value` INT , comment STRING COMMENT 'c' , PRIMARY KEY ( name ) NOT ENFORCED )"
        );
        assert_eq!(
            kind(a, &a.replace("(name STRING", "(NAME STRING"), FileRole::Ddl),
            ChangeKind::Schema
        );
    }

    #[test]
    fn semicolons_and_empty_statements_are_ignored() {
        assert_eq!(
            normalize("SELECT 1;;\n;SELECT 2"),
            normalize("SELECT 1;\nSELECT 2;")
        );
        assert_eq!(normalize("SELECT 1").unwrap().len(), 1);
    }

    #[test]
    fn hints_are_kept() {
        let a = "INSERT INTO t SELECT /*+ STATE_TTL('s' = '1d') */ id FROM s";
        let b = "INSERT INTO t SELECT /*+ STATE_TTL('s' = '2d') */ id FROM s";
        assert_eq!(kind(a, b, FileRole::Dml), ChangeKind::Logic);
        assert_eq!(
            kind(a, &a.replace("/*+ ", "/*+\n  "), FileRole::Dml),
            ChangeKind::Cosmetic
        );
    }

    #[test]
    fn nested_type_closers_are_one_form() {
        assert_eq!(
            normalize("CREATE TABLE t (a ARRAY<ROW<b INT>>)"),
            normalize("create table t (a ARRAY<ROW<b INT> >)")
        );
    }

    #[test]
    fn added_column_is_schema_with_diff() {
        let new = DDL.replace("name STRING,", "name STRING,\n  email STRING NOT NULL,");
        let c = classify(DDL, &new, FileRole::Ddl);
        assert_eq!(c.kind, ChangeKind::Schema);
        let d = c.schema_diff.unwrap();
        assert_eq!(d.added, vec!["email"]);
        assert!(d.removed.is_empty() && d.modified.is_empty());
    }

    #[test]
    fn retyped_and_removed_columns() {
        let new = DDL
            .replace("name STRING,", "")
            .replace("id BIGINT", "id INT");
        let d = classify(DDL, &new, FileRole::Ddl).schema_diff.unwrap();
        assert_eq!(d.removed, vec!["name"]);
        assert_eq!(
            d.modified,
            vec![ColumnChange {
                name: "id".into(),
                change_type: "modified".into(),
                old_type: "BIGINT".into(),
                new_type: "INT".into(),
                old_nullable: false,
                new_nullable: false,
                old_primary_key: true,
                new_primary_key: true,
            }]
        );
        // Type case alone is not a change.
        assert_eq!(
            kind(DDL, &DDL.replace("STRING", "string"), FileRole::Ddl),
            ChangeKind::Cosmetic
        );
    }

    #[test]
    fn primary_key_change_is_schema() {
        let new = DDL.replace("PRIMARY KEY (id)", "PRIMARY KEY (id, name)");
        let d = classify(DDL, &new, FileRole::Ddl).schema_diff.unwrap();
        assert_eq!(
            d.primary_key,
            Some([
                vec!["id".to_string()],
                vec!["id".to_string(), "name".to_string()]
            ])
        );
        assert_eq!(d.modified.len(), 1);
        assert_eq!(d.modified[0].name, "name");
        assert!(!d.modified[0].old_primary_key && d.modified[0].new_primary_key);
    }

    #[test]
    fn with_options_only_is_options_and_reorder_is_cosmetic() {
        let new = DDL.replace("'topic' = 't'", "'topic' = 't2'");
        assert_eq!(kind(DDL, &new, FileRole::Ddl), ChangeKind::Options);
        let reordered = DDL.replace(
            "'connector' = 'kafka',\n  'topic' = 't'",
            "'topic' = 't',\n  'connector' = 'kafka'",
        );
        assert_eq!(kind(DDL, &reordered, FileRole::Ddl), ChangeKind::Cosmetic);
        let both = new.replace("name STRING,", "name STRING, extra INT,");
        assert_eq!(kind(DDL, &both, FileRole::Ddl), ChangeKind::Schema);
    }

    #[test]
    fn ddl_without_query_other_change_is_schema_with_empty_diff() {
        let a = "CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'kafka')";
        let b = a.replace("'5'", "'10'");
        let c = classify(a, &b, FileRole::Ddl);
        assert_eq!(c.kind, ChangeKind::Schema);
        assert_eq!(c.schema_diff, Some(SchemaDiff::default()));
    }

    #[test]
    fn ctas_query_change_is_logic() {
        let a = "CREATE TABLE t WITH ('connector' = 'kafka') AS SELECT a FROM s";
        assert_eq!(
            kind(a, &a.replace("SELECT a", "SELECT a, b"), FileRole::Ddl),
            ChangeKind::Logic
        );
        assert_eq!(
            kind(a, &a.replace("'kafka'", "'upsert-kafka'"), FileRole::Ddl),
            ChangeKind::Options
        );
    }

    #[test]
    fn properties_compare_pairs() {
        let a = "# c\nsql.state-ttl=1d\nclient.statement-name = x\n";
        let b = "client.statement-name=x\n\nsql.state-ttl = 1d\n";
        assert_eq!(kind(a, b, FileRole::Properties), ChangeKind::Cosmetic);
        assert_eq!(
            kind(a, &a.replace("1d", "2d"), FileRole::Properties),
            ChangeKind::Options
        );
    }

    /// Change detection and deploy read a `.properties` file the same way, whatever its lines: a key
    /// without a value (kept by one, dropped by the other before) made them disagree about one file.
    #[test]
    fn properties_agree_with_deploy_on_every_line_shape() {
        let shapes = [
            "a=b",
            "a = b",
            "a: b",
            "a=b=c",
            "bare.key",
            "empty=",
            "empty:",
            "=no key",
            "# c\n! c\n\n",
            "a=1\na=2",
            "a=1\r\nb=2",
        ];
        for text in shapes {
            assert_eq!(
                properties(text),
                crate::sql::text::parse_properties(text),
                "{text:?}"
            );
        }
        // Adding a bare key is a change for both: deploy sends it (empty), so it is an options change.
        let a = "sql.state-ttl=1d\n";
        let b = "sql.state-ttl=1d\nsql.local-time-zone\n";
        assert_eq!(kind(a, b, FileRole::Properties), ChangeKind::Options);
        assert_ne!(
            crate::sql::text::parse_properties(a),
            crate::sql::text::parse_properties(b)
        );
        // A line that names no key is nothing to both.
        assert_eq!(
            kind(a, "sql.state-ttl=1d\n=x\n", FileRole::Properties),
            ChangeKind::Cosmetic
        );
    }

    #[test]
    fn untokenizable_text_compares_raw() {
        let a = "SELECT 'unterminated";
        assert_eq!(normalize(a), None);
        assert_eq!(kind(a, a, FileRole::Dml), ChangeKind::Cosmetic);
        assert_eq!(
            kind(a, "SELECT 'unterminated x", FileRole::Dml),
            ChangeKind::Logic
        );
    }
}
