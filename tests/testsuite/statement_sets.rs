//! Statement sets keep per-member lineage: each sink reads only what its own INSERT reads, a member
//! reading another member's sink is a normal edge, and a sink without a table folder is an error.

use crate::support::Test;
use crate::support::*;
use flinkpipe::config::Config;
use flinkpipe::project::{LoadOptions, Project};
use flinkpipe::sql::{StatementKind, analyze};

fn ddl(name: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {name} (id STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka');\n"
    )
}

fn load(root: &std::path::Path) -> Project {
    flinkpipe::project::load(root, &Config::default(), LoadOptions::default()).unwrap()
}

fn diags(p: &Project) -> Vec<String> {
    p.diagnostics.iter().map(|d| d.to_string()).collect()
}

const DML_A: &str = "pipelines/intermediates/a/sql-scripts/dml.a.sql";

/// Sources s1, s2 and tables a, b, c (DDL each); a's DML is `set_sql`.
fn set_project(set_sql: &str, with_c: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let mut files = vec![
        ("sources/s1/sql-scripts/ddl.s1.sql".to_string(), ddl("s1")),
        ("sources/s2/sql-scripts/ddl.s2.sql".to_string(), ddl("s2")),
        (
            "intermediates/a/sql-scripts/ddl.a.sql".to_string(),
            ddl("a"),
        ),
        (
            "intermediates/a/sql-scripts/dml.a.sql".to_string(),
            set_sql.to_string(),
        ),
        (
            "intermediates/b/sql-scripts/ddl.b.sql".to_string(),
            ddl("b"),
        ),
    ];
    if with_c {
        files.push((
            "intermediates/c/sql-scripts/ddl.c.sql".to_string(),
            ddl("c"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    project(&refs)
}

const EXECUTE_SET: &str = "EXECUTE STATEMENT SET\nBEGIN\n  INSERT INTO a SELECT id FROM s1;\n  INSERT INTO b SELECT id FROM s2;\n  INSERT INTO c SELECT id FROM a;\nEND;\n";

const BEGIN_SET: &str = "BEGIN STATEMENT SET;\nINSERT INTO a SELECT id FROM s1;\nINSERT INTO b SELECT id FROM s2;\nINSERT INTO c SELECT id FROM a;\nEND;\n";

/// Two statement sets in one DML file.
const TWO_SETS: &str = "EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT id FROM s1;\n  INSERT INTO b SELECT id FROM s2;\nEND;\nEXECUTE STATEMENT SET BEGIN\n  INSERT INTO c SELECT id FROM a;\nEND;\n";

fn assert_exact_parents(sql: &str) {
    let (_t, root) = set_project(sql, true);
    let p = load(&root);
    assert!(p.diagnostics.is_empty(), "{sql}\n{:#?}", diags(&p));
    assert_eq!(p.graph.parents("a"), vec!["s1"], "{sql}");
    assert_eq!(p.graph.parents("b"), vec!["s2"], "{sql}");
    assert_eq!(p.graph.parents("c"), vec!["a"], "{sql}");
    assert_eq!(p.graph.children("s1"), vec!["a"], "{sql}");
    assert_eq!(p.graph.children("s2"), vec!["b"], "{sql}");
    let t = &p.inventory.tables;
    assert_eq!(t["a"].extra_sinks, vec!["b", "c"]);
    assert_eq!(t["b"].written_by.as_deref(), Some("a"));
    assert_eq!(t["c"].written_by.as_deref(), Some("a"));
    // Reads point at the member's own FROM clause.
    let r = &t["b"].reads[0];
    assert_eq!((r.name.as_str(), r.file.as_str()), ("s2", DML_A));
    assert!(p.graph.self_loops().is_empty());
}

#[test]
fn each_sink_reads_only_its_own_member_execute_form() {
    assert_exact_parents(EXECUTE_SET);
}

#[test]
fn each_sink_reads_only_its_own_member_begin_form() {
    assert_exact_parents(BEGIN_SET);
}

#[test]
fn each_sink_reads_only_its_own_member_two_sets_in_one_file() {
    assert_exact_parents(TWO_SETS);
}

#[test]
fn member_handled_by_the_fallback_keeps_its_own_lineage() {
    // The second member does not parse (`= =`): the set goes through the token fallback.
    let sql = "EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT id FROM s1;\n  INSERT INTO b SELECT id FROM s2 WHERE id = = 1;\nEND;\n";
    let a = analyze(sql);
    assert_eq!(a.statements.len(), 1);
    let st = &a.statements[0];
    assert!(st.fallback);
    assert_eq!(st.kind, StatementKind::StatementSet);
    let members: Vec<(String, Vec<String>, usize)> = st
        .members
        .iter()
        .map(|m| {
            (
                m.sink.name.dotted(),
                m.sources.iter().map(|s| s.name.dotted()).collect(),
                m.line,
            )
        })
        .collect();
    assert_eq!(
        members,
        vec![
            ("a".to_string(), vec!["s1".to_string()], 2),
            ("b".to_string(), vec!["s2".to_string()], 3),
        ]
    );
    let (_t, root) = set_project(sql, false);
    let p = load(&root);
    assert_eq!(p.graph.parents("a"), vec!["s1"]);
    assert_eq!(p.graph.parents("b"), vec!["s2"]);
}

#[test]
fn front_end_members_and_union() {
    let a = analyze(EXECUTE_SET);
    let st = &a.statements[0];
    assert!(!st.fallback);
    let sinks: Vec<String> = st.sinks.iter().map(|r| r.name.dotted()).collect();
    let sources: Vec<String> = st.sources.iter().map(|r| r.name.dotted()).collect();
    assert_eq!(sinks, ["a", "b", "c"]);
    assert_eq!(sources, ["s1", "s2", "a"]);
    let members: Vec<(String, Vec<String>, usize)> = st
        .members
        .iter()
        .map(|m| {
            (
                m.sink.name.dotted(),
                m.sources.iter().map(|s| s.name.dotted()).collect(),
                m.line,
            )
        })
        .collect();
    assert_eq!(
        members,
        vec![
            ("a".to_string(), vec!["s1".to_string()], 3),
            ("b".to_string(), vec!["s2".to_string()], 4),
            ("c".to_string(), vec!["a".to_string()], 5),
        ]
    );
    // CTEs stay out of a member's sources; `CASE … END` does not end the set.
    let a = analyze(
        "BEGIN STATEMENT SET;\nINSERT INTO x WITH w AS (SELECT id FROM s1) SELECT CASE WHEN id IS NULL THEN 1 END FROM w;\nINSERT INTO y SELECT id FROM s2;\nEND;",
    );
    let m = &a.statements[0].members;
    assert_eq!(m.len(), 2);
    assert_eq!(m[0].sources.len(), 1);
    assert_eq!(m[0].sources[0].name.dotted(), "s1");
    assert_eq!(m[1].sink.name.dotted(), "y");
    // Other statements have no members, and none is serialised.
    let a = analyze("INSERT INTO a SELECT id FROM s1;");
    assert!(a.statements[0].members.is_empty());
    assert!(
        !serde_json::to_string(&a.statements[0])
            .unwrap()
            .contains("members")
    );
}

#[test]
fn sink_without_folder_is_an_error_with_file_and_line() {
    let (_t, root) = set_project(EXECUTE_SET, false);
    let p = load(&root);
    let d = p
        .diagnostics
        .iter()
        .find(|d| d.code == "sink-without-folder")
        .unwrap_or_else(|| panic!("{:#?}", diags(&p)));
    assert!(d.is_error());
    assert_eq!(d.file.as_deref(), Some(DML_A));
    assert_eq!((d.line, d.column), (Some(5), Some(15)));
    assert!(d.message.contains("'c'"), "{}", d.message);
    assert!(d.message.contains(DML_A), "{}", d.message);
    // Through the CLI: validate fails naming file:line.
    let o = Test::outside(&["pipeline", "validate", root.to_str().unwrap()]);
    let err = o.stderr_raw();
    o.code(1);
    assert!(
        err.contains(&format!("error[sink-without-folder]: {DML_A}:5:15:")),
        "{err}"
    );
}

#[test]
fn no_false_self_reference_warning() {
    let (_t, root) = set_project(EXECUTE_SET, true);
    let o = Test::outside(&["pipeline", "validate", root.to_str().unwrap()]);
    let err = o.stderr_raw();
    o.code(0);
    assert!(!err.contains("reads itself"), "{err}");
    assert!(!err.contains("self-reference"), "{err}");
}

#[test]
fn a_member_reading_its_own_sink_is_still_a_self_reference() {
    let sql = "EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT id FROM s1;\n  INSERT INTO b SELECT id FROM b;\nEND;\n";
    let (_t, root) = set_project(sql, false);
    let p = load(&root);
    assert_eq!(p.graph.parents("a"), vec!["s1"]);
    assert!(
        p.diagnostics
            .iter()
            .any(|d| d.code == "self-reference" && d.message.contains("'b'")),
        "{:#?}",
        diags(&p)
    );
}

#[test]
fn example_project_statement_set_parents() {
    let (_t, root) = our_fixture();
    let p = load(&root);
    assert!(p.diagnostics.is_empty(), "{:#?}", diags(&p));
    assert_eq!(
        p.graph.parents("int_sales_web_orders"),
        vec!["int_sales_paid_orders"]
    );
    assert_eq!(
        p.graph.parents("int_sales_store_orders"),
        vec!["int_sales_paid_orders"]
    );
    assert_eq!(
        p.inventory.tables["int_sales_store_orders"]
            .written_by
            .as_deref(),
        Some("int_sales_web_orders")
    );
}

/// Several plain INSERTs in one DML file (no statement set): each sink reads only its own INSERT's
/// sources, and a sink without a folder is an error, exactly as for statement-set members.
#[test]
fn plain_inserts_in_one_dml_keep_their_own_lineage() {
    let ddl = |t: &str| format!("CREATE TABLE {t} (id STRING) WITH ('connector' = 'kafka');\n");
    let (_t, root) = crate::support::project(&[
        ("sources/s1/sql-scripts/ddl.s1.sql", &ddl("s1")),
        ("sources/s2/sql-scripts/ddl.s2.sql", &ddl("s2")),
        ("intermediates/a/sql-scripts/ddl.a.sql", &ddl("a")),
        (
            "intermediates/a/sql-scripts/dml.a.sql",
            "INSERT INTO a SELECT id FROM s1;\nINSERT INTO b SELECT id FROM s2;\nINSERT INTO c SELECT id FROM s1;\n",
        ),
        ("intermediates/b/sql-scripts/ddl.b.sql", &ddl("b")),
    ]);
    let p = flinkpipe::project::load(
        &root,
        &flinkpipe::config::Config::default(),
        flinkpipe::project::LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(p.graph.parents("a"), ["s1"]);
    assert_eq!(p.graph.parents("b"), ["s2"]);
    assert_eq!(p.inventory.tables["b"].written_by.as_deref(), Some("a"));
    let errors: Vec<String> = p
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "error[sink-without-folder]: pipelines/intermediates/a/sql-scripts/dml.a.sql:3:13: the DML pipelines/intermediates/a/sql-scripts/dml.a.sql writes 'c', which no table folder defines (add a folder with its DDL)"
        ]
    );
}
