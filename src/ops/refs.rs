//! `sql refs FILE…`: the SQL front end on files — sinks, sources, statements and statefulness.

use crate::diagnostics::Diagnostic;
use crate::scan::read_sql;
use crate::sql::{Statefulness, StatementKind};
use serde::Serialize;
use std::path::PathBuf;

/// One statement of a file.
#[derive(Debug, Clone, Serialize)]
pub struct StatementRefs {
    pub kind: StatementKind,
    /// 1-based line where it starts.
    pub line: usize,
    pub sinks: Vec<String>,
    pub sources: Vec<String>,
}

/// One file.
#[derive(Debug, Clone, Serialize)]
pub struct FileRefs {
    pub file: String,
    pub sinks: Vec<String>,
    pub sources: Vec<String>,
    /// The answer plans and metadata use ([`crate::sql::FileAnalysis::decided_statefulness`]):
    /// `unknown` where the token-level fallback could not tell, which counts as stateful.
    pub statefulness: Statefulness,
    pub statements: Vec<StatementRefs>,
    /// Warnings (unparseable SQL, …) and errors (an unreadable file).
    pub warnings: Vec<Diagnostic>,
    /// The file's text, for showing the source line of each warning.
    #[serde(skip)]
    pub text: String,
}

impl FileRefs {
    /// Whether the file could not be read (its only content is the error).
    pub fn unreadable(&self) -> bool {
        self.warnings.iter().any(Diagnostic::is_error)
    }
}

fn sorted(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = names.collect();
    v.sort();
    v.dedup();
    v
}

/// Analyses each file (names as given).
pub fn refs(files: &[PathBuf]) -> Vec<FileRefs> {
    files
        .iter()
        .map(|f| {
            let shown = f.display().to_string();
            let mut diags = Vec::new();
            let file = read_sql(f, shown.clone(), &mut diags);
            let a = &file.analysis;
            FileRefs {
                file: shown,
                sinks: a.sinks().iter().map(|n| n.dotted()).collect(),
                sources: a.sources().iter().map(|n| n.dotted()).collect(),
                statefulness: a.decided_statefulness(),
                statements: a
                    .statements
                    .iter()
                    .map(|s| StatementRefs {
                        kind: s.kind,
                        line: s.line,
                        sinks: sorted(s.sinks.iter().map(|r| r.name.dotted())),
                        sources: sorted(s.sources.iter().map(|r| r.name.dotted())),
                    })
                    .collect(),
                warnings: diags,
                text: file.text().to_string(),
            }
        })
        .collect()
}
