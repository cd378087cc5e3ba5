//! `tests/test_definitions.yaml`, shift_left's shape (`core/models/flink_test_model.py`):
//!
//! ```yaml
//! foundations:
//!   - table_name: src_x                 # a table the DML reads
//!     ddl_for_test: ./tests/ddl_src_x.sql
//! test_suite:
//!   - name: test_x_1
//!     inputs:
//!       - table_name: src_x
//!         file_name: ./tests/insert_src_x_1.sql   # or .csv
//!         file_type: sql                          # sql | csv
//!     outputs:
//!       - table_name: x
//!         file_name: ./tests/validate_x_1.sql     # a validation SQL (sql) or expected rows (csv)
//!         file_type: sql
//! ```
//!
//! File names are relative to the table folder (shift_left joins them to it). Unknown keys are errors
//! (shift_left's older `sql_file_name` shape is reported as such). Every entry keeps the line it was
//! read from, so later checks (an input for a table the DML does not read) point into the file.

use super::UnitTestError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name shift_left reads in a table's `tests/` folder.
pub const FILE_NAME: &str = "test_definitions.yaml";

/// How a test file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileType {
    /// SQL: `INSERT INTO <t>_ut …` statements (inputs) or a validation query returning PASS/FAIL
    /// (outputs).
    Sql,
    /// CSV rows with a header of column names: input rows, or the rows an output must hold at the end.
    Csv,
}

/// A table the DML under test reads, created for the test from `ddl_for_test`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foundation {
    pub table_name: String,
    /// As written (`./tests/ddl_src_x.sql`), relative to the table folder.
    pub ddl_for_test: String,
    /// 1-based line of the entry.
    pub line: usize,
}

/// One input or output file of a test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestData {
    pub table_name: String,
    /// As written, relative to the table folder.
    pub file_name: String,
    pub file_type: FileType,
    /// 1-based line of the entry.
    pub line: usize,
}

/// One test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub name: String,
    pub inputs: Vec<TestData>,
    pub outputs: Vec<TestData>,
    /// 1-based line of the entry.
    pub line: usize,
}

/// A whole `test_definitions.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestDefinitions {
    /// The file, relative (`pipelines/…/tests/test_definitions.yaml`), for messages.
    pub file: String,
    pub foundations: Vec<Foundation>,
    pub test_suite: Vec<TestCase>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawDefinitions {
    #[serde(default)]
    foundations: Vec<RawFoundation>,
    test_suite: Vec<RawCase>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawFoundation {
    table_name: String,
    ddl_for_test: String,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    #[serde(default)]
    inputs: Vec<RawData>,
    #[serde(default)]
    outputs: Vec<RawData>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawData {
    table_name: String,
    file_name: String,
    file_type: FileType,
}

/// Finds the line of each `key: value` entry, occurrences taken in document order.
struct Lines {
    found: BTreeMap<(String, String), Vec<usize>>,
    used: BTreeMap<(String, String), usize>,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut found: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        for (i, l) in text.lines().enumerate() {
            let t = l.trim_start().trim_start_matches('-').trim();
            if let Some((k, v)) = t.split_once(':') {
                let v = v.trim().trim_matches(['"', '\'']).to_string();
                found
                    .entry((k.trim().to_string(), v))
                    .or_default()
                    .push(i + 1);
            }
        }
        Lines {
            found,
            used: BTreeMap::new(),
        }
    }

    fn next(&mut self, key: &str, value: &str) -> usize {
        let k = (key.to_string(), value.to_string());
        let n = self.used.entry(k.clone()).or_insert(0);
        let line = self
            .found
            .get(&k)
            .and_then(|v| v.get(*n).or(v.last()))
            .copied()
            .unwrap_or(1);
        *n += 1;
        line
    }
}

impl TestDefinitions {
    /// Parses the text of a `test_definitions.yaml`; `file` names it in errors.
    ///
    /// Errors: YAML that does not parse or does not have shift_left's shape (with the parser's line),
    /// an empty `test_suite`, two test cases with the same name, an entry with an empty name.
    pub fn parse(text: &str, file: &str) -> Result<TestDefinitions, UnitTestError> {
        let raw: RawDefinitions = serde_yaml_ng::from_str(text).map_err(|e| {
            let line = e.location().map(|l| l.line());
            let mut message = e.to_string();
            if let Some(i) = message.find(" at line ") {
                message.truncate(i);
            }
            if message.contains("sql_file_name") {
                message.push_str(
                    " (an older shift_left shape: write `file_name` and `file_type: sql|csv`)",
                );
            }
            UnitTestError::Input {
                file: file.to_string(),
                line,
                message: format!("not a test definition: {message}"),
            }
        })?;
        let mut lines = Lines::new(text);
        let foundations = raw
            .foundations
            .into_iter()
            .map(|f| Foundation {
                line: lines.next("table_name", &f.table_name),
                table_name: f.table_name,
                ddl_for_test: f.ddl_for_test,
            })
            .collect::<Vec<_>>();
        let mut test_suite = Vec::new();
        for c in raw.test_suite {
            let line = lines.next("name", &c.name);
            let data = |v: Vec<RawData>, lines: &mut Lines| -> Vec<TestData> {
                v.into_iter()
                    .map(|d| TestData {
                        line: lines.next("table_name", &d.table_name),
                        table_name: d.table_name,
                        file_name: d.file_name,
                        file_type: d.file_type,
                    })
                    .collect()
            };
            let inputs = data(c.inputs, &mut lines);
            let outputs = data(c.outputs, &mut lines);
            test_suite.push(TestCase {
                name: c.name,
                inputs,
                outputs,
                line,
            });
        }
        if test_suite.is_empty() {
            return Err(UnitTestError::in_file(file, "test_suite has no test case"));
        }
        for (i, c) in test_suite.iter().enumerate() {
            if c.name.trim().is_empty() {
                return Err(UnitTestError::at(file, c.line, "a test case has no name"));
            }
            if let Some(first) = test_suite[..i].iter().find(|o| o.name == c.name) {
                return Err(UnitTestError::at(
                    file,
                    c.line,
                    format!(
                        "test case '{}' is defined twice (first at line {})",
                        c.name, first.line
                    ),
                ));
            }
            if c.outputs.is_empty() {
                return Err(UnitTestError::at(
                    file,
                    c.line,
                    format!(
                        "test case '{}' has no output: nothing would be checked",
                        c.name
                    ),
                ));
            }
        }
        for f in &foundations {
            if let Some(first) = foundations
                .iter()
                .find(|o| o.table_name == f.table_name && o.line < f.line)
            {
                return Err(UnitTestError::at(
                    file,
                    f.line,
                    format!(
                        "foundation '{}' is listed twice (first at line {})",
                        f.table_name, first.line
                    ),
                ));
            }
        }
        Ok(TestDefinitions {
            file: file.to_string(),
            foundations,
            test_suite,
        })
    }

    /// Reads and parses `path`; `file` names it in errors.
    ///
    /// Errors: a missing or unreadable file, and those of [`TestDefinitions::parse`].
    pub fn load(path: &Path, file: &str) -> Result<TestDefinitions, UnitTestError> {
        let text = crate::fsutil::read_project_file(path).map_err(|e| {
            UnitTestError::in_file(
                file,
                if e.kind() == std::io::ErrorKind::NotFound {
                    "no test definitions: run `flinkpipe table init-unit-tests TABLE` first"
                        .to_string()
                } else {
                    format!("cannot read: {e}")
                },
            )
        })?;
        Self::parse(&text, file)
    }

    /// The YAML text of these definitions, in shift_left's key order.
    pub fn to_yaml(&self) -> String {
        let raw = RawDefinitions {
            foundations: self
                .foundations
                .iter()
                .map(|f| RawFoundation {
                    table_name: f.table_name.clone(),
                    ddl_for_test: f.ddl_for_test.clone(),
                })
                .collect(),
            test_suite: self
                .test_suite
                .iter()
                .map(|c| RawCase {
                    name: c.name.clone(),
                    inputs: c.inputs.iter().map(raw_data).collect(),
                    outputs: c.outputs.iter().map(raw_data).collect(),
                })
                .collect(),
        };
        serde_yaml_ng::to_string(&raw).expect("plain data serialises")
    }

    /// The test case named `name`.
    pub fn case(&self, name: &str) -> Option<&TestCase> {
        self.test_suite.iter().find(|c| c.name == name)
    }
}

fn raw_data(d: &TestData) -> RawData {
    RawData {
        table_name: d.table_name.clone(),
        file_name: d.file_name.clone(),
        file_type: d.file_type,
    }
}

/// Where a file named in the definitions is: relative to the table folder (`./tests/x.sql`), as
/// shift_left joins them. `None` for a name that leaves the folder or uses `\` (shift_left fixtures
/// written on Windows: `..\tests\x.sql`).
pub fn resolve(table_folder: &Path, file_name: &str) -> Option<PathBuf> {
    if file_name.contains('\\') || file_name.trim().is_empty() {
        return None;
    }
    let rel = Path::new(file_name.trim());
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    Some(table_folder.join(rel))
}

/// The test DDL files (`<folder>/tests/<ddl_for_test>`, relative to the pipelines folder) of every
/// test folder under `pipelines` that uses one of `tables` as a foundation: the tests to update when
/// those tables change (shift_left's `unit_test_ddl_paths`). Unreadable definitions are skipped.
pub fn foundation_ddl_paths(
    pipelines: &Path,
    tables: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(pipelines)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == FILE_NAME)
    {
        let Some(folder) = e.path().parent().and_then(Path::parent) else {
            continue;
        };
        let Ok(rel) = folder.strip_prefix(pipelines) else {
            continue;
        };
        let Ok(defs) = TestDefinitions::load(e.path(), "") else {
            continue;
        };
        for f in defs
            .foundations
            .iter()
            .filter(|f| tables.contains(&f.table_name))
        {
            let p = crate::fsutil::slash_path(&rel.join(f.ddl_for_test.trim_start_matches("./")));
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "foundations:\n- table_name: src_a\n  ddl_for_test: ./tests/ddl_src_a.sql\ntest_suite:\n- name: test_a_1\n  inputs:\n  - table_name: src_a\n    file_name: ./tests/insert_src_a_1.sql\n    file_type: sql\n  outputs:\n  - table_name: a\n    file_name: ./tests/validate_a_1.sql\n    file_type: sql\n- name: test_a_2\n  inputs:\n  - table_name: src_a\n    file_name: ./tests/insert_src_a_2.csv\n    file_type: csv\n  outputs:\n  - table_name: a\n    file_name: ./tests/expected_a_2.csv\n    file_type: csv\n";

    #[test]
    fn parses_with_lines_and_round_trips() {
        let d = TestDefinitions::parse(YAML, "t.yaml").unwrap();
        assert_eq!(d.foundations[0].line, 2);
        assert_eq!(d.test_suite[0].line, 5);
        assert_eq!(d.test_suite[0].inputs[0].line, 7);
        assert_eq!(d.test_suite[1].inputs[0].line, 16);
        assert_eq!(d.test_suite[1].outputs[0].file_type, FileType::Csv);
        assert_eq!(d.test_suite[1].outputs[0].line, 20);
        let again = TestDefinitions::parse(&d.to_yaml(), "t.yaml").unwrap();
        assert_eq!(again.test_suite, {
            let mut v = d.test_suite.clone();
            // Lines differ between the two texts; compare the rest.
            for (a, b) in v.iter_mut().zip(&again.test_suite) {
                a.line = b.line;
                for (x, y) in a.inputs.iter_mut().zip(&b.inputs) {
                    x.line = y.line;
                }
                for (x, y) in a.outputs.iter_mut().zip(&b.outputs) {
                    x.line = y.line;
                }
            }
            v
        });
    }

    #[test]
    fn malformed_files_name_the_line() {
        let e = TestDefinitions::parse("test_suite:\n- name: a\n  inputs: 3\n", "t.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.yaml:3: not a test definition"), "{e}");
        let old = "foundations:\n  - table_name: x\n    ddl_for_test: d.sql\ntest_suite:\n- name: c\n  inputs:\n  - table_name: x\n    sql_file_name: a.sql\n";
        let e = TestDefinitions::parse(old, "t.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sql_file_name") && e.contains("older shift_left"),
            "{e}"
        );
        let e = TestDefinitions::parse(&YAML.replace("test_a_2", "test_a_1"), "t.yaml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.yaml:14: test case 'test_a_1' is defined twice (first at line 5)"
        );
    }

    #[test]
    fn file_names_stay_in_the_table_folder() {
        let f = Path::new("/p/t");
        assert_eq!(
            resolve(f, "./tests/a.sql"),
            Some(PathBuf::from("/p/t/./tests/a.sql"))
        );
        assert_eq!(resolve(f, "..\\tests\\a.sql"), None);
        assert_eq!(resolve(f, "../x/a.sql"), None);
    }
}
