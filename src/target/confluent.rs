//! The Confluent Cloud for Apache Flink target: the `sql/v1` statements API over HTTPS (reqwest with
//! rustls), HTTP Basic auth with the Flink API key from the environment. Rules followed
//! (Confluent's Flink REST API guide,
//! <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>, and its
//! reference, <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>):
//! - base path `{endpoint}/sql/v1/organizations/{org}/environments/{env}`, both ids checked
//!   non-empty (an empty segment gives confusing 404s); `User-Agent: flinkpipe/<version>`;
//!   `X-Request-Id` appended to every error.
//! - one paginated listing (`page_size=100`), `metadata.next` resolved and its `page_token`
//!   re-issued on the original request; stops on an absent/null/empty `next` or a repeated token.
//! - GET and DELETE are retried on 429, 500, 502, 503, 504 and connection errors, honouring
//!   `Retry-After`. Stop and resume are the GA `PUT` of the whole statement with its
//!   `metadata.resource_version` (read, set `spec.stopped`, write; a 409 or an unknown outcome is
//!   read again and retried, bounded; never the Early Access `PATCH`). Every body is masked as it is
//!   read ([`ServerText`]). POST is never retried here (the statement name is the idempotency key: the executor GETs the name
//!   first). Error bodies: every `errors[].detail` joined with `"; "`, else the raw
//!   body. Redirects are not followed automatically: a redirect to the **same host** (same scheme or
//!   an upgrade to HTTPS) is re-issued with credentials, up to 5 hops; a redirect to another host (or
//!   to a URL with user-info) is refused, so credentials never leave the configured host. An endpoint
//!   with user-info (`https://user:pw@host`) is refused: the API key comes from the environment only.
//! - every response field optional except name, `spec.statement`, `status.phase` (the reference
//!   marks most fields optional, and real answers omit some); any 2xx accepted.

use super::retry::{Backoff, Limit, Retryable, parse_retry_after, retry, seed_of};
use super::secrets::{Credentials, Scrubber, ServerText};
use super::{
    Checked, ErrorKind, Phase, StatementMeta, StatementSpec, StatementState, Target, TargetError,
};
use async_trait::async_trait;
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

mod query;

/// The label every statement flinkpipe creates carries (`metadata.labels`, value `true`; user labels
/// must be prefixed `user.confluent.io/`), and the `label_selector` that lists only those
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)/operation/listSqlv1Statements>).
pub const FLINKPIPE_LABEL: &str = "user.confluent.io/flinkpipe";

/// Maximum redirect hops re-issued by hand (the Flink endpoint may redirect; Confluent's own CLI
/// follows about 5 hops with credentials, <https://github.com/confluentinc/cli>).
pub const MAX_REDIRECTS: usize = 5;

/// The statement property of a dry run: parsed and validated, not executed
/// (<https://docs.confluent.io/cloud/current/flink/reference/statements/set.html>).
pub const DRY_RUN_PROPERTY: &str = "sql.dry-run";

/// Longest wait for a dry run whose POST answer was not final.
/// How long the clean-up of a query (or of a create whose answer was lost) retries its delete
/// through 429s, 5xx and dropped connections before it gives up and says so.
pub const CLEANUP_WITHIN: Duration = Duration::from_secs(60);

const DRY_RUN_WAIT: Duration = Duration::from_secs(60);

/// A fresh name for the dry run of `name`: `<name>-dry-<8 hex digits>` (shortened to 100 characters
/// by [`crate::plan::naming::fit_length`]), so that a dry run never meets an existing statement.
pub fn dry_run_name(name: &str) -> String {
    use std::hash::{Hash, Hasher};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (name, nanos, std::process::id()).hash(&mut h);
    crate::plan::naming::fit_length(format!("{name}-dry-{:08x}", h.finish() as u32))
}

/// Everything the Confluent target needs. Built from `config.yaml` and the environment by
/// [`crate::target::settings::confluent`].
#[derive(Debug, Clone)]
pub struct ConfluentSettings {
    /// Flink REST endpoint, e.g. `https://flink.us-west-2.aws.confluent.cloud` (no trailing `/`).
    pub endpoint: String,
    /// `confluent_cloud.organization_id` (a UUID).
    pub organization_id: String,
    /// `confluent_cloud.environment_id` (`env-…`).
    pub environment_id: String,
    /// `flink.compute_pool_id` (`lfcp-…`); `None`: the environment's default pool.
    pub compute_pool_id: Option<String>,
    /// `confluent_cloud.service_account_id`: the statements' principal; `None`: the caller.
    pub principal: Option<String>,
    /// `flink.catalog_name` → `sql.current-catalog`.
    pub catalog: Option<String>,
    /// `flink.database_name` → `sql.current-database`.
    pub database: Option<String>,
    /// Flink API key and secret (`SL_FLINK_API_KEY` / `SL_FLINK_API_SECRET`).
    pub credentials: Credentials,
    /// Timeout of one HTTP request.
    pub request_timeout: Duration,
    /// Retry policy of idempotent calls.
    pub retry: Backoff,
}

/// The Confluent Cloud target. Cheap to clone (a query's result stream holds its own copy).
#[derive(Clone)]
pub struct ConfluentTarget {
    settings: ConfluentSettings,
    client: reqwest::Client,
    base: Url,
    scrubber: Scrubber,
}

/// One statement as the API returns it; everything optional but the name
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>).
#[derive(Debug, Deserialize)]
struct WireStatement {
    name: String,
    #[serde(default)]
    metadata: WireMetadata,
    #[serde(default)]
    spec: WireSpec,
    #[serde(default)]
    status: WireStatus,
}

#[derive(Debug, Default, Deserialize)]
struct WireMetadata {
    #[serde(default)]
    created_at: Option<String>,
}

/// `status.state_limit_status`.
#[derive(Debug, Default, Deserialize)]
struct WireStateLimit {
    #[serde(default)]
    state_limit_state: Option<String>,
    #[serde(default)]
    detail: Option<String>,
}

/// One of `status.warnings`.
#[derive(Debug, Default, Deserialize)]
struct WireWarning {
    #[serde(default)]
    severity: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
}

/// `StatementExceptionList` (`GET …/statements/{name}/exceptions`).
#[derive(Debug, Default, Deserialize)]
struct WireExceptions {
    #[serde(default)]
    data: Option<Vec<WireException>>,
}

#[derive(Debug, Default, Deserialize)]
struct WireException {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireSpec {
    #[serde(default)]
    statement: Option<String>,
    #[serde(default)]
    properties: Option<BTreeMap<String, String>>,
    #[serde(default)]
    stopped: Option<bool>,
    #[serde(default)]
    compute_pool_id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireStatus {
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    scaling_status: Option<WireScaling>,
    #[serde(default)]
    state_limit_status: Option<WireStateLimit>,
    #[serde(default)]
    warnings: Option<Vec<WireWarning>>,
    #[serde(default)]
    latest_offsets: Option<BTreeMap<String, String>>,
    #[serde(default)]
    latest_offsets_timestamp: Option<String>,
}

/// The zero time Go services send for an unset timestamp (`latest_offsets_timestamp` before any
/// offsets were recorded, as in the API reference's example).
fn is_zero_time(t: &str) -> bool {
    t.is_empty() || t.starts_with("0001-01-01")
}

impl WireStatus {
    fn notes(&mut self) -> super::ServerNotes {
        super::ServerNotes {
            state_limit: self.state_limit_status.take().and_then(|l| {
                Some(super::StateLimitStatus {
                    state: l.state_limit_state.filter(|s| !s.is_empty())?.into(),
                    detail: l.detail.unwrap_or_default(),
                })
            }),
            warnings: self
                .warnings
                .take()
                .unwrap_or_default()
                .into_iter()
                .map(|w| super::StatementWarning {
                    severity: w.severity.unwrap_or_default().into(),
                    reason: w.reason.unwrap_or_default(),
                    message: w.message.unwrap_or_default(),
                    created_at: w.created_at.filter(|t| !is_zero_time(t)),
                })
                .collect(),
            latest_offsets: self.latest_offsets.take().unwrap_or_default(),
            latest_offsets_timestamp: self
                .latest_offsets_timestamp
                .take()
                .filter(|t| !is_zero_time(t)),
            exceptions: Vec::new(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct WireScaling {
    #[serde(default)]
    scaling_state: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireList<T> {
    #[serde(default)]
    metadata: Option<WireListMeta>,
    #[serde(default = "Vec::new")]
    data: Vec<T>,
}

#[derive(Debug, Deserialize)]
struct WireListMeta {
    #[serde(default)]
    next: Option<String>,
}

impl From<WireStatement> for StatementState {
    fn from(mut w: WireStatement) -> Self {
        let notes = w.status.notes();
        StatementState {
            name: w.name,
            phase: Phase::parse(w.status.phase.as_deref().unwrap_or("PENDING")),
            detail: w.status.detail.unwrap_or_default(),
            sql: w.spec.statement.unwrap_or_default(),
            properties: w.spec.properties.unwrap_or_default(),
            stopped: w.spec.stopped.unwrap_or(false),
            meta: StatementMeta {
                compute_pool_id: w.spec.compute_pool_id.filter(|p| !p.is_empty()),
                created_at: w.metadata.created_at.filter(|t| !t.is_empty()),
                pool_exhausted: w
                    .status
                    .scaling_status
                    .and_then(|s| s.scaling_state)
                    .is_some_and(|s| s.eq_ignore_ascii_case("POOL_EXHAUSTED")),
                notes: Box::new(notes),
            },
        }
    }
}

/// An answer: status, headers we use, body — masked as it is read ([`ServerText`]), so everything
/// parsed from it (details, exceptions, warnings, error messages) is masked too.
struct Answer {
    status: StatusCode,
    request_id: Option<String>,
    retry_after: Option<Duration>,
    body: ServerText,
}

impl ConfluentTarget {
    /// Builds the client. Errors: an endpoint that is not an absolute http(s) URL, one that carries
    /// credentials (`https://user:pw@host`: they would be printed in errors and sent in place of the
    /// API key; the key and secret come from the environment only), empty ids.
    pub fn new(settings: ConfluentSettings) -> Result<Self, TargetError> {
        if settings.organization_id.trim().is_empty() || settings.environment_id.trim().is_empty() {
            return Err(TargetError::Config(
                "organization id and environment id must be non-empty".into(),
            ));
        }
        let endpoint = super::secrets::base_url(
            &settings.endpoint,
            "Flink endpoint",
            "remove them from flink.sql_endpoint / SL_FLINK_SQL_ENDPOINT; the API key and secret are read from SL_FLINK_API_KEY / SL_FLINK_API_SECRET only",
        )?;
        let shown = super::secrets::mask_userinfo(&settings.endpoint);
        let base = endpoint
            .join(&format!(
                "sql/v1/organizations/{}/environments/{}/",
                settings.organization_id, settings.environment_id
            ))
            .map_err(|e| TargetError::Config(format!("invalid Flink endpoint '{shown}': {e}")))?;
        let client = super::secrets::cloud_http_client(settings.request_timeout)?;
        // Its own credentials, and every other secret of the environment (a server may echo any).
        let scrubber = settings
            .credentials
            .scrubber()
            .merged(&Scrubber::of_environment(&|v| std::env::var(v).ok()));
        Ok(ConfluentTarget {
            settings,
            client,
            base,
            scrubber,
        })
    }

    /// The statements collection URL.
    fn statements_url(&self) -> Url {
        self.base.join("statements").expect("static path")
    }

    fn statement_url(&self, name: &str) -> Url {
        let mut u = self.statements_url();
        u.path_segments_mut()
            .expect("http url has path segments")
            .push(name);
        u
    }

    /// One request, redirects re-issued by hand on the same host only (reqwest's own policy would
    /// drop `Authorization` on a redirect to another host). No retries.
    async fn send_once(
        &self,
        method: &Method,
        url: &Url,
        body: Option<(&str, &serde_json::Value)>,
    ) -> Result<Answer, TargetError> {
        let mut url = url.clone();
        for _hop in 0..=MAX_REDIRECTS {
            let mut req = self
                .client
                .request(method.clone(), url.clone())
                .header(
                    reqwest::header::AUTHORIZATION,
                    format!("Basic {}", self.settings.credentials.basic_token()),
                )
                .header(reqwest::header::ACCEPT, "application/json");
            if let Some((ctype, json)) = body {
                req = req
                    .header(reqwest::header::CONTENT_TYPE, ctype)
                    .body(json.to_string());
            }
            let resp = req
                .send()
                .await
                .map_err(|e| self.transport(method, &url, &e))?;
            let status = resp.status();
            let header = |n: &str| {
                resp.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let request_id = header("x-request-id");
            let retry_after = header("retry-after").and_then(|v| parse_retry_after(&v));
            if status.is_redirection() {
                let location = header("location").ok_or_else(|| {
                    self.http_error(
                        method,
                        &url,
                        status.as_u16(),
                        "redirect without Location",
                        request_id.as_deref(),
                        None,
                    )
                })?;
                let next = url.join(&location).map_err(|e| {
                    TargetError::Config(self.scrubber.scrub(&format!(
                        "{method} {}: invalid redirect Location '{location}': {e}",
                        url.path()
                    )))
                })?;
                let same_host = next.host_str() == url.host_str()
                    && next.port_or_known_default() == url.port_or_known_default()
                    && next.username().is_empty()
                    && next.password().is_none();
                let no_downgrade = !(url.scheme() == "https" && next.scheme() != "https");
                if !same_host || !no_downgrade {
                    return Err(TargetError::Config(self.scrubber.scrub(&format!(
                        "{method} {}: refused to follow a redirect to {}://{}: credentials are only sent to the configured host{}",
                        url.path(),
                        next.scheme(),
                        next.host_str().unwrap_or("?"),
                        request_id.map(|r| format!(" (request id {r})")).unwrap_or_default()
                    ))));
                }
                url = next;
                continue;
            }
            let raw = resp
                .text()
                .await
                .map_err(|e| self.transport(method, &url, &e))?;
            return Ok(Answer {
                status,
                request_id: request_id.map(|r| self.scrubber.scrub(&r)),
                retry_after,
                body: ServerText::masked(&raw, &self.scrubber),
            });
        }
        Err(TargetError::Config(format!(
            "{method} {}: more than {MAX_REDIRECTS} redirects",
            url.path()
        )))
    }

    /// A request retried on 429/5xx/connection errors (for idempotent calls only), up to the
    /// policy's attempts ([`retry`]); the last retryable answer becomes its error.
    async fn send_retrying(
        &self,
        method: Method,
        url: &Url,
        body: Option<(&str, &serde_json::Value)>,
    ) -> Result<Answer, TargetError> {
        retry(
            &self.settings.retry,
            Limit::Attempts,
            seed_of(url.as_str()),
            || async {
                let a = self.send_once(&method, url, body).await?;
                if is_retryable_status(a.status) {
                    return Err(self.fail(&method, url, &a));
                }
                Ok(a)
            },
        )
        .await
        .map_err(|g| g.error)
    }

    /// Deletes statement `name` if it exists, retrying transient errors (429, 5xx, no answer) for
    /// up to `within`: the clean-up of a query or of a lost create. `Ok(false)`: it did not exist.
    ///
    /// Errors: a permanent error, or transient ones until `within` is up (the last one).
    pub async fn remove_within(&self, name: &str, within: Duration) -> Result<bool, TargetError> {
        use crate::target::Target;
        let deadline = tokio::time::Instant::now() + within;
        retry(
            &self.settings.retry,
            Limit::Until(deadline),
            seed_of(name),
            || self.delete_statement(name),
        )
        .await
        .map_err(|g| g.error)
    }

    fn transport(&self, method: &Method, url: &Url, e: &reqwest::Error) -> TargetError {
        let what = if e.is_timeout() {
            "timed out".to_string()
        } else if e.is_connect() {
            format!("connection failed: {e}")
        } else {
            format!("no answer: {e}")
        };
        TargetError::Transport {
            method: method.to_string(),
            path: url.path().to_string(),
            message: self.scrubber.scrub(&what),
        }
    }

    fn http_error(
        &self,
        method: &Method,
        url: &Url,
        status: u16,
        body: &str,
        request_id: Option<&str>,
        retry_after: Option<Duration>,
    ) -> TargetError {
        let mut message = error_message(body);
        if let Some(id) = request_id {
            message.push_str(&format!(" (request id {id})"));
        }
        if status == 401 {
            message.push_str(
                " — check SL_FLINK_API_KEY / SL_FLINK_API_SECRET (a Flink API key for this region, not a Cloud API key)",
            );
        }
        let kind = if is_retryable_status(StatusCode::from_u16(status).unwrap_or(StatusCode::OK)) {
            ErrorKind::Retryable
        } else {
            ErrorKind::Permanent
        };
        TargetError::Http {
            method: method.to_string(),
            path: url.path().to_string(),
            status,
            message: self.scrubber.scrub(&message),
            kind,
            retry_after,
        }
    }

    fn fail(&self, method: &Method, url: &Url, a: &Answer) -> TargetError {
        self.http_error(
            method,
            url,
            a.status.as_u16(),
            &a.body,
            a.request_id.as_deref(),
            a.retry_after,
        )
    }

    fn parse_statement(
        &self,
        method: &Method,
        url: &Url,
        a: &Answer,
    ) -> Result<StatementState, TargetError> {
        serde_json::from_str::<WireStatement>(&a.body)
            .map(StatementState::from)
            .map_err(|e| TargetError::Http {
                method: method.to_string(),
                path: url.path().to_string(),
                status: a.status.as_u16(),
                message: self
                    .scrubber
                    .scrub(&format!("unexpected response body: {e}")),
                kind: ErrorKind::Permanent,
                retry_after: None,
            })
    }

    /// Polls a dry run whose answer was not final until it ends or `deadline`; transient read errors
    /// are retried until `deadline`, a permanent one is returned (the caller still cleans up).
    async fn finish_dry_run(
        &self,
        name: &str,
        state: &mut StatementState,
        deadline: tokio::time::Instant,
    ) -> Result<(), TargetError> {
        while !matches!(
            state.phase,
            Phase::Completed | Phase::Failed | Phase::Failing
        ) {
            if tokio::time::Instant::now() >= deadline {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            match self.get_statement(name).await {
                Ok(Some(s)) => *state = s,
                Ok(None) => return Ok(()),
                Err(e) if e.transient().is_some() && tokio::time::Instant::now() < deadline => {
                    tracing::info!("reading the dry run {name}: {e}; retrying");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Deletes a throw-away statement (a dry run), retrying transient failures until `deadline`
    /// (at least a few attempts); a delete that fails for good is [`TargetError::Leftover`].
    async fn delete_throw_away(
        &self,
        name: &str,
        deadline: tokio::time::Instant,
    ) -> Result<(), TargetError> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.delete_statement(name).await {
                Ok(_) => return Ok(()),
                Err(e)
                    if e.transient().is_some()
                        && (tokio::time::Instant::now() < deadline || attempt < 3) =>
                {
                    tracing::info!("deleting the dry run {name}: {e}; retrying");
                    let delay = self.settings.retry.delay(attempt - 1, seed_of(name));
                    tokio::time::sleep(delay).await;
                }
                Err(e) => {
                    return Err(TargetError::Leftover {
                        name: name.to_string(),
                        cause: e.to_string(),
                    });
                }
            }
        }
    }

    /// Stop (`stopped`) or resume a statement with the GA `PUT` of the whole statement
    /// (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)/operation/updateSqlv1Statement>,
    /// as Confluent's CLI and Terraform provider do; the `PATCH` alternative is Early Access): read it,
    /// set `spec.stopped`, write it back with the `metadata.resource_version` read, so that a
    /// concurrent change is never overwritten. A stale version (409) is read again and retried, up to
    /// [`PUT_ATTEMPTS`] times; a statement already in the wanted `spec.stopped` is left alone. A
    /// transient failure of the PUT (its outcome unknown) is resolved the same way: the next read
    /// shows whether it was applied. Missing → [`TargetError::NotFound`].
    async fn put_stopped(&self, name: &str, stopped: bool) -> Result<(), TargetError> {
        self.put_stopped_at(&self.statement_url(name), name, stopped, &put_body)
            .await
    }

    /// [`ConfluentTarget::put_stopped`] on the resource at `url` (a statement, a materialized
    /// table), whose `PUT` body `body` makes from what GET read.
    async fn put_stopped_at(
        &self,
        url: &Url,
        name: &str,
        stopped: bool,
        body: &(dyn Fn(&serde_json::Value, bool) -> Option<serde_json::Value> + Sync),
    ) -> Result<(), TargetError> {
        let url = url.clone();
        let mut last: Option<TargetError> = None;
        for _ in 0..PUT_ATTEMPTS {
            let a = self.send_retrying(Method::GET, &url, None).await?;
            match a.status {
                StatusCode::NOT_FOUND => return Err(TargetError::NotFound(name.to_string())),
                s if s.is_success() => {}
                _ => return Err(self.fail(&Method::GET, &url, &a)),
            }
            let read: serde_json::Value = serde_json::from_str(&a.body).map_err(|e| {
                self.unexpected(
                    &Method::GET,
                    &url,
                    &a,
                    &format!("unexpected response body: {e}"),
                )
            })?;
            if read
                .pointer("/spec/stopped")
                .and_then(serde_json::Value::as_bool)
                == Some(stopped)
            {
                return Ok(());
            }
            let body = body(&read, stopped).ok_or_else(|| {
                self.unexpected(
                    &Method::GET,
                    &url,
                    &a,
                    &format!(
                        "{name} has no metadata.resource_version: it cannot be updated safely"
                    ),
                )
            })?;
            // What is read is masked ([`ServerText`]): a definition that holds one of the known
            // secrets reads `****`, and writing that back would change it.
            if body.to_string().contains("****") {
                return Err(self.unexpected(
                    &Method::GET,
                    &url,
                    &a,
                    &format!(
                        "{name}: its definition holds a secret flinkpipe masks when it reads it, so it cannot be written back unchanged; stop or resume it in the Confluent Cloud console or CLI"
                    ),
                ));
            }
            let put = match self
                .send_once(&Method::PUT, &url, Some(("application/json", &body)))
                .await
            {
                Ok(p) => p,
                Err(e) if e.transient().is_some() => {
                    last = Some(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            match put.status {
                s if s.is_success() => return Ok(()),
                StatusCode::NOT_FOUND => return Err(TargetError::NotFound(name.to_string())),
                StatusCode::CONFLICT => {
                    tracing::info!(
                        "{name}: changed since it was read (409 on resource_version); reading it again"
                    );
                    last = Some(self.fail(&Method::PUT, &url, &put));
                }
                s if is_retryable_status(s) => {
                    let e = self.fail(&Method::PUT, &url, &put);
                    let wait = e
                        .transient()
                        .and_then(|t| t.retry_after)
                        .unwrap_or(Duration::from_millis(500));
                    tokio::time::sleep(wait).await;
                    last = Some(e);
                }
                _ => return Err(self.fail(&Method::PUT, &url, &put)),
            }
        }
        Err(last.unwrap_or_else(|| {
            TargetError::Config(format!("{name}: the update did not go through"))
        }))
    }

    /// Every statement (one paginated listing), or with `selector` (`k=v,k2=v2`) those whose labels
    /// match it (`label_selector`, filtered by the server).
    async fn list_selected(
        &self,
        selector: Option<&str>,
    ) -> Result<Vec<StatementState>, TargetError> {
        let params: Vec<(&str, &str)> = selector
            .map(|l| ("label_selector", l))
            .into_iter()
            .collect();
        let list: Vec<WireStatement> = self.list_all(self.statements_url(), &params).await?;
        Ok(list.into_iter().map(StatementState::from).collect())
    }

    /// Every item of the `sql/v1` collection at `collection` (a `…List` answer: `data`,
    /// `metadata.next`), in pages of 100 (`page_size`, the spec's maximum) followed by their
    /// `page_token`, with `params` on each request; a token seen before ends the listing.
    async fn list_all<T: serde::de::DeserializeOwned>(
        &self,
        collection: Url,
        params: &[(&str, &str)],
    ) -> Result<Vec<T>, TargetError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let mut url = collection.clone();
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("page_size", "100");
                for (k, v) in params {
                    q.append_pair(k, v);
                }
                if let Some(t) = &token {
                    q.append_pair("page_token", t);
                }
            }
            let a = self.send_retrying(Method::GET, &url, None).await?;
            if !a.status.is_success() {
                return Err(self.fail(&Method::GET, &url, &a));
            }
            let list: WireList<T> =
                serde_json::from_str(&a.body).map_err(|e| TargetError::Http {
                    method: "GET".into(),
                    path: url.path().to_string(),
                    status: a.status.as_u16(),
                    message: format!("unexpected list body: {e}"),
                    kind: ErrorKind::Permanent,
                    retry_after: None,
                })?;
            out.extend(list.data);
            let next = list.metadata.and_then(|m| m.next);
            match next_page_token(&url, next.as_deref()) {
                Some(t) if seen.insert(t.clone()) => token = Some(t),
                _ => break,
            }
        }
        Ok(out)
    }

    /// `…/databases/{kafka_cluster_id}/materialized-tables/{table_name}[/versions]`.
    fn materialized_table_url(
        &self,
        t: &super::materialized::MaterializedTable,
        versions: bool,
    ) -> Url {
        let mut u = self.base.clone();
        {
            let mut p = u.path_segments_mut().expect("http url has path segments");
            p.pop_if_empty();
            p.extend([
                "databases",
                &t.kafka_cluster_id,
                "materialized-tables",
                &t.name,
            ]);
            if versions {
                p.push("versions");
            }
        }
        u
    }

    /// A permanent error about an answer that cannot be used.
    fn unexpected(&self, method: &Method, url: &Url, a: &Answer, why: &str) -> TargetError {
        TargetError::Http {
            method: method.to_string(),
            path: url.path().to_string(),
            status: a.status.as_u16(),
            message: self.scrubber.scrub(why),
            kind: ErrorKind::Permanent,
            retry_after: None,
        }
    }
}

/// Attempts of a stop or resume whose `PUT` meets a concurrent change (409) or an unknown outcome.
pub const PUT_ATTEMPTS: usize = 5;

/// The body of the `PUT` that sets `spec.stopped` on the statement `read` (as GET returned it): the
/// request schema of `updateSqlv1Statement` — `name`, `organization_id`, `environment_id`,
/// `metadata` (`self`, `resource_version`, `labels`) and `spec` with every writable field as read and
/// `stopped` set; read-only parts (`api_version`, `kind`, `status`, `spec.execution_mode`) left out.
/// `None` without a `metadata.resource_version` (required by the spec).
pub fn put_body(read: &serde_json::Value, stopped: bool) -> Option<serde_json::Value> {
    put_body_keeping(
        read,
        stopped,
        &[
            "statement",
            "properties",
            "compute_pool_id",
            "principal",
            "scaling",
        ],
        true,
    )
}

/// The body of a `PUT` of a whole `sql/v1` resource (a statement, a materialized table) read as
/// `read`, with `spec.stopped` set: `name`, `metadata` (`self`, `resource_version`, `labels`), the
/// `spec` fields named in `spec_keys` (those that are not null), and with `ids` the
/// `organization_id` and `environment_id` (writable on a statement, read-only on a materialized
/// table). `None` without a `metadata.resource_version` or a `name`.
pub fn put_body_keeping(
    read: &serde_json::Value,
    stopped: bool,
    spec_keys: &[&str],
    ids: bool,
) -> Option<serde_json::Value> {
    use serde_json::{Map, Value};
    let version = read
        .pointer("/metadata/resource_version")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())?;
    let mut metadata = Map::new();
    if let Some(s) = read.pointer("/metadata/self").filter(|v| v.is_string()) {
        metadata.insert("self".into(), s.clone());
    }
    metadata.insert("resource_version".into(), version.into());
    if let Some(l) = read.pointer("/metadata/labels").filter(|v| v.is_object()) {
        metadata.insert("labels".into(), l.clone());
    }
    let mut spec = Map::new();
    for key in spec_keys {
        if let Some(v) = read
            .get("spec")
            .and_then(|s| s.get(*key))
            .filter(|v| !v.is_null())
        {
            spec.insert((*key).into(), v.clone());
        }
    }
    spec.insert("stopped".into(), stopped.into());
    let mut body = Map::new();
    body.insert("name".into(), read.get("name")?.clone());
    for key in ["organization_id", "environment_id"].iter().filter(|_| ids) {
        if let Some(v) = read.get(*key).filter(|v| v.is_string()) {
            body.insert((*key).into(), v.clone());
        }
    }
    body.insert("metadata".into(), Value::Object(metadata));
    body.insert("spec".into(), Value::Object(spec));
    Some(Value::Object(body))
}

/// 429, 500, 502, 503, 504 (rate limited or transient; error codes:
/// <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>).
fn is_retryable_status(s: StatusCode) -> bool {
    matches!(s.as_u16(), 429 | 500 | 502 | 503 | 504)
}

/// The JSON:API error details joined with `"; "`, else the raw body (shortened), else `(empty body)`.
pub fn error_message(body: &str) -> String {
    #[derive(Deserialize)]
    struct Errors {
        errors: Vec<ErrorItem>,
    }
    #[derive(Deserialize)]
    struct ErrorItem {
        #[serde(default)]
        detail: Option<String>,
        #[serde(default)]
        title: Option<String>,
        #[serde(default)]
        source: Option<serde_json::Value>,
    }
    if let Ok(e) = serde_json::from_str::<Errors>(body) {
        let parts: Vec<String> = e
            .errors
            .iter()
            .filter_map(|i| {
                let text = i
                    .detail
                    .clone()
                    .filter(|d| !d.is_empty())
                    .or(i.title.clone())?;
                let pointer = i
                    .source
                    .as_ref()
                    .and_then(|s| s.get("pointer"))
                    .and_then(|p| p.as_str())
                    .map(|p| format!(" (at {p})"))
                    .unwrap_or_default();
                Some(format!("{text}{pointer}"))
            })
            .collect();
        if !parts.is_empty() {
            return parts.join("; ");
        }
    }
    let t = body.trim();
    if t.is_empty() {
        "(empty body)".to_string()
    } else if t.len() > 500 {
        let cut = (0..=500)
            .rev()
            .find(|i| t.is_char_boundary(*i))
            .unwrap_or(0);
        format!("{}…", &t[..cut])
    } else {
        t.to_string()
    }
}

/// The page a `metadata.next` link (absolute, or relative to `page`) points to, kept as given so no
/// parameter the service adds is dropped; `None` at the end (absent or empty link). The link must
/// stay on the statement's host (scheme, host and port of `statement`): a link elsewhere is an
/// error, so credentials are never sent to another host.
pub fn next_link(
    statement: &Url,
    page: &Url,
    next: Option<&str>,
) -> Result<Option<Url>, TargetError> {
    let Some(next) = next.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let url = page
        .join(next)
        .map_err(|e| TargetError::Config(format!("results link {next:?} is not a URL: {e}")))?;
    if url.scheme() != statement.scheme()
        || url.host_str() != statement.host_str()
        || url.port_or_known_default() != statement.port_or_known_default()
    {
        return Err(TargetError::Config(format!(
            "results link {next:?} leaves {} (refused)",
            statement.host_str().unwrap_or("the statement's host")
        )));
    }
    Ok(Some(url))
}

/// The `page_token` of a `metadata.next` link (absolute or relative), `None` at the end of the list.
pub fn next_page_token(base: &Url, next: Option<&str>) -> Option<String> {
    let next = next.map(str::trim).filter(|n| !n.is_empty())?;
    let url = base.join(next).ok()?;
    url.query_pairs()
        .find(|(k, _)| k == "page_token")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty())
}

#[async_trait]
impl Target for ConfluentTarget {
    async fn start_query(
        &self,
        spec: &StatementSpec,
    ) -> Result<Box<dyn crate::target::read::ResultStream>, TargetError> {
        if let Err(e) = self.create_statement(spec).await {
            // The answer may be lost after the server stored the statement (connection dropped, a
            // 5xx from a proxy): look it up by name and delete it, so no query is left running. A
            // 409 means the name belongs to a statement this call did not create: left alone.
            if matches!(e, TargetError::AlreadyExists(_)) {
                return Err(e);
            }
            return Err(match self.remove_within(&spec.name, CLEANUP_WITHIN).await {
                Ok(_) => e,
                Err(cleanup) => TargetError::Transport {
                    method: "POST".into(),
                    path: self.statements_url().path().to_string(),
                    message: format!(
                        "{e}; the statement {} may have been stored and could not be deleted ({cleanup}): `flinkpipe pipeline decommission --orphans --delete` removes it",
                        spec.name
                    ),
                },
            });
        }
        Ok(Box::new(query::ConfluentQuery::new(
            self.clone(),
            &spec.name,
        )))
    }

    fn describe(&self) -> String {
        format!(
            "Confluent Cloud environment {} ({})",
            self.settings.environment_id, self.settings.endpoint
        )
    }

    async fn list_statements(&self) -> Result<Vec<StatementState>, TargetError> {
        self.list_selected(None).await
    }

    async fn list_own_statements(&self) -> Result<Vec<StatementState>, TargetError> {
        self.list_selected(Some(&format!("{FLINKPIPE_LABEL}=true")))
            .await
    }

    async fn get_statement(&self, name: &str) -> Result<Option<StatementState>, TargetError> {
        let url = self.statement_url(name);
        let a = self.send_retrying(Method::GET, &url, None).await?;
        match a.status {
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_success() => self.parse_statement(&Method::GET, &url, &a).map(Some),
            _ => Err(self.fail(&Method::GET, &url, &a)),
        }
    }

    async fn create_statement(&self, spec: &StatementSpec) -> Result<StatementState, TargetError> {
        let url = self.statements_url();
        let mut properties = BTreeMap::new();
        if let Some(c) = &self.settings.catalog {
            properties.insert("sql.current-catalog".to_string(), c.clone());
        }
        if let Some(d) = &self.settings.database {
            properties.insert("sql.current-database".to_string(), d.clone());
        }
        properties.extend(spec.properties.clone());
        let mut s = serde_json::json!({
            "statement": spec.sql,
            "properties": properties,
            "stopped": false,
        });
        if let Some(p) = spec
            .compute_pool
            .as_ref()
            .or(self.settings.compute_pool_id.as_ref())
        {
            s["compute_pool_id"] = p.clone().into();
        }
        if let Some(p) = &self.settings.principal {
            s["principal"] = p.clone().into();
        }
        let body = serde_json::json!({
            "name": spec.name,
            "organization_id": self.settings.organization_id,
            "environment_id": self.settings.environment_id,
            "metadata": {"labels": {FLINKPIPE_LABEL: "true"}},
            "spec": s,
        });
        let a = self
            .send_once(&Method::POST, &url, Some(("application/json", &body)))
            .await?;
        match a.status {
            StatusCode::CONFLICT => Err(TargetError::AlreadyExists(spec.name.clone())),
            s if s.is_success() => {
                if a.body.trim().is_empty() {
                    // Accept any 2xx (201/200 on POST, 202/204 without a body elsewhere:
                    // https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)); the
                    // state is read by the next poll.
                    Ok(StatementState {
                        name: spec.name.clone(),
                        phase: Phase::Pending,
                        detail: String::new(),
                        sql: spec.sql.clone(),
                        properties: spec.properties.clone(),
                        stopped: false,
                        meta: StatementMeta {
                            compute_pool_id: spec
                                .compute_pool
                                .clone()
                                .or(self.settings.compute_pool_id.clone()),
                            ..StatementMeta::default()
                        },
                    })
                } else {
                    self.parse_statement(&Method::POST, &url, &a)
                }
            }
            _ => Err(self.fail(&Method::POST, &url, &a)),
        }
    }

    async fn stop_statement(&self, name: &str) -> Result<(), TargetError> {
        self.put_stopped(name, true).await
    }

    async fn resume_statement(&self, name: &str) -> Result<(), TargetError> {
        self.put_stopped(name, false).await
    }

    /// `listSqlv1MaterializedTables` (GA): every materialized table of the environment, in pages
    /// of 100.
    async fn materialized_tables(
        &self,
    ) -> Result<Option<Vec<super::materialized::MaterializedTable>>, TargetError> {
        let url = self.base.join("materialized-tables").expect("static path");
        let list: Vec<serde_json::Value> = self.list_all(url, &[]).await?;
        Ok(Some(
            list.iter()
                .filter_map(super::materialized::MaterializedTable::from_wire)
                .collect(),
        ))
    }

    /// `listSqlv1MaterializedTableVersions` (GA), in pages of 100; a table that is gone has none.
    async fn materialized_table_versions(
        &self,
        table: &super::materialized::MaterializedTable,
    ) -> Result<Vec<super::materialized::MaterializedTableVersion>, TargetError> {
        let url = self.materialized_table_url(table, true);
        let list: Vec<serde_json::Value> = match self.list_all(url, &[]).await {
            Ok(l) => l,
            Err(TargetError::Http { status: 404, .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(list
            .iter()
            .filter_map(super::materialized::MaterializedTableVersion::from_wire)
            .collect())
    }

    /// `updateSqlv1MaterializedTable` (GA): the whole table as read, `spec.stopped` set.
    async fn set_materialized_table_stopped(
        &self,
        table: &super::materialized::MaterializedTable,
        stopped: bool,
    ) -> Result<(), TargetError> {
        let url = self.materialized_table_url(table, false);
        let cluster = table.kafka_cluster_id.clone();
        self.put_stopped_at(&url, &table.name, stopped, &move |read, stopped| {
            super::materialized::put_body(read, stopped, &cluster)
        })
        .await
    }

    /// `GET …/statements/{name}/exceptions` (GA): the 10 newest, newest first; a missing statement
    /// has none.
    async fn exceptions(&self, name: &str) -> Result<Vec<super::StatementException>, TargetError> {
        let mut url = self.statement_url(name);
        url.path_segments_mut()
            .expect("http url has path segments")
            .push("exceptions");
        let a = self.send_retrying(Method::GET, &url, None).await?;
        match a.status {
            StatusCode::NOT_FOUND => return Ok(Vec::new()),
            s if s.is_success() => {}
            _ => return Err(self.fail(&Method::GET, &url, &a)),
        }
        let list: WireExceptions = serde_json::from_str(&a.body).map_err(|e| {
            self.unexpected(
                &Method::GET,
                &url,
                &a,
                &format!("unexpected exceptions body: {e}"),
            )
        })?;
        Ok(list
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|e| super::StatementException {
                name: e.name.unwrap_or_default(),
                message: e.message.unwrap_or_default(),
                timestamp: e.timestamp.filter(|t| !is_zero_time(t)),
            })
            .collect())
    }

    async fn delete_statement(&self, name: &str) -> Result<bool, TargetError> {
        let url = self.statement_url(name);
        let a = self.send_retrying(Method::DELETE, &url, None).await?;
        match a.status {
            StatusCode::NOT_FOUND => Ok(false),
            s if s.is_success() => Ok(true),
            _ => Err(self.fail(&Method::DELETE, &url, &a)),
        }
    }

    async fn validate_statement(&self, spec: &StatementSpec) -> Result<(), TargetError> {
        self.dry_run_statement(spec).await.map(|_| ())
    }

    /// `spec` submitted under a throw-away name (`<name>-dry-<8 hex>`) with `sql.dry-run=true`: the
    /// statement is parsed and validated, not executed
    /// (<https://docs.confluent.io/cloud/current/flink/reference/statements/set.html>,
    /// `sql.dry-run`), and the POST's answer is final — COMPLETED (valid) or FAILED with the
    /// server's detail — with nothing stored (`uid` is empty, observed on the service). An answer
    /// in another phase (never observed) is polled until it ends, up to `DRY_RUN_WAIT` (60 s), transient
    /// read errors
    /// retried within that time.
    ///
    /// **Clean-up is guaranteed**: whenever the server may have kept the throw-away statement (the
    /// answer was not final, the POST's outcome is unknown, a read failed), it is deleted on every
    /// path, the delete retried within `DRY_RUN_WAIT`; a delete that fails for good is a
    /// [`TargetError::Leftover`] naming the statement left behind (permanent: the caller does not
    /// retry under a new name).
    async fn dry_run_statement(&self, spec: &StatementSpec) -> Result<Checked, TargetError> {
        let mut dry = spec.clone();
        dry.name = dry_run_name(&spec.name);
        dry.properties
            .insert(DRY_RUN_PROPERTY.to_string(), "true".to_string());
        let deadline = tokio::time::Instant::now() + DRY_RUN_WAIT;
        let mut state = match self.create_statement(&dry).await {
            Ok(s) => s,
            Err(e) if e.transient().is_some() => {
                // The outcome is unknown: the statement may exist.
                self.delete_throw_away(&dry.name, deadline).await?;
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let polled = !matches!(
            state.phase,
            Phase::Completed | Phase::Failed | Phase::Failing
        );
        let read = self.finish_dry_run(&dry.name, &mut state, deadline).await;
        if polled {
            // Deleted on every path, whatever the polls said.
            self.delete_throw_away(&dry.name, deadline).await?;
        }
        read?;
        match state.phase {
            Phase::Completed => Ok(Checked::Valid),
            Phase::Failed | Phase::Failing => {
                Err(TargetError::Invalid(if state.detail.is_empty() {
                    format!("the dry run of {} FAILED without a detail", spec.name)
                } else {
                    state.detail
                }))
            }
            other => Err(TargetError::Config(format!(
                "the dry run of {} did not end (phase {other}); it was not checked",
                spec.name
            ))),
        }
    }

    async fn check_compute_pool(&self) -> Result<(), TargetError> {
        // The pool lives on the control plane (a Cloud API key; a Flink key is rejected there:
        // https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)).
        // Listing the pool's statements on the data plane proves the pool id is accepted with the
        // Flink key we have.
        let Some(pool) = &self.settings.compute_pool_id else {
            return Ok(());
        };
        let mut url = self.statements_url();
        url.query_pairs_mut()
            .append_pair("page_size", "1")
            .append_pair("spec.compute_pool_id", pool);
        let a = self.send_retrying(Method::GET, &url, None).await?;
        if a.status.is_success() {
            Ok(())
        } else {
            Err(self.fail(&Method::GET, &url, &a))
        }
    }

    fn default_namespace(&self) -> (Option<String>, Option<String>) {
        (
            self.settings.catalog.clone(),
            self.settings.database.clone(),
        )
    }

    fn supports_carry_over(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies() {
        let b = r#"{"errors":[{"id":"x","status":"404","detail":"Statement resource=a does not exist","source":{}},{"detail":"second","source":{"pointer":"/name"}}]}"#;
        assert_eq!(
            error_message(b),
            "Statement resource=a does not exist; second (at /name)"
        );
        assert_eq!(error_message(""), "(empty body)");
        assert_eq!(error_message("<html>oops</html>"), "<html>oops</html>");
    }

    #[test]
    fn page_tokens() {
        let base =
            Url::parse("https://h/sql/v1/organizations/o/environments/e/statements?page_size=100")
                .unwrap();
        assert_eq!(
            next_page_token(
                &base,
                Some("https://h/sql/v1/organizations/o/environments/e/statements?page_token=abc")
            ),
            Some("abc".into())
        );
        assert_eq!(
            next_page_token(&base, Some("statements?page_size=100&page_token=x%2By")),
            Some("x+y".into())
        );
        assert_eq!(next_page_token(&base, Some("")), None);
        assert_eq!(next_page_token(&base, None), None);
    }

    #[test]
    fn next_links_are_kept_as_given_on_the_same_host_only() {
        let st =
            Url::parse("https://flink.us-west-2.aws.confluent.cloud/sql/v1/statements/q").unwrap();
        let page =
            Url::parse("https://flink.us-west-2.aws.confluent.cloud/sql/v1/statements/q/results")
                .unwrap();
        let u = next_link(&st, &page, Some("results?page_token=a%2Bb&hint=7"))
            .unwrap()
            .unwrap();
        assert_eq!(
            u.as_str(),
            "https://flink.us-west-2.aws.confluent.cloud/sql/v1/statements/q/results?page_token=a%2Bb&hint=7"
        );
        assert!(next_link(&st, &page, Some("")).unwrap().is_none());
        assert!(next_link(&st, &page, None).unwrap().is_none());
        assert!(next_link(&st, &page, Some("https://evil.example/x?page_token=1")).is_err());
        assert!(
            next_link(
                &st,
                &page,
                Some("http://flink.us-west-2.aws.confluent.cloud/x")
            )
            .is_err()
        );
    }

    /// #43.7: the PUT body of a stop or resume is the statement as read with `spec.stopped` set and
    /// only the request schema's writable parts (`updateSqlv1Statement`): never `status`,
    /// `api_version`, `kind` or `spec.execution_mode`; none without a `resource_version`.
    #[test]
    fn put_bodies_keep_the_writable_fields_and_the_resource_version() {
        let read = serde_json::json!({
            "api_version": "sql/v1", "kind": "Statement", "name": "s1",
            "organization_id": "o", "environment_id": "e",
            "metadata": {"self": "https://h/s1", "uid": "u", "resource_version": "7",
                         "created_at": "2025-01-01T00:00:00Z", "labels": {"user.confluent.io/flinkpipe": "true"}},
            "spec": {"statement": "INSERT INTO t SELECT 1", "properties": {"a": "b"},
                     "compute_pool_id": "lfcp-1", "principal": "sa-1", "stopped": false,
                     "execution_mode": "streaming"},
            "status": {"phase": "RUNNING", "detail": ""}
        });
        for stopped in [true, false] {
            let b = put_body(&read, stopped).unwrap();
            assert_eq!(
                b,
                serde_json::json!({
                    "name": "s1", "organization_id": "o", "environment_id": "e",
                    "metadata": {"self": "https://h/s1", "resource_version": "7",
                                 "labels": {"user.confluent.io/flinkpipe": "true"}},
                    "spec": {"statement": "INSERT INTO t SELECT 1", "properties": {"a": "b"},
                             "compute_pool_id": "lfcp-1", "principal": "sa-1", "stopped": stopped}
                })
            );
        }
        let mut no_version = read.clone();
        no_version["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resource_version");
        assert!(put_body(&no_version, true).is_none());
    }

    /// #43.9: state limit, warnings and offsets are read; unknown values kept; the zero time dropped.
    #[test]
    fn status_notes_are_read_from_the_statement() {
        let w: WireStatement = serde_json::from_str(
            r#"{"name":"a","status":{"phase":"STOPPED",
                "state_limit_status":{"state_limit_state":"EXCEEDING_HARD_LIMIT","detail":"too big"},
                "warnings":[{"severity":"SEVERE_NEW","reason":"R","message":"m","created_at":"2025-11-10T16:20:00Z"}],
                "latest_offsets":{"t":"partition:0,offset:1"},"latest_offsets_timestamp":"2025-11-10T16:20:00Z"}}"#,
        )
        .unwrap();
        let n = StatementState::from(w).meta.notes;
        assert_eq!(
            n.state_limit.as_ref().map(|l| &l.state),
            Some(&super::super::StateLimit::ExceedingHardLimit)
        );
        assert_eq!(
            n.warnings[0].severity,
            super::super::WarningSeverity::Unknown("SEVERE_NEW".into())
        );
        assert_eq!(n.latest_offsets["t"], "partition:0,offset:1");
        let w: WireStatement = serde_json::from_str(
            r#"{"name":"a","status":{"phase":"RUNNING","latest_offsets":{},"latest_offsets_timestamp":"0001-01-01T00:00:00Z"}}"#,
        )
        .unwrap();
        let n = StatementState::from(w).meta.notes;
        assert!(
            n.is_empty() && n.latest_offsets_timestamp.is_none(),
            "{n:?}"
        );
    }

    #[test]
    fn statement_parse_tolerates_missing_fields() {
        let w: WireStatement =
            serde_json::from_str(r#"{"name":"a","status":{"phase":"weird"}}"#).unwrap();
        let s = StatementState::from(w);
        assert_eq!(s.phase, Phase::Unknown("WEIRD".into()));
        assert_eq!(s.sql, "");
    }
}
