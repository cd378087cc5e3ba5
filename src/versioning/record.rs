//! The blue-green record: `pipelines/blue_green.json`, a committed, human-readable file that says what
//! each applied versioning renamed (blue table → green table), from which base, and whether its blue
//! statements were decommissioned — per environment, since one record serves dev, stage and prod.
//!
//! ```json
//! {
//!   "format": 1,
//!   "releases": [
//!     {
//!       "created_at": "2026-12-01T10:00:00Z",
//!       "base_ref": "main", "base_commit": "3f2a…",
//!       "statement_prefix": "dev-usw2",
//!       "tables": [
//!         {"blue_table_name": "int_x", "green_table_name": "int_x_v2", "product_name": "sales",
//!          "blue_statements": [{"name": "dev-usw2-sales-dml-int-x", "role": "job"},
//!                              {"name": "dev-usw2-sales-ddl-int-x", "role": "declaration"}],
//!          "green_statements": [{"name": "dev-usw2-sales-ddl-int-x-v2", "role": "declaration"},
//!                               {"name": "dev-usw2-sales-dml-int-x-v2", "role": "job"}],
//!          "reason": "logic change"}
//!       ],
//!       "decommissioned": [
//!         {"statement_prefix": "dev-usw2", "at": "2026-12-02T09:00:00Z", "action": "delete",
//!          "statements": ["dev-usw2-sales-dml-int-x"]}
//!       ],
//!       "rolled_back": [
//!         {"statement_prefix": "prod-usw2", "at": "2026-12-02T09:30:00Z", "action": "delete",
//!          "statements": ["prod-usw2-sales-dml-int-x-v2", "prod-usw2-sales-ddl-int-x-v2"]}
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! Statement names in `tables` are those of the configuration the release was applied with
//! (`statement_prefix`); commands recompute them with the configuration in effect, so that one record
//! drives every environment. A release is open in an environment ([`Release::is_open_in`]) until a
//! `decommissioned` entry with action `delete` (blue deleted: green is production) or a `rolled_back`
//! entry (green stopped or deleted by `pipeline rollback`: blue stays production) with that
//! environment's statement prefix exists. `rolled_back` is left out of the file while empty, so
//! records written before it existed read and write unchanged.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// File name of the record, at the root of the pipelines folder.
pub use crate::scan::layout::BLUE_GREEN_FILE;

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlueGreenRecord {
    /// Format of the file (1).
    pub format: u32,
    /// Every applied versioning, oldest first.
    pub releases: Vec<Release>,
}

/// One applied versioning (`pipeline blue-green --apply`, `project update-tables-version`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// When it was applied, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    /// The base ref of a blue-green (`main`); `None` for a listed versioning.
    pub base_ref: Option<String>,
    /// The base commit (40 hex digits); `None` for a listed versioning.
    pub base_commit: Option<String>,
    /// The statement-name prefix the statement names below were computed with.
    pub statement_prefix: String,
    /// The versioned tables, parents first.
    pub tables: Vec<GreenTable>,
    /// Decommissions of the blue statements, one per environment (statement prefix).
    #[serde(default)]
    pub decommissioned: Vec<Decommission>,
    /// Roll-backs of the green statements (`pipeline rollback`), one per environment (statement
    /// prefix); absent from the file while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rolled_back: Vec<Rollback>,
}

/// One versioned table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GreenTable {
    pub blue_table_name: String,
    pub green_table_name: String,
    /// The product of both (`None` as shift_left spells it when there is none).
    pub product_name: String,
    /// The blue table's statements (its job first), as named at apply time.
    pub blue_statements: Vec<RecordedStatement>,
    /// The green table's statements (its declaration first), as named at apply time.
    pub green_statements: Vec<RecordedStatement>,
    /// Why the table was versioned (`logic change`, `descendant of int_x`).
    pub reason: String,
}

/// A statement of a versioned table and what it does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedStatement {
    pub name: String,
    pub role: StatementRole,
}

/// What a table's statement does: run a job (a DML, the statement set that writes the table, a CTAS,
/// a materialized table) or only declare the table (a plain `CREATE TABLE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementRole {
    Job,
    Declaration,
}

/// A decommission of a release's blue statements in one environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decommission {
    /// The environment's statement prefix.
    pub statement_prefix: String,
    /// When, `YYYY-MM-DDTHH:MM:SSZ`.
    pub at: String,
    /// `stop` or `delete`.
    pub action: String,
    /// The statements acted on.
    pub statements: Vec<String>,
}

/// A roll-back of a release's green statements in one environment (`pipeline rollback`): blue
/// stayed production, the green statements were stopped or deleted, children first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rollback {
    /// The environment's statement prefix.
    pub statement_prefix: String,
    /// When, `YYYY-MM-DDTHH:MM:SSZ`.
    pub at: String,
    /// `stop` or `delete`.
    pub action: String,
    /// The green statements acted on, in the order they were acted on.
    pub statements: Vec<String>,
}

impl Release {
    /// Whether the release was rolled back in the environment of `prefix` (`pipeline rollback`).
    pub fn rolled_back_in(&self, prefix: &str) -> bool {
        self.rolled_back
            .iter()
            .any(|r| r.statement_prefix == prefix)
    }

    /// Whether the release is still open in the environment of `prefix`: neither decommissioned
    /// (blue deleted) nor rolled back there. Open releases are those `deploy --blue-green`,
    /// `status`, `release-check`, `decommission` and the housekeeping protections act on.
    pub fn is_open_in(&self, prefix: &str) -> bool {
        !self.decommissioned_in(prefix) && !self.rolled_back_in(prefix)
    }

    /// Whether the release's blue statements were deleted in the environment of `prefix` (a `stop`
    /// decommission is recorded but leaves the release open: its stopped blue statements can still be
    /// resumed, or deleted by a later `decommission --delete`).
    pub fn decommissioned_in(&self, prefix: &str) -> bool {
        self.decommissioned
            .iter()
            .any(|d| d.statement_prefix == prefix && d.action == "delete")
    }
}

/// Errors reading the record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not the record's shape; serde's message carries the line and column.
    #[error("{}: not a blue-green record: {message}", path.display())]
    Parse { path: PathBuf, message: String },
}

impl BlueGreenRecord {
    /// The record's path in a pipelines folder.
    pub fn path(pipelines: &Path) -> PathBuf {
        pipelines.join(BLUE_GREEN_FILE)
    }

    /// Reads the record of a pipelines folder; a missing file is an empty record.
    ///
    /// Errors: an unreadable file, or one that is not a record (with line and column).
    pub fn read(pipelines: &Path) -> Result<BlueGreenRecord, RecordError> {
        let path = Self::path(pipelines);
        let text = match crate::fsutil::read_data_file(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BlueGreenRecord {
                    format: 1,
                    releases: Vec::new(),
                });
            }
            Err(source) => return Err(RecordError::Read { path, source }),
        };
        serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| RecordError::Parse {
            path,
            message: e.to_string(),
        })
    }

    /// The newest release still open ([`Release::is_open_in`]) in the environment of `prefix`.
    pub fn open_release(&self, prefix: &str) -> Option<&Release> {
        self.releases.iter().rev().find(|r| r.is_open_in(prefix))
    }

    /// The file's text (pretty JSON, a final newline).
    pub fn to_text(&self) -> String {
        crate::fsutil::to_json_pretty(self)
    }
}
