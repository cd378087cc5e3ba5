//! The Apache Flink SQL Gateway target: statements run through the gateway's REST API (`/v2`:
//! sessions, statements, operations, results) and jobs are watched, stopped and found again through the
//! JobManager's REST API (`/jobs/overview`, `/jobs/{id}`, `/jobs/{id}/checkpoints`). Facts, by section
//! of `flink-sql-gateway-api.md`:
//!
//! - §1, §6 The gateway has **no named statements**: a DML is submitted with
//!   `executionConfig.pipeline.name = <statement name>` and found again by job name (newest job of
//!   that name wins); its SQL and properties are not kept by Flink, so hashes of both travel in
//!   `pipeline.global-job-parameters` (`flinkpipe.sql-hash`, shown by `/jobs/{id}/config`) and a
//!   deployed statement reads back the project's text when the hash matches. A live job of that name
//!   makes [`Target::create_statement`] answer [`TargetError::AlreadyExists`] (no duplicates).
//!   Materialized tables: Flink names the refresh job itself
//!   (``Materialized_table_`c`.`d`.`t`_continuous_refresh_job``), matched by table.
//! - Session catalog: tables live only in the session that created them ([`catalog`]); the target keeps
//!   one session per process and declares every table a statement needs before running it. DDL
//!   statements therefore have no life beyond the run: a DDL "exists" once this process ran it.
//! - §3 Results are fetched from token 0 following `nextResultUri` until a payload (`jobID` for
//!   DML) or `EOS`; `NOT_READY` is retried.
//! - §5 Errors arrive as HTTP 500 with `{"errors": [..]}`; the cause shown is [`wire::root_cause`]. A
//!   statement the gateway rejects becomes a FAILED statement with that cause, like Confluent's
//!   `status.detail`.
//! - §6 Job states map to phases by [`wire::job_phase`]; stop = `STOP JOB '<id>' WITH SAVEPOINT`
//!   (the job ends FINISHED with a `SYNC_SAVEPOINT`, read back from `/jobs/{id}/checkpoints`); resume =
//!   the same SQL with `execution.state-recovery.path = <savepoint>`; delete = `STOP JOB '<id>'`
//!   without savepoint (CANCELED, which reads as "no such statement").
//!
//! Submissions go through one session one at a time (a session's catalog is not meant for concurrent
//! writers); jobs then start and are watched in parallel.

pub mod catalog;
pub mod wire;

use super::retry::{Backoff, seed_of};
use super::target::{
    ErrorKind, Phase, StatementKind, StatementSpec, StatementState, Target, TargetError,
};
use crate::sql::quote_identifier;
use async_trait::async_trait;
use catalog::{Definition, Definitions, referenced_tables};
use reqwest::{Method, StatusCode, Url};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use wire::JobOverview;

/// Everything the gateway target needs (from `config.yaml` `flinkpipe.gateway` and the environment,
/// see [`crate::config::Config::gateway_settings`]).
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
    /// `sql-gateway.session.idle-timeout`, 10 min by default; §1). Default 60 s.
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

/// The open session and what it has declared.
#[derive(Debug)]
struct SessionState {
    handle: String,
    /// Table key → the statement that declared it in this session, with the hash of its SQL.
    declared: BTreeMap<String, (String, String)>,
    /// When the session was last used: an idle session gets a heartbeat before it is used again.
    used: Instant,
}

/// What this process did that the servers cannot tell later.
#[derive(Debug, Default)]
struct Local {
    /// DDL statements run by this process: name → state.
    ddl: BTreeMap<String, StatementState>,
    /// DML statements the gateway rejected (no job exists): name → (state, when).
    rejected: BTreeMap<String, (StatementState, i64)>,
    /// Jobs whose statement was deleted by this process (a FAILED or FINISHED job stays in the
    /// JobManager's history; deleting its statement hides it).
    deleted_jobs: BTreeSet<String>,
    /// Savepoints taken by stops in this process: job id → path.
    savepoints: BTreeMap<String, String>,
}

/// The result of one statement run through the gateway.
enum Executed {
    /// Finished: the job id (DML) and the rows of the first payloads (DDL/SHOW/STOP).
    Ok {
        job_id: Option<String>,
        rows: Vec<Value>,
    },
    /// The gateway rejected it: the root cause.
    Rejected(String),
}

/// A statement the gateway rejected, as a permanent error (for calls that return no state).
fn rejected(what: String) -> TargetError {
    TargetError::Http {
        method: "POST".into(),
        path: "/v2/sessions/…/statements".into(),
        status: 500,
        message: what,
        kind: ErrorKind::Permanent,
    }
}

/// The SQL Gateway target.
pub struct GatewayTarget {
    settings: GatewaySettings,
    client: reqwest::Client,
    gateway: Url,
    jobmanager: Url,
    defs: Definitions,
    session: tokio::sync::Mutex<Option<SessionState>>,
    local: Mutex<Local>,
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn parse_base(url: &str, what: &str) -> Result<Url, TargetError> {
    let u = Url::parse(&format!("{}/", url.trim_end_matches('/')))
        .map_err(|e| TargetError::Config(format!("invalid {what} URL '{url}': {e}")))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(TargetError::Config(format!(
            "invalid {what} URL '{url}': expected http://host:port"
        )));
    }
    Ok(u)
}

impl GatewayTarget {
    /// Builds the client. `defs` are the project's statements (and external tables' DDL): the target
    /// declares tables from them and reads deployed SQL back by hash. Errors: URLs that are not
    /// absolute http(s) URLs.
    pub fn new(settings: GatewaySettings, defs: Definitions) -> Result<Self, TargetError> {
        let gateway = parse_base(&settings.gateway_url, "SQL Gateway")?;
        let jobmanager = parse_base(&settings.jobmanager_url, "JobManager")?;
        let client = reqwest::Client::builder()
            .timeout(settings.request_timeout)
            .connect_timeout(settings.request_timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("flinkpipe/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| TargetError::Config(format!("cannot build the HTTP client: {e}")))?;
        // A missing or unreadable file means nothing was deleted yet.
        let deleted_jobs: BTreeSet<String> = settings
            .deleted_jobs_file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(GatewayTarget {
            settings,
            client,
            gateway,
            jobmanager,
            defs,
            session: tokio::sync::Mutex::new(None),
            local: Mutex::new(Local {
                deleted_jobs,
                ..Local::default()
            }),
        })
    }

    fn local(&self) -> std::sync::MutexGuard<'_, Local> {
        self.local.lock().unwrap_or_else(|p| p.into_inner())
    }

    // ---- HTTP -------------------------------------------------------------------------------------

    /// One request; JSON answer on 2xx, else a typed error whose message is the gateway's root cause.
    async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Result<Value, TargetError> {
        let mut req = self
            .client
            .request(method.clone(), url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(b) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        let transport = |e: reqwest::Error| TargetError::Transport {
            method: method.to_string(),
            path: url.path().to_string(),
            message: if e.is_timeout() {
                "timed out".into()
            } else if e.is_connect() {
                format!(
                    "connection failed ({}){}",
                    url.origin().ascii_serialization(),
                    if matches!(url.host_str(), Some("127.0.0.1" | "localhost")) {
                        ": is the local stack up? (scripts/local-flink.sh status)"
                    } else {
                        ""
                    }
                )
            } else {
                format!("no answer: {e}")
            },
        };
        let resp = req.send().await.map_err(transport)?;
        let status = resp.status();
        let text = resp.text().await.map_err(transport)?;
        if status.is_success() {
            return Ok(serde_json::from_str(&text).unwrap_or(Value::Null));
        }
        let kind = if matches!(
            status,
            StatusCode::TOO_MANY_REQUESTS
                | StatusCode::BAD_GATEWAY
                | StatusCode::SERVICE_UNAVAILABLE
                | StatusCode::GATEWAY_TIMEOUT
        ) {
            ErrorKind::Retryable
        } else {
            ErrorKind::Permanent
        };
        Err(TargetError::Http {
            method: method.to_string(),
            path: url.path().to_string(),
            status: status.as_u16(),
            message: wire::root_cause(&text),
            kind,
        })
    }

    /// An idempotent GET, retried on connection errors and 429/502/503/504.
    async fn get(&self, url: Url) -> Result<Value, TargetError> {
        let policy = self.settings.retry;
        let seed = seed_of(url.as_str());
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.send(Method::GET, url.clone(), None).await {
                Err(e) if e.is_retryable() && policy.may_retry(attempt) => {
                    tracing::info!("{e}; retrying");
                    tokio::time::sleep(policy.delay(attempt - 1, seed)).await;
                }
                other => return other,
            }
        }
    }

    fn gw(&self, path: &str) -> Url {
        self.gateway
            .join(path.trim_start_matches('/'))
            .expect("valid path")
    }

    fn jm(&self, path: &str) -> Url {
        self.jobmanager
            .join(path.trim_start_matches('/'))
            .expect("valid path")
    }

    // ---- sessions and statements --------------------------------------------------------------

    async fn open_session(&self) -> Result<SessionState, TargetError> {
        let mut props = self.settings.session_properties.clone();
        props
            .entry("execution.runtime-mode".into())
            .or_insert_with(|| "streaming".into());
        let body = json!({"sessionName": "flinkpipe", "properties": props});
        let v = self
            .send(Method::POST, self.gw("v2/sessions"), Some(&body))
            .await?;
        let handle = v
            .get("sessionHandle")
            .and_then(Value::as_str)
            .ok_or_else(|| TargetError::Config(format!("the gateway opened no session: {v}")))?;
        tracing::info!("gateway session {handle}");
        Ok(SessionState {
            handle: handle.to_string(),
            declared: BTreeMap::new(),
            used: Instant::now(),
        })
    }

    /// Runs one statement in the session and reads its result: the `jobID` of a DML, or every row
    /// of a statement that ends (DDL, `SHOW`, `STOP JOB`). A statement the gateway rejects is
    /// [`Executed::Rejected`] with its cause; errors are transport or session problems.
    async fn execute(
        &self,
        session: &SessionState,
        sql: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<Executed, TargetError> {
        let mut body = json!({"statement": sql});
        if !config.is_empty() {
            body["executionConfig"] = json!(config);
        }
        let sh = &session.handle;
        let v = self
            .send(
                Method::POST,
                self.gw(&format!("v2/sessions/{sh}/statements")),
                Some(&body),
            )
            .await?;
        let oh = v
            .get("operationHandle")
            .and_then(Value::as_str)
            .ok_or_else(|| TargetError::Config(format!("the gateway returned no operation: {v}")))?
            .to_string();
        let deadline = Instant::now() + self.settings.submit_timeout;
        let mut uri = format!("v2/sessions/{sh}/operations/{oh}/result/0?rowFormat=JSON");
        let mut rows: Vec<Value> = Vec::new();
        let mut job_id: Option<String> = None;
        let mut polls = 0u32;
        let outcome = loop {
            // The statement is accepted: from here on no error may look retryable to the
            // executor (a second POST could start a second job). Reading a result page again is
            // allowed (§3), so transport problems are retried here until the deadline.
            let page = match self.send(Method::GET, self.gw(&uri), None).await {
                Ok(p) => p,
                Err(TargetError::Http {
                    status: 500,
                    message,
                    ..
                }) => break Executed::Rejected(message),
                Err(e) if e.is_retryable() && Instant::now() < deadline => {
                    tracing::info!("reading the result of {oh}: {e}; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
                Err(e) => {
                    break Executed::Rejected(format!(
                        "the statement was accepted (operation {oh}) but its result could not be read: {e}; check the cluster's jobs before deploying again"
                    ));
                }
            };
            if Instant::now() >= deadline {
                let _ = self
                    .send(
                        Method::POST,
                        self.gw(&format!("v2/sessions/{sh}/operations/{oh}/cancel")),
                        None,
                    )
                    .await;
                break Executed::Rejected(format!(
                    "no complete result after {:.0?} (operation cancelled)",
                    self.settings.submit_timeout
                ));
            }
            match page.get("resultType").and_then(Value::as_str) {
                Some("NOT_READY") => {
                    polls += 1;
                    tokio::time::sleep(Duration::from_millis(if polls < 10 { 100 } else { 300 }))
                        .await;
                }
                Some("PAYLOAD") => {
                    if let Some(j) = page.get("jobID").and_then(Value::as_str) {
                        job_id = Some(j.to_string());
                    }
                    if let Some(d) = page.pointer("/results/data").and_then(Value::as_array) {
                        rows.extend(d.iter().cloned());
                    }
                    // A DML's job id is all we need; a query result may go on forever.
                    if job_id.is_some()
                        || page.get("isQueryResult").and_then(Value::as_bool) == Some(true)
                    {
                        break Executed::Ok { job_id, rows };
                    }
                    match page.get("nextResultUri").and_then(Value::as_str) {
                        Some(next) => uri = next.trim_start_matches('/').to_string(),
                        None => break Executed::Ok { job_id, rows },
                    }
                }
                _ => break Executed::Ok { job_id, rows },
            }
        };
        // Closing an INSERT's operation does not stop its job (§6).
        let _ = self
            .send(
                Method::DELETE,
                self.gw(&format!("v2/sessions/{sh}/operations/{oh}/close")),
                None,
            )
            .await;
        Ok(outcome)
    }

    /// Runs `work` with the session, opening it first. A session the gateway lost (expired,
    /// gateway restarted) is replaced and the error reported; the executor's retry runs the step again.
    async fn with_session(&self, work: Work<'_>) -> Result<Executed, TargetError> {
        let mut guard = self.session.lock().await;
        if let Some(s) = guard.as_ref()
            && s.used.elapsed() >= self.settings.heartbeat_after
        {
            let url = self.gw(&format!("v2/sessions/{}/heartbeat", s.handle));
            if let Err(e) = self.send(Method::POST, url, None).await {
                // Expired or the gateway restarted: its tables are gone with it; start afresh.
                tracing::info!(
                    "gateway session {} is gone ({e}); opening a new one",
                    s.handle
                );
                *guard = None;
            }
        }
        if guard.is_none() {
            *guard = Some(self.open_session().await?);
        }
        let session = guard.as_mut().expect("opened");
        session.used = Instant::now();
        let result = match work {
            Work::Submit {
                spec,
                refs,
                own,
                config,
            } => self.submit_in(session, spec, refs, own, config).await,
            Work::Ddl { spec, refs } => self.ddl_in(session, spec, refs).await,
            Work::Control { sql } => self.execute(session, sql, &BTreeMap::new()).await,
            Work::Explain { sql, refs } => {
                let mut declared = Ok(());
                for key in refs {
                    if let Err(why) = self.declare(session, key, &mut Vec::new()).await {
                        declared = Err(why);
                        break;
                    }
                }
                match declared {
                    Ok(()) => self.execute(session, sql, &BTreeMap::new()).await,
                    Err(why) => Ok(Executed::Rejected(why)),
                }
            }
        };
        match result {
            Err(TargetError::Http { ref message, .. })
                if message.contains("getSession")
                    || message.contains("does not exist") && message.contains("ession") =>
            {
                tracing::info!("gateway session lost ({message}); opening a new one");
                *guard = Some(self.open_session().await?);
                Err(TargetError::Transport {
                    method: "POST".into(),
                    path: "/v2/sessions".into(),
                    message: format!("the gateway lost its session ({message}); a new one is open"),
                })
            }
            other => other,
        }
    }

    /// Rows of a statement that ends, or its rejection cause.
    async fn rows_of(&self, session: &SessionState, sql: &str) -> Result<Vec<Value>, String> {
        match self.execute(session, sql, &BTreeMap::new()).await {
            Ok(Executed::Ok { rows, .. }) => Ok(rows),
            Ok(Executed::Rejected(c)) => Err(c),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Declares table `key` (and, first, what it needs) in the session unless it is there already.
    /// Unknown tables are left to Flink (they may live in a catalog the user configured).
    async fn declare(
        &self,
        session: &mut SessionState,
        key: &str,
        stack: &mut Vec<String>,
    ) -> Result<(), String> {
        if session.declared.contains_key(key) || stack.iter().any(|k| k == key) {
            return Ok(());
        }
        let Some(def) = self.defs.definition_of(key).cloned() else {
            return Ok(());
        };
        stack.push(key.to_string());
        for need in def.needs() {
            Box::pin(self.declare(session, need, stack)).await?;
        }
        stack.pop();
        let sql = match &def {
            Definition::Ddl { sql, .. } => sql.clone(),
            Definition::Derived {
                query,
                primary_key,
                options,
                ..
            } => {
                let probe = quote_identifier(&format!("flinkpipe_probe_{key}"));
                let drop = format!("DROP TEMPORARY VIEW IF EXISTS {probe}");
                let _ = self.rows_of(session, &drop).await;
                self.rows_of(
                    session,
                    &format!("CREATE TEMPORARY VIEW {probe} AS {query}"),
                )
                .await
                .map_err(|c| format!("declaring {key} (schema of {}): {c}", def.statement()))?;
                let rows = self
                    .rows_of(session, &format!("DESCRIBE {probe}"))
                    .await
                    .map_err(|c| format!("declaring {key}: {c}"))?;
                let _ = self.rows_of(session, &drop).await;
                let cols = wire::described_columns(&rows);
                wire::derived_table_ddl(def.table(), &cols, primary_key, options)
            }
        };
        match self.execute(session, &sql, &BTreeMap::new()).await {
            Ok(Executed::Ok { .. }) => {}
            Ok(Executed::Rejected(c)) if c.contains("already exists") => {}
            Ok(Executed::Rejected(c)) => {
                return Err(format!(
                    "declaring table {key} from {}: {c}",
                    def.statement()
                ));
            }
            Err(e) => return Err(format!("declaring table {key}: {e}")),
        }
        tracing::debug!(
            "declared {key} in the gateway session ({})",
            def.statement()
        );
        session.declared.insert(
            key.to_string(),
            (def.statement().to_string(), wire::sql_hash(&sql)),
        );
        Ok(())
    }

    // ---- jobs -----------------------------------------------------------------------------------

    async fn jobs(&self) -> Result<Vec<JobOverview>, TargetError> {
        let v = self.get(self.jm("jobs/overview")).await?;
        let jobs: Vec<JobOverview> = v
            .get("jobs")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| TargetError::Config(format!("unexpected /jobs/overview answer: {e}")))?
            .unwrap_or_default();
        Ok(jobs)
    }

    /// The newest job of a statement, ignoring jobs whose statement this process deleted. A
    /// materialized table's refresh job is named by Flink after the table, so it must also carry the
    /// statement's name in its job parameters (two projects may deploy the same table name).
    async fn newest(&self, jobs: &[JobOverview], name: &str) -> Option<JobOverview> {
        fn newest_first(mut v: Vec<&JobOverview>) -> Vec<&JobOverview> {
            v.sort_by_key(|j| std::cmp::Reverse((j.start_time, wire::job_is_live(&j.state))));
            v
        }
        // Only the newest job speaks for the statement: an older one (stopped before a resume,
        // failed before a restart) never comes back when the newest is deleted.
        let hidden = |j: &JobOverview| self.local().deleted_jobs.contains(&j.jid);
        let direct = newest_first(jobs.iter().filter(|j| j.name == name).collect());
        if let Some(j) = direct.first() {
            return (!hidden(j)).then(|| (*j).clone());
        }
        // A materialized table's refresh job: by table when the project is known, else any refresh
        // job; either way it must carry the statement's name in its job parameters.
        let table = self.defs.materialized_table(name);
        if table.is_none() && self.defs.statement(name).is_some() {
            return None;
        }
        let refresh = newest_first(
            jobs.iter()
                .filter(|j| match table {
                    Some(t) => wire::is_materialized_job(&j.name, t),
                    None => j.name.starts_with("Materialized_table_"),
                })
                .collect(),
        );
        for j in refresh {
            if self.job_tag(&j.jid, wire::TAG_STATEMENT).await.as_deref() == Some(name) {
                return (!hidden(j)).then(|| j.clone());
            }
        }
        None
    }

    /// A flinkpipe tag of a job (`pipeline.global-job-parameters`, `/jobs/{id}/config`), if any.
    async fn job_tag(&self, jid: &str, key: &str) -> Option<String> {
        let config = self
            .get(self.jm(&format!("jobs/{jid}/config")))
            .await
            .ok()?;
        config
            .pointer("/execution-config/user-config")
            .and_then(|u| u.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// The statement state of a job: phase, and detail (failure cause, savepoint path), SQL and
    /// properties read back by hash.
    async fn job_state(
        &self,
        name: &str,
        job: &JobOverview,
    ) -> Result<Option<StatementState>, TargetError> {
        let mut detail = String::new();
        let mut stopped_sp = None;
        if job.state == "FINISHED" {
            stopped_sp = self.local().savepoints.get(&job.jid).cloned();
        }
        if job.state == "FINISHED" && stopped_sp.is_none() {
            let cps = self
                .get(self.jm(&format!("jobs/{}/checkpoints", job.jid)))
                .await
                .unwrap_or(Value::Null);
            stopped_sp = wire::stop_savepoint(&cps);
        }
        let Some(mut phase) = wire::job_phase(&job.state, stopped_sp.is_some()) else {
            return Ok(None);
        };
        if phase == Phase::Running {
            // A RUNNING job may still be deploying its tasks (or about to fail on a missing topic):
            // it counts as running once every task runs.
            let details = self
                .get(self.jm(&format!("jobs/{}", job.jid)))
                .await
                .unwrap_or(Value::Null);
            if let Some((running, total)) = wire::tasks_running(&details)
                && running < total
            {
                phase = Phase::Pending;
                detail = format!("{running} of {total} tasks running");
            }
        }
        if let Some(sp) = &stopped_sp {
            detail = format!("stopped with savepoint {sp}");
        }
        if matches!(phase, Phase::Failed | Phase::Failing | Phase::Degraded) {
            let ex = self
                .get(self.jm(&format!("jobs/{}/exceptions", job.jid)))
                .await
                .unwrap_or(Value::Null);
            detail = wire::job_failure(&ex).unwrap_or_default();
        }
        let sql_tag = self.job_tag(&job.jid, wire::TAG_SQL).await;
        let props_tag = self.job_tag(&job.jid, wire::TAG_PROPERTIES).await;
        let (sql, properties) = match self.defs.statement(name) {
            Some(spec) => {
                let sql = if sql_tag.as_deref() == Some(&wire::sql_hash(&spec.sql)) {
                    spec.sql.clone()
                } else {
                    format!(
                        "-- deployed SQL is not the project's current text (job {}, hash {})",
                        job.jid,
                        sql_tag.clone().unwrap_or_else(|| "none".into())
                    )
                };
                let props =
                    if props_tag.as_deref() == Some(&wire::properties_hash(&spec.properties)) {
                        spec.properties.clone()
                    } else {
                        BTreeMap::new()
                    };
                (sql, props)
            }
            None => (
                format!("-- job {} (SQL not in the project)", job.jid),
                BTreeMap::new(),
            ),
        };
        Ok(Some(StatementState {
            name: name.to_string(),
            stopped: phase == Phase::Stopped,
            phase,
            detail,
            sql,
            properties,
        }))
    }

    /// The stop savepoint of the newest stopped job of `name`.
    async fn savepoint_of(&self, job: &JobOverview) -> Option<String> {
        if let Some(sp) = self.local().savepoints.get(&job.jid) {
            return Some(sp.clone());
        }
        let cps = self
            .get(self.jm(&format!("jobs/{}/checkpoints", job.jid)))
            .await
            .ok()?;
        wire::stop_savepoint(&cps)
    }

    /// Submits a DML (or CTAS, statement set, materialized table), declaring its tables first.
    async fn submit_dml(
        &self,
        spec: &StatementSpec,
        recovery: Option<&str>,
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
        config.insert("pipeline.global-job-parameters".into(), params);
        if let Some(sp) = recovery {
            config.insert("execution.state-recovery.path".into(), sp.to_string());
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
            Executed::Rejected(cause) => {
                let state = StatementState {
                    name: spec.name.clone(),
                    phase: Phase::Failed,
                    detail: cause,
                    sql: spec.sql.clone(),
                    properties: spec.properties.clone(),
                    stopped: false,
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
                })
            }
        }
    }

    async fn run_ddl(&self, spec: &StatementSpec) -> Result<StatementState, TargetError> {
        let refs = referenced_tables(&spec.sql);
        let outcome = self.with_session(Work::Ddl { spec, refs: &refs }).await?;
        let (phase, detail) = match outcome {
            Executed::Ok { .. } => (Phase::Completed, String::new()),
            Executed::Rejected(c) => (Phase::Failed, c),
        };
        let state = StatementState {
            name: spec.name.clone(),
            phase,
            detail,
            sql: spec.sql.clone(),
            properties: spec.properties.clone(),
            stopped: false,
        };
        self.local().ddl.insert(spec.name.clone(), state.clone());
        Ok(state)
    }

    /// Runs a statement that ends (`STOP JOB …`) and returns its rows, or the rejection as an error.
    async fn run_control(&self, sql: &str) -> Result<Vec<Value>, TargetError> {
        let outcome = self.with_session(Work::Control { sql }).await?;
        match outcome {
            Executed::Ok { rows, .. } => Ok(rows),
            Executed::Rejected(cause) => Err(rejected(format!("{sql}: {cause}"))),
        }
    }
}

/// A unit of work run while holding the session.
enum Work<'a> {
    /// A DML: declare its tables, then submit.
    Submit {
        spec: &'a StatementSpec,
        refs: &'a [String],
        /// The table the statement itself creates (CTAS, materialized table): (key, name).
        own: Option<(&'a str, &'a str)>,
        config: &'a BTreeMap<String, String>,
    },
    /// A DDL: declare what it needs, then run it.
    Ddl {
        spec: &'a StatementSpec,
        refs: &'a [String],
    },
    /// A statement that ends (`STOP JOB …`).
    Control { sql: &'a str },
    /// `EXPLAIN` of a statement, its tables declared first.
    Explain { sql: &'a str, refs: &'a [String] },
}

impl GatewayTarget {
    async fn submit_in(
        &self,
        s: &mut SessionState,
        spec: &StatementSpec,
        refs: &[String],
        own: Option<(&str, &str)>,
        config: &BTreeMap<String, String>,
    ) -> Result<Executed, TargetError> {
        for key in refs {
            if own.is_some_and(|(k, _)| k == key) {
                continue;
            }
            if let Err(why) = self.declare(s, key, &mut Vec::new()).await {
                return Ok(Executed::Rejected(why));
            }
        }
        // A CTAS or materialized table declares its own table: drop a declaration made earlier in
        // this session (metadata of the in-memory session catalog only; no data is touched).
        if let Some((key, table)) = own
            && s.declared.remove(key).is_some()
        {
            self.execute(
                s,
                &format!("DROP TABLE IF EXISTS {}", quote_identifier(table)),
                &BTreeMap::new(),
            )
            .await?;
        }
        let text = catalog::execute_statement_set(&spec.sql);
        let out = match self
            .execute(s, text.as_deref().unwrap_or(&spec.sql), config)
            .await?
        {
            Executed::Rejected(cause) if cause.contains("not found") => {
                Executed::Rejected(self.undefined_hint(cause, refs, own))
            }
            other => other,
        };
        if let (Executed::Ok { .. }, Some((key, _))) = (&out, own) {
            s.declared.insert(
                key.to_string(),
                (spec.name.clone(), wire::sql_hash(&spec.sql)),
            );
        }
        Ok(out)
    }

    /// Adds to a "not found" cause the tables the statement uses that nothing defines.
    fn undefined_hint(&self, cause: String, refs: &[String], own: Option<(&str, &str)>) -> String {
        let undefined: Vec<&str> = refs
            .iter()
            .filter(|k| own.is_none_or(|(o, _)| o != k.as_str()))
            .filter(|k| self.defs.definition_of(k).is_none())
            .map(String::as_str)
            .collect();
        if undefined.is_empty() {
            return cause;
        }
        format!(
            "{cause} (no DDL defines {}: an external table needs its DDL in flinkpipe.gateway.external_ddl)",
            undefined.join(", ")
        )
    }

    async fn ddl_in(
        &self,
        s: &mut SessionState,
        spec: &StatementSpec,
        refs: &[String],
    ) -> Result<Executed, TargetError> {
        let created = catalog::created_tables(&spec.sql);
        for key in refs {
            if created.iter().any(|(k, _)| k == key) {
                continue;
            }
            if let Err(why) = self.declare(s, key, &mut Vec::new()).await {
                return Ok(Executed::Rejected(why));
            }
        }
        let hash = wire::sql_hash(&spec.sql);
        let same = |s: &SessionState| {
            created
                .iter()
                .all(|(k, _)| s.declared.get(k).is_some_and(|(_, h)| *h == hash))
        };
        // Declared from this very text already (every table it creates): nothing to do.
        if !created.is_empty() && same(s) {
            return Ok(Executed::Ok {
                job_id: None,
                rows: vec![],
            });
        }
        for (key, table) in &created {
            // Declared from another text in this session: replace the session's declaration
            // (in-memory catalog metadata; no data is touched).
            if s.declared.remove(key).is_some() {
                self.execute(
                    s,
                    &format!("DROP TABLE IF EXISTS {}", quote_identifier(table)),
                    &BTreeMap::new(),
                )
                .await?;
            }
        }
        let out = self.execute(s, &spec.sql, &BTreeMap::new()).await?;
        if let Executed::Ok { .. } = out {
            for (key, _) in created {
                s.declared.insert(key, (spec.name.clone(), hash.clone()));
            }
        }
        Ok(out)
    }
}

#[async_trait]
impl Target for GatewayTarget {
    fn describe(&self) -> String {
        format!(
            "flink sql gateway {} (jobmanager {})",
            self.settings.gateway_url, self.settings.jobmanager_url
        )
    }

    async fn list_statements(&self) -> Result<Vec<StatementState>, TargetError> {
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
            self.local()
                .savepoints
                .insert(job.jid.clone(), path.to_string());
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
        let state = self.submit_dml(&spec, Some(&savepoint)).await?;
        if state.phase == Phase::Failed {
            return Err(rejected(format!("resuming {name}: {}", state.detail)));
        }
        Ok(())
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
                let ids = {
                    let mut local = self.local();
                    local.deleted_jobs.insert(job.jid.clone());
                    local.deleted_jobs.clone()
                };
                if let Some(f) = &self.settings.deleted_jobs_file {
                    let write = || -> std::io::Result<()> {
                        if let Some(dir) = f.parent() {
                            std::fs::create_dir_all(dir)?;
                        }
                        let text =
                            serde_json::to_vec_pretty(&ids).map_err(std::io::Error::other)?;
                        crate::fsutil::write_atomic(f, &text)
                    };
                    write().map_err(|e| {
                        TargetError::Config(format!(
                            "{name}: cannot record the deletion in {}: {e}",
                            f.display()
                        ))
                    })?;
                }
                Ok(true)
            }
        }
    }

    /// `EXPLAIN` in the session (its tables declared) of an INSERT, a statement set (either form), or
    /// the query of a CTAS or materialized table: the planner validates it without starting a job. DDL
    /// is not checked.
    async fn validate_statement(&self, spec: &StatementSpec) -> Result<(), TargetError> {
        let converted = catalog::execute_statement_set(&spec.sql);
        let text = converted.as_deref().unwrap_or(&spec.sql).trim_start();
        let upper: String = text
            .chars()
            .take(40)
            .collect::<String>()
            .to_ascii_uppercase();
        let upper = upper.split_whitespace().collect::<Vec<_>>().join(" ");
        let explain = if upper.starts_with("INSERT ") {
            format!("EXPLAIN {text}")
        } else if upper.starts_with("EXECUTE STATEMENT SET") {
            // `EXECUTE STATEMENT SET BEGIN … END` is explained as `EXPLAIN STATEMENT SET BEGIN … END`.
            let rest = text["EXECUTE".len()..].trim_start();
            format!("EXPLAIN {rest}")
        } else if let Some(query) = catalog::created_tables(&spec.sql)
            .first()
            .and_then(|_| catalog::query_after_as(text))
        {
            // A CTAS or materialized table: its query must plan.
            format!("EXPLAIN {query}")
        } else {
            return Ok(());
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
            Executed::Rejected(cause) => Err(TargetError::Invalid(cause)),
        }
    }

    async fn check_compute_pool(&self) -> Result<(), TargetError> {
        let info = self.get(self.gw("v1/info")).await?;
        let overview = self.get(self.jm("overview")).await?;
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
