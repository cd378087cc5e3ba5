//! The whole offline workflow on shift_left's own test project (a public fixture nobody here wrote):
//! inventory, graph, metadata files and execution plans must match what its authors meant.

mod common;

use common::*;
use flinkpipe::config::Config;
use flinkpipe::lineage::{self, LoadOptions, Project};
use flinkpipe::plan::{Action, PlanOptions, Scope, StatementNaming, StatementStatus, build_plan};
use std::collections::BTreeMap;

fn load() -> (tempfile::TempDir, Project) {
    let (tmp, root) = shift_left_fixture();
    let project = lineage::load(
        &root,
        &Config::default(),
        LoadOptions {
            allow_unknown: false,
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
    assert_eq!(
        parents(&p, "p1_fct_order"),
        ["int_p1_table_1", "int_p1_table_2"]
    );
    assert_eq!(parents(&p, "z"), ["x", "y"]);
    // shift_left's p2 graph (shift-left-compatibility.md §7).
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
        phases.insert(name, "RUNNING".to_string());
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
