//! The Confluent Cloud client against the in-process fake: lifecycle, pagination, errors, retries,
//! redirects, and secrets never leaving the configured host or appearing in messages.

use crate::fake_confluent::{ENV, FakeConfluent, Fault, FaultAction, KEY, ORG, SECRET};
use flinkpipe::target::{
    Backoff, ConfluentSettings, ConfluentTarget, Credentials, Masked, Phase, StatementKind,
    StatementSpec, Target, TargetError,
};
use std::collections::BTreeMap;
use std::time::Duration;

fn settings(endpoint: &str) -> ConfluentSettings {
    ConfluentSettings {
        endpoint: endpoint.to_string(),
        organization_id: ORG.into(),
        environment_id: ENV.into(),
        compute_pool_id: Some("lfcp-fake".into()),
        principal: Some("sa-fake".into()),
        catalog: Some("my-env".into()),
        database: Some("my-cluster".into()),
        credentials: Credentials {
            key: Masked::new(KEY),
            secret: Masked::new(SECRET),
        },
        request_timeout: Duration::from_millis(500),
        retry: Backoff::HTTP.scaled(0.01),
    }
}

fn target(fake: &FakeConfluent) -> ConfluentTarget {
    ConfluentTarget::new(settings(&fake.endpoint())).unwrap()
}

fn spec(name: &str, sql: &str) -> StatementSpec {
    StatementSpec {
        name: name.into(),
        sql: sql.into(),
        properties: BTreeMap::new(),
        kind: StatementKind::Dml,
        compute_pool: None,
    }
}

fn no_secret(text: &str) {
    assert!(
        !text.contains(SECRET) && !text.contains(KEY),
        "secret leaked: {text}"
    );
}

#[tokio::test]
async fn lifecycle_create_get_conflict_delete() {
    let fake = FakeConfluent::start();
    let t = target(&fake);
    assert_eq!(t.get_statement("dev-dml-a").await.unwrap(), None);
    let s = t
        .create_statement(&spec("dev-dml-a", "INSERT INTO a SELECT * FROM b"))
        .await
        .unwrap();
    assert_eq!(s.phase, Phase::Pending);
    let props = fake.properties("dev-dml-a").unwrap();
    assert_eq!(props["sql.current-catalog"], "my-env");
    assert_eq!(props["sql.current-database"], "my-cluster");
    let s = t.get_statement("dev-dml-a").await.unwrap().unwrap();
    assert_eq!(s.phase, Phase::Running);
    let e = t
        .create_statement(&spec("dev-dml-a", "INSERT INTO a SELECT * FROM b"))
        .await
        .unwrap_err();
    assert_eq!(e, TargetError::AlreadyExists("dev-dml-a".into()));
    t.stop_statement("dev-dml-a").await.unwrap();
    // The GA PUT of the whole statement with its resource_version, never the Early Access PATCH.
    assert!(!fake.requests().iter().any(|r| r.method == "PATCH"));
    let put = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "PUT")
        .unwrap();
    assert_eq!(put.content_type.as_deref(), Some("application/json"));
    let body: serde_json::Value = serde_json::from_str(&put.body).unwrap();
    assert_eq!(body["spec"]["stopped"], true);
    assert!(body["metadata"]["resource_version"].is_string(), "{body}");
    assert!(t.delete_statement("dev-dml-a").await.unwrap());
    assert_eq!(
        t.get_statement("dev-dml-a").await.unwrap().unwrap().phase,
        Phase::Deleting
    );
    assert_eq!(t.get_statement("dev-dml-a").await.unwrap(), None);
    assert!(
        !t.delete_statement("dev-dml-a").await.unwrap(),
        "404 on delete = already gone"
    );
    assert!(matches!(
        t.stop_statement("nope").await,
        Err(TargetError::NotFound(_))
    ));
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.authorized && !r.secret_in_clear)
    );
}

#[tokio::test]
async fn bad_sql_is_201_then_failed_with_detail() {
    let fake = FakeConfluent::start();
    let t = target(&fake);
    t.create_statement(&spec("dev-dml-bad", "INSERT INTO x SELECT * FROM FAIL_ME"))
        .await
        .unwrap();
    let s = t.get_statement("dev-dml-bad").await.unwrap().unwrap();
    assert_eq!(s.phase, Phase::Failed);
    assert!(s.detail.contains("FAIL_ME"), "{}", s.detail);
}

#[tokio::test]
async fn list_follows_pages_once_each() {
    let fake = FakeConfluent::start();
    for i in 0..230 {
        fake.seed(&format!("s-{i:03}"), "INSERT INTO a SELECT 1", "RUNNING");
    }
    let t = target(&fake);
    let all = t.list_statements().await.unwrap();
    assert_eq!(all.len(), 230);
    let lists = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path == "/statements")
        .count();
    assert_eq!(lists, 3, "100 per page");
}

#[tokio::test]
async fn retries_429_with_retry_after_and_5xx_bursts_on_reads() {
    let fake = FakeConfluent::start();
    fake.seed("s-1", "INSERT INTO a SELECT 1", "RUNNING");
    fake.add_fault(Fault::too_many(Some("GET"), 1, 1));
    fake.add_fault(Fault::status(Some("GET"), 500, 1));
    fake.add_fault(Fault::status(Some("GET"), 503, 1));
    fake.add_fault(Fault::status(Some("GET"), 502, 1));
    let t = target(&fake);
    let s = t.get_statement("s-1").await.unwrap().unwrap();
    assert_eq!(s.phase, Phase::Running);
    assert_eq!(fake.request_count(), 5);
}

#[tokio::test]
async fn permanent_errors_are_not_retried_and_are_scrubbed() {
    let fake = FakeConfluent::start();
    let mut s = settings(&fake.endpoint());
    s.credentials.secret = Masked::new("wrong-secret-value");
    let t = ConfluentTarget::new(s).unwrap();
    let e = t.get_statement("s-1").await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains("HTTP 401"), "{text}");
    assert!(text.contains("SL_FLINK_API_KEY"), "{text}");
    assert!(text.contains("request id req-"), "{text}");
    assert!(!text.contains("wrong-secret-value"));
    no_secret(&text);
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn dropped_connections_are_retried_for_reads() {
    let fake = FakeConfluent::start();
    fake.seed("s-1", "INSERT INTO a SELECT 1", "RUNNING");
    fake.add_fault(Fault::new(Some("GET"), None, FaultAction::DropBefore, 2));
    let t = target(&fake);
    assert!(t.get_statement("s-1").await.unwrap().is_some());
}

#[tokio::test]
async fn post_with_unknown_outcome_is_not_retried_by_the_client() {
    let fake = FakeConfluent::start();
    fake.add_fault(Fault::new(Some("POST"), None, FaultAction::DropAfter, 1));
    let t = target(&fake);
    let e = t
        .create_statement(&spec("dev-dml-a", "INSERT INTO a SELECT 1"))
        .await
        .unwrap_err();
    assert!(matches!(e, TargetError::Transport { .. }), "{e}");
    assert_eq!(fake.posts(), vec!["dev-dml-a"], "exactly one POST");
    assert!(
        fake.phase("dev-dml-a").is_some(),
        "the server did create it"
    );
}

#[tokio::test]
async fn slow_responses_time_out_and_reads_are_retried() {
    let fake = FakeConfluent::start();
    fake.seed("s-1", "INSERT INTO a SELECT 1", "RUNNING");
    fake.add_fault(Fault::new(
        Some("GET"),
        None,
        FaultAction::Slow(Duration::from_secs(2)),
        1,
    ));
    let t = target(&fake);
    assert!(t.get_statement("s-1").await.unwrap().is_some());
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn same_host_redirects_are_followed_with_credentials() {
    let fake = FakeConfluent::start();
    fake.seed("s-1", "INSERT INTO a SELECT 1", "RUNNING");
    fake.add_fault(Fault::new(
        Some("GET"),
        None,
        FaultAction::Redirect(fake.endpoint()),
        1,
    ));
    let t = target(&fake);
    assert!(t.get_statement("s-1").await.unwrap().is_some());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].authorized);
}

#[tokio::test]
async fn cross_host_redirects_are_refused_and_credentials_stay_home() {
    let fake = FakeConfluent::start();
    let other = FakeConfluent::start();
    fake.add_fault(Fault::new(
        None,
        None,
        FaultAction::Redirect(format!("http://localhost:{}", other.addr.port())),
        10,
    ));
    let t = target(&fake);
    let e = t.get_statement("s-1").await.unwrap_err();
    assert!(
        e.to_string().contains("refused to follow a redirect"),
        "{e}"
    );
    assert_eq!(other.request_count(), 0, "nothing sent to the other host");
    no_secret(&e.to_string());
}

#[tokio::test]
async fn compute_pool_check_and_describe_have_no_secret() {
    let fake = FakeConfluent::start();
    let t = target(&fake);
    t.check_compute_pool().await.unwrap();
    no_secret(&t.describe());
    let settings_debug = format!("{:?}", settings(&fake.endpoint()));
    no_secret(&settings_debug);
}

/// #15: credentials inside the endpoint URL (`SL_FLINK_SQL_ENDPOINT=http://user:pw@host`) were printed
/// verbatim in errors and silently replaced the API key in requests. Both targets refuse them, with the
/// URL masked, before any request.
#[tokio::test]
async fn credentials_in_an_endpoint_url_are_refused_and_never_printed() {
    let fake = FakeConfluent::start();
    let leaky = fake
        .endpoint()
        .replace("http://", "http://leaky-user:pw-in-url@");
    let e = ConfluentTarget::new(settings(&leaky))
        .err()
        .expect("refused");
    let text = e.to_string();
    assert!(
        text.contains("contains credentials")
            && text.contains(&format!("'http://****@{}'", fake.addr))
            && text.contains("SL_FLINK_API_KEY"),
        "{text}"
    );
    assert!(
        !text.contains("pw-in-url") && !text.contains("leaky-user"),
        "{text}"
    );
    for (gateway, jobmanager) in [
        (leaky.as_str(), "http://127.0.0.1:9"),
        ("http://127.0.0.1:9", leaky.as_str()),
    ] {
        let e = flinkpipe::target::GatewayTarget::new(
            flinkpipe::target::GatewaySettings::new(gateway, jobmanager),
            Default::default(),
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(
            e.contains("contains credentials") && e.contains("****@"),
            "{e}"
        );
        assert!(!e.contains("pw-in-url") && !e.contains("leaky-user"), "{e}");
    }
    assert_eq!(fake.request_count(), 0);

    // The same through the command line (the fake's secrets are checked absent by `Test`).
    let o = crate::support::Test::fixture()
        .confluent(&fake)
        .config(&format!(
            "confluent_cloud:\n  organization_id: {ORG}\n  environment_id: {ENV}\n"
        ))
        .env("SL_FLINK_SQL_ENDPOINT", &leaky)
        .args(&["pipeline", "status", "[PIPELINES]"])
        .run()
        .code(1)
        .stderr_has("contains credentials");
    for leak in ["pw-in-url", "leaky-user"] {
        let (out, err) = (o.stdout(), o.stderr());
        assert!(
            !out.contains(leak) && !err.contains(leak),
            "{leak}: {out}{err}"
        );
    }
    assert_eq!(fake.request_count(), 0);
}

/// #15: a server that echoes a secret URL-encoded or base64-encoded (in an error body) gets it
/// masked in the error text too.
#[tokio::test]
async fn encoded_secrets_in_server_echoes_are_masked() {
    let fake = FakeConfluent::start();
    let url_encoded: String = SECRET
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let b64 = flinkpipe::target::secrets::base64(SECRET.as_bytes());
    let b64_key = flinkpipe::target::secrets::base64(format!("k={KEY}").as_bytes());
    fake.add_fault(Fault::new(
        Some("GET"),
        None,
        FaultAction::Status {
            status: 400,
            headers: vec![],
            body: format!(
                r#"{{"errors":[{{"detail":"rejected api_secret={url_encoded} token={b64} hdr={b64_key}"}}]}}"#
            ),
        },
        1,
    ));
    let e = target(&fake)
        .get_statement("s-1")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("HTTP 400") && e.contains("rejected api_secret=****"),
        "{e}"
    );
    for leak in [SECRET, KEY, url_encoded.as_str(), b64.as_str()] {
        assert!(!e.contains(leak), "{leak} in {e}");
    }
    // The key's own characters inside the longer base64 text are masked as well.
    assert!(!e.contains(&b64_key[4..b64_key.len() - 4]), "{e}");
}

/// A dry run the server keeps (answered PENDING, not final) is deleted on every path: after read
/// errors that outlast the client's own retries, after a POST whose outcome is unknown, and with a
/// delete that fails transiently at first; a delete that fails for good is a permanent error naming
/// the statement left behind — never a silent leftover, never a retry under a new name.
#[tokio::test]
async fn a_kept_dry_run_is_always_cleaned_up_or_named() {
    let dry_left = |fake: &FakeConfluent| -> Vec<String> {
        // A deleted statement reads DELETING for a while, then is gone.
        fake.names()
            .into_iter()
            .filter(|n| n.contains("-dry-") && fake.phase(n).as_deref() != Some("DELETING"))
            .collect()
    };
    let burst = |method: &str, status: u16, times: usize| {
        Fault::new(
            Some(method),
            Some("-dry-"),
            FaultAction::Status {
                status,
                headers: vec![],
                body: String::new(),
            },
            times,
        )
    };
    let sql = "INSERT INTO a SELECT * FROM b";

    // Reads fail (503) more often than one call retries: polled again within the wait, then deleted.
    let fake = FakeConfluent::start();
    fake.keep_dry_runs();
    fake.add_fault(burst("GET", 503, 10));
    let t = target(&fake);
    let checked = t.dry_run_statement(&spec("dev-dml-a", sql)).await;
    assert_eq!(checked, Ok(flinkpipe::target::Checked::Valid));
    assert!(dry_left(&fake).is_empty(), "{:?}", fake.names());
    assert_eq!(fake.deletes().len(), 1, "{:?}", fake.deletes());

    // A permanent read error still deletes the throw-away statement before answering.
    let fake = FakeConfluent::start();
    fake.keep_dry_runs();
    fake.add_fault(burst("GET", 403, 1));
    let t = target(&fake);
    let e = t
        .dry_run_statement(&spec("dev-dml-a", sql))
        .await
        .unwrap_err();
    assert!(matches!(e, TargetError::Http { status: 403, .. }), "{e}");
    assert!(dry_left(&fake).is_empty(), "{:?}", fake.names());

    // The POST's answer is lost (the server stored it): deleted before the error is returned.
    let fake = FakeConfluent::start();
    fake.keep_dry_runs();
    fake.add_fault(Fault::new(Some("POST"), None, FaultAction::DropAfter, 1));
    let t = target(&fake);
    let e = t
        .dry_run_statement(&spec("dev-dml-a", sql))
        .await
        .unwrap_err();
    assert!(matches!(e, TargetError::Transport { .. }), "{e}");
    assert!(dry_left(&fake).is_empty(), "{:?}", fake.names());

    // Deletes fail transiently more often than one call retries: retried within the wait.
    let fake = FakeConfluent::start();
    fake.keep_dry_runs();
    fake.add_fault(burst("DELETE", 503, 9));
    let t = target(&fake);
    let checked = t.dry_run_statement(&spec("dev-dml-a", sql)).await;
    assert_eq!(checked, Ok(flinkpipe::target::Checked::Valid));
    assert!(dry_left(&fake).is_empty(), "{:?}", fake.names());

    // A delete refused for good: an error naming the leftover, permanent (not retried elsewhere).
    let fake = FakeConfluent::start();
    fake.keep_dry_runs();
    fake.add_fault(burst("DELETE", 403, 100));
    let t = target(&fake);
    let e = t
        .dry_run_statement(&spec("dev-dml-a", sql))
        .await
        .unwrap_err();
    let left = dry_left(&fake);
    assert_eq!(left.len(), 1, "{:?}", fake.names());
    assert!(
        matches!(&e, TargetError::Leftover { name, .. } if *name == left[0]),
        "{e:?}"
    );
    assert!(e.to_string().contains(&left[0]), "{e}");
    assert!(!e.is_retryable());
    assert_eq!(
        fake.dry_runs().len(),
        1,
        "no second dry run under a new name"
    );
}
