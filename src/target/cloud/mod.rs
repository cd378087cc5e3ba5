//! Confluent Cloud's control plane (`fcpm/v2` compute pools) and its Metrics API: what the Flink data
//! plane ([`super::confluent`]) cannot tell — how full a compute pool is, creating and deleting
//! pools, statement metrics. Both take a **Cloud API key** (`SL_CONFLUENT_CLOUD_API_KEY` /
//! `SL_CONFLUENT_CLOUD_API_SECRET`, shift_left's names); a Flink API key is rejected there with 401,
//! and the error says which key is needed (keys per plane:
//! <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>).
//!
//! Rules followed:
//! - Compute pools (<https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>):
//!   base `https://api.confluent.cloud`; `GET /fcpm/v2/compute-pools?environment=…`
//!   (required; paginated, only `metadata.next` is populated; `kind` not checked), `GET
//!   /fcpm/v2/compute-pools/{id}?environment=…` (404: absent; a 403 is a permission error whatever its
//!   body says — `was not found` included — and names the key used, masked), `POST /fcpm/v2/compute-pools`
//!   (202, PROVISIONING; `max_cfu` one of 5, 10, 20, 30, 40, 50), `DELETE
//!   /fcpm/v2/compute-pools/{id}?environment=…` (204). `status.current_cfu` and `spec.max_cfu` give
//!   the capacity.
//! - Metrics (<https://api.telemetry.confluent.cloud/docs>, OpenAPI `/v2/metrics/{dataset}/query`):
//!   `POST https://api.telemetry.confluent.cloud/v2/metrics/cloud/query` with
//!   `{"aggregations":[{"metric":…}], "filter": <resource.compute_pool.id EQ …, OR-ed>, "group_by":
//!   ["resource.flink_statement.name"], "granularity":"PT1M", "intervals":["<start>/<end>"],
//!   "limit":1000, "format":"GROUPED"}` — one metric per query, the `cloud` dataset requires a
//!   resource filter, `agg` omitted (the API applies each metric's own). Answers `{"data":
//!   [{"resource.flink_statement.name": …, "points": [{"timestamp", "value"}]}]}` (FLAT rows are read
//!   too). Counters count one minute per point; data lags about 3 minutes. Metric names as used by
//!   Confluent's own tooling and shift_left (`core/metric_mgr.py`): `io.confluent.flink/num_records_in`,
//!   `io.confluent.flink/num_records_out`, `io.confluent.flink/pending_records`.
//! - GETs are retried on 429/5xx and connection errors ([`super::retry`]); POST and DELETE are not.
//!   Redirects are not followed (credentials stay with the configured host).
//!
//! Layout: this module holds the settings and the client's HTTP plumbing; [`pools`] the compute pools
//! and environments, [`metrics`] the Metrics API queries.

use super::confluent::error_message;
use super::retry::{Backoff, Limit, parse_retry_after, retry, seed_of};
use super::secrets::{CLOUD_API_KEY_VAR, CLOUD_API_SECRET_VAR, Credentials, Scrubber, ServerText};
use super::{ErrorKind, TargetError};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;
use std::time::Duration;

pub mod metrics;
pub mod pools;

pub use metrics::{PENDING_RECORDS, RECORDS_IN, RECORDS_OUT};
pub use pools::{ComputePool, Environment, PoolPhase};

/// The control plane's default base URL
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>).
pub const CLOUD_API_URL: &str = "https://api.confluent.cloud";
/// The Metrics API's base URL.
pub const METRICS_API_URL: &str = "https://api.telemetry.confluent.cloud";
/// `spec.max_cfu` values the API accepts (an extensible enum:
/// <https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>).
pub const MAX_CFU_VALUES: &[u32] = &[5, 10, 20, 30, 40, 50];

/// What the control-plane client needs. Built by [`settings`].
#[derive(Debug, Clone)]
pub struct CloudSettings {
    /// `https://api.confluent.cloud` (`flinkpipe.confluent.cloud_api_url`, `$FLINKPIPE_CLOUD_API_URL`).
    pub api_url: String,
    /// `https://api.telemetry.confluent.cloud` (`flinkpipe.confluent.metrics_url`,
    /// `$FLINKPIPE_METRICS_URL`).
    pub metrics_url: String,
    /// `confluent_cloud.environment_id` (`env-…`).
    pub environment_id: String,
    /// `confluent_cloud.cloud_provider`, upper-cased for the API (`AWS`); needed to create a pool.
    pub cloud: Option<String>,
    /// `confluent_cloud.cloud_region` (`us-west-2`); needed to create a pool.
    pub region: Option<String>,
    /// The Cloud API key and secret.
    pub credentials: Credentials,
    /// Timeout of one HTTP request.
    pub request_timeout: Duration,
    /// Retry policy of GETs.
    pub retry: Backoff,
}

/// The control-plane settings from the configuration and the environment (`env`).
///
/// Errors: the environment id or the Cloud API key or secret missing, each named with its variable
/// (and that the Flink API key does not work here).
pub fn settings(
    cfg: &crate::config::Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<CloudSettings, crate::config::ConfigError> {
    settings_with(cfg, env, true)
}

/// [`settings`] for the organization's API (`org/v2`), which needs no environment id: only the Cloud
/// API key. `environment_id` is empty when none is configured.
///
/// Errors: the Cloud API key or secret missing.
pub fn org_settings(
    cfg: &crate::config::Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<CloudSettings, crate::config::ConfigError> {
    settings_with(cfg, env, false)
}

fn settings_with(
    cfg: &crate::config::Config,
    env: &dyn Fn(&str) -> Option<String>,
    need_environment: bool,
) -> Result<CloudSettings, crate::config::ConfigError> {
    let environment_id = env("SL_FLINK_ENV_ID")
        .or(cfg.confluent_cloud.environment_id.clone())
        .filter(|s| !s.trim().is_empty())
        .or_else(|| (!need_environment).then(String::new));
    let secrets: Vec<String> = [CLOUD_API_KEY_VAR, CLOUD_API_SECRET_VAR]
        .into_iter()
        .filter(|v| env(v).is_none_or(|s| s.is_empty()))
        .map(str::to_string)
        .collect();
    if environment_id.is_none() || !secrets.is_empty() {
        let mut settings = Vec::new();
        if environment_id.is_none() {
            settings.push(("confluent_cloud.environment_id", "SL_FLINK_ENV_ID"));
        }
        return Err(crate::config::ConfigError::Missing {
            settings,
            secrets,
            file: cfg
                .source
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "config.yaml".into()),
            purpose: "use Confluent Cloud's control plane and Metrics API (a Cloud API key; the Flink API key SL_FLINK_API_KEY is refused there)",
        });
    }
    let credentials = Credentials::from_env_with(CLOUD_API_KEY_VAR, CLOUD_API_SECRET_VAR, env)?;
    let url = |var: &str, configured: &Option<String>, default: &str| {
        env(var)
            .or(configured.clone())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| default.to_string())
            .trim_end_matches('/')
            .to_string()
    };
    let c = &cfg.flinkpipe.confluent;
    Ok(CloudSettings {
        api_url: url("FLINKPIPE_CLOUD_API_URL", &c.cloud_api_url, CLOUD_API_URL),
        metrics_url: url("FLINKPIPE_METRICS_URL", &c.metrics_url, METRICS_API_URL),
        environment_id: environment_id.unwrap_or_default(),
        cloud: env("SL_CLOUD_PROVIDER")
            .or(cfg.confluent_cloud.cloud_provider.clone())
            .map(|c| c.to_ascii_uppercase()),
        region: env("SL_CLOUD_REGION").or(cfg.confluent_cloud.cloud_region.clone()),
        credentials,
        request_timeout: Duration::from_secs(30),
        retry: Backoff::HTTP,
    })
}

/// The control-plane and Metrics API client.
pub struct CloudClient {
    settings: CloudSettings,
    client: reqwest::Client,
    scrubber: Scrubber,
}

/// An answer, its body masked as it is read ([`ServerText`]).
struct Answer {
    status: StatusCode,
    body: ServerText,
    request_id: Option<String>,
    retry_after: Option<Duration>,
}

impl CloudClient {
    /// Builds the client. Errors: a base URL that is not an absolute http(s) URL or carries
    /// credentials.
    pub fn new(settings: CloudSettings) -> Result<Self, TargetError> {
        let remedy = format!(
            "the Cloud API key is read from {CLOUD_API_KEY_VAR} / {CLOUD_API_SECRET_VAR} only"
        );
        super::secrets::base_url(&settings.api_url, "control-plane URL", &remedy)?;
        super::secrets::base_url(&settings.metrics_url, "Metrics API URL", &remedy)?;
        let client = super::secrets::cloud_http_client(settings.request_timeout)?;
        // Its own credentials, and every other secret of the environment (a server may echo any).
        let scrubber = settings
            .credentials
            .scrubber()
            .merged(&Scrubber::of_environment(&|v| std::env::var(v).ok()));
        Ok(CloudClient {
            settings,
            client,
            scrubber,
        })
    }

    /// `Confluent Cloud control plane env-… (https://api.confluent.cloud)`.
    pub fn describe(&self) -> String {
        format!(
            "Confluent Cloud control plane, environment {} ({})",
            self.settings.environment_id, self.settings.api_url
        )
    }

    /// The environment the client works in.
    pub fn environment_id(&self) -> &str {
        &self.settings.environment_id
    }

    fn url(&self, base: &str, path: &str) -> Url {
        Url::parse(&format!("{base}{path}")).expect("checked base URL")
    }

    fn pools_url(&self, id: Option<&str>) -> Url {
        let mut u = self.url(&self.settings.api_url, "/fcpm/v2/compute-pools");
        if let Some(id) = id {
            u.path_segments_mut().expect("http URL").push(id);
        }
        u
    }

    async fn send_once(
        &self,
        method: &Method,
        url: &Url,
        body: Option<&Value>,
    ) -> Result<Answer, TargetError> {
        let mut req = self
            .client
            .request(method.clone(), url.clone())
            .header(
                reqwest::header::AUTHORIZATION,
                format!("Basic {}", self.settings.credentials.basic_token()),
            )
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(b) = body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(b.to_string());
        }
        let resp = req.send().await.map_err(|e| TargetError::Transport {
            method: method.to_string(),
            path: url.path().to_string(),
            message: self.scrubber.scrub(&if e.is_timeout() {
                "timed out".to_string()
            } else {
                format!("no answer: {e}")
            }),
        })?;
        let status = resp.status();
        let header = |n: &str| {
            resp.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let request_id = header("x-request-id");
        let retry_after = header("retry-after").and_then(|v| parse_retry_after(&v));
        let raw = resp.text().await.unwrap_or_default();
        Ok(Answer {
            status,
            body: ServerText::masked(&raw, &self.scrubber),
            request_id: request_id.map(|r| self.scrubber.scrub(&r)),
            retry_after,
        })
    }

    /// A GET (or a read-only POST such as a metrics query), retried on 429/5xx and connection errors.
    async fn send_retrying(
        &self,
        method: Method,
        url: &Url,
        body: Option<&Value>,
    ) -> Result<Answer, TargetError> {
        retry(
            &self.settings.retry,
            Limit::Attempts,
            seed_of(url.as_str()),
            || async {
                let a = self.send_once(&method, url, body).await?;
                if matches!(a.status.as_u16(), 429 | 500 | 502 | 503 | 504) {
                    return Err(self.fail(&method, url, &a));
                }
                Ok(a)
            },
        )
        .await
        .map_err(|g| g.error)
    }

    /// The error of an answer: the server's details, its request id, and for 401 which key is needed.
    fn fail(&self, method: &Method, url: &Url, a: &Answer) -> TargetError {
        let mut message = error_message(&a.body);
        if let Some(id) = &a.request_id {
            message.push_str(&format!(" (request id {id})"));
        }
        if a.status == StatusCode::UNAUTHORIZED {
            message.push_str(&format!(
                " — the control plane (compute pools) and the Metrics API take a Cloud API key: check {CLOUD_API_KEY_VAR} / {CLOUD_API_SECRET_VAR} (a Flink API key, SL_FLINK_API_KEY, is refused there)"
            ));
        }
        if a.status == StatusCode::FORBIDDEN {
            message.push_str(&format!(
                " — Confluent Cloud answers 403 both for a compute pool that does not exist in environment {1} and for one the Cloud API key {0} ({CLOUD_API_KEY_VAR}) may not use: check the pool id, or give the key's account a role there that manages compute pools (FlinkAdmin or EnvironmentAdmin)",
                self.settings.credentials.key_hint(),
                self.settings.environment_id
            ));
        }
        let retryable = matches!(a.status.as_u16(), 429 | 500 | 502 | 503 | 504);
        TargetError::Http {
            method: method.to_string(),
            path: url.path().to_string(),
            status: a.status.as_u16(),
            message: self.scrubber.scrub(&message),
            kind: if retryable {
                ErrorKind::Retryable
            } else {
                ErrorKind::Permanent
            },
            retry_after: a.retry_after,
        }
    }

    fn parse(&self, method: &Method, url: &Url, a: &Answer) -> Result<Value, TargetError> {
        serde_json::from_str(&a.body).map_err(|e| TargetError::Http {
            method: method.to_string(),
            path: url.path().to_string(),
            status: a.status.as_u16(),
            message: format!("unexpected response body: {e}"),
            kind: ErrorKind::Permanent,
            retry_after: None,
        })
    }
}
