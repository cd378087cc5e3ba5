//! Flink expressions and types that sqlparser does not read: `TABLE t` / `MODEL m` arguments, `CAST` to
//! `… NOT NULL` types, `MAP[…]`, SQL/JSON function clauses, `ROW<…>`/`ARRAY<…>`/`MAP<…>`/`MULTISET<…>` and
//! `WITH LOCAL TIME ZONE` types.

use sqlparser::ast::{
    CastKind, DataType, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, Ident, Map, MapEntry, ObjectName, TrimWhereField, Value,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token};

use super::{TABLE_ARG, peek_is};

pub(super) fn parse_table_argument(
    parser: &mut Parser,
    prefix: &str,
    span: Span,
) -> Result<Expr, ParserError> {
    parser.next_token(); // TABLE | MODEL
    let name = parser.parse_object_name(false)?;
    let idents: Vec<Ident> = name
        .0
        .iter()
        .filter_map(|p| p.as_ident().cloned())
        .collect();
    if prefix == TABLE_ARG {
        // Flink's set-semantics table arguments (`SESSION(TABLE t PARTITION BY k, …)`, process table
        // functions) may add PARTITION BY / ORDER BY; they name columns, not relations, and are not kept.
        // Several keys are parenthesised (`PARTITION BY (a, b)`); without parentheses one key, as in
        // Flink's grammar: the comma after it separates the function's next argument
        // (`SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), …)`).
        if parser.parse_keywords(&[Keyword::PARTITION, Keyword::BY]) {
            if parser.consume_token(&Token::LParen) {
                parser.parse_comma_separated(Parser::parse_expr)?;
                parser.expect_token(&Token::RParen)?;
            } else {
                parser.parse_expr()?;
            }
        }
        if parser.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
            if parser.consume_token(&Token::LParen) {
                parser.parse_comma_separated(Parser::parse_order_by_expr)?;
                parser.expect_token(&Token::RParen)?;
            } else {
                parser.parse_order_by_expr()?;
            }
        }
    }
    let value = if idents.len() == 1 {
        Expr::Identifier(idents.into_iter().next().unwrap_or_else(|| Ident::new("")))
    } else {
        Expr::CompoundIdentifier(idents)
    };
    Ok(Expr::Prefixed {
        prefix: Ident::with_span(span, prefix),
        value: Box::new(value),
    })
}

/// `CAST(expr AS type [NOT NULL])` / `TRY_CAST(…)`, at the keyword. A `NOT NULL` is kept in the type's text.
pub(super) fn parse_cast(parser: &mut Parser) -> Result<Expr, ParserError> {
    let kw = parser.next_token();
    let kind = match &kw.token {
        Token::Word(w) if w.keyword == Keyword::TRY_CAST => CastKind::TryCast,
        _ => CastKind::Cast,
    };
    parser.expect_token(&Token::LParen)?;
    let expr = parser.parse_expr()?;
    parser.expect_keyword(Keyword::AS)?;
    let mut data_type = parser.parse_data_type()?;
    if parser.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
        let text = format!("{data_type} NOT NULL");
        data_type = DataType::Custom(ObjectName::from(vec![Ident::new(text)]), vec![]);
    }
    parser.expect_token(&Token::RParen)?;
    Ok(Expr::Cast {
        kind,
        expr: Box::new(expr),
        data_type,
        format: None,
    })
}

/// `TRIM(BOTH | LEADING | TRAILING FROM s)`, at `TRIM` (the form without characters to trim).
pub(super) fn parse_trim_side_only(parser: &mut Parser) -> Result<Expr, ParserError> {
    parser.next_token(); // TRIM
    parser.expect_token(&Token::LParen)?;
    let side = parser.next_token();
    let trim_where = match &side.token {
        Token::Word(w) if w.keyword == Keyword::LEADING => TrimWhereField::Leading,
        Token::Word(w) if w.keyword == Keyword::TRAILING => TrimWhereField::Trailing,
        _ => TrimWhereField::Both,
    };
    parser.expect_keyword(Keyword::FROM)?;
    let expr = parser.parse_expr()?;
    parser.expect_token(&Token::RParen)?;
    Ok(Expr::Trim {
        trim_where: Some(trim_where),
        trim_what: None,
        expr: Box::new(expr),
        trim_characters: None,
    })
}

/// `MAP[k1, v1, …]`, at `MAP`.
pub(super) fn parse_map_constructor(parser: &mut Parser) -> Result<Expr, ParserError> {
    parser.next_token(); // MAP
    parser.expect_token(&Token::LBracket)?;
    let items = if parser.consume_token(&Token::RBracket) {
        vec![]
    } else {
        let items = parser.parse_comma_separated(Parser::parse_expr)?;
        parser.expect_token(&Token::RBracket)?;
        items
    };
    let mut entries = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let Some(key) = it.next() {
        let value = it.next().unwrap_or(Expr::value(Value::Null));
        entries.push(MapEntry {
            key: Box::new(key),
            value: Box::new(value),
        });
    }
    Ok(Expr::Map(Map { entries }))
}

/// `JSON_VALUE(json, path [clauses])`, `JSON_OBJECT([KEY] k VALUE v, …)` and siblings, at the function name.
/// The argument expressions are kept; the trailing SQL/JSON clauses only shape the result and are skipped.
pub(super) fn parse_json_function(parser: &mut Parser) -> Result<Expr, ParserError> {
    let name = parser.parse_identifier()?;
    parser.expect_token(&Token::LParen)?;
    let mut args = Vec::new();
    if parser.peek_token_ref().token != Token::RParen {
        loop {
            let _ = parser.parse_keyword(Keyword::KEY); // optional
            args.push(FunctionArg::Unnamed(FunctionArgExpr::Expr(
                parser.parse_expr()?,
            )));
            if parser.parse_keyword(Keyword::VALUE) {
                args.push(FunctionArg::Unnamed(FunctionArgExpr::Expr(
                    parser.parse_expr()?,
                )));
            }
            if !parser.consume_token(&Token::Comma) {
                break;
            }
        }
    }
    let mut depth = 0usize;
    loop {
        let t = parser.next_token();
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => break,
            Token::RParen => depth -= 1,
            Token::EOF => return parser.expected(")", t),
            _ => {}
        }
    }
    Ok(Expr::Function(Function {
        name: ObjectName::from(vec![name]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args,
            clauses: vec![],
        }),
        within_group: vec![],
        filter: None,
        null_treatment: None,
        over: None,
    }))
}

/// Whether the `TIMESTAMP`/`TIME` type at the cursor is followed by `WITH LOCAL TIME ZONE`.
pub(super) fn timestamp_has_local_tz(parser: &Parser) -> bool {
    let mut n = 1;
    if matches!(parser.peek_nth_token_ref(n).token, Token::LParen) {
        n += 3; // ( p )
    }
    peek_is(parser, n, "WITH") && peek_is(parser, n + 1, "LOCAL")
}

/// Parses a Flink type at the cursor and returns its normalised text. Used for the composite types and
/// `WITH LOCAL TIME ZONE`; other types go through the parser's own `parse_data_type`.
pub(super) fn parse_flink_type(parser: &mut Parser) -> Result<String, ParserError> {
    let tok = parser.next_token();
    let name = match &tok.token {
        Token::Word(w) => w.value.to_ascii_uppercase(),
        _ => return parser.expected("a data type", tok),
    };
    let text = match name.as_str() {
        "ROW" => {
            let close = if parser.consume_token(&Token::Lt) {
                Token::Gt
            } else {
                parser.expect_token(&Token::LParen)?;
                Token::RParen
            };
            let mut fields = Vec::new();
            if !parser.consume_token(&close) {
                loop {
                    let field = parser.parse_identifier()?;
                    let ty = parser.parse_data_type()?;
                    let mut f = format!("{field} {ty}");
                    if parser.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
                        f.push_str(" NOT NULL");
                    } else if parser.parse_keyword(Keyword::NULL) {
                        f.push_str(" NULL");
                    }
                    if parser.parse_keyword(Keyword::COMMENT) {
                        f.push_str(&format!(" COMMENT '{}'", parser.parse_literal_string()?));
                    }
                    fields.push(f);
                    if !parser.consume_token(&Token::Comma) {
                        break;
                    }
                }
                parser.expect_token(&close)?;
            }
            let (o, c) = if close == Token::Gt {
                ('<', '>')
            } else {
                ('(', ')')
            };
            format!("ROW{o}{}{c}", fields.join(", "))
        }
        "ARRAY" | "MULTISET" => {
            parser.expect_token(&Token::Lt)?;
            let inner = parse_element_type(parser)?;
            parser.expect_token(&Token::Gt)?;
            format!("{name}<{inner}>")
        }
        "MAP" => {
            parser.expect_token(&Token::Lt)?;
            let k = parse_element_type(parser)?;
            parser.expect_token(&Token::Comma)?;
            let v = parse_element_type(parser)?;
            parser.expect_token(&Token::Gt)?;
            format!("MAP<{k}, {v}>")
        }
        _ => {
            // TIMESTAMP / TIME [(p)] WITH LOCAL TIME ZONE
            let mut t = name.clone();
            if parser.consume_token(&Token::LParen) {
                let p = parser.next_token();
                t.push_str(&format!("({})", p.token));
                parser.expect_token(&Token::RParen)?;
            }
            parser.expect_keyword(Keyword::WITH)?;
            parser.expect_keyword(Keyword::LOCAL)?;
            parser.expect_keyword(Keyword::TIME)?;
            parser.expect_keyword(Keyword::ZONE)?;
            t.push_str(" WITH LOCAL TIME ZONE");
            t
        }
    };
    Ok(text)
}

fn parse_element_type(parser: &mut Parser) -> Result<String, ParserError> {
    let mut t = parser.parse_data_type()?.to_string();
    if parser.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
        t.push_str(" NOT NULL");
    } else if parser.parse_keyword(Keyword::NULL) {
        t.push_str(" NULL");
    }
    Ok(t)
}
