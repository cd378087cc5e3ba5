//! Pure pieces of the SQL Gateway target: what an error answer means ([`ErrorClass`], decided once
//! from the status and body) and its cause, what a rejected statement means ([`Rejection`]), job-state
//! → phase mapping, the identity tags flinkpipe puts on every job, and the `CREATE TABLE` rebuilt from
//! a `DESCRIBE`. Everything here is unit-tested without a server (SQL Gateway REST,
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>).
//! The rest of the target decides on these typed values, never on the text of a message.

use crate::target::Phase;
use serde::Deserialize;
use serde_json::Value;

/// Job-parameter key holding the statement name (`pipeline.global-job-parameters`, shown by the
/// JobManager under `/jobs/{id}/config` → `execution-config.user-config`).
pub const TAG_STATEMENT: &str = "flinkpipe.statement";
/// Job-parameter key marking the job of a read-only query (`sql query`, `table preview`): once it has
/// ended it is no statement of anyone's (not an orphan); while it runs, it is one left behind.
pub const TAG_QUERY: &str = "flinkpipe.query";
/// Job-parameter key holding the hash of the normalized SQL text ([`sql_hash`]).
pub const TAG_SQL: &str = "flinkpipe.sql-hash";
/// Job-parameter key holding the hash of the statement properties ([`properties_hash`]).
pub const TAG_PROPERTIES: &str = "flinkpipe.properties-hash";

/// A 128-bit hex hash of the SQL text after [`crate::sql::text::normalize_sql`]: the identity of
/// the deployed text, since the JobManager keeps no SQL.
pub fn sql_hash(sql: &str) -> String {
    format!(
        "{:032x}",
        xxhash_rust::xxh3::xxh3_128(crate::sql::text::normalize_sql(sql).as_bytes())
    )
}

/// A 128-bit hex hash of properties (`key=value` lines in key order).
pub fn properties_hash(props: &std::collections::BTreeMap<String, String>) -> String {
    let text: String = props.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()))
}

/// The value of `pipeline.global-job-parameters` carrying the identity tags, merged after any value
/// the user set (Flink's map syntax `k1:v1,k2:v2`; names and hex hashes contain neither `,` nor `:`).
pub fn job_parameters(existing: Option<&str>, name: &str, sql: &str, props_hash: &str) -> String {
    let ours = format!("{TAG_STATEMENT}:{name},{TAG_SQL}:{sql},{TAG_PROPERTIES}:{props_hash}");
    match existing.map(str::trim).filter(|s| !s.is_empty()) {
        Some(e) => format!("{e},{ours}"),
        None => ours,
    }
}

/// Job-parameter key holding the SQL text itself ([`encode_text`]): the JobManager keeps no SQL, and an
/// upgrade needs the running text (to judge whether the new one can take its state over, and to start
/// it again from its savepoint when the new one fails).
pub const TAG_SQL_TEXT: &str = "flinkpipe.sql-text";
/// Job-parameter key holding the statement properties as a JSON object ([`encode_text`]).
pub const TAG_PROPERTIES_TEXT: &str = "flinkpipe.properties-text";

/// A text as a job-parameter value: URL-safe base64 without padding (`[A-Za-z0-9_-]`), since Flink's
/// map syntax of `pipeline.global-job-parameters` (`k1:v1,k2:v2`,
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/deployment/config/#pipeline-global-job-parameters>)
/// splits on `,` and `:` and SQL holds both.
pub fn encode_text(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text.as_bytes())
}

/// The text of a value written by [`encode_text`]; `None` when it is not one (not base64, not UTF-8).
pub fn decode_text(value: &str) -> Option<String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(value.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// `params` (from [`job_parameters`]) with the SQL text and the properties of the statement added
/// ([`TAG_SQL_TEXT`], [`TAG_PROPERTIES_TEXT`]).
pub fn with_texts(
    params: &str,
    sql: &str,
    props: &std::collections::BTreeMap<String, String>,
) -> String {
    let props = serde_json::to_string(props).expect("a string map serialises");
    format!(
        "{params},{TAG_SQL_TEXT}:{},{TAG_PROPERTIES_TEXT}:{}",
        encode_text(sql),
        encode_text(&props)
    )
}

/// The SQL text and properties a job carries ([`with_texts`]), from its tags: the text only when it
/// decodes and its hash is the job's [`TAG_SQL`] hash (a tag cut or altered on the way is not the
/// deployed text); the properties when they decode as a string map and match [`TAG_PROPERTIES`].
pub fn deployed_texts(
    sql_hash_tag: Option<&str>,
    sql_text_tag: Option<&str>,
    props_hash_tag: Option<&str>,
    props_text_tag: Option<&str>,
) -> (
    Option<String>,
    Option<std::collections::BTreeMap<String, String>>,
) {
    let sql = sql_text_tag
        .and_then(decode_text)
        .filter(|t| sql_hash_tag == Some(sql_hash(t).as_str()));
    let props = props_text_tag
        .and_then(decode_text)
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|p| props_hash_tag == Some(properties_hash(p).as_str()));
    (sql, props)
}

/// Where a job restored its state from, from `GET /jobs/{id}/checkpoints` → `latest.restored`
/// (`external_path`, `is_savepoint`): `None` when it started without state.
pub fn restored_from(checkpoints: &Value) -> Option<(String, bool)> {
    let r = checkpoints.get("latest")?.get("restored")?;
    let path = r.get("external_path").and_then(Value::as_str)?.to_string();
    let savepoint = r
        .get("is_savepoint")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Some((path, savepoint))
}

/// A job's checkpoints from `GET /jobs/{id}/checkpoints` (`counts.completed`, `counts.failed`,
/// `latest.completed.latest_ack_timestamp`, `latest.failed.{id, failure_timestamp,
/// failure_message}`; shapes observed on Flink 2.2). `None` when the answer has no `counts` (a job
/// without checkpointing answers them all 0, which is `Some`).
pub fn checkpoint_stats(checkpoints: &Value) -> Option<crate::target::metrics::Checkpoints> {
    let counts = checkpoints.get("counts")?;
    let n = |k: &str| counts.get(k).and_then(Value::as_u64).unwrap_or(0);
    let latest = checkpoints.get("latest");
    let completed = latest
        .and_then(|l| l.get("completed"))
        .filter(|c| !c.is_null());
    let latest_completed_ms = completed
        .and_then(|c| c.get("latest_ack_timestamp"))
        .and_then(Value::as_i64)
        .filter(|ms| *ms >= 0);
    let latest_completed_id = completed.and_then(|c| c.get("id")).and_then(Value::as_u64);
    let latest_failure = latest.and_then(|l| l.get("failed")).and_then(|f| {
        Some(crate::target::metrics::CheckpointFailure {
            id: f.get("id").and_then(Value::as_u64)?,
            at_ms: f.get("failure_timestamp").and_then(Value::as_i64)?,
            message: f
                .get("failure_message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    });
    Some(crate::target::metrics::Checkpoints {
        completed: n("completed"),
        failed: n("failed"),
        latest_completed_ms,
        latest_completed_id,
        latest_failure,
    })
}

/// How long before `now_ms` (the JobManager's `now` of `GET /jobs/{id}`) the job last failed: the
/// newest `timestamp` of `GET /jobs/{id}/exceptions` → `exceptionHistory.entries` (each a failure
/// that restarted or failed the job); `None` when the history keeps none.
pub fn last_failure_ms_ago(exceptions: &Value, now_ms: i64) -> Option<i64> {
    exceptions
        .pointer("/exceptionHistory/entries")?
        .as_array()?
        .iter()
        .filter_map(|e| e.get("timestamp").and_then(Value::as_i64))
        .max()
        .map(|t| (now_ms - t).max(0))
}

/// A job's restart count from `GET /jobs/{id}/metrics?get=numRestarts`
/// (`[{"id": "numRestarts", "value": "2"}]`; the JobManager answers `[]` until its metric fetcher
/// has read the job once, which is `None`).
pub fn restart_count(metrics: &Value) -> Option<u64> {
    metrics
        .as_array()?
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some("numRestarts"))?
        .get("value")?
        .as_str()?
        .parse()
        .ok()
}

/// The job name Flink gives the continuous refresh job of a materialized table (it ignores
/// `pipeline.name` for them): ``Materialized_table_`cat`.`db`.`t`_continuous_refresh_job``.
/// Returns the suffix to match, since the catalog and database may vary: `` .`t`_continuous_refresh_job``.
pub fn materialized_job_suffix(table: &str) -> String {
    format!(".`{table}`_continuous_refresh_job")
}

/// Whether `job_name` is the refresh job of materialized table `table`.
pub fn is_materialized_job(job_name: &str, table: &str) -> bool {
    job_name.starts_with("Materialized_table_")
        && job_name.ends_with(&materialized_job_suffix(table))
}

/// The useful cause of a gateway error body `{"errors": [..]}` (its shape as
/// observed on Flink 2.x): the first `Caused by:` after
/// `SqlExecutionException: Failed to execute the operation …`, else the deepest `Caused by:`, else the
/// first line of the last element; Java package prefixes removed
/// (`ValidationException: SQL validation failed. … Object 'x' not found`).
pub fn root_cause(body: &str) -> String {
    let errors: Vec<String> = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("errors").cloned())
        .and_then(|e| serde_json::from_value(e).ok())
        .unwrap_or_default();
    let last = match errors.last() {
        Some(l) => l.as_str(),
        None => return body.trim().chars().take(500).collect(),
    };
    let causes: Vec<&str> = last
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Caused by: "))
        .collect();
    let after_exec = causes
        .iter()
        .position(|c| c.contains("SqlExecutionException"))
        .and_then(|i| causes.get(i + 1));
    // A job the JobManager refused (a savepoint it cannot map, a JobMaster that cannot start) is
    // wrapped in `TableException: Failed to execute sql`: the deepest cause names the problem.
    let after_exec = match after_exec {
        Some(c) if c.trim_end().ends_with("Failed to execute sql") => causes.last().or(Some(c)),
        other => other,
    };
    let pick = after_exec
        .or_else(|| {
            causes.iter().rev().find(|c| {
                !c.contains("SqlGatewayException") && !c.contains("SqlExecutionException")
            })
        })
        .copied()
        .unwrap_or_else(|| last.lines().next().unwrap_or(last));
    let text = strip_java_package(pick.trim());
    // Flink repeats the prefix when it wraps ("SQL validation failed. SQL validation failed. …").
    dedup_prefix(&text)
}

/// What a failed answer of the gateway (or the JobManager) means (as observed on
/// Flink 2.x). The gateway sends no error
/// codes, only Java exception traces, so this is the one place that reads their text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// 429, 502, 503, 504: the same request may succeed later.
    Unavailable,
    /// The session handle is unknown: expired after `sql-gateway.session.idle-timeout` or lost with a
    /// gateway restart. HTTP 500 whose trace says `Failed to getSession…` or
    /// `Session '<handle>' does not exist`. A new session must be opened and its tables declared again.
    SessionLost,
    /// Any other HTTP 500: for a statement's result, the statement's own failure (parse, validation,
    /// planner…), whose cause is [`root_cause`].
    ServerError,
    /// Anything else (400 bad handle, 404 unknown route, …): a request flinkpipe got wrong.
    Other,
}

impl ErrorClass {
    /// Classifies an error answer by status and body.
    pub fn of(status: u16, body: &str) -> ErrorClass {
        match status {
            429 | 502 | 503 | 504 => ErrorClass::Unavailable,
            500 if session_lost(body) => ErrorClass::SessionLost,
            500 => ErrorClass::ServerError,
            _ => ErrorClass::Other,
        }
    }
}

/// Whether an error body says the session is unknown (observed: `RestHandlerException: Failed to
/// getSessionConfig.`, `SqlGatewayException: Session '…' does not exist.`).
fn session_lost(body: &str) -> bool {
    let errors: Vec<String> = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("errors").cloned())
        .and_then(|e| serde_json::from_value(e).ok())
        .unwrap_or_else(|| vec![body.to_string()]);
    errors.iter().any(|e| {
        e.lines().any(|l| {
            let l = l.trim();
            l.contains("Failed to getSession")
                || l.find("Session '")
                    .is_some_and(|i| l[i..].contains("' does not exist"))
        })
    })
}

/// Why the gateway rejected a statement, from its root cause (as observed on Flink 2.x).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// What kind of rejection.
    pub kind: RejectionKind,
    /// The root cause as [`root_cause`] extracted it (`ValidationException: …`).
    pub cause: String,
}

/// The rejections the target acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectionKind {
    /// The table exists in the session already (`TableAlreadyExistException`): a declaration that was
    /// done before is not a failure.
    AlreadyExists,
    /// An object the statement uses is unknown (`Object 'x' not found`, `Table … not found`): the
    /// target adds which tables no DDL defines. A column that is not found (`Column 'x' not found in
    /// any table`, a typo in the query) is [`RejectionKind::Other`]: no DDL would help.
    NotFound,
    /// Any other failure.
    Other,
}

impl Rejection {
    /// Classifies a root cause.
    pub fn new(cause: impl Into<String>) -> Rejection {
        let cause = cause.into();
        let kind = if cause.starts_with("TableAlreadyExistException")
            || cause.contains(" already exists")
        {
            RejectionKind::AlreadyExists
        } else if cause.contains("not found") && !cause.contains("Column '") {
            RejectionKind::NotFound
        } else {
            RejectionKind::Other
        };
        Rejection { kind, cause }
    }

    /// The object a [`RejectionKind::NotFound`] cause names, when it says (`Object 'x' not found`
    /// → `x`, `Table 'c.d.x' not found` → `c.d.x`).
    pub fn missing_object(&self) -> Option<&str> {
        ["Object '", "Table '", "Table (or view) '"]
            .iter()
            .find_map(|lead| {
                let at = self.cause.find(lead)? + lead.len();
                let rest = &self.cause[at..];
                let end = rest.find('\'')?;
                rest[end..].starts_with("' not found").then(|| &rest[..end])
            })
    }
}

/// `org.apache.flink.table.api.ValidationException: x` → `ValidationException: x`.
pub fn strip_java_package(line: &str) -> String {
    let (class, rest) = match line.split_once(": ") {
        Some((c, r)) => (c, Some(r)),
        None => (line, None),
    };
    if class.contains(' ') || !class.contains('.') {
        return line.to_string();
    }
    let short = class.rsplit('.').next().unwrap_or(class);
    match rest {
        Some(r) => format!("{short}: {r}"),
        None => short.to_string(),
    }
}

fn dedup_prefix(text: &str) -> String {
    let Some((class, msg)) = text.split_once(": ") else {
        return text.to_string();
    };
    let mut msg = msg.to_string();
    while let Some(dot) = msg.find(". ") {
        let first = &msg[..dot + 2];
        if !msg[dot + 2..].starts_with(first) {
            break;
        }
        msg = msg[dot + 2..].to_string();
    }
    format!("{class}: {msg}")
}

/// One job of `GET /jobs/overview` (JobManager REST).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct JobOverview {
    /// 32 hex digits.
    pub jid: String,
    /// The job name (`pipeline.name`).
    pub name: String,
    /// `RUNNING`, `FINISHED`, `FAILED`, `CANCELED`, …
    pub state: String,
    /// Milliseconds since the epoch.
    #[serde(rename = "start-time", default)]
    pub start_time: i64,
}

/// How a job state reads as a statement phase. `CANCELED` → `None`: flinkpipe cancels a job only to
/// delete its statement, so a cancelled job is a statement that no longer exists. `FINISHED` is
/// [`Phase::Stopped`] when the job ended by a stop-with-savepoint, else [`Phase::Completed`] (a bounded
/// job such as `INSERT … VALUES`).
pub fn job_phase(state: &str, stopped_with_savepoint: bool) -> Option<Phase> {
    Some(match state {
        "INITIALIZING" | "CREATED" | "RECONCILING" => Phase::Pending,
        "RUNNING" => Phase::Running,
        "RESTARTING" => Phase::Degraded,
        "FAILING" => Phase::Failing,
        "FAILED" => Phase::Failed,
        "CANCELLING" => Phase::Deleting,
        "CANCELED" => return None,
        "SUSPENDED" => Phase::Stopped,
        "FINISHED" if stopped_with_savepoint => Phase::Stopped,
        "FINISHED" => Phase::Completed,
        other => Phase::Unknown(other.to_string()),
    })
}

/// Tasks of a job that run (or have finished, for a bounded part), and all tasks, from
/// `GET /jobs/{id}` (`vertices[].status`, `vertices[].parallelism`). `None` when the answer has no
/// vertices.
pub fn tasks_running(job: &Value) -> Option<(u64, u64)> {
    let vertices = job.get("vertices")?.as_array()?;
    if vertices.is_empty() {
        return None;
    }
    let mut running = 0;
    let mut total = 0;
    for v in vertices {
        let p = v.get("parallelism").and_then(Value::as_u64).unwrap_or(1);
        total += p;
        if matches!(
            v.get("status").and_then(Value::as_str),
            Some("RUNNING" | "FINISHED")
        ) {
            running += p;
        }
    }
    Some((running, total))
}

/// Whether a job in this state still runs (a second one of the same name would be a duplicate).
pub fn job_is_live(state: &str) -> bool {
    matches!(
        state,
        "INITIALIZING"
            | "CREATED"
            | "RUNNING"
            | "RESTARTING"
            | "FAILING"
            | "RECONCILING"
            | "CANCELLING"
    )
}

/// The savepoint a job was stopped with, from `GET /jobs/{id}/checkpoints`: the latest completed
/// savepoint of type `SYNC_SAVEPOINT` / `TERMINATE_SAVEPOINT` (a stop), as its `external_path`.
pub fn stop_savepoint(checkpoints: &Value) -> Option<String> {
    let sp = checkpoints.get("latest")?.get("savepoint")?;
    let ty = sp
        .get("checkpoint_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ok = sp.get("status").and_then(Value::as_str) == Some("COMPLETED");
    if ok && (ty.contains("SYNC") || ty.contains("TERMINATE")) {
        sp.get("external_path")
            .and_then(Value::as_str)
            .map(str::to_string)
    } else {
        None
    }
}

/// The first line of a failed job's root exception (`GET /jobs/{id}/exceptions`), package removed.
pub fn job_failure(exceptions: &Value) -> Option<String> {
    let text = exceptions
        .get("root-exception")
        .and_then(Value::as_str)
        .or_else(|| {
            exceptions
                .get("exceptionHistory")?
                .get("entries")?
                .get(0)?
                .get("stacktrace")?
                .as_str()
        })?;
    Some(deepest_cause(text))
}

/// The deepest `Caused by:` of a Java stack trace as Flink prints it (the real problem: a missing
/// topic, a `StateMigrationException`), else its first line; Java package prefixes removed. A text
/// that is no stack trace is its first line.
pub fn deepest_cause(text: &str) -> String {
    let cause = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Caused by: "))
        .next_back()
        .unwrap_or_else(|| text.lines().next().unwrap_or(""));
    strip_java_package(cause.trim())
}

/// One column of a `DESCRIBE` result: `[name, type, null, key, extras, watermark]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescribedColumn {
    /// Column name.
    pub name: String,
    /// Flink type as printed (`DECIMAL(14, 2)`, `TIMESTAMP_LTZ(3) *PROCTIME*`).
    pub data_type: String,
    /// Nullable.
    pub nullable: bool,
}

/// Reads `DESCRIBE` rows (JSON row format: `{"kind":"INSERT","fields":[…]}`).
pub fn described_columns(rows: &[Value]) -> Vec<DescribedColumn> {
    rows.iter()
        .filter_map(|r| {
            let f = r.get("fields")?.as_array()?;
            Some(DescribedColumn {
                name: f.first()?.as_str()?.to_string(),
                data_type: f.get(1)?.as_str()?.to_string(),
                nullable: f.get(2).and_then(Value::as_bool).unwrap_or(true),
            })
        })
        .collect()
}

/// The `CREATE TABLE` that declares, in a fresh session, a table whose schema came from a query (a
/// CTAS or a materialized table): the query's columns as `DESCRIBE` printed them (time-attribute
/// markers `*ROWTIME*` / `*PROCTIME*` dropped: a stored table has plain timestamps), the primary key and
/// the `WITH` options of the original statement. Primary-key columns are declared `NOT NULL`, as Flink
/// requires.
pub fn derived_table_ddl(
    table: &str,
    columns: &[DescribedColumn],
    primary_key: &[String],
    options: &[(String, String)],
) -> String {
    let q = crate::sql::quote_identifier;
    let mut parts: Vec<String> = columns
        .iter()
        .map(|c| {
            let ty = c
                .data_type
                .replace(" *ROWTIME*", "")
                .replace(" *PROCTIME*", "")
                .replace(" NOT NULL", "");
            let not_null =
                !c.nullable || primary_key.iter().any(|k| k.eq_ignore_ascii_case(&c.name));
            format!(
                "  {} {}{}",
                q(&c.name),
                ty,
                if not_null { " NOT NULL" } else { "" }
            )
        })
        .collect();
    if !primary_key.is_empty() {
        parts.push(format!(
            "  PRIMARY KEY ({}) NOT ENFORCED",
            primary_key
                .iter()
                .map(|k| q(k))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let opts = options
        .iter()
        .map(|(k, v)| {
            format!(
                "  '{}' = '{}'",
                k.replace('\'', "''"),
                v.replace('\'', "''")
            )
        })
        .collect::<Vec<_>>()
        .join(",\n");
    format!(
        "CREATE TABLE {} (\n{}\n) WITH (\n{}\n)",
        q(table),
        parts.join(",\n"),
        opts
    )
}

/// The vertex ids of a job plan (`GET /jobs/{id}/plan`: `plan.nodes[].id`), in plan order.
pub fn plan_vertex_ids(plan: &Value) -> Vec<String> {
    plan.pointer("/plan/nodes")
        .or_else(|| plan.get("nodes"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|n| n.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The topics a vertex's Kafka sources read, from the names of its metrics (`GET
/// /jobs/{id}/vertices/{v}/metrics`: `[{"id": "0.Source__t[1].KafkaSourceReader.topic.<topic>.partition.<p>.currentOffset"}]`;
/// a topic may hold dots, so it is what stands between `.KafkaSourceReader.topic.` and the last
/// `.partition.`), sorted, without repeats.
pub fn source_topics(metrics: &Value) -> Vec<String> {
    const START: &str = "KafkaSourceReader.topic.";
    let mut out = std::collections::BTreeSet::new();
    for m in metrics.as_array().into_iter().flatten() {
        let Some(id) = m.get("id").and_then(Value::as_str) else {
            continue;
        };
        let Some(i) = id.find(START) else {
            continue;
        };
        let rest = &id[i + START.len()..];
        if let Some(j) = rest.rfind(".partition.")
            && j > 0
        {
            out.insert(rest[..j].to_string());
        }
    }
    out.into_iter().collect()
}

/// The tables a job reads, from its plan (`GET /jobs/{id}/plan`: `plan.nodes[].description`): each
/// `TableSourceScan(table=[[catalog, database, t]], …)` and `LookupJoin(table=[catalog.database.t],
/// …)` names one (the last part, as Flink prints it; `&lt;`-style escapes of the web UI undone),
/// sorted, without repeats. A plan without such nodes (a DataStream job) reads none that can be told.
pub fn plan_source_tables(plan: &Value) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let nodes = plan
        .pointer("/plan/nodes")
        .or_else(|| plan.get("nodes"))
        .and_then(Value::as_array);
    for n in nodes.into_iter().flatten() {
        for field in ["description", "operator", "name"] {
            let Some(text) = n.get(field).and_then(Value::as_str) else {
                continue;
            };
            for marker in ["TableSourceScan(table=[[", "LookupJoin(table=["] {
                let mut rest = text;
                while let Some(i) = rest.find(marker) {
                    rest = &rest[i + marker.len()..];
                    let end = rest.find(']').unwrap_or(rest.len());
                    let qualified = &rest[..end];
                    // `[[catalog, database, t, project=[…], …]]` or `[catalog.database.t]`.
                    let parts: Vec<&str> = if marker.ends_with("[[") {
                        qualified.split(',').collect()
                    } else {
                        qualified.split('.').collect()
                    };
                    let pick = if parts.len() >= 3 && marker.ends_with("[[") {
                        parts[2]
                    } else {
                        parts.last().copied().unwrap_or(qualified)
                    };
                    let last = pick.trim().trim_matches('`');
                    if !last.is_empty() {
                        out.insert(last.to_string());
                    }
                    rest = &rest[end..];
                }
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers of a real Flink 2.2 JobManager: a job whose every checkpoint expires
    /// (`execution.checkpointing.timeout: 10ms`), and a healthy one.
    #[test]
    fn checkpoints_and_restarts_as_the_job_manager_tells_them() {
        let failing = serde_json::json!({
            "counts": {"restored": 0, "total": 10, "in_progress": 0, "completed": 0, "failed": 10},
            "latest": {"completed": null, "savepoint": null, "restored": null, "failed": {
                "className": "failed", "id": 10, "status": "FAILED", "is_savepoint": false,
                "trigger_timestamp": 1796600185917_i64, "latest_ack_timestamp": -1,
                "num_subtasks": 2, "num_acknowledged_subtasks": 0, "checkpoint_type": "CHECKPOINT",
                "failure_timestamp": 1796600185929_i64,
                "failure_message": "Checkpoint expired before completing."}}
        });
        let c = checkpoint_stats(&failing).unwrap();
        assert_eq!(
            (c.completed, c.failed, c.latest_completed_ms),
            (0, 10, None)
        );
        let f = c.failing().unwrap();
        assert_eq!(
            (f.id, f.at_ms, f.message.as_str()),
            (10, 1796600185929, "Checkpoint expired before completing.")
        );
        let healthy = serde_json::json!({
            "counts": {"restored": 0, "total": 11, "in_progress": 0, "completed": 10, "failed": 1},
            "latest": {"completed": {"id": 9, "status": "COMPLETED",
                "latest_ack_timestamp": 1796600108489_i64}, "savepoint": null, "failed": null, "restored": null}
        });
        let c = checkpoint_stats(&healthy).unwrap();
        assert_eq!((c.completed, c.failed), (10, 1));
        assert_eq!(c.latest_completed_ms, Some(1796600108489));
        assert!(c.latest_failure.is_none() && c.failing().is_none());
        assert_eq!(
            checkpoint_stats(&serde_json::json!({"errors": ["x"]})),
            None
        );
        assert_eq!(c.latest_completed_id, Some(9));
        let history = serde_json::json!({"exceptionHistory": {"entries": [
            {"exceptionName": "java.lang.ArithmeticException", "timestamp": 1000},
            {"exceptionName": "java.lang.ArithmeticException", "timestamp": 4000}]}});
        assert_eq!(last_failure_ms_ago(&history, 10_000), Some(6_000));
        assert_eq!(
            last_failure_ms_ago(&serde_json::json!({"exceptionHistory": {"entries": []}}), 1),
            None
        );
        assert_eq!(
            restart_count(&serde_json::json!([{"id": "numRestarts", "value": "2"}])),
            Some(2)
        );
        assert_eq!(restart_count(&serde_json::json!([])), None);
    }
    use serde_json::json;

    #[test]
    fn root_cause_after_the_execution_exception() {
        let trace = "org.apache.flink.runtime.rest.handler.RestHandlerException: Failed to fetchResults.\n\tat x\nCaused by: org.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to fetchResults.\n\tat y\nCaused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to execute the operation 1246.\n\tat z\nCaused by: org.apache.flink.table.api.ValidationException: SQL validation failed. SQL validation failed. From line 1, column 31 to line 1, column 33: Object 'src' not found\n\tat w\nCaused by: org.apache.calcite.runtime.CalciteContextException: From line 1, column 31 to line 1, column 33: Object 'src' not found\n";
        let body = json!({"errors": ["Internal server error.", format!("<Exception on server side:\n{trace}End of exception on server side>")]}).to_string();
        assert_eq!(
            root_cause(&body),
            "ValidationException: SQL validation failed. From line 1, column 31 to line 1, column 33: Object 'src' not found"
        );
    }

    #[test]
    fn a_refused_job_is_named_by_its_deepest_cause() {
        // Trimmed from Flink 2.2's answer to an INSERT started from a savepoint it cannot map.
        let trace = "org.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to fetchResults.\nCaused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to execute the operation 844e.\n\tat z\nCaused by: org.apache.flink.table.api.TableException: Failed to execute sql\n\tat y\nCaused by: org.apache.flink.util.FlinkException: Failed to execute job 'x-upg-new'.\nCaused by: org.apache.flink.runtime.client.JobInitializationException: Could not start the JobMaster.\nCaused by: java.lang.IllegalStateException: Failed to rollback to checkpoint/savepoint file:/sp/savepoint-1. Cannot map checkpoint/savepoint state for operator b57f to the new program, because the operator is not available in the new program.\n\tat w\n";
        let body = json!({"errors": ["Internal server error.", format!("<Exception on server side:\n{trace}End of exception on server side>")]}).to_string();
        assert_eq!(
            root_cause(&body),
            "IllegalStateException: Failed to rollback to checkpoint/savepoint file:/sp/savepoint-1. Cannot map checkpoint/savepoint state for operator b57f to the new program, because the operator is not available in the new program."
        );
    }

    #[test]
    fn root_cause_of_session_errors_and_plain_bodies() {
        let body = json!({"errors": ["org.apache.flink.runtime.rest.handler.RestHandlerException: Failed to getSessionConfig.\n\tat a"]}).to_string();
        assert_eq!(
            root_cause(&body),
            "RestHandlerException: Failed to getSessionConfig."
        );
        assert_eq!(
            root_cause("{\"errors\":[\"Not found: /v2/x\"]}"),
            "Not found: /v2/x"
        );
        assert_eq!(root_cause("gateway down"), "gateway down");
    }

    #[test]
    fn error_answers_are_classified_once() {
        let lost = json!({"errors": ["org.apache.flink.runtime.rest.handler.RestHandlerException: Failed to getSessionConfig.\n\tat a"]}).to_string();
        assert_eq!(ErrorClass::of(500, &lost), ErrorClass::SessionLost);
        let gone = json!({"errors": ["org.apache.flink.table.gateway.api.utils.SqlGatewayException: Session 's1' does not exist."]}).to_string();
        assert_eq!(ErrorClass::of(500, &gone), ErrorClass::SessionLost);
        // A statement that mentions a session in its own failure is not a lost session.
        let stmt = server_error_body("ValidationException: Object 'session_events' not found");
        assert_eq!(ErrorClass::of(500, &stmt), ErrorClass::ServerError);
        for s in [429, 502, 503, 504] {
            assert_eq!(ErrorClass::of(s, ""), ErrorClass::Unavailable);
        }
        assert_eq!(
            ErrorClass::of(404, "{\"errors\":[\"Not found: /v2/x\"]}"),
            ErrorClass::Other
        );
        assert_eq!(ErrorClass::of(400, ""), ErrorClass::Other);
    }

    fn server_error_body(cause: &str) -> String {
        json!({"errors": ["Internal server error.", format!("<Exception on server side:\nCaused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to execute the operation o1.\nCaused by: org.apache.flink.table.api.{cause}\nEnd of exception on server side>")]}).to_string()
    }

    #[test]
    fn rejections_are_classified_from_their_cause() {
        let r = Rejection::new(
            "TableAlreadyExistException: Table (or view) default_database.src already exists in Catalog default_catalog.",
        );
        assert_eq!(r.kind, RejectionKind::AlreadyExists);
        assert_eq!(
            Rejection::new("ValidationException: SQL validation failed. From line 1, column 15 to line 1, column 25: Object 'nosuchtable' not found").kind,
            RejectionKind::NotFound
        );
        assert_eq!(
            Rejection::new("SqlParserException: SQL parse failed. Encountered \"one\"").kind,
            RejectionKind::Other
        );
        let column = Rejection::new(
            "ValidationException: SQL validation failed. From line 1, column 8 to line 1, column 9: Column 'regoin' not found in any table",
        );
        assert_eq!(column.kind, RejectionKind::Other);
        let object = Rejection::new(
            "ValidationException: SQL validation failed. From line 1, column 15 to line 1, column 25: Object 'nosuchtable' not found",
        );
        assert_eq!(object.missing_object(), Some("nosuchtable"));
        assert_eq!(
            Rejection::new("ValidationException: Table 'cat.db.x' not found").missing_object(),
            Some("cat.db.x")
        );
    }

    #[test]
    fn job_states_map_to_phases() {
        assert_eq!(job_phase("RUNNING", false), Some(Phase::Running));
        assert_eq!(job_phase("FINISHED", true), Some(Phase::Stopped));
        assert_eq!(job_phase("FINISHED", false), Some(Phase::Completed));
        assert_eq!(job_phase("FAILED", false), Some(Phase::Failed));
        assert_eq!(job_phase("CANCELED", false), None);
        assert_eq!(job_phase("RESTARTING", false), Some(Phase::Degraded));
        assert_eq!(job_phase("INITIALIZING", false), Some(Phase::Pending));
        assert!(job_is_live("RESTARTING") && !job_is_live("FINISHED") && !job_is_live("CANCELED"));
    }

    #[test]
    fn tasks_of_a_running_job() {
        let j = json!({"vertices": [
            {"status": "RUNNING", "parallelism": 1},
            {"status": "DEPLOYING", "parallelism": 2},
            {"status": "FINISHED", "parallelism": 1}
        ]});
        assert_eq!(tasks_running(&j), Some((2, 4)));
        assert_eq!(tasks_running(&json!({"vertices": []})), None);
        assert_eq!(tasks_running(&Value::Null), None);
    }

    #[test]
    fn savepoint_of_a_stopped_job() {
        let c = json!({"latest": {"savepoint": {"status": "COMPLETED", "checkpoint_type": "SYNC_SAVEPOINT", "external_path": "file:/sp/savepoint-7cee2c-e1e9"}}});
        assert_eq!(
            stop_savepoint(&c).as_deref(),
            Some("file:/sp/savepoint-7cee2c-e1e9")
        );
        let manual = json!({"latest": {"savepoint": {"status": "COMPLETED", "checkpoint_type": "SAVEPOINT", "external_path": "file:/x"}}});
        assert_eq!(stop_savepoint(&manual), None);
        assert_eq!(
            stop_savepoint(&json!({"latest": {"savepoint": null}})),
            None
        );
    }

    #[test]
    fn identity_tags_and_materialized_job_names() {
        assert_eq!(
            job_parameters(None, "dev-x", "ab", "cd"),
            "flinkpipe.statement:dev-x,flinkpipe.sql-hash:ab,flinkpipe.properties-hash:cd"
        );
        assert!(
            job_parameters(Some("a:b"), "n", "s", "p").starts_with("a:b,flinkpipe.statement:n")
        );
        assert!(is_materialized_job(
            "Materialized_table_`default_catalog`.`default_database`.`mv_x`_continuous_refresh_job",
            "mv_x"
        ));
        assert!(!is_materialized_job(
            "Materialized_table_`c`.`d`.`mv_xy`_continuous_refresh_job",
            "mv_x"
        ));
        assert_eq!(sql_hash("SELECT  1;\n"), sql_hash("SELECT 1"));
        assert_ne!(sql_hash("SELECT 1"), sql_hash("SELECT 2"));
    }

    #[test]
    fn the_deployed_text_travels_in_the_job_parameters() {
        let sql = "INSERT INTO t SELECT a, 'x:y,z' FROM s -- ünïcode";
        let props: std::collections::BTreeMap<String, String> =
            [("sql.state-ttl".to_string(), "1 h".to_string())].into();
        let params = with_texts(
            &job_parameters(None, "n", &sql_hash(sql), &properties_hash(&props)),
            sql,
            &props,
        );
        // Flink's map syntax: every value free of `,` and `:`.
        let tags: std::collections::BTreeMap<&str, &str> = params
            .split(',')
            .map(|kv| kv.split_once(':').expect("k:v"))
            .collect();
        assert_eq!(tags.len(), 5, "{params}");
        let (got_sql, got_props) = deployed_texts(
            tags.get(TAG_SQL).copied(),
            tags.get(TAG_SQL_TEXT).copied(),
            tags.get(TAG_PROPERTIES).copied(),
            tags.get(TAG_PROPERTIES_TEXT).copied(),
        );
        assert_eq!(got_sql.as_deref(), Some(sql));
        assert_eq!(got_props, Some(props));
        // A text whose hash is not the job's is not its text.
        let (other, _) = deployed_texts(Some("00"), tags.get(TAG_SQL_TEXT).copied(), None, None);
        assert_eq!(other, None);
        assert_eq!(decode_text("not base64!"), None);
    }

    #[test]
    fn where_a_job_restored_from() {
        let c = json!({"latest": {"restored": {"id": 3, "restore_timestamp": 1, "is_savepoint": true, "external_path": "file:/sp/savepoint-1"}}});
        assert_eq!(
            restored_from(&c),
            Some(("file:/sp/savepoint-1".to_string(), true))
        );
        assert_eq!(restored_from(&json!({"latest": {"restored": null}})), None);
    }

    #[test]
    fn derived_ddl_from_describe() {
        let rows = vec![
            json!({"kind": "INSERT", "fields": ["customer_id", "INT", true, null, null, null]}),
            json!({"kind": "INSERT", "fields": ["n", "BIGINT", false, null, null, null]}),
            json!({"kind": "INSERT", "fields": ["ts", "TIMESTAMP(3) *ROWTIME*", true, null, null, null]}),
        ];
        let cols = described_columns(&rows);
        let ddl = derived_table_ddl(
            "t_v2",
            &cols,
            &["customer_id".into()],
            &[
                ("connector".into(), "upsert-kafka".into()),
                ("topic".into(), "it's".into()),
            ],
        );
        assert_eq!(
            ddl,
            "CREATE TABLE `t_v2` (\n  `customer_id` INT NOT NULL,\n  `n` BIGINT NOT NULL,\n  `ts` TIMESTAMP(3),\n  PRIMARY KEY (`customer_id`) NOT ENFORCED\n) WITH (\n  'connector' = 'upsert-kafka',\n  'topic' = 'it''s'\n)"
        );
    }

    #[test]
    fn failure_of_a_job_is_its_deepest_cause() {
        let e = json!({"root-exception": "org.apache.flink.runtime.JobException: Recovery is suppressed\n\tat a\nCaused by: org.apache.kafka.common.errors.TimeoutException: Topic t not present\n"});
        assert_eq!(
            job_failure(&e).as_deref(),
            Some("TimeoutException: Topic t not present")
        );
    }

    #[test]
    fn tables_a_job_reads_come_from_its_plan() {
        let plan = json!({"jid": "x", "name": "other-team-job", "plan": {"nodes": [
            {"id": "a", "description": "[3]:Sink(table=[default_catalog.default_database.out], fields=[id])"},
            {"id": "b", "description": "[1]:TableSourceScan(table=[[default_catalog, default_database, int_x]], fields=[id, amount])<br/>+- [2]:Calc(select=[id])"},
            {"id": "c", "description": "[4]:LookupJoin(table=[default_catalog.default_database.dim_y], joinType=[InnerJoin])"},
            {"id": "d", "description": "[5]:TableSourceScan(table=[[default_catalog, default_database, int_x, project=[id]]], fields=[id])"}
        ]}});
        assert_eq!(plan_source_tables(&plan), vec!["dim_y", "int_x"]);
        assert!(
            plan_source_tables(&json!({"plan": {"nodes": [{"description": "Source: Custom"}]}}))
                .is_empty()
        );
    }
}

#[cfg(test)]
mod source_topic_tests {
    use super::*;
    use serde_json::json;

    /// Who reads a topic on the gateway: the Kafka source's own gauges name it, dots and all.
    #[test]
    fn topics_come_from_the_kafka_source_gauges() {
        let metrics = json!([
            {"id": "0.Source__orders[1].KafkaSourceReader.topic.demo_orders.partition.0.currentOffset"},
            {"id": "0.Source__orders[1].KafkaSourceReader.topic.demo_orders.partition.1.committedOffset"},
            {"id": "1.Source__x[2].KafkaSourceReader.topic.team.a.clicks.partition.12.currentOffset"},
            {"id": "0.Source__orders[1].numRecordsOut"},
            {"id": "0.KafkaSourceReader.topic..partition.0.currentOffset"},
            {"nothing": 1}
        ]);
        assert_eq!(source_topics(&metrics), ["demo_orders", "team.a.clicks"]);
        assert!(source_topics(&json!({})).is_empty());
        let plan = json!({"plan": {"nodes": [{"id": "a1"}, {"id": "b2"}, {"x": 1}]}});
        assert_eq!(plan_vertex_ids(&plan), ["a1", "b2"]);
    }
}
