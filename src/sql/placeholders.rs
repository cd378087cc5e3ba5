//! Template placeholders in SQL files: `${name}` (shell, Maven, Flink SQL client `-D`, benchmark scripts) and
//! `{{ name }}` (Jinja, Helm, Airflow).
//!
//! Real projects template table names and options (`FROM ${NEXMARK_TABLE}`, `'topic' = '{{ env }}.orders'`).
//! Flink itself never sees them: the tool that deploys the file substitutes them first. The front end keeps
//! each placeholder whole, as part of the name it is written in (`${env}_orders` stays `${env}_orders`,
//! never `$`), and reports every distinct placeholder once, at its first use, as unresolved
//! ([`super::WarningKind::Placeholder`]). Placeholders in comments are ignored; in strings and quoted
//! identifiers they are reported but need nothing else (the tokenizer already keeps them whole).
//!
//! How: before tokenizing, each placeholder outside strings, quoted identifiers and comments is replaced by
//! an identifier of the same length (`${NEXMARK_TABLE}` → `__NEXMARK_TABLE_`), so lines, columns and byte
//! offsets are unchanged; afterwards every reference whose span covers a placeholder gets its name back from
//! the original text under the span. Only single-line placeholders of ASCII text are masked (so that the
//! stand-in has the same byte and character length); others are reported but not masked. Cost: one pass
//! over the text, and none at all for a text without `${` or `{{`.

use std::collections::HashMap;
use std::ops::Range;

/// One placeholder found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// The placeholder as written, e.g. `${NEXMARK_TABLE}` or `{{ env }}`.
    pub text: String,
    /// Byte range in the file.
    pub range: Range<usize>,
    /// Whether it was replaced by a same-length identifier before tokenizing (outside quotes).
    pub masked: bool,
}

/// The placeholders of a text and, when any was masked, the masked copy of the text.
#[derive(Debug, Clone, Default)]
pub struct Masked {
    /// Every placeholder outside comments, in order.
    pub found: Vec<Placeholder>,
    /// The text with masked placeholders replaced (same byte length); `None` when nothing was masked.
    pub text: Option<String>,
}

/// Finds the placeholders of `sql` and masks those outside strings, quoted identifiers and comments.
pub fn mask(sql: &str) -> Masked {
    let mut out = Masked::default();
    if !sql.contains("${") && !sql.contains("{{") {
        return out;
    }
    let b = sql.as_bytes();
    let n = b.len();
    let mut i = 0;
    // The quote we are inside of (`'`, `"`, `` ` ``), if any.
    let mut quote: Option<u8> = None;
    while i < n {
        let c = b[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if let Some(end) = placeholder_end(b, i) {
                out.found.push(Placeholder {
                    text: sql[i..end].to_string(),
                    range: i..end,
                    masked: false,
                });
                i = end;
                continue;
            }
            i += 1;
            continue;
        }
        match c {
            b'\'' | b'"' | b'`' => quote = Some(c),
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = memchr_from(b, i, b'\n').unwrap_or(n);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = find_from(sql, i + 2, "*/").map(|e| e + 2).unwrap_or(n);
                continue;
            }
            _ => {
                if let Some(end) = placeholder_end(b, i) {
                    let text = &sql[i..end];
                    let maskable = text.is_ascii() && !text.contains('\n');
                    out.found.push(Placeholder {
                        text: text.to_string(),
                        range: i..end,
                        masked: maskable,
                    });
                    i = end;
                    continue;
                }
            }
        }
        i += 1;
    }
    if out.found.iter().any(|p| p.masked) {
        let mut bytes = b.to_vec();
        for p in out.found.iter().filter(|p| p.masked) {
            for k in p.range.clone() {
                if !bytes[k].is_ascii_alphanumeric() {
                    bytes[k] = b'_';
                }
            }
        }
        // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
        out.text = String::from_utf8(bytes).ok();
    }
    out
}

/// The end (exclusive) of a placeholder starting at `i`: `${…}` or `{{…}}` on one line, non-empty.
fn placeholder_end(b: &[u8], i: usize) -> Option<usize> {
    let (open, close): (&[u8], &[u8]) = match (b.get(i), b.get(i + 1)) {
        (Some(b'$'), Some(b'{')) => (b"${", b"}"),
        (Some(b'{'), Some(b'{')) => (b"{{", b"}}"),
        _ => return None,
    };
    let start = i + open.len();
    let mut j = start;
    while j < b.len() && b[j] != b'\n' && b[j] != b'\'' && b[j] != b';' {
        if b[j..].starts_with(close) {
            return (j > start).then_some(j + close.len());
        }
        j += 1;
    }
    None
}

fn memchr_from(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b[from..].iter().position(|&x| x == c).map(|p| from + p)
}

fn find_from(s: &str, from: usize, pat: &str) -> Option<usize> {
    s.get(from..)?.find(pat).map(|p| from + p)
}

/// The variable name of a placeholder as written: `${env}` → `env`, `{{ env }}` → `env`.
pub fn name_of(placeholder: &str) -> &str {
    placeholder
        .strip_prefix("${")
        .and_then(|p| p.strip_suffix('}'))
        .or_else(|| {
            placeholder
                .strip_prefix("{{")
                .and_then(|p| p.strip_suffix("}}"))
        })
        .unwrap_or(placeholder)
        .trim()
}

/// `text` with every placeholder whose name `vars` defines replaced by its value (in names, strings
/// and option values alike: what the deploying tool would send); other placeholders stay as written.
pub fn substitute(text: &str, vars: &std::collections::BTreeMap<String, String>) -> String {
    if vars.is_empty() || (!text.contains("${") && !text.contains("{{")) {
        return text.to_string();
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if let Some(end) = placeholder_end(b, i)
            && let Some(v) = vars.get(name_of(&text[i..end]))
        {
            out.push_str(&text[copied..i]);
            out.push_str(v);
            i = end;
            copied = end;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    out
}

/// Each distinct placeholder text with the byte offset of its first use and its number of uses, in order
/// of first use.
pub fn distinct(found: &[Placeholder]) -> Vec<(&str, usize, usize)> {
    let mut order: Vec<(&str, usize, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for p in found {
        match index.get(p.text.as_str()) {
            Some(&k) => order[k].2 += 1,
            None => {
                index.insert(&p.text, order.len());
                order.push((&p.text, p.range.start, 1));
            }
        }
    }
    order
}

/// Splits a name as written (`` `a`.b."c.d" ``, `${db}.orders`) into unquoted parts: `.` separates parts
/// outside quotes and outside placeholders; a doubled quote inside quotes is one quote character.
pub fn written_parts(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut braces = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let last = parts.len() - 1;
        match quote {
            Some(q) if c == q => {
                if chars.peek() == Some(&q) {
                    chars.next();
                    parts[last].push(q);
                } else {
                    quote = None;
                }
            }
            Some(_) => parts[last].push(c),
            None if c == '`' || c == '"' => quote = Some(c),
            None if c == '{' => {
                braces += 1;
                parts[last].push(c);
            }
            None if c == '}' => {
                braces = braces.saturating_sub(1);
                parts[last].push(c);
            }
            None if c == '.' && braces == 0 => parts.push(String::new()),
            None if c.is_whitespace() && braces == 0 => {}
            None => parts[last].push(c),
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_outside_quotes_and_keeps_lengths() {
        let sql = "SELECT * FROM ${T} -- ${c}\nWHERE x = '${v}' AND y = {{ z }}";
        let m = mask(sql);
        let text = m.text.unwrap();
        assert_eq!(text.len(), sql.len());
        assert_eq!(
            text,
            "SELECT * FROM __T_ -- ${c}\nWHERE x = '${v}' AND y = ___z___"
        );
        let found: Vec<(&str, bool)> = m
            .found
            .iter()
            .map(|p| (p.text.as_str(), p.masked))
            .collect();
        assert_eq!(
            found,
            vec![("${T}", true), ("${v}", false), ("{{ z }}", true)]
        );
    }

    #[test]
    fn no_placeholder_no_copy() {
        let m = mask("SELECT '{' FROM t WHERE a = '$'");
        assert!(m.found.is_empty() && m.text.is_none());
        assert!(mask("SELECT '${' FROM t").found.is_empty());
    }

    #[test]
    fn parts() {
        assert_eq!(written_parts("${db}.orders"), vec!["${db}", "orders"]);
        assert_eq!(written_parts("`a.b`.\"c\"\"d\""), vec!["a.b", "c\"d"]);
        assert_eq!(written_parts("{{ a.b }}_t"), vec!["{{ a.b }}_t"]);
    }
}
