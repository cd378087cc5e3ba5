//! The unit tests of a versioned subgraph: every table folder's `tests/` that names a renamed table is
//! rewritten with the SQL, in the same all-or-nothing batch, so `table run-unit-tests <t>_v2` runs on
//! the new names:
//!
//! - `tests/test_definitions.yaml`: the `table_name` values (foundations, inputs, outputs) are edited
//!   in place, value by value; comments, quoting, order and layout stay as written;
//! - the test SQL files (`tests/*.sql`: `ddl_*`, `insert_*`, `validate_*`): table names `<old>` and
//!   `<old><suffix>` (the unit-test suffix, `app.post_fix_unit_test`, else `_ut`; shift_left's `_ut`
//!   is always recognised, as the runner does) become `<new>` / `<new><suffix>`, by token spans
//!   ([`crate::sql::rewrite`]); a test table's `'topic'` is left alone (the runner maps storage itself).
//!
//! File names stay as they are: `test_definitions.yaml` names them.

use super::{FileEdit, VersionError, split_last};
use crate::config::Config;
use crate::inventory::resolve_name;
use crate::project::Project;
use crate::sql::TableName;
use crate::sql::rewrite::rename_tables_with;
use crate::unittest::definitions::{self, TestDefinitions};
use crate::unittest::naming::DEFAULT_SUFFIX;
use std::collections::{BTreeMap, BTreeSet};

/// The edits of every `tests/` folder of the project that names a table of `renames`, sorted by path.
///
/// Errors: a test SQL file that cannot be read or rewritten safely (naming the file).
pub fn test_edits(
    project: &Project,
    config: &Config,
    renames: &BTreeMap<String, String>,
) -> Result<Vec<FileEdit>, VersionError> {
    let inv = &project.inventory;
    let suffixes: Vec<String> = {
        let mut v: Vec<String> = config
            .app
            .post_fix_unit_test
            .iter()
            .filter(|s| crate::unittest::Suffix::parse(s).is_ok())
            .cloned()
            .collect();
        if !v.iter().any(|s| s == DEFAULT_SUFFIX) {
            v.push(DEFAULT_SUFFIX.to_string());
        }
        v
    };
    let folders: BTreeSet<&str> = inv
        .tables
        .values()
        .filter(|t| !t.external)
        .map(|t| t.folder.as_str())
        .collect();
    let mentions = |text: &str| {
        let lower = text.to_ascii_lowercase();
        renames
            .keys()
            .any(|old| lower.contains(&old.to_ascii_lowercase()))
    };
    // `<old>` → `<new>`, `<old><suffix>` → `<new><suffix>`.
    let rename = |n: &TableName| {
        let key = resolve_name(n, config);
        if let Some(new) = renames.get(&key) {
            return Some(split_last(&key, new, n));
        }
        suffixes.iter().find_map(|s| {
            let base = key.strip_suffix(s.as_str())?;
            let new = renames.get(base)?;
            Some(split_last(&key, &format!("{new}{s}"), n))
        })
    };
    let mut edits = Vec::new();
    for folder in folders {
        let tests = inv.disk_path(folder).join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else {
            continue;
        };
        let mut files: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n == definitions::FILE_NAME || n.to_ascii_lowercase().ends_with(".sql"))
            .collect();
        files.sort();
        for name in files {
            let rel = format!("{folder}/tests/{name}");
            let path = tests.join(&name);
            let before = crate::fsutil::read_user_text(&path, crate::fsutil::MAX_SQL_FILE_BYTES)
                .map_err(|e| VersionError::Io {
                    file: rel.clone(),
                    message: e.to_string(),
                })?;
            if !mentions(&before) {
                continue;
            }
            let (after, notes) = if name == definitions::FILE_NAME {
                match rename_definitions(&before, &rel, renames) {
                    Some(after) => (after, Vec::new()),
                    None => continue,
                }
            } else {
                let out = rename_tables_with(&before, &rename, &|_| false).map_err(|source| {
                    VersionError::Rewrite {
                        file: rel.clone(),
                        source,
                    }
                })?;
                if out.edits == 0 {
                    continue;
                }
                (out.text, out.notes)
            };
            if after != before {
                edits.push(FileEdit {
                    file: rel,
                    path,
                    before,
                    after,
                    notes,
                });
            }
        }
    }
    Ok(edits)
}

/// `text` (a `test_definitions.yaml`) with every `table_name:` value that `renames` renames replaced in
/// place (its quotes and any comment after it kept). `None` when nothing is renamed, or when the file
/// does not parse as a test definition before or after (the runner reports such a file itself; an edit
/// that would change anything else than those names is never written).
pub fn rename_definitions(
    text: &str,
    rel: &str,
    renames: &BTreeMap<String, String>,
) -> Option<String> {
    let before = TestDefinitions::parse(text, rel).ok()?;
    let mut out = String::with_capacity(text.len() + 16);
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        match rename_value(line, renames) {
            Some(l) => {
                out.push_str(&l);
                changed = true;
            }
            None => out.push_str(line),
        }
    }
    if !changed {
        return None;
    }
    // The edit renames exactly the table names, nothing else.
    let after = TestDefinitions::parse(&out, rel).ok()?;
    let map = |n: &str| renames.get(n).cloned().unwrap_or_else(|| n.to_string());
    let expected: Vec<String> = names(&before).iter().map(|n| map(n)).collect();
    (names(&after) == expected).then_some(out)
}

fn names(d: &TestDefinitions) -> Vec<String> {
    d.foundations
        .iter()
        .map(|f| f.table_name.clone())
        .chain(
            d.test_suite
                .iter()
                .flat_map(|c| c.inputs.iter().chain(c.outputs.iter()))
                .map(|t| t.table_name.clone()),
        )
        .collect()
}

/// One line `  - table_name: old  # comment` with its value renamed, if it is such a line.
fn rename_value(line: &str, renames: &BTreeMap<String, String>) -> Option<String> {
    let indent = line.len() - line.trim_start().len();
    let mut rest = &line[indent..];
    if let Some(r) = rest.strip_prefix('-') {
        rest = r.trim_start();
    }
    let rest = rest.strip_prefix("table_name")?.trim_start();
    let rest = rest.strip_prefix(':')?;
    let value_at = line.len() - rest.trim_start().len();
    let value_part = &line[value_at..];
    let (quote, inner) = match value_part.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let end = value_part[1..].find(q)? + 1;
            (Some(q), &value_part[1..end])
        }
        _ => {
            let end = value_part
                .find(|c: char| c.is_whitespace() || c == '#')
                .unwrap_or(value_part.len());
            (None, &value_part[..end])
        }
    };
    let new = renames.get(inner)?;
    let start = value_at + usize::from(quote.is_some());
    Some(format!(
        "{}{new}{}",
        &line[..start],
        &line[start + inner.len()..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_values_keeping_comments_and_quotes() {
        let renames: BTreeMap<String, String> = [("a".to_string(), "a_v2".to_string())].into();
        let text = "# top\nfoundations:\n- table_name: a # the input\n  ddl_for_test: ./tests/ddl_a.sql\ntest_suite:\n- name: c1\n  inputs:\n  - table_name: \"a\"\n    file_name: ./tests/insert_a_1.sql\n    file_type: sql\n  outputs:\n  - table_name: b\n    file_name: ./tests/validate_b_1.sql\n    file_type: sql\n";
        let out = rename_definitions(text, "t.yaml", &renames).unwrap();
        assert_eq!(
            out,
            text.replace("table_name: a #", "table_name: a_v2 #")
                .replace("table_name: \"a\"", "table_name: \"a_v2\"")
        );
        let none: BTreeMap<String, String> = [("x".to_string(), "x_v2".to_string())].into();
        assert!(rename_definitions(text, "t.yaml", &none).is_none());
    }
}
