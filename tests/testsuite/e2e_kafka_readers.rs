//! Who still reads blue, on the local Kafka (`scripts/local-flink.sh up`): a blue table's topic with
//! five records and a consumer group that committed offset 2 on it (`OffsetCommit`, as an admin
//! tool's reset or a Flink Kafka source does: no members) — `pipeline status` lists the group with
//! its state, no member and a lag of 3, read over the Kafka protocol from the broker the green
//! table's DDL names, and `decommission` reads the same listing; once a consumer joins the group
//! (`JoinGroup`, `SyncGroup`) it has one member and blocks decommission, and after it leaves
//! (`LeaveGroup`) it no longer does. Then the runbook step on a real Flink: a consumer group with a
//! member on a running blue job's topic blocks `decommission --delete` until the consumer leaves.
//!
//! Skips without the stack, like `e2e_gateway` (`FLINKPIPE_E2E=required` turns that into a failure).
//! Run it alone under the stack's lock: `flock /tmp/flinkpipe-stack.lock env FLINKPIPE_E2E=required
//! cargo test --test testsuite e2e_kafka_readers`.

use crate::support::e2e::E2e;
use crate::support::kafka::{join, leave};
use crate::support::stack::{KAFKA, job_states, kafka_ddl, stack_available};
use crate::support::test::Outcome;
use flinkpipe::target::kafka::KafkaAdmin;
use serde_json::Value;

const BLUE_TOPIC: &str = "int_p_readers";

/// The green table, in the tree after the blue-green: its topic is its name, so the blue table's
/// topic is the blue name.
const GREEN_DDL: &str = "CREATE TABLE IF NOT EXISTS int_p_readers_v2 (\n  id BIGINT,\n  v STRING\n) WITH (\n  'connector' = 'kafka',\n  'topic' = 'int_p_readers_v2',\n  'properties.bootstrap.servers' = '127.0.0.1:9092',\n  'scan.startup.mode' = 'earliest-offset',\n  'format' = 'json'\n);\n";

#[test]
fn a_consumer_group_on_a_blue_topic_is_listed_with_its_lag_and_blocks_only_with_members() {
    if !stack_available() {
        return;
    }
    let e = E2e::new(
        &format!("e2erd{:x}", std::process::id()),
        &[(
            "intermediates/p/int_readers_v2/sql-scripts/ddl.int_p_readers_v2.sql",
            GREEN_DDL,
        )],
    )
    .pipelines_last();
    let prefix = e.prefix.clone();
    let record = serde_json::json!({"format": 1, "releases": [{
        "created_at": "2026-12-02T00:00:00Z", "base_ref": "main", "base_commit": null,
        "statement_prefix": prefix,
        "tables": [{"blue_table_name": "int_p_readers", "green_table_name": "int_p_readers_v2",
            "product_name": "p",
            "blue_statements": [{"name": format!("{prefix}-p-ddl-int-p-readers"), "role": "declaration"}],
            "green_statements": [{"name": format!("{prefix}-p-ddl-int-p-readers-v2"), "role": "declaration"}],
            "reason": "logic change"}],
        "decommissioned": []}]});
    std::fs::write(e.pipelines.join("blue_green.json"), record.to_string()).unwrap();

    let e = e.topics(&[BLUE_TOPIC]);
    let rt = crate::support::stack::runtime();
    let admin = KafkaAdmin::new(KAFKA);
    let values: Vec<Vec<u8>> = (0..5)
        .map(|i| format!("{{\"id\":{i},\"v\":\"x\"}}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    assert_eq!(rt.block_on(admin.produce(BLUE_TOPIC, 0, &refs)).unwrap(), 0);
    let group = format!("fp-e2e-readers-{:x}", std::process::id());
    rt.block_on(admin.commit_offset(&group, BLUE_TOPIC, 0, 2))
        .unwrap();

    // The library: the group, no member, lag 3.
    let found = rt
        .block_on(admin.consumer_groups_of(&[BLUE_TOPIC.to_string()]))
        .unwrap();
    let g = found[BLUE_TOPIC]
        .iter()
        .find(|g| g.group_id == group)
        .unwrap_or_else(|| panic!("{group} not found: {found:#?}"));
    assert_eq!(
        (g.state.as_str(), g.members, g.lag()),
        ("Empty", 0, Some(3))
    );
    assert_eq!(g.partitions[0].committed, 2);
    assert_eq!(g.partitions[0].log_end, Some(5));
    // Asking about a topic that does not exist never creates it (a broker may auto-create topics).
    let missing = format!("fp-e2e-missing-{:x}", std::process::id());
    let found = rt
        .block_on(admin.consumer_groups_of(std::slice::from_ref(&missing)))
        .unwrap();
    assert!(found.is_empty(), "{found:?}");
    let (_, listed) = rt.block_on(admin.list_topics()).unwrap();
    assert!(!listed.iter().any(|t| t.name == missing));

    let run = |args: &[&str]| e.run(args);
    let o = run(&["--output", "json", "pipeline", "status"]);
    let o = o.success();
    let s: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let readers = &s["blue_readers"];
    assert_eq!(
        readers["consumer_groups"],
        serde_json::json!({"kind": "broker", "bootstraps": [KAFKA]}),
        "{readers:#}"
    );
    let t = &readers["tables"][0];
    assert_eq!(t["blue_table_name"], "int_p_readers");
    assert_eq!(t["topic"], BLUE_TOPIC);
    assert_eq!(t["cluster"], KAFKA);
    let groups: Vec<&Value> = t["consumer_groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["group_id"] == group.as_str())
        .collect();
    assert_eq!(
        groups,
        vec![
            &serde_json::json!({"group_id": group, "state": "Empty", "members": 0, "lag": 3, "partitions": 1})
        ],
        "{t:#}"
    );

    let text = run(&["pipeline", "status"]).stdout_raw();
    assert!(
        text.contains(&format!(
            "    consumer group {group}: Empty, 0 member(s), lag 3 over 1 partition(s)\n"
        )),
        "{text}"
    );

    // A consumer joins: one member, the group blocks decommission; it leaves: it no longer does.
    let mut conn = std::net::TcpStream::connect(KAFKA).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let member = join(&mut conn, &group);
    let text = run(&["pipeline", "status"]).stdout_raw();
    assert!(
        text.contains(&format!(
            "    consumer group {group}: Stable, 1 member(s), lag 3 over 1 partition(s), blocks decommission\n"
        )),
        "{text}"
    );
    leave(&mut conn, &group, &member);
    let found = rt
        .block_on(admin.consumer_groups_of(&[BLUE_TOPIC.to_string()]))
        .unwrap();
    let g = found[BLUE_TOPIC]
        .iter()
        .find(|g| g.group_id == group)
        .unwrap();
    assert_eq!((g.state.as_str(), g.members), ("Empty", 0));

    // Decommission reads the same listing (the blue declaration itself lives only in a deploy's
    // session on the gateway: nothing to act on, nothing refused).
    let o = run(&[
        "--output",
        "json",
        "pipeline",
        "decommission",
        "--delete",
        "--dry-run",
    ]);
    let plan: Value = serde_json::from_str(&o.stdout_raw())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout_raw(), o.stderr_raw()));
    assert_eq!(plan["plan"]["refused"], serde_json::json!([]), "{plan:#}");
    assert!(
        plan["plan"]["readers"]["tables"][0]["consumer_groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["group_id"] == group.as_str() && g["members"] == 0),
        "{plan:#}"
    );
    o.success();
    drop(e);
}

const SRC_TICKS: &str = "CREATE TABLE IF NOT EXISTS src_p_ticks (\n  id BIGINT,\n  v STRING\n) WITH (\n  'connector' = 'datagen',\n  'rows-per-second' = '5'\n);\n";

fn kafka_table(name: &str) -> String {
    kafka_ddl(name, "  id BIGINT,\n  v STRING")
}

/// The runbook step on a real Flink: blue `int_p_feed` runs (datagen → its topic), the
/// tree moves to green `int_p_feed_v2` (recorded in `blue_green.json`) and green is deployed
/// beside it; a consumer group with a member on the blue topic makes `decommission --delete` refuse
/// the blue job, naming the group and its lag; once the consumer leaves, the same command deletes
/// blue and green keeps running.
#[test]
fn a_consumer_group_with_a_member_blocks_the_decommission_of_blue_until_it_leaves() {
    if !stack_available() {
        return;
    }
    let blue_dir = "intermediates/p/int_feed/sql-scripts";
    let e = E2e::new(
        &format!("e2erb{:x}", std::process::id()),
        &[
            (
                "sources/p/src_ticks/sql-scripts/ddl.src_p_ticks.sql",
                SRC_TICKS,
            ),
            (
                &format!("{blue_dir}/ddl.int_p_feed.sql"),
                &kafka_table("int_p_feed"),
            ),
            (
                &format!("{blue_dir}/dml.int_p_feed.sql"),
                "INSERT INTO int_p_feed\nSELECT id, v FROM src_p_ticks;\n",
            ),
        ],
    )
    .pipelines_last()
    .topics(&["int_p_feed", "int_p_feed_v2"]);
    let (prefix, pipelines) = (e.prefix.clone(), e.pipelines.clone());
    let rt = crate::support::stack::runtime();
    let admin = KafkaAdmin::new(KAFKA);
    let run = |args: &[&str]| e.run(args);
    let ok = |o: Outcome| o.success().stdout_raw();
    let blue_dml = format!("{prefix}-p-dml-int-p-feed");
    ok(run(&["pipeline", "deploy", "--dir", "pipelines"]));
    assert_eq!(job_states(&blue_dml), vec!["RUNNING"]);

    // The tree moves to green (what `blue-green --apply` writes), recorded; green is deployed.
    std::fs::remove_dir_all(pipelines.join("intermediates/p/int_feed")).unwrap();
    let green_dir = pipelines.join("intermediates/p/int_feed_v2/sql-scripts");
    std::fs::create_dir_all(&green_dir).unwrap();
    std::fs::write(
        green_dir.join("ddl.int_p_feed_v2.sql"),
        kafka_table("int_p_feed_v2"),
    )
    .unwrap();
    std::fs::write(
        green_dir.join("dml.int_p_feed_v2.sql"),
        "INSERT INTO int_p_feed_v2\nSELECT id, v FROM src_p_ticks;\n",
    )
    .unwrap();
    let record = serde_json::json!({"format": 1, "releases": [{
        "created_at": "2026-12-02T00:00:00Z", "base_ref": "main", "base_commit": null,
        "statement_prefix": prefix,
        "tables": [{"blue_table_name": "int_p_feed", "green_table_name": "int_p_feed_v2",
            "product_name": "p",
            "blue_statements": [{"name": blue_dml, "role": "job"},
                                {"name": format!("{prefix}-p-ddl-int-p-feed"), "role": "declaration"}],
            "green_statements": [{"name": format!("{prefix}-p-ddl-int-p-feed-v2"), "role": "declaration"},
                                 {"name": format!("{prefix}-p-dml-int-p-feed-v2"), "role": "job"}],
            "reason": "logic change"}],
        "decommissioned": []}]});
    std::fs::write(pipelines.join("blue_green.json"), record.to_string()).unwrap();
    ok(run(&["pipeline", "deploy", "--blue-green"]));
    let green_dml = format!("{prefix}-p-dml-int-p-feed-v2");
    assert_eq!(job_states(&green_dml), vec!["RUNNING"]);

    // A consumer of another team reads the blue topic: it committed an offset and is a member.
    let group = format!("fp-e2e-billing-{:x}", std::process::id());
    rt.block_on(admin.commit_offset(&group, "int_p_feed", 0, 0))
        .unwrap();
    let mut conn = std::net::TcpStream::connect(KAFKA).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    let member = join(&mut conn, &group);
    let o = run(&["pipeline", "decommission", "--delete", "--no-ack"]);
    let o = o.code(1);
    let err = o.stderr_raw();
    let line = err
        .lines()
        .find(|l| l.starts_with(&format!("error: refused to delete {blue_dml}: ")))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!(
            "still read: consumer group {group} (1 member(s), lag "
        )) && line.ends_with(") reads topic int_p_feed"),
        "{line}"
    );
    assert_eq!(job_states(&blue_dml), vec!["RUNNING"], "blue kept");

    // The consumer leaves: nothing reads blue any more, the same command deletes it.
    leave(&mut conn, &group, &member);
    ok(run(&["pipeline", "decommission", "--delete", "--no-ack"]));
    assert!(
        !job_states(&blue_dml).contains(&"RUNNING".to_string()),
        "{:?}",
        job_states(&blue_dml)
    );
    assert_eq!(job_states(&green_dml), vec!["RUNNING"], "green untouched");
}
