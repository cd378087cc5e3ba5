//! Each target's settings, read from `config.yaml` ([`Config`], the schema) and the environment:
//! the Confluent Cloud Flink endpoint and credentials ([`confluent`]), the SQL Gateway and its
//! JobManager ([`gateway`]), and the DDL files the gateway declares for tables the project does not
//! define ([`gateway_external_ddl`]). Secrets come only from the environment ([`secrets`]).

use super::retry::Backoff;
use super::secrets;
use super::{ConfluentSettings, GatewaySettings};
use crate::config::{Config, ConfigError};
use std::path::{Path, PathBuf};

/// The Flink REST endpoint: `$SL_FLINK_SQL_ENDPOINT`, else `flink.sql_endpoint`, else
/// `https://flink.<cloud_region>.<cloud_provider>.confluent.cloud`
/// (<https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>;
/// provider lower-cased). Errors: provider or region missing when no override is given.
pub fn flink_endpoint(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    if let Some(e) = env("SL_FLINK_SQL_ENDPOINT").or(config.flink.sql_endpoint.clone()) {
        return Ok(e.trim_end_matches('/').to_string());
    }
    let provider = env("SL_CLOUD_PROVIDER")
        .or(config.confluent_cloud.cloud_provider.clone())
        .filter(|s| !s.trim().is_empty());
    let region = env("SL_CLOUD_REGION").or(config.confluent_cloud.cloud_region.clone());
    let (provider, region) = match (provider, region) {
        (Some(p), Some(r)) => (p, r),
        (p, r) => {
            let mut settings = Vec::new();
            if p.is_none() {
                settings.push(("confluent_cloud.cloud_provider", "SL_CLOUD_PROVIDER"));
            }
            if r.is_none() {
                settings.push(("confluent_cloud.cloud_region", "SL_CLOUD_REGION"));
            }
            return Err(ConfigError::Missing {
                settings,
                secrets: Vec::new(),
                file: config.file_name(),
                purpose: "derive the Flink endpoint",
            });
        }
    };
    Ok(format!(
        "https://flink.{}.{}.confluent.cloud",
        region.to_ascii_lowercase(),
        provider.to_ascii_lowercase()
    ))
}

/// The SQL Gateway target's settings when one is configured: `FLINKPIPE_GATEWAY_URL` or
/// `flinkpipe.gateway.url`; the JobManager from `FLINKPIPE_JOBMANAGER_URL`,
/// `flinkpipe.gateway.jobmanager_url`, else the gateway's host on port 8081. `None`: no gateway
/// configured (deploy commands use Confluent Cloud).
pub fn gateway(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Option<GatewaySettings> {
    let g = &config.flinkpipe.gateway;
    let url = env("FLINKPIPE_GATEWAY_URL").or(g.url.clone())?;
    let jm = env("FLINKPIPE_JOBMANAGER_URL")
        .or(g.jobmanager_url.clone())
        .unwrap_or_else(|| {
            reqwest::Url::parse(&url)
                .ok()
                .and_then(|u| u.host_str().map(|h| format!("{}://{h}:8081", u.scheme())))
                .unwrap_or_else(|| "http://127.0.0.1:8081".into())
        });
    let mut s = GatewaySettings::new(&url, &jm);
    s.session_properties = g.session_properties.clone();
    if let Some(t) = g.submit_timeout_seconds {
        s.submit_timeout = std::time::Duration::from_secs(t);
    }
    Some(s)
}

/// `flinkpipe.gateway.external_ddl`, resolved against the configuration file's folder.
pub fn gateway_external_ddl(config: &Config) -> Vec<PathBuf> {
    let base = config
        .source
        .as_ref()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    config
        .flinkpipe
        .gateway
        .external_ddl
        .iter()
        .map(|p| {
            let p = if p.is_absolute() {
                p.clone()
            } else {
                base.join(p)
            };
            // Absolute, so that a message about it says where it was looked for.
            std::path::absolute(&p).unwrap_or(p)
        })
        .collect()
}

/// Everything the Confluent Cloud target needs, from this file and the environment (`env`, usually
/// `std::env::var`). Environment variables override ids as in shift_left (`SL_FLINK_ENV_ID`,
/// `SL_CLOUD_ORGANIZATION_ID`, `SL_FLINK_COMPUTE_POOL_ID`, `SL_CONFLUENT_PRINCIPAL_ID`,
/// `SL_FLINK_ENV_NAME`, `SL_FLINK_DATABASE_NAME`); secrets come **only** from `SL_FLINK_API_KEY` /
/// `SL_FLINK_API_SECRET`. Errors name the first missing key and its variable.
pub fn confluent(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ConfluentSettings, ConfigError> {
    const PURPOSE: &str = "use Confluent Cloud";
    let cc = &config.confluent_cloud;
    // Every missing setting and secret is collected, so that one run names them all.
    let mut missing: Vec<(&'static str, &'static str)> = Vec::new();
    let mut get = |value: Option<&str>, key: &'static str, var: &'static str| {
        let v = env(var)
            .or(value.map(str::to_string))
            .filter(|s| !s.trim().is_empty());
        if v.is_none() {
            missing.push((key, var));
        }
        v.unwrap_or_default()
    };
    let environment_id = get(
        cc.environment_id.as_deref(),
        "confluent_cloud.environment_id",
        "SL_FLINK_ENV_ID",
    );
    let organization_id = get(
        cc.organization_id.as_deref(),
        "confluent_cloud.organization_id",
        "SL_CLOUD_ORGANIZATION_ID",
    );
    let endpoint = match flink_endpoint(config, env) {
        Ok(e) => e,
        Err(ConfigError::Missing { settings, .. }) => {
            missing.extend(settings);
            String::new()
        }
        Err(e) => return Err(e),
    };
    let secrets: Vec<String> = [secrets::FLINK_API_KEY_VAR, secrets::FLINK_API_SECRET_VAR]
        .into_iter()
        .filter(|v| env(v).is_none_or(|s| s.is_empty()))
        .map(str::to_string)
        .collect();
    if !missing.is_empty() || !secrets.is_empty() {
        return Err(ConfigError::Missing {
            settings: missing,
            secrets,
            file: config.file_name(),
            purpose: PURPOSE,
        });
    }
    let opt = |var: &str, v: &Option<String>| env(var).or(v.clone()).filter(|s| !s.is_empty());
    let credentials = secrets::Credentials::from_env_with(
        secrets::FLINK_API_KEY_VAR,
        secrets::FLINK_API_SECRET_VAR,
        env,
    )?;
    Ok(ConfluentSettings {
        endpoint,
        organization_id,
        environment_id,
        compute_pool_id: opt("SL_FLINK_COMPUTE_POOL_ID", &config.flink.compute_pool_id),
        principal: opt("SL_CONFLUENT_PRINCIPAL_ID", &cc.service_account_id),
        catalog: opt("SL_FLINK_ENV_NAME", &config.flink.catalog_name),
        database: opt("SL_FLINK_DATABASE_NAME", &config.flink.database_name),
        credentials,
        request_timeout: std::time::Duration::from_secs(30),
        retry: Backoff::HTTP,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_is_derived_or_overridden() {
        let yaml = "confluent_cloud:\n  cloud_provider: AWS\n  cloud_region: us-east-1\n";
        let cfg = Config::from_yaml(yaml, Path::new("c.yaml")).unwrap();
        let none = |_: &str| None;
        assert_eq!(
            flink_endpoint(&cfg, &none).unwrap(),
            "https://flink.us-east-1.aws.confluent.cloud"
        );
        let env =
            |v: &str| (v == "SL_FLINK_SQL_ENDPOINT").then(|| "http://127.0.0.1:9/".to_string());
        assert_eq!(flink_endpoint(&cfg, &env).unwrap(), "http://127.0.0.1:9");
        let yaml2 = format!("{yaml}flink:\n  sql_endpoint: https://flink.private.example\n");
        let cfg2 = Config::from_yaml(&yaml2, Path::new("c.yaml")).unwrap();
        assert_eq!(
            flink_endpoint(&cfg2, &none).unwrap(),
            "https://flink.private.example"
        );
    }

    #[test]
    fn missing_keys_and_secrets_are_named() {
        let cfg = Config::from_yaml(
            "confluent_cloud:\n  cloud_provider: aws\n  cloud_region: us-west-2\n",
            Path::new("c.yaml"),
        )
        .unwrap();
        let none = |_: &str| None;
        let err = confluent(&cfg, &none).unwrap_err().to_string();
        assert!(
            err.contains("confluent_cloud.environment_id")
                && err.contains("SL_FLINK_ENV_ID")
                && err.contains("c.yaml"),
            "{err}"
        );
        let ids = |v: &str| match v {
            "SL_FLINK_ENV_ID" => Some("env-1".to_string()),
            "SL_CLOUD_ORGANIZATION_ID" => Some("org".to_string()),
            "SL_FLINK_API_KEY" => Some("KEYKEYKEY".to_string()),
            _ => None,
        };
        let err = confluent(&cfg, &ids).unwrap_err().to_string();
        assert!(err.contains("SL_FLINK_API_SECRET"), "{err}");
        let all =
            |v: &str| ids(v).or((v == "SL_FLINK_API_SECRET").then(|| "SECRETSECRET".to_string()));
        let s = confluent(&cfg, &all).unwrap();
        assert_eq!(s.environment_id, "env-1");
        assert!(!format!("{s:?}").contains("SECRETSECRET"));
    }
}
