//! The SQL front end's answers as a project sees them (issue #14): what a statement the parser rejected,
//! a missing `;`, a Spark-order `WITH … INSERT`, a template placeholder or an oversized file becomes in the
//! inventory, the metadata and the diagnostics (file and line), and that an unknown statefulness is
//! treated as stateful.

use crate::support::*;
use flinkpipe::config::Config;
use flinkpipe::diagnostics::Severity;
use flinkpipe::metadata;
use flinkpipe::project::{LoadOptions, Project};
use flinkpipe::sql::Statefulness;

const SRC: &str = "CREATE TABLE IF NOT EXISTS src_a (id STRING, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen');\n";

fn ddl(name: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {name} (id STRING, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'kafka');\n"
    )
}

/// A project with `src_a` and one fact table `f` whose DML is `dml`.
fn load(dml: &str) -> (tempfile::TempDir, Project) {
    let (tmp, root) = project(&[
        ("sources/src_a/sql-scripts/ddl.src_a.sql", SRC),
        ("facts/f/sql-scripts/ddl.f.sql", &ddl("f")),
        ("facts/f/sql-scripts/dml.f.sql", dml),
    ]);
    let p = flinkpipe::project::load(&root, &Config::default(), LoadOptions::default()).unwrap();
    (tmp, p)
}

/// `(severity, code, line)` of every diagnostic on `dml.f.sql`.
fn diags(p: &Project) -> Vec<(Severity, &'static str, Option<usize>)> {
    p.diagnostics
        .iter()
        .filter(|d| d.file.as_deref().is_some_and(|f| f.ends_with("dml.f.sql")))
        .map(|d| (d.severity, d.code, d.line))
        .collect()
}

#[test]
fn missing_semicolon_keeps_the_group_by_state() {
    let (_t, p) = load(
        "SELECT * FROM src_a WHERE id = 'x'\nINSERT INTO f SELECT id, SUM(v) FROM src_a GROUP BY id;\n",
    );
    let f = &p.inventory.tables["f"];
    assert_eq!(f.statefulness, Statefulness::Stateful);
    assert!(!f.state_from_fallback);
    assert_eq!(p.graph.parents("f"), vec!["src_a"]);
    assert_eq!(
        diags(&p),
        vec![(Severity::Warning, "sql-missing-semicolon", Some(2))]
    );
    let def = metadata::definition(&p, "f").unwrap();
    assert_eq!(def.complexity.state_form, "Stateful");
}

#[test]
fn a_statefulness_read_by_the_fallback_is_unknown_marked_and_counts_as_stateful() {
    let (_t, p) = load("INSERT INTO f\nSELECT id,, v FROM src_a;\n");
    let f = &p.inventory.tables["f"];
    assert_eq!(f.statefulness, Statefulness::Unknown);
    assert!(f.state_from_fallback);
    assert!(f.statefulness.may_hold_state());
    assert_eq!(
        diags(&p),
        vec![(Severity::Warning, "sql-fallback", Some(2))]
    );
    let def = metadata::definition(&p, "f").unwrap();
    assert_eq!(def.complexity.state_form, "Stateful");
    let json = serde_json::to_value(&def).unwrap();
    assert_eq!(json["complexity"]["state_from_fallback"], true);
    let graph = serde_json::to_value(metadata::graph_file(&p)).unwrap();
    let entry = graph["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["table_name"] == "f")
        .unwrap()
        .clone();
    assert_eq!(entry["state_from_fallback"], true);
    assert_eq!(entry["state_form"], "Stateful");
    // A parsed table carries no mark at all (shift_left's shape is unchanged).
    let src = serde_json::to_value(metadata::definition(&p, "src_a").unwrap()).unwrap();
    assert!(src["complexity"].get("state_from_fallback").is_none());

    // A stateful operator seen by the fallback keeps the table stateful, still marked.
    let (_t, p) = load("INSERT INTO f\nSELECT id,, SUM(v) FROM src_a GROUP BY id;\n");
    let f = &p.inventory.tables["f"];
    assert_eq!(f.statefulness, Statefulness::Stateful);
    assert!(f.state_from_fallback);
}

#[test]
fn with_before_insert_is_the_table_s_query_with_a_warning() {
    let (_t, p) = load(
        "WITH x AS (SELECT * FROM src_a)\nINSERT INTO f SELECT id, COUNT(*) FROM x GROUP BY id;\n",
    );
    assert_eq!(p.inventory.tables["f"].statefulness, Statefulness::Stateful);
    assert_eq!(p.graph.parents("f"), vec!["src_a"]);
    assert_eq!(diags(&p), vec![(Severity::Warning, "sql-syntax", Some(1))]);
}

#[test]
fn placeholders_are_reported_with_file_and_line() {
    let (_t, p) = load("INSERT INTO f\nSELECT * FROM src_a WHERE v > ${MIN_V};\n");
    assert_eq!(
        diags(&p),
        vec![(Severity::Warning, "sql-placeholder", Some(2))]
    );
    let d = p
        .diagnostics
        .iter()
        .find(|d| d.code == "sql-placeholder")
        .unwrap();
    assert_eq!(d.column, Some(31));
    assert!(d.message.contains("${MIN_V}"), "{d}");
}

#[test]
fn an_oversized_file_is_an_error_naming_the_limit() {
    let mut dml = String::from("INSERT INTO f SELECT * FROM src_a;\n");
    while dml.len() <= flinkpipe::sql::limits::MAX_SQL_FILE_BYTES {
        dml.push_str("-- generated padding line of a very large file\n");
    }
    let (_t, p) = load(&dml);
    let d: Vec<_> = p
        .diagnostics
        .iter()
        .filter(|d| d.code == "file-refused")
        .collect();
    assert_eq!(d.len(), 1, "{:?}", p.diagnostics);
    assert!(d[0].is_error());
    assert!(d[0].file.as_deref().unwrap().ends_with("dml.f.sql"));
    // Refused before it is read, with its exact size (a rounded one would read as the limit).
    assert_eq!(
        d[0].message,
        format!(
            "too large ({} bytes, over the limit of 8 MiB for this kind of file): refused",
            dml.len()
        )
    );
    assert!(p.has_errors());
}

/// Placeholders resolved from `flinkpipe.sql_variables`: the graph uses the resolved names, the
/// placeholder is no warning any more, and what is deployed has the value (the files keep the
/// placeholder); an unconfigured placeholder is still reported with file and line.
#[test]
fn configured_placeholders_resolve_names_and_the_deployed_sql() {
    let (_t, root) = project(&[
        (
            "sources/src_o/sql-scripts/ddl.src_o.sql",
            "CREATE TABLE IF NOT EXISTS ${env}_orders (id STRING, v INT) WITH ('connector' = 'kafka', 'topic' = '{{ env }}.orders');\n",
        ),
        ("facts/f/sql-scripts/ddl.f.sql", &ddl("f")),
        (
            "facts/f/sql-scripts/dml.f.sql",
            "INSERT INTO f SELECT id, SUM(v) FROM ${env}_orders WHERE region = '${region}' GROUP BY id;\n",
        ),
    ]);
    let mut cfg = Config::default();
    cfg.flinkpipe
        .sql_variables
        .insert("env".to_string(), "dev".to_string());
    let p = flinkpipe::project::load(&root, &cfg, LoadOptions::default()).unwrap();
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    assert!(
        p.inventory.tables.contains_key("dev_orders"),
        "{:?}",
        p.inventory.tables.keys()
    );
    assert_eq!(p.graph.parents("f"), ["dev_orders"]);
    // `${env}` is resolved; `${region}` (no value) is still reported where it is used.
    let placeholders: Vec<(String, Option<usize>)> = p
        .diagnostics
        .iter()
        .filter(|d| d.code == "sql-placeholder")
        .map(|d| (d.file.clone().unwrap_or_default(), d.line))
        .collect();
    assert_eq!(placeholders.len(), 1, "{placeholders:?}");
    assert!(placeholders[0].0.ends_with("dml.f.sql"));
    assert!(
        p.diagnostics
            .iter()
            .any(|d| d.code == "sql-placeholder" && d.message.contains("${region}"))
    );
    // The SQL sent: substituted; the files: unchanged.
    let naming = flinkpipe::plan::StatementNaming::from_config(&cfg);
    let specs = flinkpipe::deploy::spec::project_statements(
        &p,
        &naming,
        &flinkpipe::deploy::env_sql::EnvSql::none(),
    )
    .unwrap();
    let ddl = specs
        .iter()
        .find(|s| s.sql.contains("CREATE TABLE"))
        .unwrap();
    assert!(
        ddl.sql.contains("dev_orders") && ddl.sql.contains("'dev.orders'"),
        "{}",
        ddl.sql
    );
    let dml = specs.iter().find(|s| s.sql.contains("INSERT")).unwrap();
    assert!(dml.sql.contains("FROM dev_orders") && dml.sql.contains("'${region}'"));
    let on_disk =
        std::fs::read_to_string(root.join("sources/src_o/sql-scripts/ddl.src_o.sql")).unwrap();
    assert!(on_disk.contains("${env}_orders"));
    // Without the variable, the name is kept as written and reported.
    let p = flinkpipe::project::load(&root, &Config::default(), LoadOptions::default()).unwrap();
    assert!(p.inventory.tables.contains_key("${env}_orders"));
}
