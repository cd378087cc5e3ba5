//! `project update-ut-ddl`: a column added to (or dropped from) a table's DDL reaches the foundation
//! DDLs and CSV inputs of the unit-test folders that read the table; SQL inputs are flagged; a dry run
//! writes nothing; a second run has nothing to do.

use crate::support::Test;
use crate::support::our_fixture;
use crate::support::repo::{Repo, T_CHANGE};
use crate::support::test::Outcome;

const PAID_DDL: &str =
    "intermediates/sales/int_paid_orders/sql-scripts/ddl.int_sales_paid_orders.sql";
const WEB_TESTS: &str = "intermediates/sales/int_web_orders/tests";
const PAYMENTS_TESTS: &str = "facts/sales/fct_order_payments/tests";

fn run(r: &Repo, extra: &[&str]) -> Outcome {
    let mut args = vec![
        "project",
        "update-ut-ddl",
        "--project-path",
        r.pipelines.to_str().unwrap(),
        "--git-branch",
        "HEAD~1",
    ];
    args.extend_from_slice(extra);
    Test::outside(&args)
}

#[test]
fn a_changed_ddl_reaches_the_test_copies_of_its_readers() {
    let r = Repo::new(our_fixture());
    r.edit(PAID_DDL, |t| {
        t.replace(
            "  pay_method",
            "  refund_flag         BOOLEAN,\n  pay_method",
        )
        .replace("  seconds_to_pay  INT,\n", "")
    });
    r.commit("add refund_flag, drop seconds_to_pay", T_CHANGE);
    let csv = format!("{WEB_TESTS}/insert_int_sales_paid_orders_1.csv");
    let before = std::fs::read_to_string(r.path(&csv)).unwrap();

    let o = run(&r, &["--dry-run"]);
    let o = o.success();
    let out = o.stdout_raw();
    assert!(
        out.contains(&format!(
            "+++ b/pipelines/{WEB_TESTS}/ddl_int_sales_paid_orders.sql"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "+++ b/pipelines/{PAYMENTS_TESTS}/ddl_int_sales_paid_orders.sql"
        )),
        "{out}"
    );
    assert!(
        out.contains("columns added (empty): refund_flag; columns dropped: seconds_to_pay"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(r.path(&csv)).unwrap(),
        before,
        "a dry run writes nothing"
    );

    let o = run(&r, &[]);
    let o = o.success();
    // The SQL input of the other folder is positional: flagged, not rewritten.
    assert!(
        o.stderr_raw().contains(&format!(
            "warning[by-hand]: pipelines/{PAYMENTS_TESTS}/insert_int_sales_paid_orders_1.sql"
        )),
        "{}",
        o.stderr_raw()
    );
    let foundation =
        std::fs::read_to_string(r.path(&format!("{WEB_TESTS}/ddl_int_sales_paid_orders.sql")))
            .unwrap();
    assert!(
        foundation.contains("CREATE TABLE IF NOT EXISTS int_sales_paid_orders_ut ("),
        "{foundation}"
    );
    assert!(
        foundation.contains("refund_flag") && !foundation.contains("seconds_to_pay"),
        "{foundation}"
    );
    assert!(
        foundation.contains("'connector' = 'kafka'"),
        "the test table keeps its WITH: {foundation}"
    );
    let header = std::fs::read_to_string(r.path(&csv)).unwrap();
    let header = header.lines().next().unwrap().to_string();
    assert_eq!(
        header,
        "order_id,customer_id,store_id,channel,payment_id,amount,refund_flag,pay_method,paid_at"
    );
    // Nothing left to do; the project still validates.
    let o = run(&r, &[]);
    assert!(
        o.stdout_raw().contains("nothing to update"),
        "{}",
        o.stdout_raw()
    );
    let o = Test::outside(&["pipeline", "validate", r.pipelines.to_str().unwrap()]);
    o.success();
}
