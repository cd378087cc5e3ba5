//! `project list-topics PATH`: the topics of the configured Kafka — on the SQL Gateway target the
//! broker its cluster uses (the Kafka protocol, [`crate::target::kafka::KafkaAdmin`]), on Confluent
//! Cloud the cluster's Kafka REST API v3 ([`crate::target::kafka_rest`]) — each with the table of the
//! project that owns it, and `PATH/topic_list.txt` in shift_left's format
//! (`cluster_id,topic_name,partitions_count` per line).

use super::target::TargetKind;
use super::{Context, OpsError};
use crate::config::process_env;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the topics were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TopicSource {
    /// A broker, over the Kafka protocol (the SQL Gateway target's Kafka).
    Broker,
    /// Confluent Cloud's Kafka REST API v3.
    KafkaRest,
}

/// One topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicRow {
    pub topic_name: String,
    pub partitions_count: u64,
    pub is_internal: bool,
    /// The table of the project whose storage it is (its `'topic'` option; on Confluent Cloud a
    /// table is the topic of its name), `None`: not the project's.
    pub table_name: Option<String>,
}

/// The listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicList {
    pub source: TopicSource,
    /// The broker (`localhost:9092`) or the REST endpoint.
    pub cluster: String,
    pub cluster_id: Option<String>,
    pub topics: Vec<TopicRow>,
    /// `PATH/topic_list.txt`.
    pub file: PathBuf,
}

/// Lists the topics and writes `out_dir/topic_list.txt` (atomically). The project at `pipelines`,
/// when there is one, names each topic's table.
///
/// Errors: the Kafka REST settings or the Kafka API key missing (named), the broker or the API
/// unreachable or refusing, `out_dir` not writable.
pub fn list_topics(ctx: &Context, pipelines: &Path, out_dir: &Path) -> Result<TopicList, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let rt = super::target::runtime()?;
    let (source, cluster, cluster_id, raw) = match TargetKind::of(&cfg) {
        TargetKind::SqlGateway => {
            let bootstrap = super::unit_tests::bootstrap(&cfg);
            let admin = crate::target::kafka::KafkaAdmin::new(&bootstrap);
            let (id, topics) = rt
                .block_on(admin.list_topics())
                .map_err(|e| OpsError::Target(e.to_string()))?;
            let rows: Vec<(String, u64, bool)> = topics
                .into_iter()
                .map(|t| (t.name, t.partitions as u64, t.internal))
                .collect();
            (TopicSource::Broker, admin.bootstrap, id, rows)
        }
        TargetKind::ConfluentCloud => {
            let s = crate::target::kafka_rest::settings(&cfg, &process_env)?;
            let topics = rt
                .block_on(crate::target::kafka_rest::list_topics(&s))
                .map_err(|e| OpsError::Target(e.to_string()))?;
            let rows = topics
                .into_iter()
                .map(|t| (t.topic_name, t.partitions_count, t.is_internal))
                .collect();
            (TopicSource::KafkaRest, s.url, Some(s.cluster_id), rows)
        }
    };
    let owners = if pipelines.is_dir() {
        let project = ctx.load_project(&cfg, pipelines, true)?;
        topic_owners(&project, source)
    } else {
        BTreeMap::new()
    };
    let topics: Vec<TopicRow> = raw
        .into_iter()
        .map(|(name, partitions, internal)| TopicRow {
            table_name: owners.get(&name).cloned(),
            topic_name: name,
            partitions_count: partitions,
            is_internal: internal,
        })
        .collect();
    let file = out_dir.join("topic_list.txt");
    let id = cluster_id.clone().unwrap_or_default();
    let text: String = topics
        .iter()
        .map(|t| format!("{id},{},{}\n", t.topic_name, t.partitions_count))
        .collect();
    std::fs::create_dir_all(out_dir).map_err(|source| OpsError::Write {
        path: out_dir.to_path_buf(),
        source,
    })?;
    crate::fsutil::write_atomic(&file, text.as_bytes()).map_err(|source| OpsError::Write {
        path: file.clone(),
        source,
    })?;
    Ok(TopicList {
        source,
        cluster,
        cluster_id,
        topics,
        file,
    })
}

/// Topic → table of the project: a table's `'topic'` option, its manifest topic for an external
/// table, and on Confluent Cloud (where a table is the topic of its name) its name.
pub fn topic_owners(
    project: &crate::project::Project,
    source: TopicSource,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for t in project.inventory.tables.values() {
        if let Some(topic) = &t.kafka_topic {
            out.entry(topic.clone()).or_insert_with(|| t.name.clone());
        }
        if source == TopicSource::KafkaRest && !t.unknown {
            out.entry(t.name.clone()).or_insert_with(|| t.name.clone());
        }
    }
    out
}
