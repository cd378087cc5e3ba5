//! Scaffolding: `project init`, `table init` (templates, overrides, naming) and the naming lint
//! `table validate-table-names`, run through the real binary on temporary folders.

use crate::support::Test;
use crate::support::test::Outcome;
use crate::support::*;
use flinkpipe::config::Config;
use std::path::{Path, PathBuf};

/// Every file under `root`, relative, sorted (`/` separators).
fn files_under(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    v.sort();
    v
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// A fresh data-product project `shop` with product `sales`; returns (guard, project root).
fn shop() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let o = Test::outside(&[
        "project",
        "init",
        "shop",
        tmp.path().to_str().unwrap(),
        "--project-type",
        "data_product",
        "--product",
        "sales",
    ]);
    o.success();
    let root = tmp.path().join("shop");
    (tmp, root)
}

fn table_init(root: &Path, args: &[&str]) -> Outcome {
    let pipelines = root.join("pipelines");
    let mut all = vec!["table", "init"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--pipelines", pipelines.to_str().unwrap()]);
    Test::outside(&all)
}

#[test]
fn project_init_kimball_creates_the_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Test::outside(&["project", "init", "dwh", tmp.path().to_str().unwrap()]);
    let o = o.success();
    let root = tmp.path().join("dwh");
    assert_eq!(
        files_under(&root),
        [
            ".gitignore",
            "README.md",
            "config.yaml",
            "pipelines/dimensions/.gitkeep",
            "pipelines/facts/.gitkeep",
            "pipelines/intermediates/.gitkeep",
            "pipelines/seeds/.gitkeep",
            "pipelines/sources/.gitkeep",
            "pipelines/views/.gitkeep",
        ]
    );
    assert!(
        o.stdout_raw().starts_with("created project "),
        "{}",
        o.stdout_raw()
    );
    // The config uses only shift_left's keys, so it loads without a warning.
    let cfg = Config::load(Some(&root.join("config.yaml"))).unwrap();
    assert!(cfg.unknown_keys.is_empty(), "{:?}", cfg.unknown_keys);
    assert_eq!(cfg.kafka.cluster_type, "dev");
    assert!(cfg.app.products.is_empty());
    assert!(read(root.join("README.md")).starts_with("# dwh\n"));
    assert!(read(root.join(".gitignore")).contains("pipelines/inventory.json"));
}

#[test]
fn project_init_data_product_has_a_folder_per_product() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Test::outside(&[
        "--output",
        "json",
        "project",
        "init",
        "dp",
        tmp.path().to_str().unwrap(),
        "--project-type",
        "data_product",
    ]);
    let o = o.success();
    let root = tmp.path().join("dp");
    let expected = [
        ".gitignore",
        "README.md",
        "config.yaml",
        "pipelines/dimensions/data_product_1/.gitkeep",
        "pipelines/facts/data_product_1/.gitkeep",
        "pipelines/intermediates/data_product_1/.gitkeep",
        "pipelines/seeds/data_product_1/.gitkeep",
        "pipelines/sources/data_product_1/.gitkeep",
        "pipelines/views/data_product_1/.gitkeep",
    ];
    assert_eq!(files_under(&root), expected);
    let json: serde_json::Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    assert_eq!(json["files"], serde_json::json!(expected));
    let cfg = Config::load(Some(&root.join("config.yaml"))).unwrap();
    assert_eq!(cfg.app.products, ["data_product_1"]);
    assert!(read(root.join("README.md")).contains(
        "flinkpipe table init orders intermediates --product data_product_1 --source src_data_product_1_orders"
    ));
}

#[test]
fn project_init_refuses_to_overwrite_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("dwh");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("README.md"), "mine\n").unwrap();
    let o = Test::outside(&["project", "init", "dwh", tmp.path().to_str().unwrap()]);
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw(),
        format!(
            "error: refusing to overwrite existing file(s): {}\n",
            root.join("README.md").display()
        )
    );
    assert_eq!(files_under(&root), ["README.md"]);
    assert_eq!(read(root.join("README.md")), "mine\n");
}

#[test]
fn table_init_per_layer_validates_and_parses_cleanly() {
    let (_t, root) = shop();
    for args in [
        &["orders", "sources", "--product", "sales"][..],
        &["stores", "seeds", "--product", "sales"],
        &[
            "orders",
            "intermediates",
            "--product",
            "sales",
            "--source",
            "src_sales_orders",
        ],
        &[
            "stores",
            "dimensions",
            "--product",
            "sales",
            "--source",
            "seed_sales_stores",
        ],
        &[
            "revenue",
            "facts",
            "--product",
            "sales",
            "--source",
            "int_sales_orders",
            "--source",
            "sales_dim_stores",
        ],
        &[
            "sales_mv_revenue",
            "views",
            "--product",
            "sales",
            "--source",
            "sales_fct_revenue",
        ],
    ] {
        table_init(&root, args).success();
    }
    let p = root.join("pipelines");
    let tables: Vec<String> = files_under(&p)
        .into_iter()
        .filter(|f| !f.ends_with(".gitkeep"))
        .collect();
    assert_eq!(
        tables,
        [
            "dimensions/sales/dim_stores/Makefile",
            "dimensions/sales/dim_stores/sql-scripts/ddl.sales_dim_stores.sql",
            "dimensions/sales/dim_stores/sql-scripts/dml.sales_dim_stores.sql",
            "dimensions/sales/dim_stores/tests/README.md",
            "facts/sales/fct_revenue/Makefile",
            "facts/sales/fct_revenue/sql-scripts/ddl.sales_fct_revenue.sql",
            "facts/sales/fct_revenue/sql-scripts/dml.sales_fct_revenue.sql",
            "facts/sales/fct_revenue/tests/README.md",
            "intermediates/sales/int_orders/Makefile",
            "intermediates/sales/int_orders/sql-scripts/ddl.int_sales_orders.sql",
            "intermediates/sales/int_orders/sql-scripts/dml.int_sales_orders.sql",
            "intermediates/sales/int_orders/tests/README.md",
            "seeds/sales/seed_stores/Makefile",
            "seeds/sales/seed_stores/sql-scripts/ddl.seed_sales_stores.sql",
            "seeds/sales/seed_stores/sql-scripts/dml.seed_sales_stores.sql",
            "seeds/sales/seed_stores/tests/README.md",
            "sources/sales/src_orders/Makefile",
            "sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql",
            "sources/sales/src_orders/tests/README.md",
            "views/sales/mv_revenue/Makefile",
            "views/sales/mv_revenue/sql-scripts/ddl.sales_mv_revenue.sql",
            "views/sales/mv_revenue/sql-scripts/dml.sales_mv_revenue.sql",
            "views/sales/mv_revenue/tests/README.md",
        ]
    );

    // Every generated SQL file parses cleanly, with the expected sinks and sources.
    let expect = [
        ("ddl.src_sales_orders.sql", "src_sales_orders", ""),
        ("ddl.seed_sales_stores.sql", "seed_sales_stores", ""),
        ("dml.seed_sales_stores.sql", "seed_sales_stores", ""),
        ("ddl.int_sales_orders.sql", "int_sales_orders", ""),
        (
            "dml.int_sales_orders.sql",
            "int_sales_orders",
            "src_sales_orders",
        ),
        ("ddl.sales_dim_stores.sql", "sales_dim_stores", ""),
        (
            "dml.sales_dim_stores.sql",
            "sales_dim_stores",
            "seed_sales_stores",
        ),
        ("ddl.sales_fct_revenue.sql", "sales_fct_revenue", ""),
        (
            "dml.sales_fct_revenue.sql",
            "sales_fct_revenue",
            "int_sales_orders,sales_dim_stores",
        ),
        ("ddl.sales_mv_revenue.sql", "sales_mv_revenue", ""),
        (
            "dml.sales_mv_revenue.sql",
            "sales_mv_revenue",
            "sales_fct_revenue",
        ),
    ];
    let sql_files: Vec<String> = files_under(&p)
        .into_iter()
        .filter(|f| f.ends_with(".sql"))
        .collect();
    assert_eq!(sql_files.len(), expect.len());
    for (file, sink, sources) in expect {
        let rel = sql_files.iter().find(|f| f.ends_with(file)).unwrap();
        let a = flinkpipe::sql::analyze(&read(p.join(rel)));
        assert!(a.warnings.is_empty(), "{rel}: {:?}", a.warnings);
        let sinks: Vec<String> = a.sinks().iter().map(|n| n.dotted()).collect();
        let srcs: Vec<String> = a.sources().iter().map(|n| n.dotted()).collect();
        assert_eq!(sinks, [sink], "{rel}");
        assert_eq!(srcs.join(","), sources, "{rel}");
    }

    // The whole project validates, and follows its own naming convention.
    let o = Test::outside(&["pipeline", "validate", p.to_str().unwrap()]);
    let o = o.success();
    assert_eq!(o.stdout_raw(), "ok: 6 tables, 5 edges, 0 warning(s)\n");
    assert_eq!(o.stderr_raw(), "");
    let o = Test::outside(&[
        "--config",
        root.join("config.yaml").to_str().unwrap(),
        "table",
        "validate-table-names",
        p.to_str().unwrap(),
    ]);
    let o = o.success();
    assert_eq!(
        o.stdout_raw(),
        "ok: 6 table folders follow the naming convention\n"
    );

    // Golden files: the DDL of each kind of layer, a two-source DML, the seed rows, the Makefile.
    insta::assert_snapshot!(
        "table_init_ddl_source",
        read(p.join("sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql"))
    );
    insta::assert_snapshot!(
        "table_init_ddl_fact",
        read(p.join("facts/sales/fct_revenue/sql-scripts/ddl.sales_fct_revenue.sql"))
    );
    insta::assert_snapshot!(
        "table_init_dml_fact",
        read(p.join("facts/sales/fct_revenue/sql-scripts/dml.sales_fct_revenue.sql"))
    );
    insta::assert_snapshot!(
        "table_init_dml_seed",
        read(p.join("seeds/sales/seed_stores/sql-scripts/dml.seed_sales_stores.sql"))
    );
    insta::assert_snapshot!(
        "table_init_makefile",
        read(p.join("facts/sales/fct_revenue/Makefile"))
    );
}

#[test]
fn table_init_errors_are_clear_and_write_nothing() {
    let (_t, root) = shop();
    let before = files_under(&root);
    let o = table_init(&root, &["orders", "facts", "--product", "sales"]);
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw(),
        "error: a table in facts reads other tables: name them with --source TABLE (repeatable)\n"
    );
    let o = table_init(
        &root,
        &[
            "orders",
            "facts",
            "--product",
            "sales",
            "--source",
            "src_nope",
        ],
    );
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw(),
        "error: --source 'src_nope': no table of the project (or of seeds/external_tables.json) has this name\n"
    );
    let o = table_init(&root, &["orders", "gold"]);
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw(),
        "error: unknown layer 'gold': use sources, intermediates, dimensions, facts, views or seeds, or a folder <layer>[/<product>] of the pipelines folder\n"
    );
    table_init(&root, &["bad-name", "sources"])
        .code(1)
        .stderr_is("error: 'bad-name' is not a valid table name: use letters, digits and underscores, starting with a letter\n");
    table_init(&root, &["orders", "sources", "--product", "sa les"])
        .code(1)
        .stderr_is("error: 'sa les' is not a valid product name: use letters, digits and underscores, starting with a letter\n");
    assert_eq!(files_under(&root), before);

    // A second init of the same table refuses to overwrite it.
    table_init(&root, &["orders", "sources", "--product", "sales"]).success();
    let ddl = root.join("pipelines/sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql");
    std::fs::write(&ddl, "-- edited\n").unwrap();
    let o = table_init(
        &root,
        &["src_sales_orders", "sources", "--product", "sales"],
    );
    let o = o.code(1);
    assert!(
        o.stderr_raw()
            .starts_with("error: refusing to overwrite existing file(s): ")
    );
    assert_eq!(read(&ddl), "-- edited\n");

    // Without --pipelines, $PIPELINES or ./pipelines: a clear error.
    let o = Test::outside(&["table", "init", "x", "sources"]);
    let o = o.code(1);
    assert!(
        o.stderr_raw().starts_with(
            "error: no pipelines folder at pipelines (use --pipelines DIR or $PIPELINES)"
        ),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn project_templates_override_the_builtin_ones() {
    let (_t, root) = shop();
    let tpl = root.join("templates/table");
    std::fs::create_dir_all(&tpl).unwrap();
    std::fs::write(
        tpl.join("ddl.sql"),
        "-- our own template\nCREATE TABLE IF NOT EXISTS {{ table }} (\n  k STRING,\n  PRIMARY KEY (k) NOT ENFORCED\n) DISTRIBUTED BY HASH(k) INTO 6 BUCKETS WITH (\n  'changelog.mode' = '{{changelog_mode}}',\n  'kafka.cleanup-policy' = '{{cleanup_policy}}'\n);\n",
    )
    .unwrap();
    table_init(&root, &["orders", "sources", "--product", "sales"]).success();
    let folder = root.join("pipelines/sources/sales/src_orders");
    assert_eq!(
        read(folder.join("sql-scripts/ddl.src_sales_orders.sql")),
        "-- our own template\nCREATE TABLE IF NOT EXISTS src_sales_orders (\n  k STRING,\n  PRIMARY KEY (k) NOT ENFORCED\n) DISTRIBUTED BY HASH(k) INTO 6 BUCKETS WITH (\n  'changelog.mode' = 'upsert',\n  'kafka.cleanup-policy' = 'delete'\n);\n"
    );
    // Templates not overridden stay the built-in ones.
    assert!(read(folder.join("Makefile")).contains("TABLE := src_sales_orders"));

    // A typo in an overriding template is an error naming it, and nothing is written.
    std::fs::write(tpl.join("Makefile"), "all:\n\techo {{tabel}}\n").unwrap();
    let o = table_init(&root, &["payments", "sources", "--product", "sales"]);
    let o = o.code(1);
    assert_eq!(
        o.stderr_raw(),
        format!(
            "error: {}:2: unknown placeholder '{{{{tabel}}}}'\n",
            tpl.join("Makefile").display()
        )
    );
    assert!(!root.join("pipelines/sources/sales/src_payments").exists());
}

const GOOD_SRC: &str = "CREATE TABLE IF NOT EXISTS src_sales_orders (
  id STRING,
  PRIMARY KEY (id) NOT ENFORCED
) DISTRIBUTED BY HASH(id) INTO 1 BUCKETS WITH (
  'changelog.mode' = 'upsert',
  'kafka.cleanup-policy' = 'delete',
  'key.avro-registry.schema-context' = '.flink-dev',
  'value.avro-registry.schema-context' = '.flink-dev'
);
";

const BAD_SRC: &str = "-- raw orders
CREATE TABLE orders (
  id STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'kafka.retention.time' = '0',
  'changelog.mode' = 'retract'
);
";

#[test]
fn naming_lint_reports_each_mistake_with_file_and_line() {
    let (tmp, p) = project(&[
        (
            "sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql",
            GOOD_SRC,
        ),
        (
            "sources/sales/orders_raw/sql-scripts/ddl.orders.sql",
            BAD_SRC,
        ),
        (
            "facts/sales/fct_x/sql-scripts/ddl.sales_fct_x.sql",
            "CREATE TABLE IF NOT EXISTS sales_fct_x (id STRING) WITH ('connector' = 'datagen');\n",
        ),
        (
            "facts/sales/fct_x/sql-scripts/dml.fct_x.sql",
            "INSERT INTO sales_fct_x\nSELECT id FROM src_sales_orders;\n",
        ),
        (
            "facts/marketing/fct_y/sql-scripts/ddl.marketing_fct_y.sql",
            "CREATE TABLE IF NOT EXISTS marketing_fct_y (id STRING) WITH ('connector' = 'datagen');\n",
        ),
        (
            "views/sales/revenue/sql-scripts/ddl.revenue_view.sql",
            "\n\nCREATE TABLE IF NOT EXISTS revenue_view (id STRING) WITH ('connector' = 'datagen');\n",
        ),
    ]);
    let cfg = tmp.path().join("config.yaml");
    std::fs::write(&cfg, "app:\n  products: [sales]\n").unwrap();
    let o = Test::outside(&[
        "--output",
        "json",
        "table",
        "validate-table-names",
        p.to_str().unwrap(),
    ]);
    let o = o.code(1);
    let findings: Vec<serde_json::Value> = serde_json::from_str(&o.stdout_raw()).unwrap();
    let lines: Vec<String> = findings
        .iter()
        .map(|d| {
            format!(
                "{} {}:{}: {}",
                d["code"].as_str().unwrap(),
                d["file"].as_str().unwrap(),
                d["line"],
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "naming-product pipelines/facts/marketing/fct_y/sql-scripts/ddl.marketing_fct_y.sql:1: product 'marketing' is not listed in app.products of the configuration",
            "naming-file pipelines/facts/sales/fct_x/sql-scripts/dml.fct_x.sql:1: file should be named dml.sales_fct_x.sql after the table it writes",
            "naming-cleanup-policy pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:2: 'kafka.cleanup-policy' is missing; sources tables use 'kafka.cleanup-policy' = 'delete'",
            "naming-schema-context pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:2: 'key.avro-registry.schema-context' is missing",
            "naming-schema-context pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:2: 'value.avro-registry.schema-context' is missing",
            "naming-table pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:2: table 'orders' in sources of product sales should be named src_sales_…",
            "naming-if-not-exists pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:2: the DDL should use CREATE TABLE IF NOT EXISTS (statements are re-run on redeploy)",
            "naming-changelog-mode pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:7: 'changelog.mode' is 'retract'; sources tables use 'upsert'",
            "naming-table pipelines/views/sales/revenue/sql-scripts/ddl.revenue_view.sql:3: table 'revenue_view' in views of product sales should be named sales_mv_…",
        ]
    );
    // Without the configuration, any product is accepted; the rest stays.
    let _ = std::fs::remove_file(&cfg);
    let o = Test::outside(&["table", "validate-table-names", p.to_str().unwrap()]);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert!(!err.contains("naming-product"), "{err}");
    // Text mode: first line as everywhere, then the snippet.
    assert!(
        err.contains(
            "error[naming-changelog-mode]: pipelines/sources/sales/orders_raw/sql-scripts/ddl.orders.sql:7: 'changelog.mode' is 'retract'; sources tables use 'upsert'\n  |\n7 |   'changelog.mode' = 'retract'\n"
        ),
        "{err}"
    );
    assert!(err.ends_with("8 error(s), 0 warning(s)\n"), "{err}");
}

#[test]
fn kimball_tables_without_product_and_configured_layer_folders() {
    let tmp = tempfile::tempdir().unwrap();
    Test::outside(&["project", "init", "dwh", tmp.path().to_str().unwrap()]).success();
    let root = tmp.path().join("dwh");
    // A layer folder of flinkpipe.layers is used as given; the table type comes from the mapping.
    let cfg = root.join("config.yaml");
    let text = read(&cfg)
        + "flinkpipe:\n  layers:\n    bronze: source\n  naming:\n    cleanup_policy:\n      facts: delete\n";
    std::fs::write(&cfg, text).unwrap();
    table_init(&root, &["orders", "bronze"]).success();
    table_init(&root, &["orders", "fact", "--source", "src_orders"]).success();
    let p = root.join("pipelines");
    assert!(
        p.join("bronze/src_orders/sql-scripts/ddl.src_orders.sql")
            .is_file()
    );
    let ddl = read(p.join("facts/fct_orders/sql-scripts/ddl.fct_orders.sql"));
    assert!(
        ddl.contains("CREATE TABLE IF NOT EXISTS fct_orders ("),
        "{ddl}"
    );
    assert!(
        ddl.contains("'changelog.mode' = 'retract'")
            && ddl.contains("'kafka.cleanup-policy' = 'delete'"),
        "{ddl}"
    );
    assert!(read(p.join("facts/fct_orders/Makefile")).contains("PIPELINES := $(abspath ../..)"));
    let cfg_arg = cfg.to_str().unwrap();
    let o = Test::outside(&[
        "--config",
        cfg_arg,
        "pipeline",
        "validate",
        p.to_str().unwrap(),
    ]);
    let o = o.success();
    assert_eq!(o.stdout_raw(), "ok: 2 tables, 1 edges, 0 warning(s)\n");
    let o = Test::outside(&["table", "validate-table-names", p.to_str().unwrap()]);
    o.success();
}

#[test]
fn table_makefile_runs_flinkpipe_on_its_project() {
    let (_t, root) = shop();
    table_init(&root, &["orders", "sources", "--product", "sales"]).success();
    table_init(
        &root,
        &[
            "orders",
            "intermediates",
            "--product",
            "sales",
            "--source",
            "src_sales_orders",
        ],
    )
    .success();
    // The project's configuration names the statements; another project's exported configuration
    // does not apply.
    std::fs::write(root.join("config.yaml"), "kafka:\n  cluster_type: stage\n").unwrap();
    let other = root.join("other-config.yaml");
    std::fs::write(&other, "kafka:\n  cluster_type: prod\n").unwrap();
    let folder = root.join("pipelines/intermediates/sales/int_orders");
    let o = std::process::Command::new("make")
        .args(["-s", "plan", "validate"])
        .arg(format!("FLINKPIPE={}", env!("CARGO_BIN_EXE_flinkpipe")))
        .current_dir(&folder)
        .env_remove("PIPELINES")
        .env("SL_CONFIG_FILE", &other)
        .env_remove("CONFIG_FILE")
        .output()
        .unwrap();
    let o = Outcome::of("make", o, None);
    let o = o.success();
    let out = o.stdout_raw();
    assert!(
        out.starts_with("Execution plan for table int_sales_orders\n"),
        "{out}"
    );
    assert!(out.contains("create  src_sales_orders"), "{out}");
    assert!(
        out.contains("stage-usw2-sales-ddl-src-sales-orders"),
        "{out}"
    );
    assert!(!out.contains("prod-"), "{out}");
    // Without --config, a command run from the table folder finds the project's config.yaml too.
    let o = crate::support::command()
        .args([
            "pipeline",
            "build-execution-plan",
            "../../..",
            "--table-name",
            "int_sales_orders",
        ])
        .current_dir(&folder)
        .output()
        .unwrap();
    let o = Outcome::of("flinkpipe", o, None);
    let o = o.success();
    assert!(
        o.stdout_raw()
            .contains("stage-usw2-sales-dml-int-sales-orders"),
        "{}",
        o.stdout_raw()
    );
    assert!(
        out.ends_with("ok: 2 tables, 1 edges, 0 warning(s)\n"),
        "{out}"
    );
}

/// #22: the generated Makefile finds the binary through `FLINKPIPE ?= flinkpipe` on PATH, and says
/// clearly what to do when it is absent.
#[test]
fn table_makefile_finds_flinkpipe_on_path_or_says_how_to_get_it() {
    let (_t, root) = shop();
    table_init(&root, &["orders", "sources", "--product", "sales"]).success();
    let folder = root.join("pipelines/sources/sales/src_orders");
    let make = |path: &str| {
        let o = std::process::Command::new("make")
            .args(["-s", "validate"])
            .current_dir(&folder)
            .env("PATH", path)
            .env_remove("PIPELINES")
            .env_remove("SL_CONFIG_FILE")
            .env_remove("CONFIG_FILE")
            .env_remove("FLINKPIPE")
            .output()
            .unwrap();
        Outcome::of("make -s validate", o, None)
    };
    // Not on PATH: make stops before running anything, naming the fix.
    let o = make("/usr/bin:/bin");
    let o = o.failure();
    let err = o.stderr_raw();
    assert!(
        err.contains("'flinkpipe' not found: put flinkpipe on PATH (`make install` in the flinkpipe repository runs `cargo install --path . --locked`), or give its path: make plan FLINKPIPE=/path/to/flinkpipe"),
        "{err}"
    );
    // On PATH (as `make install` puts it): the default FLINKPIPE finds it.
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_flinkpipe"), bin.join("flinkpipe")).unwrap();
    let o = make(&format!("{}:/usr/bin:/bin", bin.display()));
    let o = o.success();
    assert_eq!(o.stdout_raw(), "ok: 1 tables, 0 edges, 0 warning(s)\n");
}

/// #22: `table init` in a project that deploys to the SQL Gateway writes DDL for it — `kafka` for a
/// source, `upsert-kafka` for a keyed table, `'topic'`, JSON formats, the configured broker — and
/// nothing Confluent-only.
#[test]
fn table_init_follows_a_gateway_target() {
    let (_t, root) = shop();
    std::fs::write(
        root.join("config.yaml"),
        "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:9\n  unit_tests:\n    kafka_bootstrap_servers: broker.local:9092\n",
    )
    .unwrap();
    table_init(&root, &["orders", "sources", "--product", "sales"]).success();
    table_init(
        &root,
        &[
            "orders",
            "intermediates",
            "--product",
            "sales",
            "--source",
            "src_sales_orders",
        ],
    )
    .success();
    let p = root.join("pipelines");
    let src = read(p.join("sources/sales/src_orders/sql-scripts/ddl.src_sales_orders.sql"));
    let int = read(p.join("intermediates/sales/int_orders/sql-scripts/ddl.int_sales_orders.sql"));
    for (ddl, connector) in [
        (&src, "'connector' = 'kafka'"),
        (&int, "'connector' = 'upsert-kafka'"),
    ] {
        assert!(ddl.contains(connector), "{ddl}");
        assert!(
            ddl.contains("'properties.bootstrap.servers' = 'broker.local:9092'"),
            "{ddl}"
        );
        for confluent_only in [
            "avro-registry",
            "DISTRIBUTED BY",
            "changelog.mode",
            "kafka.cleanup-policy",
        ] {
            assert!(!ddl.contains(confluent_only), "{confluent_only}: {ddl}");
        }
    }
    assert!(
        src.contains("'topic' = 'src_sales_orders'") && src.contains("'format' = 'json'"),
        "{src}"
    );
    assert!(
        !src.contains("PRIMARY KEY"),
        "a kafka source has no key: {src}"
    );
    assert!(
        int.contains("'topic' = 'int_sales_orders'")
            && int.contains("PRIMARY KEY (id) NOT ENFORCED"),
        "{int}"
    );
    // Every file parses, and the project passes the CI gate and the naming lint.
    for f in files_under(&p).into_iter().filter(|f| f.ends_with(".sql")) {
        let a = flinkpipe::sql::analyze(&read(p.join(&f)));
        assert!(a.warnings.is_empty(), "{f}: {:?}", a.warnings);
    }
    let o = Test::outside(&["pipeline", "validate", p.to_str().unwrap(), "--strict"]);
    let o = o.success();
    assert_eq!(o.stdout_raw(), "ok: 2 tables, 1 edges, 0 warning(s)\n");
    Test::outside(&["table", "validate-table-names", p.to_str().unwrap()]).success();
}

/// #22: a DML with several sources joins on their shared primary key, else on the key columns they
/// all have, else leaves a TODO that `validate --strict` refuses.
#[test]
fn table_init_joins_sources_on_their_shared_keys_or_leaves_a_marked_todo() {
    let (_t, root) = shop();
    let p = root.join("pipelines");
    let source = |folder: &str, table: &str, columns: &str| {
        let dir = p.join(format!("sources/sales/{folder}/sql-scripts"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("ddl.{table}.sql")),
            format!(
                "CREATE TABLE IF NOT EXISTS {table} ({columns}) WITH ('connector' = 'datagen');\n"
            ),
        )
        .unwrap();
    };
    source(
        "src_a",
        "src_sales_a",
        "id STRING, v INT, PRIMARY KEY (id) NOT ENFORCED",
    );
    source(
        "src_b",
        "src_sales_b",
        "id STRING, w INT, PRIMARY KEY (id) NOT ENFORCED",
    );
    source(
        "src_orders",
        "src_sales_orders",
        "order_id BIGINT, amount INT, PRIMARY KEY (order_id) NOT ENFORCED",
    );
    source(
        "src_lines",
        "src_sales_lines",
        "line_id BIGINT, order_id BIGINT, sku STRING, PRIMARY KEY (line_id) NOT ENFORCED",
    );
    source("src_x", "src_sales_x", "x_name STRING");
    let dml = |name: &str, sources: &[&str]| {
        let mut args = vec![name, "facts", "--product", "sales"];
        for s in sources {
            args.extend(["--source", s]);
        }
        table_init(&root, &args).success();
        read(p.join(format!(
            "facts/sales/fct_{name}/sql-scripts/dml.sales_fct_{name}.sql"
        )))
    };
    // The same primary key.
    let same = dml("ab", &["src_sales_a", "src_sales_b"]);
    assert!(
        same.contains("FROM src_sales_a AS t1\n  LEFT JOIN src_sales_b AS t2 ON t2.id = t1.id;"),
        "{same}"
    );
    // No shared key, but a key column both have.
    let shared = dml("order_lines", &["src_sales_orders", "src_sales_lines"]);
    assert!(
        shared.contains("FROM src_sales_orders AS t1\n  LEFT JOIN src_sales_lines AS t2 ON t2.order_id = t1.order_id;"),
        "{shared}"
    );
    // Nothing in common: a marked TODO, a warning, and an error for the CI gate.
    let none = dml("ax", &["src_sales_a", "src_sales_x"]);
    assert!(
        none.contains("FROM src_sales_a AS t1\n  -- TODO(flinkpipe): these sources share no key column; write the join condition\n  LEFT JOIN src_sales_x AS t2 ON TRUE;"),
        "{none}"
    );
    let o = Test::outside(&["pipeline", "validate", p.to_str().unwrap()]);
    let o = o.success();
    assert!(
        o.stderr_raw().contains(
            "warning[scaffold-todo]: pipelines/facts/sales/fct_ax/sql-scripts/dml.sales_fct_ax.sql:"
        ),
        "{}",
        o.stderr_raw()
    );
    let o = Test::outside(&["pipeline", "validate", p.to_str().unwrap(), "--strict"]);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains(
            "error[scaffold-todo]: pipelines/facts/sales/fct_ax/sql-scripts/dml.sales_fct_ax.sql:"
        ),
        "{}",
        o.stderr_raw()
    );
}

/// Issue #44 item 7: a Makefile `table init` writes is what `update-all-makefiles` writes (its
/// marker line included), so an update finds it unchanged, not "replaced"; `project init` and
/// `make demo` write a `.gitignore` that keeps `.flinkpipe/` (journal, locks, reports) out of git;
/// the Makefile's `plan` says it reads live phases and passes ARGS (`--offline`).
#[test]
fn table_init_makefiles_are_current_and_state_stays_out_of_git() {
    let (_tmp, root) = shop();
    for (name, layer) in [("orders", "sources"), ("stores", "seeds")] {
        table_init(root.as_path(), &[name, layer, "--product", "sales"]).success();
    }
    let pipelines = root.join("pipelines");
    let o = Test::outside(&[
        "--output",
        "json",
        "table",
        "update-all-makefiles",
        pipelines.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&o.success().stdout_raw()).unwrap();
    let changes: Vec<&str> = v["makefiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["change"].as_str().unwrap())
        .collect();
    assert_eq!(changes, ["unchanged", "unchanged"], "{v:#}");
    let mk = read(pipelines.join("sources/sales/src_orders/Makefile"));
    assert!(
        mk.contains("contacts no server") && mk.contains("--offline"),
        "{mk}"
    );
    assert!(mk.contains("--table-name $(TABLE) $(ARGS)"), "{mk}");
    let ignore = read(root.join(".gitignore"));
    assert!(ignore.lines().any(|l| l == ".flinkpipe/"), "{ignore}");
    let make = read(Path::new(env!("CARGO_MANIFEST_DIR")).join("Makefile"));
    assert!(
        make.contains("cp templates/project/gitignore $(DEMO_DIR)/.gitignore"),
        "make demo writes the project's .gitignore"
    );
}
