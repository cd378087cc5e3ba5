//! The dependency graph of a pipelines project (petgraph): parents before children.
//!
//! - [`model`]: the graph of tables and parent → child edges, its traversals and orderings (topological
//!   order, waves, cycles).
//! - [`mod@select`]: dbt's node-selection grammar (`+t`, `t+2`, `@t`, `product:p1`, `+t,layer:fact`, …).
//! - [`statements`]: the statement level: which statement (a DML file, a CTAS) writes which tables, and
//!   the closure of a set of tables under descendants and statement sets.
//! - [`export`]: DOT, Mermaid and JSON renderings of the graph or a subset.
//! - [`svg`], [`html`]: a picture laid out in-process (layers in columns, products as colours) and a
//!   self-contained lineage page with search and ancestor/descendant highlighting.
//! - [`tree`]: a table's parent and child trees for `pipeline report`, and their `cargo tree`-like text.
//!
//! Pure library code: no I/O. The inventory builds the nodes and edges; the planner and the CLI consume the
//! orderings.

pub mod colours;
pub mod export;
pub mod html;
pub mod model;
pub mod select;
pub mod statements;
pub mod svg;
pub mod tree;

pub use export::{to_dot, to_json, to_mermaid};
pub use html::to_html;
pub use model::{EdgeKind, GraphError, NodeInfo, PipelineGraph, canonical_layer, layer_rank};
pub use select::{SelectError, closest, select, select_noting};
pub use statements::{Reached, StatementIndex};
pub use svg::to_svg;
pub use tree::{
    MAX_JSON_DEPTH, TEXT_INDENT_LIMIT, TreeNode, child_tree, parent_tree, render_tree_text,
};
