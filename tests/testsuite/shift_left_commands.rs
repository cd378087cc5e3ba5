//! shift_left's remaining commands (#28), the real binary on a copy of the example project (and,
//! where they talk to Confluent Cloud, against the fake): `table validate-unit-tests`, `pipeline
//! build-metadata`, `pipeline delete-all-metadata`, `pipeline report --yaml|--json|--output-file-name
//! |--open`, `table update-makefile` / `update-all-makefiles`, `project validate-config`, `project
//! get-statement-list`, and a shift_left-style Makefile run with `shift_left` replaced by `flinkpipe`.

use crate::fake_confluent::{
    CLOUD_KEY, CLOUD_SECRET, DEFAULT_POOL, ENV, FakeConfluent, KEY, ORG, SECRET,
};
use crate::support::Test;
use serde_json::Value;
use std::path::Path;

const TABLE: &str = "sales_fct_order_payments";
const TABLE_DIR: &str = "facts/sales/fct_order_payments";
const DML_FILE: &str =
    "facts/sales/fct_order_payments/sql-scripts/dml.sales_fct_order_payments.sql";

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x[key].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn validate_unit_tests_is_shift_lefts_name_for_run_validation_tests() {
    let help = Test::new()
        .args(&["table", "validate-unit-tests", "--help"])
        .run()
        .success()
        .stdout();
    for opt in [
        "--test-case-name",
        "--run-all",
        "--post-fix-unit-test",
        "--dry-run",
    ] {
        assert!(
            help.contains(opt),
            "validate-unit-tests --help lacks {opt}:\n{help}"
        );
    }
    // The same offline checks of the suite as run-unit-tests --dry-run, the same report.
    let one = |cmd: &str| {
        Test::fixture()
            .args(&[
                "--output",
                "json",
                "table",
                cmd,
                TABLE,
                "[PIPELINES]",
                "--dry-run",
            ])
            .run()
            .success()
            .stdout()
    };
    let validate = one("validate-unit-tests");
    assert_eq!(validate, one("run-unit-tests"));
    assert!(validate.contains(TABLE), "{validate}");
}

#[test]
fn build_metadata_writes_the_tables_definition_and_its_neighbours_only() {
    let dml = format!("[PIPELINES]/{DML_FILE}");
    let t = Test::fixture().args(&[
        "--output",
        "json",
        "pipeline",
        "build-metadata",
        &dml,
        "[PIPELINES]",
    ]);
    let out = t.run().success().json();
    assert_eq!(out["table_name"], TABLE);
    let files: Vec<String> = out["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert!(
        files[0].ends_with(&format!("{TABLE_DIR}/pipeline_definition.json")),
        "{files:?}"
    );
    // Its parents: int_sales_paid_orders and sales_dim_stores (the fixture's truth).
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("int_paid_orders/pipeline_definition.json")),
        "{files:?}"
    );
    assert!(
        files
            .iter()
            .any(|f| f.ends_with("dim_stores/pipeline_definition.json")),
        "{files:?}"
    );
    for f in &files {
        assert!(Path::new(f).is_file(), "{f} was not written");
    }
    // Only those: every other folder has no metadata, and no inventory or graph file was written.
    let all: Vec<_> = walkdir::WalkDir::new(&t.pipelines)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() == "pipeline_definition.json")
        .collect();
    assert_eq!(all.len(), files.len());
    assert!(!t.pipelines.join("pipeline_graph.json").exists());
    // Each file is byte for byte what build-all-metadata writes for that table.
    let mine: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let o = t.cmd(&["pipeline", "build-all-metadata", "[PIPELINES]"]);
    o.success();
    for (f, before) in files.iter().zip(mine) {
        assert_eq!(
            std::fs::read(f).unwrap(),
            before,
            "{f} differs from build-all-metadata's"
        );
    }
    let def = json_of(&std::fs::read_to_string(&files[0]).unwrap());
    assert_eq!(def["table_name"], TABLE);
    assert_eq!(def["dml_ref"], format!("pipelines/{DML_FILE}"));

    // A file that is no table's DML.
    Test::fixture()
        .file("notes/x.sql", "SELECT 1;")
        .args(&[
            "pipeline",
            "build-metadata",
            "[PIPELINES]/notes/x.sql",
            "[PIPELINES]",
        ])
        .run()
        .status(1)
        .stderr_has("is the DML or DDL of no table");
}

#[test]
fn delete_all_metadata_lists_asks_and_deletes_all_of_them() {
    let t = Test::fixture();
    let pipelines = t.pipelines.clone();
    let build = t.cmd(&["pipeline", "build-all-metadata", "[PIPELINES]"]);
    build.success();
    let count = || {
        walkdir::WalkDir::new(&pipelines)
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name() == "pipeline_definition.json"
                    || e.file_name() == "pipeline_graph.json"
            })
            .count()
    };
    let before = count();
    assert!(before > 20, "{before}");
    // No answer (stdin is empty): nothing deleted, exit 1.
    let t = t.args(&["pipeline", "delete-all-metadata", "[PIPELINES]"]);
    let o = t.run().status(1);
    assert!(
        o.stdout()
            .contains(&format!("{before} metadata file(s) under")),
        "{}",
        o.stdout()
    );
    assert!(o.stdout().contains("nothing deleted"));
    assert_eq!(count(), before);
    // --dry-run lists and deletes nothing; --no-ack deletes every one, and the SQL stays.
    let t = t.args(&["--dry-run", "--output", "json"]);
    let dry = t.run().success().json();
    assert_eq!(dry["files"].as_array().unwrap().len(), before);
    assert_eq!(dry["deleted"], 0);
    assert_eq!(count(), before);
    let t2 = Test::fixture();
    let o = t2.cmd(&["pipeline", "build-all-metadata", "[PIPELINES]"]);
    o.success();
    let t2 = t2.args(&[
        "--output",
        "json",
        "pipeline",
        "delete-all-metadata",
        "[PIPELINES]",
        "--no-ack",
    ]);
    let v = t2.run().success().json();
    assert_eq!(v["deleted"], before);
    let left = walkdir::WalkDir::new(&t2.pipelines)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n.contains("pipeline_definition") || n.contains("pipeline_graph")
        })
        .count();
    assert_eq!(left, 0, "no metadata file nor temporary left");
    assert!(t2.pipelines.join(DML_FILE).is_file());
}

#[test]
fn report_in_shift_lefts_formats_and_its_page() {
    let out_dir = tempfile::tempdir().unwrap();
    let t = Test::fixture().env("FLINKPIPE_OUTPUT_DIR", out_dir.path().to_str().unwrap());
    let json = t
        .args(&["pipeline", "report", TABLE, "[PIPELINES]", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(json["table_name"], TABLE);
    let parents = names(&json["parents"]["children"], "name");
    assert_eq!(parents, ["int_sales_paid_orders", "sales_dim_stores"]);
    let t = Test::fixture().env("FLINKPIPE_OUTPUT_DIR", out_dir.path().to_str().unwrap());
    let file = out_dir.path().join("report.yaml");
    let yaml = t
        .args(&[
            "pipeline",
            "report",
            TABLE,
            "[PIPELINES]",
            "--yaml",
            "--children-too",
            "--output-file-name",
            file.to_str().unwrap(),
            "--open",
        ])
        .env("BROWSER", "")
        .run()
        .success();
    let text = yaml.stdout();
    assert!(
        text.starts_with(&format!("table_name: {TABLE}\n")),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "the file is the printed report"
    );
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(v["children"]["name"].as_str(), Some(TABLE));
    let page = out_dir.path().join(format!("{TABLE}_pipeline_graph.html"));
    assert!(
        yaml.stderr().contains(&page.display().to_string()),
        "{}",
        yaml.stderr()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<html") && html.contains("int_sales_paid_orders"),
        "the lineage page"
    );
    // --yaml and --json together are a usage error.
    Test::fixture()
        .args(&[
            "pipeline",
            "report",
            TABLE,
            "[PIPELINES]",
            "--yaml",
            "--json",
        ])
        .run()
        .status(2);
}

#[test]
fn update_makefiles_regenerate_from_the_template_and_keep_the_users_targets() {
    let t = Test::fixture();
    let mk = t.pipelines.join(TABLE_DIR).join("Makefile");
    // A shift_left Makefile (no marker): replaced.
    std::fs::write(&mk, "include ../../../common.mk\n").unwrap();
    let t = t.args(&[
        "--output",
        "json",
        "table",
        "update-makefile",
        TABLE,
        "[PIPELINES]",
    ]);
    let v = t.run().success().json();
    assert_eq!(v["makefiles"][0]["change"], "replaced");
    let text = std::fs::read_to_string(&mk).unwrap();
    assert!(text.contains(&format!("TABLE := {TABLE}")), "{text}");
    assert!(text.contains("PIPELINES := $(abspath ../../..)"), "{text}");
    assert!(!text.contains("common.mk"));
    // A target of the user's below the marker survives an update of every Makefile.
    let t = Test::fixture();
    let pipelines = t.pipelines.canonicalize().unwrap();
    let mk2 = t.pipelines.join(TABLE_DIR).join("Makefile");
    std::fs::write(&mk2, format!("{text}\nsmoke:\n\techo smoke\n")).unwrap();
    let t = t.args(&[
        "--output",
        "json",
        "table",
        "update-all-makefiles",
        "[PIPELINES]",
    ]);
    let v = t.run().success().json();
    let all = v["makefiles"].as_array().unwrap();
    assert!(all.len() > 20, "every table folder");
    let mine = all.iter().find(|m| m["table_name"] == TABLE).unwrap();
    assert_eq!(mine["change"], "unchanged");
    assert_eq!(mine["kept_lines"], 3);
    assert!(all.iter().filter(|m| m["change"] == "created").count() > 20);
    let after = std::fs::read_to_string(&mk2).unwrap();
    assert!(after.ends_with("smoke:\n\techo smoke\n"), "{after}");
    // The regenerated Makefile works: `make -n plan` calls flinkpipe on this table.
    let o = std::process::Command::new("make")
        .args(["-n", "plan"])
        .arg(format!("FLINKPIPE={}", env!("CARGO_BIN_EXE_flinkpipe")))
        .current_dir(mk2.parent().unwrap())
        .output()
        .unwrap();
    let o = t.outcome("make -n plan", o);
    assert!(
        o.stdout_raw().contains(&format!(
            "pipeline build-execution-plan {} --table-name {TABLE}",
            pipelines.display()
        )),
        "{}{}",
        o.stdout_raw(),
        o.stderr_raw()
    );
    // An unknown table: error, nothing written.
    Test::fixture()
        .args(&["table", "update-makefile", "nope_table", "[PIPELINES]"])
        .run()
        .status(1)
        .stderr_has("unknown table 'nope_table'");
}

#[test]
fn validate_config_reports_every_problem_at_once_with_its_line() {
    let bad = "kafka:\n  cluster_type: dev\n  bogus: 1\nconfluent_cloud:\n  cloud_provider: ibm\n  page_size: 500\nflink:\n  max_cfu: 7\n  max_cfu_percent_before_allocation: 1.5\n  poll_timer: soon\napp:\n  products: sales\n  post_fix_unit_test: ut\nflinkpipe:\n  layers:\n    bronze: sourcey\nextra: 1\n";
    let t = Test::new().config(bad);
    let v = t
        .args(&[
            "--output",
            "json",
            "project",
            "validate-config",
            "--target",
            "confluent",
        ])
        .run()
        .status(1)
        .json();
    let got: Vec<(String, String, Option<u64>)> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap().into(),
                p["key"].as_str().unwrap().into(),
                p["line"].as_u64(),
            )
        })
        .collect();
    let has = |kind: &str, key: &str, line: Option<u64>| {
        assert!(
            got.contains(&(kind.to_string(), key.to_string(), line)),
            "no {kind} {key} at {line:?} in {got:#?}"
        );
    };
    has("unknown_key", "kafka.bogus", Some(3));
    has("not_allowed", "confluent_cloud.cloud_provider", Some(5));
    has("not_allowed", "confluent_cloud.page_size", Some(6));
    has("not_allowed", "flink.max_cfu", Some(8));
    has(
        "not_allowed",
        "flink.max_cfu_percent_before_allocation",
        Some(9),
    );
    has("wrong_type", "flink.poll_timer", Some(10));
    has("wrong_type", "app.products", Some(12));
    has("not_allowed", "app.post_fix_unit_test", Some(13));
    has("not_allowed", "flinkpipe.layers", Some(15));
    has("unknown_key", "extra", Some(17));
    // Required for Confluent Cloud, neither in the file nor the environment: each named.
    has("missing", "confluent_cloud.environment_id", None);
    has("missing", "confluent_cloud.organization_id", None);
    has("missing", "SL_FLINK_API_KEY", None);
    // Text: one line per problem, file:line first.
    let o = Test::new()
        .config(bad)
        .args(&["project", "validate-config"])
        .run()
        .status(1);
    assert!(
        o.stderr().contains(
            "config.yaml:5: confluent_cloud.cloud_provider: 'ibm' is not aws, gcp or azure"
        ),
        "{}",
        o.stderr()
    );

    // A good file for the gateway target, and for Confluent with the secrets in the environment.
    Test::new()
        .config(
            "kafka:\n  cluster_type: dev\nflinkpipe:\n  gateway:\n    url: http://127.0.0.1:8083\n",
        )
        .args(&["project", "validate-config", "--target", "gateway"])
        .run()
        .success()
        .stdout_has("is valid for a Flink SQL Gateway");
    Test::new()
        .config("confluent_cloud:\n  organization_id: o\n  environment_id: env-1\n  cloud_provider: aws\n  cloud_region: us-west-2\nflink:\n  compute_pool_id: lfcp-1\n")
        .env("SL_FLINK_API_KEY", "k")
        .env("SL_FLINK_API_SECRET", "s")
        .args(&["project", "validate-config"])
        .run()
        .success()
        .stdout_has("is valid for Confluent Cloud");
    // The gateway target needs its URL.
    let v = Test::new()
        .config("kafka:\n  cluster_type: dev\n")
        .args(&[
            "--output",
            "json",
            "project",
            "validate-config",
            "--target",
            "gateway",
        ])
        .run()
        .status(1)
        .json();
    assert_eq!(v["problems"][0]["key"], "flinkpipe.gateway.url");
}

fn confluent_project() -> Test {
    Test::fixture().config(&format!(
        "kafka:\n  cluster_type: dev\nconfluent_cloud:\n  organization_id: {ORG}\n  environment_id: {ENV}\n  cloud_provider: aws\n  cloud_region: us-west-2\nflink:\n  compute_pool_id: {DEFAULT_POOL}\n"
    ))
}

#[test]
fn get_statement_list_gives_phase_owner_and_age_of_every_statement_on_a_pool() {
    let t = confluent_project();
    let fake = FakeConfluent::with_default_pool();
    let o = t.cmd_on(
        &fake,
        &["pipeline", "deploy", "pipelines", "--table-name", TABLE],
    );
    o.success();
    fake.seed_in_pool("workspace-old", "SELECT 1", "COMPLETED", DEFAULT_POOL, 9);
    fake.seed_in_pool(
        "other-team",
        "INSERT INTO y SELECT 1",
        "RUNNING",
        "lfcp-other",
        3,
    );
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "project",
            "get-statement-list",
            DEFAULT_POOL,
            "pipelines",
        ],
    );
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    assert_eq!(v["compute_pool_id"], DEFAULT_POOL);
    let rows = v["statements"].as_array().unwrap();
    let row = |n: &str| {
        rows.iter()
            .find(|r| r["statement"] == n)
            .unwrap_or_else(|| panic!("{n} not in {rows:#?}"))
    };
    let dml = row("dev-usw2-sales-dml-sales-fct-order-payments");
    assert_eq!(dml["phase"], "RUNNING");
    assert_eq!(dml["table_name"], TABLE);
    let old = row("workspace-old");
    assert_eq!(old["table_name"], Value::Null);
    assert_eq!(old["age_days"], 9);
    assert_eq!(old["phase"], "COMPLETED");
    assert!(
        rows.iter().all(|r| r["statement"] != "other-team"),
        "another pool's statement"
    );
    let o = t.cmd_on(
        &fake,
        &["project", "get-statement-list", DEFAULT_POOL, "pipelines"],
    );
    let text = o.stdout_raw();
    assert!(text.contains("(not ours)") && text.contains("9d"), "{text}");
}

#[test]
fn list_environments_reads_every_page_of_the_org_api_with_the_cloud_key() {
    let t = confluent_project();
    let fake = FakeConfluent::start();
    fake.add_environment("env-prod9", "prod");
    fake.add_environment("env-stage3", "stage");
    let o = t.cmd_on(&fake, &["--output", "json", "project", "list-environments"]);
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    assert_eq!(v["configured"], ENV);
    assert_eq!(
        names(&v["environments"], "id"),
        [ENV, "env-prod9", "env-stage3"]
    );
    assert_eq!(v["environments"][1]["display_name"], "prod");
    assert_eq!(v["environments"][0]["stream_governance"], "ESSENTIALS");
    let text = t
        .cmd_on(&fake, &["project", "list-environments"])
        .stdout_raw();
    let mine = text.lines().find(|l| l.contains(ENV)).unwrap();
    assert!(
        mine.starts_with('*'),
        "the configured one is marked: {text}"
    );
    // The Flink key is not enough: the Cloud key is named.
    let o = t.cmd_env(
        &["project", "list-environments"],
        &[
            ("FLINKPIPE_CLOUD_API_URL", &fake.endpoint()),
            ("SL_FLINK_API_KEY", KEY),
            ("SL_FLINK_API_SECRET", SECRET),
        ],
    );
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("SL_CONFLUENT_CLOUD_API_KEY"),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn delete_all_compute_pools_lists_keeps_protected_pools_asks_and_deletes_the_rest() {
    let t = confluent_project();
    let fake = FakeConfluent::start();
    fake.add_pool(DEFAULT_POOL, "sales-default", 50, 0);
    fake.add_pool("lfcp-sales1", "sales-adhoc", 10, 0);
    fake.add_pool("lfcp-sales2", "sales-etl", 10, 0);
    fake.add_pool("lfcp-c360", "c360-etl", 10, 0);
    // A statement of the project (by its name) in lfcp-sales2, another team's in lfcp-sales1.
    fake.seed_in_pool(
        "dev-usw2-sales-dml-sales-fct-order-payments",
        "INSERT INTO x SELECT 1",
        "STOPPED",
        "lfcp-sales2",
        1,
    );
    fake.seed_in_pool("workspace-1", "SELECT 1", "COMPLETED", "lfcp-sales1", 2);
    // No answer: listed, nothing deleted, exit 1.
    let o = t.cmd_on(&fake, &["project", "delete-all-compute-pools", "sales"]);
    let o = o.code(1);
    let text = o.stdout_raw();
    assert!(text.contains("delete lfcp-sales1 (sales-adhoc)"), "{text}");
    assert!(text.contains("workspace-1 (COMPLETED)"), "{text}");
    assert!(
        text.contains("keep   lfcp-sales2 (sales-etl)")
            && text.contains("holds statements of this project"),
        "{text}"
    );
    assert!(text.contains(&format!("keep   {DEFAULT_POOL} (sales-default): the configuration sends statements there (flink.compute_pool_id)")), "{text}");
    assert!(!text.contains("lfcp-c360"), "not selected: {text}");
    assert!(text.contains("nothing deleted"));
    assert_eq!(fake.pool_ids().len(), 4);
    // --no-ack: the unprotected one goes; exit 1 because some were kept.
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "project",
            "delete-all-compute-pools",
            "sales",
            "--no-ack",
        ],
    );
    let o = o.code(1);
    let v = json_of(&o.stdout_raw());
    assert_eq!(v["deleted"][0]["id"], "lfcp-sales1");
    assert_eq!(v["deleted"][0]["deleted"], true);
    assert_eq!(v["plan"]["kept"].as_array().unwrap().len(), 2);
    let mut left = fake.pool_ids();
    left.sort();
    assert!(!left.contains(&"lfcp-sales1".to_string()), "{left:?}");
    assert!(left.contains(&"lfcp-sales2".to_string()) && left.contains(&DEFAULT_POOL.to_string()));
    // A list file: only those; an id that does not exist is named.
    let list = t.root.join("pools.txt");
    std::fs::write(&list, "# pools to drop\nlfcp-c360\nlfcp-gone\n").unwrap();
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "project",
            "delete-all-compute-pools",
            "--compute-pool-list-file",
            list.to_str().unwrap(),
            "--no-ack",
        ],
    );
    let v = json_of(&o.stdout_raw());
    assert_eq!(v["deleted"][0]["id"], "lfcp-c360");
    assert_eq!(v["plan"]["kept"][0]["id"], "lfcp-gone");
    assert!(!fake.pool_ids().contains(&"lfcp-c360".to_string()));
    // Neither a product nor a list: a usage error.
    let o = t.cmd_on(&fake, &["project", "delete-all-compute-pools"]);
    o.code(2);
}

#[test]
fn update_tables_rewrites_names_only_with_a_diff_first_and_all_files_or_none() {
    let dml = "-- reads int_sales_orders\nINSERT INTO sales_fct_x\nSELECT o.id, 'int_sales_orders' AS origin\nFROM clone.dev.int_sales_orders AS o\nJOIN `int_sales_stores` s ON o.id = s.id;\n";
    let ddl =
        "CREATE TABLE IF NOT EXISTS sales_fct_x (id INT) WITH ('topic' = 'int_sales_orders');\n";
    let mk = || {
        Test::new()
            .file("facts/sales/fct_x/sql-scripts/dml.sales_fct_x.sql", dml)
            .file("facts/sales/fct_x/sql-scripts/ddl.sales_fct_x.sql", ddl)
            .file(
                "facts/sales/fct_x/tests/insert_int_sales_orders_1.sql",
                "INSERT INTO int_sales_orders_ut VALUES (1);\n",
            )
    };
    let path = |t: &Test, f: &str| t.pipelines.join("facts/sales/fct_x/sql-scripts").join(f);
    // --dry-run: the diff, nothing written.
    let t = mk().args(&[
        "table",
        "update-tables",
        "[PIPELINES]",
        "--string-to-change-from",
        "int_sales_",
        "--string-to-change-to",
        "int_shop_",
        "--dry-run",
    ]);
    let out = t.run().success().stdout();
    assert!(out.contains("-FROM clone.dev.int_sales_orders AS o\n-JOIN `int_sales_stores` s ON o.id = s.id;\n+FROM clone.dev.int_shop_orders AS o\n+JOIN `int_shop_stores` s ON o.id = s.id;\n"), "{out}");
    assert!(out.contains("1 of 1 file(s) to rewrite"), "{out}");
    assert_eq!(
        std::fs::read_to_string(path(&t, "dml.sales_fct_x.sql")).unwrap(),
        dml
    );
    // Applied to DML and DDL: names change; the comment, the string, the topic and tests/ do not.
    let t = mk().args(&[
        "--output",
        "json",
        "table",
        "update-tables",
        "[PIPELINES]",
        "--string-to-change-from",
        "int_sales_",
        "--string-to-change-to",
        "int_shop_",
        "--both-ddl-dml",
    ]);
    let v = t.run().success().json();
    assert_eq!(v["files_seen"], 2);
    assert_eq!(v["applied"], true);
    assert_eq!(v["changed"][0]["edits"], 2);
    assert_eq!(
        std::fs::read_to_string(path(&t, "dml.sales_fct_x.sql")).unwrap(),
        "-- reads int_sales_orders\nINSERT INTO sales_fct_x\nSELECT o.id, 'int_sales_orders' AS origin\nFROM clone.dev.int_shop_orders AS o\nJOIN `int_shop_stores` s ON o.id = s.id;\n"
    );
    assert_eq!(
        std::fs::read_to_string(path(&t, "ddl.sales_fct_x.sql")).unwrap(),
        ddl
    );
    assert!(
        std::fs::read_to_string(
            t.pipelines
                .join("facts/sales/fct_x/tests/insert_int_sales_orders_1.sql")
        )
        .unwrap()
        .contains("int_sales_orders_ut")
    );
    // A qualifier prefix removed (shift_left's common use), DDL only leaves the DML alone.
    let t = mk().args(&[
        "table",
        "update-tables",
        "[PIPELINES]",
        "--string-to-change-from",
        "clone.dev.",
        "--string-to-change-to",
        "",
    ]);
    t.run().success();
    assert!(
        std::fs::read_to_string(path(&t, "dml.sales_fct_x.sql"))
            .unwrap()
            .contains("FROM int_sales_orders AS o\n")
    );
    // A processor class is refused, naming the rule to write; nothing changed.
    let t = mk().args(&[
        "table",
        "update-tables",
        "[PIPELINES]",
        "my.module.Worker",
        "--string-to-change-from",
        "int_sales_",
    ]);
    t.run()
        .status(1)
        .stderr_has("  sql_rewrites:\n    <environment>:");
    assert_eq!(
        std::fs::read_to_string(path(&t, "dml.sales_fct_x.sql")).unwrap(),
        dml
    );
    // shift_left's default class is its plain replacement: accepted.
    mk().args(&[
        "table",
        "update-tables",
        "[PIPELINES]",
        "shift_left.core.utils.table_worker.TableWorker",
        "--string-to-change-from",
        "int_sales_",
        "--string-to-change-to",
        "x_",
    ])
    .run()
    .success();
    // A file that does not tokenize stops the whole run: the good file is not written either.
    let t = mk()
        .file(
            "facts/sales/fct_y/sql-scripts/dml.sales_fct_y.sql",
            "INSERT INTO int_sales_y SELECT 'unterminated FROM int_sales_orders;\n",
        )
        .args(&[
            "table",
            "update-tables",
            "[PIPELINES]",
            "--string-to-change-from",
            "int_sales_",
            "--string-to-change-to",
            "int_shop_",
        ]);
    t.run().status(1).stderr_has("does not tokenize");
    assert_eq!(
        std::fs::read_to_string(path(&t, "dml.sales_fct_x.sql")).unwrap(),
        dml
    );
}

/// A team's Makefile written for shift_left 0.1.52 (its command names, arguments and environment:
/// `$PIPELINES`, `$CONFIG_FILE`, the `SL_*` variables), run with `shift_left` replaced by the path of
/// `flinkpipe` and nothing else changed.
const SHIFT_LEFT_MAKEFILE: &str = r#"export PIPELINES := $(CURDIR)/pipelines
export CONFIG_FILE := $(CURDIR)/config.yaml
TABLE := sales_fct_order_payments
DML := $(PIPELINES)/facts/sales/fct_order_payments/sql-scripts/dml.sales_fct_order_payments.sql

.PHONY: all check inventory metadata one-table report names cross one-child makefiles plan deploy envs statements update running usage assess isolate prepare forms

all: check inventory metadata one-table report names cross one-child makefiles plan deploy statements envs update running usage assess isolate prepare forms

check:
	shift_left version
	shift_left project validate-config

inventory:
	shift_left table build-inventory $(PIPELINES)

metadata:
	shift_left pipeline delete-all-metadata $(PIPELINES) --no-ack
	shift_left pipeline build-all-metadata $(PIPELINES)

one-table:
	shift_left pipeline build-metadata $(DML) $(PIPELINES)

report:
	shift_left pipeline report $(TABLE) $(PIPELINES) --json --output-file-name $(CURDIR)/report.json
	shift_left pipeline report $(TABLE) $(PIPELINES) --yaml --children-too

names:
	shift_left table validate-table-names $(PIPELINES)

cross:
	shift_left project report-table-cross-products

one-child:
	shift_left project list-tables-with-one-child

makefiles:
	shift_left table update-makefile $(TABLE) $(PIPELINES)
	shift_left table update-all-makefiles $(PIPELINES)

plan:
	shift_left pipeline build-execution-plan $(PIPELINES) --table-name $(TABLE) --may-start-descendants

deploy:
	shift_left pipeline deploy $(PIPELINES) --table-name $(TABLE) --max-thread 2

statements:
	shift_left project get-statement-list $(SL_FLINK_COMPUTE_POOL_ID)

envs:
	shift_left project list-environments

update:
	shift_left table update-tables $(PIPELINES) --string-to-change-from clone.dev. --string-to-change-to "" --both-ddl-dml

running:
	shift_left pipeline report-running-statements $(PIPELINES) --product-name sales

usage:
	shift_left pipeline analyze-pool-usage $(PIPELINES) -p sales

assess:
	shift_left project assess-unused-tables $(PIPELINES) --no-topics --output-file $(CURDIR)/unused.txt

isolate:
	shift_left project isolate-data-product c360 $(PIPELINES) $(CURDIR)/c360

prepare:
	echo "ALTER TABLE src_sales_orders SET ('kafka.retention.time' = '7 d');" > $(CURDIR)/alter.sql
	shift_left pipeline prepare $(CURDIR)/alter.sql

# The forms of shift_left's command docs: a table path, the branch and --project-path, Typer's
# --no- forms, undeploy --cross-product, table explain.
forms:
	git init -q -b master . && git add -A && git -c user.name=t -c user.email=t@t commit -qm base
	shift_left project list-modified-files master --project-path . --file-filter .sql
	shift_left project list-impacted-tables --modified-files-path $(CURDIR)/out/modified_flink_files.json --project-path $(PIPELINES) --output-file $(CURDIR)/impacted.json
	shift_left table init src_table_1 $(PIPELINES)/sources/p1 --product-name p1
	shift_left table explain --table-name $(TABLE) --persist-report
	shift_left pipeline build-execution-plan $(PIPELINES) --table-name $(TABLE) --no-may-start-descendants --no-force-ancestors --no-cross-product-deployment --no-dml-only
	shift_left pipeline undeploy $(PIPELINES) --table-name $(TABLE) --cross-product --no-ack
	shift_left pipeline deploy $(PIPELINES) --table-name $(TABLE) --no-pool-creation --no-parallel --max-thread 1
	shift_left table delete-unit-tests $(TABLE) --compute-pool-id $(SL_FLINK_COMPUTE_POOL_ID)
"#;

#[test]
fn a_shift_left_makefile_runs_unchanged_with_flinkpipe() {
    let t = confluent_project();
    let fake = FakeConfluent::with_default_pool();
    let bin = env!("CARGO_BIN_EXE_flinkpipe");
    // The only change: the program's name.
    let makefile = SHIFT_LEFT_MAKEFILE.replace("shift_left ", &format!("{bin} "));
    assert_eq!(
        makefile.matches(bin).count(),
        SHIFT_LEFT_MAKEFILE.matches("shift_left ").count()
    );
    std::fs::write(t.root.join("Makefile"), makefile).unwrap();
    let mut make = std::process::Command::new("make");
    for v in crate::support::CONFIG_ENV {
        make.env_remove(v);
    }
    let o = make
        .args(["-s", "all"])
        .current_dir(&t.root)
        .env("SL_FLINK_SQL_ENDPOINT", fake.endpoint())
        .env("SL_FLINK_API_KEY", KEY)
        .env("SL_FLINK_API_SECRET", SECRET)
        .env("SL_FLINK_COMPUTE_POOL_ID", DEFAULT_POOL)
        .env("FLINKPIPE_CLOUD_API_URL", fake.endpoint())
        .env("FLINKPIPE_METRICS_URL", fake.endpoint())
        .env("SL_CONFLUENT_CLOUD_API_KEY", CLOUD_KEY)
        .env("SL_CONFLUENT_CLOUD_API_SECRET", CLOUD_SECRET)
        .env("FLINKPIPE_OUTPUT_DIR", t.root.join("out"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let o = t.outcome("make -s all", o);
    let out = format!("{}{}", o.stdout_raw(), o.stderr_raw());
    o.success();
    for secret in [KEY, SECRET, CLOUD_KEY, CLOUD_SECRET] {
        assert!(!out.contains(secret), "a secret in the output");
    }
    // What the targets wrote and did.
    assert!(t.pipelines.join("inventory.json").is_file());
    assert!(t.pipelines.join("pipeline_graph.json").is_file());
    assert!(
        t.pipelines
            .join(TABLE_DIR)
            .join("pipeline_definition.json")
            .is_file()
    );
    let report = json_of(&std::fs::read_to_string(t.root.join("report.json")).unwrap());
    assert_eq!(report["table_name"], TABLE);
    assert!(
        std::fs::read_to_string(t.pipelines.join(TABLE_DIR).join("Makefile"))
            .unwrap()
            .contains(&format!("TABLE := {TABLE}"))
    );
    assert!(out.contains("is valid for Confluent Cloud"), "{out}");
    assert!(
        out.contains("dev-usw2-sales-dml-sales-fct-order-payments  "),
        "get-statement-list lists the deployed DML:\n{out}"
    );
    assert!(
        fake.names()
            .contains(&"dev-usw2-sales-dml-sales-fct-order-payments".to_string())
    );
    assert!(out.contains(ENV), "list-environments:\n{out}");
    assert!(
        out.contains("running statement(s) of"),
        "report-running-statements:\n{out}"
    );
    assert!(
        out.contains(&format!("{DEFAULT_POOL}  ")),
        "analyze-pool-usage:\n{out}"
    );
    assert!(t.root.join("unused.txt").is_file());
    assert!(
        t.root
            .join("c360/pipelines/seeds/external_tables.json")
            .is_file()
    );
    assert!(out.contains("done     "), "prepare:\n{out}");
    // The forms.
    assert!(
        out.contains("0 file(s) changed between master"),
        "list-modified-files master:\n{out}"
    );
    let impacted = json_of(&std::fs::read_to_string(t.root.join("impacted.json")).unwrap());
    assert!(impacted["impacted_tables"].is_array(), "{impacted}");
    let p1 = t.pipelines.join("sources/p1");
    let made: Vec<_> = std::fs::read_dir(&p1)
        .unwrap_or_else(|e| panic!("{}: {e}\n{out}", p1.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(p1.join(&made[0]).join("sql-scripts").is_dir(), "{made:?}");
    let report = t
        .root
        .join("out")
        .join(format!("{TABLE}_explain_report.json"));
    let report = json_of(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(report["table_name"], TABLE);
    assert!(report["trace"].as_str().is_some_and(|t| !t.is_empty()));
}

/// shift_left's `run-unit-tests T --test-case-name X --run-all`: one case, the whole of it.
#[test]
fn run_unit_tests_takes_a_test_case_name_with_run_all() {
    let o = Test::fixture()
        .args(&[
            "--output",
            "json",
            "table",
            "run-unit-tests",
            TABLE,
            "[PIPELINES]",
            "--test-case-name",
            "paid_orders_with_their_store",
            "--run-all",
            "--dry-run",
        ])
        .run()
        .success()
        .stdout();
    assert!(o.contains("paid_orders_with_their_store"), "{o}");
}

#[test]
fn deploy_version_deploys_the_tables_recorded_at_that_version() {
    let t = Test::new()
        .config(&format!(
            "kafka:\n  cluster_type: dev\nconfluent_cloud:\n  organization_id: {ORG}\n  environment_id: {ENV}\n  cloud_provider: aws\n  cloud_region: us-west-2\nflink:\n  compute_pool_id: {DEFAULT_POOL}\n"
        ))
        .file("sources/sales/src_x/sql-scripts/ddl.src_sales_x.sql", "CREATE TABLE IF NOT EXISTS src_sales_x (id INT, PRIMARY KEY (id) NOT ENFORCED);\n")
        .file("intermediates/sales/int_x/sql-scripts/ddl.int_x_v2.sql", "CREATE TABLE IF NOT EXISTS int_x_v2 (id INT, PRIMARY KEY (id) NOT ENFORCED);\n")
        .file("intermediates/sales/int_x/sql-scripts/dml.int_x_v2.sql", "INSERT INTO int_x_v2 SELECT id FROM src_sales_x;\n")
        .file("intermediates/sales/int_y/sql-scripts/ddl.int_y.sql", "CREATE TABLE IF NOT EXISTS int_y (id INT, PRIMARY KEY (id) NOT ENFORCED);\n")
        .file("intermediates/sales/int_y/sql-scripts/dml.int_y.sql", "INSERT INTO int_y SELECT id FROM src_sales_x;\n")
        .file(
            "blue_green.json",
            r#"{"format": 1, "releases": [{"created_at": "2026-12-01T10:00:00Z", "base_ref": "main", "base_commit": null, "statement_prefix": "dev-usw2",
  "tables": [{"blue_table_name": "int_x", "green_table_name": "int_x_v2", "product_name": "sales",
    "blue_statements": [{"name": "dev-usw2-sales-dml-int-x", "role": "job"}],
    "green_statements": [{"name": "dev-usw2-sales-ddl-int-x-v2", "role": "declaration"}, {"name": "dev-usw2-sales-dml-int-x-v2", "role": "job"}],
    "reason": "logic change"}], "decommissioned": []}]}
"#,
        );
    let fake = FakeConfluent::with_default_pool();
    let o = t.cmd_on(
        &fake,
        &["pipeline", "deploy", "pipelines", "--version", "_v2"],
    );
    o.success();
    let names = fake.names();
    assert!(
        names.contains(&"dev-usw2-sales-dml-int-x-v2".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"dev-usw2-sales-ddl-src-sales-x".to_string()),
        "its ancestor: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n.contains("int-y")),
        "not recorded at _v2: {names:?}"
    );
    // A version nothing was recorded at, and a version with a scope.
    let o = t.cmd_on(
        &fake,
        &["pipeline", "deploy", "pipelines", "--version", "3"],
    );
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("records no table at version _v3"),
        "{}",
        o.stderr_raw()
    );
    let o = t.cmd_on(
        &fake,
        &[
            "pipeline",
            "deploy",
            "pipelines",
            "--version",
            "2",
            "--table-name",
            "int_y",
        ],
    );
    o.code(2);
    // shift_left's --max-thread and --parallel are accepted.
    let o = t.cmd_on(
        &fake,
        &[
            "pipeline",
            "deploy",
            "pipelines",
            "--table-name",
            "int_y",
            "--max-thread",
            "2",
            "--parallel",
        ],
    );
    o.success();
    assert!(
        fake.names()
            .contains(&"dev-usw2-sales-dml-int-y".to_string())
    );
}

#[test]
fn list_topics_on_confluent_reads_the_kafka_rest_api_with_the_kafka_key() {
    use crate::fake_confluent::{KAFKA_CLUSTER, KAFKA_KEY, KAFKA_SECRET};
    let t = confluent_project();
    let fake = FakeConfluent::start();
    fake.add_topic("sales_fct_order_payments", 6);
    fake.add_topic("int_sales_paid_orders", 3);
    fake.add_topic("other_team_topic", 1);
    fake.add_topic("__consumer_offsets", 50);
    fake.add_topic("zz_scratch", 1);
    let out = tempfile::tempdir().unwrap();
    let run = |extra: &[(&str, &str)], json: bool| {
        let json_args: &[&str] = if json { &["--output", "json"] } else { &[] };
        let list = [
            json_args,
            &["project", "list-topics", out.path().to_str().unwrap()],
        ]
        .concat();
        let mut c = t.command(&list);
        c.env("FLINKPIPE_KAFKA_REST_URL", fake.endpoint())
            .env("SL_FLINK_SQL_ENDPOINT", fake.endpoint())
            .stdin(std::process::Stdio::null());
        for (k, v) in extra {
            c.env(k, v);
        }
        let o = t.outcome(&list.join(" "), c.output().unwrap());
        let all = format!("{}{}", o.stdout_raw(), o.stderr_raw());
        assert!(
            !all.contains(KAFKA_SECRET) && !all.contains(KAFKA_KEY),
            "a secret in the output:\n{all}"
        );
        o
    };
    let key = [
        ("SL_KAFKA_API_KEY", KAFKA_KEY),
        ("SL_KAFKA_API_SECRET", KAFKA_SECRET),
    ];
    // The cluster id comes from the configuration.
    std::fs::write(
        t.root.join("config.yaml"),
        format!(
            "{}kafka:\n  cluster_type: dev\n  cluster_id: {KAFKA_CLUSTER}\n",
            std::fs::read_to_string(t.root.join("config.yaml"))
                .unwrap()
                .replace("kafka:\n  cluster_type: dev\n", "")
        ),
    )
    .unwrap();
    let o = run(&key, true);
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    assert_eq!(v["source"], "kafka_rest");
    assert_eq!(v["cluster_id"], KAFKA_CLUSTER);
    // Every page (two per page), sorted, each with its table.
    assert_eq!(
        names(&v["topics"], "topic_name"),
        [
            "__consumer_offsets",
            "int_sales_paid_orders",
            "other_team_topic",
            "sales_fct_order_payments",
            "zz_scratch"
        ]
    );
    let row = |n: &str| {
        v["topics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["topic_name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(row("sales_fct_order_payments")["table_name"], TABLE);
    assert_eq!(row("sales_fct_order_payments")["partitions_count"], 6);
    assert_eq!(row("other_team_topic")["table_name"], Value::Null);
    assert_eq!(row("__consumer_offsets")["is_internal"], true);
    // shift_left's file.
    let file = std::fs::read_to_string(out.path().join("topic_list.txt")).unwrap();
    assert!(
        file.contains(&format!("{KAFKA_CLUSTER},sales_fct_order_payments,6\n")),
        "{file}"
    );
    assert_eq!(file.lines().count(), 5);
    // Without the Kafka key: both variables named; with the Flink key only: refused by the API.
    let o = run(&[], false);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("SL_KAFKA_API_KEY")
            && o.stderr_raw().contains("SL_KAFKA_API_SECRET"),
        "{}",
        o.stderr_raw()
    );
    let o = run(
        &[("SL_KAFKA_API_KEY", KEY), ("SL_KAFKA_API_SECRET", SECRET)],
        false,
    );
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("401") && o.stderr_raw().contains("Kafka API key"),
        "{}",
        o.stderr_raw()
    );
}

/// A broker that answers one `Metadata` v1 request with `topics` (name, partitions), encoded by hand
/// from Kafka's schema (`MetadataResponse.json`, v1: no tagged fields, no cluster id).
fn fake_broker(topics: &[(&str, usize)]) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let topics: Vec<(String, usize)> = topics.iter().map(|(n, p)| (n.to_string(), *p)).collect();
    std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let mut len = [0u8; 4];
        sock.read_exact(&mut len).unwrap();
        let mut req = vec![0u8; i32::from_be_bytes(len) as usize];
        sock.read_exact(&mut req).unwrap();
        // api key 3 (Metadata), version 1.
        assert_eq!(&req[..4], &[0, 3, 0, 1]);
        let correlation = &req[4..8];
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as i16).to_be_bytes());
            b.extend(s.as_bytes());
        };
        let mut b: Vec<u8> = correlation.to_vec();
        b.extend(1i32.to_be_bytes()); // one broker
        b.extend(0i32.to_be_bytes());
        string(&mut b, "127.0.0.1");
        b.extend(9092i32.to_be_bytes());
        b.extend((-1i16).to_be_bytes()); // rack: null
        b.extend(0i32.to_be_bytes()); // controller id
        b.extend((topics.len() as i32).to_be_bytes());
        for (name, partitions) in &topics {
            b.extend(0i16.to_be_bytes());
            string(&mut b, name);
            b.push(u8::from(name.starts_with("__")));
            b.extend((*partitions as i32).to_be_bytes());
            for i in 0..*partitions {
                b.extend(0i16.to_be_bytes());
                b.extend((i as i32).to_be_bytes());
                b.extend(0i32.to_be_bytes()); // leader
                b.extend(1i32.to_be_bytes()); // replicas: [0]
                b.extend(0i32.to_be_bytes());
                b.extend(1i32.to_be_bytes()); // isr: [0]
                b.extend(0i32.to_be_bytes());
            }
        }
        sock.write_all(&(b.len() as i32).to_be_bytes()).unwrap();
        sock.write_all(&b).unwrap();
    });
    addr
}

#[test]
fn list_topics_on_the_gateway_target_asks_the_broker_over_the_kafka_protocol() {
    // The local stack is not used: an in-process broker answers the Metadata request the way Kafka
    // does (tests/testsuite/e2e_gateway.rs runs against the real one).
    let broker = fake_broker(&[
        ("src_orders", 1),
        ("int_orders", 2),
        ("__consumer_offsets", 50),
    ]);
    let t = Test::new()
        .config(&format!(
            "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:9\n  unit_tests:\n    kafka_bootstrap_servers: {broker}\n"
        ))
        .file(
            "sources/src_orders/sql-scripts/ddl.src_orders.sql",
            "CREATE TABLE src_orders (id INT) WITH ('connector' = 'kafka', 'topic' = 'src_orders', 'properties.bootstrap.servers' = 'localhost:9092', 'format' = 'json');\n",
        );
    let out = t.root.join("out");
    let t = t.args(&[
        "--output",
        "json",
        "project",
        "list-topics",
        out.to_str().unwrap(),
    ]);
    let v = t.run().success().json();
    assert_eq!(v["source"], "broker");
    assert_eq!(v["cluster"], broker);
    assert_eq!(
        names(&v["topics"], "topic_name"),
        ["__consumer_offsets", "int_orders", "src_orders"]
    );
    assert_eq!(v["topics"][2]["table_name"], "src_orders");
    assert_eq!(v["topics"][1]["table_name"], Value::Null);
    assert_eq!(v["topics"][1]["partitions_count"], 2);
    assert_eq!(
        std::fs::read_to_string(out.join("topic_list.txt")).unwrap(),
        ",__consumer_offsets,50\n,int_orders,2\n,src_orders,1\n"
    );
}

#[test]
fn assess_and_delete_unused_tables_read_what_runs_and_never_drop_a_used_or_sink_table() {
    use crate::fake_confluent::{KAFKA_CLUSTER, KAFKA_KEY, KAFKA_SECRET};
    let t = Test::fixture().config(&format!(
        "kafka:\n  cluster_type: dev\n  cluster_id: {KAFKA_CLUSTER}\nconfluent_cloud:\n  organization_id: {ORG}\n  environment_id: {ENV}\n  cloud_provider: aws\n  cloud_region: us-west-2\nflink:\n  compute_pool_id: {DEFAULT_POOL}\nflinkpipe:\n  sink_tables: [c360_mv_customer_360]\n"
    ));
    let fake = FakeConfluent::with_default_pool();
    let o = t.cmd_on(
        &fake,
        &["pipeline", "deploy", "pipelines", "--table-name", TABLE],
    );
    o.success();
    // Another team's running job reads one of our leaves.
    fake.seed_in_pool(
        "other-team-dml",
        "INSERT INTO their_sink SELECT * FROM sales_mv_top_stores",
        "RUNNING",
        "lfcp-other",
        1,
    );
    for (topic, p) in [
        ("sales_mv_revenue_export", 1),
        ("orphan_topic", 2),
        (TABLE, 6),
        ("__consumer_offsets", 50),
    ] {
        fake.add_topic(topic, p);
    }
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("unused.txt");
    let kafka = |c: &mut std::process::Command| {
        c.env("SL_KAFKA_API_KEY", KAFKA_KEY)
            .env("SL_KAFKA_API_SECRET", KAFKA_SECRET)
            .env("FLINKPIPE_KAFKA_REST_URL", fake.endpoint());
    };
    let run = |args: &[&str]| {
        let mut c = t.command(args);
        c.env("SL_FLINK_SQL_ENDPOINT", fake.endpoint())
            .env("SL_FLINK_API_KEY", KEY)
            .env("SL_FLINK_API_SECRET", SECRET);
        kafka(&mut c);
        t.outcome(&args.join(" "), c.output().unwrap())
    };
    let o = run(&[
        "--output",
        "json",
        "project",
        "assess-unused-tables",
        "pipelines",
        "--output-file",
        report.to_str().unwrap(),
    ]);
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    let unused: Vec<&Value> = v["unused_tables"].as_array().unwrap().iter().collect();
    let find = |n: &str| unused.iter().find(|u| u["table_name"] == n).copied();
    // What runs, what it reads, and what another team's job reads are used.
    for used in [
        TABLE,
        "int_sales_paid_orders",
        "sales_dim_stores",
        "sales_mv_top_stores",
    ] {
        assert!(find(used).is_none(), "{used} is used: {v:#}");
    }
    assert_eq!(find("sales_mv_revenue_export").unwrap()["deletable"], true);
    assert_eq!(
        find("inventory_mv_replenishment").unwrap()["deletable"],
        true
    );
    let sink = find("c360_mv_customer_360").unwrap();
    assert_eq!(sink["deletable"], false);
    assert!(
        sink["kept_because"]
            .as_str()
            .unwrap()
            .contains("declared sink")
    );
    let read = find("c360_fct_customer_orders").unwrap();
    assert_eq!(read["deletable"], false);
    assert!(
        read["kept_because"]
            .as_str()
            .unwrap()
            .contains("c360_mv_customer_360")
    );
    let topics: Vec<(String, Value)> = v["unused_topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["topic_name"].as_str().unwrap().to_string(),
                t["table_name"].clone(),
            )
        })
        .collect();
    assert_eq!(
        topics,
        [
            ("orphan_topic".to_string(), Value::Null),
            (
                "sales_mv_revenue_export".to_string(),
                Value::from("sales_mv_revenue_export")
            )
        ]
    );
    assert_eq!(v["total_topics"], 4);
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(
        text.contains("\nsales_mv_revenue_export\n  Type: view\n"),
        "{text}"
    );
    // --no-topics: no Kafka call needed.
    let o = run(&[
        "--output",
        "json",
        "project",
        "assess-unused-tables",
        "pipelines",
        "--no-topics",
        "--output-file",
        report.to_str().unwrap(),
    ]);
    assert_eq!(json_of(&o.stdout_raw())["unused_topics"], Value::Null);

    // Dropping: the report is the list. Without an answer nothing happens.
    let o = run(&["project", "delete-unused-tables", report.to_str().unwrap()]);
    let o = o.code(1);
    assert!(o.stdout_raw().contains("nothing dropped"));
    let drops = || {
        fake.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.body.contains("DROP TABLE IF EXISTS"))
            .map(|r| r.body_name.unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert!(drops().is_empty());
    let o = run(&[
        "--output",
        "json",
        "project",
        "delete-unused-tables",
        report.to_str().unwrap(),
        "--no-ack",
    ]);
    let o = o.success();
    let dropped = names(&json_of(&o.stdout_raw())["dropped"], "table_name");
    assert!(
        dropped.contains(&"sales_mv_revenue_export".to_string()),
        "{dropped:?}"
    );
    assert!(!dropped.contains(&"c360_mv_customer_360".to_string()));
    assert_eq!(drops().len(), dropped.len());
    assert!(
        drops().contains(&"dev-usw2-sales-ddl-sales-mv-revenue-export-drop".to_string()),
        "{:?}",
        drops()
    );
    // A list naming a used table or a sink: refused whole, each named; nothing dropped.
    let list = out.path().join("list.txt");
    std::fs::write(
        &list,
        format!("{TABLE}\nc360_mv_customer_360\ninventory_mv_replenishment\nno_such_table\n"),
    )
    .unwrap();
    let before = drops().len();
    let o = run(&[
        "project",
        "delete-unused-tables",
        list.to_str().unwrap(),
        "--no-ack",
    ]);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert!(
        err.contains(&format!("{TABLE}: a running statement reads or writes it")),
        "{err}"
    );
    assert!(
        err.contains("c360_mv_customer_360: a declared sink"),
        "{err}"
    );
    assert!(err.contains("no_such_table: no table of the tree"), "{err}");
    assert_eq!(drops().len(), before);
}

#[test]
fn prepare_runs_one_off_sql_in_order_with_the_projects_catalog_and_stops_at_a_failure() {
    let t = Test::fixture().config(&format!(
        "kafka:\n  cluster_type: dev\nconfluent_cloud:\n  organization_id: {ORG}\n  environment_id: {ENV}\n  cloud_provider: aws\n  cloud_region: us-west-2\nflink:\n  compute_pool_id: {DEFAULT_POOL}\n  catalog_name: shop-dev\n  database_name: sales-cluster\n"
    ));
    let fake = FakeConfluent::with_default_pool();
    let sql = t.root.join("alter.sql");
    std::fs::write(
        &sql,
        "-- widen the key\nALTER TABLE src_sales_orders SET ('changelog.mode' = 'upsert');\nALTER TABLE int_sales_paid_orders SET ('kafka.retention.time' = '7 d');\n",
    )
    .unwrap();
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "pipeline",
            "prepare",
            sql.to_str().unwrap(),
            "pipelines",
            "--timeout",
            "5",
        ],
    );
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    let stmts = names(&v["statements"], "statement");
    assert_eq!(stmts.len(), 2);
    assert!(
        stmts[0].starts_with("dev-usw2-prepare-alter-1-")
            && stmts[1].starts_with("dev-usw2-prepare-alter-2-"),
        "{stmts:?}"
    );
    assert_eq!(v["statements"][0]["line"], 2);
    assert_eq!(v["statements"][1]["outcome"], "done");
    let posts: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert!(
        posts[0].body.contains("ALTER TABLE src_sales_orders"),
        "{}",
        posts[0].body
    );
    assert!(
        posts[0]
            .body
            .contains("\"sql.current-catalog\":\"shop-dev\""),
        "{}",
        posts[0].body
    );
    assert!(
        posts[0]
            .body
            .contains("\"sql.current-database\":\"sales-cluster\"")
    );
    // Nothing left behind.
    let deleted = fake.deletes();
    for n in &stmts {
        assert!(deleted.iter().any(|d| d == n), "{n} deleted: {deleted:?}");
        assert!(
            fake.phase(n).is_none_or(|p| p == "DELETING"),
            "{n} left behind"
        );
    }
    // A failure stops the run: the next statement is not sent; exit 1.
    std::fs::write(
        &sql,
        "ALTER TABLE FAIL_ME SET ('a' = 'b');\nALTER TABLE src_sales_orders SET ('a' = 'b');\n",
    )
    .unwrap();
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "pipeline",
            "prepare",
            sql.to_str().unwrap(),
            "pipelines",
            "--timeout",
            "5",
        ],
    );
    let o = o.code(1);
    let v = json_of(&o.stdout_raw());
    assert_eq!(v["statements"][0]["outcome"], "failed");
    assert_eq!(v["statements"][1]["outcome"], "not_run");
}

#[test]
fn healthcheck_running_statements_and_pool_usage_report_the_live_pipeline() {
    let t = confluent_project();
    let fake = FakeConfluent::with_default_pool();
    fake.add_pool("lfcp-idle", "idle", 10, 0);
    fake.add_pool("lfcp-small", "small", 20, 0);
    let o = t.cmd_on(
        &fake,
        &["pipeline", "deploy", "pipelines", "--table-name", TABLE],
    );
    o.success();
    let dml = "dev-usw2-sales-dml-sales-fct-order-payments";
    fake.set_metrics(dml, 1000, 990, 7);
    fake.force_phase(
        "dev-usw2-sales-dml-int-sales-paid-orders",
        "FAILED",
        "Table 'x' not found",
    );
    fake.seed_in_pool(
        "other-team-job",
        "INSERT INTO y SELECT * FROM z",
        "RUNNING",
        "lfcp-small",
        1,
    );

    // healthcheck: a verdict per table of the product, with the failure's detail and the backlog.
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "pipeline",
            "healthcheck",
            "sales",
            "pipelines",
        ],
    );
    let o = o.code(1);
    let v = json_of(&o.stdout_raw());
    let table = |n: &str| {
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["table_name"] == n)
            .unwrap_or_else(|| panic!("{n}: {v:#}"))
            .clone()
    };
    assert_eq!(table(TABLE)["health"], "healthy");
    assert_eq!(table(TABLE)["pending_records"], 7);
    assert_eq!(table("int_sales_paid_orders")["health"], "failed");
    assert_eq!(
        table("int_sales_paid_orders")["detail"],
        "Table 'x' not found"
    );
    assert_eq!(table("sales_mv_top_stores")["health"], "not_running");
    assert!(
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| !x["table_name"].as_str().unwrap().starts_with("c360")),
        "only the product"
    );
    assert_eq!(v["metrics_skipped"], Value::Null);

    // report-running-statements since a date: the window follows it; only RUNNING ones.
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 30 * 60;
    let date = {
        let o = std::process::Command::new("date")
            .args(["-u", "-d", &format!("@{since}"), "+%Y-%m-%dT%H:%M:%S"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "pipeline",
            "report-running-statements",
            "pipelines",
            "--product-name",
            "sales",
            "--from-date",
            &date,
        ],
    );
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    assert!(
        (30..=31).contains(&v["window_minutes"].as_u64().unwrap()),
        "{}",
        v["window_minutes"]
    );
    let rows = v["statements"].as_array().unwrap();
    let mine = rows.iter().find(|r| r["statement"] == dml).unwrap();
    assert_eq!(mine["metrics"]["records_in"], 1000);
    assert_eq!(mine["metrics"]["pending_records"], 7);
    assert!(rows.iter().all(|r| r["phase"] == "RUNNING"), "{rows:#?}");
    assert!(
        rows.iter()
            .all(|r| r["statement"] != "dev-usw2-sales-dml-int-sales-paid-orders")
    );
    let o = t.cmd_on(
        &fake,
        &[
            "pipeline",
            "report-running-statements",
            "pipelines",
            "--from-date",
            "yesterday",
        ],
    );
    o.code(2);

    // analyze-pool-usage: CFUs and statements per pool, the idle pool and the small one advised.
    let o = t.cmd_on(
        &fake,
        &[
            "--output",
            "json",
            "pipeline",
            "analyze-pool-usage",
            "pipelines",
            "-p",
            "sales",
        ],
    );
    let o = o.success();
    let v = json_of(&o.stdout_raw());
    let pool = |id: &str| {
        v["pools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .unwrap()
            .clone()
    };
    let default = pool(DEFAULT_POOL);
    assert!(
        default["project_statements"]["sales"].as_u64().unwrap() >= 2,
        "{default:#}"
    );
    assert_eq!(default["running_statements"], default["current_cfu"]);
    assert_eq!(pool("lfcp-idle")["running_statements"], 0);
    assert_eq!(pool("lfcp-small")["running_statements"], 1);
    assert_eq!(
        pool("lfcp-small")["project_statements"],
        serde_json::json!({})
    );
    let advice: Vec<&str> = v["advice"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        advice
            .iter()
            .any(|a| a.starts_with("lfcp-idle (idle) runs no statement")),
        "{advice:#?}"
    );
    assert!(
        advice
            .iter()
            .any(|a| a.starts_with("lfcp-small (small) uses 1 of 20 CFUs")
                && a.contains(&format!("fit in {DEFAULT_POOL}"))),
        "{advice:#?}"
    );
}

#[test]
fn isolate_data_product_copies_a_product_and_what_it_reads_into_a_tree_that_validates() {
    let t = Test::fixture().config("kafka:\n  cluster_type: dev\n");
    let dest = t.root.join("c360-only");
    let t = t.args(&[
        "--output",
        "json",
        "project",
        "isolate-data-product",
        "c360",
        "[PIPELINES]",
        dest.to_str().unwrap(),
    ]);
    let v = t.run().success().json();
    let tables: Vec<String> = v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert!(
        tables
            .iter()
            .all(|t| t.starts_with("c360_") || t.contains("_c360_")),
        "{tables:?}"
    );
    let ancestors: Vec<&str> = v["ancestors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(ancestors.contains(&"src_sales_orders"), "{ancestors:?}");
    // Written by the same statement set as an ancestor: its folder comes too.
    assert!(
        ancestors.contains(&"int_sales_store_orders"),
        "{ancestors:?}"
    );
    assert!(
        !ancestors.iter().any(|a| a.starts_with("inventory_")),
        "nothing it does not read"
    );
    assert_eq!(
        v["external"],
        serde_json::json!(["ext_c360_loyalty_members"])
    );
    let new = dest.join("pipelines");
    assert!(new.join("seeds/external_tables.json").is_file());
    assert_eq!(
        std::fs::read_to_string(dest.join("config.yaml")).unwrap(),
        "kafka:\n  cluster_type: dev\n"
    );
    assert!(
        !new.join("facts/sales").exists(),
        "no other product's facts"
    );
    // The new tree validates on its own.
    Test::outside(&["pipeline", "validate", new.to_str().unwrap()]).success();
    // Again into the same folder: refused, nothing changed; an unknown product lists the products.
    let again = t.run().status(1);
    assert!(
        again.stderr().contains("exists already"),
        "{}",
        again.stderr()
    );
    Test::fixture()
        .args(&[
            "project",
            "isolate-data-product",
            "nope",
            "[PIPELINES]",
            "[ROOT]/x",
        ])
        .run()
        .status(1)
        .stderr_has("products: c360, inventory, sales");
}

/// Every form of shift_left 0.1.52's CLI, listed from its Typer code (`cli_commands/*.py`, `cli.py`)
/// by `scripts/shift-left-cli-forms.py`: one line per command, positional argument and option.
const SHIFT_LEFT_FORMS: &str = include_str!("../data/shift_left_0.1.52_cli.txt");

/// shift_left's LLM migration commands: out of flinkpipe's scope (no LLM is asked).
const NOT_OURS: &[&str] = &["table migrate", "table search-source-dependencies"];

/// A value clap accepts for a shift_left option that takes one.
fn sample(opt: &str) -> &'static str {
    match opt {
        "--project-type" => "kimball",
        "--action" => "DELETE",
        "--status" => "FAILED",
        "--baseline" => "branch",
        "--age" | "--nb-test-cases" | "--max-thread" => "2",
        "--post-fix-unit-test" => "_ut",
        "--from-date" => "2026-01-01T00:00:00",
        "--since" => "2026-01-01",
        _ => "v",
    }
}

/// Every command, positional and option of shift_left's CLI exists in ours (hidden ones count: they
/// are accepted), each option parses with a value, and each Typer flag parses in both forms.
#[test]
fn every_form_of_shift_lefts_cli_parses_in_ours() {
    use clap::{CommandFactory, Parser};
    use flinkpipe::cli::args::{Cli, negated_flags, version_config_alias};
    let mut root = Cli::command();
    root.build();
    let mut positionals: std::collections::BTreeMap<(String, String), usize> = Default::default();
    let mut checked = 0;
    let mut skipped = 0;
    let mut missing = Vec::new();
    for line in SHIFT_LEFT_FORMS.lines().filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (group, name) = (parts[0], parts[1]);
        if NOT_OURS.contains(&format!("{group} {name}").as_str()) {
            skipped += 1;
            continue;
        }
        let path: Vec<&str> = if group == "cli" {
            vec![name]
        } else {
            vec![group, name]
        };
        let mut cmd = &root;
        for p in &path {
            cmd = match cmd.find_subcommand(p) {
                Some(c) => c,
                None => {
                    missing.push(format!("no command `flinkpipe {}`", path.join(" ")));
                    break;
                }
            };
        }
        if cmd.get_name() != name {
            continue;
        }
        let Some(third) = parts.get(2) else { continue };
        if third.starts_with('<') {
            *positionals
                .entry((path.join(" "), String::new()))
                .or_default() += 1;
            continue;
        }
        let kind = parts[parts.len() - 1];
        let shift_left_positionals = SHIFT_LEFT_FORMS
            .lines()
            .filter(|l| l.starts_with(&format!("{group} {name} <")))
            .count();
        for form in &parts[2..parts.len() - 1] {
            checked += 1;
            let mut argv = vec!["flinkpipe"];
            argv.extend(&path);
            argv.extend(std::iter::repeat_n("x", shift_left_positionals));
            argv.push(form);
            if kind == "value" {
                argv.push(sample(form));
            }
            // update-tables replaces one string with another: both are given together.
            if (group, name) == ("table", "update-tables") {
                for companion in ["--string-to-change-from", "--string-to-change-to"] {
                    if *form != companion {
                        argv.extend([companion, "v"]);
                    }
                }
            }
            let argv: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
            if let Err(e) = Cli::try_parse_from(negated_flags(version_config_alias(argv.clone()))) {
                missing.push(format!(
                    "`{}`: {}",
                    line,
                    e.to_string().lines().next().unwrap_or("")
                ));
            }
        }
    }
    for ((cmd, _), n) in &positionals {
        let mut c = &root;
        for p in cmd.split(' ') {
            c = c.find_subcommand(p).unwrap();
        }
        let ours = c.get_positionals().count();
        if ours < *n {
            missing.push(format!(
                "`flinkpipe {cmd}` takes {ours} positional(s), shift_left {n}"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "{} form(s) refused:\n{}",
        missing.len(),
        missing.join("\n")
    );
    assert!(checked > 100, "{checked} options checked");
    assert_eq!(skipped, 8, "the LLM commands' lines");
}

/// The commands and options shift_left's own docs and scripts use, as `--help` shows them.
#[test]
fn every_shift_left_command_exists_with_its_options() {
    // The commands whose work has an issue of its own say so, and do nothing.
    // field-lineage is the column lineage of one table, written where shift_left writes it.
    let (_t, root) = crate::support::our_fixture();
    let out = root.parent().unwrap().join("lineage-out");
    let o = Test::outside(&[
        "pipeline",
        "field-lineage",
        "int_sales_store_orders",
        root.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--open",
    ]);
    o.success();
    let v: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("int_sales_store_orders_lineage.json")).unwrap(),
    )
    .unwrap();
    assert!(!v["edges"].as_array().unwrap().is_empty());
    assert!(out.join("int_sales_store_orders_lineage.html").is_file());
    // The integration tests take shift_left's form: an unknown sink is named.
    let o = Test::outside(&[
        "project",
        "run-integration-tests",
        "t",
        "--no-measure-latency",
        "--project-path",
        root.to_str().unwrap(),
    ]);
    let o = o.code(1);
    assert!(o.stderr_raw().contains("'t'"), "{}", o.stderr_raw());
}

#[test]
fn deploy_pool_creation_creates_a_pool_the_statements_fit_in_when_theirs_is_full() {
    let t = confluent_project();
    let fake = FakeConfluent::start();
    // 8 of 10 CFUs used by others: at the 0.8 limit, nothing more fits.
    fake.add_pool(DEFAULT_POOL, "default", 10, 8);
    let o = t.cmd_on(
        &fake,
        &["pipeline", "deploy", "pipelines", "--table-name", TABLE],
    );
    o.code(1);
    assert!(fake.created().is_empty());
    // A dry run says which pool it would create, and creates nothing.
    let o = t.cmd_on(
        &fake,
        &[
            "pipeline",
            "deploy",
            "pipelines",
            "--table-name",
            TABLE,
            "--pool-creation",
            "--dry-run",
        ],
    );
    // #43.10: the dry run passes where the real run passes (the pool it would create is counted).
    let o = o.success();
    assert!(
        !o.stdout().contains("The deploy would stop")
            && o.stdout()
                .contains("--pool-creation would create a compute pool of 10 CFUs for 5 statement(s) that do not fit in lfcp-fake"),
        "{}",
        o.stdout()
    );
    assert!(
        o.stderr_raw()
            .contains("--pool-creation would create compute pool dev-usw2-"),
        "{}",
        o.stderr_raw()
    );
    assert_eq!(fake.pool_ids(), [DEFAULT_POOL]);
    let o = t.cmd_on(
        &fake,
        &[
            "pipeline",
            "deploy",
            "pipelines",
            "--table-name",
            TABLE,
            "--pool-creation",
        ],
    );
    let o = o.success();
    let pools = fake.pool_ids();
    assert_eq!(pools.len(), 2, "{pools:?}");
    let new = pools.iter().find(|p| *p != DEFAULT_POOL).unwrap();
    assert!(
        o.stderr_raw()
            .contains(&format!("created compute pool {new}")),
        "{}",
        o.stderr_raw()
    );
    let dml = "dev-usw2-sales-dml-sales-fct-order-payments";
    assert_eq!(fake.statement_pool(dml).as_deref(), Some(new.as_str()));
    assert_eq!(fake.phase(dml).as_deref(), Some("RUNNING"));
}
