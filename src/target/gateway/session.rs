//! The gateway session: opened once per process, kept alive by heartbeats, replaced when the gateway
//! lost it ([`ErrorClass::SessionLost`]); statements run in it one at a time (operations, results
//! followed from token 0 until a payload or `EOS`,
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>),
//! and every table a statement needs is declared in it first from the project's DDL ([`catalog`]).

use super::GatewayTarget;
use super::catalog::{self, Definition};
use super::http::HttpError;
use super::wire::{self, ErrorClass, Rejection, RejectionKind};
use crate::sql::quote_identifier;
use crate::target::{StatementSpec, TargetError};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The open session and what it has declared.
#[derive(Debug)]
pub(super) struct SessionState {
    handle: String,
    /// Table key → the statement that declared it in this session, with the hash of its SQL.
    declared: BTreeMap<String, (String, String)>,
    /// When the session was last used: an idle session gets a heartbeat before it is used again.
    used: Instant,
}

/// The result of one statement run through the gateway.
pub(super) enum Executed {
    /// Finished: the job id (DML) and the rows of the first payloads (DDL/SHOW/STOP).
    Ok {
        job_id: Option<String>,
        rows: Vec<Value>,
    },
    /// The gateway rejected it.
    Rejected(Rejection),
}

/// A unit of work run while holding the session.
pub(super) enum Work<'a> {
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
    async fn open_session(&self) -> Result<SessionState, HttpError> {
        let mut props = self.settings.session_properties.clone();
        props
            .entry("execution.runtime-mode".into())
            .or_insert_with(|| "streaming".into());
        let body = json!({"sessionName": "flinkpipe", "properties": props});
        let v = self
            .http
            .send(Method::POST, self.http.gw("v2/sessions"), Some(&body))
            .await?;
        let handle = v
            .get("sessionHandle")
            .and_then(Value::as_str)
            .ok_or_else(|| HttpError {
                class: ErrorClass::Other,
                error: TargetError::Config(format!("the gateway opened no session: {v}")),
            })?;
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
    ) -> Result<Executed, HttpError> {
        let mut body = json!({"statement": sql});
        if !config.is_empty() {
            body["executionConfig"] = json!(config);
        }
        let sh = &session.handle;
        let v = self
            .http
            .send(
                Method::POST,
                self.http.gw(&format!("v2/sessions/{sh}/statements")),
                Some(&body),
            )
            .await?;
        let oh = v
            .get("operationHandle")
            .and_then(Value::as_str)
            .ok_or_else(|| HttpError {
                class: ErrorClass::Other,
                error: TargetError::Config(format!("the gateway returned no operation: {v}")),
            })?
            .to_string();
        let deadline = Instant::now() + self.settings.submit_timeout;
        let mut uri = format!("v2/sessions/{sh}/operations/{oh}/result/0?rowFormat=JSON");
        let mut rows: Vec<Value> = Vec::new();
        let mut job_id: Option<String> = None;
        let mut polls = 0u32;
        let outcome = loop {
            // The statement is accepted: from here on no error may look retryable to the
            // executor (a second POST could start a second job). Reading a result page again is
            // allowed (the same token answers the same page:
            // https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/),
            // so transport problems are retried here until the deadline.
            let page = match self
                .http
                .get_until(self.http.gw(&uri), tokio::time::Instant::from_std(deadline))
                .await
            {
                Ok(p) => p,
                // An HTTP 500 on a result is the statement's failure (observed on the service).
                Err(e) if matches!(e.class, ErrorClass::ServerError | ErrorClass::SessionLost) => {
                    break Executed::Rejected(Rejection::new(e.cause()));
                }
                Err(e) => {
                    break Executed::Rejected(Rejection::new(format!(
                        "the statement was accepted (operation {oh}) but its result could not be read: {e}; check the cluster's jobs before deploying again"
                    )));
                }
            };
            if Instant::now() >= deadline {
                let _ = self
                    .http
                    .send(
                        Method::POST,
                        self.http
                            .gw(&format!("v2/sessions/{sh}/operations/{oh}/cancel")),
                        None,
                    )
                    .await;
                break Executed::Rejected(Rejection::new(format!(
                    "no complete result after {:.0?} (operation cancelled)",
                    self.settings.submit_timeout
                )));
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
        // Closing an INSERT's operation does not stop its job (observed on the service; jobs are
        // stopped through the JobManager,
        // https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/rest_api/).
        let _ = self
            .http
            .send(
                Method::DELETE,
                self.http
                    .gw(&format!("v2/sessions/{sh}/operations/{oh}/close")),
                None,
            )
            .await;
        Ok(outcome)
    }

    /// Runs `work` with the session, opening it first. A session the gateway lost (expired,
    /// gateway restarted) is replaced and the error reported as a transport error (retryable): the
    /// executor's retry runs the step again, and the new session declares the tables again.
    pub(super) async fn with_session(&self, work: Work<'_>) -> Result<Executed, TargetError> {
        let mut guard = self.live_session().await?;
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
            Work::Explain { sql, refs } => match self.declare_all(session, refs, None).await {
                Ok(()) => self.execute(session, sql, &BTreeMap::new()).await,
                Err(why) => Ok(Executed::Rejected(why)),
            },
        };
        match result {
            Err(e) if e.class == ErrorClass::SessionLost => {
                let cause = e.cause();
                tracing::info!("gateway session lost ({cause}); opening a new one");
                *guard = Some(self.open_session().await?);
                Err(TargetError::Transport {
                    method: "POST".into(),
                    path: "/v2/sessions".into(),
                    message: format!("the gateway lost its session ({cause}); a new one is open"),
                })
            }
            other => other.map_err(TargetError::from),
        }
    }

    /// The session, locked: an idle one gets a heartbeat first, one the gateway dropped (expired,
    /// restarted: its tables are gone with it) is replaced, none is opened.
    async fn live_session(
        &self,
    ) -> Result<tokio::sync::MutexGuard<'_, Option<SessionState>>, TargetError> {
        let mut guard = self.session.lock().await;
        if let Some(s) = guard.as_ref()
            && s.used.elapsed() >= self.settings.heartbeat_after
        {
            let url = self.http.gw(&format!("v2/sessions/{}/heartbeat", s.handle));
            if let Err(e) = self.http.send(Method::POST, url, None).await {
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
        if let Some(s) = guard.as_mut() {
            s.used = Instant::now();
        }
        Ok(guard)
    }

    /// Declares the tables a query reads, then submits it without reading its result (the caller
    /// pages through it): `(session handle, operation handle)`, or the gateway's rejection.
    pub(super) async fn submit_query(
        &self,
        sql: &str,
        refs: &[String],
        config: &BTreeMap<String, String>,
    ) -> Result<Result<(String, String), Rejection>, TargetError> {
        let mut guard = self.live_session().await?;
        let session = guard.as_mut().expect("opened");
        if let Err(why) = self.declare_all(session, refs, None).await {
            return Ok(Err(why));
        }
        let body = json!({"statement": sql, "executionConfig": config});
        let sh = session.handle.clone();
        let v = self
            .http
            .send(
                Method::POST,
                self.http.gw(&format!("v2/sessions/{sh}/statements")),
                Some(&body),
            )
            .await
            .map_err(TargetError::from)?;
        let oh = v
            .get("operationHandle")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                TargetError::Config(format!("the gateway returned no operation: {v}"))
            })?;
        Ok(Ok((sh, oh.to_string())))
    }

    /// Rows of a statement that ends, or its rejection cause.
    async fn rows_of(&self, session: &SessionState, sql: &str) -> Result<Vec<Value>, String> {
        match self.execute(session, sql, &BTreeMap::new()).await {
            Ok(Executed::Ok { rows, .. }) => Ok(rows),
            Ok(Executed::Rejected(r)) => Err(r.cause),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Declares every table of `refs` but the statement's own (`own`: its table key).
    async fn declare_all(
        &self,
        session: &mut SessionState,
        refs: &[String],
        own: Option<&str>,
    ) -> Result<(), Rejection> {
        for key in refs {
            if own == Some(key.as_str()) {
                continue;
            }
            self.declare(session, key, &mut Vec::new())
                .await
                .map_err(Rejection::new)?;
        }
        Ok(())
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
            Ok(Executed::Rejected(r)) if r.kind == RejectionKind::AlreadyExists => {}
            Ok(Executed::Rejected(r)) => {
                return Err(format!(
                    "declaring table {key} from {}: {}",
                    def.statement(),
                    r.cause
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

    async fn submit_in(
        &self,
        s: &mut SessionState,
        spec: &StatementSpec,
        refs: &[String],
        own: Option<(&str, &str)>,
        config: &BTreeMap<String, String>,
    ) -> Result<Executed, HttpError> {
        if let Err(why) = self.declare_all(s, refs, own.map(|(k, _)| k)).await {
            return Ok(Executed::Rejected(why));
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
            Executed::Rejected(r) if r.kind == RejectionKind::NotFound => {
                let hint = self.undefined_hint(s, &r, refs, own);
                Executed::Rejected(Rejection::new(hint))
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

    /// Adds to a "not found" cause the tables the statement uses that nothing defines: no DDL of
    /// the project or of `external_ddl`, and not declared in this session either (a unit test's
    /// `_ut` tables are created there by their test DDL). When the cause names the missing object,
    /// the hint is given only when that object is such a table, so a table that exists never gets it.
    fn undefined_hint(
        &self,
        s: &SessionState,
        rejection: &Rejection,
        refs: &[String],
        own: Option<(&str, &str)>,
    ) -> String {
        let cause = rejection.cause.clone();
        let missing = rejection.missing_object().map(catalog::table_key);
        let undefined: Vec<&str> = refs
            .iter()
            .filter(|k| own.is_none_or(|(o, _)| o != k.as_str()))
            .filter(|k| self.defs.definition_of(k).is_none() && !s.declared.contains_key(*k))
            .filter(|k| missing.as_ref().is_none_or(|m| m == *k))
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
    ) -> Result<Executed, HttpError> {
        let created = catalog::created_tables(&spec.sql);
        for key in refs {
            if created.iter().any(|(k, _)| k == key) {
                continue;
            }
            if let Err(why) = self.declare(s, key, &mut Vec::new()).await {
                return Ok(Executed::Rejected(Rejection::new(why)));
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
