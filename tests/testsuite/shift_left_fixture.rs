//! The whole offline workflow on shift_left's own test project (a public fixture nobody here wrote):
//! inventory, graph, metadata files and execution plans must match what its authors meant.

use crate::support::Test;
use crate::support::*;
use flinkpipe::config::Config;
use flinkpipe::plan::{Action, PlanOptions, Scope, StatementNaming, StatementStatus, build_plan};
use flinkpipe::project::{LoadOptions, Project};
use std::collections::BTreeMap;

fn load() -> (tempfile::TempDir, Project) {
    let (tmp, root) = shift_left_fixture();
    let project = flinkpipe::project::load(
        &root,
        &Config::default(),
        LoadOptions {
            allow_unknown: true,
        },
    )
    .unwrap();
    (tmp, project)
}

fn parents(p: &Project, t: &str) -> Vec<String> {
    p.graph.parents(t).into_iter().map(str::to_string).collect()
}

#[test]
fn graph_matches_the_fixture_authors_intent() {
    let (_tmp, p) = load();
    let errors: Vec<String> = p
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "unexpected errors:\n{}",
        errors.join("\n")
    );
    // The fixture reads tables it never defines; shift_left silently made them parents, flinkpipe reports
    // each one (a warning here, because the test loads with --allow-unknown) and keeps it as external.
    let mut unknown: Vec<(String, usize)> = p
        .diagnostics
        .iter()
        .filter(|d| d.code == "unknown-table")
        .map(|d| (d.file.clone().unwrap(), d.line.unwrap()))
        .collect();
    unknown.sort();
    let pre = "pipelines/";
    let expected_unknown: Vec<(String, usize)> = [
        (
            "intermediates/common/int_tenant/sql-scripts/dml.int_common_tenant.sql",
            4,
        ),
        ("intermediates/p1/int_test/sql-scripts/dml.int_tag.sql", 14),
        ("intermediates/p1/int_test/sql-scripts/dml.int_tag.sql", 19),
        ("intermediates/p3/it2/sql-scripts/dml.int_p3_it2.sql", 4),
        ("sources/p3/src_roles/sql-scripts/dml.src_p3_roles.sql", 4),
        (
            "sources/p3/src_tenants/sql-scripts/dml.src_p3_tenants.sql",
            4,
        ),
        ("sources/p3/src_users/sql-scripts/dml.src_p3_users.sql", 4),
    ]
    .iter()
    .map(|(f, l)| (format!("{pre}{f}"), *l))
    .collect();
    assert_eq!(unknown, expected_unknown);
    for ext in [
        "src_common_tenant",
        "src_tag",
        "tenant_dimension",
        "src_table",
    ] {
        let t = &p.inventory.tables[ext];
        assert!(
            t.external && t.table_type == "external_kafka" && t.product == "common",
            "{ext}"
        );
    }
    assert_eq!(
        parents(&p, "p1_fct_order"),
        ["int_p1_table_1", "int_p1_table_2"]
    );
    assert_eq!(parents(&p, "z"), ["x", "y"]);
    // shift_left 0.1.52's p2 graph (its test project,
    // <https://github.com/jbcodeforce/shift_left_utils>).
    let expected: &[(&str, &[&str])] = &[
        ("y", &["src_y"]),
        ("x", &["src_x"]),
        ("a", &["src_a", "src_x"]),
        ("b", &["src_b"]),
        ("c", &["b", "z"]),
        ("d", &["y", "z"]),
        ("p", &["z"]),
        ("e", &["c"]),
        ("f", &["d"]),
    ];
    for (t, ps) in expected {
        assert_eq!(parents(&p, t), *ps, "parents of {t}");
    }
    // The materialized table is a first-class node, not shift_left's "No-Table".
    let mv = &p.inventory.tables["c360_mv_user_view"];
    assert_eq!(mv.folder, "pipelines/views/c360/user_view");
    assert_eq!(mv.table_type, "view");
    assert!(!p.inventory.tables.contains_key("No-Table"));
    // Table name comes from the DML's INSERT target, not the folder or DDL file name.
    assert_eq!(
        p.inventory.tables["int_tag"].folder,
        "pipelines/intermediates/p1/int_test"
    );
}

fn statuses(running: &[&str], naming: &StatementNaming, p: &Project) -> StatementStatus {
    let mut phases = BTreeMap::new();
    for t in running {
        let tb = &p.inventory.tables[*t];
        let name = if tb.dml_ref.is_some() {
            naming.dml(&tb.product, t)
        } else {
            naming.ddl(&tb.product, t)
        };
        phases.insert(name, flinkpipe::plan::Phase::Running);
    }
    StatementStatus { phases }
}

fn actions(plan: &flinkpipe::plan::ExecutionPlan, a: Action) -> Vec<String> {
    let mut v: Vec<String> = plan
        .nodes
        .iter()
        .filter(|n| n.action == a)
        .map(|n| n.table_name.clone())
        .collect();
    v.sort();
    v
}

/// shift_left's test_execution_plan.py: deploy `f` with descendants while src_x, x, src_b and b run.
#[test]
fn plan_f_with_descendants_matches_shift_left() {
    let (_tmp, p) = load();
    let naming = StatementNaming::from_config(&Config::default());
    let status = statuses(&["src_x", "x", "src_b", "b"], &naming, &p);
    let opts = PlanOptions {
        may_start_descendants: true,
        ..Default::default()
    };
    let plan = build_plan(
        &p,
        &naming,
        &status,
        &Scope::Tables(vec!["f".into()]),
        &opts,
    )
    .unwrap();
    assert_eq!(plan.nodes.len(), 12, "{plan:#?}");
    let mut to_run = actions(&plan, Action::Create);
    to_run.extend(actions(&plan, Action::Restart));
    to_run.sort();
    assert_eq!(to_run, ["c", "d", "e", "f", "p", "src_y", "y", "z"]);
    assert_eq!(actions(&plan, Action::Skip), ["b", "src_b", "src_x", "x"]);
    // Parents before children, always.
    let pos: BTreeMap<&str, usize> = plan
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.table_name.as_str(), i))
        .collect();
    for n in &plan.nodes {
        for parent in &n.parents {
            if let Some(pp) = pos.get(parent.as_str()) {
                assert!(
                    *pp < pos[n.table_name.as_str()],
                    "{parent} after {}",
                    n.table_name
                );
            }
        }
    }
    let f = plan.nodes.iter().find(|n| n.table_name == "f").unwrap();
    assert_eq!(f.dml_statement_name.as_deref(), Some("dev-usw2-p2-dml-f"));
}

/// shift_left's test: deploy `z` with --force-ancestors while everything runs: 5 nodes, all restarted.
#[test]
fn plan_z_force_ancestors_matches_shift_left() {
    let (_tmp, p) = load();
    let naming = StatementNaming::from_config(&Config::default());
    let all: Vec<&str> = p.inventory.tables.keys().map(String::as_str).collect();
    let status = statuses(&all, &naming, &p);
    let opts = PlanOptions {
        force_ancestors: true,
        ..Default::default()
    };
    let plan = build_plan(
        &p,
        &naming,
        &status,
        &Scope::Tables(vec!["z".into()]),
        &opts,
    )
    .unwrap();
    let names: Vec<&str> = plan.nodes.iter().map(|n| n.table_name.as_str()).collect();
    assert_eq!(names, ["src_x", "src_y", "x", "y", "z"]);
    assert!(plan.nodes.iter().all(|n| n.action == Action::Restart));
    assert_eq!(
        plan.nodes.iter().map(|n| n.wave).collect::<Vec<_>>(),
        [Some(0), Some(0), Some(1), Some(1), Some(2)]
    );
}

/// Our `inventory.json` equals the one shift_left generated for its own fixture, entry for entry, except
/// for its `No-Table` defect (the materialized table gets its real name).
#[test]
fn inventory_json_matches_shift_left_except_its_defects() {
    use flinkpipe::inventory::shift_left::parse_inventory_file;
    let (_tmp, root) = shift_left_fixture();
    let o = Test::outside(&["table", "build-inventory", root.to_str().unwrap()]);
    o.success();
    let ours = parse_inventory_file(&std::fs::read_to_string(root.join("inventory.json")).unwrap())
        .unwrap();
    let theirs_text = std::fs::read_to_string(
        corpus().join("projects/shift_left_fixture/pipelines/inventory.json"),
    )
    .unwrap();
    let mut theirs = parse_inventory_file(&theirs_text).unwrap();
    let mut mv = theirs.remove("No-Table").unwrap();
    mv.table_name = "c360_mv_user_view".into();
    theirs.insert(mv.table_name.clone(), mv);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (k, v) in &theirs {
        assert_eq!(&ours[k], v, "entry {k}");
    }
}

/// Without --allow-unknown, the references the fixture never defines are errors (exit 1), each with
/// file and line, and nothing is written.
#[test]
fn unknown_references_fail_by_default() {
    let (_tmp, root) = shift_left_fixture();
    let o = Test::outside(&["pipeline", "build-all-metadata", root.to_str().unwrap()]);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert_eq!(err.matches("error[unknown-table]").count(), 7, "{err}");
    assert!(err.contains("pipelines/intermediates/p1/int_test/sql-scripts/dml.int_tag.sql:19:14: table 'int_tag' reads 'tenant_dimension'"), "{err}");
    assert!(!root.join("pipeline_graph.json").exists());
    let o = Test::outside(&[
        "pipeline",
        "build-all-metadata",
        root.to_str().unwrap(),
        "--allow-unknown",
    ]);
    o.success();
    let def: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("facts/p1/fct_order/pipeline_definition.json")).unwrap(),
    )
    .unwrap();
    let parents: Vec<&str> = def["parents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["table_name"].as_str().unwrap())
        .collect();
    assert_eq!(parents, ["int_p1_table_1", "int_p1_table_2"]);
    assert_eq!(def["path"], "pipelines/facts/p1/fct_order");
    assert_eq!(
        def["parents"][0]["children"][0]["table_name"],
        "p1_fct_order"
    );
    // inventory.json lists folders and manifests only, whichever command wrote it: the references
    // kept as external are graph nodes (and pipeline_definition.json parents), not inventory entries.
    let by_metadata = std::fs::read_to_string(root.join("inventory.json")).unwrap();
    let o = Test::outside(&["table", "build-inventory", root.to_str().unwrap()]);
    o.success();
    let by_inventory = std::fs::read_to_string(root.join("inventory.json")).unwrap();
    assert_eq!(by_metadata, by_inventory);
    assert!(!by_inventory.contains("\"tenant_dimension\""));
    let graph = std::fs::read_to_string(root.join("pipeline_graph.json")).unwrap();
    assert!(graph.contains("\"tenant_dimension\""));
}
