//! CSV fixtures: input rows (`insert_<t>_<i>.csv`) and expected output rows (`expected_<t>_<i>.csv`),
//! read with the `csv` crate and typed by the table's DDL.
//!
//! The first line names the columns (backticks and double quotes around a name are removed). Each cell
//! is one of:
//! - empty or `NULL` (any case): SQL NULL;
//! - `'text'`: a SQL string literal (`''` is a quote) — shift_left's CSV form
//!   (`_transform_csv_to_sql` pastes each line into `VALUES (…)`), so its files read unchanged;
//! - anything else, as CSV writes it (`"a, b"` quoted when it holds a comma): read by the column's
//!   type — integers, decimals, doubles, `true`/`false`, dates `YYYY-MM-DD`, times, timestamps
//!   `YYYY-MM-DD HH:MM[:SS[.fff]]` (a `T` is accepted), text. A cell of an `ARRAY`, `MAP`, `ROW` or
//!   `MULTISET` column is a SQL expression (`ARRAY[1, 2]`) in an input, JSON (`[1,2]`) in an expected file.
//!
//! Input rows become one `INSERT INTO <t>_ut (cols) VALUES (…)` with every value cast to its column's
//! type, so each row has exactly the table's types whatever the literal. Every check runs before
//! anything is created: unknown, computed or duplicated columns, rows with another number of cells,
//! values that do not read as their type, NULL in a NOT NULL column — each an error with file and line.

use super::UnitTestError;
use crate::sql::Column as DdlColumn;

/// One cell of a CSV row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Empty, or `NULL`.
    Null,
    /// A `'…'` SQL string literal, unescaped.
    Quoted(String),
    /// Plain CSV text.
    Bare(String),
}

impl Cell {
    /// The text of a non-NULL cell.
    pub fn text(&self) -> Option<&str> {
        match self {
            Cell::Null => None,
            Cell::Quoted(s) | Cell::Bare(s) => Some(s),
        }
    }
}

/// A data row and the line it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow {
    /// 1-based line in the file.
    pub line: usize,
    pub cells: Vec<Cell>,
}

/// A CSV fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvData {
    /// The file, relative, for messages.
    pub file: String,
    /// Column names of the header.
    pub columns: Vec<String>,
    /// 1-based line of the header.
    pub header_line: usize,
    pub rows: Vec<CsvRow>,
    /// The file still holds the [`NOT_FILLED_IN`] line `init-unit-tests` writes: its rows are not
    /// an expectation yet, so the check fails (showing what the output holds) until it is removed.
    pub not_filled_in: bool,
}

/// The comment line `table init-unit-tests` writes into a new `expected_<table>_<i>.csv`: while it
/// is there the check fails and prints the rows the output holds (an empty list of rows would
/// otherwise pass on an empty output). Deleting it makes the rows below it, none included, the
/// expectation.
pub const NOT_FILLED_IN: &str = "# flinkpipe: not filled in yet: write the expected rows below the header, then delete this line";

/// What a Flink type is for reading and comparing values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    /// TINYINT, SMALLINT, INT, INTEGER, BIGINT.
    Integer,
    /// FLOAT, REAL, DOUBLE.
    Float,
    /// DECIMAL, NUMERIC, DEC.
    Decimal,
    Boolean,
    Date,
    Time,
    /// TIMESTAMP (without time zone).
    Timestamp,
    /// TIMESTAMP_LTZ, TIMESTAMP WITH LOCAL TIME ZONE.
    TimestampLtz,
    /// CHAR, VARCHAR, STRING.
    Text,
    /// BINARY, VARBINARY, BYTES.
    Binary,
    /// ARRAY, MAP, MULTISET, ROW (and anything unknown).
    Nested,
}

/// The class of a type as written (`DECIMAL(10, 2)`, `timestamp(3) with local time zone`).
pub fn class_of(type_text: &str) -> TypeClass {
    let t = type_text.trim().to_ascii_uppercase();
    let root = crate::results::value::type_root(&t);
    match root {
        "TINYINT" | "SMALLINT" | "INT" | "INTEGER" | "BIGINT" => TypeClass::Integer,
        "FLOAT" | "REAL" | "DOUBLE" => TypeClass::Float,
        "DECIMAL" | "NUMERIC" | "DEC" => TypeClass::Decimal,
        "BOOLEAN" => TypeClass::Boolean,
        "DATE" => TypeClass::Date,
        "TIME" => TypeClass::Time,
        "TIMESTAMP_LTZ" => TypeClass::TimestampLtz,
        "TIMESTAMP" if t.contains("LOCAL TIME ZONE") => TypeClass::TimestampLtz,
        "TIMESTAMP" => TypeClass::Timestamp,
        "CHAR" | "VARCHAR" | "STRING" => TypeClass::Text,
        "BINARY" | "VARBINARY" | "BYTES" => TypeClass::Binary,
        _ => TypeClass::Nested,
    }
}

/// Reads a CSV fixture; `file` names it in errors.
///
/// Errors: an empty file, a file that holds an `INSERT` statement (declare it `file_type: sql`), a row
/// whose number of cells differs from the header's, a header with an empty or repeated name.
pub fn read_csv(text: &str, file: &str) -> Result<CsvData, UnitTestError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut header: Option<(usize, Vec<String>)> = None;
    let mut rows = Vec::new();
    let not_filled_in = text.lines().any(|l| l.trim() == NOT_FILLED_IN);
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize).unwrap_or(1);
            UnitTestError::at(file, line, format!("not CSV: {e}"))
        })?;
        let line = rec.position().map(|p| p.line() as usize).unwrap_or(1);
        if rec.iter().all(|c| c.trim().is_empty())
            || rec.get(0).is_some_and(|c| c.trim_start().starts_with('#'))
        {
            continue; // blank lines and `#` comments
        }
        let fields = join_quoted(rec.iter().collect());
        match &header {
            None => {
                if fields
                    .first()
                    .is_some_and(|f| f.to_ascii_uppercase().starts_with("INSERT"))
                {
                    return Err(UnitTestError::at(
                        file,
                        line,
                        "this .csv file holds an INSERT statement, not rows: declare it `file_type: sql` in test_definitions.yaml",
                    ));
                }
                let names: Vec<String> = fields
                    .iter()
                    .map(|f| f.trim().trim_matches(['`', '"']).to_string())
                    .collect();
                for (i, n) in names.iter().enumerate() {
                    if n.is_empty() {
                        return Err(UnitTestError::at(
                            file,
                            line,
                            format!("header column {} has no name", i + 1),
                        ));
                    }
                    if names[..i].iter().any(|o| o.eq_ignore_ascii_case(n)) {
                        return Err(UnitTestError::at(
                            file,
                            line,
                            format!("column '{n}' appears twice in the header"),
                        ));
                    }
                }
                header = Some((line, names));
            }
            Some((_, names)) => {
                if fields.len() != names.len() {
                    return Err(UnitTestError::at(
                        file,
                        line,
                        format!(
                            "row has {} value(s) but the header names {} column(s)",
                            fields.len(),
                            names.len()
                        ),
                    ));
                }
                rows.push(CsvRow {
                    line,
                    cells: fields.into_iter().map(|f| cell(&f)).collect(),
                });
            }
        }
    }
    let Some((header_line, columns)) = header else {
        return Err(UnitTestError::in_file(file, "empty CSV: no header line"));
    };
    Ok(CsvData {
        file: file.to_string(),
        columns,
        header_line,
        rows,
        not_filled_in,
    })
}

/// Joins fields that the CSV reader split inside a `'…'` literal (`'a, b'`).
fn join_quoted(fields: Vec<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for f in fields {
        if open {
            let last = out.last_mut().expect("an open literal has a start");
            last.push(',');
            last.push_str(f);
        } else {
            out.push(f.to_string());
        }
        let cur = out.last().expect("pushed").trim_start();
        open = cur.starts_with('\'') && cur.matches('\'').count() % 2 == 1;
    }
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

fn cell(f: &str) -> Cell {
    let f = f.trim();
    if f.is_empty() || f.eq_ignore_ascii_case("null") {
        return Cell::Null;
    }
    if f.len() >= 2 && f.starts_with('\'') && f.ends_with('\'') {
        return Cell::Quoted(f[1..f.len() - 1].replace("''", "'"));
    }
    Cell::Bare(f.to_string())
}

/// A value that does not read as its column's class: the class expected. Its text names what a
/// value of that class looks like (`a date YYYY-MM-DD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", expected(*.0))]
pub struct NotA(pub TypeClass);

fn expected(class: TypeClass) -> &'static str {
    match class {
        TypeClass::Integer => "an integer",
        TypeClass::Float => "a number",
        TypeClass::Decimal => "a decimal number (12.50)",
        TypeClass::Boolean => "true or false",
        TypeClass::Date => "a date YYYY-MM-DD",
        TypeClass::Time => "a time HH:MM:SS",
        TypeClass::Timestamp | TypeClass::TimestampLtz => "a timestamp YYYY-MM-DD HH:MM:SS[.fff]",
        TypeClass::Text | TypeClass::Binary | TypeClass::Nested => "a value",
    }
}

/// Whether `text` reads as a value of class `class`.
///
/// Errors: [`NotA`] the class, when it does not.
pub fn check_value(text: &str, class: TypeClass) -> Result<(), NotA> {
    let ok = match class {
        TypeClass::Integer => text.trim().parse::<i128>().is_ok(),
        TypeClass::Float => text.trim().parse::<f64>().is_ok(),
        TypeClass::Decimal => is_decimal(text.trim()),
        TypeClass::Boolean => matches!(text.trim().to_ascii_lowercase().as_str(), "true" | "false"),
        TypeClass::Date => is_date(text.trim()),
        TypeClass::Time => is_time(text.trim()),
        TypeClass::Timestamp | TypeClass::TimestampLtz => is_timestamp(text.trim()),
        TypeClass::Text | TypeClass::Binary | TypeClass::Nested => true,
    };
    if ok { Ok(()) } else { Err(NotA(class)) }
}

fn is_decimal(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    !(i.is_empty() && f.is_empty())
        && i.chars().all(|c| c.is_ascii_digit())
        && f.chars().all(|c| c.is_ascii_digit())
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && s.chars().all(|c| c.is_ascii_digit())
}

fn is_date(s: &str) -> bool {
    let p: Vec<&str> = s.split('-').collect();
    p.len() == 3 && digits(p[0], 4) && digits(p[1], 2) && digits(p[2], 2)
}

fn is_time(s: &str) -> bool {
    let (hms, frac) = s.split_once('.').unwrap_or((s, ""));
    let p: Vec<&str> = hms.split(':').collect();
    (p.len() == 2 || p.len() == 3)
        && p.iter().all(|x| digits(x, 2))
        && frac.len() <= 9
        && frac.chars().all(|c| c.is_ascii_digit())
        && (frac.is_empty() || p.len() == 3)
}

fn is_timestamp(s: &str) -> bool {
    let s = s.strip_suffix('Z').unwrap_or(s);
    match s.split_once([' ', 'T']) {
        Some((d, t)) => is_date(d) && is_time(t),
        None => is_date(s),
    }
}

/// The canonical text of a timestamp or time: `T` → space, `Z` dropped, a fraction without trailing
/// zeros, seconds added when missing (`2025-01-01T10:00` → `2025-01-01 10:00:00`).
pub fn canonical_time(s: &str) -> String {
    let s = s.trim().strip_suffix('Z').unwrap_or(s.trim());
    let s = s.replacen('T', " ", 1);
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (Some(d.to_string()), t.to_string()),
        None if s.contains(':') => (None, s.clone()),
        None => (Some(s.clone()), "00:00:00".to_string()),
    };
    let (hms, frac) = time.split_once('.').unwrap_or((&time, ""));
    let hms = if hms.matches(':').count() == 1 {
        format!("{hms}:00")
    } else {
        hms.to_string()
    };
    let frac = frac.trim_end_matches('0');
    let t = if frac.is_empty() {
        hms
    } else {
        format!("{hms}.{frac}")
    };
    match date {
        Some(d) => format!("{d} {t}"),
        None => t,
    }
}

/// The SQL of one input value of a column of type `ty`: `CAST(<literal> AS <ty>)`; a nested type's
/// cell is a SQL expression, kept as written.
pub fn sql_value(cell: &Cell, ty: &str) -> String {
    let class = class_of(ty);
    let Some(text) = cell.text() else {
        return format!("CAST(NULL AS {ty})");
    };
    let lit = |s: &str| format!("'{}'", s.replace('\'', "''"));
    match (class, cell) {
        (TypeClass::Nested, Cell::Bare(s)) => s.clone(),
        (TypeClass::Integer | TypeClass::Float | TypeClass::Decimal, _) => {
            format!("CAST({} AS {ty})", text.trim())
        }
        (TypeClass::Boolean, _) => text.trim().to_ascii_uppercase(),
        (TypeClass::Date, _) => format!("DATE {}", lit(text.trim())),
        (TypeClass::Time, _) => format!("CAST(TIME {} AS {ty})", lit(text.trim())),
        (TypeClass::Timestamp | TypeClass::TimestampLtz, _) => format!(
            "CAST(TIMESTAMP {} AS {ty})",
            lit(&canonical_time(text).replace('T', " "))
        ),
        _ => format!("CAST({} AS {ty})", lit(text)),
    }
}

/// A CSV fixture matched with the columns of its table's DDL.
#[derive(Debug, Clone)]
pub struct TypedCsv<'a> {
    pub data: &'a CsvData,
    /// For each CSV column, its DDL column.
    pub columns: Vec<&'a DdlColumn>,
}

/// Matches a CSV's columns with `ddl` and checks every value (see module docs). `table` names the
/// table in messages; `input`: the rows are written by an INSERT (computed columns refused, NOT NULL
/// columns required), else they are expected rows (any column may be left out).
///
/// Errors: with the CSV's file and line.
pub fn type_csv<'a>(
    data: &'a CsvData,
    ddl: &'a [DdlColumn],
    table: &str,
    input: bool,
) -> Result<TypedCsv<'a>, UnitTestError> {
    let file = data.file.as_str();
    let header_line = data.header_line;
    let mut columns = Vec::new();
    for name in &data.columns {
        let Some(c) = ddl.iter().find(|c| c.name.eq_ignore_ascii_case(name)) else {
            let known: Vec<&str> = ddl.iter().map(|c| c.name.as_str()).collect();
            return Err(UnitTestError::at(
                file,
                header_line,
                format!(
                    "column '{name}' is not a column of {table} (its DDL has: {})",
                    known.join(", ")
                ),
            ));
        };
        if input && c.computed {
            return Err(UnitTestError::at(
                file,
                header_line,
                format!(
                    "column '{name}' of {table} is computed or a virtual metadata column: an INSERT cannot write it"
                ),
            ));
        }
        columns.push(c);
    }
    if input {
        for c in ddl.iter().filter(|c| !c.nullable && !c.computed) {
            if !data.columns.iter().any(|n| n.eq_ignore_ascii_case(&c.name)) {
                return Err(UnitTestError::at(
                    file,
                    header_line,
                    format!(
                        "column '{}' of {table} is NOT NULL and missing from the header",
                        c.name
                    ),
                ));
            }
        }
    }
    for row in &data.rows {
        for (cell, col) in row.cells.iter().zip(&columns) {
            let class = class_of(&col.data_type);
            match cell.text() {
                None if input && !col.nullable => {
                    return Err(UnitTestError::at(
                        file,
                        row.line,
                        format!("column '{}' of {table} is NOT NULL: NULL given", col.name),
                    ));
                }
                None => {}
                Some(_)
                    if class == TypeClass::Nested && matches!(cell, Cell::Quoted(_)) && input =>
                {
                    return Err(UnitTestError::at(
                        file,
                        row.line,
                        format!(
                            "column '{}' is {}: write a SQL expression (ARRAY[…], ROW(…)), not a string",
                            col.name, col.data_type
                        ),
                    ));
                }
                Some(t) => check_value(t, class).map_err(|want| {
                    UnitTestError::at(
                        file,
                        row.line,
                        format!(
                            "column '{}' is {}: '{t}' is not {want}",
                            col.name, col.data_type
                        ),
                    )
                })?,
            }
        }
    }
    Ok(TypedCsv { data, columns })
}

impl TypedCsv<'_> {
    /// `INSERT INTO <target> (cols) VALUES (…), …` for the rows (`None` without rows).
    pub fn insert_sql(&self, target: &str) -> Option<String> {
        if self.data.rows.is_empty() {
            return None;
        }
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|c| crate::sql::quote_identifier(&c.name))
            .collect();
        let rows: Vec<String> = self
            .data
            .rows
            .iter()
            .map(|r| {
                let vals: Vec<String> = r
                    .cells
                    .iter()
                    .zip(&self.columns)
                    .map(|(cell, c)| sql_value(cell, &c.data_type))
                    .collect();
                format!("  ({})", vals.join(", "))
            })
            .collect();
        Some(format!(
            "INSERT INTO {} ({})\nVALUES\n{}",
            crate::sql::quote_identifier(target),
            cols.join(", "),
            rows.join(",\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, ty: &str, nullable: bool) -> DdlColumn {
        DdlColumn {
            name: name.into(),
            data_type: ty.into(),
            nullable,
            computed: false,
            metadata: false,
        }
    }

    #[test]
    fn reads_plain_csv_and_shift_left_rows() {
        let d = read_csv("id,amount,note\n1,12.50,\"a, b\"\n2,,NULL\n", "f.csv").unwrap();
        assert_eq!(d.columns, ["id", "amount", "note"]);
        assert_eq!(d.rows[0].line, 2);
        assert_eq!(d.rows[0].cells[2], Cell::Bare("a, b".into()));
        assert_eq!(d.rows[1].cells[1], Cell::Null);
        let s = read_csv("`default_key`, `c_value`\n'k_1', 'it''s, here'\n", "f.csv").unwrap();
        assert_eq!(s.columns, ["default_key", "c_value"]);
        assert_eq!(s.rows[0].cells[1], Cell::Quoted("it's, here".into()));
    }

    #[test]
    fn bad_csv_names_file_and_line() {
        let e = read_csv("a,b\n1,2\n3\n", "f.csv").unwrap_err().to_string();
        assert_eq!(
            e,
            "f.csv:3: row has 1 value(s) but the header names 2 column(s)"
        );
        let e = read_csv("INSERT INTO x_ut (a) VALUES (1);\n", "f.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("f.csv:1: this .csv file holds an INSERT"),
            "{e}"
        );
        let ddl = [col("id", "BIGINT", false), col("ts", "TIMESTAMP(3)", true)];
        let d = read_csv("id,ts\n1,2025-01-01 10:00\n2,yesterday\n", "f.csv").unwrap();
        let e = type_csv(&d, &ddl, "t", true).unwrap_err().to_string();
        assert_eq!(
            e,
            "f.csv:3: column 'ts' is TIMESTAMP(3): 'yesterday' is not a timestamp YYYY-MM-DD HH:MM:SS[.fff]"
        );
        let d = read_csv("id,nope\n1,2\n", "f.csv").unwrap();
        let e = type_csv(&d, &ddl, "t", true).unwrap_err().to_string();
        assert_eq!(
            e,
            "f.csv:1: column 'nope' is not a column of t (its DDL has: id, ts)"
        );
        let d = read_csv("ts\n2025-01-01\n", "f.csv").unwrap();
        let e = type_csv(&d, &ddl, "t", true).unwrap_err().to_string();
        assert!(e.contains("'id' of t is NOT NULL and missing"), "{e}");
    }

    #[test]
    fn insert_casts_every_value_to_its_column() {
        let ddl = [
            col("id", "BIGINT", false),
            col("amount", "DECIMAL(10, 2)", true),
            col("ok", "BOOLEAN", true),
            col("at", "TIMESTAMP(3)", true),
            col("name", "STRING", true),
        ];
        let d = read_csv(
            "id,amount,ok,at,name\n1,12.5,true,2025-01-01T10:00,'O''Neil'\n2,,false,,x\n",
            "f.csv",
        )
        .unwrap();
        let t = type_csv(&d, &ddl, "t", true).unwrap();
        assert_eq!(
            t.insert_sql("t_ut").unwrap(),
            "INSERT INTO `t_ut` (`id`, `amount`, `ok`, `at`, `name`)\nVALUES\n  (CAST(1 AS BIGINT), CAST(12.5 AS DECIMAL(10, 2)), TRUE, CAST(TIMESTAMP '2025-01-01 10:00:00' AS TIMESTAMP(3)), CAST('O''Neil' AS STRING)),\n  (CAST(2 AS BIGINT), CAST(NULL AS DECIMAL(10, 2)), FALSE, CAST(NULL AS TIMESTAMP(3)), CAST('x' AS STRING))"
        );
    }

    #[test]
    fn times_have_one_canonical_text() {
        assert_eq!(
            canonical_time("2025-01-01T10:00:00.500Z"),
            "2025-01-01 10:00:00.5"
        );
        assert_eq!(canonical_time("2025-01-01 10:00"), "2025-01-01 10:00:00");
        assert_eq!(canonical_time("2025-01-01"), "2025-01-01 00:00:00");
        assert_eq!(canonical_time("10:00:01.000"), "10:00:01");
        assert_eq!(
            class_of("timestamp(3) with local time zone"),
            TypeClass::TimestampLtz
        );
        assert_eq!(class_of("DECIMAL(10, 2)"), TypeClass::Decimal);
    }
}
