//! `project list-modified-files` and `project list-impacted-tables`: temporary git repositories built with
//! git2 (no `git` CLI), typical changes committed on a branch, exact rows, impacted sets and reasons, and
//! proof that the work tree, the index and HEAD are left alone.

use crate::support::Test;
use crate::support::repo::{Repo, T_CHANGE};
use flinkpipe::changes::{self, ChangeKind, ChangeOptions, FileChange};
use flinkpipe::config::Config;
use serde_json::Value;
use std::fs;
use std::path::Path;

fn since(r: &str) -> ChangeOptions {
    ChangeOptions {
        since: Some(r.into()),
        ..Default::default()
    }
}

/// `(path, table, new table, change kind)` of each row.
fn rows(files: &[FileChange]) -> Vec<(String, String, String, ChangeKind)> {
    files
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                f.table_name.clone(),
                f.new_table_name.clone(),
                f.change_kind,
            )
        })
        .collect()
}

fn row(path: &str, table: &str, kind: ChangeKind) -> (String, String, String, ChangeKind) {
    (path.into(), table.into(), table.into(), kind)
}

const ENRICHED_DML: &str =
    "intermediates/sales/int_orders_enriched/sql-scripts/dml.int_sales_orders_enriched.sql";
const PAYMENTS_DML: &str =
    "facts/sales/fct_order_payments/sql-scripts/dml.sales_fct_order_payments.sql";
const PAYMENTS_PROPS: &str =
    "facts/sales/fct_order_payments/sql-scripts/dml.sales_fct_order_payments.properties";
const PAID_DML: &str =
    "intermediates/sales/int_paid_orders/sql-scripts/dml.int_sales_paid_orders.sql";
const ORDERS_DDL: &str = "sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql";
const PAYMENTS_SRC_DDL: &str = "sources/sales/src_payments/sql-scripts/ddl.src_sales_payments.sql";

/// The typical changes of the brief, committed on branch `feature` of our example project.
fn example_with_changes() -> Repo {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    // Logic change in an intermediate.
    r.edit(ENRICHED_DML, |t| {
        t.replace("r.rate AS fx_rate", "ROUND(r.rate, 4) AS fx_rate")
    });
    // Comment-only change.
    r.edit(PAYMENTS_DML, |t| format!("-- reviewed in 2025\n{t}"));
    // Keyword case and whitespace.
    r.edit(PAID_DML, |t| {
        t.replace("INSERT INTO", "insert   into")
            .replace("SELECT\n", "select\n\n")
            .replace("WHERE", "where")
    });
    // A column added to a source DDL.
    r.edit(ORDERS_DDL, |t| {
        t.replace(
            "  store_id      INT,\n",
            "  store_id      INT,\n  promo_code    STRING,\n",
        )
    });
    // A WITH option change.
    r.edit(PAYMENTS_SRC_DDL, |t| {
        t.replace("'rows-per-second' = '5'", "'rows-per-second' = '50'")
    });
    // A .properties change.
    r.edit(PAYMENTS_PROPS, |t| t.replace("1 d", "2 d"));
    // A deleted leaf table.
    fs::remove_dir_all(r.path("views/sales/mv_revenue_export")).unwrap();
    // A renamed folder (same table).
    fs::rename(
        r.path("views/sales/mv_top_stores"),
        r.path("views/sales/mv_top_stores_v2"),
    )
    .unwrap();
    // A test file.
    r.write(
        "intermediates/sales/int_paid_orders/tests/ddl_src_sales_orders.sql",
        "CREATE TABLE src_sales_orders_ut (order_id BIGINT);\n",
    );
    r.commit("typical changes", T_CHANGE);
    r
}

#[test]
fn typical_changes_rows() {
    let r = example_with_changes();
    let set = r.changes(since("main"));
    use ChangeKind::*;
    assert_eq!(
        rows(&set.files),
        vec![
            row(PAYMENTS_PROPS, "sales_fct_order_payments", Options),
            row(PAYMENTS_DML, "sales_fct_order_payments", Cosmetic),
            row(ENRICHED_DML, "int_sales_orders_enriched", Logic),
            row(PAID_DML, "int_sales_paid_orders", Cosmetic),
            row(ORDERS_DDL, "src_sales_orders", Schema),
            row(PAYMENTS_SRC_DDL, "src_sales_payments", Options),
            row(
                "views/sales/mv_revenue_export/sql-scripts/ddl.sales_mv_revenue_export.sql",
                "sales_mv_revenue_export",
                Deleted
            ),
            row(
                "views/sales/mv_revenue_export/sql-scripts/dml.sales_mv_revenue_export.sql",
                "sales_mv_revenue_export",
                Deleted
            ),
            row(
                "views/sales/mv_top_stores_v2/sql-scripts/ddl.sales_mv_top_stores.sql",
                "sales_mv_top_stores",
                Renamed
            ),
            row(
                "views/sales/mv_top_stores_v2/sql-scripts/dml.sales_mv_top_stores.sql",
                "sales_mv_top_stores",
                Renamed
            ),
        ]
    );
    let renamed = &set.files[8];
    assert_eq!(
        renamed.old_path.as_deref(),
        Some("views/sales/mv_top_stores/sql-scripts/ddl.sales_mv_top_stores.sql")
    );
    assert_eq!(renamed.content_kind, Cosmetic);
    assert!(renamed.same_sql_content);
    // Schema diff of the source DDL.
    let ddl = &set.files[4];
    let diff = ddl.schema_diff.as_ref().unwrap();
    assert_eq!(diff.baseline_ref, "main");
    assert_eq!(diff.added, vec!["promo_code"]);
    assert!(diff.removed.is_empty() && diff.modified.is_empty());
    assert!(!ddl.same_sql_content);
    // same_sql_content: cosmetic → true; no schema diff outside schema changes.
    assert!(set.files[1].same_sql_content && set.files[3].same_sql_content);
    assert!(
        set.files
            .iter()
            .filter(|f| f.change_kind != Schema)
            .all(|f| f.schema_diff.is_none())
    );
    // Tests are listed apart.
    assert_eq!(
        set.tests
            .iter()
            .map(|t| t.path.as_str())
            .collect::<Vec<_>>(),
        vec!["intermediates/sales/int_paid_orders/tests/ddl_src_sales_orders.sql"]
    );
    assert_eq!(set.tests[0].change_kind, Added);
    assert_eq!(set.baseline_ref, "main");
    assert_eq!(set.head_ref, "HEAD");
}

#[test]
fn typical_changes_cli_files_and_read_only() {
    let r = example_with_changes();
    // An uncommitted edit that must survive, and the index and HEAD as they are.
    r.edit(ENRICHED_DML, |t| format!("{t}\n-- uncommitted"));
    let before_text = fs::read_to_string(r.path(ENRICHED_DML)).unwrap();
    let (before_head, before_index) = (r.head_commit(), r.index_bytes());

    let o = r.run(&[
        "--output",
        "json",
        "project",
        "list-modified-files",
        "--since",
        "main",
    ]);
    let o = o.success();
    let printed: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let written: Value = serde_json::from_str(&r.out_file("modified_flink_files.json")).unwrap();
    assert_eq!(printed, written);
    let list = written["file_list"].as_array().unwrap();
    assert_eq!(list.len(), 10);
    let src = list
        .iter()
        .find(|row| row["table_name"] == "src_sales_orders")
        .unwrap();
    assert_eq!(src["change_kind"], "schema");
    // No target configured: whether it runs is unknown, not false.
    assert_eq!(src["running"], serde_json::Value::Null);
    assert_eq!(src["same_sql_content"], false);
    assert_eq!(src["new_table_name"], "src_sales_orders");
    assert_eq!(
        src["schema_diff"],
        serde_json::json!({"baseline_ref": "main", "added": ["promo_code"], "removed": [], "modified": []})
    );
    assert!(
        src["file_modified_url"]
            .as_str()
            .unwrap()
            .ends_with("/pipelines/sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql")
    );
    assert_eq!(
        written["tests"],
        serde_json::json!(["intermediates/sales/int_paid_orders/tests/ddl_src_sales_orders.sql"])
    );
    assert!(
        written["description"]
            .as_str()
            .unwrap()
            .starts_with("Modified files in branch:'HEAD' since 'main'")
    );
    assert_eq!(
        r.out_file("modified_flink_files.txt"),
        "int_sales_orders_enriched\nint_sales_paid_orders\nsales_fct_order_payments\nsales_mv_revenue_export\nsales_mv_top_stores\nsrc_sales_orders\nsrc_sales_payments\n"
    );

    // Nothing moved: the uncommitted edit stays, branch, HEAD and index unchanged.
    assert_eq!(
        fs::read_to_string(r.path(ENRICHED_DML)).unwrap(),
        before_text
    );
    assert_eq!(r.head_name(), "feature");
    assert_eq!(r.head_commit(), before_head);
    assert_eq!(r.index_bytes(), before_index);

    // Text output names every file with its kind and details.
    let o = r.run(&["project", "list-modified-files", "--since", "main"]);
    let o = o.success();
    let text = o.stdout_raw();
    assert!(
        text.starts_with("10 file(s) changed between main ("),
        "{text}"
    );
    assert!(
        text.contains("src_sales_orders           schema    +promo_code"),
        "{text}"
    );
    assert!(
        text.contains("from views/sales/mv_top_stores/sql-scripts/dml.sales_mv_top_stores.sql; content: cosmetic"),
        "{text}"
    );
    assert!(text.contains(
        "tests:\n  intermediates/sales/int_paid_orders/tests/ddl_src_sales_orders.sql (added)"
    ));
}

#[test]
fn typical_changes_impact() {
    let r = example_with_changes();
    let o = r.run(&[
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        "--since",
        "main",
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&r.out_file("impacted_tables.json")).unwrap();
    assert_eq!(v, serde_json::from_str::<Value>(&o.stdout_raw()).unwrap());
    insta::assert_json_snapshot!("changes_example_impact", v);
    assert_eq!(
        v["ddl_modified_tables"],
        serde_json::json!(["src_sales_orders", "src_sales_payments"])
    );
    assert_eq!(
        v["production_ddl_paths"],
        serde_json::json!([ORDERS_DDL, PAYMENTS_SRC_DDL])
    );
    assert_eq!(
        v["unit_test_ddl_paths"],
        // The changed test file, and the test DDLs of the test folders that use a changed or
        // impacted table as a foundation.
        serde_json::json!([
            "facts/sales/fct_order_payments/tests/ddl_int_sales_paid_orders.sql",
            "facts/sales/fct_store_revenue_1m/tests/ddl_int_sales_order_lines.sql",
            "intermediates/sales/int_orders_enriched/tests/ddl_src_sales_orders.sql",
            "intermediates/sales/int_paid_orders/tests/ddl_src_sales_orders.sql",
            "intermediates/sales/int_web_orders/tests/ddl_int_sales_paid_orders.sql"
        ])
    );
    // Cosmetic changes impact nothing; the reasons name the changed table and its kind.
    let impacts = v["impacts"].as_array().unwrap();
    let by = |t: &str| impacts.iter().find(|i| i["table_name"] == t).unwrap();
    assert_eq!(by("int_sales_paid_orders")["change_kind"], "cosmetic");
    assert_eq!(
        by("int_sales_paid_orders")["descendants"],
        serde_json::json!([])
    );
    assert_eq!(by("sales_mv_top_stores")["change_kind"], "cosmetic");
    assert_eq!(by("sales_mv_revenue_export")["change_kind"], "deleted");
    assert_eq!(
        by("int_sales_orders_enriched")["descendants"],
        serde_json::json!([
            {"table_name": "c360_fct_customer_orders", "reason": "descendant of int_sales_orders_enriched (logic change)"},
            {"table_name": "c360_mv_customer_360", "reason": "descendant of int_sales_orders_enriched (logic change)"},
            {"table_name": "int_sales_order_lines", "reason": "descendant of int_sales_orders_enriched (logic change)"},
            {"table_name": "inventory_fct_sku_demand", "reason": "descendant of int_sales_orders_enriched (logic change)"},
            {"table_name": "inventory_mv_replenishment", "reason": "descendant of int_sales_orders_enriched (logic change)"},
            {"table_name": "sales_fct_store_revenue_1m", "reason": "descendant of int_sales_orders_enriched (logic change)"},
        ])
    );
    let payments_kids: Vec<&str> = by("sales_fct_order_payments")["descendants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap())
        .collect();
    assert!(payments_kids.is_empty(), "a leaf: {payments_kids:?}");
    assert_eq!(by("sales_fct_order_payments")["change_kind"], "options");

    // The same from the written modified_flink_files.json.
    let o = r.run(&["project", "list-modified-files", "--since", "main"]);
    o.success();
    let mf = r.root.join("out/modified_flink_files.json");
    let o = r.run(&[
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        "--modified-files-path",
        mf.to_str().unwrap(),
    ]);
    let o = o.success();
    let from_file: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(from_file, v);
}

#[test]
fn deleting_a_table_with_children_is_an_error_naming_them() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    fs::remove_dir_all(r.path("intermediates/sales/int_paid_orders")).unwrap();
    r.commit("drop int_paid_orders", T_CHANGE);
    let o = r.run(&["project", "list-impacted-tables", "--since", "main"]);
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw().trim_end().lines().last().unwrap(),
        "error: table 'int_sales_paid_orders' is deleted but its children still read it: \
         c360_fct_customer_orders (facts/c360/fct_customer_orders/sql-scripts/ddl.c360_fct_customer_orders.sql, facts/c360/fct_customer_orders/sql-scripts/dml.c360_fct_customer_orders.sql), \
         int_sales_store_orders (intermediates/sales/int_store_orders/sql-scripts/ddl.int_sales_store_orders.sql), \
         int_sales_web_orders (intermediates/sales/int_web_orders/sql-scripts/ddl.int_sales_web_orders.sql, intermediates/sales/int_web_orders/sql-scripts/dml.int_sales_web_orders.sql), \
         sales_fct_order_payments (facts/sales/fct_order_payments/sql-scripts/ddl.sales_fct_order_payments.sql, facts/sales/fct_order_payments/sql-scripts/dml.sales_fct_order_payments.sql)"
    );
    // list-modified-files itself reports the deletion without error.
    let set = r.changes(since("main"));
    assert!(
        set.files
            .iter()
            .all(|f| f.change_kind == ChangeKind::Deleted)
    );
    assert_eq!(set.files.len(), 2);
}

#[test]
fn include_uncommitted_head_and_since_date() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    r.edit(ENRICHED_DML, |t| {
        t.replace("o.order_time\nFROM", "o.order_time AS order_time\nFROM")
    });
    let feature = r.commit("logic change", T_CHANGE);
    // Uncommitted: a staged-free edit and an untracked file.
    r.edit(PAID_DML, |t| t.replace("'CAPTURED'", "'SETTLED'"));
    r.write(
        "facts/sales/fct_new/sql-scripts/ddl.sales_fct_new.sql",
        "CREATE TABLE sales_fct_new (id BIGINT) WITH ('connector' = 'blackhole');\n",
    );
    let before_index = r.index_bytes();

    // Committed only.
    let set = r.changes(since("main"));
    assert_eq!(
        rows(&set.files),
        vec![row(
            ENRICHED_DML,
            "int_sales_orders_enriched",
            ChangeKind::Logic
        )]
    );
    // With the work tree.
    let set = r.changes(ChangeOptions {
        since: Some("main".into()),
        include_uncommitted: true,
        ..Default::default()
    });
    assert_eq!(
        rows(&set.files),
        vec![
            row(
                "facts/sales/fct_new/sql-scripts/ddl.sales_fct_new.sql",
                "sales_fct_new",
                ChangeKind::Added
            ),
            row(ENRICHED_DML, "int_sales_orders_enriched", ChangeKind::Logic),
            row(PAID_DML, "int_sales_paid_orders", ChangeKind::Logic),
        ]
    );
    assert_eq!(set.head_ref, "work tree");
    assert_eq!(r.index_bytes(), before_index);
    assert!(
        r.path("facts/sales/fct_new/sql-scripts/ddl.sales_fct_new.sql")
            .exists()
    );

    // --head while main is checked out: compares main...feature; HEAD stays on main.
    r.repo.set_head("refs/heads/main").unwrap();
    let set = r.changes(ChangeOptions {
        since: Some("main".into()),
        head: Some("feature".into()),
        ..Default::default()
    });
    assert_eq!(
        rows(&set.files),
        vec![row(
            ENRICHED_DML,
            "int_sales_orders_enriched",
            ChangeKind::Logic
        )]
    );
    assert_eq!(set.head_commit, feature.to_string());
    // Impact at --head is computed on feature's tree (exported), not on the work tree.
    let o = r.run(&[
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        "--since",
        "main",
        "--head",
        "feature",
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(
        v["impacted_tables"],
        serde_json::json!([
            "c360_fct_customer_orders",
            "c360_mv_customer_360",
            "int_sales_order_lines",
            "inventory_fct_sku_demand",
            "inventory_mv_replenishment",
            "sales_fct_store_revenue_1m",
            "sales_mv_revenue_export"
        ])
    );
    assert_eq!(r.head_name(), "main");

    // --since-date: base = newest first-parent commit of the head before the day.
    let set = r.changes(ChangeOptions {
        head: Some("feature".into()),
        since_date: Some("2025-02-01".into()),
        ..Default::default()
    });
    assert_eq!(set.baseline_ref, "since:2025-02-01");
    assert_eq!(rows(&set.files).len(), 1);
    let set = r.changes(ChangeOptions {
        head: Some("feature".into()),
        since_date: Some("2025-03-01".into()),
        ..Default::default()
    });
    assert!(set.files.is_empty());
    let err = changes::list_changes(
        &r.pipelines,
        &ChangeOptions {
            since_date: Some("2024-12-31".into()),
            ..Default::default()
        },
        &Config::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no commit on the first-parent chain of 'HEAD' was committed before 2024-12-31 00:00 UTC"
    );
}

#[test]
fn shift_left_fixture_schema_change_and_tests() {
    let r = Repo::new(crate::support::shift_left_fixture());
    r.branch("feature");
    r.edit(
        "sources/c360/src_users/sql-scripts/ddl.src_c360_users.sql",
        |t| {
            t.replace("  user_name STRING,\n", "  user_name VARCHAR NOT NULL,\n")
                .replace("  created_date STRING,\n", "")
        },
    );
    r.edit(
        "sources/common/src_table_1/sql-scripts/ddl.src_table_1.sql",
        |t| {
            t.replace(
                "  user_name STRING,\n",
                "  user_name STRING,\n  email_verified BOOLEAN,\n",
            )
        },
    );
    r.edit("facts/p1/fct_order/tests/ddl_int_table_1.sql", |t| {
        format!("{t}\n-- more")
    });
    r.commit("schema", T_CHANGE);
    let set = r.changes(since("main"));
    assert_eq!(
        rows(&set.files),
        vec![
            row(
                "sources/c360/src_users/sql-scripts/ddl.src_c360_users.sql",
                "sl_c360_src_users",
                ChangeKind::Schema
            ),
            row(
                "sources/common/src_table_1/sql-scripts/ddl.src_table_1.sql",
                "src_table_1",
                ChangeKind::Schema
            ),
        ]
    );
    let diff = serde_json::to_value(set.files[0].schema_diff.as_ref().unwrap()).unwrap();
    assert_eq!(
        diff,
        serde_json::json!({
            "baseline_ref": "main", "added": [], "removed": ["created_date"],
            "modified": [{"name": "user_name", "change_type": "modified", "old_type": "STRING",
                          "new_type": "VARCHAR", "old_nullable": true, "new_nullable": false,
                          "old_primary_key": false, "new_primary_key": false}]})
    );
    assert_eq!(
        set.tests
            .iter()
            .map(|t| t.path.as_str())
            .collect::<Vec<_>>(),
        vec!["facts/p1/fct_order/tests/ddl_int_table_1.sql"]
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
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(
        v["ddl_modified_tables"],
        serde_json::json!(["sl_c360_src_users", "src_table_1"])
    );
    assert_eq!(
        v["impacted_tables"],
        serde_json::json!([
            "int_p1_table_1",
            "p1_fct_order",
            "sl_c360_dim_users",
            "sl_c360_fct_user_per_group"
        ])
    );
    assert_eq!(
        v["unit_test_ddl_paths"],
        // The changed test file, and the test DDL of a folder that uses the changed source as a
        // foundation (shift_left's own example of the field).
        serde_json::json!([
            "dimensions/c360/dim_users/tests/ddl_src_c360_users.sql",
            "facts/p1/fct_order/tests/ddl_int_table_1.sql"
        ])
    );
    assert_eq!(
        v["impacts"][1]["descendants"][0],
        serde_json::json!({"table_name": "int_p1_table_1", "reason": "descendant of src_table_1 (schema change)"})
    );
}

#[test]
fn renamed_table_and_non_utf8_file() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    // Rename the leaf view's table (folder and name): old name deleted, new name added.
    let old = "views/sales/mv_top_stores";
    let new = "views/sales/mv_best_stores";
    fs::rename(r.path(old), r.path(new)).unwrap();
    for f in ["ddl", "dml"] {
        let from = r.path(&format!("{new}/sql-scripts/{f}.sales_mv_top_stores.sql"));
        let to = r.path(&format!("{new}/sql-scripts/{f}.sales_mv_best_stores.sql"));
        let text = fs::read_to_string(&from).unwrap();
        fs::remove_file(&from).unwrap();
        fs::write(
            &to,
            text.replace("sales_mv_top_stores", "sales_mv_best_stores"),
        )
        .unwrap();
    }
    // A binary file in sql-scripts does not panic anything.
    r.write("sources/sales/src_orders/sql-scripts/dml.bad.sql", "x");
    fs::write(
        r.path("sources/sales/src_orders/sql-scripts/dml.bad.sql"),
        [0xff, 0xfe, 0x00, 0x01],
    )
    .unwrap();
    r.commit("rename", T_CHANGE);
    let set = r.changes(since("main"));
    let renamed: Vec<_> = set
        .files
        .iter()
        .filter(|f| f.change_kind == ChangeKind::Renamed)
        .map(|f| {
            (
                f.table_name.as_str(),
                f.new_table_name.as_str(),
                f.content_kind,
            )
        })
        .collect();
    assert_eq!(
        renamed,
        vec![
            // The DDL's CREATE names the new table: a definition change without query.
            (
                "sales_mv_top_stores",
                "sales_mv_best_stores",
                ChangeKind::Schema
            ),
            (
                "sales_mv_top_stores",
                "sales_mv_best_stores",
                ChangeKind::Logic
            ),
        ]
    );
    let bad = set
        .files
        .iter()
        .find(|f| f.path.ends_with("dml.bad.sql"))
        .unwrap();
    assert_eq!(bad.change_kind, ChangeKind::Added);
    assert_eq!(bad.note.as_deref(), Some("not UTF-8 text"));
    assert_eq!(bad.table_name, "src_sales_orders");
    let o = r.run(&[
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        "--since",
        "main",
    ]);
    let o = o.success();
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let kinds: Vec<(String, String)> = v["impacts"]
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
    assert_eq!(
        kinds,
        vec![
            ("sales_mv_best_stores".to_string(), "added".to_string()),
            ("sales_mv_top_stores".to_string(), "deleted".to_string()),
            ("src_sales_orders".to_string(), "added".to_string()),
        ]
    );
}

#[test]
fn errors_name_the_ref_or_path() {
    // Not a git repository.
    let (tmp, pipelines) = crate::support::our_fixture();
    let o = Test::outside(&[
        "project",
        "list-modified-files",
        pipelines.to_str().unwrap(),
        "--output-dir",
        tmp.path().to_str().unwrap(),
    ]);
    let o = o.code(1);
    let expected = format!(
        "error: {} is not inside a git repository: changes are found by comparing git commits (run `git init` and commit the project first)",
        pipelines.display()
    );
    assert_eq!(o.stderr_raw().trim_end(), expected);
    // Every command that compares commits says the same, and none names another command.
    for args in [
        &["pipeline", "blue-green", "--since", "main"][..],
        &["project", "list-impacted-tables"][..],
    ] {
        let mut all = args.to_vec();
        all.insert(2, pipelines.to_str().unwrap());
        let o = Test::outside(&all);
        let o = o.code(1);
        assert_eq!(o.stderr_raw().trim_end(), expected, "{args:?}");
    }
    // Bad ref.
    let r = Repo::new(crate::support::our_fixture());
    let o = r.run(&[
        "project",
        "list-modified-files",
        "--since",
        "no-such-branch",
    ]);
    let o = o.code(1);
    assert!(
        o.stderr_raw()
            .starts_with("error: ref 'no-such-branch' does not resolve to a commit: "),
        "{}",
        o.stderr_raw()
    );
    // No default base: rename main away.
    r.repo
        .find_branch("main", git2::BranchType::Local)
        .unwrap()
        .rename("trunk", false)
        .unwrap();
    let err = changes::list_changes(&r.pipelines, &ChangeOptions::default(), &Config::default())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("no base ref: neither 'origin/main' nor 'main' exists in "),
        "{err}"
    );
    // Default base = main when it exists; HEAD on main → nothing changed.
    r.repo
        .find_branch("trunk", git2::BranchType::Local)
        .unwrap()
        .rename("main", false)
        .unwrap();
    let set = r.changes(ChangeOptions::default());
    assert_eq!(set.baseline_ref, "main");
    assert!(set.files.is_empty() && set.tests.is_empty());
    // Bad date.
    let err = changes::list_changes(
        &r.pipelines,
        &ChangeOptions {
            since_date: Some("2025-13-01".into()),
            ..Default::default()
        },
        &Config::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--since-date '2025-13-01' is not a date YYYY-MM-DD"
    );
    let _ = Path::new("");
}

#[test]
fn file_filter_keeps_sql_only() {
    let r = example_with_changes();
    let set = r.changes(ChangeOptions {
        since: Some("main".into()),
        file_filter: Some("sql".into()),
        ..Default::default()
    });
    assert_eq!(set.files.len(), 9);
    assert!(set.files.iter().all(|f| f.path.ends_with(".sql")));
    assert_eq!(set.ignored, vec![PAYMENTS_PROPS.to_string()]);
}

#[test]
fn fresh_graph_file_gives_the_same_impact_as_a_full_load() {
    let r = example_with_changes();
    // Drop the deletion (a deletion forces a full load) by restoring the deleted view in a new commit.
    let _ = fs::remove_dir_all(r.path("views/sales/mv_revenue_export"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/pipelines/views/sales/mv_revenue_export/sql-scripts");
    fs::create_dir_all(r.path("views/sales/mv_revenue_export/sql-scripts")).unwrap();
    for e in fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        fs::copy(
            e.path(),
            r.path("views/sales/mv_revenue_export/sql-scripts")
                .join(e.file_name()),
        )
        .unwrap();
    }
    r.commit("restore the view", T_CHANGE + 60);
    let args = [
        "-v",
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        "--since",
        "main",
    ];
    let full = r.run(&args);
    let full = full.success();
    assert!(
        full.stderr_raw().contains("WorkTree"),
        "{}",
        full.stderr_raw()
    );
    let o = Test::outside(&[
        "pipeline",
        "build-all-metadata",
        r.pipelines.to_str().unwrap(),
    ]);
    o.success();
    let fast = r.run(&args);
    let fast = fast.success();
    assert!(
        fast.stderr_raw().contains("GraphFile"),
        "{}",
        fast.stderr_raw()
    );
    let (a, b): (Value, Value) = (
        serde_json::from_str(&full.stdout_raw()).unwrap(),
        serde_json::from_str(&fast.stdout_raw()).unwrap(),
    );
    assert_eq!(a, b);
    assert_eq!(a["impacted_tables"].as_array().unwrap().len(), 14);
    // A later change to an input makes the graph file stale again (the index records newer files).
    std::thread::sleep(std::time::Duration::from_millis(20));
    r.edit(PAID_DML, |t| t.replace("'CAPTURED'", "'SETTLED'"));
    r.commit("later", T_CHANGE + 120);
    let o = r.run(&args);
    assert!(o.stderr_raw().contains("WorkTree"), "{}", o.stderr_raw());
}

#[test]
fn shallow_clone_without_the_base_is_a_clear_error() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    r.edit(ENRICHED_DML, |t| {
        t.replace("r.rate AS fx_rate", "r.rate * 2 AS fx_rate")
    });
    let tip = r.commit("change", T_CHANGE);
    // A shallow clone that fetched the tip only: its parents are cut.
    fs::write(r.root.join(".git/shallow"), format!("{tip}\n")).unwrap();
    let o = r.run(&["project", "list-modified-files", "--since", "main"]);
    let o = o.code(1);
    assert!(
        o.stderr_raw().starts_with(
            "error: no merge base between 'main' and 'HEAD' (shallow clone: fetch more history, e.g. git fetch --unshallow): "
        ),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn impact_text_output() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    r.edit(ENRICHED_DML, |t| {
        t.replace("r.rate AS fx_rate", "r.rate * 2 AS fx_rate")
    });
    r.edit(PAYMENTS_DML, |t| format!("-- note\n{t}"));
    r.commit("change", T_CHANGE);
    let o = r.run(&["project", "list-impacted-tables", "--since", "main"]);
    let o = o.success();
    let text = o.stdout_raw();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "changed table              change    impacted table              reason"
    );
    assert_eq!(
        lines[2],
        "int_sales_orders_enriched  logic     c360_fct_customer_orders    descendant of int_sales_orders_enriched (logic change)"
    );
    assert_eq!(
        lines[lines.len() - 2],
        "sales_fct_order_payments   cosmetic                              cosmetic: impacts nothing"
    );
    assert_eq!(
        lines[lines.len() - 1],
        "7 impacted table(s); DDL modified: none"
    );
}

const EXTERNALS: &str = "seeds/external_tables.json";

#[test]
fn external_table_topic_change_impacts_its_descendants() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    r.edit(EXTERNALS, |t| {
        t.replace("crm.loyalty.members.v1", "crm.loyalty.members.v2")
            .replace(
                "  ]\n}",
                "  ,\n    { \"table_name\": \"ext_new_feed\" }\n  ]\n}",
            )
    });
    r.commit("loyalty members move to the v2 topic", T_CHANGE);

    let set = r.changes(since("main"));
    assert!(set.files.is_empty() && set.ignored.is_empty());
    let rows: Vec<(&str, ChangeKind, &str, &str)> = set
        .external_tables
        .iter()
        .map(|x| {
            (
                x.table_name.as_str(),
                x.change_kind,
                x.manifest.as_str(),
                x.details.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                "ext_c360_loyalty_members",
                ChangeKind::Options,
                EXTERNALS,
                "kafka_topic 'crm.loyalty.members.v1' → 'crm.loyalty.members.v2'"
            ),
            ("ext_new_feed", ChangeKind::Added, EXTERNALS, ""),
        ]
    );

    // The CLI: listed in the text and in modified_flink_files.json; the impact follows the graph.
    let o = r.run(&["project", "list-modified-files", "--since", "main"]);
    let o = o.success();
    assert!(
        o.stdout_raw().contains(
            "external tables:\n  ext_c360_loyalty_members (options: kafka_topic 'crm.loyalty.members.v1' → 'crm.loyalty.members.v2') in seeds/external_tables.json\n  ext_new_feed (added) in seeds/external_tables.json\n"
        ),
        "{}",
        o.stdout_raw()
    );
    let written: Value = serde_json::from_str(&r.out_file("modified_flink_files.json")).unwrap();
    assert_eq!(written["external_tables"][0]["change_kind"], "options");
    assert_eq!(r.out_file("modified_flink_files.txt"), "");

    for from_file in [false, true] {
        let mut args = vec!["--output", "json", "project", "list-impacted-tables"];
        let listed = r.root.join("out/modified_flink_files.json");
        let listed = listed.to_str().unwrap().to_string();
        if from_file {
            args.extend(["--modified-files-path", listed.as_str()]);
        } else {
            args.extend(["--since", "main"]);
        }
        let o = r.run(&args);
        let o = o.success();
        let impact: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
        assert_eq!(
            impact["impacted_tables"],
            serde_json::json!([
                "c360_dim_customers",
                "c360_fct_customer_orders",
                "c360_mv_customer_360"
            ]),
            "from file: {from_file}"
        );
        let ext = &impact["impacts"][0];
        assert_eq!(ext["table_name"], "ext_c360_loyalty_members");
        assert_eq!(ext["files"], serde_json::json!([EXTERNALS]));
        assert_eq!(
            ext["descendants"][0]["reason"],
            "descendant of external table ext_c360_loyalty_members (kafka_topic 'crm.loyalty.members.v1' → 'crm.loyalty.members.v2')"
        );
        assert_eq!(impact["impacts"][1]["table_name"], "ext_new_feed");
        assert_eq!(impact["impacts"][1]["descendants"], serde_json::json!([]));
    }
}

#[test]
fn external_table_removed_while_still_read_is_an_error() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    r.write(EXTERNALS, "{\"tables\": []}\n");
    r.commit("drop the loyalty feed", T_CHANGE);
    let set = r.changes(since("main"));
    assert_eq!(set.external_tables.len(), 1);
    assert_eq!(set.external_tables[0].change_kind, ChangeKind::Deleted);
    let o = r.run(&["project", "list-impacted-tables", "--since", "main"]);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains(
            "external table 'ext_c360_loyalty_members' was removed from seeds/external_tables.json but its children still read it: c360_dim_customers (dimensions/c360/dim_customers/sql-scripts/ddl.c360_dim_customers.sql, dimensions/c360/dim_customers/sql-scripts/dml.c360_dim_customers.sql)"
        ),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn broken_external_manifest_names_file_and_side() {
    let r = Repo::new(crate::support::our_fixture());
    r.branch("feature");
    r.write(
        EXTERNALS,
        "{\"tables\": [\n  {\"kafka_topic\": \"x\"}\n]}\n",
    );
    r.commit("broken manifest", T_CHANGE);
    let err = changes::list_changes(&r.pipelines, &since("main"), &Config::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "seeds/external_tables.json at HEAD: not a valid external tables manifest ({\"tables\": [{\"table_name\", …}]}): missing field `table_name` at line 2 column 22"
    );
    // A --file-filter for SQL files leaves manifests out, as before.
    let set = r.changes(ChangeOptions {
        since: Some("main".into()),
        file_filter: Some("sql".into()),
        ..Default::default()
    });
    assert!(set.external_tables.is_empty());
    assert_eq!(set.ignored, vec![EXTERNALS.to_string()]);
}

#[test]
fn a_modified_files_list_naming_unknown_tables_is_warned_about() {
    let r = Repo::new(crate::support::our_fixture());
    let list = r.root.join("stale.json");
    fs::write(
        &list,
        r#"{"description": "", "file_list": [{"table_name": "nosuch", "file_modified_url": "/elsewhere/dml.nosuch.sql", "change_kind": "logic"}]}"#,
    )
    .unwrap();
    let o = r.run(&[
        "project",
        "list-impacted-tables",
        "--modified-files-path",
        list.to_str().unwrap(),
    ]);
    let o = o.success();
    assert!(
        o.stderr_raw().contains(&format!(
            "warning[modified-files]: {}: 'nosuch' is not a table of {}; nothing of it is impacted",
            list.display(),
            r.pipelines.display()
        )),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn an_external_table_still_declared_elsewhere_is_not_gone() {
    let r = Repo::new(crate::support::our_fixture());
    r.write(
        "c360/seeds/external_tables.json",
        r#"{"tables": [{"table_name": "ext_c360_loyalty_members", "kafka_topic": "crm.loyalty.members.v1", "product_name": "c360"}]}"#,
    );
    r.commit("declared twice", T_CHANGE);
    r.branch("feature");
    r.write(EXTERNALS, "{\"tables\": []}\n");
    r.commit("keep the product's declaration only", T_CHANGE + 60);
    let o = r.run(&["project", "list-impacted-tables", "--since", "HEAD~1"]);
    o.success();
}

/// Issue #44 item 2: without an output folder, the reports go into the project's own `.flinkpipe/`
/// — not the shared `~/.shift_left/`, not the current folder — for list-modified-files,
/// list-impacted-tables and field-lineage alike.
#[test]
fn reports_go_where_the_project_is_by_default() {
    let r = example_with_changes();
    let home = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    let p = r.pipelines.to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let o = crate::support::command()
            .env_remove("FLINKPIPE_OUTPUT_DIR")
            .env("HOME", home.path())
            .args(args)
            .current_dir(here.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(&["project", "list-modified-files", &p, "--since", "main"]);
    run(&["project", "list-impacted-tables", &p, "--since", "main"]);
    run(&["pipeline", "field-lineage", "int_sales_paid_orders", &p]);
    let state = r.root.join(".flinkpipe");
    for f in [
        "modified_flink_files.json",
        "modified_flink_files.txt",
        "impacted_tables.json",
        "int_sales_paid_orders_lineage.json",
    ] {
        assert!(state.join(f).is_file(), "{f} not in {}", state.display());
    }
    assert!(!home.path().join(".shift_left").exists());
    assert_eq!(std::fs::read_dir(here.path()).unwrap().count(), 0);
}

/// Issue #43 item 12: a command that reads only git never needs a server — a configured target that
/// does not answer leaves `running` unknown with a warning, and the command succeeds.
#[test]
fn list_modified_files_does_not_need_the_target() {
    let r = example_with_changes();
    // A gateway that would answer slowly, if asked: the default list never connects to it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = r.root.join("down.yaml");
    fs::write(
        &config,
        format!("flinkpipe:\n  gateway:\n    url: http://127.0.0.1:{port}\n    jobmanager_url: http://127.0.0.1:{port}\n"),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--config",
            config.to_str().unwrap(),
            "--output",
            "json",
            "project",
            "list-modified-files",
            "--since",
            "main",
        ];
        args.extend_from_slice(extra);
        r.run(&args)
    };
    let o = run(&[]);
    let o = o.success();
    assert!(
        !o.stderr_raw().contains("warning[target]"),
        "{}",
        o.stderr_raw()
    );
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "list-modified-files connected to the target"
    );
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert!(
        v["file_list"]
            .as_array()
            .unwrap()
            .iter()
            .all(|row| row["running"].is_null()),
        "{v:#}"
    );
    // Asked for (`--running`), a target that does not answer leaves `running` unknown: exit 0.
    drop(listener);
    let o = run(&["--running"]);
    let o = o.success();
    assert!(
        o.stderr_raw().contains("`running` left unknown (null)"),
        "{}",
        o.stderr_raw()
    );
}
