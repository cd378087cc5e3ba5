//! The inventory: one entry per table of the project, keyed by table name, with where it is defined and
//! what its SQL reads. Built from a [`ScanResult`]; written as shift_left's
//! `inventory.json` by [`shift_left`].
//!
//! Table name = the first INSERT target of the DML, else the table the DDL creates (never the folder or
//! file name). Names are resolved against the configured default catalog and database
//! ([`resolve_name`]).

mod external;
mod folder;
pub mod names;
pub mod shift_left;
pub mod writers;

pub use external::manifests_key;
use external::read_external_manifests;
pub use external::{ExternalDeclaration, ManifestError, external_table, parse_external_manifest};
use folder::table_from_folder;
pub use folder::{first_created, first_created_statement, first_insert_target};

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::scan::{ScanResult, TableFolder};
use crate::sql::{
    FileAnalysis, JoinCounts, StateReason, Statefulness, StatementKind, TableName, TableRef,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Type of tables declared in `seeds/external_tables.json` or kept for unknown references
/// (shift_left's `external_kafka`).
pub const EXTERNAL_TYPE: &str = "external_kafka";

/// How a child depends on a parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadKind {
    /// The child's query reads the parent's rows.
    Data,
    /// `CREATE TABLE child LIKE parent`: the parent must exist first; no data flows.
    Like,
}

/// One relation a table's SQL reads, resolved to an inventory key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Reference {
    /// Resolved key (bare table name, or the dotted name when it keeps non-default qualifiers).
    pub name: String,
    pub kind: ReadKind,
    /// File where it is read, relative (`pipelines/…`).
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One `INSERT` member of a statement set that writes another table than the DML's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetMemberWrite {
    /// Resolved key of the member's sink.
    pub sink: String,
    /// What the member reads (file-local temporary relations excluded).
    pub reads: Vec<Reference>,
    /// DML file (relative), line and column of the sink as written.
    pub file: String,
    pub line: usize,
    pub column: usize,
}

/// One table of the inventory.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub name: String,
    /// Product folder name, `"None"` for none, `"common"` for synthetic externals.
    pub product: String,
    /// `source`, `intermediate`, `dimension`, `fact`, `view`, `seed`, `external_kafka`, …
    pub table_type: String,
    /// Table folder, relative (`pipelines/facts/p1/fct_order`).
    pub folder: String,
    pub ddl_ref: Option<String>,
    pub dml_ref: Option<String>,
    /// The Kafka topic: the DDL's `'topic'` WITH option (open-source Kafka connectors), else `None`
    /// (Confluent Cloud tables are their topic; shift_left writes `null`); for external tables the
    /// manifest's `kafka_topic`, else the name.
    pub kafka_topic: Option<String>,
    /// Declared external (not deployed by this project).
    pub external: bool,
    /// Kept for a reference no folder defines and no manifest declares (`--allow-unknown`): a node of
    /// the graph and a parent in `pipeline_definition.json` (shift_left's synthetic `external_kafka`
    /// parents), but not an entry of `inventory.json`, which lists folders and manifests only.
    pub unknown: bool,
    /// For a table declared in a `seeds/external_tables.json`: that manifest (relative, starting with
    /// the pipelines folder's name).
    #[serde(skip)]
    pub manifest: Option<String>,
    /// What its DDL and DML read (sorted, one entry per name and kind; first location kept).
    pub reads: Vec<Reference>,
    /// Other tables written by the same DML (the other INSERTs of a statement set).
    pub extra_sinks: Vec<String>,
    /// Line and column, in the DML, of the first INSERT that writes this table (its own statement).
    #[serde(skip)]
    pub sink_at: Option<(usize, usize)>,
    /// For a table without DML of its own that another table's statement set writes: that table.
    pub written_by: Option<String>,
    /// The members of this table's statement set(s) that write other tables, each with its own reads
    /// (given to those tables by [`Inventory::build`]). Internal: not serialised.
    #[serde(skip)]
    pub set_member_writes: Vec<SetMemberWrite>,
    /// Project-level statefulness of the table's query (lookup joins on lookup connectors are stateless;
    /// `Unknown` when a statement the parser rejected writes the table and the token-level fallback found
    /// no stateful operator in it).
    pub statefulness: Statefulness,
    /// Whether the statefulness rests on a statement read by the token-level fallback (a `sql-fallback`
    /// warning names it): recorded in the metadata so that it is never mistaken for a parsed answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub state_from_fallback: bool,
    pub state_reasons: Vec<StateReason>,
    pub joins: JoinCounts,
    pub primary_key: Vec<String>,
    pub with_options: Vec<(String, String)>,
    /// Statement kind that creates the table (`create_table`, `ctas`, `create_materialized_table`, `create_view`).
    pub ddl_kind: Option<StatementKind>,
    /// Versioned sides of `FOR SYSTEM_TIME AS OF` joins (resolved keys).
    pub temporal_join_sources: Vec<String>,
}

impl Table {
    /// Whether its DDL is `CREATE [OR ALTER] MATERIALIZED TABLE`: a table and its continuous
    /// query in one object (on Confluent Cloud a resource of its own,
    /// [`crate::target::materialized`]).
    pub fn is_materialized_table(&self) -> bool {
        self.ddl_kind == Some(StatementKind::CreateMaterializedTable)
    }

    /// The table's `connector` WITH option, if any.
    pub fn connector(&self) -> Option<&str> {
        self.with_options
            .iter()
            .find(|(k, _)| k == "connector")
            .map(|(_, v)| v.as_str())
    }
}

/// The project's tables and the problems found while building them.
#[derive(Debug, Clone)]
pub struct Inventory {
    /// Name of the pipelines root folder (first component of stored paths).
    pub root_name: String,
    pub root: PathBuf,
    pub tables: BTreeMap<String, Table>,
    pub diagnostics: Vec<Diagnostic>,
    /// `flinkpipe.sql_variables` the names were resolved with: what is deployed has them substituted.
    pub sql_variables: BTreeMap<String, String>,
    /// The key (XXH3-128) of the `seeds/external_tables.json` manifests as [`Inventory::build`] read
    /// them (paths and texts); `None` when one could not be read (or no scan built the inventory).
    /// Part of [`crate::project::Project::inputs`].
    pub manifests_key: Option<u128>,
}

/// Resolves a name as written to an inventory key: qualifiers equal to the configured default catalog
/// (`flink.catalog_name`) and database (`flink.database_name`) are dropped; other qualifiers are kept
/// (dotted), so `other_db.t` never silently matches the local `t` (Flink name resolution:
/// `catalog.db.table`, 2 parts = `db.table` in the current catalog).
///
/// Template placeholders in the name (`${env}_orders`) are replaced by `flinkpipe.sql_variables` first.
/// Parts that would read ambiguously joined (`` `x.y` ``, one identifier, against `` `x`.`y` ``) are
/// written back in backquotes ([`TableName::key`]), so two different names never share a key.
pub fn resolve_name(name: &TableName, config: &Config) -> String {
    let vars = &config.flinkpipe.sql_variables;
    let substituted;
    let name = if !vars.is_empty()
        && name
            .parts
            .iter()
            .any(|p| p.contains("${") || p.contains("{{"))
    {
        substituted = TableName::new(
            name.parts
                .iter()
                .map(|p| crate::sql::placeholders::substitute(p, vars))
                .collect::<Vec<String>>(),
        );
        &substituted
    } else {
        name
    };
    let parts = &name.parts;
    let cat = config.flink.catalog_name.as_deref();
    let db = config.flink.database_name.as_deref();
    match parts.len() {
        3 if Some(parts[0].as_str()) == cat && Some(parts[1].as_str()) == db => {
            crate::sql::key_part(&parts[2])
        }
        2 if Some(parts[0].as_str()) == db => crate::sql::key_part(&parts[1]),
        _ => name.key(),
    }
}

/// A table's identity in the catalogs, for comparing names written under different current
/// catalogs and databases: `[catalog, database, table]`, the missing qualifiers of `name` filled in
/// from `catalog` and `database` (a statement's `sql.current-catalog` / `sql.current-database`); a
/// qualifier that is unknown stays empty (Flink has no empty identifier, so it matches only another
/// unknown one). A name of more than three parts is kept whole. Parts compare exactly, as Flink
/// compares identifiers; the result's [`TableName::key`] is a key for it.
pub fn qualified(name: &TableName, catalog: Option<&str>, database: Option<&str>) -> TableName {
    let c = catalog.unwrap_or_default().to_string();
    let d = database.unwrap_or_default().to_string();
    match name.parts.as_slice() {
        [t] => TableName::new([c, d, t.clone()]),
        [db, t] => TableName::new([c, db.clone(), t.clone()]),
        _ => name.clone(),
    }
}

/// Connectors that serve lookup (processing-time) joins without keeping join state.
const LOOKUP_CONNECTORS: &[&str] = &[
    "jdbc",
    "hbase-1.4",
    "hbase-2.2",
    "hbase",
    "mongodb",
    "redis",
    "http",
    "hive",
];

impl Inventory {
    /// Builds the inventory from a scan.
    ///
    /// Problems become diagnostics (never a panic, never an abort): a table defined by two folders (both
    /// paths), a DML whose INSERT target differs from its DDL's table, a folder whose SQL names no table,
    /// a table written by two DMLs, an unreadable `external_tables.json`.
    pub fn build(scan: &ScanResult, config: &Config) -> Inventory {
        let mut diagnostics = scan.diagnostics.clone();
        // A placeholder the configuration gives a value to is resolved, not a warning.
        let vars = &config.flinkpipe.sql_variables;
        diagnostics.retain(|d| {
            d.code != "sql-placeholder"
                || !d
                    .message
                    .strip_prefix("unresolved template placeholder ")
                    .and_then(|m| m.split(" (").next())
                    .is_some_and(|p| vars.contains_key(crate::sql::placeholders::name_of(p)))
        });
        // A first folder that maps to no layer makes every table under it `unknown-type`: say so once.
        let unknown_layers: BTreeSet<String> = scan
            .folders
            .iter()
            .filter(|f| f.table_type == crate::scan::layout::UNKNOWN_TYPE)
            .filter_map(|f| f.rel.split('/').nth(1).map(str::to_string))
            .collect();
        for layer in unknown_layers {
            diagnostics.push(
                Diagnostic::warning(
                    "unknown-layer",
                    format!(
                        "folder '{layer}' is not a layer folder (sources, intermediates, dimensions, facts, views, seeds); its tables get type unknown-type — map it under flinkpipe.layers in config.yaml"
                    ),
                )
                .at(format!("{}/{layer}", scan.root_name), None, None),
            );
        }
        let mut tables: BTreeMap<String, Table> = BTreeMap::new();
        // Each folder's table is built on the thread pool (they are independent); they are then
        // taken in folder order, with their diagnostics, as one after the other would be.
        let built: Vec<(Option<Table>, Vec<Diagnostic>)> = {
            use rayon::prelude::*;
            scan.folders
                .par_iter()
                .map(|folder| {
                    let mut found = Vec::new();
                    (table_from_folder(folder, config, &mut found), found)
                })
                .collect()
        };
        for (table, found) in built {
            diagnostics.extend(found);
            let Some(table) = table else {
                continue;
            };
            if let Some(existing) = tables.get(&table.name) {
                diagnostics.push(
                    Diagnostic::error(
                        "duplicate-table",
                        format!(
                            "table '{}' is defined by two folders: {} and {}",
                            table.name, existing.folder, table.folder
                        ),
                    )
                    .at(
                        table
                            .ddl_ref
                            .clone()
                            .or(table.dml_ref.clone())
                            .unwrap_or(table.folder.clone()),
                        None,
                        None,
                    ),
                );
                continue;
            }
            tables.insert(table.name.clone(), table);
        }
        let (externals, manifests_key) = read_external_manifests(
            &scan.root,
            &scan.root_name,
            &scan.external_manifests,
            &mut diagnostics,
        );
        let external_names: BTreeSet<&str> = externals.iter().map(|t| t.name.as_str()).collect();
        let multi_writer = writers::allowed(config);
        attach_statement_set_sinks(
            &mut tables,
            &external_names,
            &multi_writer,
            &mut diagnostics,
        );
        for ext in externals {
            let declared_at = ext
                .manifest
                .clone()
                .unwrap_or_else(|| format!("{}/seeds/external_tables.json", scan.root_name));
            match tables.get(&ext.name) {
                Some(first) if first.external => diagnostics.push(
                    Diagnostic::warning(
                        "external-declared-twice",
                        format!(
                            "'{}' is declared more than once in seeds/external_tables.json manifests; the first declaration (topic '{}'{}) is kept",
                            ext.name,
                            first.kafka_topic.as_deref().unwrap_or(&first.name),
                            first
                                .manifest
                                .as_deref()
                                .filter(|m| Some(*m) != ext.manifest.as_deref())
                                .map(|m| format!(", in {m}"))
                                .unwrap_or_default()
                        ),
                    )
                    .at(declared_at, None, None),
                ),
                Some(defined) => diagnostics.push(
                    Diagnostic::warning(
                        "external-defined",
                        format!(
                            "'{}' is declared external in seeds/external_tables.json but {} defines it; the folder wins",
                            ext.name, defined.folder
                        ),
                    )
                    .at(declared_at, None, None),
                ),
                None => {
                    tables.insert(ext.name.clone(), ext);
                }
            }
        }
        classify_lookup_joins(&mut tables);
        classify_through_views_and_updating_sources(&mut tables);
        shared_storage(&tables, &multi_writer, &mut diagnostics);
        Inventory {
            root_name: scan.root_name.clone(),
            root: scan.root.clone(),
            tables,
            diagnostics,
            sql_variables: config.flinkpipe.sql_variables.clone(),
            manifests_key,
        }
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Tables written by another table's DML take, as their own reads, what the statement-set members writing
/// them read (for sinks of other statements: that DML's reads). A statement-set sink that no table folder
/// defines (nor `seeds/external_tables.json` declares) is an error: its writes would be invisible.
///
/// A table written by two statements is an error (`table-written-twice`, naming both), unless
/// `flinkpipe.multi_writer_tables` lists it: then it keeps its own writer and takes the other
/// statement's reads as well.
fn attach_statement_set_sinks(
    tables: &mut BTreeMap<String, Table>,
    externals: &BTreeSet<&str>,
    multi_writer: &BTreeSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let writers: Vec<Table> = tables
        .values()
        .filter(|t| !t.extra_sinks.is_empty())
        .cloned()
        .collect();
    for Table {
        name: writer,
        extra_sinks: sinks,
        reads,
        dml_ref,
        set_member_writes,
        ..
    } in writers
    {
        for sink in sinks {
            let members: Vec<&SetMemberWrite> = set_member_writes
                .iter()
                .filter(|m| m.sink == sink)
                .collect();
            // Where the table's other writer writes it: its own DML, or the member of the statement
            // set that claimed it first.
            let other_at = tables.get(&sink).and_then(|t| match &t.written_by {
                Some(w) => tables.get(w).and_then(|wt| {
                    wt.set_member_writes
                        .iter()
                        .find(|m| m.sink == sink)
                        .map(|m| format!("{}:{}", m.file, m.line))
                        .or_else(|| wt.dml_ref.clone())
                }),
                None => t.dml_ref.as_ref().map(|d| match t.sink_at {
                    Some((line, _)) => format!("{d}:{line}"),
                    None => d.clone(),
                }),
            });
            let Some(target) = tables.get_mut(&sink) else {
                if let Some(m) = members.first()
                    && !externals.contains(sink.as_str())
                {
                    diagnostics.push(
                        Diagnostic::error(
                            "sink-without-folder",
                            format!(
                                "the DML {} writes '{sink}', which no table folder defines (add a folder with its DDL)",
                                m.file
                            ),
                        )
                        .at(m.file.clone(), Some(m.line), Some(m.column)),
                    );
                }
                continue;
            };
            let written_twice = target.dml_ref.is_some() || target.written_by.is_some();
            if written_twice && !writers::is_allowed(multi_writer, &sink) {
                let other = target
                    .written_by
                    .clone()
                    .unwrap_or_else(|| target.name.clone());
                diagnostics.push(
                    Diagnostic::error(
                        "table-written-twice",
                        format!(
                            "table '{sink}' is written by the DML of '{writer}'{} and by the DML of '{other}'{}: two running jobs would interleave their rows; give each its own table, or list '{sink}' in flinkpipe.multi_writer_tables if two jobs feed it on purpose",
                            members
                                .first()
                                .map(|m| format!(" ({}:{})", m.file, m.line))
                                .unwrap_or_default(),
                            other_at.map(|a| format!(" ({a})")).unwrap_or_default()
                        ),
                    )
                    .at(
                        members
                            .first()
                            .map(|m| m.file.clone())
                            .or_else(|| dml_ref.clone())
                            .unwrap_or_default(),
                        members.first().map(|m| m.line),
                        members.first().map(|m| m.column),
                    ),
                );
                continue;
            }
            if !written_twice {
                target.written_by = Some(writer.clone());
            }
            // A statement-set sink reads what its own members read (a member reading its own sink is a
            // genuine self-reference); another statement's sink keeps the whole DML's reads.
            let given: Vec<&Reference> = if members.is_empty() {
                reads.iter().filter(|r| r.name != sink).collect()
            } else {
                members.iter().flat_map(|m| m.reads.iter()).collect()
            };
            for r in given {
                if !target
                    .reads
                    .iter()
                    .any(|x| x.name == r.name && x.kind == r.kind)
                {
                    target.reads.push(r.clone());
                }
            }
            target.reads.sort();
        }
    }
}

/// Two statements of the tree that write one storage location (a topic, path, JDBC table or index)
/// through different tables: an error (`storage-written-twice`) naming both INSERTs, unless every table
/// involved is in `flinkpipe.multi_writer_tables`. (One table written twice is `table-written-twice`.)
fn shared_storage(
    tables: &BTreeMap<String, Table>,
    multi_writer: &BTreeSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let label =
        |t: &Table, dml: bool| format!("the {} of '{}'", if dml { "DML" } else { "CTAS" }, t.name);
    let writes = writers::tree_writes(tables, label);
    for c in writers::conflicts(&writes, multi_writer) {
        if !matches!(c.on, writers::Collision::Storage(_)) {
            continue;
        }
        let (file, line) = c
            .writes
            .first()
            .and_then(|w| w.at.rsplit_once(':'))
            .map(|(f, l)| (f.to_string(), l.parse().ok()))
            .unwrap_or_default();
        diagnostics.push(
            Diagnostic::error(
                "storage-written-twice",
                format!(
                    "{c}: two running jobs would interleave their rows; give each table its own location, or list the tables in flinkpipe.multi_writer_tables if they are fed together on purpose"
                ),
            )
            .at(file, line, None),
        );
    }
}

/// A temporal join whose versioned side is a lookup connector is a processing-time lookup join: no join
/// state (Flink's lookup join:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/queries/joins/#lookup-join>).
/// Only project-level analysis can see both DDLs.
fn classify_lookup_joins(tables: &mut BTreeMap<String, Table>) {
    let lookup: BTreeSet<String> = tables
        .values()
        .filter(|t| {
            t.connector()
                .is_some_and(|c| LOOKUP_CONNECTORS.contains(&c))
        })
        .map(|t| t.name.clone())
        .collect();
    for t in tables.values_mut() {
        if t.statefulness != Statefulness::Stateful
            || !t.state_reasons.contains(&StateReason::TemporalJoin)
        {
            continue;
        }
        let only_temporal = t
            .state_reasons
            .iter()
            .all(|r| *r == StateReason::TemporalJoin);
        if only_temporal && t.temporal_sources_all_lookup(&lookup) {
            t.statefulness = Statefulness::Stateless;
            t.state_reasons.clear();
        }
    }
}

/// Whether reading `t` gives the planner an upsert (or retract) changelog, which it normalizes with a
/// stateful `ChangelogNormalize` ([`StateReason::UpdatingSource`]): the `upsert-kafka` connector, a
/// `'changelog.mode'` of `upsert` or `retract`, or a table with a primary key and neither a connector
/// nor a mode (Confluent Cloud, whose default mode for a table with a primary key is `upsert`). A
/// primary key on an append-only connector (`datagen`, `kafka`, `filesystem`) does not count.
pub fn reads_as_updating(t: &Table) -> bool {
    let mode = t
        .with_options
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("changelog.mode"))
        .map(|(_, v)| v.to_ascii_lowercase());
    match mode.as_deref() {
        Some("upsert" | "retract") => true,
        Some(_) => false,
        None => {
            t.connector() == Some("upsert-kafka")
                || (t.connector().is_none() && !t.primary_key.is_empty())
        }
    }
}

/// What only the project sees of a query's state: a view it reads runs inside its job (the planner
/// inlines views, and views of views), so the view's state reasons are the reader's
/// ([`StateReason::View`] besides them); an updating source it reads (directly or through a view) is
/// normalized with state ([`StateReason::UpdatingSource`]). Runs to a fixpoint, so a chain of views
/// of any length is seen through; a view whose statefulness is unknown makes a stateless reader
/// unknown.
fn classify_through_views_and_updating_sources(tables: &mut BTreeMap<String, Table>) {
    let updating: BTreeSet<String> = tables
        .values()
        .filter(|t| reads_as_updating(t))
        .map(|t| t.name.clone())
        .collect();
    loop {
        let views: BTreeMap<String, (Statefulness, Vec<StateReason>)> = tables
            .values()
            .filter(|t| t.ddl_kind == Some(StatementKind::CreateView))
            .map(|t| (t.name.clone(), (t.statefulness, t.state_reasons.clone())))
            .collect();
        let mut changed = false;
        for t in tables.values_mut() {
            if t.statefulness == Statefulness::None || t.external {
                continue;
            }
            let mut add: Vec<StateReason> = Vec::new();
            let mut unknown = false;
            for r in t.reads.iter().filter(|r| r.kind == ReadKind::Data) {
                if r.name == t.name {
                    continue;
                }
                if updating.contains(&r.name) {
                    add.push(StateReason::UpdatingSource);
                }
                if let Some((s, reasons)) = views.get(&r.name) {
                    match s {
                        Statefulness::Stateful => {
                            add.push(StateReason::View);
                            add.extend(reasons.iter().copied());
                        }
                        Statefulness::Unknown => unknown = true,
                        _ => {}
                    }
                }
            }
            for a in add {
                if !t.state_reasons.contains(&a) {
                    t.state_reasons.push(a);
                    t.state_reasons.sort();
                    changed = true;
                }
            }
            if !t.state_reasons.is_empty() && t.statefulness != Statefulness::Stateful {
                t.statefulness = Statefulness::Stateful;
                changed = true;
            } else if unknown && t.statefulness == Statefulness::Stateless {
                t.statefulness = Statefulness::Unknown;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

impl Table {
    fn temporal_sources_all_lookup(&self, lookup: &BTreeSet<String>) -> bool {
        !self.temporal_join_sources.is_empty()
            && self
                .temporal_join_sources
                .iter()
                .all(|s| lookup.contains(s))
    }
}

impl Inventory {
    /// A stored relative path made relative to the pipelines root (`pipelines/facts/x` → `facts/x`); a path
    /// that does not start with the root's name is returned as it is.
    pub fn rel_to_root<'a>(&self, rel: &'a str) -> &'a str {
        rel.strip_prefix(&self.root_name)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(rel)
    }

    /// The on-disk path of a stored relative path (`pipelines/facts/x` → `<root>/facts/x`).
    pub fn disk_path(&self, rel: &str) -> PathBuf {
        let rest = self.rel_to_root(rel);
        if rest.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rest)
        }
    }
}

#[cfg(test)]
mod name_key_tests {
    use super::{qualified, resolve_name};
    use crate::config::Config;
    use crate::sql::TableName;
    use std::collections::HashMap;

    /// Issue #41 item 13, exhaustively over names of the characters that could make two names
    /// print alike (`.`, `` ` ``): two names that resolve to one inventory key are one table of
    /// the catalogs (same catalog, database and identifier), whatever the configured catalog and
    /// database — `` `x.y` `` and `` `x`.`y` `` never share a key.
    #[test]
    fn an_inventory_key_never_stands_for_two_tables() {
        let mut parts: Vec<String> = Vec::new();
        for a in ['a', '.', '`'] {
            parts.push(a.to_string());
            for b in ['a', '.', '`'] {
                parts.push(format!("{a}{b}"));
            }
        }
        let mut names = Vec::new();
        for a in &parts {
            names.push(TableName::new([a.clone()]));
            for b in &parts {
                names.push(TableName::new([a.clone(), b.clone()]));
                for c in &parts {
                    names.push(TableName::new([a.clone(), b.clone(), c.clone()]));
                }
            }
        }
        for (cat, db) in [
            (None, None),
            (Some("a"), Some("a")),
            (Some("a."), Some(".a")),
            (Some("a"), None),
        ] {
            let mut cfg = Config::default();
            cfg.flink.catalog_name = cat.map(str::to_string);
            cfg.flink.database_name = db.map(str::to_string);
            let mut seen: HashMap<String, TableName> = HashMap::new();
            for n in &names {
                let key = resolve_name(n, &cfg);
                let table = qualified(n, cat, db);
                if let Some(other) = seen.get(&key) {
                    assert_eq!(
                        other, &table,
                        "{n:?} and another name share the key {key} ({cat:?}, {db:?})"
                    );
                } else {
                    seen.insert(key, table);
                }
            }
        }
        let cfg = Config::default();
        assert_ne!(
            resolve_name(&TableName::new(["x.y"]), &cfg),
            resolve_name(&TableName::new(["x", "y"]), &cfg)
        );
    }
}
