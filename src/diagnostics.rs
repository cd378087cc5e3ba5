//! Diagnostics: problems found in a project, each naming the file, line and construct.
//!
//! Commands collect diagnostics instead of stopping at the first problem; any `Error` makes the command
//! exit with status 1 and (for commands that write) leaves every file as it was.

use serde::Serialize;
use std::fmt;

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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{sev}[{}]: ", self.code)?;
        if let Some(file) = &self.file {
            write!(f, "{file}")?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
                if let Some(col) = self.column {
                    write!(f, ":{col}")?;
                }
            }
            write!(f, ": ")?;
        }
        f.write_str(&self.message)
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
