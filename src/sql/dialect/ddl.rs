//! Flink DDL and session statements taken over by the statement hook: `CREATE TABLE` / `CREATE
//! MATERIALIZED TABLE`, `CREATE VIEW`, `SET`/`RESET`, `USE`.

use sqlparser::ast::helpers::stmt_create_table::CreateTableBuilder;
use sqlparser::ast::{
    AlterView, AlterViewOperation, ColumnDef, ColumnOption, ColumnOptionDef, CreateTableLike,
    CreateTableLikeKind, CreateTableOptions, CreateView, DataType, Expr, Ident, ObjectName, Query,
    Reset, ResetStatement, Set, SqlOption, Statement, Use, Value, ViewColumnDef,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{is_word, peek_is, word};

/// `CREATE [OR REPLACE | OR ALTER] [TEMPORARY] [MATERIALIZED] TABLE`, as read by the statement hook.
pub(super) struct CreateHeader {
    pub(super) or_replace: bool,
    pub(super) or_alter: bool,
    pub(super) temporary: bool,
    pub(super) materialized: bool,
}

/// Flink `CREATE TABLE` / `CREATE MATERIALIZED TABLE`, after the `TABLE` keyword.
///
/// Mapped onto sqlparser's `CreateTable`: computed columns as `ColumnOption::Alias` (ClickHouse's
/// computed-column option), metadata columns as `ColumnOption::DialectSpecific`, `WITH` options as `CreateTableOptions::With`, a materialized table as a `dynamic` table (Snowflake's
/// counterpart, `FRESHNESS` as `target_lag`). `WATERMARK`, `PARTITIONED BY` and `DISTRIBUTED BY/INTO` have
/// no AST counterpart and are consumed (the caller recovers the distribution's text from the tokens).
pub(super) fn parse_create_table(
    parser: &mut Parser,
    h: CreateHeader,
) -> Result<Statement, ParserError> {
    let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = parser.parse_object_name(false)?;
    let mut columns = Vec::new();
    let mut constraints = Vec::new();
    if parser.consume_token(&Token::LParen) && !parser.consume_token(&Token::RParen) {
        loop {
            if peek_is(parser, 0, "WATERMARK") {
                parser.next_token();
                parser.expect_keyword(Keyword::FOR)?;
                parser.parse_identifier()?;
                parser.expect_keyword(Keyword::AS)?;
                parser.parse_expr()?;
            } else if let Some(c) = parser.parse_optional_table_constraint()? {
                constraints.push(c);
            } else if word(parser.peek_token_ref()).is_some()
                && is_word(parser.peek_nth_token_ref(1), "AS")
            {
                // Computed column `name AS expr [COMMENT '…']`.
                let col = parser.parse_identifier()?;
                parser.expect_keyword(Keyword::AS)?;
                let expr = parser.parse_expr()?;
                let mut options = vec![ColumnOptionDef {
                    name: None,
                    option: ColumnOption::Alias(expr),
                }];
                if parser.parse_keyword(Keyword::COMMENT) {
                    options.push(ColumnOptionDef {
                        name: None,
                        option: ColumnOption::Comment(parser.parse_literal_string()?),
                    });
                }
                columns.push(ColumnDef {
                    name: col,
                    data_type: DataType::Unspecified,
                    options,
                });
            } else {
                columns.push(parser.parse_column_def()?);
            }
            if parser.consume_token(&Token::Comma) {
                if parser.consume_token(&Token::RParen) {
                    break; // trailing comma
                }
                continue;
            }
            parser.expect_token(&Token::RParen)?;
            break;
        }
    }
    let mut builder = CreateTableBuilder::new(name)
        .or_replace(h.or_replace || h.or_alter)
        .temporary(h.temporary)
        .if_not_exists(if_not_exists)
        .dynamic(h.materialized)
        .columns(columns)
        .constraints(constraints);
    let mut options: Vec<SqlOption> = Vec::new();
    let mut query: Option<Box<Query>> = None;
    loop {
        if parser.parse_keyword(Keyword::COMMENT) {
            parser.parse_literal_string()?;
        } else if parser.parse_keywords(&[Keyword::PARTITIONED, Keyword::BY]) {
            skip_parenthesized(parser)?;
        } else if peek_is(parser, 0, "DISTRIBUTED") {
            parser.next_token();
            parse_distribution(parser)?;
        } else if parser.parse_keyword(Keyword::WITH) {
            options.extend(parse_with_options(parser)?);
        } else if parser.parse_keyword(Keyword::LIKE) {
            let base = parser.parse_object_name(false)?;
            if parser.peek_token_ref().token == Token::LParen {
                // LIKE options (`INCLUDING ALL`, `EXCLUDING WATERMARKS`, …) only select what is copied.
                skip_parenthesized(parser)?;
            }
            builder = builder.like(Some(CreateTableLikeKind::Plain(CreateTableLike {
                name: base,
                defaults: None,
            })));
        } else if ["FRESHNESS", "REFRESH_MODE", "START_MODE"]
            .iter()
            .any(|k| peek_is(parser, 0, k))
        {
            let key = parser.next_token();
            parser.expect_token(&Token::Eq)?;
            let value = parser.parse_expr()?;
            if is_word(&key, "FRESHNESS") {
                builder = builder.target_lag(Some(value.to_string()));
            }
        } else if parser.parse_keyword(Keyword::AS) {
            query = Some(parser.parse_query()?);
            break;
        } else {
            break;
        }
    }
    if !options.is_empty() {
        builder = builder.table_options(CreateTableOptions::With(options));
    }
    Ok(Statement::CreateTable(builder.query(query).build()))
}

/// `DISTRIBUTED BY [HASH|RANGE|RANDOM] (cols) [INTO n BUCKETS]` or `DISTRIBUTED INTO n BUCKETS`, after
/// `DISTRIBUTED`. The clause only fixes the physical layout; the caller keeps its text.
fn parse_distribution(parser: &mut Parser) -> Result<(), ParserError> {
    if parser.parse_keyword(Keyword::BY) {
        if word(parser.peek_token_ref()).is_some()
            && parser.peek_nth_token_ref(1).token == Token::LParen
        {
            parser.next_token(); // HASH / RANGE / …
        }
        skip_parenthesized(parser)?;
    }
    if parser.parse_keyword(Keyword::INTO) {
        parser.next_token(); // n
        if !peek_is(parser, 0, "BUCKETS") {
            return parser.expected("BUCKETS", parser.peek_token());
        }
        parser.next_token();
    }
    Ok(())
}

/// `( 'key' = 'value', … )` after `WITH`; keys may also be unquoted dotted words.
fn parse_with_options(parser: &mut Parser) -> Result<Vec<SqlOption>, ParserError> {
    parser.expect_token(&Token::LParen)?;
    let mut out = Vec::new();
    if parser.consume_token(&Token::RParen) {
        return Ok(out);
    }
    loop {
        let mut key = String::new();
        loop {
            let t = parser.next_token();
            match &t.token {
                Token::Eq => break,
                Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => key.push_str(s),
                Token::Word(w) => key.push_str(&w.value),
                Token::Period => key.push('.'),
                Token::Minus => key.push('-'),
                Token::Number(n, _) => key.push_str(n),
                _ => return parser.expected("an option key", t),
            }
        }
        let value = parser.parse_expr()?;
        out.push(SqlOption::KeyValue {
            key: ObjectName::from(vec![Ident::with_quote('\'', key)]),
            value,
        });
        if parser.consume_token(&Token::Comma) {
            if parser.consume_token(&Token::RParen) {
                break;
            }
            continue;
        }
        parser.expect_token(&Token::RParen)?;
        break;
    }
    Ok(out)
}

/// Skips one balanced `( … )` group starting at the cursor.
fn skip_parenthesized(parser: &mut Parser) -> Result<(), ParserError> {
    parser.expect_token(&Token::LParen)?;
    let mut depth = 1usize;
    while depth > 0 {
        let t = parser.next_token();
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::EOF => return parser.expected(")", t),
            _ => {}
        }
    }
    Ok(())
}

/// Flink `CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] [COMMENT '…'] AS query`, after `VIEW`.
pub(super) fn parse_create_view(
    parser: &mut Parser,
    or_replace: bool,
    temporary: bool,
) -> Result<Statement, ParserError> {
    let if_not_exists = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = parser.parse_object_name(false)?;
    let mut columns = Vec::new();
    if parser.consume_token(&Token::LParen) {
        columns = parser.parse_comma_separated(|p| {
            let name = p.parse_identifier()?;
            Ok(ViewColumnDef {
                name,
                data_type: None,
                options: None,
            })
        })?;
        parser.expect_token(&Token::RParen)?;
    }
    let comment = if parser.parse_keyword(Keyword::COMMENT) {
        Some(parser.parse_literal_string()?)
    } else {
        None
    };
    parser.expect_keyword(Keyword::AS)?;
    let query = parser.parse_query()?;
    Ok(Statement::CreateView(CreateView {
        or_alter: false,
        or_replace,
        materialized: false,
        secure: false,
        name,
        name_before_not_exists: false,
        columns,
        query,
        options: CreateTableOptions::None,
        cluster_by: vec![],
        comment,
        with_no_schema_binding: false,
        if_not_exists,
        temporary,
        copy_grants: false,
        to: None,
        params: None,
    }))
}

/// `ALTER VIEW name AS query` / `ALTER MATERIALIZED TABLE name AS query`, after the header (at the name).
/// Both become sqlparser's `AlterView` with the `As` operation (`materialized` set for the table).
pub(super) fn parse_alter_as(
    parser: &mut Parser,
    materialized: bool,
) -> Result<Statement, ParserError> {
    let name = parser.parse_object_name(false)?;
    parser.expect_keyword(Keyword::AS)?;
    let query = parser.parse_query()?;
    Ok(Statement::AlterView(AlterView {
        materialized,
        name,
        if_exists: false,
        operation: AlterViewOperation::As {
            columns: vec![],
            query,
            with_options: vec![],
        },
    }))
}

/// `ALTER MATERIALIZED TABLE name [(…)] [COMMENT …] [DISTRIBUTED …] [WITH (…)] [START_MODE = …] AS query`,
/// after `TABLE`: read as the CREATE it resembles, kept as an `AlterView` (materialized) with the query.
pub(super) fn parse_alter_materialized_as(parser: &mut Parser) -> Result<Statement, ParserError> {
    let header = CreateHeader {
        or_replace: false,
        or_alter: false,
        temporary: false,
        materialized: true,
    };
    let Statement::CreateTable(ct) = parse_create_table(parser, header)? else {
        return parser.expected("AS query", parser.peek_token());
    };
    let Some(query) = ct.query else {
        return parser.expected("AS query", parser.peek_token());
    };
    Ok(Statement::AlterView(AlterView {
        materialized: true,
        name: ct.name,
        if_exists: false,
        operation: AlterViewOperation::As {
            columns: vec![],
            query,
            with_options: vec![],
        },
    }))
}

/// `SET ['key' = 'value']` / `RESET ['key']` with quoted or unquoted (`sql.state-ttl`) keys.
///
/// `SET` becomes `Set::SingleAssignment` (no values for a bare `SET`, which lists the properties), `RESET`
/// becomes `Statement::Reset`.
pub(super) fn parse_set(parser: &mut Parser) -> Result<Statement, ParserError> {
    let reset = parser.next_token(); // SET | RESET
    let reset = matches!(&reset.token, Token::Word(w) if w.keyword == Keyword::RESET);
    let mut key = String::new();
    let mut value: Option<String> = None;
    loop {
        let t = parser.next_token();
        match &t.token {
            Token::EOF | Token::SemiColon => break,
            // A statement keyword ends the value: the next statement lost its `;` (the caller then
            // reports it and reads the rest on its own).
            Token::Word(w)
                if w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::SELECT
                            | Keyword::INSERT
                            | Keyword::CREATE
                            | Keyword::SET
                            | Keyword::RESET
                            | Keyword::USE
                            | Keyword::DROP
                            | Keyword::ALTER
                            | Keyword::EXECUTE
                            | Keyword::BEGIN
                            | Keyword::WITH
                            | Keyword::EXPLAIN
                            | Keyword::SHOW
                            | Keyword::REPLACE
                    ) =>
            {
                break;
            }
            Token::Eq if value.is_none() => value = Some(String::new()),
            tok => {
                let s = match tok {
                    Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s.clone(),
                    Token::Word(w) => w.value.clone(),
                    other => other.to_string(),
                };
                match value.as_mut() {
                    Some(v) => {
                        if !v.is_empty() {
                            v.push(' ');
                        }
                        v.push_str(&s);
                    }
                    None => key.push_str(&s),
                }
            }
        }
    }
    parser.prev_token();
    let variable = ObjectName::from(vec![Ident::with_quote('\'', key)]);
    if reset {
        let reset = if variable
            .0
            .iter()
            .all(|p| p.as_ident().is_some_and(|i| i.value.is_empty()))
        {
            Reset::ALL
        } else {
            Reset::ConfigurationParameter(variable)
        };
        return Ok(Statement::Reset(ResetStatement { reset }));
    }
    Ok(Statement::Set(Set::SingleAssignment {
        scope: None,
        hivevar: false,
        variable,
        values: value
            .map(|v| vec![Expr::value(Value::SingleQuotedString(v))])
            .unwrap_or_default(),
    }))
}

/// `USE CATALOG c`, `USE db`, `USE MODULES a, b`.
pub(super) fn parse_use(parser: &mut Parser) -> Result<Statement, ParserError> {
    parser.next_token(); // USE
    if parser.parse_keyword(Keyword::CATALOG) {
        return Ok(Statement::Use(Use::Catalog(
            parser.parse_object_name(false)?,
        )));
    }
    if peek_is(parser, 0, "MODULES") {
        parser.next_token();
        let names = parser.parse_comma_separated(Parser::parse_identifier)?;
        return Ok(Statement::Use(Use::Object(ObjectName::from(names))));
    }
    Ok(Statement::Use(Use::Object(
        parser.parse_object_name(false)?,
    )))
}
