//! The Flink SQL front end: split a file into statements, parse each with our Flink dialect of
//! `sqlparser`, and extract sinks, sources, DDL facts and statefulness. Statements the parser rejects go
//! through a token-level extractor and produce a warning; no reference is ever dropped silently.
//!
//! Entry point: [`analyze`].

pub mod model;

pub use model::*;

/// Analyses one SQL file's text.
///
/// Never fails: problems become [`FileAnalysis::warnings`] with line and column.
pub fn analyze(_sql: &str) -> FileAnalysis {
    // TEMPORARY STUB: replaced by the real front end.
    FileAnalysis::default()
}

impl FileAnalysis {
    /// Every relation created or written by the file, sorted and unique.
    pub fn sinks(&self) -> Vec<TableName> {
        let mut v: Vec<TableName> =
            self.statements.iter().flat_map(|s| s.sinks.iter().map(|r| r.name.clone())).collect();
        v.sort();
        v.dedup();
        v
    }

    /// Every relation read by the file, sorted and unique.
    pub fn sources(&self) -> Vec<TableName> {
        let mut v: Vec<TableName> =
            self.statements.iter().flat_map(|s| s.sources.iter().map(|r| r.name.clone())).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The file's statefulness: the maximum over its statements (`None` < `Stateless` < `Stateful`).
    pub fn statefulness(&self) -> Statefulness {
        self.statements.iter().map(|s| s.statefulness).max().unwrap_or(Statefulness::None)
    }
}
