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

pub mod columns;
mod deep;
pub mod dialect;
mod extract;
pub mod fallback;
pub mod lexer;
pub mod limits;
pub mod model;
pub mod placeholders;
mod resync;
pub mod rewrite;
pub mod split;
pub mod state;
pub mod text;

pub use model::*;

use sqlparser::ast::Statement;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

use dialect::FlinkDialect;
use extract::Facts;
use split::LineIndex;

/// Runs `f` with the thread-local switch `flag` set to `value` on this thread, and puts its previous
/// value back afterwards, also when `f` panics (the lean deserialisation of analyses, the parser's
/// fast path switched off by tests).
pub(crate) fn with_flag<R>(
    flag: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
    value: bool,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(&'static std::thread::LocalKey<std::cell::Cell<bool>>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.with(|c| c.set(self.1));
        }
    }
    let _restore = Restore(flag, flag.with(|c| c.replace(value)));
    f()
}

/// A Flink SQL identifier in backticks, inner backticks doubled (`` my`t `` → `` `my``t` ``).
pub fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Analyses one SQL file's text.
///
/// Never fails and never panics: problems become [`FileAnalysis::warnings`] with line and column
/// (statements the parser rejects are still analysed, by the token-level fallback). A text over
/// [`limits::MAX_SQL_FILE_BYTES`] is not analysed: the answer is no statement and one
/// [`WarningKind::Limit`] warning. Time is linear in the text (see [`limits`]).
pub fn analyze(sql: &str) -> FileAnalysis {
    if let Err(e) = limits::check_file_size(sql.len()) {
        return FileAnalysis {
            statements: vec![],
            warnings: vec![SqlWarning {
                line: 1,
                column: 1,
                message: e.to_string(),
                kind: WarningKind::Limit,
            }],
        };
    }
    // A UTF-8 byte-order mark (some Windows editors write one) is read as a blank of the same width in
    // characters, so that lines and columns stay those of the file; sqlparser would reject it.
    if let Some(rest) = sql.strip_prefix('\u{feff}') {
        return analyze(&format!(" {rest}"));
    }
    let masked = placeholders::mask(sql);
    let text = masked.text.as_deref().unwrap_or(sql);
    let lines = LineIndex::new(text);
    let mut out = analyze_text(sql, text, &lines);
    if !masked.found.is_empty() {
        placeholders_restore(&mut out, sql, &lines, &masked);
    }
    out
}

/// Analyses `text` (the file, or its copy with placeholders masked: same byte layout), taking statement
/// texts from `sql`.
fn analyze_text(sql: &str, text: &str, lines: &LineIndex) -> FileAnalysis {
    let dialect = FlinkDialect;
    let file = split::split_indexed(&dialect, text, lines);
    // Units are analysed last first, each moving its tokens out of the file's vector (the parser takes
    // them by value; `split_off` copies only the unit's own tokens), so that at most one unit's copy and
    // one AST are alive at a time; the first unit keeps the vector itself (no copy for the usual
    // one-statement file).
    let mut tokens = file.tokens;
    let mut statements: Vec<Vec<StatementInfo>> = Vec::with_capacity(file.statements.len());
    let mut warnings: Vec<Vec<SqlWarning>> = Vec::with_capacity(file.statements.len());
    for unit in file.statements.iter().rev() {
        let mut own = if unit.tokens.start == 0 {
            std::mem::take(&mut tokens)
        } else {
            tokens.split_off(unit.tokens.start)
        };
        own.truncate(unit.tokens.end - unit.tokens.start);
        let piece = Piece {
            line: unit.line,
            column: unit.column,
            byte_range: unit.byte_range.clone(),
            statement_set: unit.statement_set,
        };
        let (infos, w) = analyze_piece(&dialect, sql, lines, &piece, own, true);
        statements.push(infos);
        warnings.push(w);
    }
    let mut out = FileAnalysis {
        statements: Vec::with_capacity(statements.len()),
        warnings: file.warnings,
    };
    out.statements
        .extend(statements.into_iter().rev().flatten());
    out.warnings.extend(warnings.into_iter().rev().flatten());
    out
}

/// The message of [`parse_units`] for a unit classified by its keywords without parsing (`SET`, `USE`,
/// `CREATE FUNCTION`, …: none of them writes a query result).
pub(crate) const OPAQUE_UNIT: &str = "not parsed (classified by its keywords)";

/// Every top-level unit of a SQL text parsed by the Flink dialect, for the analyses that need the syntax
/// tree itself (column lineage): `(line of the unit, its statements)`, a statement set giving its
/// members; `Err(message)` for a unit that does not parse or that is classified without parsing. Same
/// preprocessing as [`analyze`] (placeholders masked, `WITH … INSERT` and `PARTITION` reordered).
pub(crate) fn parse_units(sql: &str) -> Vec<(usize, Result<Vec<Statement>, String>)> {
    if limits::check_file_size(sql.len()).is_err() {
        return vec![(1, Err("the file is over the size limit".into()))];
    }
    let sql = sql.strip_prefix('\u{feff}').unwrap_or(sql);
    let masked = placeholders::mask(sql);
    let text = masked.text.as_deref().unwrap_or(sql);
    let lines = LineIndex::new(text);
    let dialect = FlinkDialect;
    let file = split::split_indexed(&dialect, text, &lines);
    let mut out = Vec::with_capacity(file.statements.len());
    for unit in &file.statements {
        let mut tokens = file.tokens[unit.tokens.clone()].to_vec();
        if !unit.statement_set && dialect::opaque_statement_kind(&tokens).is_some() {
            out.push((unit.line, Err(OPAQUE_UNIT.into())));
            continue;
        }
        if beyond_parser_limits(&tokens).is_some() {
            out.push((unit.line, Err("over the parser's limits".into())));
            continue;
        }
        if !unit.statement_set {
            let _ = reorder_with_insert(&mut tokens);
        }
        let (parsed, _) = parse_unit(&dialect, unit.statement_set, tokens);
        out.push((unit.line, parsed.map_err(|e| error_message(&e))));
    }
    out
}

/// Gives every reference whose name was written with a (masked) placeholder its name as written, and
/// reports each distinct placeholder once.
fn placeholders_restore(
    out: &mut FileAnalysis,
    sql: &str,
    lines: &LineIndex,
    masked: &placeholders::Masked,
) {
    let covered: Vec<std::ops::Range<usize>> = masked
        .found
        .iter()
        .filter(|p| p.masked)
        .map(|p| p.range.clone())
        .collect();
    let mut renamed: std::collections::HashMap<TableName, TableName> = Default::default();
    let mut restore = |r: &mut TableRef| {
        let Some(span) = r.span else { return };
        let range = lines.offset(to_location(span.start))..lines.offset(to_location(span.end));
        // `covered` is in file order and disjoint: the first range ending after the name's start is the
        // only candidate (a binary search, so that many placeholders stay linear).
        let k = covered.partition_point(|c| c.end <= range.start);
        if covered.get(k).is_none_or(|c| c.start >= range.end) {
            return;
        }
        if let Some(text) = sql.get(range) {
            let name = TableName::new(placeholders::written_parts(text));
            renamed.insert(r.name.clone(), name.clone());
            r.name = name;
        }
    };
    for st in &mut out.statements {
        st.sinks.iter_mut().for_each(&mut restore);
        st.sources.iter_mut().for_each(&mut restore);
        for m in &mut st.members {
            restore(&mut m.sink);
            m.sources.iter_mut().for_each(&mut restore);
        }
    }
    for st in &mut out.statements {
        for n in st
            .like_sources
            .iter_mut()
            .chain(st.temporal_join_sources.iter_mut())
        {
            if let Some(r) = renamed.get(n) {
                *n = r.clone();
            }
        }
    }
    for (text, first, uses) in placeholders::distinct(&masked.found) {
        let (line, column) = lines.location(first);
        out.warnings.push(SqlWarning {
            line,
            column,
            message: format!(
                "unresolved template placeholder {text} ({uses} use{}): names and option values containing it are kept as written; substitute it before deploying",
                if uses == 1 { "" } else { "s" }
            ),
            kind: WarningKind::Placeholder,
        });
    }
}

fn to_location(l: Location) -> sqlparser::tokenizer::Location {
    sqlparser::tokenizer::Location::new(l.line as u64, l.column as u64)
}

/// A statement to analyse: a unit of the splitter, or one of the statements a unit holds without `;`
/// between them.
struct Piece {
    line: usize,
    column: usize,
    byte_range: std::ops::Range<usize>,
    statement_set: bool,
}

fn empty_info(piece: &Piece, text: String) -> StatementInfo {
    StatementInfo {
        kind: StatementKind::Other,
        line: piece.line,
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
    }
}

/// Analyses one piece: parsed, or — when the parser rejects it — split where a `;` is missing
/// (`resync`, see [`resync`]) and each part analysed on its own, or read by the token-level fallback.
fn analyze_piece(
    dialect: &FlinkDialect,
    sql: &str,
    lines: &LineIndex,
    piece: &Piece,
    mut tokens: Vec<TokenWithSpan>,
    resync: bool,
) -> (Vec<StatementInfo>, Vec<SqlWarning>) {
    let text = sql
        .get(piece.byte_range.clone())
        .unwrap_or("")
        .trim()
        .to_string();
    let mut info = empty_info(piece, text);
    let mut warnings = Vec::new();
    if !piece.statement_set
        && let Some(kind) = dialect::opaque_statement_kind(&tokens)
    {
        // Classified by its first keywords, without parsing: a statement that follows it without `;`
        // would be swallowed unseen.
        if resync {
            let parts = resync::split_points(&tokens);
            if parts.len() > 1 {
                return analyze_parts(dialect, sql, lines, tokens, &parts, warnings);
            }
        }
        info.kind = kind;
        return (vec![info], warnings);
    }
    if piece.statement_set {
        info.members = statement_set_members(dialect, &tokens);
    }
    let skip_parse = beyond_parser_limits(&tokens);
    if !piece.statement_set
        && let Some(w) = reorder_with_insert(&mut tokens)
    {
        warnings.push(w);
    }
    let mut facts = Facts::default();
    let (parsed, tokens) = match skip_parse {
        Some(limit) => (Err(limit), tokens),
        None => parse_unit(dialect, piece.statement_set, tokens),
    };
    match parsed {
        Ok(statements) => {
            for s in &statements {
                extract::statement_facts(s, &mut facts);
            }
            deep::drop_statements(statements, tokens.len());
            if piece.statement_set {
                facts.kind = Some(StatementKind::StatementSet);
            }
        }
        Err(e) => {
            if resync && !piece.statement_set {
                let parts = resync::split_points(&tokens);
                if parts.len() > 1 {
                    return analyze_parts(dialect, sql, lines, tokens, &parts, warnings);
                }
            }
            warnings.push(parse_failure(dialect, piece, &tokens, e));
            facts = fallback::extract(&tokens);
            info.fallback = true;
        }
    }
    for r in &facts.rejected {
        let (line, column) = r
            .span
            .map(|s| (s.start.line, s.start.column))
            .unwrap_or((piece.line, piece.column));
        warnings.push(SqlWarning {
            line,
            column,
            message: format!(
                "{} is a reserved word, not a table name: the clause names no table here (quote it, as `{}`, if it is one)",
                r.name.dotted().to_uppercase(),
                r.name.dotted()
            ),
            kind: WarningKind::Syntax,
        });
    }
    info.kind = facts.kind.unwrap_or(StatementKind::Other);
    info.sinks = facts.sinks;
    info.sources = facts.sources;
    info.like_sources = facts.like_sources;
    info.temporal_join_sources = facts.temporal;
    info.temporary = facts.temporary;
    // For a statement read by the fallback this is its keyword-level estimate (`fallback` says so);
    // project analysis records a table whose state rests on it as `Unknown` unless found stateful.
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
    (vec![info], warnings)
}

/// Marker error of a statement over [`limits::MAX_PARSED_STATEMENT_TOKENS`] (not given to the parser).
const TOO_LONG: &str = "too long";

/// Whether a statement's tokens exceed what is given to the parser: too many tokens (the AST's memory),
/// or parentheses nested deeper than [`limits::MAX_PARSER_NESTING`] (the parser would stop there
/// anyway, but some of its grammar, such as MATCH_RECOGNIZE's `PATTERN`, recurses without its own limit
/// and overflowed the stack). Returns the error to report instead of parsing. Cost: one pass.
fn beyond_parser_limits(tokens: &[TokenWithSpan]) -> Option<ParserError> {
    if tokens.len() > limits::MAX_PARSED_STATEMENT_TOKENS {
        return Some(ParserError::TokenizerError(TOO_LONG.to_string()));
    }
    let mut depth = 0usize;
    for t in tokens {
        match t.token {
            Token::LParen => {
                depth += 1;
                if depth > limits::MAX_PARSER_NESTING {
                    return Some(ParserError::RecursionLimitExceeded);
                }
            }
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The warning for a statement the parser rejected (or that is beyond its limits).
fn parse_failure(
    dialect: &FlinkDialect,
    piece: &Piece,
    tokens: &[TokenWithSpan],
    e: ParserError,
) -> SqlWarning {
    if matches!(&e, ParserError::TokenizerError(m) if m == TOO_LONG) {
        return SqlWarning {
            line: piece.line,
            column: piece.column,
            message: format!(
                "statement of {} tokens exceeds the parser's limit of {} tokens",
                tokens.len(),
                limits::MAX_PARSED_STATEMENT_TOKENS
            ),
            kind: WarningKind::Fallback,
        };
    }
    if matches!(e, ParserError::RecursionLimitExceeded) {
        return SqlWarning {
            line: piece.line,
            column: piece.column,
            message: format!(
                "statement nested deeper than the parser's limit of {} levels",
                limits::MAX_PARSER_NESTING
            ),
            kind: WarningKind::Fallback,
        };
    }
    // At the end of input sqlparser reports no position (line 0): point after the last token.
    let end = tokens
        .last()
        .map(|t| (t.span.end.line as usize, t.span.end.column as usize));
    let (line, column) = error_location(&e)
        .filter(|(l, _)| *l > 0)
        .or(end)
        .unwrap_or((piece.line, piece.column));
    // sqlparser backtracks out of a failing subquery and reports the error of its next attempt, earlier
    // in the text: prefer a subquery's own error when it lies further on.
    let (line, column, message) = match deeper_subquery_error(dialect, tokens) {
        Some((l, c, m)) if (l, c) > (line, column) => (l, c, m),
        _ => (line, column, error_message(&e)),
    };
    let (line, column) = onto_found_token(tokens, (line, column), &message);
    SqlWarning {
        line,
        column,
        message,
        kind: WarningKind::Fallback,
    }
}

/// Analyses the statements of a piece the parser rejected, split at `parts` (token indices where a
/// statement starts without a `;` before it; the first is 0). Each part gets its own analysis and every
/// start after the first a [`WarningKind::MissingSemicolon`] warning.
fn analyze_parts(
    dialect: &FlinkDialect,
    sql: &str,
    lines: &LineIndex,
    mut tokens: Vec<TokenWithSpan>,
    parts: &[usize],
    mut warnings: Vec<SqlWarning>,
) -> (Vec<StatementInfo>, Vec<SqlWarning>) {
    let mut infos: Vec<Vec<StatementInfo>> = Vec::with_capacity(parts.len());
    let mut part_warnings: Vec<Vec<SqlWarning>> = Vec::with_capacity(parts.len());
    for (k, &start) in parts.iter().enumerate().rev() {
        let own = if start == 0 {
            std::mem::take(&mut tokens)
        } else {
            tokens.split_off(start)
        };
        let (Some(first), Some(last)) = (own.first(), own.last()) else {
            continue;
        };
        let from = lines.offset(first.span.start);
        let piece = Piece {
            line: first.span.start.line as usize,
            column: first.span.start.column as usize,
            byte_range: from..lines.offset(last.span.end).max(from),
            statement_set: false,
        };
        let mut w = Vec::new();
        if k > 0 {
            w.push(SqlWarning {
                line: piece.line,
                column: piece.column,
                message: "a statement starts here without a ';' ending the one before: read as two statements (Flink rejects the text as written)".to_string(),
                kind: WarningKind::MissingSemicolon,
            });
        }
        let (i, more) = analyze_piece(dialect, sql, lines, &piece, own, false);
        w.extend(more);
        infos.push(i);
        part_warnings.push(w);
    }
    let out: Vec<StatementInfo> = infos.into_iter().rev().flatten().collect();
    warnings.extend(part_warnings.into_iter().rev().flatten());
    (out, warnings)
}

/// `WITH x AS (…) INSERT INTO t SELECT …` (the Spark / Hive order) → `INSERT INTO t WITH x AS (…) SELECT
/// …`, the form Flink accepts (Flink SQL reference, INSERT Statement: `INSERT { INTO | OVERWRITE }
/// table [PARTITION …] [(cols)] select_statement`, the query possibly starting with WITH). The tokens
/// are reordered (spans kept, so positions stay those of the file) and a warning says that Flink rejects
/// the text as written.
fn reorder_with_insert(tokens: &mut [TokenWithSpan]) -> Option<SqlWarning> {
    let kw = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == k);
    if !tokens.first().is_some_and(|t| kw(t, Keyword::WITH)) {
        return None;
    }
    let mut depth = 0i32;
    let mut insert = None;
    for (i, t) in tokens.iter().enumerate() {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && kw(t, Keyword::INSERT) => {
                insert = Some(i);
                break;
            }
            _ if depth == 0 && (kw(t, Keyword::SELECT) || kw(t, Keyword::VALUES)) => return None,
            _ => {}
        }
    }
    let insert = insert?;
    if tokens
        .get(insert - 1)
        .is_none_or(|t| t.token != Token::RParen)
    {
        return None;
    }
    // The INSERT header ends where its query starts: the first SELECT / VALUES / `(` SELECT at depth 0.
    let mut depth = 0i32;
    let mut end = None;
    for (i, t) in tokens.iter().enumerate().skip(insert) {
        match t.token {
            Token::LParen
                if depth == 0
                    && tokens
                        .get(i + 1)
                        .is_some_and(|n| kw(n, Keyword::SELECT) || kw(n, Keyword::WITH)) =>
            {
                end = Some(i);
                break;
            }
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && (kw(t, Keyword::SELECT) || kw(t, Keyword::VALUES)) => {
                end = Some(i);
                break;
            }
            _ => {}
        }
    }
    let end = end?;
    let (line, column) = (
        tokens[0].span.start.line as usize,
        tokens[0].span.start.column as usize,
    );
    let target: Vec<String> = tokens[insert..end]
        .iter()
        .map(|t| t.token.to_string())
        .take(4)
        .collect();
    tokens[..end].rotate_left(insert);
    Some(SqlWarning {
        line,
        column,
        message: format!(
            "WITH before INSERT is Spark/Hive syntax that Flink rejects: write `{} WITH … SELECT …` (read as that)",
            target.join(" ")
        ),
        kind: WarningKind::Syntax,
    })
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
    if beyond_parser_limits(&tokens).is_some() {
        return fallback::extract(&tokens);
    }
    reorder_insert_partition(&mut tokens);
    drop_match_recognize_within(&mut tokens);
    drop_between_symmetry(&mut tokens);
    let mut parser = Parser::new(dialect).with_tokens_with_locations(tokens);
    let parsed = parser
        .parse_statement()
        .and_then(|s| expect_end(&parser).map(|()| s));
    let mut facts = Facts::default();
    let tokens = parser.into_tokens();
    match parsed {
        Ok(statement) => {
            extract::statement_facts(&statement, &mut facts);
            deep::drop_statements(vec![statement], tokens.len());
        }
        Err(_) => facts = fallback::extract(&tokens),
    }
    facts
}

/// Parses one unit: a single statement, or the members of a statement set. Gives the tokens back.
fn parse_unit(
    dialect: &FlinkDialect,
    statement_set: bool,
    mut tokens: Vec<TokenWithSpan>,
) -> (Result<Vec<Statement>, ParserError>, Vec<TokenWithSpan>) {
    reorder_insert_partition(&mut tokens);
    drop_match_recognize_within(&mut tokens);
    drop_between_symmetry(&mut tokens);
    let mut parser = Parser::new(dialect).with_tokens_with_locations(tokens);
    let result = parse_tokens(&mut parser, statement_set);
    (result, parser.into_tokens())
}

fn parse_tokens(parser: &mut Parser, statement_set: bool) -> Result<Vec<Statement>, ParserError> {
    if !statement_set {
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
    // One pass: each `) WITHIN INTERVAL` up to the next `DEFINE` is dropped (a forward search per
    // occurrence was quadratic on text repeating the clause).
    let mut any = false;
    let mut next_define: Option<usize> = None;
    let mut keep = vec![true; tokens.len()];
    for i in (0..tokens.len()).rev() {
        if is(&tokens[i], Keyword::DEFINE) {
            next_define = Some(i);
        }
        if i >= 1
            && is(&tokens[i], Keyword::WITHIN)
            && tokens[i - 1].token == Token::RParen
            && tokens.get(i + 1).is_some_and(|t| is(t, Keyword::INTERVAL))
            && let Some(define) = next_define
        {
            any = true;
            for k in keep.iter_mut().take(define).skip(i) {
                if !*k {
                    break;
                }
                *k = false;
            }
        }
    }
    if !any {
        return;
    }
    let mut flags = keep.into_iter();
    tokens.retain(|_| flags.next().unwrap_or(true));
}

/// `x [NOT] BETWEEN SYMMETRIC a AND b` / `ASYMMETRIC` (Flink SQL reference, System (Built-in) Functions ›
/// Comparison Functions): sqlparser knows neither word. Whether the bounds may come in either order names
/// no relation and changes no state class, so the word is removed before parsing (a dialect hook would
/// have to copy the left operand, which can be a long operator chain).
fn drop_between_symmetry(tokens: &mut Vec<TokenWithSpan>) {
    let is = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == k);
    let found = tokens.windows(2).any(|w| {
        is(&w[0], Keyword::BETWEEN)
            && (is(&w[1], Keyword::SYMMETRIC) || is(&w[1], Keyword::ASYMMETRIC))
    });
    if !found {
        return;
    }
    let mut after_between = false;
    tokens.retain(|t| {
        let drop = after_between && (is(t, Keyword::SYMMETRIC) || is(t, Keyword::ASYMMETRIC));
        after_between = is(t, Keyword::BETWEEN);
        !drop
    });
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
const MAX_SUBQUERY_DEPTH: usize = 16;

/// The furthest parse error of a parenthesized subquery (`( SELECT …`, `( WITH …`, `( VALUES …`) parsed
/// on its own, as (line, column, message). Token spans are the statement's, so positions are absolute.
/// `None` when every subquery parses.
fn deeper_subquery_error(
    dialect: &FlinkDialect,
    tokens: &[TokenWithSpan],
) -> Option<(usize, usize, String)> {
    // Every group's closing `)` and how deep the parentheses inside it go (itself included), in one pass.
    let mut close: Vec<Option<usize>> = vec![None; tokens.len()];
    let mut deepest: Vec<usize> = vec![0; tokens.len()];
    let mut open: Vec<(usize, usize)> = Vec::new();
    for (j, t) in tokens.iter().enumerate() {
        match t.token {
            Token::LParen => open.push((j, 0)),
            Token::RParen => {
                if let Some((o, inner)) = open.pop() {
                    close[o] = Some(j);
                    deepest[o] = inner + 1;
                    if let Some(parent) = open.last_mut() {
                        parent.1 = parent.1.max(inner + 1);
                    }
                }
            }
            _ => {}
        }
    }
    let mut best: Option<(usize, usize, String)> = None;
    for i in 0..tokens.len() {
        if tokens[i].token != Token::LParen {
            continue;
        }
        let starts_query = tokens.get(i + 1).is_some_and(|n| {
            matches!(&n.token, Token::Word(w) if matches!(w.keyword, Keyword::SELECT | Keyword::WITH | Keyword::VALUES))
        });
        let Some(close) = close[i].filter(|_| starts_query) else {
            continue;
        };
        // Deeply nested text is left to the recursion limit of the first parse (and spares the stack);
        // each token is re-parsed at most this many times, so the whole stays linear.
        if deepest[i] > MAX_SUBQUERY_DEPTH {
            continue;
        }
        let mut parser =
            Parser::new(dialect).with_tokens_with_locations(tokens[i + 1..close].to_vec());
        let err = match parser.parse_query() {
            Ok(q) => {
                let err = expect_end(&parser).err();
                deep::drop_statements(vec![Statement::Query(q)], close - i);
                err
            }
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

    /// The statefulness decisions use, the answer of the project analysis for the same statements
    /// (`sql refs`, plans, metadata): [`FileAnalysis::statefulness`], except that a file with a
    /// statement whose state the fallback only estimated ([`StatementInfo::state_estimated`]) is
    /// `Unknown` unless a stateful operator was seen — unknown counts as stateful
    /// ([`Statefulness::may_hold_state`]).
    pub fn decided_statefulness(&self) -> Statefulness {
        let s = self.statefulness();
        if s != Statefulness::Stateful && self.statements.iter().any(|st| st.state_estimated()) {
            Statefulness::Unknown
        } else {
            s
        }
    }
}
