//! The Flink SQL front end: split a file into statements, parse each with our Flink dialect of
//! `sqlparser`, and extract sinks, sources, DDL facts and statefulness. Statements the parser rejects go
//! through a token-level extractor and produce a warning; no reference is ever dropped silently.
//!
//! Pipeline: [`split`] (tokenizer, statement units) → [`dialect`] (parsing) → `extract` (AST walk) /
//! [`fallback`] (token walk) → [`state`] (statefulness). Entry point: [`analyze`].
//!
//! Cost: one tokenizer pass per file and one parse attempt per statement (plus a token scan when the parse
//! fails); all walks are linear in the statement.

#![warn(missing_docs)]

pub mod dialect;
mod extract;
pub mod fallback;
pub mod model;
pub mod rewrite;
pub mod split;
pub mod state;

pub use model::*;

use sqlparser::ast::Statement;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

use dialect::FlinkDialect;
use extract::Facts;
use split::{LineIndex, StatementUnit};

/// A Flink SQL identifier in backticks, inner backticks doubled (`` my`t `` → `` `my``t` ``).
pub fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Analyses one SQL file's text.
///
/// Never fails and never panics: problems become [`FileAnalysis::warnings`] with line and column
/// (statements the parser rejects are still analysed, by the token-level fallback).
pub fn analyze(sql: &str) -> FileAnalysis {
    // A UTF-8 byte-order mark (some Windows editors write one) is read as a blank of the same width in
    // characters, so that lines and columns stay those of the file; sqlparser would reject it.
    if let Some(rest) = sql.strip_prefix('\u{feff}') {
        return analyze(&format!(" {rest}"));
    }
    let dialect = FlinkDialect;
    let lines = LineIndex::new(sql);
    let file = split::split_indexed(&dialect, sql, &lines);
    let mut out = FileAnalysis {
        statements: Vec::with_capacity(file.statements.len()),
        warnings: file.warnings,
    };
    // Move each statement's tokens out of the file's vector (the parser takes them by value), last unit
    // first so each split copies only its own tokens; the first unit keeps the vector itself (no copy for
    // the usual one-statement file).
    let mut tokens = file.tokens;
    let mut per_unit: Vec<Vec<TokenWithSpan>> = Vec::with_capacity(file.statements.len());
    for unit in file.statements.iter().rev() {
        let mut own = if unit.tokens.start == 0 {
            std::mem::take(&mut tokens)
        } else {
            tokens.split_off(unit.tokens.start)
        };
        own.truncate(unit.tokens.end - unit.tokens.start);
        per_unit.push(own);
    }
    for (unit, tokens) in file.statements.iter().zip(per_unit.into_iter().rev()) {
        let (info, warning) = analyze_unit(&dialect, sql, &lines, unit, tokens);
        out.statements.push(info);
        out.warnings.extend(warning);
    }
    out
}

fn analyze_unit(
    dialect: &FlinkDialect,
    sql: &str,
    lines: &LineIndex,
    unit: &StatementUnit,
    tokens: Vec<TokenWithSpan>,
) -> (StatementInfo, Option<SqlWarning>) {
    let text = sql
        .get(unit.byte_range.clone())
        .unwrap_or("")
        .trim()
        .to_string();
    let mut info = StatementInfo {
        kind: StatementKind::Other,
        line: unit.line,
        text,
        sinks: vec![],
        sources: vec![],
        like_sources: vec![],
        temporal_join_sources: vec![],
        temporary: false,
        statefulness: Statefulness::None,
        state_reasons: vec![],
        joins: JoinCounts::default(),
        columns: vec![],
        primary_key: vec![],
        with_options: vec![],
        distribution: None,
        fallback: false,
        session: None,
        members: vec![],
    };
    if !unit.statement_set
        && let Some(kind) = dialect::opaque_statement_kind(&tokens)
    {
        info.kind = kind;
        return (info, None);
    }
    if unit.statement_set {
        info.members = statement_set_members(dialect, &tokens);
    }
    let mut facts = Facts::default();
    let mut warning = None;
    let (parsed, tokens) = parse_unit(dialect, unit, tokens);
    match parsed {
        Ok(statements) => {
            for s in &statements {
                extract::statement_facts(s, &mut facts);
            }
            if unit.statement_set {
                facts.kind = Some(StatementKind::StatementSet);
            }
        }
        Err(e) => {
            // At the end of input sqlparser reports no position (line 0): point after the last token.
            let end = tokens
                .last()
                .map(|t| (t.span.end.line as usize, t.span.end.column as usize));
            let (line, column) = error_location(&e)
                .filter(|(l, _)| *l > 0)
                .or(end)
                .unwrap_or((unit.line, unit.column));
            // sqlparser backtracks out of a failing subquery and reports the error of its next
            // attempt, earlier in the text: prefer a subquery's own error when it lies further on.
            let deeper = match e {
                ParserError::RecursionLimitExceeded => None,
                _ => deeper_subquery_error(dialect, &tokens),
            };
            let (line, column, message) = match deeper {
                Some((l, c, m)) if (l, c) > (line, column) => (l, c, m),
                _ => (line, column, error_message(&e)),
            };
            let (line, column) = onto_found_token(&tokens, (line, column), &message);
            warning = Some(SqlWarning {
                line,
                column,
                message,
            });
            facts = fallback::extract(&tokens);
            info.fallback = true;
        }
    }
    info.kind = facts.kind.unwrap_or(StatementKind::Other);
    info.sinks = facts.sinks;
    info.sources = facts.sources;
    info.like_sources = facts.like_sources;
    info.temporal_join_sources = facts.temporal;
    info.temporary = facts.temporary;
    info.statefulness = state::classify(facts.writes_query, &facts.reasons);
    info.state_reasons = facts.reasons;
    info.joins = facts.joins;
    info.columns = facts.columns;
    info.primary_key = facts.primary_key;
    info.with_options = facts.with_options;
    info.session = facts.session;
    if matches!(
        info.kind,
        StatementKind::CreateTable | StatementKind::Ctas | StatementKind::CreateMaterializedTable
    ) {
        info.distribution = distribution_text(sql, lines, &tokens);
    }
    (info, warning)
}

/// The `INSERT` members of a statement set's tokens (header included), each analysed on its own: parsed,
/// or read by the token-level fallback when the parser rejects it (its warning is already reported for the
/// whole set). The whole set's `sinks`/`sources` stay the union; this keeps which member writes what from
/// where. Cost: one more parse per member, for statement sets only.
fn statement_set_members(dialect: &FlinkDialect, tokens: &[TokenWithSpan]) -> Vec<StatementMember> {
    let is_end = |t: &TokenWithSpan| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::END);
    let Some(header) = split::set_header(tokens, 0) else {
        return vec![];
    };
    let mut body = tokens.get(header..).unwrap_or(&[]);
    // The closing `END` (only where a member could start: `CASE … END` ends no set).
    if let [rest @ .., last] = body
        && is_end(last)
        && rest.last().is_none_or(|t| t.token == Token::SemiColon)
    {
        body = rest;
    }
    let mut out = Vec::new();
    for member in body.split(|t| t.token == Token::SemiColon) {
        let Some(first) = member.first() else {
            continue;
        };
        let facts = member_facts(dialect, member.to_vec());
        if facts.kind == Some(StatementKind::Insert)
            && let Some(sink) = facts.sinks.into_iter().next()
        {
            out.push(StatementMember {
                sink,
                sources: facts.sources,
                line: first.span.start.line as usize,
            });
        }
    }
    out
}

/// The facts of one member statement of a set: parsed, or by the token-level fallback.
fn member_facts(dialect: &FlinkDialect, mut tokens: Vec<TokenWithSpan>) -> Facts {
    reorder_insert_partition(&mut tokens);
    drop_match_recognize_within(&mut tokens);
    let mut parser = Parser::new(dialect).with_tokens_with_locations(tokens);
    let parsed = parser
        .parse_statement()
        .and_then(|s| expect_end(&parser).map(|()| s));
    let mut facts = Facts::default();
    match parsed {
        Ok(statement) => extract::statement_facts(&statement, &mut facts),
        Err(_) => facts = fallback::extract(&parser.into_tokens()),
    }
    facts
}

/// Parses one unit: a single statement, or the members of a statement set. Gives the tokens back.
fn parse_unit(
    dialect: &FlinkDialect,
    unit: &StatementUnit,
    mut tokens: Vec<TokenWithSpan>,
) -> (Result<Vec<Statement>, ParserError>, Vec<TokenWithSpan>) {
    reorder_insert_partition(&mut tokens);
    drop_match_recognize_within(&mut tokens);
    let mut parser = Parser::new(dialect).with_tokens_with_locations(tokens);
    let result = parse_tokens(&mut parser, unit);
    (result, parser.into_tokens())
}

fn parse_tokens(parser: &mut Parser, unit: &StatementUnit) -> Result<Vec<Statement>, ParserError> {
    if !unit.statement_set {
        let s = parser.parse_statement()?;
        expect_end(parser)?;
        return Ok(vec![s]);
    }
    // Statement sets are not one statement to sqlparser: read the header, then the member statements.
    if parser.parse_keyword(Keyword::EXECUTE) {
        parser.expect_keyword(Keyword::STATEMENT)?;
        parser.expect_keyword(Keyword::SET)?;
        parser.expect_keyword(Keyword::BEGIN)?;
    } else {
        parser.expect_keyword(Keyword::BEGIN)?;
        parser.expect_keyword(Keyword::STATEMENT)?;
        parser.expect_keyword(Keyword::SET)?;
    }
    let mut members = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        if parser.parse_keyword(Keyword::END) {
            break;
        }
        if parser.peek_token_ref().token == Token::EOF {
            return parser.expected("END of the statement set", parser.peek_token());
        }
        members.push(parser.parse_statement()?);
        if !matches!(parser.peek_token_ref().token, Token::SemiColon)
            && !parser.peek_keyword(Keyword::END)
        {
            return parser.expected("; or END", parser.peek_token());
        }
    }
    expect_end(parser)?;
    Ok(members)
}

/// Flink writes `INSERT INTO t PARTITION (…) (cols) SELECT …`; sqlparser reads the column list before
/// `PARTITION` (only its Hive dialect also accepts it after, and dialect checks are by type). The two groups
/// are swapped in the token stream; spans are kept, so reported positions stay those of the file.
fn reorder_insert_partition(tokens: &mut [TokenWithSpan]) {
    let kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == k);
    let group_end = |tokens: &[TokenWithSpan], open: usize| -> Option<usize> {
        let mut depth = 0usize;
        for (j, t) in tokens.iter().enumerate().skip(open) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
        }
        None
    };
    let mut i = 0;
    while i + 1 < tokens.len() {
        if kw(&tokens[i], Keyword::PARTITION) && i > 0 && tokens[i + 1].token == Token::LParen {
            // Must follow `INSERT INTO|OVERWRITE [TABLE] name`.
            let mut k = i - 1;
            while k >= 2 && tokens[k - 1].token == Token::Period {
                k -= 2;
            }
            let into = k >= 1
                && (kw(&tokens[k - 1], Keyword::INTO)
                    || kw(&tokens[k - 1], Keyword::OVERWRITE)
                    || kw(&tokens[k - 1], Keyword::TABLE));
            if into
                && let Some(p_end) = group_end(tokens, i + 1)
                && tokens
                    .get(p_end + 1)
                    .is_some_and(|t| t.token == Token::LParen)
                && !tokens
                    .get(p_end + 2)
                    .is_some_and(|t| kw(t, Keyword::SELECT) || kw(t, Keyword::WITH))
                && let Some(c_end) = group_end(tokens, p_end + 1)
            {
                // [PARTITION (…)] [(cols)] → [(cols)] [PARTITION (…)]
                tokens[i..=c_end].rotate_left(p_end + 1 - i);
                i = c_end + 1;
                continue;
            }
        }
        i += 1;
    }
}

/// Flink's `MATCH_RECOGNIZE (… PATTERN (…) WITHIN INTERVAL '1' HOUR DEFINE …)`: sqlparser expects `DEFINE`
/// right after the pattern. The `WITHIN` time constraint names no relation and changes no state class, so
/// its tokens are removed before parsing.
fn drop_match_recognize_within(tokens: &mut Vec<TokenWithSpan>) {
    let is = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == k);
    let mut i = 1;
    while i + 1 < tokens.len() {
        if is(&tokens[i], Keyword::WITHIN)
            && tokens[i - 1].token == Token::RParen
            && is(&tokens[i + 1], Keyword::INTERVAL)
            && let Some(define) = (i + 2..tokens.len()).find(|&j| is(&tokens[j], Keyword::DEFINE))
        {
            tokens.drain(i..define);
        }
        i += 1;
    }
}

fn expect_end(parser: &Parser) -> Result<(), ParserError> {
    let next = parser.peek_token();
    if next.token == Token::EOF {
        Ok(())
    } else {
        parser.expected("end of statement", next)
    }
}

/// sqlparser puts the location in the message (`… at Line: 3, Column: 5`).
/// Subqueries nested deeper than this are not parsed again on their own.
const MAX_SUBQUERY_DEPTH: i32 = 16;

/// The furthest parse error of a parenthesized subquery (`( SELECT …`, `( WITH …`, `( VALUES …`) parsed
/// on its own, as (line, column, message). Token spans are the statement's, so positions are absolute.
/// `None` when every subquery parses.
fn deeper_subquery_error(
    dialect: &FlinkDialect,
    tokens: &[TokenWithSpan],
) -> Option<(usize, usize, String)> {
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let mut best: Option<(usize, usize, String)> = None;
    for (k, &i) in significant.iter().enumerate() {
        if tokens[i].token != Token::LParen {
            continue;
        }
        let starts_query = significant.get(k + 1).is_some_and(|&n| {
            matches!(&tokens[n].token, Token::Word(w) if matches!(w.keyword, Keyword::SELECT | Keyword::WITH | Keyword::VALUES))
        });
        if !starts_query {
            continue;
        }
        // The matching `)`, and how deep the parentheses inside go.
        let mut depth = 0i32;
        let mut deepest = 0i32;
        let mut close = None;
        for (j, t) in tokens.iter().enumerate().skip(i) {
            match t.token {
                Token::LParen => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        // Deeply nested text is left to the recursion limit of the first parse (and spares the stack).
        if deepest > MAX_SUBQUERY_DEPTH {
            continue;
        }
        let mut parser =
            Parser::new(dialect).with_tokens_with_locations(tokens[i + 1..close].to_vec());
        let err = match parser.parse_query() {
            Ok(_) => expect_end(&parser).err(),
            Err(e) => Some(e),
        };
        if let Some(e) = err
            && let Some((l, c)) = error_location(&e).filter(|(l, _)| *l > 0)
            && best.as_ref().is_none_or(|(bl, bc, _)| (l, c) > (*bl, *bc))
        {
            best = Some((l, c, error_message(&e)));
        }
    }
    best
}

/// sqlparser reports `Expected: …, found: X` at the token *after* X (it has consumed X when it
/// complains). When the token at `at` is not X and the significant token before it is, the position of
/// that token is returned; otherwise `at`, unchanged.
fn onto_found_token(tokens: &[TokenWithSpan], at: (usize, usize), message: &str) -> (usize, usize) {
    let Some(found) = message.rsplit_once("found: ").map(|(_, f)| f.trim()) else {
        return at;
    };
    let significant: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let start = |t: &TokenWithSpan| (t.span.start.line as usize, t.span.start.column as usize);
    let Some(i) = significant.iter().position(|t| start(t) == at) else {
        return at;
    };
    if significant[i].token.to_string() == found {
        return at;
    }
    match i.checked_sub(1).map(|p| significant[p]) {
        Some(prev) if prev.token.to_string() == found => start(prev),
        _ => at,
    }
}

fn error_location(e: &ParserError) -> Option<(usize, usize)> {
    let msg = e.to_string();
    let at = msg.rfind("Line: ")?;
    let rest = &msg[at + 6..];
    let (line, rest) = rest.split_once(", Column: ")?;
    let col: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.trim().parse().ok()?, col.parse().ok()?))
}

fn error_message(e: &ParserError) -> String {
    let msg = match e {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m.clone(),
        ParserError::RecursionLimitExceeded => "recursion limit exceeded".to_string(),
    };
    match msg.rfind(" at Line: ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// The `DISTRIBUTED BY … | DISTRIBUTED INTO …` clause of a CREATE TABLE as written (whitespace normalised).
fn distribution_text(sql: &str, lines: &LineIndex, tokens: &[TokenWithSpan]) -> Option<String> {
    let is = |t: &TokenWithSpan, k: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    const STOP: &[&str] = &[
        "WITH",
        "LIKE",
        "AS",
        "COMMENT",
        "PARTITIONED",
        "FRESHNESS",
        "REFRESH_MODE",
        "START_MODE",
    ];
    let mut depth = 0i32;
    let mut start = None;
    let mut last = 0;
    for (i, t) in tokens.iter().enumerate() {
        if depth == 0 {
            match start {
                None if is(t, "DISTRIBUTED") => start = Some(i),
                Some(_) if STOP.iter().any(|k| is(t, k)) => break,
                _ => {}
            }
        }
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            break; // the end of the column list of `CREATE TABLE … (…)` cannot follow; defensive
        }
        last = i;
    }
    let s = start?;
    let range = lines.offset(tokens[s].span.start)..lines.offset(tokens[last].span.end);
    let text = sql.get(range)?;
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

impl FileAnalysis {
    /// Every relation created or written by the file, sorted and unique.
    pub fn sinks(&self) -> Vec<TableName> {
        let mut v: Vec<TableName> = self
            .statements
            .iter()
            .flat_map(|s| s.sinks.iter().map(|r| r.name.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Every relation read by the file, sorted and unique.
    pub fn sources(&self) -> Vec<TableName> {
        let mut v: Vec<TableName> = self
            .statements
            .iter()
            .flat_map(|s| s.sources.iter().map(|r| r.name.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The file's statefulness: the maximum over its statements (`None` < `Stateless` < `Stateful`).
    pub fn statefulness(&self) -> Statefulness {
        self.statements
            .iter()
            .map(|s| s.statefulness)
            .max()
            .unwrap_or(Statefulness::None)
    }
}
