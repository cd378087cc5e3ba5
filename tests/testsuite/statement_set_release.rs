//! A statement writes tables: property tests over generated projects with statement sets (2–4 sinks,
//! sinks read by further tables, sinks whose DDL lives in a folder of their own).
//!
//! For a change to any INSERT of any statement (a change of its DML file):
//! - impact = every sink of that statement, their descendants, and so on through every statement set
//!   met on the way (checked against a naive fixpoint computed here, not by the code under test);
//! - blue-green versions exactly that set, and after the rewrite no table or storage location is written
//!   by two statements among blue ∪ green (every statement of the tree keeps running while green starts);
//! - the plan of a restart of that statement restarts every table it writes.

use crate::support::Rng;
use crate::support::Test;
use crate::support::project;
use flinkpipe::changes::{ChangeKind, FileChange, FileRole, HeadGraph, impacted_tables};
use flinkpipe::config::Config;
use flinkpipe::inventory::writers;
use flinkpipe::plan::{Action, PlanOptions, Scope, StatementNaming, StatementStatus, build_plan};
use flinkpipe::project::{LoadOptions, Project};
use flinkpipe::versioning::{VersionRequest, plan_versions};
use std::collections::{BTreeMap, BTreeSet};

fn ddl(name: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {name} (id STRING, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = '{name}', 'key.format' = 'json', 'value.format' = 'json');\n"
    )
}

/// A generated project: sources, then statements in order; each statement writes 1–4 new tables and
/// each of its INSERTs reads one or two tables that exist before it. The statement's owner is its
/// first sink; the other sinks have DDL-only folders of their own.
struct Generated {
    files: Vec<(String, String)>,
    /// Owner → its sinks (owner first).
    statements: BTreeMap<String, Vec<String>>,
}

fn generate(rng: &mut Rng) -> Generated {
    let mut files = Vec::new();
    let mut tables: Vec<String> = Vec::new();
    for i in 0..(2 + rng.below(2)) {
        let s = format!("src_{i}");
        files.push((format!("sources/{s}/sql-scripts/ddl.{s}.sql"), ddl(&s)));
        tables.push(s);
    }
    let mut statements = BTreeMap::new();
    for k in 0..(3 + rng.below(5)) {
        let width = if rng.below(3) == 0 {
            1
        } else {
            2 + rng.below(3)
        };
        let sinks: Vec<String> = (0..width).map(|j| format!("t{k}_{j}")).collect();
        let mut inserts = Vec::new();
        for sink in &sinks {
            let a = tables[rng.below(tables.len())].clone();
            let b = tables[rng.below(tables.len())].clone();
            let from = if a != b && rng.below(2) == 0 {
                format!("{a} UNION ALL SELECT id, v FROM {b}")
            } else {
                a
            };
            inserts.push(format!("  INSERT INTO {sink} SELECT id, v FROM {from};"));
        }
        let owner = sinks[0].clone();
        let dml = if width == 1 {
            format!("{}\n", inserts[0].trim())
        } else if rng.below(2) == 0 {
            format!(
                "EXECUTE STATEMENT SET\nBEGIN\n{}\nEND;\n",
                inserts.join("\n")
            )
        } else {
            format!("BEGIN STATEMENT SET;\n{}\nEND;\n", inserts.join("\n"))
        };
        files.push((
            format!("intermediates/{owner}/sql-scripts/ddl.{owner}.sql"),
            ddl(&owner),
        ));
        files.push((
            format!("intermediates/{owner}/sql-scripts/dml.{owner}.sql"),
            dml,
        ));
        for s in &sinks[1..] {
            files.push((format!("intermediates/{s}/sql-scripts/ddl.{s}.sql"), ddl(s)));
        }
        tables.extend(sinks.iter().cloned());
        statements.insert(owner, sinks);
    }
    Generated { files, statements }
}

fn load(root: &std::path::Path) -> Project {
    flinkpipe::project::load(root, &Config::default(), LoadOptions::default()).unwrap()
}

/// The oracle: `seed`, closed under descendants (the project's graph) and "written by the same
/// statement" (the generator's own record), by naive iteration to a fixpoint.
fn oracle(p: &Project, statements: &BTreeMap<String, Vec<String>>, seed: &str) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = [seed.to_string()].into();
    loop {
        let mut next = set.clone();
        for t in &set {
            next.extend(p.graph.descendants(&[t.as_str()]));
            for sinks in statements.values() {
                if sinks.contains(t) {
                    next.extend(sinks.iter().cloned());
                }
            }
        }
        if next == set {
            return set;
        }
        set = next;
    }
}

fn dml_change(owner: &str) -> FileChange {
    FileChange {
        path: format!("intermediates/{owner}/sql-scripts/dml.{owner}.sql"),
        old_path: None,
        abs_path: "/unused".into(),
        role: FileRole::Dml,
        table_name: owner.into(),
        new_table_name: owner.into(),
        base_table_name: None,
        change_kind: ChangeKind::Logic,
        content_kind: ChangeKind::Logic,
        same_sql_content: false,
        schema_diff: None,
        note: None,
    }
}

fn statement_names(
    naming: &StatementNaming,
) -> impl Fn(&flinkpipe::inventory::Table, bool) -> String + '_ {
    move |t, dml| {
        if dml {
            naming.dml(&t.product, &t.name)
        } else {
            naming.ddl(&t.product, &t.name)
        }
    }
}

#[test]
fn a_change_to_any_insert_impacts_and_versions_every_sink_and_leaves_one_writer_per_table() {
    let cfg = Config::default();
    let naming = StatementNaming::from_config(&cfg);
    let mut checked = 0;
    let mut sets_checked = 0;
    for seed in 1..=30u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let g = generate(&mut rng);
        let refs: Vec<(&str, &str)> = g
            .files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        let (_tmp, root) = project(&refs);
        let p = load(&root);
        assert!(
            !p.has_errors(),
            "seed {seed}: {:?}",
            p.diagnostics
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
        );
        let head = HeadGraph::from_project(&p);
        let blue_writes = writers::tree_writes(&p.inventory.tables, statement_names(&naming));
        assert!(
            writers::conflicts(&blue_writes, &BTreeSet::new()).is_empty(),
            "seed {seed}: the generated tree has two writers"
        );
        for (owner, sinks) in &g.statements {
            let expected = oracle(&p, &g.statements, owner);
            // 1. Impact of a change to the owner's DML (any of its INSERTs).
            let impact = impacted_tables(&[dml_change(owner)], &[], &[], &head).unwrap();
            let mut got: BTreeSet<String> = impact.impacted_tables.iter().cloned().collect();
            got.insert(owner.clone());
            assert_eq!(got, expected, "seed {seed}: impact of a change to {owner}");
            for s in sinks {
                assert!(
                    got.contains(s),
                    "seed {seed}: sink {s} of {owner} not impacted"
                );
            }

            // 2. Blue-green versions the same set, and no table or topic gets two writers.
            let req = VersionRequest {
                seeds: vec![owner.clone()],
                default_suffix: "_v2".into(),
                ..Default::default()
            };
            let plan = plan_versions(&p, &cfg, &naming, &req)
                .unwrap_or_else(|e| panic!("seed {seed}: versioning {owner}: {e}"));
            let renamed: BTreeSet<String> = plan.renames.keys().cloned().collect();
            assert_eq!(renamed, expected, "seed {seed}: versioned set for {owner}");
            for e in &plan.edits {
                std::fs::write(&e.path, &e.after).unwrap();
            }
            let green_project = load(&root);
            assert!(
                !green_project.has_errors(),
                "seed {seed}: rewritten tree has errors"
            );
            let new_names: BTreeSet<&String> = plan.renames.values().collect();
            let green_writes: Vec<writers::Write> =
                writers::tree_writes(&green_project.inventory.tables, statement_names(&naming))
                    .into_iter()
                    .filter(|w| {
                        let owner_new = green_project
                            .inventory
                            .tables
                            .values()
                            .find(|t| naming.dml(&t.product, &t.name) == w.statement)
                            .map(|t| &t.name);
                        owner_new.is_some_and(|o| new_names.contains(o))
                    })
                    .collect();
            assert!(!green_writes.is_empty(), "seed {seed}: no green statement");
            for w in &green_writes {
                assert!(
                    new_names.contains(&w.table),
                    "seed {seed}: green {} writes blue table {}",
                    w.statement,
                    w.table
                );
            }
            let mut all = blue_writes.clone();
            all.extend(green_writes);
            let found = writers::conflicts(&all, &BTreeSet::new());
            assert!(found.is_empty(), "seed {seed}: {owner}: {found:?}");
            for e in &plan.edits {
                std::fs::write(&e.path, &e.before).unwrap();
            }

            // 3. Restarting the statement restarts every table it writes (all jobs running).
            let status = StatementStatus {
                phases: p
                    .inventory
                    .tables
                    .values()
                    .filter(|t| t.dml_ref.is_some())
                    .map(|t| {
                        (
                            naming.dml(&t.product, &t.name),
                            flinkpipe::plan::Phase::Running,
                        )
                    })
                    .collect(),
            };
            let exec = build_plan(
                &p,
                &naming,
                &status,
                &Scope::Tables(vec![sinks[sinks.len() - 1].clone()]),
                &PlanOptions::default(),
            )
            .unwrap();
            for s in sinks {
                let n = exec.nodes.iter().find(|n| &n.table_name == s);
                assert!(
                    n.is_some_and(|n| n.action == Action::Restart),
                    "seed {seed}: restarting {} leaves {s} at {:?}",
                    sinks[sinks.len() - 1],
                    n.map(|n| (&n.action, &n.reason))
                );
            }
            checked += 1;
            if sinks.len() > 1 {
                sets_checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
    assert!(sets_checked > 50, "{sets_checked}");
}

/// `pipeline validate`: a table written by two statements is an error naming both INSERTs by
/// file:line; `flinkpipe.multi_writer_tables` accepts it. Two tables over one topic, both written, are
/// an error too.
#[test]
fn validate_names_both_writers_of_a_table_or_topic() {
    let two_writers = [
        ("sources/s/sql-scripts/ddl.s.sql", ddl("s")),
        ("intermediates/a/sql-scripts/ddl.a.sql", ddl("a")),
        (
            "intermediates/a/sql-scripts/dml.a.sql",
            "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO a SELECT id, v FROM s;\n  INSERT INTO b SELECT id, v FROM s;\nEND;\n".to_string(),
        ),
        ("intermediates/b/sql-scripts/ddl.b.sql", ddl("b")),
        (
            "intermediates/b/sql-scripts/dml.b.sql",
            "-- b's own job\nINSERT INTO b SELECT id, v FROM s;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = two_writers.iter().map(|(p, c)| (*p, c.as_str())).collect();
    let (tmp, root) = project(&refs);
    let o = Test::outside(&["pipeline", "validate", root.to_str().unwrap()]);
    let err = format!("{}{}", o.stdout_raw(), o.stderr_raw());
    o.code(1);
    assert!(err.contains("table-written-twice"), "{err}");
    assert!(
        err.contains("pipelines/intermediates/a/sql-scripts/dml.a.sql:4")
            && err.contains("pipelines/intermediates/b/sql-scripts/dml.b.sql:2"),
        "{err}"
    );
    // Declared as fed by two jobs: accepted.
    let cfg = tmp.path().join("config.yaml");
    std::fs::write(&cfg, "flinkpipe:\n  multi_writer_tables: [b]\n").unwrap();
    let o = Test::outside(&[
        "pipeline",
        "validate",
        root.to_str().unwrap(),
        "--config",
        cfg.to_str().unwrap(),
    ]);
    o.success();

    // Two tables, one topic, two writers.
    let shared = [
        ("sources/s/sql-scripts/ddl.s.sql", ddl("s")),
        ("intermediates/a/sql-scripts/ddl.a.sql", ddl("a")),
        (
            "intermediates/a/sql-scripts/dml.a.sql",
            "INSERT INTO a SELECT id, v FROM s;\n".to_string(),
        ),
        (
            "intermediates/b/sql-scripts/ddl.b.sql",
            ddl("b").replace("'topic' = 'b'", "'topic' = 'a'"),
        ),
        (
            "intermediates/b/sql-scripts/dml.b.sql",
            "INSERT INTO b SELECT id, v FROM s;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = shared.iter().map(|(p, c)| (*p, c.as_str())).collect();
    let (_t2, root) = project(&refs);
    let o = Test::outside(&["pipeline", "validate", root.to_str().unwrap()]);
    let err = format!("{}{}", o.stdout_raw(), o.stderr_raw());
    o.code(1);
    assert!(err.contains("storage-written-twice"), "{err}");
    assert!(
        err.contains("topic 'a' would be written by 2 statements"),
        "{err}"
    );
}

/// A table fed by two statements on purpose (`flinkpipe.multi_writer_tables`): a change to either
/// versions both statements whatever the names' order, and the rewritten tree still validates (the
/// green version of an allowed table is allowed).
#[test]
fn a_multi_writer_table_versions_every_statement_that_writes_it() {
    for owner in ["a_owner", "z_owner"] {
        let files = [
            ("sources/s/sql-scripts/ddl.s.sql".to_string(), ddl("s")),
            (
                "intermediates/m/sql-scripts/ddl.m.sql".to_string(),
                ddl("m"),
            ),
            (
                "intermediates/m/sql-scripts/dml.m.sql".to_string(),
                "INSERT INTO m SELECT id, v FROM s WHERE v < 0;\n".to_string(),
            ),
            (
                format!("intermediates/{owner}/sql-scripts/ddl.{owner}.sql"),
                ddl(owner),
            ),
            (
                format!("intermediates/{owner}/sql-scripts/dml.{owner}.sql"),
                format!(
                    "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO {owner} SELECT id, v FROM s;\n  INSERT INTO m SELECT id, v FROM s WHERE v >= 0;\nEND;\n"
                ),
            ),
        ];
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        let (tmp, root) = project(&refs);
        let mut cfg = Config::default();
        cfg.flinkpipe.multi_writer_tables = vec!["m".into()];
        let p = flinkpipe::project::load(&root, &cfg, LoadOptions::default()).unwrap();
        assert!(!p.has_errors(), "{owner}: {:?}", p.diagnostics);
        let naming = StatementNaming::from_config(&cfg);
        let plan = plan_versions(
            &p,
            &cfg,
            &naming,
            &VersionRequest {
                seeds: vec!["m".into()],
                default_suffix: "_v2".into(),
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{owner}: {e}"));
        let renamed: BTreeSet<&str> = plan.renames.keys().map(String::as_str).collect();
        assert_eq!(renamed, BTreeSet::from(["m", owner]), "{owner}");
        for e in &plan.edits {
            std::fs::write(&e.path, &e.after).unwrap();
        }
        let green = flinkpipe::project::load(&root, &cfg, LoadOptions::default()).unwrap();
        assert!(!green.has_errors(), "{owner}: {:?}", green.diagnostics);
        drop(tmp);
    }
}
