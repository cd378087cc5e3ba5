//! flinkpipe: manage Apache Flink SQL pipeline projects — scan a `pipelines/` tree, build the inventory
//! and dependency graph, version changed subgraphs for blue-green, plan and deploy them to Confluent
//! Cloud for Apache Flink or an Apache Flink SQL Gateway.
//!
//! The modules read as the pipeline of the work:
//! [`project`] (layout, scan, analysis cache, `load` → [`project::Project`]) → [`sql`] (split, dialect, extract, state, rewrite) →
//! [`inventory`] (tables, name resolution, shift_left's `inventory.json`) → [`lineage`] (references →
//! graph) → [`graph`] (model, select, export) → [`metadata`] (shift_left's `pipeline_definition.json`)
//! → [`changes`] (git diffs, classification, impact) → [`versioning`] (blue-green rewrite, release
//! record) → [`plan`] (execution plan, statement names and phases) → [`deploy`] (executor, journal,
//! targets: Confluent Cloud, SQL Gateway).
//!
//! Around them: [`config`] (`config.yaml`), [`diagnostics`] (errors and warnings with file and line),
//! [`fsutil`] (atomic, all-or-nothing writes), [`scaffold`] (projects and tables from templates).
//! [`ops`] is the operations layer — one module per command, typed requests and reports — and [`cli`]
//! the thin command line on top of it.

pub mod changes;
pub mod cli;
pub mod config;
pub mod deploy;
pub mod diagnostics;
pub mod engine_plan;
pub mod fsutil;
pub mod graph;
pub mod inventory;
pub mod lineage;
pub mod livetest;
pub mod metadata;
pub mod ops;
pub mod plan;
pub mod project;
pub mod results;
pub mod scaffold;
pub mod scan;
pub mod sql;
pub mod target;
pub mod time;
pub mod unittest;
pub mod versioning;
