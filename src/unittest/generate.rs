//! `table init-unit-tests`: a new `tests/` folder for a table, from its SQL.
//!
//! - **Inputs** are the tables the SQL under test reads, as the front end finds them: CTE names,
//!   aliases and table functions are not tables, and a parent whose name is part of the table's own
//!   name is an input (shift_left skipped it: `if input_table not in table_name`).
//! - **Foundations**: `ddl_<parent>.sql` is the parent's production `CREATE TABLE` renamed to
//!   `<parent><suffix>` by token spans (`flinkpipe.gateway.external_ddl` provides the DDL of external
//!   parents). Storage options stay as written: the runner maps them to the target.
//! - **Inputs**: `insert_<parent>_<i>.sql` (or `.csv` for even test cases with `--create-csv`, as
//!   shift_left) with 3 typed sample rows per parent, made from the column types. Values of key-like
//!   columns (the primary key, `id`, `*_id`, `*_key`) depend only on the row number, and other values
//!   only on the column name and the row number, so parents joined on equal or same-named columns
//!   match.
//! - **Outputs**: `validate_<table>_<i>.sql` (a query returning `'PASS'` when the output has rows: edit
//!   it) and `expected_<table>_<i>.csv`, a header of the output's columns, no row yet and the
//!   [`super::data::NOT_FILLED_IN`] line: until that line is deleted the check fails and prints the
//!   rows the output holds, to check and paste.
//!
//! Never overwrites a file: existing ones are kept and listed.

use super::definitions::{self, FileType, Foundation, TestCase, TestData, TestDefinitions};
use super::{Suffix, UnitTestError};
use crate::config::Config;
use crate::inventory::resolve_name;
use crate::project::Project;
use crate::sql::{self, Column as DdlColumn, StatementKind};
use serde::Serialize;
use std::collections::BTreeSet;

/// An input of the SQL under test: its name, columns, primary key and `WITH` options.
pub type Input = (String, Vec<DdlColumn>, Vec<String>, Vec<(String, String)>);

/// Rows per input file (shift_left's `DEFAULT_TEST_DATA_ROWS`).
pub const ROWS: usize = 3;

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// Test cases (shift_left's default: 2).
    pub nb_test_cases: usize,
    /// Even test cases take CSV inputs.
    pub create_csv: bool,
    pub suffix: Suffix,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Generated {
    pub table_name: String,
    /// The `tests/` folder, relative.
    pub folder: String,
    /// The inputs found in the SQL (foundations).
    pub inputs: Vec<String>,
    /// Files written, relative.
    pub written: Vec<String>,
    /// Files that existed and were kept, relative.
    pub kept: Vec<String>,
}

fn key_like(col: &str, pk: &[String]) -> bool {
    let c = col.to_ascii_lowercase();
    pk.iter().any(|k| k.eq_ignore_ascii_case(col))
        || c == "id"
        || c.ends_with("_id")
        || c == "key"
        || c.ends_with("_key")
}

/// Splits `a, b<c, d>, e` at top-level commas.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// A sample SQL literal for a column of type `ty` in row `r` (1-based).
pub fn sample(col: &str, ty: &str, r: usize, key: bool) -> String {
    use super::data::{TypeClass, class_of};
    let t = ty.trim();
    let upper = t.to_ascii_uppercase();
    let inner = |open: char| -> String {
        let s = t.find(open).map_or("", |i| &t[i + 1..]);
        s.strip_suffix(if open == '<' { '>' } else { ')' })
            .unwrap_or(s)
            .to_string()
    };
    match class_of(t) {
        TypeClass::Integer => {
            let v = if key { r } else { r * 10 };
            if upper.starts_with("TINYINT") || upper.starts_with("SMALLINT") {
                format!("CAST({v} AS {t})")
            } else {
                v.to_string()
            }
        }
        TypeClass::Float => format!("CAST({r}.5 AS {t})"),
        TypeClass::Decimal => format!("{}.50", r * 10),
        TypeClass::Boolean => if r.is_multiple_of(2) { "TRUE" } else { "FALSE" }.into(),
        TypeClass::Date => format!("DATE '2025-01-{:02}'", r.min(28)),
        TypeClass::Time => format!("TIME '10:{:02}:00'", r % 60),
        TypeClass::Timestamp => format!("TIMESTAMP '2025-01-01 10:{:02}:00'", r % 60),
        TypeClass::TimestampLtz => {
            format!("CAST(TIMESTAMP '2025-01-01 10:{:02}:00' AS {t})", r % 60)
        }
        TypeClass::Text => {
            if key {
                format!("'key_{r}'")
            } else {
                format!("'{col}_{r}'")
            }
        }
        TypeClass::Binary => format!("CAST('{col}_{r}' AS BYTES)"),
        TypeClass::Nested if upper.starts_with("ARRAY") => {
            format!("ARRAY[{}]", sample(col, &inner('<'), r, key))
        }
        TypeClass::Nested if upper.starts_with("MAP") => {
            let kv = split_top(&inner('<'));
            match kv.as_slice() {
                [k, v] => format!(
                    "MAP[{}, {}]",
                    sample(col, k, r, true),
                    sample(col, v, r, false)
                ),
                _ => format!("CAST(NULL AS {t})"),
            }
        }
        TypeClass::Nested if upper.starts_with("ROW") => {
            let body = if t.contains('<') {
                inner('<')
            } else {
                inner('(')
            };
            let vals: Vec<String> = split_top(&body)
                .iter()
                .map(|f| {
                    let f = f.trim().trim_start_matches('`');
                    let (name, fty) = f.split_once([' ', '`']).unwrap_or((f, "STRING"));
                    sample(name, fty.trim().trim_start_matches('`').trim(), r, false)
                })
                .collect();
            format!("ROW({})", vals.join(", "))
        }
        TypeClass::Nested => format!("CAST(NULL AS {t})"),
    }
}

/// The writable columns of a DDL (not computed, not metadata).
fn writable(cols: &[DdlColumn]) -> Vec<&DdlColumn> {
    cols.iter().filter(|c| !c.computed && !c.metadata).collect()
}

/// Why [`ddl_of`] found no `CREATE TABLE` for a table.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoDdl {
    /// Its DDL file (project-relative) could not be read.
    #[error("{file}: {source}")]
    Unreadable {
        file: String,
        source: std::io::Error,
    },
    /// An external table none of whose `flinkpipe.gateway.external_ddl` files declares it.
    #[error(
        "'{0}' has no DDL in the project (an external table: add its DDL to flinkpipe.gateway.external_ddl, or write tests/ddl_{0}.sql by hand)"
    )]
    Missing(String),
}

/// The `CREATE TABLE` of `table` and where it was read (project-relative, or the external DDL
/// file's path): its production DDL, else a DDL of `flinkpipe.gateway.external_ddl`.
///
/// Errors: [`NoDdl`].
pub(super) fn ddl_of(
    project: &Project,
    cfg: &Config,
    table: &str,
) -> Result<(String, String), NoDdl> {
    let inv = &project.inventory;
    if let Some(rel) = inv.tables.get(table).and_then(|t| t.ddl_ref.clone()) {
        let text = crate::fsutil::read_project_file(inv.disk_path(&rel)).map_err(|source| {
            NoDdl::Unreadable {
                file: rel.clone(),
                source,
            }
        })?;
        return Ok((text, rel));
    }
    for f in crate::target::settings::gateway_external_ddl(cfg) {
        let files: Vec<std::path::PathBuf> = if f.is_dir() {
            std::fs::read_dir(&f)
                .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default()
        } else {
            vec![f]
        };
        for p in files {
            let Ok(text) = crate::fsutil::read_project_file(&p) else {
                continue;
            };
            let a = sql::analyze(&text);
            if a.statements.iter().any(|s| {
                s.kind == StatementKind::CreateTable
                    && s.sinks.iter().any(|x| resolve_name(&x.name, cfg) == table)
            }) {
                return Ok((text, p.display().to_string()));
            }
        }
    }
    Err(NoDdl::Missing(table.to_string()))
}

/// Writes the test folder of `table` (see module docs).
///
/// Errors: an unknown table, a table without SQL to test, an input whose DDL cannot be found or
/// declares no columns (a CTAS parent), a file that cannot be written.
pub fn generate(
    project: &Project,
    cfg: &Config,
    table: &str,
    opts: &GenerateOptions,
) -> Result<Generated, UnitTestError> {
    let inv = &project.inventory;
    let t = inv
        .tables
        .get(table)
        .ok_or_else(|| UnitTestError::Usage(format!("unknown table '{table}'")))?;
    let tested_rel = match (&t.dml_ref, t.ddl_kind) {
        (Some(d), _) => d.clone(),
        (None, Some(StatementKind::Ctas)) => t.ddl_ref.clone().unwrap_or_default(),
        _ => {
            return Err(UnitTestError::in_file(
                &t.folder,
                format!("{table} has no DML or CTAS of its own: there is no statement to test"),
            ));
        }
    };
    let text = crate::fsutil::read_project_file(inv.disk_path(&tested_rel))
        .map_err(|e| UnitTestError::in_file(&tested_rel, format!("cannot read: {e}")))?;
    let a = sql::analyze(&text);
    let sinks: BTreeSet<String> = a.sinks().iter().map(|n| resolve_name(n, cfg)).collect();
    let mut inputs: Vec<String> = Vec::new();
    for st in &a.statements {
        for s in &st.sources {
            let k = resolve_name(&s.name, cfg);
            if !sinks.contains(&k) && !inputs.contains(&k) {
                inputs.push(k);
            }
        }
    }
    // Every table the statement writes gets its expected rows (a statement set writes several):
    // the table first, then the other sinks of the project in name order.
    let outputs: Vec<(&str, &crate::inventory::Table)> = std::iter::once((table, t))
        .chain(
            sinks
                .iter()
                .filter(|s| s.as_str() != table)
                .filter_map(|s| inv.tables.get(s).map(|e| (s.as_str(), e))),
        )
        .collect();
    // Names become file names (`ddl_<input>.sql`, `expected_<table>_1.csv`): each must be a name,
    // not a path, before anything is written (a backquoted `q/../../x` would write elsewhere).
    for name in outputs
        .iter()
        .map(|(n, _)| *n)
        .chain(inputs.iter().map(String::as_str))
    {
        if let Some(why) = not_a_file_name(name) {
            return Err(UnitTestError::in_file(
                &tested_rel,
                format!(
                    "table name {shown} cannot name a test file: it {why}; nothing was written",
                    shown = crate::fsutil::shown_name(name)
                ),
            ));
        }
    }
    let suffix = &opts.suffix;
    let tests_rel = format!("{}/tests", t.folder);
    let tests_dir = inv.disk_path(&t.folder).join("tests");
    let mut files: Vec<(String, String)> = Vec::new();
    let mut structs: Vec<Input> = Vec::new();
    let filters = filter_literals(&text);
    for input in &inputs {
        let (renamed, parsed) = input_ddl(project, cfg, input, suffix, &tested_rel, &tests_rel)?;
        files.push((format!("ddl_{input}.sql"), format!("{renamed};\n")));
        structs.push(parsed);
    }
    let out_cols: Vec<(&str, Vec<String>)> = outputs
        .iter()
        .map(|(n, e)| (*n, output_columns(project, e)))
        .collect();
    let mut cases = Vec::new();
    for i in 1..=opts.nb_test_cases.max(1) {
        let csv = opts.create_csv && i % 2 == 0;
        let mut case = TestCase {
            name: format!("test_{table}_{i}"),
            inputs: Vec::new(),
            outputs: Vec::new(),
            line: 0,
        };
        for parsed in &structs {
            let (name, content, data) = input_file(parsed, i, csv, &filters, suffix, "./tests");
            case.inputs.push(data);
            files.push((name, content));
        }
        for (sink, cols) in &out_cols {
            let expected = format!("expected_{sink}_{i}.csv");
            files.push((
                expected.clone(),
                expected_skeleton(sink, &case.name, cols, "unit tests"),
            ));
            case.outputs.push(TestData {
                table_name: sink.to_string(),
                file_name: format!("./tests/{expected}"),
                file_type: FileType::Csv,
                line: 0,
            });
        }
        let validate = format!("validate_{table}_{i}.sql");
        files.push((
            validate.clone(),
            format!(
                "-- {}: returns 'PASS' or 'FAIL' in its first column. Edit the condition.\nSELECT CASE WHEN COUNT(*) > 0 THEN 'PASS' ELSE 'FAIL' END AS test_result\nFROM {};\n",
                case.name,
                suffix.table(table)
            ),
        ));
        case.outputs.push(TestData {
            table_name: table.to_string(),
            file_name: format!("./tests/{validate}"),
            file_type: FileType::Sql,
            line: 0,
        });
        cases.push(case);
    }
    let defs = TestDefinitions {
        file: format!("{tests_rel}/{}", definitions::FILE_NAME),
        foundations: inputs
            .iter()
            .map(|i| Foundation {
                table_name: i.clone(),
                ddl_for_test: format!("./tests/ddl_{i}.sql"),
                line: 0,
            })
            .collect(),
        test_suite: cases,
    };
    files.push((definitions::FILE_NAME.to_string(), defs.to_yaml()));
    let (written, kept) = write_new_files(
        project,
        &tests_dir,
        &tests_rel,
        files,
        "flinkpipe table init-unit-tests",
    )?;
    Ok(Generated {
        table_name: table.to_string(),
        folder: tests_rel,
        inputs,
        written,
        kept,
    })
}

/// The `CREATE TABLE` of input `input` renamed to its test name (`<input><suffix>`), and its parsed
/// columns, primary key and options. `read_by` names the SQL that reads it, `tests_rel` the test
/// folder (both for messages).
///
/// Errors: no DDL for the input (an external table without `flinkpipe.gateway.external_ddl`), no
/// `CREATE TABLE` in it, no declared columns (a CTAS or a view), a rename the front end refuses.
pub fn input_ddl(
    project: &Project,
    cfg: &Config,
    input: &str,
    suffix: &Suffix,
    read_by: &str,
    tests_rel: &str,
) -> Result<(String, Input), UnitTestError> {
    let (ddl, rel) =
        ddl_of(project, cfg, input).map_err(|m| UnitTestError::in_file(read_by, m.to_string()))?;
    let da = sql::analyze(&ddl);
    let Some(create) = da.statements.iter().find(|s| {
        s.kind.creates_relation() && s.sinks.iter().any(|x| resolve_name(&x.name, cfg) == input)
    }) else {
        return Err(UnitTestError::in_file(
            &rel,
            format!("no CREATE TABLE for {input}"),
        ));
    };
    if create.columns.is_empty() {
        return Err(UnitTestError::at(
            &rel,
            create.line,
            format!(
                "{input} declares no columns (a CTAS or a view): write {tests_rel}/ddl_{input}.sql by hand"
            ),
        ));
    }
    let renamed = super::rewrite::rename(&create.text, &|n| {
        (resolve_name(n, cfg) == input).then(|| suffix.table(n.table()))
    })
    .map_err(|e| UnitTestError::at(&rel, create.line, e.to_string()))?;
    Ok((
        renamed,
        (
            input.to_string(),
            create.columns.clone(),
            create.primary_key.clone(),
            create.with_options.clone(),
        ),
    ))
}

/// The columns an expected-rows file of `t` lists: its DDL's columns, metadata columns left out
/// (empty when the DDL declares none, a CTAS).
pub fn output_columns(project: &Project, t: &crate::inventory::Table) -> Vec<String> {
    let inv = &project.inventory;
    t.ddl_ref
        .as_ref()
        .and_then(|r| crate::fsutil::read_project_file(inv.disk_path(r)).ok())
        .map(|d| {
            sql::analyze(&d)
                .statements
                .iter()
                .find(|s| s.kind.creates_relation())
                .map(|s| {
                    s.columns
                        .iter()
                        .filter(|c| !c.metadata)
                        .map(|c| c.name.clone())
                        .collect()
                })
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

/// The input file of test case `i` (1-based) for one input: [`ROWS`] typed sample rows (see module
/// docs), as `INSERT INTO <input><suffix>` SQL or as CSV; returns its file name, its text and its
/// entry for the definitions (`file_name` under `dir`, `./tests` or `./tests/integration`).
pub fn input_file(
    parsed: &Input,
    i: usize,
    csv: bool,
    filters: &std::collections::BTreeMap<String, Vec<String>>,
    suffix: &Suffix,
    dir: &str,
) -> (String, String, TestData) {
    let (input, cols, pk, options) = parsed;
    let cols = writable(cols);
    let rows: Vec<Vec<String>> = (1..=ROWS)
        .map(|r| {
            let n = (i - 1) * ROWS + r;
            cols.iter()
                .map(|c| {
                    let key = key_like(&c.name, pk);
                    (!key)
                        .then(|| hinted(c, n, filters, options))
                        .flatten()
                        .unwrap_or_else(|| sample(&c.name, &c.data_type, n, key))
                })
                .collect()
        })
        .collect();
    let (name, content) = if csv {
        let header: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        let mut s = format!("{}\n", header.join(","));
        for r in &rows {
            let cells: Vec<String> = r.iter().map(|v| csv_cell(v)).collect();
            s.push_str(&cells.join(","));
            s.push('\n');
        }
        (format!("insert_{input}_{i}.csv"), s)
    } else {
        let names: Vec<String> = cols
            .iter()
            .map(|c| sql::quote_identifier(&c.name))
            .collect();
        let rows: Vec<String> = rows
            .iter()
            .map(|r| format!("  ({})", r.join(", ")))
            .collect();
        (
            format!("insert_{input}_{i}.sql"),
            format!(
                "INSERT INTO {} ({})\nVALUES\n{};\n",
                suffix.table(input),
                names.join(", "),
                rows.join(",\n")
            ),
        )
    };
    let data = TestData {
        table_name: input.clone(),
        file_name: format!("{dir}/{name}"),
        file_type: if csv { FileType::Csv } else { FileType::Sql },
        line: 0,
    };
    (name, content, data)
}

/// The text of a new expected-rows file of `table` for test case `case`: a comment, the
/// [`super::data::NOT_FILLED_IN`] line (the check fails until it is deleted) and a header of
/// `columns`, no row. `readme` names the README section that explains it.
pub fn expected_skeleton(table: &str, case: &str, columns: &[String], readme: &str) -> String {
    format!(
        "# The rows {table} must hold at the end of {case}: one line per row, in any order (see README: {readme}).\n{}\n{}\n",
        super::data::NOT_FILLED_IN,
        columns.join(",")
    )
}

/// Writes `files` (name, text) into `dir` (relative: `rel`), all or nothing, never overwriting a
/// file: returns the files written and the files that existed and were kept (relative). `what`
/// names the command in the batch journal.
///
/// Errors: the folder cannot be created, a file cannot be written (none is then).
pub fn write_new_files(
    project: &Project,
    dir: &std::path::Path,
    rel: &str,
    files: Vec<(String, String)>,
    what: &'static str,
) -> Result<(Vec<String>, Vec<String>), UnitTestError> {
    let inv = &project.inventory;
    let created_dir = !dir.exists();
    // Never through a link that leaves the tree (a `tests/` linked to a folder outside).
    crate::fsutil::create_dir_all_within(&inv.root, dir)
        .map_err(|e| UnitTestError::in_file(rel, format!("cannot create: {e}")))?;
    let (mut written, mut kept) = (Vec::new(), Vec::new());
    // All or nothing: every new file is staged, then renamed into place together (a batch, so that
    // an interrupt or a failed write leaves none of them).
    let fail = |e: crate::fsutil::BatchError| {
        if created_dir {
            let _ = std::fs::remove_dir(dir);
        }
        UnitTestError::in_file(
            rel,
            format!("cannot write the test files: {e}; none was written"),
        )
    };
    let again = format!("{what} (again)");
    let batch = crate::fsutil::Batch::begin(&inv.root, what, &again).map_err(|e| fail(e.into()))?;
    let mut staged = Vec::new();
    for (name, content) in files {
        debug_assert!(not_a_file_name(&name).is_none(), "{name}");
        let file_rel = format!("{rel}/{name}");
        let path = dir.join(&name);
        if path.exists() {
            kept.push(file_rel);
            continue;
        }
        match batch.stage(&path, content.as_bytes()) {
            Ok(Some(s)) => staged.push(s),
            Ok(None) => {}
            Err(e) => {
                batch.abandon(staged);
                return Err(fail(e));
            }
        }
        written.push(file_rel);
    }
    batch.commit(staged).map_err(fail)?;
    Ok((written, kept))
}

/// Why `name` cannot be used as (part of) a file name, or `None` when it can: the one rule of
/// [`crate::fsutil::file_name_component`].
pub fn not_a_file_name(name: &str) -> Option<crate::fsutil::UnsafeName> {
    crate::fsutil::file_name_component(name).err()
}

/// Literals the SQL under test compares columns with (`col = 'X'`, `t.col = 5`, `col IN ('A', 'B')`;
/// not `<>`, `NOT IN` or ranges), by lower-case column name, in order of appearance: sample rows use
/// them so that they pass the query's filters. Comments are ignored.
pub fn filter_literals(sql: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    use regex::Regex;
    use std::sync::LazyLock;
    const LIT: &str = r"'(?:[^']|'')*'|-?\d+(?:\.\d+)?";
    static EQ: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"(?i)(?:^|[^\w.`])(?:[A-Za-z_]\w*\.)?`?([A-Za-z_]\w*)`?\s*=\s*({LIT})"
        ))
        .expect("valid")
    });
    static IN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)(?:^|[^\w.`])(?:[A-Za-z_]\w*\.)?`?([A-Za-z_]\w*)`?\s+(NOT\s+)?IN\s*\(([^()]*)\)",
        )
        .expect("valid")
    });
    static ONE: LazyLock<Regex> = LazyLock::new(|| Regex::new(LIT).expect("valid"));
    let text: String = sql
        .lines()
        .map(|l| match l.find("--") {
            Some(i) if l[..i].matches('\'').count() % 2 == 0 => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut add = |col: &str, lit: &str| {
        let v = out.entry(col.to_ascii_lowercase()).or_default();
        if !v.iter().any(|x| x == lit) {
            v.push(lit.to_string());
        }
    };
    for c in EQ.captures_iter(&text) {
        add(&c[1], &c[2]);
    }
    for c in IN.captures_iter(&text) {
        if c.get(2).is_some() {
            continue;
        }
        for l in ONE.find_iter(&c[3]) {
            add(&c[1], l.as_str());
        }
    }
    out
}

/// A sample value for a column that is not a key, from what the project says about its domain:
/// a literal the SQL under test compares it with ([`filter_literals`]; text literals for text
/// columns, numbers for numeric ones), else for an integer column the range of a `datagen`
/// production DDL (`'fields.<col>.min'` / `'fields.<col>.max'`). `None`: no hint, the generic sample.
fn hinted(
    c: &DdlColumn,
    r: usize,
    filters: &std::collections::BTreeMap<String, Vec<String>>,
    options: &[(String, String)],
) -> Option<String> {
    use super::data::{TypeClass, class_of};
    let class = class_of(&c.data_type);
    if let Some(lits) = filters.get(&c.name.to_ascii_lowercase()) {
        let fits: Vec<&String> = lits
            .iter()
            .filter(|l| match class {
                TypeClass::Text => l.starts_with('\''),
                TypeClass::Integer => !l.starts_with('\'') && !l.contains('.'),
                TypeClass::Decimal | TypeClass::Float => !l.starts_with('\''),
                _ => false,
            })
            .collect();
        if !fits.is_empty() {
            let l = fits[(r - 1) % fits.len()];
            let upper = c.data_type.to_ascii_uppercase();
            let plain = matches!(class, TypeClass::Text | TypeClass::Decimal)
                || (class == TypeClass::Integer
                    && !upper.starts_with("TINYINT")
                    && !upper.starts_with("SMALLINT"));
            return Some(if plain {
                l.clone()
            } else {
                format!("CAST({l} AS {})", c.data_type)
            });
        }
    }
    if class == TypeClass::Integer {
        let opt = |k: &str| {
            options
                .iter()
                .find(|(o, _)| o.eq_ignore_ascii_case(&format!("fields.{}.{k}", c.name)))
                .and_then(|(_, v)| v.trim().parse::<i64>().ok())
        };
        if let (Some(min), Some(max)) = (opt("min"), opt("max"))
            && max >= min
        {
            let span = (max - min).saturating_add(1).max(1);
            let v = min + ((r as i64 - 1) % span);
            let upper = c.data_type.to_ascii_uppercase();
            return Some(
                if upper.starts_with("TINYINT") || upper.starts_with("SMALLINT") {
                    format!("CAST({v} AS {})", c.data_type)
                } else {
                    v.to_string()
                },
            );
        }
    }
    None
}

/// A sample literal as a CSV cell: strings as `'…'` SQL literals, typed literals as their text.
fn csv_cell(v: &str) -> String {
    for p in ["TIMESTAMP '", "DATE '", "TIME '"] {
        if let Some(rest) = v.strip_prefix(p) {
            return rest.trim_end_matches('\'').to_string();
        }
    }
    if let Some(rest) = v.strip_prefix("CAST(TIMESTAMP '") {
        return rest.split('\'').next().unwrap_or("").to_string();
    }
    if let Some(rest) = v.strip_prefix("CAST(") {
        return rest
            .split(" AS ")
            .next()
            .unwrap_or("")
            .trim_matches('\'')
            .to_string();
    }
    if v.contains(',') {
        return format!("\"{}\"", v.replace('"', "\"\""));
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_literals_are_equalities_and_in_lists_outside_comments() {
        let f = filter_literals(
            "INSERT INTO t SELECT * FROM a JOIN b ON a.id = b.id\n\
             -- WHERE x = 'commented'\n\
             WHERE b.status = 'CAPTURED' AND `kind` IN ('A', 'B''s') AND n = 5\n\
             AND m <> 3 AND q != 'no' AND r >= 2 AND s NOT IN ('Z') AND t.v=-1.5",
        );
        let got: Vec<(&str, Vec<&str>)> = f
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            got,
            [
                ("kind", vec!["'A'", "'B''s'"]),
                ("n", vec!["5"]),
                ("status", vec!["'CAPTURED'"]),
                ("v", vec!["-1.5"]),
            ]
        );
    }

    #[test]
    fn hints_follow_filters_then_datagen_ranges() {
        let col = |name: &str, ty: &str| DdlColumn {
            name: name.into(),
            data_type: ty.into(),
            nullable: true,
            computed: false,
            metadata: false,
        };
        let filters = filter_literals("SELECT * FROM p WHERE status = 'OK' AND code IN (7, 9)");
        let opts = vec![
            ("fields.level.min".to_string(), "0".to_string()),
            ("fields.level.max".to_string(), "2".to_string()),
        ];
        assert_eq!(
            hinted(&col("status", "STRING"), 1, &filters, &opts).as_deref(),
            Some("'OK'")
        );
        assert_eq!(
            hinted(&col("code", "INT"), 2, &filters, &opts).as_deref(),
            Some("9")
        );
        assert_eq!(
            hinted(&col("code", "SMALLINT"), 1, &filters, &opts).as_deref(),
            Some("CAST(7 AS SMALLINT)")
        );
        // A text literal does not fit a numeric column, nor a number a text one.
        assert_eq!(hinted(&col("status", "INT"), 1, &filters, &opts), None);
        let levels: Vec<String> = (1..=4)
            .map(|r| hinted(&col("level", "BIGINT"), r, &filters, &opts).unwrap())
            .collect();
        assert_eq!(levels, ["0", "1", "2", "0"]);
        assert_eq!(hinted(&col("other", "BIGINT"), 1, &filters, &opts), None);
    }

    #[test]
    fn samples_follow_types_and_keys() {
        assert_eq!(sample("customer_id", "BIGINT", 2, true), "2");
        assert_eq!(sample("qty", "INT", 2, false), "20");
        assert_eq!(sample("id", "STRING", 1, true), "'key_1'");
        assert_eq!(sample("name", "STRING", 1, false), "'name_1'");
        assert_eq!(sample("amount", "DECIMAL(10, 2)", 3, false), "30.50");
        assert_eq!(
            sample("at", "TIMESTAMP(3)", 4, false),
            "TIMESTAMP '2025-01-01 10:04:00'"
        );
        assert_eq!(
            sample("items", "ARRAY<ROW<sku_id INT, qty INT>>", 1, false),
            "ARRAY[ROW(10, 10)]"
        );
        assert_eq!(
            sample("m", "MAP<STRING, INT>", 1, false),
            "MAP['key_1', 10]"
        );
        assert_eq!(
            csv_cell("TIMESTAMP '2025-01-01 10:04:00'"),
            "2025-01-01 10:04:00"
        );
        assert_eq!(csv_cell("'x_1'"), "'x_1'");
        assert_eq!(csv_cell("CAST(1.5 AS DOUBLE)"), "1.5");
    }
}
