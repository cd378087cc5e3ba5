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

/// What only the project sees (issue #42): a view runs inside every statement that reads it, so a
/// reader of a stateful view — through a chain of views of any length, in other folders — is
/// stateful with the view's reasons; a reader of an updating source (`upsert-kafka`, a
/// `changelog.mode` of `upsert` or `retract`, a primary key without connector nor mode: Confluent
/// Cloud's `upsert` default) is stateful (ChangelogNormalize), also through a view; a primary key on
/// an append-only connector is not. The plan and the metadata say the same.
#[test]
fn statefulness_sees_through_views_and_updating_sources() {
    use flinkpipe::sql::StateReason;
    let orders = "CREATE TABLE IF NOT EXISTS src_o (id STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'kafka', 'topic' = 'o', 'format' = 'json');\n";
    let stateful_views = [
        (
            "SELECT id, window_start, SUM(v) AS v FROM TABLE(TUMBLE(TABLE src_o, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY id, window_start, window_end",
            StateReason::WindowAggregate,
        ),
        (
            "SELECT id, SUM(v) AS v FROM src_o GROUP BY id",
            StateReason::GroupAggregate,
        ),
        ("SELECT DISTINCT id, v FROM src_o", StateReason::Distinct),
    ];
    for (query, reason) in stateful_views {
        for depth in 1..=3usize {
            let mut files: Vec<(String, String)> = vec![(
                "sources/src_o/sql-scripts/ddl.src_o.sql".into(),
                orders.into(),
            )];
            // v1 holds the query; v(k+1) reads v(k).
            for k in 1..=depth {
                let body = if k == 1 {
                    query.to_string()
                } else {
                    format!("SELECT id, v FROM v{} WHERE v > 0", k - 1)
                };
                files.push((
                    format!("views/v{k}/sql-scripts/ddl.v{k}.sql"),
                    format!("CREATE VIEW v{k} AS {body};\n"),
                ));
            }
            files.push(("facts/f/sql-scripts/ddl.f.sql".into(), ddl("f")));
            files.push((
                "facts/f/sql-scripts/dml.f.sql".into(),
                format!("INSERT INTO f SELECT id, v FROM v{depth} WHERE v > 1;\n"),
            ));
            let refs: Vec<(&str, &str)> = files
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            let (_t, root) = project(&refs);
            let p = flinkpipe::project::load(&root, &Config::default(), LoadOptions::default())
                .unwrap();
            let f = &p.inventory.tables["f"];
            assert_eq!(
                f.statefulness,
                Statefulness::Stateful,
                "{query} depth {depth}"
            );
            assert!(
                f.state_reasons.contains(&reason) && f.state_reasons.contains(&StateReason::View),
                "{query} depth {depth}: {:?}",
                f.state_reasons
            );
            let def = metadata::definition(&p, "f").unwrap();
            assert_eq!(def.complexity.state_form, "Stateful");
        }
    }
    // A stateless view keeps its reader stateless.
    let (_t, root) = project(&[
        ("sources/src_o/sql-scripts/ddl.src_o.sql", orders),
        (
            "views/v1/sql-scripts/ddl.v1.sql",
            "CREATE VIEW v1 AS SELECT id, v FROM src_o WHERE v > 0;\n",
        ),
        ("facts/f/sql-scripts/ddl.f.sql", &ddl("f")),
        (
            "facts/f/sql-scripts/dml.f.sql",
            "INSERT INTO f SELECT id, v FROM v1;\n",
        ),
    ]);
    let p = flinkpipe::project::load(&root, &Config::default(), LoadOptions::default()).unwrap();
    assert_eq!(
        p.inventory.tables["f"].statefulness,
        Statefulness::Stateless
    );

    // Updating sources, read directly and through a view.
    let cases: [(&str, bool); 7] = [
        (
            "WITH ('connector' = 'upsert-kafka', 'topic' = 'd', 'key.format' = 'json', 'value.format' = 'json')",
            true,
        ),
        ("WITH ('changelog.mode' = 'upsert')", true),
        ("WITH ('changelog.mode' = 'retract')", true),
        ("", true),
        ("WITH ('changelog.mode' = 'append')", false),
        ("WITH ('connector' = 'datagen')", false),
        (
            "WITH ('connector' = 'kafka', 'topic' = 'd', 'format' = 'json')",
            false,
        ),
    ];
    for (with, updating) in cases {
        for through_view in [false, true] {
            let dim = format!(
                "CREATE TABLE IF NOT EXISTS src_d (id STRING, v INT, PRIMARY KEY (id) NOT ENFORCED) {with};\n"
            );
            let read = if through_view { "v_d" } else { "src_d" };
            let dml = format!("INSERT INTO f SELECT id, v FROM {read} WHERE v > 1;\n");
            let (_t, root) = project(&[
                ("sources/src_d/sql-scripts/ddl.src_d.sql", &dim),
                (
                    "views/v_d/sql-scripts/ddl.v_d.sql",
                    "CREATE VIEW v_d AS SELECT id, v FROM src_d;\n",
                ),
                ("facts/f/sql-scripts/ddl.f.sql", &ddl("f")),
                ("facts/f/sql-scripts/dml.f.sql", &dml),
            ]);
            let p = flinkpipe::project::load(&root, &Config::default(), LoadOptions::default())
                .unwrap();
            let f = &p.inventory.tables["f"];
            let want = if updating {
                Statefulness::Stateful
            } else {
                Statefulness::Stateless
            };
            assert_eq!(f.statefulness, want, "{with} through view {through_view}");
            assert_eq!(
                f.state_reasons.contains(&StateReason::UpdatingSource),
                updating,
                "{with}: {:?}",
                f.state_reasons
            );
        }
    }
}
