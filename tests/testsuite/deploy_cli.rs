//! The real binary against the fake Confluent server, on a copy of the example project:
//! `pipeline deploy|status|undeploy`, `statement stop`, `build-execution-plan --live`, dry runs,
//! failures, resume, configuration errors, and secrets absent from every output.

use crate::fake_confluent::{ENV, FakeConfluent, Outcome};
use crate::support::Test;
use crate::support::test::Outcome as TestOutcome;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The example project on `fake`, with the Flink catalog and database named.
fn project(fake: &FakeConfluent) -> Test {
    Test::fixture().confluent(fake).flink_catalog()
}

/// `args` then the pipelines folder (none for `statement …`), with `env` added.
fn run(t: &Test, args: &[&str], env: &[(&str, &str)]) -> TestOutcome {
    let folder: &[&str] = if args[0] == "statement" {
        &[]
    } else {
        &["[PIPELINES]"]
    };
    t.cmd_env(&[args, folder].concat(), env)
}

/// table → parents, from the live plan.
fn parents_of(plan: &serde_json::Value) -> BTreeMap<String, Vec<String>> {
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["table_name"].as_str().unwrap().to_string(),
                n["parents"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn statements_of(plan: &serde_json::Value) -> BTreeMap<String, Vec<String>> {
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let names = ["ddl_statement_name", "dml_statement_name"]
                .iter()
                .filter_map(|k| n[*k].as_str().map(str::to_string))
                .collect();
            (n["table_name"].as_str().unwrap().to_string(), names)
        })
        .collect()
}

#[test]
fn deploy_status_stop_undeploy_round_trip() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let scope = ["--product-name", "sales"];
    let plan = run(
        &t,
        &[
            &[
                "pipeline",
                "build-execution-plan",
                "--live",
                "--output",
                "json",
            ],
            &scope[..],
        ]
        .concat(),
        &[],
    )
    .success()
    .stdout_json();
    assert!(fake.posts().is_empty(), "planning writes nothing");
    let lists = fake.requests().len();
    assert_eq!(lists, 1, "one list call, not one per node");

    let o = run(
        &t,
        &[&["pipeline", "deploy", "-v"], &scope[..]].concat(),
        &[],
    );
    let (out, err) = (o.stdout(), o.stderr());
    o.success();
    assert!(out.contains("done"), "{out}");
    assert!(
        err.contains("deploy: table="),
        "plain progress lines off a terminal: {err}"
    );

    // Parents before children, nothing twice, no delete.
    let created = fake.created();
    let mut uniq = created.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), created.len(), "{created:?}");
    assert!(fake.deletes().is_empty());
    let parents = parents_of(&plan);
    let stmts = statements_of(&plan);
    let pos = |n: &str| created.iter().position(|c| c == n);
    for (t, ps) in &parents {
        let Some(first_child) = stmts[t].iter().filter_map(|s| pos(s)).min() else {
            continue;
        };
        for pt in ps {
            if let Some(last_parent) = stmts
                .get(pt)
                .and_then(|v| v.iter().filter_map(|s| pos(s)).max())
            {
                assert!(last_parent < first_child, "{pt} before {t}: {created:?}");
            }
        }
    }
    // The statement set runs once, after the DDL of both of its sinks.
    let set = created
        .iter()
        .find(|n| {
            fake.sql(n)
                .is_some_and(|s| s.starts_with("EXECUTE STATEMENT SET"))
        })
        .expect("the sales statement set was deployed");
    for sink in ["ddl-int-sales-web-orders", "ddl-int-sales-store-orders"] {
        let d = created.iter().position(|c| c.ends_with(sink)).expect(sink);
        assert!(d < pos(set).unwrap(), "{sink} before {set}: {created:?}");
    }
    // SET statements and .properties files became properties; catalog and database were added.
    let dml = created.iter().find(|n| n.contains("-dml-")).unwrap();
    let props = fake.properties(dml).unwrap();
    assert_eq!(props["sql.current-catalog"], "my-env");

    // Status: everything live, no drift.
    let st = run(
        &t,
        &[&["pipeline", "status", "--output", "json"], &scope[..]].concat(),
        &[],
    )
    .success()
    .stdout_json();
    let rows = st["statements"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        if r["phase"].is_string() {
            assert_eq!(r["sql_drift"], false, "{r}");
        }
    }
    // Drift after editing a DML file.
    let dml_file = walkdir::WalkDir::new(&t.pipelines)
        .into_iter()
        .filter_map(|e| e.ok())
        .find(|e| {
            e.path().to_string_lossy().contains("/sales/")
                && e.file_name().to_string_lossy().starts_with("dml.")
                && e.file_name().to_string_lossy().ends_with(".sql")
        })
        .unwrap();
    let old = std::fs::read_to_string(dml_file.path()).unwrap();
    std::fs::write(
        dml_file.path(),
        old.replace("SELECT", "SELECT /* changed */"),
    )
    .unwrap();
    let st = run(
        &t,
        &[&["pipeline", "status", "--output", "json"], &scope[..]].concat(),
        &[],
    )
    .success()
    .stdout_json();
    assert!(
        st["statements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["sql_drift"] == true),
        "{st}"
    );
    std::fs::write(dml_file.path(), old).unwrap();

    // A second deploy changes nothing: everything is running.
    let before = fake.posts().len();
    let o = run(&t, &[&["pipeline", "deploy"], &scope[..]].concat(), &[]);
    o.success();
    assert_eq!(fake.posts().len(), before, "idempotent");

    // statement stop NAME.
    let o = run(&t, &["statement", "stop", dml], &[]);
    o.success();
    assert_eq!(fake.phase(dml).as_deref(), Some("STOPPED"));
    let o = run(&t, &["statement", "resume", dml], &[]);
    o.success();
    assert_eq!(fake.phase(dml).as_deref(), Some("RUNNING"));

    // Undeploy: children before parents, nothing dropped.
    let o = run(
        &t,
        &[&["pipeline", "undeploy", "--no-ack"], &scope[..]].concat(),
        &[],
    );
    o.success();
    let deletes = fake.deletes();
    assert!(!deletes.is_empty());
    let dpos = |n: &str| deletes.iter().position(|c| c == n);
    for (t, ps) in &parents {
        let Some(child_last) = stmts[t].iter().filter_map(|s| dpos(s)).max() else {
            continue;
        };
        for pt in ps {
            if let Some(parent_first) = stmts
                .get(pt)
                .and_then(|v| v.iter().filter_map(|s| dpos(s)).min())
            {
                assert!(
                    child_last < parent_first,
                    "{t} deleted before {pt}: {deletes:?}"
                );
            }
        }
    }
    assert!(
        !fake.posts().iter().any(|n| n.ends_with("-drop")),
        "no DROP without --allow-drop"
    );
}

#[test]
fn dry_run_sends_nothing_and_json_reports_every_node() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--product-name",
            "sales",
            "--dry-run",
            "-vv",
        ],
        &[],
    );
    let out = o.stdout();
    o.success();
    assert!(out.contains("Dry run"), "{out}");
    // Only reads and server-side dry runs (never stored): nothing created, changed or deleted.
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.method == "GET" || r.is_dry_run()),
        "{:?}",
        fake.requests()
    );
    assert!(fake.names().is_empty(), "{:?}", fake.names());

    let o = run(
        &t,
        &[
            "pipeline",
            "deploy",
            "--product-name",
            "sales",
            "--output",
            "json",
            "--max-parallel",
            "8",
        ],
        &[],
    );
    let v = o.success().stdout_json();
    assert_eq!(v["success"], true, "{v}");
    for n in v["nodes"].as_array().unwrap() {
        assert!(
            matches!(n["status"].as_str(), Some("done" | "skipped")),
            "{n}"
        );
    }
}

#[test]
fn a_failing_table_skips_its_descendants_and_exits_1() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let plan = run(
        &t,
        &[
            "pipeline",
            "build-execution-plan",
            "--live",
            "--output",
            "json",
            "--product-name",
            "sales",
        ],
        &[],
    )
    .success()
    .stdout_json();
    // A table with children fails.
    let node = plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| {
            n["dml_statement_name"].is_string()
                && !n["children"].as_array().unwrap().is_empty()
                && n["parents"].as_array().is_some_and(|p| !p.is_empty())
        })
        .unwrap();
    let dml = node["dml_statement_name"].as_str().unwrap();
    let table = node["table_name"].as_str().unwrap();
    fake.set_outcome(
        dml,
        Outcome::Fail("Table sink doesn't support consuming update changes".into()),
    );
    let o = run(&t, &["pipeline", "deploy", "--product-name", "sales"], &[]);
    let out = o.stdout();
    o.code(1);
    assert!(
        out.contains("FAILED") && out.contains("consuming update changes"),
        "{out}"
    );
    assert!(out.contains(&format!("parent {table} failed")), "{out}");
}

#[test]
fn resume_after_a_complete_run_creates_nothing() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let args = [
        "pipeline",
        "deploy",
        "--table-name",
        "sales_fct_order_payments",
    ];
    let o = run(&t, &args, &[]);
    o.success();
    let journal = t.root.join(".flinkpipe/deploy-journal.jsonl");
    assert!(journal.is_file());
    let posts = fake.posts().len();
    let o = run(&t, &[&args[..], &["--resume"]].concat(), &[]);
    let out = o.stdout();
    o.success();
    assert_eq!(fake.posts().len(), posts, "{out}");
    assert!(out.contains("journal"), "{out}");
}

#[test]
fn every_missing_setting_and_secret_is_named_in_one_run() {
    let fake = FakeConfluent::start();
    // No target settings and no secrets in the environment.
    let t = Test::fixture().config("kafka:\n  cluster_type: dev\n");
    let o = t.cmd(&["pipeline", "status", "[PIPELINES]"]).code(1);
    let err = o.stderr();
    for expected in [
        "confluent_cloud.environment_id (or environment variable SL_FLINK_ENV_ID)",
        "confluent_cloud.organization_id (or environment variable SL_CLOUD_ORGANIZATION_ID)",
        "confluent_cloud.cloud_provider (or environment variable SL_CLOUD_PROVIDER)",
        "confluent_cloud.cloud_region (or environment variable SL_CLOUD_REGION)",
        "environment variable SL_FLINK_API_KEY",
        "environment variable SL_FLINK_API_SECRET",
        "are required to use Confluent Cloud",
    ] {
        assert!(err.contains(expected), "{expected}: {err}");
    }
    assert!(fake.requests().is_empty());
}

#[test]
fn configuration_errors_name_the_missing_key() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let o = run(
        &t,
        &["pipeline", "deploy", "--product-name", "sales"],
        &[("SL_FLINK_API_SECRET", "")],
    );
    o.code(1).stderr_is("error: environment variable SL_FLINK_API_SECRET is not set (secrets are read from the environment only); it is required to use Confluent Cloud; to use an Apache Flink SQL Gateway instead, set flinkpipe.gateway.url or $FLINKPIPE_GATEWAY_URL\n");
    std::fs::write(
        t.root.join("config.yaml"),
        "confluent_cloud:\n  cloud_provider: aws\n",
    )
    .unwrap();
    // Every missing key is named at once, not one per run, and the other target is named too.
    run(&t, &["pipeline", "status"], &[]).code(1).stderr_is(
        "error: missing configuration in config.yaml: confluent_cloud.environment_id (or environment variable SL_FLINK_ENV_ID), confluent_cloud.organization_id (or environment variable SL_CLOUD_ORGANIZATION_ID) are required to use Confluent Cloud; to use an Apache Flink SQL Gateway instead, set flinkpipe.gateway.url or $FLINKPIPE_GATEWAY_URL\n",
    );
    assert!(fake.requests().is_empty());
}

#[test]
fn plan_reads_a_configured_target_unless_offline() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let o = run(
        &t,
        &[
            "pipeline",
            "build-execution-plan",
            "--product-name",
            "sales",
            "--offline",
        ],
        &[],
    );
    o.success();
    assert!(
        fake.requests().is_empty(),
        "--offline never contacts the target"
    );
    // With a target configured, planning reads the live phases: one list call, no write.
    let o = run(
        &t,
        &[
            "pipeline",
            "build-execution-plan",
            "--product-name",
            "sales",
        ],
        &[],
    );
    o.success();
    assert_eq!(fake.requests().len(), 1, "one list call");
    assert!(fake.posts().is_empty(), "planning writes nothing");
    let _ = Path::new("");
}

/// SIGINT (Ctrl-C), and SIGTERM (`kill`, `timeout`, CI cancellation) and SIGHUP alike (#29).
#[test]
fn ctrl_c_stops_cleanly_and_resume_finishes_without_duplicates() {
    for signal in ["-INT", "-TERM", "-HUP"] {
        stops_cleanly_on(signal);
    }
}

fn stops_cleanly_on(signal: &str) {
    let fake = FakeConfluent::start_with(crate::fake_confluent::FakeOptions {
        step: std::time::Duration::from_millis(300),
        ..Default::default()
    });
    let t = project(&fake);
    let args = [
        "pipeline",
        "deploy",
        "--product-name",
        "sales",
        "--max-parallel",
        "2",
    ];
    let mut c = t.command(&[&args[..], &["[PIPELINES]"]].concat());
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    // Wait until the deploy is under way, then send SIGINT as a terminal's Ctrl-C would.
    let t0 = std::time::Instant::now();
    while fake.created().len() < 3 && t0.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = t.outcome(signal, child.wait_with_output().unwrap());
    let (out, err) = (o.stdout(), o.stderr());
    // A clean interruption exits 130, as a shell reports Ctrl-C (#22), for each of the signals.
    o.code(130);
    assert!(out.contains("--resume"), "{signal}: {out}");
    assert!(
        err.contains("interrupted: the deploy stopped cleanly; run the same command with --resume to continue"),
        "{signal}: {err}"
    );
    // The journal is whole: every line parses and the run's end is recorded.
    let journal = std::fs::read_to_string(t.root.join(".flinkpipe/deploy-journal.jsonl")).unwrap();
    for line in journal.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert!(
        journal
            .lines()
            .last()
            .unwrap()
            .contains("\"interrupted\":true"),
        "{journal}"
    );
    let created_before = fake.created().len();

    let o = run(&t, &[&args[..], &["--resume"]].concat(), &[]);
    o.success();
    let created = fake.created();
    let mut uniq = created.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(
        uniq.len(),
        created.len(),
        "nothing created twice: {created:?}"
    );
    assert!(created.len() > created_before);
    assert!(fake.deletes().is_empty());
}

#[test]
fn statement_verbs_on_a_name_that_does_not_exist_fail_with_a_suggestion() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    fake.seed(
        "dev-usw2-sales-dml-int-sales-orders",
        "INSERT INTO t SELECT 1",
        "RUNNING",
    );
    for verb in ["delete", "stop", "resume"] {
        let o = run(
            &t,
            &["statement", verb, "dev-usw2-sales-dml-int-sales-order"],
            &[],
        );
        o.code(1).stdout_is("").stderr_is(&format!(
            "error: statement 'dev-usw2-sales-dml-int-sales-order' not found on Confluent Cloud environment {ENV} ({}) (did you mean 'dev-usw2-sales-dml-int-sales-orders'?)\n",
            fake.endpoint()
        ));
    }
    assert!(fake.deletes().is_empty());
    assert_eq!(
        fake.phase("dev-usw2-sales-dml-int-sales-orders").as_deref(),
        Some("RUNNING")
    );
}

/// Inputs are checked before any server is contacted: with the target down, an unknown table, product,
/// folder or table list is reported as such, not as a connection error.
#[test]
fn inputs_are_checked_before_the_target_is_contacted() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let down = [("SL_FLINK_SQL_ENDPOINT", "http://127.0.0.1:9")];
    let missing_list = t.root.join("no-such-list.txt");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "pipeline",
                "deploy",
                "--dry-run",
                "--table-name",
                "int_sales_order_line",
            ],
            "error: unknown table 'int_sales_order_line' (did you mean 'int_sales_order_lines'?)\n",
        ),
        (
            vec!["pipeline", "status", "--table-name", "nope"],
            "error: unknown table 'nope'\n",
        ),
        (
            vec![
                "pipeline",
                "undeploy",
                "--no-ack",
                "--product-name",
                "salez",
            ],
            "error: no table belongs to product 'salez' (products: c360, inventory, sales)\n",
        ),
        (
            vec!["pipeline", "deploy", "--dir", "facts/none"],
            "error: no table folder is under 'facts/none'\n",
        ),
        (
            vec![
                "pipeline",
                "deploy",
                "--table-list-file-name",
                missing_list.to_str().unwrap(),
            ],
            "error: cannot read table list [ROOT]/no-such-list.txt: No such file or directory (os error 2)\n",
        ),
        (
            vec![
                "pipeline",
                "deploy",
                "--resume",
                "--table-name",
                "int_sales_order_lines",
            ],
            "error: cannot read the journal [ROOT]/.flinkpipe/deploy-journal.jsonl: No such file or directory (os error 2) (--resume needs the journal of an earlier run)\n",
        ),
        (
            vec!["pipeline", "deploy", "--blue-green"],
            "error: --blue-green: [ROOT]/pipelines/blue_green.json records no green set still open for statement prefix 'dev-usw2': run `flinkpipe pipeline blue-green --since REF --apply` and commit first\n",
        ),
    ];
    for (args, expected) in cases {
        let o = run(&t, &args, &down);
        // The whole error: nothing about the target, which was never contacted.
        o.code(1).stderr_is(expected);
    }
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn modified_files_go_to_the_output_folder_and_say_which_statements_run() {
    use crate::support::repo::T_CHANGE;
    let fake = FakeConfluent::start();
    let t = project(&fake).git();
    let r = t.repo();
    r.commit("config", T_CHANGE - 60);
    fake.seed(
        "dev-usw2-sales-dml-int-sales-orders-enriched",
        "INSERT INTO x SELECT 1",
        "RUNNING",
    );
    r.branch("feature");
    r.edit(
        "intermediates/sales/int_orders_enriched/sql-scripts/dml.int_sales_orders_enriched.sql",
        |t| {
            t.replace(
                "ON o.currency = r.currency;",
                "ON o.currency = r.currency\nWHERE 1 = 1;",
            )
        },
    );
    r.edit(
        "intermediates/sales/int_order_lines/sql-scripts/dml.int_sales_order_lines.sql",
        |t| format!("{t}\n-- note\n"),
    );
    r.commit("change", T_CHANGE);
    let out = tempfile::tempdir().unwrap();
    let o = t.cmd_env(
        &[
            "--output",
            "json",
            "project",
            "list-modified-files",
            "--since",
            "main",
            "--running",
            "[PIPELINES]",
        ],
        &[("FLINKPIPE_OUTPUT_DIR", out.path().to_str().unwrap())],
    );
    let (stdout, stderr) = (o.stdout(), o.stderr());
    o.success();
    // Written where asked, said on stderr, never into the work tree.
    assert!(out.path().join("modified_flink_files.json").is_file());
    assert!(out.path().join("modified_flink_files.txt").is_file());
    assert!(!r.root.join("modified_flink_files.json").exists());
    assert!(
        stderr.contains(&format!(
            "wrote {}",
            out.path().join("modified_flink_files.json").display()
        )),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let running: BTreeMap<String, serde_json::Value> = v["file_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["table_name"].as_str().unwrap().to_string(),
                row["running"].clone(),
            )
        })
        .collect();
    assert_eq!(running["int_sales_orders_enriched"], true);
    assert_eq!(running["int_sales_order_lines"], false);
    // Without --running (and with --offline): unknown, not false, and the target is never asked.
    for extra in [None, Some("--offline")] {
        let before = fake.request_count();
        let mut args = vec![
            "--output",
            "json",
            "project",
            "list-modified-files",
            "--since",
            "main",
        ];
        args.extend(extra);
        args.push("[PIPELINES]");
        let o = t.cmd_env(
            &args,
            &[("FLINKPIPE_OUTPUT_DIR", out.path().to_str().unwrap())],
        );
        let v: serde_json::Value = o.stdout_json();
        assert!(
            v["file_list"]
                .as_array()
                .unwrap()
                .iter()
                .all(|row| row["running"].is_null()),
            "{extra:?}: {v:#}"
        );
        assert_eq!(
            fake.request_count(),
            before,
            "{extra:?}: the target was asked"
        );
    }
}

#[test]
fn plan_help_says_when_a_server_is_read() {
    let help = Test::outside(&["pipeline", "build-execution-plan", "--help"])
        .success()
        .stdout_raw();
    assert!(!help.contains("no server is contacted"), "{help}");
    assert!(help.contains("--offline"), "{help}");
    assert!(help.contains("configured target"), "{help}");
}

/// #15, "concurrent deploys never tear the journal": two `pipeline deploy` processes on one project at
/// once. Exactly one runs; the other is refused before it sends anything, naming the holder (its pid);
/// the journal is whole (every line parses) and no statement is created twice. Repeated to catch the
/// race of both starting at the same moment.
#[test]
fn two_deploys_at_once_one_runs_the_other_is_refused_naming_it() {
    for round in 0..3 {
        let fake = FakeConfluent::start_with(crate::fake_confluent::FakeOptions {
            step: std::time::Duration::from_millis(100),
            ..Default::default()
        });
        let t = project(&fake);
        let spawn = || {
            let mut c = t.command(&[
                "pipeline",
                "deploy",
                "--product-name",
                "sales",
                "[PIPELINES]",
            ]);
            c.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let pids = [a.id(), b.id()];
        let outs = [
            t.outcome("first deploy", a.wait_with_output().unwrap())
                .output,
            t.outcome("second deploy", b.wait_with_output().unwrap())
                .output,
        ];
        let text = |o: &std::process::Output| {
            (
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        };
        let ok: Vec<_> = outs.iter().filter(|o| o.status.success()).collect();
        let refused: Vec<_> = outs.iter().filter(|o| !o.status.success()).collect();
        let all = || {
            outs.iter()
                .map(|o| format!("{:?}\n{}\n{}", o.status, text(o).0, text(o).1))
                .collect::<Vec<_>>()
                .join("\n---\n")
        };
        assert_eq!(
            (ok.len(), refused.len()),
            (1, 1),
            "round {round}: {}",
            all()
        );
        let (_, err) = text(refused[0]);
        assert_eq!(refused[0].status.code(), Some(1), "{err}");
        assert!(
            err.contains(
                "another command is changing this project's target: `pipeline deploy` (pid "
            ),
            "round {round}: {err}"
        );
        let winner = pids[outs.iter().position(|o| o.status.success()).unwrap()];
        assert!(
            err.contains(&format!("pid {winner}")),
            "round {round}: {err}"
        );
        // The journal is whole and no statement was created twice.
        let journal =
            std::fs::read_to_string(t.root.join(".flinkpipe/deploy-journal.jsonl")).unwrap();
        for line in journal.lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("round {round}: {e}: {line}"));
        }
        let created = fake.created();
        let mut uniq = created.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), created.len(), "round {round}: {created:?}");
        assert!(!created.is_empty());
    }
}

/// A `.properties` file the file reader refuses (a FIFO, over the size limit, not UTF-8) fails the
/// deploy before any server is contacted, naming the file: its settings are never dropped silently.
#[cfg(unix)]
#[test]
fn a_refused_properties_file_fails_the_deploy_naming_it() {
    let rel =
        "intermediates/sales/int_order_lines/sql-scripts/dml.int_sales_order_lines.properties";
    type Plant = fn(&Path);
    let cases: [(&str, Plant, &str); 3] = [
        (
            "FIFO",
            |f| {
                let c = std::ffi::CString::new(f.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: a valid NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            },
            "FIFO",
        ),
        (
            "oversized",
            |f| {
                let file = std::fs::File::create(f).unwrap();
                file.set_len(64 * 1024 * 1024).unwrap();
            },
            "too large",
        ),
        (
            "not UTF-8",
            |f| std::fs::write(f, b"sql.state-ttl=\xff\xfe 1 h\n").unwrap(),
            "not valid UTF-8",
        ),
    ];
    for (what, plant, why) in cases {
        let fake = FakeConfluent::start();
        let t = project(&fake);
        plant(&t.pipelines.join(rel));
        let o = run(
            &t,
            &[
                "pipeline",
                "deploy",
                "--table-name",
                "int_sales_order_lines",
            ],
            &[],
        );
        let err = o.stderr();
        o.code(1);
        assert!(
            err.contains("dml.int_sales_order_lines.properties") && err.contains(why),
            "{what}: {err}"
        );
        assert!(fake.posts().is_empty(), "{what}: nothing is sent");
    }
}

/// Issue #29 item 3 through the binary: a parent DML left PENDING (a kill right after its create)
/// that goes FAILED while the next deploy waits for it: the deploy fails, counts it failed, exits 1,
/// and creates none of its children.
#[test]
fn a_pending_parent_that_fails_fails_the_deploy_and_its_children_are_not_created() {
    // The deploy's plan reads it PENDING; then it reads FAILED on the executor's first read (0 more
    // PENDING reads), or after more PENDING reads while it is waited for (3).
    for pending_reads in [0, 3] {
        pending_parent_fails(pending_reads);
    }
}

fn pending_parent_fails(pending_reads: usize) {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let parent = "dev-usw2-sales-dml-int-sales-orders-enriched";
    let o = run(&t, &["pipeline", "deploy", "--product-name", "sales"], &[]);
    o.success();
    assert_eq!(fake.phase(parent).as_deref(), Some("RUNNING"));
    // Its child is gone (deleted): the next deploy creates it again.
    for child in [
        "dev-usw2-sales-dml-int-sales-order-lines",
        "dev-usw2-sales-ddl-int-sales-order-lines",
    ] {
        let o = run(&t, &["statement", "delete", child], &[]);
        o.success();
    }
    let before = fake.created().len();
    fake.force_phase(parent, "PENDING", "");
    let mut script = vec![("PENDING", ""); pending_reads];
    script.push(("FAILED", "Table 'src_sales_orders' was dropped"));
    fake.script(parent, &script);
    // The deploy's listing (its plan) reads it PENDING; only its reads of the statement move it on.
    fake.advance_on_get_only(parent);
    let o = run(
        &t,
        &[
            "--output",
            "json",
            "pipeline",
            "deploy",
            "--product-name",
            "sales",
        ],
        &[],
    );
    let out = o.stdout();
    o.code(1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["success"], false);
    let node = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["table_name"] == "int_sales_orders_enriched")
        .unwrap();
    assert_eq!(node["status"], "failed", "{node:#}");
    assert!(
        node["reason"]
            .as_str()
            .unwrap()
            .contains("Table 'src_sales_orders' was dropped"),
        "{node:#}"
    );
    // Its children (the order lines read the enriched orders) were not created.
    let new: Vec<String> = fake.created()[before..].to_vec();
    assert!(
        !new.iter().any(|c| c.contains("order-lines")),
        "a child was created: {new:?}"
    );
    let lines = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["table_name"] == "int_sales_order_lines")
        .unwrap();
    assert_eq!(lines["status"], "skipped", "{lines:#}");
}

/// Every string of `v` with the fake's address written as a placeholder (the folders are `[ROOT]`
/// already).
fn redacted(v: &serde_json::Value, fake: &FakeConfluent) -> serde_json::Value {
    let endpoint = fake.endpoint();
    match v {
        serde_json::Value::String(s) => {
            serde_json::Value::String(s.replace(&endpoint, "[ENDPOINT]"))
        }
        serde_json::Value::Array(a) => a.iter().map(|x| redacted(x, fake)).collect(),
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, x)| (k.clone(), redacted(x, fake)))
            .collect(),
        other => other.clone(),
    }
}

/// `--output json` of `status` and `undeploy` is the serialisation of their reports (#27): status
/// keeps every field of its report (the target, its kind), undeploy prints its plan and the report of
/// the deletions instead of ignoring the option.
#[test]
fn status_and_undeploy_json_are_their_reports() {
    let fake = FakeConfluent::start();
    let t = project(&fake);
    let scope = ["[PIPELINES]", "--table-name", "src_sales_orders"];
    t.cmd(&[&["pipeline", "deploy"], &scope[..]].concat())
        .success();
    let status = t
        .cmd(&[&["--output", "json", "pipeline", "status"], &scope[..]].concat())
        .success()
        .stdout_json();
    assert_eq!(status["target_kind"], "confluent_cloud", "{status:#}");
    insta::assert_json_snapshot!("status_json", redacted(&status, &fake));
    let undeploy = [
        &["--output", "json", "pipeline", "undeploy", "--no-ack"],
        &scope[..],
    ]
    .concat();
    let undeployed = t.cmd(&undeploy).success().stdout_json();
    assert_eq!(undeployed["success"], true);
    insta::assert_json_snapshot!("undeploy_json", redacted(&undeployed, &fake));
    // Nothing left: the plan is empty and there is no report.
    let again = t.cmd(&undeploy).success().stdout_json();
    assert_eq!(again["plan"]["statements"], serde_json::json!([]));
    assert_eq!(again["report"], serde_json::Value::Null);
}
