//! Blue-green versioning end to end on our example project in a temporary git repository: a logic change
//! in an intermediate versions it and every descendant, rewrites exactly the files that name them, keeps
//! the rest byte for byte, rebuilds the metadata, and a second run is a no-op.

use crate::support::repo::{Repo, T_CHANGE};
use crate::support::test::Outcome;
use crate::support::{Test, our_fixture};
use std::fs;

const ENRICHED_DML: &str =
    "intermediates/sales/int_orders_enriched/sql-scripts/dml.int_sales_orders_enriched.sql";

fn changed_repo() -> Repo {
    let r = Repo::new(our_fixture());
    r.branch("feature");
    r.edit(ENRICHED_DML, |t| {
        t.replace(
            "  ON o.currency = r.currency;",
            "  ON o.currency = r.currency\nWHERE o.channel <> 'test';",
        )
    });
    r.commit("filter test orders", T_CHANGE);
    r
}

fn run(r: &Repo, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "pipeline",
        "blue-green",
        r.pipelines.to_str().unwrap(),
        "--since",
        "main",
    ];
    args.extend_from_slice(extra);
    Test::outside(&args)
}

fn snapshot_tree(r: &Repo) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for e in walkdir::WalkDir::new(&r.pipelines).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "sql") {
            v.push((
                e.path()
                    .strip_prefix(&r.pipelines)
                    .unwrap()
                    .display()
                    .to_string(),
                fs::read_to_string(e.path()).unwrap(),
            ));
        }
    }
    v
}

#[test]
fn dry_run_prints_diff_and_green_plan_and_changes_nothing() {
    let r = changed_repo();
    let before = snapshot_tree(&r);
    let o = run(&r, &["--output", "json"]);
    let o = o.success();
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let renames: Vec<(String, String)> = v["renames"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let expected: Vec<(String, String)> = [
        "c360_fct_customer_orders",
        "c360_mv_customer_360",
        "int_sales_order_lines",
        "int_sales_orders_enriched",
        "inventory_fct_sku_demand",
        "inventory_mv_replenishment",
        "sales_fct_store_revenue_1m",
        "sales_mv_revenue_export",
    ]
    .iter()
    .map(|t| (t.to_string(), format!("{t}_v2")))
    .collect();
    assert_eq!(renames, expected);
    // Green plan parents first, with the blue statements to stop.
    let green: Vec<(&str, u64)> = v["green"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["table_name"].as_str().unwrap(),
                g["wave"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(green[0], ("int_sales_orders_enriched_v2", 0));
    assert_eq!(green[1], ("int_sales_order_lines_v2", 1));
    let first = &v["green"][0];
    assert_eq!(
        first["dml_statement_name"],
        "dev-usw2-sales-dml-int-sales-orders-enriched-v2"
    );
    assert_eq!(
        first["blue_dml_statement_name"],
        "dev-usw2-sales-dml-int-sales-orders-enriched"
    );
    assert_eq!(first["reason"], "logic change");
    assert_eq!(snapshot_tree(&r), before, "a dry run must not write");
    // The text form is a unified diff plus the plan.
    let o = run(&r, &[]);
    let text = o.stdout_raw();
    assert!(
        text.contains(&format!("--- a/pipelines/{ENRICHED_DML}")),
        "{text}"
    );
    assert!(
        text.contains(
            "-INSERT INTO int_sales_orders_enriched\n+INSERT INTO int_sales_orders_enriched_v2"
        ),
        "{text}"
    );
    assert!(text.contains("8 table(s) versioned"), "{text}");
}

#[test]
fn apply_rewrites_rebuilds_and_second_run_is_a_noop() {
    let r = changed_repo();
    let before = snapshot_tree(&r);
    let o = run(&r, &["--apply"]);
    o.success();
    let after = snapshot_tree(&r);
    let changed: Vec<&str> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b.1 != a.1)
        .map(|(b, _)| b.0.as_str())
        .collect();
    assert_eq!(
        changed,
        [
            "facts/c360/fct_customer_orders/sql-scripts/ddl.c360_fct_customer_orders.sql",
            "facts/c360/fct_customer_orders/sql-scripts/dml.c360_fct_customer_orders.sql",
            "facts/inventory/fct_sku_demand/sql-scripts/ddl.inventory_fct_sku_demand.sql",
            "facts/inventory/fct_sku_demand/sql-scripts/dml.inventory_fct_sku_demand.sql",
            "facts/sales/fct_store_revenue_1m/sql-scripts/ddl.sales_fct_store_revenue_1m.sql",
            "facts/sales/fct_store_revenue_1m/sql-scripts/dml.sales_fct_store_revenue_1m.sql",
            // The unit tests move with the tables they name (`<t>_ut` → `<t>_v2_ut`).
            "facts/sales/fct_store_revenue_1m/tests/ddl_int_sales_order_lines.sql",
            "facts/sales/fct_store_revenue_1m/tests/validate_sales_fct_store_revenue_1m_1.sql",
            "intermediates/sales/int_order_lines/sql-scripts/ddl.int_sales_order_lines.sql",
            "intermediates/sales/int_order_lines/sql-scripts/dml.int_sales_order_lines.sql",
            "intermediates/sales/int_orders_enriched/sql-scripts/ddl.int_sales_orders_enriched.sql",
            "intermediates/sales/int_orders_enriched/sql-scripts/dml.int_sales_orders_enriched.sql",
            "views/c360/mv_customer_360/sql-scripts/ddl.c360_mv_customer_360.sql",
            "views/inventory/mv_replenishment/sql-scripts/ddl.inventory_mv_replenishment.sql",
            "views/inventory/mv_replenishment/sql-scripts/dml.inventory_mv_replenishment.sql",
            "views/sales/mv_revenue_export/sql-scripts/ddl.sales_mv_revenue_export.sql",
            "views/sales/mv_revenue_export/sql-scripts/dml.sales_mv_revenue_export.sql",
        ]
    );
    // Every rewritten file differs from its original only by table names (and added aliases).
    for ((name, b), (_, a)) in before.iter().zip(&after) {
        if b != a {
            insta::assert_snapshot!(
                format!("blue_green_{}", name.rsplit('/').next().unwrap()),
                a
            );
        }
    }
    // Inventory and metadata were rebuilt with the green names.
    let inv = fs::read_to_string(r.pipelines.join("inventory.json")).unwrap();
    assert!(
        inv.contains("\"int_sales_orders_enriched_v2\"")
            && !inv.contains("\"int_sales_orders_enriched\""),
        "{inv}"
    );
    let def = fs::read_to_string(
        r.pipelines
            .join("intermediates/sales/int_order_lines/pipeline_definition.json"),
    )
    .unwrap();
    assert!(
        def.contains("\"table_name\": \"int_sales_orders_enriched_v2\""),
        "{def}"
    );
    // File and folder names stay; the naming lint accepts files named after another version of
    // their table (it passed before the change too).
    let o = Test::outside(&[
        "table",
        "validate-table-names",
        r.pipelines.to_str().unwrap(),
    ]);
    o.success();
    // Commit the green version; the same command again recognises the versioned subgraph.
    r.commit("green", T_CHANGE + 60);
    // Since main, each versioned table is the blue one gone and the green one added.
    let o = r.run(&["project", "list-modified-files", "--since", "main"]);
    assert!(
        o.stdout_raw()
            .contains("table renamed from int_sales_orders_enriched"),
        "{}",
        o.stdout_raw()
    );
    // modified_flink_files.json and .txt name the tables at the head (what plans and shift_left read);
    // the base name is kept apart.
    let listed: serde_json::Value =
        serde_json::from_str(&r.out_file("modified_flink_files.json")).unwrap();
    let row = listed["file_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| {
            row["file_modified_url"]
                .as_str()
                .unwrap()
                .ends_with("dml.int_sales_orders_enriched.sql")
        })
        .unwrap();
    assert_eq!(row["table_name"], "int_sales_orders_enriched_v2");
    assert_eq!(row["base_table_name"], "int_sales_orders_enriched");
    let names = r.out_file("modified_flink_files.txt");
    assert!(
        names.contains("int_sales_orders_enriched_v2\n")
            && !names.contains("int_sales_orders_enriched\n"),
        "{names}"
    );
    let o = r.run(&[
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        "--since",
        "main",
    ]);
    let o = o.success();
    let impact: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let kinds: std::collections::BTreeMap<String, String> = impact["impacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["table_name"].as_str().unwrap().to_string(),
                i["change_kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(kinds["int_sales_orders_enriched"], "deleted");
    assert_eq!(kinds["int_sales_orders_enriched_v2"], "added");
    assert_eq!(kinds["sales_mv_revenue_export_v2"], "added");
    let o = run(&r, &["--output", "json"]);
    let o = o.success();
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(v["renames"], serde_json::json!({}));
    assert_eq!(v["unchanged"].as_array().unwrap().len(), 8, "{v}");
    let o = run(&r, &["--apply"]);
    o.success();
    assert_eq!(snapshot_tree(&r), after, "second apply must be a no-op");
}

#[test]
fn update_tables_version_bumps_listed_tables_and_descendants() {
    let (_t, root) = our_fixture();
    let list = root.parent().unwrap().join("tables.txt");
    fs::write(&list, "int_sales_order_lines\n").unwrap();
    let o = Test::outside(&[
        "project",
        "update-tables-version",
        list.to_str().unwrap(),
        root.to_str().unwrap(),
        "--output",
        "json",
    ]);
    let o = o.success();
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(
        v["renames"]["int_sales_order_lines"],
        "int_sales_order_lines_v2"
    );
    assert_eq!(
        v["renames"]["c360_fct_customer_orders"],
        "c360_fct_customer_orders_v2"
    );
    assert!(v["renames"].get("int_sales_orders_enriched").is_none());
    // Applied: a second bump goes to _v3.
    fs::write(&list, "int_sales_order_lines_v2\n").unwrap();
    let o = Test::outside(&[
        "project",
        "update-tables-version",
        list.to_str().unwrap(),
        root.to_str().unwrap(),
        "--output",
        "json",
        "--dry-run",
    ]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(
        v["renames"]["int_sales_order_lines_v2"],
        "int_sales_order_lines_v3"
    );
    assert_eq!(v["applied"], false);
}

#[test]
fn a_failed_metadata_rebuild_puts_the_sql_files_back() {
    let r = changed_repo();
    let before = snapshot_tree(&r);
    // inventory.json cannot be written (a folder is in its place): the whole run is undone.
    fs::create_dir(r.pipelines.join("inventory.json")).unwrap();
    fs::write(r.pipelines.join("inventory.json/keep"), "x").unwrap();
    let o = run(&r, &["--apply"]);
    let o = o.code(1);
    assert!(
        o.stderr_raw()
            .contains("inventory.json: exists and is not a regular file"),
        "{}",
        o.stderr_raw()
    );
    assert_eq!(snapshot_tree(&r), before, "the SQL files are as they were");
    assert!(!r.pipelines.join("pipeline_graph.json").exists());
    let leftovers: Vec<String> = walkdir::WalkDir::new(&r.pipelines)
        .into_iter()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".flinkpipe-tmp-") || n.contains(".flinkpipe-old-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn apply_rewrites_the_unit_tests_that_name_versioned_tables() {
    let r = changed_repo();
    let defs = "facts/sales/fct_store_revenue_1m/tests/test_definitions.yaml";
    let original = fs::read_to_string(r.pipelines.join(defs)).unwrap();
    // The dry run lists the test files with the SQL files.
    let o = run(&r, &[]);
    let o = o.success();
    assert!(
        o.stdout_raw().contains(&format!("--- a/pipelines/{defs}")),
        "{}",
        o.stdout_raw()
    );
    assert_eq!(
        fs::read_to_string(r.pipelines.join(defs)).unwrap(),
        original
    );
    let o = run(&r, &["--apply"]);
    o.success();
    // test_definitions.yaml: only the table_name values changed (comments and layout kept).
    let yaml = fs::read_to_string(r.pipelines.join(defs)).unwrap();
    insta::assert_snapshot!("blue_green_tests_fct_store_revenue_1m_definitions", yaml);
    assert_eq!(
        yaml,
        original
            .replace(
                "table_name: int_sales_order_lines\n",
                "table_name: int_sales_order_lines_v2\n"
            )
            .replace(
                "table_name: sales_fct_store_revenue_1m\n",
                "table_name: sales_fct_store_revenue_1m_v2\n"
            )
    );
    let enriched = fs::read_to_string(
        r.pipelines
            .join("intermediates/sales/int_orders_enriched/tests/test_definitions.yaml"),
    )
    .unwrap();
    assert!(
        enriched.contains("table_name: int_sales_orders_enriched_v2\n")
            && enriched.contains("table_name: src_sales_orders\n"),
        "{enriched}"
    );
    // Test SQL: `<old>_ut` → `<new>_ut`; file names stay.
    let tests = r.pipelines.join("facts/sales/fct_store_revenue_1m/tests");
    let ddl = fs::read_to_string(tests.join("ddl_int_sales_order_lines.sql")).unwrap();
    assert!(
        ddl.contains("CREATE TABLE IF NOT EXISTS int_sales_order_lines_v2_ut ("),
        "{ddl}"
    );
    let validate =
        fs::read_to_string(tests.join("validate_sales_fct_store_revenue_1m_1.sql")).unwrap();
    assert!(
        validate.contains("FROM sales_fct_store_revenue_1m_v2_ut;"),
        "{validate}"
    );
    // The suites of the versioned table and of its versioned descendant check on the new names
    // (everything a run checks before contacting a server).
    for t in [
        "int_sales_orders_enriched_v2",
        "sales_fct_store_revenue_1m_v2",
    ] {
        let o = Test::outside(&[
            "table",
            "run-unit-tests",
            t,
            r.pipelines.to_str().unwrap(),
            "--dry-run",
        ]);
        let o = o.success();
        assert!(
            o.stdout_raw().contains("nothing was run"),
            "{}",
            o.stdout_raw()
        );
    }
}

/// The SQL files of the tree with a flag: true when it is the `--apply` result, false when the base.
fn state_of(r: &Repo, old: &[(String, String)], new: &[(String, String)]) -> &'static str {
    let now = snapshot_tree(r);
    let record = r.pipelines.join("blue_green.json").exists();
    if now == old && !record {
        "old"
    } else if now == new && record {
        "new"
    } else {
        let differs: Vec<&String> = now
            .iter()
            .filter(|f| !old.contains(f) && !new.contains(f))
            .map(|(p, _)| p)
            .collect();
        panic!(
            "neither all old nor all new: record {record}, {} file(s) match old, {} new, others {differs:?}",
            now.iter().filter(|f| old.contains(f)).count(),
            now.iter().filter(|f| new.contains(f)).count()
        );
    }
}

/// Issue: a kill during `blue-green --apply` left every file rewritten and no release record. SIGKILL
/// and SIGINT at many points: the next command finds the SQL files and `pipelines/blue_green.json`
/// all old or all new, and a rerun ends with the release recorded once.
#[cfg(unix)]
#[test]
fn a_killed_apply_leaves_sql_and_release_record_all_old_or_all_new() {
    use std::process::Stdio;
    let r = changed_repo();
    let old = snapshot_tree(&r);
    // The result of an undisturbed run, to compare with.
    let done = changed_repo();
    run(&done, &["--apply"]).success();
    let new = snapshot_tree(&done);
    let mut seen = std::collections::BTreeSet::new();
    for (k, delay_us) in [
        0u64, 500, 2_000, 5_000, 10_000, 20_000, 40_000, 80_000, 160_000,
    ]
    .into_iter()
    .enumerate()
    {
        for signal in [libc::SIGKILL, libc::SIGINT] {
            let child = crate::support::command()
                .args([
                    "pipeline",
                    "blue-green",
                    r.pipelines.to_str().unwrap(),
                    "--since",
                    "main",
                    "--apply",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_micros(delay_us + k as u64 * 97));
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, signal) };
            let mut child = child;
            child.wait().unwrap();
            // The next command that writes the tree completes or undoes what the killed one began.
            let o = Test::outside(&["table", "build-inventory", r.pipelines.to_str().unwrap()]);
            o.success();
            let state = state_of(&r, &old, &new);
            seen.insert(state);
            // Back to the base for the next try.
            if state == "new" {
                for (rel, text) in &old {
                    fs::write(r.pipelines.join(rel), text).unwrap();
                }
                fs::remove_file(r.pipelines.join("blue_green.json")).unwrap();
            }
        }
    }
    assert!(seen.contains("old"), "{seen:?}");
    // A rerun after all that records the release once.
    run(&r, &["--apply"]).success();
    let record: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(r.pipelines.join("blue_green.json")).unwrap())
            .unwrap();
    assert_eq!(record["releases"].as_array().unwrap().len(), 1);
}

/// A tree whose tables are already the next version of the base but whose release record is gone
/// (lost, or written apart by an older version and killed): a rerun rebuilds the release from the tree
/// and the base names, with the same tables and statements.
#[test]
fn a_rerun_rebuilds_a_missing_release_record() {
    let r = changed_repo();
    run(&r, &["--apply"]).success();
    let path = r.pipelines.join("blue_green.json");
    let original: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    fs::remove_file(&path).unwrap();
    let o = run(&r, &["--apply"]);
    let o = o.success();
    assert!(
        o.stderr_raw()
            .contains("recorded no release for them: rebuilt it"),
        "{}",
        o.stderr_raw()
    );
    let rebuilt: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let tables = |v: &serde_json::Value| -> Vec<(String, String, String, String)> {
        let mut t: Vec<_> = v["releases"][0]["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["blue_table_name"].as_str().unwrap().to_string(),
                    t["green_table_name"].as_str().unwrap().to_string(),
                    t["blue_statements"].to_string(),
                    t["green_statements"].to_string(),
                )
            })
            .collect();
        t.sort();
        t
    };
    assert_eq!(tables(&rebuilt), tables(&original));
    assert_eq!(rebuilt["releases"][0]["base_ref"], "main");
    // A third run has nothing to do.
    let o = run(&r, &["--apply"]);
    let o = o.success();
    let again: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(again["releases"].as_array().unwrap().len(), 1);
    let _ = o.stdout_raw();
}

/// `--in-place` versions only what needs a new version: a stateless statement with a new filter is
/// upgraded in place (its readers untouched); a changed join is versioned with its descendants.
#[test]
fn in_place_versions_only_the_statements_whose_state_needs_it() {
    let r = changed_repo();
    r.edit(
        "intermediates/c360/int_clickstream_clean/sql-scripts/dml.int_c360_clickstream_clean.sql",
        |s| {
            s.replace(
                "WHERE page <> 'healthcheck'",
                "WHERE page <> 'healthcheck' AND page <> 'robots'",
            )
        },
    );
    r.commit("drop robots too", T_CHANGE + 10);
    let plain = run(&r, &["--output", "json"]);
    let plain = plain.success();
    let plain: serde_json::Value = serde_json::from_str(&plain.stdout_raw()).unwrap();
    let renamed = |v: &serde_json::Value| -> Vec<String> {
        v["renames"].as_object().unwrap().keys().cloned().collect()
    };
    assert!(
        renamed(&plain).contains(&"int_c360_clickstream_clean".to_string()),
        "{plain:#}"
    );
    let out = run(&r, &["--in-place", "--output", "json"]);
    let out = out.success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout_raw()).unwrap();
    let names = renamed(&v);
    assert!(
        !names.contains(&"int_c360_clickstream_clean".to_string()),
        "{v:#}"
    );
    assert!(
        names.contains(&"int_sales_orders_enriched".to_string()),
        "{v:#}"
    );
    let looked = v["in_place"].as_array().unwrap();
    let entry = |t: &str| looked.iter().find(|e| e["table_name"] == t).cloned();
    let clean = entry("int_c360_clickstream_clean").unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(clean["in_place"], true);
    assert_eq!(clean["verdict"], "stateless");
    let enriched = entry("int_sales_orders_enriched").unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(enriched["in_place"], false, "{v:#}");

    // A state-compatible change (an alias of an aggregate's output): versioned on Confluent Cloud,
    // which has no savepoints; upgraded in place from a savepoint on the SQL Gateway, where the
    // stateless one restarts from the old job's offsets too.
    r.edit(
        "facts/c360/fct_customer_orders/sql-scripts/dml.c360_fct_customer_orders.sql",
        |s| {
            s.replace(
                "CAST(pc.units AS BIGINT) AS units",
                "CAST(pc.units AS BIGINT) AS units_total",
            )
        },
    );
    r.commit("name the units", T_CHANGE + 15);
    let out = run(&r, &["--in-place", "--output", "json"]);
    let out = out.success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout_raw()).unwrap();
    let entry = |v: &serde_json::Value, t: &str| {
        v["in_place"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["table_name"] == t)
            .cloned()
            .unwrap_or_else(|| panic!("{t}: {v:#}"))
    };
    let orders = entry(&v, "c360_fct_customer_orders");
    assert_eq!(orders["verdict"], "state-compatible", "{orders}");
    assert_eq!(orders["in_place"], false, "{orders}");
    assert!(
        orders["reason"].as_str().unwrap().contains("no savepoints"),
        "{orders}"
    );
    assert!(
        renamed(&v).contains(&"c360_fct_customer_orders".to_string()),
        "{v:#}"
    );
    // The SQL Gateway (this behaviour changed with #23: it used to version both).
    let config = r.pipelines.parent().unwrap().join("gateway.yaml");
    fs::write(
        &config,
        "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:1\n    jobmanager_url: http://127.0.0.1:1\n",
    )
    .unwrap();
    let out = Test::outside(&[
        "--config",
        config.to_str().unwrap(),
        "pipeline",
        "blue-green",
        r.pipelines.to_str().unwrap(),
        "--since",
        "main",
        "--in-place",
        "--output",
        "json",
    ]);
    let out = out.success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout_raw()).unwrap();
    let names = renamed(&v);
    assert!(
        !names.contains(&"int_c360_clickstream_clean".to_string()),
        "{v:#}"
    );
    assert!(
        names.contains(&"int_sales_orders_enriched".to_string()),
        "{v:#}"
    );
    let clean = entry(&v, "int_c360_clickstream_clean");
    assert_eq!(clean["in_place"], true, "{clean}");
    assert!(
        clean["reason"]
            .as_str()
            .unwrap()
            .contains("restart (offsets)"),
        "{clean}"
    );
    // It reads the versioned enriched orders: versioned with them.
    let orders = entry(&v, "c360_fct_customer_orders");
    assert_eq!(orders["in_place"], false, "{orders}");
    assert!(
        orders["reason"]
            .as_str()
            .unwrap()
            .contains("reads a versioned table"),
        "{orders}"
    );
    // Alone, the same state-compatible change is upgraded in place on the SQL Gateway.
    let alone = Repo::new(our_fixture());
    alone.branch("feature");
    alone.edit(
        "facts/c360/fct_customer_orders/sql-scripts/dml.c360_fct_customer_orders.sql",
        |s| {
            s.replace(
                "CAST(pc.units AS BIGINT) AS units",
                "CAST(pc.units AS BIGINT) AS units_total",
            )
        },
    );
    alone.commit("name the units", T_CHANGE + 15);
    let out = Test::outside(&[
        "--config",
        config.to_str().unwrap(),
        "pipeline",
        "blue-green",
        alone.pipelines.to_str().unwrap(),
        "--since",
        "main",
        "--in-place",
        "--output",
        "json",
    ]);
    let out = out.success();
    let v: serde_json::Value = serde_json::from_str(&out.stdout_raw()).unwrap();
    assert!(renamed(&v).is_empty(), "nothing versioned: {v:#}");
    let orders = entry(&v, "c360_fct_customer_orders");
    assert_eq!(orders["in_place"], true, "{orders}");
    assert!(
        orders["reason"]
            .as_str()
            .unwrap()
            .contains("upgrade (savepoint)"),
        "{orders}"
    );

    // A DDL change beside the DML's: its readers see another table, so it is versioned.
    r.edit(
        "intermediates/c360/int_clickstream_clean/sql-scripts/ddl.int_c360_clickstream_clean.sql",
        |s| {
            s.replace(
                "'format' = 'json'",
                "'format' = 'json',\n  'json.ignore-parse-errors' = 'true'",
            )
        },
    );
    r.commit("tolerate bad json", T_CHANGE + 20);
    let out = run(&r, &["--in-place", "--output", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout_raw()).unwrap();
    assert!(
        renamed(&v).contains(&"int_c360_clickstream_clean".to_string()),
        "{v:#}"
    );
}
