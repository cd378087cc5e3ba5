//! Confluent Cloud day 2 against the fake, with what the service already says: every server text
//! masked (a server that echoes the credentials in every text field, every command); stop and resume
//! by `PUT` of the whole statement with `metadata.resource_version` (409 on a stale one, re-read and
//! retried); the statement's exceptions; `state_limit_status`, `warnings` and the `latest_offsets`
//! of a stopped statement; the project's statements listed with `label_selector`; compute pools
//! resized in place.

use crate::fake_confluent::{DEFAULT_POOL, FakeConfluent, all_secrets};
use crate::support::Test;
use crate::support::test::Outcome as TestOutcome;
use serde_json::Value;
use std::path::Path;

const TABLE: &str = "sales_fct_order_payments";
const DML: &str = "dev-usw2-sales-dml-sales-fct-order-payments";

/// The example project on `fake`, both planes (Flink key and Cloud API key).
fn project(fake: &FakeConfluent) -> Test {
    Test::fixture().confluent(fake).cloud_api(fake)
}

/// The fake with the default pool on its control plane.
fn fake() -> FakeConfluent {
    let f = FakeConfluent::start();
    f.add_pool(DEFAULT_POOL, "default", 50, 0);
    f
}

/// `args` then the pipelines folder; the outcome is checked for every secret by [`Test`].
fn run(t: &Test, args: &[&str]) -> TestOutcome {
    let all = [args, &[t.pipelines.to_str().unwrap()]].concat();
    t.outcome(&all.join(" "), t.command(&all).output().unwrap())
}

/// `args` alone (commands that take no pipelines folder).
fn run_bare(t: &Test, args: &[&str]) -> TestOutcome {
    t.outcome(&args.join(" "), t.command(args).output().unwrap())
}

/// Every file under `dir` that holds one of the fake's secrets (or their Basic tokens).
fn files_with_secrets(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
            all_secrets().iter().any(|s| text.contains(s.as_str()))
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

/// #41.11: a server whose every text field (`status.detail`, exceptions, warnings, error details)
/// echoes the credentials: no command prints the key, the secret or the Basic token, in text or
/// JSON, at any verbosity, on success or failure, and no file holds them.
#[test]
fn every_text_a_server_sends_is_masked_in_every_output() {
    let fake = fake();
    fake.echo_secrets();
    let t = project(&fake);
    let o = run(
        &t,
        &[
            "--output",
            "json",
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
        ],
    );
    let deployed = o.success().stdout_json();
    assert!(deployed.is_object(), "{deployed}");
    fake.force_phase(DML, "FAILED", "the job failed");
    // The echo reached flinkpipe: it shows the server's text, masked.
    let o = run(&t, &["-v", "pipeline", "status"]);
    assert!(o.stdout().contains("the job failed"), "{}", o.stdout());
    assert!(o.stdout().contains("****"), "{}", o.stdout());
    run(&t, &["-vv", "pipeline", "status"]);
    let st = run(&t, &["--output", "json", "pipeline", "status"]).stdout_json();
    assert!(st.to_string().contains("****"), "{st}");
    run(&t, &["pipeline", "healthcheck", "sales"]).code(1);
    run(
        &t,
        &["--output", "json", "pipeline", "healthcheck", "sales"],
    )
    .code(1);
    run_bare(&t, &["-v", "statement", "stop", DML]);
    run_bare(&t, &["--output", "json", "statement", "resume", DML]);
    // A deploy that fails on the server's answer (the statement FAILED, its detail echoed), and
    // refusals (HTTP errors with an echoing body).
    fake.set_outcome(
        "dev-usw2-sales-dml-sales-fct-order-payments",
        crate::fake_confluent::Outcome::Fail("boom".into()),
    );
    run(
        &t,
        &[
            "-v",
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--force-ancestors",
        ],
    );
    run(
        &t,
        &[
            "--output",
            "json",
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--force-ancestors",
        ],
    );
    fake.add_fault(crate::fake_confluent::Fault::new(
        Some("GET"),
        None,
        crate::fake_confluent::FaultAction::Status {
            status: 400,
            headers: vec![],
            body: serde_json::json!({"errors": [{"status": "400", "detail": "bad request"}]})
                .to_string(),
        },
        1,
    ));
    run(&t, &["-v", "pipeline", "status"]).failure();
    run(&t, &["project", "list-compute-pools"]);
    assert_eq!(files_with_secrets(t.path()), Vec::<String>::new());
}

/// The JSON value of `v` at `pointer`, for messages.
fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer).unwrap_or(&Value::Null)
}
