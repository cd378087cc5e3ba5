//! Our example project (`fixtures/`): the graph must equal the hand-derived truth in
//! `fixtures/expected_graph.json`, the project must validate cleanly, and the JSON outputs are golden files.

use crate::support::Test;
use crate::support::*;
use flinkpipe::config::Config;
use flinkpipe::graph::canonical_layer;
use flinkpipe::project::{LoadOptions, Project};
use flinkpipe::sql::Statefulness;
use std::path::Path;

fn load() -> (tempfile::TempDir, Project) {
    let (tmp, root) = our_fixture();
    let project =
        flinkpipe::project::load(&root, &Config::default(), LoadOptions::default()).unwrap();
    (tmp, project)
}

#[test]
fn graph_equals_the_hand_derived_truth() {
    let (_tmp, p) = load();
    let diags: Vec<String> = p.diagnostics.iter().map(|d| d.to_string()).collect();
    assert!(
        diags.is_empty(),
        "the example project must validate without findings:\n{}",
        diags.join("\n")
    );
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/expected_graph.json"),
    )
    .unwrap();
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let expected = expected["tables"].as_object().unwrap();
    let mut problems = Vec::new();
    for (name, e) in expected {
        let Some(t) = p.inventory.tables.get(name) else {
            problems.push(format!("{name}: missing from the inventory"));
            continue;
        };
        let parents: Vec<&str> = p.graph.parents(name);
        let want: Vec<&str> = e["parents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        if parents != want {
            problems.push(format!("{name}: parents {parents:?}, expected {want:?}"));
        }
        if t.folder != e["folder"].as_str().unwrap() {
            problems.push(format!(
                "{name}: folder {}, expected {}",
                t.folder, e["folder"]
            ));
        }
        if t.product != e["product"].as_str().unwrap() {
            problems.push(format!(
                "{name}: product {}, expected {}",
                t.product, e["product"]
            ));
        }
        if canonical_layer(&t.table_type) != canonical_layer(e["layer"].as_str().unwrap()) {
            problems.push(format!(
                "{name}: type {}, expected {}",
                t.table_type, e["layer"]
            ));
        }
        let stateful = t.statefulness == Statefulness::Stateful;
        if stateful != e["stateful"].as_bool().unwrap() {
            problems.push(format!(
                "{name}: stateful {stateful} ({:?}), expected {}",
                t.state_reasons, e["stateful"]
            ));
        }
    }
    let extra: Vec<&String> = p
        .inventory
        .tables
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .collect();
    assert!(
        extra.is_empty(),
        "tables not in expected_graph.json: {extra:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn normalise(s: &str, root: &Path) -> String {
    s.replace(&root.display().to_string(), "<ROOT>")
}

#[test]
fn golden_inventory_json() {
    let (_tmp, root) = our_fixture();
    let o = Test::outside(&["table", "build-inventory", root.to_str().unwrap()]);
    o.success();
    let text = std::fs::read_to_string(root.join("inventory.json")).unwrap();
    insta::assert_snapshot!("example_inventory_json", text);
}

#[test]
fn golden_metadata_files() {
    let (_tmp, root) = our_fixture();
    let o = Test::outside(&["pipeline", "build-all-metadata", root.to_str().unwrap()]);
    o.success();
    let def = std::fs::read_to_string(
        root.join("facts/c360/fct_customer_orders/pipeline_definition.json"),
    )
    .unwrap();
    insta::assert_snapshot!("example_definition_c360_fct_customer_orders", def);
    let graph = std::fs::read_to_string(root.join("pipeline_graph.json")).unwrap();
    insta::assert_snapshot!("example_pipeline_graph_json", graph);
    // A second build rewrites the same bytes: no stale edges, no merge.
    let o = Test::outside(&["pipeline", "build-all-metadata", root.to_str().unwrap()]);
    o.success();
    assert_eq!(
        std::fs::read_to_string(root.join("pipeline_graph.json")).unwrap(),
        graph
    );
}

#[test]
fn golden_execution_plan_json() {
    let (_tmp, root) = our_fixture();
    let o = Test::outside(&[
        "pipeline",
        "build-execution-plan",
        root.to_str().unwrap(),
        "--product-name",
        "sales",
        "--may-start-descendants",
        "--output",
        "json",
    ]);
    let o = o.success();
    insta::assert_snapshot!("example_plan_sales_json", normalise(&o.stdout_raw(), &root));
    let text = Test::outside(&[
        "pipeline",
        "build-execution-plan",
        root.to_str().unwrap(),
        "--product-name",
        "sales",
        "--may-start-descendants",
    ]);
    insta::assert_snapshot!("example_plan_sales_text", text.stdout_raw());
}

#[test]
fn golden_graph_exports() {
    let (_tmp, root) = our_fixture();
    for format in ["mermaid", "dot", "json"] {
        let o = Test::outside(&[
            "pipeline",
            "graph",
            root.to_str().unwrap(),
            "--format",
            format,
        ]);
        let o = o.success();
        insta::assert_snapshot!(format!("example_graph_{format}"), o.stdout_raw());
    }
    let o = Test::outside(&[
        "pipeline",
        "graph",
        root.to_str().unwrap(),
        "--select",
        "+c360_fct_customer_orders,product:sales",
        "--format",
        "json",
    ]);
    let o = o.success();
    insta::assert_snapshot!("example_graph_select", o.stdout_raw());
}

#[test]
fn golden_report() {
    let (_tmp, root) = our_fixture();
    let o = Test::outside(&[
        "pipeline",
        "report",
        "c360_fct_customer_orders",
        root.to_str().unwrap(),
        "--children-too",
    ]);
    let o = o.success();
    insta::assert_snapshot!("example_report_text", o.stdout_raw());
}
