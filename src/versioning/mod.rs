//! Blue-green versioning of an impacted subgraph: give each table of the subgraph its next version
//! (`t` → `t_v2`, `t_v2` → `t_v3`), rewrite the DDL and DML that create, write or read those tables (by
//! token spans, [`crate::sql::rewrite`]), and plan the green deployment.
//!
//! Rules (shift_left 0.1.52's version-suffix rules,
//! <https://github.com/jbcodeforce/shift_left_utils>, with its defect fixed: shift_left renamed
//! textually and did not rebuild the metadata in the same run, so a deploy before the rebuild
//! deleted the blue statement; flinkpipe renames via the AST and rebuilds the graph):
//! - the subgraph is the seed tables (those with a `logic` or `schema` change) and all their descendants,
//!   closed under statements: every table written by a statement that writes a table of the subgraph is
//!   in it too, with its descendants ([`crate::graph::StatementIndex::closure`]), so a statement set is
//!   versioned whole and no green statement writes a blue table;
//! - every file that mentions a renamed table in a table position is rewritten, not only the renamed
//!   tables' own files (a statement set that writes a renamed table, a view that reads one);
//! - a table already carrying the next version against the same base (its name at the base was `t` and it
//!   is `t_v2` now) is not bumped again, so applying twice is a no-op;
//! - statement names are never written in files: they derive from the new table names, so the blue
//!   statements (`…-dml-t`) stay alive next to the green ones (`…-dml-t-v2`) until the user decommissions
//!   them;
//! - the `tests/` folders that name a renamed table (`test_definitions.yaml`, the test SQL files) are
//!   rewritten too ([`tests_folder`]), so the unit tests run on the new names;
//! - writes are all-or-nothing: every new file is staged first; if any step fails, files already replaced
//!   are restored and nothing is left changed.
//!
//! Planning is pure ([`plan_versions`]); [`apply`] writes.

pub mod baseline;
pub mod names;
pub mod record;
pub mod restore;
pub mod tests_folder;

use crate::config::Config;
use crate::graph::GraphError;
use crate::inventory::resolve_name;
use crate::plan::StatementNaming;
use crate::project::Project;
use crate::sql::rewrite::{RewriteError, rename_tables_with};
use crate::sql::{StatementKind, TableName};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use names::next_version;

/// Why versioning cannot proceed. Nothing is written in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    /// A table named in the request is not in the project.
    #[error("unknown table '{0}'")]
    UnknownTable(String),
    /// The default suffix is not `_v<digits>`.
    #[error("{0}")]
    BadSuffix(String),
    /// The new name of a table is already taken by another table of the project.
    #[error("cannot version '{old}' as '{new}': a table named '{new}' already exists ({folder})")]
    NameTaken {
        /// The table to version.
        old: String,
        /// Its next version.
        new: String,
        /// The folder of the existing table.
        folder: String,
    },
    /// A file could not be rewritten safely.
    #[error("{file}: {source}")]
    Rewrite {
        /// The file, relative (`pipelines/…`).
        file: String,
        /// What went wrong.
        source: RewriteError,
    },
    /// SIGINT arrived while the files were written: with `committed` they were all replaced first,
    /// otherwise none was.
    #[error("interrupted: {}", if *committed {
        "the files were being replaced and were all written first"
    } else {
        "no file was changed"
    })]
    Interrupted { committed: bool },
    /// A file could not be read or written; already replaced files were restored.
    #[error("{file}: {message}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        message: String,
    },
    /// The subgraph cannot be ordered.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// After the rewrite a green statement would write a table or storage that a blue (or unchanged)
    /// statement still writes: both would run at once.
    #[error("after versioning, {}; give each green table a location of its own (a 'topic', 'path', 'table-name' or 'index' that contains the table's name moves with it), then run again; nothing was written", .0.join("; "))]
    SharedWriters(Vec<String>),
}

/// One file to rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEdit {
    /// Relative path (`pipelines/intermediates/p1/x/sql-scripts/dml.x.sql`).
    pub file: String,
    /// Path on disk.
    #[serde(skip)]
    pub path: PathBuf,
    /// Content before.
    #[serde(skip)]
    pub before: String,
    /// Content after.
    #[serde(skip)]
    pub after: String,
    /// Remarks from the rewrite (e.g. a topic option that was kept).
    pub notes: Vec<String>,
}

/// One table of the green deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GreenNode {
    /// The green (new) table name.
    pub table_name: String,
    /// The blue (current) table name.
    pub blue_table_name: String,
    /// Parallel wave (0-based) among the green tables.
    pub wave: usize,
    /// Statements to create for the green table.
    pub ddl_statement_name: Option<String>,
    /// DML statement of the green table (none for DDL-only tables such as CTAS, whose DDL runs the query).
    pub dml_statement_name: Option<String>,
    /// The blue statement to stop once the green one is validated: its DML, or for a CTAS or a
    /// materialized table (no DML file) the DDL statement that runs its query.
    pub blue_dml_statement_name: Option<String>,
    /// Green parents (renamed) and blue parents that stay (unchanged tables).
    pub parents: Vec<String>,
    /// Why the table is in the green subgraph.
    pub reason: String,
}

/// The outcome of planning: renames, file edits and the green deployment, parents first.
#[derive(Debug, Clone, Serialize)]
pub struct VersionPlan {
    /// Blue name → green name.
    pub renames: BTreeMap<String, String>,
    /// Tables of the subgraph left as they are, with the reason (already versioned against the base).
    pub unchanged: Vec<(String, String)>,
    /// Files to rewrite, sorted by path.
    pub edits: Vec<FileEdit>,
    /// Green tables in deploy order.
    pub green: Vec<GreenNode>,
}

/// What to version.
#[derive(Debug, Clone, Default)]
pub struct VersionRequest {
    /// Tables whose change calls for a new version (the subgraph adds all their descendants).
    pub seeds: Vec<String>,
    /// Tables already carrying their next version against the base: kept as they are.
    pub already_versioned: BTreeSet<String>,
    /// For those: head name → name at the base (`orders_v2` → `orders`), to rebuild a lost release
    /// record.
    pub base_of: BTreeMap<String, String>,
    /// Suffix for unversioned names (`_v2`).
    pub default_suffix: String,
    /// Why each seed is one (e.g. `logic change`), shown in the plan.
    pub seed_reasons: BTreeMap<String, String>,
}

/// Plans the versioning of the seeds' subgraph (pure: reads only the project in memory).
///
/// Errors: unknown seed, invalid suffix, a new name already used by another table, a file that cannot be
/// rewritten safely (its error names the file and line), a cycle in the subgraph.
pub fn plan_versions(
    project: &Project,
    config: &Config,
    naming: &StatementNaming,
    req: &VersionRequest,
) -> Result<VersionPlan, VersionError> {
    let inv = &project.inventory;
    for s in &req.seeds {
        if !inv.tables.contains_key(s) {
            return Err(VersionError::UnknownTable(s.clone()));
        }
    }
    let seeds: Vec<&str> = req.seeds.iter().map(String::as_str).collect();
    let statements = crate::graph::StatementIndex::from_inventory(inv);
    let reached = statements.closure(&seeds, |t| project.graph.children(t));
    let mut subgraph: BTreeSet<String> = reached.keys().cloned().collect();
    subgraph.retain(|t| !inv.tables[t].external);

    let mut renames = BTreeMap::new();
    let mut unchanged = Vec::new();
    for t in &subgraph {
        if req.already_versioned.contains(t) {
            unchanged.push((t.clone(), "already versioned against the base".to_string()));
            continue;
        }
        let new = next_version(t, &req.default_suffix).map_err(VersionError::BadSuffix)?;
        if let Some(other) = inv.tables.get(&new) {
            return Err(VersionError::NameTaken {
                old: t.clone(),
                new,
                folder: other.folder.clone(),
            });
        }
        renames.insert(t.clone(), new);
    }

    // Rewrite every file that names a renamed table in a table position.
    let rename = |n: &TableName| {
        let key = resolve_name(n, config);
        renames.get(&key).map(|new| split_last(&key, new, n))
    };
    // A table's storage (topic, folder, JDBC table, index) moves with it only when the project writes
    // the table (a DML, another DML's statement set, a CTAS or a materialized table); a table it only
    // reads keeps reading the same place.
    let moves_storage = |old: &str| {
        inv.tables.get(old).is_some_and(|t| {
            t.dml_ref.is_some()
                || t.written_by.is_some()
                || matches!(
                    t.ddl_kind,
                    Some(StatementKind::Ctas | StatementKind::CreateMaterializedTable)
                )
        })
    };
    let mut edits = Vec::new();
    if !renames.is_empty() {
        let mut files: BTreeSet<(String, PathBuf)> = BTreeSet::new();
        for t in inv.tables.values().filter(|t| !t.external) {
            let touches = renames.contains_key(&t.name)
                || t.reads.iter().any(|r| renames.contains_key(&r.name))
                || t.extra_sinks.iter().any(|s| renames.contains_key(s));
            if touches {
                for rel in t.ddl_ref.iter().chain(t.dml_ref.iter()) {
                    files.insert((rel.clone(), inv.disk_path(rel)));
                }
            }
        }
        for (rel, path) in files {
            let before = crate::fsutil::read_user_text(&path, crate::fsutil::MAX_SQL_FILE_BYTES)
                .map_err(|e| VersionError::Io {
                    file: rel.clone(),
                    message: e.to_string(),
                })?;
            let out = rename_tables_with(&before, &rename, &moves_storage).map_err(|source| {
                VersionError::Rewrite {
                    file: rel.clone(),
                    source,
                }
            })?;
            if out.edits > 0 {
                edits.push(FileEdit {
                    file: rel,
                    path,
                    before,
                    after: out.text,
                    notes: out.notes,
                });
            }
        }
        check_one_writer(project, config, naming, &renames, &edits)?;
        // The unit tests that name a renamed table move with it.
        edits.extend(tests_folder::test_edits(project, config, &renames)?);
        edits.sort_by(|a, b| a.file.cmp(&b.file));
    }

    // The green deployment: renamed tables in waves, parents first.
    let renamed: BTreeSet<String> = renames.keys().cloned().collect();
    let mut green = Vec::new();
    if !renamed.is_empty() {
        for (wave, names) in project.graph.waves(Some(&renamed))?.into_iter().enumerate() {
            for blue in names {
                let t = &inv.tables[&blue];
                let new = renames[&blue].clone();
                let owner_has_dml = t.dml_ref.is_some();
                let reason = match req.seed_reasons.get(&blue) {
                    Some(r) => r.clone(),
                    None => green_reason(&reached, &blue, inv),
                };
                green.push(GreenNode {
                    table_name: new.clone(),
                    blue_table_name: blue.clone(),
                    wave,
                    ddl_statement_name: t.ddl_ref.as_ref().map(|_| naming.ddl(&t.product, &new)),
                    dml_statement_name: owner_has_dml.then(|| naming.dml(&t.product, &new)),
                    blue_dml_statement_name: if owner_has_dml {
                        Some(naming.dml(&t.product, &blue))
                    } else if matches!(
                        t.ddl_kind,
                        Some(StatementKind::Ctas | StatementKind::CreateMaterializedTable)
                    ) {
                        Some(naming.ddl(&t.product, &blue))
                    } else {
                        None
                    },
                    parents: project
                        .graph
                        .parents(&blue)
                        .into_iter()
                        .map(|p| renames.get(p).cloned().unwrap_or_else(|| p.to_string()))
                        .collect(),
                    reason,
                });
            }
        }
    }
    Ok(VersionPlan {
        renames,
        unchanged,
        edits,
        green,
    })
}

/// Why a table that is not a seed is versioned: `descendant of S`, `written by the same statement as X
/// (its DML file)`, or `descendant of C, written by the same statement as X`.
fn green_reason(
    reached: &BTreeMap<String, crate::graph::Reached>,
    table: &str,
    inv: &crate::inventory::Inventory,
) -> String {
    let Some(v) = crate::graph::statements::via(reached, table) else {
        return "versioned".into();
    };
    let dml_of = |sibling: &str| {
        let owner = inv.tables.get(sibling).map_or(sibling, |t| {
            t.written_by.as_deref().unwrap_or(t.name.as_str())
        });
        inv.tables
            .get(owner)
            .and_then(|t| t.dml_ref.clone())
            .unwrap_or_else(|| owner.to_string())
    };
    match v.statement_step {
        None => format!("descendant of {}", v.seed),
        Some((co, sibling)) if co == table => {
            format!(
                "written by the same statement as {sibling} ({})",
                dml_of(&sibling)
            )
        }
        Some((co, sibling)) => {
            format!("descendant of {co}, written by the same statement as {sibling}")
        }
    }
}

/// The one-writer rule over blue ∪ green ([`crate::inventory::writers`]): while a release is open, every
/// statement of the tree keeps running (the blue ones included) and the green statements of the renamed
/// tables start beside them, with the SQL of the rewritten files. A table or storage location written by
/// a green statement and by any other statement refuses the versioning (tables of
/// `flinkpipe.multi_writer_tables` are accepted).
///
/// Errors: [`VersionError::SharedWriters`] with one line per collision; [`VersionError::Io`] when a file
/// of a renamed statement cannot be read.
fn check_one_writer(
    project: &Project,
    config: &Config,
    naming: &StatementNaming,
    renames: &BTreeMap<String, String>,
    edits: &[FileEdit],
) -> Result<(), VersionError> {
    use crate::inventory::writers;
    let inv = &project.inventory;
    let blue = writers::tree_writes(&inv.tables, |t, dml| {
        if dml {
            naming.dml(&t.product, &t.name)
        } else {
            naming.ddl(&t.product, &t.name)
        }
    });
    // Storage after the rewrite: the rewritten DDLs' own, else the tree's.
    let mut storage = writers::inventory_storage(&inv.tables);
    for e in edits {
        storage.extend(writers::created_storage(
            &crate::sql::analyze(&e.after),
            config,
        ));
    }
    let mut all = blue;
    for (old, new) in renames {
        let t = &inv.tables[old];
        if !crate::graph::statements::owns_statement(t) {
            continue;
        }
        let (file, statement) = match &t.dml_ref {
            Some(dml) => (dml, naming.dml(&t.product, new)),
            None => match &t.ddl_ref {
                Some(ddl) => (ddl, naming.ddl(&t.product, new)),
                None => continue,
            },
        };
        let text = match edits.iter().find(|e| &e.file == file) {
            Some(e) => e.after.clone(),
            None => crate::fsutil::read_user_text(
                &inv.disk_path(file),
                crate::fsutil::MAX_SQL_FILE_BYTES,
            )
            .map_err(|e| VersionError::Io {
                file: file.clone(),
                message: e.to_string(),
            })?,
        };
        let analysis = crate::sql::analyze(&text);
        all.extend(writers::sql_writes(
            &statement, &analysis, config, &storage, file,
        ));
    }
    let green: BTreeSet<String> = renames
        .iter()
        .filter_map(|(old, new)| {
            let t = &inv.tables[old];
            crate::graph::statements::owns_statement(t).then(|| {
                if t.dml_ref.is_some() {
                    naming.dml(&t.product, new)
                } else {
                    naming.ddl(&t.product, new)
                }
            })
        })
        .collect();
    // A statement of the tree whose file the rewrite edits but whose owner is not versioned would keep
    // its name with new SQL: it would be restarted in place, and blue would lose what it writes.
    let mut found_in_place = Vec::new();
    for t in inv.tables.values().filter(|t| {
        !t.external && crate::graph::statements::owns_statement(t) && !renames.contains_key(&t.name)
    }) {
        let file = t
            .dml_ref
            .as_ref()
            .or(t.ddl_ref.as_ref().filter(|_| t.dml_ref.is_none()));
        if let Some(file) = file
            && edits.iter().any(|e| &e.file == file)
        {
            found_in_place.push(format!(
                "the statement of {} ({file}) would keep its name with rewritten SQL (restarted in place, not beside blue): it writes or reads a versioned table and must be versioned too",
                t.name
            ));
        }
    }
    if !found_in_place.is_empty() {
        return Err(VersionError::SharedWriters(found_in_place));
    }
    let found: Vec<String> = writers::conflicts(&all, &writers::allowed(config))
        .into_iter()
        .filter(|c| c.writes.iter().any(|w| green.contains(&w.statement)))
        .map(|c| c.to_string())
        .collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(VersionError::SharedWriters(found))
    }
}

/// The new last part for a reference whose resolved key is being renamed: the key's own new name when the
/// reference is written bare or qualified (qualifiers are kept by the rewriter).
fn split_last(_key: &str, new: &str, _written: &TableName) -> String {
    // `resolve_name` keeps non-default qualifiers in the key (`db.t`); the rewriter replaces only the last
    // part, so give it the new table part.
    // The key's last part, unquoted (`` `x.y_v2` `` is one identifier, [`TableName::key`]).
    crate::sql::TableName::from_key(new).table().to_string()
}

/// A unified diff of every edit (`--- a/<file>` / `+++ b/<file>`), files in path order.
pub fn unified_diff(plan: &VersionPlan) -> String {
    let mut out = String::new();
    for e in &plan.edits {
        let diff = similar::TextDiff::from_lines(&e.before, &e.after);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(2)
                .header(&format!("a/{}", e.file), &format!("b/{}", e.file))
                .to_string(),
        );
    }
    out
}

/// Writes every edit and the `extra` files (path, new text: the blue-green record, which the user
/// cannot rebuild, so it changes with the SQL it describes), all or nothing, as one
/// [`crate::fsutil::Batch`] under `pipelines` (`command` is what runs, for its marker): each new content is staged in a temporary file beside its target, then
/// the temporaries are renamed over the targets; if anything fails, the targets already replaced get
/// their previous content back and the remaining temporaries are removed. SIGINT while staging leaves
/// every file as it was.
///
/// Errors: [`VersionError::Io`] naming the file (after the restore), [`VersionError::Interrupted`].
pub fn apply(
    plan: &VersionPlan,
    pipelines: &Path,
    command: &str,
    extra: &[(PathBuf, String)],
) -> Result<(), VersionError> {
    let io = |file: &str, message: String| VersionError::Io {
        file: file.to_string(),
        message,
    };
    // Refuse if a file changed since it was planned: the user edited it in between.
    for e in &plan.edits {
        let now = crate::fsutil::read_user_text(&e.path, crate::fsutil::MAX_SQL_FILE_BYTES)
            .map_err(|err| io(&e.file, err.to_string()))?;
        if now != e.before {
            return Err(VersionError::Io {
                file: e.file.clone(),
                message: "changed since it was read; run again".into(),
            });
        }
    }
    let batch_err = |err: crate::fsutil::BatchError| match err {
        crate::fsutil::BatchError::Interrupted { committed } => {
            VersionError::Interrupted { committed }
        }
        crate::fsutil::BatchError::File(err) => {
            let file = plan
                .edits
                .iter()
                .find(|e| e.path == err.path)
                .map_or_else(|| err.path.display().to_string(), |e| e.file.clone());
            io(&file, err.source.to_string())
        }
    };
    // The SQL files change first; rebuilding the metadata repairs the rest if this batch is killed.
    let batch = crate::fsutil::Batch::begin(pipelines, command, crate::metadata::REPAIR)
        .map_err(|e| batch_err(e.into()))?;
    let mut staged = Vec::with_capacity(plan.edits.len() + extra.len());
    let files = plan
        .edits
        .iter()
        .map(|e| (&e.path, e.after.as_str()))
        .chain(extra.iter().map(|(p, t)| (p, t.as_str())));
    for (path, text) in files {
        match batch.stage(path, text.as_bytes()) {
            Ok(s) => staged.extend(s),
            Err(err) => {
                batch.abandon(staged);
                return Err(batch_err(err));
            }
        }
    }
    // All or nothing (fsutil::commit puts back the files already replaced if a rename fails).
    batch.commit(staged).map_err(batch_err)
}

/// Undoes an [`apply`]: every edited file that still holds what `apply` wrote gets its content from
/// before the edit (used when a later step of the same run, such as rebuilding the metadata, fails). A
/// file edited meanwhile by someone else is left as it is. Returns the files not restored.
pub fn restore(plan: &VersionPlan) -> Vec<String> {
    plan.edits
        .iter()
        .filter(|e| {
            let ours = std::fs::read_to_string(&e.path).is_ok_and(|now| now == e.after);
            !ours || crate::fsutil::write_atomic(&e.path, e.before.as_bytes()).is_err()
        })
        .map(|e| e.file.clone())
        .collect()
}

/// The versioning request for `pipeline blue-green --since REF`: seeds are the tables with a `logic` or
/// `schema` change; tables whose head name is the next version of their base name are already versioned.
///
/// Errors: reading the base commit.
pub fn blue_green_request(
    project: &Project,
    config: &Config,
    pipelines_dir: &std::path::Path,
    changes: &crate::changes::ChangeSet,
    default_suffix: &str,
) -> Result<VersionRequest, crate::changes::ChangeError> {
    use crate::changes::{ChangeKind, HeadGraph, impact::changed_tables_at_head};
    let head = HeadGraph::from_project(project);
    let mut seeds = Vec::new();
    let mut seed_reasons = BTreeMap::new();
    for (name, kind, _) in changed_tables_at_head(&changes.files, &head) {
        if matches!(kind, ChangeKind::Logic | ChangeKind::Schema)
            && project.inventory.tables.contains_key(&name)
        {
            seed_reasons.insert(name.clone(), format!("{kind} change"));
            seeds.push(name);
        }
    }
    let seed_refs: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let subgraph = crate::graph::StatementIndex::from_inventory(&project.inventory)
        .closure_set(&seed_refs, |t| project.graph.children(t));
    let base = baseline::base_names(
        pipelines_dir,
        &changes.base_commit,
        project,
        config,
        &subgraph,
    )?;
    let base_of: BTreeMap<String, String> = base
        .iter()
        .filter(|(head_name, base_name)| {
            *head_name != *base_name
                && next_version(base_name, default_suffix).is_ok_and(|n| &n == *head_name)
        })
        .map(|(h, b)| (h.clone(), b.clone()))
        .collect();
    Ok(VersionRequest {
        seeds,
        already_versioned: base_of.keys().cloned().collect(),
        base_of,
        default_suffix: default_suffix.to_string(),
        seed_reasons,
    })
}
