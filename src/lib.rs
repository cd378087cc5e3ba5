//! flinkpipe: manage Apache Flink SQL pipeline projects — scan a `pipelines/` tree, build the inventory and
//! dependency graph, and plan deployments parents-first.

pub mod graph;
pub mod sql;
