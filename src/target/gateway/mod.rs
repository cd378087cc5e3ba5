//! The Apache Flink SQL Gateway target: statements run through the gateway's REST API (`/v2`:
//! sessions, statements, operations, results) and jobs are watched, stopped and found again through the
//! JobManager's REST API (`/jobs/overview`, `/jobs/{id}`, `/jobs/{id}/checkpoints`). Facts (SQL
//! Gateway REST:
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>;
//! JobManager REST: <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/rest_api/>;
//! where marked, observed on Flink 2.x):
//!
//! - The gateway has **no named statements**: a DML is submitted with
//!   `executionConfig.pipeline.name = <statement name>` and found again by job name (newest job of
//!   that name wins); its SQL and properties are not kept by Flink, so both (and their hashes) travel
//!   in `pipeline.global-job-parameters` (`flinkpipe.sql-hash`, `flinkpipe.sql-text`, shown by
//!   `/jobs/{id}/config`) and a deployed statement reads back the project's text when the hash
//!   matches, else the text it carries (what an upgrade is judged on). A live job of that name
//!   makes [`Target::create_statement`] answer [`TargetError::AlreadyExists`] (no duplicates).
//!   Materialized tables: Flink names the refresh job itself
//!   (``Materialized_table_`c`.`d`.`t`_continuous_refresh_job``), matched by table.
//! - Session catalog: tables live only in the session that created them ([`catalog`]); the target keeps
//!   one session per process and declares every table a statement needs before running it. DDL
//!   statements therefore have no life beyond the run: a DDL "exists" once this process ran it.
//! - Results are fetched from token 0 following `nextResultUri` until a payload (`jobID` for
//!   DML) or `EOS`; `NOT_READY` is retried.
//! - Errors arrive (observed) as HTTP 500 with `{"errors": [..]}`, classified once
//!   ([`wire::ErrorClass`]: a lost
//!   session, a statement failure, …); the cause shown is [`wire::root_cause`]. A
//!   statement the gateway rejects becomes a FAILED statement with that cause, like Confluent's
//!   `status.detail`.
//! - Job states map to phases by [`wire::job_phase`]; stop = `STOP JOB '<id>' WITH SAVEPOINT`
//!   (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/job/>; the job
//!   ends FINISHED with a `SYNC_SAVEPOINT`, read back from `/jobs/{id}/checkpoints`); resume =
//!   the same SQL with `execution.state-recovery.path = <savepoint>`; an upgrade
//!   ([`Target::start_from_savepoint`]) = new SQL from the stop savepoint, checked on
//!   `/jobs/{id}/checkpoints` → `latest.restored`; delete = `STOP JOB '<id>'` without savepoint
//!   (CANCELED, which reads as "no such statement").
//!
//! Submissions go through one session one at a time (a session's catalog is not meant for concurrent
//! writers); jobs then start and are watched in parallel.
//!
//! Layout: `http` (requests, error classes), `session` (the session, operations, declarations),
//! `jobs` (JobManager jobs, savepoints, deleted jobs), `metrics` (a job's records, backlog,
//! watermark and backpressure), [`catalog`] (what the project defines),
//! [`wire`] (pure parsing of answers); this module maps them onto [`Target`].

pub mod catalog;
mod http;
mod jobs;
mod metrics;
mod query;
mod session;
pub mod wire;

use super::retry::Backoff;
use super::{
    Checked, ErrorKind, Phase, Restore, Restored, StatementKind, StatementSpec, StatementState,
    Target, TargetError,
};
use async_trait::async_trait;
use catalog::{Definitions, referenced_tables};
use http::Http;
use jobs::JobBook;
use serde_json::Value;
use session::{Executed, Work};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

/// Everything the gateway target needs (from `config.yaml` `flinkpipe.gateway` and the environment,
/// see [`crate::target::settings::gateway`]).
#[derive(Debug, Clone)]
pub struct GatewaySettings {
    /// SQL Gateway REST base URL, e.g. `http://127.0.0.1:8083`.
    pub gateway_url: String,
    /// JobManager REST base URL, e.g. `http://127.0.0.1:8081`.
    pub jobmanager_url: String,
    /// Session properties sent when the session opens (`execution.runtime-mode=streaming` is added
    /// when absent).
    pub session_properties: BTreeMap<String, String>,
    /// Timeout of one HTTP request.
    pub request_timeout: Duration,
    /// How long a submitted statement may take to return its result (planning + job submission).
    pub submit_timeout: Duration,
    /// Retry policy of idempotent calls (GET, and statements that only read such as `SHOW`).
    pub retry: Backoff,
    /// A JSON file (list of job ids) that remembers, across runs, the finished or failed jobs whose
    /// statements were deleted (the JobManager keeps them in its history, and a deleted statement must
    /// stay deleted: a redeploy runs a deleted seed again). `None`: remembered for this process only.
    pub deleted_jobs_file: Option<std::path::PathBuf>,
    /// A session idle this long gets a heartbeat before use (the gateway drops sessions idle for
    /// `sql-gateway.session.idle-timeout`, 10 min by default: the
    /// configuration table of Flink's SQL Gateway overview page). Default 60 s.
    pub heartbeat_after: Duration,
}

impl GatewaySettings {
    /// Settings with defaults: 30 s per request, 180 s per submission, [`Backoff::HTTP`], heartbeat
    /// after 60 s idle.
    pub fn new(gateway_url: &str, jobmanager_url: &str) -> Self {
        GatewaySettings {
            gateway_url: gateway_url.trim_end_matches('/').to_string(),
            jobmanager_url: jobmanager_url.trim_end_matches('/').to_string(),
            session_properties: BTreeMap::new(),
            request_timeout: Duration::from_secs(30),
            submit_timeout: Duration::from_secs(180),
            retry: Backoff::HTTP,
            heartbeat_after: Duration::from_secs(60),
            deleted_jobs_file: None,
        }
    }
}

/// Statements whose state only this process knows.
#[derive(Debug, Default)]
struct Local {
    /// DDL statements run by this process: name → state.
    ddl: BTreeMap<String, StatementState>,
    /// DML statements the gateway rejected (no job exists): name → (state, when).
    rejected: BTreeMap<String, (StatementState, i64)>,
}

/// A statement the gateway rejected, as a permanent error (for calls that return no state).
/// The `EXPLAIN` that checks a statement on the gateway, chosen by the SQL front end's statement kind
/// ([`crate::sql::StatementKind`], never a text prefix): `EXPLAIN <insert>` for every INSERT shape
/// (`INSERT INTO|OVERWRITE`, `EXECUTE INSERT`, the Spark order `WITH … INSERT`, which the planner
/// then judges), `EXPLAIN STATEMENT SET BEGIN … END` for a statement set (either form), `EXPLAIN
/// <query>` for a CTAS or materialized table (its query must plan); `None` for what `EXPLAIN` does not
/// take (DDL, and any text the front end cannot classify).
pub fn explain_sql(spec: &StatementSpec) -> Option<String> {
    use crate::sql::StatementKind as SqlKind;
    let converted = catalog::execute_statement_set(&spec.sql);
    let text = converted.as_deref().unwrap_or(&spec.sql);
    let analysis = crate::sql::analyze(text);
    let mut runs = analysis
        .statements
        .iter()
        .filter(|st| !matches!(st.kind, SqlKind::Set | SqlKind::Use));
    let st = runs.next()?;
    if runs.next().is_some() {
        // One statement per spec; several cannot be checked as one.
        return None;
    }
    match st.kind {
        SqlKind::Insert | SqlKind::StatementSet => {
            // `EXECUTE INSERT …` / `EXECUTE STATEMENT SET …` are explained without `EXECUTE`.
            Some(format!("EXPLAIN {}", without_execute(&st.text)))
        }
        SqlKind::Ctas | SqlKind::CreateMaterializedTable => {
            catalog::query_after_as(&st.text).map(|query| format!("EXPLAIN {query}"))
        }
        _ => None,
    }
}

/// `text` without a leading `EXECUTE` keyword (comments before it kept out).
fn without_execute(text: &str) -> String {
    use crate::sql::dialect::FlinkDialect;
    use crate::sql::split::{self, LineIndex};
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let file = split::split(&FlinkDialect, text);
    let lines = LineIndex::new(text);
    let starts_with_execute = matches!(
        file.tokens.first().map(|t| &t.token),
        Some(Token::Word(w)) if w.quote_style.is_none() && w.keyword == Keyword::EXECUTE
    );
    match file.tokens.get(1) {
        Some(next) if starts_with_execute => {
            text[lines.offset(next.span.start)..].trim().to_string()
        }
        _ => text.trim().to_string(),
    }
}

/// Why a statement of this kind cannot be checked on the gateway.
fn not_checkable(spec: &StatementSpec) -> String {
    match spec.kind {
        StatementKind::Ddl => "the SQL Gateway cannot check a DDL statement without running it (the deploy runs it in its session before any job)".into(),
        StatementKind::Dml => format!(
            "the SQL Gateway cannot check {} with EXPLAIN (not an INSERT, statement set, CTAS or materialized table the SQL front end can read)",
            spec.name
        ),
    }
}

fn rejected(what: String) -> TargetError {
    TargetError::Http {
        method: "POST".into(),
        path: "/v2/sessions/…/statements".into(),
        status: 500,
        message: what,
        kind: ErrorKind::Permanent,
        retry_after: None,
    }
}

/// The SQL Gateway target.
pub struct GatewayTarget {
    settings: GatewaySettings,
    http: Http,
    defs: Definitions,
    session: tokio::sync::Mutex<Option<session::SessionState>>,
    jobs: Mutex<JobBook>,
    local: Mutex<Local>,
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl GatewayTarget {
    /// Builds the client. `defs` are the project's statements (and external tables' DDL): the target
    /// declares tables from them and reads deployed SQL back by hash. Errors: URLs that are not
    /// absolute http(s) URLs, or that carry credentials (`http://user:pw@host`).
    pub fn new(settings: GatewaySettings, defs: Definitions) -> Result<Self, TargetError> {
        let http = Http::new(
            &settings.gateway_url,
            &settings.jobmanager_url,
            settings.request_timeout,
            settings.retry,
        )?;
        let jobs = JobBook::load(settings.deleted_jobs_file.clone());
        Ok(GatewayTarget {
            settings,
            http,
            defs,
            session: tokio::sync::Mutex::new(None),
            jobs: Mutex::new(jobs),
            local: Mutex::new(Local::default()),
        })
    }

    fn local(&self) -> std::sync::MutexGuard<'_, Local> {
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Submits a DML (or CTAS, statement set, materialized table), declaring its tables first.
    async fn submit_dml(
        &self,
        spec: &StatementSpec,
        recovery: Option<(&str, Restore)>,
    ) -> Result<StatementState, TargetError> {
        let mut config: BTreeMap<String, String> = spec
            .properties
            .iter()
            .filter(|(k, _)| !k.starts_with("sql.current-") && k.as_str() != "pipeline.name")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if spec.properties.contains_key("pipeline.name") {
            tracing::info!(
                "{}: pipeline.name from the properties is replaced by the statement name (the job's identity)",
                spec.name
            );
        }
        config.insert("pipeline.name".into(), spec.name.clone());
        let params = wire::job_parameters(
            config
                .get("pipeline.global-job-parameters")
                .map(String::as_str),
            &spec.name,
            &wire::sql_hash(&spec.sql),
            &wire::properties_hash(&spec.properties),
        );
        let params = wire::with_texts(&params, &spec.sql, &spec.properties);
        config.insert("pipeline.global-job-parameters".into(), params);
        if let Some((sp, restore)) = recovery {
            config.insert("execution.state-recovery.path".into(), sp.to_string());
            if restore == Restore::Offsets {
                // Operator state the new job has no operator for (a stateless job's sources keep
                // theirs) is left behind instead of failing the start:
                // https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/state/savepoints/#allowing-non-restored-state
                config.insert(
                    "execution.state-recovery.ignore-unclaimed-state".into(),
                    "true".into(),
                );
            }
        }
        let refs = referenced_tables(&spec.sql);
        let own = catalog::created_tables(&spec.sql).into_iter().next();
        let outcome = self
            .with_session(Work::Submit {
                spec,
                refs: &refs,
                own: own.as_ref().map(|(k, n)| (k.as_str(), n.as_str())),
                config: &config,
            })
            .await?;
        match outcome {
            Executed::Rejected(r) => {
                let state = StatementState {
                    name: spec.name.clone(),
                    phase: Phase::Failed,
                    detail: r.cause,
                    sql: spec.sql.clone(),
                    properties: spec.properties.clone(),
                    stopped: false,
                    meta: Default::default(),
                };
                self.local()
                    .rejected
                    .insert(spec.name.clone(), (state.clone(), now_millis()));
                Ok(state)
            }
            Executed::Ok { job_id, .. } => {
                self.local().rejected.remove(&spec.name);
                tracing::info!(
                    "{}: job {}",
                    spec.name,
                    job_id.as_deref().unwrap_or("(named by Flink)")
                );
                Ok(StatementState {
                    name: spec.name.clone(),
                    phase: Phase::Pending,
                    detail: job_id.map(|j| format!("job {j}")).unwrap_or_default(),
                    sql: spec.sql.clone(),
                    properties: spec.properties.clone(),
                    stopped: false,
                    meta: Default::default(),
                })
            }
        }
    }

    async fn run_ddl(&self, spec: &StatementSpec) -> Result<StatementState, TargetError> {
        let refs = referenced_tables(&spec.sql);
        let outcome = self.with_session(Work::Ddl { spec, refs: &refs }).await?;
        let (phase, detail) = match outcome {
            Executed::Ok { .. } => (Phase::Completed, String::new()),
            Executed::Rejected(r) => (Phase::Failed, r.cause),
        };
        let state = StatementState {
            name: spec.name.clone(),
            phase,
            detail,
            sql: spec.sql.clone(),
            properties: spec.properties.clone(),
            stopped: false,
            meta: Default::default(),
        };
        self.local().ddl.insert(spec.name.clone(), state.clone());
        Ok(state)
    }

    /// The compiled plan (Flink's `COMPILE PLAN '<file>' FOR <INSERT | STATEMENT SET>`) of an INSERT
    /// or a statement set, its tables declared in the session first; the plan file is written by the
    /// gateway into `dir` (so the gateway must run on this machine, as the local stack does) and read
    /// back, then removed. CTAS and materialized tables cannot be compiled (`Ok(None)`).
    ///
    /// Errors: the planner's rejection ([`TargetError::Invalid`], its cause), transport errors, a plan
    /// file that is not there or not JSON afterwards (a gateway on another machine).
    pub async fn compile_plan(
        &self,
        spec: &StatementSpec,
        dir: &std::path::Path,
    ) -> Result<Option<Value>, TargetError> {
        let Some(explain) = explain_sql(spec) else {
            return Ok(None);
        };
        let Some(stmt) = explain.strip_prefix("EXPLAIN ") else {
            return Ok(None);
        };
        let upper = stmt.trim_start().to_ascii_uppercase();
        if !(upper.starts_with("INSERT") || upper.starts_with("STATEMENT")) {
            return Ok(None);
        }
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let file = dir.join(format!(
            "plan-{}-{}.json",
            std::process::id(),
            SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let path = file.to_string_lossy().replace('\'', "''");
        let sql = format!("COMPILE PLAN '{path}' FOR {stmt}");
        let refs = referenced_tables(&spec.sql);
        let outcome = self
            .with_session(Work::Explain {
                sql: &sql,
                refs: &refs,
            })
            .await?;
        if let Executed::Rejected(r) = outcome {
            return Err(TargetError::Invalid(r.cause));
        }
        let text = std::fs::read_to_string(&file).map_err(|e| {
            TargetError::Config(format!(
                "the gateway compiled the plan but {} cannot be read here ({e}): the local engine must run on this machine",
                file.display()
            ))
        })?;
        let _ = std::fs::remove_file(&file);
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| TargetError::Config(format!("{}: not JSON: {e}", file.display())))
    }

    /// Runs a statement that ends (`STOP JOB …`) and returns its rows, or the rejection as an error.
    async fn run_control(&self, sql: &str) -> Result<Vec<Value>, TargetError> {
        let outcome = self.with_session(Work::Control { sql }).await?;
        match outcome {
            Executed::Ok { rows, .. } => Ok(rows),
            Executed::Rejected(r) => Err(rejected(format!("{sql}: {}", r.cause))),
        }
    }
}

#[async_trait]
impl Target for GatewayTarget {
    async fn start_query(
        &self,
        spec: &StatementSpec,
    ) -> Result<Box<dyn crate::target::read::ResultStream>, TargetError> {
        Ok(Box::new(self.open_query(spec).await?))
    }

    fn session_scoped_tables(&self) -> bool {
        true
    }

    fn default_namespace(&self) -> (Option<String>, Option<String>) {
        // Flink's `table.builtin-catalog-name` / `table.builtin-database-name` defaults: every
        // session of the gateway starts there.
        (
            Some("default_catalog".to_string()),
            Some("default_database".to_string()),
        )
    }

    fn describe(&self) -> String {
        format!(
            "flink sql gateway {} (jobmanager {})",
            self.settings.gateway_url, self.settings.jobmanager_url
        )
    }

    async fn list_statements(&self) -> Result<Vec<StatementState>, TargetError> {
        // The phases come from the JobManager, but the target is the gateway: one that does not
        // answer is an error here, not a status that looks fine until the next deploy.
        self.http.get(self.http.gw("v1/info")).await?;
        let jobs = self.jobs().await?;
        let mut out: BTreeMap<String, StatementState> = BTreeMap::new();
        let mut names: BTreeSet<String> = jobs.iter().map(|j| j.name.clone()).collect();
        names.extend(
            self.defs
                .names()
                .filter(|n| !self.defs.is_ddl(n))
                .map(str::to_string),
        );
        // Refresh jobs of materialized tables are listed under their statements' names, not Flink's:
        // those of the project's statements by definition, the others (a blue materialized table after
        // a blue-green, a deleted one) by the statement name in their job parameters.
        names.retain(|n| !n.starts_with("Materialized_table_"));
        for j in jobs
            .iter()
            .filter(|j| j.name.starts_with("Materialized_table_") && j.state != "CANCELED")
        {
            if let Some(tag) = self.job_tag(&j.jid, wire::TAG_STATEMENT).await {
                names.insert(tag);
            }
        }
        for name in names {
            if self.defs.is_ddl(&name) {
                continue;
            }
            if let Some(job) = self.newest(&jobs, &name).await
                && !self.is_ended_query(&job).await
                && let Some(s) = self.job_state(&name, &job).await?
            {
                out.insert(name, s);
            }
        }
        let local = self.local();
        for (n, s) in &local.ddl {
            out.insert(n.clone(), s.clone());
        }
        for (n, (s, _)) in &local.rejected {
            out.entry(n.clone()).or_insert_with(|| s.clone());
        }
        Ok(out.into_values().collect())
    }

    async fn statement_topics(&self, name: &str) -> Result<Option<Vec<String>>, TargetError> {
        let jobs = self.jobs().await?;
        let Some(job) = self.newest(&jobs, name).await else {
            return Ok(None);
        };
        let plan = self
            .http
            .get(self.http.jm(&format!("jobs/{}/plan", job.jid)))
            .await?;
        let mut topics = std::collections::BTreeSet::new();
        for vertex in wire::plan_vertex_ids(&plan) {
            let metrics = self
                .http
                .get(
                    self.http
                        .jm(&format!("jobs/{}/vertices/{vertex}/metrics", job.jid)),
                )
                .await?;
            topics.extend(wire::source_topics(&metrics));
        }
        Ok((!topics.is_empty()).then(|| topics.into_iter().collect()))
    }

    async fn statement_reads(&self, name: &str) -> Result<Option<Vec<String>>, TargetError> {
        let jobs = self.jobs().await?;
        let Some(job) = self.newest(&jobs, name).await else {
            return Ok(None);
        };
        let plan = self
            .http
            .get(self.http.jm(&format!("jobs/{}/plan", job.jid)))
            .await?;
        Ok(Some(wire::plan_source_tables(&plan)))
    }

    async fn get_statement(&self, name: &str) -> Result<Option<StatementState>, TargetError> {
        if self.defs.is_ddl(name) || self.local().ddl.contains_key(name) {
            return Ok(self.local().ddl.get(name).cloned());
        }
        let jobs = self.jobs().await?;
        let job = self.newest(&jobs, name).await;
        let rejected = self.local().rejected.get(name).cloned();
        if let Some((state, at)) = rejected
            && job.as_ref().is_none_or(|j| j.start_time < at)
        {
            return Ok(Some(state));
        }
        match job {
            Some(j) => self.job_state(name, &j).await,
            None => Ok(None),
        }
    }

    async fn create_statement(&self, spec: &StatementSpec) -> Result<StatementState, TargetError> {
        if spec.kind == StatementKind::Ddl {
            return self.run_ddl(spec).await;
        }
        let jobs = self.jobs().await?;
        if let Some(j) = self.newest(&jobs, &spec.name).await
            && (wire::job_is_live(&j.state))
        {
            return Err(TargetError::AlreadyExists(spec.name.clone()));
        }
        self.submit_dml(spec, None).await
    }

    async fn stop_statement(&self, name: &str) -> Result<(), TargetError> {
        let jobs = self.jobs().await?;
        let job = self
            .newest(&jobs, name)
            .await
            .ok_or_else(|| TargetError::NotFound(name.to_string()))?;
        if !wire::job_is_live(&job.state) {
            return Ok(());
        }
        let rows = self
            .run_control(&format!("STOP JOB '{}' WITH SAVEPOINT", job.jid))
            .await?;
        if let Some(path) = rows
            .first()
            .and_then(|r| r.pointer("/fields/0"))
            .and_then(Value::as_str)
        {
            tracing::info!("{name}: stopped job {} with savepoint {path}", job.jid);
            self.stopped_with(&job.jid, path);
        }
        Ok(())
    }

    async fn resume_statement(&self, name: &str) -> Result<(), TargetError> {
        let jobs = self.jobs().await?;
        let job = self
            .newest(&jobs, name)
            .await
            .ok_or_else(|| TargetError::NotFound(name.to_string()))?;
        if wire::job_is_live(&job.state) {
            return Ok(());
        }
        let spec = self.defs.statement(name).cloned().ok_or_else(|| {
            TargetError::Config(format!(
                "cannot resume {name}: the gateway keeps no statement text and no project defines it (set PIPELINES to the pipelines folder, or run from the folder that holds pipelines/)"
            ))
        })?;
        // Resuming without the state would silently lose it: only a job stopped with a savepoint
        // resumes; anything else is deployed again (a new start, by the plan).
        let savepoint = self.savepoint_of(&job).await.ok_or_else(|| {
            TargetError::Config(format!(
                "cannot resume {name}: its last job {} ({}) has no stop savepoint; deploy it again to start it from its sources",
                job.jid, job.state
            ))
        })?;
        let state = self
            .submit_dml(&spec, Some((&savepoint, Restore::State)))
            .await?;
        if state.phase == Phase::Failed {
            return Err(rejected(format!("resuming {name}: {}", state.detail)));
        }
        Ok(())
    }

    fn supports_savepoint_restart(&self) -> bool {
        true
    }

    /// [`GatewayTarget::compile_plan`] into a temporary folder of this machine (removed after).
    async fn compiled_plan(&self, spec: &StatementSpec) -> Result<Option<Value>, TargetError> {
        let dir = tempfile::tempdir().map_err(|e| {
            TargetError::Config(format!("cannot create a folder for the compiled plan: {e}"))
        })?;
        self.compile_plan(spec, dir.path()).await
    }

    /// The savepoint of the newest job of `name` when it FINISHED by a stop with savepoint.
    async fn stop_savepoint(&self, name: &str) -> Result<Option<String>, TargetError> {
        let jobs = self.jobs().await?;
        let Some(job) = self.newest(&jobs, name).await else {
            return Err(TargetError::NotFound(name.to_string()));
        };
        if job.state != "FINISHED" {
            return Ok(None);
        }
        Ok(self.savepoint_of(&job).await)
    }

    /// Submits `spec` with `execution.state-recovery.path = savepoint` (and, for
    /// [`Restore::Offsets`], `execution.state-recovery.ignore-unclaimed-state = true`).
    async fn start_from_savepoint(
        &self,
        spec: &StatementSpec,
        savepoint: &str,
        restore: Restore,
    ) -> Result<StatementState, TargetError> {
        let jobs = self.jobs().await?;
        if let Some(j) = self.newest(&jobs, &spec.name).await
            && wire::job_is_live(&j.state)
        {
            return Err(TargetError::AlreadyExists(spec.name.clone()));
        }
        self.submit_dml(spec, Some((savepoint, restore))).await
    }

    async fn restored_from(&self, name: &str) -> Result<Option<Restored>, TargetError> {
        self.restored_of(name).await
    }

    /// `POST /savepoint-disposal`, then `GET /savepoint-disposal/{trigger}` until it is
    /// `COMPLETED` (at most 30 s).
    async fn dispose_savepoint(&self, path: &str) -> Result<(), TargetError> {
        let body = serde_json::json!({ "savepoint-path": path });
        let answer = self
            .http
            .send(
                reqwest::Method::POST,
                self.http.jm("savepoint-disposal"),
                Some(&body),
            )
            .await?;
        let Some(trigger) = answer.get("request-id").and_then(Value::as_str) else {
            return Ok(());
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let status = self
                .http
                .get(self.http.jm(&format!("savepoint-disposal/{trigger}")))
                .await?;
            if status.pointer("/status/id").and_then(Value::as_str) == Some("COMPLETED") {
                return match status
                    .pointer("/operation/failure-cause/stack-trace")
                    .and_then(Value::as_str)
                {
                    Some(trace) => Err(TargetError::Config(format!(
                        "disposing savepoint {path}: {}",
                        wire::deepest_cause(trace)
                    ))),
                    None => Ok(()),
                };
            }
            if std::time::Instant::now() >= deadline {
                return Err(TargetError::Config(format!(
                    "disposing savepoint {path}: not done after 30 s"
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
    }

    async fn delete_statement(&self, name: &str) -> Result<bool, TargetError> {
        if self.defs.is_ddl(name) || self.local().ddl.contains_key(name) {
            return Ok(self.local().ddl.remove(name).is_some());
        }
        let had_rejection = self.local().rejected.remove(name).is_some();
        let jobs = self.jobs().await?;
        let Some(job) = self.newest(&jobs, name).await else {
            return Ok(had_rejection);
        };
        match job.state.as_str() {
            // Deleted already (a cancelled job is a deleted statement), or being deleted.
            "CANCELED" => Ok(had_rejection),
            "CANCELLING" => Ok(true),
            // A live job is cancelled; it reads as DELETING until CANCELED, then as absent.
            s if wire::job_is_live(s) => {
                self.run_control(&format!("STOP JOB '{}'", job.jid)).await?;
                Ok(true)
            }
            // A finished or failed job stays in the JobManager's history: hide it, and remember
            // that across runs when a file is configured.
            _ => {
                self.forget_job(&job.jid, name)?;
                Ok(true)
            }
        }
    }

    /// `EXPLAIN` in the session (its tables declared) of an INSERT, a statement set (either form), or
    /// the query of a CTAS or materialized table: the planner validates it without starting a job. DDL
    /// is not checked.
    async fn validate_statement(&self, spec: &StatementSpec) -> Result<(), TargetError> {
        let Some(explain) = explain_sql(spec) else {
            // A job that cannot be checked must not pass as checked.
            return match spec.kind {
                StatementKind::Ddl => Ok(()),
                StatementKind::Dml => Err(TargetError::Config(not_checkable(spec))),
            };
        };
        let refs = referenced_tables(&spec.sql);
        match self
            .with_session(Work::Explain {
                sql: &explain,
                refs: &refs,
            })
            .await?
        {
            Executed::Ok { .. } => Ok(()),
            Executed::Rejected(r) => Err(TargetError::Invalid(r.cause)),
        }
    }

    /// `EXPLAIN` in the session for what can be explained (INSERT, statement sets, the query of a
    /// CTAS or materialized table); a DDL statement has no dry run on the gateway.
    async fn dry_run_statement(&self, spec: &StatementSpec) -> Result<Checked, TargetError> {
        if explain_sql(spec).is_none() {
            return Ok(Checked::NotChecked(not_checkable(spec)));
        }
        self.validate_statement(spec).await.map(|()| Checked::Valid)
    }

    /// The metrics of each statement's RUNNING job (`metrics`); DDL statements and statements
    /// without a running job are left out.
    async fn runtime_metrics(
        &self,
        names: &[String],
    ) -> Result<BTreeMap<String, crate::target::metrics::RuntimeMetrics>, TargetError> {
        let jobs = self.jobs().await?;
        let mut out = BTreeMap::new();
        for name in names {
            if self.defs.is_ddl(name) {
                continue;
            }
            if let Some(job) = self.newest(&jobs, name).await
                && job.state == "RUNNING"
            {
                out.insert(name.clone(), self.job_metrics(&job.jid).await?);
            }
        }
        Ok(out)
    }

    async fn check_compute_pool(&self) -> Result<(), TargetError> {
        let info = self.http.get(self.http.gw("v1/info")).await?;
        let overview = self.http.get(self.http.jm("overview")).await?;
        let tms = overview
            .get("taskmanagers")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if tms == 0 {
            return Err(TargetError::Config(format!(
                "the Flink cluster at {} has no TaskManager: statements would never start",
                self.settings.jobmanager_url
            )));
        }
        let product = info
            .get("productName")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let version = info.get("version").and_then(|v| v.as_str()).unwrap_or("?");
        let slots = overview
            .get("slots-available")
            .and_then(|v| v.as_u64())
            .unwrap_or(0);
        tracing::info!(
            "gateway {product} {version}, cluster: {tms} TaskManager(s), {slots} free slot(s)"
        );
        Ok(())
    }
}
