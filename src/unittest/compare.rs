//! Expected rows against the folded snapshot of an output (a stateful statement's output is a
//! changelog even on append-only inputs, Flink's dynamic tables:
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/dynamic_tables/>):
//! order-insensitive (a multiset match), typed by the result's column types — integers and
//! doubles as numbers, decimals by value (`12.50` = `12.5`), timestamps by instant text (`T` or space,
//! trailing zeros of the fraction ignored), NULL only equal to NULL, text exactly.
//!
//! The expected file may name a subset of the columns (volatile ones can be left out); only those are
//! compared. Differences are reported as rows missing from the output, rows the output has in excess,
//! and — when the output has a primary key that the expected file names — rows of the same key with
//! other values, shown side by side.

use super::data::{Cell, CsvData, TypeClass, canonical_time, class_of};
use crate::results::{Column, Row, value::same_decimal};
use serde::Serialize;
use serde_json::Value;

/// How many differences a result keeps (the rest are counted).
pub const MAX_DIFFERENCES: usize = 5;

/// One difference between the expected rows and the output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// An expected row the output does not hold (`line` of the expected file).
    Missing { line: usize, row: Vec<Field> },
    /// A row the output holds that no expected row matches.
    Unexpected { row: Vec<Field> },
    /// Same key, other values.
    Changed {
        line: usize,
        key: Vec<Field>,
        expected: Vec<Field>,
        actual: Vec<Field>,
    },
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Missing { line, row } => {
                write!(f, "missing (expected line {line}): {}", show(row))
            }
            Difference::Unexpected { row } => write!(f, "unexpected: {}", show(row)),
            Difference::Changed {
                line,
                key,
                expected,
                actual,
            } => write!(
                f,
                "key {}: expected {} (line {line}), got {}",
                show(key),
                show(expected),
                show(actual)
            ),
        }
    }
}

/// A value of a difference: its column, the column's type, the typed value (a DECIMAL as its exact
/// text at the declared scale, `35.00`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Field {
    pub column: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub value: Value,
}

/// `{col=1, price=35.00, note='x', gone=NULL}`: text quoted, numbers (a DECIMAL with its declared
/// scale) bare.
fn show(row: &[Field]) -> String {
    let cells: Vec<String> = row
        .iter()
        .map(|f| {
            let k = &f.column;
            match &f.value {
                Value::String(s) if class_of(&f.type_name) == TypeClass::Decimal => {
                    format!("{k}={s}")
                }
                Value::String(s) => format!("{k}='{s}'"),
                Value::Null => format!("{k}=NULL"),
                other => format!("{k}={other}"),
            }
        })
        .collect();
    format!("{{{}}}", cells.join(", "))
}

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub passed: bool,
    pub expected_rows: usize,
    pub actual_rows: usize,
    /// The first [`MAX_DIFFERENCES`] differences.
    pub differences: Vec<Difference>,
    /// All differences, counted.
    pub difference_count: usize,
}

/// Whether an expected cell equals an actual value of a column of type `ty` (see module docs).
pub fn cell_equals(cell: &Cell, actual: &Value, ty: &str) -> bool {
    let Some(text) = cell.text() else {
        return actual.is_null();
    };
    if actual.is_null() {
        return false;
    }
    let actual_text = match actual {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = text.trim();
    match class_of(ty) {
        TypeClass::Integer => {
            text.parse::<i128>().ok().is_some()
                && text.parse::<i128>().ok() == actual_text.trim().parse::<i128>().ok()
        }
        TypeClass::Float => match (text.parse::<f64>(), actual_text.trim().parse::<f64>()) {
            (Ok(a), Ok(b)) => a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
            _ => false,
        },
        TypeClass::Decimal => same_decimal(text, &actual_text),
        TypeClass::Boolean => text.eq_ignore_ascii_case(actual_text.trim()),
        TypeClass::Date | TypeClass::Time | TypeClass::Timestamp | TypeClass::TimestampLtz => {
            canonical_time(text) == canonical_time(&actual_text)
        }
        TypeClass::Text | TypeClass::Binary => match cell {
            Cell::Quoted(s) | Cell::Bare(s) => *s == actual_text,
            Cell::Null => false,
        },
        TypeClass::Nested => match serde_json::from_str::<Value>(text) {
            Ok(v) => v == *actual,
            Err(_) => text == actual_text,
        },
    }
}

/// A cell as a JSON value for reports (typed as the column says when it reads so).
fn cell_value(cell: &Cell, ty: &str) -> Value {
    match cell.text() {
        None => Value::Null,
        Some(t) => crate::results::value::typed(&Value::String(t.to_string()), ty),
    }
}

/// Compares `expected` with the snapshot rows `actual` of a result with `columns`. `key`: the output's
/// primary key (for pairing rows of the same key).
///
/// An output without rows whose columns are unknown (`columns` empty: a read that ended before the
/// schema came, for a table whose columns are not declared) holds no value of any column: the
/// expected file's columns are taken as its own, so "no rows expected" passes and expected rows are
/// missing, whatever the read returned first.
///
/// Errors: an expected column the result does not have (the message names it and the file).
pub fn compare(
    expected: &CsvData,
    columns: &[Column],
    actual: &[Row],
    key: &[String],
) -> Result<Comparison, super::UnitTestError> {
    let untyped: Vec<Column>;
    let columns = if columns.is_empty() && actual.is_empty() {
        untyped = expected
            .columns
            .iter()
            .map(|name| Column {
                name: name.clone(),
                type_name: "STRING".into(),
            })
            .collect();
        &untyped[..]
    } else {
        columns
    };
    let mut pos = Vec::new();
    for name in &expected.columns {
        let Some(i) = columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
        else {
            let have: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            return Err(super::UnitTestError::at(
                &expected.file,
                expected.header_line,
                format!(
                    "column '{name}' is not in the output (its columns: {})",
                    have.join(", ")
                ),
            ));
        };
        pos.push(i);
    }
    let row_equals = |e: &[Cell], a: &Row| {
        e.iter().zip(&pos).all(|(cell, &i)| {
            cell_equals(
                cell,
                a.get(i).unwrap_or(&Value::Null),
                &columns[i].type_name,
            )
        })
    };
    let mut used = vec![false; actual.len()];
    let mut missing: Vec<usize> = Vec::new();
    for (ei, e) in expected.rows.iter().enumerate() {
        match (0..actual.len()).find(|&ai| !used[ai] && row_equals(&e.cells, &actual[ai])) {
            Some(ai) => used[ai] = true,
            None => missing.push(ei),
        }
    }
    let mut unexpected: Vec<usize> = (0..actual.len()).filter(|&i| !used[i]).collect();
    let named = |i: usize, v: Value| Field {
        column: columns[i].name.clone(),
        type_name: columns[i].type_name.clone(),
        value: v,
    };
    let actual_row = |a: &Row| -> Vec<Field> {
        pos.iter()
            .map(|&i| {
                let v = a.get(i).unwrap_or(&Value::Null);
                named(i, crate::results::value::typed(v, &columns[i].type_name))
            })
            .collect()
    };
    let expected_row = |ei: usize| -> Vec<Field> {
        expected.rows[ei]
            .cells
            .iter()
            .zip(&pos)
            .map(|(c, &i)| named(i, cell_value(c, &columns[i].type_name)))
            .collect()
    };
    // Key columns that the expected file names: pair missing and unexpected rows of one key.
    let key_at: Vec<(usize, usize)> = key
        .iter()
        .filter_map(|k| {
            let ci = expected
                .columns
                .iter()
                .position(|c| c.eq_ignore_ascii_case(k))?;
            Some((ci, pos[ci]))
        })
        .collect();
    let mut differences = Vec::new();
    for ei in missing {
        let e = &expected.rows[ei];
        let paired = (!key_at.is_empty() && key_at.len() == key.len())
            .then(|| {
                unexpected.iter().position(|&ai| {
                    key_at.iter().all(|&(ci, i)| {
                        cell_equals(
                            &e.cells[ci],
                            actual[ai].get(i).unwrap_or(&Value::Null),
                            &columns[i].type_name,
                        )
                    })
                })
            })
            .flatten();
        match paired {
            Some(p) => {
                let ai = unexpected.remove(p);
                differences.push(Difference::Changed {
                    line: e.line,
                    key: key_at
                        .iter()
                        .map(|&(ci, i)| named(i, cell_value(&e.cells[ci], &columns[i].type_name)))
                        .collect(),
                    expected: expected_row(ei),
                    actual: actual_row(&actual[ai]),
                });
            }
            None => differences.push(Difference::Missing {
                line: e.line,
                row: expected_row(ei),
            }),
        }
    }
    for ai in unexpected {
        differences.push(Difference::Unexpected {
            row: actual_row(&actual[ai]),
        });
    }
    let count = differences.len();
    differences.truncate(MAX_DIFFERENCES);
    Ok(Comparison {
        passed: count == 0,
        expected_rows: expected.rows.len(),
        actual_rows: actual.len(),
        differences,
        difference_count: count,
    })
}

/// The rows of an output as CSV lines of `header` (the columns of an expected file, in its order),
/// the header first: what to paste into the expected file once checked. Each value is written so that
/// [`super::data::read_csv`] reads it back as the same typed value: NULL as `NULL`, a text that is
/// empty, `NULL`, or starts with `'` or `#` as a `'…'` SQL literal, timestamps with a space between
/// date and time, nested values as their JSON text; the CSV quoting is the `csv` crate's. A header
/// column the output lacks gives `NULL` (the comparison names the column).
pub fn csv_lines(header: &[String], columns: &[Column], rows: &[Row]) -> Vec<String> {
    let pos: Vec<Option<usize>> = header
        .iter()
        .map(|h| columns.iter().position(|c| c.name.eq_ignore_ascii_case(h)))
        .collect();
    let line = |cells: Vec<String>| -> String {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(&cells).expect("writing to memory");
        let bytes = w.into_inner().expect("writing to memory");
        String::from_utf8_lossy(&bytes)
            .trim_end_matches('\n')
            .to_string()
    };
    let mut out = vec![line(header.to_vec())];
    for row in rows {
        let cells = pos
            .iter()
            .map(|p| match p {
                None => "NULL".to_string(),
                Some(i) => csv_cell(
                    row.get(*i).unwrap_or(&Value::Null),
                    class_of(&columns[*i].type_name),
                ),
            })
            .collect();
        out.push(line(cells));
    }
    out
}

/// One value as a cell [`super::data::read_csv`] reads back by the column's class.
fn csv_cell(v: &Value, class: TypeClass) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => match class {
            TypeClass::Timestamp | TypeClass::TimestampLtz => s.replacen('T', " ", 1),
            TypeClass::Text | TypeClass::Binary | TypeClass::Nested
                if s.is_empty()
                    || s.eq_ignore_ascii_case("null")
                    || s.starts_with('\'')
                    || s.starts_with('#') =>
            {
                format!("'{}'", s.replace('\'', "''"))
            }
            _ => s.clone(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unittest::data::read_csv;
    use serde_json::json;

    fn cols() -> Vec<Column> {
        [
            ("store_id", "INT"),
            ("revenue", "DECIMAL(14, 2)"),
            ("window_end", "TIMESTAMP(3)"),
            ("note", "STRING"),
        ]
        .iter()
        .map(|(n, t)| Column {
            name: n.to_string(),
            type_name: t.to_string(),
        })
        .collect()
    }

    #[test]
    fn typed_order_insensitive_match() {
        let e = read_csv(
            "store_id,revenue,window_end,note\n2,10.5,2025-01-01 10:01:00,\n1,7.00,2025-01-01T10:01,'x'\n",
            "e.csv",
        )
        .unwrap();
        let actual = vec![
            vec![json!(1), json!(7), json!("2025-01-01T10:01:00"), json!("x")],
            vec![
                json!(2),
                json!("10.50"),
                json!("2025-01-01T10:01:00.000"),
                Value::Null,
            ],
        ];
        let c = compare(&e, &cols(), &actual, &[]).unwrap();
        assert!(c.passed, "{:?}", c.differences);
        assert_eq!((c.expected_rows, c.actual_rows), (2, 2));
    }

    /// An empty output compares the same whether the read brought its columns or not: "no rows
    /// expected" passes, expected rows are missing, and a column the header names is only an error
    /// when the output's columns are known.
    #[test]
    fn an_empty_output_compares_the_same_with_or_without_its_columns() {
        for header in ["order_id", "order_id,amount", "store_id,revenue"] {
            let empty = read_csv(&format!("{header}\n"), "e.csv").unwrap();
            let one = read_csv(
                &format!(
                    "{header}\n{}\n",
                    header.replace(|c: char| c != ',', "").replace(',', "1,") + "1"
                ),
                "e.csv",
            )
            .unwrap();
            for columns in [vec![], cols()] {
                let known = !columns.is_empty();
                let named = header
                    .split(',')
                    .all(|h| columns.iter().any(|c| c.name == h));
                match compare(&empty, &columns, &[], &[]) {
                    Ok(c) => {
                        assert!(c.passed, "{header} {known}");
                        assert_eq!((c.expected_rows, c.actual_rows), (0, 0));
                    }
                    Err(e) => assert!(known && !named, "{header} {known}: {e}"),
                }
                if let Ok(c) = compare(&one, &columns, &[], &[]) {
                    assert!(!c.passed);
                    assert_eq!(c.difference_count, 1);
                }
            }
        }
    }

    #[test]
    fn differences_pair_rows_by_key() {
        let e = read_csv("store_id,revenue\n1,7.00\n3,1\n", "e.csv").unwrap();
        let actual = vec![
            vec![json!(1), json!(8), json!(null), json!(null)],
            vec![json!(4), json!(1), json!(null), json!(null)],
        ];
        let c = compare(&e, &cols(), &actual, &["store_id".into()]).unwrap();
        assert!(!c.passed);
        let text: Vec<String> = c.differences.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            text,
            [
                "key {store_id=1}: expected {store_id=1, revenue=7.00} (line 2), got {store_id=1, revenue=8.00}",
                "missing (expected line 3): {store_id=3, revenue=1.00}",
                "unexpected: {store_id=4, revenue=1.00}",
            ]
        );
        let e = read_csv("nope\n1\n", "e.csv").unwrap();
        assert!(
            compare(&e, &cols(), &actual, &[])
                .unwrap_err()
                .to_string()
                .starts_with("e.csv:1: column 'nope' is not in the output")
        );
    }

    #[test]
    fn decimals_compare_by_value_and_print_with_the_declared_scale() {
        let e = read_csv("store_id,revenue\n1,35.00\n2,12.5\n", "e.csv").unwrap();
        let actual = vec![
            vec![json!(1), json!(35), json!(null), json!(null)],
            vec![json!(2), json!("12.40"), json!(null), json!(null)],
        ];
        let c = compare(&e, &cols(), &actual, &["store_id".into()]).unwrap();
        let text: Vec<String> = c.differences.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            text,
            [
                "key {store_id=2}: expected {store_id=2, revenue=12.50} (line 3), got {store_id=2, revenue=12.40}"
            ]
        );
        assert!(cell_equals(
            &Cell::Bare("35.00".into()),
            &json!("35"),
            "DECIMAL(14, 2)"
        ));
    }

    #[test]
    fn nulls_and_duplicates_count() {
        let e = read_csv("store_id\n1\n1\n", "e.csv").unwrap();
        let one = vec![vec![json!(1), json!(0), json!(null), json!(null)]];
        assert!(!compare(&e, &cols(), &one, &[]).unwrap().passed);
        assert!(cell_equals(&Cell::Null, &Value::Null, "INT"));
        assert!(!cell_equals(&Cell::Bare("0".into()), &Value::Null, "INT"));
        assert!(!cell_equals(&Cell::Null, &json!(""), "STRING"));
    }
}
