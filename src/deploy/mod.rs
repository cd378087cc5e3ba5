//! Deploy: execute an [`ExecutionPlan`](crate::plan::ExecutionPlan) against a live target — parents
//! first, independent tables in parallel, safe under faults.
//!
//! - [`target`]: the [`Target`] trait (statements by name, phases, typed retryable/permanent errors)
//!   that every place statements run implements.
//! - [`confluent`]: Confluent Cloud for Apache Flink over its REST API (`sql/v1`).
//! - [`gateway`]: an Apache Flink SQL Gateway (REST `/v2`) plus the JobManager REST API; jobs are
//!   named after statements, tables are declared in the gateway session from the project's DDL.
//! - [`retry`]: backoff policies (pure).
//! - [`secrets`]: credentials from the environment only, masked in every output.
//! - [`spec`]: the statements of a plan node, read from its SQL files (`SET` → properties).
//! - [`executor`]: the ready-queue scheduler: a node starts when its parents are done, up to
//!   `max_parallel` at once; per-statement timeouts; failures skip descendants; Ctrl-C stops cleanly.
//! - [`journal`]: the JSON-lines record of each step that `--resume` replays.
//! - [`progress`]: progress bars on a terminal, plain lines elsewhere.
//!
//! Side effects (HTTP, files, the clock) sit here; the plan stays pure.

pub mod confluent;
pub mod gateway;
pub mod retry;
pub mod secrets;
pub mod target;

pub use confluent::{ConfluentSettings, ConfluentTarget};
pub use gateway::{GatewaySettings, GatewayTarget};
pub use retry::Backoff;
pub use secrets::{Credentials, Masked, Scrubber};
pub use target::{
    ErrorKind, Phase, StatementKind, StatementSpec, StatementState, Target, TargetError,
};
pub mod executor;
pub mod journal;
pub mod progress;
pub mod spec;

pub use executor::{Cancel, DeployOptions, DeployReport, NodeResult, Outcome, Session, deploy};
pub use spec::{DeployNode, Step, deploy_nodes};
