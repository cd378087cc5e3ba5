//! The topics of a Confluent Cloud Kafka cluster, through the Kafka REST API v3
//! (`GET <rest endpoint>/kafka/v3/clusters/<cluster id>/topics`, a Kafka API key:
//! `SL_KAFKA_API_KEY` / `SL_KAFKA_API_SECRET`, shift_left's variables; never read from the file).
//!
//! The REST endpoint is `flinkpipe.confluent.kafka_rest_url` (`$FLINKPIPE_KAFKA_REST_URL` wins), else
//! derived from `kafka.bootstrap.servers` as shift_left does: `lkc-abc-xyz.us-west-2.aws.confluent.cloud:9092`
//! → `https://lkc-abc-xyz.us-west-2.aws.confluent.cloud`, `pkc-n9k.us-west-2.aws.confluent.cloud:9092`
//! → `https://pkc-n9k.us-west-2.aws.confluent.cloud`. The cluster id is `kafka.cluster_id`, else the
//! bootstrap host's first label up to its second `-` (`lkc-abc`).
//!
//! Also the consumer groups that read given topics ([`consumer_groups_of`]: state, consumers, lag).

use crate::target::secrets::Credentials;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// The Kafka API key's variables.
pub const KAFKA_API_KEY_VAR: &str = "SL_KAFKA_API_KEY";
pub const KAFKA_API_SECRET_VAR: &str = "SL_KAFKA_API_SECRET";

/// Where and how to list.
#[derive(Debug, Clone)]
pub struct KafkaRestSettings {
    /// `https://lkc-…confluent.cloud` (no trailing slash).
    pub url: String,
    /// `lkc-…`.
    pub cluster_id: String,
    pub credentials: Credentials,
}

/// One topic as the REST API lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestTopic {
    pub cluster_id: String,
    pub topic_name: String,
    pub partitions_count: u64,
    pub is_internal: bool,
}

/// The project's Kafka cluster id (`lkc-…`): `kafka.cluster_id`, else the first label's first two
/// dash-separated parts of the first bootstrap server's host
/// (`lkc-abc12-xyz.us-west-2.aws.confluent.cloud:9092` → `lkc-abc12`); `None` when neither is set.
pub fn cluster_id(cfg: &crate::config::Config) -> Option<String> {
    cfg.kafka.cluster_id.clone().or_else(|| {
        let first = cfg
            .kafka
            .bootstrap_servers
            .as_deref()?
            .split(',')
            .next()?
            .trim();
        let host = first
            .trim_start_matches("SASL_SSL://")
            .split(':')
            .next()
            .unwrap_or(first);
        let label = host.split('.').next()?;
        let mut parts = label.splitn(3, '-');
        let (a, b) = (parts.next()?, parts.next()?);
        Some(format!("{a}-{b}"))
    })
}

/// The settings from the configuration and the environment.
///
/// Errors: no REST endpoint and no bootstrap servers to derive it from, no cluster id, the Kafka API
/// key or secret not set — all named at once.
pub fn settings(
    cfg: &crate::config::Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<KafkaRestSettings, crate::config::ConfigError> {
    settings_for(
        cfg,
        env,
        "list the topics of the Confluent Cloud Kafka cluster (its REST API, a Kafka API key)",
    )
}

/// [`settings`], the error naming `purpose` (what the settings are needed for).
pub fn settings_for(
    cfg: &crate::config::Config,
    env: &dyn Fn(&str) -> Option<String>,
    purpose: &'static str,
) -> Result<KafkaRestSettings, crate::config::ConfigError> {
    let bootstrap = cfg
        .kafka
        .bootstrap_servers
        .as_deref()
        .and_then(|b| b.split(',').next())
        .map(|b| b.trim().to_string())
        .filter(|b| !b.is_empty());
    let host = bootstrap.as_deref().map(|b| {
        b.trim_start_matches("SASL_SSL://")
            .split(':')
            .next()
            .unwrap_or(b)
            .to_string()
    });
    let url = env("FLINKPIPE_KAFKA_REST_URL")
        .or(cfg.flinkpipe.confluent.kafka_rest_url.clone())
        .or_else(|| host.as_ref().map(|h| format!("https://{h}")))
        .map(|u| u.trim_end_matches('/').to_string());
    let cluster_id = cluster_id(cfg);
    let mut missing: Vec<(&'static str, &'static str)> = Vec::new();
    if url.is_none() {
        missing.push(("kafka.bootstrap.servers", "FLINKPIPE_KAFKA_REST_URL"));
    }
    if cluster_id.is_none() {
        missing.push(("kafka.cluster_id", "FLINKPIPE_KAFKA_REST_URL"));
    }
    let secrets: Vec<String> = [KAFKA_API_KEY_VAR, KAFKA_API_SECRET_VAR]
        .into_iter()
        .filter(|v| env(v).is_none_or(|s| s.is_empty()))
        .map(str::to_string)
        .collect();
    if !missing.is_empty() || !secrets.is_empty() {
        return Err(crate::config::ConfigError::Missing {
            settings: missing,
            secrets,
            file: cfg
                .source
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "config.yaml".into()),
            purpose,
        });
    }
    let credentials = Credentials::from_env_with(KAFKA_API_KEY_VAR, KAFKA_API_SECRET_VAR, env)?;
    Ok(KafkaRestSettings {
        url: url.unwrap_or_default(),
        cluster_id: cluster_id.unwrap_or_default(),
        credentials,
    })
}

/// Every topic of the cluster, following `metadata.next` (each page once), sorted by name.
///
/// Errors: the request fails or is refused (the status and the API's message; the key is never in
/// it), an answer that is not the API's JSON.
pub async fn list_topics(s: &KafkaRestSettings) -> Result<Vec<RestTopic>, RestError> {
    let client = client()?;
    let url = format!("{}/kafka/v3/clusters/{}/topics", s.url, s.cluster_id);
    let mut out = Vec::new();
    for t in get_all(&client, s, &url).await? {
        let Some(name) = t["topic_name"].as_str() else {
            continue;
        };
        out.push(RestTopic {
            cluster_id: t["cluster_id"]
                .as_str()
                .unwrap_or(&s.cluster_id)
                .to_string(),
            topic_name: name.to_string(),
            partitions_count: t["partitions_count"].as_u64().unwrap_or(0),
            is_internal: t["is_internal"].as_bool().unwrap_or(false),
        });
    }
    out.sort_by(|a, b| a.topic_name.cmp(&b.topic_name));
    Ok(out)
}

/// A consumer group reading a topic, as the Kafka REST API v3 describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestGroupOnTopic {
    pub consumer_group_id: String,
    /// `STABLE`, `EMPTY`, `PREPARING_REBALANCE`, `COMPLETING_REBALANCE`, `DEAD`, `UNKNOWN`.
    pub state: String,
    /// Consumers now in the group (`/consumers`).
    pub members: usize,
    /// Sum over the topic's partitions of `log_end_offset - current_offset` (`/lags`); `None` when
    /// the cluster does not serve lags (only dedicated clusters do).
    pub lag: Option<i64>,
    /// Partitions of the topic the group has an offset or an assignment on.
    pub partitions: Vec<i64>,
}

/// Every consumer group that reads any of `topics`, by topic (each of `topics` is a key; groups
/// sorted by id), through the consumer-group endpoints of the Kafka REST API v3
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Consumer-Group-(v3)>):
/// `GET …/consumer-groups` (every page), per group `GET …/consumer-groups/{id}/consumers`, and
/// `GET …/consumer-groups/{id}/lags` (one entry per partition with a committed offset:
/// `topic_name`, `partition_id`, `current_offset`, `log_end_offset`, `lag`). Confluent Cloud
/// serves `/lags` on dedicated clusters only: elsewhere (any 4xx answer but 401/403) a group is
/// matched by its consumers' assignments (`…/consumers/{consumer_id}/assignments`), its lag is
/// unknown, and a group without consumers cannot be matched to a topic.
///
/// Errors: a request fails or is refused (the status and the API's message, with the key's hint
/// on 401; the key is never in it), an answer that is not the API's JSON.
pub async fn consumer_groups_of(
    s: &KafkaRestSettings,
    topics: &[String],
) -> Result<std::collections::BTreeMap<String, Vec<RestGroupOnTopic>>, RestError> {
    let mut out: std::collections::BTreeMap<String, Vec<RestGroupOnTopic>> =
        topics.iter().map(|t| (t.clone(), Vec::new())).collect();
    if topics.is_empty() {
        return Ok(out);
    }
    let client = client()?;
    let base = format!(
        "{}/kafka/v3/clusters/{}/consumer-groups",
        s.url, s.cluster_id
    );
    let groups = get_all(&client, s, &base).await?;
    for g in groups {
        let Some(id) = g["consumer_group_id"].as_str() else {
            continue;
        };
        let state = g["state"].as_str().unwrap_or("UNKNOWN").to_string();
        let enc = utf8_percent(id);
        let consumers = get_all(&client, s, &format!("{base}/{enc}/consumers")).await?;
        // topic → (partitions, lag)
        let mut seen: std::collections::BTreeMap<String, (Vec<i64>, Option<i64>)> =
            std::collections::BTreeMap::new();
        match get_all(&client, s, &format!("{base}/{enc}/lags")).await {
            Ok(lags) => {
                for l in lags {
                    let Some(topic) = l["topic_name"].as_str() else {
                        continue;
                    };
                    if !out.contains_key(topic) {
                        continue;
                    }
                    let lag = l["lag"].as_i64().or_else(|| {
                        Some((l["log_end_offset"].as_i64()? - l["current_offset"].as_i64()?).max(0))
                    });
                    let e = seen
                        .entry(topic.to_string())
                        .or_insert((Vec::new(), Some(0)));
                    e.0.push(l["partition_id"].as_i64().unwrap_or(-1));
                    e.1 = match (e.1, lag) {
                        (Some(a), Some(b)) => Some(a + b.max(0)),
                        _ => None,
                    };
                }
            }
            Err(e)
                if e.status
                    .is_some_and(|c| (400..500).contains(&c) && c != 401 && c != 403) =>
            {
                for c in &consumers {
                    let Some(cid) = c["consumer_id"].as_str() else {
                        continue;
                    };
                    let url = format!("{base}/{enc}/consumers/{}/assignments", utf8_percent(cid));
                    for a in get_all(&client, s, &url).await? {
                        let Some(topic) = a["topic_name"].as_str() else {
                            continue;
                        };
                        if out.contains_key(topic) {
                            let e = seen.entry(topic.to_string()).or_insert((Vec::new(), None));
                            e.0.push(a["partition_id"].as_i64().unwrap_or(-1));
                        }
                    }
                }
            }
            Err(e) => return Err(e),
        }
        for (topic, (mut partitions, lag)) in seen {
            partitions.sort();
            partitions.dedup();
            out.entry(topic).or_default().push(RestGroupOnTopic {
                consumer_group_id: id.to_string(),
                state: state.clone(),
                members: consumers.len(),
                lag,
                partitions,
            });
        }
    }
    for list in out.values_mut() {
        list.sort_by(|a, b| a.consumer_group_id.cmp(&b.consumer_group_id));
    }
    Ok(out)
}

/// A path segment percent-encoded (group and consumer ids may hold any character).
fn utf8_percent(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn client() -> Result<reqwest::Client, RestError> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| RestError {
            status: None,
            message: e.to_string(),
        })
}

/// A failed request to the Kafka REST API: its HTTP status when the API answered, and the message
/// (the URL, the status, the API's own message; secrets masked, so it can be shown as it is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RestError {
    pub status: Option<u16>,
    pub message: String,
}

/// The `data` of every page of a list, from `url` following `metadata.next` (each page once).
async fn get_all(
    client: &reqwest::Client,
    s: &KafkaRestSettings,
    first: &str,
) -> Result<Vec<Value>, RestError> {
    let mut url = first.to_string();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    loop {
        if !seen.insert(url.clone()) {
            break;
        }
        let resp = client
            .get(&url)
            .header(
                reqwest::header::AUTHORIZATION,
                format!("Basic {}", s.credentials.basic_token()),
            )
            .send()
            .await
            .map_err(|e| RestError {
                status: None,
                message: format!("GET {url}: {}", e.without_url()),
            })?;
        let status = resp.status();
        let raw = resp.text().await.map_err(|e| RestError {
            status: None,
            message: e.without_url().to_string(),
        })?;
        // Masked as it is read: nothing parsed from the answer can carry a secret the server echoed.
        let text = super::secrets::ServerText::masked(&raw, &s.credentials.scrubber());
        if !status.is_success() {
            let msg = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| text.chars().take(200).collect());
            let hint = if status.as_u16() == 401 {
                " (the Kafka REST API takes a Kafka API key: SL_KAFKA_API_KEY / SL_KAFKA_API_SECRET)"
            } else {
                ""
            };
            return Err(RestError {
                status: Some(status.as_u16()),
                message: s
                    .credentials
                    .scrubber()
                    .scrub(&format!("GET {url}: {status}: {msg}{hint}")),
            });
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| RestError {
            status: None,
            message: format!("GET {url}: not the Kafka REST API's JSON: {e}"),
        })?;
        out.extend(v["data"].as_array().into_iter().flatten().cloned());
        match v.pointer("/metadata/next").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => url = next.to_string(),
            _ => break,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_in_paths_are_percent_encoded() {
        assert_eq!(super::utf8_percent("billing-app_1.x~"), "billing-app_1.x~");
        assert_eq!(super::utf8_percent("team b/é"), "team%20b%2F%C3%A9");
    }
}
