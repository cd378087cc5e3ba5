//! Deploy: execute an [`ExecutionPlan`](crate::plan::ExecutionPlan) against a live target — parents
//! first, independent tables in parallel, safe under faults.
//!
//! It drives a [`crate::target::Target`] (Confluent Cloud, an SQL Gateway; the clients live in
//! [`crate::target`]) and imports no client itself.
//!
//! - [`env_sql`]: per-environment rewrite rules applied to what is sent, never to the files.
//! - [`spec`]: the statements of a plan node, read from its SQL files (`SET` → properties) and its
//!   `.properties` files (the one parser change detection uses too).
//! - [`executor`]: the ready-queue scheduler (`schedule`), the pure per-statement decision
//!   ([`executor::decide`]) and its effects; transient errors retried for as long as `--timeout`
//!   allows; failures skip descendants; a kept or journal-done parent still PENDING is awaited;
//!   Ctrl-C stops cleanly.
//! - [`journal`]: the JSON-lines record of each step that `--resume` replays, one writer at a time
//!   (an advisory lock naming its holder).
//! - [`progress`]: progress bars on a terminal, plain lines elsewhere.
//!
//! Side effects (HTTP, files, the clock) sit here; the plan stays pure.

pub mod env_sql;
pub mod executor;
pub mod journal;
pub mod progress;
pub mod spec;

pub use executor::{
    Cancel, DeployOptions, DeployReport, Interruption, NodeResult, Outcome, Session, Skip, deploy,
};
pub use spec::{DeployNode, Step, deploy_nodes};
