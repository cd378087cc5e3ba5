//! Kafka topics on a broker (the local stack's, or any a gateway's cluster reads), managed over the
//! Kafka protocol with the `kafka-protocol` crate: Flink does not create topics, and a Kafka source on
//! a missing topic fails at start. Used by the unit tests (empty test topics) and by
//! `deploy --blue-green` on the SQL Gateway (the green tables' new topics).
//!
//! Before a test case its topics are deleted and created again (1 partition, replication factor 1 —
//! the broker's minimum; a test table needs no more); after the run they are deleted. Requests:
//! `DeleteTopics` v4 and `CreateTopics` v5 (flexible versions, both served by Kafka 2.4 to 4.x); a
//! topic being deleted answers `TOPIC_ALREADY_EXISTS` (36) to a create for a moment, which is retried.
//!
//! Also the consumer groups with committed offsets on given topics, with their state, members and
//! lag ([`KafkaAdmin::consumer_groups_of`], for "who still reads blue", `crate::ops::readers`), and,
//! to seed a topic and a group (tests, fixtures), [`KafkaAdmin::produce`] and
//! [`KafkaAdmin::commit_offset`].

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader, TopicName,
    create_topics_request::CreatableTopic, offset_fetch_request::OffsetFetchRequestTopic,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::collections::{BTreeMap, BTreeSet};
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

/// Why a request to a Kafka broker failed: the broker's error codes are those of the Kafka protocol
/// (<https://kafka.apache.org/protocol.html#protocol_error_codes>).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KafkaError {
    /// No connection or no answer within the client's timeout.
    #[error("Kafka broker {broker}: no answer in {after:?}")]
    Timeout { broker: String, after: Duration },
    /// The connection failed or broke (the I/O error's text).
    #[error("Kafka broker {broker}: {message}")]
    Io { broker: String, message: String },
    /// A request or record batch could not be encoded (`what` names it).
    #[error("encoding {what}: {message}")]
    Encode { what: String, message: String },
    /// The broker's answer could not be decoded.
    #[error("Kafka broker {broker}: unreadable answer: {message}")]
    Unreadable { broker: String, message: String },
    /// The broker refused: `action` says what was asked (`deleting topic t`), `code` is Kafka's error
    /// code and `messages` the texts the broker gave with it, if any.
    #[error("{action}: Kafka error {code}{}", messages.iter().map(|m| format!(": {m}")).collect::<String>())]
    Refused {
        action: String,
        code: i16,
        messages: Vec<String>,
    },
    /// Topics just deleted still existed after the timeout, so they could not be created again.
    #[error("topics {} still exist {after:?} after their deletion", topics.join(", "))]
    StillExists {
        topics: Vec<String>,
        after: Duration,
    },
    /// A produce request was answered without a partition response.
    #[error("producing to {topic}: empty answer")]
    EmptyAnswer { topic: String },
}

impl KafkaError {
    /// The broker's error code when it refused, else `None`.
    pub fn code(&self) -> Option<i16> {
        match self {
            KafkaError::Refused { code, .. } => Some(*code),
            _ => None,
        }
    }
}

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

    async fn connect(&self) -> Result<TcpStream, KafkaError> {
        tokio::time::timeout(self.timeout, TcpStream::connect(&self.bootstrap))
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|e| self.io(e))
    }

    fn timed_out(&self) -> KafkaError {
        KafkaError::Timeout {
            broker: self.bootstrap.clone(),
            after: self.timeout,
        }
    }

    fn io(&self, e: std::io::Error) -> KafkaError {
        KafkaError::Io {
            broker: self.bootstrap.clone(),
            message: e.to_string(),
        }
    }

    async fn call<Req: Encodable, Resp: Decodable>(
        &self,
        conn: &mut TcpStream,
        key: ApiKey,
        version: i16,
        req: &Req,
        req_header: i16,
        resp_header: i16,
    ) -> Result<Resp, KafkaError> {
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(version)
            .with_correlation_id(1)
            .with_client_id(Some(StrBytes::from_static_str("flinkpipe")));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, req_header)
            .and_then(|()| req.encode(&mut body, version))
            .map_err(|e| KafkaError::Encode {
                what: "a Kafka request".into(),
                message: e.to_string(),
            })?;
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
            .map_err(|_| self.timed_out())?
            .map_err(|e| self.io(e))?;
        let mut bytes = Bytes::from(buf);
        ResponseHeader::decode(&mut bytes, resp_header)
            .and_then(|_| Resp::decode(&mut bytes, version))
            .map_err(|e| KafkaError::Unreadable {
                broker: self.bootstrap.clone(),
                message: e.to_string(),
            })
            .inspect(|_| {
                let _ = bytes.remaining();
            })
    }

    /// Every topic of the cluster (one `Metadata` request): name, number of partitions, and whether it
    /// is internal (`__consumer_offsets`), sorted by name; and the cluster id when the broker says.
    ///
    /// Errors: the broker cannot be reached or its answer cannot be read.
    pub async fn list_topics(&self) -> Result<(Option<String>, Vec<BrokerTopic>), KafkaError> {
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
    pub async fn delete(&self, topics: &[String]) -> Result<(), KafkaError> {
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
                return Err(KafkaError::Refused {
                    action: format!(
                        "deleting topic {}",
                        r.name.as_ref().map(|n| n.0.as_str()).unwrap_or("?")
                    ),
                    code: r.error_code,
                    messages: r.error_message.iter().map(|m| m.to_string()).collect(),
                });
            }
        }
        Ok(())
    }

    /// Creates `topics` (1 partition, replication factor 1), waiting while a topic of that name is
    /// still being deleted.
    ///
    /// Errors: the broker cannot be reached, refuses, or still has a topic of that name after the
    /// timeout.
    pub async fn create(&self, topics: &[String]) -> Result<(), KafkaError> {
        let deadline = Instant::now() + self.timeout;
        let mut todo: Vec<String> = topics.to_vec();
        let mut conn = self.connect().await?;
        while !todo.is_empty() {
            let (_, again) = self.create_topics(&mut conn, &todo).await?;
            if !again.is_empty() && Instant::now() >= deadline {
                return Err(KafkaError::StillExists {
                    topics: again,
                    after: self.timeout,
                });
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
    pub async fn ensure(&self, topics: &[String]) -> Result<Vec<String>, KafkaError> {
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
    ) -> Result<(Vec<String>, Vec<String>), KafkaError> {
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
                    return Err(KafkaError::Refused {
                        action: format!("creating topic {name}"),
                        code,
                        messages: r.error_message.iter().map(|m| m.to_string()).collect(),
                    });
                }
            }
        }
        Ok((created, existing))
    }

    /// Deletes then creates `topics`: empty topics of those names.
    pub async fn recreate(&self, topics: &[String]) -> Result<(), KafkaError> {
        self.delete(topics).await?;
        self.create(topics).await
    }
}

/// The consumer-group requests below use versions that Kafka 2.6 to 4.x serve (Kafka 4.0 removed the
/// oldest ones, KIP-896:
/// <https://cwiki.apache.org/confluence/display/KAFKA/KIP-896%3A+Remove+old+client+protocol+API+versions+in+Kafka+4.0>).
const LIST_GROUPS_VERSION: i16 = 4;
/// `Metadata` v4: the first version that can say not to create a missing topic it is asked about
/// (`allow_auto_topic_creation`; a broker with `auto.create.topics.enable` creates it otherwise).
const METADATA_TOPICS_VERSION: i16 = 4;
const DESCRIBE_GROUPS_VERSION: i16 = 5;
const FIND_COORDINATOR_VERSION: i16 = 3;
const OFFSET_FETCH_VERSION: i16 = 7;
const LIST_OFFSETS_VERSION: i16 = 5;
const OFFSET_COMMIT_VERSION: i16 = 8;
const PRODUCE_VERSION: i16 = 8;

/// The committed offset and the log end offset of one partition for one consumer group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PartitionLag {
    pub partition: i32,
    /// The group's committed offset (the next record it will read).
    pub committed: i64,
    /// The partition's log end offset (high watermark); `None` when the leader did not answer.
    pub log_end: Option<i64>,
    /// `log_end - committed`, never negative; `None` without a log end offset.
    pub lag: Option<i64>,
}

/// A consumer group with committed offsets on a topic, as the group coordinator describes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GroupOnTopic {
    pub group_id: String,
    /// The group's state as Kafka names it: `Stable`, `Empty`, `PreparingRebalance`,
    /// `CompletingRebalance`, `Dead`.
    pub state: String,
    /// The group's protocol type (`consumer`; empty for a group that only commits offsets, as
    /// Flink's Kafka source does: it assigns partitions itself and joins no group).
    pub protocol_type: String,
    /// Members now in the group.
    pub members: usize,
    /// The partitions it committed an offset for, by partition.
    pub partitions: Vec<PartitionLag>,
}

impl GroupOnTopic {
    /// The sum over its partitions of `log end - committed`; `None` when a log end offset is unknown.
    pub fn lag(&self) -> Option<i64> {
        self.partitions.iter().map(|p| p.lag).sum()
    }
}

/// The topics and partitions of `map`, as an `OffsetFetch` asks for them (the same for every group).
fn offset_fetch_topics(map: &ClusterMap) -> Vec<OffsetFetchRequestTopic> {
    map.leaders
        .iter()
        .map(|(t, parts)| {
            OffsetFetchRequestTopic::default()
                .with_name(TopicName(StrBytes::from_string(t.clone())))
                .with_partition_indexes(parts.iter().map(|p| p.0).collect())
        })
        .collect()
}

/// Open connections by broker address (`host:port`), reused across one operation's requests.
type Pool = BTreeMap<String, TcpStream>;

/// A consumer group as `ListGroups` lists it.
struct ListedGroup {
    state: String,
    protocol_type: String,
}

/// One committed offset: `group` will read `topic`'s partition `partition` from `offset`.
struct Committed {
    topic: String,
    group: String,
    partition: i32,
    offset: i64,
}

/// The brokers of a cluster and the leaders of some topics' partitions (one `Metadata` request).
struct ClusterMap {
    /// Broker id → `host:port`.
    brokers: BTreeMap<i32, String>,
    /// Topic → (partition, leader broker id), by partition.
    leaders: BTreeMap<String, Vec<(i32, i32)>>,
}

impl KafkaAdmin {
    /// A connection to `addr` kept in `pool`; a broker whose advertised address cannot be reached is
    /// tried through the bootstrap address when the cluster has a single broker (a broker in a
    /// container advertising its container name).
    async fn conn<'a>(
        &self,
        pool: &'a mut Pool,
        addr: &str,
        single_broker: bool,
    ) -> Result<&'a mut TcpStream, KafkaError> {
        if !pool.contains_key(addr) {
            let other = KafkaAdmin {
                bootstrap: addr.to_string(),
                timeout: self.timeout,
            };
            let conn = match other.connect().await {
                Ok(c) => c,
                Err(_) if single_broker && addr != self.bootstrap => self.connect().await?,
                Err(e) => return Err(e),
            };
            pool.insert(addr.to_string(), conn);
        }
        Ok(pool.get_mut(addr).expect("inserted above"))
    }

    async fn cluster_map(
        &self,
        conn: &mut TcpStream,
        topics: &[String],
    ) -> Result<ClusterMap, KafkaError> {
        use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
        let req = MetadataRequest::default()
            .with_topics(Some(
                topics
                    .iter()
                    .map(|t| {
                        MetadataRequestTopic::default()
                            .with_name(Some(TopicName(StrBytes::from_string(t.clone()))))
                    })
                    .collect(),
            ))
            .with_allow_auto_topic_creation(false);
        let resp: MetadataResponse = self
            .call(
                conn,
                ApiKey::Metadata,
                METADATA_TOPICS_VERSION,
                &req,
                MetadataRequest::header_version(METADATA_TOPICS_VERSION),
                MetadataResponse::header_version(METADATA_TOPICS_VERSION),
            )
            .await?;
        let brokers = resp
            .brokers
            .iter()
            .map(|b| (b.node_id.0, format!("{}:{}", b.host.as_str(), b.port)))
            .collect();
        let leaders = resp
            .topics
            .iter()
            .filter(|t| t.error_code == NONE)
            .filter_map(|t| {
                let mut parts: Vec<(i32, i32)> = t
                    .partitions
                    .iter()
                    .map(|p| (p.partition_index, p.leader_id.0))
                    .collect();
                parts.sort();
                Some((t.name.as_ref()?.0.as_str().to_string(), parts))
            })
            .collect();
        Ok(ClusterMap { brokers, leaders })
    }

    /// Every consumer group with a committed offset on any of `topics`, by topic (a topic without
    /// one maps to an empty list; a topic that does not exist is left out), each with its state,
    /// members and per-partition lag, groups sorted by id.
    ///
    /// Requests, as `kafka-consumer-groups.sh --describe` makes them (Kafka protocol,
    /// <https://kafka.apache.org/protocol.html>): `Metadata` v4 (brokers, partition leaders; a
    /// missing topic is never created),
    /// `ListGroups` v4 on every broker (each lists the groups it coordinates), `FindCoordinator` v3
    /// per group, `DescribeGroups` v5 and `OffsetFetch` v7 on its coordinator, `ListOffsets` v5
    /// (latest, read uncommitted: the high watermark) on each partition's leader.
    ///
    /// Errors: a broker that cannot be reached or answers an unreadable message, a group request
    /// refused (the Kafka error code; 29/30 are authorization failures).
    pub async fn consumer_groups_of(
        &self,
        topics: &[String],
    ) -> Result<BTreeMap<String, Vec<GroupOnTopic>>, KafkaError> {
        let mut out: BTreeMap<String, Vec<GroupOnTopic>> = BTreeMap::new();
        if topics.is_empty() {
            return Ok(out);
        }
        let mut pool: Pool = BTreeMap::new();
        let boot = self.bootstrap.clone();
        let map = {
            let conn = self.conn(&mut pool, &boot, true).await?;
            self.cluster_map(conn, topics).await?
        };
        let single = map.brokers.len() <= 1;
        for t in map.leaders.keys() {
            out.insert(t.clone(), Vec::new());
        }
        if map.leaders.is_empty() {
            // None of the topics exists: no group can have an offset on it.
            return Ok(out);
        }
        let groups = self.every_group(&mut pool, &map, single).await?;
        let topic_req = offset_fetch_topics(&map);
        let mut committed: Vec<Committed> = Vec::new();
        let mut described: BTreeMap<String, GroupOnTopic> = BTreeMap::new();
        for (group, listed) in &groups {
            let (offsets, coordinator) = self
                .committed_offsets(&mut pool, &topic_req, group, single)
                .await?;
            if offsets.is_empty() {
                continue;
            }
            committed.extend(offsets);
            let d = self
                .describe_group(&mut pool, &coordinator, group, listed, single)
                .await?;
            described.insert(group.clone(), d);
        }
        let ends = self
            .log_ends_of_committed(&mut pool, &map, &committed, single)
            .await?;
        for c in committed {
            let Some(g) = described.get(&c.group) else {
                continue;
            };
            let log_end = ends.get(&(c.topic.clone(), c.partition)).copied();
            let entry = out.entry(c.topic).or_default();
            let pos = match entry.iter().position(|e| e.group_id == c.group) {
                Some(i) => i,
                None => {
                    entry.push(GroupOnTopic {
                        partitions: Vec::new(),
                        ..g.clone()
                    });
                    entry.len() - 1
                }
            };
            entry[pos].partitions.push(PartitionLag {
                partition: c.partition,
                committed: c.offset,
                log_end,
                lag: log_end.map(|e| (e - c.offset).max(0)),
            });
        }
        for list in out.values_mut() {
            list.sort_by(|a, b| a.group_id.cmp(&b.group_id));
            for g in list.iter_mut() {
                g.partitions.sort_by_key(|p| p.partition);
            }
        }
        Ok(out)
    }

    /// Every consumer group of the cluster, by id, with the state and protocol type `ListGroups`
    /// gives: each broker (the bootstrap one when the metadata names none) lists those it
    /// coordinates.
    async fn every_group(
        &self,
        pool: &mut Pool,
        map: &ClusterMap,
        single: bool,
    ) -> Result<BTreeMap<String, ListedGroup>, KafkaError> {
        use kafka_protocol::messages::{ListGroupsRequest, ListGroupsResponse};
        let mut groups = BTreeMap::new();
        let addrs: Vec<String> = if map.brokers.is_empty() {
            vec![self.bootstrap.clone()]
        } else {
            map.brokers.values().cloned().collect()
        };
        for addr in &addrs {
            let conn = self.conn(pool, addr, single).await?;
            let resp: ListGroupsResponse = self
                .call(
                    conn,
                    ApiKey::ListGroups,
                    LIST_GROUPS_VERSION,
                    &ListGroupsRequest::default(),
                    ListGroupsRequest::header_version(LIST_GROUPS_VERSION),
                    ListGroupsResponse::header_version(LIST_GROUPS_VERSION),
                )
                .await?;
            if resp.error_code != NONE {
                return Err(KafkaError::Refused {
                    action: format!("Kafka broker {addr}: listing consumer groups"),
                    code: resp.error_code,
                    messages: Vec::new(),
                });
            }
            for g in resp.groups {
                groups.insert(
                    g.group_id.0.as_str().to_string(),
                    ListedGroup {
                        state: g.group_state.as_str().to_string(),
                        protocol_type: g.protocol_type.as_str().to_string(),
                    },
                );
            }
        }
        Ok(groups)
    }

    /// The offsets `group` committed on the partitions of `topic_req` (`OffsetFetch` on its
    /// coordinator, asked again while the coordinator is loading or moving: 14, 15, 16), and that
    /// coordinator's address.
    async fn committed_offsets(
        &self,
        pool: &mut Pool,
        topic_req: &[OffsetFetchRequestTopic],
        group: &str,
        single: bool,
    ) -> Result<(Vec<Committed>, String), KafkaError> {
        use kafka_protocol::messages::{GroupId, OffsetFetchRequest, OffsetFetchResponse};
        let boot = self.bootstrap.clone();
        let deadline = Instant::now() + self.timeout;
        let (of, coordinator) = loop {
            let conn = self.conn(pool, &boot, true).await?;
            let coordinator = self.coordinator(conn, group).await?;
            let conn = self.conn(pool, &coordinator, single).await?;
            let of: OffsetFetchResponse = self
                .call(
                    conn,
                    ApiKey::OffsetFetch,
                    OFFSET_FETCH_VERSION,
                    &OffsetFetchRequest::default()
                        .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
                        .with_topics(Some(topic_req.to_vec())),
                    OffsetFetchRequest::header_version(OFFSET_FETCH_VERSION),
                    OffsetFetchResponse::header_version(OFFSET_FETCH_VERSION),
                )
                .await?;
            if matches!(of.error_code, 14..=16) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            break (of, coordinator);
        };
        if of.error_code != NONE {
            return Err(KafkaError::Refused {
                action: format!("reading the offsets of consumer group {group}"),
                code: of.error_code,
                messages: Vec::new(),
            });
        }
        let mut out = Vec::new();
        for t in &of.topics {
            for p in &t.partitions {
                // -1: no offset committed for this partition.
                if p.error_code == NONE && p.committed_offset >= 0 {
                    out.push(Committed {
                        topic: t.name.0.as_str().to_string(),
                        group: group.to_string(),
                        partition: p.partition_index,
                        offset: p.committed_offset,
                    });
                }
            }
        }
        Ok((out, coordinator))
    }

    /// `group` as its coordinator describes it (`DescribeGroups`): state, protocol type and
    /// members; what `ListGroups` said when the coordinator does not know it any more.
    async fn describe_group(
        &self,
        pool: &mut Pool,
        coordinator: &str,
        group: &str,
        listed: &ListedGroup,
        single: bool,
    ) -> Result<GroupOnTopic, KafkaError> {
        use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse, GroupId};
        let conn = self.conn(pool, coordinator, single).await?;
        let dg: DescribeGroupsResponse = self
            .call(
                conn,
                ApiKey::DescribeGroups,
                DESCRIBE_GROUPS_VERSION,
                &DescribeGroupsRequest::default()
                    .with_groups(vec![GroupId(StrBytes::from_string(group.to_string()))]),
                DescribeGroupsRequest::header_version(DESCRIBE_GROUPS_VERSION),
                DescribeGroupsResponse::header_version(DESCRIBE_GROUPS_VERSION),
            )
            .await?;
        let d = dg
            .groups
            .into_iter()
            .find(|d| d.group_id.0.as_str() == group);
        let (state, protocol_type, members) = match d {
            Some(d) if d.error_code == NONE => (
                d.group_state.as_str().to_string(),
                d.protocol_type.as_str().to_string(),
                d.members.len(),
            ),
            _ => (listed.state.clone(), listed.protocol_type.clone(), 0),
        };
        Ok(GroupOnTopic {
            group_id: group.to_string(),
            state,
            protocol_type,
            members,
            partitions: Vec::new(),
        })
    }

    /// The log end offsets of the partitions in `committed`, each asked of its leader (the
    /// bootstrap broker when the metadata names none).
    async fn log_ends_of_committed(
        &self,
        pool: &mut Pool,
        map: &ClusterMap,
        committed: &[Committed],
        single: bool,
    ) -> Result<BTreeMap<(String, i32), i64>, KafkaError> {
        let wanted: BTreeSet<(String, i32)> = committed
            .iter()
            .map(|c| (c.topic.clone(), c.partition))
            .collect();
        let mut by_leader: BTreeMap<String, Vec<(String, i32)>> = BTreeMap::new();
        for (t, p) in &wanted {
            let leader = map
                .leaders
                .get(t)
                .and_then(|ps| ps.iter().find(|(i, _)| i == p))
                .and_then(|(_, l)| map.brokers.get(l).cloned())
                .unwrap_or_else(|| self.bootstrap.clone());
            by_leader.entry(leader).or_default().push((t.clone(), *p));
        }
        let mut ends = BTreeMap::new();
        for (leader, parts) in by_leader {
            let conn = self.conn(pool, &leader, single).await?;
            ends.extend(self.log_end_offsets(conn, &parts).await?);
        }
        Ok(ends)
    }

    /// `host:port` of the coordinator of consumer group `group` (`FindCoordinator` v3), waiting while
    /// the broker answers `COORDINATOR_NOT_AVAILABLE` (15, `__consumer_offsets` being created on
    /// first use) or `COORDINATOR_LOAD_IN_PROGRESS` (14), up to the timeout.
    async fn coordinator(&self, conn: &mut TcpStream, group: &str) -> Result<String, KafkaError> {
        use kafka_protocol::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
        let deadline = Instant::now() + self.timeout;
        loop {
            let fc: FindCoordinatorResponse = self
                .call(
                    conn,
                    ApiKey::FindCoordinator,
                    FIND_COORDINATOR_VERSION,
                    &FindCoordinatorRequest::default()
                        .with_key(StrBytes::from_string(group.to_string()))
                        .with_key_type(0),
                    FindCoordinatorRequest::header_version(FIND_COORDINATOR_VERSION),
                    FindCoordinatorResponse::header_version(FIND_COORDINATOR_VERSION),
                )
                .await?;
            match fc.error_code {
                NONE => return Ok(format!("{}:{}", fc.host.as_str(), fc.port)),
                14 | 15 if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                code => {
                    return Err(KafkaError::Refused {
                        action: format!("finding the coordinator of consumer group {group}"),
                        code,
                        messages: Vec::new(),
                    });
                }
            }
        }
    }

    /// The log end offsets (latest, read uncommitted) of `parts` on their leader.
    async fn log_end_offsets(
        &self,
        conn: &mut TcpStream,
        parts: &[(String, i32)],
    ) -> Result<BTreeMap<(String, i32), i64>, KafkaError> {
        use kafka_protocol::messages::list_offsets_request::{
            ListOffsetsPartition, ListOffsetsTopic,
        };
        use kafka_protocol::messages::{BrokerId, ListOffsetsRequest, ListOffsetsResponse};
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in parts {
            by_topic.entry(t).or_default().push(*p);
        }
        let req = ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_isolation_level(0)
            .with_topics(
                by_topic
                    .iter()
                    .map(|(t, ps)| {
                        ListOffsetsTopic::default()
                            .with_name(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partitions(
                                ps.iter()
                                    .map(|p| {
                                        ListOffsetsPartition::default()
                                            .with_partition_index(*p)
                                            .with_current_leader_epoch(-1)
                                            .with_timestamp(-1)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let resp: ListOffsetsResponse = self
            .call(
                conn,
                ApiKey::ListOffsets,
                LIST_OFFSETS_VERSION,
                &req,
                ListOffsetsRequest::header_version(LIST_OFFSETS_VERSION),
                ListOffsetsResponse::header_version(LIST_OFFSETS_VERSION),
            )
            .await?;
        let mut out = BTreeMap::new();
        for t in resp.topics {
            for p in t.partitions {
                if p.error_code == NONE && p.offset >= 0 {
                    out.insert((t.name.0.as_str().to_string(), p.partition_index), p.offset);
                }
            }
        }
        Ok(out)
    }

    /// Commits `offset` for `group` on partition `partition` of `topic` as a group without members
    /// (`OffsetCommit` v8, generation -1, on the group's coordinator found through the bootstrap
    /// broker): what an admin tool's offset reset writes, and what seeds a group in tests.
    ///
    /// Errors: the broker cannot be reached or refuses (the Kafka error code; 25 `UNKNOWN_MEMBER_ID`
    /// when the group has active members).
    pub async fn commit_offset(
        &self,
        group: &str,
        topic: &str,
        partition: i32,
        offset: i64,
    ) -> Result<(), KafkaError> {
        use kafka_protocol::messages::offset_commit_request::{
            OffsetCommitRequestPartition, OffsetCommitRequestTopic,
        };
        use kafka_protocol::messages::{GroupId, OffsetCommitRequest, OffsetCommitResponse};
        let req = OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_generation_id_or_member_epoch(-1)
            .with_member_id(StrBytes::from_static_str(""))
            .with_topics(vec![
                OffsetCommitRequestTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_partitions(vec![
                        OffsetCommitRequestPartition::default()
                            .with_partition_index(partition)
                            .with_committed_offset(offset)
                            .with_committed_leader_epoch(-1),
                    ]),
            ]);
        // A group's coordinator moves or is still loading on a broker just started
        // (COORDINATOR_LOAD_IN_PROGRESS 14, COORDINATOR_NOT_AVAILABLE 15, NOT_COORDINATOR 16):
        // nothing was committed, so it is found and asked again until the timeout.
        let deadline = Instant::now() + self.timeout;
        'retry: loop {
            let mut pool: BTreeMap<String, TcpStream> = BTreeMap::new();
            let boot = self.bootstrap.clone();
            let conn = self.conn(&mut pool, &boot, true).await?;
            let coordinator = self.coordinator(conn, group).await?;
            let conn = self.conn(&mut pool, &coordinator, true).await?;
            let resp: OffsetCommitResponse = self
                .call(
                    conn,
                    ApiKey::OffsetCommit,
                    OFFSET_COMMIT_VERSION,
                    &req,
                    OffsetCommitRequest::header_version(OFFSET_COMMIT_VERSION),
                    OffsetCommitResponse::header_version(OFFSET_COMMIT_VERSION),
                )
                .await?;
            for t in resp.topics {
                for p in t.partitions {
                    if matches!(p.error_code, 14..=16) && Instant::now() < deadline {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue 'retry;
                    }
                    if p.error_code != NONE {
                        return Err(KafkaError::Refused {
                            action: format!(
                                "committing offset {offset} for group {group} on {topic}[{partition}]"
                            ),
                            code: p.error_code,
                            messages: Vec::new(),
                        });
                    }
                }
            }
            return Ok(());
        }
    }

    /// Appends `values` (no key, no headers) to partition `partition` of `topic` through the
    /// bootstrap broker, which must lead it (`Produce` v8, acks all, one uncompressed record batch):
    /// fills a test topic. Returns the base offset of the batch.
    ///
    /// Errors: the broker cannot be reached or refuses (the Kafka error code; 6
    /// `NOT_LEADER_OR_FOLLOWER` when it does not lead the partition).
    pub async fn produce(
        &self,
        topic: &str,
        partition: i32,
        values: &[&[u8]],
    ) -> Result<i64, KafkaError> {
        use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
        use kafka_protocol::messages::{ProduceRequest, ProduceResponse};
        use kafka_protocol::records::{
            Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let records: Vec<Record> = values
            .iter()
            .enumerate()
            .map(|(i, v)| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: -1,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                // One batch: the encoder keeps records together while `offset - sequence` is
                // constant; the batch's base sequence is then -1 (no idempotent producer).
                sequence: i as i32 - 1,
                timestamp: now,
                key: None,
                value: Some(Bytes::copy_from_slice(v)),
                headers: Default::default(),
            })
            .collect();
        let mut batch = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut batch,
            &records,
            &RecordEncodeOptions {
                version: 2,
                compression: Compression::None,
            },
        )
        .map_err(|e| KafkaError::Encode {
            what: format!("records for {topic}"),
            message: e.to_string(),
        })?;
        let req = ProduceRequest::default()
            .with_acks(-1)
            .with_timeout_ms(self.timeout.as_millis() as i32)
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_partition_data(vec![
                        PartitionProduceData::default()
                            .with_index(partition)
                            .with_records(Some(batch.freeze())),
                    ]),
            ]);
        // A partition just created has no leader for a moment (LEADER_NOT_AVAILABLE 5,
        // NOT_LEADER_OR_FOLLOWER 6, or UNKNOWN_TOPIC_OR_PARTITION 3 before its metadata spreads):
        // the broker wrote nothing, so the same batch is sent again until the timeout.
        let deadline = Instant::now() + self.timeout;
        loop {
            let mut conn = self.connect().await?;
            let resp: ProduceResponse = self
                .call(
                    &mut conn,
                    ApiKey::Produce,
                    PRODUCE_VERSION,
                    &req,
                    ProduceRequest::header_version(PRODUCE_VERSION),
                    ProduceResponse::header_version(PRODUCE_VERSION),
                )
                .await?;
            let p = resp
                .responses
                .first()
                .and_then(|t| t.partition_responses.first())
                .ok_or_else(|| KafkaError::EmptyAnswer {
                    topic: topic.to_string(),
                })?;
            if matches!(p.error_code, 3 | 5 | 6) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            if p.error_code != NONE {
                return Err(KafkaError::Refused {
                    action: format!("producing to {topic}[{partition}]"),
                    code: p.error_code,
                    messages: p
                        .error_message
                        .iter()
                        .chain(
                            p.record_errors
                                .iter()
                                .filter_map(|e| e.batch_index_error_message.as_ref()),
                        )
                        .map(|m| m.to_string())
                        .collect(),
                });
            }
            return Ok(p.base_offset);
        }
    }
}
