//! Integration tests of a subgraph: a sink table and every ancestor it needs, run together on test
//! copies (`<table><suffix>`, default `_it`) with synthetic rows fed into the sources, the sink's
//! changelog folded into a snapshot and compared like a unit test.
//!
//! - **The subgraph** of a sink ([`subgraph`]): the sink and, transitively, every table a statement
//!   that writes one of them reads (data edges; `LIKE` edges bring no rows); when a table is written
//!   by another table's statement set, that statement and every table it writes and reads join. Its
//!   **sources** are the tables without parents (the leaves of the ancestor graph: `datagen` or Kafka
//!   sources, seeds, external tables): they are test tables whose rows the test inserts, and their own
//!   DML (a seed's `INSERT … VALUES`) is not run. Every other table is **computed**: its DDL is run
//!   renamed, and its statement (DML, CTAS or statement set) runs once, parents first.
//! - **The folder** `<sink folder>/tests/integration/` holds [`DEFINITIONS_FILE`], in the shape of
//!   `tests/test_definitions.yaml` ([`super::definitions`]; file names relative to the sink's table
//!   folder):
//!
//!   ```yaml
//!   foundations: []            # optional: a DDL replacing a source's production DDL
//!   test_suite:
//!     - name: it_fct_x_1       # a scenario
//!       inputs:                # rows of every source of the subgraph
//!         - table_name: src_a
//!           file_name: ./tests/integration/insert_src_a_1.sql   # INSERT INTO src_a_it …, or .csv
//!           file_type: sql
//!       outputs:               # the rows the sink (or any computed table) holds at the end
//!         - table_name: fct_x
//!           file_name: ./tests/integration/expected_fct_x_1.csv
//!           file_type: csv     # or a validation query returning 'PASS'/'FAIL' (sql)
//!   ```
//!
//!   A source's DDL is its production `CREATE TABLE` (storage mapped to the target like a unit
//!   test's, [`super::rewrite`]) unless a foundation names another file; an external source without
//!   a DDL in the project needs one (`flinkpipe.gateway.external_ddl`, or a foundation).
//! - **The run** is a unit-test run ([`super::run::run_suite`]) of the [`Suite`] [`prepare()`] builds:
//!   sources are its foundations, computed tables its outputs, and the statements under test are
//!   every computed table's statement in order, each named `dml-<table><suffix>`.

use super::definitions::{FileType, Foundation, TestCase, TestData, TestDefinitions};
use super::generate::{self, Generated};
use super::prepare::{
    self, CaseContext, PrepareOptions, Role, Suite, TestTable, TestedStatement, build_cases,
};
use super::rewrite;
use super::{Suffix, UnitTestError};
use crate::config::Config;
use crate::deploy::spec::steps_from_sql;
use crate::graph::EdgeKind;
use crate::inventory::resolve_name;
use crate::project::Project;
use crate::sql::{self, StatementKind, TableName};
use crate::target::StatementKind as SpecKind;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The definitions file, in `<sink folder>/tests/integration/`.
pub const DEFINITIONS_FILE: &str = "integration_test_definitions.yaml";

/// The folder of a sink's integration tests, relative to its table folder.
pub const FOLDER: &str = "tests/integration";

/// The default suffix of integration-test tables, topics and statements (shift_left's
/// `app.post_fix_integration_test` default, `_it`), apart from the unit tests' `_ut` so that both can
/// run at once.
pub const DEFAULT_SUFFIX: &str = "_it";

/// One statement of the subgraph: the DML (or CTAS) of `owner`, writing `writes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The table whose statement it is.
    pub owner: String,
    /// Its file, relative (`pipelines/…/sql-scripts/dml.<owner>.sql`).
    pub file: String,
    /// A `CREATE TABLE … AS SELECT` (the table is created by the statement).
    pub ctas: bool,
    /// The tables it writes, sorted.
    pub writes: Vec<String>,
}

/// A sink's subgraph (see module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subgraph {
    /// The sink table the subgraph ends in.
    pub sink: String,
    /// Tables without parents, sorted: the test inserts their rows.
    pub sources: Vec<String>,
    /// The other tables, parents first.
    pub computed: Vec<String>,
    /// Their statements, in the order they run (a statement after every statement writing a table
    /// it reads).
    pub steps: Vec<Step>,
}

impl Subgraph {
    /// Every table of the subgraph: sources, then computed tables.
    pub fn tables(&self) -> Vec<String> {
        self.sources.iter().chain(&self.computed).cloned().collect()
    }
}

fn data_parents(project: &Project, table: &str) -> Vec<String> {
    project
        .graph
        .parent_edges(table)
        .into_iter()
        .filter(|(_, k)| *k == EdgeKind::Data)
        .map(|(p, _)| p.to_string())
        .collect()
}

/// The subgraph of `sink` (see module docs).
///
/// Errors (usage, naming the table): an unknown or external sink, a sink without parents (nothing
/// to integrate: unit-test it), a computed table that is a view or a materialized table, a computed
/// table without DML or CTAS, a cycle.
pub fn subgraph(project: &Project, sink: &str) -> Result<Subgraph, UnitTestError> {
    let inv = &project.inventory;
    let usage = |m: String| UnitTestError::Usage(m);
    let t = inv
        .tables
        .get(sink)
        .ok_or_else(|| usage(format!("unknown table '{sink}'")))?;
    if t.external || t.unknown {
        return Err(usage(format!(
            "{sink} is an external table: the project computes nothing there to test"
        )));
    }
    let written_by = |n: &str| inv.tables.get(n).and_then(|t| t.written_by.clone());
    let is_root = |n: &str| data_parents(project, n).is_empty() && written_by(n).is_none();
    if is_root(sink) {
        return Err(usage(format!(
            "{sink} has no parents: there is no subgraph to integrate (test its SQL with `table init-unit-tests {sink}`)"
        )));
    }
    let mut set: BTreeSet<String> = [sink.to_string()].into();
    let mut work = vec![sink.to_string()];
    while let Some(n) = work.pop() {
        if is_root(&n) {
            continue;
        }
        let mut next = data_parents(project, &n);
        if let Some(tb) = inv.tables.get(&n) {
            next.extend(tb.written_by.clone());
            next.extend(tb.extra_sinks.iter().cloned());
        }
        for x in next {
            if set.insert(x.clone()) {
                work.push(x);
            }
        }
    }
    let sources: Vec<String> = set.iter().filter(|n| is_root(n)).cloned().collect();
    let computed_set: BTreeSet<String> = set.iter().filter(|n| !is_root(n)).cloned().collect();
    let computed = project
        .graph
        .topo_order(Some(&computed_set))
        .map_err(|e| usage(format!("the subgraph of {sink}: {e}")))?;

    // One step per statement.
    let mut steps: BTreeMap<String, Step> = BTreeMap::new();
    for n in &computed {
        let owner = written_by(n).unwrap_or_else(|| n.clone());
        if let Some(s) = steps.get_mut(&owner) {
            if !s.writes.contains(n) {
                s.writes.push(n.clone());
                s.writes.sort();
            }
            continue;
        }
        let o = inv.tables.get(&owner).ok_or_else(|| {
            usage(format!(
                "{n} is written by {owner}, which is not a table of the project"
            ))
        })?;
        let (file, ctas) = match (&o.dml_ref, o.ddl_kind) {
            (Some(d), _) => (d.clone(), false),
            (None, Some(StatementKind::Ctas)) => (o.ddl_ref.clone().unwrap_or_default(), true),
            (None, Some(StatementKind::CreateMaterializedTable)) => {
                return Err(usage(format!(
                    "{owner} (in the subgraph of {sink}) is a materialized table: its refresh job cannot run on bounded test inputs; test a sink above it"
                )));
            }
            (None, Some(StatementKind::CreateView)) => {
                return Err(usage(format!(
                    "{owner} (in the subgraph of {sink}) is a view: integration tests run tables' statements only; test a sink above it"
                )));
            }
            _ => {
                return Err(usage(format!(
                    "{owner} (in the subgraph of {sink}) has parents but no DML and no CTAS: there is no statement to run"
                )));
            }
        };
        let mut writes = vec![n.clone()];
        if &owner != n {
            writes.push(owner.clone());
        }
        writes.extend(o.extra_sinks.iter().filter(|x| set.contains(*x)).cloned());
        writes.sort();
        writes.dedup();
        steps.insert(
            owner.clone(),
            Step {
                owner,
                file,
                ctas,
                writes,
            },
        );
    }
    // Parents first: a step runs once every step writing a table it reads has run (ties by the
    // computed order).
    let position = |t: &str| computed.iter().position(|c| c == t).unwrap_or(usize::MAX);
    let mut pending: Vec<Step> = steps.into_values().collect();
    pending.sort_by_key(|s| s.writes.iter().map(|w| position(w)).min());
    let mut ordered: Vec<Step> = Vec::new();
    let mut done: BTreeSet<String> = sources.iter().cloned().collect();
    while !pending.is_empty() {
        let ready = pending.iter().position(|s| {
            s.writes
                .iter()
                .flat_map(|w| data_parents(project, w))
                .all(|p| done.contains(&p) || s.writes.contains(&p) || !set.contains(&p))
        });
        let Some(i) = ready else {
            return Err(usage(format!(
                "the statements of the subgraph of {sink} read each other in a cycle: {}",
                pending
                    .iter()
                    .map(|s| s.owner.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let s = pending.remove(i);
        done.extend(s.writes.iter().cloned());
        ordered.push(s);
    }
    Ok(Subgraph {
        sink: sink.to_string(),
        sources,
        computed,
        steps: ordered,
    })
}

/// The definitions file of `sink`, relative (`pipelines/…/<sink>/tests/integration/…yaml`), and
/// its path on disk.
pub fn definitions_path(project: &Project, sink: &str) -> Option<(String, std::path::PathBuf)> {
    let t = project.inventory.tables.get(sink)?;
    Some((
        format!("{}/{FOLDER}/{DEFINITIONS_FILE}", t.folder),
        project
            .inventory
            .disk_path(&t.folder)
            .join(FOLDER)
            .join(DEFINITIONS_FILE),
    ))
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// Scenarios (test cases), each with its own rows (default 1).
    pub nb_scenarios: usize,
    /// Even scenarios take CSV inputs.
    pub create_csv: bool,
    pub suffix: Suffix,
}

/// Writes `<sink folder>/tests/integration/` (never overwriting a file): per scenario an input
/// file for every source ([`generate::input_file`]: typed sample rows, values that satisfy the
/// equality filters of the subgraph's SQL and the ranges of `datagen` DDLs), an expected-rows file
/// of the sink not filled in yet ([`generate::expected_skeleton`]), and [`DEFINITIONS_FILE`]. A
/// source whose DDL is not in the project (an external table, its DDL from
/// `flinkpipe.gateway.external_ddl`) gets a copy, `ddl_<source>.sql`, declared as a foundation.
///
/// Errors: those of [`subgraph`], a source without DDL or columns, a name that cannot name a file,
/// a file that cannot be written.
pub fn generate(
    project: &Project,
    cfg: &Config,
    sink: &str,
    opts: &GenerateOptions,
) -> Result<Generated, UnitTestError> {
    let sg = subgraph(project, sink)?;
    let inv = &project.inventory;
    let t = &inv.tables[sink];
    let rel = format!("{}/{FOLDER}", t.folder);
    let dir = inv.disk_path(&t.folder).join(FOLDER);
    for name in sg.tables() {
        if let Some(why) = generate::not_a_file_name(&name) {
            return Err(UnitTestError::in_file(
                &t.folder,
                format!(
                    "table name {shown} cannot name a test file: it {why}; nothing was written",
                    shown = crate::fsutil::shown_name(&name)
                ),
            ));
        }
    }
    let suffix = &opts.suffix;
    let mut sql_text = String::new();
    for s in &sg.steps {
        let text = crate::fsutil::read_project_file(inv.disk_path(&s.file))
            .map_err(|e| UnitTestError::in_file(&s.file, format!("cannot read: {e}")))?;
        sql_text.push_str(&text);
        sql_text.push('\n');
    }
    let filters = generate::filter_literals(&sql_text);
    let mut files: Vec<(String, String)> = Vec::new();
    let mut parsed = Vec::new();
    let mut foundations = Vec::new();
    for src in &sg.sources {
        let reader = sg
            .steps
            .iter()
            .find(|s| {
                s.writes
                    .iter()
                    .any(|w| data_parents(project, w).contains(src))
            })
            .map_or(t.folder.clone(), |s| s.file.clone());
        if generate::ddl_of(project, cfg, src).is_err() {
            return Err(UnitTestError::in_file(
                &reader,
                format!(
                    "source '{src}' of the subgraph of {sink} has no DDL in the project (an external table): add its DDL to flinkpipe.gateway.external_ddl, or write {rel}/ddl_{src}.sql and declare it under foundations in {rel}/{DEFINITIONS_FILE}; nothing was written"
                ),
            ));
        }
        let (renamed, p) = generate::input_ddl(project, cfg, src, suffix, &reader, &rel)?;
        if inv
            .tables
            .get(src)
            .and_then(|x| x.ddl_ref.as_ref())
            .is_none()
        {
            files.push((format!("ddl_{src}.sql"), format!("{renamed};\n")));
            foundations.push(Foundation {
                table_name: src.clone(),
                ddl_for_test: format!("./{FOLDER}/ddl_{src}.sql"),
                line: 0,
            });
        }
        parsed.push(p);
    }
    let out_cols = generate::output_columns(project, t);
    let mut cases = Vec::new();
    for i in 1..=opts.nb_scenarios.max(1) {
        let csv = opts.create_csv && i % 2 == 0;
        let mut case = TestCase {
            name: format!("it_{sink}_{i}"),
            inputs: Vec::new(),
            outputs: Vec::new(),
            line: 0,
        };
        for p in &parsed {
            let (name, content, data) =
                generate::input_file(p, i, csv, &filters, suffix, &format!("./{FOLDER}"));
            case.inputs.push(data);
            files.push((name, content));
        }
        let expected = format!("expected_{sink}_{i}.csv");
        files.push((
            expected.clone(),
            generate::expected_skeleton(sink, &case.name, &out_cols, "integration tests"),
        ));
        case.outputs.push(TestData {
            table_name: sink.to_string(),
            file_name: format!("./{FOLDER}/{expected}"),
            file_type: FileType::Csv,
            line: 0,
        });
        cases.push(case);
    }
    let defs = TestDefinitions {
        file: format!("{rel}/{DEFINITIONS_FILE}"),
        foundations,
        test_suite: cases,
    };
    let chain: Vec<&str> = sg.steps.iter().map(|s| s.owner.as_str()).collect();
    let header = format!(
        "# Integration test of {sink}: the rows of its sources ({}) go through {} (see README: integration tests).\n# `flinkpipe project run-integration-tests --table-name {sink}` runs it.\n",
        sg.sources.join(", "),
        chain.join(" → ")
    );
    files.push((
        DEFINITIONS_FILE.to_string(),
        format!("{header}{}", defs.to_yaml()),
    ));
    let (written, kept) = generate::write_new_files(
        project,
        &dir,
        &rel,
        files,
        "flinkpipe project init-integration-tests",
    )?;
    Ok(Generated {
        table_name: sink.to_string(),
        folder: rel,
        inputs: sg.sources,
        written,
        kept,
    })
}

/// Builds the integration suite of `sink` (see module docs): the definitions and every file they
/// name checked, the DDL of every table and the statement of every computed table renamed to test
/// names and mapped to the target's storage. Nothing is contacted.
///
/// Errors: those of [`subgraph`]; no definitions file; a foundation that is not a source; a
/// statement of the subgraph that reads or writes a table outside it (a test never touches a
/// production table); a test name that is a table of the project; the rules of
/// [`super::prepare`] for inputs and outputs (file and line).
pub fn prepare(
    project: &Project,
    cfg: &Config,
    sink: &str,
    opts: &PrepareOptions,
) -> Result<Suite, UnitTestError> {
    let sg = subgraph(project, sink)?;
    let inv = &project.inventory;
    let t = &inv.tables[sink];
    let (defs_rel, defs_path) = definitions_path(project, sink).expect("a table of the project");
    if !defs_path.is_file() {
        return Err(UnitTestError::in_file(
            &defs_rel,
            format!(
                "no integration test definitions: run `flinkpipe project init-integration-tests --table-name {sink}` first"
            ),
        ));
    }
    let defs = TestDefinitions::load(&defs_path, &defs_rel)?;
    let suffix = &opts.suffix;
    let storage = &opts.storage;
    let folder = inv.disk_path(&t.folder);
    let all: BTreeSet<String> = sg.tables().into_iter().collect();
    let key = |n: &TableName| resolve_name(n, cfg);
    let rename_all = |n: &TableName| all.contains(&key(n)).then(|| suffix.table(n.table()));

    for f in &defs.foundations {
        if !sg.sources.contains(&f.table_name) {
            return Err(UnitTestError::at(
                &defs_rel,
                f.line,
                format!(
                    "foundation '{}' is not a source of the subgraph of {sink} (its sources: {})",
                    f.table_name,
                    sg.sources.join(", ")
                ),
            ));
        }
    }
    let mut tables = Vec::new();
    for src in &sg.sources {
        let (text, rel) = match defs.foundations.iter().find(|f| &f.table_name == src) {
            Some(f) => super::prepare::foundation_ddl(&folder, &t.folder, &defs_rel, f)?,
            None => {
                let (text, rel) = generate::ddl_of(project, cfg, src).map_err(|m| {
                    UnitTestError::in_file(
                        &defs_rel,
                        format!("source {src}: {m} (or declare it as a foundation of this file)"),
                    )
                })?;
                // Only the source's own CREATE TABLE (an external DDL file may hold several).
                let a = sql::analyze(&text);
                let own = a
                    .statements
                    .iter()
                    .find(|s| {
                        s.kind == StatementKind::CreateTable
                            && s.sinks.iter().any(|x| key(&x.name) == *src)
                    })
                    .map(|s| s.text.clone())
                    .ok_or_else(|| {
                        UnitTestError::in_file(&rel, format!("no CREATE TABLE for {src}"))
                    })?;
                (own, rel)
            }
        };
        tables.push(prepare::foundation_table(
            &text, &rel, src, suffix, storage,
        )?);
    }
    let ctas_created: BTreeSet<&str> = sg
        .steps
        .iter()
        .filter(|s| s.ctas)
        .map(|s| s.owner.as_str())
        .collect();
    for c in &sg.computed {
        let ct = &inv.tables[c];
        let ut_name = suffix.table(c);
        if ctas_created.contains(c.as_str()) {
            tables.push(TestTable {
                table: c.clone(),
                ut_name,
                role: Role::Output,
                ddl: None,
                primary_key: ct.primary_key.clone(),
                columns: Vec::new(),
            });
            continue;
        }
        let Some(ddl_rel) = ct.ddl_ref.clone() else {
            return Err(UnitTestError::in_file(
                &ct.folder,
                format!("{c} (in the subgraph of {sink}) has no DDL in the project"),
            ));
        };
        let text = crate::fsutil::read_project_file(inv.disk_path(&ddl_rel))
            .map_err(|e| UnitTestError::in_file(&ddl_rel, format!("cannot read: {e}")))?;
        let renamed = rewrite::rename(&text, &rename_all)
            .map_err(|e| UnitTestError::in_file(&ddl_rel, e.to_string()))?;
        let a = sql::analyze(&renamed);
        let Some(create) = a
            .statements
            .iter()
            .find(|x| x.kind == StatementKind::CreateTable)
        else {
            return Err(UnitTestError::in_file(
                &ddl_rel,
                format!("no CREATE TABLE for {c}"),
            ));
        };
        tables.push(TestTable {
            table: c.clone(),
            ut_name: ut_name.clone(),
            role: Role::Output,
            ddl: Some(rewrite::map_storage(&create.text, &ut_name, storage)),
            primary_key: create.primary_key.clone(),
            columns: create.columns.clone(),
        });
    }
    for tt in &tables {
        if let Some(other) = inv.tables.get(&tt.ut_name) {
            return Err(UnitTestError::in_file(
                &defs_rel,
                format!(
                    "the test table {} would be the project's table of {}: refused (choose another suffix with --post-fix-integration-test)",
                    tt.ut_name, other.folder
                ),
            ));
        }
    }

    // Every statement, renamed and bounded.
    let mut tested = Vec::new();
    for s in &sg.steps {
        let text = crate::fsutil::read_project_file(inv.disk_path(&s.file))
            .map_err(|e| UnitTestError::in_file(&s.file, format!("cannot read: {e}")))?;
        let a = sql::analyze(&text);
        for st in &a.statements {
            for r in st.sources.iter().chain(&st.sinks) {
                let k = key(&r.name);
                if !all.contains(&k) {
                    return Err(UnitTestError::at(
                        &s.file,
                        r.span.map_or(st.line, |sp| sp.start.line),
                        format!(
                            "uses '{k}', which is not in the subgraph of {sink}: a test never reads or writes a production table"
                        ),
                    ));
                }
            }
        }
        let renamed = rewrite::rename(&text, &rename_all)
            .map_err(|e| UnitTestError::in_file(&s.file, e.to_string()))?;
        let scripts = inv
            .disk_path(&s.file)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let mut props = prepare::properties(&scripts, s.ctas);
        if *storage == rewrite::Storage::Confluent {
            props.insert(
                "sql.tables.scan.bounded.mode".into(),
                "latest-offset".into(),
            );
        }
        let before = tested.len();
        for step in steps_from_sql(&renamed, "tested", SpecKind::Dml, props) {
            let kind = sql::analyze(&step.spec.sql)
                .statements
                .first()
                .map(|x| x.kind);
            if !matches!(
                kind,
                Some(StatementKind::Insert | StatementKind::StatementSet | StatementKind::Ctas)
            ) {
                continue;
            }
            tested.push(TestedStatement {
                table: s.owner.clone(),
                sql: if s.ctas {
                    rewrite::map_storage(&step.spec.sql, &suffix.table(&s.owner), storage)
                } else {
                    step.spec.sql
                },
                properties: step.spec.properties,
            });
        }
        if tested.len() == before {
            return Err(UnitTestError::in_file(
                &s.file,
                "no INSERT, statement set or CTAS to run",
            ));
        }
    }

    let sources_text = sg.sources.join(", ");
    let computed_text = sg.computed.join(", ");
    let cases = build_cases(
        &CaseContext {
            defs: &defs,
            folder: &folder,
            folder_rel: &t.folder,
            tables: &tables,
            suffix,
            not_an_input: &|name| {
                format!(
                    "input for '{name}', which is not a source of the subgraph of {sink} (its sources: {sources_text})"
                )
            },
            not_an_output: &|name| {
                format!(
                    "output '{name}' is not computed by the subgraph of {sink} (it computes: {computed_text})"
                )
            },
        },
        opts.case.as_deref(),
    )?;
    Ok(Suite {
        table: sink.to_string(),
        product: t.product.clone(),
        definitions_file: defs_rel,
        suffix: suffix.clone(),
        storage: storage.clone(),
        tables,
        tested,
        cases,
    })
}
