//! The inventory: one entry per table of the project, keyed by table name, with where it is defined and
//! what its SQL reads. Built from a [`ScanResult`]; written as shift_left's
//! `inventory.json` by [`shift_left`].
//!
//! Table name = the first INSERT target of the DML, else the table the DDL creates (never the folder or
//! file name). Names are resolved against the configured default catalog and database
//! ([`resolve_name`]).

pub mod shift_left;

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::project::{ScanResult, TableFolder};
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
    /// For a table without DML of its own that another table's statement set writes: that table.
    pub written_by: Option<String>,
    /// The members of this table's statement set(s) that write other tables, each with its own reads
    /// (given to those tables by [`Inventory::build`]). Internal: not serialised.
    #[serde(skip)]
    pub set_member_writes: Vec<SetMemberWrite>,
    /// Project-level statefulness of the table's query (lookup joins on lookup connectors are stateless).
    pub statefulness: Statefulness,
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
}

/// Resolves a name as written to an inventory key: qualifiers equal to the configured default catalog
/// (`flink.catalog_name`) and database (`flink.database_name`) are dropped; other qualifiers are kept
/// (dotted), so `other_db.t` never silently matches the local `t` (Flink name resolution:
/// `catalog.db.table`, 2 parts = `db.table` in the current catalog).
pub fn resolve_name(name: &TableName, config: &Config) -> String {
    let parts = &name.parts;
    let cat = config.flink.catalog_name.as_deref();
    let db = config.flink.database_name.as_deref();
    match parts.len() {
        3 if Some(parts[0].as_str()) == cat && Some(parts[1].as_str()) == db => parts[2].clone(),
        2 if Some(parts[0].as_str()) == db => parts[1].clone(),
        _ => name.dotted(),
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
        // A first folder that maps to no layer makes every table under it `unknown-type`: say so once.
        let unknown_layers: BTreeSet<String> = scan
            .folders
            .iter()
            .filter(|f| f.table_type == crate::project::layout::UNKNOWN_TYPE)
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
        for folder in &scan.folders {
            let Some(table) = table_from_folder(folder, config, &mut diagnostics) else {
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
        let externals = read_external_manifests(
            &scan.root,
            &scan.root_name,
            &scan.external_manifests,
            &mut diagnostics,
        );
        let external_names: BTreeSet<&str> = externals.iter().map(|t| t.name.as_str()).collect();
        attach_statement_set_sinks(&mut tables, &external_names, &mut diagnostics);
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
        Inventory {
            root_name: scan.root_name.clone(),
            root: scan.root.clone(),
            tables,
            diagnostics,
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
fn attach_statement_set_sinks(
    tables: &mut BTreeMap<String, Table>,
    externals: &BTreeSet<&str>,
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
            if target.dml_ref.is_some() || target.written_by.is_some() {
                let other = target
                    .written_by
                    .clone()
                    .unwrap_or_else(|| target.name.clone());
                diagnostics.push(
                    Diagnostic::error(
                        "table-written-twice",
                        format!("table '{sink}' is written by the DML of '{writer}' and by the DML of '{other}'"),
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
            target.written_by = Some(writer.clone());
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

/// A temporal join whose versioned side is a lookup connector is a processing-time lookup join: no join
/// state (tricky-flink-sql.md §9). Only project-level analysis can see both DDLs.
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

impl Table {
    fn temporal_sources_all_lookup(&self, lookup: &BTreeSet<String>) -> bool {
        !self.temporal_join_sources.is_empty()
            && self
                .temporal_join_sources
                .iter()
                .all(|s| lookup.contains(s))
    }
}

fn table_from_folder(
    folder: &TableFolder,
    config: &Config,
    diags: &mut Vec<Diagnostic>,
) -> Option<Table> {
    let dml_target = folder
        .dml
        .as_ref()
        .and_then(|f| first_insert_target(&f.analysis))
        .map(|r| (resolve_name(&r.name, config), r));
    let ddl_target = folder
        .ddl
        .as_ref()
        .and_then(|f| first_created(&f.analysis))
        .map(|(r, k)| (resolve_name(&r.name, config), r, k));
    // One table per folder: a second persistent CREATE in the DDL is not a table of the project.
    if let (Some(ddl), Some((first, _, _))) = (folder.ddl.as_ref(), &ddl_target) {
        for st in ddl
            .analysis
            .statements
            .iter()
            .filter(|s| s.kind.creates_relation() && !s.temporary)
        {
            let Some(r) = st.sinks.first() else { continue };
            let other = resolve_name(&r.name, config);
            if &other != first {
                diags.push(
                    Diagnostic::warning(
                        "several-tables-in-ddl",
                        format!(
                            "the DDL also creates '{other}': one table per folder, so only '{first}' is a table of the project (give '{other}' its own folder)"
                        ),
                    )
                    .at(
                        ddl.rel.clone(),
                        Some(r.span.map_or(st.line, |s| s.start.line)),
                        r.span.map(|s| s.start.column),
                    ),
                );
            }
        }
    }

    if let (Some((dml_name, dml_ref)), Some((ddl_name, ddl_ref, _))) = (&dml_target, &ddl_target)
        && dml_name != ddl_name
    {
        let (dml_file, ddl_file) = (folder.dml.as_ref().unwrap(), folder.ddl.as_ref().unwrap());
        let line = |r: &TableRef| r.span.map(|s| s.start.line);
        diags.push(
            Diagnostic::error(
                "dml-target-mismatch",
                format!(
                    "the DML inserts into '{dml_name}' but the DDL creates '{ddl_name}' ({}:{})",
                    ddl_file.rel,
                    line(ddl_ref)
                        .map(|l| l.to_string())
                        .unwrap_or_else(|| "?".into())
                ),
            )
            .at(
                dml_file.rel.clone(),
                line(dml_ref),
                dml_ref.span.map(|s| s.start.column),
            ),
        );
    }
    // A DML whose statements write nothing (only `EXPLAIN INSERT …`, a bare SELECT, …) would leave the
    // table without its query; one the parser could not read is already a `sql-fallback` warning and its
    // references still count.
    if dml_target.is_none()
        && ddl_target.is_some()
        && let Some(dml) = folder.dml.as_ref().filter(|f| f.readable)
        && !dml.analysis.statements.is_empty()
        && !dml.analysis.statements.iter().any(|st| {
            matches!(
                st.kind,
                StatementKind::Insert
                    | StatementKind::StatementSet
                    | StatementKind::Ctas
                    | StatementKind::CreateMaterializedTable
                    | StatementKind::CreateView
            ) || (st.fallback && !st.sinks.is_empty())
        })
    {
        let first = dml
            .analysis
            .statements
            .iter()
            .find(|st| !matches!(st.kind, StatementKind::Set | StatementKind::Use))
            .unwrap_or(&dml.analysis.statements[0]);
        diags.push(
            Diagnostic::error(
                "dml-without-insert",
                format!(
                    "the DML has no INSERT INTO (its first statement is {}): the table's query would never run",
                    serde_json::to_value(first.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                ),
            )
            .at(dml.rel.clone(), Some(first.line), None),
        );
    }
    let name = match (&dml_target, &ddl_target) {
        (Some((n, _)), _) => n.clone(),
        (None, Some((n, _, _))) => n.clone(),
        (None, None) => {
            // Unreadable files already have their own error; readable ones that name no table (or hold
            // no statement at all) would make the table vanish silently.
            let readable = folder
                .ddl
                .iter()
                .chain(folder.dml.iter())
                .all(|f| f.readable);
            if let Some(file) = folder
                .dml
                .as_ref()
                .or(folder.ddl.as_ref())
                .filter(|_| readable)
            {
                diags.push(
                    Diagnostic::error(
                        "no-table",
                        "neither an INSERT INTO in the DML nor a CREATE TABLE/VIEW/MATERIALIZED TABLE in the DDL names the table",
                    )
                    .at(file.rel.clone(), None, None),
                );
            }
            return None;
        }
    };

    let mut reads: Vec<Reference> = Vec::new();
    let mut set_member_writes: Vec<SetMemberWrite> = Vec::new();
    let mut extra_sinks = BTreeSet::new();
    let mut joins = JoinCounts::default();
    let mut statefulness = Statefulness::None;
    let mut reasons = BTreeSet::new();
    let mut temporal = BTreeSet::new();
    let files = folder
        .ddl
        .iter()
        .map(|f| (f, false))
        .chain(folder.dml.iter().map(|f| (f, true)));
    for (file, is_dml) in files {
        let temporaries = temporary_sinks(&file.analysis);
        for st in &file.analysis.statements {
            let writes = !matches!(
                st.kind,
                StatementKind::CreateTable
                    | StatementKind::Set
                    | StatementKind::Use
                    | StatementKind::Alter
                    | StatementKind::Drop
                    | StatementKind::CreateFunction
                    | StatementKind::Select
                    | StatementKind::Other
            ) || !st.like_sources.is_empty()
                // The token-level fallback found a write (`INSRT INTO t SELECT … FROM s`): its
                // references count, never dropped (the sql-fallback warning says why).
                || (st.fallback && !st.sinks.is_empty());
            if !writes {
                continue;
            }
            let reference = |src: &TableRef| {
                let (line, column) = src
                    .span
                    .map(|s| (s.start.line, s.start.column))
                    .unwrap_or((st.line, 1));
                (resolve_name(&src.name, config), line, column)
            };
            // Each INSERT of a DML — a statement-set member or a plain INSERT — writes one sink: its reads
            // are the table's own when it writes the table, else they go to that sink
            // (attach_statement_set_sinks). An INSERT into a file-local temporary table is read as the
            // table's own; a statement-set member writing one is left out.
            let writers: Vec<(&TableRef, &[TableRef], usize)> = match st.kind {
                StatementKind::StatementSet if is_dml => st
                    .members
                    .iter()
                    .filter(|m| !temporaries.contains(&m.sink.name))
                    .map(|m| (&m.sink, m.sources.as_slice(), m.line))
                    .collect(),
                StatementKind::Insert if is_dml => st
                    .sinks
                    .first()
                    .filter(|k| !temporaries.contains(&k.name))
                    .map(|k| (k, st.sources.as_slice(), st.line))
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            };
            let per_writer = !writers.is_empty() || (is_dml && !st.members.is_empty());
            for &(sink_ref, sources, member_line) in &writers {
                let member_reads = sources
                    .iter()
                    .filter(|src| !temporaries.contains(&src.name))
                    .map(|src| {
                        let (key, line, column) = reference(src);
                        Reference {
                            name: key,
                            kind: ReadKind::Data,
                            file: file.rel.clone(),
                            line,
                            column,
                        }
                    });
                let (sink, line, column) = reference(sink_ref);
                if sink == name {
                    reads.extend(member_reads);
                } else {
                    set_member_writes.push(SetMemberWrite {
                        sink,
                        reads: member_reads.collect(),
                        file: file.rel.clone(),
                        line: if sink_ref.span.is_some() {
                            line
                        } else {
                            member_line
                        },
                        column,
                    });
                }
            }
            for src in st.sources.iter().filter(|_| !per_writer) {
                if temporaries.contains(&src.name) {
                    continue;
                }
                let kind = if st.like_sources.contains(&src.name) {
                    ReadKind::Like
                } else {
                    ReadKind::Data
                };
                let (key, line, column) = reference(src);
                reads.push(Reference {
                    name: key,
                    kind,
                    file: file.rel.clone(),
                    line,
                    column,
                });
            }
            if is_dml && matches!(st.kind, StatementKind::Insert | StatementKind::StatementSet) {
                for sink in st.sinks.iter().filter(|s| !temporaries.contains(&s.name)) {
                    let key = resolve_name(&sink.name, config);
                    if key != name {
                        extra_sinks.insert(key);
                    }
                }
            }
            for t in &st.temporal_join_sources {
                temporal.insert(resolve_name(t, config));
            }
            joins.regular += st.joins.regular;
            joins.left += st.joins.left;
            joins.right += st.joins.right;
            joins.inner += st.joins.inner;
            joins.outer += st.joins.outer;
            statefulness = statefulness.max(st.statefulness);
            reasons.extend(st.state_reasons.iter().copied());
        }
    }
    // One entry per (name, kind), keeping the first location; Data wins over Like for the same name.
    reads.sort_by(|a, b| {
        (&a.name, a.kind, &a.file, a.line).cmp(&(&b.name, b.kind, &b.file, b.line))
    });
    reads.dedup_by(|b, a| a.name == b.name);

    let ddl_stmt = folder
        .ddl
        .as_ref()
        .and_then(|f| first_created_statement(&f.analysis));
    Some(Table {
        name,
        product: folder.product.clone(),
        table_type: folder.table_type.clone(),
        folder: folder.rel.clone(),
        ddl_ref: folder.ddl.as_ref().map(|f| f.rel.clone()),
        dml_ref: folder.dml.as_ref().map(|f| f.rel.clone()),
        kafka_topic: ddl_stmt.and_then(|s| {
            s.with_options
                .iter()
                .find(|(k, _)| k == "topic")
                .map(|(_, v)| v.clone())
        }),
        external: false,
        unknown: false,
        manifest: None,
        reads,
        extra_sinks: extra_sinks.into_iter().collect(),
        written_by: None,
        set_member_writes,
        statefulness,
        state_reasons: reasons.into_iter().collect(),
        joins,
        primary_key: ddl_stmt.map(|s| s.primary_key.clone()).unwrap_or_default(),
        with_options: ddl_stmt.map(|s| s.with_options.clone()).unwrap_or_default(),
        ddl_kind: ddl_stmt.map(|s| s.kind),
        temporal_join_sources: temporal.into_iter().collect(),
    })
}

/// The first INSERT target of a file (the first sink of a statement set counts).
pub fn first_insert_target(a: &FileAnalysis) -> Option<&TableRef> {
    a.statements
        .iter()
        .filter(|s| matches!(s.kind, StatementKind::Insert | StatementKind::StatementSet))
        .find_map(|s| s.sinks.first())
}

/// The statement that defines a DDL file's table: the first persistent CREATE that names a relation.
pub fn first_created_statement(a: &FileAnalysis) -> Option<&crate::sql::StatementInfo> {
    a.statements
        .iter()
        .find(|s| s.kind.creates_relation() && !s.temporary && !s.sinks.is_empty())
}

/// The first persistent relation a DDL file creates, with the creating statement's kind.
pub fn first_created(a: &FileAnalysis) -> Option<(&TableRef, StatementKind)> {
    first_created_statement(a).and_then(|s| s.sinks.first().map(|r| (r, s.kind)))
}

/// Names of `TEMPORARY` tables and views a file creates: they resolve inside the file only
/// (tricky-flink-sql.md §27).
fn temporary_sinks(a: &FileAnalysis) -> BTreeSet<TableName> {
    a.statements
        .iter()
        .filter(|s| s.temporary)
        .flat_map(|s| s.sinks.iter().map(|r| r.name.clone()))
        .collect()
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExternalManifest {
    tables: Vec<ExternalDeclaration>,
}

/// One table of a `seeds/external_tables.json` manifest (shift_left's shape), as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ExternalDeclaration {
    /// The table's name, as the project's SQL reads it.
    pub table_name: String,
    /// Its Kafka topic; absent means the table's name ([`external_table`]).
    #[serde(default)]
    pub kafka_topic: Option<String>,
    /// Its product; absent means `common`.
    #[serde(default)]
    pub product_name: Option<String>,
}

impl ExternalDeclaration {
    /// The topic the inventory records: `kafka_topic`, else the table's name.
    pub fn effective_topic(&self) -> &str {
        self.kafka_topic.as_deref().unwrap_or(&self.table_name)
    }

    /// The product the inventory records: `product_name`, else `common`.
    pub fn effective_product(&self) -> &str {
        self.product_name.as_deref().unwrap_or("common")
    }
}

/// Why a `seeds/external_tables.json` manifest could not be read: serde_json's message, which ends with
/// the position (`missing field `table_name` at line 3 column 5`), and that position (1-based; 0 when
/// the input ended early).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The parser's message, position included.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// Parses a `seeds/external_tables.json` manifest: `{"tables":[{"table_name","kafka_topic",
/// "product_name"}]}` (shift-left-compatibility.md).
///
/// Errors: the text is not such a document.
pub fn parse_external_manifest(text: &str) -> Result<Vec<ExternalDeclaration>, ManifestError> {
    let tables = serde_json::from_str::<ExternalManifest>(text)
        .map(|m| m.tables)
        .map_err(|e| ManifestError {
            message: e.to_string(),
            line: e.line(),
            column: e.column(),
        })?;
    if let Some(i) = tables.iter().position(|t| t.table_name.trim().is_empty()) {
        return Err(ManifestError {
            message: format!("entry {} of \"tables\" has an empty table_name", i + 1),
            line: 0,
            column: 0,
        });
    }
    Ok(tables)
}

/// Reads the `seeds/external_tables.json` files the scan found (shift_left's manifest:
/// `{"tables":[{"table_name","kafka_topic","product_name"}]}`).
fn read_external_manifests(
    root: &Path,
    root_name: &str,
    manifests: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Table> {
    let mut out = Vec::new();
    for path in manifests {
        let rel = format!(
            "{root_name}/{}",
            crate::fsutil::slash_path(path.strip_prefix(root).unwrap_or(path))
        );
        // Regular files only, bounded; a UTF-8 byte order mark is dropped (read_data_file).
        let tables = match crate::fsutil::read_data_file(path)
            .map_err(|e| (e.to_string(), None))
            .and_then(|t| {
                parse_external_manifest(&t)
                    .map_err(|e| (e.message, Some((e.line, e.column)).filter(|p| p.0 > 0)))
            }) {
            Ok(m) => m,
            Err((message, at)) => {
                diags.push(
                    Diagnostic::error(
                        "bad-external-tables",
                        format!("cannot read external tables manifest: {message}"),
                    )
                    .at(rel, at.map(|p| p.0), at.map(|p| p.1)),
                );
                continue;
            }
        };
        for e in tables {
            out.push(Table {
                manifest: Some(rel.clone()),
                ..external_table(
                    &e.table_name,
                    e.product_name.unwrap_or_else(|| "common".into()),
                    e.kafka_topic,
                    root_name,
                )
            });
        }
    }
    out
}

/// A table defined outside the project (shift_left's `external_kafka` shape: folder
/// `<root>/seeds/<name>`, no DDL or DML).
pub fn external_table(
    name: &str,
    product: String,
    topic: Option<String>,
    root_name: &str,
) -> Table {
    Table {
        name: name.to_string(),
        product,
        table_type: EXTERNAL_TYPE.to_string(),
        folder: format!("{root_name}/seeds/{name}"),
        ddl_ref: None,
        dml_ref: None,
        kafka_topic: Some(topic.unwrap_or_else(|| name.to_string())),
        external: true,
        unknown: false,
        manifest: None,
        reads: Vec::new(),
        extra_sinks: Vec::new(),
        written_by: None,
        set_member_writes: Vec::new(),
        statefulness: Statefulness::None,
        state_reasons: Vec::new(),
        joins: JoinCounts::default(),
        primary_key: Vec::new(),
        with_options: Vec::new(),
        ddl_kind: None,
        temporal_join_sources: Vec::new(),
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
