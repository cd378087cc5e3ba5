//! The parent and child trees of one table for `pipeline report TABLE [--children-too]`, and their text
//! rendering in the style of `cargo tree`.
//!
//! A DAG unrolled into a tree can grow exponentially, so, as `cargo tree` does, a table whose subtree was
//! already shown higher up appears again only as a leaf marked repeated (`(*)`). Trees are built
//! recursively: their depth is the longest path from the table, which pipelines keep small.

use petgraph::Direction::{self, Incoming, Outgoing};
use petgraph::graph::NodeIndex;
use serde::Serialize;

use super::model::{EdgeKind, GraphError, PipelineGraph};

/// One table in a parent or child tree. In a parent tree `children` are the table's parents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeNode {
    /// The table name.
    pub name: String,
    /// The table's layer, as in [`super::NodeInfo::layer`].
    pub layer: String,
    /// The table's product, if any.
    pub product: Option<String>,
    /// The table folder, e.g. `pipelines/facts/p1/fct_order`.
    pub path: Option<String>,
    /// True for an external table (read, never deployed).
    pub external: bool,
    /// The kind of the edge linking this table to the one above it in the tree; `None` for the root.
    pub edge: Option<EdgeKind>,
    /// True when this table's subtree is shown elsewhere in the tree (higher up, or this is a cycle back
    /// to a table being shown); `children` is then empty.
    pub repeated: bool,
    /// Parents (parent tree) or children (child tree), sorted by name.
    pub children: Vec<TreeNode>,
}

/// The tree of `name`'s ancestors: its parents, their parents, and so on, at most `max_depth` levels
/// below the root (unlimited when `None`). Errors: [`GraphError::UnknownTable`].
pub fn parent_tree(
    graph: &PipelineGraph,
    name: &str,
    max_depth: Option<usize>,
) -> Result<TreeNode, GraphError> {
    tree(graph, name, max_depth, Incoming)
}

/// The tree of `name`'s descendants; the mirror of [`parent_tree`].
pub fn child_tree(
    graph: &PipelineGraph,
    name: &str,
    max_depth: Option<usize>,
) -> Result<TreeNode, GraphError> {
    tree(graph, name, max_depth, Outgoing)
}

/// The tree as indented text, one table per line: `name (layer, product)`, then ` [LIKE]` for a LIKE
/// edge, ` [external]` for an external table and ` (*)` for a repeated one; lines end with `\n`.
///
/// ```text
/// f (fact, p2)
/// └── d (intermediate, p2)
///     ├── y (intermediate, p2)
///     │   └── src_y (source, p2)
///     └── z (intermediate, p2)
///         └── y (intermediate, p2) (*)
/// ```
pub fn render_tree_text(root: &TreeNode) -> String {
    let mut out = String::new();
    render(root, "", "", &mut out);
    out
}

fn tree(
    graph: &PipelineGraph,
    name: &str,
    max_depth: Option<usize>,
    dir: Direction,
) -> Result<TreeNode, GraphError> {
    let root = graph
        .index_of(name)
        .ok_or_else(|| GraphError::UnknownTable {
            name: name.to_string(),
        })?;
    let mut expanded = vec![false; graph.len()];
    Ok(grow(graph, root, None, 0, max_depth, dir, &mut expanded))
}

fn grow(
    graph: &PipelineGraph,
    i: NodeIndex,
    edge: Option<EdgeKind>,
    depth: usize,
    max_depth: Option<usize>,
    dir: Direction,
    expanded: &mut [bool],
) -> TreeNode {
    let info = graph.info(i);
    let next = if max_depth.is_some_and(|max| depth >= max) {
        Vec::new()
    } else {
        graph.neighbors_sorted(i, dir)
    };
    let repeated = !next.is_empty() && expanded[i.index()];
    let children = if repeated {
        Vec::new()
    } else {
        expanded[i.index()] = true;
        next.into_iter()
            .map(|(j, kind)| grow(graph, j, Some(kind), depth + 1, max_depth, dir, expanded))
            .collect()
    };
    TreeNode {
        name: info.name.clone(),
        layer: info.layer.clone(),
        product: info.product.clone(),
        path: info.path.clone(),
        external: info.external,
        edge,
        repeated,
        children,
    }
}

fn render(node: &TreeNode, first: &str, rest: &str, out: &mut String) {
    out.push_str(first);
    out.push_str(&node.name);
    match &node.product {
        Some(p) => out.push_str(&format!(" ({}, {p})", node.layer)),
        None => out.push_str(&format!(" ({})", node.layer)),
    }
    if node.edge == Some(EdgeKind::Like) {
        out.push_str(" [LIKE]");
    }
    if node.external {
        out.push_str(" [external]");
    }
    if node.repeated {
        out.push_str(" (*)");
    }
    out.push('\n');
    let last = node.children.len().saturating_sub(1);
    for (k, child) in node.children.iter().enumerate() {
        let (branch, indent) = if k == last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        render(
            child,
            &format!("{rest}{branch}"),
            &format!("{rest}{indent}"),
            out,
        );
    }
}
