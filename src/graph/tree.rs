//! The parent and child trees of one table for `pipeline report TABLE [--children-too]`, and their text
//! rendering in the style of `cargo tree`.
//!
//! A DAG unrolled into a tree can grow exponentially, so, as `cargo tree` does, a table whose subtree was
//! already shown higher up appears again only as a leaf marked repeated (`(*)`): a tree has at most one
//! expanded entry per table, so its size is O(N + E).
//!
//! Depth: a chain of N tables gives a tree N levels deep (1,000,000 in the scale tests). Building,
//! rendering and dropping a tree use explicit stacks, never one call frame per level. The text
//! indents at most [`TEXT_INDENT_LIMIT`] levels (deeper lines say their depth), so its size stays
//! linear in the number of lines. Serialising a tree (`--output json`) nests one object per level, which
//! recurses in the serialiser and in every JSON reader: callers check [`TreeNode::depth`] against
//! [`MAX_JSON_DEPTH`] first.

use petgraph::Direction::{self, Incoming, Outgoing};
use petgraph::graph::NodeIndex;
use serde::Serialize;

use super::model::{EdgeKind, GraphError, PipelineGraph};

/// The deepest tree (in levels below the root) that `pipeline report --output json` writes: 1,000.
/// Each level is an object inside a `children` array, so JSON readers need twice that nesting: Python's
/// `json` stops near 1,000 levels, serde_json at 128 by default, jq at 10,000. Real pipelines are a few
/// dozen levels deep; a deeper tree is refused with its depth (the flat form is
/// `pipeline graph --select +TABLE --format json`).
pub const MAX_JSON_DEPTH: usize = 1_000;

/// The deepest level the text rendering indents: 64. A line deeper than that starts with its depth
/// (`[depth 65] `) and shows the guide lines of its 64 nearest levels only, so a 1,000,000-level chain
/// prints 1,000,000 lines of bounded width instead of terabytes of indentation.
pub const TEXT_INDENT_LIMIT: usize = 64;

/// One table in a parent or child tree. In a parent tree `children` are the table's parents.
///
/// Dropping a tree is iterative (any depth). `Clone`, `==` and `Serialize` recurse once per level:
/// use them on trees of bounded depth (see [`MAX_JSON_DEPTH`]).
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

impl TreeNode {
    /// The number of levels below this node (0 for a leaf). Iterative.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack: Vec<(&TreeNode, usize)> = vec![(self, 0)];
        while let Some((node, depth)) = stack.pop() {
            deepest = deepest.max(depth);
            stack.extend(node.children.iter().map(|c| (c, depth + 1)));
        }
        deepest
    }
}

impl Drop for TreeNode {
    /// Frees the subtree level by level: the default drop recurses once per level.
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.children);
        while let Some(mut node) = stack.pop() {
            stack.append(&mut node.children);
        }
    }
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
    // (node, depth, last among its siblings); `last_at[d]` is whether the open node at depth d is the
    // last of its siblings, which decides the guide line drawn below it.
    let mut stack: Vec<(&TreeNode, usize, bool)> = vec![(root, 0, true)];
    let mut last_at: Vec<bool> = Vec::new();
    while let Some((node, depth, last)) = stack.pop() {
        last_at.truncate(depth);
        last_at.push(last);
        if depth > 0 {
            if depth > TEXT_INDENT_LIMIT {
                out.push_str(&format!("[depth {depth}] "));
            }
            let first_shown = depth.saturating_sub(TEXT_INDENT_LIMIT).max(1);
            for &open_last in &last_at[first_shown..depth] {
                out.push_str(if open_last { "    " } else { "│   " });
            }
            out.push_str(if last { "└── " } else { "├── " });
        }
        line(node, &mut out);
        let n = node.children.len();
        stack.extend(
            node.children
                .iter()
                .enumerate()
                .rev()
                .map(|(k, c)| (c, depth + 1, k + 1 == n)),
        );
    }
    out
}

/// `name (layer, product) [LIKE] [external] (*)` and a newline.
fn line(node: &TreeNode, out: &mut String) {
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
    // Depth-first, children in name order, exactly as a recursive walk would (a table is expanded
    // where it is met first), with an explicit stack: a chain of a million tables is a million levels.
    let mut stack = vec![Frame::open(
        graph,
        root,
        None,
        0,
        max_depth,
        dir,
        &mut expanded,
    )];
    loop {
        let top = stack.last_mut().expect("the root frame is popped last");
        if let Some((j, kind)) = top.next.pop() {
            let depth = top.depth + 1;
            let frame = Frame::open(graph, j, Some(kind), depth, max_depth, dir, &mut expanded);
            stack.push(frame);
            continue;
        }
        let done = stack.pop().expect("not empty").finish(graph);
        match stack.last_mut() {
            Some(parent) => parent.built.push(done),
            None => return Ok(done),
        }
    }
}

/// A node being built: its table, its neighbours still to visit and the subtrees built so far.
struct Frame {
    i: NodeIndex,
    edge: Option<EdgeKind>,
    depth: usize,
    repeated: bool,
    /// Neighbours not visited yet, in reverse name order (visited by popping).
    next: Vec<(NodeIndex, EdgeKind)>,
    built: Vec<TreeNode>,
}

impl Frame {
    /// Opens `i`: the neighbours to expand, unless the depth limit is reached or `i` was expanded
    /// already (then it is a repeated leaf).
    fn open(
        graph: &PipelineGraph,
        i: NodeIndex,
        edge: Option<EdgeKind>,
        depth: usize,
        max_depth: Option<usize>,
        dir: Direction,
        expanded: &mut [bool],
    ) -> Frame {
        let mut next = if max_depth.is_some_and(|max| depth >= max) {
            Vec::new()
        } else {
            graph.neighbors_sorted(i, dir)
        };
        let repeated = !next.is_empty() && expanded[i.index()];
        if repeated {
            next.clear();
        } else {
            expanded[i.index()] = true;
        }
        next.reverse();
        Frame {
            i,
            edge,
            depth,
            repeated,
            built: Vec::with_capacity(next.len()),
            next,
        }
    }

    fn finish(self, graph: &PipelineGraph) -> TreeNode {
        let info = graph.info(self.i);
        TreeNode {
            name: info.name.clone(),
            layer: info.layer.clone(),
            product: info.product.clone(),
            path: info.path.clone(),
            external: info.external,
            edge: self.edge,
            repeated: self.repeated,
            children: self.built,
        }
    }
}
