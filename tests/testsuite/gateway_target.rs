//! The SQL Gateway target against a scripted in-process fake of the gateway and JobManager REST
//! APIs, for what a real Flink cannot be made to do on demand: a connection dropped while reading a
//! result (the statement must not be submitted twice), a rejected statement (the cause extracted from
//! the HTTP 500 body), an expired session (replaced, tables declared again), a query whose
//! operation is in ERROR or whose job FAILED (exit 1 with the failure detail), DECIMAL result values
//! sent as JSON numbers beyond a double's digits. The real engine is
//! covered by `tests/e2e_gateway.rs`.

use flinkpipe::target::gateway::catalog::Definitions;
use flinkpipe::target::{
    GatewaySettings, GatewayTarget, Phase, StatementKind, StatementSpec, Target, TargetError,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the fake does and saw.
#[derive(Default)]
struct State {
    /// Every request, as `METHOD path`.
    log: Vec<String>,
    /// Statements submitted, in order.
    statements: Vec<String>,
    /// Sessions opened.
    sessions: usize,
    /// Result reads to drop (close the connection without an answer) before answering.
    drop_result_reads: usize,
    /// Statements (by substring) the gateway rejects with this cause.
    reject: Vec<(String, String)>,
    /// Sessions the gateway forgot (heartbeat and use answer 500).
    expired: Vec<String>,
    /// Jobs: (jid, name, state, start time).
    jobs: Vec<(String, String, String, i64)>,
    /// JobManager vertices of a job: jid → [(vertex id, name, metric id → value, backpressure level,
    /// input watermarks)].
    vertices: BTreeMap<String, Vec<Vertex>>,
    /// Metric values asked for with `?get=` (decoded), per request.
    metric_gets: Vec<Vec<String>>,
    /// A job's root exception (`GET /jobs/{jid}/exceptions`), by jid.
    exceptions: BTreeMap<String, String>,
    /// A job's plan (`GET /jobs/{jid}/plan`), by jid.
    plans: BTreeMap<String, Value>,
    /// Queries (by substring of their SQL): the raw bodies of result pages `0, 1, …` (`{oh}` is
    /// replaced by the operation handle; a token past the last page answers `NOT_READY`), sent as
    /// written so that JSON numbers keep every digit.
    queries: Vec<(String, Vec<String>)>,
    /// `GET …/operations/{oh}/status` by operation handle (default `RUNNING`).
    op_status: BTreeMap<String, String>,
    /// The raw body of the answer being made (set by [`handle`], sent instead of its JSON).
    raw_body: Option<String>,
    /// The `executionConfig` of each submitted statement, in order (as `statements`).
    configs: Vec<Value>,
    /// Job parameters (`pipeline.global-job-parameters`, parsed `k:v,…`) by jid.
    user_config: BTreeMap<String, Value>,
    /// `GET /jobs/{jid}/checkpoints` by jid.
    checkpoints: BTreeMap<String, Value>,
    /// The job metric `numRestarts` (`GET /jobs/{jid}/metrics?get=numRestarts`) by jid.
    restarts: BTreeMap<String, u64>,
    /// When each job failed (`exceptionHistory.entries[].timestamp`), by jid.
    failures: BTreeMap<String, Vec<i64>>,
}

/// The JobManager's clock (`now` of `GET /jobs/{jid}`), milliseconds.
const JM_NOW: i64 = 1_700_000_100_000;

/// A JobManager vertex with its metrics.
#[derive(Clone)]
struct Vertex {
    id: &'static str,
    name: &'static str,
    metrics: Vec<(&'static str, &'static str)>,
    backpressure: &'static str,
    watermarks: Vec<&'static str>,
}

/// `%5B` → `[`, `%2C` → `,`, … (the fake reads query values as a server would).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(if b[i] == b'+' { b' ' } else { b[i] });
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Fake {
    url: String,
    state: Arc<Mutex<State>>,
}

fn answer(status: u16, body: &Value) -> Vec<u8> {
    let text = body.to_string();
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )
    .into_bytes()
}

fn server_error(cause: &str) -> Value {
    json!({"errors": ["Internal server error.", format!("<Exception on server side:\norg.apache.flink.runtime.rest.handler.RestHandlerException: Failed to fetchResults.\n\tat x\nCaused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to execute the operation o1.\n\tat y\nCaused by: {cause}\n\tat z\nEnd of exception on server side>")]})
}

/// Answers one request; `None` drops the connection.
fn handle(st: &mut State, method: &str, path: &str, body: &str) -> Option<(u16, Value)> {
    st.log.push(format!("{method} {path}"));
    let query = path
        .split_once('?')
        .map(|(_, q)| q.to_string())
        .unwrap_or_default();
    let path = path.split('?').next().unwrap_or(path);
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (method, parts.as_slice()) {
        ("GET", ["v1", "info"]) => Some((
            200,
            json!({"productName": "Apache Flink", "version": "2.2.0"}),
        )),
        ("GET", ["overview"]) => Some((200, json!({"taskmanagers": 1, "slots-available": 4}))),
        ("POST", ["v2", "sessions"]) => {
            st.sessions += 1;
            Some((200, json!({"sessionHandle": format!("s{}", st.sessions)})))
        }
        ("POST", ["v2", "sessions", sh, "heartbeat"]) => {
            if st.expired.iter().any(|e| e == sh) {
                Some((
                    500,
                    json!({"errors": [format!("org.apache.flink.table.gateway.api.utils.SqlGatewayException: Session '{sh}' does not exist.")]}),
                ))
            } else {
                Some((200, json!({})))
            }
        }
        ("POST", ["v2", "sessions", _sh, "statements"]) => {
            let v: Value = serde_json::from_str(body).unwrap();
            let sql = v["statement"].as_str().unwrap().to_string();
            st.statements.push(sql);
            st.configs.push(v["executionConfig"].clone());
            Some((
                200,
                json!({"operationHandle": format!("o{}", st.statements.len())}),
            ))
        }
        ("GET", ["v2", "sessions", _sh, "operations", oh, "result", _token]) => {
            if st.drop_result_reads > 0 {
                st.drop_result_reads -= 1;
                return None;
            }
            let n: usize = oh.trim_start_matches('o').parse().unwrap();
            let sql = st.statements[n - 1].clone();
            if let Some((_, cause)) = st.reject.iter().find(|(k, _)| sql.contains(k.as_str())) {
                return Some((500, server_error(cause)));
            }
            if let Some((_, pages)) = st.queries.iter().find(|(k, _)| sql.contains(k.as_str())) {
                let token: usize = _token.parse().unwrap_or(0);
                st.raw_body = Some(match pages.get(token) {
                    Some(body) => body.replace("{oh}", oh),
                    None => format!(
                        r#"{{"resultType":"NOT_READY","results":{{"columns":[],"data":[]}},"nextResultUri":"/v2/sessions/s/operations/{oh}/result/{token}?rowFormat=JSON"}}"#
                    ),
                });
                return Some((200, Value::Null));
            }
            if sql.starts_with("INSERT") {
                let jid = format!("{:032x}", n);
                let name = match st.configs[n - 1]["pipeline.name"].as_str() {
                    Some(pipeline_name) if !sql.contains("-- name: ") => pipeline_name.to_string(),
                    _ => v_name(&sql),
                };
                st.jobs
                    .push((jid.clone(), name, "RUNNING".into(), 1000 + n as i64));
                let params = st.configs[n - 1]["pipeline.global-job-parameters"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                let tags: serde_json::Map<String, Value> = params
                    .split(',')
                    .filter_map(|kv| kv.split_once(':'))
                    .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                    .collect();
                st.user_config.insert(jid.clone(), Value::Object(tags));
                Some((
                    200,
                    json!({"resultType": "PAYLOAD", "isQueryResult": false, "jobID": jid, "resultKind": "SUCCESS_WITH_CONTENT", "results": {"columns": [], "rowFormat": "JSON", "data": [{"kind": "INSERT", "fields": [jid]}]}, "nextResultUri": format!("/v2/sessions/s/operations/{oh}/result/1?rowFormat=JSON")}),
                ))
            } else {
                Some((
                    200,
                    json!({"resultType": "EOS", "isQueryResult": false, "resultKind": "SUCCESS", "results": {"columns": [], "rowFormat": "JSON", "data": []}}),
                ))
            }
        }
        ("GET", ["v2", "sessions", _, "operations", oh, "status"]) => Some((
            200,
            json!({"status": st.op_status.get(*oh).map_or("RUNNING", String::as_str)}),
        )),
        ("GET", ["jobs", jid])
            if !st.vertices.contains_key(*jid) && st.jobs.iter().any(|j| j.0 == *jid) =>
        {
            let state = st.jobs.iter().find(|j| j.0 == *jid).unwrap().2.clone();
            Some((
                200,
                json!({"jid": jid, "state": state, "now": JM_NOW, "vertices": []}),
            ))
        }
        ("DELETE", ["v2", "sessions", _, "operations", _, "close"]) => {
            Some((200, json!({"status": "CLOSED"})))
        }
        ("GET", ["jobs", "overview"]) => Some((
            200,
            json!({"jobs": st.jobs.iter().map(|(j, n, s, t)| json!({"jid": j, "name": n, "state": s, "start-time": t})).collect::<Vec<_>>()}),
        )),
        ("GET", ["jobs", jid]) if st.vertices.contains_key(*jid) => Some((
            200,
            json!({"jid": jid, "state": "RUNNING", "vertices": st.vertices[*jid].iter().map(|v| json!({"id": v.id, "name": v.name, "parallelism": 2, "status": "RUNNING"})).collect::<Vec<_>>()}),
        )),
        ("GET", ["jobs", jid, "vertices", vid, what]) => {
            let v = st
                .vertices
                .get(*jid)
                .and_then(|vs| vs.iter().find(|v| v.id == *vid))
                .cloned()?;
            match *what {
                "metrics" => {
                    let get = query
                        .split('&')
                        .find_map(|kv| kv.strip_prefix("get="))
                        .map(percent_decoded);
                    match get {
                        None => Some((
                            200,
                            json!(v.metrics.iter().map(|(id, _)| json!({"id": id})).collect::<Vec<_>>()),
                        )),
                        Some(ids) => {
                            let ids: Vec<String> = ids.split(',').map(str::to_string).collect();
                            st.metric_gets.push(ids.clone());
                            Some((
                                200,
                                json!(v.metrics.iter().filter(|(id, _)| ids.iter().any(|i| i == id)).map(|(id, val)| json!({"id": id, "value": val})).collect::<Vec<_>>()),
                            ))
                        }
                    }
                }
                "backpressure" => Some((
                    200,
                    json!({"status": "ok", "backpressureLevel": v.backpressure, "end-timestamp": 1, "subtasks": []}),
                )),
                "watermarks" => Some((
                    200,
                    json!(v.watermarks.iter().enumerate().map(|(i, w)| json!({"id": format!("{i}.currentInputWatermark"), "value": w})).collect::<Vec<_>>()),
                )),
                _ => Some((404, json!({"errors": ["Not found"]}))),
            }
        }
        ("GET", ["jobs", jid, "checkpoints"]) => Some((
            200,
            st.checkpoints
                .get(*jid)
                .cloned()
                .unwrap_or(json!({"latest": {"savepoint": null, "restored": null}})),
        )),
        ("GET", ["jobs", jid, "metrics"]) => Some((
            200,
            match st.restarts.get(*jid) {
                Some(n) if query.contains("numRestarts") => {
                    json!([{"id": "numRestarts", "value": n.to_string()}])
                }
                _ => json!([]),
            },
        )),
        ("GET", ["jobs", jid, "plan"]) => match st.plans.get(*jid) {
            Some(p) => Some((200, p.clone())),
            None => Some((404, json!({"errors": ["Job not found"]}))),
        },
        ("GET", ["jobs", jid, "exceptions"]) => Some((
            200,
            json!({"root-exception": st.exceptions.get(*jid), "exceptionHistory": {"entries": st.failures.get(*jid).into_iter().flatten().map(|t| json!({"exceptionName": "java.lang.ArithmeticException", "stacktrace": "x", "timestamp": t})).collect::<Vec<_>>()}}),
        )),
        ("GET", ["jobs", jid, "config"]) => {
            let name = st
                .jobs
                .iter()
                .find(|j| j.0 == *jid)
                .map(|j| j.1.clone())
                .unwrap_or_default();
            let user = st.user_config.get(*jid).cloned().unwrap_or(json!({}));
            Some((
                200,
                json!({"jid": jid, "name": name, "execution-config": {"user-config": user}}),
            ))
        }
        _ => Some((404, json!({"errors": [format!("Not found: {path}")]}))),
    }
}

/// The name of a job when its statement has no `pipeline.name` (as a deploy sets): the test
/// statements carry their name in a comment `-- name: <n>`, which wins.
fn v_name(sql: &str) -> String {
    sql.lines()
        .find_map(|l| l.trim().strip_prefix("-- name: "))
        .unwrap_or("job")
        .to_string()
}

impl Fake {
    async fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let st = st.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let (head, body) = loop {
                        let n = sock.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some(i) = text.find("\r\n\r\n") {
                            let head = text[..i].to_string();
                            let len: usize = head
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse().unwrap_or(0))
                                })
                                .unwrap_or(0);
                            if buf.len() >= i + 4 + len {
                                break (head, text[i + 4..i + 4 + len].to_string());
                            }
                        }
                    };
                    let mut first = head.lines().next().unwrap_or("").split(' ');
                    let (method, path) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
                    let (reply, raw) = {
                        let mut g = st.lock().unwrap();
                        let reply = handle(&mut g, method, path, &body);
                        (reply, g.raw_body.take())
                    };
                    match (reply, raw) {
                        (Some((status, _)), Some(text)) => {
                            let head = format!(
                                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                text.len()
                            );
                            let _ = sock.write_all(head.as_bytes()).await;
                            let _ = sock.write_all(text.as_bytes()).await;
                        }
                        (Some((status, v)), None) => {
                            let _ = sock.write_all(&answer(status, &v)).await;
                        }
                        (None, _) => {}
                    }
                    let _ = sock.shutdown().await;
                });
            }
        });
        Fake { url, state }
    }

    fn target(&self, specs: Vec<StatementSpec>) -> GatewayTarget {
        let mut s = GatewaySettings::new(&self.url, &self.url);
        s.retry.initial = std::time::Duration::from_millis(10);
        GatewayTarget::new(s, Definitions::new(specs)).unwrap()
    }
}

fn spec(name: &str, sql: &str, kind: StatementKind) -> StatementSpec {
    StatementSpec {
        name: name.into(),
        sql: sql.into(),
        properties: BTreeMap::new(),
        kind,
        compute_pool: None,
    }
}

fn project() -> Vec<StatementSpec> {
    vec![
        spec(
            "dev-ddl-src",
            "CREATE TABLE src (a INT) WITH ('connector' = 'datagen')",
            StatementKind::Ddl,
        ),
        spec(
            "dev-ddl-snk",
            "CREATE TABLE snk (a INT) WITH ('connector' = 'blackhole')",
            StatementKind::Ddl,
        ),
        spec(
            "dev-dml-snk",
            "INSERT INTO snk\n-- name: dev-dml-snk\nSELECT a FROM src",
            StatementKind::Dml,
        ),
    ]
}

#[tokio::test]
async fn a_lost_result_read_is_retried_and_never_submits_twice() {
    let fake = Fake::start().await;
    let specs = project();
    let t = fake.target(specs.clone());
    // The two declarations read their results fine; the INSERT's first two result reads are dropped.
    fake.state.lock().unwrap().drop_result_reads = 0;
    let dml = &specs[2];
    // Declare first (DDL), then arm the fault for the INSERT only.
    t.create_statement(&specs[0]).await.unwrap();
    t.create_statement(&specs[1]).await.unwrap();
    fake.state.lock().unwrap().drop_result_reads = 2;
    let s = t.create_statement(dml).await.unwrap();
    assert_eq!(s.phase, Phase::Pending, "{s:?}");
    {
        let st = fake.state.lock().unwrap();
        let inserts = st
            .statements
            .iter()
            .filter(|s| s.starts_with("INSERT"))
            .count();
        assert_eq!(inserts, 1, "submitted once: {:?}", st.statements);
        assert_eq!(st.jobs.len(), 1);
    }
    // A second create finds the running job: no duplicate.
    let again = t.create_statement(dml).await;
    assert!(
        matches!(again, Err(flinkpipe::target::TargetError::AlreadyExists(_))),
        "{again:?}"
    );
    assert_eq!(
        t.get_statement("dev-dml-snk").await.unwrap().unwrap().phase,
        Phase::Running
    );
}

#[tokio::test]
async fn a_rejected_statement_fails_with_the_gateways_cause_and_declares_its_tables_first() {
    let fake = Fake::start().await;
    let specs = project();
    fake.state.lock().unwrap().reject.push((
        "INSERT".into(),
        "org.apache.flink.table.api.ValidationException: SQL validation failed. From line 1, column 8 to line 1, column 9: Column 'b' not found in any table".into(),
    ));
    let t = fake.target(specs.clone());
    // A new session knows no table: both are declared from the project before the INSERT.
    let s = t.create_statement(&specs[2]).await.unwrap();
    assert_eq!(s.phase, Phase::Failed);
    assert_eq!(
        s.detail,
        "ValidationException: SQL validation failed. From line 1, column 8 to line 1, column 9: Column 'b' not found in any table"
    );
    {
        let st = fake.state.lock().unwrap();
        assert_eq!(st.statements.len(), 3, "{:?}", st.statements);
        assert!(
            st.statements[0].contains("CREATE TABLE src")
                || st.statements[0].contains("CREATE TABLE snk")
        );
        assert!(st.statements[2].starts_with("INSERT"));
    }
    // The failure is what the statement reads as, with its cause, until a job exists.
    let got = t.get_statement("dev-dml-snk").await.unwrap().unwrap();
    assert_eq!(got.phase, Phase::Failed);
    assert!(got.detail.contains("Column 'b' not found"));
}

#[tokio::test]
async fn an_unknown_gateway_is_a_clear_connection_error() {
    let s = GatewaySettings::new("http://127.0.0.1:9", "http://127.0.0.1:9");
    let mut s = s;
    s.retry.max_attempts = 1;
    let t = GatewayTarget::new(s, Definitions::default()).unwrap();
    let e = t.check_compute_pool().await.unwrap_err().to_string();
    assert!(
        e.contains("connection failed (http://127.0.0.1:9)") && e.contains("local-flink.sh status"),
        "{e}"
    );
    let bad = GatewayTarget::new(
        GatewaySettings::new("ftp://x", "http://y"),
        Definitions::default(),
    );
    assert!(bad.is_err());
}

#[tokio::test]
async fn an_expired_session_is_replaced_and_its_tables_declared_again() {
    let fake = Fake::start().await;
    let specs = project();
    let mut settings = GatewaySettings::new(&fake.url, &fake.url);
    settings.heartbeat_after = std::time::Duration::ZERO;
    let t = GatewayTarget::new(settings, Definitions::new(specs.clone())).unwrap();
    t.create_statement(&specs[0]).await.unwrap();
    t.create_statement(&specs[1]).await.unwrap();
    fake.state.lock().unwrap().expired.push("s1".into());
    let s = t.create_statement(&specs[2]).await.unwrap();
    assert_eq!(s.phase, Phase::Pending, "{s:?}");
    let st = fake.state.lock().unwrap();
    assert_eq!(st.sessions, 2, "a new session: {:?}", st.log);
    // In the new session both tables are declared again before the INSERT.
    let after: Vec<&String> = st.statements[2..].iter().collect();
    assert_eq!(after.len(), 3, "{after:?}");
    assert!(
        after[..2].iter().all(|s| s.starts_with("CREATE TABLE")),
        "{after:?}"
    );
    assert!(after[2].starts_with("INSERT"));
}

/// A deleted statement whose job had finished stays deleted in the next run (the JobManager keeps the
/// job in its history): a redeploy after an undeploy runs the seed again.
#[tokio::test]
async fn a_deleted_finished_job_stays_deleted_across_runs() {
    let fake = Fake::start().await;
    fake.state.lock().unwrap().jobs.push((
        format!("{:032x}", 7),
        "dev-dml-seed".into(),
        "FINISHED".into(),
        5,
    ));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".flinkpipe/gateway-deleted-jobs.json");
    let target = |file: Option<std::path::PathBuf>| {
        let mut s = GatewaySettings::new(&fake.url, &fake.url);
        s.deleted_jobs_file = file;
        GatewayTarget::new(s, Definitions::default()).unwrap()
    };
    let first = target(Some(file.clone()));
    assert_eq!(
        first
            .get_statement("dev-dml-seed")
            .await
            .unwrap()
            .unwrap()
            .phase,
        Phase::Completed
    );
    assert!(first.delete_statement("dev-dml-seed").await.unwrap());
    assert!(first.get_statement("dev-dml-seed").await.unwrap().is_none());
    // The next run reads the file.
    let next = target(Some(file.clone()));
    assert!(next.get_statement("dev-dml-seed").await.unwrap().is_none());
    assert!(
        !next
            .list_statements()
            .await
            .unwrap()
            .iter()
            .any(|s| s.name == "dev-dml-seed")
    );
    // Without the file the JobManager's history shows it again.
    let forgetful = target(None);
    assert!(
        forgetful
            .get_statement("dev-dml-seed")
            .await
            .unwrap()
            .is_some()
    );
    let ids: Vec<String> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(ids, vec![format!("{:032x}", 7)]);
}

#[tokio::test]
async fn runtime_metrics_come_from_the_jobmanager_of_each_running_job() {
    let fake = Fake::start().await;
    let specs = project();
    let t = fake.target(specs.clone());
    for s in &specs {
        t.create_statement(s).await.unwrap();
    }
    let jid = fake.state.lock().unwrap().jobs[0].0.clone();
    fake.state.lock().unwrap().vertices.insert(
        jid,
        vec![
            Vertex {
                id: "v1",
                name: "Source: src[1] -> Calc[2]",
                metrics: vec![
                    ("0.Source__src[1].numRecordsIn", "0"),
                    ("0.Source__src[1].numRecordsOut", "100"),
                    ("1.Source__src[1].numRecordsOut", "50"),
                    ("0.Source__src[1].pendingRecords", "7"),
                    ("1.Source__src[1].pendingRecords", "3"),
                    ("0.numRecordsOut", "150"),
                    ("0.Calc[2].numRecordsIn", "150"),
                ],
                backpressure: "high",
                watermarks: vec![],
            },
            Vertex {
                id: "v2",
                name: "snk[3]: Writer",
                metrics: vec![
                    ("0.snk[3]__Writer.numRecordsIn", "90"),
                    ("1.snk[3]__Writer.numRecordsIn", "50"),
                    ("0.snk[3]__Writer.numRecordsSend", "140"),
                ],
                backpressure: "ok",
                watermarks: vec!["1700000005000", "1700000000000"],
            },
        ],
    );
    let names = vec![
        "dev-dml-snk".to_string(),
        "dev-ddl-snk".to_string(),
        "dev-dml-absent".to_string(),
    ];
    let m = t.runtime_metrics(&names).await.unwrap();
    assert_eq!(
        m.keys().collect::<Vec<_>>(),
        vec!["dev-dml-snk"],
        "only running jobs"
    );
    let snk = &m["dev-dml-snk"];
    assert_eq!(
        snk.records_in,
        Some(150),
        "sources' numRecordsOut, both subtasks"
    );
    assert_eq!(snk.records_out, Some(140), "records that reached the sink");
    assert_eq!(snk.pending_records, Some(10));
    assert_eq!(
        snk.watermark_ms,
        Some(1_700_000_000_000),
        "the slowest subtask"
    );
    assert_eq!(
        snk.backpressure,
        Some(flinkpipe::target::metrics::Backpressure::High)
    );
    assert_eq!(snk.counted, flinkpipe::target::metrics::Counted::SinceStart);
    // Only the metrics it uses are asked for, by their exact ids.
    let gets = fake.state.lock().unwrap().metric_gets.clone();
    assert_eq!(
        gets[0],
        vec![
            "0.Source__src[1].numRecordsOut",
            "1.Source__src[1].numRecordsOut",
            "0.Source__src[1].pendingRecords",
            "1.Source__src[1].pendingRecords"
        ]
    );
}

/// A query whose job fails (a missing topic): the gateway's result read says only "Failed to fetch
/// next result"; the error also gives the job's own failure from the JobManager (found by the query's
/// job name, as no result page named the job yet).
#[tokio::test]
async fn a_failed_query_names_its_jobs_failure() {
    let fake = Fake::start().await;
    {
        let mut st = fake.state.lock().unwrap();
        st.reject.push((
            "FROM orders".into(),
            "java.lang.RuntimeException: Failed to fetch next result".into(),
        ));
        let jid = format!("{:032x}", 77);
        st.jobs
            .push((jid.clone(), "dev-query-1".into(), "FAILED".into(), 5));
        st.jobs
            .push((format!("{:032x}", 78), "other".into(), "FAILED".into(), 9));
        st.exceptions.insert(
            jid,
            "org.apache.flink.runtime.JobException: Recovery is suppressed\n\tat a\nCaused by: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition. [orders_v2]\n\tat b".to_string(),
        );
    }
    let t = fake.target(Vec::new());
    let mut q = t
        .start_query(&spec(
            "dev-query-1",
            "SELECT * FROM orders",
            StatementKind::Dml,
        ))
        .await
        .unwrap();
    let err = q.next_page().await.unwrap_err().to_string();
    assert!(
        err.contains("RuntimeException: Failed to fetch next result; the job failed: UnknownTopicOrPartitionException: This server does not host this topic-partition. [orders_v2]"),
        "{err}"
    );
    q.close().await.unwrap();
}

/// A wrong gateway address with a JobManager that answers: listing statements (what `pipeline
/// status` and plans read) is a connection error naming the gateway, not a status that looks fine.
#[tokio::test]
async fn listing_statements_checks_the_gateway_not_only_the_jobmanager() {
    let fake = Fake::start().await;
    let mut s = GatewaySettings::new("http://127.0.0.1:9", &fake.url);
    s.retry.max_attempts = 1;
    let t = GatewayTarget::new(s, Definitions::default()).unwrap();
    let e = t.list_statements().await.unwrap_err().to_string();
    assert!(e.contains("connection failed (http://127.0.0.1:9)"), "{e}");
    // With the right address it lists.
    assert!(fake.target(Vec::new()).list_statements().await.is_ok());
}

/// Every statement shape that can replace a running job is checked with `EXPLAIN` (chosen by the SQL
/// front end's statement kind, not a text prefix): INSERT INTO / OVERWRITE, `EXECUTE INSERT`, the
/// Spark order `WITH … INSERT`, both statement-set forms, CTAS, a leading comment. A job text the
/// gateway cannot check is never reported as checked: the dry run says "not checked" and the
/// validation the executor relies on fails.
#[tokio::test]
async fn every_job_shape_is_explained_and_what_cannot_be_is_not_passed() {
    use flinkpipe::target::Checked;
    use flinkpipe::target::gateway::explain_sql;
    let shapes = [
        "INSERT INTO snk SELECT a FROM src",
        "INSERT OVERWRITE snk SELECT a FROM src",
        "EXECUTE INSERT INTO snk SELECT a FROM src",
        "WITH x AS (SELECT a FROM src) INSERT INTO snk SELECT a FROM x",
        "INSERT INTO snk WITH x AS (SELECT a FROM src) SELECT a FROM x",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO snk SELECT a FROM src; END",
        "BEGIN STATEMENT SET;\nINSERT INTO snk SELECT a FROM src;\nEND;",
        "CREATE TABLE snk2 AS SELECT a FROM src",
        "-- the sink\nINSERT INTO snk SELECT a FROM src",
    ];
    for sql in shapes {
        let s = spec("dev-dml-x", sql, StatementKind::Dml);
        let explain = explain_sql(&s).unwrap_or_else(|| panic!("not explained: {sql}"));
        assert!(
            explain.starts_with("EXPLAIN ") && !explain.contains("EXPLAIN EXECUTE"),
            "{sql}: {explain}"
        );
        let fake = Fake::start().await;
        let t = fake.target(project());
        assert_eq!(t.dry_run_statement(&s).await, Ok(Checked::Valid), "{sql}");
        t.validate_statement(&s).await.unwrap();
        let sent = fake.state.lock().unwrap().statements.clone();
        assert!(
            sent.last().is_some_and(|l| l.starts_with("EXPLAIN")),
            "{sql}: {sent:?}"
        );
        // The planner's rejection is the check's answer.
        fake.state.lock().unwrap().reject.push((
            "EXPLAIN".into(),
            "org.apache.flink.table.api.ValidationException: Object 'nope' not found".into(),
        ));
        assert!(
            matches!(t.validate_statement(&s).await, Err(TargetError::Invalid(c)) if c.contains("Object 'nope' not found")),
            "{sql}"
        );
    }
    // Job texts EXPLAIN does not take: not checked, and validation fails instead of passing.
    for sql in ["SELECT a FROM src", "CALL `sys`.`compact`('snk')"] {
        let s = spec("dev-dml-x", sql, StatementKind::Dml);
        assert_eq!(explain_sql(&s), None, "{sql}");
        let fake = Fake::start().await;
        let t = fake.target(project());
        assert!(
            matches!(t.dry_run_statement(&s).await, Ok(Checked::NotChecked(_))),
            "{sql}"
        );
        assert!(t.validate_statement(&s).await.is_err(), "{sql}");
    }
    // A DDL has nothing to explain and replaces no job.
    let ddl = spec("dev-ddl-x", "CREATE TABLE x (a INT)", StatementKind::Ddl);
    assert_eq!(explain_sql(&ddl), None);
}

#[tokio::test]
async fn the_external_ddl_hint_is_given_only_for_a_table_nothing_declares() {
    // A column typo over a table the session declared (a unit test's `_ut` table, created by its
    // test DDL, which the project's definitions do not hold): the gateway's cause alone.
    let fake = Fake::start().await;
    let column = "ValidationException: SQL validation failed. From line 3, column 8 to line 3, column 13: Column 'regoin' not found in any table";
    fake.state.lock().unwrap().reject.push((
        "regoin".into(),
        format!("org.apache.flink.table.api.{column}"),
    ));
    let t = fake.target(project());
    let ut_ddl = spec(
        "dev-ut-ddl-src-ut",
        "CREATE TABLE src_ut (a INT, region STRING) WITH ('connector' = 'datagen')",
        StatementKind::Ddl,
    );
    t.create_statement(&ut_ddl).await.unwrap();
    let typo = spec(
        "dev-ut-ins-snk",
        "INSERT INTO snk\n-- name: dev-ut-ins-snk\nSELECT regoin FROM src_ut",
        StatementKind::Dml,
    );
    let s = t.create_statement(&typo).await.unwrap();
    assert_eq!(s.phase, Phase::Failed);
    assert_eq!(s.detail, column);

    // An external table nothing declares (no external_ddl): the hint, naming only that table.
    let fake = Fake::start().await;
    let object = "ValidationException: SQL validation failed. From line 3, column 15 to line 3, column 17: Object 'ext' not found";
    fake.state.lock().unwrap().reject.push((
        "JOIN ext".into(),
        format!("org.apache.flink.table.api.{object}"),
    ));
    let t = fake.target(project());
    let reads_ext = spec(
        "dev-dml-snk",
        "INSERT INTO snk\n-- name: dev-dml-snk\nSELECT src.a FROM src JOIN ext ON src.a = ext.a",
        StatementKind::Dml,
    );
    let s = t.create_statement(&reads_ext).await.unwrap();
    assert_eq!(s.phase, Phase::Failed);
    assert_eq!(
        s.detail,
        format!(
            "{object} (no DDL defines ext: an external table needs its DDL in flinkpipe.gateway.external_ddl)"
        )
    );
}

/// Who still reads blue on the SQL Gateway: a job that is not the project's has no SQL text, so
/// the tables it reads come from its job plan (the newest job of that name; a CANCELED older job
/// does not speak for it); a name without a job reads nothing that can be told.
#[tokio::test]
async fn the_tables_a_foreign_job_reads_come_from_its_plan() {
    let fake = Fake::start().await;
    {
        let mut st = fake.state.lock().unwrap();
        st.jobs.push((
            format!("{:032x}", 100),
            "team-b-order-report".into(),
            "CANCELED".into(),
            10,
        ));
        st.jobs.push((
            format!("{:032x}", 101),
            "team-b-order-report".into(),
            "RUNNING".into(),
            20,
        ));
        st.plans.insert(
            format!("{:032x}", 101),
            json!({"plan": {"jid": format!("{:032x}", 101), "name": "team-b-order-report", "nodes": [
                {"id": "a", "description": "[3]:Sink(table=[default_catalog.default_database.team_b_report], fields=[id])"},
                {"id": "b", "description": "[1]:TableSourceScan(table=[[default_catalog, default_database, int_sales_orders_enriched, project=[id]]], fields=[id])<br/>+- [2]:Calc(select=[id])"}
            ]}}),
        );
    }
    let t = fake.target(project());
    assert_eq!(
        t.statement_reads("team-b-order-report").await.unwrap(),
        Some(vec!["int_sales_orders_enriched".to_string()])
    );
    assert_eq!(t.statement_reads("nobody").await.unwrap(), None);
    let listed = t.list_statements().await.unwrap();
    let job = listed
        .iter()
        .find(|s| s.name == "team-b-order-report")
        .unwrap();
    assert_eq!(job.phase, Phase::Running);
    assert!(job.sql.contains("SQL not in the project"), "{}", job.sql);
}

/// A query's result page as the gateway writes it: `rows` are raw JSON `fields` arrays (numbers as
/// written), `next` the token of the next page (`None`: the last page, `EOS` follows).
fn result_page(jid: &str, columns: &str, rows: &[&str], next: Option<usize>) -> String {
    let data: Vec<String> = rows
        .iter()
        .map(|f| format!(r#"{{"kind":"INSERT","fields":{f}}}"#))
        .collect();
    let next = next.map_or(String::new(), |t| {
        format!(r#","nextResultUri":"/v2/sessions/s1/operations/{{oh}}/result/{t}?rowFormat=JSON""#)
    });
    format!(
        r#"{{"resultType":"PAYLOAD","isQueryResult":true,"jobID":"{jid}","resultKind":"SUCCESS_WITH_CONTENT","results":{{"columns":{columns},"rowFormat":"JSON","data":[{}]}}{next}}}"#,
        data.join(",")
    )
}

const EOS: &str = r#"{"resultType":"EOS","isQueryResult":true,"resultKind":"SUCCESS_WITH_CONTENT","results":{"columns":[],"data":[]}}"#;

/// Issue #21 item 4 on the SQL Gateway: a DECIMAL sent as a JSON number keeps every digit (a
/// `DECIMAL(38, 10)` does not fit a double) and its declared scale, Java's `0E-10` included; a
/// TIMESTAMP(9) keeps its nanoseconds; the column's type numbers are still read.
#[tokio::test]
async fn gateway_decimals_keep_their_digits_and_scale() {
    use flinkpipe::target::read::{Quiet, ReadOptions, read};
    let fake = Fake::start().await;
    let jid = format!("{:032x}", 91);
    let columns = r#"[{"name":"price","logicalType":{"type":"DECIMAL","nullable":true,"precision":38,"scale":10}},{"name":"small","logicalType":{"type":"DECIMAL","nullable":true,"precision":10,"scale":2}},{"name":"at","logicalType":{"type":"TIMESTAMP_WITHOUT_TIME_ZONE","nullable":true,"precision":9}},{"name":"n","logicalType":{"type":"BIGINT","nullable":true}}]"#;
    fake.state.lock().unwrap().queries.push((
        "FROM prices".into(),
        vec![
            result_page(
                &jid,
                columns,
                &[
                    r#"[12345678901234567890.1234567890,12.5,"2025-01-01 10:00:00.123456789",9007199254740993]"#,
                    r#"[0E-10,35,null,-1]"#,
                ],
                Some(1),
            ),
            EOS.to_string(),
        ],
    ));
    let t = fake.target(Vec::new());
    let mut q = t
        .start_query(&spec(
            "dev-query-9",
            "SELECT * FROM prices",
            StatementKind::Dml,
        ))
        .await
        .unwrap();
    let r = read(
        q.as_mut(),
        &ReadOptions::default(),
        false,
        &Quiet,
        std::future::pending(),
    )
    .await
    .unwrap();
    let types: Vec<&str> = r.columns.iter().map(|c| c.type_name.as_str()).collect();
    assert_eq!(
        types,
        [
            "DECIMAL(38, 10)",
            "DECIMAL(10, 2)",
            "TIMESTAMP(9)",
            "BIGINT"
        ]
    );
    assert!(r.complete);
    let json: Vec<String> = r
        .rows
        .iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&r.columns)
                .map(|(v, c)| {
                    serde_json::to_string(&flinkpipe::results::value::JsonCell {
                        value: v,
                        type_name: &c.type_name,
                    })
                    .unwrap()
                })
                .collect();
            cells.join(",")
        })
        .collect();
    assert_eq!(
        json,
        [
            r#"12345678901234567890.1234567890,12.50,"2025-01-01T10:00:00.123456789",9007199254740993"#,
            "0.0000000000,35.00,null,-1",
        ]
    );
}

/// Runs `flinkpipe ARGS` against the fake gateway (and JobManager) from an empty directory, while
/// the fake keeps answering on this runtime.
async fn cli(fake: &Fake, args: &[&str]) -> crate::support::test::Outcome {
    run_in(&crate::support::Test::empty().gateway(&fake.url), args).await
}

/// Runs `flinkpipe ARGS` in the project of `t` off this runtime's thread, so that the fake keeps
/// answering while the binary runs.
async fn run_in(t: &crate::support::Test, args: &[&str]) -> crate::support::test::Outcome {
    let mut cmd = t.command(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    t.outcome(&args.join(" "), out)
}

const ORDERS_COLUMNS: &str = r#"[{"name":"id","logicalType":{"type":"BIGINT","nullable":true}}]"#;
const TOPIC_GONE: &str = "org.apache.flink.runtime.JobException: Recovery is suppressed\n\tat a\nCaused by: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition. [orders]\n\tat b";

/// Issue #21 item 2 on the SQL Gateway: a query whose operation is in ERROR when its results end
/// (EOS) is exit 1 with the job's failure detail, never `complete`; one whose job FAILED while the
/// read stops at `--idle` is exit 1 too. Either way the operation is closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_gateway_query_is_exit_1_with_its_failure_whatever_stops_the_read() {
    let jid = format!("{:032x}", 93);
    // Operation ERROR, results ended.
    let fake = Fake::start().await;
    {
        let mut st = fake.state.lock().unwrap();
        st.queries.push((
            "FROM orders".into(),
            vec![
                result_page(&jid, ORDERS_COLUMNS, &["[1]"], Some(1)),
                EOS.to_string(),
            ],
        ));
        for n in 1..=9 {
            st.op_status.insert(format!("o{n}"), "ERROR".into());
        }
        st.exceptions.insert(jid.clone(), TOPIC_GONE.into());
    }
    let o = cli(
        &fake,
        &["--output", "json", "sql", "query", "SELECT * FROM orders"],
    )
    .await;
    let err = o.stderr_raw();
    let o = o.code(1);
    assert!(
        err.contains("failed (operation ERROR)")
            && err.contains("UnknownTopicOrPartitionException"),
        "{err}"
    );
    assert!(!o.stdout_raw().contains("\"complete\""));
    let log = fake.state.lock().unwrap().log.clone();
    assert!(
        log.iter()
            .any(|l| l.starts_with("DELETE") && l.ends_with("/close")),
        "{log:?}"
    );
    // Job FAILED mid-stream; the results go on NOT_READY; the read stops at --idle.
    let fake = Fake::start().await;
    {
        let mut st = fake.state.lock().unwrap();
        st.queries.push((
            "FROM orders".into(),
            vec![result_page(&jid, ORDERS_COLUMNS, &["[1]", "[2]"], Some(1))],
        ));
        st.jobs
            .push((jid.clone(), "dev-usw2-query".into(), "FAILED".into(), 5));
        st.exceptions.insert(jid.clone(), TOPIC_GONE.into());
    }
    let o = cli(
        &fake,
        &["sql", "query", "SELECT * FROM orders", "--idle", "0.3"],
    )
    .await;
    let err = o.stderr_raw();
    o.code(1);
    assert!(
        err.contains("failed (job FAILED)") && err.contains("UnknownTopicOrPartitionException"),
        "{err}"
    );
    assert!(!err.contains("stopped after"), "{err}");
    let log = fake.state.lock().unwrap().log.clone();
    assert!(
        log.iter()
            .any(|l| l.starts_with("DELETE") && l.ends_with("/close")),
        "{log:?}"
    );
}

/// Issue #21 item 3 on the SQL Gateway: nested types named from the camelCase `logicalType`
/// (`elementType`, `keyType`, `valueType`, `fields[].fieldType`) and their values typed recursively
/// (a DECIMAL inside keeps its digits and scale).
#[tokio::test]
async fn gateway_nested_types_are_named_and_typed_recursively() {
    use flinkpipe::target::read::{Quiet, ReadOptions, read};
    let fake = Fake::start().await;
    let jid = format!("{:032x}", 95);
    let columns = r#"[
        {"name":"ids","logicalType":{"type":"ARRAY","nullable":true,"elementType":{"type":"BIGINT","nullable":true}}},
        {"name":"prices","logicalType":{"type":"MAP","nullable":true,"keyType":{"type":"VARCHAR","nullable":true,"length":2147483647},"valueType":{"type":"DECIMAL","nullable":true,"precision":10,"scale":2}}},
        {"name":"bag","logicalType":{"type":"MULTISET","nullable":true,"elementType":{"type":"VARCHAR","nullable":true,"length":2147483647}}},
        {"name":"who","logicalType":{"type":"ROW","nullable":true,"fields":[{"name":"id","fieldType":{"type":"BIGINT","nullable":true}},{"name":"paid","fieldType":{"type":"DECIMAL","nullable":true,"precision":38,"scale":10}}]}}
    ]"#;
    fake.state.lock().unwrap().queries.push((
        "FROM nested".into(),
        vec![
            result_page(
                &jid,
                columns,
                &[r#"[[1,2,null],{"eur":12.5},{"red":2},{"id":7,"paid":12345678901234567890.1234567890}]"#],
                Some(1),
            ),
            EOS.to_string(),
        ],
    ));
    let t = fake.target(Vec::new());
    let mut q = t
        .start_query(&spec(
            "dev-query-10",
            "SELECT * FROM nested",
            StatementKind::Dml,
        ))
        .await
        .unwrap();
    let r = read(
        q.as_mut(),
        &ReadOptions::default(),
        false,
        &Quiet,
        std::future::pending(),
    )
    .await
    .unwrap();
    let types: Vec<&str> = r.columns.iter().map(|c| c.type_name.as_str()).collect();
    assert_eq!(
        types,
        [
            "ARRAY<BIGINT>",
            "MAP<STRING, DECIMAL(10, 2)>",
            "MULTISET<STRING>",
            "ROW<id BIGINT, paid DECIMAL(38, 10)>"
        ]
    );
    let cells: Vec<String> = r.rows[0]
        .iter()
        .zip(&r.columns)
        .map(|(v, c)| {
            serde_json::to_string(&flinkpipe::results::value::JsonCell {
                value: v,
                type_name: &c.type_name,
            })
            .unwrap()
        })
        .collect();
    assert_eq!(
        cells,
        [
            "[1,2,null]",
            r#"{"eur":12.50}"#,
            r#"{"red":2}"#,
            r#"{"id":7,"paid":12345678901234567890.1234567890}"#
        ]
    );
}

/// Issue #21 item 5 on the SQL Gateway (which does not say whether a result is append-only): a row
/// limit reached with only `+I` asks `EXPLAIN CHANGELOG_MODE` once; a root in `[I]` stops the read at
/// the limit, any other mode reads on to the stop condition (here `idle`) and keeps every row.
#[tokio::test]
async fn a_row_limit_on_the_gateway_stops_early_only_for_an_append_only_plan() {
    use flinkpipe::target::read::{Quiet, ReadOptions, StopReason, read};
    for (root, stop, rows) in [
        (
            "Calc(select=[id], changelogMode=[I])",
            StopReason::MaxRows,
            1,
        ),
        (
            "GroupAggregate(groupBy=[id], select=[id], changelogMode=[I,UA])",
            StopReason::Idle,
            2,
        ),
    ] {
        let fake = Fake::start().await;
        let jid = format!("{:032x}", 97);
        let plan = serde_json::to_string(&format!(
            "== Abstract Syntax Tree ==\nx\n\n== Optimized Physical Plan ==\n{root}\n+- Values(changelogMode=[I])\n"
        ))
        .unwrap();
        {
            let mut st = fake.state.lock().unwrap();
            st.queries.push((
                "EXPLAIN CHANGELOG_MODE".into(),
                vec![result_page(
                    "",
                    r#"[{"name":"result","logicalType":{"type":"VARCHAR","length":2147483647}}]"#,
                    &[&format!("[{plan}]")],
                    None,
                )],
            ));
            st.queries.push((
                "FROM clicks".into(),
                vec![result_page(&jid, ORDERS_COLUMNS, &["[1]", "[2]"], Some(1))],
            ));
        }
        let t = fake.target(Vec::new());
        let mut q = t
            .start_query(&spec(
                "dev-query-11",
                "SELECT id FROM clicks",
                StatementKind::Dml,
            ))
            .await
            .unwrap();
        let options = ReadOptions {
            max_rows: Some(1),
            idle: std::time::Duration::from_millis(200),
            ..ReadOptions::default()
        };
        let r = read(q.as_mut(), &options, false, &Quiet, std::future::pending())
            .await
            .unwrap();
        assert_eq!((r.stopped_by, r.total_rows), (stop, rows), "{root}");
        assert_eq!(r.rows.len(), 1);
        assert!(r.partial);
        let st = fake.state.lock().unwrap();
        let explains = st
            .statements
            .iter()
            .filter(|s| s.starts_with("EXPLAIN CHANGELOG_MODE SELECT id FROM clicks"))
            .count();
        assert_eq!(explains, 1, "{:?}", st.statements);
    }
}

/// A job carries its SQL text and properties in its job parameters, so a statement the project no
/// longer defines that way reads back the text that really runs (what an upgrade is judged on); a
/// start from a savepoint sends the recovery path (and, for the offsets only, the setting that leaves
/// unclaimed state behind); where the job restored from is read from its checkpoints.
#[tokio::test]
async fn a_job_carries_its_sql_text_and_starts_from_a_savepoint_with_its_recovery_settings() {
    use flinkpipe::target::Restore;
    let fake = Fake::start().await;
    let old = spec(
        "dev-dml-snk",
        "INSERT INTO snk\n-- name: dev-dml-snk\nSELECT a, 'x:y,z' FROM src",
        StatementKind::Dml,
    );
    let mut with_props = old.clone();
    with_props
        .properties
        .insert("sql.state-ttl".into(), "1 h".into());
    // Deployed by a run whose project had this text; read by one whose project has another.
    let t = fake.target(project());
    t.create_statement(&with_props).await.unwrap();
    let jid = fake.state.lock().unwrap().jobs[0].0.clone();
    let s = t.get_statement("dev-dml-snk").await.unwrap().unwrap();
    assert_eq!(s.sql, with_props.sql);
    assert_eq!(s.properties, with_props.properties);
    // The job is stopped with a savepoint; the new SQL starts from it, offsets only.
    {
        let mut st = fake.state.lock().unwrap();
        st.jobs[0].2 = "FINISHED".into();
        st.checkpoints.insert(
            jid.clone(),
            json!({"latest": {"savepoint": {"status": "COMPLETED", "checkpoint_type": "SYNC_SAVEPOINT", "external_path": "file:/sp/savepoint-1"}, "restored": null}}),
        );
    }
    assert_eq!(
        t.stop_savepoint("dev-dml-snk").await.unwrap().as_deref(),
        Some("file:/sp/savepoint-1")
    );
    let new = spec(
        "dev-dml-snk",
        "INSERT INTO snk\n-- name: dev-dml-snk\nSELECT a + 1 FROM src",
        StatementKind::Dml,
    );
    t.start_from_savepoint(&new, "file:/sp/savepoint-1", Restore::Offsets)
        .await
        .unwrap();
    let (config, new_jid) = {
        let st = fake.state.lock().unwrap();
        (
            st.configs.last().cloned().unwrap(),
            st.jobs.last().unwrap().0.clone(),
        )
    };
    assert_eq!(
        config["execution.state-recovery.path"],
        "file:/sp/savepoint-1"
    );
    assert_eq!(
        config["execution.state-recovery.ignore-unclaimed-state"],
        "true"
    );
    // A second start while it runs is refused: no duplicate job.
    assert!(matches!(
        t.start_from_savepoint(&new, "file:/sp/savepoint-1", Restore::State)
            .await,
        Err(TargetError::AlreadyExists(_))
    ));
    let s = t.get_statement("dev-dml-snk").await.unwrap().unwrap();
    assert_eq!(s.sql, new.sql);
    assert_eq!(t.restored_from("dev-dml-snk").await.unwrap(), None);
    fake.state.lock().unwrap().checkpoints.insert(
        new_jid.clone(),
        json!({"latest": {"restored": {"id": 1, "is_savepoint": true, "external_path": "file:/sp/savepoint-1"}}}),
    );
    let r = t.restored_from("dev-dml-snk").await.unwrap().unwrap();
    assert_eq!(
        (r.job.as_str(), r.path.as_str(), r.savepoint),
        (new_jid.as_str(), "file:/sp/savepoint-1", true)
    );
    // A full restore leaves no unclaimed state behind.
    fake.state.lock().unwrap().jobs.last_mut().unwrap().2 = "FINISHED".into();
    t.start_from_savepoint(&old, "file:/sp/savepoint-1", Restore::State)
        .await
        .unwrap();
    let config = fake.state.lock().unwrap().configs.last().cloned().unwrap();
    assert_eq!(
        config["execution.state-recovery.path"],
        "file:/sp/savepoint-1"
    );
    assert!(
        config
            .get("execution.state-recovery.ignore-unclaimed-state")
            .is_none()
    );
}

/// Issue #43 item 1: health on the SQL Gateway is each table's job as the JobManager tells it — a
/// running job whose checkpointing fails (the newest checkpoint failed, none completed since) or
/// that restarted is `degraded`, with the reason; a job whose old failure was followed by a
/// completed checkpoint is healthy. `status --lag` shows both columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthcheck_reads_each_jobs_checkpoints_and_restarts() {
    let fake = Fake::start().await;
    let ddl = |t: &str, with: &str| {
        format!("CREATE TABLE IF NOT EXISTS {t} (a INT) WITH ('connector' = '{with}');\n")
    };
    let dml = |t: &str| format!("INSERT INTO {t}\nSELECT a FROM src_p;\n");
    let mut t = crate::support::Test::new().file(
        "sources/p/src_p/sql-scripts/ddl.src_p.sql",
        &ddl("src_p", "datagen"),
    );
    for table in [
        "p_fct_restarted_long_ago",
        "p_fct_blip",
        "p_fct_ok",
        "p_fct_ckpt",
        "p_fct_restarted",
        "p_fct_recovered",
    ] {
        t = t
            .file(
                &format!("facts/p/{table}/sql-scripts/ddl.{table}.sql"),
                &ddl(table, "blackhole"),
            )
            .file(
                &format!("facts/p/{table}/sql-scripts/dml.{table}.sql"),
                &dml(table),
            );
    }
    let t = t.gateway(&fake.url);
    let checkpoints = |completed: u64, failed: u64, done: Option<i64>, failure: Option<i64>| {
        json!({
            "counts": {"restored": 0, "total": completed + failed, "in_progress": 0, "completed": completed, "failed": failed},
            "latest": {
                "completed": done.map(|ms| json!({"id": completed, "status": "COMPLETED", "latest_ack_timestamp": ms})),
                "failed": failure.map(|ms| json!({"id": completed + failed, "status": "FAILED", "latest_ack_timestamp": -1, "failure_timestamp": ms, "failure_message": "Checkpoint expired before completing."})),
                "savepoint": null, "restored": null
            }
        })
    };
    let deployed = run_in(
        &t,
        &[
            "--output",
            "json",
            "pipeline",
            "deploy",
            "--product-name",
            "p",
        ],
    )
    .await;
    let deployed = deployed.success();
    {
        let mut st = fake.state.lock().unwrap();
        for (table, ckpt, restarts) in [
            (
                "p_fct_restarted_long_ago",
                checkpoints(40, 0, Some(1_700_000_000_000), None),
                1,
            ),
            // One checkpoint expired after 20 completed: a blip, not a verdict.
            (
                "p_fct_blip",
                checkpoints(20, 1, Some(1_700_000_000_000), Some(1_700_000_050_000)),
                0,
            ),
            (
                "p_fct_ok",
                checkpoints(12, 0, Some(1_700_000_000_000), None),
                0,
            ),
            (
                "p_fct_ckpt",
                checkpoints(3, 9, Some(1_700_000_000_000), Some(1_700_000_050_000)),
                0,
            ),
            (
                "p_fct_restarted",
                checkpoints(5, 0, Some(1_700_000_000_000), None),
                2,
            ),
            (
                "p_fct_recovered",
                checkpoints(8, 1, Some(1_700_000_090_000), Some(1_700_000_050_000)),
                0,
            ),
        ] {
            let name = format!("dev-usw2-p-dml-{}", table.replace('_', "-"));
            let jid = st
                .jobs
                .iter()
                .find(|j| j.1 == name)
                .unwrap_or_else(|| panic!("{name}: {:?}\n{}", st.jobs, deployed.stdout_raw()))
                .0
                .clone();
            st.checkpoints.insert(jid.clone(), ckpt);
            st.restarts.insert(jid.clone(), restarts);
            if restarts > 0 {
                // 30 s ago, or an hour ago.
                let ago = if table.ends_with("long_ago") {
                    3_600_000
                } else {
                    30_000
                };
                st.failures
                    .insert(jid, vec![JM_NOW - ago - 5_000, JM_NOW - ago]);
            }
        }
    }
    let o = run_in(&t, &["--output", "json", "pipeline", "healthcheck", "p"]).await;
    let v = o.json();
    let o = o.code(1);
    let table = |name: &str| {
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["table_name"] == name)
            .unwrap_or_else(|| panic!("{name} in {v:#}\n{}", o.stderr_raw()))
            .clone()
    };
    let ok = table("p_fct_ok");
    assert_eq!(ok["health"], "healthy", "{ok:#}");
    assert_eq!(ok["restarts"], 0, "{ok:#}");
    assert_eq!(ok["checkpoints"]["completed"], 12, "{ok:#}");
    let ckpt = table("p_fct_ckpt");
    assert_eq!(ckpt["health"], "degraded", "{ckpt:#}");
    assert_eq!(
        ckpt["detail"],
        "dev-usw2-p-dml-p-fct-ckpt: checkpoint 12 failed at 2023-11-14T22:14:10.000Z: Checkpoint expired before completing.",
        "{ckpt:#}"
    );
    let restarted = table("p_fct_restarted");
    assert_eq!(restarted["health"], "degraded", "{restarted:#}");
    assert_eq!(
        restarted["detail"],
        "dev-usw2-p-dml-p-fct-restarted: restarted 2 times since it was submitted, the last failure 30 s ago"
    );
    // A restart an hour ago that the job recovered from is told, not a verdict.
    let long_ago = table("p_fct_restarted_long_ago");
    assert_eq!(long_ago["health"], "healthy", "{long_ago:#}");
    assert_eq!(long_ago["restarts"], 1, "{long_ago:#}");
    let blip = table("p_fct_blip");
    assert_eq!(blip["health"], "healthy", "{blip:#}");
    let recovered = table("p_fct_recovered");
    assert_eq!(recovered["health"], "healthy", "{recovered:#}");
    assert_eq!(recovered["checkpoints"]["failed"], 1, "{recovered:#}");
    assert_eq!(
        v["summary"],
        json!({"declared": 1, "degraded": 2, "healthy": 4})
    );
    // `status --lag` has the two columns.
    let o = run_in(&t, &["pipeline", "status", "--lag"]).await;
    let text = o.stdout();
    assert!(
        text.contains("checkpoints") && text.contains("restarts"),
        "{text}"
    );
    assert!(text.contains("3 completed, 9 failed, failing"), "{text}");
}

/// #44 item 8: the dry run's summary names the target it checked on — the SQL Gateway here, never
/// a Confluent "environment" — and the environment whose rewrite rules were applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dry_run_names_the_gateway_it_checked_on() {
    let fake = Fake::start().await;
    let t = crate::support::Test::new()
        .file(
            "sources/p/src_p/sql-scripts/ddl.src_p.sql",
            "CREATE TABLE IF NOT EXISTS src_p (a INT) WITH ('connector' = 'datagen');\n",
        )
        .file(
            "facts/p/p_fct_a/sql-scripts/ddl.p_fct_a.sql",
            "CREATE TABLE IF NOT EXISTS p_fct_a (a INT) WITH ('connector' = 'blackhole');\n",
        )
        .file(
            "facts/p/p_fct_a/sql-scripts/dml.p_fct_a.sql",
            "INSERT INTO p_fct_a\nSELECT a FROM src_p;\n",
        )
        .gateway(&fake.url);
    let o = run_in(
        &t,
        &["pipeline", "deploy", "--product-name", "p", "--dry-run"],
    )
    .await;
    let out = o.stdout_raw();
    let line = out
        .lines()
        .find(|l| l.starts_with("Server checks"))
        .unwrap_or_else(|| panic!("{out}\n{}", o.stderr_raw()))
        .to_string();
    assert!(
        line.starts_with(&format!(
            "Server checks on flink sql gateway {} (jobmanager {}) (SQL rewritten by the rules of environment 'dev'): 1 valid, 0 invalid,",
            fake.url, fake.url
        )),
        "{line}"
    );
    assert!(!out.contains("Server checks (dev environment)"), "{out}");
    o.success();
}

/// #44 item 9: an aggregate over a live topic that runs to `--timeout` says so up front
/// (`warning[unbounded]`) and again where it stops — why it did not end by itself and how to bound
/// it — instead of a bare "stopped at the timeout".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unbounded_aggregate_that_reaches_the_timeout_says_how_to_bound_it() {
    let fake = Fake::start().await;
    let jid = format!("{:032x}", 96);
    let columns = r#"[{"name":"id","logicalType":{"type":"BIGINT","nullable":true}},{"name":"n","logicalType":{"type":"BIGINT","nullable":false}}]"#;
    fake.state.lock().unwrap().queries.push((
        "GROUP BY id".into(),
        // One page, then NOT_READY for ever: a live topic with nothing new.
        vec![result_page(&jid, columns, &["[1,1]", "[2,1]"], Some(1))],
    ));
    let o = cli(
        &fake,
        &[
            "sql",
            "query",
            "SELECT id, COUNT(*) AS n FROM orders GROUP BY id",
            "--timeout",
            "1",
            "--idle",
            "30",
        ],
    )
    .await;
    let err = o.stderr_raw();
    let hint = "the query aggregates over tables read without a bound, so its result keeps updating and the read ends only at --idle or --timeout: bound each table with /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ after its name, add LIMIT N, or read one table with `table preview`";
    assert!(
        err.lines()
            .next()
            .is_some_and(|l| l == format!("warning[unbounded]: {hint}")),
        "{err}"
    );
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("2 row(s) from 2 change(s); ")
            && last.contains(&format!("stopped at the timeout: {hint};")),
        "{err}"
    );
    assert!(!err.contains("(the stream may go on)"), "{err}");
    // The rows read are a snapshot, not a failure.
    o.success();
    let log = fake.state.lock().unwrap().log.clone();
    assert!(
        log.iter()
            .any(|l| l.starts_with("DELETE") && l.ends_with("/close")),
        "the query is closed: {log:?}"
    );
}
