//! HTTP for the SQL Gateway target: one client for the gateway (`/v1`, `/v2`) and the JobManager REST
//! API, JSON in and out, every failed answer classified once ([`ErrorClass`]) with its cause
//! ([`wire::root_cause`]). Idempotent GETs are retried by the shared [`retry`] loop.

use super::wire::{self, ErrorClass};
use crate::target::retry::{
    Backoff, Limit, Retryable, Transient, parse_retry_after, retry, seed_of,
};
use crate::target::secrets::base_url;
use crate::target::{ErrorKind, TargetError};
use reqwest::{Method, Url};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// A failed request: what it means, and the error the target reports.
#[derive(Debug, Clone)]
pub(super) struct HttpError {
    /// What the answer means ([`ErrorClass::Unavailable`] for transport problems too).
    pub class: ErrorClass,
    /// The error as the target reports it.
    pub error: TargetError,
}

impl HttpError {
    /// The cause as the gateway gave it (the root cause of an error answer), or the whole message.
    pub fn cause(&self) -> String {
        match &self.error {
            TargetError::Http { message, .. } => message.clone(),
            e => e.to_string(),
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl Retryable for HttpError {
    fn transient(&self) -> Option<Transient> {
        self.error.transient()
    }
}

impl From<HttpError> for TargetError {
    fn from(e: HttpError) -> Self {
        e.error
    }
}

/// The client and the two base URLs (cheap to clone: a query's result stream holds its own copy).
#[derive(Clone)]
pub(super) struct Http {
    client: reqwest::Client,
    gateway: Url,
    jobmanager: Url,
    retry: Backoff,
    /// Every secret of the environment ([`crate::target::Scrubber::of_environment`]): each answer
    /// is masked as it is read.
    scrubber: crate::target::Scrubber,
}

/// Where credentials of the gateway's URLs belong instead: nowhere (the gateway takes none).
const REMEDY: &str = "remove them from the URL";

impl Http {
    /// A client with `timeout` per request. Errors: base URLs that are not absolute http(s) URLs, or
    /// carry credentials.
    pub fn new(
        gateway_url: &str,
        jobmanager_url: &str,
        timeout: Duration,
        retry: Backoff,
    ) -> Result<Http, TargetError> {
        let gateway = base_url(gateway_url, "SQL Gateway URL", REMEDY)?;
        let jobmanager = base_url(jobmanager_url, "JobManager URL", REMEDY)?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("flinkpipe/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| TargetError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Http {
            client,
            gateway,
            jobmanager,
            retry,
            scrubber: crate::target::Scrubber::of_environment(&|v| std::env::var(v).ok()),
        })
    }

    /// A gateway URL (`v2/sessions`).
    pub fn gw(&self, path: &str) -> Url {
        self.gateway
            .join(path.trim_start_matches('/'))
            .expect("valid path")
    }

    /// A JobManager URL (`jobs/overview`).
    pub fn jm(&self, path: &str) -> Url {
        self.jobmanager
            .join(path.trim_start_matches('/'))
            .expect("valid path")
    }

    /// One request; the JSON answer on 2xx, else a classified error whose message is the root cause.
    pub async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Result<Value, HttpError> {
        let text = self.send_text(method, url, body).await?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// One request as [`Http::send`], the 2xx answer's body as text (for a reader that must see a
    /// number's exact digits).
    pub async fn send_text(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Result<String, HttpError> {
        let mut req = self
            .client
            .request(method.clone(), url.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(b) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        let transport = |e: reqwest::Error| HttpError {
            class: ErrorClass::Unavailable,
            error: TargetError::Transport {
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
            },
        };
        let resp = req.send().await.map_err(transport)?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let raw = resp.text().await.map_err(transport)?;
        // Masked as it is read: nothing parsed from the answer can carry a secret it echoed.
        let text = crate::target::secrets::ServerText::masked(&raw, &self.scrubber);
        if status.is_success() {
            return Ok(text.as_str().to_string());
        }
        let class = ErrorClass::of(status.as_u16(), &text);
        Err(HttpError {
            class,
            error: TargetError::Http {
                method: method.to_string(),
                path: url.path().to_string(),
                status: status.as_u16(),
                message: wire::root_cause(&text),
                kind: if class == ErrorClass::Unavailable {
                    ErrorKind::Retryable
                } else {
                    ErrorKind::Permanent
                },
                retry_after,
            },
        })
    }

    /// An idempotent GET, retried on connection errors and 429/502/503/504 up to the policy's attempts.
    pub async fn get(&self, url: Url) -> Result<Value, HttpError> {
        retry(&self.retry, Limit::Attempts, seed_of(url.as_str()), || {
            self.send(Method::GET, url.clone(), None)
        })
        .await
        .map_err(|g| g.error)
    }

    /// An idempotent GET retried as [`Http::get`], the answer's body as text.
    pub async fn get_text(&self, url: Url) -> Result<String, HttpError> {
        retry(&self.retry, Limit::Attempts, seed_of(url.as_str()), || {
            self.send_text(Method::GET, url.clone(), None)
        })
        .await
        .map_err(|g| g.error)
    }

    /// A GET of a result page retried until `deadline` (reading a page again is allowed: the same
    /// token answers the same page,
    /// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>).
    pub async fn get_until(
        &self,
        url: Url,
        deadline: tokio::time::Instant,
    ) -> Result<Value, HttpError> {
        retry(
            &self.retry,
            Limit::Until(deadline),
            seed_of(url.as_str()),
            || self.send(Method::GET, url.clone(), None),
        )
        .await
        .map_err(|g| g.error)
    }
}
