//! Everyday command-line use: completions and man page from the clap definitions, SQL errors with source
//! snippets (text) and as data (JSON), the SVG picture and HTML lineage page of the example project, and
//! `version [--config]` with secrets masked.

use crate::support::test::Outcome;
use crate::support::*;
use std::path::Path;

#[test]
fn completions_cover_the_command_tree() {
    let o = Test::outside(&["completions", "bash"]);
    let o = o.success();
    let bash = o.stdout_raw();
    assert!(bash.contains("_flinkpipe()"), "a bash completion function");
    for word in [
        "pipeline",
        "project",
        "table",
        "sql",
        "version",
        "completions",
        "man",
        "validate",
        "build-execution-plan",
        "validate-table-names",
        "init",
        "--project-type",
        "--select",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    for shell in ["zsh", "fish", "powershell"] {
        let o = Test::outside(&["completions", shell]);
        let o = o.success();
        assert!(o.stdout_raw().contains("validate-table-names"), "{shell}");
    }
    let o = Test::outside(&["completions", "tcsh"]);
    o.code(2);
}

#[test]
fn man_page_comes_from_the_clap_definitions() {
    let o = Test::outside(&["man"]);
    let o = o.success();
    let roff = o.stdout_raw();
    let excerpt = roff
        .lines()
        .take_while(|l| !l.starts_with(".SH OPTIONS"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace(env!("CARGO_PKG_VERSION"), "[version]");
    insta::assert_snapshot!("man_page_head", excerpt);
    for sub in [
        "project",
        "table",
        "pipeline",
        "sql",
        "version",
        "completions",
    ] {
        assert!(
            roff.contains(&format!("flinkpipe\\-{sub}(1)")),
            "man page lists {sub}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let o = Test::outside(&["man", "--out", dir.path().to_str().unwrap()]);
    let o = o.success();
    for page in [
        "flinkpipe.1",
        "flinkpipe-pipeline.1",
        "flinkpipe-pipeline-validate.1",
        "flinkpipe-table-init.1",
        "flinkpipe-project-init.1",
    ] {
        assert!(dir.path().join(page).is_file(), "{page}");
    }
    assert!(
        o.stdout_raw()
            .ends_with(&format!(" man pages written to {}\n", dir.path().display()))
    );
}

const SRC_DDL: &str = "CREATE TABLE IF NOT EXISTS src_a (id STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen');\n";

#[test]
fn sql_errors_show_a_snippet_pointing_at_the_construct() {
    let (_t, root) = project(&[
        ("sources/src_a/sql-scripts/ddl.src_a.sql", SRC_DDL),
        (
            "intermediates/int_b/sql-scripts/ddl.int_b.sql",
            "CREATE TABLE IF NOT EXISTS int_b (id STRING) WITH ('connector' = 'kafka');\n",
        ),
        (
            "intermediates/int_b/sql-scripts/dml.int_b.sql",
            "INSERT INTO int_b\nSELECT a.id\nFROM src_a a\nJOIN src_typo t ON a.id = t.id;\n",
        ),
        (
            "facts/f/sql-scripts/ddl.f.sql",
            "CREATE TABLE IF NOT EXISTS f (id STRING) WITH ('connector' = 'kafka');\n",
        ),
        (
            "facts/f/sql-scripts/dml.f.sql",
            "INSERT INTO f\nSELECT id,\n\tFROM src_a WHERE (;\n",
        ),
    ]);
    let o = Test::outside(&["pipeline", "validate", root.to_str().unwrap()]);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert_eq!(
        err,
        "error[unknown-table]: pipelines/intermediates/int_b/sql-scripts/dml.int_b.sql:4:6: table 'int_b' reads 'src_typo', which no table folder defines and seeds/external_tables.json does not declare (use --allow-unknown to keep it as external)
  |
4 | JOIN src_typo t ON a.id = t.id;
  |      ^^^^^^^^
warning[sql-fallback]: pipelines/facts/f/sql-scripts/dml.f.sql:3:2: Expected an expression, found: FROM; references were read by the token-level extractor
  |
3 |     FROM src_a WHERE (;
  |     ^^^^
1 error(s), 1 warning(s)
"
    );

    // The same diagnostics as data.
    let o = Test::outside(&[
        "pipeline",
        "validate",
        root.to_str().unwrap(),
        "--output",
        "json",
    ]);
    let o = o.code(1);
    let diags: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(
        diags[0],
        serde_json::json!({
            "severity": "error",
            "code": "unknown-table",
            "file": "pipelines/intermediates/int_b/sql-scripts/dml.int_b.sql",
            "line": 4,
            "column": 6,
            "message": "table 'int_b' reads 'src_typo', which no table folder defines and seeds/external_tables.json does not declare (use --allow-unknown to keep it as external)"
        })
    );
    assert_eq!(diags[1]["code"], "sql-fallback");
    assert_eq!(
        (diags[1]["line"].as_u64(), diags[1]["column"].as_u64()),
        (Some(3), Some(2))
    );

    // `sql refs`: snippet in text mode, the warning as data in JSON.
    let f = root.join("facts/f/sql-scripts/dml.f.sql");
    let o = Test::outside(&["sql", "refs", f.to_str().unwrap()]);
    assert!(
        o.stderr_raw().ends_with(
            "dml.f.sql:3:2: Expected an expression, found: FROM; references were read by the token-level extractor\n  |\n3 |     FROM src_a WHERE (;\n  |     ^^^^\n"
        ),
        "{}",
        o.stderr_raw()
    );
    let o = Test::outside(&["sql", "refs", "--output", "json", f.to_str().unwrap()]);
    let refs: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let w = &refs[0]["warnings"][0];
    assert_eq!(
        (w["code"].as_str(), w["line"].as_u64(), w["column"].as_u64()),
        (Some("sql-fallback"), Some(3), Some(2))
    );
}

fn fixture_graph(format: &str) -> String {
    let (_t, root) = our_fixture();
    let o = Test::outside(&[
        "pipeline",
        "graph",
        root.to_str().unwrap(),
        "--format",
        format,
    ]);
    let o = o.success();
    o.stdout_raw()
}

#[test]
fn svg_of_the_example_project() {
    let svg = fixture_graph("svg");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" "));
    assert!(svg.ends_with("</svg>\n"));
    let json: serde_json::Value = serde_json::from_str(&fixture_graph("json")).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    let edges = json["edges"].as_array().unwrap();
    assert_eq!(svg.matches("<g class=\"node\" ").count(), nodes.len());
    assert_eq!(svg.matches("<path class=\"edge\" ").count(), edges.len());
    for header in [
        "sources",
        "seeds",
        "intermediates",
        "dimensions",
        "facts",
        "views",
    ] {
        assert!(svg.contains(&format!(">{header}</text>")), "{header}");
    }
    for product in ["sales", "c360", "inventory"] {
        assert!(
            svg.contains(&format!(">{product}</text>")),
            "legend {product}"
        );
    }
    assert_eq!(svg, fixture_graph("svg"), "deterministic");
    insta::assert_snapshot!("example_graph_svg", svg);
}

#[test]
fn html_lineage_page_is_self_contained() {
    let html = fixture_graph("html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network resource"
    );
    for forbidden in ["<link", "src=\"", "@import"] {
        assert!(!html.contains(forbidden), "{forbidden}");
    }
    assert!(html.contains("<svg width="), "inline SVG");
    assert!(
        html.contains("<input id=\"q\" list=\"names\""),
        "search box"
    );
    // The embedded graph is exactly `--format json`.
    let start = html
        .find("<script id=\"graph-data\" type=\"application/json\">")
        .unwrap();
    let data = &html[start..];
    let data = &data[data.find('>').unwrap() + 1..data.find("</script>").unwrap()];
    let embedded: serde_json::Value = serde_json::from_str(data).unwrap();
    let json: serde_json::Value = serde_json::from_str(&fixture_graph("json")).unwrap();
    assert_eq!(embedded, json);
    for n in json["nodes"].as_array().unwrap() {
        let name = n["name"].as_str().unwrap();
        assert!(
            html.contains(&format!("<option value=\"{name}\">")),
            "{name}"
        );
        assert!(html.contains(&format!("data-name=\"{name}\"")), "{name}");
    }
    assert!(html.contains("function select(name)") && html.contains("walk(name, parents)"));
    insta::assert_snapshot!("example_graph_html", html);
}

fn flinkpipe_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Outcome {
    let mut c = crate::support::command();
    c.args(args).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    Outcome::of(&args.join(" "), c.output().unwrap(), None)
}

#[test]
fn version_and_effective_configuration_with_secrets_masked() {
    let o = Test::outside(&["version"]);
    let o = o.success();
    assert_eq!(
        o.stdout_raw(),
        format!("flinkpipe {}\n", env!("CARGO_PKG_VERSION"))
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        "kafka:\n  cluster_type: stage\n  api_key: KAFKAKEY123\n  api_secret: KAFKASECRET456\nconfluent_cloud:\n  cloud_region: eu-west-1\n  api_key: CCKEY\n  api_secret: CCSECRET\nflink:\n  compute_pool_id: lfcp-42\n  api_key: FLINKKEY\n  api_secret: FLINKSECRET\napp:\n  products: [p1]\n",
    )
    .unwrap();
    let env = [
        ("SL_FLINK_API_KEY", "ENVFLINKKEY"),
        ("SL_FLINK_API_SECRET", "ENVFLINKSECRET"),
    ];
    // shift_left's spelling (`version --config`, ./config.yaml) and ours (`--show-config`).
    for args in [
        &["version", "--config"][..],
        &["version", "--show-config"],
        &["version", "--config", "config.yaml"],
    ] {
        let o = flinkpipe_env(args, dir.path(), &env);
        let o = o.success();
        let out = o.stdout_raw();
        assert!(
            out.starts_with(&format!(
                "# flinkpipe {}, configuration from config.yaml (secrets masked)\n",
                env!("CARGO_PKG_VERSION")
            )),
            "{out}"
        );
        for secret in [
            "KAFKAKEY123",
            "KAFKASECRET456",
            "CCKEY",
            "CCSECRET",
            "FLINKKEY",
            "FLINKSECRET",
            "ENVFLINK",
        ] {
            assert!(!out.contains(secret), "{secret} printed:\n{out}");
        }
        assert_eq!(out.matches("'****'").count(), 6, "{out}");
        for shown in [
            "cluster_type: stage",
            "cloud_region: eu-west-1",
            "compute_pool_id: lfcp-42",
            "- p1",
        ] {
            assert!(out.contains(shown), "{shown} missing:\n{out}");
        }
    }
    let o = flinkpipe_env(
        &["--output", "json", "version", "--config"],
        dir.path(),
        &env,
    );
    let o = o.success();
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(v["config"]["flink"]["api_secret"], "****");
    assert_eq!(v["config"]["kafka"]["cluster_type"], "stage");
}

/// `-v` logs written to a pipe (CI, a file) carry no colour escapes.
#[test]
fn verbose_logs_on_a_pipe_are_plain_text() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pipelines");
    let out = Test::outside(&["-v", "pipeline", "validate", fixtures.to_str().unwrap()]);
    let err = out.stderr_raw();
    assert!(err.contains("INFO"), "{err}");
    assert!(!err.contains('\u{1b}'), "escape codes on a pipe: {err:?}");
}

#[test]
fn environment_overrides_reach_statement_names_and_the_effective_configuration() {
    let (_t, root) = our_fixture();
    let cfg = root.parent().unwrap().join("config.yaml");
    std::fs::write(
        &cfg,
        "kafka:\n  cluster_type: prod\nconfluent_cloud:\n  cloud_region: eu-central-1\n",
    )
    .unwrap();
    let plan = |env: &[(&str, &str)]| {
        let o = flinkpipe_env(
            &[
                "--output",
                "json",
                "--config",
                cfg.to_str().unwrap(),
                "pipeline",
                "build-execution-plan",
                root.to_str().unwrap(),
                "--table-name",
                "src_sales_orders",
                "--offline",
            ],
            root.parent().unwrap(),
            env,
        );
        let o = o.success();
        let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
        v["nodes"][0]["ddl_statement_name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(plan(&[]), "prod-euc1-sales-ddl-src-sales-orders");
    // $SL_CLOUD_REGION wins over the file, as for the REST endpoint; an empty variable is ignored.
    assert_eq!(
        plan(&[("SL_CLOUD_REGION", "us-east-1")]),
        "prod-use1-sales-ddl-src-sales-orders"
    );
    assert_eq!(
        plan(&[("SL_CLOUD_REGION", "")]),
        "prod-euc1-sales-ddl-src-sales-orders"
    );
    // `version --config` prints the values in effect.
    let o = flinkpipe_env(
        &["--config", cfg.to_str().unwrap(), "version", "--config"],
        root.parent().unwrap(),
        &[
            ("SL_CLOUD_REGION", "us-east-1"),
            ("SL_FLINK_ENV_ID", "env-42"),
            ("FLINKPIPE_GATEWAY_URL", "http://gw:8083"),
            ("SL_FLINK_API_SECRET", "TOPSECRET"),
        ],
    );
    let o = o.success();
    let out = o.stdout_raw();
    for want in [
        "# statement names: prod-use1-<product>-<ddl|dml>-<table> (region us-east-1; target: Apache Flink SQL Gateway)",
        "cloud_region: us-east-1",
        "environment_id: env-42",
        "url: http://gw:8083",
    ] {
        assert!(out.contains(want), "{want} missing in:\n{out}");
    }
    assert!(!out.contains("TOPSECRET"), "{out}");
}

#[test]
fn dir_defaults_to_pipelines_env_then_the_current_folder() {
    let (_t, root) = our_fixture();
    let project_dir = root.parent().unwrap();
    // ./pipelines from the project folder.
    let o = flinkpipe_env(&["pipeline", "validate"], project_dir, &[]);
    let o = o.success();
    assert!(
        o.stdout_raw().starts_with("ok: 36 tables"),
        "{}",
        o.stdout_raw()
    );
    // $PIPELINES wins over ./pipelines; elsewhere without either: an error that says what to do.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = flinkpipe_env(
        &["pipeline", "validate"],
        elsewhere.path(),
        &[("PIPELINES", root.to_str().unwrap())],
    );
    o.success();
    let o = flinkpipe_env(&["pipeline", "validate"], elsewhere.path(), &[]);
    let o = o.code(1);
    let tried = std::path::absolute(elsewhere.path().join("pipelines")).unwrap();
    assert!(
        o.stderr_raw().contains(&format!(
            "pipelines folder pipelines ({}) does not exist or is not a folder (pass DIR, set $PIPELINES, or run the command inside a project: a folder with pipelines/ or below it)",
            tried.display()
        )),
        "{}",
        o.stderr_raw()
    );
    // Inside the project: from a table folder deep in the tree, and from a folder beside pipelines/.
    let deep = root.join("facts/c360/fct_customer_orders/sql-scripts");
    assert!(deep.is_dir(), "{}", deep.display());
    let o = flinkpipe_env(&["pipeline", "validate"], &deep, &[]);
    let o = o.success();
    assert!(
        o.stdout_raw().starts_with("ok: 36 tables"),
        "{}",
        o.stdout_raw()
    );
    let docs = project_dir.join("docs/notes");
    std::fs::create_dir_all(&docs).unwrap();
    let o = flinkpipe_env(&["pipeline", "validate"], &docs, &[]);
    let o = o.success();
    assert!(
        o.stdout_raw().starts_with("ok: 36 tables"),
        "{}",
        o.stdout_raw()
    );
    // `version --config` shows the configuration those commands use: the project's config.yaml.
    std::fs::write(
        project_dir.join("config.yaml"),
        "flinkpipe:\n  gateway:\n    url: http://project-gw:8083\n",
    )
    .unwrap();
    for (cwd, env) in [
        (deep.as_path(), vec![]),
        (
            elsewhere.path(),
            vec![("PIPELINES", root.to_str().unwrap())],
        ),
    ] {
        let o = flinkpipe_env(&["version", "--config"], cwd, &env);
        let o = o.success();
        let out = o.stdout_raw();
        assert!(
            out.contains("target: Apache Flink SQL Gateway")
                && out.contains("url: http://project-gw:8083"),
            "{out}"
        );
        assert!(out.contains("config.yaml (secrets masked)"), "{out}");
    }
}

/// A command lists only the options it accepts (#22): the offline planning options belong to
/// build-execution-plan, --compute-pool-id to the commands that run statements (and undeploy, which
/// shift_left's scripts give it), the cascade options to the commands that plan (not undeploy);
/// elsewhere clap refuses
/// them as it refuses any unknown option (exit 2), and --help does not show them.
#[test]
fn live_commands_list_only_the_options_they_accept() {
    let (_t, root) = our_fixture();
    let help = |cmd: &str| Test::outside(&["pipeline", cmd, "--help"]).stdout_raw();
    for (cmd, refused) in [
        (
            "status",
            &[
                "--offline",
                "--statement-status",
                "--live",
                "--compute-pool-id",
            ][..],
        ),
        // undeploy deletes the scope and its descendants whatever the cascade options say (#27).
        (
            "undeploy",
            &[
                "--offline",
                "--statement-status",
                "--live",
                "--may-start-descendants",
                "--force-ancestors",
                "--cross-product-deployment",
                "--dml-only",
                "--exclude-table-file-name",
            ][..],
        ),
        ("deploy", &["--offline", "--statement-status", "--live"][..]),
    ] {
        let text = help(cmd);
        for opt in refused {
            assert!(!text.contains(opt), "{cmd} --help lists {opt}: {text}");
            let mut args = vec![
                "pipeline",
                cmd,
                root.to_str().unwrap(),
                "--product-name",
                "sales",
                opt,
            ];
            if matches!(
                *opt,
                "--statement-status" | "--compute-pool-id" | "--exclude-table-file-name"
            ) {
                args.push("x");
            }
            let o = Test::outside(&args);
            let o = o.code(2);
            assert!(
                o.stderr_raw()
                    .contains(&format!("unexpected argument '{opt}'")),
                "{cmd} {opt}: {}",
                o.stderr_raw()
            );
        }
    }
    assert!(help("deploy").contains("--compute-pool-id"));
    let plan = help("build-execution-plan");
    for opt in [
        "--offline",
        "--statement-status",
        "--live",
        "--compute-pool-id",
    ] {
        assert!(plan.contains(opt), "{opt}: {plan}");
    }
    // Help texts say what the commands and groups do today.
    let deploy = help("deploy")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        deploy.contains("Confluent Cloud for Apache Flink, or an Apache Flink SQL Gateway"),
        "{deploy}"
    );
    assert!(!deploy.contains("against Confluent Cloud"), "{deploy}");
    let top = Test::outside(&["--help"])
        .stdout_raw()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!top.contains("Table inventory"), "{top}");
    assert!(!top.contains("Project-wide reports"), "{top}");
    assert!(top.contains("One table: create its folder"), "{top}");
}

#[test]
fn plan_dir_scope_accepts_paths_from_here() {
    let (_t, root) = our_fixture();
    let plan = |cwd: &Path, dir_arg: &str, scope: &str| {
        node_count(
            &[
                "--output",
                "json",
                "pipeline",
                "build-execution-plan",
                dir_arg,
                "--dir",
                scope,
                "--offline",
            ],
            cwd,
        )
    };
    let root_s = root.to_str().unwrap();
    let expected = plan(root.parent().unwrap(), root_s, "facts/sales");
    assert!(expected > 0);
    let abs = root.join("facts/sales");
    assert_eq!(
        plan(root.parent().unwrap(), root_s, abs.to_str().unwrap()),
        expected
    );
    assert_eq!(plan(&root, ".", "./facts/sales"), expected);
    assert_eq!(plan(&root.join("facts"), "..", "sales"), expected);
}

#[test]
fn select_path_accepts_paths_from_here() {
    let (_t, root) = our_fixture();
    let count = |cwd: &Path, dir_arg: &str, sel: &str| {
        node_count(
            &[
                "pipeline", "graph", dir_arg, "--select", sel, "--format", "json",
            ],
            cwd,
        )
    };
    let root_s = root.to_str().unwrap();
    let expected = count(root.parent().unwrap(), root_s, "path:facts/sales");
    assert!(expected > 0);
    let abs = format!("+path:{}", root.join("facts/sales").display());
    assert_eq!(
        count(root.parent().unwrap(), root_s, &abs),
        count(root.parent().unwrap(), root_s, "+path:facts/sales")
    );
    assert_eq!(count(&root, ".", "path:./facts/sales"), expected);
}

/// Runs a command that prints JSON with a `nodes` array (a plan, a graph) and returns how many nodes.
fn node_count(args: &[&str], cwd: &Path) -> usize {
    let o = flinkpipe_env(args, cwd, &[]);
    let o = o.success();
    let v: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    v["nodes"].as_array().unwrap().len()
}

/// #22: `status` on the SQL Gateway after a clean deploy — DDL statements live only in a deploy's
/// session, so they are folded into their table's row (a source shows `session`, its plan `declare`)
/// and the default text view fits 120 columns; `-v` keeps the full detail.
#[test]
fn gateway_status_folds_session_ddl_and_fits_120_columns() {
    use flinkpipe::ops::status::{StatementRow, StatusReport};
    use flinkpipe::ops::target::TargetKind;
    use flinkpipe::plan::Action;
    use flinkpipe::target::StatementKind;
    let row = |table: &str, stmt: &str, kind: StatementKind, phase: Option<&str>, plan: Action| {
        StatementRow {
            table_name: table.into(),
            statement: stmt.into(),
            phase: phase.map(flinkpipe::target::Phase::parse),
            sql_drift: phase.map(|_| false),
            plan_action: plan,
            plan_redeclares: kind == StatementKind::Ddl && plan == Action::Create,
            kind,
            session_scoped: kind == StatementKind::Ddl,
            detail: phase.map(|_| format!("job {} runs: {}", "0".repeat(32), "x".repeat(200))),
            rewritten_by: Vec::new(),
            compute_pool: None,
            lag: None,
            server: Default::default(),
        }
    };
    let report = StatusReport {
        scope: "folder pipelines".into(),
        target: "SQL Gateway http://127.0.0.1:8083".into(),
        target_kind: TargetKind::SqlGateway,
        statements: vec![
            row(
                "src_sales_orders",
                "demo-sales-ddl-src-sales-orders",
                StatementKind::Ddl,
                None,
                Action::Create,
            ),
            row(
                "int_sales_orders_enriched",
                "demo-sales-ddl-int-sales-orders-enriched",
                StatementKind::Ddl,
                None,
                Action::Skip,
            ),
            row(
                "int_sales_orders_enriched",
                "demo-sales-dml-int-sales-orders-enriched",
                StatementKind::Dml,
                Some("RUNNING"),
                Action::Skip,
            ),
        ],
        blue_green: Vec::new(),
        orphans: Vec::new(),
        unit_test_statements: Vec::new(),
        blue_readers: Default::default(),
        environment: "dev".into(),
        lag: None,
        materialized_tables: Vec::new(),
    };
    let (text, shown) = flinkpipe::cli::render::status_statements(&report, false);
    assert_eq!(shown, 2, "{text}");
    assert!(
        !text.contains("demo-sales-ddl-int-sales-orders-enriched"),
        "{text}"
    );
    assert!(!text.contains("absent"), "{text}");
    let src = text
        .lines()
        .find(|l| l.starts_with("src_sales_orders "))
        .unwrap();
    assert_eq!(
        src.split_whitespace().take(5).collect::<Vec<_>>(),
        [
            "src_sales_orders",
            "demo-sales-ddl-src-sales-orders",
            "session",
            "-",
            "declare"
        ],
        "{text}"
    );
    let job = text.lines().find(|l| l.contains("-dml-")).unwrap();
    assert_eq!(job.split_whitespace().nth(2), Some("RUNNING"));
    assert_eq!(job.split_whitespace().nth(4), Some("skip"));
    assert!(job.ends_with('…'), "{job}");
    for l in text.lines() {
        assert!(
            l.chars().count() <= 120,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    // -v: the whole detail.
    let (full, _) = flinkpipe::cli::render::status_statements(&report, true);
    assert!(full.contains(&"x".repeat(200)), "{full}");
}

/// #22: the five keys of shift_left's config.yaml that were warned as unknown are read with
/// shift_left's meaning (or accepted where they do nothing here); an unknown key gets a "did you mean".
#[test]
fn shift_left_config_keys_are_read_with_their_meaning_and_typos_get_a_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let pipelines = tmp.path().join("pipelines");
    std::fs::create_dir_all(pipelines.join("sources")).unwrap();
    let cfg = tmp.path().join("config.yaml");
    std::fs::write(
        &cfg,
        "kafka:\n  cluster_type: dev\n  sasl.mechanism: PLAIN\nconfluent_cloud:\n  provider: aws\n  cloud_region: us-west-2\nflink:\n  endpoint: https://flink.private.example\n  statement_name_post_fix: None\napp:\n  src_table_name_prefix: raw_\nflinkpipe:\n  gatway:\n    url: http://127.0.0.1:9\n",
    )
    .unwrap();
    let o = Test::outside(&["--config", cfg.to_str().unwrap(), "version", "--config"]);
    let o = o.success();
    let err = o.stderr_raw();
    for key in [
        "sasl.mechanism",
        "confluent_cloud.provider",
        "flink.endpoint",
        "statement_name_post_fix",
        "src_table_name_prefix",
    ] {
        assert!(!err.contains(key), "{key} warned: {err}");
    }
    assert!(
        err.contains("unknown key 'flinkpipe.gatway' ignored (did you mean 'flinkpipe.gateway'?)"),
        "{err}"
    );
    let out = o.stdout_raw();
    // provider is the cloud provider, endpoint the Flink SQL endpoint, as in shift_left.
    assert!(out.contains("cloud_provider: aws"), "{out}");
    assert!(
        out.contains("sql_endpoint: https://flink.private.example"),
        "{out}"
    );
    // src_table_name_prefix names the sources table init creates, and the naming lint follows it.
    let o = Test::outside(&[
        "--config",
        cfg.to_str().unwrap(),
        "table",
        "init",
        "orders",
        "sources",
        "--product",
        "sales",
        "--pipelines",
        pipelines.to_str().unwrap(),
    ]);
    let o = o.success();
    assert!(
        pipelines
            .join("sources/sales/raw_orders/sql-scripts/ddl.raw_sales_orders.sql")
            .is_file(),
        "{}",
        o.stdout_raw()
    );
    let o = Test::outside(&[
        "--config",
        cfg.to_str().unwrap(),
        "table",
        "validate-table-names",
        pipelines.to_str().unwrap(),
    ]);
    o.success();
}

/// `--output json` of the commands that write files is the serialisation of their reports (#27),
/// whole: `table init` and `project init` (what was created), `delete-all-metadata --dry-run` (the
/// files it would delete) and `version`.
#[test]
fn json_of_file_commands_is_their_report() {
    let t = Test::fixture();
    let created = t
        .cmd(&[
            "--output",
            "json",
            "table",
            "init",
            "returns",
            "sources",
            "--product",
            "sales",
            "--pipelines",
            "[PIPELINES]",
        ])
        .success()
        .stdout();
    insta::assert_snapshot!("table_init_json", created);
    let project = t
        .cmd(&["--output", "json", "project", "init", "demo", "[ROOT]"])
        .success()
        .stdout();
    insta::assert_snapshot!("project_init_json", project);
    t.cmd(&["pipeline", "build-all-metadata", "[PIPELINES]"])
        .success();
    let listed = t
        .cmd(&[
            "--output",
            "json",
            "pipeline",
            "delete-all-metadata",
            "[PIPELINES]",
            "--dry-run",
        ])
        .success()
        .stdout_json();
    assert_eq!(listed["dry_run"], true);
    assert_eq!(listed["deleted"], 0);
    let files = listed["files"].as_array().unwrap();
    assert!(
        files.len() > 30,
        "a definition per table and the graph: {listed:#}"
    );
    assert!(
        files
            .iter()
            .all(|f| Path::new(f.as_str().unwrap()).exists())
    );
    let version = t
        .cmd(&["--output", "json", "version"])
        .success()
        .stdout_json();
    assert_eq!(
        version,
        serde_json::json!({"version": env!("CARGO_PKG_VERSION")})
    );
}
