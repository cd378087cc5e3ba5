//! Data tests on live tables (`pipeline test-live`): `tests/live_tests.yaml` in a table's folder,
//! next to its unit tests, declares checks of the rows the deployed table holds now.
//!
//! ```yaml
//! # pipelines/facts/c360/fct_customer_orders/tests/live_tests.yaml
//! tests:
//!   - not_null: [customer_id, orders]          # no row has a NULL in these columns
//!   - unique: key                              # the upsert key (the table's PRIMARY KEY) …
//!   - unique: [customer_id, order_day]         # … or any column list
//!   - accepted_values: {column: status, values: [NEW, PAID, SHIPPED]}
//!   - row_count: {min: 1, max: 1000000}        # either bound may be left out
//!   - freshness: {column: updated_at, max_age: 15m}   # s, m, h, d; combined: 1h30m
//!   - name: no_negative_orders                 # any test may be named (default: kind and columns)
//!     sql: SELECT * FROM {table} WHERE orders < 0     # returns the failing rows; {table}: the table tested
//! ```
//!
//! Each item holds exactly one check and an optional `name` (unique in the file). Unknown keys,
//! two checks in one item, an empty column list and a bad `max_age` are errors naming the file and
//! the item's line ([`LiveTestError`]). Columns are checked against the snapshot's columns when the
//! test runs (an unknown column is an ERROR of that test, not a wrong pass). How each check is
//! evaluated is in [`check`].

pub mod check;

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file name in a table's `tests/` folder.
pub const FILE_NAME: &str = "live_tests.yaml";

/// Which rows `unique` looks at.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UniqueOn {
    /// The table's upsert key (its `PRIMARY KEY`); a table without one cannot use it.
    Key,
    Columns(Vec<String>),
}

/// One check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    NotNull {
        columns: Vec<String>,
    },
    Unique {
        on: UniqueOn,
    },
    AcceptedValues {
        column: String,
        /// As written; compared with the value's text (numbers as written in YAML).
        values: Vec<String>,
    },
    RowCount {
        min: Option<u64>,
        max: Option<u64>,
    },
    Freshness {
        column: String,
        /// The largest age allowed, in seconds.
        max_age_seconds: u64,
        /// As written (`15m`).
        max_age: String,
    },
    /// A query returning the failing rows (`{table}` replaced by the quoted name of the table tested).
    Sql {
        sql: String,
    },
}

impl Check {
    /// `not_null`, `unique`, `accepted_values`, `row_count`, `freshness`, `sql`.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::NotNull { .. } => "not_null",
            Check::Unique { .. } => "unique",
            Check::AcceptedValues { .. } => "accepted_values",
            Check::RowCount { .. } => "row_count",
            Check::Freshness { .. } => "freshness",
            Check::Sql { .. } => "sql",
        }
    }

    /// The name a test gets when the file gives none: `not_null_a_b`, `unique_key`,
    /// `accepted_values_status`, `row_count`, `freshness_updated_at`, `sql`.
    pub fn default_name(&self) -> String {
        match self {
            Check::NotNull { columns } => format!("not_null_{}", columns.join("_")),
            Check::Unique { on: UniqueOn::Key } => "unique_key".into(),
            Check::Unique {
                on: UniqueOn::Columns(c),
            } => format!("unique_{}", c.join("_")),
            Check::AcceptedValues { column, .. } => format!("accepted_values_{column}"),
            Check::RowCount { .. } => "row_count".into(),
            Check::Freshness { column, .. } => format!("freshness_{column}"),
            Check::Sql { .. } => "sql".into(),
        }
    }
}

/// One declared test.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LiveTest {
    /// Unique in its file.
    pub name: String,
    pub check: Check,
    /// 1-based line of the item in the file.
    pub line: usize,
}

/// A table's `live_tests.yaml`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LiveTests {
    /// The file, as given (for messages).
    pub file: PathBuf,
    pub tests: Vec<LiveTest>,
}

/// A `live_tests.yaml` that is not the documented shape.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {message}", file.display())]
pub struct LiveTestError {
    pub file: PathBuf,
    /// 1-based line (1 when the parser gave none).
    pub line: usize,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    tests: Vec<RawTest>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTest {
    name: Option<String>,
    not_null: Option<Vec<String>>,
    unique: Option<serde_yaml_ng::Value>,
    accepted_values: Option<RawAccepted>,
    row_count: Option<RawCount>,
    freshness: Option<RawFreshness>,
    sql: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccepted {
    column: String,
    values: Vec<serde_yaml_ng::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCount {
    min: Option<u64>,
    max: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFreshness {
    column: String,
    max_age: String,
}

impl LiveTests {
    /// Reads `path`.
    ///
    /// Errors: an unreadable file (line 1), or one that is not the documented shape (see the
    /// module doc), with its line.
    pub fn read(path: &Path) -> Result<LiveTests, LiveTestError> {
        let text = crate::fsutil::read_project_file(path).map_err(|e| LiveTestError {
            file: path.to_path_buf(),
            line: 1,
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses the text of `file` (see [`LiveTests::read`]).
    pub fn parse(file: &Path, text: &str) -> Result<LiveTests, LiveTestError> {
        let at = |line: usize, message: String| LiveTestError {
            file: file.to_path_buf(),
            line: line.max(1),
            message,
        };
        let text = text.trim_start_matches('\u{feff}');
        let raw: RawFile = if text.trim().is_empty() {
            RawFile { tests: Vec::new() }
        } else {
            serde_yaml_ng::from_str(text).map_err(|e| {
                let line = e.location().map_or(1, |l| l.line());
                let mut message = e.to_string();
                if let Some(i) = message.find(" at line ") {
                    message.truncate(i);
                }
                at(line, format!("not a live-tests file: {message}"))
            })?
        };
        let lines = item_lines(text, raw.tests.len());
        let mut tests: Vec<LiveTest> = Vec::new();
        for (i, t) in raw.tests.into_iter().enumerate() {
            let line = lines[i];
            let mut checks = Vec::new();
            let columns = |c: Vec<String>, what: &str| -> Result<Vec<String>, LiveTestError> {
                if c.is_empty() || c.iter().any(|x| x.trim().is_empty()) {
                    return Err(at(line, format!("{what}: give at least one column name")));
                }
                Ok(c)
            };
            if let Some(c) = t.not_null {
                checks.push(Check::NotNull {
                    columns: columns(c, "not_null")?,
                });
            }
            if let Some(u) = t.unique {
                let on = match u {
                    serde_yaml_ng::Value::String(s) if s == "key" => UniqueOn::Key,
                    serde_yaml_ng::Value::Sequence(items) => {
                        let mut c = Vec::new();
                        for item in items {
                            match item {
                                serde_yaml_ng::Value::String(s) => c.push(s),
                                other => {
                                    return Err(at(
                                        line,
                                        format!("unique: a column name is text, not {other:?}"),
                                    ));
                                }
                            }
                        }
                        UniqueOn::Columns(columns(c, "unique")?)
                    }
                    _ => {
                        return Err(at(
                            line,
                            "unique: give `key` (the upsert key) or a list of columns".into(),
                        ));
                    }
                };
                checks.push(Check::Unique { on });
            }
            if let Some(a) = t.accepted_values {
                if a.values.is_empty() {
                    return Err(at(line, "accepted_values: give at least one value".into()));
                }
                let mut values = Vec::new();
                for v in a.values {
                    values.push(match v {
                        serde_yaml_ng::Value::String(s) => s,
                        serde_yaml_ng::Value::Number(n) => n.to_string(),
                        serde_yaml_ng::Value::Bool(b) => b.to_string(),
                        other => {
                            return Err(at(
                                line,
                                format!("accepted_values: a value is text, a number or a boolean, not {other:?}"),
                            ));
                        }
                    });
                }
                checks.push(Check::AcceptedValues {
                    column: columns(vec![a.column], "accepted_values")?.remove(0),
                    values,
                });
            }
            if let Some(r) = t.row_count {
                if r.min.is_none() && r.max.is_none() {
                    return Err(at(line, "row_count: give min, max or both".into()));
                }
                if let (Some(a), Some(b)) = (r.min, r.max)
                    && a > b
                {
                    return Err(at(line, format!("row_count: min {a} is above max {b}")));
                }
                checks.push(Check::RowCount {
                    min: r.min,
                    max: r.max,
                });
            }
            if let Some(f) = t.freshness {
                let secs = parse_age(&f.max_age).ok_or_else(|| {
                    at(
                        line,
                        format!(
                            "freshness: max_age '{}' is not a duration (`90s`, `15m`, `1h30m`, `2d`)",
                            f.max_age
                        ),
                    )
                })?;
                checks.push(Check::Freshness {
                    column: columns(vec![f.column], "freshness")?.remove(0),
                    max_age_seconds: secs,
                    max_age: f.max_age,
                });
            }
            if let Some(sql) = t.sql {
                if sql.trim().is_empty() {
                    return Err(at(line, "sql: the query is empty".into()));
                }
                checks.push(Check::Sql { sql });
            }
            let check = match checks.len() {
                1 => checks.remove(0),
                0 => {
                    return Err(at(
                        line,
                        "a test needs one of not_null, unique, accepted_values, row_count, freshness, sql".into(),
                    ));
                }
                _ => {
                    let kinds: Vec<&str> = checks.iter().map(Check::kind).collect();
                    return Err(at(
                        line,
                        format!(
                            "one check per test ({} given): make them separate items",
                            kinds.join(", ")
                        ),
                    ));
                }
            };
            let name = t.name.unwrap_or_else(|| check.default_name());
            if let Some(first) = tests.iter().find(|x| x.name == name) {
                return Err(at(
                    line,
                    format!(
                        "test '{name}' is defined twice (first at line {}); give one a `name`",
                        first.line
                    ),
                ));
            }
            tests.push(LiveTest { name, check, line });
        }
        Ok(LiveTests {
            file: file.to_path_buf(),
            tests,
        })
    }
}

/// The 1-based line of each of the `count` items of the top-level `tests:` sequence (block style:
/// the lines starting with `- ` at the indentation of the first item); the `tests:` line for those
/// it cannot place (flow style).
fn item_lines(text: &str, count: usize) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_end().starts_with("tests:"))
        .unwrap_or(0);
    let mut out = Vec::new();
    let mut indent: Option<usize> = None;
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        let trimmed = l.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let ind = l.len() - trimmed.len();
        // Another top-level key ends the sequence (items may sit at indentation 0).
        if ind == 0 && !trimmed.starts_with('-') {
            break;
        }
        if trimmed == "-" || trimmed.starts_with("- ") {
            match indent {
                None => indent = Some(ind),
                Some(x) if x != ind => continue,
                _ => {}
            }
            out.push(i + 1);
        }
    }
    out.resize(count.max(out.len()), start + 1);
    out
}

/// Seconds of a duration written `90s`, `15m`, `2h`, `1d`, or combined (`1h30m`); `None` otherwise.
pub fn parse_age(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return None,
        };
        if digits.is_empty() {
            return None;
        }
        total = total.checked_add(digits.parse::<u64>().ok()?.checked_mul(unit)?)?;
        digits.clear();
    }
    if !digits.is_empty() {
        return None;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LiveTests, LiveTestError> {
        LiveTests::parse(Path::new("t/tests/live_tests.yaml"), text)
    }

    #[test]
    fn every_kind_parses_with_its_line_and_default_name() {
        let t = parse(
            "# header\ntests:\n  - not_null: [a, b]\n  - unique: key\n  - unique: [a]\n  - accepted_values: {column: s, values: [X, 2, true]}\n  - row_count:\n      min: 1\n  - freshness: {column: ts, max_age: 1h30m}\n  - name: neg\n    sql: SELECT * FROM {table} WHERE a < 0\n",
        )
        .unwrap();
        let got: Vec<(&str, usize)> = t.tests.iter().map(|x| (x.name.as_str(), x.line)).collect();
        assert_eq!(
            got,
            [
                ("not_null_a_b", 3),
                ("unique_key", 4),
                ("unique_a", 5),
                ("accepted_values_s", 6),
                ("row_count", 7),
                ("freshness_ts", 9),
                ("neg", 10)
            ]
        );
        assert_eq!(
            t.tests[3].check,
            Check::AcceptedValues {
                column: "s".into(),
                values: vec!["X".into(), "2".into(), "true".into()]
            }
        );
        assert_eq!(
            t.tests[5].check,
            Check::Freshness {
                column: "ts".into(),
                max_age_seconds: 5400,
                max_age: "1h30m".into()
            }
        );
    }

    #[test]
    fn bad_items_name_the_file_and_line() {
        let cases = [
            (
                "tests:\n  - not_null: [a]\n  - not_null: [b]\n    unique: key\n",
                "t/tests/live_tests.yaml:3: one check per test (not_null, unique given): make them separate items",
            ),
            (
                "tests:\n  - name: x\n",
                "t/tests/live_tests.yaml:2: a test needs one of not_null, unique, accepted_values, row_count, freshness, sql",
            ),
            (
                "tests:\n  - row_count: {min: 1}\n  - freshness: {column: ts, max_age: 15 minutes}\n",
                "t/tests/live_tests.yaml:3: freshness: max_age '15 minutes' is not a duration (`90s`, `15m`, `1h30m`, `2d`)",
            ),
            (
                "tests:\n  - not_null: []\n",
                "t/tests/live_tests.yaml:2: not_null: give at least one column name",
            ),
            (
                "tests:\n  - unique: primary\n",
                "t/tests/live_tests.yaml:2: unique: give `key` (the upsert key) or a list of columns",
            ),
            (
                "tests:\n  - row_count: {min: 5, max: 1}\n",
                "t/tests/live_tests.yaml:2: row_count: min 5 is above max 1",
            ),
            (
                "tests:\n  - row_count: {min: 1}\n  - row_count: {max: 9}\n",
                "t/tests/live_tests.yaml:3: test 'row_count' is defined twice (first at line 2); give one a `name`",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).unwrap_err().to_string(), want, "{text}");
        }
        let e = parse("tests:\n  - not_nul: [a]\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("unknown field `not_nul`"), "{e}");
    }

    #[test]
    fn ages() {
        assert_eq!(parse_age("90s"), Some(90));
        assert_eq!(parse_age("15m"), Some(900));
        assert_eq!(parse_age("1h30m"), Some(5400));
        assert_eq!(parse_age("2d"), Some(172_800));
        for bad in ["", "15", "m", "1w", "1.5h", "-1m"] {
            assert_eq!(parse_age(bad), None, "{bad}");
        }
    }
}
