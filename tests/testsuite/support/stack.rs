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
