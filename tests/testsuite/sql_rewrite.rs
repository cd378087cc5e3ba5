//! Span-based renaming over the whole labelled corpus: renaming every table of every file to `<name>_v2`
//! must re-parse to exactly the renamed references (checked inside `rename_tables`), touch nothing else, and
//! be a no-op the second time.

use flinkpipe::sql::rewrite::{RewriteError, rename_tables, with_table_hints};
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

/// A bounded read on the SQL Gateway: every table the query reads that the caller names gets the
/// hint right after its name (before an alias), in joins, subqueries, CTEs and set operations; a
/// reference with its own hint and a window TVF's `TABLE t` argument keep theirs and are named; a
/// CTE's name is no table; the result reads exactly the same tables. Over the corpus too: every
/// query-bearing file gets hints on every source and still parses to the same references.
#[test]
fn table_hints_bound_every_read_the_caller_names() {
    const H: &str = "'scan.bounded.mode' = 'latest-offset'";
    let hint = |n: &TableName| (n.table() != "dim").then(|| H.to_string());
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "SELECT * FROM orders WHERE x > 0",
            "SELECT * FROM orders /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ WHERE x > 0",
            &[],
        ),
        (
            "SELECT o.id FROM orders AS o JOIN dim d ON o.k = d.k",
            "SELECT o.id FROM orders /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ AS o JOIN dim d ON o.k = d.k",
            &[],
        ),
        (
            "WITH c AS (SELECT k FROM `cat`.`db`.`orders`) SELECT k FROM c UNION ALL SELECT k FROM refunds",
            "WITH c AS (SELECT k FROM `cat`.`db`.`orders` /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */) SELECT k FROM c UNION ALL SELECT k FROM refunds /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */",
            &[],
        ),
        (
            "SELECT * FROM orders /*+ OPTIONS('scan.startup.mode' = 'latest-offset') */ WHERE k IN (SELECT k FROM refunds)",
            "SELECT * FROM orders /*+ OPTIONS('scan.startup.mode' = 'latest-offset') */ WHERE k IN (SELECT k FROM refunds /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */)",
            &["orders"],
        ),
        (
            "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
            "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
            &["clicks"],
        ),
    ];
    for (sql, want, kept) in cases {
        let (got, k) = with_table_hints(sql, &hint).unwrap();
        assert_eq!(&got, want, "{sql}");
        assert_eq!(
            k,
            kept.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "{sql}"
        );
        let sources = |t: &str| {
            let mut v: Vec<String> = analyze(t).statements[0]
                .sources
                .iter()
                .map(|r| r.name.dotted())
                .collect();
            v.sort();
            v
        };
        assert_eq!(sources(&got), sources(sql), "{got}");
        // Idempotent: hints already there are kept, none added twice.
        let (again, _) = with_table_hints(&got, &hint).unwrap();
        assert_eq!(again, got);
    }
    let root = crate::support::corpus().join("sql");
    let mut hinted = 0;
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "sql") {
            continue;
        }
        let sql = std::fs::read_to_string(entry.path()).unwrap();
        match with_table_hints(&sql, &|_| Some(H.to_string())) {
            Ok((text, _)) => hinted += usize::from(text != sql),
            // A file the front end reads only with its fallback has no spans: refused, never guessed.
            Err(RewriteError::NoSpan { .. }) => {}
            Err(e) => panic!("{}: {e}", entry.path().display()),
        }
    }
    assert!(hinted > 100, "{hinted} files hinted");
}
