//! Confluent Cloud day-2 operations (#13), the real binary against the fake on a copy of the example
//! project: a replacement whose server-side dry run fails leaves the running statement alone;
//! `deploy --dry-run` checks what it would create on the server; `pipeline explain`; a compute pool
//! per table; a full pool stops the deploy before any create; `project list|create|delete-compute-pool`
//! with the Cloud API key (the Flink key refused, and said so); per-environment rewrite rules change
//! what is sent and nothing on disk (and `app.sql_content_modifier` is refused); housekeeping never
//! touches a running statement of the project; `status --lag` from the Metrics API.

use crate::fake_confluent::{DEFAULT_POOL, ENV, FakeConfluent, KEY, Outcome, SECRET};
use crate::support::Test;
use crate::support::test::{Outcome as TestOutcome, confluent_config};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const TABLE: &str = "sales_fct_order_payments";
const DDL: &str = "dev-usw2-sales-ddl-sales-fct-order-payments";
const DML: &str = "dev-usw2-sales-dml-sales-fct-order-payments";
const DML_FILE: &str =
    "facts/sales/fct_order_payments/sql-scripts/dml.sales_fct_order_payments.sql";

/// The example project on `fake` (both planes, with the Cloud API key), `config.yaml` =
/// [`confluent_config`] followed by `extra`.
fn project(fake: &FakeConfluent, extra: &str) -> Test {
    Test::confluent_fixture(fake).config_append(extra)
}

/// The command of `args` on the project of `t`, from its root (where `./pipelines` is found), with
/// `env` added: an empty value removes the variable.
fn cmd(t: &Test, args: &[&str], env: &[(&str, &str)]) -> std::process::Command {
    let mut c = t.command(args);
    for (k, v) in env {
        if v.is_empty() {
            c.env_remove(k);
        } else {
            c.env(k, v);
        }
    }
    c
}

/// `args` then the pipelines folder (see [`cmd`]), checked for the fake's secrets by [`Test`].
fn run(t: &Test, args: &[&str], env: &[(&str, &str)]) -> TestOutcome {
    run_in(t, &t.pipelines, args, env)
}

/// [`run`] with `dir` in place of the pipelines folder (a folder that does not exist: no project).
fn run_in(t: &Test, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> TestOutcome {
    let all = [args, &[dir.to_str().unwrap()]].concat();
    t.outcome(&all.join(" "), cmd(t, &all, env).output().unwrap())
}

/// The fake with the default pool (`flink.compute_pool_id` of [`confluent_config`]) on its control plane.
fn fake() -> FakeConfluent {
    FakeConfluent::with_default_pool()
}

/// Statements stored and not being deleted.
fn live_names(fake: &FakeConfluent) -> Vec<String> {
    fake.phases()
        .into_iter()
        .filter(|(_, p)| p != "DELETING")
        .map(|(n, _)| n)
        .collect()
}

/// Every file under `dir`, path → bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

fn edit(t: &Test, rel: &str, f: impl Fn(&str) -> String) {
    let path = t.pipelines.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let new = f(&text);
    assert_ne!(new, text, "the edit of {rel} changed nothing");
    std::fs::write(&path, new).unwrap();
}

fn statement<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["statements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["statement"] == name)
        .unwrap_or_else(|| panic!("{name} not in {v:#}"))
}

#[test]
fn a_replacement_whose_dry_run_fails_leaves_the_running_statement_alone() {
    let fake = fake();
    let t = project(&fake, "");
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
    let old_sql = fake.sql(DML).unwrap();
    // A column the table does not have: the server rejects the new text in its dry run.
    edit(&t, DML_FILE, |t| {
        t.replace(
            "  p.seconds_to_pay,",
            "  p.seconds_to_pay + p.no_such_column,",
        )
    });
    let detail = "SQL validation failed. Error while validating statement: Column 'no_such_column' not found in any table";
    fake.fail_dry_run("no_such_column", detail);
    let (posts, deletes) = (fake.posts(), fake.deletes());

    // The state loss refused first, without the flag, and nothing touched.
    let o = run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[]);
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("keeps state and its SQL changed")
            && out.contains(&format!("--allow-state-loss {TABLE}")),
        "{out}"
    );
    assert_eq!(fake.deletes(), deletes);
    assert_eq!(fake.posts(), posts);
    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--allow-state-loss",
            TABLE,
        ],
        &[],
    );
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("the new SQL does not validate, so the running statement was left alone")
            && out.contains("Column 'no_such_column' not found in any table"),
        "{out}"
    );
    // The running statement is untouched: same SQL, RUNNING, never deleted or stopped; nothing
    // was created but the dry run, which the server does not keep.
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
    assert_eq!(fake.sql(DML).unwrap(), old_sql);
    assert_eq!(fake.deletes(), deletes);
    assert_eq!(fake.posts(), posts);
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| matches!(r.method.as_str(), "PUT" | "PATCH") && r.path.ends_with(DML)),
        "the running statement was stopped"
    );
    let dry = fake.dry_runs();
    let failed: Vec<_> = dry.iter().filter(|d| d.phase == "FAILED").collect();
    assert_eq!(failed.len(), 1, "{dry:?}");
    assert!(
        failed[0].name.starts_with(&format!("{DML}-dry-")),
        "{dry:?}"
    );
    assert!(failed[0].sql.contains("no_such_column"));
    assert_eq!(failed[0].properties["sql.dry-run"], "true");
    assert!(!fake.names().iter().any(|n| n.contains("-dry-")));

    // A text that validates replaces it: checked first, then deleted and created again.
    edit(&t, DML_FILE, |t| {
        t.replace(
            "  p.seconds_to_pay + p.no_such_column,",
            "  p.seconds_to_pay, -- checked",
        )
    });
    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--allow-state-loss",
            TABLE,
        ],
        &[],
    );
    o.success();
    assert!(fake.sql(DML).unwrap().contains("-- checked"));
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
    let last = fake.dry_runs().last().cloned().unwrap();
    assert_eq!(last.phase, "COMPLETED");
    assert!(last.sql.contains("-- checked"));
    let reqs = fake.requests();
    let dry_at = reqs.iter().rposition(|r| r.is_dry_run()).unwrap();
    let delete_at = reqs
        .iter()
        .rposition(|r| r.method == "DELETE" && r.path.ends_with(DML))
        .unwrap();
    assert!(dry_at < delete_at, "validated before the delete");
}

#[test]
fn deploy_dry_run_checks_on_the_server_what_it_would_create() {
    let fake = fake();
    let t = project(&fake, "");
    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--dry-run",
            "--output",
            "json",
        ],
        &[],
    );
    let v = o.stdout_json();
    o.success();
    assert_eq!(v["success"], true);
    // The DDL is checked on the server; the DML writes a table this deploy creates first, so the
    // server cannot check it yet, and says so.
    assert_eq!(statement(&v, DDL)["check"]["status"], "valid", "{v:#}");
    let dml = statement(&v, DML);
    assert_eq!(dml["check"]["status"], "not_checked", "{v:#}");
    assert!(
        dml["check"]["detail"]
            .as_str()
            .unwrap()
            .contains("which this deploy creates first"),
        "{dml}"
    );
    assert_eq!(dml["compute_pool"], DEFAULT_POOL);
    assert_eq!(dml["action"], "create (now absent)");
    // Nothing was created: reads and dry runs only.
    assert!(fake.names().is_empty(), "{:?}", fake.names());
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.method == "GET" || r.is_dry_run())
    );
    let checked: Vec<String> = fake.dry_runs().into_iter().map(|d| d.name).collect();
    assert!(
        checked
            .iter()
            .any(|n| n.starts_with(&format!("{DDL}-dry-"))),
        "{checked:?}"
    );
    assert!(
        !checked
            .iter()
            .any(|n| n.starts_with(&format!("{DML}-dry-")))
    );

    // Deployed, then changed: the replacement's text is checked, and a rejection fails the dry run
    // (exit 1) with the server's message, leaving everything as it was.
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    edit(&t, DML_FILE, |t| t.replace("p.channel,", "p.bad_channel,"));
    fake.fail_dry_run("bad_channel", "Column 'bad_channel' not found in table 'p'");
    let before = fake.requests().len();
    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--dry-run",
            "--allow-state-loss",
            TABLE,
        ],
        &[],
    );
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("INVALID")
            && out.contains(&format!(
                "INVALID {DML}: Column 'bad_channel' not found in table 'p'"
            ))
            && out.contains("The deploy would stop"),
        "{out}"
    );
    assert!(out.contains("delete and recreate (now RUNNING)"), "{out}");
    assert!(
        fake.requests()[before..]
            .iter()
            .all(|r| r.method == "GET" || r.is_dry_run())
    );
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
}

#[test]
fn explain_prints_the_engines_plan_of_each_statement() {
    let fake = fake();
    let t = project(&fake, "");
    let o = run(
        &t,
        &[
            "pipeline",
            "explain",
            "--table-name",
            TABLE,
            "--output",
            "json",
        ],
        &[],
    );
    let v = o.stdout_json();
    o.success();
    assert_eq!(v["success"], true);
    let ddl = statement(&v, DDL);
    assert_eq!(ddl["plan"], Value::Null);
    assert_eq!(ddl["failed"], false);
    assert!(ddl["error"].as_str().unwrap().contains("a DDL statement"));
    let dml = statement(&v, DML);
    let plan = dml["plan"].as_str().unwrap();
    assert!(plan.starts_with("== Physical Plan =="), "{plan}");
    assert!(
        plan.contains(&format!("-- of: INSERT INTO {TABLE}")),
        "the plan of this statement: {plan}"
    );
    assert!(
        dml["explain"]
            .as_str()
            .unwrap()
            .starts_with(&format!("EXPLAIN INSERT INTO {TABLE}")),
        "{dml}"
    );
    // Each EXPLAIN ran as a query and was removed.
    assert!(live_names(&fake).is_empty(), "{:?}", fake.phases());
    assert!(
        fake.deletes()
            .iter()
            .all(|d| d.starts_with("dev-usw2-query-")),
        "{:?}",
        fake.deletes()
    );

    // Text, and a statement the engine rejects: its message, exit 1.
    let o = run(&t, &["pipeline", "explain", "--table-name", TABLE], &[]);
    let o = o.success();
    let out = o.stdout();
    assert!(
        out.contains(&format!("== {DML} ({TABLE})")) && out.contains("StreamSink"),
        "{out}"
    );
    edit(&t, DML_FILE, |t| {
        t.replace("p.channel,", "p.channel, FAIL_ME,")
    });
    let o = run(&t, &["pipeline", "explain", "--table-name", TABLE], &[]);
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("FAILED: ") && out.contains("Object 'FAIL_ME' not found"),
        "{out}"
    );
    assert!(live_names(&fake).is_empty(), "{:?}", fake.phases());

    // --changelog-mode: the sink's changelog from the physical details (append-only: Confluent
    // leaves the mode out), then an aggregate's upsert key.
    edit(&t, DML_FILE, |t| {
        t.replace("p.channel, FAIL_ME,", "p.channel,")
    });
    let explain_modes = || {
        let o = run(
            &t,
            &[
                "pipeline",
                "explain",
                "--table-name",
                TABLE,
                "--changelog-mode",
                "--output",
                "json",
            ],
            &[],
        );
        let v = o.stdout_json();
        o.success();
        statement(&v, DML)["sinks"].clone()
    };
    let sinks = explain_modes();
    assert_eq!(
        sinks,
        serde_json::json!([{"table": format!("env.cluster.{TABLE}"), "mode": "append-only", "kinds": [], "upsert_key": null, "primary_key": null}])
    );
    edit(&t, DML_FILE, |t| {
        format!("{}\nGROUP BY channel;", t.trim_end().trim_end_matches(';'))
    });
    let sinks = explain_modes();
    assert_eq!(sinks[0]["mode"], "upsert", "{sinks:#}");
    assert_eq!(sinks[0]["upsert_key"], serde_json::json!(["channel"]));
    assert!(live_names(&fake).is_empty(), "{:?}", fake.phases());
}

#[test]
fn compute_pools_per_table_and_product_are_in_the_plan_and_the_statements() {
    let fake = fake();
    let t = project(
        &fake,
        "flinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n    sales_fct_order_payments: lfcp-facts\n",
    );
    fake.add_pool("lfcp-sales", "sales", 10, 0);
    fake.add_pool("lfcp-facts", "facts", 10, 0);
    let plan = run(
        &t,
        &[
            "pipeline",
            "build-execution-plan",
            "--table-name",
            TABLE,
            "--offline",
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    let pool_of: BTreeMap<String, Value> = plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["table_name"].as_str().unwrap().to_string(),
                n["compute_pool_id"].clone(),
            )
        })
        .collect();
    assert_eq!(pool_of[TABLE], "lfcp-facts", "a table's entry wins");
    assert_eq!(
        pool_of["int_sales_paid_orders"], "lfcp-sales",
        "its product's"
    );
    let text = run(
        &t,
        &[
            "pipeline",
            "build-execution-plan",
            "--table-name",
            TABLE,
            "--offline",
        ],
        &[],
    )
    .success()
    .stdout();
    assert!(
        text.contains("pool") && text.contains("lfcp-facts"),
        "{text}"
    );
    // --compute-pool-id wins for the run.
    let plan = run(
        &t,
        &[
            "pipeline",
            "build-execution-plan",
            "--table-name",
            TABLE,
            "--offline",
            "--output",
            "json",
            "--compute-pool-id",
            "lfcp-sales",
        ],
        &[],
    )
    .stdout_json();
    let pools: Vec<&Value> = plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["compute_pool_id"])
        .filter(|p| !p.is_null())
        .collect();
    assert!(
        pools.len() > 3 && pools.iter().all(|p| **p == "lfcp-sales"),
        "{plan:#}"
    );
    // The deploy sends each statement to its pool.
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    assert_eq!(fake.statement_pool(DML).as_deref(), Some("lfcp-facts"));
    assert_eq!(
        fake.statement_pool("dev-usw2-sales-dml-int-sales-paid-orders")
            .as_deref(),
        Some("lfcp-sales")
    );
    // undeploy and status act where statements run: --compute-pool-id is refused there.
    let o = run(
        &t,
        &["pipeline", "status", "--compute-pool-id", "lfcp-x"],
        &[],
    );
    o.code(2);
}

#[test]
fn a_full_pool_stops_the_deploy_before_anything_is_created() {
    let fake = fake();
    let t = project(
        &fake,
        "flinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n",
    );
    // 4 of 5 CFUs used elsewhere: the limit is 80 % of 5 = 4.0.
    fake.add_pool("lfcp-sales", "sales", 5, 4);
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .code(1)
        .stderr_is("error: compute pool lfcp-sales (sales): 4 of 5 CFUs in use, and this deploy starts 4 statement(s) needing about 4 more (one CFU per running statement, an estimate): 8 > 4.0 (80 % of 5, flink.max_cfu_percent_before_allocation); nothing was created: free capacity, give the tables another pool (flinkpipe.compute_pools or --compute-pool-id), or rerun with --allow-pool-overcommit\n");
    assert!(fake.posts().is_empty(), "{:?}", fake.posts());
    assert!(fake.names().is_empty());
    // The pool was read from the control plane, with the Cloud API key.
    let pool_reads: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/fcpm/v2/compute-pools/lfcp-sales"))
        .collect();
    assert!(!pool_reads.is_empty() && pool_reads.iter().all(|r| r.authorized));
    assert!(pool_reads[0].query.contains(&format!("environment={ENV}")));

    // The dry run says the same and exits 1.
    let o = run(
        &t,
        &["pipeline", "deploy", "--table-name", TABLE, "--dry-run"],
        &[],
    );
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("STOP: compute pool lfcp-sales (sales): 4 of 5 CFUs in use"),
        "{out}"
    );

    // A higher share lets it through; statements that find the pool at its cap wait with
    // POOL_EXHAUSTED and are reported as such, not as a timeout.
    std::fs::write(
        t.root.join("config.yaml"),
        format!(
            "{}  max_cfu_percent_before_allocation: 1.0\nflinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n",
            confluent_config()
        ),
    )
    .unwrap();
    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--allow-pool-overcommit",
            "--timeout",
            "2",
        ],
        &[],
    );
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("compute pool lfcp-sales is exhausted (POOL_EXHAUSTED): still PENDING"),
        "{out}"
    );
    assert!(!out.contains("timed out after"), "{out}");

    // Without a Cloud API key the check is skipped with a warning, never silently.
    let other = FakeConfluent::start();
    let t = project(&other, "");
    let o = run(
        &t,
        &["pipeline", "deploy", "--table-name", TABLE, "--dry-run"],
        &[
            ("SL_CONFLUENT_CLOUD_API_KEY", ""),
            ("SL_CONFLUENT_CLOUD_API_SECRET", ""),
        ],
    );
    let o = o.success();
    assert!(
        o.stderr().contains("warning[capacity]: compute pool capacity not checked: set SL_CONFLUENT_CLOUD_API_KEY and SL_CONFLUENT_CLOUD_API_SECRET"),
        "{}",
        o.stderr()
    );
}

#[test]
fn compute_pool_commands_take_the_cloud_key_and_refuse_to_delete_a_pool_the_project_runs_in() {
    let fake = fake();
    let t = project(
        &fake,
        "flinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n",
    );
    fake.add_pool("lfcp-fake", "default", 10, 3);
    fake.add_pool("lfcp-sales", "sales", 20, 0);
    let v = run(
        &t,
        &["project", "list-compute-pools", "--output", "json"],
        &[],
    )
    .stdout_json();
    assert_eq!(v["environment"], ENV);
    let pools = v["pools"].as_array().unwrap();
    assert_eq!(pools.len(), 2, "every page of the listing: {v:#}");
    let default = pools.iter().find(|x| x["id"] == "lfcp-fake").unwrap();
    assert_eq!(
        (default["current_cfu"].as_u64(), default["max_cfu"].as_u64()),
        (Some(3), Some(10))
    );
    assert_eq!(default["configured_for"][0], "flink.compute_pool_id");
    let text = run(&t, &["project", "list-compute-pools"], &[])
        .success()
        .stdout();
    assert!(
        text.contains("lfcp-sales") && text.contains("flinkpipe.compute_pools: sales"),
        "{text}"
    );

    // The Flink key is refused by the control plane, and the error says which key is needed.
    let o = run(
        &t,
        &["project", "list-compute-pools"],
        &[
            ("SL_CONFLUENT_CLOUD_API_KEY", KEY),
            ("SL_CONFLUENT_CLOUD_API_SECRET", SECRET),
        ],
    );
    o.code(1).stderr_is("error: listing compute pools: GET /fcpm/v2/compute-pools: HTTP 401: Valid authentication credentials must be provided (request id req-5) — the control plane (compute pools) and the Metrics API take a Cloud API key: check SL_CONFLUENT_CLOUD_API_KEY / SL_CONFLUENT_CLOUD_API_SECRET (a Flink API key, SL_FLINK_API_KEY, is refused there)\n");
    let o = run(
        &t,
        &["project", "list-compute-pools"],
        &[("SL_CONFLUENT_CLOUD_API_KEY", "")],
    );
    o.code(1).stderr_is("error: environment variable SL_CONFLUENT_CLOUD_API_KEY is not set (secrets are read from the environment only); it is required to use Confluent Cloud's control plane and Metrics API (a Cloud API key; the Flink API key SL_FLINK_API_KEY is refused there)\n");

    // Create: checked before anything is sent, then PROVISIONING → PROVISIONED.
    let before = fake.request_count();
    let o = run(
        &t,
        &[
            "project",
            "create-compute-pool",
            "analytics",
            "--max-cfu",
            "7",
        ],
        &[],
    );
    o.code(2)
        .stderr_is("error: --max-cfu 7: Confluent Cloud takes 5, 10, 20, 30, 40, 50\n");
    assert_eq!(fake.request_count(), before, "nothing sent");
    let v = run(
        &t,
        &[
            "project",
            "create-compute-pool",
            "analytics",
            "--max-cfu",
            "10",
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    assert_eq!(v["phase"], "PROVISIONED", "{v:#}");
    assert_eq!(v["max_cfu"], 10);
    let id = v["id"].as_str().unwrap().to_string();
    let create = fake
        .requests()
        .into_iter()
        .find(|r| r.method == "POST" && r.path == "/fcpm/v2/compute-pools")
        .unwrap();
    let body: Value = serde_json::from_str(&create.body).unwrap();
    assert_eq!(body["spec"]["environment"]["id"], ENV);
    assert_eq!(body["spec"]["cloud"], "AWS");
    assert_eq!(body["spec"]["region"], "us-west-2");

    // Delete: refused while a statement of the project runs in the pool.
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    assert_eq!(fake.statement_pool(DML).as_deref(), Some("lfcp-sales"));
    let o = run(
        &t,
        &["project", "delete-compute-pool", "lfcp-sales", "--no-ack"],
        &[],
    );
    let o = o.code(1);
    assert!(
        o.stderr()
            .contains("compute pool lfcp-sales (sales) holds statements of this project")
            && o.stderr().contains(DML),
        "{}",
        o.stderr()
    );
    assert!(fake.pool("lfcp-sales").is_some());
    // An unused pool goes (asked first: without --no-ack and no answer, nothing happens).
    let o = run(&t, &["project", "delete-compute-pool", &id], &[]);
    o.code(1);
    assert!(fake.pool(&id).is_some());
    run(
        &t,
        &["project", "delete-compute-pool", &id, "--no-ack"],
        &[],
    )
    .success()
    .stdout();
    assert!(fake.pool(&id).is_none());
}

const RULES: &str = r#"flinkpipe:
  sql_rewrites:
    prod:
      - in: table_names
        regex: '^int_sales_'
        replace: int_sales_prod_
      - in: option_values
        option: topic
        regex: '^(.*)$'
        replace: prod.$1
      - in: option_values
        option: sink.parallelism
        literal: '1'
        replace: '4'
      - in: statements
        kind: dml
        literal: 'ON p.store_id = d.store_id'
        replace: "ON p.store_id = d.store_id AND d.region <> 'test'"
"#;

#[test]
fn rewrite_rules_change_what_is_sent_and_nothing_on_disk() {
    let fake = fake();
    let t = project(&fake, RULES);
    std::fs::write(
        t.root.join("config.yaml"),
        format!(
            "{}{RULES}",
            confluent_config().replace("cluster_type: dev", "cluster_type: prod")
        ),
    )
    .unwrap();
    let before = files(&t.pipelines);
    let config = std::fs::read_to_string(t.root.join("config.yaml")).unwrap();
    let dml = "prod-usw2-sales-dml-sales-fct-order-payments";
    let ddl = "prod-usw2-sales-ddl-sales-fct-order-payments";

    // The dry run shows what would be sent and which rules changed it.
    let v = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--dry-run",
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    assert_eq!(v["environment"], "prod");
    let d = statement(&v, dml);
    assert_eq!(
        d["rewritten_by"],
        serde_json::json!(["prod[0]", "prod[2]", "prod[3]"])
    );
    let sql = d["sql"].as_str().unwrap();
    assert!(
        sql.contains("FROM int_sales_prod_paid_orders AS p"),
        "{sql}"
    );

    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    let sent = fake.sql(dml).unwrap();
    assert!(
        sent.contains("FROM int_sales_prod_paid_orders AS p"),
        "{sent}"
    );
    assert!(
        sent.contains("/*+ OPTIONS('sink.parallelism' = '4') */"),
        "{sent}"
    );
    assert!(
        sent.contains("ON p.store_id = d.store_id AND d.region <> 'test'"),
        "{sent}"
    );
    // Names in comments and strings are not table names.
    assert!(sent.contains("'paid from gift_card_balances'"), "{sent}");
    let ddl_sent = fake.sql(ddl).unwrap();
    assert!(
        ddl_sent.contains("'topic' = 'prod.sales_fct_order_payments'"),
        "{ddl_sent}"
    );
    let parent = fake
        .sql("prod-usw2-sales-ddl-int-sales-paid-orders")
        .unwrap();
    assert!(
        parent.contains("CREATE TABLE IF NOT EXISTS int_sales_prod_paid_orders"),
        "{parent}"
    );
    // Nothing on disk changed (the deploy journal aside, in .flinkpipe/).
    assert_eq!(files(&t.pipelines), before, "the pipelines folder changed");
    assert_eq!(
        std::fs::read_to_string(t.root.join("config.yaml")).unwrap(),
        config
    );

    // status compares the deployed text with the files after the same rules: no drift ...
    let st = run(
        &t,
        &[
            "pipeline",
            "status",
            "--table-name",
            TABLE,
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    let row = statement(&st, dml);
    assert_eq!(row["sql_drift"], false, "{row}");
    assert_eq!(
        row["rewritten_by"],
        serde_json::json!(["prod[0]", "prod[2]", "prod[3]"])
    );
    // ... and under another environment's rules (none for stage) the prod text differs.
    let st = run(
        &t,
        &[
            "pipeline",
            "status",
            "--table-name",
            TABLE,
            "--output",
            "json",
        ],
        &[("FLINKPIPE_ENVIRONMENT", "stage")],
    )
    .stdout_json();
    assert_eq!(st["environment"], "stage");
    assert_eq!(statement(&st, dml)["sql_drift"], true);
}

#[test]
fn sql_content_modifier_is_refused_with_the_equivalent_rules_before_anything_is_sent() {
    let fake = fake();
    let t = project(
        &fake,
        "app:\n  sql_content_modifier: shift_left.core.utils.table_worker.ReplaceEnvInSqlContent\n",
    );
    for args in [
        &["pipeline", "deploy", "--table-name", TABLE][..],
        &["pipeline", "status"][..],
        &["pipeline", "explain", "--table-name", TABLE][..],
    ] {
        // The whole refusal (config.yaml: line 11: app.sql_content_modifier … is a Python class,
        // then the equivalent `flinkpipe.sql_rewrites` rules), the same for every command.
        let o = run(&t, args, &[]).code(1);
        insta::assert_snapshot!("sql_content_modifier_refused", o.stderr());
    }
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    // Offline commands are not concerned.
    run(&t, &["pipeline", "validate"], &[]).success().stdout();
}

#[test]
fn housekeeping_never_touches_a_running_statement_of_the_project() {
    let fake = fake();
    let t = project(&fake, "");
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    let project_statements = fake.names();
    fake.seed_in_pool(
        "workspace-2025-old",
        "SELECT 1",
        "COMPLETED",
        DEFAULT_POOL,
        9,
    );
    fake.seed_in_pool(
        "workspace-2026-failed",
        "SELECT 2",
        "FAILED",
        DEFAULT_POOL,
        0,
    );
    fake.seed_in_pool(
        "workspace-2026-running",
        "INSERT INTO x SELECT 1",
        "RUNNING",
        DEFAULT_POOL,
        30,
    );
    fake.seed_in_pool(
        "dev-usw2-scratch",
        "INSERT INTO y SELECT 1",
        "RUNNING",
        DEFAULT_POOL,
        3,
    );
    fake.seed_in_pool("other-team-done", "SELECT 3", "COMPLETED", DEFAULT_POOL, 40);

    // shift_left's defaults: 'workspace' statements that COMPLETED or FAILED; one listing.
    let lists_before = list_calls(&fake);
    let v = run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--dry-run",
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    assert_eq!(list_calls(&fake) - lists_before, 1, "one paginated listing");
    assert_eq!(
        names_of(&v["plan"]["statements"]),
        vec!["workspace-2025-old", "workspace-2026-failed"]
    );
    assert_eq!(v["plan"]["action"], "delete");
    let v = run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--age",
            "5",
            "--dry-run",
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    assert_eq!(
        names_of(&v["plan"]["statements"]),
        vec!["workspace-2025-old"]
    );
    assert!(fake.deletes().is_empty(), "a dry run");

    // Stopping everything under the project's prefix leaves its running pipeline alone.
    let out = run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--starts-with",
            "dev-usw2",
            "--action",
            "stop",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert!(
        out.contains(&format!(
            "{DML} (RUNNING): a running statement of the project's pipeline (table {TABLE})"
        )),
        "{out}"
    );
    assert_eq!(fake.phase("dev-usw2-scratch").as_deref(), Some("STOPPED"));
    for s in &project_statements {
        assert_ne!(fake.phase(s).as_deref(), Some("STOPPED"), "{s} stopped");
    }
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| matches!(r.method.as_str(), "PUT" | "PATCH")
                && project_statements
                    .iter()
                    .any(|s| r.path.ends_with(s.as_str()))),
        "a stop (PUT) of a project statement"
    );
    // Deleting COMPLETED and FAILED ones under the prefix: the project's running DML stays.
    run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--starts-with",
            "dev-usw2",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert_eq!(fake.phase(DML).as_deref(), Some("RUNNING"));
    assert!(!fake.deletes().iter().any(|d| d == DML));
    // Named explicitly, it is acted on.
    run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--statement-name",
            DML,
            "--action",
            "stop",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert_eq!(fake.phase(DML).as_deref(), Some("STOPPED"));
    // The defaults delete what they list, and nothing else.
    run(&t, &["project", "housekeep-statements", "--no-ack"], &[])
        .success()
        .stdout();
    assert!(fake.phase("workspace-2025-old").is_none());
    assert!(fake.phase("workspace-2026-failed").is_none());
    assert_eq!(
        fake.phase("workspace-2026-running").as_deref(),
        Some("RUNNING")
    );
    assert_eq!(fake.phase("other-team-done").as_deref(), Some("COMPLETED"));
    // A status the action cannot apply to is a usage error.
    let o = run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--action",
            "resume",
            "--status",
            "FAILED",
        ],
        &[],
    );
    o.code(2);
}

fn list_calls(fake: &FakeConfluent) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/statements")
        .count()
}

fn names_of(v: &Value) -> Vec<String> {
    let mut n: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["statement"].as_str().unwrap().to_string())
        .collect();
    n.sort();
    n
}

#[test]
fn status_lag_reads_the_metrics_api_with_the_cloud_key() {
    let fake = fake();
    let t = project(&fake, "");
    run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[])
        .success()
        .stdout();
    fake.set_metrics(DML, 1200, 1100, 35);
    let v = run(
        &t,
        &[
            "pipeline",
            "status",
            "--table-name",
            TABLE,
            "--lag",
            "--output",
            "json",
        ],
        &[],
    )
    .stdout_json();
    let lag = &statement(&v, DML)["lag"];
    assert_eq!(lag["records_in"], 1200, "{v:#}");
    assert_eq!(lag["records_out"], 1100);
    assert_eq!(
        lag["pending_records"], 35,
        "the newest point of the backlog"
    );
    assert_eq!(
        lag["counted"],
        serde_json::json!({"kind": "last_minutes", "minutes": 10})
    );
    assert_eq!(statement(&v, DDL)["lag"], Value::Null);
    assert!(v["lag_source"].as_str().unwrap().contains("Metrics API"));
    // One query per metric, filtered by the statements' pool, grouped by statement.
    let queries = fake.metric_queries();
    let metrics: Vec<&str> = queries
        .iter()
        .map(|q| q["aggregations"][0]["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        metrics,
        vec![
            "io.confluent.flink/num_records_in",
            "io.confluent.flink/num_records_out",
            "io.confluent.flink/pending_records"
        ]
    );
    for q in &queries {
        assert_eq!(
            q["filter"],
            serde_json::json!({"field": "resource.compute_pool.id", "op": "EQ", "value": DEFAULT_POOL})
        );
        assert_eq!(
            q["group_by"],
            serde_json::json!(["resource.flink_statement.name"])
        );
        assert_eq!(q["granularity"], "PT1M");
        assert_eq!(q["format"], "GROUPED");
    }
    let out = run(
        &t,
        &["pipeline", "status", "--table-name", TABLE, "--lag"],
        &[],
    )
    .success()
    .stdout();
    assert!(
        out.contains("Runtime metrics") && out.contains("1200 (last 10 min)"),
        "{out}"
    );
    // The Metrics API tells no checkpoints or restarts: those columns are left out.
    assert!(
        out.contains("backpressure") && !out.contains("checkpoints") && !out.contains("restarts"),
        "{out}"
    );
    // Without the Cloud key, --lag says which key it needs.
    let o = run(
        &t,
        &["pipeline", "status", "--table-name", TABLE, "--lag"],
        &[("SL_CONFLUENT_CLOUD_API_SECRET", "")],
    );
    let o = o.code(1);
    assert!(
        o.stderr().contains("SL_CONFLUENT_CLOUD_API_SECRET"),
        "{}",
        o.stderr()
    );
}

/// Runs the binary on the project without `--no-ack`: once it asks its question, `meanwhile` changes
/// the world, then the answer `y` is given. Returns the output.
fn run_confirming(t: &Test, args: &[&str], meanwhile: impl FnOnce()) -> TestOutcome {
    use std::io::{Read, Write};
    let all = [args, &["[PIPELINES]"]].concat();
    let mut c = t.command(&all);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("[y/N]") {
        let n = out.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "no question asked: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    meanwhile();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"y\n").unwrap();
    drop(stdin);
    out.read_to_end(&mut seen).unwrap();
    let mut o = child.wait_with_output().unwrap();
    o.stdout = seen;
    t.outcome(&all.join(" "), o)
}

/// Writes `pipelines/blue_green.json` with one release of `int_x` → `int_x_v2` under the `dev-usw2`
/// prefix; `decommissioned`: its blue statements were deleted in that environment.
fn write_release(t: &Test, decommissioned: bool) {
    let done = if decommissioned {
        r#"[{"statement_prefix": "dev-usw2", "at": "2026-12-02T09:00:00Z", "action": "delete", "statements": ["dev-usw2-sales-dml-int-x"]}]"#
    } else {
        "[]"
    };
    std::fs::write(
        t.pipelines.join("blue_green.json"),
        format!(
            r#"{{"format": 1, "releases": [{{"created_at": "2026-12-01T10:00:00Z", "base_ref": "main", "base_commit": null, "statement_prefix": "dev-usw2",
  "tables": [{{"blue_table_name": "int_x", "green_table_name": "int_x_v2", "product_name": "sales",
    "blue_statements": [{{"name": "dev-usw2-sales-dml-int-x", "role": "job"}}, {{"name": "dev-usw2-sales-ddl-int-x", "role": "declaration"}}],
    "green_statements": [{{"name": "dev-usw2-sales-ddl-int-x-v2", "role": "declaration"}}, {{"name": "dev-usw2-sales-dml-int-x-v2", "role": "job"}}],
    "reason": "logic change"}}],
  "decommissioned": {done}}}]}}
"#
        ),
    )
    .unwrap();
}

/// Without a pipelines folder the project's statements cannot be recognised: no live statement is
/// touched unless named, and the note says so truthfully.
#[test]
fn housekeeping_without_a_project_touches_no_live_statement_unless_named() {
    let fake = fake();
    let t = project(&fake, "");
    fake.seed_in_pool(
        "workspace-live",
        "INSERT INTO x SELECT 1",
        "RUNNING",
        DEFAULT_POOL,
        3,
    );
    fake.seed_in_pool(
        "workspace-pending",
        "INSERT INTO y SELECT 1",
        "PENDING",
        DEFAULT_POOL,
        3,
    );
    fake.seed_in_pool("workspace-done", "SELECT 1", "COMPLETED", DEFAULT_POOL, 3);
    let nowhere = t.root.join("no-such-pipelines");
    let o = run_in(
        &t,
        &nowhere,
        &[
            "project",
            "housekeep-statements",
            "--status",
            "RUNNING",
            "--status",
            "PENDING",
            "--status",
            "COMPLETED",
            "--no-ack",
        ],
        &[],
    );
    let o = o.success();
    let out = o.stdout();
    assert!(
        o.stderr().contains(
            "no live (PENDING, RUNNING, DEGRADED or STOPPING) statement is touched unless named"
        ),
        "{}",
        o.stderr()
    );
    assert!(
        out.contains("workspace-live (RUNNING): a live statement, and without a pipelines folder"),
        "{out}"
    );
    assert_eq!(fake.phase("workspace-live").as_deref(), Some("RUNNING"));
    assert!(fake.phase("workspace-pending").is_some());
    assert!(
        fake.phase("workspace-done").is_none(),
        "a COMPLETED one goes"
    );
    assert!(
        !fake
            .deletes()
            .iter()
            .any(|d| d.starts_with("workspace-live"))
    );
    // Named, it is acted on.
    run_in(
        &t,
        &nowhere,
        &[
            "project",
            "housekeep-statements",
            "--statement-name",
            "workspace-live",
            "--action",
            "stop",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert_eq!(fake.phase("workspace-live").as_deref(), Some("STOPPED"));
}

/// The blue and green statements of a blue-green release still open in this environment are not the
/// tree's, yet serve production: housekeeping leaves them alone, in any phase, until decommissioned.
#[test]
fn housekeeping_leaves_the_statements_of_an_open_blue_green_release_alone() {
    let fake = fake();
    let t = project(&fake, "");
    write_release(&t, false);
    let blue = "dev-usw2-sales-dml-int-x";
    let green = "dev-usw2-sales-dml-int-x-v2";
    fake.seed_in_pool(
        blue,
        "INSERT INTO int_x SELECT 1",
        "RUNNING",
        DEFAULT_POOL,
        3,
    );
    fake.seed_in_pool(
        green,
        "INSERT INTO int_x_v2 SELECT 1",
        "RUNNING",
        DEFAULT_POOL,
        1,
    );
    fake.seed_in_pool(
        "dev-usw2-sales-ddl-int-x",
        "CREATE TABLE int_x (a INT)",
        "STOPPED",
        DEFAULT_POOL,
        3,
    );
    fake.seed_in_pool(
        "dev-usw2-scratch",
        "INSERT INTO y SELECT 1",
        "RUNNING",
        DEFAULT_POOL,
        3,
    );
    let out = run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--starts-with",
            "dev-usw2",
            "--action",
            "stop",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert!(
        out.contains(&format!(
            "{blue} (RUNNING): a blue statement of table int_x in the open blue-green release"
        )) && out.contains(&format!(
            "{green} (RUNNING): a green statement of table int_x_v2"
        )),
        "{out}"
    );
    assert_eq!(fake.phase(blue).as_deref(), Some("RUNNING"));
    assert_eq!(fake.phase(green).as_deref(), Some("RUNNING"));
    assert_eq!(fake.phase("dev-usw2-scratch").as_deref(), Some("STOPPED"));
    // A stopped blue statement is not deleted either: it can still be resumed.
    run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--starts-with",
            "dev-usw2",
            "--status",
            "STOPPED",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert!(fake.phase("dev-usw2-sales-ddl-int-x").is_some());
    assert!(fake.phase("dev-usw2-scratch").is_none());
    // Once the release is decommissioned here, the blue statements are housekept like any other.
    write_release(&t, true);
    run(
        &t,
        &[
            "project",
            "housekeep-statements",
            "--starts-with",
            "dev-usw2-sales-ddl-int-x",
            "--status",
            "STOPPED",
            "--no-ack",
        ],
        &[],
    )
    .success()
    .stdout();
    assert!(fake.phase("dev-usw2-sales-ddl-int-x").is_none());
}

/// The listing is taken before the question; each statement is read again right before it is acted
/// on, and one whose phase no longer matches is skipped and reported.
#[test]
fn housekeeping_rereads_each_statement_before_acting() {
    let fake = fake();
    let t = project(&fake, "");
    fake.seed_in_pool(
        "workspace-paused",
        "INSERT INTO x SELECT 1",
        "STOPPED",
        DEFAULT_POOL,
        3,
    );
    fake.seed_in_pool(
        "workspace-resumed",
        "INSERT INTO y SELECT 1",
        "STOPPED",
        DEFAULT_POOL,
        3,
    );
    let o = run_confirming(
        &t,
        &["project", "housekeep-statements", "--status", "STOPPED"],
        || fake.force_phase("workspace-resumed", "RUNNING", ""),
    );
    let o = o.success();
    let out = o.stdout();
    assert!(
        out.contains("skipped workspace-resumed: it was STOPPED when listed and is RUNNING now, which the filters do not select")
            && out.contains("1 of 2 statement(s) deleted, 1 skipped"),
        "{out}"
    );
    assert!(fake.phase("workspace-paused").is_none());
    assert_eq!(fake.phase("workspace-resumed").as_deref(), Some("RUNNING"));
    assert!(!fake.deletes().iter().any(|d| d == "workspace-resumed"));
}

/// delete-compute-pool protects what housekeeping protects: without a project, any live statement in
/// the pool; the statements of an open blue-green release; and a statement started between the
/// question and the answer.
#[test]
fn deleting_a_pool_protects_unknown_live_statements_open_releases_and_rechecks() {
    let fake = fake();
    let t = project(&fake, "");
    fake.add_pool("lfcp-old", "old", 10, 0);
    fake.seed_in_pool(
        "someones-job",
        "INSERT INTO x SELECT 1",
        "RUNNING",
        "lfcp-old",
        3,
    );
    let nowhere = t.root.join("no-such-pipelines");
    let o = run_in(
        &t,
        &nowhere,
        &["project", "delete-compute-pool", "lfcp-old", "--no-ack"],
        &[],
    );
    let o = o.code(1);
    assert!(
        o.stderr().contains(
            "holds 1 statement(s) that cannot be told apart from the project's (there is no pipelines folder at"
        ),
        "{}",
        o.stderr()
    );
    assert!(fake.pool("lfcp-old").is_some());

    // An open release's blue statement in the pool.
    write_release(&t, false);
    fake.add_pool("lfcp-blue", "blue", 10, 0);
    fake.seed_in_pool(
        "dev-usw2-sales-dml-int-x",
        "INSERT INTO int_x SELECT 1",
        "RUNNING",
        "lfcp-blue",
        3,
    );
    let o = run(
        &t,
        &["project", "delete-compute-pool", "lfcp-blue", "--no-ack"],
        &[],
    );
    let o = o.code(1);
    assert!(
        o.stderr().contains(
            "holds statements of an open blue-green release: dev-usw2-sales-dml-int-x (RUNNING)"
        ),
        "{}",
        o.stderr()
    );
    assert!(fake.pool("lfcp-blue").is_some());

    // A statement started in the pool while the question was asked: nothing deleted.
    fake.add_pool("lfcp-idle", "idle", 10, 0);
    let o = run_confirming(&t, &["project", "delete-compute-pool", "lfcp-idle"], || {
        fake.seed_in_pool(
            "late-job",
            "INSERT INTO z SELECT 1",
            "RUNNING",
            "lfcp-idle",
            0,
        )
    });
    let o = o.code(1);
    assert!(
        o.stderr()
            .contains("holds 1 statement(s) that this project does not own: late-job (RUNNING)"),
        "{}",
        o.stderr()
    );
    assert!(fake.pool("lfcp-idle").is_some());
}

/// Pools that are not ready block the deploy (unless --allow-pool-overcommit); a pool that does not
/// say what it uses is never reported as fitting; a bad share names its file and line.
#[test]
fn pools_not_ready_block_the_deploy_and_unknown_use_is_not_a_fit() {
    let fake = fake();
    let t = project(
        &fake,
        "flinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n",
    );
    fake.add_pool("lfcp-sales", "sales", 50, 0);
    // (The fake turns PROVISIONING into PROVISIONED on the first read: the unit tests cover it.)
    for phase in ["FAILED", "DEPROVISIONING"] {
        fake.set_pool_phase("lfcp-sales", phase);
        let o = run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[]);
        let o = o.code(1);
        assert!(
            o.stderr().contains(&format!(
                "compute pool lfcp-sales (sales) is {phase}, not PROVISIONED"
            )) && o.stderr().contains("nothing was created"),
            "{}",
            o.stderr()
        );
        assert!(fake.posts().is_empty(), "{:?}", fake.posts());
        let o = run(
            &t,
            &[
                "pipeline",
                "deploy",
                "--table-name",
                TABLE,
                "--dry-run",
                "--allow-pool-overcommit",
            ],
            &[],
        );
        let o = o.success();
        let out = o.stdout();
        assert!(!out.contains("STOP:"), "{out}");
    }
    fake.set_pool_phase("lfcp-sales", "PROVISIONED");
    fake.hide_pool_usage("lfcp-sales");
    let o = run(
        &t,
        &["pipeline", "deploy", "--table-name", TABLE, "--dry-run"],
        &[],
    );
    let o = o.success();
    let out = o.stdout();
    assert!(
        out.contains("compute pool lfcp-sales (sales): its use is unknown (the control plane gives no status.current_cfu)")
            && !out
                .lines()
                .any(|l| l.contains("lfcp-sales") && l.contains("fits under")),
        "{out}"
    );
    assert!(
        o.stderr()
            .contains("warning[capacity]: compute pool lfcp-sales (sales): its use is unknown"),
        "{}",
        o.stderr()
    );
    let v = run(
        &t,
        &["project", "list-compute-pools", "--output", "json"],
        &[],
    )
    .stdout_json();
    let sales = v["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "lfcp-sales")
        .unwrap();
    assert!(
        sales["current_cfu"].is_null() && sales["usage_percent"].is_null(),
        "{v:#}"
    );

    // A share outside (0, 1]: the file and the line of the key.
    let t = project(
        &fake,
        "  max_cfu_percent_before_allocation: 1.5\nflinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n",
    );
    let o = run(
        &t,
        &["pipeline", "deploy", "--table-name", TABLE, "--dry-run"],
        &[],
    );
    let o = o.failure();
    assert!(
        o.stderr().contains(
            "config.yaml: line 10: flink.max_cfu_percent_before_allocation: 1.5 is not a share"
        ),
        "{}",
        o.stderr()
    );
}

/// A 403 is a permission error naming the key (masked), whatever its body says — never "the pool is
/// missing"; only a 404 is.
#[test]
fn a_forbidden_pool_is_a_permission_error_not_a_missing_pool() {
    let fake = fake();
    let t = project(
        &fake,
        "flinkpipe:\n  compute_pools:\n    sales: lfcp-sales\n",
    );
    fake.add_pool("lfcp-sales", "sales", 50, 0);
    fake.deny_pool("lfcp-sales");
    let o = run(
        &t,
        &["project", "delete-compute-pool", "lfcp-sales", "--no-ack"],
        &[],
    );
    o.code(1).stderr_is("error: reading compute pool lfcp-sales: GET /fcpm/v2/compute-pools/lfcp-sales: HTTP 403: The compute pool lfcp-sales was not found. (request id req-1) — Confluent Cloud answers 403 both for a compute pool that does not exist in environment env-abc123 and for one the Cloud API key CLOU… (SL_CONFLUENT_CLOUD_API_KEY) may not use: check the pool id, or give the key's account a role there that manages compute pools (FlinkAdmin or EnvironmentAdmin)\n");
    assert!(fake.pool("lfcp-sales").is_some());
    let o = run(
        &t,
        &["pipeline", "deploy", "--table-name", TABLE, "--dry-run"],
        &[],
    );
    o.code(1).stderr_is("error: reading compute pool lfcp-sales: GET /fcpm/v2/compute-pools/lfcp-sales: HTTP 403: The compute pool lfcp-sales was not found. (request id req-5) — Confluent Cloud answers 403 both for a compute pool that does not exist in environment env-abc123 and for one the Cloud API key CLOU… (SL_CONFLUENT_CLOUD_API_KEY) may not use: check the pool id, or give the key's account a role there that manages compute pools (FlinkAdmin or EnvironmentAdmin)\n");
    // A pool that is really gone (404) is still read as missing.
    let o = run(
        &t,
        &["project", "delete-compute-pool", "lfcp-nothere", "--no-ack"],
        &[],
    );
    o.code(1)
        .stderr_is("error: compute pool lfcp-nothere does not exist in environment env-abc123\n");
}

/// Issue #29 item 4: "one command at a time" belongs to the project and target, not to a flag. While
/// a deploy runs (held up by a statement stuck PENDING), every command that changes the target — a
/// deploy writing another journal (`--journal`), a `--resume`, undeploy, decommission, housekeeping,
/// `statement stop|delete`, pool deletion, and the project reached through another spelling of its
/// folder — is refused before it changes anything, naming the first's command and pid; once the
/// first ends, the next one runs.
#[test]
fn one_command_at_a_time_changes_a_projects_target_whatever_the_journal() {
    let fake = fake();
    let t = project(&fake, "");
    fake.add_pool("lfcp-spare", "spare", 10, 0);
    fake.set_outcome(DML, Outcome::StuckPending);
    let journal_a = t.root.join("journal-a.jsonl");
    let mut first = cmd(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            TABLE,
            "--timeout",
            "8",
            "--journal",
            journal_a.to_str().unwrap(),
        ],
        &[],
    );
    let first = first
        .arg(&t.pipelines)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    // Wait until it holds the lock (it writes itself into the lock file).
    let state = t.root.join(".flinkpipe");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let held = std::fs::read_dir(&state)
            .ok()
            .into_iter()
            .flatten()
            .any(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().to_string();
                name.starts_with("target-")
                    && std::fs::read_to_string(e.path())
                        .ok()
                        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                        .is_some_and(|v| v["pid"] == pid && v["command"] == "pipeline deploy")
            });
        if held && fake.created().iter().any(|c| c == DML) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first deploy never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let requests_before = fake.request_count();
    let deletes_before = fake.deletes().len();
    let journal_b = t.root.join("elsewhere/journal-b.jsonl");
    let other_spelling = t.root.join("pipelines/../pipelines");
    let refused_commands: Vec<(Vec<&str>, bool)> = vec![
        (
            vec![
                "pipeline",
                "deploy",
                "--table-name",
                TABLE,
                "--journal",
                journal_b.to_str().unwrap(),
            ],
            true,
        ),
        (
            vec![
                "pipeline",
                "deploy",
                "--table-name",
                TABLE,
                "--resume",
                "--journal",
                journal_a.to_str().unwrap(),
            ],
            true,
        ),
        (
            vec!["pipeline", "undeploy", "--table-name", TABLE, "--no-ack"],
            true,
        ),
        (
            vec!["pipeline", "decommission", "--delete", "--no-ack"],
            true,
        ),
        (vec!["project", "housekeep-statements", "--no-ack"], true),
        (
            vec!["project", "delete-compute-pool", "lfcp-spare", "--no-ack"],
            true,
        ),
        (vec!["statement", "stop", DML], false),
        (vec!["statement", "delete", DDL], false),
    ];
    for (args, with_dir) in &refused_commands {
        let mut c = cmd(&t, args, &[]);
        if *with_dir {
            c.arg(&t.pipelines);
        }
        let o = t.outcome(&args.join(" "), c.output().unwrap()).code(1);
        let err = o.stderr();
        assert!(
            err.contains(
                "another command is changing this project's target: `pipeline deploy` (pid "
            ) && err.contains(&format!("(pid {pid} on host ")),
            "{args:?}: {err}"
        );
    }
    // The same folder through another spelling is the same project.
    let o = cmd(
        &t,
        &["pipeline", "undeploy", "--table-name", TABLE, "--no-ack"],
        &[],
    )
    .arg(&other_spelling)
    .output()
    .unwrap();
    let o = t.outcome("undeploy (another spelling)", o).code(1);
    assert!(
        o.stderr().contains(&format!("(pid {pid} on host ")),
        "{}",
        o.stderr()
    );
    // Nothing was changed by the refused commands: no create, stop or delete.
    let changes: Vec<_> = fake.requests()[requests_before..]
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(changes, Vec::<String>::new());
    assert_eq!(fake.deletes().len(), deletes_before);
    assert!(fake.pool("lfcp-spare").is_some());
    assert!(!journal_b.exists(), "the refused deploy wrote no journal");
    // The first ends (its statement never runs: timeout); the lock goes with it.
    let out = t.outcome("first deploy", first.wait_with_output().unwrap());
    out.code(1);
    run(
        &t,
        &["project", "delete-compute-pool", "lfcp-spare", "--no-ack"],
        &[],
    )
    .success()
    .stdout();
    assert!(fake.pool("lfcp-spare").is_none());
}

/// Issue #29 item 6: a pool holding statements of the project or of an open release is not deleted
/// whatever their phase (a STOPPED statement can be resumed, a FAILED one restarted: they go with the
/// pool); another project's STOPPED statement protects it too (issue #41 item 3), and only
/// `--delete-foreign-statements` covers it; the two flags delete it and say what they ignored.
#[test]
fn deleting_a_pool_refuses_stopped_statements_of_the_project_and_open_releases() {
    let fake = fake();
    let t = project(&fake, "");
    write_release(&t, false);
    for (phase, name, why) in [
        ("STOPPED", DML, "holds statements of this project"),
        ("FAILED", DDL, "holds statements of this project"),
        (
            "STOPPED",
            "dev-usw2-sales-dml-int-x",
            "holds statements of an open blue-green release",
        ),
        (
            "COMPLETED",
            "dev-usw2-sales-ddl-int-x-v2",
            "holds statements of an open blue-green release",
        ),
    ] {
        let pool = format!("lfcp-{}", phase.to_ascii_lowercase());
        fake.add_pool(&pool, "p", 10, 0);
        fake.seed_in_pool(name, "INSERT INTO a SELECT 1", phase, &pool, 3);
        fake.seed_in_pool(
            "other-team-paused",
            "INSERT INTO b SELECT 1",
            "STOPPED",
            &pool,
            3,
        );
        let o = run(
            &t,
            &["project", "delete-compute-pool", &pool, "--no-ack"],
            &[],
        );
        let o = o.code(1);
        let want = format!("compute pool {pool} (p) {why}: {name} ({phase})");
        assert!(o.stderr().contains(&want), "{want}\n{}", o.stderr());
        assert!(
            o.stderr().contains("--force deletes it anyway"),
            "{}",
            o.stderr()
        );
        assert!(fake.pool(&pool).is_some());
        // Another team's STOPPED statement protects the pool too, and --force does not cover it.
        let foreign = format!(
            "compute pool {pool} (p) holds 1 statement(s) that this project does not own: other-team-paused (STOPPED); deleting the pool deletes them"
        );
        assert!(o.stderr().contains(&foreign), "{}", o.stderr());
        let o = run(
            &t,
            &[
                "project",
                "delete-compute-pool",
                &pool,
                "--no-ack",
                "--force",
            ],
            &[],
        );
        let o = o.code(1);
        assert!(o.stderr().contains(&foreign), "{}", o.stderr());
        assert!(fake.pool(&pool).is_some());
        // --force --delete-foreign-statements: deleted, and it says what it ignored.
        let o = run(
            &t,
            &[
                "project",
                "delete-compute-pool",
                &pool,
                "--no-ack",
                "--force",
                "--delete-foreign-statements",
            ],
            &[],
        );
        let o = o.success();
        let out = o.stdout();
        assert!(
            o.stderr().contains(&format!("warning: overridden: {want}"))
                && o.stderr()
                    .contains(&format!("warning: overridden: {foreign}")),
            "{}",
            o.stderr()
        );
        assert!(
            out.contains(&format!("  {name} ({phase})"))
                && out.contains("  other-team-paused (STOPPED)"),
            "{out}"
        );
        assert!(fake.pool(&pool).is_none());
        fake.force_phase(name, "DELETING", "");
    }
    // Only another project's COMPLETED statement: listed, not protected.
    fake.add_pool("lfcp-others", "o", 10, 0);
    fake.seed_in_pool("other-team-done", "SELECT 1", "COMPLETED", "lfcp-others", 3);
    let out = run(
        &t,
        &["project", "delete-compute-pool", "lfcp-others", "--no-ack"],
        &[],
    )
    .success()
    .stdout();
    assert!(out.contains("  other-team-done (COMPLETED)"), "{out}");
    assert!(fake.pool("lfcp-others").is_none());
}

/// Issue #29 item 6: a DML with an unclosed `/*` before its second statement is an error before
/// anything is sent: the deploy contacts no server and exits 1, naming the file and line.
#[test]
fn an_unclosed_comment_deploys_nothing() {
    let fake = fake();
    let t = project(&fake, "");
    let path = t.pipelines.join(DML_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!(
            "{text}\n/* the new logic\nINSERT INTO sales_fct_order_payments SELECT * FROM x;\n"
        ),
    )
    .unwrap();
    let o = run(&t, &["pipeline", "deploy", "--table-name", TABLE], &[]);
    let o = o.code(1);
    assert!(
        o.stderr()
            .contains(&format!("error[sql-tokenizer]: pipelines/{DML_FILE}:")),
        "{}",
        o.stderr()
    );
    assert_eq!(fake.request_count(), 0, "nothing sent");
}

/// Issue #41 item 3: a pool holding a statement the project does not own — another team's, in any
/// phase but COMPLETED — is never deleted by `delete-compute-pool` nor by
/// `delete-all-compute-pools`, whether the command runs inside the project or outside one, and
/// whether `--force` is given or not; only `--delete-foreign-statements` deletes it (and says so).
#[test]
fn a_pool_with_statements_the_project_does_not_own_is_kept_wherever_the_command_runs() {
    let fake = fake();
    let t = project(&fake, "");
    let nowhere = t.root.join("no-such-pipelines");
    let mut n = 0;
    for phase in ["RUNNING", "PENDING", "DEGRADED", "STOPPED", "FAILED"] {
        for (inside, dir) in [(true, t.pipelines.clone()), (false, nowhere.clone())] {
            for all in [false, true] {
                for force in [false, true] {
                    n += 1;
                    let pool = format!("lfcp-team{n}");
                    fake.add_pool(&pool, &format!("sales-team{n}"), 10, 0);
                    let theirs = format!("other-team-job-{n}");
                    fake.seed_in_pool(&theirs, "INSERT INTO b SELECT 1", phase, &pool, 3);
                    let dir = dir.to_str().unwrap();
                    let args = |extra: &[&'static str]| -> Vec<String> {
                        let mut a: Vec<String> = if all {
                            vec![
                                "project".into(),
                                "delete-all-compute-pools".into(),
                                format!("sales-team{n}"),
                                "--pipelines".into(),
                                dir.into(),
                            ]
                        } else {
                            vec![
                                "project".into(),
                                "delete-compute-pool".into(),
                                pool.clone(),
                                dir.into(),
                            ]
                        };
                        a.push("--no-ack".into());
                        if force {
                            a.push("--force".into());
                        }
                        a.extend(extra.iter().map(|s| s.to_string()));
                        a
                    };
                    let go = |a: Vec<String>| {
                        let a: Vec<&str> = a.iter().map(String::as_str).collect();
                        t.outcome(&a.join(" "), cmd(&t, &a, &[]).output().unwrap())
                    };
                    let case = format!("{phase}, inside {inside}, all {all}, force {force}");
                    let o = go(args(&[])).code(1);
                    let said = format!("{}{}", o.stdout(), o.stderr());
                    assert!(
                        said.contains(&format!("{theirs} ({phase})"))
                            && said.contains("--delete-foreign-statements"),
                        "{case}: {said}"
                    );
                    assert!(fake.pool(&pool).is_some(), "{case}: the pool was deleted");
                    assert_eq!(fake.phase(&theirs).as_deref(), Some(phase), "{case}");
                    let o = go(args(&["--delete-foreign-statements"])).success();
                    assert!(
                        o.stderr().contains(&format!(
                            "warning: overridden: compute pool {pool} (sales-team{n}) holds 1 statement(s)"
                        )),
                        "{case}: {}",
                        o.stderr()
                    );
                    assert!(fake.pool(&pool).is_none(), "{case}: not deleted");
                    fake.force_phase(&theirs, "DELETING", "");
                }
            }
        }
    }
    // A COMPLETED statement of another team loses nothing: it does not protect the pool.
    fake.add_pool("lfcp-done", "done", 10, 0);
    fake.seed_in_pool("workspace-9", "SELECT 1", "COMPLETED", "lfcp-done", 3);
    run(
        &t,
        &["project", "delete-compute-pool", "lfcp-done", "--no-ack"],
        &[],
    )
    .success();
    assert!(fake.pool("lfcp-done").is_none());
}

/// Issue #41 item 13: an empty or blank `--starts-with` would select every statement of the
/// environment; it is a usage error (exit 2, named) for every action, with or without a project,
/// with or without `--statement-name`, and nothing is sent — not even a listing.
#[test]
fn housekeeping_refuses_an_empty_or_blank_prefix() {
    let fake = fake();
    let t = project(&fake, "");
    fake.seed_in_pool("workspace-1", "SELECT 1", "COMPLETED", DEFAULT_POOL, 3);
    fake.seed_in_pool(
        "other-team-job",
        "INSERT INTO x SELECT 1",
        "STOPPED",
        DEFAULT_POOL,
        3,
    );
    let nowhere = t.root.join("no-such-pipelines");
    for prefix in ["", " ", "\t", "  \n ", "\u{3000}"] {
        for action in ["delete", "stop", "resume"] {
            for (dir, named) in [
                (&t.pipelines, false),
                (&nowhere, false),
                (&t.pipelines, true),
            ] {
                let before = fake.requests().len();
                let mut args = vec![
                    "project",
                    "housekeep-statements",
                    "--starts-with",
                    prefix,
                    "--action",
                    action,
                    "--no-ack",
                ];
                if named {
                    args.extend(["--statement-name", "workspace-1"]);
                }
                let o = run_in(&t, dir, &args, &[]).code(2);
                assert!(
                    o.stderr()
                        .contains("would match every statement of the environment"),
                    "{prefix:?} {action}: {}",
                    o.stderr()
                );
                assert_eq!(fake.requests().len(), before, "{prefix:?} {action}: sent");
            }
        }
    }
    assert_eq!(fake.phase("workspace-1").as_deref(), Some("COMPLETED"));
    assert_eq!(fake.phase("other-team-job").as_deref(), Some("STOPPED"));
}

/// Issue #41 item 7: a window SUM replaced by a plain projection discards the window's state,
/// although the new SQL keeps none: `deploy --dry-run` says it is refused (and why) and exits 1 as
/// the real run would, `deploy` refuses it without touching the running statement, and only
/// `--allow-state-loss` replaces it.
#[test]
fn a_stateful_statement_replaced_by_a_stateless_one_needs_the_state_loss_allowed() {
    const T: &str = "sales_fct_store_revenue_1m";
    const T_DML: &str = "dev-usw2-sales-dml-sales-fct-store-revenue-1m";
    let fake = fake();
    let t = project(&fake, "");
    run(&t, &["pipeline", "deploy", "--table-name", T], &[])
        .success()
        .stdout();
    assert_eq!(fake.phase(T_DML).as_deref(), Some("RUNNING"));
    let old_sql = fake.sql(T_DML).unwrap();
    std::fs::write(
        t.pipelines
            .join("facts/sales/fct_store_revenue_1m/sql-scripts/dml.sales_fct_store_revenue_1m.sql"),
        "INSERT INTO sales_fct_store_revenue_1m\nSELECT store_id, order_time AS window_start, order_time AS window_end,\n  CAST(1 AS BIGINT) AS order_count, CAST(qty AS BIGINT) AS units,\n  CAST(line_amount_eur AS DECIMAL(14, 2)) AS revenue_eur\nFROM int_sales_order_lines;\n",
    )
    .unwrap();
    let (posts, deletes) = (fake.posts(), fake.deletes());
    for dry in [true, false] {
        let mut args = vec!["pipeline", "deploy", "--table-name", T];
        if dry {
            args.push("--dry-run");
        }
        let o = run(&t, &args, &[]);
        let out = o.stdout();
        // The dry run reports the refusal and fails as the real run would; the deploy refuses.
        o.code(1);
        if dry {
            assert!(
                out.contains("The deploy would stop: fix the above first."),
                "{out}"
            );
        }
        let refusal = if dry {
            format!(
                "refuse (stateful, new SQL: state-incompatible; the restart would lose its state: a new version with `pipeline blue-green`, or --allow-state-loss {T})"
            )
        } else {
            "keeps state and its SQL changed".to_string()
        };
        assert!(
            out.contains(&refusal)
                && out.contains(&format!("--allow-state-loss {T}"))
                && !out.contains("delete and recreate"),
            "dry run {dry}: {out}"
        );
        assert_eq!(fake.deletes(), deletes, "dry run {dry}");
        assert_eq!(fake.phase(T_DML).as_deref(), Some("RUNNING"));
        assert_eq!(fake.sql(T_DML).unwrap(), old_sql);
    }
    assert_eq!(fake.posts(), posts, "something was created");
    run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--table-name",
            T,
            "--allow-state-loss",
            T,
        ],
        &[],
    )
    .success();
    assert_ne!(fake.sql(T_DML).unwrap(), old_sql);
    assert_eq!(fake.phase(T_DML).as_deref(), Some("RUNNING"));
}
