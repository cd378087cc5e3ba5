//! The blue-green runbook against the Confluent fake, with the real binary in a temporary git repository
//! of the example project: deploy blue → change an intermediate → `blue-green --apply` (recorded in
//! `pipelines/blue_green.json`) → commit → `deploy --blue-green` → `status` shows blue next to green →
//! `decommission --delete --no-ack` → no blue, no orphan, the record says so. Also orphans of a deleted
//! table, `--stop`, `--dry-run`, and that a statement owned by a table of the tree is never touched.

use crate::fake_confluent::FakeConfluent;
use crate::support::Test;
use crate::support::repo::T_CHANGE;
use crate::support::test::ENRICHED_DML;
use serde_json::Value;
use std::collections::BTreeSet;

fn repo(fake: &FakeConfluent) -> Test {
    Test::release_repo(fake)
}

fn running(fake: &FakeConfluent) -> BTreeSet<String> {
    fake.phases()
        .into_iter()
        .filter(|(_, p)| p == "RUNNING")
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn runbook_deploy_green_validate_decommission_blue() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    // 1. Blue is deployed.
    t.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
        .success()
        .stdout();
    let blue_dml = "dev-usw2-sales-dml-int-sales-orders-enriched";
    assert!(running(&fake).contains(blue_dml));

    // 2. A logic change, versioned and recorded, then committed.
    t.repo().branch("feature");
    t.repo().edit(ENRICHED_DML, |t| {
        t.replace(
            "  ON o.currency = r.currency;",
            "  ON o.currency = r.currency\nWHERE o.channel <> 'test';",
        )
    });
    t.repo().commit("filter test orders", T_CHANGE);
    let v = t
        .cmd(&[
            "--output",
            "json",
            "pipeline",
            "blue-green",
            "--since",
            "main",
            "--apply",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["applied"], true);
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(t.pipelines.join("blue_green.json")).unwrap(),
    )
    .unwrap();
    let release = &record["releases"][0];
    assert_eq!(release["base_ref"], "main");
    assert_eq!(release["statement_prefix"], "dev-usw2");
    let tables = release["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 8, "{release:#}");
    let enriched = tables
        .iter()
        .find(|t| t["blue_table_name"] == "int_sales_orders_enriched")
        .unwrap();
    assert_eq!(enriched["green_table_name"], "int_sales_orders_enriched_v2");
    assert_eq!(
        enriched["blue_statements"],
        serde_json::json!([
            {"name": blue_dml, "role": "job"},
            {"name": "dev-usw2-sales-ddl-int-sales-orders-enriched", "role": "declaration"}
        ])
    );
    assert_eq!(
        enriched["green_statements"],
        serde_json::json!([
            {"name": "dev-usw2-sales-ddl-int-sales-orders-enriched-v2", "role": "declaration"},
            {"name": "dev-usw2-sales-dml-int-sales-orders-enriched-v2", "role": "job"}
        ])
    );
    t.repo()
        .commit("version the impacted tables", T_CHANGE + 60);

    // 3. Green is deployed beside blue; nothing blue is touched.
    let deletes_before = fake.deletes().len();
    let d = t
        .cmd(&["--output", "json", "pipeline", "deploy", "--blue-green"])
        .success()
        .stdout_json();
    assert_eq!(d["success"], true, "{d:#}");
    let up = running(&fake);
    assert!(up.contains("dev-usw2-sales-dml-int-sales-orders-enriched-v2"));
    assert!(up.contains(blue_dml), "blue keeps running");
    assert_eq!(fake.deletes().len(), deletes_before, "nothing deleted");
    // Deploying the release again changes nothing: the green jobs run.
    let again = t
        .cmd(&["--output", "json", "pipeline", "deploy", "--blue-green"])
        .success()
        .stdout_json();
    let actions: BTreeSet<&str> = again["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, BTreeSet::from(["skip"]), "{again:#}");

    // 4. Status shows blue next to green, and no orphan.
    let s = t
        .cmd(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    let bg = s["blue_green"].as_array().unwrap();
    let row = bg
        .iter()
        .find(|b| b["blue_statement"] == blue_dml)
        .unwrap_or_else(|| panic!("{s:#}"));
    assert_eq!(row["blue_phase"], "RUNNING");
    assert_eq!(
        row["green_statement"],
        "dev-usw2-sales-dml-int-sales-orders-enriched-v2"
    );
    assert_eq!(row["green_phase"], "RUNNING");
    assert_eq!(s["orphans"], serde_json::json!([]));
    // One row per blue statement: a statement set writing two tables is one row naming both.
    let blues: Vec<&str> = bg
        .iter()
        .map(|b| b["blue_statement"].as_str().unwrap())
        .collect();
    let unique: BTreeSet<&str> = blues.iter().copied().collect();
    assert_eq!(blues.len(), unique.len(), "{blues:?}");
    let set_rows: Vec<&Value> = bg
        .iter()
        .filter(|b| b["blue_table_name"].as_str().unwrap().contains(", "))
        .collect();
    assert!(
        set_rows
            .iter()
            .all(|b| b["green_table_name"].as_str().unwrap().contains(", ")),
        "{set_rows:#?}"
    );
    let text = t.cmd(&["pipeline", "status"]).success().stdout();
    assert!(text.contains("Blue-green"), "{text}");
    // Lag and freshness before consumers move: blue and green side by side (Metrics API).
    let green_dml = "dev-usw2-sales-dml-int-sales-orders-enriched-v2";
    fake.set_metrics(blue_dml, 5000, 4900, 0);
    fake.set_metrics(green_dml, 5000, 3000, 1200);
    let endpoint = fake.endpoint();
    let cloud = [
        ("FLINKPIPE_METRICS_URL", endpoint.as_str()),
        (
            "SL_CONFLUENT_CLOUD_API_KEY",
            crate::fake_confluent::CLOUD_KEY,
        ),
        (
            "SL_CONFLUENT_CLOUD_API_SECRET",
            crate::fake_confluent::CLOUD_SECRET,
        ),
    ];
    let s = t
        .cmd_env(&["--output", "json", "pipeline", "status", "--lag"], &cloud)
        .success()
        .stdout_json();
    let row = s["blue_green"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["blue_statement"] == blue_dml)
        .unwrap();
    assert_eq!(row["blue_lag"]["records_out"], 4900, "{row:#}");
    assert_eq!(row["green_lag"]["records_out"], 3000);
    assert_eq!(
        row["green_lag"]["pending_records"], 1200,
        "green has not caught up"
    );
    let text = t
        .cmd_env(&["pipeline", "status", "--lag"], &cloud)
        .success()
        .stdout();
    assert!(
        text.contains("Blue next to green")
            && text.contains("in 5000 / out 4900 / pending 0")
            && text.contains("in 5000 / out 3000 / pending 1200"),
        "{text}"
    );

    // 5. Decommission blue. Stopping would stop every blue job and no table declaration; the blue
    // materialized table's query runs apart from its statement, so it is stopped through the
    // materialized-tables API and its creating statement is left alone.
    let stop = t
        .cmd(&["--output", "json", "pipeline", "decommission", "--dry-run"])
        .success()
        .stdout_json();
    let to_stop: BTreeSet<&str> = stop["plan"]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["statement"].as_str().unwrap())
        .collect();
    assert!(to_stop.contains(blue_dml), "{stop:#}");
    assert!(
        !to_stop.contains("dev-usw2-c360-ddl-c360-mv-customer-360"),
        "{stop:#}"
    );
    let mts = stop["plan"]["materialized_tables"].as_array().unwrap();
    assert_eq!(mts.len(), 1, "{stop:#}");
    assert_eq!(mts[0]["blue_table_name"], "c360_mv_customer_360");
    assert_eq!(mts[0]["action"]["kind"], "stop", "{stop:#}");
    assert!(
        !to_stop.contains("dev-usw2-sales-ddl-int-sales-orders-enriched"),
        "{stop:#}"
    );
    // A dry run changes nothing, then delete without asking.
    let dry = t
        .cmd(&["pipeline", "decommission", "--delete", "--dry-run"])
        .success()
        .stdout();
    assert!(dry.contains(blue_dml) && dry.contains("dry run"), "{dry}");
    assert!(running(&fake).contains(blue_dml));
    let green_before: BTreeSet<String> = running(&fake)
        .into_iter()
        .filter(|n| n.ends_with("-v2"))
        .collect();
    let out = t
        .cmd(&["pipeline", "decommission", "--delete", "--no-ack"])
        .success()
        .stdout();
    assert!(out.contains(&format!("deleted {blue_dml}")), "{out}");
    let deleted: Vec<String> = fake.deletes()[deletes_before..].to_vec();
    // Only blue statements of the release, children first.
    for n in &deleted {
        assert!(!n.ends_with("-v2"), "a green statement was deleted: {n}");
    }
    let pos = |n: &str| deleted.iter().position(|d| d == n).unwrap();
    assert!(
        pos("dev-usw2-sales-dml-int-sales-order-lines") < pos(blue_dml),
        "children first: {deleted:?}"
    );
    let green_after: BTreeSet<String> = running(&fake)
        .into_iter()
        .filter(|n| n.ends_with("-v2"))
        .collect();
    assert_eq!(green_after, green_before);
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(t.pipelines.join("blue_green.json")).unwrap(),
    )
    .unwrap();
    let dec = &record["releases"][0]["decommissioned"][0];
    assert_eq!(dec["action"], "delete");
    assert_eq!(dec["statement_prefix"], "dev-usw2");

    // 6. Afterwards: no blue row, no orphan, nothing left to deploy as green.
    let s = t
        .cmd(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    assert_eq!(s["blue_green"], serde_json::json!([]));
    assert_eq!(s["orphans"], serde_json::json!([]));
    let o = t.cmd(&["pipeline", "deploy", "--blue-green"]);
    let o = o.code(1);
    assert!(
        o.stderr().contains("no green set still open"),
        "{}",
        o.stderr()
    );
}

#[test]
fn orphans_of_a_deleted_table_are_listed_and_decommissioned_and_owned_statements_never() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    t.cmd(&["pipeline", "deploy", "--product-name", "sales"])
        .success()
        .stdout();
    // A leaf table is deleted from the tree: its statements are orphans.
    std::fs::remove_dir_all(t.pipelines.join("views/sales/mv_revenue_export")).unwrap();
    let orphan = "dev-usw2-sales-dml-sales-mv-revenue-export";
    assert!(fake.phase(orphan).is_some());
    // Another project's statement, outside the prefix, is not an orphan of this one.
    fake.seed("prod-usw2-sales-dml-x", "INSERT INTO x SELECT 1", "RUNNING");
    let s = t
        .cmd(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    let orphans: Vec<&str> = s["orphans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["statement"].as_str().unwrap())
        .collect();
    assert!(orphans.contains(&orphan), "{orphans:?}");
    assert!(!orphans.contains(&"prod-usw2-sales-dml-x"));
    // A record that names a table of the tree as blue (hand-edited): refused as a whole (issue
    // #41 item 2), nothing touched.
    std::fs::write(
        t.pipelines.join("blue_green.json"),
        r#"{"format": 1, "releases": [{"created_at": "2026-01-01T00:00:00Z", "base_ref": null,
            "base_commit": null, "statement_prefix": "dev-usw2", "tables": [{
            "blue_table_name": "int_sales_order_lines", "green_table_name": "int_sales_order_lines",
            "product_name": "sales", "blue_statements": [{"name": "dev-usw2-sales-dml-int-sales-order-lines", "role": "job"}],
            "green_statements": [], "reason": "hand-edited"}]}]}"#,
    )
    .unwrap();
    let before = fake.deletes().len();
    let phases = fake.phases();
    let o = t.cmd(&["pipeline", "decommission", "--orphans", "--no-ack"]);
    let err = o.code(1).stderr();
    assert!(
        err.contains("release 2026-01-01T00:00:00Z, tables[1] (blue 'int_sales_order_lines' → green 'int_sales_order_lines'): 'int_sales_order_lines' is not a next version of 'int_sales_order_lines'"),
        "{err}"
    );
    assert_eq!(fake.phases(), phases, "nothing touched");
    std::fs::remove_file(t.pipelines.join("blue_green.json")).unwrap();
    // --stop (the default) stops the orphan job; the owned statement keeps running.
    let out = t
        .cmd(&["pipeline", "decommission", "--orphans", "--no-ack"])
        .success()
        .stdout();
    assert!(out.contains(orphan), "{out}");
    assert_eq!(fake.phase(orphan).as_deref(), Some("STOPPED"));
    assert_eq!(
        fake.phase("dev-usw2-sales-dml-int-sales-order-lines")
            .as_deref(),
        Some("RUNNING")
    );
    assert_eq!(fake.deletes().len(), before);
    // --delete --orphans removes the orphans (DML and DDL) and nothing else.
    t.cmd(&[
        "pipeline",
        "decommission",
        "--orphans",
        "--delete",
        "--no-ack",
    ])
    .success()
    .stdout();
    let deleted: BTreeSet<String> = fake.deletes()[before..].iter().cloned().collect();
    assert_eq!(
        deleted,
        BTreeSet::from([
            orphan.to_string(),
            "dev-usw2-sales-ddl-sales-mv-revenue-export".to_string()
        ])
    );
    assert_eq!(
        fake.phase("prod-usw2-sales-dml-x").as_deref(),
        Some("RUNNING")
    );
    let s = t
        .cmd(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    assert_eq!(s["orphans"], serde_json::json!([]));
}

/// The tool's own unit-test statements (every name a unit-test or integration-test run creates, for
/// every table of the tree, COMPLETED as a gateway keeps them) are labelled as such in `status`, never
/// orphans, and `decommission --orphans --delete` leaves them alone; a statement of the same shape
/// for a table the tree does not hold is still an orphan (#43.6).
#[test]
fn unit_test_statements_are_labelled_not_orphans() {
    use flinkpipe::unittest::{Suffix, TestNaming};
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    let naming = TestNaming {
        prefix: "dev-usw2".into(),
        suffix: Suffix::default(),
    };
    let project = flinkpipe::project::load(
        &t.pipelines,
        &flinkpipe::config::Config::default(),
        flinkpipe::project::LoadOptions {
            allow_unknown: true,
        },
    )
    .unwrap();
    let mut tests = BTreeSet::new();
    for (i, table) in project.inventory.tables.keys().enumerate() {
        let names = [
            naming.ddl(table),
            naming.dml(table),
            naming.ins(1 + i % 3, table),
            naming.val(1 + i % 2, table),
            naming.out(1, table),
            naming.drop(table),
            naming.upgrade("old", table),
        ];
        for n in names {
            fake.seed(&n, "INSERT INTO t_ut SELECT 1", "COMPLETED");
            tests.insert(n);
        }
    }
    let stranger = naming.dml("no_such_table");
    fake.seed(&stranger, "INSERT INTO x_ut SELECT 1", "COMPLETED");
    let s = t
        .cmd(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    let names = |key: &str| -> BTreeSet<String> {
        s[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["statement"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("unit_test_statements"), tests);
    assert_eq!(names("orphans"), BTreeSet::from([stranger.clone()]));
    let text = t.cmd(&["pipeline", "status"]).success().stdout();
    assert!(
        text.contains("Unit-test statements (flinkpipe's own test runs, not orphans)"),
        "{text}"
    );
    let before = fake.deletes().len();
    t.cmd(&[
        "pipeline",
        "decommission",
        "--orphans",
        "--delete",
        "--no-ack",
    ])
    .success()
    .stdout();
    assert_eq!(fake.deletes()[before..], [stranger]);
}

/// Blue deployed, versioned and committed: `deploy --blue-green` not run yet.
fn applied_release(t: &Test) {
    t.release_applied_filter();
}

/// The line of `text` that starts with `start` (empty when none).
fn line_of(text: &str, start: &str) -> String {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_default()
        .to_string()
}

fn decommissions(t: &Test) -> Value {
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(t.pipelines.join("blue_green.json")).unwrap(),
    )
    .unwrap();
    record["releases"][0]["decommissioned"].clone()
}

/// Issue #29 item 1, every kind of green that is not ready — absent (never deployed), FAILED,
/// STOPPED, PENDING — with `--delete` and `--stop`: the blue statement is refused (named with its
/// green and the green's phase), nothing of it is stopped or deleted, the command exits 1 and the
/// release stays open; `--force` acts and says what it ignored.
#[test]
fn decommission_refuses_blue_whose_green_is_not_running() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    applied_release(&t);
    let blue_dml = "dev-usw2-sales-dml-int-sales-orders-enriched";
    let green_dml = "dev-usw2-sales-dml-int-sales-orders-enriched-v2";
    let before = fake.phases();

    // No green at all: every blue statement is refused, nothing is touched.
    for verb in ["--delete", "--stop"] {
        let o = t.cmd(&["pipeline", "decommission", verb, "--no-ack"]);
        let o = o.code(1);
        let err = o.stderr();
        let action = verb.trim_start_matches("--");
        assert!(
            line_of(&err, &format!("error: refused to {action} {blue_dml}: ")).contains(&format!(
                "green statement {green_dml} is absent (needs RUNNING)"
            )),
            "{err}"
        );
        assert!(err.contains("the release stays open"), "{err}");
        assert!(fake.deletes().is_empty(), "{:?}", fake.deletes());
        assert_eq!(fake.phases(), before, "nothing stopped");
        assert_eq!(decommissions(&t), serde_json::json!([]));
    }
    // The dry run says the same and fails too.
    let dry = t.cmd(&[
        "--output",
        "json",
        "pipeline",
        "decommission",
        "--delete",
        "--dry-run",
    ]);
    let dry = dry.code(1);
    let plan: Value = serde_json::from_str(&dry.stdout()).unwrap();
    let refused: BTreeSet<&str> = plan["plan"]["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["statement"].as_str().unwrap())
        .collect();
    // The 8 versioned tables' blue statements, jobs and declarations.
    assert!(refused.len() >= 8, "{plan:#}");
    assert!(refused.contains(blue_dml), "{plan:#}");
    assert!(
        refused.contains("dev-usw2-sales-ddl-int-sales-orders-enriched"),
        "{plan:#}"
    );
    let first = &plan["plan"]["refused"][0]["not_ready"][0];
    assert_eq!(first["phase"], Value::Null, "{first:#}");
    assert_eq!(plan["plan"]["statements"], serde_json::json!([]));

    // Green deployed, then one green job FAILED, STOPPED or PENDING: that blue job is refused and
    // kept, the others go; the release stays open.
    t.cmd(&["pipeline", "deploy", "--blue-green"])
        .success()
        .stdout();
    for phase in ["FAILED", "STOPPED", "PENDING"] {
        fake.force_phase(green_dml, phase, "forced by the test");
        let o = t.cmd(&["pipeline", "decommission", "--stop", "--no-ack"]);
        let o = o.code(1);
        let err = o.stderr();
        assert!(
            line_of(&err, &format!("error: refused to stop {blue_dml}: ")).starts_with(&format!(
                "error: refused to stop {blue_dml}: green statement {green_dml} is {phase} (needs RUNNING)"
            )),
            "{err}"
        );
        // Issue #41: every green table downstream of it runs on no input, so its blue stays too.
        let child = "dev-usw2-sales-dml-int-sales-order-lines";
        assert!(
            line_of(&err, &format!("error: refused to stop {child}: ")).starts_with(&format!(
                "error: refused to stop {child}: green statement {green_dml} is {phase} (needs RUNNING), upstream of green int_sales_order_lines_v2, which would run on no input"
            )),
            "{err}"
        );
        assert_eq!(fake.phase(blue_dml).as_deref(), Some("RUNNING"));
        assert_eq!(fake.phase(child).as_deref(), Some("RUNNING"));
        assert_eq!(decommissions(&t), serde_json::json!([]), "{phase}");
    }
    // Issue #41 item 1, the variant without an interrupt: with the changed table's green job
    // FAILED, no blue statement of the release is stopped or deleted, its descendants' neither
    // (their green successors run, on no input).
    for (name, phase) in fake.phases() {
        if !name.ends_with("-v2") {
            assert_ne!(phase, "STOPPED", "{name}");
        }
    }
    fake.force_phase(green_dml, "FAILED", "forced by the test");
    let o = t.cmd(&["pipeline", "decommission", "--delete", "--no-ack"]);
    o.code(1);
    assert!(fake.deletes().is_empty(), "{:?}", fake.deletes());
    assert_eq!(decommissions(&t), serde_json::json!([]));

    // --force deletes it, says what it ignored, and closes the release.
    let o = t.cmd(&[
        "pipeline",
        "decommission",
        "--delete",
        "--no-ack",
        "--force",
    ]);
    let o = o.success();
    assert_eq!(
        line_of(
            &o.stderr(),
            &format!("warning: --force: deleted {blue_dml} ")
        ),
        format!(
            "warning: --force: deleted {blue_dml} although green statement {green_dml} is FAILED (needs RUNNING)"
        ),
        "{}",
        o.stderr()
    );
    assert!(fake.deletes().contains(&blue_dml.to_string()));
    assert_eq!(
        fake.phase(green_dml).as_deref(),
        Some("FAILED"),
        "green untouched"
    );
    let dec = decommissions(&t);
    assert_eq!(dec[0]["action"], "delete", "{dec:#}");
    assert!(
        dec[0]["statements"]
            .as_array()
            .unwrap()
            .contains(&Value::from(blue_dml))
    );
}

/// A green table whose job runs is ready even when its COMPLETED declaration was deleted (as
/// Confluent users do with finished DDL statements): its blue statements go, the release closes.
#[test]
fn decommission_needs_the_green_jobs_running_not_their_finished_declarations() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    applied_release(&t);
    t.cmd(&["pipeline", "deploy", "--blue-green"])
        .success()
        .stdout();
    let green_ddl = "dev-usw2-sales-ddl-int-sales-orders-enriched-v2";
    // `statement delete` takes no pipelines folder.
    Test::fixture()
        .confluent(&fake)
        .args(&["statement", "delete", green_ddl])
        .run()
        .success();
    let out = t
        .cmd(&["pipeline", "decommission", "--delete", "--no-ack"])
        .success()
        .stdout();
    assert!(
        out.contains("deleted dev-usw2-sales-dml-int-sales-orders-enriched "),
        "{out}"
    );
    assert_eq!(decommissions(&t)[0]["action"], "delete");
}

const WEB_ORDERS_DML: &str =
    "intermediates/sales/int_web_orders/sql-scripts/dml.int_sales_web_orders.sql";

/// Every table written by a RUNNING statement of the fake → the statements writing it (by the
/// statement's SQL, read with flinkpipe's own front end).
fn writers_of_running(
    fake: &FakeConfluent,
) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let mut out: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for name in running(fake) {
        let sql = fake.sql(&name).unwrap_or_default();
        for st in flinkpipe::sql::analyze(&sql).statements {
            if matches!(
                st.kind,
                flinkpipe::sql::StatementKind::Insert | flinkpipe::sql::StatementKind::StatementSet
            ) {
                for s in st.sinks {
                    out.entry(s.name.dotted()).or_default().insert(name.clone());
                }
            }
        }
    }
    out
}

/// The walkthrough of the statement-set defect: the second INSERT of the example's statement set
/// changes; impact, blue-green and the green deploy cover both sinks and their readers, and no table is
/// written by two running statements.
#[test]
fn statement_set_changed_in_its_second_insert_versions_both_sinks_and_green_writes_only_green() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    t.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
        .success()
        .stdout();
    let blue_set = "dev-usw2-sales-dml-int-sales-web-orders";
    assert!(running(&fake).contains(blue_set));

    t.repo().branch("feature");
    t.repo().edit(WEB_ORDERS_DML, |t| {
        t.replace(
            "WHERE channel = 'store';",
            "WHERE channel = 'store' AND amount >= 5;",
        )
    });
    t.repo().commit("store orders of 5 or more", T_CHANGE);
    let modified = t
        .cmd(&[
            "--output",
            "json",
            "project",
            "list-modified-files",
            "--since",
            "main",
            "--output-dir",
            t.root.join("out").to_str().unwrap(),
        ])
        .success()
        .stdout_json();
    assert_eq!(
        modified["file_list"][0]["statement_sinks"],
        serde_json::json!(["int_sales_store_orders", "int_sales_web_orders"]),
        "{modified:#}"
    );
    let impact = t
        .cmd(&[
            "--output",
            "json",
            "project",
            "list-impacted-tables",
            "--since",
            "main",
            "--output-dir",
            t.root.join("out").to_str().unwrap(),
        ])
        .success()
        .stdout_json();
    let impacted: BTreeSet<&str> = impact["impacted_tables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in [
        "int_sales_store_orders",
        "sales_mv_top_stores",
        "c360_fct_engagement",
        "c360_mv_customer_360",
    ] {
        assert!(impacted.contains(t), "{t} not impacted: {impacted:?}");
    }

    let v = t
        .cmd(&[
            "--output",
            "json",
            "pipeline",
            "blue-green",
            "--since",
            "main",
            "--apply",
        ])
        .success()
        .stdout_json();
    assert_eq!(v["applied"], true);
    let dml = std::fs::read_to_string(t.repo().path(WEB_ORDERS_DML)).unwrap();
    assert!(
        dml.contains("INSERT INTO int_sales_web_orders_v2")
            && dml.contains("INSERT INTO int_sales_store_orders_v2"),
        "{dml}"
    );
    let top = std::fs::read_to_string(
        t.repo()
            .path("views/sales/mv_top_stores/sql-scripts/dml.sales_mv_top_stores.sql"),
    )
    .unwrap();
    assert!(top.contains("int_sales_store_orders_v2"), "{top}");
    t.cmd(&["pipeline", "validate"]).success().stdout();
    t.repo().commit("blue-green", T_CHANGE + 60);

    t.cmd(&["pipeline", "deploy", "--blue-green"])
        .success()
        .stdout();
    let live = running(&fake);
    assert!(live.contains(blue_set), "blue keeps running: {live:?}");
    assert!(
        live.contains("dev-usw2-sales-dml-int-sales-web-orders-v2"),
        "{live:?}"
    );
    let green_sql = fake
        .sql("dev-usw2-sales-dml-int-sales-web-orders-v2")
        .unwrap();
    assert!(
        !green_sql.contains("int_sales_store_orders\n"),
        "{green_sql}"
    );
    for (table, statements) in writers_of_running(&fake) {
        assert_eq!(statements.len(), 1, "{table} is written by {statements:?}");
    }
    assert_eq!(
        writers_of_running(&fake)["int_sales_store_orders"],
        BTreeSet::from([blue_set.to_string()])
    );
    assert_eq!(
        writers_of_running(&fake)["int_sales_store_orders_v2"],
        BTreeSet::from(["dev-usw2-sales-dml-int-sales-web-orders-v2".to_string()])
    );

    // Decommission removes the blue statement set once, as one statement, and keeps green.
    t.cmd(&["pipeline", "decommission", "--delete", "--no-ack"])
        .success()
        .stdout();
    let deletes: Vec<String> = fake
        .deletes()
        .into_iter()
        .filter(|d| d == blue_set)
        .collect();
    assert_eq!(deletes.len(), 1, "{:?}", fake.deletes());
    assert!(fake.phase(blue_set).is_none());
    assert!(running(&fake).contains("dev-usw2-sales-dml-int-sales-web-orders-v2"));
}

/// A green statement set that still writes a blue sink (renamed by hand, one INSERT of two) is refused
/// before anything is created — by `build-execution-plan`, `deploy --dry-run` and `deploy` — naming
/// both statements and where each writes the table.
#[test]
fn a_deploy_that_would_leave_a_table_with_two_running_writers_is_refused_before_anything_starts() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    t.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
        .success()
        .stdout();
    // The old defect, by hand: only the first sink is versioned.
    t.repo().edit(WEB_ORDERS_DML, |t| {
        t.replace(
            "INSERT INTO int_sales_web_orders\n",
            "INSERT INTO int_sales_web_orders_v2\n",
        )
    });
    let ddl = "intermediates/sales/int_web_orders/sql-scripts/ddl.int_sales_web_orders.sql";
    t.repo().edit(ddl, |t| {
        t.replace("int_sales_web_orders", "int_sales_web_orders_v2")
    });
    t.repo().edit(
        "facts/c360/fct_engagement/sql-scripts/dml.c360_fct_engagement.sql",
        |t| {
            t.replace(
                "FROM int_sales_web_orders ",
                "FROM int_sales_web_orders_v2 ",
            )
        },
    );
    t.cmd(&["pipeline", "validate"]).success().stdout();
    let created_before = fake.created().len();
    for args in [
        vec![
            "pipeline",
            "build-execution-plan",
            "--table-name",
            "int_sales_web_orders_v2",
        ],
        vec![
            "pipeline",
            "deploy",
            "--table-name",
            "int_sales_web_orders_v2",
            "--dry-run",
        ],
        vec![
            "pipeline",
            "deploy",
            "--table-name",
            "int_sales_web_orders_v2",
        ],
    ] {
        let o = t.cmd(&args);
        let err = o.stderr();
        o.failure();
        assert!(
            err.contains("table 'int_sales_store_orders' would be written by 2 statements")
                && err.contains("dev-usw2-sales-dml-int-sales-web-orders (running on the target, line")
                && err.contains("dev-usw2-sales-dml-int-sales-web-orders-v2 (pipelines/intermediates/sales/int_web_orders/sql-scripts/dml.int_sales_web_orders.sql:11)"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        fake.created().len(),
        created_before,
        "something was created"
    );
    assert!(
        fake.phase("dev-usw2-sales-dml-int-sales-web-orders-v2")
            .is_none()
    );
}

/// The one-writer check counts only what a deploy causes: a carry-over's `<name>-co` is not a second
/// writer; a stopped statement of another prefix is not one either.
#[test]
fn the_one_writer_check_ignores_carry_over_temporaries_and_stopped_statements() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    t.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
        .success()
        .stdout();
    let sql = fake
        .sql("dev-usw2-sales-dml-sales-fct-order-payments")
        .expect("deployed");
    fake.seed(
        "stg-usw2-sales-dml-sales-fct-order-payments",
        &sql,
        "STOPPED",
    );
    fake.seed(
        "dev-usw2-sales-dml-sales-fct-order-payments-co",
        &sql,
        "RUNNING",
    );
    for args in [
        vec![
            "pipeline",
            "deploy",
            "--table-name",
            "sales_fct_order_payments",
            "--dry-run",
        ],
        vec![
            "pipeline",
            "build-execution-plan",
            "--table-name",
            "sales_fct_order_payments",
        ],
    ] {
        let o = t.cmd(&args);
        o.success();
    }
}

/// Issue #41 item 4: one writer per table across prefixes. The same tree deployed a second time
/// with another `kafka.cluster_type` (another statement prefix, same environment, catalog and
/// database) is refused before anything is created, naming each table and the statement already
/// writing it; so is a deploy next to another team's running `INSERT INTO` one of its tables,
/// however the name is written (backquoted, qualified under the statement's own
/// `sql.current-catalog` / `sql.current-database`), on `deploy`, `deploy --dry-run` and
/// `build-execution-plan`.
#[test]
fn a_second_writer_of_another_prefix_or_team_is_refused_before_anything_is_created() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    t.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
        .success()
        .stdout();
    let config = t.root.join("config.yaml");
    let yaml = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        yaml.replace("cluster_type: dev", "cluster_type: stage"),
    )
    .unwrap();
    let created = fake.created().len();
    for args in [
        vec!["pipeline", "deploy", "--dir", "pipelines", "--dry-run"],
        vec!["pipeline", "deploy", "--dir", "pipelines"],
    ] {
        let o = t.cmd(&args);
        let err = o.stderr();
        o.code(1);
        assert!(
            err.contains("one writer per table")
                && err
                    .contains("table 'sales_fct_order_payments' would be written by 2 statements")
                && err.contains(
                    "dev-usw2-sales-dml-sales-fct-order-payments (running on the target, line"
                )
                && err.contains("stage-usw2-sales-dml-sales-fct-order-payments ("),
            "{args:?}: {err}"
        );
    }
    assert_eq!(fake.created().len(), created, "something was created");
    assert!(!fake.names().iter().any(|n| n.starts_with("stage-")));

    // Another team's INSERT INTO one of the tree's tables, on a fresh environment, written in every
    // way Flink reads as that table.
    for (i, (text, props)) in [
        ("INSERT INTO sales_fct_order_payments SELECT * FROM x", vec![]),
        ("INSERT INTO `sales_fct_order_payments` SELECT * FROM x", vec![]),
        (
            "INSERT INTO `env-1`.`lkc-1`.`sales_fct_order_payments` SELECT * FROM x",
            vec![],
        ),
        (
            "INSERT INTO sales_fct_order_payments SELECT * FROM x",
            vec![("sql.current-catalog", "env-1"), ("sql.current-database", "lkc-1")],
        ),
        (
            "EXECUTE STATEMENT SET BEGIN INSERT INTO other_t SELECT 1; INSERT INTO sales_fct_order_payments SELECT * FROM x; END",
            vec![],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let fake = FakeConfluent::start();
        let t = repo(&fake);
        let theirs = format!("team-b-job-{i}");
        fake.seed(&theirs, text, "RUNNING");
        fake.set_properties(&theirs, &props);
        for args in [
            vec!["pipeline", "build-execution-plan", "--dir", "pipelines"],
            vec!["pipeline", "deploy", "--dir", "pipelines"],
        ] {
            let o = t.cmd(&args);
            let err = o.stderr();
            o.code(1);
            assert!(
                err.contains("would be written by 2 statements")
                    && err.contains("sales_fct_order_payments")
                    && err.contains(&format!("{theirs} (running on the target, line 1 of its SQL)")),
                "{text} {props:?} {args:?}: {err}"
            );
        }
        assert!(fake.created().is_empty(), "{text}: something was created");
    }
    // `x.y` (one identifier) is not `x`.`y`: a write into the table `sales_fct_order_payments.z`
    // of no catalog is not a write into the project's table, nor one into a database named after it.
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    fake.seed(
        "team-c-job",
        "INSERT INTO `lkc-1.sales_fct_order_payments` SELECT * FROM x",
        "RUNNING",
    );
    fake.set_properties("team-c-job", &[("sql.current-database", "lkc-1")]);
    t.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
        .success();
}

/// Issue #25, who still reads blue, on Confluent Cloud: another team's running statement reads a
/// blue table (found in its SQL) and a consumer group with a member reads its topic (Kafka REST API
/// v3, the Kafka key): `status` lists them with the group's lag, a stopped statement and an empty
/// group too; `decommission` refuses that table's blue statements naming both readers (the empty
/// group and the stopped statement do not block) and deletes the others; without `/lags` (a cluster
/// that is not dedicated) a group is found by its consumers' assignments, lag unknown; `--force`
/// deletes, says what it ignored, and never touches the readers.
#[test]
fn decommission_refuses_blue_that_another_team_or_a_consumer_group_still_reads() {
    use crate::fake_confluent::{FakeGroup, KAFKA_CLUSTER, KAFKA_KEY, KAFKA_SECRET};
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    std::fs::write(
        t.root.join("config.yaml"),
        crate::support::test::confluent_config().replace(
            "cluster_type: dev\n",
            &format!("cluster_type: dev\n  cluster_id: {KAFKA_CLUSTER}\n"),
        ),
    )
    .unwrap();
    applied_release(&t);
    t.cmd(&["pipeline", "deploy", "--blue-green"])
        .success()
        .stdout();
    let blue = "int_sales_orders_enriched";
    let blue_dml = "dev-usw2-sales-dml-int-sales-orders-enriched";
    let blue_ddl = "dev-usw2-sales-ddl-int-sales-orders-enriched";
    fake.seed(
        "team-b-dml-order-report",
        "INSERT INTO team_b_order_report SELECT e.order_id, e.amount FROM int_sales_orders_enriched AS e WHERE e.amount > 100",
        "RUNNING",
    );
    fake.seed(
        "team-c-dml-archive",
        "INSERT INTO team_c_archive SELECT * FROM `int_sales_orders_enriched`",
        "STOPPED",
    );
    let topic = |p: i64| (blue.to_string(), p);
    fake.add_group(FakeGroup {
        id: "billing-app".into(),
        state: "STABLE".into(),
        consumers: vec![("billing-1".into(), vec![topic(0), topic(1)])],
        offsets: vec![(blue.into(), 0, 10, 15), (blue.into(), 1, 7, 7)],
    });
    fake.add_group(FakeGroup {
        id: "old-export".into(),
        state: "EMPTY".into(),
        consumers: vec![],
        offsets: vec![(blue.into(), 0, 3, 15)],
    });
    fake.add_group(FakeGroup {
        id: "unrelated".into(),
        state: "STABLE".into(),
        consumers: vec![("u-1".into(), vec![("other_topic".into(), 0)])],
        offsets: vec![("other_topic".into(), 0, 1, 2)],
    });
    let url = fake.endpoint();
    let env = [
        ("FLINKPIPE_KAFKA_REST_URL", url.as_str()),
        ("SL_KAFKA_API_KEY", KAFKA_KEY),
        ("SL_KAFKA_API_SECRET", KAFKA_SECRET),
    ];
    let run_k = |args: &[&str]| {
        let o = t.cmd_env(args, &env);
        let all = format!("{}{}", o.stdout(), o.stderr());
        assert!(
            !all.contains(KAFKA_KEY) && !all.contains(KAFKA_SECRET),
            "{all}"
        );
        o
    };
    let readers_of = |s: &Value, table: &str| -> Value {
        s["blue_readers"]["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["blue_table_name"] == table)
            .cloned()
            .unwrap_or_else(|| panic!("{table} not listed: {s:#}"))
    };

    let s = run_k(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    assert_eq!(
        s["blue_readers"]["consumer_groups"],
        serde_json::json!({"kind": "kafka_rest", "url": url, "cluster_id": KAFKA_CLUSTER})
    );
    let reads = readers_of(&s, blue);
    assert_eq!(reads["topic"], blue, "{reads:#}");
    assert_eq!(
        reads["statements"],
        serde_json::json!([
            {"statement": "team-b-dml-order-report", "phase": "RUNNING", "found_in": "sql_text"},
            {"statement": "team-c-dml-archive", "phase": "STOPPED", "found_in": "sql_text"}
        ])
    );
    assert_eq!(
        reads["consumer_groups"],
        serde_json::json!([
            {"group_id": "billing-app", "state": "STABLE", "members": 1, "lag": 5, "partitions": 2},
            {"group_id": "old-export", "state": "EMPTY", "members": 0, "lag": 12, "partitions": 1}
        ])
    );
    // A blue table nobody else reads: its own blue child is the project's.
    let lines = readers_of(&s, "int_sales_order_lines");
    assert_eq!(lines["statements"], serde_json::json!([]), "{lines:#}");
    assert_eq!(lines["consumer_groups"], serde_json::json!([]), "{lines:#}");
    let text = run_k(&["pipeline", "status"]).success().stdout();
    assert!(
        text.contains(
            "    consumer group billing-app: STABLE, 1 member(s), lag 5 over 2 partition(s), blocks decommission\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    statement team-c-dml-archive STOPPED (read in its SQL)\n"),
        "{text}"
    );

    // Refused, naming both readers; the other blue statements go; the release stays open.
    let readers = format!(
        "still read: statement team-b-dml-order-report (RUNNING) reads {blue}; still read: consumer group billing-app (1 member(s), lag 5) reads topic {blue}"
    );
    // The whole error: one line per refused blue statement, then what to do.
    run_k(&["pipeline", "decommission", "--delete", "--no-ack"])
        .code(1)
        .stderr_is(&format!(
            "error: refused to delete {blue_dml}: {readers}\nerror: refused to delete {blue_ddl}: {readers}\nerror: 2 blue statement(s) refused: move the readers named above to the green tables (or stop them), or pass --force; the release stays open\n"
        ));
    assert!(!fake.deletes().contains(&blue_dml.to_string()));
    assert!(
        fake.deletes()
            .contains(&"dev-usw2-sales-dml-int-sales-order-lines".to_string()),
        "{:?}",
        fake.deletes()
    );
    assert_eq!(decommissions(&t), serde_json::json!([]));
    let dry = run_k(&[
        "--output",
        "json",
        "pipeline",
        "decommission",
        "--delete",
        "--dry-run",
    ]);
    let dry = dry.code(1);
    let plan: Value = serde_json::from_str(&dry.stdout()).unwrap();
    let refused = &plan["plan"]["refused"];
    assert_eq!(refused.as_array().unwrap().len(), 2, "{plan:#}");
    assert_eq!(refused[0]["reasons"], serde_json::json!(["still_read"]));
    assert_eq!(refused[0]["not_ready"], serde_json::json!([]));
    assert_eq!(
        refused[0]["readers"][1],
        serde_json::json!({"kind": "active_group", "table": blue, "topic": blue,
            "group_id": "billing-app", "members": 1, "lag": 5})
    );

    // A cluster without `/lags`: the group is found by its consumer's assignment, lag unknown;
    // the empty group cannot be seen.
    fake.unsupported_lags();
    let s = run_k(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    assert_eq!(
        readers_of(&s, blue)["consumer_groups"],
        serde_json::json!([
            {"group_id": "billing-app", "state": "STABLE", "members": 1, "lag": null, "partitions": 2}
        ])
    );

    // The consumer groups cannot be read (the REST API answers 503): who reads blue is unknown, so
    // every blue statement left is refused, with the error.
    fake.add_fault(crate::fake_confluent::Fault::new(
        Some("GET"),
        Some("/consumer-groups"),
        crate::fake_confluent::FaultAction::Status {
            status: 503,
            headers: vec![],
            body: r#"{"error_code":50301,"message":"fake outage"}"#.into(),
        },
        1,
    ));
    let dry = run_k(&[
        "--output",
        "json",
        "pipeline",
        "decommission",
        "--delete",
        "--dry-run",
    ]);
    let dry = dry.code(1);
    let plan: Value = serde_json::from_str(&dry.stdout()).unwrap();
    let refused = plan["plan"]["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 2, "{plan:#}");
    assert_eq!(
        refused[0]["reasons"],
        serde_json::json!(["still_read", "readers_unknown"]),
        "{plan:#}"
    );
    let unknown = refused[0]["unknown_readers"][0].as_str().unwrap();
    assert!(
        unknown.starts_with("consumer groups: GET ")
            && unknown.ends_with("503 Service Unavailable: fake outage"),
        "{unknown}"
    );

    // --force deletes them, says what it ignored, and leaves the readers alone.
    let o = run_k(&[
        "pipeline",
        "decommission",
        "--delete",
        "--no-ack",
        "--force",
    ]);
    let o = o.success();
    assert_eq!(
        line_of(
            &o.stderr(),
            &format!("warning: --force: deleted {blue_dml} ")
        ),
        format!(
            "warning: --force: deleted {blue_dml} although still read: statement team-b-dml-order-report (RUNNING) reads {blue}; still read: consumer group billing-app (1 member(s), lag unknown) reads topic {blue}"
        ),
        "{}",
        o.stderr()
    );
    assert!(fake.deletes().contains(&blue_dml.to_string()));
    assert_eq!(
        fake.phase("team-b-dml-order-report").as_deref(),
        Some("RUNNING")
    );
    assert_eq!(fake.phase("team-c-dml-archive").as_deref(), Some("STOPPED"));
    assert_eq!(decommissions(&t)[0]["action"], "delete");
    let requests = fake.requests();
    assert!(
        requests
            .iter()
            .filter(|q| q.path.starts_with("/kafka/v3/"))
            .all(|q| q.authorized && !q.secret_in_clear)
    );
}

/// A refused blue job keeps the blue tables it reads: another team's running statement reads the
/// blue `int_sales_order_lines` (a child of the changed table), so `decommission --delete` refuses
/// its blue job and, children first, the blue statements of its parent `int_sales_orders_enriched`
/// ("still read: statement <the kept blue job> (RUNNING) reads int_sales_orders_enriched"), which
/// would otherwise be deleted under a reader that stays; blue tables that are not its ancestors
/// go. Found on the local Flink by `e2e_release`.
#[test]
fn decommission_keeps_the_blue_parents_of_a_refused_blue_job() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    applied_release(&t);
    t.cmd(&["pipeline", "deploy", "--blue-green"])
        .success()
        .stdout();
    let lines_dml = "dev-usw2-sales-dml-int-sales-order-lines";
    let enriched_dml = "dev-usw2-sales-dml-int-sales-orders-enriched";
    let enriched_ddl = "dev-usw2-sales-ddl-int-sales-orders-enriched";
    fake.seed(
        "team-b-dml-line-report",
        "INSERT INTO team_b_line_report SELECT l.order_id FROM int_sales_order_lines AS l",
        "RUNNING",
    );
    let o = t.cmd(&["pipeline", "decommission", "--delete", "--no-ack"]);
    let o = o.code(1);
    let err = o.stderr();
    assert_eq!(
        line_of(&err, &format!("error: refused to delete {lines_dml}: ")),
        format!(
            "error: refused to delete {lines_dml}: still read: statement team-b-dml-line-report (RUNNING) reads int_sales_order_lines"
        ),
        "{err}"
    );
    for parent in [enriched_dml, enriched_ddl] {
        assert_eq!(
            line_of(&err, &format!("error: refused to delete {parent}: ")),
            format!(
                "error: refused to delete {parent}: still read: statement {lines_dml} (RUNNING) reads int_sales_orders_enriched"
            ),
            "{err}"
        );
    }
    let deletes = fake.deletes();
    for kept in [lines_dml, enriched_dml, enriched_ddl] {
        assert!(!deletes.contains(&kept.to_string()), "{deletes:?}");
    }
    assert_eq!(fake.phase(enriched_dml).as_deref(), Some("RUNNING"));
    assert_eq!(fake.phase(lines_dml).as_deref(), Some("RUNNING"));
    // Blue statements of the release that are not ancestors of the kept job go.
    assert!(
        deletes.iter().any(|d| d.starts_with("dev-usw2-sales-")
            && !d.ends_with("-v2")
            && ![lines_dml, enriched_dml, enriched_ddl].contains(&d.as_str())),
        "{deletes:?}"
    );
    assert_eq!(
        decommissions(&t),
        serde_json::json!([]),
        "the release stays open"
    );
}
