//! Splitting a file into top-level statements with sqlparser's tokenizer.
//!
//! `;` ends a statement only outside strings, quoted identifiers, comments and hints (the tokenizer knows
//! them) and outside statement sets: `EXECUTE STATEMENT SET BEGIN … END;` and the SQL client's
//! `BEGIN STATEMENT SET; … END;` each become ONE unit (Flink runs a statement set as one job, and the REST
//! APIs take one statement per call). Cost: one tokenizer pass, linear in the file.

use std::ops::Range;

use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer};

use super::model::{SqlWarning, WarningKind};

/// One top-level statement of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementUnit {
    /// 1-based line of the first token.
    pub line: usize,
    /// 1-based column (in characters) of the first token.
    pub column: usize,
    /// Byte range of the statement in the file: first token to last token, without the final `;`.
    pub byte_range: Range<usize>,
    /// Range of the statement's tokens in [`SplitFile::tokens`].
    pub tokens: Range<usize>,
    /// `EXECUTE STATEMENT SET BEGIN … END` or `BEGIN STATEMENT SET; … END`.
    pub statement_set: bool,
}

/// A tokenized file and its statements.
#[derive(Debug, Clone, Default)]
pub struct SplitFile {
    /// Significant tokens (no whitespace, comments or hints), with their spans in the file.
    pub tokens: Vec<TokenWithSpan>,
    /// Statements in file order, as `;` separates them. Each gives one entry of
    /// [`FileAnalysis::statements`](super::FileAnalysis::statements), or several when the parser rejects
    /// it and it holds statements that lost their `;` (see `resync`).
    pub statements: Vec<StatementUnit>,
    /// Tokenizer errors (unterminated string, comment or quoted identifier). The text from the error to the
    /// end of the file is not analysed.
    pub warnings: Vec<SqlWarning>,
}

/// Maps line/column locations (1-based, columns in characters) to byte offsets.
///
/// Cost: one pass over the text to build; each lookup is O(1) on an ASCII line and O(1) plus at most
/// 64 characters on any other line (minified SQL puts a whole file on one line, so a
/// lookup that walked the line from its start made analysis quadratic).
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// For each line that is not pure ASCII: the byte offset of every [`CHECKPOINT_CHARS`]-th character.
    checkpoints: std::collections::HashMap<usize, Vec<usize>>,
}

/// Characters between two checkpoints of a non-ASCII line of a [`LineIndex`].
const CHECKPOINT_CHARS: usize = 64;

impl<'a> LineIndex<'a> {
    /// Indexes the line starts of `text`.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut checkpoints = std::collections::HashMap::new();
        if !text.is_ascii() {
            for (n, &start) in starts.iter().enumerate() {
                let end = starts.get(n + 1).copied().unwrap_or(text.len());
                let line = &text[start..end];
                if !line.is_ascii() {
                    let marks = line
                        .char_indices()
                        .step_by(CHECKPOINT_CHARS)
                        .map(|(i, _)| start + i)
                        .collect();
                    checkpoints.insert(n, marks);
                }
            }
        }
        LineIndex {
            text,
            starts,
            checkpoints,
        }
    }

    /// Byte offset of a location; clamps to the text.
    pub fn offset(&self, loc: Location) -> usize {
        let line = (loc.line as usize).max(1);
        let Some(&start) = self.starts.get(line - 1) else {
            return self.text.len();
        };
        let end = self.starts.get(line).copied().unwrap_or(self.text.len());
        let col = (loc.column as usize).max(1) - 1;
        let walk = |from: usize, chars: usize| match self.text[from..].char_indices().nth(chars) {
            Some((i, _)) => from + i,
            None => self.text.len(),
        };
        match self.checkpoints.get(&(line - 1)) {
            // An ASCII line: characters are bytes (up to and including its newline).
            None if start + col <= end => start + col,
            Some(marks) if col / CHECKPOINT_CHARS < marks.len() => {
                walk(marks[col / CHECKPOINT_CHARS], col % CHECKPOINT_CHARS)
            }
            // A column past the line's end (not produced by the tokenizer): walk on, as characters.
            _ => walk(start, col),
        }
    }

    /// The 1-based line and column (in characters) of a byte offset (clamped to the text); the inverse of
    /// [`LineIndex::offset`]. Cost as for `offset`, plus a binary search for the line.
    pub fn location(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = match self.checkpoints.get(&(line - 1)) {
            None => offset - start,
            Some(marks) => {
                let k = marks.partition_point(|&m| m <= offset).max(1) - 1;
                let mark = marks.get(k).copied().unwrap_or(start);
                k * CHECKPOINT_CHARS
                    + self
                        .text
                        .get(mark..offset)
                        .map(|t| t.chars().count())
                        .unwrap_or(0)
            }
        };
        (line, column + 1)
    }

    /// Byte range of a span.
    pub fn range(&self, span: Span) -> Range<usize> {
        let s = self.offset(span.start);
        s..self.offset(span.end).max(s)
    }
}

/// Tokenizes `sql` and splits it into statements.
pub fn split(dialect: &dyn Dialect, sql: &str) -> SplitFile {
    split_indexed(dialect, sql, &LineIndex::new(sql))
}

/// Files larger than this (1 MiB) have their token buffer reserved for the worst case up front.
const RESERVE_FROM_BYTES: usize = 1 << 20;

/// Most tokens a thread keeps in its reusable tokenizer buffer between files (about 6 MB); a larger
/// buffer, left by a huge file, is freed instead.
const KEEP_RAW_TOKENS: usize = 1 << 16;

thread_local! {
    /// The tokenizer's output buffer, reused across files: the tokenizer emits about one token per two
    /// bytes (whitespace runs included), and growing a fresh vector file after file was a tenth of
    /// the parse time (realloc + memcpy of ~90-byte tokens).
    static RAW_TOKENS: std::cell::RefCell<Vec<TokenWithSpan>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`split`] with the caller's line index of `sql` (so a file is indexed once).
pub(crate) fn split_indexed(dialect: &dyn Dialect, sql: &str, lines: &LineIndex) -> SplitFile {
    let mut out = SplitFile::default();
    // The fast tokenizer covers most files; what it does not cover (and every error) is sqlparser's.
    if dialect.dialect() == std::any::TypeId::of::<super::dialect::FlinkDialect>()
        && let Some(tokens) = super::lexer::tokenize_significant(sql)
    {
        out.tokens = tokens;
        out.statements = units(&out.tokens, lines);
        return out;
    }
    RAW_TOKENS.with(|cell| {
        let mut raw = cell.borrow_mut();
        raw.clear();
        if sql.len() > RESERVE_FROM_BYTES {
            // At most one token per byte: reserved up front, a large file's buffer is never copied into
            // a doubled one (which held both at once); untouched reserved pages cost no memory.
            raw.reserve(sql.len() + 1);
        }
        if let Err(e) = Tokenizer::new(dialect, sql).tokenize_with_location_into_buf(&mut raw) {
            out.warnings.push(SqlWarning {
                line: e.location.line as usize,
                column: e.location.column as usize,
                message: format!("tokenizer: {}", e.message),
                kind: WarningKind::Tokenizer,
            });
            // Analyse what precedes the error.
            let mut cut = lines.offset(e.location).min(sql.len());
            while !sql.is_char_boundary(cut) {
                cut -= 1;
            }
            raw.clear();
            if Tokenizer::new(dialect, &sql[..cut])
                .tokenize_with_location_into_buf(&mut raw)
                .is_err()
            {
                // The tokenizer reports an unterminated comment, string or quoted identifier where the
                // input ends, not where the construct starts: cut before the last opener that leaves a
                // prefix the tokenizer accepts, so the statements before it keep their references.
                raw.clear();
                let openers = sql[..cut]
                    .match_indices(['\'', '"', '`', '/'])
                    .map(|(i, _)| i);
                let mut candidates: Vec<usize> = openers.collect();
                candidates.reverse();
                for at in candidates.into_iter().take(64) {
                    raw.clear();
                    if Tokenizer::new(dialect, &sql[..at])
                        .tokenize_with_location_into_buf(&mut raw)
                        .is_ok()
                    {
                        break;
                    }
                    raw.clear();
                }
            }
        }
        if raw.len() > KEEP_RAW_TOKENS {
            // A large file: compact in place rather than copy, so that the raw and the significant
            // tokens are not both held (tokens are ~90 bytes, about one per two bytes of text).
            let mut own = std::mem::take(&mut *raw);
            own.retain(|t| !matches!(t.token, Token::Whitespace(_)));
            // Not shrunk: a reallocation would hold both copies at once, the peak this avoids.
            out.tokens = if own.iter().any(|t| t.token == Token::ShiftRight) {
                significant(&mut own)
            } else {
                own
            };
        } else {
            out.tokens = significant(&mut raw);
            if raw.capacity() > KEEP_RAW_TOKENS {
                *raw = Vec::new();
            }
        }
    });
    out.statements = units(&out.tokens, lines);
    out
}

/// Moves the significant tokens out of `raw` (leaving it empty): drops whitespace and comments (hints
/// `/*+ … */` are comments to the tokenizer), and splits `>>` into two `>`: Flink has no shift operator,
/// and nested types (`ARRAY<ROW<a INT>>`) end with `>>`.
pub(crate) fn significant(raw: &mut Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let count = raw
        .iter()
        .map(|t| match t.token {
            Token::Whitespace(_) => 0,
            Token::ShiftRight => 2,
            _ => 1,
        })
        .sum();
    let mut out = Vec::with_capacity(count);
    for t in raw.drain(..) {
        match t.token {
            Token::Whitespace(_) => {}
            Token::ShiftRight => {
                let mid = Location::new(t.span.start.line, t.span.start.column + 1);
                out.push(TokenWithSpan::new(Token::Gt, Span::new(t.span.start, mid)));
                out.push(TokenWithSpan::new(Token::Gt, Span::new(mid, t.span.end)));
            }
            _ => out.push(t),
        }
    }
    out
}

fn kw(t: Option<&TokenWithSpan>, k: Keyword) -> bool {
    matches!(t, Some(TokenWithSpan { token: Token::Word(w), .. }) if w.quote_style.is_none() && w.keyword == k)
}

/// Length of a statement-set header at `i` (`EXECUTE STATEMENT SET BEGIN` or `BEGIN STATEMENT SET ;`), if any.
pub(crate) fn set_header(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    let at = |k: usize| tokens.get(i + k);
    if kw(at(0), Keyword::EXECUTE)
        && kw(at(1), Keyword::STATEMENT)
        && kw(at(2), Keyword::SET)
        && kw(at(3), Keyword::BEGIN)
    {
        return Some(4);
    }
    if kw(at(0), Keyword::BEGIN) && kw(at(1), Keyword::STATEMENT) && kw(at(2), Keyword::SET) {
        return Some(
            if matches!(at(3).map(|t| &t.token), Some(Token::SemiColon)) {
                4
            } else {
                3
            },
        );
    }
    None
}

fn units(tokens: &[TokenWithSpan], lines: &LineIndex) -> Vec<StatementUnit> {
    let mut out = Vec::new();
    let mut i = 0;
    let n = tokens.len();
    while i < n {
        if tokens[i].token == Token::SemiColon {
            i += 1;
            continue;
        }
        let start = i;
        let mut statement_set = false;
        let end;
        if let Some(h) = set_header(tokens, i) {
            statement_set = true;
            // Inside a set, `END` closes it only where a member statement could start (after the header or
            // a `;`), so `CASE … END` inside a member is not mistaken for it.
            let mut j = i + h;
            let mut at_member_start = true;
            loop {
                if j >= n {
                    end = n;
                    break;
                }
                let t = &tokens[j];
                if at_member_start && kw(Some(t), Keyword::END) {
                    end = j + 1;
                    j += 1;
                    break;
                }
                at_member_start = t.token == Token::SemiColon;
                j += 1;
            }
            i = j;
        } else {
            let mut j = i;
            while j < n && tokens[j].token != Token::SemiColon {
                j += 1;
            }
            end = j;
            i = j;
        }
        let first = &tokens[start];
        let last = &tokens[end - 1];
        out.push(StatementUnit {
            line: first.span.start.line as usize,
            column: first.span.start.column as usize,
            byte_range: lines.offset(first.span.start)
                ..lines
                    .offset(last.span.end)
                    .max(lines.offset(first.span.start)),
            tokens: start..end,
            statement_set,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::FlinkDialect;

    fn texts(sql: &str) -> Vec<(usize, String, bool)> {
        let f = split(&FlinkDialect, sql);
        f.statements
            .iter()
            .map(|u| {
                (
                    u.line,
                    sql[u.byte_range.clone()].to_string(),
                    u.statement_set,
                )
            })
            .collect()
    }

    #[test]
    fn unterminated_comment_keeps_the_statement_before_it() {
        let f = split(&FlinkDialect, "INSERT INTO t SELECT id FROM s /* oops\n;");
        assert_eq!(f.warnings.len(), 1);
        assert_eq!(f.statements.len(), 1);
        let a = crate::sql::analyze("INSERT INTO t SELECT id FROM s /* oops\n;");
        assert_eq!(a.sinks(), vec![crate::sql::TableName::new(["t"])]);
        assert_eq!(a.sources(), vec![crate::sql::TableName::new(["s"])]);
        assert!(!a.warnings.is_empty());
    }

    #[test]
    fn empty_and_comment_only() {
        assert!(texts("").is_empty());
        assert!(texts("  \n\t ").is_empty());
        assert!(texts("-- only a comment\n/* block */ ;; ;").is_empty());
    }

    #[test]
    fn semicolons_in_strings_comments_and_identifiers() {
        let sql = "SELECT ';' AS a -- ; not here\nFROM `t;1` /* ; */;\nINSERT INTO x SELECT \"a;b\" FROM y";
        let got = texts(sql);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 1);
        assert_eq!(got[0].1, "SELECT ';' AS a -- ; not here\nFROM `t;1`");
        assert_eq!(
            got[1],
            (3, "INSERT INTO x SELECT \"a;b\" FROM y".to_string(), false)
        );
    }

    #[test]
    fn hints_are_not_boundaries() {
        let got = texts("INSERT INTO t /*+ OPTIONS('a'=';') */ SELECT 1;");
        assert_eq!(got.len(), 1);
    }

    #[test]
    fn execute_statement_set_is_one_unit() {
        let sql = "EXECUTE STATEMENT SET BEGIN\n INSERT INTO a SELECT CASE WHEN x THEN 1 END FROM s;\n INSERT INTO b SELECT * FROM s;\nEND;\nSELECT 1;";
        let got = texts(sql);
        assert_eq!(got.len(), 2);
        assert!(got[0].2);
        assert!(got[0].1.ends_with("END"));
        assert_eq!(got[1].0, 5);
    }

    #[test]
    fn begin_statement_set_is_regrouped() {
        let sql = "SET 'a' = 'b';\nBEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM s;\nINSERT INTO b SELECT * FROM s;\nEND;\n";
        let got = texts(sql);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, 2);
        assert!(got[1].2);
        assert!(got[1].1.starts_with("BEGIN STATEMENT SET;"));
        assert!(got[1].1.ends_with("END"));
    }

    #[test]
    fn unterminated_set_and_string_do_not_panic() {
        let got = texts("BEGIN STATEMENT SET; INSERT INTO a SELECT 1");
        assert_eq!(got.len(), 1);
        // The tokenizer stops at the unterminated string: what precedes it is kept, the rest is reported.
        let f = split(&FlinkDialect, "SELECT 1; SELECT 'oops");
        assert_eq!(f.statements.len(), 2);
        assert_eq!(f.warnings.len(), 1);
        assert_eq!((f.warnings[0].line, f.warnings[0].column), (1, 18));
    }

    #[test]
    fn locations_and_offsets_are_inverse() {
        let long = format!("{}é{}", "a".repeat(200), "b".repeat(100));
        for text in ["", "abc\ndéf\n\nxyz", long.as_str(), "é\r\nü"] {
            let idx = LineIndex::new(text);
            for (offset, _) in text.char_indices() {
                let (line, column) = idx.location(offset);
                let back = idx.offset(Location::new(line as u64, column as u64));
                assert_eq!(back, offset, "{text:?} at {offset}");
            }
        }
    }

    #[test]
    fn byte_ranges_with_multibyte_text() {
        let sql = "-- héllo ü\nSELECT 'é' FROM t;  INSERT INTO u SELECT 1";
        let got = texts(sql);
        assert_eq!(got[0].1, "SELECT 'é' FROM t");
        assert_eq!(got[1].1, "INSERT INTO u SELECT 1");
    }
}
