//! One resolver of user-given table names (`src/inventory/names.rs`) behind every command: after a table
//! was versioned (`int_sales_orders_enriched` → `int_sales_orders_enriched_v2`), its old name and a
//! case-changed name work in every command that takes a table, with a note on stderr.

use crate::support::Test;
use crate::support::our_fixture;
use std::fs;
use std::path::Path;

const OLD: &str = "int_sales_orders_enriched";
const NEW: &str = "int_sales_orders_enriched_v2";

/// Our fixtures with `int_sales_orders_enriched` and its descendants at `_v2`.
fn versioned() -> (tempfile::TempDir, std::path::PathBuf) {
    let (t, root) = our_fixture();
    let list = root.parent().unwrap().join("seed.txt");
    fs::write(&list, format!("{OLD}\n")).unwrap();
    let o = Test::outside(&[
        "project",
        "update-tables-version",
        list.to_str().unwrap(),
        root.to_str().unwrap(),
    ]);
    o.success();
    (t, root)
}

fn note(given: &str) -> String {
    if given == OLD {
        format!("note: '{OLD}' is '{NEW}' (its newest version)")
    } else {
        format!("note: '{given}' is '{NEW}' (names ignore case)")
    }
}

#[test]
fn every_command_resolves_a_pre_version_and_a_case_changed_name() {
    for given in [OLD, "INT_SALES_ORDERS_ENRICHED_V2"] {
        let (_t, root) = versioned();
        let dir = root.to_str().unwrap();
        let list = root.parent().unwrap().join("tables.txt");
        fs::write(&list, format!("{given}\n")).unwrap();
        let list = list.to_str().unwrap();
        // Offline commands succeed on the resolved table and say so.
        let offline: Vec<Vec<&str>> = vec![
            vec![
                "pipeline",
                "build-execution-plan",
                dir,
                "--table-name",
                given,
                "--offline",
            ],
            vec![
                "pipeline",
                "build-execution-plan",
                dir,
                "--table-list-file-name",
                list,
                "--offline",
            ],
            vec!["pipeline", "report", given, dir],
            vec!["pipeline", "graph", dir, "--select"],
            vec!["table", "run-unit-tests", given, dir, "--dry-run"],
        ];
        for mut args in offline {
            let select = format!("+{given}+");
            if args.last() == Some(&"--select") {
                args.push(&select);
            }
            let o = Test::outside(&args);
            let o = o.success();
            assert!(o.stdout_raw().contains(NEW), "{args:?}: {}", o.stdout_raw());
            assert!(
                o.stderr_raw().contains(&note(given)),
                "{args:?}: {}",
                o.stderr_raw()
            );
        }
        // init-unit-tests on a versioned table without tests writes them for the resolved table.
        let lines = if given == OLD {
            "int_sales_order_lines"
        } else {
            "INT_SALES_ORDER_LINES_V2"
        };
        let o = Test::outside(&["table", "init-unit-tests", lines, dir]);
        o.success();
        let defs = fs::read_to_string(
            root.join("intermediates/sales/int_order_lines/tests/test_definitions.yaml"),
        )
        .unwrap();
        assert!(
            defs.contains("table_name: int_sales_order_lines_v2"),
            "{defs}"
        );
        // Commands that need a target resolve the name before contacting it (there is none here).
        let online: Vec<Vec<&str>> = vec![
            vec!["pipeline", "status", dir, "--table-name", given],
            vec![
                "pipeline",
                "deploy",
                dir,
                "--table-name",
                given,
                "--dry-run",
            ],
            vec!["pipeline", "explain", dir, "--table-name", given],
            vec![
                "pipeline",
                "undeploy",
                dir,
                "--table-name",
                given,
                "--no-ack",
            ],
            vec!["project", "run-unit-tests", dir, "--table-name", given],
            vec!["table", "delete-unit-tests", given, dir],
            vec!["table", "preview", given, dir],
        ];
        for args in online {
            let o = Test::outside(&args);
            let err = o.stderr_raw();
            assert!(!err.contains("unknown table"), "{args:?}: {err}");
            assert!(err.contains(&note(given)), "{args:?}: {err}");
        }
    }
}

#[test]
fn unknown_and_ambiguous_names_are_errors_naming_the_candidates() {
    let (_t, root) = versioned();
    let dir = root.to_str().unwrap();
    let o = Test::outside(&["pipeline", "report", "int_sales_orders_enrichd", dir]);
    let o = o.code(1);
    assert!(
        o.stderr_raw()
            .contains("unknown table 'int_sales_orders_enrichd' (did you mean"),
        "{}",
        o.stderr_raw()
    );
    // Two tables whose names differ only by case.
    let copy = |from: &str, to: &str| {
        let src = root.join(from);
        let dst = root.join(to);
        for e in walkdir::WalkDir::new(&src) {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(&src).unwrap();
            if e.file_type().is_dir() {
                fs::create_dir_all(dst.join(rel)).unwrap();
            } else {
                let name = rel
                    .to_str()
                    .unwrap()
                    .replace("src_c360_customers", "SRC_C360_Customers");
                let text = fs::read_to_string(e.path())
                    .unwrap()
                    .replace("src_c360_customers", "SRC_C360_Customers");
                fs::write(dst.join(Path::new(&name)), text).unwrap();
            }
        }
    };
    let src = walkdir::WalkDir::new(&root)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .find(|p| p.ends_with("ddl.src_c360_customers.sql"))
        .expect("a source table");
    let folder = src.parent().unwrap().parent().unwrap();
    let rel = folder
        .strip_prefix(&root)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    copy(&rel, &format!("{rel}_upper"));
    let o = Test::outside(&["pipeline", "report", "Src_C360_customers", dir]);
    let err = o.stderr_raw();
    assert!(
        err.contains(
            "table name 'Src_C360_customers' is ambiguous: it matches 'SRC_C360_Customers', 'src_c360_customers'"
        ),
        "{err}"
    );
}
