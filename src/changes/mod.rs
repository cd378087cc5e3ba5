//! What changed in a pipelines tree since a git ref, and what those changes impact.
//!
//! - [`git`] reads the repository with `git2` and never touches the work tree, the index or `HEAD`
//!   (shift_left 0.1.52, <https://github.com/jbcodeforce/shift_left_utils>, ran
//!   `git checkout` and `git log --since`): the tree at `merge-base(since, head)` is diffed with
//!   the tree at `head` (or with the work tree and index), deletions and renames included.
//! - [`classify`] is pure: old text + new text → [`ChangeKind`] and [`SchemaDiff`]. Both sides are
//!   normalised by the same tokenizer before they are compared, so comments, whitespace and keyword case
//!   never make a false "changed" (shift_left 0.1.52 compared SQL after environment rewriting).
//! - [`impact`] is pure: the head graph + the changed tables → the descendants to redeploy, each with its
//!   reason; a deleted table whose children remain is an error naming them.
//!
//! Output shapes follow shift_left 0.1.52's `modified_flink_files.json` and `impacted_tables.json`
//! (`project list-modified-files`, `project list-impacted-tables`,
//! <https://github.com/jbcodeforce/shift_left_utils>), with flinkpipe's additions (`change_kind`,
//! `tests`, `impacts`).

#![warn(missing_docs)]

pub mod classify;
pub mod external;
pub mod git;
pub mod head;
pub mod impact;
pub mod upgrade;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub use classify::{ColumnChange, SchemaDiff};
pub use external::ExternalTableChange;
pub use git::{ChangeOptions, list_changes};
pub use head::{HeadSource, load_head_graph};
pub use impact::{HeadGraph, Impact, ImpactedTables, TableImpact, impacted_tables};

/// How a file changed between the base and the head.
///
/// For a file present on both sides the kind comes from [`classify::classify`]; precedence when several
/// things changed in one DDL: `schema` > `options`; a query change is `logic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Only comments, whitespace, keyword case, `;` or formatting differ (statements equal after
    /// normalisation), or only the order of WITH options. Impacts nothing.
    Cosmetic,
    /// A query changed (DML, CTAS, view or materialized table query), or the file is not text.
    Logic,
    /// DDL: columns added, removed or retyped (type, nullability, primary key membership), primary key or
    /// distribution changed, or another part of the table definition (e.g. the watermark) changed.
    Schema,
    /// Only WITH options changed (or a `.properties` file changed).
    Options,
    /// The file is new.
    Added,
    /// The file was deleted.
    Deleted,
    /// The file moved (git rename detection); its content change, if any, is in
    /// [`FileChange::content_kind`].
    Renamed,
}

impl ChangeKind {
    /// The snake_case name used in JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Cosmetic => "cosmetic",
            ChangeKind::Logic => "logic",
            ChangeKind::Schema => "schema",
            ChangeKind::Options => "options",
            ChangeKind::Added => "added",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
        }
    }
}

impl std::fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The role of a changed file in its table folder (shift_left 0.1.52's folder layout,
/// <https://github.com/jbcodeforce/shift_left_utils>; docs/src/concepts/layout.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    /// `sql-scripts/ddl.*.sql`.
    Ddl,
    /// `sql-scripts/dml.*.sql`.
    Dml,
    /// `sql-scripts/*.properties` (statement options): a change is `options`.
    Properties,
    /// Another `.sql` file in `sql-scripts/` (compared like a DML).
    OtherSql,
    /// A file under a `tests/` folder: listed apart, never a table change.
    Test,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileChange {
    /// Path relative to the pipelines folder, `/`-separated (`facts/p1/fct_order/sql-scripts/dml.x.sql`);
    /// for a rename, the new path.
    pub path: String,
    /// For a rename, the old path (relative to the pipelines folder).
    pub old_path: Option<String>,
    /// Absolute path of the file in the work tree (shift_left's `file_modified_url`); for a deleted file,
    /// where it was.
    pub abs_path: PathBuf,
    /// The file's role.
    pub role: FileRole,
    /// The table the file belongs to, at the base for deleted files and renames, else at the head
    /// (shift_left's `table_name`).
    pub table_name: String,
    /// The table at the head (differs from `table_name` when a rename changed the table's name).
    pub new_table_name: String,
    /// For a modified file whose edit renamed its table (a committed blue-green: `orders` →
    /// `orders_v2`): the table at the base. `None` otherwise.
    pub base_table_name: Option<String>,
    /// How the file changed.
    pub change_kind: ChangeKind,
    /// For a renamed file: how its content changed (`cosmetic` when identical); for other kinds the same
    /// as `change_kind`.
    pub content_kind: ChangeKind,
    /// Whether old and new are equal after normalisation (`false` for added and deleted files). There is no
    /// live target yet, so this compares the base with the head, not with the deployed statement.
    pub same_sql_content: bool,
    /// Column-level differences for production DDL files with a `schema` change.
    pub schema_diff: Option<SchemaDiff>,
    /// Why the classification is coarse, e.g. `not UTF-8 text` (then `logic`).
    pub note: Option<String>,
}

/// Everything that changed under the pipelines folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// The base as asked (`origin/main`, `since:2025-12-01`, …): shift_left's `baseline_ref`.
    pub baseline_ref: String,
    /// The base commit (`merge-base(since, head)`, or the commit found for `--since-date`).
    pub base_commit: String,
    /// The head as asked (`HEAD`, a ref, or `work tree` with `--include-uncommitted`).
    pub head_ref: String,
    /// The head commit (for the work tree: `HEAD`'s commit).
    pub head_commit: String,
    /// Table files (`sql-scripts/`), sorted by path.
    pub files: Vec<FileChange>,
    /// Files under `tests/` folders, sorted by path.
    pub tests: Vec<FileChange>,
    /// Tables of `seeds/external_tables.json` manifests that were added, removed or changed, sorted by
    /// name ([`external`]).
    pub external_tables: Vec<ExternalTableChange>,
    /// Changed files under the pipelines folder that belong to none of the lists above (README, other
    /// JSON, …), or that the file filter excluded.
    pub ignored: Vec<String>,
}

/// Errors of the change and impact computations. Each names the ref or path involved.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The pipelines folder is not inside a git work tree.
    #[error(
        "{0} is not inside a git repository: changes are found by comparing git commits (run `git init` and commit the project first)"
    )]
    NotARepository(PathBuf),
    /// The pipelines folder does not exist.
    #[error("pipelines folder {0} does not exist or is not a folder")]
    NoDirectory(PathBuf),
    /// A bare repository has no work tree to locate the pipelines folder in.
    #[error("repository {0} is bare: no work tree")]
    Bare(PathBuf),
    /// No `--since` and neither `origin/main` nor `main` exists.
    #[error(
        "no base ref: neither 'origin/main' nor 'main' exists in {0}; pass --since REF or --since-date YYYY-MM-DD"
    )]
    NoDefaultBase(PathBuf),
    /// A ref that does not resolve to a commit.
    #[error("ref '{name}' does not resolve to a commit: {message}")]
    BadRef {
        /// The ref as given.
        name: String,
        /// libgit2's message.
        message: String,
    },
    /// The two commits have no common ancestor (or the history is cut by a shallow clone).
    #[error("no merge base between '{since}' and '{head}'{shallow}: {message}")]
    NoMergeBase {
        /// The base ref.
        since: String,
        /// The head ref.
        head: String,
        /// ` (shallow clone …)` when the history is cut, else empty.
        shallow: &'static str,
        /// libgit2's message.
        message: String,
    },
    /// `--since-date` is not `YYYY-MM-DD`.
    #[error("--since-date '{0}' is not a date YYYY-MM-DD")]
    BadDate(String),
    /// No commit on HEAD's first-parent chain is older than the date.
    #[error(
        "no commit on the first-parent chain of '{head}' was committed before {date} 00:00 UTC{shallow}"
    )]
    NoCommitBefore {
        /// The date as given.
        date: String,
        /// The head ref.
        head: String,
        /// ` (shallow clone …)` when the history is cut.
        shallow: &'static str,
    },
    /// Another libgit2 failure (reading a tree, a blob, the diff).
    #[error("git: {context}: {message}")]
    Git {
        /// What was being done.
        context: String,
        /// libgit2's message.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS message.
        message: String,
    },
    /// A `modified_flink_files.json` or `pipeline_graph.json` could not be understood.
    #[error("{path}: not a valid {what}: {message}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What it should have been.
        what: &'static str,
        /// The parser's message.
        message: String,
    },
    /// Tables were deleted (or renamed away) while tables that read them remain at the head.
    #[error("{}", orphan_message(.0))]
    Orphans(Vec<Orphan>),
}

/// A deleted table and the children that still read it at the head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orphan {
    /// The deleted (or renamed-away) table.
    pub table_name: String,
    /// Its children at the head: (table, its DDL/DML files relative to the pipelines folder).
    pub children: Vec<(String, Vec<String>)>,
    /// For an external table removed from a manifest: that manifest (relative to the pipelines folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
}

fn orphan_message(orphans: &[Orphan]) -> String {
    let mut s = String::new();
    for (i, o) in orphans.iter().enumerate() {
        if i > 0 {
            s.push_str("; ");
        }
        let kids: Vec<String> = o
            .children
            .iter()
            .map(|(c, files)| {
                if files.is_empty() {
                    c.clone()
                } else {
                    format!("{c} ({})", files.join(", "))
                }
            })
            .collect();
        match &o.manifest {
            Some(m) => s.push_str(&format!(
                "external table '{}' was removed from {m} but its children still read it: {}",
                o.table_name,
                kids.join(", ")
            )),
            None => s.push_str(&format!(
                "table '{}' is deleted but its children still read it: {}",
                o.table_name,
                kids.join(", ")
            )),
        }
    }
    s
}

impl ChangeError {
    pub(crate) fn git(context: impl Into<String>, e: git2::Error) -> Self {
        ChangeError::Git {
            context: context.into(),
            message: e.message().to_string(),
        }
    }
}

/// One row of `modified_flink_files.json` (shift_left 0.1.52,
/// <https://github.com/jbcodeforce/shift_left_utils>) plus `change_kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModifiedFileRow {
    /// The table the file belongs to (at the base for deleted files and renames).
    pub table_name: String,
    /// Absolute path of the file.
    pub file_modified_url: String,
    /// Old and new equal after normalisation (no live target yet: base vs head).
    #[serde(default)]
    pub same_sql_content: bool,
    /// Whether the table's statement (its DML, else its DDL) is RUNNING on the configured target;
    /// `null` when no target was asked (offline, or no target configured). shift_left writes a bool.
    #[serde(default)]
    pub running: Option<bool>,
    /// The table at the head.
    #[serde(default)]
    pub new_table_name: String,
    /// Column differences (production DDL with a `schema` change), else `null`.
    #[serde(default)]
    pub schema_diff: Option<SchemaDiff>,
    /// flinkpipe: for a modified file whose edit renamed its table (a committed blue-green), the table
    /// at the base; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_table_name: Option<String>,
    /// flinkpipe's addition; absent in shift_left's files (read as `logic`, or `cosmetic` when
    /// `same_sql_content`).
    #[serde(default)]
    pub change_kind: Option<ChangeKind>,
    /// flinkpipe: when the table's statement writes more than this table (a statement set), every
    /// table it writes, sorted: a change to any of its INSERTs changes them all. Absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statement_sinks: Vec<String>,
}

/// `modified_flink_files.json`: shift_left's shape plus flinkpipe's `tests` list and refs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModifiedFiles {
    /// Human-readable summary (base, head, filter, date, count), as shift_left writes it.
    pub description: String,
    /// One row per changed table file (not tests).
    pub file_list: Vec<ModifiedFileRow>,
    /// flinkpipe: changed files under `tests/`, relative to the pipelines folder.
    #[serde(default)]
    pub tests: Vec<String>,
    /// flinkpipe: external tables added, removed or changed in `seeds/external_tables.json` manifests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external_tables: Vec<ExternalTableChange>,
    /// flinkpipe: the base commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// flinkpipe: the head commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_commit: Option<String>,
}

impl ChangeSet {
    /// The `modified_flink_files.json` content. `generated_on` goes into the description (pass the time
    /// of the run; tests pass a fixed text).
    pub fn to_modified_files(&self, filter: Option<&str>, generated_on: &str) -> ModifiedFiles {
        let file_list: Vec<ModifiedFileRow> = self
            .files
            .iter()
            .map(|f| ModifiedFileRow {
                table_name: f.table_name.clone(),
                file_modified_url: crate::fsutil::slash_path(&f.abs_path),
                same_sql_content: f.same_sql_content,
                running: None,
                new_table_name: f.new_table_name.clone(),
                schema_diff: f.schema_diff.clone(),
                base_table_name: f.base_table_name.clone(),
                change_kind: Some(f.change_kind),
                statement_sinks: Vec::new(),
            })
            .collect();
        let description = format!(
            "Modified files in branch:'{}' since '{}' ({})\nFilter applied: {}\nGenerated on: {}\nTotal files: {}",
            self.head_ref,
            self.baseline_ref,
            short(&self.base_commit),
            filter.unwrap_or(".sql, .properties"),
            generated_on,
            file_list.len()
        );
        ModifiedFiles {
            description,
            file_list,
            tests: self.tests.iter().map(|t| t.path.clone()).collect(),
            external_tables: self.external_tables.clone(),
            base_commit: Some(self.base_commit.clone()),
            head_commit: Some(self.head_commit.clone()),
        }
    }

    /// The companion `modified_flink_files.txt`: table names, sorted, one per line.
    pub fn table_names_text(&self) -> String {
        let names: std::collections::BTreeSet<&str> = self
            .files
            .iter()
            .flat_map(|f| [f.table_name.as_str(), f.new_table_name.as_str()])
            .filter(|n| !n.is_empty())
            .collect();
        let mut s = String::new();
        for n in names {
            s.push_str(n);
            s.push('\n');
        }
        s
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps() {
        assert_eq!(crate::time::utc_timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            crate::time::utc_timestamp(1_709_164_800 + 3661),
            "2024-02-29 01:01:01 UTC"
        );
        assert_eq!(
            super::git::parse_date("2024-02-29"),
            Some(1_709_164_800),
            "parse_date and utc_timestamp agree"
        );
    }
}
