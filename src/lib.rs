//! flinkpipe: manage Apache Flink SQL pipeline projects — scan a `pipelines/` tree, build the inventory and
//! dependency graph, and plan deployments parents-first.
//!
//! The modules read as the pipeline of the work:
//! [`project`] (scan, layout) → [`sql`] (dialect, split, extract, state) → [`inventory`] → [`lineage`]
//! (references → graph) → [`graph`] (model, select, export) → [`metadata`] (shift_left files) →
//! [`plan`] (execution plan) ; [`scaffold`] creates projects and tables from templates ; [`cli`] renders
//! results.

pub mod changes;
pub mod cli;
pub mod config;
pub mod deploy;
pub mod diagnostics;
pub mod fsutil;
pub mod graph;
pub mod inventory;
pub mod lineage;
pub mod metadata;
pub mod ops;
pub mod plan;
pub mod project;
pub mod scaffold;
pub mod sql;
pub mod versioning;
