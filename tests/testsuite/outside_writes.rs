//! Nothing is written outside the project: every command that writes into the tree, run on a tree
//! whose folders are symbolic links to folders outside it (a table folder, a `tests/` folder, a
//! product folder), leaves those outside folders byte for byte as they were, and says which link it
//! refused (see `docs/src/concepts/limits.md`, "Writes stay in the project").

use crate::support::Test;
use crate::support::repo::T_CHANGE;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const ENRICHED: &str = "intermediates/sales/int_orders_enriched";
const PAYMENTS: &str = "facts/sales/fct_order_payments";
const PAID: &str = "intermediates/sales/int_paid_orders";

/// Our example in git, a logic change of `int_sales_orders_enriched` committed on `feature`, then
/// (in the work tree) the table folder of `sales_fct_order_payments`, the `tests/` of
/// `int_sales_orders_enriched` and an empty `tests/` of `int_sales_paid_orders` moved to a folder
/// outside the project and linked back, and a product folder `facts/ext` linked to an empty folder
/// outside. Returns the test and the outside folder (kept alive by the returned guard).
fn linked() -> (Test, tempfile::TempDir) {
    let t = Test::fixture().git();
    let r = t.repo();
    r.branch("feature");
    r.edit(
        &format!("{ENRICHED}/sql-scripts/dml.int_sales_orders_enriched.sql"),
        |s| {
            s.replace(
                "  ON o.currency = r.currency;",
                "  ON o.currency = r.currency\nWHERE o.channel <> 'test';",
            )
        },
    );
    r.commit("filter test orders", T_CHANGE);
    let out = tempfile::tempdir().unwrap();
    let move_out = |rel: &str, name: &str| {
        let from = t.pipelines.join(rel);
        let to = out.path().join(name);
        std::fs::rename(&from, &to).unwrap();
        std::os::unix::fs::symlink(&to, &from).unwrap();
    };
    move_out(PAYMENTS, "payments");
    move_out(&format!("{ENRICHED}/tests"), "enriched_tests");
    std::fs::create_dir(out.path().join("paid_tests")).unwrap();
    std::os::unix::fs::symlink(
        out.path().join("paid_tests"),
        t.pipelines.join(PAID).join("tests"),
    )
    .unwrap();
    std::fs::create_dir(out.path().join("ext")).unwrap();
    std::os::unix::fs::symlink(out.path().join("ext"), t.pipelines.join("facts/ext")).unwrap();
    (t, out)
}

/// Every entry under `dir` (links not followed) but `.flinkpipe/`: its relative path and its bytes
/// (a folder: empty; a link: its target).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .map(|e| e.unwrap())
        // The project's own state (load summary, caches) is not what these tests look at.
        .filter(|e| {
            !e.path()
                .strip_prefix(dir)
                .unwrap()
                .starts_with(".flinkpipe")
        })
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
            let bytes = if e.file_type().is_file() {
                std::fs::read(e.path()).unwrap()
            } else if e.file_type().is_symlink() {
                std::fs::read_link(e.path())
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else {
                Vec::new()
            };
            (rel, bytes)
        })
        .collect()
}

/// Each command that writes into the tree, with the arguments that make it write through one of the
/// links of [`linked`].
fn writers(t: &Test) -> Vec<Vec<String>> {
    let p = t.pipelines.display().to_string();
    let list = t.root.join("tables.txt");
    std::fs::write(&list, "int_sales_paid_orders\n").unwrap();
    let list = list.display().to_string();
    let dml = format!("{p}/{PAYMENTS}/sql-scripts/dml.sales_fct_order_payments.sql");
    let cmds: Vec<Vec<&str>> = vec![
        vec!["pipeline", "build-all-metadata", &p],
        vec!["pipeline", "build-metadata", &dml, &p],
        vec!["pipeline", "delete-all-metadata", &p],
        vec!["pipeline", "blue-green", &p, "--since", "main", "--apply"],
        vec!["table", "update-all-makefiles", &p],
        vec!["table", "update-makefile", "sales_fct_order_payments", &p],
        vec!["table", "init-unit-tests", "int_sales_paid_orders", &p],
        vec![
            "project",
            "init-integration-tests",
            "--table-name",
            "int_sales_orders_enriched",
            &p,
        ],
        vec![
            "table",
            "update-tables",
            "--string-to-change-from",
            "int_sales_paid_orders",
            "--string-to-change-to",
            "int_sales_paid_orders_x",
            &p,
        ],
        vec!["project", "update-tables-version", &list, &p],
        vec!["project", "update-ut-ddl", "--project-path", &p],
        vec![
            "table",
            "init",
            "orders",
            "facts",
            "--product",
            "ext",
            "--source",
            "int_sales_paid_orders",
            "--pipelines",
            &p,
        ],
    ];
    cmds.into_iter()
        .map(|c| c.into_iter().map(String::from).collect())
        .collect()
}

/// The property: whatever the command, the folders outside the project are byte-identical after it,
/// and a command that refused names the link.
#[test]
fn no_command_writes_through_a_link_that_leaves_the_project() {
    let (probe, _out) = linked();
    let count = writers(&probe).len();
    drop(probe);
    for i in 0..count {
        let (t, out) = linked();
        let cmd = writers(&t).swap_remove(i);
        let before = snapshot(out.path());
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let o = t.cmd(&args);
        let after = snapshot(out.path());
        let what = args[..2].join(" ");
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            before.keys().collect::<Vec<_>>(),
            "{what} created or removed files outside the project:\n{}",
            o.stderr()
        );
        assert!(
            after == before,
            "{what} changed a file outside the project:\n{}",
            o.stderr()
        );
        if !o.output.status.success() {
            assert!(
                o.stderr().contains("symbolic link")
                    || !o.stderr().contains(&out.path().display().to_string()),
                "{what} failed without naming the link:\n{}",
                o.stderr()
            );
        }
    }
}

/// The commands that would write through a link refuse, naming the link and why.
#[test]
fn writing_through_a_link_outside_is_refused_with_the_link_named() {
    for (cmd, link) in [
        (
            vec!["pipeline", "build-all-metadata", "[PIPELINES]"],
            PAYMENTS,
        ),
        (
            vec![
                "table",
                "init-unit-tests",
                "int_sales_paid_orders",
                "[PIPELINES]",
            ],
            "intermediates/sales/int_paid_orders/tests",
        ),
        (
            vec![
                "pipeline",
                "blue-green",
                "[PIPELINES]",
                "--since",
                "main",
                "--apply",
            ],
            "intermediates/sales/int_orders_enriched/tests",
        ),
    ] {
        let (t, _out) = linked();
        let o = t.cmd(&cmd).failure();
        let err = o.stderr();
        assert!(
            err.contains(&format!("{link}: is a symbolic link to"))
                && err.contains("outside the project"),
            "{}: {err}",
            cmd[1]
        );
    }
}

/// A link inside the project that stays inside is written through as any folder.
#[test]
fn a_link_that_stays_inside_the_project_is_written_through() {
    let t = Test::fixture();
    // Hidden: the scan does not walk it, and finds the table once, through the link.
    let shared = t.pipelines.join(".shared_tables");
    std::fs::create_dir(&shared).unwrap();
    std::fs::rename(t.pipelines.join(PAYMENTS), shared.join("payments")).unwrap();
    std::os::unix::fs::symlink(shared.join("payments"), t.pipelines.join(PAYMENTS)).unwrap();
    t.cmd(&["pipeline", "build-all-metadata", "[PIPELINES]"])
        .success();
    assert!(shared.join("payments/pipeline_definition.json").is_file());
}

/// A copy of our example whose `int_sales_paid_orders` is renamed to `name` (DDL and DML, backquoted),
/// its readers still reading it.
fn named(name: &str) -> Test {
    let t = Test::fixture();
    for f in walkdir::WalkDir::new(&t.pipelines) {
        let f = f.unwrap();
        if f.path().extension().is_some_and(|x| x == "sql") {
            let text = std::fs::read_to_string(f.path()).unwrap();
            if text.contains("int_sales_paid_orders") {
                let renamed = text.replace("int_sales_paid_orders", &format!("`{name}`"));
                std::fs::write(f.path(), renamed).unwrap();
            }
        }
    }
    t
}

/// The hostile names the commands are tried with: paths, `..`, NUL and control characters,
/// Windows-reserved characters and device names.
const HOSTILE: &[&str] = &[
    "../../../../tmp/x/PWNED",
    "/tmp/abs_PWNED",
    "..\\..\\PWNED",
    "a/../../PWNED",
    "..",
    "x\u{1}y",
    "C:PWNED",
    "CON",
    "x?y",
];

/// `pipeline validate` reports a table whose name cannot be a file name as an error at the statement
/// that names it; `field-lineage -o DIR` and `report --open` refuse it and write nothing outside DIR.
#[test]
fn a_table_name_that_is_not_a_file_name_is_an_error_and_names_no_file() {
    for name in HOSTILE {
        let t = named(name);
        let o = t.cmd(&["pipeline", "validate", "[PIPELINES]"]).failure();
        let err = o.stderr();
        assert!(
            err.contains("unsafe-table-name")
                && err.contains("pipelines/intermediates/sales/int_paid_orders/sql-scripts/ddl.int_sales_paid_orders.sql:"),
            "{name:?}: {err}"
        );
        let out = t.root.join("out");
        std::fs::create_dir(&out).unwrap();
        let before = snapshot(&t.root);
        for cmd in [
            vec![
                "pipeline",
                "field-lineage",
                name,
                "[PIPELINES]",
                "-o",
                "[ROOT]/out",
                "--open",
            ],
            vec![
                "pipeline",
                "report",
                name,
                "[PIPELINES]",
                "--open",
                "--output-file-name",
                "[ROOT]/out/r.json",
            ],
        ] {
            let o = t.cmd_env(
                &cmd,
                &[("FLINKPIPE_OUTPUT_DIR", t.root.join("out").to_str().unwrap())],
            );
            assert!(
                !o.output.status.success(),
                "{name:?} {}: {}",
                cmd[1],
                o.stderr()
            );
            assert_eq!(
                snapshot(&t.root),
                before,
                "{name:?} {}: wrote a file",
                cmd[1]
            );
        }
    }
    assert!(!Path::new("/tmp/x/PWNED_lineage.json").exists());
}

/// `isolate-data-product` refuses a target inside the source pipelines folder, or holding it, however
/// it is spelled (`..`, a link, a folder that does not exist yet), and writes nothing.
#[test]
fn isolating_into_the_source_or_around_it_is_refused() {
    let t = Test::fixture().config("kafka:\n  cluster_type: dev\n");
    let p = t.pipelines.display().to_string();
    std::os::unix::fs::symlink(t.pipelines.join("facts"), t.root.join("facts_link")).unwrap();
    let before = snapshot(&t.root);
    for dest in [
        format!("{p}/iso"),
        format!("{p}/facts/new/deeper"),
        format!("{p}/../pipelines/iso"),
        format!("{}/facts_link/iso", t.root.display()),
        format!("{}/elsewhere/../pipelines/x", t.root.display()),
        t.root.display().to_string(),
        "/".to_string(),
    ] {
        let o = t
            .cmd(&["project", "isolate-data-product", "c360", &p, &dest])
            .failure();
        let err = o.stderr();
        assert!(
            err.contains("the source pipelines folder") && err.contains("nothing was written"),
            "{dest}: {err}"
        );
        assert_eq!(snapshot(&t.root), before, "{dest}: wrote");
    }
    // Beside the source is fine.
    t.cmd(&[
        "project",
        "isolate-data-product",
        "c360",
        &p,
        &format!("{}/iso", t.root.display()),
    ])
    .success();
}
