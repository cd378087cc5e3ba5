//! Renaming tables in SQL text by the parser's token spans (blue-green versioning: `orders` → `orders_v2`).
//!
//! Only identifiers in table positions change — the spans the front end reports for sinks and sources
//! (INSERT targets, CREATE names, FROM/JOIN items, comma joins, subqueries, window-TVF `TABLE t`
//! arguments, `LIKE` bases, CTAS and view bodies). Comments, string literals, column names and aliases that
//! happen to share the name stay as written, and so do formatting, case and quoting of everything else.
//!
//! Three things around a renamed name are kept valid:
//! - **Qualified column references.** `SELECT orders.id FROM orders` reads `orders` through its name; when
//!   a renamed source has no alias and the statement qualifies columns with the old name, the new name is
//!   aliased as the old one (`FROM orders_v2 AS orders`), so every `orders.x` still resolves.
//! - **Hints.** Table names inside `STATE_TTL('orders' = '1d')`, `LOOKUP('table' = 'orders')` and join
//!   hints (`BROADCAST(orders)`, `SHUFFLE_HASH`, `SHUFFLE_MERGE`, `NEST_LOOP`) follow the rename, unless the
//!   statement now aliases the new name as the old one (then the old name is the alias and stays). Hint
//!   contents are never references for extraction (Flink's hints:
//!   <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/queries/hints/>),
//!   so they are edited here.
//! - **Storage locations.** A renamed table's own `'topic' = '<old name>'` WITH option becomes the new
//!   name, so the green table never writes into the blue topic; so do a filesystem `'path'` whose last
//!   segment is the old name, a JDBC `'table-name'` and an Elasticsearch `'index'`. A location that does
//!   not name the table is kept and reported in [`RenameOutcome::notes`].
//!
//! The result is re-analysed: it must parse to exactly the expected sinks and sources (the old ones with the
//! renamed names), statement by statement, or the rewrite is refused with [`RewriteError::Verification`].

use std::collections::BTreeSet;
use std::ops::Range;

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace};

use super::dialect::FlinkDialect;
use super::model::{FileAnalysis, TableName, TableRef};
use super::split::LineIndex;

/// What a rename did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameOutcome {
    /// The rewritten text (equal to the input when nothing was renamed).
    pub text: String,
    /// Number of edits (names, aliases, hint names, topics).
    pub edits: usize,
    /// Things the caller should know, e.g. a topic option that was kept.
    pub notes: Vec<String>,
}

/// Why a file cannot be rewritten safely. Nothing is changed in that case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// A reference the front end reported has no usable span (the statement went through the fallback
    /// extractor and the name could not be located).
    #[error("line {line}: cannot locate '{name}' in the text; rename it by hand")]
    NoSpan {
        /// The name as written.
        name: String,
        /// Line of the statement.
        line: usize,
    },
    /// The text under a reference's span is not the name (should not happen; refused rather than guessed).
    #[error("line {line}: expected '{name}' at the reference's position, found '{found}'")]
    SpanMismatch {
        /// The expected name.
        name: String,
        /// The text found under the span.
        found: String,
        /// Line of the reference.
        line: usize,
    },
    /// A renamed source read in a temporal join without an alias is also used to qualify columns: there is
    /// no place for the alias that keeps `old.col` valid.
    #[error(
        "line {line}: '{name}' is qualified in columns and has no alias in its FOR SYSTEM_TIME AS OF join; add an alias first"
    )]
    TemporalAlias {
        /// The table to rename.
        name: String,
        /// Line of the reference.
        line: usize,
    },
    /// The rewritten SQL does not parse to the expected sinks and sources.
    #[error("rewritten SQL does not re-parse to the expected references: {detail}")]
    Verification {
        /// Which statement and which references differ.
        detail: String,
    },
}

/// One text edit: replace `range` with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edit {
    range: Range<usize>,
    text: String,
}

/// Renames tables in `sql`.
///
/// `rename` receives every table name in a table position (as written, parts unquoted) and returns the new
/// last part (table name) for those to rename; qualifiers are kept. Returns the rewritten text or an error,
/// in which case the caller must leave the file unchanged.
pub fn rename_tables(
    sql: &str,
    rename: &dyn Fn(&TableName) -> Option<String>,
) -> Result<RenameOutcome, RewriteError> {
    rename_tables_with(sql, rename, &|_| true)
}

/// [`rename_tables`], moving the storage locations only of the tables for which `moves_storage(old
/// table name)` holds: the tables the project writes. A table it only reads (a source over a topic, a
/// JDBC lookup table) keeps reading where it did.
pub fn rename_tables_with(
    sql: &str,
    rename: &dyn Fn(&TableName) -> Option<String>,
    moves_storage: &dyn Fn(&str) -> bool,
) -> Result<RenameOutcome, RewriteError> {
    let analysis = super::analyze(sql);
    let lines = LineIndex::new(sql);
    let all = tokenize_all(sql, &lines);
    let significant: Vec<&Tok> = all.iter().filter(|t| !t.is_trivia()).collect();

    let mut edits: Vec<Edit> = Vec::new();
    let mut notes = Vec::new();
    for st in &analysis.statements {
        let st_range = statement_range(st.line, &st.text, sql, &lines);
        // Every reference of the statement, each span once (a name may be listed as sink and source).
        let mut refs: Vec<(&TableRef, bool)> = Vec::new();
        let mut seen = BTreeSet::new();
        for (r, is_sink) in st
            .sinks
            .iter()
            .map(|r| (r, true))
            .chain(st.sources.iter().map(|r| (r, false)))
        {
            let key = r.span.map(|s| (s.start, s.end));
            if key.is_some() && !seen.insert(key) {
                continue;
            }
            refs.push((r, is_sink));
        }
        let ref_ranges: Vec<Range<usize>> = refs
            .iter()
            .filter_map(|(r, _)| {
                r.span
                    .map(|s| lines.offset(loc(s.start))..lines.offset(loc(s.end)))
            })
            .collect();
        let mut aliased_old: BTreeSet<String> = BTreeSet::new();
        let mut renamed_old: BTreeSet<String> = BTreeSet::new();
        for (r, is_sink) in &refs {
            let Some(new) = rename(&r.name) else { continue };
            let old = r.name.table().to_string();
            if new == old {
                continue;
            }
            let Some(span) = r.span else {
                return Err(RewriteError::NoSpan {
                    name: r.name.dotted(),
                    line: st.line,
                });
            };
            let range = lines.offset(loc(span.start))..lines.offset(loc(span.end));
            let part = last_part(sql, range.clone()).ok_or_else(|| RewriteError::SpanMismatch {
                name: r.name.dotted(),
                found: sql.get(range.clone()).unwrap_or("").to_string(),
                line: span.start.line,
            })?;
            if part.value != old {
                return Err(RewriteError::SpanMismatch {
                    name: old,
                    found: part.value,
                    line: span.start.line,
                });
            }
            edits.push(Edit {
                range: part.range.clone(),
                text: quote_like(&new, part.quote),
            });
            renamed_old.insert(old.clone());

            if !is_sink
                && is_relation_position(&significant, range.start)
                && qualifies_columns(&significant, &old, &ref_ranges, &st_range)
            {
                match alias_state(&significant, range.end) {
                    AliasState::Present => {}
                    AliasState::Absent => {
                        edits.push(Edit {
                            range: range.end..range.end,
                            text: format!(" AS {}", quote_like(&old, part.quote)),
                        });
                        aliased_old.insert(old.clone());
                    }
                    AliasState::TemporalWithout => {
                        return Err(RewriteError::TemporalAlias {
                            name: old,
                            line: span.start.line,
                        });
                    }
                }
            }
            if *is_sink && moves_storage(&old) {
                location_edit(&significant, &st_range, &old, &new, &mut edits, &mut notes);
            }
        }
        // Hints of this statement.
        for t in all
            .iter()
            .filter(|t| t.range.start >= st_range.start && t.range.end <= st_range.end)
        {
            if let Token::Whitespace(Whitespace::MultiLineComment(body)) = &t.token
                && body.starts_with('+')
            {
                hint_edits(
                    body,
                    t.range.start + 2,
                    &renamed_old,
                    &aliased_old,
                    rename,
                    &mut edits,
                );
            }
        }
    }

    edits.sort_by(|a, b| {
        (a.range.start, a.range.end, &a.text).cmp(&(b.range.start, b.range.end, &b.text))
    });
    edits.dedup();
    for w in edits.windows(2) {
        if w[0].range.end > w[1].range.start {
            return Err(RewriteError::Verification {
                detail: format!("overlapping edits at byte {}", w[1].range.start),
            });
        }
    }
    let mut text = String::with_capacity(sql.len() + edits.len() * 4);
    let mut at = 0;
    for e in &edits {
        text.push_str(&sql[at..e.range.start]);
        text.push_str(&e.text);
        at = e.range.end;
    }
    text.push_str(&sql[at..]);
    if !edits.is_empty() {
        verify(&analysis, &super::analyze(&text), rename)?;
    }
    Ok(RenameOutcome {
        text,
        edits: edits.len(),
        notes,
    })
}

/// Adds a table hint (`/*+ OPTIONS(…) */`, Flink's dynamic table options:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/queries/hints/#dynamic-table-options>)
/// after every table a query reads for which `hint_for(name)` gives the options' text (`'k' = 'v',
/// …`): how a bounded read of a Kafka table is asked for on the SQL Gateway
/// (`'scan.bounded.mode' = 'latest-offset'`). A reference already followed by a hint keeps its own,
/// and so does a window TVF's `TABLE t` argument (Flink takes no hint there); both are returned by
/// name in the second value, so the caller can say which reads stay as written.
///
/// Errors: a reference without a usable span ([`RewriteError::NoSpan`]); a result that does not
/// read exactly the same tables ([`RewriteError::Verification`]). The text is then not to be used.
pub fn with_table_hints(
    sql: &str,
    hint_for: &dyn Fn(&TableName) -> Option<String>,
) -> Result<(String, Vec<String>), RewriteError> {
    let analysis = super::analyze(sql);
    let lines = LineIndex::new(sql);
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut kept: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for st in &analysis.statements {
        for r in &st.sources {
            let Some(options) = hint_for(&r.name) else {
                continue;
            };
            let Some(span) = r.span else {
                return Err(RewriteError::NoSpan {
                    name: r.name.dotted(),
                    line: st.line,
                });
            };
            let (start, end) = (lines.offset(loc(span.start)), lines.offset(loc(span.end)));
            if !seen.insert(end) {
                continue;
            }
            let before = sql[..start].trim_end();
            let after = sql[end..].trim_start();
            let tvf_argument = before
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("TABLE"));
            if after.starts_with("/*+") || tvf_argument {
                kept.push(r.name.dotted());
                continue;
            }
            inserts.push((end, format!(" /*+ OPTIONS({options}) */")));
        }
    }
    let mut text = sql.to_string();
    inserts.sort_by_key(|i| std::cmp::Reverse(i.0));
    for (at, hint) in &inserts {
        text.insert_str(*at, hint);
    }
    let names = |a: &FileAnalysis| -> Vec<Vec<String>> {
        a.statements
            .iter()
            .map(|st| {
                let mut v: Vec<String> = st.sources.iter().map(|r| r.name.dotted()).collect();
                v.sort();
                v
            })
            .collect()
    };
    let again = super::analyze(&text);
    if names(&again) != names(&analysis) {
        return Err(RewriteError::Verification {
            detail: "the query with table hints does not read the same tables".into(),
        });
    }
    kept.sort();
    kept.dedup();
    Ok((text, kept))
}

fn loc(l: super::model::Location) -> sqlparser::tokenizer::Location {
    sqlparser::tokenizer::Location::new(l.line as u64, l.column as u64)
}

/// A token with its byte range.
struct Tok {
    token: Token,
    range: Range<usize>,
}

impl Tok {
    fn is_trivia(&self) -> bool {
        matches!(self.token, Token::Whitespace(_))
    }
    fn is_keyword(&self, k: Keyword) -> bool {
        matches!(&self.token, Token::Word(w) if w.keyword == k && w.quote_style.is_none())
    }
}

fn tokenize_all(sql: &str, lines: &LineIndex) -> Vec<Tok> {
    let mut raw: Vec<TokenWithSpan> = Vec::new();
    // A tokenizer error (unterminated string) leaves the tail unanalysed by the front end too.
    let _ = Tokenizer::new(&FlinkDialect, sql).tokenize_with_location_into_buf(&mut raw);
    raw.into_iter()
        .map(|t| Tok {
            range: lines.range(t.span),
            token: t.token,
        })
        .collect()
}

/// Byte range of a statement: from its first line's text to the end of its own text.
fn statement_range(line: usize, text: &str, sql: &str, lines: &LineIndex) -> Range<usize> {
    let line_start = lines.offset(sqlparser::tokenizer::Location::new(line as u64, 1));
    let start = sql[line_start..]
        .find(text)
        .map(|i| line_start + i)
        .unwrap_or(line_start);
    start..(start + text.len()).min(sql.len())
}

/// The last part of a possibly qualified name in `sql[range]`: its unquoted value, its byte range
/// (quotes included) and its quote character.
struct Part {
    value: String,
    range: Range<usize>,
    quote: Option<char>,
}

fn last_part(sql: &str, range: Range<usize>) -> Option<Part> {
    let s = sql.get(range.clone())?.trim_end();
    let end = range.start + s.len();
    let last = s.chars().last()?;
    if last == '`' || last == '"' {
        // Walk back to the opening quote; a doubled quote inside is an escaped one.
        let bytes = s.as_bytes();
        let q = last as u8;
        let mut i = bytes.len() - 1;
        loop {
            if i == 0 {
                return None;
            }
            i -= 1;
            if bytes[i] == q {
                if i > 0 && bytes[i - 1] == q {
                    i -= 1;
                    continue;
                }
                break;
            }
        }
        let inner = &s[i + 1..s.len() - 1];
        let doubled = format!("{last}{last}");
        return Some(Part {
            value: inner.replace(&doubled, &last.to_string()),
            range: range.start + i..end,
            quote: Some(last),
        });
    }
    let start = s.rfind('.').map(|i| i + 1).unwrap_or(0);
    let value = s[start..].trim().to_string();
    let lead = s[start..].len() - s[start..].trim_start().len();
    Some(Part {
        value,
        range: range.start + start + lead..end,
        quote: None,
    })
}

/// The new name, quoted the way the old one was (or backticked when it is not a plain identifier).
fn quote_like(name: &str, quote: Option<char>) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match quote {
        Some(q) => format!("{q}{}{q}", name.replace(q, &format!("{q}{q}"))),
        None if plain => name.to_string(),
        None => super::quote_identifier(name),
    }
}

fn index_at(sig: &[&Tok], byte: usize) -> usize {
    sig.partition_point(|t| t.range.start < byte)
}

/// A reference is a FROM/JOIN relation (which can carry an alias) unless it is a window-TVF `TABLE t`
/// argument or a `LIKE` base.
fn is_relation_position(sig: &[&Tok], start: usize) -> bool {
    let i = index_at(sig, start);
    !(i > 0 && (sig[i - 1].is_keyword(Keyword::TABLE) || sig[i - 1].is_keyword(Keyword::LIKE)))
}

/// Whether the statement uses `old.` as a column qualifier outside table-name positions.
fn qualifies_columns(
    sig: &[&Tok],
    old: &str,
    ref_ranges: &[Range<usize>],
    st: &Range<usize>,
) -> bool {
    sig.windows(2).any(|w| {
        let in_statement = w[0].range.start >= st.start && w[0].range.end <= st.end;
        let in_ref = ref_ranges
            .iter()
            .any(|r| w[0].range.start >= r.start && w[0].range.end <= r.end);
        in_statement
            && !in_ref
            && matches!(&w[0].token, Token::Word(x) if x.value == old)
            && w[1].token == Token::Period
    })
}

enum AliasState {
    Present,
    Absent,
    /// `FROM t FOR SYSTEM_TIME AS OF …` without alias.
    TemporalWithout,
}

/// Keywords that can follow a relation and are not an alias.
const AFTER_RELATION: &[Keyword] = &[
    Keyword::WHERE,
    Keyword::JOIN,
    Keyword::INNER,
    Keyword::LEFT,
    Keyword::RIGHT,
    Keyword::FULL,
    Keyword::CROSS,
    Keyword::NATURAL,
    Keyword::OUTER,
    Keyword::ON,
    Keyword::USING,
    Keyword::GROUP,
    Keyword::ORDER,
    Keyword::HAVING,
    Keyword::WINDOW,
    Keyword::UNION,
    Keyword::EXCEPT,
    Keyword::INTERSECT,
    Keyword::MINUS,
    Keyword::LIMIT,
    Keyword::OFFSET,
    Keyword::FETCH,
    Keyword::MATCH_RECOGNIZE,
    Keyword::QUALIFY,
    Keyword::END,
    Keyword::SELECT,
    Keyword::INSERT,
];

fn alias_state(sig: &[&Tok], end: usize) -> AliasState {
    let i = index_at(sig, end);
    let Some(next) = sig.get(i) else {
        return AliasState::Absent;
    };
    match &next.token {
        Token::Word(w) if w.keyword == Keyword::AS && w.quote_style.is_none() => {
            AliasState::Present
        }
        Token::Word(w) if w.keyword == Keyword::FOR && w.quote_style.is_none() => {
            // FOR SYSTEM_TIME AS OF <expr> [AS] alias: the alias follows the period expression.
            let mut depth = 0i32;
            let mut j = i + 1;
            let mut seen_of = false;
            while let Some(t) = sig.get(j) {
                match &t.token {
                    Token::LParen => depth += 1,
                    Token::RParen if depth == 0 => return AliasState::TemporalWithout,
                    Token::RParen => depth -= 1,
                    Token::Comma | Token::SemiColon if depth == 0 => {
                        return AliasState::TemporalWithout;
                    }
                    Token::Word(w) if depth == 0 && w.keyword == Keyword::OF => seen_of = true,
                    Token::Word(w) if depth == 0 && seen_of && w.keyword == Keyword::AS => {
                        return AliasState::Present;
                    }
                    Token::Word(w)
                        if depth == 0 && seen_of && AFTER_RELATION.contains(&w.keyword) =>
                    {
                        return AliasState::TemporalWithout;
                    }
                    _ => {}
                }
                j += 1;
            }
            AliasState::TemporalWithout
        }
        Token::Word(w) if w.quote_style.is_some() || !AFTER_RELATION.contains(&w.keyword) => {
            AliasState::Present
        }
        _ => AliasState::Absent,
    }
}

/// WITH options that name where a table's rows are stored: Kafka `topic`, filesystem `path`, JDBC
/// `table-name`, Elasticsearch/OpenSearch `index`.
const LOCATION_OPTIONS: &[&str] = &["topic", "path", "table-name", "index"];

/// The new value of a location option when it names the renamed table: the whole value (`'orders'`), or
/// its last path segment (`'s3://bucket/exports/orders/'` → `…/orders_v2/`), or a name that ends with
/// the table's name after a namespace separator `_`, `.` or `-` (`'team.orders'` → `'team.orders_v2'`,
/// `'e2e42_orders'` → `'e2e42_orders_v2'`: a per-project or per-run prefix moves with the table).
/// A value where the name is followed by anything (`'crm.orders.v1'`) does not name the table.
fn renamed_location(value: &str, old: &str, new: &str) -> Option<String> {
    let trimmed = value.trim_end_matches('/');
    let tail = &value[trimmed.len()..];
    let last_start = trimmed.rfind('/').map_or(0, |i| i + 1);
    let last = &trimmed[last_start..];
    let prefix_len = last.strip_suffix(old).map(str::len)?;
    let named = prefix_len == 0 || last[..prefix_len].ends_with(['_', '.', '-']);
    named.then(|| format!("{}{new}{tail}", &trimmed[..last_start + prefix_len]))
}

/// Moves the renamed table's own storage with it: a location option ([`LOCATION_OPTIONS`]) of the
/// statement that names the old table becomes the new name, so the green table never writes into the
/// blue one's topic, folder, JDBC table or index. A location that does not name the table is kept and
/// reported in `notes`.
fn location_edit(
    sig: &[&Tok],
    st: &Range<usize>,
    old: &str,
    new: &str,
    edits: &mut Vec<Edit>,
    notes: &mut Vec<String>,
) {
    let toks: Vec<&&Tok> = sig
        .iter()
        .filter(|t| t.range.start >= st.start && t.range.end <= st.end)
        .collect();
    for w in toks.windows(3) {
        let (Token::SingleQuotedString(k), Token::Eq, Token::SingleQuotedString(v)) =
            (&w[0].token, &w[1].token, &w[2].token)
        else {
            continue;
        };
        if !LOCATION_OPTIONS.contains(&k.as_str()) {
            continue;
        }
        match renamed_location(v, old, new) {
            Some(moved) => edits.push(Edit {
                range: w[2].range.clone(),
                text: format!("'{}'", moved.replace('\'', "''")),
            }),
            None => notes.push(format!("table '{old}' renamed to '{new}' keeps its '{k}' = '{v}': the green table writes to the same place as the blue one unless you change it")),
        }
    }
}

const JOIN_HINTS: &[&str] = &["BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "NEST_LOOP"];

/// Edits table names inside one hint comment body (`+ NAME(args), …`); `base` is the byte offset of the
/// body in the file.
fn hint_edits(
    body: &str,
    base: usize,
    renamed: &BTreeSet<String>,
    aliased: &BTreeSet<String>,
    rename: &dyn Fn(&TableName) -> Option<String>,
    edits: &mut Vec<Edit>,
) {
    let target = |name: &str| -> Option<String> {
        if !renamed.contains(name) || aliased.contains(name) {
            return None;
        }
        rename(&TableName::new([name]))
    };
    let b = body.as_bytes();
    let mut i = 0;
    let mut current_hint = String::new();
    let mut depth = 0;
    let mut arg_index = 0; // position inside a `'k' = 'v'` pair: 0 key, 1 value
    let mut last_key = String::new();
    while i < b.len() {
        let c = b[i] as char;
        if c == '\'' {
            let start = i;
            i += 1;
            let mut value = String::new();
            while i < b.len() {
                if b[i] == b'\'' {
                    if i + 1 < b.len() && b[i + 1] == b'\'' {
                        value.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                let ch = body[i..].chars().next().unwrap();
                value.push(ch);
                i += ch.len_utf8();
            }
            let end = (i + 1).min(b.len());
            let hint = current_hint.to_ascii_uppercase();
            let table_here = (hint == "STATE_TTL" && arg_index == 0)
                || (hint == "LOOKUP" && arg_index == 1 && last_key == "table");
            if depth > 0
                && table_here
                && let Some(new) = target(&value)
            {
                edits.push(Edit {
                    range: base + start..base + end,
                    text: format!("'{}'", new.replace('\'', "''")),
                });
            }
            if arg_index == 0 {
                last_key = value;
            }
            i = end;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &body[start..i];
            if depth == 0 {
                current_hint = word.to_string();
            } else if JOIN_HINTS.contains(&current_hint.to_ascii_uppercase().as_str())
                && let Some(new) = target(word)
            {
                edits.push(Edit {
                    range: base + start..base + i,
                    text: quote_like(&new, None),
                });
            }
            continue;
        }
        match c {
            '(' => {
                depth += 1;
                arg_index = 0;
            }
            ')' => depth -= 1,
            '=' => arg_index = 1,
            ',' => arg_index = 0,
            _ => {}
        }
        i += 1;
    }
}

/// The rewritten file must read and write exactly the expected relations, statement by statement.
fn verify(
    before: &FileAnalysis,
    after: &FileAnalysis,
    rename: &dyn Fn(&TableName) -> Option<String>,
) -> Result<(), RewriteError> {
    if before.statements.len() != after.statements.len() {
        return Err(RewriteError::Verification {
            detail: format!(
                "{} statements before, {} after",
                before.statements.len(),
                after.statements.len()
            ),
        });
    }
    let expect = |refs: &[TableRef]| -> BTreeSet<String> {
        refs.iter()
            .map(|r| match rename(&r.name) {
                Some(new) => {
                    let mut parts = r.name.parts.clone();
                    if let Some(last) = parts.last_mut() {
                        *last = new;
                    }
                    TableName { parts }.key()
                }
                None => r.name.key(),
            })
            .collect()
    };
    // Keys, not dotted names: `` `x.y` `` and `` `x`.`y` `` must not pass for each other.
    let names =
        |refs: &[TableRef]| -> BTreeSet<String> { refs.iter().map(|r| r.name.key()).collect() };
    for (b, a) in before.statements.iter().zip(&after.statements) {
        for (what, want, got) in [
            ("sinks", expect(&b.sinks), names(&a.sinks)),
            ("sources", expect(&b.sources), names(&a.sources)),
        ] {
            if want != got {
                return Err(RewriteError::Verification {
                    detail: format!(
                        "statement at line {}: {what} {got:?}, expected {want:?}",
                        b.line
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&TableName) -> Option<String> {
        move |n: &TableName| {
            pairs
                .iter()
                .find(|(o, _)| *o == n.table())
                .map(|(_, n)| n.to_string())
        }
    }

    fn rn(sql: &str, pairs: &'static [(&'static str, &'static str)]) -> String {
        rename_tables(sql, &map(pairs)).unwrap().text
    }

    #[test]
    fn renames_only_table_positions() {
        let sql = "-- reads orders\nINSERT INTO big_orders\nSELECT id, 'orders' AS src, orders_count FROM orders WHERE note <> 'from orders';";
        assert_eq!(
            rn(
                sql,
                &[("orders", "orders_v2"), ("big_orders", "big_orders_v2")]
            ),
            "-- reads orders\nINSERT INTO big_orders_v2\nSELECT id, 'orders' AS src, orders_count FROM orders_v2 WHERE note <> 'from orders';"
        );
    }

    #[test]
    fn qualified_columns_keep_resolving_through_an_alias() {
        let sql = "INSERT INTO t SELECT orders.id, c.name FROM orders JOIN customers c ON orders.cid = c.id";
        assert_eq!(
            rn(sql, &[("orders", "orders_v2")]),
            "INSERT INTO t SELECT orders.id, c.name FROM orders_v2 AS orders JOIN customers c ON orders.cid = c.id"
        );
        // An existing alias is kept, and nothing is added.
        let sql = "INSERT INTO t SELECT o.id FROM orders o";
        assert_eq!(
            rn(sql, &[("orders", "orders_v2")]),
            "INSERT INTO t SELECT o.id FROM orders_v2 o"
        );
    }

    #[test]
    fn quoted_and_qualified_names_keep_their_form() {
        let sql = "INSERT INTO `cat`.`db`.`orders` SELECT * FROM cat.db.src";
        assert_eq!(
            rn(sql, &[("orders", "orders_v2"), ("src", "src_v3")]),
            "INSERT INTO `cat`.`db`.`orders_v2` SELECT * FROM cat.db.src_v3"
        );
    }

    #[test]
    fn ctas_like_and_window_tvf() {
        let sql = "CREATE TABLE a WITH ('connector' = 'kafka', 'topic' = 'a') AS SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))";
        assert_eq!(
            rn(sql, &[("a", "a_v2"), ("clicks", "clicks_v2")]),
            "CREATE TABLE a_v2 WITH ('connector' = 'kafka', 'topic' = 'a_v2') AS SELECT * FROM TABLE(TUMBLE(TABLE clicks_v2, DESCRIPTOR(ts), INTERVAL '1' MINUTE))"
        );
        let sql = "CREATE TABLE archive (x INT) WITH ('connector' = 'blackhole') LIKE orders (EXCLUDING ALL)";
        assert_eq!(
            rn(sql, &[("orders", "orders_v2")]),
            "CREATE TABLE archive (x INT) WITH ('connector' = 'blackhole') LIKE orders_v2 (EXCLUDING ALL)"
        );
    }

    #[test]
    fn hints_follow_the_rename() {
        let sql = "INSERT INTO e /*+ OPTIONS('sink.parallelism' = '2') */ SELECT /*+ STATE_TTL('orders' = '1d', 'c' = '12h') */ o.id FROM orders o JOIN customers AS c ON o.cid = c.id";
        assert_eq!(
            rn(sql, &[("orders", "orders_v2")]),
            "INSERT INTO e /*+ OPTIONS('sink.parallelism' = '2') */ SELECT /*+ STATE_TTL('orders_v2' = '1d', 'c' = '12h') */ o.id FROM orders_v2 o JOIN customers AS c ON o.cid = c.id"
        );
        let sql = "INSERT INTO e SELECT /*+ BROADCAST(dim), LOOKUP('table' = 'dim', 'async' = 'true') */ f.id FROM f JOIN dim FOR SYSTEM_TIME AS OF f.pt AS d ON f.k = d.k";
        assert_eq!(
            rn(sql, &[("dim", "dim_v2")]),
            "INSERT INTO e SELECT /*+ BROADCAST(dim_v2), LOOKUP('table' = 'dim_v2', 'async' = 'true') */ f.id FROM f JOIN dim_v2 FOR SYSTEM_TIME AS OF f.pt AS d ON f.k = d.k"
        );
    }

    #[test]
    fn topic_that_differs_from_the_name_is_reported() {
        let out = rename_tables(
            "CREATE TABLE t (x INT) WITH ('connector' = 'kafka', 'topic' = 'crm.t.v1')",
            &map(&[("t", "t_v2")]),
        )
        .unwrap();
        assert_eq!(
            out.text,
            "CREATE TABLE t_v2 (x INT) WITH ('connector' = 'kafka', 'topic' = 'crm.t.v1')"
        );
        assert_eq!(out.notes.len(), 1);
    }

    /// For every namespace (none, a word, a dotted path, a URL folder) and separator, a location that
    /// ends with the name moves, and one where anything follows the name, or where the name is only
    /// the end of a longer word, stays.
    #[test]
    fn every_location_ending_with_the_name_moves_and_no_other() {
        let names = [("orders", "orders_v2"), ("t_v2", "t_v3"), ("a", "a_v2")];
        let heads = [
            "",
            "team",
            "e2e42",
            "crm.sales",
            "s3://b/x/",
            "file:///tmp/",
        ];
        let seps = ["", "_", ".", "-"];
        for (old, new) in names {
            for head in heads {
                for sep in seps {
                    if head.is_empty() != sep.is_empty() && !head.ends_with('/') {
                        continue;
                    }
                    for tail in ["", "/"] {
                        let value = format!("{head}{sep}{old}{tail}");
                        assert_eq!(
                            renamed_location(&value, old, new),
                            Some(format!("{head}{sep}{new}{tail}")),
                            "{value}"
                        );
                    }
                    for after in [".v1", "x", "_archive", "/part"] {
                        let value = format!("{head}{sep}{old}{after}");
                        assert_eq!(renamed_location(&value, old, new), None, "{value}");
                    }
                    if !head.is_empty() && !head.ends_with('/') {
                        let value = format!("{head}{old}");
                        assert_eq!(renamed_location(&value, old, new), None, "{value}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_location_that_ends_with_the_name_after_a_namespace_moves() {
        for (value, moved) in [
            ("orders", Some("orders_v2")),
            ("e2e42_orders", Some("e2e42_orders_v2")),
            ("team.orders", Some("team.orders_v2")),
            ("team-orders", Some("team-orders_v2")),
            ("s3://b/x/orders/", Some("s3://b/x/orders_v2/")),
            ("s3://b/x/run7_orders", Some("s3://b/x/run7_orders_v2")),
            ("weborders", None),
            ("crm.orders.v1", None),
            ("s3://b/orders/x", None),
            ("s3://b/x", None),
        ] {
            assert_eq!(
                renamed_location(value, "orders", "orders_v2").as_deref(),
                moved,
                "{value}"
            );
        }
    }

    #[test]
    fn storage_of_a_table_the_project_only_reads_stays() {
        let sql = "CREATE TABLE customers (id INT) WITH ('connector' = 'jdbc', 'table-name' = 'customers')";
        let out = rename_tables_with(sql, &map(&[("customers", "customers_v2")]), &|t: &str| {
            t != "customers"
        })
        .unwrap();
        assert_eq!(
            out.text,
            "CREATE TABLE customers_v2 (id INT) WITH ('connector' = 'jdbc', 'table-name' = 'customers')"
        );
        assert!(out.notes.is_empty());
    }

    #[test]
    fn storage_locations_that_name_the_table_move_with_it() {
        let sql = "CREATE TABLE exp (x INT) WITH ('connector' = 'filesystem', 'path' = 'file:///tmp/exports/exp', 'format' = 'json');\nCREATE TABLE j (x INT) WITH ('connector' = 'jdbc', 'table-name' = 'j');\nCREATE TABLE e (x INT) WITH ('connector' = 'elasticsearch-7', 'index' = 'e');\nCREATE TABLE d (x INT) WITH ('connector' = 'filesystem', 'path' = 's3://b/d/');";
        let out = rename_tables(
            sql,
            &map(&[
                ("exp", "exp_v2"),
                ("j", "j_v2"),
                ("e", "e_v2"),
                ("d", "d_v2"),
            ]),
        )
        .unwrap();
        assert_eq!(
            out.text,
            "CREATE TABLE exp_v2 (x INT) WITH ('connector' = 'filesystem', 'path' = 'file:///tmp/exports/exp_v2', 'format' = 'json');\nCREATE TABLE j_v2 (x INT) WITH ('connector' = 'jdbc', 'table-name' = 'j_v2');\nCREATE TABLE e_v2 (x INT) WITH ('connector' = 'elasticsearch-7', 'index' = 'e_v2');\nCREATE TABLE d_v2 (x INT) WITH ('connector' = 'filesystem', 'path' = 's3://b/d_v2/');"
        );
        assert!(out.notes.is_empty(), "{:?}", out.notes);
        // A shared folder is kept and reported.
        let out = rename_tables(
            "CREATE TABLE exp (x INT) WITH ('connector' = 'filesystem', 'path' = 'file:///tmp/exports')",
            &map(&[("exp", "exp_v2")]),
        )
        .unwrap();
        assert!(out.text.contains("'path' = 'file:///tmp/exports'"));
        assert_eq!(
            out.notes,
            vec![
                "table 'exp' renamed to 'exp_v2' keeps its 'path' = 'file:///tmp/exports': the green table writes to the same place as the blue one unless you change it"
            ]
        );
    }

    #[test]
    fn statement_sets_ctes_and_subqueries() {
        let sql = "EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT * FROM src WHERE k IN (SELECT k FROM src);\n  INSERT INTO b WITH s AS (SELECT * FROM src) SELECT * FROM s;\nEND;";
        assert_eq!(
            rn(sql, &[("src", "src_v2"), ("a", "a_v2")]),
            "EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a_v2 SELECT * FROM src_v2 WHERE k IN (SELECT k FROM src_v2);\n  INSERT INTO b WITH s AS (SELECT * FROM src_v2) SELECT * FROM s;\nEND;"
        );
    }

    #[test]
    fn nothing_to_rename_is_identity_and_renaming_twice_is_stable() {
        let sql = "INSERT INTO x SELECT * FROM y;";
        let out = rename_tables(sql, &map(&[("zzz", "zzz_v2")])).unwrap();
        assert_eq!((out.text.as_str(), out.edits), (sql, 0));
        let once = rn(sql, &[("y", "y_v2")]);
        let again = rename_tables(&once, &map(&[("y", "y_v2")])).unwrap();
        assert_eq!(again.edits, 0);
        assert_eq!(again.text, once);
    }

    #[test]
    fn temporal_join_without_alias_but_qualified_is_refused() {
        let sql = "INSERT INTO t SELECT o.id, rates.rate FROM o JOIN rates FOR SYSTEM_TIME AS OF o.ts ON o.c = rates.c";
        let err = rename_tables(sql, &map(&[("rates", "rates_v2")])).unwrap_err();
        assert!(matches!(err, RewriteError::TemporalAlias { .. }), "{err}");
    }
}

/// What [`replace_in_identifiers`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentifierEdit {
    /// The rewritten text (equal to the input when nothing matched).
    pub text: String,
    /// Number of replacements.
    pub edits: usize,
}

/// Why [`replace_in_identifiers`] refused a file (it is then left as it was).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplaceError {
    /// The text does not tokenize (an unterminated string or comment): where identifiers end is not
    /// known.
    #[error("the SQL does not tokenize ({0}); edit it by hand")]
    Tokenize(String),
    /// The rewritten text has another number of statements, or a statement the parser read before
    /// no longer parses.
    #[error("the rewritten SQL no longer reads the same: {0}")]
    Verification(String),
}

/// shift_left's `table update-tables --string-to-change-from A --string-to-change-to B`, token-aware:
/// `from` is replaced by `to` only inside names — an identifier (quoted, or a word that is not a SQL
/// keyword) and the dotted names it starts (`clone.dev.orders`, so that a qualifier prefix such as
/// `clone.dev.` can be changed or removed) — never in string literals (topics, option values),
/// comments or keywords. shift_left's `TableWorker` replaced the string anywhere in the text.
///
/// The result is re-analysed: it must have as many statements as before, and every statement the
/// parser read before must still parse.
///
/// Errors: [`ReplaceError`]; the caller leaves the file unchanged.
pub fn replace_in_identifiers(
    sql: &str,
    from: &str,
    to: &str,
) -> Result<IdentifierEdit, ReplaceError> {
    if from.is_empty() {
        return Ok(IdentifierEdit {
            text: sql.to_string(),
            edits: 0,
        });
    }
    let lines = LineIndex::new(sql);
    let mut raw: Vec<TokenWithSpan> = Vec::new();
    Tokenizer::new(&FlinkDialect, sql)
        .tokenize_with_location_into_buf(&mut raw)
        .map_err(|e| ReplaceError::Tokenize(e.to_string()))?;
    let toks: Vec<Tok> = raw
        .into_iter()
        .map(|t| Tok {
            range: lines.range(t.span),
            token: t.token,
        })
        .collect();
    let is_word = |t: &Tok| matches!(t.token, Token::Word(_));
    let is_period = |t: &Tok| matches!(t.token, Token::Period);
    let mut edits: Vec<Edit> = Vec::new();
    let mut count = 0;
    let mut i = 0;
    while i < toks.len() {
        if !is_word(&toks[i]) {
            i += 1;
            continue;
        }
        // A dotted run: word (. word)*, adjacent tokens only.
        let mut j = i;
        while j + 2 < toks.len()
            && is_period(&toks[j + 1])
            && is_word(&toks[j + 2])
            && toks[j].range.end == toks[j + 1].range.start
            && toks[j + 1].range.end == toks[j + 2].range.start
        {
            j += 2;
        }
        let single_keyword = j == i
            && matches!(&toks[i].token, Token::Word(w) if w.quote_style.is_none() && w.keyword != Keyword::NoKeyword);
        if !single_keyword {
            let range = toks[i].range.start..toks[j].range.end;
            let slice = &sql[range.clone()];
            let n = slice.matches(from).count();
            if n > 0 {
                count += n;
                edits.push(Edit {
                    range,
                    text: slice.replace(from, to),
                });
            }
        }
        i = j + 1;
    }
    if edits.is_empty() {
        return Ok(IdentifierEdit {
            text: sql.to_string(),
            edits: 0,
        });
    }
    let mut text = sql.to_string();
    for e in edits.iter().rev() {
        text.replace_range(e.range.clone(), &e.text);
    }
    let before = super::analyze(sql);
    let after = super::analyze(&text);
    if before.statements.len() != after.statements.len() {
        return Err(ReplaceError::Verification(format!(
            "{} statement(s) before, {} after",
            before.statements.len(),
            after.statements.len()
        )));
    }
    for (b, a) in before.statements.iter().zip(&after.statements) {
        if !b.fallback && a.fallback {
            return Err(ReplaceError::Verification(format!(
                "the statement of line {} no longer parses",
                b.line
            )));
        }
    }
    Ok(IdentifierEdit { text, edits: count })
}
