//! The dependency graph of a pipelines project (petgraph): parents before children.
//!
//! - [`model`]: the graph of tables and parent → child edges, its traversals and orderings (topological
//!   order, waves, cycles).
//! - [`select`]: dbt's node-selection grammar (`+t`, `t+2`, `@t`, `product:p1`, `+t,layer:fact`, …).
//!
//! Pure library code: no I/O. The inventory builds the nodes and edges; the planner and the CLI consume the
//! orderings.

pub mod model;
pub mod select;

pub use model::{EdgeKind, GraphError, NodeInfo, PipelineGraph, canonical_layer, layer_rank};
pub use select::{SelectError, select};
