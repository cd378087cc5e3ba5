//! A whole suite, checked and built before anything is created on the target: the test definitions,
//! every file they name, the SQL under test and the DDL of every table it writes, rewritten to test
//! names and mapped to the target's storage ([`super::rewrite`]).
//!
//! Rules (each broken one is an error with file and line):
//! - every table the SQL under test reads is a foundation (a test never reads a production table), and
//!   every foundation is read by it;
//! - a foundation's `ddl_for_test` creates `<foundation>_ut` (shift_left writes the default suffix in
//!   the files and swaps in the configured one; `<foundation>` and `<foundation><suffix>` are accepted);
//! - an input is for a foundation; an input SQL holds only `INSERT`s into that table's test name and
//!   reads no production table; an input CSV matches the foundation's DDL ([`super::data`]);
//! - an output is a table the SQL under test writes; an expected CSV names columns of its DDL; a
//!   validation SQL is one query that reads test tables only and returns `'PASS'`/`'FAIL'`;
//! - no test name is the name of a table of the project.
//!
//! The SQL under test is the table's DML (an `INSERT`, or the statement set that writes it), or its
//! CTAS; `SET` statements and `dml.*.properties` become statement properties as in a deploy.

use super::data::{self, CsvData};
use super::definitions::{self, FileType, TestData, TestDefinitions};
use super::rewrite::{self, Storage};
use super::{Suffix, UnitTestError};
use crate::config::Config;
use crate::deploy::spec::steps_from_sql;
use crate::inventory::resolve_name;
use crate::project::Project;
use crate::sql::text::parse_properties;
use crate::sql::{self, Column as DdlColumn, StatementKind, TableName};
use crate::target::StatementKind as SpecKind;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What a test table is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A table the SQL under test reads: the test inserts its rows.
    Foundation,
    /// A table the SQL under test writes.
    Output,
}

/// A table created for the test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestTable {
    /// The project table it stands for.
    pub table: String,
    /// Its test name (`<table><suffix>`), also its topic on a Kafka broker.
    pub ut_name: String,
    pub role: Role,
    /// The `CREATE TABLE` to run (renamed, storage mapped); `None` for a table the SQL under test
    /// creates itself (CTAS).
    pub ddl: Option<String>,
    pub primary_key: Vec<String>,
    /// Declared columns (empty for a CTAS).
    pub columns: Vec<DdlColumn>,
}

/// One statement of the SQL under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestedStatement {
    /// The table whose statement this is (its DML, CTAS or statement set): the statement is named
    /// after it (`dml-<table><suffix>`).
    pub table: String,
    pub sql: String,
    pub properties: BTreeMap<String, String>,
}

/// How an output is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckKind {
    /// The rows the output must hold at the end (`expected_<t>_<i>.csv`).
    Expected(CsvData),
    /// A query returning `'PASS'` or `'FAIL'` (renamed).
    Validation(String),
}

/// One output check of a test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub table: String,
    pub ut_name: String,
    /// The file, relative, for reports.
    pub file: String,
    pub kind: CheckKind,
}

/// One test case, ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub name: String,
    /// 1-based position in `test_suite` (statement names `ins-<i>`, `val-<i>`).
    pub index: usize,
    /// `INSERT` statements of every input, renamed.
    pub inserts: Vec<String>,
    pub checks: Vec<Check>,
}

/// A suite ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    /// The table under test.
    pub table: String,
    pub product: String,
    /// `tests/test_definitions.yaml`, relative.
    pub definitions_file: String,
    pub suffix: Suffix,
    pub storage: Storage,
    /// Foundations first, then outputs.
    pub tables: Vec<TestTable>,
    pub tested: Vec<TestedStatement>,
    pub cases: Vec<Case>,
}

impl Suite {
    /// Every test name of the suite (tables and topics).
    pub fn ut_names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.ut_name.clone()).collect()
    }

    /// The test table standing for `table`.
    pub fn test_table(&self, table: &str) -> Option<&TestTable> {
        self.tables.iter().find(|t| t.table == table)
    }
}

/// What to prepare.
#[derive(Debug, Clone)]
pub struct PrepareOptions {
    pub suffix: Suffix,
    pub storage: Storage,
    /// Only this test case (`--test-case-name`).
    pub case: Option<String>,
}

fn read(project: &Project, rel: &str) -> Result<String, UnitTestError> {
    crate::fsutil::read_project_file(project.inventory.disk_path(rel))
        .map_err(|e| UnitTestError::in_file(rel, format!("cannot read: {e}")))
}

/// The names a test file may use for `table`: as written by shift_left (`<t>_ut`), with the configured
/// suffix, or bare.
fn stands_for<'a>(name: &str, tables: &'a BTreeSet<String>, suffix: &Suffix) -> Option<&'a String> {
    let base = suffix
        .strip(name)
        .or_else(|| name.strip_suffix(super::naming::DEFAULT_SUFFIX))
        .unwrap_or(name);
    tables.get(base).or_else(|| tables.get(name))
}

/// The text of a foundation's `ddl_for_test` file and its path as the project names it
/// (`<table folder>/tests/ddl_x.sql`). `folder` is the table folder on disk, `table_folder` as the
/// inventory names it, `defs_rel` the definitions file errors point at.
///
/// Errors (at the entry's line): a path that leaves the table folder, an unreadable file.
pub(crate) fn foundation_ddl(
    folder: &std::path::Path,
    table_folder: &str,
    defs_rel: &str,
    f: &definitions::Foundation,
) -> Result<(String, String), UnitTestError> {
    let path = definitions::resolve(folder, &f.ddl_for_test).ok_or_else(|| {
        UnitTestError::at(
            defs_rel,
            f.line,
            format!(
                "ddl_for_test '{}' must be a path under the table folder, with '/'",
                f.ddl_for_test
            ),
        )
    })?;
    let text = crate::fsutil::read_project_file(&path).map_err(|e| {
        UnitTestError::at(
            defs_rel,
            f.line,
            format!("ddl_for_test {}: {e}", f.ddl_for_test),
        )
    })?;
    Ok((
        text,
        format!("{table_folder}/{}", f.ddl_for_test.trim_start_matches("./")),
    ))
}

/// Builds the suite of `table` (see module docs).
///
/// Errors: every broken rule, with file and line; nothing has been contacted.
pub fn prepare(
    project: &Project,
    cfg: &Config,
    table: &str,
    opts: &PrepareOptions,
) -> Result<Suite, UnitTestError> {
    let inv = &project.inventory;
    let t = inv
        .tables
        .get(table)
        .ok_or_else(|| UnitTestError::Usage(format!("unknown table '{table}'")))?;
    let folder = inv.disk_path(&t.folder);
    let defs_rel = format!("{}/tests/{}", t.folder, definitions::FILE_NAME);
    let defs = TestDefinitions::load(
        &folder.join("tests").join(definitions::FILE_NAME),
        &defs_rel,
    )?;
    let suffix = &opts.suffix;

    // The SQL under test.
    let (tested_rel, is_ctas) = match (&t.dml_ref, t.ddl_kind) {
        (Some(d), _) => (d.clone(), false),
        (None, Some(StatementKind::Ctas)) => (t.ddl_ref.clone().unwrap_or_default(), true),
        (None, Some(StatementKind::CreateMaterializedTable)) => {
            return Err(UnitTestError::in_file(
                t.ddl_ref.clone().unwrap_or_default(),
                format!(
                    "{table} is a materialized table: its refresh job cannot run on bounded test inputs; test the tables it reads"
                ),
            ));
        }
        _ => {
            return Err(UnitTestError::in_file(
                &t.folder,
                match &t.written_by {
                    Some(w) => format!(
                        "{table} has no SQL of its own: it is written by the statement set of {w}; run the tests of {w}"
                    ),
                    None => {
                        format!("{table} has no DML and no CTAS: there is no statement to test")
                    }
                },
            ));
        }
    };
    let tested_text = read(project, &tested_rel)?;
    let analysis = sql::analyze(&tested_text);
    let key = |n: &TableName| resolve_name(n, cfg);
    let mut sinks: BTreeSet<String> = BTreeSet::new();
    let mut sources: Vec<(String, usize)> = Vec::new();
    for st in &analysis.statements {
        for s in &st.sinks {
            sinks.insert(key(&s.name));
        }
        for s in &st.sources {
            let line = s.span.map_or(st.line, |sp| sp.start.line);
            sources.push((key(&s.name), line));
        }
    }
    let foundations: BTreeSet<String> = defs
        .foundations
        .iter()
        .map(|f| f.table_name.clone())
        .collect();
    for (src, line) in &sources {
        if !foundations.contains(src) && !sinks.contains(src) {
            return Err(UnitTestError::at(
                &tested_rel,
                *line,
                format!(
                    "{table} reads '{src}', which no foundation of {defs_rel} provides: a test never reads a production table (add it to foundations)"
                ),
            ));
        }
    }
    let read_set: BTreeSet<&str> = sources.iter().map(|(s, _)| s.as_str()).collect();
    let mut tables = Vec::new();
    for f in &defs.foundations {
        if !read_set.contains(f.table_name.as_str()) {
            return Err(UnitTestError::at(
                &defs_rel,
                f.line,
                format!(
                    "foundation '{}' is not read by {tested_rel} (it reads: {})",
                    f.table_name,
                    read_set.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let (text, ddl_rel) = foundation_ddl(&folder, &t.folder, &defs_rel, f)?;
        tables.push(foundation_table(
            &text,
            &ddl_rel,
            &f.table_name,
            suffix,
            &opts.storage,
        )?);
    }
    for s in &sinks {
        let ut_name = suffix.table(s);
        let st = inv.tables.get(s);
        if is_ctas && s == table {
            tables.push(TestTable {
                table: s.clone(),
                ut_name,
                role: Role::Output,
                ddl: None,
                primary_key: t.primary_key.clone(),
                columns: Vec::new(),
            });
            continue;
        }
        let Some(ddl_rel) = st.and_then(|x| x.ddl_ref.clone()) else {
            return Err(UnitTestError::in_file(
                &tested_rel,
                format!("{table}'s SQL writes '{s}', which has no DDL in the project"),
            ));
        };
        let text = read(project, &ddl_rel)?;
        let renamed = rewrite::rename(&text, &|n| (key(n) == *s).then(|| suffix.table(n.table())))
            .map_err(|e| UnitTestError::in_file(&ddl_rel, e.to_string()))?;
        let a = sql::analyze(&renamed);
        let Some(create) = a
            .statements
            .iter()
            .find(|x| x.kind == StatementKind::CreateTable)
        else {
            return Err(UnitTestError::in_file(
                &ddl_rel,
                format!("no CREATE TABLE for {s}"),
            ));
        };
        tables.push(TestTable {
            table: s.clone(),
            ut_name: ut_name.clone(),
            role: Role::Output,
            ddl: Some(rewrite::map_storage(&create.text, &ut_name, &opts.storage)),
            primary_key: create.primary_key.clone(),
            columns: create.columns.clone(),
        });
    }
    for tt in &tables {
        if let Some(other) = inv.tables.get(&tt.ut_name) {
            return Err(UnitTestError::in_file(
                &defs_rel,
                format!(
                    "the test table {} would be the project's table of {} : refused (choose another suffix with --post-fix-unit-test)",
                    tt.ut_name, other.folder
                ),
            ));
        }
    }

    // The SQL under test, renamed and bounded.
    let renamed = rewrite::rename(&tested_text, &|n| {
        let k = key(n);
        (foundations.contains(&k) || sinks.contains(&k)).then(|| suffix.table(n.table()))
    })
    .map_err(|e| UnitTestError::in_file(&tested_rel, e.to_string()))?;
    let mut props = properties(&folder.join("sql-scripts"), is_ctas);
    if opts.storage == Storage::Confluent {
        props.insert(
            "sql.tables.scan.bounded.mode".into(),
            "latest-offset".into(),
        );
    }
    let tested: Vec<TestedStatement> = steps_from_sql(&renamed, "tested", SpecKind::Dml, props)
        .into_iter()
        .map(|s| TestedStatement {
            table: table.to_string(),
            sql: if is_ctas {
                rewrite::map_storage(&s.spec.sql, &suffix.table(table), &opts.storage)
            } else {
                s.spec.sql
            },
            properties: without_idleness(s.spec.properties),
        })
        .filter(|s| {
            let k = sql::analyze(&s.sql).statements.first().map(|x| x.kind);
            matches!(
                k,
                Some(StatementKind::Insert | StatementKind::StatementSet | StatementKind::Ctas)
            )
        })
        .collect();
    if tested.is_empty() {
        return Err(UnitTestError::in_file(
            &tested_rel,
            "no INSERT, statement set or CTAS to test",
        ));
    }

    // Test cases.
    let sinks_text = sinks.iter().cloned().collect::<Vec<_>>().join(", ");
    let foundations_text = foundations.iter().cloned().collect::<Vec<_>>().join(", ");
    let cases = build_cases(
        &CaseContext {
            defs: &defs,
            folder: &folder,
            folder_rel: &t.folder,
            tables: &tables,
            suffix,
            not_an_input: &|name| {
                format!(
                    "input for '{name}', which {table}'s SQL does not read (its foundations: {foundations_text})"
                )
            },
            not_an_output: &|name| {
                format!("output '{name}' is not written by {tested_rel} (it writes: {sinks_text})")
            },
        },
        opts.case.as_deref(),
    )?;
    Ok(Suite {
        table: table.to_string(),
        product: t.product.clone(),
        definitions_file: defs_rel,
        suffix: suffix.clone(),
        storage: opts.storage.clone(),
        tables,
        tested,
        cases,
    })
}

/// What [`build_cases`] needs: the definitions, the folder their file names are relative to, and the
/// test tables (foundations take inputs, outputs are checked).
pub struct CaseContext<'a> {
    pub defs: &'a TestDefinitions,
    /// The table folder on disk (file names of the definitions are relative to it).
    pub folder: &'a Path,
    /// The same folder, relative (`pipelines/…`), for messages.
    pub folder_rel: &'a str,
    pub tables: &'a [TestTable],
    pub suffix: &'a Suffix,
    /// The message for an input whose table is not a foundation (given that table).
    pub not_an_input: &'a dyn Fn(&str) -> String,
    /// The message for an output whose table is not an output test table (given that table).
    pub not_an_output: &'a dyn Fn(&str) -> String,
}

/// The test cases of `cx.defs` (only `case` when given), their inputs read and renamed, their
/// expected rows typed by the output's DDL, their validation queries checked: shared by unit and
/// integration tests.
///
/// Errors: an unknown `case` (usage), an input or output for a table that is not one of the test,
/// a file that is missing or breaks a rule of the module docs (with file and line).
pub fn build_cases(cx: &CaseContext<'_>, case: Option<&str>) -> Result<Vec<Case>, UnitTestError> {
    let defs = cx.defs;
    let defs_rel = &defs.file;
    let (folder, suffix, tables) = (cx.folder, cx.suffix, cx.tables);
    let selected: Vec<(usize, &definitions::TestCase)> = match case {
        Some(name) => {
            let i = defs
                .test_suite
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| {
                    UnitTestError::Usage(format!(
                        "no test case '{name}' in {defs_rel} (it has: {})",
                        defs.test_suite
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
            vec![(i + 1, &defs.test_suite[i])]
        }
        None => defs
            .test_suite
            .iter()
            .enumerate()
            .map(|(i, c)| (i + 1, c))
            .collect(),
    };
    let all_ut: BTreeSet<String> = tables.iter().map(|x| x.table.clone()).collect();
    let mut cases = Vec::new();
    for (index, c) in selected {
        let mut inserts = Vec::new();
        for input in &c.inputs {
            let Some(ft) = tables
                .iter()
                .find(|x| x.role == Role::Foundation && x.table == input.table_name)
            else {
                return Err(UnitTestError::at(
                    defs_rel,
                    input.line,
                    (cx.not_an_input)(&input.table_name),
                ));
            };
            let (path, rel) = data_file(folder, cx.folder_rel, defs_rel, input)?;
            let text = crate::fsutil::read_project_file(&path).map_err(|e| {
                UnitTestError::at(defs_rel, input.line, format!("{}: {e}", input.file_name))
            })?;
            match input.file_type {
                FileType::Sql => inserts.extend(input_sql(&text, &rel, ft, &all_ut, suffix)?),
                FileType::Csv => {
                    let d = data::read_csv(&text, &rel)?;
                    let typed = data::type_csv(&d, &ft.columns, &ft.table, true)?;
                    inserts.extend(typed.insert_sql(&ft.ut_name));
                }
            }
        }
        let mut checks = Vec::new();
        for out in &c.outputs {
            let Some(tt) = tables
                .iter()
                .find(|x| x.role == Role::Output && x.table == out.table_name)
            else {
                return Err(UnitTestError::at(
                    defs_rel,
                    out.line,
                    (cx.not_an_output)(&out.table_name),
                ));
            };
            let (path, rel) = data_file(folder, cx.folder_rel, defs_rel, out)?;
            let text = crate::fsutil::read_project_file(&path).map_err(|e| {
                UnitTestError::at(defs_rel, out.line, format!("{}: {e}", out.file_name))
            })?;
            let kind = match out.file_type {
                FileType::Csv => {
                    let d = data::read_csv(&text, &rel)?;
                    if !tt.columns.is_empty() {
                        data::type_csv(&d, &tt.columns, &tt.table, false)?;
                    }
                    CheckKind::Expected(d)
                }
                FileType::Sql => {
                    CheckKind::Validation(validation_sql(&text, &rel, &all_ut, suffix)?)
                }
            };
            checks.push(Check {
                table: tt.table.clone(),
                ut_name: tt.ut_name.clone(),
                file: rel,
                kind,
            });
        }
        cases.push(Case {
            name: c.name.clone(),
            index,
            inserts,
            checks,
        });
    }
    Ok(cases)
}

/// Flink's source idleness (`table.exec.source.idle-timeout`,
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/config/#table-exec-source-idle-timeout>):
/// a wall-clock rule that marks a source idle when it sends nothing for that long, so that the other
/// sources' watermarks move on without it.
pub const SOURCE_IDLE_TIMEOUT: &str = "table.exec.source.idle-timeout";

/// The properties of the SQL under test with source idleness disabled (`0 ms`, Flink's default).
/// A unit test's inputs are written before the statement starts and are bounded, so every row is
/// there to be read: idleness would only make the result depend on the machine's speed (a source
/// that starts late is marked idle, the join's watermark passes rows it has not read yet, and they
/// are dropped as late). The bounded end of input flushes every watermark-held row instead.
pub(super) fn without_idleness(mut props: BTreeMap<String, String>) -> BTreeMap<String, String> {
    if props.contains_key(SOURCE_IDLE_TIMEOUT) {
        props.insert(SOURCE_IDLE_TIMEOUT.to_string(), "0 ms".to_string());
    }
    props
}

/// `dml.*.properties` (or `ddl.*` for a CTAS) of the table's `sql-scripts/` folder.
pub(super) fn properties(dir: &Path, ctas: bool) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut files: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for f in files {
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        let wanted = if ctas { "ddl." } else { "dml." };
        if name.ends_with(".properties")
            && (name.starts_with(wanted) || !(name.starts_with("ddl.") || name.starts_with("dml.")))
            && let Ok(text) = crate::fsutil::read_project_file(&f)
        {
            out.extend(parse_properties(&text));
        }
    }
    out
}

fn data_file(
    folder: &Path,
    folder_rel: &str,
    defs_rel: &str,
    d: &TestData,
) -> Result<(std::path::PathBuf, String), UnitTestError> {
    let path = definitions::resolve(folder, &d.file_name).ok_or_else(|| {
        UnitTestError::at(
            defs_rel,
            d.line,
            format!(
                "file_name '{}' must be a path under the table folder, with '/'",
                d.file_name
            ),
        )
    })?;
    if !path.is_file() {
        return Err(UnitTestError::at(
            defs_rel,
            d.line,
            format!("file_name '{}': no such file", d.file_name),
        ));
    }
    Ok((
        path,
        format!(
            "{folder_rel}/{}",
            d.file_name.trim().trim_start_matches("./")
        ),
    ))
}

/// A foundation's test DDL: one `CREATE TABLE` of the foundation, renamed and mapped.
pub(super) fn foundation_table(
    text: &str,
    rel: &str,
    table: &str,
    suffix: &Suffix,
    storage: &Storage,
) -> Result<TestTable, UnitTestError> {
    let one: BTreeSet<String> = [table.to_string()].into();
    let a = sql::analyze(text);
    let Some(create) = a
        .statements
        .iter()
        .find(|s| s.kind == StatementKind::CreateTable)
    else {
        return Err(UnitTestError::in_file(
            rel,
            format!("no CREATE TABLE: a foundation DDL creates {table}{suffix}"),
        ));
    };
    let name = create
        .sinks
        .first()
        .map(|s| s.name.table().to_string())
        .unwrap_or_default();
    if stands_for(&name, &one, suffix).is_none() {
        return Err(UnitTestError::at(
            rel,
            create.line,
            format!(
                "creates '{name}', but this foundation is '{table}': expected {}",
                suffix.table(table)
            ),
        ));
    }
    if a.warnings.iter().any(|w| w.line >= create.line) && create.fallback {
        let w = &a.warnings[0];
        return Err(UnitTestError::at(
            rel,
            w.line,
            format!("cannot parse: {}", w.message),
        ));
    }
    let ut = suffix.table(table);
    let renamed = rewrite::rename(&create.text, &|n| (n.table() == name).then(|| ut.clone()))
        .map_err(|e| UnitTestError::at(rel, create.line, e.to_string()))?;
    Ok(TestTable {
        table: table.to_string(),
        ut_name: ut.clone(),
        role: Role::Foundation,
        ddl: Some(rewrite::map_storage(&renamed, &ut, storage)),
        primary_key: create.primary_key.clone(),
        columns: create.columns.clone(),
    })
}

/// The `INSERT`s of an input SQL file, renamed (see module docs).
fn input_sql(
    text: &str,
    rel: &str,
    ft: &TestTable,
    tables: &BTreeSet<String>,
    suffix: &Suffix,
) -> Result<Vec<String>, UnitTestError> {
    let a = sql::analyze(text);
    let mut out = Vec::new();
    for st in &a.statements {
        if st.kind != StatementKind::Insert {
            return Err(UnitTestError::at(
                rel,
                st.line,
                format!(
                    "an input file holds INSERT statements only (found {:?})",
                    st.kind
                ),
            ));
        }
        for s in &st.sinks {
            if stands_for(s.name.table(), tables, suffix) != Some(&ft.table) {
                return Err(UnitTestError::at(
                    rel,
                    s.span.map_or(st.line, |x| x.start.line),
                    format!(
                        "writes '{}', but this input is for {} ({})",
                        s.name, ft.table, ft.ut_name
                    ),
                ));
            }
        }
        for s in &st.sources {
            if stands_for(s.name.table(), tables, suffix).is_none() {
                return Err(UnitTestError::at(
                    rel,
                    s.span.map_or(st.line, |x| x.start.line),
                    format!(
                        "reads '{}', which is not a table of this test: a test never reads a production table",
                        s.name
                    ),
                ));
            }
        }
        let renamed = rewrite::rename(&st.text, &|n| {
            stands_for(n.table(), tables, suffix).map(|t| suffix.table(t))
        })
        .map_err(|e| UnitTestError::at(rel, st.line, e.to_string()))?;
        out.push(renamed);
    }
    Ok(out)
}

/// A validation query, renamed (see module docs).
fn validation_sql(
    text: &str,
    rel: &str,
    tables: &BTreeSet<String>,
    suffix: &Suffix,
) -> Result<String, UnitTestError> {
    let a = sql::analyze(text);
    let queries: Vec<_> = a.statements.iter().collect();
    let [st] = queries.as_slice() else {
        return Err(UnitTestError::at(
            rel,
            queries.get(1).map_or(1, |s| s.line),
            format!(
                "a validation SQL is one query returning 'PASS' or 'FAIL' ({} statements found)",
                queries.len()
            ),
        ));
    };
    if st.kind != StatementKind::Select {
        return Err(UnitTestError::at(
            rel,
            st.line,
            "a validation SQL is one query (SELECT or WITH … SELECT) returning 'PASS' or 'FAIL'",
        ));
    }
    if let Some(w) = a.warnings.first() {
        return Err(UnitTestError::at(
            rel,
            w.line,
            format!("cannot parse the validation query: {}", w.message),
        ));
    }
    if !has_pass_literal(&st.text) {
        return Err(UnitTestError::at(
            rel,
            st.line,
            "the validation query does not return PASS/FAIL: no 'PASS' literal in it (its first column must be 'PASS' or 'FAIL')",
        ));
    }
    for s in &st.sources {
        if stands_for(s.name.table(), tables, suffix).is_none() {
            return Err(UnitTestError::at(
                rel,
                s.span.map_or(st.line, |x| x.start.line),
                format!(
                    "reads '{}', which is not a table of this test (read the test tables: {})",
                    s.name,
                    tables
                        .iter()
                        .map(|t| suffix.table(t))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    rewrite::rename(&st.text, &|n| {
        stands_for(n.table(), tables, suffix).map(|t| suffix.table(t))
    })
    .map_err(|e| UnitTestError::at(rel, st.line, e.to_string()))
}

fn has_pass_literal(sql: &str) -> bool {
    use sqlparser::tokenizer::{Token, Tokenizer};
    Tokenizer::new(&crate::sql::dialect::FlinkDialect, sql)
        .tokenize()
        .map(|toks| {
            toks.iter().any(
                |t| matches!(t, Token::SingleQuotedString(s) if s.eq_ignore_ascii_case("PASS")),
            )
        })
        .unwrap_or(false)
}
