//! Column lineage against hand labels (`tests/data/column_lineage/labels.jsonl`, rules in `SPEC.md`
//! beside it): every statement the code resolves must match its label exactly (direct sources of each
//! output column and the indirect set); a statement the code marks unresolved is accepted, a wrong
//! edge never is.

use crate::support::Test;
use flinkpipe::sql::columns::{StatementColumns, lineage};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

type Schemas = BTreeMap<String, Vec<(String, bool)>>;

/// The `CREATE TABLE`s of the example project and its external DDLs.
fn fixture_schemas() -> Schemas {
    tree_schemas(&[
        root().join("fixtures/pipelines"),
        root().join("fixtures/external"),
    ])
}

/// The `CREATE TABLE`s of the DDL files of project trees (not their `tests/` folders).
fn tree_schemas(dirs: &[PathBuf]) -> Schemas {
    let mut out = Schemas::new();
    for dir in dirs {
        for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().to_string();
            if !e.file_type().is_file() || !name.ends_with(".sql") || name.starts_with("dml.") {
                continue;
            }
            let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
            if rel.components().any(|c| c.as_os_str() == "tests") {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap();
            for st in flinkpipe::sql::analyze(&text).statements {
                if st.kind == flinkpipe::sql::StatementKind::CreateTable
                    && let Some(sink) = st.sinks.first()
                {
                    out.insert(
                        sink.name.dotted(),
                        st.columns
                            .iter()
                            .map(|c| (c.name.clone(), c.computed))
                            .collect(),
                    );
                }
            }
        }
    }
    out
}

fn label_path(file: &str) -> PathBuf {
    if file.starts_with("fixtures/") {
        root().join(file)
    } else {
        root().join("../shared/corpus/sql").join(file)
    }
}

fn sorted(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn got_columns(r: &StatementColumns) -> BTreeMap<String, BTreeSet<String>> {
    r.columns
        .iter()
        .map(|c| {
            (
                c.name.clone(),
                c.direct.iter().map(|(t, c)| format!("{t}.{c}")).collect(),
            )
        })
        .collect()
}

#[test]
fn resolved_statements_match_their_hand_labels_exactly() {
    let labels = std::fs::read_to_string(root().join("tests/data/column_lineage/labels.jsonl"))
        .expect("labels.jsonl");
    let fixtures = fixture_schemas();
    let empty = Schemas::new();
    let mut cache: BTreeMap<String, Vec<StatementColumns>> = BTreeMap::new();
    let (mut right, mut code_unsure, mut label_unsure, mut missing) = (0, 0, 0, 0);
    let mut wrong: Vec<String> = Vec::new();
    for line in labels.lines().filter(|l| !l.trim().is_empty()) {
        let label: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let file = label["file"].as_str().unwrap();
        if label["unresolved"] == true {
            label_unsure += 1;
            continue;
        }
        let results = cache.entry(file.to_string()).or_insert_with(|| {
            let path = label_path(file);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // A file of a project tree (`…/pipelines/…`) knows the tree's DDLs; another file only its
            // own.
            let tree = file
                .find("/pipelines/")
                .filter(|_| !file.starts_with("fixtures/"))
                .map(|i| tree_schemas(&[label_path(&file[..i + "/pipelines".len()])]));
            let schemas = match &tree {
                Some(t) => t,
                None if file.starts_with("fixtures/") => &fixtures,
                None => &empty,
            };
            lineage(&text, schemas)
        });
        // The n-th writing statement of the file, by the label's sink and order.
        let sink = label["sink"].as_str().unwrap();
        let n = label["statement"].as_u64().unwrap() as usize;
        let got = results
            .get(n.wrapping_sub(1))
            .filter(|r| r.sink.eq_ignore_ascii_case(sink) || r.sink.ends_with(&format!(".{sink}")))
            .or_else(|| results.iter().find(|r| r.sink.eq_ignore_ascii_case(sink)));
        let Some(got) = got else {
            missing += 1;
            continue;
        };
        if !got.unresolved.is_empty() {
            code_unsure += 1;
            continue;
        }
        let want_cols: BTreeMap<String, BTreeSet<String>> = label["columns"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), sorted(v)))
            .collect();
        let want_ind = sorted(&label["indirect"]);
        let got_ind: BTreeSet<String> = got
            .indirect
            .iter()
            .map(|(t, c)| format!("{t}.{c}"))
            .collect();
        let got_cols = got_columns(got);
        if got_cols == want_cols && got_ind == want_ind {
            right += 1;
        } else {
            let mut diff = Vec::new();
            for (k, v) in &want_cols {
                if got_cols.get(k) != Some(v) {
                    diff.push(format!("{k}: label {v:?}, code {:?}", got_cols.get(k)));
                }
            }
            for k in got_cols.keys().filter(|k| !want_cols.contains_key(*k)) {
                diff.push(format!("{k}: not labelled, code {:?}", got_cols[k]));
            }
            if got_ind != want_ind {
                diff.push(format!("indirect: label {want_ind:?}, code {got_ind:?}"));
            }
            wrong.push(format!("{file} #{n} ({sink}): {}", diff.join("; ")));
        }
    }
    eprintln!(
        "column lineage: {right} right, {code_unsure} unresolved by the code, {label_unsure} unresolved by the label, {missing} not found, {} wrong",
        wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(right >= 100, "only {right} statements resolved and right");
}

/// `pipeline column-lineage` on the example project: edges across tables with file:line, the upstream
/// of one column, and OpenLineage events.
#[test]
fn the_command_on_the_example_project() {
    let (_t, root) = crate::support::our_fixture();
    let dir = root.to_str().unwrap();
    let o = Test::outside(&["pipeline", "column-lineage", dir]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let has = |table: &str, column: &str, source: &str, kind: &str| {
        v["edges"].as_array().unwrap().iter().any(|e| {
            e["table"] == table
                && e["column"] == column
                && format!(
                    "{}.{}",
                    e["source_table"].as_str().unwrap(),
                    e["source_column"].as_str().unwrap()
                ) == source
                && e["kind"] == kind
                && e["file"]
                    .as_str()
                    .is_some_and(|f| f.starts_with("pipelines/") && f.ends_with(".sql"))
        })
    };
    // The second INSERT of the statement set, and a reader of its sink.
    assert!(has(
        "int_sales_store_orders",
        "amount",
        "int_sales_paid_orders.amount",
        "direct"
    ));
    assert!(has(
        "int_sales_store_orders",
        "amount",
        "int_sales_paid_orders.channel",
        "indirect"
    ));
    assert!(has(
        "int_sales_web_orders",
        "pay_method",
        "int_sales_paid_orders.pay_method",
        "direct"
    ));
    assert!(
        v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["table"] == "int_sales_paid_orders" && c["column"] == "amount")
    );

    // The upstream of one column reaches the sources, transitively.
    let o = Test::outside(&[
        "pipeline",
        "column-lineage",
        dir,
        "--table",
        "int_sales_store_orders",
        "--column",
        "amount",
        "--upstream",
    ]);
    let up: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let sources: BTreeSet<String> = up["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}.{}",
                e["source_table"].as_str().unwrap(),
                e["source_column"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        sources.contains("int_sales_paid_orders.amount"),
        "{sources:?}"
    );
    assert!(
        sources.iter().any(|s| s.starts_with("src_sales_")),
        "{sources:?}"
    );
    assert!(
        up["edges"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["table"] != "sales_mv_top_stores")
    );
    // An unknown column is a usage error.
    let o = Test::outside(&[
        "pipeline",
        "column-lineage",
        dir,
        "--table",
        "int_sales_store_orders",
        "--column",
        "nope",
    ]);
    o.code(2);

    // The HTML page: a card per table, a clickable item per column, the edges as data.
    let o = Test::outside(&["pipeline", "column-lineage", dir, "--format", "html"]);
    let page = o.stdout_raw();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        page.contains("<li data-c=\"int_sales_store_orders.amount\">amount</li>"),
        "{}",
        &page[..500]
    );
    assert!(page.contains("id=\"edge-data\""));

    // OpenLineage: one run event per statement, each a JSON object with the column-lineage facet.
    let o = Test::outside(&["pipeline", "column-lineage", dir, "--format", "openlineage"]);
    let events: Vec<Value> = o
        .stdout_raw()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.len() >= 20, "{}", events.len());
    for e in &events {
        assert_eq!(e["eventType"], "COMPLETE");
        assert!(e["eventTime"].as_str().unwrap().ends_with('Z'));
        assert!(e["outputs"][0]["facets"]["columnLineage"]["fields"].is_object());
    }
}
