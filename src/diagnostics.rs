//! Diagnostics: problems found in a project, each naming the file, line and construct.
//!
//! Commands collect diagnostics instead of stopping at the first problem; any `Error` makes the command
//! exit with status 1 and (for commands that write) leaves every file as it was.

use serde::Serialize;
use std::fmt;

/// Every warning class (the `code` of a warning diagnostic) that reading a project can report: what
/// `pipeline validate --deny CLASS` accepts. A class not listed here is a usage error with the closest
/// one, so a typo in a CI gate never silently denies nothing.
pub const WARNING_CLASSES: &[&str] = &[
    "sql-fallback",
    "sql-missing-semicolon",
    "sql-syntax",
    "sql-placeholder",
    "scaffold-todo",
    "empty-file",
    "self-reference",
    "unknown-table",
    "unknown-layer",
    "several-tables-in-ddl",
    "external-declared-twice",
    "external-defined",
    "file-outside-sql-scripts",
    "symlink-loop",
    "stale-temporary-files",
    "interrupted-write",
    "unknown-column",
];

/// The warning classes `pipeline validate --strict` makes errors: a statement was not read as Flink
/// reads it (the parser rejected it and the token-level fallback estimated its references and state; a
/// `;` is missing; Flink does not accept it as written; a placeholder no variable resolved, so the SQL
/// sent would hold it), a column its table's DDL does not have (Flink rejects the statement), or a
/// decision `table init` left to the user (`TODO(flinkpipe)`).
pub const STRICT_CLASSES: &[&str] = &[
    "sql-fallback",
    "sql-missing-semicolon",
    "sql-syntax",
    "sql-placeholder",
    "unknown-column",
    "scaffold-todo",
];

/// A warning class the user asked to treat as an error (`pipeline validate --deny CLASS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeniedClass {
    /// `--deny all`: every warning.
    All,
    /// One class of [`WARNING_CLASSES`].
    Code(&'static str),
}

impl DeniedClass {
    /// Parses `all` or a class of [`WARNING_CLASSES`].
    ///
    /// Errors: an unknown class, with the closest known one (`did you mean 'sql-fallback'?`) and the
    /// list.
    pub fn parse(text: &str) -> Result<DeniedClass, String> {
        if text == "all" {
            return Ok(DeniedClass::All);
        }
        if let Some(c) = WARNING_CLASSES.iter().find(|c| **c == text) {
            return Ok(DeniedClass::Code(c));
        }
        let hint = closest(text, WARNING_CLASSES.iter().copied())
            .map(|c| format!("did you mean '{c}'? "))
            .unwrap_or_default();
        Err(format!(
            "unknown warning class '{text}': {hint}the classes are all, {}",
            WARNING_CLASSES.join(", ")
        ))
    }

    /// Whether a diagnostic of class `code` is denied.
    pub fn covers(self, code: &str) -> bool {
        match self {
            DeniedClass::All => true,
            DeniedClass::Code(c) => c == code,
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// One finding. `file` is relative to the parent of the pipelines folder (`pipelines/facts/…`), as in the
/// inventory; `line`/`column` are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable kebab-case identifier of the check, e.g. `duplicate-table`, `unknown-table`, `sql-fallback`.
    pub code: &'static str,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            file: None,
            line: None,
            column: None,
            message: message.into(),
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Attaches a file (and optionally a line and column).
    pub fn at(
        mut self,
        file: impl Into<String>,
        line: Option<usize>,
        column: Option<usize>,
    ) -> Self {
        self.file = Some(file.into());
        self.line = line;
        self.column = column;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    /// `error[unknown-table]: pipelines/facts/p1/x/sql-scripts/dml.x.sql:12:8: message`
    ///
    /// Control characters in the file and the message (a folder named with an escape sequence, a tab
    /// or a newline) are shown escaped (`\x1b`, `\t`, `\n`, `\0`), so a name cannot restyle the terminal
    /// or fake another line. `--output json` keeps the exact text (JSON escapes them itself).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{sev}[{}]: ", self.code)?;
        if let Some(file) = &self.file {
            write!(f, "{}", escape_controls(file))?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
                if let Some(col) = self.column {
                    write!(f, ":{col}")?;
                }
            }
            write!(f, ": ")?;
        }
        f.write_str(&escape_controls(&self.message))
    }
}

/// `text` with its control characters (C0, DEL, C1) escaped: `\t`, `\n`, `\r`, `\0`, else `\x1b` /
/// `\u{9b}`. Other characters, accented letters included, are kept.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

impl Diagnostic {
    /// The diagnostic as text: the one-line form of `Display`, followed — when the diagnostic has a line
    /// and `source` (the text of its file) is given — by a snippet of that line with a caret under the
    /// construct, as compilers print them:
    ///
    /// ```text
    /// error[unknown-table]: pipelines/facts/f/sql-scripts/dml.f.sql:3:6: table 'f' reads 'src_typo', …
    ///   |
    /// 3 | FROM src_typo t
    ///   |      ^^^^^^^^
    /// ```
    pub fn render(&self, source: Option<&str>) -> String {
        let mut out = self.to_string();
        if let (Some(src), Some(line)) = (source, self.line)
            && let Some(snip) = snippet(src, line, self.column)
        {
            out.push('\n');
            out.push_str(&snip);
        }
        out
    }
}

/// The snippet of `source` at 1-based `line` (and `column`, in characters): a gutter line, the source
/// line and, with a column, a caret line underlining the word, quoted name or single character found
/// there. Tabs are shown as four spaces. `None` when the file has no such line.
pub fn snippet(source: &str, line: usize, column: Option<usize>) -> Option<String> {
    let text = source.lines().nth(line.checked_sub(1)?)?;
    let text = text.strip_suffix('\r').unwrap_or(text);
    let num = line.to_string();
    let pad = " ".repeat(num.len());
    let chars: Vec<char> = text.chars().collect();
    let col = column.filter(|c| *c > 0);
    // A very long line (minified or generated SQL) is shown as a window around the column.
    let at = col.map_or(0, |c| (c - 1).min(chars.len()));
    let (from, to) = if chars.len() <= SNIPPET_WIDTH {
        (0, chars.len())
    } else {
        let from = at.saturating_sub(SNIPPET_WIDTH / 3);
        (from, (from + SNIPPET_WIDTH).min(chars.len()))
    };
    let (lead, tail) = (
        if from > 0 { "…" } else { "" },
        if to < chars.len() { "…" } else { "" },
    );
    // Tabs as four spaces, other control characters escaped (as in the message line).
    let show = |c: char| -> std::borrow::Cow<'static, str> {
        match c {
            '\t' => "    ".into(),
            c if c.is_control() => escape_controls(&c.to_string()).into_owned().into(),
            c => c.to_string().into(),
        }
    };
    let shown: String = chars[from..to].iter().map(|&c| show(c)).collect();
    let mut out = format!("{pad} |\n{num} | {lead}{}{tail}", shown.trim_end());
    if col.is_some() {
        let width = construct_width(&chars[at..to.max(at)]).max(1);
        let indent: usize = lead.chars().count()
            + chars[from..at]
                .iter()
                .map(|&c| show(c).chars().count())
                .sum::<usize>();
        out.push_str(&format!(
            "\n{pad} | {}{}",
            " ".repeat(indent),
            "^".repeat(width)
        ));
    }
    Some(out)
}

/// The most characters of a source line a snippet shows.
const SNIPPET_WIDTH: usize = 160;

/// Length of the construct starting a line's remainder: an identifier/number, a quoted name or string
/// (up to its closing quote), else one character (0 at the end of the line).
fn construct_width(rest: &[char]) -> usize {
    let Some(&first) = rest.first() else { return 0 };
    if first.is_alphanumeric() || first == '_' {
        rest.iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '.')
            .count()
    } else if matches!(first, '`' | '\'' | '"') {
        rest[1..]
            .iter()
            .position(|c| *c == first)
            .map_or(1, |end| end + 2)
    } else {
        1
    }
}

/// Sorts diagnostics (errors first, then by file, line) and removes exact duplicates.
pub fn normalize(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| {
        b.severity.cmp(&a.severity).then_with(|| {
            (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
        })
    });
    diags.dedup();
}

/// The "did you mean" of every message about an unknown name: the candidate nearest to `wanted` by edit distance, ignoring case, within a third of its length (at
/// least 2); `None` when nothing is that close. Ties go to the first candidate.
pub fn closest<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (wanted.chars().count() / 3).max(2);
    let wanted = wanted.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        // Case is not a typo worth a distance: `INT_B` is `int_b`.
        let d = levenshtein(&wanted, &c.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein("fct_ordr", "fct_order"), 1);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(
            closest("fct_ordr", ["fct_user", "fct_order"].into_iter()),
            Some("fct_order".into())
        );
        assert_eq!(closest("zzz", ["fct_order"].into_iter()), None);
    }

    #[test]
    fn control_characters_are_escaped_in_text() {
        let d = Diagnostic::error("e", "folder 'a\u{1b}[31mred' and\nfake\0").at(
            "pipelines/x\ty\u{9b}",
            None,
            None,
        );
        assert_eq!(
            d.to_string(),
            "error[e]: pipelines/x\\ty\\u{9b}: folder 'a\\x1b[31mred' and\\nfake\\0"
        );
        assert_eq!(escape_controls("café"), "café");
    }

    #[test]
    fn snippet_points_at_the_construct() {
        let src = "INSERT INTO f\nSELECT a.id\nFROM src_typo t;\n";
        let d =
            Diagnostic::error("unknown-table", "unknown 'src_typo'").at("x.sql", Some(3), Some(6));
        assert_eq!(
            d.render(Some(src)),
            "error[unknown-table]: x.sql:3:6: unknown 'src_typo'\n  |\n3 | FROM src_typo t;\n  |      ^^^^^^^^"
        );
    }

    #[test]
    fn snippet_handles_quotes_tabs_and_line_ends() {
        assert_eq!(
            snippet("\tSELECT `user`\n", 1, Some(9)).unwrap(),
            "  |\n1 |     SELECT `user`\n  |            ^^^^^^"
        );
        // past the end of the line (errors at end of input): one caret after the text
        assert_eq!(
            snippet("a (", 1, Some(4)).unwrap(),
            "  |\n1 | a (\n  |    ^"
        );
        // a long line: a window around the column, marked with ellipses
        let long = format!(
            "{}FROM src_typo t{}",
            "a, ".repeat(1000),
            " ,b".repeat(1000)
        );
        let snip = snippet(&long, 1, Some(3001)).unwrap();
        let lines: Vec<&str> = snip.lines().collect();
        assert!(
            lines[1].starts_with("1 | …") && lines[1].ends_with('…'),
            "{snip}"
        );
        assert!(lines[1].chars().count() < 200);
        let caret = lines[2].find('^').unwrap();
        let under: String = lines[1].chars().skip(caret).take(4).collect();
        assert_eq!(under, "FROM", "{snip}");
        // no column: the line alone; no such line: nothing
        assert_eq!(snippet("x\ny\n", 2, None).unwrap(), "  |\n2 | y");
        assert_eq!(snippet("x\n", 5, Some(1)), None);
        let d = Diagnostic::warning("w", "m");
        assert_eq!(d.render(Some("x")), "warning[w]: m");
    }
}
