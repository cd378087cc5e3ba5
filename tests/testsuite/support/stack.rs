//! The local Flink + SQL Gateway + Kafka stack of the end-to-end tests (`scripts/local-flink.sh up`):
//! its addresses, a JSON GET against its REST APIs, and whether it answers.

use serde_json::Value;
use std::process::Command;

/// The SQL Gateway's REST endpoint.
pub const GATEWAY: &str = "http://127.0.0.1:8083";
/// The JobManager's REST endpoint.
pub const JOBMANAGER: &str = "http://127.0.0.1:8081";
/// The Kafka broker.
pub const KAFKA: &str = "127.0.0.1:9092";

/// The JSON body of a GET of `url` (10 s at most); `None` on any failure.
pub fn http_get(url: &str) -> Option<Value> {
    let out = Command::new("curl")
        .args(["-fsS", "--max-time", "10", url])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).ok())
        .flatten()
}

/// Whether the SQL Gateway, the JobManager and Kafka all answer. When they do not, the test is
/// skipped (a message on stderr), unless `FLINKPIPE_E2E=required`, which makes it fail.
pub fn stack_available() -> bool {
    let required = std::env::var("FLINKPIPE_E2E").is_ok_and(|v| v == "required");
    let ok = http_get(&format!("{GATEWAY}/v1/info")).is_some()
        && http_get(&format!("{JOBMANAGER}/overview")).is_some()
        && std::net::TcpStream::connect(KAFKA).is_ok();
    if !ok {
        assert!(
            !required,
            "FLINKPIPE_E2E=required but no SQL Gateway at {GATEWAY}, JobManager at {JOBMANAGER} or Kafka at {KAFKA}"
        );
        eprintln!("skipped: no local Flink + Kafka stack (scripts/local-flink.sh up)");
    }
    ok
}

/// A prefix for one end-to-end run: `<kind><pid><nanos>` (lower case, letters and digits), unique
/// among the runs on one stack and never `make demo`'s `demo`. Statement (job) names of the run are
/// `<prefix>-…`, its topics `<prefix>_…` ([`own_topics`]).
pub fn run_prefix(kind: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{kind}{:x}{:x}", std::process::id(), nanos % 0x10000)
}

/// Gives the project under `pipelines` topics of its own: every `'topic' = 'NAME'` of its SQL files
/// becomes `'<prefix>_NAME'`, so that an end-to-end run never reads or writes the topics of another
/// project on the same stack (`make demo` deploys the same fixtures under their own names; Kafka
/// topics are global while gateway catalogs are per session). A topic of an external table (a dotted
/// name, read and never written: `crm.loyalty.members.v1`) is left alone. Blue-green moves the
/// prefixed topic with its table (`<prefix>_t` → `<prefix>_t_v2`). Returns the rename of one name.
pub fn own_topics(pipelines: &std::path::Path, prefix: &str) -> impl Fn(&str) -> String + use<> {
    let re = regex::Regex::new(r"'topic'(\s*)=(\s*)'([A-Za-z0-9_\-]+)'").unwrap();
    for file in super::sql_files(pipelines) {
        let text = std::fs::read_to_string(&file).unwrap();
        let new = re.replace_all(&text, format!("'topic'$1=$2'{prefix}_$3'").as_str());
        if new != text {
            std::fs::write(&file, new.as_ref()).unwrap();
        }
    }
    let prefix = prefix.to_string();
    move |name: &str| format!("{prefix}_{name}")
}

/// Whether a job or statement name is one of this run's: `<prefix>-…` exactly (a run never cancels a
/// job it did not start: not `make demo`'s `demo-…`, not another run's `<prefix>7-…`).
pub fn is_ours(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('-'))
}

/// The `config.yaml` of a project on the local stack: statement (job) names `<prefix>-…`, the SQL
/// Gateway at [`GATEWAY`] and its JobManager at [`JOBMANAGER`]; `gateway:` is the last section, so
/// that keys of it (`    external_ddl: [..]\n`) can be added at the end.
pub fn gateway_config(prefix: &str) -> String {
    format!(
        "flinkpipe:\n  statement_prefix: {prefix}\n  gateway:\n    url: {GATEWAY}\n    jobmanager_url: {JOBMANAGER}\n"
    )
}

/// The DDL of a Kafka table `name` on the local broker ([`KAFKA`]): topic `name`, JSON, read from the
/// earliest offset; `columns` its column lines (`"  id BIGINT,\n  k STRING"`).
pub fn kafka_ddl(name: &str, columns: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {name} (\n{columns}\n) WITH (\n  'connector' = 'kafka',\n  'topic' = '{name}',\n  'properties.bootstrap.servers' = '{KAFKA}',\n  'scan.startup.mode' = 'earliest-offset',\n  'format' = 'json'\n);\n"
    )
}

/// A job on the JobManager (`/jobs/overview`).
#[derive(Clone, Debug)]
pub struct Job {
    pub jid: String,
    pub name: String,
    pub state: String,
    /// `start-time`, milliseconds since the epoch.
    pub start: i64,
}

impl Job {
    /// Whether the job is over: FINISHED, FAILED or CANCELED.
    pub fn is_over(&self) -> bool {
        matches!(self.state.as_str(), "FINISHED" | "FAILED" | "CANCELED")
    }
}

/// Every job on the JobManager, newest first (none when it does not answer).
pub fn jobs() -> Vec<Job> {
    let v = http_get(&format!("{JOBMANAGER}/jobs/overview")).unwrap_or(Value::Null);
    let mut out: Vec<Job> = v["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|j| Job {
            jid: j["jid"].as_str().unwrap_or("").to_string(),
            name: j["name"].as_str().unwrap_or("").to_string(),
            state: j["state"].as_str().unwrap_or("").to_string(),
            start: j["start-time"].as_i64().unwrap_or(0),
        })
        .collect();
    out.sort_by_key(|j| std::cmp::Reverse(j.start));
    out
}

/// The jobs of the run with statement prefix `prefix` ([`is_ours`]), newest first.
pub fn jobs_of(prefix: &str) -> Vec<Job> {
    jobs()
        .into_iter()
        .filter(|j| is_ours(&j.name, prefix))
        .collect()
}

/// The states of the jobs called `name`, newest first.
pub fn job_states(name: &str) -> Vec<String> {
    jobs()
        .into_iter()
        .filter(|j| j.name == name)
        .map(|j| j.state)
        .collect()
}

/// The newest job called `name`: (jid, state).
pub fn job_of(name: &str) -> Option<(String, String)> {
    jobs()
        .into_iter()
        .find(|j| j.name == name)
        .map(|j| (j.jid, j.state))
}

/// Cancels job `jid` (best effort).
pub fn cancel(jid: &str) {
    let _ = Command::new("curl")
        .args([
            "-fsS",
            "--max-time",
            "10",
            "-X",
            "PATCH",
            &format!("{JOBMANAGER}/jobs/{jid}?mode=cancel"),
        ])
        .output();
}

/// Cancels every job of the run with statement prefix `prefix` ([`is_ours`]) that is not over
/// (best effort: the clean-up of a run, so that the shared cluster keeps its task slots).
pub fn cancel_jobs(prefix: &str) {
    for j in jobs_of(prefix) {
        if !j.is_over() {
            cancel(&j.jid);
        }
    }
}

/// A current-thread tokio runtime (the Kafka admin client of the library is async).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Deletes `topics` on the broker at [`KAFKA`] (best effort, for clean-ups).
pub fn delete_topics(topics: &[String]) {
    if topics.is_empty() {
        return;
    }
    if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        let _ = rt.block_on(flinkpipe::target::kafka::KafkaAdmin::new(KAFKA).delete(topics));
    }
}

/// Runs `scripts/local-flink.sh` with `args` (`topics DIR…`, `offsets TOPIC…`), asserts it succeeds
/// and returns its standard output.
pub fn script(args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/local-flink.sh"))
        .args(args)
        .output()
        .unwrap();
    super::test::Outcome::of(&format!("local-flink.sh {}", args.join(" ")), out, None)
        .success()
        .stdout_raw()
}

/// Waits until `ok` holds, asking every 2 s; fails naming `what` after `timeout`.
pub fn wait_for(what: &str, timeout: std::time::Duration, mut ok: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ok() {
        assert!(start.elapsed() < timeout, "{what}: not after {timeout:?}");
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
}
