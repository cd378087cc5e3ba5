//! Targets: where statements run, and the clients that talk to them. A [`Target`] knows statements by
//! **name** (the idempotency key: Confluent's statement names,
//! <https://docs.confluent.io/cloud/current/flink/reference/statements.html>) and speaks in Confluent's
//! phase vocabulary ([`Phase`]); a target with another model maps onto it (the Flink SQL Gateway: a job
//! named after the statement via `pipeline.name`; job states mapped by [`gateway::wire::job_phase`]:
//! RUNNING → RUNNING, FINISHED → COMPLETED or (after a stop with savepoint) STOPPED, FAILED → FAILED,
//! CANCELED → absent (a delete); "stop" = `STOP JOB … WITH SAVEPOINT`, "resume" = re-execute with the
//! savepoint path; no 409, so [`Target::create_statement`] reports a running job of that name as
//! [`TargetError::AlreadyExists`] itself).
//!
//! - [`confluent`]: Confluent Cloud for Apache Flink over its REST API (`sql/v1`), results included.
//! - [`cloud`]: Confluent Cloud's control plane (`fcpm/v2` compute pools, environments) and the
//!   statement metrics of its Metrics API, with a Cloud API key.
//! - [`gateway`]: an Apache Flink SQL Gateway (REST `/v2`) plus the JobManager REST API.
//! - [`metrics`]: runtime metrics of running statements in one shape for both targets.
//! - [`kafka`], [`kafka_rest`]: topics and consumer groups, over the Kafka protocol and over Confluent's
//!   Kafka REST API v3.
//! - [`read`]: a statement's result pages ([`ResultStream`]) read until a stop condition (end, limit,
//!   idle, timeout), folded by [`crate::results`].
//! - [`retry`]: backoff policies (pure) and the one retry loop of both targets and the deploy executor.
//! - [`secrets`]: credentials from the environment only, masked in every output (encoded forms too).
//! - [`settings`]: each target's settings from `config.yaml` and the environment.
//!
//! The deploy engine that drives a target through a plan is [`crate::deploy`]; it imports no client.

pub mod cloud;
pub mod confluent;
pub mod gateway;
pub mod kafka;
pub mod kafka_rest;
pub mod materialized;
pub mod metrics;
pub mod read;
pub mod retry;
pub mod secrets;
pub mod settings;

pub use confluent::{ConfluentSettings, ConfluentTarget};
pub use gateway::{GatewaySettings, GatewayTarget};
pub use read::{Page, QueryResult, ReadOptions, ResultStream, StopReason};
pub use retry::Backoff;
pub use secrets::{Credentials, Masked, Scrubber};

use async_trait::async_trait;
use retry::{Retryable, Transient};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Whether a statement defines objects (runs to COMPLETED) or moves data (runs until stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatementKind {
    /// `CREATE TABLE` (without AS), `CREATE VIEW`, `ALTER`, `DROP`: success is COMPLETED.
    Ddl,
    /// `INSERT INTO`, `CREATE TABLE … AS`, `EXECUTE STATEMENT SET`: success is RUNNING (a bounded
    /// statement may also reach COMPLETED, which counts as success).
    Dml,
}

/// What to create: the statement's name, SQL text and properties (string → string, as Confluent
/// requires, <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>).
/// Target-wide settings (compute pool, principal, catalog and database) are added by
/// the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementSpec {
    /// The statement name (`dev-usw2-p1-dml-fct-order`), valid for Confluent (≤ 100, `[a-z0-9-.]`).
    pub name: String,
    /// The SQL text, one statement (or one `EXECUTE STATEMENT SET`).
    pub sql: String,
    /// Statement properties (`sql.tables.initial-offset-from`, `sql.state-ttl`, …).
    pub properties: BTreeMap<String, String>,
    /// DDL or DML: decides what "done" means.
    pub kind: StatementKind,
    /// The compute pool it runs in (`lfcp-…`; `--compute-pool-id`, `flinkpipe.compute_pools`, shown in
    /// the plan); `None`: the target's default (`flink.compute_pool_id`, else the environment's
    /// default pool). Targets without pools ignore it.
    #[serde(default)]
    pub compute_pool: Option<String>,
}

pub use crate::plan::status::Phase;

/// What the target says about one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementState {
    /// The statement name.
    pub name: String,
    /// The current phase.
    pub phase: Phase,
    /// `status.detail`: the error text on FAILED, a hint while PENDING; may be empty.
    pub detail: String,
    /// The deployed SQL text (`spec.statement`).
    pub sql: String,
    /// The deployed properties (`spec.properties`).
    pub properties: BTreeMap<String, String>,
    /// `spec.stopped`: a stop (or resume) was requested.
    pub stopped: bool,
    /// What only some targets report (pool, creation time, pool exhaustion).
    #[serde(default)]
    pub meta: StatementMeta,
}

/// Facts about a statement beyond its phase that Confluent Cloud reports and the SQL Gateway does not
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>); empty on targets
/// that cannot tell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementMeta {
    /// `spec.compute_pool_id`: the pool it runs in.
    pub compute_pool_id: Option<String>,
    /// `metadata.created_at` (RFC 3339, UTC), for housekeeping by age.
    pub created_at: Option<String>,
    /// `status.scaling_status.scaling_state` is `POOL_EXHAUSTED`: PENDING because its compute pool has
    /// no CFU left (a PENDING statement with `POOL_EXHAUSTED` waits for a full pool:
    /// <https://docs.confluent.io/cloud/current/flink/concepts/statements.html>).
    pub pool_exhausted: bool,
    /// What the server says beyond the phase: state limits, warnings, the offsets of a stopped
    /// statement (the exceptions are read on demand, [`Target::exceptions`]). Boxed: most states
    /// have none, and states are moved around a lot.
    #[serde(default)]
    pub notes: Box<ServerNotes>,
}

/// What Confluent Cloud says about a statement besides its phase and `status.detail`
/// (`sql/v1` `StatementStatus`, <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>);
/// every text masked ([`secrets::ServerText`]). Empty on targets that cannot tell; each field left
/// out of JSON when empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerNotes {
    /// `status.state_limit_status`: how close the statement's state is to its limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_limit: Option<StateLimitStatus>,
    /// `status.warnings`: non-fatal issues (e.g. `MISSING_WINDOW_START_END`), as the server lists
    /// them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<StatementWarning>,
    /// `status.latest_offsets`: per topic, `partition:0,offset:100;partition:1,offset:200` — the
    /// positions a resume or a carry-over starts from; filled only once the statement is stopped.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub latest_offsets: BTreeMap<String, String>,
    /// `status.latest_offsets_timestamp` (RFC 3339, UTC); `None` when absent or the zero time the
    /// service sends before any offsets were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_offsets_timestamp: Option<String>,
    /// `GET …/statements/{name}/exceptions`: the newest first (at most 10), read for statements
    /// that failed or are degraded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exceptions: Vec<StatementException>,
}

impl ServerNotes {
    /// Nothing worth showing.
    pub fn is_empty(&self) -> bool {
        self.lines().is_empty()
    }

    /// The notes as lines of text, most urgent first: the newest exception, a state limit other
    /// than `OK`, each warning, the offsets of a stopped statement.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = self.exceptions.first() {
            out.push(format!(
                "exception{}: {}{}",
                e.timestamp
                    .as_deref()
                    .map(|t| format!(" at {t}"))
                    .unwrap_or_default(),
                if e.name.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", e.name)
                },
                e.message
            ));
            if self.exceptions.len() > 1 {
                out.push(format!(
                    "{} older exception(s) (--output json lists them)",
                    self.exceptions.len() - 1
                ));
            }
        }
        if let Some(l) = &self.state_limit
            && l.state != StateLimit::Ok
        {
            out.push(format!(
                "state {}{}",
                l.state.as_str(),
                if l.detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", l.detail)
                }
            ));
        }
        for w in &self.warnings {
            out.push(format!(
                "warning {} {}: {}",
                w.severity.as_str(),
                w.reason,
                w.message
            ));
        }
        if !self.latest_offsets.is_empty() {
            let offsets: Vec<String> = self
                .latest_offsets
                .iter()
                .map(|(t, o)| format!("{t} {o}"))
                .collect();
            out.push(format!(
                "stopped at offsets{}: {}",
                self.latest_offsets_timestamp
                    .as_deref()
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default(),
                offsets.join("; ")
            ));
        }
        out
    }
}

/// An open set of names the server may extend (`x-extensible-enum` in Confluent's OpenAPI spec): the
/// known ones as variants, any other kept as sent.
macro_rules! extensible_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $($(#[$vm])* $v,)+
            /// A value this version does not know, as sent (upper-cased).
            Unknown(String),
        }

        impl $name {
            /// The wire name.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$v => $s,)+
                    $name::Unknown(s) => s,
                }
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                match s.to_ascii_uppercase().as_str() {
                    $($s => $name::$v,)+
                    other => $name::Unknown(other.to_string()),
                }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.as_str().to_string()
            }
        }
    };
}

extensible_enum! {
    /// `status.state_limit_status.state_limit_state`.
    StateLimit {
        /// Within the state limits.
        Ok = "OK",
        /// Approaching the soft limit.
        ApproachingSoftLimit = "APPROACHING_SOFT_LIMIT",
        /// Exceeding the soft limit.
        ExceedingSoftLimit = "EXCEEDING_SOFT_LIMIT",
        /// Approaching the hard limit.
        ApproachingHardLimit = "APPROACHING_HARD_LIMIT",
        /// Exceeding the hard limit.
        ExceedingHardLimit = "EXCEEDING_HARD_LIMIT",
    }
}

extensible_enum! {
    /// `status.warnings[].severity`.
    WarningSeverity {
        /// For information.
        Low = "LOW",
        /// May require action; can degrade the statement.
        Moderate = "MODERATE",
        /// Requires action: the statement will degrade.
        Critical = "CRITICAL",
    }
}

/// `status.state_limit_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateLimitStatus {
    /// `state_limit_state`.
    pub state: StateLimit,
    /// `detail`: why (masked server text); may be empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// One of `status.warnings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementWarning {
    pub severity: WarningSeverity,
    /// Machine-readable, e.g. `MISSING_WINDOW_START_END`.
    pub reason: String,
    /// Human text (masked).
    pub message: String,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// One exception of `GET …/statements/{name}/exceptions` (`StatementException`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementException {
    /// e.g. `java.lang.RuntimeException`.
    pub name: String,
    /// The error message (masked).
    pub message: String,
    /// When it occurred (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

pub use crate::plan::Restore;

/// Where a job restored its state from (SQL Gateway: `GET /jobs/{id}/checkpoints` →
/// `latest.restored`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The job (its id on the JobManager).
    pub job: String,
    /// The savepoint or checkpoint path (`external_path`).
    pub path: String,
    /// It is a savepoint (`is_savepoint`), not a checkpoint of the job's own.
    pub savepoint: bool,
}

/// What a dry run ([`Target::dry_run_statement`]) says about a statement the target accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum Checked {
    /// The server parsed and validated it (Confluent: `sql.dry-run=true` answered COMPLETED; gateway:
    /// `EXPLAIN` planned it).
    Valid,
    /// The target has no way to check this statement without running it; the text says why.
    NotChecked(String),
}

/// Whether an error is worth retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// 429, 5xx, connection errors, timeouts: the same request may succeed later.
    Retryable,
    /// 400, 401, 403, 422, bad configuration: retrying cannot help.
    Permanent,
}

/// A failed target call, or a statement that did not reach the phase waited for. Messages never contain secrets (they pass through the scrubber) and end with
/// the server's request id when there is one.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TargetError {
    /// The statement does not exist (404).
    #[error("statement {0} does not exist")]
    NotFound(String),
    /// A statement of that name exists already (409 on create).
    #[error("statement {0} already exists")]
    AlreadyExists(String),
    /// The server answered with an error status.
    #[error("{method} {path}: HTTP {status}: {message}")]
    Http {
        /// `GET`, `POST`, ….
        method: String,
        /// The URL path (no query, no host).
        path: String,
        /// The HTTP status.
        status: u16,
        /// The server's error details (joined), with its request id; scrubbed of secrets.
        message: String,
        /// Retryable or permanent.
        kind: ErrorKind,
        /// The server's `Retry-After` (a retryable answer may carry one).
        retry_after: Option<Duration>,
    },
    /// No answer: connection refused or reset, timeout. For a POST the outcome is unknown.
    #[error("{method} {path}: {message}")]
    Transport {
        /// `GET`, `POST`, ….
        method: String,
        /// The URL path.
        path: String,
        /// What happened (timeout, connection refused or reset); scrubbed of secrets.
        message: String,
    },
    /// Configuration or usage problem found before any call (missing key, bad URL, refused redirect).
    #[error("{0}")]
    Config(String),
    /// The target's planner rejects the statement ([`Target::validate_statement`]): the cause.
    #[error("{0}")]
    Invalid(String),
    /// A throw-away statement (a dry run) could not be deleted: it is left behind under `name`.
    #[error(
        "the throw-away statement {name} could not be deleted and is left behind ({cause}); delete it with `flinkpipe statement delete {name}`"
    )]
    Leftover {
        /// The statement left behind.
        name: String,
        /// Why the delete failed.
        cause: String,
    },
    /// A statement that was waited for ([`crate::deploy::executor::wait_until`]) FAILED.
    #[error("{name}: {phase}: {detail}")]
    Failed {
        /// The statement.
        name: String,
        /// The phase seen (FAILED).
        phase: Phase,
        /// `status.detail`: why.
        detail: String,
    },
    /// A statement that was waited for did not get there in time.
    #[error(
        "{name}: timed out after {}s (phase {})",
        after.as_secs(),
        crate::plan::status::phase_or_absent(phase.as_ref())
    )]
    TimedOut {
        /// The statement.
        name: String,
        /// How long it was waited for.
        after: Duration,
        /// The last phase seen (`None`: absent).
        phase: Option<Phase>,
    },
}

impl TargetError {
    /// Retryable or permanent.
    pub fn kind(&self) -> ErrorKind {
        match self {
            TargetError::Http { kind, .. } => *kind,
            TargetError::Transport { .. } => ErrorKind::Retryable,
            _ => ErrorKind::Permanent,
        }
    }

    /// Shorthand for `kind() == Retryable`.
    pub fn is_retryable(&self) -> bool {
        self.kind() == ErrorKind::Retryable
    }
}

impl Retryable for TargetError {
    /// `HTTP <status>` for a retryable answer (with its `Retry-After`), `no answer` for a transport
    /// error; `None` for everything else.
    fn transient(&self) -> Option<Transient> {
        match self {
            TargetError::Http {
                status,
                kind: ErrorKind::Retryable,
                retry_after,
                ..
            } => Some(Transient {
                cause: format!("HTTP {status}"),
                retry_after: *retry_after,
            }),
            TargetError::Transport { .. } => Some(Transient {
                cause: "no answer".into(),
                retry_after: None,
            }),
            _ => None,
        }
    }
}

/// A place statements run. Every method is one logical operation, already retried where that is safe
/// (GET, DELETE, list on 429/5xx/connection errors); create is never blindly retried.
#[async_trait]
pub trait Target: Send + Sync {
    /// A short description for messages, e.g. `confluent cloud env-abc123 (https://flink…)`; no secret.
    fn describe(&self) -> String;

    /// Every statement the target knows in this environment, with phases: one paginated listing, not
    /// one call per statement.
    async fn list_statements(&self) -> Result<Vec<StatementState>, TargetError>;

    /// The statements flinkpipe created in this environment — on Confluent Cloud those carrying its
    /// label ([`confluent::FLINKPIPE_LABEL`]), filtered by the server (`label_selector`): one short
    /// listing in an environment shared with other teams. Statements made by other tools are not
    /// among them. Targets without labels list every statement (the default).
    async fn list_own_statements(&self) -> Result<Vec<StatementState>, TargetError> {
        self.list_statements().await
    }

    /// One statement; `Ok(None)` when it does not exist.
    async fn get_statement(&self, name: &str) -> Result<Option<StatementState>, TargetError>;

    /// Submits a statement. Errors: [`TargetError::AlreadyExists`] when the name is taken (the
    /// caller reads it and decides, never recreates silently); a [`TargetError::Transport`] error means
    /// the outcome is unknown and the caller must GET the name before trying again.
    async fn create_statement(&self, spec: &StatementSpec) -> Result<StatementState, TargetError>;

    /// Requests a stop (`spec.stopped = true`); the phase changes asynchronously. Missing → NotFound.
    async fn stop_statement(&self, name: &str) -> Result<(), TargetError>;

    /// Requests a resume of a stopped statement. Missing → NotFound.
    async fn resume_statement(&self, name: &str) -> Result<(), TargetError>;

    /// Deletes a statement; `Ok(false)` when it did not exist (success: the goal is reached).
    async fn delete_statement(&self, name: &str) -> Result<bool, TargetError>;

    /// The statement's latest exceptions, newest first (Confluent Cloud: `GET
    /// …/statements/{name}/exceptions`, the 10 newest); empty when it has none, is absent, or the
    /// target cannot tell (the default).
    async fn exceptions(&self, _name: &str) -> Result<Vec<StatementException>, TargetError> {
        Ok(Vec::new())
    }

    /// Checks a statement without running it, before the executor deletes the statement it replaces:
    /// [`TargetError::Invalid`] with the planner's cause when it cannot run. Targets that cannot tell
    /// return `Ok(())` (the default).
    async fn validate_statement(&self, _spec: &StatementSpec) -> Result<(), TargetError> {
        Ok(())
    }

    /// Checks a statement without running it and without touching any statement: Confluent Cloud
    /// submits it with `sql.dry-run=true` under a throw-away name
    /// (<https://docs.confluent.io/cloud/current/flink/reference/statements/set.html>; the answer
    /// to the POST is final, nothing is stored, observed on the service), the SQL Gateway plans it
    /// with `EXPLAIN`. Errors:
    /// [`TargetError::Invalid`] with the server's cause when it cannot run; the target's errors.
    /// Default: [`Target::validate_statement`].
    async fn dry_run_statement(&self, spec: &StatementSpec) -> Result<Checked, TargetError> {
        self.validate_statement(spec).await.map(|()| Checked::Valid)
    }

    /// Checks that the configured compute pool (or equivalent capacity) exists and can take
    /// statements. Targets without pools return `Ok(())`.
    async fn check_compute_pool(&self) -> Result<(), TargetError>;

    /// Runtime metrics of running statements, by name (records in and out, backlog, watermark,
    /// backpressure): the SQL Gateway reads them from the JobManager. Statements without a running
    /// job are left out. Targets whose metrics live elsewhere (Confluent Cloud: the Metrics API, with a
    /// Cloud API key, see [`crate::target::cloud`]) refuse with [`TargetError::Config`] (the default).
    async fn runtime_metrics(
        &self,
        names: &[String],
    ) -> Result<BTreeMap<String, crate::target::metrics::RuntimeMetrics>, TargetError> {
        let _ = names;
        Err(TargetError::Config(format!(
            "{}: runtime metrics are not read through this target",
            self.describe()
        )))
    }

    /// The tables a live statement reads, as the target knows them apart from its SQL text: the SQL
    /// Gateway reads them from the job plan of the statement's newest job (`GET
    /// /jobs/{id}/plan`, the `TableSourceScan` and `LookupJoin` nodes: last name part, as Flink
    /// prints it), since a job that is not the project's has no SQL text to parse. `Ok(None)`: the
    /// target cannot tell (Confluent Cloud lists every statement's SQL; the default), or the
    /// statement has no job.
    async fn statement_reads(&self, name: &str) -> Result<Option<Vec<String>>, TargetError> {
        let _ = name;
        Ok(None)
    }

    /// The Kafka topics a live statement's job reads, as its sources report them: on the SQL Gateway
    /// the JobManager's metrics of the job's vertices (`GET /jobs/{id}/vertices/{v}/metrics`, the
    /// Kafka source's `KafkaSourceReader.topic.<topic>.partition.<p>.…` gauges,
    /// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/connectors/table/kafka/>).
    /// Table names say nothing across gateway sessions (each session has its own catalog, so two
    /// projects' `orders` may be two topics); topics do. `Ok(None)`: the target cannot tell (the
    /// default; Confluent Cloud, whose tables are topics), the statement has no job, or no source
    /// reports a topic yet.
    async fn statement_topics(&self, name: &str) -> Result<Option<Vec<String>>, TargetError> {
        let _ = name;
        Ok(None)
    }

    /// The materialized tables of the environment, as the target's own API lists them (Confluent
    /// Cloud: `listSqlv1MaterializedTables`, [`materialized`]): what a `CREATE MATERIALIZED TABLE`
    /// becomes there, whose phase — not the creating statement's — tells whether its query runs.
    /// `Ok(None)`: the target has no such API (the default; the SQL Gateway, where a materialized
    /// table's refresh job is found by its name).
    async fn materialized_tables(
        &self,
    ) -> Result<Option<Vec<materialized::MaterializedTable>>, TargetError> {
        Ok(None)
    }

    /// The versions of `table`, in the target's order (Confluent Cloud:
    /// `listSqlv1MaterializedTableVersions`). Default: none.
    async fn materialized_table_versions(
        &self,
        table: &materialized::MaterializedTable,
    ) -> Result<Vec<materialized::MaterializedTableVersion>, TargetError> {
        let _ = table;
        Ok(Vec::new())
    }

    /// Stops (`stopped`) or resumes the continuous query of `table`, keeping the table, its topic
    /// and its data (Confluent Cloud: the GA `PUT` of the whole materialized table with its
    /// `metadata.resource_version`, `spec.stopped` set; a 409 is read again and retried). Missing →
    /// [`TargetError::NotFound`]. Default: a [`TargetError::Config`] error (no such API).
    async fn set_materialized_table_stopped(
        &self,
        table: &materialized::MaterializedTable,
        stopped: bool,
    ) -> Result<(), TargetError> {
        let _ = stopped;
        Err(TargetError::Config(format!(
            "{}: this target has no materialized-tables API",
            table.name
        )))
    }

    /// The plan the target's own planner compiles for `spec` (an INSERT or a statement set): the
    /// JSON of Flink's `COMPILE PLAN '<file>' FOR …`
    /// (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/overview/>),
    /// whose stateful exec nodes [`crate::changes::upgrade::compare_plans`] reads. `Ok(None)` when
    /// the target has no such planner (Confluent Cloud) or the statement cannot be compiled (CTAS).
    /// Default: `Ok(None)`.
    ///
    /// Errors: the planner's rejection ([`TargetError::Invalid`]), transport errors.
    async fn compiled_plan(
        &self,
        spec: &StatementSpec,
    ) -> Result<Option<serde_json::Value>, TargetError> {
        let _ = spec;
        Ok(None)
    }

    /// Whether the target can stop a statement with a savepoint and start new SQL under the same
    /// name from it ([`Target::stop_savepoint`], [`Target::start_from_savepoint`],
    /// [`Target::restored_from`]): the SQL Gateway only.
    fn supports_savepoint_restart(&self) -> bool {
        false
    }

    /// The savepoint the statement's job was stopped with (it is STOPPED); `Ok(None)` when it was
    /// not stopped with one. Default: `Ok(None)`.
    async fn stop_savepoint(&self, name: &str) -> Result<Option<String>, TargetError> {
        let _ = name;
        Ok(None)
    }

    /// Starts `spec` (a DML) under its name from `savepoint`, restoring the state as `restore` says.
    /// A live job of that name is [`TargetError::AlreadyExists`]; a rejected start is a FAILED state
    /// (as [`Target::create_statement`]). Targets without savepoints refuse with
    /// [`TargetError::Config`] (the default).
    async fn start_from_savepoint(
        &self,
        spec: &StatementSpec,
        savepoint: &str,
        restore: Restore,
    ) -> Result<StatementState, TargetError> {
        let _ = (savepoint, restore);
        Err(TargetError::Config(format!(
            "{}: cannot start {} from a savepoint",
            self.describe(),
            spec.name
        )))
    }

    /// Removes the files of a savepoint this run took and no longer needs (SQL Gateway: the
    /// JobManager's `POST /savepoint-disposal`,
    /// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/rest_api/#savepoint-disposal>,
    /// waited for until it completes). Default: `Ok(())` (nothing to remove).
    ///
    /// Errors: the JobManager's answer, or the disposal's failure cause.
    async fn dispose_savepoint(&self, path: &str) -> Result<(), TargetError> {
        let _ = path;
        Ok(())
    }

    /// Where the statement's newest job restored its state from; `Ok(None)`: it started without
    /// state, has no job, or the target cannot tell (the default).
    async fn restored_from(&self, name: &str) -> Result<Option<Restored>, TargetError> {
        let _ = name;
        Ok(None)
    }

    /// Whether the target can carry offsets over from an old statement
    /// (`sql.tables.initial-offset-from`, Confluent only).
    fn supports_carry_over(&self) -> bool {
        false
    }

    /// The catalog and database a statement's unqualified table names resolve in when its
    /// properties do not say (`sql.current-catalog`, `sql.current-database`): what the one-writer
    /// check ([`crate::inventory::writers::Frame`]) reads every running statement of the target
    /// with. Confluent Cloud: `flink.catalog_name` / `flink.database_name` (the properties it sends);
    /// the SQL Gateway: Flink's built-in `default_catalog` / `default_database`. `None`: unknown.
    fn default_namespace(&self) -> (Option<String>, Option<String>) {
        (None, None)
    }

    /// Whether table names belong to the session that declared them (the SQL Gateway: each session
    /// starts with an empty in-memory catalog, so another project's `orders` is another table, maybe
    /// on another topic) rather than to the target (Confluent Cloud: a table is a topic of the
    /// environment's cluster). The one-writer check then leaves out the running statements of other
    /// prefixes, whose tables it cannot tell from their names. Default: `false`.
    fn session_scoped_tables(&self) -> bool {
        false
    }

    /// Starts a read-only query (`SELECT`, `SHOW`, `DESCRIBE`, `EXPLAIN`) under the name `spec.name`
    /// (so that a run killed half-way leaves something `pipeline status` lists as an orphan) and
    /// returns its result stream. The caller reads it with [`crate::target::read::read`], which
    /// always closes it (deletes the statement, cancels the job). Targets that cannot run queries
    /// refuse with [`TargetError::Config`] (the default).
    async fn start_query(
        &self,
        spec: &StatementSpec,
    ) -> Result<Box<dyn crate::target::read::ResultStream>, TargetError> {
        Err(TargetError::Config(format!(
            "{}: cannot run queries ({})",
            self.describe(),
            spec.name
        )))
    }
}
