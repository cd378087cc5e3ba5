//! Kafka topics on a broker (the local stack's, or any a gateway's cluster reads), managed over the
//! Kafka protocol with the `kafka-protocol` crate: Flink does not create topics, and a Kafka source on
//! a missing topic fails at start. Used by the unit tests (empty test topics) and by
//! `deploy --blue-green` on the SQL Gateway (the green tables' new topics).
//!
//! Before a test case its topics are deleted and created again (1 partition, replication factor 1 —
//! the broker's minimum; a test table needs no more); after the run they are deleted. Requests:
//! `DeleteTopics` v4 and `CreateTopics` v5 (flexible versions, both served by Kafka 2.4 to 4.x); a
//! topic being deleted answers `TOPIC_ALREADY_EXISTS` (36) to a create for a moment, which is retried.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader, TopicName,
    create_topics_request::CreatableTopic,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CREATE_VERSION: i16 = 5;
/// `Metadata` v1: the first version where a null topic list means every topic (served by Kafka 0.10
/// to 4.x).
const METADATA_VERSION: i16 = 1;
const DELETE_VERSION: i16 = 4;
const TOPIC_ALREADY_EXISTS: i16 = 36;
const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
const NONE: i16 = 0;

/// A topic as a broker's metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerTopic {
    pub name: String,
    pub partitions: usize,
    /// Kafka's own topics (`__consumer_offsets`, `__transaction_state`).
    pub internal: bool,
}

/// A client for topic administration on one broker.
#[derive(Debug, Clone)]
pub struct KafkaAdmin {
    /// `host:port` (the first of a comma-separated list is used).
    pub bootstrap: String,
    /// Longest wait for one request, and for a deleted topic to be creatable again.
    pub timeout: Duration,
}

impl KafkaAdmin {
    /// An admin client for `bootstrap` (`localhost:9092`), 30 s per operation.
    pub fn new(bootstrap: &str) -> Self {
        KafkaAdmin {
            bootstrap: bootstrap
                .split(',')
                .next()
                .unwrap_or(bootstrap)
                .trim()
                .to_string(),
            timeout: Duration::from_secs(30),
        }
    }

    async fn connect(&self) -> Result<TcpStream, String> {
        tokio::time::timeout(self.timeout, TcpStream::connect(&self.bootstrap))
            .await
            .map_err(|_| {
                format!(
                    "Kafka broker {}: no answer in {:?}",
                    self.bootstrap, self.timeout
                )
            })?
            .map_err(|e| format!("Kafka broker {}: {e}", self.bootstrap))
    }

    async fn call<Req: Encodable, Resp: Decodable>(
        &self,
        conn: &mut TcpStream,
        key: ApiKey,
        version: i16,
        req: &Req,
        req_header: i16,
        resp_header: i16,
    ) -> Result<Resp, String> {
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(version)
            .with_correlation_id(1)
            .with_client_id(Some(StrBytes::from_static_str("flinkpipe")));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, req_header)
            .and_then(|()| req.encode(&mut body, version))
            .map_err(|e| format!("encoding a Kafka request: {e}"))?;
        let mut frame = BytesMut::with_capacity(body.len() + 4);
        frame.put_i32(body.len() as i32);
        frame.extend_from_slice(&body);
        let io = async {
            conn.write_all(&frame).await?;
            let len = conn.read_i32().await?;
            let mut buf = vec![0u8; len.max(0) as usize];
            conn.read_exact(&mut buf).await?;
            Ok::<_, std::io::Error>(buf)
        };
        let buf = tokio::time::timeout(self.timeout, io)
            .await
            .map_err(|_| {
                format!(
                    "Kafka broker {}: no answer in {:?}",
                    self.bootstrap, self.timeout
                )
            })?
            .map_err(|e| format!("Kafka broker {}: {e}", self.bootstrap))?;
        let mut bytes = Bytes::from(buf);
        ResponseHeader::decode(&mut bytes, resp_header)
            .and_then(|_| Resp::decode(&mut bytes, version))
            .map_err(|e| format!("Kafka broker {}: unreadable answer: {e}", self.bootstrap))
            .inspect(|_| {
                let _ = bytes.remaining();
            })
    }

    /// Every topic of the cluster (one `Metadata` request): name, number of partitions, and whether it
    /// is internal (`__consumer_offsets`), sorted by name; and the cluster id when the broker says.
    ///
    /// Errors: the broker cannot be reached or its answer cannot be read.
    pub async fn list_topics(&self) -> Result<(Option<String>, Vec<BrokerTopic>), String> {
        let mut conn = self.connect().await?;
        let req = MetadataRequest::default().with_topics(None);
        let resp: MetadataResponse = self
            .call(
                &mut conn,
                ApiKey::Metadata,
                METADATA_VERSION,
                &req,
                MetadataRequest::header_version(METADATA_VERSION),
                MetadataResponse::header_version(METADATA_VERSION),
            )
            .await?;
        let mut topics: Vec<BrokerTopic> = resp
            .topics
            .iter()
            .filter_map(|t| {
                Some(BrokerTopic {
                    name: t.name.as_ref()?.0.as_str().to_string(),
                    partitions: t.partitions.len(),
                    internal: t.is_internal,
                })
            })
            .collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((resp.cluster_id.map(|c| c.as_str().to_string()), topics))
    }

    /// Deletes `topics`; a topic that does not exist is fine.
    ///
    /// Errors: the broker cannot be reached or refuses (the error code and message).
    pub async fn delete(&self, topics: &[String]) -> Result<(), String> {
        if topics.is_empty() {
            return Ok(());
        }
        let mut conn = self.connect().await?;
        let req = DeleteTopicsRequest::default()
            .with_topic_names(
                topics
                    .iter()
                    .map(|t| TopicName(StrBytes::from_string(t.clone())))
                    .collect(),
            )
            .with_timeout_ms(self.timeout.as_millis() as i32);
        let resp: DeleteTopicsResponse = self
            .call(
                &mut conn,
                ApiKey::DeleteTopics,
                DELETE_VERSION,
                &req,
                DeleteTopicsRequest::header_version(DELETE_VERSION),
                DeleteTopicsResponse::header_version(DELETE_VERSION),
            )
            .await?;
        for r in resp.responses {
            if r.error_code != NONE && r.error_code != UNKNOWN_TOPIC_OR_PARTITION {
                return Err(format!(
                    "deleting topic {}: Kafka error {}{}",
                    r.name.as_ref().map(|n| n.0.as_str()).unwrap_or("?"),
                    r.error_code,
                    r.error_message
                        .as_ref()
                        .map(|m| format!(": {}", m.as_str()))
                        .unwrap_or_default()
                ));
            }
        }
        Ok(())
    }

    /// Creates `topics` (1 partition, replication factor 1), waiting while a topic of that name is
    /// still being deleted.
    ///
    /// Errors: the broker cannot be reached, refuses, or still has a topic of that name after the
    /// timeout.
    pub async fn create(&self, topics: &[String]) -> Result<(), String> {
        let deadline = Instant::now() + self.timeout;
        let mut todo: Vec<String> = topics.to_vec();
        let mut conn = self.connect().await?;
        while !todo.is_empty() {
            let (_, again) = self.create_topics(&mut conn, &todo).await?;
            if !again.is_empty() && Instant::now() >= deadline {
                return Err(format!(
                    "topics {} still exist {:?} after their deletion",
                    again.join(", "),
                    self.timeout
                ));
            }
            if !again.is_empty() {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            todo = again;
        }
        Ok(())
    }

    /// Creates the `topics` that do not exist yet (1 partition, replication factor 1); existing ones
    /// are kept as they are. Returns the topics created.
    ///
    /// Errors: the broker cannot be reached or refuses.
    pub async fn ensure(&self, topics: &[String]) -> Result<Vec<String>, String> {
        let mut conn = self.connect().await?;
        let (created, _) = self.create_topics(&mut conn, topics).await?;
        Ok(created)
    }

    /// One CreateTopics request for `topics` (1 partition, replication factor 1): `(created, already
    /// existing)`. Errors: the broker's error for any other topic, with its message.
    async fn create_topics(
        &self,
        conn: &mut TcpStream,
        topics: &[String],
    ) -> Result<(Vec<String>, Vec<String>), String> {
        let req = CreateTopicsRequest::default()
            .with_topics(
                topics
                    .iter()
                    .map(|t| {
                        CreatableTopic::default()
                            .with_name(TopicName(StrBytes::from_string(t.clone())))
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .collect(),
            )
            .with_timeout_ms(self.timeout.as_millis() as i32);
        let resp: CreateTopicsResponse = self
            .call(
                conn,
                ApiKey::CreateTopics,
                CREATE_VERSION,
                &req,
                CreateTopicsRequest::header_version(CREATE_VERSION),
                CreateTopicsResponse::header_version(CREATE_VERSION),
            )
            .await?;
        let (mut created, mut existing) = (Vec::new(), Vec::new());
        for r in resp.topics {
            let name = r.name.0.as_str().to_string();
            match r.error_code {
                NONE => created.push(name),
                TOPIC_ALREADY_EXISTS => existing.push(name),
                code => {
                    return Err(format!(
                        "creating topic {name}: Kafka error {code}{}",
                        r.error_message
                            .as_ref()
                            .map(|m| format!(": {}", m.as_str()))
                            .unwrap_or_default()
                    ));
                }
            }
        }
        Ok((created, existing))
    }

    /// Deletes then creates `topics`: empty topics of those names.
    pub async fn recreate(&self, topics: &[String]) -> Result<(), String> {
        self.delete(topics).await?;
        self.create(topics).await
    }
}
