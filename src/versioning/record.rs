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

    /// The blue name of `table` in this release: the blue table of the entry whose green table it
    /// is, else `table` itself (not versioned by the release).
    pub fn blue_of(&self, table: &str) -> String {
        self.tables
            .iter()
            .find(|t| t.green_table_name == table)
            .map_or_else(|| table.to_string(), |t| t.blue_table_name.clone())
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

/// What the record needs to know of a green table: its product, the owner of the statement that
/// writes it (green name), and which of its statements exist. The one rule of the names a release
/// records ([`GreenFacts::statements`]), used when a release is recorded and when a record is checked
/// against the tree ([`BlueGreenRecord::check_against`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreenFacts {
    pub product: String,
    /// The table whose folder holds the DML that writes it (itself, or a statement set's owner).
    pub owner: String,
    pub owner_product: String,
    /// A DML writes it (its own or its owner's).
    pub dml: bool,
    pub has_ddl: bool,
    /// Its DDL runs the job (CTAS, materialized table) and no DML writes it.
    pub ddl_runs_job: bool,
}

impl GreenFacts {
    /// The facts of table `t`, written by the DML of `owner` (named `owner_name` in the green tree).
    pub fn of(
        t: &crate::inventory::Table,
        owner: Option<&crate::inventory::Table>,
        owner_name: String,
    ) -> GreenFacts {
        let dml = t.written_by.is_some() || owner.is_some_and(|o| o.dml_ref.is_some());
        let ddl_runs_job = matches!(
            t.ddl_kind,
            Some(
                crate::sql::StatementKind::Ctas
                    | crate::sql::StatementKind::CreateMaterializedTable
            )
        ) && !dml;
        GreenFacts {
            product: t.product.clone(),
            owner_product: owner.map_or(t.product.clone(), |o| o.product.clone()),
            owner: owner_name,
            dml,
            has_ddl: t.ddl_ref.is_some(),
            ddl_runs_job,
        }
    }

    /// The facts of green table `green`, read from the rewritten (green) project; `None` when the
    /// project has no such table.
    pub fn from_green(project: &crate::project::Project, green: &str) -> Option<GreenFacts> {
        let t = project.inventory.tables.get(green)?;
        let owner_name = t.written_by.as_deref().unwrap_or(&t.name);
        let owner = project.inventory.tables.get(owner_name);
        Some(GreenFacts::of(t, owner, owner_name.to_string()))
    }

    /// The statements of `table` when its DML is `writer`'s (itself, or its statement set's owner),
    /// named by `naming`: the job first, then the DDL (a CTAS's or materialized table's DDL runs the
    /// job).
    pub fn statements(
        &self,
        naming: &crate::plan::StatementNaming,
        table: &str,
        writer: &str,
    ) -> Vec<RecordedStatement> {
        let ddl_role = if self.ddl_runs_job {
            StatementRole::Job
        } else {
            StatementRole::Declaration
        };
        let mut v = Vec::new();
        if self.dml {
            v.push(RecordedStatement {
                name: naming.dml(&self.owner_product, writer),
                role: StatementRole::Job,
            });
        }
        if self.has_ddl {
            v.push(RecordedStatement {
                name: naming.ddl(&self.product, table),
                role: ddl_role,
            });
        }
        v
    }
}

/// An entry of a release that does not follow from the tree ([`BlueGreenRecord::check_against`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    /// `created_at` of the release.
    pub release: String,
    /// 1-based position of the entry in the release's `tables`.
    pub entry: usize,
    pub blue_table_name: String,
    pub green_table_name: String,
    /// What does not follow from the tree.
    pub problem: String,
}

impl std::fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "release {}, tables[{}] (blue '{}' → green '{}'): {}",
            self.release, self.entry, self.blue_table_name, self.green_table_name, self.problem
        )
    }
}

/// Whether `green` is a next version of `blue` (shift_left's suffix rule,
/// [`crate::sql::text::split_version`]): `t` → `t_v<N>` for any N, `t_v<N>` → `t_v<N+1>`.
pub fn is_version_of(green: &str, blue: &str) -> bool {
    use crate::sql::text::split_version;
    match (split_version(green), split_version(blue)) {
        ((gb, Some(_)), (bb, None)) => gb == bb && bb == blue,
        ((gb, Some(gv)), (bb, Some(bv))) => gb == bb && gv == bv + 1,
        _ => false,
    }
}

/// `[name (role), …]`.
fn statement_list(list: &[RecordedStatement]) -> String {
    let items: Vec<String> = list
        .iter()
        .map(|s| {
            let role = match s.role {
                StatementRole::Job => "job",
                StatementRole::Declaration => "declaration",
            };
            format!("{} ({role})", s.name)
        })
        .collect();
    format!("[{}]", items.join(", "))
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
    /// Entries of the releases a command acts on do not follow from the tree
    /// ([`BlueGreenRecord::check_against`]); nothing was stopped or deleted.
    #[error(
        "{}: {} entr{} of the record do not follow from the tree, so nothing was stopped or deleted:\n{}\nfix or remove them (a release's green table is a versioned table of the tree, its blue table that table's base, their statements those the tree names)",
        path.display(),
        problems.len(),
        if problems.len() == 1 { "y" } else { "ies" },
        problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
    )]
    Inconsistent {
        path: PathBuf,
        problems: Vec<Inconsistency>,
    },
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

    /// The entries of the release at `index` that do not follow from the tree `project`: the
    /// record is input, not truth (a hand edit or a bad merge must not make a command stop or delete
    /// a statement outside the release). An entry follows from the tree when its green table is a
    /// table of the tree (or the blue table of an entry of a later release that does, versioned
    /// again), is a next version of its blue table ([`is_version_of`]), is in the recorded product,
    /// and its recorded blue and green statements are exactly those the tree gives the two names
    /// ([`GreenFacts::statements`], with the release's statement prefix); and no table is listed
    /// twice. Empty when the release is consistent.
    pub fn check_against(
        &self,
        project: &crate::project::Project,
        index: usize,
    ) -> Vec<Inconsistency> {
        let Some(release) = self.releases.get(index) else {
            return Vec::new();
        };
        let naming = crate::plan::StatementNaming {
            prefix: release.statement_prefix.clone(),
        };
        let mut out = Vec::new();
        let mut greens = std::collections::BTreeSet::new();
        let mut blues = std::collections::BTreeSet::new();
        for (i, t) in release.tables.iter().enumerate() {
            let bad = |problem: String| Inconsistency {
                release: release.created_at.clone(),
                entry: i + 1,
                blue_table_name: t.blue_table_name.clone(),
                green_table_name: t.green_table_name.clone(),
                problem,
            };
            if !greens.insert(&t.green_table_name) {
                out.push(bad("green table listed twice in the release".into()));
                continue;
            }
            if !blues.insert(&t.blue_table_name) {
                out.push(bad("blue table listed twice in the release".into()));
                continue;
            }
            if !is_version_of(&t.green_table_name, &t.blue_table_name) {
                out.push(bad(format!(
                    "'{}' is not a next version of '{}' (t → t_v2, t_v2 → t_v3)",
                    t.green_table_name, t.blue_table_name
                )));
                continue;
            }
            // The green table in the tree, maybe versioned again by later releases (newest last).
            let Some((tree_table, chain)) = self.in_tree(project, index, &t.green_table_name)
            else {
                out.push(bad(format!(
                    "green table '{}' is not a table of the tree (nor versioned again by a later release)",
                    t.green_table_name
                )));
                continue;
            };
            let Some(facts) = GreenFacts::from_green(project, &tree_table)
                .filter(|_| !project.inventory.tables[&tree_table].external)
            else {
                out.push(bad(format!(
                    "green table '{tree_table}' is an external table of the tree: nothing of the project writes it"
                )));
                continue;
            };
            if facts.product != t.product_name {
                out.push(bad(format!(
                    "product '{}' recorded, the tree has '{tree_table}' in product '{}'",
                    t.product_name, facts.product
                )));
                continue;
            }
            // The owner's name at this release: the tree's, taken back through the later releases.
            let mut owner = facts.owner.clone();
            for later in chain.iter().rev() {
                owner = self.releases[*later].blue_of(&owner);
            }
            let mut green = facts.statements(&naming, &t.green_table_name, &owner);
            green.reverse();
            let blue = facts.statements(&naming, &t.blue_table_name, &release.blue_of(&owner));
            for (side, recorded, expected) in [
                ("green", &t.green_statements, &green),
                ("blue", &t.blue_statements, &blue),
            ] {
                if recorded != expected {
                    out.push(bad(format!(
                        "{side}_statements {} recorded, the tree gives {}",
                        statement_list(recorded),
                        statement_list(expected)
                    )));
                }
            }
        }
        out
    }

    /// [`BlueGreenRecord::check_against`] for each release at `indices`, as one error.
    ///
    /// Errors: [`RecordError::Inconsistent`], naming every entry that does not follow from the
    /// tree.
    pub fn check_releases(
        &self,
        project: &crate::project::Project,
        pipelines: &Path,
        indices: impl IntoIterator<Item = usize>,
    ) -> Result<(), RecordError> {
        let problems: Vec<Inconsistency> = indices
            .into_iter()
            .flat_map(|i| self.check_against(project, i))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(RecordError::Inconsistent {
                path: Self::path(pipelines),
                problems,
            })
        }
    }

    /// Where green table `green` of the release at `index` is in the tree: itself, or the green
    /// table of an entry of a later release whose blue table it is (the releases of that chain, by
    /// index). `None` when neither.
    fn in_tree(
        &self,
        project: &crate::project::Project,
        index: usize,
        green: &str,
    ) -> Option<(String, Vec<usize>)> {
        if project.inventory.tables.contains_key(green) {
            return Some((green.to_string(), Vec::new()));
        }
        for (j, later) in self.releases.iter().enumerate().skip(index + 1) {
            if let Some(t) = later.tables.iter().find(|t| t.blue_table_name == green) {
                let (found, mut chain) = self.in_tree(project, j, &t.green_table_name)?;
                chain.insert(0, j);
                return Some((found, chain));
            }
        }
        None
    }

    /// The file's text (pretty JSON, a final newline).
    pub fn to_text(&self) -> String {
        crate::fsutil::to_json_pretty(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_of() {
        for (green, blue) in [
            ("t_v2", "t"),
            ("t_v5", "t"),
            ("t_v3", "t_v2"),
            ("t_v10", "t_v9"),
            ("t_v_v2", "t_v"),
        ] {
            assert!(is_version_of(green, blue), "{green} of {blue}");
        }
        for (green, blue) in [
            ("t", "t"),
            ("t_v2", "t_v2"),
            ("t_v4", "t_v2"),
            ("u_v2", "t"),
            ("t", "t_v2"),
            ("t_v2", "t_v3"),
            ("order_view", "order"),
        ] {
            assert!(!is_version_of(green, blue), "{green} of {blue}");
        }
    }
}
