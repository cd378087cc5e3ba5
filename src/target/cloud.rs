//! Confluent Cloud's control plane (`fcpm/v2` compute pools) and its Metrics API: what the Flink data
//! plane ([`super::confluent`]) cannot tell — how full a compute pool is, creating and deleting
//! pools, statement metrics. Both take a **Cloud API key** (`SL_CONFLUENT_CLOUD_API_KEY` /
//! `SL_CONFLUENT_CLOUD_API_SECRET`, shift_left's names); a Flink API key is rejected there with 401,
//! and the error says which key is needed (`confluent-cloud-flink-api.md` §1).
//!
//! Rules followed:
//! - Compute pools (§12): base `https://api.confluent.cloud`; `GET /fcpm/v2/compute-pools?environment=…`
//!   (required; paginated, only `metadata.next` is populated; `kind` not checked), `GET
//!   /fcpm/v2/compute-pools/{id}?environment=…` (404: absent; a 403 is a permission error whatever its
//!   body says — `was not found` included — and names the key used, masked), `POST /fcpm/v2/compute-pools`
//!   (202, PROVISIONING; `max_cfu` one of 5, 10, 20, 30, 40, 50), `DELETE
//!   /fcpm/v2/compute-pools/{id}?environment=…` (204). `status.current_cfu` and `spec.max_cfu` give
//!   the capacity.
//! - Metrics (https://api.telemetry.confluent.cloud/docs, OpenAPI `/v2/metrics/{dataset}/query`):
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

use super::confluent::error_message;
use super::metrics::{Counted, RuntimeMetrics};
use super::retry::{Backoff, Limit, parse_retry_after, retry, seed_of};
use super::secrets::{CLOUD_API_KEY_VAR, CLOUD_API_SECRET_VAR, Credentials, Scrubber};
use super::{ErrorKind, TargetError};
use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// The control plane's default base URL (§12).
pub const CLOUD_API_URL: &str = "https://api.confluent.cloud";
/// The Metrics API's base URL.
pub const METRICS_API_URL: &str = "https://api.telemetry.confluent.cloud";
/// The metric of records read by a statement (a counter, one minute per point).
pub const RECORDS_IN: &str = "io.confluent.flink/num_records_in";
/// The metric of records written by a statement (a counter).
pub const RECORDS_OUT: &str = "io.confluent.flink/num_records_out";
/// The metric of records waiting in a statement's source topics (its consumer lag).
pub const PENDING_RECORDS: &str = "io.confluent.flink/pending_records";
/// `spec.max_cfu` values the API accepts (§12, an extensible enum).
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

/// A Confluent Cloud environment (`org/v2` `Environment`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Environment {
    /// `env-…`.
    pub id: String,
    pub display_name: String,
    /// `metadata.created_at`.
    pub created_at: Option<String>,
    /// `stream_governance_config.package` (`ESSENTIALS`, `ADVANCED`).
    pub stream_governance: Option<String>,
}

/// A compute pool's phase (§12; unknown values kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolPhase {
    Provisioning,
    Provisioned,
    Failed,
    Deprovisioning,
    Unknown(String),
}

impl PoolPhase {
    fn parse(s: &str) -> PoolPhase {
        match s.to_ascii_uppercase().as_str() {
            "PROVISIONING" => PoolPhase::Provisioning,
            "PROVISIONED" => PoolPhase::Provisioned,
            "FAILED" => PoolPhase::Failed,
            "DEPROVISIONING" => PoolPhase::Deprovisioning,
            other => PoolPhase::Unknown(other.to_string()),
        }
    }

    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            PoolPhase::Provisioning => "PROVISIONING",
            PoolPhase::Provisioned => "PROVISIONED",
            PoolPhase::Failed => "FAILED",
            PoolPhase::Deprovisioning => "DEPROVISIONING",
            PoolPhase::Unknown(s) => s,
        }
    }
}

impl Serialize for PoolPhase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A compute pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComputePool {
    /// `lfcp-…`.
    pub id: String,
    /// `spec.display_name`.
    pub display_name: String,
    /// `spec.cloud` (`AWS`).
    pub cloud: String,
    /// `spec.region`.
    pub region: String,
    /// `spec.max_cfu`: the pool's capacity in CFUs.
    pub max_cfu: u32,
    /// `status.current_cfu`: CFUs in use now; `None` when the control plane does not say (never read
    /// as 0: an unknown use is not an empty pool).
    pub current_cfu: Option<u32>,
    /// `status.phase`.
    pub phase: PoolPhase,
    /// `spec.default_pool`.
    pub default_pool: bool,
}

impl ComputePool {
    fn from_wire(v: &Value) -> Option<ComputePool> {
        let s = |p: &str| {
            v.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let n = |p: &str| {
            v.pointer(p)
                .and_then(|x| x.as_u64().or_else(|| x.as_f64().map(|f| f.max(0.0) as u64)))
                .map(|x| u32::try_from(x).unwrap_or(u32::MAX))
        };
        let id = s("/id");
        if id.is_empty() {
            return None;
        }
        Some(ComputePool {
            id,
            display_name: s("/spec/display_name"),
            cloud: s("/spec/cloud"),
            region: s("/spec/region"),
            max_cfu: n("/spec/max_cfu").unwrap_or(0),
            current_cfu: n("/status/current_cfu"),
            phase: PoolPhase::parse(&s("/status/phase")),
            default_pool: v
                .pointer("/spec/default_pool")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

/// The control-plane and Metrics API client.
pub struct CloudClient {
    settings: CloudSettings,
    client: reqwest::Client,
    scrubber: Scrubber,
}

/// A raw answer.
struct Answer {
    status: StatusCode,
    body: String,
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
        let scrubber = settings.credentials.scrubber();
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
        let body = resp.text().await.unwrap_or_default();
        Ok(Answer {
            status,
            body,
            request_id,
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

    /// Every compute pool of the environment (one paginated listing, `page_size=100`; stops on an
    /// empty `metadata.next` or a repeated token).
    pub async fn list_pools(&self) -> Result<Vec<ComputePool>, TargetError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let mut url = self.pools_url(None);
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("environment", &self.settings.environment_id);
                q.append_pair("page_size", "100");
                if let Some(t) = &token {
                    q.append_pair("page_token", t);
                }
            }
            let a = self.send_retrying(Method::GET, &url, None).await?;
            if !a.status.is_success() {
                return Err(self.fail(&Method::GET, &url, &a));
            }
            let v = self.parse(&Method::GET, &url, &a)?;
            out.extend(
                v["data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(ComputePool::from_wire),
            );
            let next = v.pointer("/metadata/next").and_then(Value::as_str);
            match super::confluent::next_page_token(&url, next) {
                Some(t) if seen.insert(t.clone()) => token = Some(t),
                _ => break,
            }
        }
        Ok(out)
    }

    /// The organization's environments (`GET /org/v2/environments`, every page), as the API lists
    /// them.
    ///
    /// Errors: the API's (a 401 with a Flink API key: the org API takes a Cloud API key).
    pub async fn list_environments(&self) -> Result<Vec<Environment>, TargetError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let mut url = self.url(&self.settings.api_url, "/org/v2/environments");
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("page_size", "100");
                if let Some(t) = &token {
                    q.append_pair("page_token", t);
                }
            }
            let a = self.send_retrying(Method::GET, &url, None).await?;
            if !a.status.is_success() {
                return Err(self.fail(&Method::GET, &url, &a));
            }
            let v = self.parse(&Method::GET, &url, &a)?;
            out.extend(v["data"].as_array().into_iter().flatten().filter_map(|e| {
                Some(Environment {
                    id: e["id"].as_str()?.to_string(),
                    display_name: e["display_name"].as_str().unwrap_or_default().to_string(),
                    created_at: e
                        .pointer("/metadata/created_at")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    stream_governance: e
                        .pointer("/stream_governance_config/package")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
            }));
            let next = v.pointer("/metadata/next").and_then(Value::as_str);
            match super::confluent::next_page_token(&url, next) {
                Some(t) if seen.insert(t.clone()) => token = Some(t),
                _ => break,
            }
        }
        Ok(out)
    }

    /// One compute pool; `Ok(None)` when it does not exist (404). Decided on the HTTP status only: a
    /// 403 is a permission error (naming the key used, masked), whatever its body says.
    pub async fn get_pool(&self, id: &str) -> Result<Option<ComputePool>, TargetError> {
        let mut url = self.pools_url(Some(id));
        url.query_pairs_mut()
            .append_pair("environment", &self.settings.environment_id);
        let a = self.send_retrying(Method::GET, &url, None).await?;
        if a.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !a.status.is_success() {
            return Err(self.fail(&Method::GET, &url, &a));
        }
        let v = self.parse(&Method::GET, &url, &a)?;
        Ok(ComputePool::from_wire(&v))
    }

    /// Creates a pool in the environment's cloud and region (202, PROVISIONING). Never retried.
    /// Errors: the cloud or region not configured, `max_cfu` not one of [`MAX_CFU_VALUES`] (422 from
    /// the server too), a name taken (409), the server's errors.
    pub async fn create_pool(&self, name: &str, max_cfu: u32) -> Result<ComputePool, TargetError> {
        let (Some(cloud), Some(region)) = (&self.settings.cloud, &self.settings.region) else {
            return Err(TargetError::Config(
                "creating a compute pool needs confluent_cloud.cloud_provider and confluent_cloud.cloud_region (or SL_CLOUD_PROVIDER / SL_CLOUD_REGION)".into(),
            ));
        };
        let url = self.pools_url(None);
        let body = json!({"spec": {
            "display_name": name,
            "cloud": cloud,
            "region": region,
            "max_cfu": max_cfu,
            "environment": {"id": self.settings.environment_id},
        }});
        let a = self.send_once(&Method::POST, &url, Some(&body)).await?;
        if !a.status.is_success() {
            return Err(self.fail(&Method::POST, &url, &a));
        }
        let v = self.parse(&Method::POST, &url, &a)?;
        ComputePool::from_wire(&v).ok_or_else(|| TargetError::Http {
            method: "POST".into(),
            path: url.path().to_string(),
            status: a.status.as_u16(),
            message: "the answer names no pool id".into(),
            kind: ErrorKind::Permanent,
            retry_after: None,
        })
    }

    /// Deletes a pool; `Ok(false)` when it did not exist (404; a 403 is a permission error).
    pub async fn delete_pool(&self, id: &str) -> Result<bool, TargetError> {
        let mut url = self.pools_url(Some(id));
        url.query_pairs_mut()
            .append_pair("environment", &self.settings.environment_id);
        let a = self.send_once(&Method::DELETE, &url, None).await?;
        if a.status == StatusCode::NOT_FOUND {
            return Ok(false);
        }
        if !a.status.is_success() {
            return Err(self.fail(&Method::DELETE, &url, &a));
        }
        Ok(true)
    }

    /// The metrics of the statements running in `pools` over the last `window_minutes` (ending now),
    /// by statement name: three queries (records in, records out, pending records), each grouped by
    /// statement. Counters are summed over the window; the backlog is the newest point.
    ///
    /// Errors: no pool given (the `cloud` dataset requires a resource filter), the API's errors.
    pub async fn statement_metrics(
        &self,
        pools: &[String],
        window_minutes: u32,
    ) -> Result<BTreeMap<String, RuntimeMetrics>, TargetError> {
        if pools.is_empty() {
            return Err(TargetError::Config(
                "the Metrics API needs a compute pool to filter on: set flink.compute_pool_id"
                    .into(),
            ));
        }
        let end = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
            / 60
            * 60;
        let start = end - i64::from(window_minutes) * 60;
        let interval = format!("{}/{}", iso_minute(start), iso_minute(end));
        let filter = if let [only] = pools {
            json!({"field": "resource.compute_pool.id", "op": "EQ", "value": only})
        } else {
            json!({"op": "OR", "filters": pools.iter().map(|p| json!({"field": "resource.compute_pool.id", "op": "EQ", "value": p})).collect::<Vec<_>>()})
        };
        let mut out: BTreeMap<String, RuntimeMetrics> = BTreeMap::new();
        for metric in [RECORDS_IN, RECORDS_OUT, PENDING_RECORDS] {
            let body = json!({
                "aggregations": [{"metric": metric}],
                "filter": filter,
                "group_by": ["resource.flink_statement.name"],
                "granularity": "PT1M",
                "intervals": [interval],
                "limit": 1000,
                "format": "GROUPED",
            });
            for (name, points) in self.query_metric(&body).await? {
                let m = out
                    .entry(name)
                    .or_insert_with(|| RuntimeMetrics::empty(Counted::LastMinutes(window_minutes)));
                let total = points.iter().map(|(_, v)| *v).sum::<f64>().max(0.0) as u64;
                let newest = points
                    .iter()
                    .max_by(|a, b| a.0.cmp(&b.0))
                    .map(|(_, v)| v.max(0.0) as u64);
                match metric {
                    RECORDS_IN => m.records_in = Some(total),
                    RECORDS_OUT => m.records_out = Some(total),
                    _ => m.pending_records = newest,
                }
            }
        }
        Ok(out)
    }

    /// One metrics query (with its pages): statement name → points `(timestamp, value)`.
    async fn query_metric(
        &self,
        body: &Value,
    ) -> Result<BTreeMap<String, Vec<(String, f64)>>, TargetError> {
        let mut out: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
        let mut token: Option<String> = None;
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let mut url = self.url(&self.settings.metrics_url, "/v2/metrics/cloud/query");
            if let Some(t) = &token {
                url.query_pairs_mut().append_pair("page_token", t);
            }
            let a = self.send_retrying(Method::POST, &url, Some(body)).await?;
            if !a.status.is_success() {
                return Err(self.fail(&Method::POST, &url, &a));
            }
            let v = self.parse(&Method::POST, &url, &a)?;
            for row in v["data"].as_array().into_iter().flatten() {
                let Some(name) = row
                    .get("resource.flink_statement.name")
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                let points = out.entry(name.to_string()).or_default();
                match row.get("points").and_then(Value::as_array) {
                    Some(ps) => points.extend(ps.iter().filter_map(point)),
                    None => points.extend(point(row)),
                }
            }
            let next = v
                .pointer("/meta/pagination/next_page_token")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            match next {
                Some(t) if seen.insert(t.clone()) => token = Some(t),
                _ => break,
            }
        }
        Ok(out)
    }
}

/// `(timestamp, value)` of a metrics point.
fn point(v: &Value) -> Option<(String, f64)> {
    Some((
        v.get("timestamp")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        v.get("value").and_then(Value::as_f64)?,
    ))
}

/// `YYYY-MM-DDTHH:MM:SSZ` of seconds since the epoch.
fn iso_minute(secs: i64) -> String {
    format!(
        "{}Z",
        crate::time::utc_timestamp(secs)
            .trim_end_matches(" UTC")
            .replace(' ', "T")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_minutes() {
        assert_eq!(iso_minute(1_762_541_100), "2025-11-07T18:45:00Z");
    }

    #[test]
    fn pools_from_the_wire() {
        let v: Value = serde_json::from_str(r#"{"api_version":"fcpm/v2","kind":"ComputePool","id":"lfcp-abc123","spec":{"display_name":"p","cloud":"AWS","region":"us-east-2","max_cfu":5,"default_pool":false,"environment":{"id":"env-gz903"}},"status":{"phase":"PROVISIONED","current_cfu":2}}"#).unwrap();
        let p = ComputePool::from_wire(&v).unwrap();
        assert_eq!((p.max_cfu, p.current_cfu), (5, Some(2)));
        assert_eq!(p.phase, PoolPhase::Provisioned);
        assert!(ComputePool::from_wire(&json!({"spec": {}})).is_none());
        // No `status.current_cfu`: unknown, not 0.
        let p = ComputePool::from_wire(
            &json!({"id": "lfcp-1", "spec": {"max_cfu": 5}, "status": {"phase": "PROVISIONED"}}),
        )
        .unwrap();
        assert_eq!(p.current_cfu, None);
    }
}
