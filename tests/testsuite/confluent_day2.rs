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
    Test::confluent_fixture(fake)
}

/// The fake with the default pool on its control plane.
fn fake() -> FakeConfluent {
    FakeConfluent::with_default_pool()
}

/// `args` then the pipelines folder; the outcome is checked for every secret by [`Test`].
fn run(t: &Test, args: &[&str]) -> TestOutcome {
    t.cmd(&[args, &["[PIPELINES]"]].concat())
}

/// `args` alone (commands that take no pipelines folder).
fn run_bare(t: &Test, args: &[&str]) -> TestOutcome {
    t.cmd(args)
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

/// The JSON value of `v` at `pointer` (`null` when absent).
fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer).unwrap_or(&Value::Null)
}

/// The row of `statement` in a `status` JSON report.
fn row<'a>(v: &'a Value, statement: &str) -> &'a Value {
    v["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["statement"] == statement)
        .unwrap_or_else(|| panic!("{statement} not in {v:#}"))
}

/// The example project with `TABLE` deployed and running.
fn deployed() -> (FakeConfluent, Test) {
    let fake = fake();
    let t = project(&fake);
    run(&t, &["pipeline", "deploy", "--table-name", TABLE]).success();
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
    (fake, t)
}

/// #43.7: stop and resume are the GA `PUT` of the whole statement with the `resource_version` read
/// (never the Early Access `PATCH`); a concurrent change (409 on a stale version) is read again and
/// retried, a bounded number of times; the body has only the request schema's writable fields.
#[test]
fn stop_and_resume_put_the_statement_with_its_resource_version_and_retry_on_409() {
    let (fake, t) = deployed();
    let before = fake.request_count();
    // Two concurrent changes in a row: two 409s, then the third PUT goes through.
    fake.conflict_puts(DML, 2);
    run_bare(&t, &["statement", "stop", DML]).success();
    assert_eq!(fake.phase(DML).as_deref(), Some("STOPPED"));
    let reqs: Vec<_> = fake.requests().into_iter().skip(before).collect();
    let path = format!("/statements/{DML}");
    assert!(
        !reqs.iter().any(|r| r.method == "PATCH"),
        "no PATCH: {reqs:#?}"
    );
    let puts: Vec<_> = reqs
        .iter()
        .filter(|r| r.method == "PUT" && r.path == path)
        .collect();
    assert_eq!(puts.len(), 3, "{reqs:#?}");
    for p in &puts {
        assert_eq!(p.content_type.as_deref(), Some("application/json"));
        let b: Value = serde_json::from_str(&p.body).unwrap();
        assert_eq!(b["name"], DML);
        assert_eq!(b["spec"]["stopped"], true);
        assert!(b["metadata"]["resource_version"].is_string(), "{b}");
        assert!(b["metadata"]["self"].is_string(), "{b}");
        assert_eq!(
            b["metadata"]["labels"]["user.confluent.io/flinkpipe"], "true",
            "{b}"
        );
        assert_eq!(b["spec"]["statement"], fake.sql(DML).unwrap());
        // Read-only parts are not sent.
        for ro in ["status", "api_version", "kind", "result"] {
            assert!(b.get(ro).is_none(), "{ro} in {b}");
        }
        assert!(b["spec"].get("execution_mode").is_none(), "{b}");
    }
    // Each PUT follows a GET of the statement (read, change, write).
    let versions: Vec<String> = puts
        .iter()
        .map(|p| {
            serde_json::from_str::<Value>(&p.body).unwrap()["metadata"]["resource_version"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        versions
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        3,
        "each retry re-read the version: {versions:?}"
    );
    // Stop again: already stopped, nothing written.
    let before = fake.request_count();
    run_bare(&t, &["statement", "stop", DML]).success();
    assert!(
        !fake
            .requests()
            .iter()
            .skip(before)
            .any(|r| r.method == "PUT"),
        "an idempotent stop writes nothing"
    );
    // Resume by PUT too.
    let before = fake.request_count();
    run_bare(&t, &["statement", "resume", DML]).success();
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
    let puts: Vec<Value> = fake
        .requests()
        .into_iter()
        .skip(before)
        .filter(|r| r.method == "PUT")
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    assert_eq!(puts.len(), 1);
    assert_eq!(puts[0]["spec"]["stopped"], false);
    // More concurrent changes than attempts: the stop fails with the 409, named.
    fake.conflict_puts(DML, 50);
    let o = run_bare(&t, &["statement", "stop", DML]).failure();
    assert!(o.stderr().contains("409"), "{}", o.stderr());
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
}

/// #43.8: why a statement failed — the newest of `GET …/statements/{name}/exceptions` in `status`
/// (text and JSON), `healthcheck` and a failed deploy.
#[test]
fn the_latest_exceptions_explain_a_failure_in_status_healthcheck_and_deploy() {
    let (fake, t) = deployed();
    fake.force_phase(DML, "FAILED", "");
    fake.add_exception(
        DML,
        "java.lang.RuntimeException",
        "older: the sink topic was deleted",
    );
    fake.add_exception(
        DML,
        "org.apache.kafka.common.errors.TopicAuthorizationException",
        "Not authorized to access topics: [sales_fct_order_payments]",
    );
    let st = run(&t, &["--output", "json", "pipeline", "status"]).stdout_json();
    let r = row(&st, DML);
    assert_eq!(
        at(r, "/exceptions/0/message"),
        "Not authorized to access topics: [sales_fct_order_payments]",
        "{r:#}"
    );
    assert_eq!(
        at(r, "/exceptions/0/name"),
        "org.apache.kafka.common.errors.TopicAuthorizationException"
    );
    assert_eq!(
        at(r, "/exceptions/1/message"),
        "older: the sink topic was deleted"
    );
    let text = run(&t, &["pipeline", "status"]).stdout();
    assert!(
        text.contains(&format!("{DML}: exception at 2026-01-01T10:59:00Z: org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [sales_fct_order_payments]")),
        "{text}"
    );
    // Healthy statements cost no exceptions call.
    let calls = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/exceptions"))
        .map(|r| r.path.clone())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(calls, [format!("/statements/{DML}/exceptions")].into());
    let h = run(
        &t,
        &["--output", "json", "pipeline", "healthcheck", "sales"],
    )
    .code(1)
    .stdout_json();
    let table = h["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["table_name"] == TABLE)
        .unwrap()
        .clone();
    assert_eq!(table["health"], "failed");
    assert_eq!(
        table["detail"],
        "Not authorized to access topics: [sales_fct_order_payments]"
    );
    assert_eq!(at(&table, "/server/0/statement"), DML);
    // A deploy whose statement fails: the error names the latest exception.
    let other = "sales_dim_stores";
    fake.set_outcome(
        "dev-usw2-sales-dml-sales-dim-stores",
        crate::fake_confluent::Outcome::Fail("Column 'x' not found".into()),
    );
    let o = run(&t, &["pipeline", "deploy", "--table-name", other]).failure();
    assert!(
        o.stderr().contains("Column 'x' not found; latest exception: org.apache.flink.table.api.TableException: org.apache.flink.table.api.ValidationException: Column 'x' not found"),
        "{}",
        o.stderr()
    );
}

/// #43.9: `state_limit_status` and `warnings` in `status` (and `healthcheck`), the `latest_offsets`
/// of a stopped statement in `statement stop` and `status`; the project's statements listed with
/// `label_selector` on flinkpipe's label, and every statement only when one it names is missing.
#[test]
fn status_shows_state_limits_warnings_offsets_and_lists_by_label() {
    let (fake, t) = deployed();
    fake.set_state_limit(
        DML,
        "APPROACHING_SOFT_LIMIT",
        "state is at 82% of the soft limit",
    );
    fake.add_warning(
        DML,
        "MODERATE",
        "MISSING_WINDOW_START_END",
        "The statement is missing window start and end bounds",
    );
    // Another team's statement in the environment: not labelled, not listed for the project.
    fake.seed("other-team-job", "INSERT INTO x SELECT * FROM y", "RUNNING");
    // Everything the table's status names is deployed: one listing, filtered by the server.
    let before = fake.request_count();
    let st = run(
        &t,
        &[
            "--output",
            "json",
            "pipeline",
            "status",
            "--table-name",
            TABLE,
        ],
    )
    .stdout_json();
    let lists: Vec<_> = fake
        .requests()
        .into_iter()
        .skip(before)
        .filter(|r| r.method == "GET" && r.path == "/statements")
        .collect();
    assert_eq!(lists.len(), 1, "{lists:?}");
    for l in &lists {
        assert!(
            l.query
                .contains("label_selector=user.confluent.io%2Fflinkpipe%3Dtrue"),
            "{l:?}"
        );
    }
    let r = row(&st, DML);
    assert_eq!(
        at(r, "/state_limit/state"),
        "APPROACHING_SOFT_LIMIT",
        "{r:#}"
    );
    assert_eq!(
        at(r, "/state_limit/detail"),
        "state is at 82% of the soft limit"
    );
    assert_eq!(at(r, "/warnings/0/severity"), "MODERATE");
    assert_eq!(at(r, "/warnings/0/reason"), "MISSING_WINDOW_START_END");
    assert!(
        r.get("latest_offsets").is_none(),
        "only once stopped: {r:#}"
    );
    assert!(
        !st.to_string().contains("other-team-job"),
        "not the project's: {st}"
    );
    let text = run(&t, &["pipeline", "status"]).stdout();
    for want in [
        format!("{DML}: state APPROACHING_SOFT_LIMIT: state is at 82% of the soft limit"),
        format!(
            "{DML}: warning MODERATE MISSING_WINDOW_START_END: The statement is missing window start and end bounds"
        ),
    ] {
        assert!(
            text.contains(&want),
            "{want}
{text}"
        );
    }
    // Stopped: the offsets it stopped at.
    let o = run_bare(&t, &["--output", "json", "statement", "stop", DML])
        .success()
        .stdout_json();
    assert_eq!(o["phase"], "STOPPED");
    let offsets = o["latest_offsets"]
        .as_object()
        .expect("offsets once stopped");
    assert!(!offsets.is_empty(), "{o:#}");
    assert!(
        offsets
            .values()
            .all(|v| v == "partition:0,offset:100;partition:1,offset:200"),
        "{o:#}"
    );
    assert!(o["latest_offsets_timestamp"].is_string(), "{o:#}");
    let st = run(&t, &["--output", "json", "pipeline", "status"]).stdout_json();
    assert_eq!(row(&st, DML)["latest_offsets"], o["latest_offsets"]);
    let text = run(&t, &["pipeline", "status"]).stdout();
    assert!(
        text.contains(&format!("{DML}: stopped at offsets (")),
        "{text}"
    );
    // A statement the project names made without the label (by another tool): the full listing
    // finds it, so it is not reported absent.
    let other = "dev-usw2-sales-dml-sales-dim-stores";
    fake.seed(other, "INSERT INTO sales_dim_stores SELECT 1", "RUNNING");
    let before = fake.request_count();
    let st = run(&t, &["--output", "json", "pipeline", "status"]).stdout_json();
    assert_eq!(row(&st, other)["phase"], "RUNNING", "{st:#}");
    let queries: Vec<String> = fake
        .requests()
        .into_iter()
        .skip(before)
        .filter(|r| r.method == "GET" && r.path == "/statements")
        .map(|r| r.query)
        .collect();
    assert!(
        queries[0].contains("label_selector=")
            && !queries.last().unwrap().contains("label_selector"),
        "{queries:?}"
    );
}

/// #43.10: `analyze-pool-usage` advises resizing a pool at the ratio and `--apply` resizes it in
/// place (`PATCH fcpm/v2/compute-pools/{id}` with `spec.environment` and `spec.max_cfu`, the spec's
/// shape); without `--apply` nothing is sent.
#[test]
fn a_pool_at_its_limit_is_resized_in_place_with_apply_only() {
    let fake = FakeConfluent::start();
    // 8 of 10 CFUs used: at the 0.8 limit.
    fake.add_pool(DEFAULT_POOL, "default", 10, 8);
    let t = project(&fake);
    let v = run(&t, &["--output", "json", "pipeline", "analyze-pool-usage"])
        .success()
        .stdout_json();
    assert_eq!(
        v["resizes"],
        serde_json::json!([{"id": DEFAULT_POOL, "display_name": "default", "from_max_cfu": 10,
            "to_max_cfu": 20, "current_cfu": 8, "outcome": {"status": "advised"}}]),
        "{v:#}"
    );
    assert!(!fake.requests().iter().any(|r| r.method == "PATCH"));
    assert_eq!(fake.pool(DEFAULT_POOL).unwrap().0.max_cfu, 10);
    let text = run(&t, &["pipeline", "analyze-pool-usage"])
        .success()
        .stdout();
    assert!(
        text.contains("advice: lfcp-fake (default) uses 8 of 10 CFUs, at or past 80%: resize it to 20 CFUs (rerun with --apply)"),
        "{text}"
    );
    let text = run(&t, &["pipeline", "analyze-pool-usage", "--apply"])
        .success()
        .stdout();
    assert!(text.contains("resized: lfcp-fake (default)"), "{text}");
    assert_eq!(fake.pool(DEFAULT_POOL).unwrap().0.max_cfu, 20);
    let patches: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    assert_eq!(patches.len(), 1);
    assert_eq!(
        patches[0].path,
        format!("/fcpm/v2/compute-pools/{DEFAULT_POOL}")
    );
    assert_eq!(patches[0].query, "");
    assert_eq!(patches[0].content_type.as_deref(), Some("application/json"));
    assert_eq!(
        serde_json::from_str::<Value>(&patches[0].body).unwrap(),
        serde_json::json!({"spec": {"environment": {"id": crate::fake_confluent::ENV}, "max_cfu": 20}})
    );
    // Now under the limit: no advice, nothing sent.
    let v = run(
        &t,
        &[
            "--output",
            "json",
            "pipeline",
            "analyze-pool-usage",
            "--apply",
        ],
    )
    .success()
    .stdout_json();
    assert!(v.get("resizes").is_none(), "{v:#}");
}

const MT: &str = "c360_mv_customer_360";
const MT_DDL: &str = "views/c360/mv_customer_360/sql-scripts/ddl.c360_mv_customer_360.sql";

/// #43.11: a `CREATE MATERIALIZED TABLE` becomes a resource of Confluent's GA materialized-tables
/// API, whose phase — not the creating statement's COMPLETED — tells whether its query runs:
/// `status` lists it with its versions, `healthcheck` judges the table by it, and `decommission`
/// stops the blue table's query through it (`PUT` with `spec.stopped`, the table and its data
/// kept) once its green successor runs there — refused while green is not live.
#[test]
fn materialized_tables_are_seen_through_the_materialized_tables_api() {
    let fake = fake();
    let t = Test::fixture().git().confluent(&fake).cloud_api(&fake);
    run(&t, &["pipeline", "deploy", "--product-name", "c360"]).success();
    let mt = fake
        .materialized(MT)
        .expect("the deploy made the materialized table");
    assert_eq!((mt.phase.as_str(), mt.version), ("RUNNING", 1));

    // status: the table with its phase and versions, from the API's own paths.
    let v = run(
        &t,
        &["--output", "json", "pipeline", "status", "--table-name", MT],
    )
    .success()
    .stdout_json();
    let rows = v["materialized_tables"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v:#}");
    assert_eq!(rows[0]["table_name"], MT);
    assert_eq!(rows[0]["materialized"]["phase"], "RUNNING");
    assert_eq!(rows[0]["materialized"]["version"], 1);
    assert_eq!(rows[0]["materialized"]["kafka_cluster_id"], "lkc-fake01");
    assert_eq!(rows[0]["versions"].as_array().unwrap().len(), 1);
    let paths: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("GET ") && p.ends_with("/materialized-tables")),
        "{paths:#?}"
    );
    assert!(
        paths.iter().any(|p| p.starts_with("GET ")
            && p.ends_with(&format!(
                "/databases/lkc-fake01/materialized-tables/{MT}/versions"
            ))),
        "{paths:#?}"
    );
    let text = run(&t, &["pipeline", "status", "--table-name", MT])
        .success()
        .stdout();
    assert!(
        text.contains("Materialized tables") && text.contains("RUNNING, version 1"),
        "{text}"
    );

    // healthcheck: healthy while it runs; FAILED on the API is a failed table, with its detail,
    // although the creating statement COMPLETED.
    let health = |t: &Test| -> Value {
        let o = run(t, &["--output", "json", "pipeline", "healthcheck", "c360"]);
        let v = o.json();
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["table_name"] == MT)
            .cloned()
            .unwrap_or_else(|| panic!("{v:#}"))
    };
    assert_eq!(health(&t)["health"], "healthy");
    fake.with_materialized(MT, |m| {
        m.phase = "FAILED".into();
        m.detail = "Query failed: division by zero".into();
    });
    let h = health(&t);
    assert_eq!(h["health"], "failed", "{h:#}");
    assert_eq!(
        h["detail"],
        format!("materialized table {MT}: FAILED, version 1: Query failed: division by zero")
    );
    run(&t, &["pipeline", "healthcheck", "c360"]).code(1);
    fake.with_materialized(MT, |m| {
        m.phase = "RUNNING".into();
        m.detail = String::new();
    });

    // A change of its query, released blue-green: green is a materialized table of its own.
    t.repo().branch("feature");
    t.repo().edit(MT_DDL, |s| {
        s.replace(
            "  ON c.customer_id = e.customer_id;",
            "  ON c.customer_id = e.customer_id\nWHERE c.country <> 'XX';",
        )
    });
    t.repo()
        .commit("leave out the test country", crate::support::repo::T_CHANGE);
    run(
        &t,
        &["pipeline", "blue-green", "--since", "main", "--apply"],
    )
    .success();
    t.repo().commit(
        "version the impacted tables",
        crate::support::repo::T_CHANGE + 60,
    );
    run(&t, &["pipeline", "deploy", "--blue-green"]).success();
    let green = format!("{MT}_v2");
    assert!(fake.materialized(&green).is_some(), "green made");

    // Green not live yet (an evolution being activated): the blue query is not stopped.
    fake.with_materialized(&green, |m| {
        m.phase = "ALTERING".into();
        m.latest_version = 2;
    });
    // release-check judges the pair by the green table's state too: not final while evolving.
    let rc = t.cmd(&["--output", "json", "pipeline", "release-check"]);
    let v = rc.json();
    let pair = &v["tables"][0];
    assert_eq!(pair["green_table"], green.as_str(), "{v:#}");
    assert_eq!(
        pair["green_materialized"], "ALTERING, version 1 (2 being activated)",
        "{v:#}"
    );
    assert!(
        pair["verdict"] == "catching-up" || pair["verdict"] == "unreadable",
        "{v:#}"
    );
    rc.code(1);
    let o = run(&t, &["pipeline", "decommission", "--no-ack"]);
    let err = o.stderr();
    o.code(1);
    assert!(
        err.contains(&format!(
            "refused to stop the query of materialized table {MT}"
        )) && err.contains(
            "green statement dev-usw2-c360-ddl-c360-mv-customer-360-v2's materialized table is ALTERING, version 1 (2 being activated) (needs its query running)"
        ),
        "{err}"
    );
    assert!(!fake.materialized(MT).unwrap().stopped);
    // Nothing of the blue table was touched, and the release stays open.
    let blue_ddl = "dev-usw2-c360-ddl-c360-mv-customer-360";
    let blue_phase = fake.phase(blue_ddl);
    assert!(blue_phase.is_some());
    let decommissioned = || -> usize {
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(t.pipelines.join("blue_green.json")).unwrap(),
        )
        .unwrap();
        v["releases"][0]["decommissioned"]
            .as_array()
            .map_or(0, Vec::len)
    };
    assert_eq!(decommissioned(), 0, "the release stays open");

    // Green runs: the blue query is stopped through the API, the table kept — after a concurrent
    // change of the blue table (409 on its resource_version), read again and retried.
    fake.with_materialized(&green, |m| {
        m.phase = "RUNNING".into();
        m.latest_version = 1;
    });
    fake.with_materialized(MT, |m| m.conflicts = 1);
    let before = fake.requests().len();
    let o = run(&t, &["pipeline", "decommission", "--no-ack"]).success();
    assert!(
        o.stdout().contains(&format!(
            "stopped the query of materialized table {MT} (the table, its topic and its data are kept)"
        )),
        "{}",
        o.stdout()
    );
    // The record, in one sentence (#44 item 8).
    assert!(
        o.stdout().contains(
            "recorded in blue_green.json: the released tables' blue statements are stopped (statement prefix 'dev-usw2')"
        ),
        "{}",
        o.stdout()
    );
    let blue = fake.materialized(MT).expect("kept");
    assert_eq!(
        decommissioned(),
        1,
        "the release is recorded as decommissioned"
    );
    // Its creating statement is left alone: the query was stopped through the API.
    assert_eq!(fake.phase(blue_ddl), blue_phase);
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.path.ends_with(&format!("/statements/{blue_ddl}"))
                && (r.method == "PUT" || r.method == "DELETE")),
        "the blue creating statement was acted on"
    );
    assert!(blue.stopped && blue.phase == "STOPPED", "{blue:?}");
    let puts: Vec<_> = fake.requests()[before..]
        .iter()
        .filter(|r| r.method == "PUT" && r.path.contains("/materialized-tables/"))
        .map(|r| (r.path.clone(), r.body.clone()))
        .collect();
    assert_eq!(puts.len(), 2, "a 409, then the retry: {puts:#?}");
    assert!(
        puts[0]
            .0
            .ends_with(&format!("/databases/lkc-fake01/materialized-tables/{MT}"))
    );
    let body: Value = serde_json::from_str(&puts[1].1).unwrap();
    assert_eq!(body["spec"]["stopped"], true);
    assert!(body["metadata"]["resource_version"].is_string());
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.method == "DELETE" && r.path.contains("/materialized-tables/"))
    );
}
