//! The graph (or a subset of it) as Graphviz DOT, Mermaid flowchart or JSON, for docs and other tools.
//!
//! Every output is deterministic: tables sorted by name, edges by parent then child. A subset keeps the
//! edges between its own tables (self-loops included) and ignores names that are not in the graph.
//! Styling is the same in DOT and Mermaid: tables grouped by product, filled by layer, external tables
//! dashed and unfilled, `LIKE` edges dashed and labelled. A statement that writes several tables (a
//! statement set) is drawn as a node of its own, `statement set: <owner>`, with a bold `writes` edge to
//! each table it writes that is drawn; in JSON it is a `statement_sets` entry.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use petgraph::Direction::Outgoing;
use petgraph::graph::NodeIndex;
use serde_json::{Value, json};

use super::colours::product_colours;
use super::model::{EdgeKind, PipelineGraph, layer_rank};

/// Style classes by [`layer_rank`], with their fill and stroke colours.
const CLASSES: [(&str, &str, &str); 7] = [
    ("source", "#d5e8d4", "#82b366"),
    ("seed", "#e1d5e7", "#9673a6"),
    ("intermediate", "#dae8fc", "#6c8ebf"),
    ("dimension", "#fff2cc", "#d6b656"),
    ("fact", "#f8cecc", "#b85450"),
    ("view", "#ffe6cc", "#d79b00"),
    ("other", "#f5f5f5", "#666666"),
];

/// The tables and edges to draw.
struct Selection<'g> {
    graph: &'g PipelineGraph,
    nodes: Vec<NodeIndex>,
    /// `(parent, child, kind)` in name order, self-loops included.
    edges: Vec<(NodeIndex, NodeIndex, EdgeKind)>,
}

impl<'g> Selection<'g> {
    fn new(graph: &'g PipelineGraph, subset: Option<&BTreeSet<String>>) -> Self {
        let mut included = vec![subset.is_none(); graph.len()];
        for i in subset
            .into_iter()
            .flatten()
            .filter_map(|n| graph.index_of(n))
        {
            included[i.index()] = true;
        }
        let nodes: Vec<NodeIndex> = graph
            .indices_all()
            .filter(|i| included[i.index()])
            .collect();
        let mut edges: Vec<_> = nodes
            .iter()
            .flat_map(|&p| {
                graph
                    .neighbors_sorted(p, Outgoing)
                    .into_iter()
                    .filter(|(c, _)| included[c.index()])
                    .map(move |(c, kind)| (p, c, kind))
            })
            .chain(
                graph
                    .self_loop_kinds()
                    .filter(|(i, _)| included[i.index()])
                    .map(|(i, kind)| (i, i, kind)),
            )
            .collect();
        edges.sort();
        Selection {
            graph,
            nodes,
            edges,
        }
    }

    /// The tables grouped by product (tables without product first), each group in name order.
    fn by_product(&self) -> BTreeMap<Option<&'g str>, Vec<NodeIndex>> {
        let mut groups: BTreeMap<Option<&str>, Vec<NodeIndex>> = BTreeMap::new();
        for &i in &self.nodes {
            groups
                .entry(self.graph.info(i).product.as_deref())
                .or_default()
                .push(i);
        }
        groups
    }

    /// The statement sets with at least two of their tables drawn: owner → those tables, in name
    /// order.
    fn statement_sets(&self) -> Vec<(&'g str, Vec<NodeIndex>)> {
        let drawn: BTreeSet<NodeIndex> = self.nodes.iter().copied().collect();
        self.graph
            .statement_sets()
            .iter()
            .filter_map(|(owner, sinks)| {
                let shown: Vec<NodeIndex> = sinks
                    .iter()
                    .filter_map(|s| self.graph.index_of(s))
                    .filter(|i| drawn.contains(i))
                    .collect();
                (shown.len() > 1).then_some((owner.as_str(), shown))
            })
            .collect()
    }

    /// The style class of a table: `external`, or its layer's entry in [`CLASSES`].
    fn class(&self, i: NodeIndex) -> &'static str {
        let info = self.graph.info(i);
        if info.external {
            "external"
        } else {
            CLASSES[usize::from(layer_rank(&info.layer))].0
        }
    }
}

/// The graph as a Graphviz `digraph`: one `cluster_<product>` subgraph per product, tables filled by
/// layer (tooltip = layer), external tables dashed, `LIKE` edges dashed with a `LIKE` label.
/// Names are double-quoted with `"` and `\` escaped, so dots and dashes are safe.
pub fn to_dot(graph: &PipelineGraph, subset: Option<&BTreeSet<String>>) -> String {
    let sel = Selection::new(graph, subset);
    let mut out = String::from("digraph pipeline {\n");
    out.push_str("  rankdir=LR;\n");
    out.push_str("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
    let node_line = |i: NodeIndex, indent: &str| {
        let info = graph.info(i);
        let style = match sel.class(i) {
            "external" => {
                "fillcolor=\"#ffffff\", color=\"#666666\", style=\"rounded,dashed\"".to_string()
            }
            class => {
                let (_, fill, stroke) = CLASSES.iter().find(|c| c.0 == class).expect("a class");
                format!("fillcolor=\"{fill}\", color=\"{stroke}\"")
            }
        };
        format!(
            "{indent}{} [{style}, tooltip={}];\n",
            dot_quote(&info.name),
            dot_quote(&info.layer)
        )
    };
    for (product, nodes) in sel.by_product() {
        match product {
            Some(p) => {
                let _ = writeln!(out, "  subgraph {} {{", dot_quote(&format!("cluster_{p}")));
                let _ = writeln!(out, "    label={};", dot_quote(p));
                // The product's stroke as the cluster's border and label (nodes keep their layer
                // fill, which a filled cluster would hide).
                let (_, stroke) = product_colours(p);
                let _ = writeln!(
                    out,
                    "    style=\"rounded\"; color=\"{stroke}\"; fontcolor=\"{stroke}\"; penwidth=2;"
                );
                for &i in &nodes {
                    out.push_str(&node_line(i, "    "));
                }
                out.push_str("  }\n");
            }
            None => {
                for &i in &nodes {
                    out.push_str(&node_line(i, "  "));
                }
            }
        }
    }
    for &(p, c, kind) in &sel.edges {
        let attrs = match kind {
            EdgeKind::Data => "",
            EdgeKind::Like => " [style=dashed, label=\"LIKE\"]",
        };
        let _ = writeln!(
            out,
            "  {} -> {}{attrs};",
            dot_quote(graph.name(p)),
            dot_quote(graph.name(c))
        );
    }
    for (owner, sinks) in sel.statement_sets() {
        let id = dot_quote(&format!("statement set: {owner}"));
        let _ = writeln!(
            out,
            "  {id} [shape=cds, style=filled, fillcolor=\"{STATEMENT_FILL}\", color=\"{STATEMENT_STROKE}\", tooltip=\"one statement writes these tables\"];"
        );
        for i in sinks {
            let _ = writeln!(
                out,
                "  {id} -> {} [style=bold, color=\"{STATEMENT_STROKE}\", label=\"writes\"];",
                dot_quote(graph.name(i))
            );
        }
    }
    out.push_str("}\n");
    out
}

/// Fill and stroke of a statement-set node.
const STATEMENT_FILL: &str = "#ede7f6";
const STATEMENT_STROKE: &str = "#5e35b1";

/// The graph as a Mermaid `flowchart LR`: tables get ids `n0, n1, …` (in name order) and their names as
/// quoted labels, so no name can break the syntax; one `subgraph` per product; a `classDef` per layer
/// used, plus `external` (dashed, unfilled); `LIKE` edges dotted with a `LIKE` label.
pub fn to_mermaid(graph: &PipelineGraph, subset: Option<&BTreeSet<String>>) -> String {
    let sel = Selection::new(graph, subset);
    let id: BTreeMap<NodeIndex, usize> =
        sel.nodes.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut out = String::from("flowchart LR\n");
    let mut groups = 0;
    let mut group_styles = Vec::new();
    for (product, nodes) in sel.by_product() {
        let indent = match product {
            Some(p) => {
                let _ = writeln!(out, "  subgraph g{groups}[\"{}\"]", mermaid_text(p));
                let (_, stroke) = product_colours(p);
                group_styles.push(format!(
                    "  style g{groups} fill:none,stroke:{stroke},stroke-width:2px,color:{stroke}"
                ));
                groups += 1;
                "    "
            }
            None => "  ",
        };
        for i in nodes {
            let _ = writeln!(
                out,
                "{indent}n{}[\"{}\"]",
                id[&i],
                mermaid_text(graph.name(i))
            );
        }
        if product.is_some() {
            out.push_str("  end\n");
        }
    }
    for &(p, c, kind) in &sel.edges {
        let arrow = match kind {
            EdgeKind::Data => "-->",
            EdgeKind::Like => "-.->|LIKE|",
        };
        let _ = writeln!(out, "  n{} {arrow} n{}", id[&p], id[&c]);
    }
    for style in group_styles {
        let _ = writeln!(out, "{style}");
    }
    let sets = sel.statement_sets();
    for (k, (owner, sinks)) in sets.iter().enumerate() {
        let _ = writeln!(out, "  s{k}[[\"statement set: {}\"]]", mermaid_text(owner));
        for i in sinks {
            let _ = writeln!(out, "  s{k} ==>|writes| n{}", id[i]);
        }
    }
    let mut members: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for &i in &sel.nodes {
        members
            .entry(sel.class(i))
            .or_default()
            .push(format!("n{}", id[&i]));
    }
    let defs = CLASSES
        .iter()
        .map(|&(class, fill, stroke)| (class, format!("fill:{fill},stroke:{stroke}")))
        .chain([(
            "external",
            "fill:#ffffff,stroke:#666666,stroke-dasharray:5 5".to_string(),
        )]);
    for (class, def) in defs {
        if let Some(ids) = members.get(class) {
            let _ = writeln!(out, "  classDef {class} {def}");
            let _ = writeln!(out, "  class {} {class}", ids.join(","));
        }
    }
    if !sets.is_empty() {
        let ids: Vec<String> = (0..sets.len()).map(|k| format!("s{k}")).collect();
        let _ = writeln!(
            out,
            "  classDef statementset fill:{STATEMENT_FILL},stroke:{STATEMENT_STROKE}"
        );
        let _ = writeln!(out, "  class {} statementset", ids.join(","));
    }
    out
}

/// The graph as JSON: `{"nodes": [NodeInfo…], "edges": [{"parent", "child", "kind"}…]}`, nodes sorted by
/// name, edges by parent then child, `kind` being `"data"` or `"like"`; with
/// `"statement_sets": [{"statement": owner, "tables": […]}…]` when statement sets are drawn. Self-loops appear as edges whose
/// parent is their child.
pub fn to_json(graph: &PipelineGraph, subset: Option<&BTreeSet<String>>) -> Value {
    let sel = Selection::new(graph, subset);
    let nodes: Vec<Value> = sel
        .nodes
        .iter()
        .map(|&i| serde_json::to_value(graph.info(i)).expect("NodeInfo serialises"))
        .collect();
    let edges: Vec<Value> = sel
        .edges
        .iter()
        .map(|&(p, c, kind)| json!({"parent": graph.name(p), "child": graph.name(c), "kind": kind}))
        .collect();
    let sets: Vec<Value> = sel
        .statement_sets()
        .into_iter()
        .map(|(owner, sinks)| {
            json!({
                "statement": owner,
                "tables": sinks.iter().map(|&i| graph.name(i)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let products: BTreeSet<&str> = sel
        .nodes
        .iter()
        .filter_map(|&i| graph.info(i).product.as_deref())
        .collect();
    let products: Vec<Value> = products
        .into_iter()
        .map(|p| {
            let (fill, stroke) = product_colours(p);
            json!({"name": p, "fill": fill, "stroke": stroke})
        })
        .collect();
    if sets.is_empty() {
        json!({ "nodes": nodes, "edges": edges, "products": products })
    } else {
        json!({ "nodes": nodes, "edges": edges, "statement_sets": sets, "products": products })
    }
}

/// A DOT quoted ID: `"` and `\` escaped, line breaks as `\n`.
fn dot_quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for ch in s.chars() {
        match ch {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\r' => {}
            _ => q.push(ch),
        }
    }
    q.push('"');
    q
}

/// Text safe inside a Mermaid `["…"]` label: characters Mermaid would interpret become entity codes.
fn mermaid_text(s: &str) -> String {
    let mut t = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '#' => t.push_str("#35;"),
            '"' => t.push_str("#quot;"),
            '<' => t.push_str("#lt;"),
            '>' => t.push_str("#gt;"),
            '`' => t.push_str("#96;"),
            '\n' | '\r' => t.push(' '),
            _ => t.push(ch),
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_quoting_escapes_quotes_and_backslashes() {
        assert_eq!(dot_quote("cat.db.t-1"), r#""cat.db.t-1""#);
        assert_eq!(dot_quote(r#"a"b\c"#), r#""a\"b\\c""#);
    }

    #[test]
    fn mermaid_text_uses_entity_codes() {
        assert_eq!(mermaid_text("a.b-c"), "a.b-c");
        assert_eq!(mermaid_text(r##"x"#y<z>`"##), "x#quot;#35;y#lt;z#gt;#96;");
    }
}
