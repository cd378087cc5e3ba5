//! What the SQL Gateway target knows of the project: every statement by name, and which statement
//! defines each table.
//!
//! Why: an Apache Flink SQL Gateway session starts with an empty in-memory catalog
//! (`default_catalog.default_database`) and tables created in one session are invisible in the next
//! (observed on Flink 2.2: `Object 'src' not found` from a second session). Confluent Cloud keeps
//! tables; a gateway with the default catalog does not. So before a statement runs, the target declares
//! in its session every table the statement reads or writes that the session does not know yet, from
//! the project's own DDL ([`Definitions::definition_of`]). Tables created by a query (CTAS, materialized
//! table) are declared from the query's `DESCRIBE`d schema plus the statement's primary key and options.

use crate::sql::dialect::FlinkDialect;
use crate::sql::split::{self, LineIndex};
use crate::sql::{self, StatementKind as SqlKind};
use crate::target::{StatementKind, StatementSpec};
use std::collections::BTreeMap;

/// How a table is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Definition {
    /// A plain DDL statement (`CREATE TABLE`, `CREATE VIEW`, `CREATE FUNCTION`…): run it as written.
    Ddl {
        /// The statement name.
        name: String,
        /// The table's name as written (last part, quotes removed; Flink names are case-sensitive).
        table: String,
        /// The SQL text.
        sql: String,
        /// Tables it needs first (`CREATE TABLE x LIKE y`, a view's sources).
        needs: Vec<String>,
    },
    /// A table whose schema comes from a query (CTAS, `CREATE MATERIALIZED TABLE`): declared as
    /// `CREATE TABLE t (<DESCRIBE of the query>) WITH (<options>)` without starting a job.
    Derived {
        /// The statement name.
        name: String,
        /// The table's name as written (last part, quotes removed).
        table: String,
        /// The `SELECT` after the top-level `AS`.
        query: String,
        /// Declared primary key.
        primary_key: Vec<String>,
        /// `WITH` options.
        options: Vec<(String, String)>,
        /// Tables the query reads.
        needs: Vec<String>,
    },
}

impl Definition {
    /// The statement name this definition comes from.
    pub fn statement(&self) -> &str {
        match self {
            Definition::Ddl { name, .. } | Definition::Derived { name, .. } => name,
        }
    }

    /// The table's name as written.
    pub fn table(&self) -> &str {
        match self {
            Definition::Ddl { table, .. } | Definition::Derived { table, .. } => table,
        }
    }

    /// Tables to declare before this one.
    pub fn needs(&self) -> &[String] {
        match self {
            Definition::Ddl { needs, .. } | Definition::Derived { needs, .. } => needs,
        }
    }
}

/// The project's statements, as the gateway target sees them.
#[derive(Debug, Clone, Default)]
pub struct Definitions {
    statements: BTreeMap<String, StatementSpec>,
    tables: BTreeMap<String, Definition>,
    materialized: BTreeMap<String, String>,
}

/// The catalog key of a table name: its last part, lower-cased (`cat.db.T` → `t`). The target works in
/// one session catalog, so qualification does not separate tables here. `name` is a
/// [`crate::sql::TableName::key`] or a name as Flink prints it (backquoted parts, `` ` `` doubled): a
/// backquoted identifier holding a dot is one part (`` `x.y` `` → `x.y`, never `y`).
pub fn table_key(name: &str) -> String {
    crate::sql::TableName::from_key(name)
        .table()
        .to_ascii_lowercase()
}

/// The tables a SQL text creates (`CREATE TABLE`, CTAS, materialized table, view), as
/// ([`table_key`], name as written).
pub fn created_tables(sql_text: &str) -> Vec<(String, String)> {
    sql::analyze(sql_text)
        .statements
        .iter()
        .filter(|st| st.kind.creates_relation())
        .flat_map(|st| st.sinks.iter())
        .map(|r| (table_key(&r.name.key()), r.name.table().to_string()))
        .collect()
}

/// The table an `ALTER [MATERIALIZED] TABLE [IF EXISTS] t …` or `DROP [TEMPORARY] [MATERIALIZED]
/// TABLE [IF EXISTS] t` statement names (dotted, quotes removed): the session must know it before
/// the statement runs (`pipeline prepare`). `None` for any other statement.
pub fn altered_table(statement: &str) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&FlinkDialect, statement).tokenize().ok()?;
    let mut it = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .peekable();
    let keyword = |t: Option<&Token>, kw: &str| matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw));
    let first = it.next();
    if !(keyword(first.as_ref(), "ALTER") || keyword(first.as_ref(), "DROP")) {
        return None;
    }
    for optional in ["TEMPORARY", "MATERIALIZED"] {
        if keyword(it.peek(), optional) {
            it.next();
        }
    }
    if !keyword(it.next().as_ref(), "TABLE") {
        return None;
    }
    if keyword(it.peek(), "IF") {
        it.next();
        if keyword(it.peek(), "NOT") {
            it.next();
        }
        if !keyword(it.next().as_ref(), "EXISTS") {
            return None;
        }
    }
    let mut parts = Vec::new();
    loop {
        match it.next() {
            Some(Token::Word(w)) => parts.push(w.value),
            _ => return None,
        }
        if it.peek() == Some(&Token::Period) {
            it.next();
        } else {
            break;
        }
    }
    Some(parts.join("."))
}

/// Every table a statement reads or writes (sources, sinks, statement-set members, `LIKE` sources,
/// the table an `ALTER TABLE` or `DROP TABLE` names), as [`table_key`]s, in first-seen order.
pub fn referenced_tables(sql_text: &str) -> Vec<String> {
    let analysis = sql::analyze(sql_text);
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        let k = table_key(n);
        if !out.contains(&k) {
            out.push(k);
        }
    };
    for st in &analysis.statements {
        if let Some(t) = altered_table(&st.text) {
            push(&t);
        }
        for r in st.sources.iter().chain(&st.sinks) {
            push(&r.name.key());
        }
        for n in &st.like_sources {
            push(&n.key());
        }
        for m in &st.members {
            push(&m.sink.name.key());
            for r in &m.sources {
                push(&r.name.key());
            }
        }
    }
    out
}

/// The query of a CTAS or materialized table: the text after the first `AS` at parenthesis depth 0
/// that is followed by `SELECT`, `WITH`, `VALUES` or `(`. `None` when there is none.
pub fn query_after_as(sql_text: &str) -> Option<String> {
    use sqlparser::tokenizer::Token;
    let file = split::split(&FlinkDialect, sql_text);
    let tokens = &file.tokens;
    let mut depth = 0i32;
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 && w.value.eq_ignore_ascii_case("AS") => {
                let starts_query = match tokens.get(i + 1).map(|t| &t.token) {
                    Some(Token::Word(n)) => ["SELECT", "WITH", "VALUES"]
                        .iter()
                        .any(|k| n.value.eq_ignore_ascii_case(k)),
                    Some(Token::LParen) => true,
                    _ => false,
                };
                if starts_query {
                    let offset = LineIndex::new(sql_text).offset(tokens[i + 1].span.start);
                    let q = sql_text[offset..].trim().trim_end_matches(';').trim();
                    return Some(q.to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The SQL client's statement-set form (`BEGIN STATEMENT SET; INSERT …; INSERT …; END;`) rewritten
/// as the single statement the gateway executes (`EXECUTE STATEMENT SET BEGIN INSERT …; … END`); `None`
/// for any other text (sent as written). Flink SQL docs, "INSERT Statement" / "EXECUTE STATEMENT SET".
pub fn execute_statement_set(sql_text: &str) -> Option<String> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let file = split::split(&FlinkDialect, sql_text);
    let tokens = &file.tokens;
    let kw = |i: usize, k: Keyword| matches!(tokens.get(i).map(|t| &t.token), Some(Token::Word(w)) if w.quote_style.is_none() && w.keyword == k);
    // The splitter's own rule for set headers; only the client form is rewritten.
    let body = match split::set_header(tokens, 0) {
        Some(n) if kw(0, Keyword::BEGIN) => n,
        _ => return None,
    };
    let mut end = tokens.len().checked_sub(1)?;
    if tokens[end].token == Token::SemiColon {
        end = end.checked_sub(1)?;
    }
    if end < body || !kw(end, Keyword::END) {
        return None;
    }
    let lines = LineIndex::new(sql_text);
    let from = lines.offset(tokens[body].span.start);
    let to = lines.offset(tokens[end].span.start);
    Some(format!(
        "EXECUTE STATEMENT SET\nBEGIN\n{}\nEND",
        sql_text.get(from..to)?.trim()
    ))
}

impl Definitions {
    /// Indexes statements (every statement of the project, plus DDL of external tables). A table
    /// defined twice keeps its first definition.
    pub fn new(specs: impl IntoIterator<Item = StatementSpec>) -> Self {
        let mut d = Definitions::default();
        for spec in specs {
            d.add(spec);
        }
        d
    }

    /// Adds one statement.
    pub fn add(&mut self, spec: StatementSpec) {
        let analysis = sql::analyze(&spec.sql);
        for st in &analysis.statements {
            if !(st.kind.creates_relation() || st.kind == SqlKind::CreateFunction) {
                continue;
            }
            let Some(sink) = st.sinks.first() else {
                continue;
            };
            let key = table_key(&sink.name.key());
            let table = sink.name.table().to_string();
            let mut needs: Vec<String> = Vec::new();
            for r in &st.sources {
                let k = table_key(&r.name.key());
                if k != key && !needs.contains(&k) {
                    needs.push(k);
                }
            }
            for n in &st.like_sources {
                let k = table_key(&n.key());
                if k != key && !needs.contains(&k) {
                    needs.push(k);
                }
            }
            let def = match st.kind {
                SqlKind::Ctas | SqlKind::CreateMaterializedTable => {
                    let Some(query) = query_after_as(&st.text) else {
                        continue;
                    };
                    if st.kind == SqlKind::CreateMaterializedTable {
                        self.materialized.insert(spec.name.clone(), key.clone());
                    }
                    Definition::Derived {
                        name: spec.name.clone(),
                        table,
                        query,
                        primary_key: st.primary_key.clone(),
                        options: st.with_options.clone(),
                        needs,
                    }
                }
                _ => Definition::Ddl {
                    name: spec.name.clone(),
                    table,
                    sql: st.text.trim().trim_end_matches(';').trim().to_string(),
                    needs,
                },
            };
            self.tables.entry(key).or_insert(def);
        }
        self.statements.entry(spec.name.clone()).or_insert(spec);
    }

    /// The statement of that name, if the project defines it.
    pub fn statement(&self, name: &str) -> Option<&StatementSpec> {
        self.statements.get(name)
    }

    /// Whether a statement is a DDL that runs no job (a known statement of kind DDL). Names the project
    /// does not define are treated as jobs.
    pub fn is_ddl(&self, name: &str) -> bool {
        self.statements
            .get(name)
            .is_some_and(|s| s.kind == StatementKind::Ddl)
    }

    /// The table of a materialized-table statement (its job is named by Flink, not by us).
    pub fn materialized_table(&self, name: &str) -> Option<&str> {
        self.materialized.get(name).map(String::as_str)
    }

    /// How to declare table `key` ([`table_key`]) in a session.
    pub fn definition_of(&self, key: &str) -> Option<&Definition> {
        self.tables.get(key)
    }

    /// Every statement name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.statements.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// `pipeline prepare` on the gateway: the table an ALTER or DROP names is declared first.
    #[test]
    fn altered_and_dropped_tables_are_referenced() {
        for (sql, want) in [
            ("ALTER TABLE src_x ADD (c INT)", Some("src_x")),
            (
                "alter table IF EXISTS `cat`.`db`.`My Table` SET ('k' = 'v')",
                Some("cat.db.My Table"),
            ),
            ("ALTER MATERIALIZED TABLE mv SUSPEND", Some("mv")),
            ("-- why\nDROP TEMPORARY TABLE IF EXISTS t1", Some("t1")),
            ("DROP VIEW v", None),
            ("ALTER FUNCTION f AS 'x'", None),
            ("INSERT INTO a SELECT * FROM b", None),
            ("ALTER TABLE", None),
        ] {
            assert_eq!(altered_table(sql).as_deref(), want, "{sql}");
        }
        assert_eq!(
            referenced_tables("ALTER TABLE src_x ADD (c INT)"),
            ["src_x"]
        );
    }

    fn spec(name: &str, sql: &str, kind: StatementKind) -> StatementSpec {
        StatementSpec {
            name: name.into(),
            sql: sql.into(),
            properties: BTreeMap::new(),
            kind,
            compute_pool: None,
        }
    }

    #[test]
    fn query_of_ctas_and_materialized_table() {
        assert_eq!(
            query_after_as("CREATE TABLE t WITH ('a' = 'b') AS SELECT x AS y FROM s;").as_deref(),
            Some("SELECT x AS y FROM s")
        );
        let mt = "CREATE MATERIALIZED TABLE m (PRIMARY KEY (k) NOT ENFORCED)\nWITH ('connector' = 'print')\nFRESHNESS = INTERVAL '1' MINUTE\nREFRESH_MODE = CONTINUOUS\nAS WITH c AS (SELECT 1 AS k) SELECT k FROM c";
        assert_eq!(
            query_after_as(mt).as_deref(),
            Some("WITH c AS (SELECT 1 AS k) SELECT k FROM c")
        );
        assert_eq!(query_after_as("CREATE TABLE t (a INT)"), None);
    }

    #[test]
    fn the_client_statement_set_form_becomes_one_gateway_statement() {
        let client = "-- two sinks\nBEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM s;\ninsert into b select * from s;\nEND;";
        assert_eq!(
            execute_statement_set(client).as_deref(),
            Some(
                "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT * FROM s;\ninsert into b select * from s;\nEND"
            )
        );
        assert_eq!(
            execute_statement_set("begin statement set insert into a select 1; end").as_deref(),
            Some("EXECUTE STATEMENT SET\nBEGIN\ninsert into a select 1;\nEND")
        );
        assert_eq!(
            execute_statement_set("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END"),
            None
        );
        assert_eq!(execute_statement_set("INSERT INTO a SELECT 1"), None);
        assert_eq!(
            execute_statement_set("BEGIN STATEMENT SET; INSERT INTO a SELECT 1;"),
            None
        );
    }

    #[test]
    fn tables_are_indexed_by_their_defining_statement() {
        let d = Definitions::new([
            spec(
                "dev-ddl-src",
                "CREATE TABLE src (a INT) WITH ('connector' = 'datagen')",
                StatementKind::Ddl,
            ),
            spec(
                "dev-ddl-c",
                "CREATE TABLE cat.db.C WITH ('connector' = 'blackhole') AS SELECT a FROM src",
                StatementKind::Dml,
            ),
            spec(
                "dev-ddl-l",
                "CREATE TABLE l WITH ('connector' = 'print') LIKE src",
                StatementKind::Ddl,
            ),
            spec(
                "dev-dml-x",
                "INSERT INTO l SELECT * FROM c",
                StatementKind::Dml,
            ),
        ]);
        assert!(matches!(
            d.definition_of("src"),
            Some(Definition::Ddl { .. })
        ));
        match d.definition_of("c") {
            Some(Definition::Derived { query, needs, .. }) => {
                assert_eq!(query, "SELECT a FROM src");
                assert_eq!(needs, &["src".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(d.definition_of("l").unwrap().needs(), &["src".to_string()]);
        assert!(d.is_ddl("dev-ddl-src") && !d.is_ddl("dev-dml-x") && !d.is_ddl("unknown"));
        assert_eq!(
            referenced_tables("INSERT INTO l SELECT * FROM c JOIN src ON true"),
            ["c", "src", "l"]
        );
    }
}
