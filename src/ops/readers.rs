//! Who still reads blue: for each blue table of the blue-green releases still open in this
//! environment (`pipelines/blue_green.json`), the statements on the target that read it and are not
//! the project's, and the Kafka consumer groups with committed offsets on its topic. `pipeline
//! status` and `pipeline release-check` list them; `pipeline decommission` refuses to stop or delete
//! a blue statement whose table still has a [`Blocker`] (issue #25).
//!
//! - **Statements.** A live statement is the project's when a table of the tree owns it, or when it
//!   is a blue statement of an open release (decommissioned with the others), or one of its own
//!   bounded queries (`<prefix>-query-…`, [`super::query::query_name`]); a statement that ended
//!   (COMPLETED, FAILED) or is being deleted reads nothing any more (and on the SQL Gateway the
//!   JobManager's history of ended jobs is not read). Every other one —
//!   another statement prefix, another team, a leftover under the prefix — is a reader when it reads
//!   the blue table. On Confluent Cloud what it reads comes from its SQL text (`spec.statement` of the
//!   statements list, parsed with [`crate::sql::analyze`]); on the SQL Gateway a job that is not the
//!   project's has no SQL text and its table names are its own session's (another project's
//!   `orders` may be another topic), so it is a reader when its Kafka sources read the blue table's
//!   topic ([`crate::target::Target::statement_topics`]: the sources' gauges); only a job whose
//!   sources report no topic yet is matched by its job plan ([`crate::target::Target::statement_reads`]:
//!   the `TableSourceScan`/`LookupJoin` nodes, a doubt that blocks). On Confluent Cloud a table is
//!   matched by the last part of its name: a reader that declares the blue topic under another table
//!   name is not seen as a statement (its consumer group may be). A statement blocks while its phase is PENDING, RUNNING or DEGRADED.
//! - **Consumer groups.** The blue table's topic is the green table's `'topic'` moved back (a
//!   blue-green moves a topic that is the table's name with it, [`crate::sql::rewrite`]; a topic it
//!   kept is shared), or on Confluent Cloud the blue table's name. On the SQL Gateway the groups come
//!   from the Kafka the table names (`'properties.bootstrap.servers'`, else the test broker
//!   [`super::unit_tests::bootstrap`]) over the Kafka protocol ([`crate::target::kafka::KafkaAdmin::consumer_groups_of`]);
//!   on Confluent Cloud from the Kafka REST API v3 ([`crate::target::kafka_rest::consumer_groups_of`],
//!   the Kafka API key `SL_KAFKA_API_KEY`/`SL_KAFKA_API_SECRET`; without it the groups are not
//!   checked, and the report says so). A group blocks while it has members. A group without members
//!   does not: it only holds committed offsets — which is also how a Flink job's Kafka source shows
//!   (it assigns partitions itself and commits its offsets under `properties.group.id` on each
//!   checkpoint, <https://nightlies.apache.org/flink/flink-docs-stable/docs/connectors/table/kafka/>),
//!   so a Flink reader on another cluster is listed with 0 members and its lag, for a person to judge.

use super::status::blue_green_statements;
use super::target::{Connected, TargetKind};
use crate::config::{Config, ConfigError, process_env};
use crate::plan::StatementNaming;
use crate::project::Project;
use crate::target::{Phase, StatementState};
use crate::versioning::record::BlueGreenRecord;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How a reading statement was found to read the blue table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundIn {
    /// Its SQL text names the table as a source (Confluent Cloud).
    SqlText,
    /// Its job plan scans the table (SQL Gateway, a job whose sources report no topic).
    JobPlan,
    /// Its Kafka sources read the table's topic (SQL Gateway: the sources' gauges).
    SourceTopics,
}

/// A statement on the target, not the project's, that reads a blue table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadingStatement {
    pub statement: String,
    /// Its phase now.
    pub phase: Phase,
    pub found_in: FoundIn,
}

impl ReadingStatement {
    /// Whether it still runs (PENDING, RUNNING, DEGRADED): it blocks a decommission.
    pub fn running(&self) -> bool {
        matches!(
            self.phase,
            Phase::Pending | Phase::Running | Phase::Degraded
        )
    }
}

/// A Kafka consumer group with committed offsets on a blue table's topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadingGroup {
    pub group_id: String,
    /// The group's state as the cluster names it (`Stable`, `Empty` over the Kafka protocol;
    /// `STABLE`, `EMPTY` through the REST API).
    pub state: String,
    /// Members (consumers) now in the group.
    pub members: usize,
    /// Records behind: the sum over the topic's partitions of log end offset − committed offset;
    /// `None` when the cluster does not tell (Confluent Cloud serves lags on dedicated clusters only).
    pub lag: Option<i64>,
    /// Partitions of the topic the group has an offset (or an assignment) on.
    pub partitions: usize,
}

/// What still reads one blue table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableReaders {
    pub blue_table_name: String,
    pub green_table_name: String,
    /// The blue table's Kafka topic; `None`: not a Kafka table (no consumer groups to look for).
    pub topic: Option<String>,
    /// The Kafka cluster of the topic: `host:port` of a broker, or the REST endpoint.
    pub cluster: Option<String>,
    /// Statements not the project's that read it, by name.
    pub statements: Vec<ReadingStatement>,
    /// Consumer groups with committed offsets on its topic, by id.
    pub consumer_groups: Vec<ReadingGroup>,
}

/// A reader that keeps a blue statement from being stopped or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Blocker {
    /// A statement not the project's, still running, reads the blue table.
    RunningStatement {
        table: String,
        statement: String,
        phase: Phase,
    },
    /// A consumer group with members has committed offsets on the blue table's topic.
    ActiveGroup {
        table: String,
        topic: String,
        group_id: String,
        members: usize,
        lag: Option<i64>,
    },
}

impl std::fmt::Display for Blocker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blocker::RunningStatement {
                table,
                statement,
                phase,
            } => write!(f, "statement {statement} ({phase}) reads {table}"),
            Blocker::ActiveGroup {
                topic,
                group_id,
                members,
                lag,
                ..
            } => write!(
                f,
                "consumer group {group_id} ({members} member(s), lag {}) reads topic {topic}",
                lag.map_or("unknown".to_string(), |l| l.to_string())
            ),
        }
    }
}

impl TableReaders {
    /// What keeps the blue table's statements from going: running statements and groups with
    /// members (see the module docs).
    pub fn blockers(&self) -> Vec<Blocker> {
        let mut out: Vec<Blocker> = self
            .statements
            .iter()
            .filter(|s| s.running())
            .map(|s| Blocker::RunningStatement {
                table: self.blue_table_name.clone(),
                statement: s.statement.clone(),
                phase: s.phase.clone(),
            })
            .collect();
        if let Some(topic) = &self.topic {
            out.extend(
                self.consumer_groups
                    .iter()
                    .filter(|g| g.members > 0)
                    .map(|g| Blocker::ActiveGroup {
                        table: self.blue_table_name.clone(),
                        topic: topic.clone(),
                        group_id: g.group_id.clone(),
                        members: g.members,
                        lag: g.lag,
                    }),
            );
        }
        out
    }
}

/// How the consumer groups were read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GroupCheck {
    /// Over the Kafka protocol, from these brokers.
    Broker { bootstraps: Vec<String> },
    /// Through the Kafka REST API v3 of Confluent Cloud.
    KafkaRest { url: String, cluster_id: String },
    /// No blue table has a Kafka topic, or there is no open release.
    #[default]
    Nothing,
    /// Not read: the Kafka REST settings or the Kafka API key are missing (named).
    NotChecked { reason: String },
    /// Reading failed (the error, secrets masked).
    Failed { error: String },
}

/// The readers of every blue table of the open releases.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReadersReport {
    /// One per blue table, in release order.
    pub tables: Vec<TableReaders>,
    pub consumer_groups: GroupCheck,
    /// Statements whose reads could not be told (the SQL Gateway could not read a job plan), with
    /// the error.
    pub unknown_statements: Vec<(String, String)>,
}

impl ReadersReport {
    /// Every blocker, over every table.
    pub fn blockers(&self) -> Vec<Blocker> {
        self.tables
            .iter()
            .flat_map(TableReaders::blockers)
            .collect()
    }

    /// The readers of a blue table.
    pub fn of(&self, blue_table: &str) -> Option<&TableReaders> {
        self.tables.iter().find(|t| t.blue_table_name == blue_table)
    }
}

/// The readers of the blue tables of every release of `record` still open for `naming`'s prefix.
/// `live` is the target's statement list (one listing, read by the caller).
///
/// Never fails as a whole: consumer groups that cannot be read are [`GroupCheck::Failed`] or
/// [`GroupCheck::NotChecked`], statements whose job plan cannot be read are in
/// [`ReadersReport::unknown_statements`]; callers decide what that means (`decommission` refuses).
pub async fn blue_readers(
    cfg: &Config,
    project: &Project,
    record: &BlueGreenRecord,
    naming: &StatementNaming,
    c: &Connected,
    live: &BTreeMap<String, StatementState>,
) -> ReadersReport {
    let open: Vec<_> = record
        .releases
        .iter()
        .filter(|r| !r.decommissioned_in(&naming.prefix))
        .collect();
    let mut tables: Vec<TableReaders> = Vec::new();
    let mut blue_statements: BTreeSet<String> = BTreeSet::new();
    for release in &open {
        for t in &release.tables {
            for (b, _) in blue_green_statements(naming, &release.statement_prefix, t) {
                blue_statements.insert(b.name);
            }
            if tables
                .iter()
                .any(|x| x.blue_table_name == t.blue_table_name)
            {
                continue;
            }
            let (topic, cluster) =
                blue_topic(project, c.kind, &t.blue_table_name, &t.green_table_name);
            tables.push(TableReaders {
                blue_table_name: t.blue_table_name.clone(),
                green_table_name: t.green_table_name.clone(),
                topic,
                cluster,
                statements: Vec::new(),
                consumer_groups: Vec::new(),
            });
        }
    }
    let mut report = ReadersReport {
        tables,
        consumer_groups: GroupCheck::Nothing,
        unknown_statements: Vec::new(),
    };
    if report.tables.is_empty() {
        return report;
    }
    // Statements: every live one that is not the project's.
    let owned = naming.owned_statements(project);
    let own_queries = format!("{}-query-", naming.prefix);
    for s in live.values() {
        if owned.contains_key(&s.name)
            || blue_statements.contains(&s.name)
            || s.name.starts_with(&own_queries)
            || matches!(s.phase, Phase::Deleting | Phase::Completed | Phase::Failed)
        {
            continue;
        }
        // On the SQL Gateway the topics a job's Kafka sources read decide: table names are the
        // job's own session's, and another project's `orders` may be another topic. Its job plan's
        // table names serve only while its sources report no topic.
        let read = match c.kind {
            TargetKind::ConfluentCloud => {
                Ok((Reads::Tables(sql_sources(&s.sql)), FoundIn::SqlText))
            }
            TargetKind::SqlGateway => match c.target.statement_topics(&s.name).await {
                Ok(Some(topics)) => Ok((Reads::Topics(topics), FoundIn::SourceTopics)),
                Ok(None) => c.target.statement_reads(&s.name).await.map(|r| match r {
                    Some(tables) => (Reads::Tables(tables), FoundIn::JobPlan),
                    None => (Reads::Tables(sql_sources(&s.sql)), FoundIn::SqlText),
                }),
                Err(e) => Err(e),
            },
        };
        let (reads, found_in) = match read {
            Ok(r) => r,
            Err(e) => {
                report
                    .unknown_statements
                    .push((s.name.clone(), c.scrubber.scrub(&e.to_string())));
                continue;
            }
        };
        for t in &mut report.tables {
            let reads_it = match &reads {
                Reads::Topics(topics) => t.topic.as_ref().is_some_and(|x| topics.contains(x)),
                Reads::Tables(tables) => tables
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(&t.blue_table_name)),
            };
            if reads_it {
                t.statements.push(ReadingStatement {
                    statement: s.name.clone(),
                    phase: s.phase.clone(),
                    found_in,
                });
            }
        }
    }
    report.consumer_groups = consumer_groups(cfg, c, &mut report.tables).await;
    report
}

/// What a statement reads, as the target can tell: the topics of its Kafka sources, or table names
/// (last part).
enum Reads {
    Topics(Vec<String>),
    Tables(Vec<String>),
}

/// The table names (last part) a statement's SQL reads.
fn sql_sources(sql: &str) -> Vec<String> {
    crate::sql::analyze(sql)
        .statements
        .iter()
        .flat_map(|st| {
            st.sources
                .iter()
                .chain(st.members.iter().flat_map(|m| m.sources.iter()))
        })
        .map(|r| r.name.table().to_string())
        .collect()
}

/// The blue table's topic and the cluster its DDL names: the green table's storage moved back (see
/// the module docs); on Confluent Cloud the blue name. `(None, None)`: not a Kafka table.
fn blue_topic(
    project: &Project,
    kind: TargetKind,
    blue: &str,
    green: &str,
) -> (Option<String>, Option<String>) {
    use crate::inventory::writers::{Storage, storage_of};
    let options = project
        .inventory
        .tables
        .get(green)
        .and_then(|t| t.ddl_ref.as_ref())
        .and_then(|rel| {
            let text = crate::fsutil::read_user_text(
                &project.inventory.disk_path(rel),
                crate::fsutil::MAX_SQL_FILE_BYTES,
            )
            .ok()?;
            crate::sql::analyze(&text)
                .statements
                .into_iter()
                .find(|s| {
                    s.kind.creates_relation()
                        && s.sinks
                            .first()
                            .is_some_and(|k| k.name.table().eq_ignore_ascii_case(green))
                })
                .map(|s| s.with_options)
        });
    let storage = match options {
        Some(opts) => storage_of(green, &opts),
        // A green table whose DDL cannot be read: on Confluent Cloud still the topic of its name.
        None if kind == TargetKind::ConfluentCloud => Some(Storage::Topic {
            cluster: String::new(),
            topic: green.to_string(),
        }),
        None => None,
    };
    match storage {
        Some(Storage::Topic { cluster, topic }) => {
            let topic = if topic == green {
                blue.to_string()
            } else {
                topic
            };
            // On Confluent Cloud the cluster is the configured one (its REST endpoint, once read).
            let cluster =
                (kind == TargetKind::SqlGateway && !cluster.is_empty()).then_some(cluster);
            (Some(topic), cluster)
        }
        _ => (None, None),
    }
}

/// A Kafka admin client for `bootstrap`, 10 s per request: a status must not hang on an unreachable
/// broker.
fn admin_for(bootstrap: &str) -> crate::target::kafka::KafkaAdmin {
    let mut admin = crate::target::kafka::KafkaAdmin::new(bootstrap);
    admin.timeout = std::time::Duration::from_secs(10);
    admin
}

/// Fills each table's consumer groups from its cluster.
async fn consumer_groups(cfg: &Config, c: &Connected, tables: &mut [TableReaders]) -> GroupCheck {
    if tables.iter().all(|t| t.topic.is_none()) {
        return GroupCheck::Nothing;
    }
    match c.kind {
        TargetKind::SqlGateway => {
            let fallback = super::unit_tests::bootstrap(cfg);
            let mut by_cluster: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for t in tables.iter_mut() {
                if let Some(topic) = &t.topic {
                    let cluster = t.cluster.clone().unwrap_or_else(|| fallback.clone());
                    let admin = admin_for(&cluster);
                    t.cluster = Some(admin.bootstrap.clone());
                    by_cluster
                        .entry(admin.bootstrap)
                        .or_default()
                        .push(topic.clone());
                }
            }
            for (cluster, topics) in &by_cluster {
                let admin = admin_for(cluster);
                match admin.consumer_groups_of(topics).await {
                    Ok(found) => {
                        for t in tables
                            .iter_mut()
                            .filter(|t| t.cluster.as_deref() == Some(cluster))
                        {
                            let Some(groups) = t.topic.as_ref().and_then(|x| found.get(x)) else {
                                continue;
                            };
                            t.consumer_groups = groups
                                .iter()
                                .map(|g| ReadingGroup {
                                    group_id: g.group_id.clone(),
                                    state: g.state.clone(),
                                    members: g.members,
                                    lag: g.lag(),
                                    partitions: g.partitions.len(),
                                })
                                .collect();
                        }
                    }
                    Err(e) => {
                        return GroupCheck::Failed {
                            error: c.scrubber.scrub(&e.to_string()),
                        };
                    }
                }
            }
            GroupCheck::Broker {
                bootstraps: by_cluster.into_keys().collect(),
            }
        }
        TargetKind::ConfluentCloud => {
            let s = match crate::target::kafka_rest::settings_for(
                cfg,
                &process_env,
                "read the consumer groups of the blue topics (the Kafka REST API, a Kafka API key)",
            ) {
                Ok(s) => s,
                Err(e @ ConfigError::Missing { .. }) => {
                    return GroupCheck::NotChecked {
                        reason: e.to_string(),
                    };
                }
                Err(e) => {
                    return GroupCheck::Failed {
                        error: e.to_string(),
                    };
                }
            };
            let topics: Vec<String> = tables.iter().filter_map(|t| t.topic.clone()).collect();
            match crate::target::kafka_rest::consumer_groups_of(&s, &topics).await {
                Ok(found) => {
                    for t in tables.iter_mut() {
                        let Some(topic) = &t.topic else {
                            continue;
                        };
                        t.cluster = Some(s.url.clone());
                        t.consumer_groups = found
                            .get(topic)
                            .into_iter()
                            .flatten()
                            .map(|g| ReadingGroup {
                                group_id: g.consumer_group_id.clone(),
                                state: g.state.clone(),
                                members: g.members,
                                lag: g.lag,
                                partitions: g.partitions.len(),
                            })
                            .collect();
                    }
                    GroupCheck::KafkaRest {
                        url: s.url,
                        cluster_id: s.cluster_id,
                    }
                }
                Err(e) => GroupCheck::Failed {
                    error: c.scrubber.scrub(&e.to_string()),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(statements: Vec<ReadingStatement>, groups: Vec<ReadingGroup>) -> TableReaders {
        TableReaders {
            blue_table_name: "int_x".into(),
            green_table_name: "int_x_v2".into(),
            topic: Some("int_x".into()),
            cluster: Some("localhost:9092".into()),
            statements,
            consumer_groups: groups,
        }
    }

    fn group(id: &str, members: usize) -> ReadingGroup {
        ReadingGroup {
            group_id: id.into(),
            state: if members > 0 { "Stable" } else { "Empty" }.into(),
            members,
            lag: Some(3),
            partitions: 1,
        }
    }

    #[test]
    fn running_statements_and_groups_with_members_block_others_do_not() {
        let t = table(
            vec![
                ReadingStatement {
                    statement: "team-b-dml-report".into(),
                    phase: Phase::Running,
                    found_in: FoundIn::SqlText,
                },
                ReadingStatement {
                    statement: "team-b-dml-old".into(),
                    phase: Phase::Stopped,
                    found_in: FoundIn::SqlText,
                },
            ],
            vec![group("billing", 2), group("flink-reader", 0)],
        );
        let b = t.blockers();
        assert_eq!(
            b,
            vec![
                Blocker::RunningStatement {
                    table: "int_x".into(),
                    statement: "team-b-dml-report".into(),
                    phase: Phase::Running,
                },
                Blocker::ActiveGroup {
                    table: "int_x".into(),
                    topic: "int_x".into(),
                    group_id: "billing".into(),
                    members: 2,
                    lag: Some(3),
                },
            ]
        );
        assert_eq!(
            b[1].to_string(),
            "consumer group billing (2 member(s), lag 3) reads topic int_x"
        );
        assert!(table(vec![], vec![group("g", 0)]).blockers().is_empty());
    }

    #[test]
    fn sources_of_statement_sets_and_joins_are_read_from_the_sql() {
        let sql = "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM `cat`.`db`.`int_x`; INSERT INTO b SELECT o.id FROM orders o JOIN dim_y FOR SYSTEM_TIME AS OF o.ts d ON o.id = d.id; END";
        let mut got = sql_sources(sql);
        got.sort();
        got.dedup();
        assert_eq!(got, vec!["dim_y", "int_x", "orders"]);
    }
}
