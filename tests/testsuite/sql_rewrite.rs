//! Span-based renaming over the whole labelled corpus: renaming every table of every file to `<name>_v2`
//! must re-parse to exactly the renamed references (checked inside `rename_tables`), touch nothing else, and
//! be a no-op the second time.

use flinkpipe::sql::rewrite::{RewriteError, rename_tables};
use flinkpipe::sql::{TableName, analyze};

#[test]
fn renaming_every_table_of_the_corpus_reparses_exactly() {
    let root = crate::support::corpus().join("sql");
    let mut files = 0;
    let mut renamed = 0;
    let mut refused = Vec::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "sql") {
            continue;
        }
        let sql = std::fs::read_to_string(entry.path()).unwrap();
        files += 1;
        let a = analyze(&sql);
        let names: std::collections::BTreeSet<String> = a
            .sinks()
            .into_iter()
            .chain(a.sources())
            .map(|n| n.table().to_string())
            .collect();
        let rename = |n: &TableName| {
            names
                .contains(n.table())
                .then(|| format!("{}_v2", n.table()))
        };
        match rename_tables(&sql, &rename) {
            Ok(out) => {
                if out.edits > 0 {
                    renamed += 1;
                }
                // Only table names changed: removing every `_v2` we added gives back the original text
                // (modulo added aliases, which contain no `_v2`).
                let back = out.text.replace("_v2", "");
                let added_aliases = out.text.matches(" AS ").count() - sql.matches(" AS ").count();
                if added_aliases == 0 {
                    assert_eq!(back, sql.replace("_v2", ""), "{}", entry.path().display());
                }
                // Applying again renames nothing new that was already renamed: names now end in _v2.
                let again_rename = |n: &TableName| {
                    names
                        .contains(n.table())
                        .then(|| format!("{}_v2", n.table()))
                };
                let again = rename_tables(&out.text, &again_rename).unwrap();
                assert_eq!(
                    again.edits,
                    0,
                    "{}: second rename changed the text",
                    entry.path().display()
                );
            }
            // Statements the parser could not read have no reliable spans: refused, never guessed.
            Err(e @ (RewriteError::NoSpan { .. } | RewriteError::TemporalAlias { .. })) => {
                refused.push(format!("{}: {e}", entry.path().display()))
            }
            Err(e) => panic!("{}: {e}", entry.path().display()),
        }
    }
    println!(
        "{files} files, {renamed} rewritten, {} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
    assert!(files >= 297);
    assert!(
        refused.len() <= files / 20,
        "too many refusals: {}",
        refused.len()
    );
}
