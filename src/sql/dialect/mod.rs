//! `FlinkDialect`: Apache Flink (and Confluent Cloud for Flink) SQL for `sqlparser`.
//!
//! The stock dialects reject most real Flink DDL (measured: ~51 % of 783 statements parse with
//! `GenericDialect`). This dialect plugs Flink's grammar into the parser's extension hooks:
//!
//! * [`Dialect::parse_statement`] takes over `CREATE [OR REPLACE] [TEMPORARY] TABLE` (columns, computed and
//!   metadata columns, `WATERMARK`, `PRIMARY KEY … NOT ENFORCED`, `PARTITIONED BY`, `DISTRIBUTED BY/INTO`,
//!   `WITH (…)`, `LIKE … (…)`, `AS query`), `CREATE [OR ALTER] MATERIALIZED TABLE`, `CREATE [TEMPORARY] VIEW`,
//!   `EXECUTE INSERT`, `SET`/`RESET` with quoted or unquoted keys and `USE [CATALOG]`. Queries inside them are
//!   parsed by calling back into [`Parser::parse_query`].
//! * [`Dialect::parse_prefix`] reads the `TABLE t` and `MODEL m` arguments of table-valued functions
//!   (`TUMBLE(TABLE t, DESCRIPTOR(ts), …)`, `ML_PREDICT(TABLE t, MODEL m, …)`), returned as
//!   `Expr::Prefixed { prefix: TABLE | MODEL, value: <name> }` (see [`table_argument`]); also Flink's
//!   `MAP[k, v, …]` constructor and the SQL/JSON functions' clauses (`JSON_VALUE(… RETURNING t DEFAULT x ON
//!   EMPTY)`, `JSON_OBJECT(KEY k VALUE v)`).
//! * [`Dialect::parse_data_type`] reads `ROW<…>`/`ROW(…)`, `ARRAY<…>`, `MAP<…>`, `MULTISET<…>` and
//!   `TIMESTAMP(p) WITH LOCAL TIME ZONE` (returned as `DataType::Custom` holding the normalised text).
//! * [`Dialect::parse_column_option`] reads `METADATA [FROM 'key'] [VIRTUAL]`.
//! * `supports_table_versioning` enables `FOR SYSTEM_TIME AS OF` (temporal and lookup joins).
//!
//! Handled by the caller ([`crate::sql::analyze`]) rather than by hooks: statement sets (`EXECUTE STATEMENT
//! SET BEGIN … END`, `BEGIN STATEMENT SET; … END;`: several statements, and a hook returns one), statements
//! that read or write no relation (`CREATE FUNCTION/CATALOG/DATABASE/MODEL`, `ALTER`, `DROP`, `SHOW`, …; see
//! [`opaque_statement_kind`]), and three token-level adjustments no hook can make: `>>` split in two `>`
//! (nested types), `INSERT … PARTITION (…) (cols)` reordered to sqlparser's `(cols) PARTITION (…)`, and
//! `MATCH_RECOGNIZE`'s `WITHIN INTERVAL …` removed.

mod ddl;
mod expr;

use sqlparser::ast::{ColumnOption, DataType, Expr, Ident, ObjectName, Statement};
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use ddl::{
    CreateHeader, parse_alter_as, parse_alter_materialized_as, parse_create_table,
    parse_create_view, parse_set, parse_use,
};
use expr::{
    parse_cast, parse_flink_type, parse_json_function, parse_map_constructor, parse_table_argument,
    parse_trim_side_only, timestamp_has_local_tz,
};

use super::model::StatementKind;

/// The Flink SQL dialect. Stateless; one value can serve any number of parsers.
///
/// Nested angle-bracket types end with `>>`, which sqlparser's tokenizer reads as one shift operator;
/// feed the parser tokens from [`crate::sql::split::split`], which splits it (Flink has no shift operator).
#[derive(Debug, Default, Clone, Copy)]
pub struct FlinkDialect;

/// Prefix of the marker expression for a `TABLE t` argument of a table-valued function.
pub const TABLE_ARG: &str = "TABLE";
/// Prefix of the marker expression for a `MODEL m` argument (`ML_PREDICT`, `ML_EVALUATE`).
pub const MODEL_ARG: &str = "MODEL";

/// If `expr` is a `TABLE name` argument produced by [`FlinkDialect::parse_prefix`], returns the name's
/// identifiers (with their spans).
pub fn table_argument(expr: &Expr) -> Option<Vec<&Ident>> {
    match expr {
        Expr::Prefixed { prefix, value }
            if prefix.value == TABLE_ARG && prefix.quote_style.is_none() =>
        {
            match value.as_ref() {
                Expr::Identifier(i) => Some(vec![i]),
                Expr::CompoundIdentifier(parts) => Some(parts.iter().collect()),
                _ => None,
            }
        }
        _ => None,
    }
}

thread_local! {
    /// Whether [`FlinkDialect::parse_prefix`] takes its fast path on this thread (see
    /// [`without_fast_paths`]).
    static FAST_PATHS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Runs `f` with the dialect's fast path for identifiers off on this thread, so that every expression
/// goes through sqlparser's own prefix parsing. The results must be identical (same AST, same spans,
/// same errors); `tests/testsuite/sql_parse_fast.rs` compares both ways on the corpus. Not for use
/// outside tests.
#[doc(hidden)]
pub fn without_fast_paths<R>(f: impl FnOnce() -> R) -> R {
    super::with_flag(&FAST_PATHS, false, f)
}

fn word(tok: &TokenWithSpan) -> Option<&Word> {
    match &tok.token {
        Token::Word(w) => Some(w),
        _ => None,
    }
}

fn is_word(tok: &TokenWithSpan, text: &str) -> bool {
    word(tok).is_some_and(|w| w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text))
}

fn peek_is(parser: &Parser, n: usize, text: &str) -> bool {
    is_word(parser.peek_nth_token_ref(n), text)
}

impl Dialect for FlinkDialect {
    fn is_identifier_start(&self, ch: char) -> bool {
        // `$` starts Confluent's system columns (`$rowtime`); Flink has no `$`-placeholders or
        // dollar-quoted strings, so reading it as an identifier character loses nothing.
        ch.is_alphabetic() || ch == '_' || ch == '$'
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        ch.is_alphanumeric() || ch == '_' || ch == '$'
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        ch == '`' || ch == '"'
    }

    fn supports_table_versioning(&self) -> bool {
        // `FOR SYSTEM_TIME AS OF` (temporal and lookup joins).
        true
    }

    fn supports_match_recognize(&self) -> bool {
        true
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }

    fn supports_window_clause_named_window_reference(&self) -> bool {
        true
    }

    fn supports_named_fn_args_with_rarrow_operator(&self) -> bool {
        // `TUMBLE(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE)`.
        true
    }

    fn supports_parens_around_table_factor(&self) -> bool {
        true
    }

    fn supports_values_as_table_factor(&self) -> bool {
        true
    }

    fn supports_left_associative_joins_without_parens(&self) -> bool {
        true
    }

    fn supports_partition_by_after_order_by(&self) -> bool {
        true
    }

    fn supports_group_by_expr(&self) -> bool {
        // GROUPING SETS / ROLLUP / CUBE.
        true
    }

    fn allow_extract_custom(&self) -> bool {
        true
    }

    fn allow_extract_single_quotes(&self) -> bool {
        true
    }

    fn supports_create_view_comment_syntax(&self) -> bool {
        true
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        false
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let first = parser.peek_token_ref();
        if let Some(w) = word(first) {
            let next = &parser.peek_nth_token_ref(1).token;
            // Fast path, for speed only: a word that is no keyword (or is quoted), followed by anything but
            // `(` (a function call), a string (`_utf8'…'`, an introducer) or `->` (a lambda, which Flink
            // lacks), is an identifier. sqlparser concludes the same (`parse_prefix_inner`: the type-name
            // speculation for a typed literal `DATE '…'` fails for such a word, and
            // `parse_expr_prefix_by_unreserved_word` returns `Expr::Identifier` for these next tokens), but
            // only after that speculation, building and formatting an error. A following `.` or `[` is left
            // to the caller (`parse_subexpr` reads `a.b.c` and `a[1]` after the prefix), as it is after
            // sqlparser's own prefix. `MODEL m` is Flink's model argument, read below. Checked against
            // sqlparser's own parse of every expression of a corpus by `tests/testsuite/sql_parse_fast.rs`,
            // which also checks the settings this relies on (no lambdas, no XML or custom-type typed
            // literals, no `(+)` outer joins).
            if w.keyword == Keyword::NoKeyword
                && FAST_PATHS.with(std::cell::Cell::get)
                && !(w.quote_style.is_none() && w.value.eq_ignore_ascii_case(MODEL_ARG))
                && matches!(
                    next,
                    Token::Comma
                        | Token::RParen
                        | Token::EOF
                        | Token::SemiColon
                        | Token::Eq
                        | Token::DoubleEq
                        | Token::Neq
                        | Token::Lt
                        | Token::Gt
                        | Token::LtEq
                        | Token::GtEq
                        | Token::Plus
                        | Token::Minus
                        | Token::Mul
                        | Token::Div
                        | Token::Mod
                        | Token::StringConcat
                        | Token::Period
                        | Token::LBracket
                        | Token::RBracket
                        | Token::DoubleColon
                        | Token::Word(_)
                )
            {
                let ident = w.to_ident(first.span);
                parser.next_token();
                return Some(Ok(Expr::Identifier(ident)));
            }
        }
        if let Some(w) = word(first).filter(|w| w.quote_style.is_none()) {
            let next = &parser.peek_nth_token_ref(1).token;
            // Flink's map constructor `MAP[k1, v1, k2, v2]` (sqlparser knows DuckDB's `MAP {k: v}` only).
            if w.keyword == Keyword::MAP && *next == Token::LBracket {
                return Some(parse_map_constructor(parser));
            }
            // `TRIM(BOTH | LEADING | TRAILING FROM s)`: the characters to trim are optional in Flink
            // (default: spaces; Flink SQL reference, String Functions › TRIM); sqlparser requires them.
            if w.keyword == Keyword::TRIM
                && *next == Token::LParen
                && ["BOTH", "LEADING", "TRAILING"]
                    .iter()
                    .any(|k| peek_is(parser, 2, k))
                && peek_is(parser, 3, "FROM")
            {
                return Some(parse_trim_side_only(parser));
            }
            // Flink types may carry nullability inside CAST (`CAST(x AS INT NOT NULL)`).
            if matches!(w.keyword, Keyword::CAST | Keyword::TRY_CAST) && *next == Token::LParen {
                return Some(parse_cast(parser));
            }
            // SQL/JSON functions take clauses sqlparser does not know (`RETURNING t DEFAULT x ON EMPTY`,
            // `WITH CONDITIONAL ARRAY WRAPPER`, `ERROR ON ERROR`, `JSON_OBJECT(KEY 'k' VALUE v)`,
            // `JSON_OBJECTAGG(KEY k VALUE v NULL ON NULL)`, `JSON_ARRAYAGG(x ORDER BY y ABSENT ON NULL)`;
            // Flink SQL reference, System (Built-in) Functions › JSON Functions).
            if *next == Token::LParen
                && [
                    "JSON_VALUE",
                    "JSON_QUERY",
                    "JSON_EXISTS",
                    "JSON_OBJECT",
                    "JSON_OBJECTAGG",
                    "JSON_ARRAY",
                    "JSON_ARRAYAGG",
                ]
                .iter()
                .any(|f| w.value.eq_ignore_ascii_case(f))
            {
                return Some(parse_json_function(parser));
            }
        }
        // `TABLE <name>` / `MODEL <name>` in an expression position (table-valued function arguments).
        let prefix = match word(first) {
            Some(w) if w.quote_style.is_none() && w.keyword == Keyword::TABLE => TABLE_ARG,
            Some(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(MODEL_ARG) => {
                MODEL_ARG
            }
            _ => return None,
        };
        word(parser.peek_nth_token_ref(1))?;
        if prefix == MODEL_ARG
            && !matches!(
                parser.peek_nth_token_ref(2).token,
                Token::Comma | Token::RParen | Token::Period
            )
        {
            // A column called `model`, not a model argument.
            return None;
        }
        let span = first.span;
        Some(parse_table_argument(parser, prefix, span))
    }

    fn parse_data_type(&self, parser: &mut Parser) -> Option<Result<DataType, ParserError>> {
        let tok = parser.peek_token_ref();
        let w = word(tok)?;
        if w.quote_style.is_some() {
            return None;
        }
        let name = w.value.to_ascii_uppercase();
        let next = &parser.peek_nth_token_ref(1).token;
        let handled = match name.as_str() {
            "ROW" => matches!(next, Token::Lt | Token::LParen),
            "ARRAY" | "MAP" | "MULTISET" => matches!(next, Token::Lt),
            "TIMESTAMP" | "TIME" => timestamp_has_local_tz(parser),
            _ => false,
        };
        if !handled {
            return None;
        }
        Some(
            parse_flink_type(parser)
                .map(|text| DataType::Custom(ObjectName::from(vec![Ident::new(text)]), vec![])),
        )
    }

    fn parse_column_option(
        &self,
        parser: &mut Parser,
    ) -> Result<Option<Result<Option<ColumnOption>, ParserError>>, ParserError> {
        // Flink metadata columns: `METADATA [FROM 'key'] [VIRTUAL]`, kept as dialect-specific tokens.
        if !peek_is(parser, 0, "METADATA") {
            return Ok(None);
        }
        let mut toks = vec![parser.next_token().token];
        if parser.peek_keyword(Keyword::FROM) {
            toks.push(parser.next_token().token);
            toks.push(parser.next_token().token);
        }
        if peek_is(parser, 0, "VIRTUAL") {
            toks.push(parser.next_token().token);
        }
        Ok(Some(Ok(Some(ColumnOption::DialectSpecific(toks)))))
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        let first = word(parser.peek_token_ref())?;
        if first.quote_style.is_some() {
            return None;
        }
        match first.keyword {
            Keyword::CREATE => {
                let mut n = 1;
                let mut or_replace = false;
                let mut or_alter = false;
                if peek_is(parser, n, "OR") {
                    or_replace = peek_is(parser, n + 1, "REPLACE");
                    or_alter = peek_is(parser, n + 1, "ALTER");
                    n += 2;
                }
                let temporary = peek_is(parser, n, "TEMPORARY");
                if temporary {
                    n += 1;
                }
                let what = if peek_is(parser, n, "TABLE") {
                    Some((false, n + 1))
                } else if peek_is(parser, n, "MATERIALIZED") && peek_is(parser, n + 1, "TABLE") {
                    Some((true, n + 2))
                } else {
                    None
                };
                if let Some((materialized, skip)) = what {
                    for _ in 0..skip {
                        parser.next_token();
                    }
                    let header = CreateHeader {
                        or_replace,
                        or_alter,
                        temporary,
                        materialized,
                    };
                    return Some(parse_create_table(parser, header));
                }
                if peek_is(parser, n, "VIEW") {
                    for _ in 0..=n {
                        parser.next_token();
                    }
                    return Some(parse_create_view(parser, or_replace || or_alter, temporary));
                }
                None
            }
            // `REPLACE TABLE t … AS query` (Flink 1.18+ RTAS; `CREATE OR REPLACE TABLE` is read above).
            Keyword::REPLACE if peek_is(parser, 1, "TABLE") => {
                parser.next_token();
                parser.next_token();
                let header = CreateHeader {
                    or_replace: true,
                    or_alter: false,
                    temporary: false,
                    materialized: false,
                };
                Some(parse_create_table(parser, header))
            }
            // `ALTER VIEW v AS query`, `ALTER MATERIALIZED TABLE m AS query`: the only ALTER forms with a
            // query (others are classified without parsing, see `opaque_statement_kind`).
            // `ALTER VIEW v AS query`, `ALTER MATERIALIZED TABLE m […] AS query`: the only ALTER forms with
            // a query; `opaque_statement_kind` classifies the others without parsing.
            Keyword::ALTER if peek_is(parser, 1, "VIEW") => {
                parser.next_token();
                parser.next_token();
                Some(parse_alter_as(parser, false))
            }
            Keyword::ALTER if peek_is(parser, 1, "MATERIALIZED") && peek_is(parser, 2, "TABLE") => {
                for _ in 0..3 {
                    parser.next_token();
                }
                Some(parse_alter_materialized_as(parser))
            }
            Keyword::EXECUTE if peek_is(parser, 1, "INSERT") => {
                // `EXECUTE INSERT …` is the INSERT itself, run as its own job.
                parser.next_token();
                Some(parser.parse_statement())
            }
            Keyword::SET | Keyword::RESET => Some(parse_set(parser)),
            Keyword::USE => Some(parse_use(parser)),
            _ => None,
        }
    }
}

/// Whether tokens hold `ALTER VIEW name AS query` or `ALTER MATERIALIZED TABLE name […] AS query` (Flink
/// 2.0, FLINK-36994; Confluent Cloud also allows columns, `COMMENT`, `DISTRIBUTED BY`, `WITH` and
/// `START_MODE` before `AS`): the ALTER forms that carry a query, parsed like a CREATE. One pass.
fn alter_as_query(tokens: &[TokenWithSpan]) -> bool {
    let is = |i: usize, k: &str| tokens.get(i).is_some_and(|t| is_word(t, k));
    let query_at = |i: usize| {
        is(i, "SELECT")
            || is(i, "WITH")
            || (tokens.get(i).is_some_and(|t| t.token == Token::LParen)
                && (is(i + 1, "SELECT") || is(i + 1, "WITH")))
    };
    if is(1, "VIEW") {
        let mut n = 2;
        while tokens.get(n).and_then(word).is_some() {
            if tokens.get(n + 1).is_some_and(|t| t.token == Token::Period) {
                n += 2;
            } else {
                n += 1;
                break;
            }
        }
        return is(n, "AS") && query_at(n + 1);
    }
    if !(is(1, "MATERIALIZED") && is(2, "TABLE")) {
        return false;
    }
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(3) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0 && is_word(t, "AS") && query_at(i + 1) => return true,
            _ => {}
        }
    }
    false
}

/// Kinds of statements that read and write no relation (flinkpipe's labelling rule: ALTER, DROP,
/// SET, USE, CREATE
/// FUNCTION/CATALOG/DATABASE are not sinks, and none of them reads a table), recognised by their leading
/// keywords. sqlparser has no AST for Flink's forms of most of them (`CREATE FUNCTION … AS 'class' LANGUAGE
/// JAVA USING JAR …`, `CREATE MODEL … INPUT (…) OUTPUT (…)`, `ALTER TABLE … MODIFY WATERMARK …`), and
/// parsing them would only produce false warnings, so they are classified without parsing.
pub fn opaque_statement_kind(tokens: &[TokenWithSpan]) -> Option<StatementKind> {
    let kw = |i: usize| {
        tokens
            .get(i)
            .and_then(word)
            .filter(|w| w.quote_style.is_none())
            .map(|w| w.keyword)
    };
    match kw(0)? {
        Keyword::CREATE => {
            let mut i = 1;
            if kw(i) == Some(Keyword::OR) {
                i += 2;
            }
            while matches!(kw(i), Some(Keyword::TEMPORARY | Keyword::SYSTEM)) {
                i += 1;
            }
            let next = tokens.get(i).and_then(word)?;
            match next.keyword {
                Keyword::FUNCTION => Some(StatementKind::CreateFunction),
                Keyword::CATALOG | Keyword::DATABASE | Keyword::SCHEMA => {
                    Some(StatementKind::Other)
                }
                // Flink / Confluent objects that are not relations.
                _ if ["MODEL", "CONNECTION", "AGENT", "TOOL"]
                    .iter()
                    .any(|k| next.value.eq_ignore_ascii_case(k)) =>
                {
                    Some(StatementKind::Other)
                }
                _ => None,
            }
        }
        Keyword::ALTER if alter_as_query(tokens) => None,
        Keyword::ALTER => Some(StatementKind::Alter),
        Keyword::DROP => Some(StatementKind::Drop),
        Keyword::SHOW
        | Keyword::DESCRIBE
        | Keyword::DESC
        | Keyword::EXPLAIN
        | Keyword::LOAD
        | Keyword::UNLOAD
        | Keyword::ADD
        | Keyword::REMOVE
        | Keyword::ANALYZE => Some(StatementKind::Other),
        // `COMPILE PLAN '…' FOR …` and `EXECUTE PLAN '…'` (compiled plans), `STOP JOB '…'`: job management.
        _ if is_word(&tokens[0], "COMPILE")
            && tokens.get(1).is_some_and(|t| is_word(t, "PLAN")) =>
        {
            Some(StatementKind::Other)
        }
        Keyword::EXECUTE if tokens.get(1).is_some_and(|t| is_word(t, "PLAN")) => {
            Some(StatementKind::Other)
        }
        _ if is_word(&tokens[0], "STOP") && tokens.get(1).is_some_and(|t| is_word(t, "JOB")) => {
            Some(StatementKind::Other)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::ast::{
        CreateTable, CreateTableLikeKind, CreateTableOptions, FunctionArg, FunctionArgExpr,
        TableFactor, Use,
    };

    fn parse(sql: &str) -> Statement {
        let mut stmts = Parser::parse_sql(&FlinkDialect, sql).expect("parses");
        assert_eq!(stmts.len(), 1);
        stmts.remove(0)
    }

    fn create_table(sql: &str) -> CreateTable {
        match parse(sql) {
            Statement::CreateTable(ct) => ct,
            other => panic!("not a CREATE TABLE: {other:?}"),
        }
    }

    #[test]
    fn create_table_maps_flink_clauses() {
        let ct = create_table(
            "CREATE TEMPORARY TABLE IF NOT EXISTS `c`.`d`.t (
               id STRING NOT NULL, ts TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL, p AS UPPER(id),
               WATERMARK FOR ts AS ts, PRIMARY KEY (id) NOT ENFORCED)
             COMMENT 'x' PARTITIONED BY (id) DISTRIBUTED BY HASH(id) INTO 3 BUCKETS
             WITH ('connector' = 'kafka', scan.startup.mode = 'earliest-offset') LIKE base (EXCLUDING ALL)",
        );
        assert!(ct.temporary && ct.if_not_exists && !ct.dynamic);
        assert_eq!(ct.name.to_string(), "`c`.`d`.t");
        assert_eq!(ct.columns.len(), 3);
        assert!(matches!(
            ct.columns[1].options[0].option,
            ColumnOption::DialectSpecific(_)
        ));
        assert!(matches!(
            ct.columns[2].options[0].option,
            ColumnOption::Alias(_)
        ));
        assert_eq!(ct.constraints.len(), 1);
        let CreateTableOptions::With(opts) = &ct.table_options else {
            panic!("WITH options")
        };
        assert_eq!(opts.len(), 2);
        assert!(
            matches!(&ct.like, Some(CreateTableLikeKind::Plain(l)) if l.name.to_string() == "base")
        );
        assert!(ct.query.is_none());
    }

    #[test]
    fn materialized_table_is_a_dynamic_table_with_freshness() {
        let ct = create_table(
            "CREATE OR ALTER MATERIALIZED TABLE m FRESHNESS = INTERVAL '1' MINUTE START_MODE = RESUME_OR_FROM_BEGINNING AS SELECT * FROM t",
        );
        assert!(ct.dynamic && ct.or_replace);
        assert_eq!(ct.target_lag.as_deref(), Some("INTERVAL '1' MINUTE"));
        assert!(ct.query.is_some());
    }

    #[test]
    fn table_and_model_arguments_are_marked() {
        let Statement::Query(q) =
            parse("SELECT * FROM ML_PREDICT(TABLE db.t, MODEL m, DESCRIPTOR(c))")
        else {
            panic!("query")
        };
        let sqlparser::ast::SetExpr::Select(sel) = q.body.as_ref() else {
            panic!("select")
        };
        let TableFactor::Table {
            args: Some(args), ..
        } = &sel.from[0].relation
        else {
            panic!("tvf")
        };
        let exprs: Vec<&Expr> = args
            .args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect();
        let names: Vec<&str> = table_argument(exprs[0])
            .unwrap()
            .iter()
            .map(|i| i.value.as_str())
            .collect();
        assert_eq!(names, vec!["db", "t"]);
        assert!(matches!(exprs[1], Expr::Prefixed { prefix, .. } if prefix.value == MODEL_ARG));
        assert!(table_argument(exprs[1]).is_none());
    }

    #[test]
    fn flink_types() {
        for (ty, text) in [
            (
                "ROW<a INT, `b` ARRAY<STRING NOT NULL>>",
                "ROW<a INT, `b` ARRAY<STRING NOT NULL>>",
            ),
            ("ROW(a INT)", "ROW(a INT)"),
            ("MAP<STRING, ROW<x INT>>", "MAP<STRING, ROW<x INT>>"),
            ("MULTISET<INT>", "MULTISET<INT>"),
            (
                "TIMESTAMP(3) WITH LOCAL TIME ZONE",
                "TIMESTAMP(3) WITH LOCAL TIME ZONE",
            ),
            ("TIME WITH LOCAL TIME ZONE", "TIME WITH LOCAL TIME ZONE"),
        ] {
            // `>>` is split by the splitter; here the types are written with spaces where needed.
            let sql = format!("CREATE TABLE t (c {})", ty.replace(">>", "> >"));
            let ct = create_table(&sql);
            assert_eq!(ct.columns[0].data_type.to_string(), text, "{ty}");
        }
    }

    #[test]
    fn set_use_and_execute_insert() {
        assert!(matches!(
            parse("SET sql.state-ttl = '1 h'"),
            Statement::Set(_)
        ));
        assert!(matches!(parse("RESET"), Statement::Reset(_)));
        assert!(matches!(
            parse("USE CATALOG c"),
            Statement::Use(Use::Catalog(_))
        ));
        assert!(matches!(
            parse("EXECUTE INSERT INTO a SELECT * FROM b"),
            Statement::Insert(_)
        ));
    }

    #[test]
    fn opaque_statements() {
        let kind = |sql: &str| {
            let toks = sqlparser::tokenizer::Tokenizer::new(&FlinkDialect, sql)
                .tokenize_with_location()
                .unwrap()
                .into_iter()
                .filter(|t| !matches!(t.token, Token::Whitespace(_)))
                .collect::<Vec<_>>();
            opaque_statement_kind(&toks)
        };
        assert_eq!(
            kind("CREATE TEMPORARY SYSTEM FUNCTION f AS 'x'"),
            Some(StatementKind::CreateFunction)
        );
        assert_eq!(
            kind("CREATE MODEL m INPUT (a STRING) OUTPUT (b STRING)"),
            Some(StatementKind::Other)
        );
        assert_eq!(
            kind("ALTER TABLE t MODIFY WATERMARK FOR $rowtime AS $rowtime"),
            Some(StatementKind::Alter)
        );
        assert_eq!(
            kind("STOP JOB '228d70913eab60dda85c5e7f78b5782c'"),
            Some(StatementKind::Other)
        );
        assert_eq!(
            kind("EXECUTE PLAN '/tmp/plan.json'"),
            Some(StatementKind::Other)
        );
        assert_eq!(
            kind("COMPILE PLAN 'p.json' FOR INSERT INTO a SELECT * FROM b"),
            Some(StatementKind::Other)
        );
        assert_eq!(kind("CREATE TABLE t (a INT)"), None);
        assert_eq!(kind("INSERT INTO t SELECT 1"), None);
    }
}
