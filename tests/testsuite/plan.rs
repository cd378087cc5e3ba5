//! Execution-plan rules on small synthetic projects: scope filters at every level of the cascade, state
//! forms, exclusions, --dml-only, --dir, table lists and errors.

use crate::support::Test;
use crate::support::project;
use flinkpipe::config::Config;
use flinkpipe::plan::{
    Action, ExecutionPlan, PlanOptions, Scope, StatementNaming, StatementStatus, build_plan,
};
use flinkpipe::project::{LoadOptions, Project};
use std::collections::BTreeMap;

fn ddl(t: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {t} (id STRING, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka');\n"
    )
}

/// p1: src → a (stateless) → b (stateful, GROUP BY) ; p2: c reads b (stateless), d reads c (stateless);
/// p1: e reads c (stateless, another product's table in between).
fn fixture() -> (tempfile::TempDir, Project) {
    let files: Vec<(String, String)> = vec![
        ("sources/p1/src/sql-scripts/ddl.src.sql".into(), ddl("src")),
        ("intermediates/p1/a/sql-scripts/ddl.a.sql".into(), ddl("a")),
        (
            "intermediates/p1/a/sql-scripts/dml.a.sql".into(),
            "INSERT INTO a SELECT id, n FROM src WHERE n > 0;".into(),
        ),
        ("facts/p1/b/sql-scripts/ddl.b.sql".into(), ddl("b")),
        (
            "facts/p1/b/sql-scripts/dml.b.sql".into(),
            "INSERT INTO b SELECT id, SUM(n) FROM a GROUP BY id;".into(),
        ),
        ("facts/p2/c/sql-scripts/ddl.c.sql".into(), ddl("c")),
        (
            "facts/p2/c/sql-scripts/dml.c.sql".into(),
            "INSERT INTO c SELECT id, n FROM b;".into(),
        ),
        ("views/p2/d/sql-scripts/ddl.d.sql".into(), ddl("d")),
        (
            "views/p2/d/sql-scripts/dml.d.sql".into(),
            "INSERT INTO d SELECT id, n FROM c;".into(),
        ),
        ("views/p1/e/sql-scripts/ddl.e.sql".into(), ddl("e")),
        (
            "views/p1/e/sql-scripts/dml.e.sql".into(),
            "INSERT INTO e SELECT id, n FROM c;".into(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (tmp, root) = project(&refs);
    let p = flinkpipe::project::load(&root, &Config::default(), LoadOptions::default()).unwrap();
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    (tmp, p)
}

fn naming() -> StatementNaming {
    StatementNaming::from_config(&Config::default())
}

fn all_running(p: &Project) -> StatementStatus {
    let n = naming();
    let phases: BTreeMap<String, flinkpipe::plan::Phase> = p
        .inventory
        .tables
        .values()
        .map(|t| {
            (
                if t.dml_ref.is_some() {
                    n.dml(&t.product, &t.name)
                } else {
                    n.ddl(&t.product, &t.name)
                },
                flinkpipe::plan::Phase::Running,
            )
        })
        .collect();
    StatementStatus { phases }
}

fn by_action(plan: &ExecutionPlan) -> BTreeMap<&'static str, Vec<String>> {
    let mut m: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for n in &plan.nodes {
        m.entry(n.action.as_str())
            .or_default()
            .push(n.table_name.clone());
    }
    m.values_mut().for_each(|v| v.sort());
    m
}

#[test]
fn cascade_applies_product_filter_and_state_rules_at_every_level() {
    let (_t, p) = fixture();
    let status = all_running(&p);
    let opts = PlanOptions {
        may_start_descendants: true,
        ..Default::default()
    };
    let plan = build_plan(
        &p,
        &naming(),
        &status,
        &Scope::Tables(vec!["a".into()]),
        &opts,
    )
    .unwrap();
    let m = by_action(&plan);
    // a restarts (requested); b restarts (b is stateful); c is in p2: not without --cross-product-deployment,
    // so neither c nor anything below it (d in p2, e in p1) is touched.
    assert_eq!(m["restart"], ["a", "b"]);
    assert_eq!(m["skip"], ["c", "src"]);
    let c = plan.nodes.iter().find(|n| n.table_name == "c").unwrap();
    assert_eq!(
        c.reason,
        "child of b in product p2; --cross-product-deployment not set"
    );

    let opts = PlanOptions {
        may_start_descendants: true,
        cross_product: true,
        ..Default::default()
    };
    let plan = build_plan(
        &p,
        &naming(),
        &status,
        &Scope::Tables(vec!["a".into()]),
        &opts,
    )
    .unwrap();
    let m = by_action(&plan);
    // c restarts because its parent b is stateful; d and e are stateless children of stateless c: they keep
    // running (offsets carry over).
    assert_eq!(m["restart"], ["a", "b", "c"]);
    assert_eq!(m["skip"], ["d", "e", "src"]);
    let order: Vec<&str> = plan.nodes.iter().map(|n| n.table_name.as_str()).collect();
    assert_eq!(order, ["src", "a", "b", "c", "d", "e"]);
}

#[test]
fn not_running_ancestors_are_created_first_and_waves_count_running_nodes() {
    let (_t, p) = fixture();
    let plan = build_plan(
        &p,
        &naming(),
        &StatementStatus::default(),
        &Scope::Tables(vec!["d".into()]),
        &PlanOptions::default(),
    )
    .unwrap();
    let names: Vec<(&str, Action, Option<usize>)> = plan
        .nodes
        .iter()
        .map(|n| (n.table_name.as_str(), n.action, n.wave))
        .collect();
    assert_eq!(
        names,
        [
            ("src", Action::Create, Some(0)),
            ("a", Action::Create, Some(1)),
            ("b", Action::Create, Some(2)),
            ("c", Action::Create, Some(3)),
            ("d", Action::Create, Some(4)),
        ]
    );
    assert_eq!(plan.nodes[0].reason, "ancestor; no statement deployed");
    assert_eq!(plan.nodes[4].reason, "requested; no statement deployed");
    assert_eq!(plan.nodes[1].upgrade_mode.as_str(), "Stateless");
    assert_eq!(plan.nodes[2].upgrade_mode.as_str(), "Stateful");
}

#[test]
fn exclusions_dml_only_and_failed_statements() {
    let (_t, p) = fixture();
    let mut status = all_running(&p);
    status
        .phases
        .insert(naming().dml("p1", "a"), flinkpipe::plan::Phase::Failed);
    let opts = PlanOptions {
        dml_only: true,
        exclude: ["src".to_string()].into(),
        ..Default::default()
    };
    let plan = build_plan(
        &p,
        &naming(),
        &status,
        &Scope::Tables(vec!["b".into()]),
        &opts,
    )
    .unwrap();
    let get = |t: &str| plan.nodes.iter().find(|n| n.table_name == t).unwrap();
    assert_eq!(
        (get("src").action, get("src").reason.as_str()),
        (Action::Skip, "excluded by --exclude-table-file-name")
    );
    assert_eq!(
        (get("a").action, get("a").reason.as_str()),
        (Action::Restart, "ancestor; statement is FAILED")
    );
    assert!(!get("b").run_ddl, "--dml-only restarts only the DML");
    assert_eq!(
        get("b").current_phase.as_ref().map(|p| p.as_str()),
        Some("RUNNING")
    );
}

#[test]
fn product_and_dir_scopes_run_only_what_is_not_running() {
    let (_t, p) = fixture();
    let mut status = all_running(&p);
    status.phases.remove(&naming().dml("p2", "d"));
    let plan = build_plan(
        &p,
        &naming(),
        &status,
        &Scope::Product("p2".into()),
        &PlanOptions::default(),
    )
    .unwrap();
    let m = by_action(&plan);
    assert_eq!(m["create"], ["d"]);
    assert_eq!(m["skip"], ["a", "b", "c", "src"]);
    let plan = build_plan(
        &p,
        &naming(),
        &status,
        &Scope::Dir("views/p2".into()),
        &PlanOptions::default(),
    )
    .unwrap();
    assert_eq!(plan.scope, "folder pipelines/views/p2");
    assert_eq!(by_action(&plan)["create"], ["d"]);
}

#[test]
fn scope_errors_are_clear() {
    let (_t, p) = fixture();
    let err = |scope: Scope| {
        build_plan(
            &p,
            &naming(),
            &StatementStatus::default(),
            &scope,
            &PlanOptions::default(),
        )
        .unwrap_err()
        .to_string()
    };
    assert_eq!(
        err(Scope::Tables(vec!["bb".into()])),
        "unknown table 'bb' (did you mean 'b'?)"
    );
    // Case is not a typo: SRC is src.
    assert_eq!(
        err(Scope::Tables(vec!["SRC".into()])),
        "unknown table 'SRC' (did you mean 'src'?)"
    );
    assert_eq!(
        err(Scope::Product("p9".into())),
        "no table belongs to product 'p9' (products: p1, p2)"
    );
    assert_eq!(
        err(Scope::Dir("nowhere".into())),
        "no table folder is under 'nowhere'"
    );
}

#[test]
fn cli_reads_status_file_and_table_list_files() {
    let (_t, p) = fixture();
    let root = p.inventory.root.clone();
    let dir = root.parent().unwrap();
    let status = dir.join("status.json");
    std::fs::write(
        &status,
        r#"{"dev-usw2-p1-dml-a": "RUNNING", "dev-usw2-p1-ddl-src": {"phase": "COMPLETED"}}"#,
    )
    .unwrap();
    let list = dir.join("list.json");
    std::fs::write(&list, r#"{"file_list": [{"table_name": "b"}]}"#).unwrap();
    let o = Test::outside(&[
        "pipeline",
        "build-execution-plan",
        root.to_str().unwrap(),
        "--table-list-file-name",
        list.to_str().unwrap(),
        "--statement-status",
        status.to_str().unwrap(),
        "--output",
        "json",
    ]);
    let o = o.success();
    assert!(!o.stderr_raw().contains("warning"), "{}", o.stderr_raw());
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let rows: Vec<(String, String)> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["table_name"].as_str().unwrap().to_string(),
                n["action"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("src".into(), "skip".into()),
            ("a".into(), "skip".into()),
            ("b".into(), "create".into())
        ]
    );
    // A typo in a phase: an error naming the file, the statement and the valid phases (a phase that
    // is not one would count as not running and restart the statement). A file of another
    // environment: a warning (the plan still runs).
    let plan_with = |text: &str| {
        std::fs::write(&status, text).unwrap();
        Test::outside(&[
            "pipeline",
            "build-execution-plan",
            root.to_str().unwrap(),
            "--table-name",
            "b",
            "--statement-status",
            status.to_str().unwrap(),
        ])
    };
    let o = plan_with(r#"{"dev-usw2-p1-dml-a": "RUNNIN", "dev-usw2-p1-ddl-src": "COMPLETED"}"#);
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw(),
        format!(
            "error: invalid statement status file {}: 'dev-usw2-p1-dml-a' has phase 'RUNNIN': not a statement phase (valid phases: PENDING, RUNNING, COMPLETED, DELETING, FAILING, FAILED, STOPPING, STOPPED, DEGRADED)\n",
            status.display()
        )
    );
    let o = plan_with(r#"{"prod-euc1-p1-dml-a": "RUNNING"}"#);
    let o = o.success();
    assert!(
        o.stderr_raw()
            .contains("none of its 1 statements is a statement of this project (e.g. 'dev-usw2-"),
        "{}",
        o.stderr_raw()
    );
    // A bad status file is an error naming it.
    std::fs::write(&status, "[1, 2]").unwrap();
    let o = Test::outside(&[
        "pipeline",
        "build-execution-plan",
        root.to_str().unwrap(),
        "--table-name",
        "b",
        "--statement-status",
        status.to_str().unwrap(),
    ]);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("invalid statement status file"),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn dml_only_leaves_ddl_only_tables_alone() {
    let (_t, p) = fixture();
    let status = all_running(&p);
    let opts = PlanOptions {
        dml_only: true,
        force_ancestors: true,
        ..Default::default()
    };
    let plan = build_plan(
        &p,
        &naming(),
        &status,
        &Scope::Tables(vec!["a".into()]),
        &opts,
    )
    .unwrap();
    let src = plan.nodes.iter().find(|n| n.table_name == "src").unwrap();
    assert_eq!(src.action, Action::Skip);
    assert_eq!(
        src.reason,
        "ancestor; statement is RUNNING; restarted by --force-ancestors; --dml-only: a DDL-only table is left as it is"
    );
    assert!(!src.run_ddl);
    let a = plan.nodes.iter().find(|n| n.table_name == "a").unwrap();
    assert_eq!(
        (a.action, a.run_ddl, a.wave),
        (Action::Restart, false, Some(0))
    );
}

/// A table started by the cascade needs every parent that is not running, whatever its product: a
/// parent first met as an out-of-product child (skipped) is started when a started child needs it.
/// The answer must not depend on the order in which the cascade meets the two children (found in
/// session 1's review: with the names below, `m_mid` was met first, skipped, and `z_out` started
/// without its input).
#[test]
fn a_started_child_gets_its_non_running_parents_whatever_their_product_and_name_order() {
    for mid in ["m_mid", "a_mid"] {
        let files: Vec<(String, String)> = vec![
            ("sources/pa/src/sql-scripts/ddl.src.sql".into(), ddl("src")),
            (
                format!("intermediates/pb/{mid}/sql-scripts/ddl.{mid}.sql"),
                ddl(mid),
            ),
            (
                format!("intermediates/pb/{mid}/sql-scripts/dml.{mid}.sql"),
                format!("INSERT INTO {mid} SELECT id, n FROM src;"),
            ),
            (
                "facts/pa/z_out/sql-scripts/ddl.z_out.sql".into(),
                ddl("z_out"),
            ),
            (
                "facts/pa/z_out/sql-scripts/dml.z_out.sql".into(),
                format!(
                    "INSERT INTO z_out SELECT s.id, m.n FROM src s JOIN {mid} m ON s.id = m.id;"
                ),
            ),
        ];
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let (_tmp, root) = project(&refs);
        let p =
            flinkpipe::project::load(&root, &Config::default(), LoadOptions::default()).unwrap();
        assert!(!p.has_errors(), "{:?}", p.diagnostics);
        let opts = PlanOptions {
            may_start_descendants: true,
            ..Default::default()
        };
        let plan = build_plan(
            &p,
            &naming(),
            &StatementStatus::default(),
            &Scope::Tables(vec!["src".into()]),
            &opts,
        )
        .unwrap();
        let m = by_action(&plan);
        let mut expected = vec![mid.to_string(), "src".to_string(), "z_out".to_string()];
        expected.sort();
        assert_eq!(m["create"], expected, "{mid}: {plan:#?}");
        let order: Vec<&str> = plan.nodes.iter().map(|n| n.table_name.as_str()).collect();
        assert_eq!(order, ["src", mid, "z_out"], "{mid}");
        let mid_node = plan.nodes.iter().find(|n| n.table_name == mid).unwrap();
        assert!(
            mid_node.reason.contains("ancestor of z_out"),
            "{}",
            mid_node.reason
        );
        // When it runs, it is left alone (the usual product filter).
        let mut status = StatementStatus::default();
        status
            .phases
            .insert(naming().dml("pb", mid), flinkpipe::plan::Phase::Running);
        let plan = build_plan(
            &p,
            &naming(),
            &status,
            &Scope::Tables(vec!["src".into()]),
            &opts,
        )
        .unwrap();
        let m = by_action(&plan);
        assert_eq!(m["skip"], [mid.to_string()], "{mid}: {plan:#?}");
    }
}

#[test]
fn a_redeclared_table_is_shown_as_declare_and_not_counted_as_a_create() {
    let (_t, p) = fixture();
    let root = p.inventory.root.clone();
    let status = root.parent().unwrap().join("status.json");
    // a runs and reads src, whose DDL statement is gone (the gateway's session-scoped DDL, or a
    // housekept COMPLETED statement): src is declared again, b is the one table created.
    std::fs::write(&status, r#"{"dev-usw2-p1-dml-a": "RUNNING"}"#).unwrap();
    let args = [
        "pipeline",
        "build-execution-plan",
        root.to_str().unwrap(),
        "--table-name",
        "b",
        "--statement-status",
        status.to_str().unwrap(),
    ];
    let o = Test::outside(&args);
    let o = o.success();
    let out = o.stdout_raw();
    let action_of = |t: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(2) == Some(t))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(action_of("src"), "declare", "{out}");
    assert_eq!(action_of("a"), "skip", "{out}");
    assert_eq!(action_of("b"), "create", "{out}");
    assert!(
        out.contains(
            "3 tables: 1 to create, 0 to restart, 1 to skip, 1 to declare again (DDL only: nothing starts); "
        ),
        "{out}"
    );
    // JSON keeps the action the executor runs (its DDL is created) and says why.
    let mut json = args.to_vec();
    json.extend(["--output", "json"]);
    let v: serde_json::Value = serde_json::from_str(&Test::outside(&json).stdout_raw()).unwrap();
    assert_eq!(v["nodes"][0]["table_name"], "src");
    assert_eq!(v["nodes"][0]["action"], "create");
    assert_eq!(v["nodes"][0]["cause"]["kind"], "redeclared");
}
