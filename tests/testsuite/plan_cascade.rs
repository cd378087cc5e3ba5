//! The descendant cascade never spreads beyond the start tables: a table without a job of its own whose
//! DDL statement is absent (the SQL Gateway between runs; Confluent Cloud after housekeeping) is declared
//! again, which is not a restart and cascades nothing. Checked on the example project and as a property
//! over generated graphs, for every scope form.

use crate::support::Rng;
use crate::support::Test;
use crate::support::{our_fixture, project};
use flinkpipe::config::Config;
use flinkpipe::plan::{
    Action, Cause, ExecutionPlan, Origin, PlanOptions, Scope, StatementNaming, StatementStatus,
    build_plan,
};
use flinkpipe::project::{LoadOptions, Project};
use flinkpipe::sql::StatementKind;
use std::collections::{BTreeMap, BTreeSet};

fn naming() -> StatementNaming {
    StatementNaming::from_config(&Config::default())
}

fn load(root: &std::path::Path) -> Project {
    let p = flinkpipe::project::load(root, &Config::default(), LoadOptions::default()).unwrap();
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    p
}

/// Whether a table runs a job: a DML, a statement set writing it, a CTAS or a materialized table.
fn has_job(p: &Project, name: &str) -> bool {
    let t = &p.inventory.tables[name];
    t.dml_ref.is_some()
        || t.written_by.is_some()
        || matches!(
            t.ddl_kind,
            Some(StatementKind::Ctas | StatementKind::CreateMaterializedTable)
        )
}

/// What the SQL Gateway reports between two runs: every job RUNNING (DML, statement sets, CTAS and
/// materialized tables, under their statement names), no DDL statement at all.
fn jobs_running_no_ddl(p: &Project) -> StatementStatus {
    let n = naming();
    let mut phases = BTreeMap::new();
    for t in p.inventory.tables.values().filter(|t| !t.external) {
        if t.written_by.is_some() {
            continue;
        }
        if t.dml_ref.is_some() {
            phases.insert(n.dml(&t.product, &t.name), flinkpipe::plan::Phase::Running);
        } else if has_job(p, &t.name) {
            phases.insert(n.ddl(&t.product, &t.name), flinkpipe::plan::Phase::Running);
        }
    }
    StatementStatus { phases }
}

fn plan(p: &Project, status: &StatementStatus, scope: Scope, opts: &PlanOptions) -> ExecutionPlan {
    build_plan(p, &naming(), status, &scope, opts).unwrap()
}

/// The start tables of a plan (origin `start`).
fn start_set(plan: &ExecutionPlan) -> Vec<String> {
    plan.nodes
        .iter()
        .filter(|n| n.origin == Origin::Start)
        .map(|n| n.table_name.clone())
        .collect()
}

/// The rule of the cascade: with every job running, no job outside the start tables, their
/// descendants and the other tables of the statements that write them (a statement set restarts as one
/// job) is started or restarted. Returns the offending tables with their reasons.
fn jobs_started_outside(p: &Project, plan: &ExecutionPlan) -> Vec<String> {
    let start = start_set(plan);
    let refs: Vec<&str> = start.iter().map(String::as_str).collect();
    let allowed: BTreeSet<String> = flinkpipe::graph::StatementIndex::from_inventory(&p.inventory)
        .closure_set(&refs, |t| p.graph.children(t));
    plan.nodes
        .iter()
        .filter(|n| n.action != Action::Skip && has_job(p, &n.table_name))
        .filter(|n| !allowed.contains(&n.table_name))
        .map(|n| format!("{}: {}", n.table_name, n.reason))
        .collect()
}

#[test]
fn a_redeclared_source_restarts_no_unrelated_reader() {
    let (_t, root) = our_fixture();
    let p = load(&root);
    let status = jobs_running_no_ddl(&p);
    let opts = PlanOptions {
        may_start_descendants: true,
        ..Default::default()
    };
    let plan = plan(
        &p,
        &status,
        Scope::Tables(vec!["int_sales_order_lines".into()]),
        &opts,
    );
    let get = |t: &str| plan.nodes.iter().find(|n| n.table_name == t);
    // Readers of the same sources that do not descend from int_sales_order_lines are not in the plan.
    for other in [
        "int_sales_paid_orders",
        "sales_fct_order_payments",
        "sales_mv_top_stores",
    ] {
        assert!(
            get(other).is_none_or(|n| n.action == Action::Skip),
            "{other}: {:?}",
            get(other).map(|n| &n.reason)
        );
    }
    assert_eq!(jobs_started_outside(&p, &plan), Vec::<String>::new());
    // The sources are declared again, and the reason says it is not a restart.
    let src = get("src_sales_orders").unwrap();
    assert_eq!(src.action, Action::Create);
    assert!(
        matches!(src.cause, Cause::Redeclared { .. }),
        "{:?}",
        src.cause
    );
    assert!(
        src.reason
            .starts_with("ancestor; no statement deployed but dev-usw2-sales-dml-")
            && src.reason.contains("declared again")
            && src.reason.contains("not a restart, no cascade"),
        "{}",
        src.reason
    );
    // The start table itself restarts, and its stateful descendants with it.
    assert_eq!(
        get("int_sales_order_lines").unwrap().action,
        Action::Restart
    );
    for n in plan.nodes.iter().filter(|n| n.action == Action::Restart) {
        assert!(
            n.table_name == "int_sales_order_lines"
                || matches!(n.origin, Origin::Descendant { .. }),
            "{}: {}",
            n.table_name,
            n.reason
        );
    }
}

#[test]
fn confluent_housekept_ddl_is_redeclared_but_a_completed_ddl_is_kept() {
    let (_t, root) = our_fixture();
    let p = load(&root);
    let n = naming();
    let mut status = jobs_running_no_ddl(&p);
    // src_sales_payments' DDL statement is still listed (COMPLETED), src_sales_orders' was deleted.
    status.phases.insert(
        n.ddl("sales", "src_sales_payments"),
        flinkpipe::plan::Phase::Completed,
    );
    let opts = PlanOptions {
        may_start_descendants: true,
        ..Default::default()
    };
    let plan = plan(
        &p,
        &status,
        Scope::Tables(vec!["sales_fct_order_payments".into()]),
        &opts,
    );
    let get = |t: &str| plan.nodes.iter().find(|n| n.table_name == t).unwrap();
    assert_eq!(get("src_sales_payments").action, Action::Skip);
    assert_eq!(get("src_sales_payments").cause, Cause::Running);
    assert!(matches!(
        get("src_sales_orders").cause,
        Cause::Redeclared { .. }
    ));
    assert_eq!(jobs_started_outside(&p, &plan), Vec::<String>::new());
}

#[test]
fn a_new_source_nobody_reads_yet_is_created_and_a_start_source_cascades() {
    let (_t, root) = our_fixture();
    let p = load(&root);
    let opts = PlanOptions {
        may_start_descendants: true,
        ..Default::default()
    };
    // Nothing deployed: sources are created (not re-declared).
    let empty = plan(
        &p,
        &StatementStatus::default(),
        Scope::Tables(vec!["int_sales_order_lines".into()]),
        &opts,
    );
    let src = empty
        .nodes
        .iter()
        .find(|n| n.table_name == "src_sales_orders")
        .unwrap();
    assert_eq!(
        (src.action, &src.cause),
        (Action::Create, &Cause::NotRunning)
    );
    // A source asked for by name is a start table: its stateful readers restart with it.
    let status = jobs_running_no_ddl(&p);
    let plan = plan(
        &p,
        &status,
        Scope::Tables(vec!["src_sales_orders".into()]),
        &opts,
    );
    let restarted: BTreeSet<&str> = plan
        .nodes
        .iter()
        .filter(|n| n.action == Action::Restart)
        .map(|n| n.table_name.as_str())
        .collect();
    assert!(restarted.contains("int_sales_paid_orders"), "{restarted:?}");
    assert_eq!(jobs_started_outside(&p, &plan), Vec::<String>::new());
}

/// Every scope form over the example project: single tables, pairs, every product and every folder.
#[test]
fn property_on_the_example_project_for_every_scope() {
    let (_t, root) = our_fixture();
    let p = load(&root);
    let status = jobs_running_no_ddl(&p);
    let ours: Vec<String> = p
        .inventory
        .tables
        .values()
        .filter(|t| !t.external)
        .map(|t| t.name.clone())
        .collect();
    let mut scopes: Vec<Scope> = ours
        .iter()
        .map(|t| Scope::Tables(vec![t.clone()]))
        .collect();
    for (i, a) in ours.iter().enumerate() {
        for b in ours.iter().skip(i + 1).step_by(5) {
            scopes.push(Scope::Tables(vec![a.clone(), b.clone()]));
        }
    }
    let products: BTreeSet<String> = p
        .inventory
        .tables
        .values()
        .filter(|t| !t.external)
        .map(|t| t.product.clone())
        .collect();
    scopes.extend(products.into_iter().map(Scope::Product));
    let folders: BTreeSet<String> = p
        .inventory
        .tables
        .values()
        .filter(|t| !t.external)
        .flat_map(|t| {
            let parts: Vec<&str> = t.folder.split('/').collect();
            (2..=parts.len()).map(move |k| parts[..k].join("/"))
        })
        .collect();
    scopes.extend(folders.into_iter().map(Scope::Dir));
    let mut checked = 0;
    for scope in scopes {
        for cross_product in [false, true] {
            let opts = PlanOptions {
                may_start_descendants: true,
                cross_product,
                ..Default::default()
            };
            let plan = plan(&p, &status, scope.clone(), &opts);
            assert_eq!(
                jobs_started_outside(&p, &plan),
                Vec::<String>::new(),
                "{scope:?} cross_product={cross_product}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

/// A random project: sources (CREATE TABLE), views (CREATE VIEW), CTAS, and DML tables that read one or
/// two earlier tables, statelessly (filter, UNION ALL) or statefully (GROUP BY, join); products p1–p3.
/// Tables of product p3 all live in `intermediates/p3` or `sources/p3` so that `--product-name p3`
/// and `--dir` over those folders can be compared. Returns the files.
fn random_project(rng: &mut Rng) -> Vec<(String, String)> {
    let n = 4 + rng.below(22);
    let mut files = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for i in 0..n {
        let t = format!("t{i}");
        let product = ["p1", "p2", "p3"][rng.below(3)];
        let kind = if i < 2 { 0 } else { rng.below(6) };
        let parent = |rng: &mut Rng| names[rng.below(names.len())].clone();
        let ddl = format!(
            "CREATE TABLE IF NOT EXISTS {t} (id STRING, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka', 'topic' = '{t}');\n"
        );
        let (layer, ddl_text, dml) = match kind {
            0 => ("sources", ddl, None),
            1 => {
                let a = parent(rng);
                (
                    "views",
                    format!("CREATE VIEW {t} AS SELECT id, n FROM {a} WHERE n > 0;\n"),
                    None,
                )
            }
            2 => {
                let a = parent(rng);
                (
                    "facts",
                    format!(
                        "CREATE TABLE {t} WITH ('connector' = 'kafka', 'topic' = '{t}') AS SELECT id, n FROM {a};\n"
                    ),
                    None,
                )
            }
            3 => {
                let a = parent(rng);
                let b = parent(rng);
                let q = if a == b {
                    format!("INSERT INTO {t} SELECT id, n FROM {a} WHERE n > 1;")
                } else {
                    format!(
                        "INSERT INTO {t} SELECT id, n FROM {a} UNION ALL SELECT id, n FROM {b};"
                    )
                };
                ("intermediates", ddl, Some(q))
            }
            4 => {
                let a = parent(rng);
                (
                    "intermediates",
                    ddl,
                    Some(format!(
                        "INSERT INTO {t} SELECT id, COUNT(*) FROM {a} GROUP BY id;"
                    )),
                )
            }
            _ => {
                let a = parent(rng);
                let b = parent(rng);
                let q = if a == b {
                    format!("INSERT INTO {t} SELECT DISTINCT id, n FROM {a};")
                } else {
                    format!(
                        "INSERT INTO {t} SELECT x.id, y.n FROM {a} x JOIN {b} y ON x.id = y.id;"
                    )
                };
                ("intermediates", ddl, Some(q))
            }
        };
        let layer = if product == "p3" && layer != "sources" {
            "intermediates"
        } else {
            layer
        };
        let folder = format!("{layer}/{product}/{t}");
        files.push((format!("{folder}/sql-scripts/ddl.{t}.sql"), ddl_text));
        if let Some(q) = dml {
            files.push((format!("{folder}/sql-scripts/dml.{t}.sql"), q));
        }
        names.push(t);
    }
    files
}

#[test]
fn property_on_generated_graphs() {
    let mut checked = 0;
    for seed in 1..=60u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let files = random_project(&mut rng);
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let (_t, root) = project(&refs);
        let p = load(&root);
        let status = jobs_running_no_ddl(&p);
        let names: Vec<String> = p.inventory.tables.keys().cloned().collect();
        let mut scopes = Vec::new();
        for _ in 0..6 {
            let k = 1 + rng.below(3);
            let set: BTreeSet<String> = (0..k)
                .map(|_| names[rng.below(names.len())].clone())
                .collect();
            scopes.push(Scope::Tables(set.into_iter().collect()));
        }
        let products: BTreeSet<String> = p
            .inventory
            .tables
            .values()
            .map(|t| t.product.clone())
            .collect();
        scopes.extend(products.iter().cloned().map(Scope::Product));
        for layer in ["sources", "intermediates", "views", "facts"] {
            if p.inventory
                .tables
                .values()
                .any(|t| t.folder.starts_with(&format!("pipelines/{layer}/")))
            {
                scopes.push(Scope::Dir(layer.to_string()));
            }
        }
        for scope in &scopes {
            for cross_product in [false, true] {
                for force_ancestors in [false, true] {
                    let opts = PlanOptions {
                        may_start_descendants: true,
                        cross_product,
                        force_ancestors,
                        ..Default::default()
                    };
                    let plan = plan(&p, &status, scope.clone(), &opts);
                    if !force_ancestors {
                        assert_eq!(
                            jobs_started_outside(&p, &plan),
                            Vec::<String>::new(),
                            "seed {seed}, {scope:?}, cross_product={cross_product}"
                        );
                    }
                    // Whatever the options, no re-declared table is a restart or cascades.
                    for n in &plan.nodes {
                        if matches!(n.cause, Cause::Redeclared { .. }) {
                            assert_eq!(n.action, Action::Create, "seed {seed}: {}", n.reason);
                            assert!(!has_job(&p, &n.table_name));
                        }
                    }
                    checked += 1;
                }
            }
        }
        // The same start set gives the same decisions as a product and as a folder: every table of
        // p3 lives under intermediates/p3 or sources/p3.
        if products.contains("p3") {
            let opts = PlanOptions {
                may_start_descendants: true,
                ..Default::default()
            };
            let by_product = plan(&p, &status, Scope::Product("p3".into()), &opts);
            let mut dirs: Vec<ExecutionPlan> = Vec::new();
            let in_sources = p
                .inventory
                .tables
                .values()
                .any(|t| t.folder.starts_with("pipelines/sources/p3/"));
            let in_intermediates = p
                .inventory
                .tables
                .values()
                .any(|t| t.folder.starts_with("pipelines/intermediates/p3/"));
            if in_sources != in_intermediates {
                let d = if in_sources {
                    "sources/p3"
                } else {
                    "intermediates/p3"
                };
                dirs.push(plan(&p, &status, Scope::Dir(d.into()), &opts));
            }
            for by_dir in dirs {
                let strip = |pl: &ExecutionPlan| -> Vec<_> {
                    pl.nodes
                        .iter()
                        .map(|n| (n.table_name.clone(), n.action, n.reason.clone(), n.wave))
                        .collect()
                };
                assert_eq!(strip(&by_product), strip(&by_dir), "seed {seed}");
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// `--table-name a --table-name b` and `--table-list-file-name` naming the same tables give the same
/// plan, through the command line.
#[test]
fn table_names_and_a_table_list_give_the_same_plan() {
    let (tmp, root) = our_fixture();
    let status = tmp.path().join("status.json");
    let p = load(&root);
    let phases: BTreeMap<String, flinkpipe::plan::Phase> = jobs_running_no_ddl(&p).phases;
    std::fs::write(&status, serde_json::to_string(&phases).unwrap()).unwrap();
    let list = tmp.path().join("tables.txt");
    std::fs::write(&list, "sales_fct_order_payments\nint_sales_order_lines\n").unwrap();
    let r = root.to_str().unwrap();
    let s = status.to_str().unwrap();
    let common_args = [
        "--output",
        "json",
        "pipeline",
        "build-execution-plan",
        r,
        "--may-start-descendants",
        "--statement-status",
        s,
    ];
    let mut by_names: Vec<&str> = common_args.to_vec();
    by_names.extend([
        "--table-name",
        "int_sales_order_lines",
        "--table-name",
        "sales_fct_order_payments",
    ]);
    let mut by_list: Vec<&str> = common_args.to_vec();
    by_list.extend(["--table-list-file-name", list.to_str().unwrap()]);
    let a: serde_json::Value =
        serde_json::from_str(&Test::outside(&by_names).stdout_raw()).unwrap();
    let b: serde_json::Value = serde_json::from_str(&Test::outside(&by_list).stdout_raw()).unwrap();
    assert_eq!(a["nodes"], b["nodes"]);
    assert!(!a["nodes"].as_array().unwrap().is_empty());
}

/// A statement set started as the ancestor of another statement set's sibling: its own siblings are
/// planned too, without --may-start-descendants (the sibling rule runs to a fixpoint).
#[test]
fn siblings_of_ancestors_added_for_a_sibling_are_planned() {
    let ddl = |n: &str| {
        format!(
            "CREATE TABLE IF NOT EXISTS {n} (id STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '{n}', 'key.format' = 'json', 'value.format' = 'json');\n"
        )
    };
    let (_t, root) = project(&[
        ("sources/s/sql-scripts/ddl.s.sql", &ddl("s")),
        ("sources/s2/sql-scripts/ddl.s2.sql", &ddl("s2")),
        ("intermediates/p/sql-scripts/ddl.p.sql", &ddl("p")),
        (
            "intermediates/p/sql-scripts/dml.p.sql",
            "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO p SELECT id FROM s2;\n  INSERT INTO r SELECT id FROM s2;\nEND;\n",
        ),
        ("intermediates/r/sql-scripts/ddl.r.sql", &ddl("r")),
        ("facts/x/sql-scripts/ddl.x.sql", &ddl("x")),
        (
            "facts/x/sql-scripts/dml.x.sql",
            "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO x SELECT id FROM p;\n  INSERT INTO y SELECT id FROM s;\nEND;\n",
        ),
        ("facts/y/sql-scripts/ddl.y.sql", &ddl("y")),
    ]);
    let p = load(&root);
    let plan = plan(
        &p,
        &StatementStatus::default(),
        Scope::Tables(vec!["y".into()]),
        &PlanOptions::default(),
    );
    let action = |t: &str| {
        plan.nodes
            .iter()
            .find(|n| n.table_name == t)
            .map(|n| n.action)
            .unwrap_or_else(|| {
                panic!(
                    "{t} not planned: {:?}",
                    plan.nodes.iter().map(|n| &n.table_name).collect::<Vec<_>>()
                )
            })
    };
    assert_eq!(action("p"), Action::Create);
    assert_eq!(action("r"), Action::Create, "r is written by p's statement");
    assert_eq!(action("x"), Action::Create);
}
