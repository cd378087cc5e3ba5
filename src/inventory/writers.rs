//! One writer per table: no table, and no storage location, is written by two statements.
//!
//! Two running jobs that write one table interleave their rows in its topic (or file, JDBC table,
//! index): downstream aggregates double, upserts of one job overwrite the other's. It is what a
//! blue-green release of a statement set did when the green statement still wrote a blue sink. This
//! module finds such collisions in a set of [`Write`]s, wherever they come from: the statements of the
//! tree (`pipeline validate`), blue ∪ green after a versioning (`pipeline blue-green`), or the statements
//! that will run once a deploy is done (the live ones it keeps plus the ones it sends).
//!
//! Storage ([`Storage`]) follows the rules blue-green uses to move a table's location
//! ([`crate::sql::rewrite`]): a Kafka `topic`, a filesystem `path`, a JDBC `table-name` (with its `url`),
//! an Elasticsearch/OpenSearch `index` (with its `hosts`); a table without a `connector` option is a
//! Confluent Cloud table, which *is* its topic
//! (<https://docs.confluent.io/cloud/current/flink/concepts/overview.html>). Connectors without a
//! location of their own (`print`, `blackhole`, `datagen`, …) collide by table name only.
//!
//! Tables listed in `flinkpipe.multi_writer_tables` are deliberately fed by several statements and
//! accepted. Pure: no I/O.

use super::{Table, resolve_name};
use crate::config::Config;
use crate::sql::{FileAnalysis, StatementKind};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Where a table's rows are stored, as far as two writers can collide there.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Storage {
    /// A Kafka topic of a cluster: `'topic'` of the `kafka`/`upsert-kafka` connectors on the
    /// `'properties.bootstrap.servers'` they name; a Confluent Cloud table's own name in its database
    /// (the Kafka cluster; empty: the configured one).
    Topic { cluster: String, topic: String },
    /// A filesystem location (`'path'`, trailing `/` removed).
    Path(String),
    /// A JDBC table (`'url'`, `'table-name'`).
    JdbcTable { url: String, table: String },
    /// An Elasticsearch/OpenSearch index (`'hosts'`, `'index'`).
    Index { hosts: String, index: String },
}

impl fmt::Display for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Storage::Topic { cluster, topic } if cluster.is_empty() => write!(f, "topic '{topic}'"),
            Storage::Topic { cluster, topic } => write!(f, "topic '{topic}' of {cluster}"),
            Storage::Path(p) => write!(f, "path '{p}'"),
            Storage::JdbcTable { url, table } => write!(f, "JDBC table '{table}' of {url}"),
            Storage::Index { hosts, index } => write!(f, "index '{index}' on {hosts}"),
        }
    }
}

/// The storage of table `name` declared with `with_options` (keys and values unquoted), or `None` for a
/// connector without a location of its own (or a Kafka source over several topics).
pub fn storage_of(name: &str, with_options: &[(String, String)]) -> Option<Storage> {
    let opt = |k: &str| {
        with_options
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.trim().to_string())
    };
    let Some(connector) = opt("connector") else {
        // A Confluent Cloud table is its topic in its database (the Kafka cluster); its name may be
        // qualified (`env.cluster.t`).
        let mut parts = crate::sql::TableName::from_key(name).parts;
        let topic = parts.pop().unwrap_or_default();
        let cluster = if parts.is_empty() {
            String::new()
        } else {
            crate::sql::TableName::new(parts).key()
        };
        return Some(Storage::Topic { cluster, topic });
    };
    match connector.as_str() {
        "kafka" | "upsert-kafka" => opt("topic")
            .filter(|t| !t.is_empty() && !t.contains(';'))
            .map(|topic| Storage::Topic {
                cluster: opt("properties.bootstrap.servers").unwrap_or_default(),
                topic,
            }),
        "filesystem" => opt("path").map(|p| Storage::Path(p.trim_end_matches('/').to_string())),
        "jdbc" => Some(Storage::JdbcTable {
            url: opt("url").unwrap_or_default(),
            table: opt("table-name").unwrap_or_else(|| name.to_string()),
        }),
        c if c.starts_with("elasticsearch") || c.starts_with("opensearch") => {
            opt("index").map(|index| Storage::Index {
                hosts: opt("hosts").unwrap_or_default(),
                index,
            })
        }
        _ => None,
    }
}

/// One statement writing one table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Write {
    /// The statement (its name on the target, `…-dml-<table>`).
    pub statement: String,
    /// The table written (inventory name).
    pub table: String,
    /// Where its rows go, when known.
    pub storage: Option<Storage>,
    /// Where the write is written: `pipelines/…/dml.t.sql:12` for a file of the tree, or what else
    /// says it (`the running statement X, line 3 of its SQL`).
    pub at: String,
}

/// What two or more statements would write at once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Collision {
    /// The same table.
    Table(String),
    /// The same storage, through different tables.
    Storage(Storage),
}

/// A table or storage written by more than one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// What is written twice.
    pub on: Collision,
    /// One write per statement (sorted by statement), at least two.
    pub writes: Vec<Write>,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who: Vec<String> = self
            .writes
            .iter()
            .map(|w| match &self.on {
                Collision::Table(_) => format!("{} ({})", w.statement, w.at),
                Collision::Storage(_) => format!("{} into {} ({})", w.statement, w.table, w.at),
            })
            .collect();
        match &self.on {
            Collision::Table(t) => write!(
                f,
                "table '{t}' would be written by {} statements: {}",
                self.writes.len(),
                who.join(" and ")
            ),
            Collision::Storage(s) => write!(
                f,
                "{s} would be written by {} statements: {}",
                self.writes.len(),
                who.join(" and ")
            ),
        }
    }
}

/// The collisions among `writes`: every table, then every storage, written by two or more distinct
/// statements, in name order. A table of `allowed` (and a storage all of whose writers write tables
/// of `allowed`) is accepted. A storage collision whose tables already collide by name is not reported
/// twice.
pub fn conflicts(writes: &[Write], allowed: &BTreeSet<String>) -> Vec<Conflict> {
    let mut by_table: BTreeMap<&str, BTreeMap<&str, &Write>> = BTreeMap::new();
    let mut by_storage: BTreeMap<&Storage, BTreeMap<&str, &Write>> = BTreeMap::new();
    for w in writes {
        by_table
            .entry(w.table.as_str())
            .or_default()
            .entry(w.statement.as_str())
            .or_insert(w);
        if let Some(s) = &w.storage {
            by_storage
                .entry(s)
                .or_default()
                .entry(w.statement.as_str())
                .or_insert(w);
        }
    }
    let mut out = Vec::new();
    let mut reported: BTreeSet<BTreeSet<&str>> = BTreeSet::new();
    for (table, ws) in by_table {
        if ws.len() > 1 && !is_allowed(allowed, table) {
            reported.insert(ws.keys().copied().collect());
            out.push(Conflict {
                on: Collision::Table(table.to_string()),
                writes: ws.into_values().cloned().collect(),
            });
        }
    }
    for (storage, ws) in by_storage {
        if ws.len() < 2 || ws.values().all(|w| is_allowed(allowed, &w.table)) {
            continue;
        }
        let tables: BTreeSet<&str> = ws.values().map(|w| w.table.as_str()).collect();
        if tables.len() == 1 && reported.contains(&ws.keys().copied().collect()) {
            continue;
        }
        out.push(Conflict {
            on: Collision::Storage(storage.clone()),
            writes: ws.into_values().cloned().collect(),
        });
    }
    out
}

/// Whether `table` is listed in `allowed` (`flinkpipe.multi_writer_tables`), itself or as the table it
/// is a blue-green version of (`t_v2` is allowed when `t` is).
pub fn is_allowed(allowed: &BTreeSet<String>, table: &str) -> bool {
    allowed.contains(table) || {
        let (base, version) = crate::sql::text::split_version(table);
        version.is_some() && allowed.contains(base)
    }
}

/// The tables of `config.flinkpipe.multi_writer_tables`.
pub fn allowed(config: &Config) -> BTreeSet<String> {
    config
        .flinkpipe
        .multi_writer_tables
        .iter()
        .cloned()
        .collect()
}

/// The storage of every table of the inventory (`Inventory::tables`) that has one.
pub fn inventory_storage(tables: &BTreeMap<String, Table>) -> BTreeMap<String, Storage> {
    tables
        .values()
        .filter_map(|t| {
            let declared = t.ddl_ref.is_some() || t.external;
            if !declared {
                return None;
            }
            let storage = if t.external && t.with_options.is_empty() {
                t.kafka_topic.clone().map(|topic| Storage::Topic {
                    cluster: String::new(),
                    topic,
                })
            } else {
                storage_of(&t.name, &t.with_options)
            };
            storage.map(|s| (t.name.clone(), s))
        })
        .collect()
}

/// Every write of the statements of the tree: each DML (all its INSERTs, statement-set members
/// included) and each CTAS / materialized table. `name(table, is_dml)` names the statement owned by a
/// table (as it is deployed, `…-dml-t`, or as the tree says it, `the DML of t`).
pub fn tree_writes(
    tables: &BTreeMap<String, Table>,
    name: impl Fn(&Table, bool) -> String,
) -> Vec<Write> {
    let storage = inventory_storage(tables);
    let mut out = Vec::new();
    for t in tables.values().filter(|t| !t.external) {
        let (statement, file) = if t.written_by.is_some() {
            continue;
        } else if let Some(dml) = &t.dml_ref {
            (name(t, true), dml)
        } else if let (
            Some(StatementKind::Ctas | StatementKind::CreateMaterializedTable),
            Some(ddl),
        ) = (t.ddl_kind, &t.ddl_ref)
        {
            (name(t, false), ddl)
        } else {
            continue;
        };
        let own_at = match t.sink_at {
            Some((line, _)) => format!("{file}:{line}"),
            None => file.clone(),
        };
        out.push(Write {
            statement: statement.clone(),
            table: t.name.clone(),
            storage: storage.get(&t.name).cloned(),
            at: own_at,
        });
        for m in &t.set_member_writes {
            out.push(Write {
                statement: statement.clone(),
                table: m.sink.clone(),
                storage: storage.get(&m.sink).cloned(),
                at: format!("{}:{}", m.file, m.line),
            });
        }
        for s in &t.extra_sinks {
            if !t.set_member_writes.iter().any(|m| &m.sink == s) {
                out.push(Write {
                    statement: statement.clone(),
                    table: s.clone(),
                    storage: storage.get(s).cloned(),
                    at: file.clone(),
                });
            }
        }
    }
    out
}

/// The writes of one statement's SQL (`statement` is its name): every sink of its INSERTs and
/// statement sets, and the table a CTAS or materialized table creates. Names are resolved as the
/// inventory resolves them; the storage of a sink comes from `storage` (by resolved name), else from a
/// `CREATE` of the same SQL. `at` says where the SQL is (a file, `the running statement X`); the line of
/// each sink is added to it.
pub fn sql_writes(
    statement: &str,
    sql: &FileAnalysis,
    config: &Config,
    storage: &BTreeMap<String, Storage>,
    at: &str,
) -> Vec<Write> {
    sql_writes_at(statement, sql, config, storage, |line| {
        format!("{at}:{line}")
    })
}

/// [`sql_writes`] with `at(line)` saying where each sink is written.
pub fn sql_writes_at(
    statement: &str,
    sql: &FileAnalysis,
    config: &Config,
    storage: &BTreeMap<String, Storage>,
    at: impl Fn(usize) -> String,
) -> Vec<Write> {
    let created = created_storage(sql, config);
    let mut out = Vec::new();
    for st in &sql.statements {
        let writes = matches!(
            st.kind,
            StatementKind::Insert
                | StatementKind::StatementSet
                | StatementKind::Ctas
                | StatementKind::CreateMaterializedTable
        ) || (st.fallback && !st.sinks.is_empty() && !st.kind.creates_relation());
        if !writes || st.temporary {
            continue;
        }
        for sink in &st.sinks {
            let table = resolve_name(&sink.name, config);
            let line = sink.span.map_or(st.line, |s| s.start.line);
            out.push(Write {
                statement: statement.to_string(),
                storage: storage.get(&table).or_else(|| created.get(&table)).cloned(),
                table,
                at: at(line),
            });
        }
    }
    out.sort();
    out.dedup_by(|b, a| a.statement == b.statement && a.table == b.table);
    out
}

/// The catalog and database the project's statements run in, the frame in which the one-writer
/// check compares the tables written by every running statement of an environment — the project's
/// and any other (another prefix, another team) — with those of the tree.
///
/// A name is compared as Flink resolves it: `[catalog, database, table]`
/// ([`super::qualified`]), the missing qualifiers taken from the statement's
/// `sql.current-catalog` / `sql.current-database` properties, else from the target's defaults;
/// parts compare exactly (backquotes are not part of an identifier; `` `x.y` `` is one identifier,
/// not `x`.`y`). Where the project's own catalog (or database) is unknown, every statement's
/// catalog (or database) counts as the project's: an unknown qualifier matches any, so a doubt
/// refuses rather than lets a second writer start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The project's catalog (`flink.catalog_name`, else the target's default); `None`: unknown.
    pub catalog: Option<String>,
    /// The project's database (`flink.database_name`, else the target's default); `None`: unknown.
    pub database: Option<String>,
}

impl Frame {
    /// The frame of `config` on a target whose defaults are `default` (`(catalog, database)`,
    /// [`crate::target::Target::default_namespace`]).
    pub fn new(config: &Config, default: (Option<String>, Option<String>)) -> Frame {
        Frame {
            catalog: config.flink.catalog_name.clone().or(default.0),
            database: config.flink.database_name.clone().or(default.1),
        }
    }

    /// The key of the table `name` written by a statement whose current catalog and database are
    /// `catalog` / `database` (`None`: the project's).
    pub fn key_of(
        &self,
        name: &crate::sql::TableName,
        catalog: Option<&str>,
        database: Option<&str>,
    ) -> String {
        let mut q = super::qualified(
            name,
            catalog.or(self.catalog.as_deref()),
            database.or(self.database.as_deref()),
        );
        if q.parts.len() == 3 {
            if self.catalog.is_none() {
                q.parts[0].clear();
            }
            if self.database.is_none() {
                q.parts[1].clear();
            }
        }
        q.key()
    }

    /// The key of an inventory name (resolved against the project's catalog and database,
    /// [`super::resolve_name`]).
    pub fn key_of_inventory(&self, table: &str) -> String {
        self.key_of(&crate::sql::TableName::from_key(table), None, None)
    }

    /// A key as the project writes it: without the project's own catalog and database.
    pub fn display(&self, key: &str) -> String {
        let q = crate::sql::TableName::from_key(key);
        let cat = self.catalog.as_deref().unwrap_or_default();
        let db = self.database.as_deref().unwrap_or_default();
        match q.parts.as_slice() {
            [c, d, t] if c == cat && d == db => crate::sql::key_part(t),
            [c, d, t] if c == cat => crate::sql::TableName::new([d.clone(), t.clone()]).key(),
            _ => key.to_string(),
        }
    }
}

/// The writes of a running statement's SQL in `frame` (every sink of its INSERTs and statement
/// sets, the table of a CTAS or materialized table), each `table` a [`Frame::key_of`] under the
/// statement's `properties` (`sql.current-catalog`, `sql.current-database`); the storage of a sink
/// comes from `storage` (by inventory name) when it is one of the project's names.
pub fn running_writes(
    statement: &str,
    sql: &FileAnalysis,
    properties: &BTreeMap<String, String>,
    frame: &Frame,
    config: &Config,
    storage: &BTreeMap<String, Storage>,
) -> Vec<Write> {
    let catalog = properties.get("sql.current-catalog").map(String::as_str);
    let database = properties.get("sql.current-database").map(String::as_str);
    let mut out = Vec::new();
    for st in &sql.statements {
        let writes = matches!(
            st.kind,
            StatementKind::Insert
                | StatementKind::StatementSet
                | StatementKind::Ctas
                | StatementKind::CreateMaterializedTable
        ) || (st.fallback && !st.sinks.is_empty() && !st.kind.creates_relation());
        if !writes || st.temporary {
            continue;
        }
        for sink in &st.sinks {
            let key = frame.key_of(&sink.name, catalog, database);
            let ours = resolve_name(
                &crate::sql::TableName::from_key(&frame.display(&key)),
                config,
            );
            let line = sink.span.map_or(st.line, |s| s.start.line);
            out.push(Write {
                statement: statement.to_string(),
                storage: storage.get(&ours).cloned(),
                table: key,
                at: format!("running on the target, line {line} of its SQL"),
            });
        }
    }
    out.sort();
    out.dedup_by(|b, a| a.statement == b.statement && a.table == b.table);
    out
}

/// The storage of every table a SQL text creates (`CREATE TABLE`, CTAS, materialized table), by
/// resolved name.
pub fn created_storage(sql: &FileAnalysis, config: &Config) -> BTreeMap<String, Storage> {
    let mut out = BTreeMap::new();
    for st in &sql.statements {
        if !matches!(
            st.kind,
            StatementKind::CreateTable
                | StatementKind::Ctas
                | StatementKind::CreateMaterializedTable
        ) || st.temporary
        {
            continue;
        }
        if let Some(sink) = st.sinks.first() {
            let name = resolve_name(&sink.name, config);
            if let Some(s) = storage_of(&name, &st.with_options) {
                out.insert(name, s);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(statement: &str, table: &str, topic: Option<&str>) -> Write {
        Write {
            statement: statement.into(),
            table: table.into(),
            storage: topic.map(|t| Storage::Topic {
                cluster: String::new(),
                topic: t.into(),
            }),
            at: format!("{statement}.sql:1"),
        }
    }

    #[test]
    fn storage_rules() {
        let o = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            storage_of("env.k.t", &[]),
            Some(Storage::Topic {
                cluster: "env.k".into(),
                topic: "t".into()
            })
        );
        assert_eq!(
            storage_of("t", &o(&[("connector", "kafka"), ("topic", "x")])),
            Some(Storage::Topic {
                cluster: String::new(),
                topic: "x".into()
            })
        );
        assert_eq!(
            storage_of("t", &o(&[("connector", "kafka"), ("topic", "a;b")])),
            None
        );
        assert_eq!(
            storage_of(
                "t",
                &o(&[("connector", "filesystem"), ("path", "s3://b/t/")])
            ),
            Some(Storage::Path("s3://b/t".into()))
        );
        assert_eq!(
            storage_of("t", &o(&[("connector", "jdbc"), ("url", "jdbc:pg://h/db")])),
            Some(Storage::JdbcTable {
                url: "jdbc:pg://h/db".into(),
                table: "t".into()
            })
        );
        assert_eq!(storage_of("t", &o(&[("connector", "print")])), None);
    }

    #[test]
    fn two_statements_on_one_table_or_topic_collide() {
        let writes = vec![
            w("blue", "a", Some("a")),
            w("blue", "b", Some("b")),
            w("green", "a_v2", Some("a_v2")),
            w("green", "b", Some("b")),
            w("other", "c", Some("a_v2")),
        ];
        let got = conflicts(&writes, &BTreeSet::new());
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].on, Collision::Table("b".into()));
        assert_eq!(
            got[0].to_string(),
            "table 'b' would be written by 2 statements: blue (blue.sql:1) and green (green.sql:1)"
        );
        assert_eq!(
            got[1].on,
            Collision::Storage(Storage::Topic {
                cluster: String::new(),
                topic: "a_v2".into()
            })
        );
        // Allowed tables are accepted.
        let allowed: BTreeSet<String> = ["b".to_string(), "a_v2".into(), "c".into()].into();
        assert!(conflicts(&writes, &allowed).is_empty());
        // One statement writing a table twice (two INSERTs) is one writer.
        assert!(conflicts(&[w("s", "t", None), w("s", "t", None)], &BTreeSet::new()).is_empty());
    }

    /// Issue #41 items 4 and 13: a running statement's write is keyed as Flink resolves it — its
    /// own current catalog and database fill the missing qualifiers, identifiers compare exactly
    /// (backquotes dropped, `` `x.y` `` one identifier) — and an unknown qualifier of the project
    /// matches any.
    #[test]
    fn running_writes_key_as_flink_resolves_them() {
        use crate::sql::TableName;
        let known = Frame {
            catalog: Some("env".into()),
            database: Some("db".into()),
        };
        let n = |parts: &[&str]| TableName::new(parts.iter().copied());
        let ours = known.key_of_inventory("t");
        // Every way of writing the project's `t`.
        for (name, c, d) in [
            (n(&["t"]), None, None),
            (n(&["t"]), Some("env"), Some("db")),
            (n(&["db", "t"]), None, None),
            (n(&["db", "t"]), Some("env"), Some("other")),
            (n(&["env", "db", "t"]), Some("x"), Some("y")),
            (n(&["t"]), None, Some("db")),
        ] {
            assert_eq!(known.key_of(&name, c, d), ours, "{name:?} {c:?} {d:?}");
        }
        // And none of these.
        for (name, c, d) in [
            (n(&["t"]), None, Some("other")),
            (n(&["t"]), Some("env2"), None),
            (n(&["other", "t"]), None, None),
            (n(&["db.t"]), None, None),
            (n(&["env.db.t"]), None, None),
            (n(&["env", "db.t"]), None, None),
            (n(&["T"]), None, None),
            (n(&["t "]), None, None),
        ] {
            assert_ne!(known.key_of(&name, c, d), ours, "{name:?} {c:?} {d:?}");
        }
        assert_eq!(known.display(&ours), "t");
        assert_eq!(
            known.display(&known.key_of(&n(&["x.y"]), None, None)),
            "`x.y`"
        );
        assert_eq!(
            known.display(&known.key_of(&n(&["x", "y"]), None, None)),
            "x.y"
        );
        // An unknown catalog and database: whatever a statement runs under is the project's.
        let unknown = Frame {
            catalog: None,
            database: None,
        };
        let ours = unknown.key_of_inventory("t");
        for (c, d) in [(None, None), (Some("env"), Some("db")), (Some("a"), None)] {
            assert_eq!(unknown.key_of(&n(&["t"]), c, d), ours);
            assert_eq!(unknown.key_of(&n(&["env", "db", "t"]), c, d), ours);
        }
        assert_ne!(unknown.key_of(&n(&["db.t"]), None, None), ours);
        assert_eq!(unknown.display(&ours), "t");
    }
}
