//! The dependency graph of a pipelines project (petgraph): parents before children.
