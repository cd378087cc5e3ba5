//! The release loop of issue #25 end to end on the local Flink 2.2 + SQL Gateway + Kafka stack
//! (`scripts/local-flink.sh up`), on a three-table project whose source topic the test fills with
//! twelve records: `src_rc_orders` (Kafka) → `int_rc_orders` (Kafka, a filter) → `int_rc_totals`
//! (upsert-kafka, `SUM`/`COUNT` per key). Blue is deployed and its rows flow; the total's aggregate is
//! changed (`SUM(x)` → `SUM(x) * 2`) and its parent gets an output-equivalent filter, `blue-green
//! --apply` versions both, green is deployed beside blue. `release-check --expect-diff
//! int_rc_totals.total` reports `expected-difference` on exactly that table (three keys, every
//! total doubled) and `same` on the parent (exit 0); without the declaration it `differs` (exit 1).
//! A consumer group with a member on the blue totals topic makes `decommission --delete` refuse the
//! blue job naming the group, and the blue parent that job reads; `rollback --delete` deletes
//! green (children first), leaves both blue jobs RUNNING and records the rollback.
//!
//! Skips without the stack, like `e2e_gateway` (`FLINKPIPE_E2E=required` turns that into a failure).
//! Run it alone under the stack's lock: `flock /tmp/flinkpipe-stack.lock env FLINKPIPE_E2E=required
//! cargo test --test testsuite e2e_release`.

use crate::support::e2e::E2e;
use crate::support::kafka::{delete_group, join, leave};
use crate::support::repo::T_CHANGE;
use flinkpipe::target::kafka::KafkaAdmin;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::stack::{KAFKA, job_states, kafka_ddl, stack_available, wait_for};

const TOPICS: [&str; 5] = [
    "src_rc_orders",
    "int_rc_orders",
    "int_rc_totals",
    "int_rc_orders_v2",
    "int_rc_totals_v2",
];

const ORDER_COLUMNS: &str = "  id BIGINT,\n  k STRING,\n  x BIGINT";
const TOTALS_DDL: &str = "CREATE TABLE IF NOT EXISTS int_rc_totals (\n  k STRING,\n  total BIGINT,\n  n BIGINT,\n  PRIMARY KEY (k) NOT ENFORCED\n) WITH (\n  'connector' = 'upsert-kafka',\n  'topic' = 'int_rc_totals',\n  'properties.bootstrap.servers' = '127.0.0.1:9092',\n  'key.format' = 'json',\n  'value.format' = 'json'\n);\n";
const ORDERS_DML: &str = "intermediates/rc/int_orders/sql-scripts/dml.int_rc_orders.sql";
const TOTALS_DML: &str = "intermediates/rc/int_totals/sql-scripts/dml.int_rc_totals.sql";

/// Whatever happened: the consumer leaves and its group is deleted (before the [`E2e`]'s clean-up
/// cancels this run's jobs, blue and green, and deletes its topics), so the shared stack keeps its
/// slots and stays clean.
struct Cleanup {
    group: String,
    consumer: Option<(std::net::TcpStream, String)>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some((mut conn, member)) = self.consumer.take() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                leave(&mut conn, &self.group, &member)
            }));
        }
        if let Ok(mut conn) = std::net::TcpStream::connect(KAFKA) {
            let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                delete_group(&mut conn, &self.group)
            }));
        }
    }
}

fn running(name: &str) -> bool {
    job_states(name).first().map(String::as_str) == Some("RUNNING")
}

/// Records in `topic` (its end offset on partition 0), from the broker's metadata and offsets.
fn records(topic: &str) -> i64 {
    let out = Command::new("bash")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/local-flink.sh"))
        .args(["offsets", topic])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let (t, n) = l.split_once('\t')?;
            (t == topic).then(|| n.trim().parse().ok()).flatten()
        })
        .unwrap_or(-1)
}

fn table<'a>(check: &'a Value, blue: &str) -> &'a Value {
    check["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["blue_table"] == blue)
        .unwrap_or_else(|| panic!("{blue} not checked: {check:#}"))
}

#[test]
fn release_check_a_consumer_group_blocking_decommission_and_rollback_on_a_real_flink() {
    if !stack_available() {
        return;
    }
    let pid = std::process::id();
    let prefix = format!("e2erel{pid:x}");
    let e = E2e::git(
        &prefix,
        &[
            (
                "sources/rc/src_orders/sql-scripts/ddl.src_rc_orders.sql",
                &kafka_ddl("src_rc_orders", ORDER_COLUMNS),
            ),
            (
                "intermediates/rc/int_orders/sql-scripts/ddl.int_rc_orders.sql",
                &kafka_ddl("int_rc_orders", ORDER_COLUMNS),
            ),
            (
                ORDERS_DML,
                "INSERT INTO int_rc_orders\nSELECT id, k, x FROM src_rc_orders WHERE x >= 0;\n",
            ),
            (
                "intermediates/rc/int_totals/sql-scripts/ddl.int_rc_totals.sql",
                TOTALS_DDL,
            ),
            (
                TOTALS_DML,
                "INSERT INTO int_rc_totals\nSELECT k, SUM(x) AS total, COUNT(*) AS n\nFROM int_rc_orders\nGROUP BY k;\n",
            ),
        ],
    )
    .topics(&TOPICS);
    let mut cleanup = Cleanup {
        group: format!("fp-e2e-release-{pid:x}"),
        consumer: None,
    };
    let repo = e.repo();
    let pipelines = e.p();
    let run = |args: &[&str]| e.run(args);
    let ok = |args: &[&str]| -> String {
        let o = run(args);
        let o = o.success();
        o.stdout_raw()
    };
    let dml = |table: &str| e.dml("rc", table);

    // ---- 1. blue: twelve orders over three keys, deployed; rows flow to the totals ------------
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = KafkaAdmin::new(KAFKA);
    let orders: Vec<Vec<u8>> = (1..=12)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"k\":\"{}\",\"x\":{i}}}",
                ["a", "b", "c"][i % 3]
            )
            .into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = orders.iter().map(Vec::as_slice).collect();
    // A topic just created has no leader for a moment (`NOT_LEADER_OR_FOLLOWER`, 6).
    let start = Instant::now();
    while let Err(e) = rt.block_on(admin.produce("src_rc_orders", 0, &refs)) {
        assert!(start.elapsed() < Duration::from_secs(20), "{e}");
        std::thread::sleep(Duration::from_millis(500));
    }
    ok(&["pipeline", "deploy", pipelines, "--dir", "pipelines"]);
    for t in ["int_rc_orders", "int_rc_totals"] {
        assert!(running(&dml(t)), "{t}: {:?}", job_states(&dml(t)));
    }
    wait_for("blue rows", Duration::from_secs(90), || {
        records("int_rc_orders") >= 12 && records("int_rc_totals") >= 3
    });

    // ---- 2. the aggregate doubles, its parent gets an equivalent filter; green beside blue -----
    repo.edit(ORDERS_DML, |s| {
        s.replace("WHERE x >= 0", "WHERE x >= 0 AND x < 1000000")
    });
    repo.edit(TOTALS_DML, |s| {
        s.replace("SUM(x) AS total", "SUM(x) * 2 AS total")
    });
    repo.commit("double the totals", T_CHANGE);
    let (bg, _) = e.json(&[
        "pipeline",
        "blue-green",
        pipelines,
        "--since",
        "HEAD~1",
        "--apply",
    ]);
    assert_eq!(bg["applied"], true, "{bg:#}");
    let mut green: Vec<&str> = bg["green"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["table_name"].as_str().unwrap())
        .collect();
    green.sort();
    assert_eq!(green, ["int_rc_orders_v2", "int_rc_totals_v2"], "{bg:#}");
    repo.commit("version the impacted tables", T_CHANGE + 60);
    ok(&["pipeline", "deploy", pipelines, "--blue-green"]);
    for t in ["int_rc_orders_v2", "int_rc_totals_v2"] {
        assert!(running(&dml(t)), "{t}: {:?}", job_states(&dml(t)));
    }
    for t in ["int_rc_orders", "int_rc_totals"] {
        assert!(running(&dml(t)), "blue {t} keeps running");
    }

    // ---- 3. release-check: the declared difference on exactly the totals, the parent the same --
    let check = |expect: bool| {
        let mut args = vec!["pipeline", "release-check", pipelines];
        if expect {
            args.extend(["--expect-diff", "int_rc_totals.total"]);
        }
        let (v, o) = e.json(&args);
        (v, o.output.status.code())
    };
    // Green catches up from the earliest offsets: until then its totals are partial sums.
    let start = Instant::now();
    let (v, code) = loop {
        let (v, code) = check(true);
        let caught_up = table(&v, "int_rc_orders")["green_rows"] == 12
            && table(&v, "int_rc_totals")["values_differ"] == 3;
        if code == Some(0) && caught_up {
            break (v, code);
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "release-check did not pass: exit {code:?}\n{v:#}"
        );
        std::thread::sleep(Duration::from_secs(3));
    };
    assert_eq!(code, Some(0));
    assert_eq!(v["verdict"], "expected-difference", "{v:#}");
    assert_eq!(v["tables"].as_array().unwrap().len(), 2, "{v:#}");
    let orders = table(&v, "int_rc_orders");
    assert_eq!(orders["green_table"], "int_rc_orders_v2");
    assert_eq!(orders["verdict"], "same", "{orders:#}");
    assert_eq!(
        (
            &orders["blue_rows"],
            &orders["green_rows"],
            &orders["only_in_blue"],
            &orders["only_in_green"],
            &orders["values_differ"]
        ),
        (&12.into(), &12.into(), &0.into(), &0.into(), &0.into()),
        "{orders:#}"
    );
    let totals = table(&v, "int_rc_totals");
    assert_eq!(totals["green_table"], "int_rc_totals_v2");
    assert_eq!(totals["verdict"], "expected-difference", "{totals:#}");
    assert_eq!(totals["key"], serde_json::json!(["k"]), "{totals:#}");
    assert_eq!(
        (
            &totals["blue_rows"],
            &totals["green_rows"],
            &totals["only_in_blue"],
            &totals["only_in_green"],
            &totals["values_differ"]
        ),
        (&3.into(), &3.into(), &0.into(), &0.into(), &3.into()),
        "{totals:#}"
    );
    assert_eq!(totals["undeclared"], serde_json::json!([]), "{totals:#}");
    let column = |name: &str| {
        totals["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["column"] == name)
            .unwrap_or_else(|| panic!("{name}: {totals:#}"))
            .clone()
    };
    // 1 + … + 12 = 78 on blue, doubled on green; the counts are the same.
    let total = column("total");
    assert_eq!(total["differing_rows"], 3, "{total:#}");
    assert_eq!(total["blue"]["sum"], 78.0, "{total:#}");
    assert_eq!(total["green"]["sum"], 156.0, "{total:#}");
    assert_eq!(column("n")["differing_rows"], 0);
    assert_eq!(column("n")["green"]["sum"], 12.0);

    // Without the declaration the same difference fails the release.
    let (v, code) = check(false);
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(v["verdict"], "differs", "{v:#}");
    assert_eq!(table(&v, "int_rc_totals")["verdict"], "differs", "{v:#}");
    assert_eq!(
        table(&v, "int_rc_totals")["undeclared"],
        serde_json::json!(["total"]),
        "{v:#}"
    );
    assert_eq!(table(&v, "int_rc_orders")["verdict"], "same", "{v:#}");

    // ---- 4. a consumer of another team on the blue totals topic blocks decommission -------------
    let group = cleanup.group.clone();
    rt.block_on(admin.commit_offset(&group, "int_rc_totals", 0, 0))
        .unwrap();
    let mut conn = std::net::TcpStream::connect(KAFKA).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let member = join(&mut conn, &group);
    cleanup.consumer = Some((conn, member));
    let o = run(&[
        "pipeline",
        "decommission",
        pipelines,
        "--delete",
        "--no-ack",
    ]);
    let o = o.code(1);
    let err = o.stderr_raw();
    let refusal = |blue: &str| {
        err.lines()
            .find(|l| l.starts_with(&format!("error: refused to delete {blue}: ")))
            .unwrap_or_else(|| panic!("{blue} not refused:\n{err}\n{}", o.stdout_raw()))
            .to_string()
    };
    let line = refusal(&dml("int_rc_totals"));
    assert!(
        line.contains(&format!(
            "still read: consumer group {group} (1 member(s), lag "
        )) && line.contains(") reads topic int_rc_totals"),
        "{line}"
    );
    // The blue parent stays too: the blue job kept reads it.
    let line = refusal(&dml("int_rc_orders"));
    assert!(
        line.contains(&format!(
            "still read: statement {} (RUNNING) reads int_rc_orders",
            dml("int_rc_totals")
        )),
        "{line}"
    );
    for t in ["int_rc_orders", "int_rc_totals"] {
        assert!(running(&dml(t)), "blue {t} kept: {:?}", job_states(&dml(t)));
    }
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.pipelines.join("blue_green.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        record["releases"][0]["decommissioned"],
        serde_json::json!([]),
        "the release stays open: {record:#}"
    );
    if let Some((mut conn, member)) = cleanup.consumer.take() {
        leave(&mut conn, &group, &member);
    }

    // ---- 5. green is not trusted: roll back; blue runs on, green is gone ------------------------
    let text = ok(&["pipeline", "rollback", pipelines, "--delete", "--no-ack"]);
    assert!(text.contains("git restore --source="), "{text}");
    for t in ["int_rc_orders", "int_rc_totals"] {
        assert!(
            running(&dml(t)),
            "blue {t} untouched: {:?}",
            job_states(&dml(t))
        );
    }
    for t in ["int_rc_orders_v2", "int_rc_totals_v2"] {
        let states = job_states(&dml(t));
        assert!(!states.contains(&"RUNNING".to_string()), "{t}: {states:?}");
    }
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.pipelines.join("blue_green.json")).unwrap(),
    )
    .unwrap();
    let rb = &record["releases"][0]["rolled_back"];
    assert_eq!(rb.as_array().map(Vec::len), Some(1), "{record:#}");
    assert_eq!(rb[0]["statement_prefix"], prefix.as_str());
    assert_eq!(rb[0]["action"], "delete");
    let acted: Vec<&str> = rb[0]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let child = acted.iter().position(|s| *s == dml("int_rc_totals_v2"));
    let parent = acted.iter().position(|s| *s == dml("int_rc_orders_v2"));
    assert!(
        child.is_some() && parent.is_some() && child < parent,
        "children first: {acted:?}"
    );
    drop(cleanup);
    drop(e);
}
