//! Deploy: execute an [`ExecutionPlan`](crate::plan::ExecutionPlan) against a live target — parents
//! first, independent tables in parallel, safe under faults.
//!
//! - [`target`]: the [`Target`] trait (statements by name, phases, typed retryable/permanent errors)
//!   that every place statements run implements.
//! - [`confluent`]: Confluent Cloud for Apache Flink over its REST API (`sql/v1`).
//! - [`cloud`]: Confluent Cloud's control plane (`fcpm/v2` compute pools) and Metrics API, with a
//!   Cloud API key.
//! - [`env_sql`]: per-environment rewrite rules applied to what is sent, never to the files.
//! - [`gateway`]: an Apache Flink SQL Gateway (REST `/v2`) plus the JobManager REST API; jobs are
//!   named after statements, tables are declared in the gateway session from the project's DDL
//!   (`http`, `session`, `jobs`, [`gateway::catalog`], [`gateway::wire`]).
//! - [`metrics`]: runtime metrics of running statements (records in/out, backlog, watermark,
//!   backpressure) in one shape for both targets.
//! - [`retry`]: backoff policies (pure) and the one retry loop of both targets and the executor, by
//!   attempts or until a deadline, honouring `Retry-After`.
//! - [`secrets`]: credentials from the environment only, masked in every output (encoded forms too).
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

pub mod cloud;
pub mod confluent;
pub mod env_sql;
pub mod gateway;
pub mod metrics;
pub mod retry;
pub mod secrets;
pub mod target;

pub use confluent::{ConfluentSettings, ConfluentTarget};
pub use gateway::{GatewaySettings, GatewayTarget};
pub use retry::Backoff;
pub use secrets::{Credentials, Masked, Scrubber};
pub use target::{
    Checked, ErrorKind, Phase, Restore, Restored, StatementKind, StatementMeta, StatementSpec,
    StatementState, Target, TargetError,
};
pub mod executor;
pub mod journal;
pub mod kafka;
pub mod kafka_rest;
pub mod progress;
pub mod spec;

pub use executor::{Cancel, DeployOptions, DeployReport, NodeResult, Outcome, Session, deploy};
pub use spec::{DeployNode, Step, deploy_nodes};
