//! Schema changes since a git ref, checked against every downstream reader (`pipeline validate --since
//! REF [--fail-on breaking]`): each column a DDL removed, renamed, retyped or made nullable, and each
//! primary-key change, with
//! the statements that read the column (by the project's column lineage, [`super::column_lineage`]),
//! directly and transitively. A change that a reader uses is `breaking`; a column added is `additive`.

use super::column_lineage::{self, EdgeKind};
use super::{Context, OpsError};
use crate::changes::{self, FileRole};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// What changed in a column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ColumnChange {
    /// The column is gone from the DDL.
    Removed,
    /// Renamed to `to`: the column at its place at the head has another name and the same type.
    Renamed { to: String },
    /// `NOT NULL` became nullable: a reader writing it into a `NOT NULL` column may fail.
    Nullable,
    /// Its type changed.
    Retyped { old_type: String, new_type: String },
    /// The primary (upsert) key changed: `[old, new]`; readers of the key columns see another grain.
    PrimaryKey { old: Vec<String>, new: Vec<String> },
    /// A column was added.
    Added,
    /// The table's grain changed: the source columns of its statement's `GROUP BY` / `PARTITION BY`
    /// keys (dedup, Top-N) were `old` and are `new` (`table.column`): one row means something else, so
    /// every reader of the table is affected.
    Grain { old: Vec<String>, new: Vec<String> },
}

/// A statement that reads a changed column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Reader {
    /// The table the statement writes, and its column that uses the changed one.
    pub table: String,
    pub column: String,
    /// `direct` (the value is computed from it) or `indirect` (filter, join, grouping).
    pub kind: EdgeKind,
    pub file: String,
    pub line: usize,
    /// For a transitive reader: the column it reads that comes from the changed one (`t.c`); `None`
    /// for a statement that reads the changed column itself.
    pub via: Option<String>,
    /// The reader reads the changed table but its column lineage is unresolved: it may read the
    /// column (`column` is `?`); counted as a reader.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unsure: bool,
}

/// A changed column and who reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaChange {
    pub table: String,
    /// The column (for a key change: the key's columns, comma-separated).
    pub column: String,
    pub change: ColumnChange,
    /// A reader uses what changed.
    pub breaking: bool,
    /// The DDL file (`pipelines/…`).
    pub file: String,
    pub readers: Vec<Reader>,
}

/// The schema changes of the DDLs changed since `req`'s ref, with their readers at the head.
///
/// Errors: errors in the project, git errors, unreadable SQL files.
pub fn schema_changes(
    ctx: &Context,
    pipelines: &Path,
    req: &super::changes::ChangeRequest,
    allow_unknown: bool,
) -> Result<Vec<SchemaChange>, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        allow_unknown,
        "no schema check: fix the errors above",
    )?;
    let set = changes::list_changes(pipelines, &super::changes::change_options(req)?, &cfg)?;
    with_readers(&project, &cfg, pipelines, &set.files, &set.base_commit)
}

/// The schema changes of `files` (changed since `base_commit`) with their readers in `project`.
///
/// Errors: git errors reading the base, unreadable SQL files.
pub fn with_readers(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
    pipelines: &Path,
    files: &[changes::FileChange],
    base_commit: &str,
) -> Result<Vec<SchemaChange>, OpsError> {
    let mut diffs = Vec::new();
    let mut removed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.role == FileRole::Ddl) {
        let Some(d) = &f.schema_diff else { continue };
        if !project.inventory.tables.contains_key(&f.new_table_name) {
            continue;
        }
        let (diff, cols) = DdlDiff::of(project, pipelines, f, d, base_commit)?;
        if !cols.is_empty() {
            removed.insert(f.new_table_name.clone(), cols);
        }
        diffs.push(diff);
    }
    let grains = grain_changes(project, cfg, pipelines, files, base_commit)?;
    if diffs.is_empty() && grains.is_empty() {
        return Ok(Vec::new());
    }
    // The head's lineage, with the changed tables' columns as at the base (removed ones included) so
    // that their readers bind to them.
    let lineage = column_lineage::project_lineage(project, cfg, &removed)?;
    let mut out = Vec::new();
    for diff in diffs {
        let unsure = unsure_readers(project, &lineage, &diff.table);
        for (column, cols, change) in diff.column_changes() {
            let mut readers = readers_of(&lineage.edges, &diff.table, &cols);
            if !matches!(change, ColumnChange::Added) {
                readers.extend(unsure.iter().cloned());
            }
            let breaking = !matches!(change, ColumnChange::Added) && !readers.is_empty();
            out.push(SchemaChange {
                table: diff.table.clone(),
                column,
                change,
                breaking,
                file: diff.file.clone(),
                readers,
            });
        }
    }
    for (table, file, old, new) in grains {
        let mut cols: BTreeSet<String> = lineage
            .columns
            .iter()
            .filter(|c| c.table == table)
            .map(|c| c.column.clone())
            .collect();
        cols.extend(
            lineage
                .edges
                .iter()
                .filter(|e| e.source_table == table)
                .map(|e| e.source_column.clone()),
        );
        let cols: Vec<String> = cols.into_iter().collect();
        let mut readers = readers_of(&lineage.edges, &table, &cols);
        readers.extend(unsure_readers(project, &lineage, &table));
        out.push(SchemaChange {
            column: new.join(", "),
            breaking: !readers.is_empty(),
            change: ColumnChange::Grain { old, new },
            table,
            file,
            readers,
        });
    }
    Ok(out)
}

/// The schema diff of one changed DDL, with the columns renamed in it.
struct DdlDiff {
    table: String,
    /// `pipelines/…`.
    file: String,
    diff: changes::SchemaDiff,
    /// Old name → new name.
    renamed: BTreeMap<String, String>,
}

impl DdlDiff {
    /// The diff of DDL file `f`, and the table's columns for its readers: as at the base (their SQL
    /// was written against it), then those the head adds. A column removed where the head has an
    /// added column of the same type at the same position was renamed.
    ///
    /// Errors: git errors reading the base.
    fn of(
        project: &crate::project::Project,
        pipelines: &Path,
        f: &changes::FileChange,
        d: &changes::SchemaDiff,
        base_commit: &str,
    ) -> Result<(DdlDiff, Vec<String>), OpsError> {
        let columns_of = |text: Option<String>| -> Vec<(String, String)> {
            text.map(|t| crate::sql::analyze(&t))
                .and_then(|a| {
                    a.statements
                        .into_iter()
                        .find(|s| s.kind.creates_relation() && !s.columns.is_empty())
                })
                .map(|s| {
                    s.columns
                        .into_iter()
                        .map(|c| (c.name, c.data_type))
                        .collect()
                })
                .unwrap_or_default()
        };
        let base_typed = columns_of(changes::git::read_at(
            pipelines,
            base_commit,
            f.old_path.as_deref().unwrap_or(&f.path),
        )?);
        let head_typed = columns_of(std::fs::read_to_string(&f.abs_path).ok());
        let renamed: BTreeMap<String, String> = d
            .removed
            .iter()
            .filter_map(|r| {
                let i = base_typed.iter().position(|(n, _)| n == r)?;
                let (new, ty) = head_typed.get(i)?;
                (d.added.contains(new) && *ty == base_typed[i].1).then(|| (r.clone(), new.clone()))
            })
            .collect();
        let mut cols: Vec<String> = base_typed.into_iter().map(|(n, _)| n).collect();
        for c in &d.added {
            if !cols.contains(c) {
                cols.push(c.clone());
            }
        }
        Ok((
            DdlDiff {
                table: f.new_table_name.clone(),
                file: format!("{}/{}", project.inventory.root_name, f.path),
                diff: d.clone(),
                renamed,
            },
            cols,
        ))
    }

    /// Each change as `(column shown, columns its readers are looked up by, change)`: removed (or
    /// renamed), made nullable, retyped, the primary key, added (not a rename's new name).
    fn column_changes(&self) -> Vec<(String, Vec<String>, ColumnChange)> {
        let (d, renamed) = (&self.diff, &self.renamed);
        let mut out = Vec::new();
        for c in &d.removed {
            let change = match renamed.get(c) {
                Some(to) => ColumnChange::Renamed { to: to.clone() },
                None => ColumnChange::Removed,
            };
            out.push((c.clone(), vec![c.clone()], change));
        }
        for m in d
            .modified
            .iter()
            .filter(|m| !m.old_nullable && m.new_nullable)
        {
            out.push((m.name.clone(), vec![m.name.clone()], ColumnChange::Nullable));
        }
        for m in d.modified.iter().filter(|m| m.old_type != m.new_type) {
            out.push((
                m.name.clone(),
                vec![m.name.clone()],
                ColumnChange::Retyped {
                    old_type: m.old_type.clone(),
                    new_type: m.new_type.clone(),
                },
            ));
        }
        if let Some([old, new]) = &d.primary_key {
            let cols: Vec<String> = old
                .iter()
                .chain(new)
                .cloned()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            out.push((
                cols.join(", "),
                cols,
                ColumnChange::PrimaryKey {
                    old: old.clone(),
                    new: new.clone(),
                },
            ));
        }
        for c in d
            .added
            .iter()
            .filter(|a| !renamed.values().any(|to| to == *a))
        {
            out.push((c.clone(), Vec::new(), ColumnChange::Added));
        }
        out
    }
}

/// `(table written, DML file, old grain, new grain)`.
type GrainChange = (String, String, Vec<String>, Vec<String>);

/// Statements whose grain (GROUP BY / PARTITION BY source columns) differs between the base and the
/// head: `(table written, DML file, old grain, new grain)`.
fn grain_changes(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
    pipelines: &Path,
    files: &[changes::FileChange],
    base_commit: &str,
) -> Result<Vec<GrainChange>, OpsError> {
    use crate::sql::columns;
    let (schemas, _) = column_lineage::schemas_of(project)?;
    // By the name as written in these SQL texts resolved as the inventory does.
    let schemas: BTreeMap<String, Vec<(String, bool)>> = schemas;
    let key = |written: &str| {
        crate::inventory::resolve_name(&crate::sql::TableName::new(written.split('.')), cfg)
    };
    let grain = |st: &columns::StatementColumns| -> Vec<String> {
        st.grain
            .iter()
            .map(|(t, c)| format!("{}.{c}", key(t)))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let mut out = Vec::new();
    for f in files.iter().filter(|f| {
        f.role == FileRole::Dml
            && matches!(
                f.change_kind,
                changes::ChangeKind::Logic | changes::ChangeKind::Renamed
            )
    }) {
        let Some(t) = project.inventory.tables.get(&f.new_table_name) else {
            continue;
        };
        let Some(dml) = &t.dml_ref else { continue };
        let Some(base) = changes::git::read_at(
            pipelines,
            base_commit,
            f.old_path.as_deref().unwrap_or(&f.path),
        )?
        else {
            continue;
        };
        let before = columns::lineage(&base, &schemas);
        let after = columns::lineage(&column_lineage::read_sql(project, dml)?, &schemas);
        for a in &after {
            let Some(b) = before.iter().find(|b| key(&b.sink) == key(&a.sink)) else {
                continue;
            };
            if !a.unresolved.is_empty() || !b.unresolved.is_empty() {
                continue;
            }
            let (old, new) = (grain(b), grain(a));
            if old != new {
                out.push((key(&a.sink), dml.clone(), old, new));
            }
        }
    }
    Ok(out)
}

/// The statements whose column lineage is unresolved and that read `table` (a child in the graph):
/// they may read any of its columns.
fn unsure_readers(
    project: &crate::project::Project,
    lineage: &column_lineage::ColumnLineage,
    table: &str,
) -> Vec<Reader> {
    let children: BTreeSet<&str> = project.graph.children(table).into_iter().collect();
    lineage
        .unresolved
        .iter()
        .filter(|u| children.contains(u.table.as_str()))
        .map(|u| Reader {
            table: u.table.clone(),
            column: "?".into(),
            kind: EdgeKind::Indirect,
            file: u.file.clone(),
            line: u.line,
            via: Some(format!(
                "column lineage unresolved: {}",
                u.reasons.join("; ")
            )),
            unsure: true,
        })
        .collect()
}

/// The statements that read `table`'s `columns`, directly, then transitively through the columns they
/// compute from them (each reader once, sorted).
fn readers_of(edges: &[column_lineage::Edge], table: &str, columns: &[String]) -> Vec<Reader> {
    let mut out: BTreeSet<Reader> = BTreeSet::new();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut queue: VecDeque<((String, String), Option<String>)> = columns
        .iter()
        .map(|c| ((table.to_string(), c.clone()), None))
        .collect();
    while let Some(((t, c), via)) = queue.pop_front() {
        if !seen.insert((t.clone(), c.clone())) {
            continue;
        }
        for e in edges
            .iter()
            .filter(|e| e.source_table == t && e.source_column == c)
        {
            out.insert(Reader {
                table: e.table.clone(),
                column: e.column.clone(),
                kind: e.kind,
                file: e.file.clone(),
                line: e.line,
                via: via.clone(),
                unsure: false,
            });
            // What the reader computes from it carries the change further down.
            if e.kind == EdgeKind::Direct {
                queue.push_back((
                    (e.table.clone(), e.column.clone()),
                    Some(format!("{}.{}", e.table, e.column)),
                ));
            }
        }
    }
    out.into_iter().collect()
}
