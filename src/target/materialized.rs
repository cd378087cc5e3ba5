//! Materialized tables as a target's own API tells them. On Confluent Cloud a
//! `CREATE [OR ALTER] MATERIALIZED TABLE` statement becomes a resource of its own, with a lifecycle
//! apart from the statement that created it: the GA `sql/v1` Materialized Tables API
//! (<https://docs.confluent.io/cloud/current/api.html#tag/Materialized-Tables-(sqlv1)>, spec
//! `ccloud-sdk-go-v2` `flink-gateway/v1`): `listSqlv1MaterializedTables`
//! (`GET /sql/v1/organizations/{org}/environments/{env}/materialized-tables`),
//! `getSqlv1MaterializedTable` and `updateSqlv1MaterializedTable` (`GET`/`PUT
//! …/databases/{kafka_cluster_id}/materialized-tables/{table_name}`), and
//! `listSqlv1MaterializedTableVersions` (`GET …/{table_name}/versions`). The continuous query runs as
//! a system statement that the control plane stops and restarts on each evolution, so whether such a
//! table is live is the resource's `status.phase`, never the creating statement's.

use super::Phase;
use serde::Serialize;
use serde_json::Value;

/// One materialized table (`sql.v1.MaterializedTable`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaterializedTable {
    /// `name`: the table's name, unique within its Kafka cluster.
    pub name: String,
    /// `spec.kafka_cluster_id`: the database (Kafka cluster) holding its topic.
    pub kafka_cluster_id: String,
    /// `status.phase`, parsed ([`MaterializedTable::phase_of`]); `None` when the answer has none.
    pub phase: Option<Phase>,
    /// `status.phase` as the server spelled it (`ALTERING`), which is what is shown.
    pub phase_text: Option<String>,
    /// `status.detail` (masked as all server text), empty when absent.
    pub detail: String,
    /// `spec.stopped`: a stop was asked for.
    pub stopped: bool,
    /// `status.version`: the active version (1 on creation, one more per accepted evolution).
    pub version: Option<u32>,
    /// `status.latest_version`: the newest submitted version; above `version` while an evolution
    /// is being activated.
    pub latest_version: Option<u32>,
    /// `status.warnings[].message`.
    pub warnings: Vec<String>,
    /// `spec.compute_pool_id`.
    pub compute_pool_id: Option<String>,
}

impl MaterializedTable {
    /// A materialized table's phase: the statement phases, and the two of its own (`CREATING`,
    /// `ALTERING`: being created or evolved, its query not running yet) as [`Phase::Pending`].
    pub fn phase_of(text: &str) -> Phase {
        match text.to_ascii_uppercase().as_str() {
            "CREATING" | "ALTERING" => Phase::Pending,
            other => Phase::parse(other),
        }
    }

    /// Whether an accepted evolution is not active yet (`latest_version` > `version`).
    pub fn evolving(&self) -> bool {
        matches!((self.version, self.latest_version), (Some(v), Some(l)) if l > v)
    }

    /// Whether its query runs the active version: RUNNING and no evolution pending.
    pub fn is_live(&self) -> bool {
        self.phase == Some(Phase::Running) && !self.evolving()
    }

    /// `RUNNING, version 3` / `ALTERING, version 3 (4 being activated)` / `STOPPED, version 1`: the
    /// phase as the server spelled it.
    pub fn describe(&self) -> String {
        let phase = self
            .phase_text
            .clone()
            .unwrap_or_else(|| "unknown phase".to_string());
        match (self.version, self.latest_version) {
            (Some(v), Some(l)) if l > v => format!("{phase}, version {v} ({l} being activated)"),
            (Some(v), _) => format!("{phase}, version {v}"),
            _ => phase,
        }
    }

    /// Reads one `sql.v1.MaterializedTable` answer (already masked, as every server answer is when
    /// read: [`super::secrets::ServerText`]); `None` without a `name` or a `spec.kafka_cluster_id`
    /// (its paths need both).
    pub fn from_wire(v: &Value) -> Option<MaterializedTable> {
        let name = v.get("name")?.as_str()?.to_string();
        let spec = v.get("spec");
        let status = v.get("status");
        let s = |p: Option<&Value>, k: &str| {
            p.and_then(|x| x.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let n = |k: &str| {
            status
                .and_then(|x| x.get(k))
                .and_then(Value::as_u64)
                .and_then(|x| u32::try_from(x).ok())
        };
        Some(MaterializedTable {
            name,
            kafka_cluster_id: s(spec, "kafka_cluster_id").filter(|c| !c.is_empty())?,
            phase: s(status, "phase")
                .filter(|p| !p.is_empty())
                .map(|p| Self::phase_of(&p)),
            phase_text: s(status, "phase")
                .filter(|p| !p.is_empty())
                .map(|p| p.to_ascii_uppercase()),
            detail: s(status, "detail").unwrap_or_default(),
            stopped: spec
                .and_then(|x| x.get("stopped"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            version: n("version"),
            latest_version: n("latest_version"),
            warnings: status
                .and_then(|x| x.get("warnings"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|w| w.get("message").and_then(Value::as_str))
                .map(str::to_string)
                .collect(),
            compute_pool_id: s(spec, "compute_pool_id"),
        })
    }
}

/// The materialized table named `name` among `listed` (an environment's, whose names are unique
/// only within a Kafka cluster): the one in `cluster` (the project's Kafka cluster id) when it is
/// known, else the only one of that name.
///
/// Errors: without a known cluster, several of that name (their cluster ids, to set
/// `kafka.cluster_id`).
pub fn find<'a>(
    listed: &'a [MaterializedTable],
    name: &str,
    cluster: Option<&str>,
) -> Result<Option<&'a MaterializedTable>, String> {
    let named: Vec<&MaterializedTable> = listed.iter().filter(|m| m.name == name).collect();
    match cluster {
        Some(c) => Ok(named.into_iter().find(|m| m.kafka_cluster_id == c)),
        None if named.len() > 1 => Err(format!(
            "{name}: {} materialized tables of that name in the environment (Kafka clusters {}): set kafka.cluster_id to the project's",
            named.len(),
            named
                .iter()
                .map(|m| m.kafka_cluster_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Ok(named.into_iter().next()),
    }
}

/// One version of a materialized table (`sql.v1.MaterializedTableVersion`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaterializedTableVersion {
    /// `spec.version`.
    pub version: u32,
    /// `spec.statement`: the whole `CREATE OR ALTER MATERIALIZED TABLE …` as `SHOW CREATE` gave it
    /// when the version was made.
    pub statement: String,
    /// `spec.changes[].details`, flattened: what changed since the previous version
    /// (`Column 'product_id: BIGINT' added`).
    pub changes: Vec<String>,
}

impl MaterializedTableVersion {
    /// Reads one `sql.v1.MaterializedTableVersion`; `None` without `spec.version`.
    pub fn from_wire(v: &Value) -> Option<MaterializedTableVersion> {
        let spec = v.get("spec")?;
        Some(MaterializedTableVersion {
            version: u32::try_from(spec.get("version")?.as_u64()?).ok()?,
            statement: spec
                .get("statement")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_default(),
            changes: spec
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .flat_map(|c| {
                    c.get("details")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                })
                .collect(),
        })
    }
}

/// The body of the `PUT` (`updateSqlv1MaterializedTable`) that sets `spec.stopped` on the
/// materialized table `read` (as GET returned it): `name`, `metadata` (`self`, `resource_version`, `labels`) and `spec` with its updatable fields as read
/// (`compute_pool_id`, `principal`, `table_options`, `columns`, `watermark`, `constraints`,
/// `query`), `stopped` set and `kafka_cluster_id` the table's (required, and the path's); what the
/// spec says is read-only or only read on creation (`api_version`, `kind`, `organization_id`,
/// `environment_id`, `status`, `spec.session_options`, `spec.distribution`) left out. `None` without a `metadata.resource_version`, which guards against overwriting a concurrent
/// change.
pub fn put_body(read: &Value, stopped: bool, kafka_cluster_id: &str) -> Option<Value> {
    let mut body = super::confluent::put_body_keeping(
        read,
        stopped,
        &[
            "compute_pool_id",
            "principal",
            "table_options",
            "columns",
            "watermark",
            "constraints",
            "query",
        ],
        false,
    )?;
    // Required by the spec, and the path's: always sent.
    body["spec"]["kafka_cluster_id"] = kafka_cluster_id.into();
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The spec's own example (`sql.v1.MaterializedTable`), with a status.
    #[test]
    fn a_materialized_table_as_the_spec_gives_it() {
        let v = json!({
            "api_version": "sql/v1", "kind": "MaterializedTable",
            "metadata": {"self": "https://flink.us-west1.aws.confluent.cloud/sql/v1/environments/env-123/databases/lkc-123/materialized-tables/high-value-orders", "resource_version": "a23av", "labels": {"owner": "flinkpipe"}},
            "name": "high-value-orders", "organization_id": "046b6c7f-0b8a-43b9-b35d-6489e6daee91", "environment_id": "env-123",
            "spec": {"kafka_cluster_id": "lkc-12345", "compute_pool_id": "lfcp-123", "principal": "sa-abc123", "stopped": false,
                     "table_options": {"key": "v"}, "session_options": {"k": "v"}, "distribution": {"columns": ["user_id"]},
                     "query": "SELECT user_id FROM orders WHERE price > 1000;"},
            "status": {"phase": "ALTERING", "detail": "Evolving.", "version": 3, "latest_version": 4,
                       "warnings": [{"severity": "MODERATE", "reason": "R", "message": "state is large"}]}
        });
        let t = MaterializedTable::from_wire(&v).unwrap();
        assert_eq!(t.name, "high-value-orders");
        assert_eq!(t.kafka_cluster_id, "lkc-12345");
        assert_eq!(t.phase, Some(Phase::Pending));
        assert!(t.evolving() && !t.is_live());
        assert_eq!(t.describe(), "ALTERING, version 3 (4 being activated)");
        assert_eq!(t.warnings, vec!["state is large"]);
        let body = put_body(&v, true, "lkc-12345").unwrap();
        assert_eq!(body["spec"]["stopped"], true);
        assert_eq!(body["metadata"]["resource_version"], "a23av");
        assert_eq!(body["spec"]["query"], v["spec"]["query"]);
        assert!(body.get("status").is_none() && body.get("kind").is_none());
        assert!(body.get("organization_id").is_none() && body.get("environment_id").is_none());
        assert_eq!(body["spec"]["kafka_cluster_id"], "lkc-12345");
        assert!(body["spec"].get("session_options").is_none());
        assert!(body["spec"].get("distribution").is_none());
        let mut unversioned = v.clone();
        unversioned["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resource_version");
        assert_eq!(put_body(&unversioned, true, "lkc-12345"), None);
        assert_eq!(MaterializedTable::from_wire(&json!({"spec": {}})), None);
    }

    #[test]
    fn versions_as_the_spec_gives_them() {
        let v = json!({"name": "mt-123-v4", "spec": {"version": 4,
            "statement": "CREATE OR ALTER MATERIALIZED TABLE orders AS SELECT user_id FROM orders;",
            "changes": [{"kind": "MATERIALIZED_TABLE", "name": "orders", "details": ["Column 'product_name: VARCHAR' added", "Column 'product_id: BIGINT' added"]}]}});
        let ver = MaterializedTableVersion::from_wire(&v).unwrap();
        assert_eq!(ver.version, 4);
        assert_eq!(ver.changes.len(), 2);
        assert!(ver.statement.starts_with("CREATE OR ALTER"));
    }
}
