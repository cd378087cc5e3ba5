//! Pure impact computation: the head graph + the changed files → the tables to redeploy, with reasons.
//!
//! Rules:
//! - a file's change counts for its table; several files of one table count once, by the strongest kind
//!   (`added` > `schema` > `logic` > `options`); an added or deleted `.properties` file is an `options`
//!   change; a rename that changes the table's name is a deletion of
//!   the old name and an addition of the new one; a rename that keeps it counts by its content change;
//! - `cosmetic` changes impact nothing (they are listed with no descendants);
//! - every other change impacts all descendants at the head, each with the reason
//!   `descendant of X (K change)` (shift_left 0.1.52,
//!   <https://github.com/jbcodeforce/shift_left_utils>, impacted only the recursive children of
//!   tables whose production DDL changed; a query change alters the rows children read, so
//!   flinkpipe follows every non-cosmetic change);
//! - a statement is what runs: a change to a table whose statement writes other tables too (a statement
//!   set, changed in any of its INSERTs) impacts **every** table that statement writes and all their
//!   descendants, and so on to a fixpoint ([`crate::graph::StatementIndex::closure`]), with the reason
//!   `written by the same statement as X (K change)`;
//! - a file that now names another table (a committed blue-green: `orders` → `orders_v2`) counts as the
//!   old table deleted and the new one added;
//! - `seeds/external_tables.json` changes ([`super::external`]): an external table whose topic or product
//!   changed impacts its descendants; one removed while tables still read it is an orphan (unless a
//!   folder or another manifest still has it); an added one impacts nothing;
//! - a deleted table whose children remain at the head is an error naming the children and their files;
//! - files under `tests/` never impact anything: they are listed in `unit_test_ddl_paths`.

use super::{
    ChangeError, ChangeKind, ExternalTableChange, FileChange, FileRole, ModifiedFiles, Orphan,
};
use crate::graph::{Reached, StatementIndex};
use crate::project::Project;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// The dependency graph at the head, reduced to what impact needs.
#[derive(Debug, Clone, Default)]
pub struct HeadGraph {
    /// Table → its children (tables whose SQL reads it).
    children: BTreeMap<String, BTreeSet<String>>,
    /// Tables defined by a table folder at the head → their DDL and DML files, relative to the pipelines
    /// folder.
    defined: BTreeMap<String, Vec<String>>,
    /// Tables a `seeds/external_tables.json` manifest declares at the head (known from a full load only;
    /// empty from the graph file, which a removed external table never uses).
    declared_externals: BTreeSet<String>,
    /// Which statement writes which tables (statement sets write several).
    statements: StatementIndex,
}

impl HeadGraph {
    /// From a loaded project (load it with `allow_unknown` so that children of deleted tables keep an edge
    /// to them and can be reported).
    pub fn from_project(project: &Project) -> HeadGraph {
        let inv = &project.inventory;
        let strip = |p: &String| inv.rel_to_root(p).to_string();
        let mut g = HeadGraph::default();
        for t in inv.tables.values() {
            let kids: BTreeSet<String> = project
                .graph
                .children(&t.name)
                .into_iter()
                .map(str::to_string)
                .collect();
            if !kids.is_empty() {
                g.children.insert(t.name.clone(), kids);
            }
            if t.external && !t.unknown {
                g.declared_externals.insert(t.name.clone());
            }
            if !t.external {
                let files = t
                    .ddl_ref
                    .iter()
                    .chain(t.dml_ref.iter())
                    .map(strip)
                    .collect();
                g.defined.insert(t.name.clone(), files);
            }
        }
        g.statements = StatementIndex::from_inventory(inv);
        g
    }

    /// From `pipeline_graph.json` (written by `pipeline build-all-metadata`, `metadata::GraphFile`).
    ///
    /// Errors: the file cannot be read or is not a graph file.
    pub fn from_graph_file(path: &Path) -> Result<HeadGraph, ChangeError> {
        #[derive(Deserialize)]
        struct File {
            tables: Vec<Entry>,
        }
        #[derive(Deserialize)]
        struct Entry {
            table_name: String,
            #[serde(default)]
            ddl_ref: Option<String>,
            #[serde(default)]
            dml_ref: Option<String>,
            #[serde(default)]
            external: bool,
            #[serde(default)]
            children: Vec<String>,
            #[serde(default)]
            written_by: Option<String>,
            #[serde(default)]
            extra_sinks: Vec<String>,
        }
        let text = crate::fsutil::read_user_file(path, crate::fsutil::MAX_GENERATED_FILE_BYTES)
            .map_err(|e| ChangeError::Io {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let file: File = serde_json::from_slice(&text).map_err(|e| ChangeError::BadFile {
            path: path.to_path_buf(),
            what: "pipeline_graph.json",
            message: e.to_string(),
        })?;
        let strip = |p: &String| match p.split_once('/') {
            Some((_, rest)) => rest.to_string(),
            None => p.clone(),
        };
        let mut g = HeadGraph::default();
        let mut statements: Vec<(String, Vec<String>)> = Vec::new();
        for t in file.tables {
            if let Some(w) = &t.written_by {
                statements.push((w.clone(), vec![t.table_name.clone()]));
            } else if t.dml_ref.is_some() || !t.extra_sinks.is_empty() {
                statements.push((t.table_name.clone(), t.extra_sinks.clone()));
            }
            if !t.children.is_empty() {
                g.children
                    .insert(t.table_name.clone(), t.children.into_iter().collect());
            }
            if !t.external {
                let files = t
                    .ddl_ref
                    .iter()
                    .chain(t.dml_ref.iter())
                    .map(strip)
                    .collect();
                g.defined.insert(t.table_name, files);
            }
        }
        g.statements = StatementIndex::from_statements(statements);
        Ok(g)
    }

    /// Whether a table folder defines `name` at the head.
    pub fn is_defined(&self, name: &str) -> bool {
        self.defined.contains_key(name)
    }

    /// Direct children of `name`, sorted.
    pub fn children(&self, name: &str) -> Vec<&str> {
        self.children
            .get(name)
            .map(|c| c.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Declares that the statement owned by `owner` writes `sinks` too (tests and callers building a
    /// graph by hand).
    pub fn add_statement(&mut self, owner: &str, sinks: &[&str]) {
        self.statements
            .add(owner, sinks.iter().map(|s| s.to_string()));
    }

    /// Which statement writes which tables at the head.
    pub fn statements(&self) -> &StatementIndex {
        &self.statements
    }

    /// What a change to `name` impacts: its descendants and every other table written by a statement
    /// that writes a table reached, to a fixpoint (not `name` itself), each with how it was reached.
    pub fn impacted_by(&self, name: &str) -> BTreeMap<String, Reached> {
        let mut all = self.statements.closure(&[name], |t| self.children(t));
        all.remove(name);
        all
    }

    /// All descendants of `name` (not itself), sorted; breadth-first, O(descendants + their edges).
    pub fn descendants(&self, name: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut queue: VecDeque<&str> = VecDeque::from([name]);
        while let Some(n) = queue.pop_front() {
            for c in self.children(n) {
                if c != name && seen.insert(c.to_string()) {
                    queue.push_back(c);
                }
            }
        }
        seen
    }
}

/// A table reached from a changed table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpactedTable {
    /// The descendant.
    pub table_name: String,
    /// `descendant of X (logic change)`.
    pub reason: String,
    /// flinkpipe: for a schema change, this table's columns that read a changed column
    /// (`total (reads s.x)`), by column lineage; absent when none or not a schema change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affected_columns: Vec<String>,
}

/// One changed table and what it impacts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableImpact {
    /// The changed table (at the head; the old name for deletions).
    pub table_name: String,
    /// Its aggregated change.
    pub change_kind: ChangeKind,
    /// The changed files of the table, relative to the pipelines folder.
    pub files: Vec<String>,
    /// Its descendants at the head (none for cosmetic changes), sorted by name.
    pub descendants: Vec<ImpactedTable>,
}

/// `impacted_tables.json`: shift_left's shape (`ddl_modified_tables`, `impacted_tables`,
/// `production_ddl_paths`, `unit_test_ddl_paths`, as `project list-impacted-tables` of
/// shift_left 0.1.52 (<https://github.com/jbcodeforce/shift_left_utils>) writes it) plus
/// flinkpipe's `impacts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpactedTables {
    /// Tables whose production DDL changed (not cosmetically, not deleted), sorted.
    pub ddl_modified_tables: Vec<String>,
    /// Union of the descendants of every non-cosmetic change, sorted.
    pub impacted_tables: Vec<String>,
    /// Those DDL files, relative to the pipelines folder.
    pub production_ddl_paths: Vec<String>,
    /// Changed files under `tests/` folders, relative to the pipelines folder.
    pub unit_test_ddl_paths: Vec<String>,
    /// flinkpipe: per changed table, its kind and its descendants with reasons, sorted by table.
    pub impacts: Vec<TableImpact>,
}

/// Alias kept for readers of the module doc.
pub type Impact = ImpactedTables;

fn rank(k: ChangeKind) -> u8 {
    match k {
        ChangeKind::Added => 5,
        ChangeKind::Schema => 4,
        ChangeKind::Logic => 3,
        ChangeKind::Options => 2,
        ChangeKind::Renamed => 1,
        ChangeKind::Cosmetic | ChangeKind::Deleted => 0,
    }
}

/// Aggregates file changes per table: `(table, kind, files)`, sorted by table (see the module doc). A
/// file that now names another table (blue-green's `orders` → `orders_v2`) counts as the old table
/// deleted and the new one added.
pub fn changed_tables(
    files: &[FileChange],
    head: &HeadGraph,
) -> Vec<(String, ChangeKind, Vec<String>)> {
    aggregate(files, head, true)
}

/// [`changed_tables`], but a file that now names another table counts as a content change of the table
/// at the head (what blue-green needs to recognise tables already versioned against the base).
pub fn changed_tables_at_head(
    files: &[FileChange],
    head: &HeadGraph,
) -> Vec<(String, ChangeKind, Vec<String>)> {
    aggregate(files, head, false)
}

fn aggregate(
    files: &[FileChange],
    head: &HeadGraph,
    split_renamed_tables: bool,
) -> Vec<(String, ChangeKind, Vec<String>)> {
    let mut per: BTreeMap<String, (Vec<ChangeKind>, Vec<String>)> = BTreeMap::new();
    let mut add = |name: &str, kind: ChangeKind, path: &str| {
        if name.is_empty() {
            return;
        }
        let e = per.entry(name.to_string()).or_default();
        e.0.push(kind);
        if !e.1.iter().any(|p| p == path) {
            e.1.push(path.to_string());
        }
    };
    for f in files.iter().filter(|f| f.role != FileRole::Test) {
        match f.change_kind {
            // Statement options added or removed: the table itself is neither new nor gone.
            ChangeKind::Added | ChangeKind::Deleted if f.role == FileRole::Properties => {
                add(&f.new_table_name, ChangeKind::Options, &f.path)
            }
            ChangeKind::Renamed if f.table_name != f.new_table_name => {
                add(
                    &f.table_name,
                    ChangeKind::Deleted,
                    f.old_path.as_deref().unwrap_or(&f.path),
                );
                add(&f.new_table_name, ChangeKind::Added, &f.path);
            }
            ChangeKind::Renamed => add(&f.new_table_name, f.content_kind, &f.path),
            ChangeKind::Deleted => add(&f.table_name, ChangeKind::Deleted, &f.path),
            // The file stayed but now names another table (blue-green's `orders` → `orders_v2`): the
            // old table is gone from the tree and the new one is added.
            ChangeKind::Logic | ChangeKind::Schema | ChangeKind::Options
                if split_renamed_tables && f.base_table_name.is_some() =>
            {
                add(
                    f.base_table_name.as_deref().unwrap_or_default(),
                    ChangeKind::Deleted,
                    &f.path,
                );
                add(&f.new_table_name, ChangeKind::Added, &f.path);
            }
            k => add(&f.new_table_name, k, &f.path),
        }
    }
    per.into_iter()
        .map(|(name, (kinds, files))| {
            let kind = if kinds.iter().all(|k| *k == ChangeKind::Deleted) && !head.is_defined(&name)
            {
                ChangeKind::Deleted
            } else if kinds.iter().all(|k| *k == ChangeKind::Deleted) {
                // A file of a table that still exists was deleted (e.g. its .properties).
                ChangeKind::Logic
            } else {
                kinds
                    .iter()
                    .copied()
                    .filter(|k| *k != ChangeKind::Deleted)
                    .max_by_key(|k| rank(*k))
                    .unwrap_or(ChangeKind::Cosmetic)
            };
            (name, kind, files)
        })
        .collect()
}

/// The children of `name` that a table folder defines at the head, with their files.
fn defined_children(head: &HeadGraph, name: &str) -> Vec<(String, Vec<String>)> {
    head.children(name)
        .into_iter()
        .filter(|c| head.is_defined(c))
        .map(|c| {
            (
                c.to_string(),
                head.defined.get(c).cloned().unwrap_or_default(),
            )
        })
        .collect()
}

/// Why `table` is impacted by the `kind` change of `changed`, from the way the closure reached it: the
/// nearest statement-set step on its path from `changed` is named, else it is a plain descendant.
fn impact_reason(
    reached: &BTreeMap<String, Reached>,
    table: &str,
    changed: &str,
    kind: ChangeKind,
) -> String {
    let step = crate::graph::statements::via(reached, table).and_then(|v| v.statement_step);
    match step {
        None => format!("descendant of {changed} ({kind} change)"),
        Some((co, sibling)) if co == table && sibling == changed => {
            format!("written by the same statement as {changed} ({kind} change)")
        }
        Some((co, sibling)) if co == table => {
            format!(
                "written by the same statement as {sibling}, descendant of {changed} ({kind} change)"
            )
        }
        Some((co, sibling)) if sibling == changed => format!(
            "descendant of {co}, written by the same statement as {changed} ({kind} change)"
        ),
        Some((co, sibling)) => format!(
            "descendant of {co}, written by the same statement as {sibling} ({kind} change of {changed})"
        ),
    }
}

/// Computes the impact of `files` (table files; tests in `tests`) and of the external tables'
/// manifest changes (`externals`) on the head graph.
///
/// An external table whose topic or product changed impacts its descendants; one that was removed while
/// tables at the head still read it is an orphan (unless a table folder defines it now); an added one
/// impacts nothing.
///
/// Errors: [`ChangeError::Orphans`] when a deleted table still has children at the head.
pub fn impacted_tables(
    files: &[FileChange],
    tests: &[FileChange],
    externals: &[ExternalTableChange],
    head: &HeadGraph,
) -> Result<ImpactedTables, ChangeError> {
    let mut impacts = Vec::new();
    let mut orphans = Vec::new();
    let mut all = BTreeSet::new();
    for x in externals {
        // A folder defining the table at the head wins over the manifest (its files are listed); a table
        // removed from one manifest but still declared by another is not gone.
        if head.is_defined(&x.table_name)
            || (x.change_kind == ChangeKind::Deleted
                && head.declared_externals.contains(&x.table_name))
        {
            continue;
        }
        let mut descendants = Vec::new();
        match x.change_kind {
            ChangeKind::Deleted => {
                let kids = defined_children(head, &x.table_name);
                if !kids.is_empty() {
                    orphans.push(Orphan {
                        table_name: x.table_name.clone(),
                        children: kids,
                        manifest: Some(x.manifest.clone()),
                    });
                }
            }
            ChangeKind::Added | ChangeKind::Cosmetic => {}
            _ => {
                for d in head.descendants(&x.table_name) {
                    all.insert(d.clone());
                    descendants.push(ImpactedTable {
                        table_name: d,
                        reason: format!(
                            "descendant of external table {} ({})",
                            x.table_name, x.details
                        ),
                        affected_columns: Vec::new(),
                    });
                }
            }
        }
        impacts.push(TableImpact {
            table_name: x.table_name.clone(),
            change_kind: x.change_kind,
            files: vec![x.manifest.clone()],
            descendants,
        });
    }
    for (name, kind, paths) in changed_tables(files, head) {
        let mut descendants = Vec::new();
        match kind {
            ChangeKind::Cosmetic => {}
            ChangeKind::Deleted => {
                let kids = defined_children(head, &name);
                if !kids.is_empty() {
                    orphans.push(Orphan {
                        table_name: name.clone(),
                        children: kids,
                        manifest: None,
                    });
                }
            }
            k => {
                let reached = head.impacted_by(&name);
                for d in reached.keys() {
                    all.insert(d.clone());
                    descendants.push(ImpactedTable {
                        table_name: d.clone(),
                        reason: impact_reason(&reached, d, &name, k),
                        affected_columns: Vec::new(),
                    });
                }
            }
        }
        impacts.push(TableImpact {
            table_name: name,
            change_kind: kind,
            files: paths,
            descendants,
        });
    }
    if !orphans.is_empty() {
        orphans.sort_by(|a, b| a.table_name.cmp(&b.table_name));
        return Err(ChangeError::Orphans(orphans));
    }
    impacts.sort_by(|a, b| a.table_name.cmp(&b.table_name));
    let ddl: Vec<&FileChange> = files
        .iter()
        .filter(|f| {
            f.role == FileRole::Ddl
                && !matches!(f.change_kind, ChangeKind::Cosmetic | ChangeKind::Deleted)
                && !(f.change_kind == ChangeKind::Renamed && f.content_kind == ChangeKind::Cosmetic)
        })
        .collect();
    let ddl_modified_tables: BTreeSet<String> =
        ddl.iter().map(|f| f.new_table_name.clone()).collect();
    Ok(ImpactedTables {
        ddl_modified_tables: ddl_modified_tables.into_iter().collect(),
        impacted_tables: all.into_iter().collect(),
        production_ddl_paths: ddl.iter().map(|f| f.path.clone()).collect(),
        unit_test_ddl_paths: tests.iter().map(|f| f.path.clone()).collect(),
        impacts,
    })
}

impl ModifiedFiles {
    /// Reads a `modified_flink_files.json` (flinkpipe's or shift_left's).
    ///
    /// Errors: unreadable file or not the expected shape.
    pub fn read(path: &Path) -> Result<ModifiedFiles, ChangeError> {
        let text = crate::fsutil::read_data_file(path).map_err(|e| ChangeError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| ChangeError::BadFile {
            path: path.to_path_buf(),
            what: "modified_flink_files.json",
            message: e.to_string(),
        })
    }

    /// The rows as file changes (paths made relative to `pipelines_dir` when they lie under it). Rows
    /// without `change_kind` (shift_left's files) count as `cosmetic` when `same_sql_content`, else
    /// `logic`; a `renamed` row's content counts as `cosmetic` when `same_sql_content`, `schema` with a
    /// `schema_diff`, else `logic`. Returns `(table files, test files)`.
    pub fn to_file_changes(&self, pipelines_dir: &Path) -> (Vec<FileChange>, Vec<FileChange>) {
        let root = pipelines_dir
            .canonicalize()
            .unwrap_or_else(|_| pipelines_dir.to_path_buf());
        let root_s = crate::fsutil::slash_path(&root);
        let rel = |url: &str| -> String {
            url.strip_prefix(&root_s)
                .map(|r| r.trim_start_matches('/').to_string())
                .unwrap_or_else(|| url.to_string())
        };
        let mut files = Vec::new();
        for r in &self.file_list {
            let path = rel(&r.file_modified_url);
            let role = super::git::role_of(&path).unwrap_or(FileRole::OtherSql);
            let kind = r.change_kind.unwrap_or(if r.same_sql_content {
                ChangeKind::Cosmetic
            } else {
                ChangeKind::Logic
            });
            let new_name = if r.new_table_name.is_empty() {
                r.table_name.clone()
            } else {
                r.new_table_name.clone()
            };
            files.push(FileChange {
                path,
                old_path: None,
                abs_path: r.file_modified_url.clone().into(),
                role,
                table_name: r.table_name.clone(),
                new_table_name: new_name,
                base_table_name: r.base_table_name.clone(),
                change_kind: kind,
                // A renamed row records its content change only through `same_sql_content` and
                // `schema_diff`.
                content_kind: match kind {
                    ChangeKind::Renamed if r.same_sql_content => ChangeKind::Cosmetic,
                    ChangeKind::Renamed if r.schema_diff.is_some() => ChangeKind::Schema,
                    ChangeKind::Renamed => ChangeKind::Logic,
                    k => k,
                },
                same_sql_content: r.same_sql_content,
                schema_diff: r.schema_diff.clone(),
                note: None,
            });
        }
        let tests = self
            .tests
            .iter()
            .map(|p| FileChange {
                path: p.clone(),
                old_path: None,
                abs_path: root.join(p),
                role: FileRole::Test,
                table_name: String::new(),
                new_table_name: String::new(),
                base_table_name: None,
                change_kind: ChangeKind::Logic,
                content_kind: ChangeKind::Logic,
                same_sql_content: false,
                schema_diff: None,
                note: None,
            })
            .collect();
        (files, tests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)], defined: &[&str]) -> HeadGraph {
        let mut g = HeadGraph::default();
        for (p, c) in edges {
            g.children
                .entry(p.to_string())
                .or_default()
                .insert(c.to_string());
        }
        for d in defined {
            g.defined
                .insert(d.to_string(), vec![format!("{d}/sql-scripts/dml.{d}.sql")]);
        }
        g
    }

    fn change(table: &str, kind: ChangeKind, role: FileRole) -> FileChange {
        FileChange {
            path: format!("{table}/sql-scripts/x.{table}.sql"),
            old_path: None,
            abs_path: "/x".into(),
            role,
            table_name: table.into(),
            new_table_name: table.into(),
            base_table_name: None,
            change_kind: kind,
            content_kind: kind,
            same_sql_content: kind == ChangeKind::Cosmetic,
            schema_diff: None,
            note: None,
        }
    }

    #[test]
    fn descendants_with_reasons_and_cosmetic_nothing() {
        let g = graph(
            &[("a", "b"), ("b", "c"), ("x", "y")],
            &["a", "b", "c", "x", "y"],
        );
        let files = [
            change("a", ChangeKind::Logic, FileRole::Dml),
            change("x", ChangeKind::Cosmetic, FileRole::Dml),
        ];
        let r = impacted_tables(&files, &[], &[], &g).unwrap();
        assert_eq!(r.impacted_tables, vec!["b", "c"]);
        assert_eq!(
            r.impacts[0].descendants[1].reason,
            "descendant of a (logic change)"
        );
        assert!(r.impacts[1].descendants.is_empty());
        assert!(r.ddl_modified_tables.is_empty());
    }

    #[test]
    fn deleted_with_children_is_an_error() {
        let g = graph(&[("a", "b")], &["b"]);
        let err = impacted_tables(
            &[change("a", ChangeKind::Deleted, FileRole::Ddl)],
            &[],
            &[],
            &g,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "table 'a' is deleted but its children still read it: b (b/sql-scripts/dml.b.sql)"
        );
    }

    #[test]
    fn added_or_deleted_properties_are_options() {
        let g = graph(&[("a", "b")], &["a", "b"]);
        let files = [change("a", ChangeKind::Deleted, FileRole::Properties)];
        let r = impacted_tables(&files, &[], &[], &g).unwrap();
        assert_eq!(r.impacts[0].change_kind, ChangeKind::Options);
        assert_eq!(r.impacted_tables, vec!["b"]);
        let files = [change("a", ChangeKind::Added, FileRole::Properties)];
        assert_eq!(changed_tables(&files, &g)[0].1, ChangeKind::Options);
    }

    #[test]
    fn strongest_kind_wins() {
        let g = graph(&[], &["a"]);
        let files = [
            change("a", ChangeKind::Options, FileRole::Properties),
            change("a", ChangeKind::Schema, FileRole::Ddl),
        ];
        let t = changed_tables(&files, &g);
        assert_eq!(t[0].1, ChangeKind::Schema);
    }
}
