//! One table folder read into a [`Table`]: which statement defines the table (the DML's first INSERT
//! target, else the DDL's first persistent CREATE), what its DDL and DML read, its statefulness and
//! reasons, join counts, primary key and `WITH` options, with a diagnostic (file and line) for every
//! mismatch between the folder's files.

use super::*;

/// The table of `folder`, with the folder's diagnostics pushed to `diags` (several tables in the
/// DDL, a DML that inserts elsewhere or nowhere). `None` when no file names a table (a `no-table`
/// error when the files were readable).
pub(super) fn table_from_folder(
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
    several_tables_in_ddl(
        folder,
        ddl_target.as_ref().map(|(n, _, _)| n),
        config,
        diags,
    );
    dml_target_mismatch(folder, dml_target.as_ref(), ddl_target.as_ref(), diags);
    if dml_target.is_none() && ddl_target.is_some() {
        dml_without_insert(folder, diags);
    }
    let name = table_name(folder, &dml_target, &ddl_target, diags)?;
    unsafe_name(folder, &name, &dml_target, &ddl_target, diags);
    let mut r = Reads::default();
    let files = folder
        .ddl
        .iter()
        .map(|f| (f, false))
        .chain(folder.dml.iter().map(|f| (f, true)));
    for (file, is_dml) in files {
        let temporaries = temporary_sinks(&file.analysis);
        for st in &file.analysis.statements {
            r.statement(file, is_dml, st, &temporaries, &name, config);
        }
    }
    r.finish();
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
        reads: r.reads,
        extra_sinks: r.extra_sinks.into_iter().collect(),
        sink_at: r.sink_at,
        written_by: None,
        set_member_writes: r.set_member_writes,
        statefulness: r.statefulness,
        state_from_fallback: r.state_from_fallback,
        state_reasons: r.reasons.into_iter().collect(),
        joins: r.joins,
        primary_key: ddl_stmt.map(|s| s.primary_key.clone()).unwrap_or_default(),
        with_options: ddl_stmt.map(|s| s.with_options.clone()).unwrap_or_default(),
        ddl_kind: ddl_stmt.map(|s| s.kind),
        temporal_join_sources: r.temporal.into_iter().collect(),
    })
}

/// A table name that cannot be part of a file name (`` `../../tmp/x` ``, a NUL, `CON`, …: the rule
/// of [`crate::fsutil::file_name_component`]) is an error (`unsafe-table-name`) at the statement that
/// names it: commands name files after tables (`<table>_lineage.json`, `ddl_<table>.sql`), and such
/// a name would write elsewhere.
fn unsafe_name(
    folder: &TableFolder,
    name: &str,
    dml_target: &Option<(String, &TableRef)>,
    ddl_target: &Option<(String, &TableRef, StatementKind)>,
    diags: &mut Vec<Diagnostic>,
) {
    let Err(why) = crate::fsutil::file_name_component(name) else {
        return;
    };
    let at = match (ddl_target, dml_target) {
        (Some((_, r, _)), _) => folder.ddl.as_ref().map(|f| (f.rel.clone(), r.span)),
        (None, Some((_, r))) => folder.dml.as_ref().map(|f| (f.rel.clone(), r.span)),
        (None, None) => None,
    };
    let (file, span) = at.unwrap_or_else(|| (folder.rel.clone(), None));
    diags.push(
        Diagnostic::error(
            "unsafe-table-name",
            format!(
                "table name {shown} cannot be part of a file name: it {why} (flinkpipe names files after tables); rename the table", shown = crate::fsutil::shown_name(name)
            ),
        )
        .at(
            file,
            span.map(|s| s.start.line),
            span.map(|s| s.start.column),
        ),
    );
}

/// One table per folder: a second persistent CREATE in the DDL is not a table of the project
/// (`several-tables-in-ddl`, a warning at that CREATE). `first` is the DDL's table.
fn several_tables_in_ddl(
    folder: &TableFolder,
    first: Option<&String>,
    config: &Config,
    diags: &mut Vec<Diagnostic>,
) {
    // One table per folder: a second persistent CREATE in the DDL is not a table of the project.
    if let (Some(ddl), Some(first)) = (folder.ddl.as_ref(), first) {
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
}

/// The DML inserts into another table than the DDL creates (`dml-target-mismatch`, an error at
/// the INSERT).
fn dml_target_mismatch(
    folder: &TableFolder,
    dml_target: Option<&(String, &TableRef)>,
    ddl_target: Option<&(String, &TableRef, StatementKind)>,
    diags: &mut Vec<Diagnostic>,
) {
    if let (Some((dml_name, dml_ref)), Some((ddl_name, ddl_ref, _))) = (dml_target, ddl_target)
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
}

/// A DML whose statements write nothing (only `EXPLAIN INSERT …`, a bare SELECT, …) would leave
/// the table without its query (`dml-without-insert`, an error at its first statement); one the
/// parser could not read is already a `sql-fallback` warning and its references still count.
fn dml_without_insert(folder: &TableFolder, diags: &mut Vec<Diagnostic>) {
    if let Some(dml) = folder.dml.as_ref().filter(|f| f.readable)
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
}

/// The folder's table: the DML's first INSERT target, else the DDL's first CREATE. `None` (with a
/// `no-table` error when the files were readable) when neither names one.
fn table_name(
    folder: &TableFolder,
    dml_target: &Option<(String, &TableRef)>,
    ddl_target: &Option<(String, &TableRef, StatementKind)>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    match (dml_target, ddl_target) {
        (Some((n, _)), _) => Some(n.clone()),
        (None, Some((n, _, _))) => Some(n.clone()),
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
            None
        }
    }
}

/// What the statements of a table's files read and write, gathered statement by statement.
struct Reads {
    reads: Vec<Reference>,
    set_member_writes: Vec<SetMemberWrite>,
    extra_sinks: BTreeSet<String>,
    sink_at: Option<(usize, usize)>,
    joins: JoinCounts,
    statefulness: Statefulness,
    state_from_fallback: bool,
    reasons: BTreeSet<StateReason>,
    temporal: BTreeSet<String>,
}

impl Default for Reads {
    fn default() -> Self {
        Reads {
            reads: Vec::new(),
            set_member_writes: Vec::new(),
            extra_sinks: BTreeSet::new(),
            sink_at: None,
            joins: JoinCounts::default(),
            statefulness: Statefulness::None,
            state_from_fallback: false,
            reasons: BTreeSet::new(),
            temporal: BTreeSet::new(),
        }
    }
}

impl Reads {
    /// Adds statement `st` of `file` (the DML when `is_dml`) of table `name`; `temporaries` are the
    /// file's temporary tables.
    fn statement(
        &mut self,
        file: &crate::scan::SqlFile,
        is_dml: bool,
        st: &crate::sql::StatementInfo,
        temporaries: &BTreeSet<TableName>,
        name: &String,
        config: &Config,
    ) {
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
            return;
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
            if sink == *name {
                let line = if sink_ref.span.is_some() {
                    line
                } else {
                    member_line
                };
                self.sink_at.get_or_insert((line, column));
                self.reads.extend(member_reads);
            } else {
                self.set_member_writes.push(SetMemberWrite {
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
            self.reads.push(Reference {
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
                if key != *name {
                    self.extra_sinks.insert(key);
                }
            }
        }
        for t in &st.temporal_join_sources {
            self.temporal.insert(resolve_name(t, config));
        }
        self.joins.regular += st.joins.regular;
        self.joins.left += st.joins.left;
        self.joins.right += st.joins.right;
        self.joins.inner += st.joins.inner;
        self.joins.outer += st.joins.outer;
        self.statefulness = self.statefulness.max(st.statefulness);
        self.state_from_fallback |= st.state_estimated();
        self.reasons.extend(st.state_reasons.iter().copied());
    }

    /// Settles the statefulness and the reads once every statement is in.
    fn finish(&mut self) {
        // The fallback's keyword-level estimate cannot vouch that a query it could not read keeps no state.
        if self.state_from_fallback && self.statefulness != Statefulness::Stateful {
            self.statefulness = Statefulness::Unknown;
        }
        // One entry per (name, kind), keeping the first location; Data wins over Like for the same name.
        self.reads.sort_by(|a, b| {
            (&a.name, a.kind, &a.file, a.line).cmp(&(&b.name, b.kind, &b.file, b.line))
        });
        self.reads.dedup_by(|b, a| a.name == b.name);
    }
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

/// Names of `TEMPORARY` tables and views a file creates: they resolve inside the file only (a
/// temporary object lives in its session, `CREATE TEMPORARY TABLE` / `VIEW`:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/create/>).
fn temporary_sinks(a: &FileAnalysis) -> BTreeSet<TableName> {
    a.statements
        .iter()
        .filter(|s| s.temporary)
        .flat_map(|s| s.sinks.iter().map(|r| r.name.clone()))
        .collect()
}
