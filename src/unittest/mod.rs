//! Unit tests of one table's SQL on fixtures: shift_left-compatible `tests/` folders
//! (`test_definitions.yaml`, `ddl_<parent>.sql`, `insert_<parent>_<i>.sql|.csv`,
//! `validate_<table>_<i>.sql`, and flinkpipe's `expected_<table>_<i>.csv`), generated from the table's
//! SQL and run on the configured target — the local Apache Flink SQL Gateway with its Kafka broker, or
//! Confluent Cloud.
//!
//! The work reads as a pipeline:
//! [`definitions`] (the YAML file, with lines) → [`data`] (CSV fixtures, typed by the DDL) →
//! [`rewrite`] (`_ut` names by token spans; each table's storage mapped to the target) →
//! [`prepare`] (a whole suite checked and built before anything is created) → [`run`] (statements on a
//! [`crate::target::Target`], outputs read through [`crate::results`]) → [`compare`] (expected rows vs the
//! folded snapshot) → [`junit`] (JUnit XML). [`generate`] writes new test folders (`init-unit-tests`),
//! [`crate::target::kafka`] creates and deletes the topics of the `_ut` tables on a Kafka broker, [`naming`] holds the
//! suffix rule and the statement names.
//!
//! Safety: every object a run creates carries the suffix (tables, topics, statements); production
//! tables are never written, and a suite whose SQL reads a production table is refused before the
//! target is contacted.

pub mod compare;
pub mod data;
pub mod definitions;
pub mod foundations;
pub mod generate;
pub mod integration;
pub mod junit;
pub mod naming;
pub mod prepare;
pub mod rewrite;
pub mod run;
pub mod upgrade;

pub use naming::{Suffix, TestNaming};

/// Why a test folder cannot be used, or a run could not go on. Input errors name the file (relative to
/// the pipelines folder's parent, `pipelines/…/tests/…`) and, when known, the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitTestError {
    /// A problem in a file of the test folder or of the table (bad YAML, a CSV column the DDL lacks, a
    /// validation SQL that returns no PASS/FAIL, …).
    #[error("{}", at(.file, *.line, .message))]
    Input {
        /// The file, relative (`pipelines/facts/p1/fct_order/tests/test_definitions.yaml`).
        file: String,
        /// 1-based line, when the problem has one.
        line: Option<usize>,
        /// What is wrong, naming the construct.
        message: String,
    },
    /// The target or the Kafka broker failed (message already scrubbed of secrets).
    #[error("{0}")]
    Target(String),
    /// A suffix that does not follow shift_left's rule, or options that do not fit together.
    #[error("{0}")]
    Usage(String),
}

fn at(file: &str, line: Option<usize>, message: &str) -> String {
    match line {
        Some(l) => format!("{file}:{l}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl UnitTestError {
    /// An input error at `file:line`.
    pub fn at(file: impl Into<String>, line: usize, message: impl Into<String>) -> Self {
        UnitTestError::Input {
            file: file.into(),
            line: Some(line),
            message: message.into(),
        }
    }

    /// An input error in `file` (no line).
    pub fn in_file(file: impl Into<String>, message: impl Into<String>) -> Self {
        UnitTestError::Input {
            file: file.into(),
            line: None,
            message: message.into(),
        }
    }
}
