//! A fast tokenizer for the common part of Flink SQL, giving exactly what sqlparser's tokenizer gives
//! with the Flink dialect once whitespace and comments are dropped and `>>` is split in two `>`
//! (`split::significant`), or nothing.
//!
//! sqlparser's tokenizer is general: it pushes one token per blank character, reads characters one by
//! one through a peekable iterator and builds a `String` for every token it skips. On the files of a
//! project it was a third of the time of a first scan. This one reads bytes, skips blanks and comments
//! without building them, and looks keywords up in a table without allocating.
//!
//! It covers ASCII words and numbers, quoted identifiers (`` `…` `` and `"…"`), strings (`'…'` with
//! `''`), `--` and `/* … */` comments (hints included), and the punctuation and operators Flink SQL
//! uses (`, ; ( ) [ ] . + - * / % = == => <> != < <= > >= >> || : ::`). Anything else — a non-ASCII
//! character outside a string, a comment or a quoted identifier, a prefixed string (`N'…'`, `X'…'`),
//! a number glued to a word (`0x1F`, `10m`), another operator, an unterminated string, comment or
//! quoted identifier — gives `None`, and the caller uses sqlparser's tokenizer, which also reports
//! the errors. The rules emulated are those of sqlparser 0.64's `Tokenizer::next_token` for a dialect
//! with [`super::dialect::FlinkDialect`]'s settings; `tests/testsuite/sql_lexer.rs` checks both give
//! the same tokens and spans on every SQL file of the corpus and on mutations of them.

use sqlparser::keywords::{ALL_KEYWORDS, ALL_KEYWORDS_INDEX, Keyword};
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Word};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

/// The significant tokens of `sql` with their spans (1-based lines and columns, columns in
/// characters, ends one past the last character), as sqlparser's tokenizer and `significant` give
/// them; `None` when the text holds anything this tokenizer does not cover (see the module docs).
pub fn tokenize_significant(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let mut lexer = Lexer {
        b: sql.as_bytes(),
        s: sql,
        i: 0,
        line: 1,
        col: 1,
        out: Vec::with_capacity(sql.len() / 5 + 4),
    };
    lexer.run()?;
    Some(lexer.out)
}

/// What [`tokenize_significant`] must give when it gives anything: sqlparser's tokens of `sql` with
/// the Flink dialect, without whitespace and comments, `>>` split in two `>`. `None` when sqlparser's
/// tokenizer reports an error. For tests comparing both.
pub fn reference_tokens(sql: &str) -> Option<Vec<TokenWithSpan>> {
    let mut raw = Vec::new();
    sqlparser::tokenizer::Tokenizer::new(&super::dialect::FlinkDialect, sql)
        .tokenize_with_location_into_buf(&mut raw)
        .ok()?;
    Some(super::split::significant(&mut raw))
}

struct Lexer<'a> {
    b: &'a [u8],
    s: &'a str,
    i: usize,
    line: u64,
    col: u64,
    out: Vec<TokenWithSpan>,
}

/// An ASCII character that continues a word (`FlinkDialect::is_identifier_part`, ASCII part).
fn word_part(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

impl Lexer<'_> {
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn here(&self) -> Location {
        Location::new(self.line, self.col)
    }

    /// Pushes `token` of `n` ASCII characters (no newline) starting here.
    fn push(&mut self, token: Token, n: usize) {
        let start = self.here();
        self.i += n;
        self.col += n as u64;
        self.out
            .push(TokenWithSpan::new(token, Span::new(start, self.here())));
    }

    /// Moves over `b[i..to]`, counting lines and characters.
    fn advance_to(&mut self, to: usize) {
        for &c in &self.b[self.i..to] {
            if c == b'\n' {
                self.line += 1;
                self.col = 1;
            } else if c & 0xC0 != 0x80 {
                self.col += 1;
            }
        }
        self.i = to;
    }

    fn run(&mut self) -> Option<()> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    self.i += 1;
                    self.col += 1;
                }
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.col = 1;
                }
                b'-' if self.at(1) == b'-' => {
                    // To the end of the line; the newline is a blank of its own.
                    let end = memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |k| self.i + k);
                    self.advance_to(end);
                }
                b'/' if self.at(1) == b'*' => {
                    // Not nested (the dialect has no nested comments): the first `*/` ends it.
                    let from = self.i + 2;
                    let end = find(&self.b[from..], b"*/")? + from + 2;
                    self.advance_to(end);
                }
                b'\'' => self.quoted(b'\'')?,
                b'`' | b'"' => self.quoted(c)?,
                b'0'..=b'9' => self.number()?,
                b'.' => match self.at(1) {
                    b'0'..=b'9' => self.number()?,
                    b'_' => return None,
                    _ => self.push(Token::Period, 1),
                },
                c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' => self.word()?,
                b',' => self.push(Token::Comma, 1),
                b';' => self.push(Token::SemiColon, 1),
                b'(' => self.push(Token::LParen, 1),
                b')' => self.push(Token::RParen, 1),
                b'[' => self.push(Token::LBracket, 1),
                b']' => self.push(Token::RBracket, 1),
                b'+' => self.push(Token::Plus, 1),
                b'*' => self.push(Token::Mul, 1),
                b'%' => self.push(Token::Mod, 1),
                b'/' => self.push(Token::Div, 1),
                b'-' => match self.at(1) {
                    b'>' => return None,
                    _ => self.push(Token::Minus, 1),
                },
                b'=' => match self.at(1) {
                    b'>' => self.push(Token::RArrow, 2),
                    b'=' => self.push(Token::DoubleEq, 2),
                    _ => self.push(Token::Eq, 1),
                },
                b'!' => match self.at(1) {
                    b'=' => self.push(Token::Neq, 2),
                    _ => return None,
                },
                b'<' => match self.at(1) {
                    b'=' if self.at(2) == b'>' => return None,
                    b'=' => self.push(Token::LtEq, 2),
                    b'>' => self.push(Token::Neq, 2),
                    b'<' | b'@' => return None,
                    _ => self.push(Token::Lt, 1),
                },
                b'>' => match self.at(1) {
                    b'=' => self.push(Token::GtEq, 2),
                    // `>>` (sqlparser's ShiftRight) ends nested types: two `>`, as `significant` does.
                    b'>' => {
                        self.push(Token::Gt, 1);
                        self.push(Token::Gt, 1);
                    }
                    _ => self.push(Token::Gt, 1),
                },
                b'|' => match (self.at(1), self.at(2)) {
                    (b'|', b'/') => return None,
                    (b'|', _) => self.push(Token::StringConcat, 2),
                    _ => return None,
                },
                b':' => match self.at(1) {
                    b':' => self.push(Token::DoubleColon, 2),
                    b'=' => return None,
                    _ => self.push(Token::Colon, 1),
                },
                _ => return None,
            }
        }
        Some(())
    }

    /// A string (`'`) or a quoted identifier (`` ` ``, `"`): a doubled quote stands for one.
    fn quoted(&mut self, q: u8) -> Option<()> {
        let start = self.here();
        let from = self.i + 1;
        let mut value = String::new();
        let mut seg = from;
        let mut k = from;
        let end = loop {
            let at = memchr(q, &self.b[k..])? + k;
            if self.b.get(at + 1) == Some(&q) {
                // `''`: one quote, kept; the text goes on after the second.
                value.push_str(&self.s[seg..=at]);
                seg = at + 2;
                k = at + 2;
            } else {
                value.push_str(&self.s[seg..at]);
                break at + 1;
            }
        };
        self.advance_to(end);
        let token = if q == b'\'' {
            Token::SingleQuotedString(value)
        } else {
            Token::Word(Word {
                value,
                quote_style: Some(q as char),
                keyword: Keyword::NoKeyword,
            })
        };
        self.out
            .push(TokenWithSpan::new(token, Span::new(start, self.here())));
        Some(())
    }

    /// An unquoted word: a keyword or an identifier.
    fn word(&mut self) -> Option<()> {
        let from = self.i;
        let mut to = from + 1;
        while to < self.b.len() && word_part(self.b[to]) {
            to += 1;
        }
        // A non-ASCII letter may go on the word; a quote right after it may make a prefixed string
        // (`N'…'`, `X'…'`): sqlparser decides those.
        if matches!(self.b.get(to), Some(c) if *c >= 0x80 || *c == b'\'' || *c == b'"') {
            return None;
        }
        let text = &self.s[from..to];
        let token = Token::Word(Word {
            value: text.to_string(),
            quote_style: None,
            keyword: keyword(text),
        });
        self.push(token, to - from);
        Some(())
    }

    /// A number: digits, an optional `.` and digits, an optional exponent, an optional `L`.
    fn number(&mut self) -> Option<()> {
        let b = self.b;
        let from = self.i;
        let digits = |mut k: usize| {
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            k
        };
        let mut k = digits(from);
        if b.get(k) == Some(&b'.') {
            k = digits(k + 1);
        }
        if matches!(b.get(k), Some(b'e' | b'E')) {
            let mut e = k + 1;
            if matches!(b.get(e), Some(b'+' | b'-')) {
                e += 1;
            }
            if b.get(e).is_some_and(u8::is_ascii_digit) {
                k = digits(e);
            }
        }
        let text_end = k;
        let long = b.get(k) == Some(&b'L');
        if long {
            k += 1;
        }
        // Glued to a word (`0x1F`, `10m`, `1e`), or a non-ASCII character: sqlparser decides.
        if matches!(b.get(k), Some(c) if word_part(*c) || *c >= 0x80) {
            return None;
        }
        let token = Token::Number(self.s[from..text_end].to_string(), long);
        self.push(token, k - from);
        Some(())
    }
}

/// The keyword an unquoted ASCII word is (case-insensitive), as sqlparser's `keyword_lookup`.
fn keyword(word: &str) -> Keyword {
    static TABLE: OnceLock<HashMap<u128, Keyword, BuildHasherDefault<PackedHasher>>> =
        OnceLock::new();
    // Words of at most 16 bytes, upper-cased into one integer: no allocation, one hash.
    let pack = |w: &[u8]| {
        let mut v = 0u128;
        for &c in w {
            v = (v << 8) | u128::from(c.to_ascii_uppercase());
        }
        v
    };
    if word.len() > 16 {
        return ALL_KEYWORDS
            .iter()
            .position(|k| k.eq_ignore_ascii_case(word))
            .map_or(Keyword::NoKeyword, |x| ALL_KEYWORDS_INDEX[x]);
    }
    let table = TABLE.get_or_init(|| {
        ALL_KEYWORDS
            .iter()
            .zip(ALL_KEYWORDS_INDEX)
            .filter(|(k, _)| k.len() <= 16)
            .map(|(k, kw)| (pack(k.as_bytes()), *kw))
            .collect()
    });
    table
        .get(&pack(word.as_bytes()))
        .copied()
        .unwrap_or(Keyword::NoKeyword)
}

/// Hashes a packed word (one `u128`) with one multiplication: the keys are few and short, SipHash's
/// defence against chosen keys buys nothing here, and its rounds showed in the scan's profile.
#[derive(Default)]
struct PackedHasher(u64);

impl std::hash::Hasher for PackedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u128(&mut self, v: u128) {
        let folded = (v as u64) ^ ((v >> 64) as u64).rotate_left(29);
        self.0 = (folded ^ (folded >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

fn memchr(c: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == c)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_the_tokens_and_spans_of_sqlparser() {
        for sql in [
            "SELECT a, b.c FROM t WHERE x >= 1.5e3 AND y <> 'it''s' -- done\n;",
            "INSERT INTO `my``t` SELECT \"Q\", CAST(x AS ARRAY<ROW<a INT>>) FROM s /*+ OPTIONS('k'='v') */;",
            "CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)\r\nWITH ('connector' = 'kafka');",
            "SELECT 'é, ü' || x, .5, 1., 10L, a[1], m['k'], f(DATA => TABLE t) FROM t; /* ü */ x::INT != 2",
            "SELECT CURRENT_TIMESTAMP, $rowtime, _x, A_VERY_LONG_IDENTIFIER_NAME_OVER_16 FROM t",
            "",
            "  \n\t ",
        ] {
            let fast = tokenize_significant(sql).expect(sql);
            assert_eq!(Some(fast), reference_tokens(sql), "{sql}");
        }
    }

    #[test]
    fn leaves_what_it_does_not_cover_to_sqlparser() {
        for sql in [
            "SELECT N'x'",
            "SELECT X'00'",
            "SELECT 0x1F",
            "SELECT 10m",
            "SELECT é FROM t",
            "SELECT 'unterminated",
            "SELECT `unterminated",
            "SELECT 1 /* unterminated",
            "SELECT a -> b",
            "SELECT ?",
            "SELECT a | b",
            "SELECT @x",
            "SELECT a <=> b",
            "SELECT {a}",
        ] {
            assert_eq!(tokenize_significant(sql), None, "{sql}");
        }
    }

    #[test]
    fn keywords_are_found_whatever_their_case() {
        for (w, k) in [
            ("select", Keyword::SELECT),
            ("SeLeCt", Keyword::SELECT),
            ("CURRENT_TIMESTAMP", Keyword::CURRENT_TIMESTAMP),
            ("insert", Keyword::INSERT),
            ("foo", Keyword::NoKeyword),
        ] {
            assert_eq!(keyword(w), k, "{w}");
        }
        for (k, kw) in ALL_KEYWORDS.iter().zip(ALL_KEYWORDS_INDEX) {
            assert_eq!(keyword(k), *kw, "{k}");
            assert_eq!(keyword(&k.to_ascii_lowercase()), *kw, "{k}");
        }
    }
}
