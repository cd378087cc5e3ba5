//! DOT, Mermaid and JSON exports and the report trees, as exact text.

use crate::graph_fixture::{data, like, node, p2, set};
use flinkpipe::graph::{
    EdgeKind, GraphError, NodeInfo, PipelineGraph, child_tree, parent_tree, render_tree_text,
    to_dot, to_json, to_mermaid,
};
use serde_json::json;

/// Names with dots, dashes and a quote; an external table; a LIKE edge; a self-loop; two products.
fn small() -> PipelineGraph {
    let mut external = node("cat.db.customers", "external_kafka", None);
    external.external = true;
    let nodes: Vec<NodeInfo> = vec![
        node("src-orders", "source", Some("p1")),
        external,
        node("int_orders", "intermediate", Some("p1")),
        node("p1_fct_order", "fact", Some("p1")),
        node("p1_fct_order_v2", "fact", Some("p1")),
        node("odd\"name", "view", Some("p2")),
    ];
    let edges = vec![
        data("src-orders", "int_orders"),
        data("int_orders", "int_orders"),
        data("int_orders", "p1_fct_order"),
        data("cat.db.customers", "p1_fct_order"),
        like("p1_fct_order", "p1_fct_order_v2"),
        data("p1_fct_order", "odd\"name"),
    ];
    PipelineGraph::build(nodes, edges).unwrap()
}

#[test]
fn dot_clusters_by_product_and_styles_layers_like_edges_and_externals() {
    let style = |p: &str| {
        let (_, stroke) = flinkpipe::graph::colours::product_colours(p);
        format!("    style=\"rounded\"; color=\"{stroke}\"; fontcolor=\"{stroke}\"; penwidth=2;")
    };
    assert_eq!(
        to_dot(&small(), None),
        r##"digraph pipeline {
  rankdir=LR;
  node [shape=box, style="rounded,filled", fontname="Helvetica"];
  "cat.db.customers" [fillcolor="#ffffff", color="#666666", style="rounded,dashed", tooltip="external_kafka"];
  subgraph "cluster_p1" {
    label="p1";
STYLE_P1
    "int_orders" [fillcolor="#dae8fc", color="#6c8ebf", tooltip="intermediate"];
    "p1_fct_order" [fillcolor="#f8cecc", color="#b85450", tooltip="fact"];
    "p1_fct_order_v2" [fillcolor="#f8cecc", color="#b85450", tooltip="fact"];
    "src-orders" [fillcolor="#d5e8d4", color="#82b366", tooltip="source"];
  }
  subgraph "cluster_p2" {
    label="p2";
STYLE_P2
    "odd\"name" [fillcolor="#ffe6cc", color="#d79b00", tooltip="view"];
  }
  "cat.db.customers" -> "p1_fct_order";
  "int_orders" -> "int_orders";
  "int_orders" -> "p1_fct_order";
  "p1_fct_order" -> "odd\"name";
  "p1_fct_order" -> "p1_fct_order_v2" [style=dashed, label="LIKE"];
  "src-orders" -> "int_orders";
}
"##
        .replace("STYLE_P1", &style("p1"))
        .replace("STYLE_P2", &style("p2"))
    );
}

#[test]
fn mermaid_uses_generated_ids_and_escaped_labels() {
    let style = |g: &str, p: &str| {
        let (_, stroke) = flinkpipe::graph::colours::product_colours(p);
        format!("  style {g} fill:none,stroke:{stroke},stroke-width:2px,color:{stroke}")
    };
    assert_eq!(
        to_mermaid(&small(), None),
        r##"flowchart LR
  n0["cat.db.customers"]
  subgraph g0["p1"]
    n1["int_orders"]
    n3["p1_fct_order"]
    n4["p1_fct_order_v2"]
    n5["src-orders"]
  end
  subgraph g1["p2"]
    n2["odd#quot;name"]
  end
  n0 --> n3
  n1 --> n1
  n1 --> n3
  n3 --> n2
  n3 -.->|LIKE| n4
  n5 --> n1
STYLE_G0
STYLE_G1
  classDef source fill:#d5e8d4,stroke:#82b366
  class n5 source
  classDef intermediate fill:#dae8fc,stroke:#6c8ebf
  class n1 intermediate
  classDef fact fill:#f8cecc,stroke:#b85450
  class n3,n4 fact
  classDef view fill:#ffe6cc,stroke:#d79b00
  class n2 view
  classDef external fill:#ffffff,stroke:#666666,stroke-dasharray:5 5
  class n0 external
"##
        .replace("STYLE_G0", &style("g0", "p1"))
        .replace("STYLE_G1", &style("g1", "p2"))
    );
}

#[test]
fn json_lists_sorted_nodes_and_edges() {
    let subset = set(&[
        "int_orders",
        "p1_fct_order",
        "p1_fct_order_v2",
        "not_a_table",
    ]);
    assert_eq!(
        to_json(&small(), Some(&subset)),
        json!({
            "nodes": [
                {"name": "int_orders", "product": "p1", "layer": "intermediate",
                 "path": "pipelines/intermediates/p1/int_orders", "external": false},
                {"name": "p1_fct_order", "product": "p1", "layer": "fact",
                 "path": "pipelines/facts/p1/p1_fct_order", "external": false},
                {"name": "p1_fct_order_v2", "product": "p1", "layer": "fact",
                 "path": "pipelines/facts/p1/p1_fct_order_v2", "external": false},
            ],
            "edges": [
                {"parent": "int_orders", "child": "int_orders", "kind": "data"},
                {"parent": "int_orders", "child": "p1_fct_order", "kind": "data"},
                {"parent": "p1_fct_order", "child": "p1_fct_order_v2", "kind": "like"},
            ],
            "products": [{
                "name": "p1",
                "fill": flinkpipe::graph::colours::product_colours("p1").0,
                "stroke": flinkpipe::graph::colours::product_colours("p1").1,
            }]
        })
    );
    let all = to_json(&small(), None);
    assert_eq!(all["nodes"].as_array().unwrap().len(), 6);
    assert_eq!(all["edges"].as_array().unwrap().len(), 6);
    assert_eq!(
        all["nodes"][0],
        json!({"name": "cat.db.customers", "product": null, "layer": "external_kafka",
               "path": "pipelines/seeds/cat.db.customers", "external": true})
    );
}

#[test]
fn subsets_keep_only_their_edges() {
    let subset = set(&["z", "c", "e"]);
    assert_eq!(
        to_mermaid(&p2(), Some(&subset)),
        r##"flowchart LR
  subgraph g0["p2"]
    n0["c"]
    n1["e"]
    n2["z"]
  end
  n0 --> n1
  n2 --> n0
STYLE_G0
  classDef intermediate fill:#dae8fc,stroke:#6c8ebf
  class n0,n2 intermediate
  classDef fact fill:#f8cecc,stroke:#b85450
  class n1 fact
"##
        .replace("STYLE_G0", &{
            let (_, stroke) = flinkpipe::graph::colours::product_colours("p2");
            format!("  style g0 fill:none,stroke:{stroke},stroke-width:2px,color:{stroke}")
        })
    );
    let dot = to_dot(&p2(), Some(&set(&["src_x", "x", "f"])));
    assert_eq!(
        dot.lines().filter(|l| l.contains("->")).collect::<Vec<_>>(),
        ["  \"src_x\" -> \"x\";"]
    );
}

#[test]
fn parent_tree_marks_tables_already_shown() {
    let g = p2();
    let tree = parent_tree(&g, "f", None).unwrap();
    assert_eq!(
        render_tree_text(&tree),
        "f (fact, p2)
└── d (intermediate, p2)
    ├── y (intermediate, p2)
    │   └── src_y (source, p2)
    └── z (intermediate, p2)
        ├── x (intermediate, p2)
        │   └── src_x (source, p2)
        └── y (intermediate, p2) (*)
"
    );
    assert_eq!(tree.edge, None);
    let z = &tree.children[0].children[1];
    assert_eq!((z.name.as_str(), z.edge), ("z", Some(EdgeKind::Data)));
    assert!(z.children[1].repeated && z.children[1].children.is_empty());
    assert_eq!(z.path.as_deref(), Some("pipelines/intermediates/p2/z"));

    let shallow = parent_tree(&g, "f", Some(1)).unwrap();
    assert_eq!(
        render_tree_text(&shallow),
        "f (fact, p2)\n└── d (intermediate, p2)\n"
    );
    assert_eq!(
        parent_tree(&g, "nope", None),
        Err(GraphError::UnknownTable {
            name: "nope".into()
        })
    );
}

#[test]
fn child_tree_shows_like_edges_external_tables_and_products() {
    assert_eq!(
        render_tree_text(&child_tree(&p2(), "src_x", Some(3)).unwrap()),
        "src_x (source, p2)
├── a (intermediate, p2)
└── x (intermediate, p2)
    └── z (intermediate, p2)
        ├── c (intermediate, p2)
        ├── d (intermediate, p2)
        └── p (fact, p2)
"
    );
    assert_eq!(
        render_tree_text(&child_tree(&small(), "cat.db.customers", None).unwrap()),
        "cat.db.customers (external_kafka) [external]
└── p1_fct_order (fact, p1)
    ├── odd\"name (view, p2)
    └── p1_fct_order_v2 (fact, p1) [LIKE]
"
    );
    let json = serde_json::to_value(child_tree(&small(), "p1_fct_order", None).unwrap()).unwrap();
    assert_eq!(json["children"][1]["edge"], "like");
    assert_eq!(json["children"][1]["repeated"], false);
}

#[test]
fn trees_stop_at_cycles() {
    let nodes = ["a", "b", "c"]
        .into_iter()
        .map(|n| node(n, "intermediate", None))
        .collect();
    let g =
        PipelineGraph::build(nodes, vec![data("a", "b"), data("b", "c"), data("c", "a")]).unwrap();
    assert_eq!(
        render_tree_text(&child_tree(&g, "a", None).unwrap()),
        "a (intermediate)
└── b (intermediate)
    └── c (intermediate)
        └── a (intermediate) (*)
"
    );
}

/// #22: a product's colour is a function of its name, the same in every picture and every format,
/// whatever other products the picture holds.
#[test]
fn product_colours_are_a_stable_function_of_the_name_in_every_format() {
    use flinkpipe::graph::colours::product_colours;
    use flinkpipe::graph::{to_html, to_svg};
    let with = |extra: Option<&str>| {
        let mut nodes = vec![
            node("src_a", "source", Some("sales")),
            node("fct_a", "fact", Some("sales")),
            node("dim_c", "dimension", Some("customers")),
        ];
        if let Some(p) = extra {
            nodes.push(node("aaa_first", "source", Some(p)));
        }
        PipelineGraph::build(nodes, vec![data("src_a", "fct_a")]).unwrap()
    };
    let (fill, stroke) = product_colours("sales");
    // Known values: the function is fixed, not the order of the products.
    assert_eq!(product_colours("sales"), (fill, stroke));
    assert_ne!(
        flinkpipe::graph::colours::PALETTE
            .iter()
            .position(|c| *c == (fill, stroke)),
        None
    );
    let only_sales: std::collections::BTreeSet<String> =
        ["src_a".to_string(), "fct_a".to_string()].into();
    for g in [with(None), with(Some("aaa")), with(Some("zzz"))] {
        for subset in [None, Some(&only_sales)] {
            let svg = to_svg(&g, subset);
            let sales_node = svg
                .split("<g")
                .find(|part| part.contains(">src_a<"))
                .unwrap_or_else(|| panic!("{svg}"));
            assert!(
                sales_node.contains(&format!("fill=\"{fill}\"")),
                "{sales_node}"
            );
            assert!(to_html(&g, subset).contains(&format!("fill=\"{fill}\"")));
            let dot = to_dot(&g, subset);
            assert!(
                dot.contains(&format!(
                    "  subgraph \"cluster_sales\" {{\n    label=\"sales\";\n    style=\"rounded\"; color=\"{stroke}\"; fontcolor=\"{stroke}\"; penwidth=2;\n"
                )),
                "{dot}"
            );
            let mermaid = to_mermaid(&g, subset);
            let group = mermaid
                .lines()
                .find(|l| l.contains("[\"sales\"]"))
                .and_then(|l| l.trim().strip_prefix("subgraph "))
                .and_then(|l| l.split('[').next())
                .unwrap()
                .to_string();
            assert!(
                mermaid.contains(&format!(
                    "  style {group} fill:none,stroke:{stroke},stroke-width:2px,color:{stroke}\n"
                )),
                "{mermaid}"
            );
            let json = to_json(&g, subset);
            let sales = json["products"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == "sales")
                .unwrap()
                .clone();
            assert_eq!(
                sales,
                json!({"name": "sales", "fill": fill, "stroke": stroke})
            );
        }
    }
}
