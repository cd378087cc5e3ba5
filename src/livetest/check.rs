//! Evaluating a live test on a snapshot ([`evaluate`]), in Rust, with no engine involved: the caller
//! reads the snapshot (`pipeline test-live`, [`crate::ops::live_tests`]).
//!
//! - `not_null`: failing rows are those with a NULL in any listed column;
//! - `unique`: rows sharing the listed columns' values (or the upsert key's) with another row, all
//!   of them; `unique: key` is evaluated on a snapshot folded by the result's own changelog (its
//!   upsert key, else whole rows), not by the declared key, so that an append-only table holding
//!   two rows of one key shows both;
//! - `accepted_values`: rows whose value is not in the list (NULL passes: combine with `not_null`);
//!   values compare as text, numbers numerically (`2` = `2.0`);
//! - `row_count`: the snapshot's row count against `min`/`max`;
//! - `freshness`: the newest value of the column (a timestamp, read as UTC when it has no zone)
//!   is at most `max_age` old; no value at all fails;
//! - `sql`: every row the query returned is a failing row.
//!
//! A read cut by idleness or the timeout is a partial snapshot: a failure found in it is a FAIL
//! (the failing rows exist), but a pass proves nothing and is an ERROR, as are a count below `min`
//! and a stale freshness, which unread rows could change.

use super::{Check, UniqueOn};
use crate::results::{Column, Row};
use crate::unittest::run::Verdict;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a check found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Evaluation {
    pub verdict: Verdict,
    /// One line: what passed or failed (`2 row(s) with NULL in customer_id`).
    pub message: String,
    /// The failing rows found in all.
    pub failing_count: usize,
    /// Up to the requested number of failing rows, in snapshot order.
    pub failing_rows: Vec<Row>,
}

/// Evaluates `check` on a snapshot (`columns`, `rows`; `complete`: the read reached the table's
/// end). `key` is the table's upsert key (for `unique: key`), `now` seconds since the epoch (for
/// `freshness`), `max_rows` the failing rows kept.
pub fn evaluate(
    check: &Check,
    columns: &[Column],
    rows: &[Row],
    complete: bool,
    key: &[String],
    now: f64,
    max_rows: usize,
) -> Evaluation {
    let snap = Snapshot {
        columns,
        rows,
        complete,
        max_rows,
    };
    let e = match check {
        Check::NotNull { columns: names } => snap.not_null(names),
        Check::Unique { on } => match on {
            UniqueOn::Key if key.is_empty() => {
                return error(
                    "unique: key: the table declares no PRIMARY KEY; list the columns".into(),
                );
            }
            UniqueOn::Key => snap.unique(key),
            UniqueOn::Columns(c) => snap.unique(c),
        },
        Check::AcceptedValues { column, values } => snap.accepted_values(column, values),
        Check::RowCount { min, max } => snap.row_count(*min, *max),
        Check::Freshness {
            column,
            max_age_seconds,
            max_age,
        } => snap.freshness(column, *max_age_seconds, max_age, now),
        Check::Sql { .. } => rows_found(
            rows.iter().collect(),
            max_rows,
            "returned by the query".into(),
            "the query returned no row".into(),
        ),
    };
    if e.verdict == Verdict::Pass && !complete {
        return error(format!(
            "{}, but the read stopped before the table's end (idle or timeout): a partial snapshot proves nothing{}",
            e.message,
            if matches!(check, Check::Sql { .. }) {
                " (a `sql:` check reads every Kafka table of the project to its current end; a table it hints itself, or reads as a window TVF's `TABLE t` argument, is read as written: bound it with /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ after its name, or raise --timeout)"
            } else {
                ""
            }
        ));
    }
    e
}

/// The snapshot a check reads.
struct Snapshot<'a> {
    columns: &'a [Column],
    rows: &'a [Row],
    /// The read reached the table's end.
    complete: bool,
    /// Failing rows kept.
    max_rows: usize,
}

impl Snapshot<'_> {
    /// The index of column `name` (any case). Errors: an [`Evaluation`] naming the columns there are.
    fn col(&self, name: &str) -> Result<usize, Evaluation> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                error(format!(
                    "column {name} is not a column of the result ({})",
                    self.columns
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
    }

    fn cols(&self, names: &[String]) -> Result<Vec<usize>, Evaluation> {
        names.iter().map(|n| self.col(n)).collect()
    }

    /// `not_null`: rows with a NULL in any of `names`.
    fn not_null(&self, names: &[String]) -> Evaluation {
        let idx = match self.cols(names) {
            Ok(idx) => idx,
            Err(e) => return e,
        };
        let failing: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| idx.iter().any(|&i| value(r, i).is_null()))
            .collect();
        rows_found(
            failing,
            self.max_rows,
            format!("NULL in {}", names.join(" or ")),
            format!("no NULL in {} ({} rows)", names.join(", "), self.rows.len()),
        )
    }

    /// `unique`: rows sharing their values of `names` with another row.
    fn unique(&self, names: &[String]) -> Evaluation {
        let idx = match self.cols(names) {
            Ok(idx) => idx,
            Err(e) => return e,
        };
        let mut groups: BTreeMap<String, usize> = BTreeMap::new();
        let key_of = |r: &Row| -> String {
            serde_json::to_string(&idx.iter().map(|&i| value(r, i)).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        for r in self.rows {
            *groups.entry(key_of(r)).or_default() += 1;
        }
        let dup_keys = groups.values().filter(|&&n| n > 1).count();
        let failing: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| groups[&key_of(r)] > 1)
            .collect();
        let mut e = rows_found(
            failing,
            self.max_rows,
            format!("sharing a value of ({})", names.join(", ")),
            format!(
                "({}) unique over {} rows",
                names.join(", "),
                self.rows.len()
            ),
        );
        if e.verdict == Verdict::Fail {
            e.message
                .push_str(&format!(" ({dup_keys} duplicated value(s))"));
        }
        e
    }

    /// `accepted_values`: rows whose `column` is neither NULL nor one of `values`.
    fn accepted_values(&self, column: &str, values: &[String]) -> Evaluation {
        let i = match self.col(column) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let failing: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| {
                let v = value(r, i);
                !v.is_null() && !values.iter().any(|a| accepted(&v, a))
            })
            .collect();
        rows_found(
            failing,
            self.max_rows,
            format!("{column} not in [{}]", values.join(", ")),
            format!("every {column} in [{}]", values.join(", ")),
        )
    }

    /// `row_count`: the number of rows within `min..=max`; too few in a partial snapshot is an error,
    /// not a failure (more rows may come).
    fn row_count(&self, min: Option<u64>, max: Option<u64>) -> Evaluation {
        let n = self.rows.len() as u64;
        let bounds = match (min, max) {
            (Some(a), Some(b)) => format!("between {a} and {b}"),
            (Some(a), None) => format!("at least {a}"),
            (None, Some(b)) => format!("at most {b}"),
            (None, None) => "any".into(),
        };
        if max.is_some_and(|m| n > m) {
            fail(format!("{n} rows, expected {bounds}"), 0, Vec::new())
        } else if min.is_some_and(|m| n < m) {
            if self.complete {
                fail(format!("{n} rows, expected {bounds}"), 0, Vec::new())
            } else {
                error(format!(
                    "{n} rows read before the read stopped, expected {bounds}: a partial snapshot"
                ))
            }
        } else {
            pass(format!("{n} rows, expected {bounds}"))
        }
    }

    /// `freshness`: the newest timestamp of `column` is at most `max_age_seconds` older than `now`
    /// (`max_age`: as the user wrote it).
    fn freshness(&self, column: &str, max_age_seconds: u64, max_age: &str, now: f64) -> Evaluation {
        let i = match self.col(column) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let newest = self
            .rows
            .iter()
            .filter_map(|r| {
                let v = value(r, i);
                let s = v.as_str()?.to_string();
                crate::time::epoch_seconds(&s).map(|t| (t, s))
            })
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        let Some((t, text)) = newest else {
            return fail(
                format!("no timestamp in {column} ({} rows)", self.rows.len()),
                0,
                Vec::new(),
            );
        };
        let age = (now - t).max(0.0);
        let line = format!(
            "newest {column} {text} is {} old (max {max_age})",
            age_text(age)
        );
        if age <= max_age_seconds as f64 {
            pass(line)
        } else if self.complete {
            fail(line, 0, Vec::new())
        } else {
            error(format!("{line}, in a partial snapshot"))
        }
    }
}

/// The value of column `i` of `r` (NULL past its end).
fn value(r: &Row, i: usize) -> Value {
    r.get(i).cloned().unwrap_or(Value::Null)
}

fn accepted(v: &Value, a: &str) -> bool {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text == a {
        return true;
    }
    match (text.trim().parse::<f64>(), a.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn rows_found(failing: Vec<&Row>, max_rows: usize, what: String, ok: String) -> Evaluation {
    if failing.is_empty() {
        return pass(ok);
    }
    let n = failing.len();
    fail(
        format!("{n} row(s) {what}"),
        n,
        failing.into_iter().take(max_rows).cloned().collect(),
    )
}

fn pass(message: String) -> Evaluation {
    Evaluation {
        verdict: Verdict::Pass,
        message,
        failing_count: 0,
        failing_rows: Vec::new(),
    }
}

fn fail(message: String, failing_count: usize, failing_rows: Vec<Row>) -> Evaluation {
    Evaluation {
        verdict: Verdict::Fail,
        message,
        failing_count,
        failing_rows,
    }
}

fn error(message: String) -> Evaluation {
    Evaluation {
        verdict: Verdict::Error,
        message,
        failing_count: 0,
        failing_rows: Vec::new(),
    }
}

/// `3h02m`, `15m00s`, `42s`.
fn age_text(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// A row as `a=1, b=NULL, c=x` in column order, for reports and JUnit.
pub fn row_text(columns: &[Column], row: &Row) -> String {
    columns
        .iter()
        .zip(row.iter().chain(std::iter::repeat(&Value::Null)))
        .map(|(c, v)| {
            let v = match v {
                Value::Null => "NULL".to_string(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{}={v}", c.name)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cols(names: &[&str]) -> Vec<Column> {
        names
            .iter()
            .map(|n| Column {
                name: n.to_string(),
                type_name: "STRING".into(),
            })
            .collect()
    }

    fn rows(v: Value) -> Vec<Row> {
        serde_json::from_value(v).unwrap()
    }

    fn run(check: Check, r: &[Row], complete: bool) -> Evaluation {
        evaluate(
            &check,
            &cols(&["id", "status", "ts"]),
            r,
            complete,
            &["id".to_string()],
            crate::time::epoch_seconds("2026-12-01T10:00:00Z").unwrap(),
            1,
        )
    }

    #[test]
    fn each_kind_passes_and_fails() {
        let good = rows(json!([
            [1, "NEW", "2026-12-01 09:50:00"],
            [2, "PAID", "2026-12-01 09:59:00"]
        ]));
        let bad = rows(json!([
            [1, null, "2026-12-01 08:00:00"],
            [1, "LOST", "2026-12-01 07:00:00"],
            [3, "2", null]
        ]));
        let checks = [
            Check::NotNull {
                columns: vec!["status".into()],
            },
            Check::Unique { on: UniqueOn::Key },
            Check::AcceptedValues {
                column: "status".into(),
                values: vec!["NEW".into(), "PAID".into(), "2.0".into()],
            },
            Check::RowCount {
                min: Some(1),
                max: Some(2),
            },
            Check::Freshness {
                column: "ts".into(),
                max_age_seconds: 900,
                max_age: "15m".into(),
            },
            Check::Sql { sql: "x".into() },
        ];
        let want_bad = [
            ("1 row(s) NULL in status", 1),
            (
                "2 row(s) sharing a value of (id) (1 duplicated value(s))",
                2,
            ),
            ("1 row(s) status not in [NEW, PAID, 2.0]", 1),
            ("3 rows, expected between 1 and 2", 0),
            ("newest ts 2026-12-01 08:00:00 is 2h00m old (max 15m)", 0),
            ("3 row(s) returned by the query", 3),
        ];
        for (c, (msg, n)) in checks.iter().zip(want_bad) {
            let sql = matches!(c, Check::Sql { .. });
            let p = run(c.clone(), if sql { &[] } else { &good }, true);
            assert_eq!(p.verdict, Verdict::Pass, "{c:?}: {p:?}");
            let f = run(c.clone(), &bad, true);
            assert_eq!(
                (f.verdict, f.message.as_str(), f.failing_count),
                (Verdict::Fail, msg, n),
                "{c:?}"
            );
            assert!(f.failing_rows.len() <= 1, "max rows kept");
        }
        assert_eq!(
            run(checks[2].clone(), &bad, true).failing_rows,
            rows(json!([[1, "LOST", "2026-12-01 07:00:00"]]))
        );
    }

    #[test]
    fn a_partial_read_never_passes_and_unknown_columns_are_errors() {
        let good = rows(json!([[1, "NEW", "2026-12-01 09:59:00"]]));
        let c = Check::NotNull {
            columns: vec!["status".into()],
        };
        assert_eq!(run(c, &good, false).verdict, Verdict::Error);
        let c = Check::RowCount {
            min: Some(5),
            max: None,
        };
        assert_eq!(run(c.clone(), &good, false).verdict, Verdict::Error);
        assert_eq!(run(c, &good, true).verdict, Verdict::Fail);
        let e = run(
            Check::NotNull {
                columns: vec!["nope".into()],
            },
            &good,
            true,
        );
        assert_eq!(
            (e.verdict, e.message.as_str()),
            (
                Verdict::Error,
                "column nope is not a column of the result (id, status, ts)"
            )
        );
        let e = evaluate(
            &Check::Unique { on: UniqueOn::Key },
            &cols(&["id"]),
            &good,
            true,
            &[],
            0.0,
            5,
        );
        assert_eq!(e.verdict, Verdict::Error);
    }

    #[test]
    fn rows_render_in_column_order() {
        assert_eq!(
            row_text(&cols(&["id", "status", "ts"]), &rows(json!([[1, null]]))[0]),
            "id=1, status=NULL, ts=NULL"
        );
    }
}
