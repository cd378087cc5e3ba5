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

fn small_project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    crate::support::project(files)
}

const SRC_DDL: &str = "CREATE TABLE src (\n  id BIGINT,\n  region STRING,\n  amount DOUBLE,\n  ts TIMESTAMP(3),\n  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND\n) WITH ('connector' = 'kafka', 'topic' = 'src', 'value.format' = 'json');\n";

fn lineage_json(dir: &std::path::Path) -> Value {
    let o = Test::outside(&[
        "pipeline",
        "column-lineage",
        dir.to_str().unwrap(),
        "--output",
        "json",
    ]);
    serde_json::from_str(&o.stdout_raw()).unwrap_or_else(|e| panic!("{e}: {}", o.stderr_raw()))
}

/// Issue 42, item 9: a writing statement the parser cannot read (a misspelt keyword, a doubled comma,
/// a broken member of a statement set, a broken view) is listed in `unresolved` with its table, file,
/// line and the parser's reason, and has no edge; a JSON consumer never sees its columns as constants.
#[test]
fn unparseable_statements_are_listed_unresolved_with_file_line_and_reason() {
    let cases: [(&str, &str, &str, usize); 4] = [
        ("t1", "INSERT INTO t1\nSELEC id FROM src;\n", "t1", 1),
        (
            "t2",
            "-- totals\nINSERT INTO t2\nSELECT id,, amount FROM src;\n",
            "t2",
            2,
        ),
        (
            "t3",
            "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO t3 SELECT id FROM src WHERE;\nEND;\n",
            "t3",
            1,
        ),
        (
            "t4",
            "INSERT INTO t4 SELECT id FROM src WHERE amount = = 1;\n",
            "t4",
            1,
        ),
    ];
    for (t, dml, table, line) in cases {
        let ddl = format!(
            "CREATE TABLE {t} (\n  id BIGINT\n) WITH ('connector' = 'kafka', 'topic' = '{t}', 'value.format' = 'json');\n"
        );
        let ddl_path = format!("facts/{t}/sql-scripts/ddl.{t}.sql");
        let dml_path = format!("facts/{t}/sql-scripts/dml.{t}.sql");
        let (_tmp, root) = small_project(&[
            ("sources/src/sql-scripts/ddl.src.sql", SRC_DDL),
            (&ddl_path, &ddl),
            (&dml_path, dml),
        ]);
        let v = lineage_json(&root);
        let u = v["unresolved"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["table"] == table)
            .unwrap_or_else(|| panic!("{t}: {v:#}"));
        assert_eq!(u["file"], format!("pipelines/{dml_path}"), "{t}");
        assert_eq!(u["line"], line, "{t}: {u:#}");
        assert!(
            u["reasons"][0]
                .as_str()
                .unwrap()
                .starts_with("the statement cannot be parsed ("),
            "{t}: {u:#}"
        );
        assert!(
            v["edges"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["table"] != table),
            "{t}: {v:#}"
        );
    }
}

/// Issue 42, item 10: over one relation of known schema, a bare column binds to it: a column the DDL
/// does not have is reported as such (not "cannot be bound to one relation") and is an `unknown-column`
/// error of `validate --strict` at its file:line — bare, qualified, in a filter, through a CTE.
#[test]
fn unknown_columns_of_a_single_known_relation_are_named_and_fail_strict_validate() {
    let cases: [(&str, usize, &str); 4] = [
        (
            "INSERT INTO t\nSELECT id,\n  channel\nFROM src;\n",
            3,
            "channel",
        ),
        (
            "INSERT INTO t\nSELECT s.id, s.channel\nFROM src AS s;\n",
            2,
            "s.channel",
        ),
        (
            "INSERT INTO t\nSELECT id, region FROM src\nWHERE channel = 'web';\n",
            3,
            "channel",
        ),
        (
            "INSERT INTO t\nWITH x AS (SELECT id, region FROM src)\nSELECT id,\n  channel FROM x;\n",
            4,
            "channel",
        ),
    ];
    for (dml, line, col) in cases {
        let ddl = "CREATE TABLE t (\n  id BIGINT,\n  channel STRING\n) WITH ('connector' = 'kafka', 'topic' = 't', 'value.format' = 'json');\n";
        let (_tmp, root) = small_project(&[
            ("sources/src/sql-scripts/ddl.src.sql", SRC_DDL),
            ("facts/t/sql-scripts/ddl.t.sql", ddl),
            ("facts/t/sql-scripts/dml.t.sql", dml),
        ]);
        let v = lineage_json(&root);
        let reasons = v["unresolved"][0]["reasons"].to_string();
        assert!(
            reasons.contains(&format!("column {col} is not a column of")),
            "{dml}: {v:#}"
        );
        assert!(!reasons.contains("cannot be bound"), "{dml}: {reasons}");
        let dir = root.to_str().unwrap();
        let o = Test::outside(&["pipeline", "validate", dir, "--strict"]);
        let o = o.code(1);
        let err = o.stderr_raw();
        assert!(
            err.contains(&format!(
                "error[unknown-column]: pipelines/facts/t/sql-scripts/dml.t.sql:{line}"
            )),
            "{dml}: {err}"
        );
        Test::outside(&["pipeline", "validate", dir, "--deny", "unknown-column"]).code(1);
        Test::outside(&["pipeline", "validate", dir]).success();
    }
    // Every column known: the gate passes.
    let (_tmp, root) = small_project(&[
        ("sources/src/sql-scripts/ddl.src.sql", SRC_DDL),
        (
            "facts/t/sql-scripts/ddl.t.sql",
            "CREATE TABLE t (\n  id BIGINT,\n  region STRING\n) WITH ('connector' = 'kafka', 'topic' = 't', 'value.format' = 'json');\n",
        ),
        (
            "facts/t/sql-scripts/dml.t.sql",
            "INSERT INTO t\nSELECT id, region FROM src WHERE amount > 0;\n",
        ),
    ]);
    Test::outside(&["pipeline", "validate", root.to_str().unwrap(), "--strict"]).success();
}

/// Issue 42, item 11: `window_start` / `window_end` / `window_time` of a window TVF are direct from the
/// DESCRIPTOR time column (as Flink's planner derives them), the same in JSON, DOT and OpenLineage;
/// OpenLineage gives one run event per statement, a statement set included (one event, one output per
/// table it writes).
#[test]
fn window_bounds_and_statement_sets_agree_across_formats() {
    let sink = |t: &str| {
        format!(
            "CREATE TABLE {t} (\n  window_start TIMESTAMP(3),\n  window_end TIMESTAMP(3),\n  total DOUBLE\n) WITH ('connector' = 'kafka', 'topic' = '{t}', 'value.format' = 'json');\n"
        )
    };
    let (a, b) = (sink("agg_a"), sink("agg_b"));
    let set = "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO agg_a\nSELECT window_start, window_end, SUM(amount)\nFROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE))\nGROUP BY window_start, window_end;\nINSERT INTO agg_b\nSELECT window_start, window_end, SUM(amount)\nFROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))\nGROUP BY window_start, window_end;\nEND;\n";
    let (_tmp, root) = small_project(&[
        ("sources/src/sql-scripts/ddl.src.sql", SRC_DDL),
        ("facts/agg_a/sql-scripts/ddl.agg_a.sql", &a),
        ("facts/agg_a/sql-scripts/dml.agg_a.sql", set),
        ("facts/agg_b/sql-scripts/ddl.agg_b.sql", &b),
    ]);
    let v = lineage_json(&root);
    let edges: BTreeSet<(String, String, String, String)> = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["table"].as_str().unwrap().to_string(),
                e["column"].as_str().unwrap().to_string(),
                format!(
                    "{}.{}",
                    e["source_table"].as_str().unwrap(),
                    e["source_column"].as_str().unwrap()
                ),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for t in ["agg_a", "agg_b"] {
        for c in ["window_start", "window_end"] {
            let e = (
                t.to_string(),
                c.to_string(),
                "src.ts".to_string(),
                "direct".to_string(),
            );
            assert!(edges.contains(&e), "{e:?}: {edges:?}");
        }
    }
    let dir = root.to_str().unwrap();
    let o = Test::outside(&["pipeline", "column-lineage", dir, "--format", "dot"]);
    assert!(
        o.stdout_raw()
            .contains("\"src.ts\" -> \"agg_a.window_start\";"),
        "{}",
        o.stdout_raw()
    );
    let o = Test::outside(&["pipeline", "column-lineage", dir, "--format", "openlineage"]);
    let events: Vec<Value> = o
        .stdout_raw()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(
        e["job"]["name"],
        "pipelines/facts/agg_a/sql-scripts/dml.agg_a.sql:1"
    );
    let outputs: Vec<&str> = e["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(outputs, vec!["agg_a", "agg_b"]);
    let ws = &e["outputs"][1]["facets"]["columnLineage"]["fields"]["window_start"]["inputFields"];
    assert!(
        ws.as_array().unwrap().iter().any(|f| f["name"] == "src"
            && f["field"] == "ts"
            && f["transformations"][0]["type"] == "DIRECT"),
        "{ws:#}"
    );
}
