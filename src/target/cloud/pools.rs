//! Compute pools and environments on Confluent Cloud's control plane (`fcpm/v2`, `org/v2`):
//! <https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>.

use super::CloudClient;
use crate::target::{ErrorKind, TargetError};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde_json::{Value, json};

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

/// A compute pool's phase
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>; unknown values
/// kept).
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

impl CloudClient {
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
            match crate::target::confluent::next_page_token(&url, next) {
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
            match crate::target::confluent::next_page_token(&url, next) {
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
    /// Errors: the cloud or region not configured, `max_cfu` not one of [`super::MAX_CFU_VALUES`] (422 from
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

    /// Resizes a pool in place: `PATCH /fcpm/v2/compute-pools/{id}` with `{"spec": {"environment":
    /// {"id": …}, "max_cfu": …}}` (`updateFcpmV2ComputePool`, GA; `spec.environment` required,
    /// plain JSON). Never retried. Returns the pool as the server answers it.
    ///
    /// Errors: `max_cfu` not one of [`super::MAX_CFU_VALUES`] (checked before sending; 422 from the
    /// server too), a missing pool (404), a permission error (403), the server's errors.
    pub async fn resize_pool(&self, id: &str, max_cfu: u32) -> Result<ComputePool, TargetError> {
        if !super::MAX_CFU_VALUES.contains(&max_cfu) {
            return Err(TargetError::Config(format!(
                "max_cfu {max_cfu} is not one of {:?}",
                super::MAX_CFU_VALUES
            )));
        }
        let url = self.pools_url(Some(id));
        let body = json!({"spec": {
            "environment": {"id": self.settings.environment_id},
            "max_cfu": max_cfu,
        }});
        let a = self.send_once(&Method::PATCH, &url, Some(&body)).await?;
        if !a.status.is_success() {
            return Err(self.fail(&Method::PATCH, &url, &a));
        }
        let v = self.parse(&Method::PATCH, &url, &a)?;
        ComputePool::from_wire(&v).ok_or_else(|| TargetError::Http {
            method: "PATCH".into(),
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
