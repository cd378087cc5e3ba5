//! Schema changes since a git ref, checked against every downstream reader (`pipeline validate --since
//! REF [--fail-on breaking]`): each column a DDL removed, renamed, retyped or made nullable, and each
//! primary-key change, with
//! the statements that read the column (by the project's column lineage, [`super::column_lineage`]),
//! directly and transitively. A change that a reader uses is `breaking`; a column added is `additive`.
//!
//! Positional readers: a statement that expands `*` over a table, or an INSERT without a column list
//! into it (`SELECT` or `VALUES`), relies on the order and count of its columns. A column added,
//! removed or moved is breaking for such a statement when it now fills its outputs otherwise: read
//! against the table's columns at the base and at the head, an output column takes its value from
//! other sources (or another position), or the outputs no longer match the sink's columns in number.
//! A statement whose own file changed too is judged only on the count (it was rewritten for the new
//! columns); one whose lineage is unresolved at both is counted as an unsure reader.

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
    /// The columns kept moved relative to each other: `old` and `new` are the table's columns in
    /// order (a rename in place applied to `old`). A statement that reads the table by position (`*`,
    /// an INSERT without a column list) now gets other values at some positions.
    Reordered { old: Vec<String>, new: Vec<String> },
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
    /// The statement reads (or, without a column list, writes) the changed table by position, and the
    /// change moves what it gets: `star` (`*` / `t.*` over it) or `no_column_list`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_position: Option<crate::sql::columns::PositionalKind>,
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
    let changed_files: BTreeSet<String> = files
        .iter()
        .map(|f| format!("{}/{}", project.inventory.root_name, f.path))
        .collect();
    let mut by_position = positional_readers(project, cfg, &diffs, &changed_files)?;
    // The head's lineage, with the changed tables' columns as at the base (removed ones included) so
    // that their readers bind to them.
    let lineage = column_lineage::project_lineage(project, cfg, &removed)?;
    let mut out = Vec::new();
    for diff in diffs {
        let unsure = unsure_readers(project, &lineage, &diff.table);
        let positional = by_position.remove(&diff.table).unwrap_or_default();
        for (column, cols, change) in diff.column_changes() {
            let mut readers = readers_of(&lineage.edges, &diff.table, &cols);
            if !matches!(change, ColumnChange::Added | ColumnChange::Reordered { .. }) {
                readers.extend(unsure.iter().cloned());
            }
            // Who reads the table by position sees every added, removed or moved column.
            if matches!(
                change,
                ColumnChange::Added | ColumnChange::Removed | ColumnChange::Reordered { .. }
            ) {
                for r in &positional {
                    if !readers.contains(r) {
                        readers.push(r.clone());
                    }
                }
            }
            let breaking = !readers.is_empty()
                && (!matches!(change, ColumnChange::Added)
                    || readers.iter().any(|r| r.by_position.is_some()));
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
    /// The table's columns in order at the base and at the head.
    base: Vec<String>,
    head: Vec<String>,
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
        let base: Vec<String> = base_typed.iter().map(|(n, _)| n.clone()).collect();
        let head: Vec<String> = head_typed.iter().map(|(n, _)| n.clone()).collect();
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
                base,
                head,
            },
            cols,
        ))
    }

    /// The base columns with the renames applied: what the head would be with no column added,
    /// removed or moved.
    fn base_renamed(&self) -> Vec<String> {
        self.base
            .iter()
            .map(|c| self.renamed.get(c).unwrap_or(c).clone())
            .collect()
    }

    /// Whether the order or count of the table's columns changed (a rename in place changes neither).
    fn positions_changed(&self) -> bool {
        !self.base.is_empty() && !self.head.is_empty() && self.base_renamed() != self.head
    }

    /// The columns kept (both at the base, renamed, and at the head) whose order relative to each
    /// other changed; empty when none moved.
    fn moved(&self) -> Vec<String> {
        let old = self.base_renamed();
        let kept_old: Vec<&String> = old.iter().filter(|c| self.head.contains(c)).collect();
        let kept_new: Vec<&String> = self.head.iter().filter(|c| old.contains(c)).collect();
        kept_old
            .iter()
            .zip(&kept_new)
            .filter(|(a, b)| a != b)
            .map(|(_, b)| (*b).clone())
            .collect()
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
        let moved = self.moved();
        if !moved.is_empty() {
            out.push((
                moved.join(", "),
                Vec::new(),
                ColumnChange::Reordered {
                    old: self.base_renamed(),
                    new: self.head.clone(),
                },
            ));
        }
        out
    }
}

/// The statements that read (or write without a column list) a table of `diffs` whose columns moved
/// or changed in count, and whose outputs the move changes (see the module's doc), by table.
///
/// Errors: unreadable SQL files.
fn positional_readers(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
    diffs: &[DdlDiff],
    changed_files: &BTreeSet<String>,
) -> Result<BTreeMap<String, Vec<Reader>>, OpsError> {
    use crate::sql::columns::{PositionalKind, StatementColumns};
    let moved: BTreeMap<&str, &DdlDiff> = diffs
        .iter()
        .filter(|d| d.positions_changed())
        .map(|d| (d.table.as_str(), d))
        .collect();
    let mut out: BTreeMap<String, Vec<Reader>> = BTreeMap::new();
    if moved.is_empty() {
        return Ok(out);
    }
    let key = |written: &str| {
        crate::inventory::resolve_name(&crate::sql::TableName::new(written.split('.')), cfg)
    };
    let base_columns: BTreeMap<String, Vec<String>> = moved
        .iter()
        .map(|(t, d)| (t.to_string(), d.base.clone()))
        .collect();
    let (head, _) = column_lineage::project_statements(project, cfg, &BTreeMap::new())?;
    let (base, _) = column_lineage::project_statements(project, cfg, &base_columns)?;
    // The first output whose value changed (`*` for a change of count), or `None` when the reading
    // at the head fills every output as at the base.
    let changed = |h: &StatementColumns, b: &StatementColumns| -> Option<String> {
        if h.width_mismatch.is_some() {
            return Some("*".into());
        }
        if !b.unresolved.is_empty() {
            return None;
        }
        if !h.unresolved.is_empty() {
            return Some("*".into());
        }
        if h.insert {
            // Each sink column kept gets its value from the same sources; a value read from no column
            // (a literal, `VALUES`) from the same position (a column the sink gained with the change
            // is new, not changed).
            return h
                .columns
                .iter()
                .enumerate()
                .find(|(i, x)| {
                    b.columns
                        .iter()
                        .position(|y| y.name == x.name)
                        .is_some_and(|j| {
                            let y = &b.columns[j];
                            y.direct != x.direct || (x.direct.is_empty() && j != *i)
                        })
                })
                .map(|(_, x)| x.name.clone());
        }
        // A view or CTAS: its columns are named by its query; a move changes only their order.
        h.columns
            .iter()
            .find(|x| {
                b.columns
                    .iter()
                    .find(|y| y.name == x.name)
                    .is_some_and(|y| y.direct != x.direct)
            })
            .map(|x| x.name.clone())
    };
    for (h, b) in head.iter().zip(&base) {
        if (&h.file, h.columns.line, &h.columns.sink) != (&b.file, b.columns.line, &b.columns.sink)
        {
            continue;
        }
        let rewritten = changed_files.contains(&h.file);
        for p in &h.columns.positional {
            let table = key(&p.table);
            if !moved.contains_key(table.as_str()) {
                continue;
            }
            let both_unresolved = !h.columns.unresolved.is_empty()
                && !b.columns.unresolved.is_empty()
                && h.columns.width_mismatch.is_none();
            let column = if rewritten {
                // Rewritten with the change: only a count that no longer matches is certain.
                h.columns.width_mismatch.map(|_| "*".to_string())
            } else if both_unresolved {
                Some("?".to_string())
            } else {
                changed(&h.columns, &b.columns)
            };
            let Some(column) = column else { continue };
            let how = match p.kind {
                PositionalKind::Star => format!("`*` over {table}"),
                PositionalKind::NoColumnList => {
                    format!("INSERT into {table} without a column list")
                }
            };
            let why = match h.columns.width_mismatch {
                Some((outputs, cols)) => format!(
                    "{how}: {outputs} output column(s) for {cols} column(s) of {}",
                    h.table
                ),
                None if column == "?" => format!(
                    "{how}, column lineage unresolved: {}",
                    h.columns.unresolved.join("; ")
                ),
                None => format!("{how}: its column {column} now gets another value"),
            };
            let reader = Reader {
                table: h.table.clone(),
                column,
                kind: EdgeKind::Direct,
                file: h.file.clone(),
                line: h.columns.line,
                via: Some(format!("by position: {why}")),
                unsure: both_unresolved && !rewritten,
                by_position: Some(p.kind),
            };
            let list = out.entry(table).or_default();
            if !list.contains(&reader) {
                list.push(reader);
            }
        }
    }
    Ok(out)
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
            by_position: None,
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
                by_position: None,
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
