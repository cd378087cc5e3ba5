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
