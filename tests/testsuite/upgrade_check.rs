//! Upgrade verdicts from compiled plans (`COMPILE PLAN` JSON of Flink 2.2, in
//! `tests/data/upgrade/plans/`) and from the SQL alone: the rows measured by restoring a `SUM(amount) …
//! GROUP BY store_id` job's savepoint into each variant.

use crate::support::Test;
use crate::support::test::Outcome;
use flinkpipe::changes::upgrade::{OperatorChangeKind, Tier, Verdict, compare_plans};
use serde_json::Value;

fn plan(name: &str) -> Value {
    let path = format!(
        "{}/tests/data/upgrade/plans/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn compiled_plans_give_the_verdict_a_real_restore_gives() {
    let cases = [
        ("sum", "sum", Verdict::StateCompatible),
        ("sum", "sum_alias", Verdict::StateCompatible),
        (
            "sum",
            "sum_filter",
            Verdict::StateCompatibleSemanticsChanged,
        ),
        ("sum", "sum_city", Verdict::StateCompatibleSemanticsChanged),
        ("sum", "sum_count", Verdict::StateIncompatible),
        ("sum", "max", Verdict::StateIncompatible),
        ("sum", "sum_join", Verdict::StateIncompatible),
        ("proj", "proj_filter", Verdict::Stateless),
        ("proj", "sum", Verdict::StateIncompatible),
        ("sum", "proj", Verdict::StateIncompatible),
        // A rowtime deduplication keeps whole rows; the plan writes a row holding a time
        // attribute as structured JSON, not as its summary string: a column more in the kept row
        // fails the restore (StateMigrationException, measured).
        ("dedup", "dedup", Verdict::StateCompatible),
        ("dedup", "dedup_city", Verdict::StateIncompatible),
        // `orders_*`: plans of the labelled change pairs (`pairs.json`) on their `src_orders`.
        // A HAVING after the aggregate only makes it send `-U` rows (generateUpdateBefore).
        ("orders_sum", "orders_sum_having", Verdict::StateCompatible),
        // A HOP window's aggregate keeps a row count the planner adds; a TUMBLE one has none.
        ("orders_tumble", "orders_hop", Verdict::StateIncompatible),
        // Flink 2.x migrates state into and out of its TTL wrapping: a STATE_TTL hint set or
        // removed restores, under another retention.
        (
            "orders_sum",
            "orders_sum_ttl",
            Verdict::StateCompatibleSemanticsChanged,
        ),
        (
            "orders_sum_ttl",
            "orders_sum",
            Verdict::StateCompatibleSemanticsChanged,
        ),
    ];
    for (old, new, want) in cases {
        let a = compare_plans(&plan(old), &plan(new)).unwrap();
        assert_eq!(a.verdict, want, "{old} → {new}: {a:#?}");
        assert_eq!(a.tier, Tier::Engine);
        assert!(!a.reasons.is_empty(), "{old} → {new}");
    }
}

/// `HAVING COUNT(*) > 0` on an aggregate that already computes `COUNT(*)` adds a Calc between the
/// aggregate and the sink: the aggregate's state restores, but the sink's operator id follows the
/// graph before it. Into a `blackhole` sink (no state) it restores; into an `upsert-kafka` sink
/// (its writer keeps state) the restore is refused (measured: `having_count_existing`,
/// `having_count_existing_upsert_sink` in `pairs.json`); into a sink of a connector not measured
/// it is `unknown`.
#[test]
fn a_shape_change_before_a_sink_that_keeps_state_is_incompatible() {
    let a = compare_plans(&plan("orders_count"), &plan("orders_count_having")).unwrap();
    assert_eq!(a.verdict, Verdict::StateCompatible, "{a:#?}");
    let a = compare_plans(
        &plan("orders_count_upsert_sink"),
        &plan("orders_count_having_upsert_sink"),
    )
    .unwrap();
    assert_eq!(a.verdict, Verdict::StateIncompatible, "{a:#?}");
    assert!(
        a.operators
            .iter()
            .any(|o| o.operator == "sink" && o.change == OperatorChangeKind::Changed),
        "{a:#?}"
    );
    // The same plans unchanged, or into a sink of another connector.
    let same = compare_plans(
        &plan("orders_count_upsert_sink"),
        &plan("orders_count_upsert_sink"),
    )
    .unwrap();
    assert_eq!(same.verdict, Verdict::StateCompatible);
    let jdbc = |name: &str| {
        let mut p = plan(name);
        for n in p["nodes"].as_array_mut().unwrap() {
            if let Some(o) = n.pointer_mut("/dynamicTableSink/table/resolvedTable/options") {
                o["connector"] = "jdbc".into();
            }
        }
        p
    };
    let a = compare_plans(
        &jdbc("orders_count_upsert_sink"),
        &jdbc("orders_count_having_upsert_sink"),
    )
    .unwrap();
    assert_eq!(a.verdict, Verdict::Unknown, "{a:#?}");
}

#[test]
fn the_changed_part_of_an_operator_is_named() {
    let a = compare_plans(&plan("sum"), &plan("sum_count")).unwrap();
    let agg = &a.operators[0];
    assert_eq!(agg.operator, "group-aggregate");
    assert_eq!(agg.change, OperatorChangeKind::Changed);
    assert!(agg.fields.contains(&"aggCalls".to_string()), "{agg:?}");
    let a = compare_plans(&plan("sum"), &plan("sum_join")).unwrap();
    assert!(
        a.operators
            .iter()
            .any(|o| o.operator == "join" && o.change == OperatorChangeKind::Added),
        "{a:#?}"
    );
    let a = compare_plans(&plan("sum"), &plan("sum_filter")).unwrap();
    assert_eq!(a.operators[0].change, OperatorChangeKind::SemanticsChanged);
    assert_eq!(a.operators[0].fields, ["input"]);
}

#[test]
fn what_is_not_a_compiled_plan_is_an_error() {
    // A cycle (an edge back to an earlier node) is refused, not followed.
    let cyclic = serde_json::json!({
        "nodes": [{"id": 1, "type": "stream-exec-calc_1"}, {"id": 2, "type": "stream-exec-calc_1"}],
        "edges": [{"source": 1, "target": 2}, {"source": 2, "target": 1}]
    });
    assert!(compare_plans(&cyclic, &plan("sum")).is_err());
    assert!(compare_plans(&serde_json::json!({}), &plan("sum")).is_err());
    // No sink: not a statement's plan (never "stateless").
    assert!(compare_plans(&serde_json::json!({"nodes": [], "edges": []}), &plan("sum")).is_err());
    assert!(compare_plans(&plan("sum"), &serde_json::json!({"nodes": [], "edges": []})).is_err());
    assert!(
        compare_plans(
            &serde_json::json!({"nodes": [{"id": 1, "type": "x"}], "edges": [{"source": 1, "target": 9}]}),
            &plan("sum")
        )
        .is_err()
    );
}

/// The bundled example with one change of each kind committed on top of it.
fn changed_repo() -> crate::support::repo::Repo {
    let r = crate::support::repo::Repo::new(crate::support::our_fixture());
    r.commit("base", 1_700_000_000);
    r.edit(
        "facts/sales/fct_store_revenue_1m/sql-scripts/dml.sales_fct_store_revenue_1m.sql",
        |s| {
            s.replace(
                "CAST(SUM(qty) AS BIGINT)",
                "CAST(COUNT(DISTINCT qty) AS BIGINT)",
            )
        },
    );
    r.edit(
        "facts/inventory/fct_sku_demand/sql-scripts/dml.inventory_fct_sku_demand.sql",
        |s| s.replace("  GROUP BY sku_id", "  WHERE qty > 0\n  GROUP BY sku_id"),
    );
    r.edit(
        "facts/c360/fct_customer_orders/sql-scripts/dml.c360_fct_customer_orders.sql",
        |s| {
            s.replace(
                "CAST(pc.units AS BIGINT) AS units",
                "CAST(pc.units AS BIGINT) AS units_total",
            )
        },
    );
    r.edit(
        "intermediates/c360/int_clickstream_clean/sql-scripts/dml.int_c360_clickstream_clean.sql",
        |s| {
            s.replace(
                "WHERE page <> 'healthcheck'",
                "WHERE page <> 'healthcheck' AND page <> 'robots'",
            )
        },
    );
    r.edit(
        "intermediates/sales/int_paid_orders/sql-scripts/dml.int_sales_paid_orders.sql",
        |s| {
            format!(
                "-- reviewed: comments and blank lines only\n\n{}\n",
                s.replace('\n', "\n\n")
            )
        },
    );
    r.commit("changes", 1_700_000_100);
    r
}

fn run(args: &[&str]) -> Outcome {
    Test::outside(args)
}

fn verdicts(out: &Outcome) -> std::collections::BTreeMap<String, (String, String, String)> {
    let v = out.stdout_json();
    v["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["tables"][0].as_str().unwrap().to_string(),
                (
                    s["verdict"].as_str().unwrap().to_string(),
                    s["tier"].as_str().unwrap().to_string(),
                    s["action"]["gateway"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn offline_upgrade_check_gives_one_verdict_per_changed_statement() {
    let r = changed_repo();
    let out = run(&[
        "pipeline",
        "upgrade-check",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--engine",
        "offline",
        "--output",
        "json",
    ]);
    // A change needs a new version: exit 1.
    let out = out.code(1);
    let v = verdicts(&out);
    let want = |t: &str, verdict: &str, action: &str| {
        assert_eq!(
            v.get(t)
                .map(|(v, tier, a)| (v.as_str(), tier.as_str(), a.as_str())),
            Some((verdict, "offline", action)),
            "{t}: {v:#?}"
        );
    };
    want(
        "sales_fct_store_revenue_1m",
        "state-incompatible",
        "new-version",
    );
    // A filter added before the aggregate, into an upsert-kafka sink (which keeps state): whether
    // the job graph before the sink keeps its shape the offline reading does not know.
    want("inventory_fct_sku_demand", "unknown", "new-version");
    want(
        "c360_fct_customer_orders",
        "state-compatible",
        "restore-from-savepoint",
    );
    want(
        "int_c360_clickstream_clean",
        "stateless",
        "restart-from-offsets",
    );
    want("int_sales_paid_orders", "unchanged", "none");
    assert_eq!(v.len(), 5, "{v:#?}");
    // Only the statements of a table.
    let out = run(&[
        "pipeline",
        "upgrade-check",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--engine",
        "offline",
        "--table-name",
        "c360_fct_customer_orders",
        "--output",
        "json",
    ]);
    let out = out.code(0);
    assert_eq!(verdicts(&out).len(), 1);
}

/// On the local Flink (skipped without it; `FLINKPIPE_E2E=required` makes that a failure): the same
/// changes compiled by the planner.
#[test]
fn engine_upgrade_check_compiles_both_sides_on_the_local_flink() {
    let required = std::env::var("FLINKPIPE_E2E").is_ok_and(|v| v == "required");
    let up = std::process::Command::new("curl")
        .args(["-fsS", "--max-time", "5", "http://127.0.0.1:8083/v1/info"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !up {
        assert!(
            !required,
            "FLINKPIPE_E2E=required but no SQL Gateway at 127.0.0.1:8083"
        );
        eprintln!("skipped: no local Flink stack");
        return;
    }
    let r = changed_repo();
    let config = r.pipelines.parent().unwrap().join("upgrade-config.yaml");
    std::fs::write(
        &config,
        format!(
            "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:8083\n    jobmanager_url: http://127.0.0.1:8081\n    external_ddl: [{}/fixtures/external]\n",
            env!("CARGO_MANIFEST_DIR")
        ),
    )
    .unwrap();
    let out = run(&[
        "--config",
        config.to_str().unwrap(),
        "pipeline",
        "upgrade-check",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--output",
        "json",
    ]);
    let v = verdicts(&out);
    let want = |t: &str, verdict: &str| {
        assert_eq!(
            v.get(t).map(|(v, tier, _)| (v.as_str(), tier.as_str())),
            Some((verdict, "engine")),
            "{t}: {v:#?}\n{}",
            out.stdout_raw()
        );
    };
    want("sales_fct_store_revenue_1m", "state-incompatible");
    want(
        "inventory_fct_sku_demand",
        "state-compatible-semantics-changed",
    );
    want("c360_fct_customer_orders", "state-compatible");
    want("int_c360_clickstream_clean", "stateless");
    assert_eq!(v["int_sales_paid_orders"].0, "unchanged");
}

/// The labelled change pairs (`tests/data/upgrade/pairs.json`): each pair's old statement was
/// restored into its new one on a real Flink 2.2 and the outcome recorded. On the local Flink
/// (skipped without it), the engine's verdict is the labelled one for every pair; the offline
/// reading gives the labelled verdict or `unknown`, and never a compatible one for a restore that
/// failed.
#[test]
fn verdicts_match_the_measured_restores_of_the_labelled_change_pairs() {
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/tests/data/upgrade/pairs.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let pairs = set["pairs"].as_array().unwrap();
    let table = |name: &str| format!("fct_{name}");
    let named = |sql: &str, name: &str| {
        sql.replace("fct_out2", &format!("{}_2", table(name)))
            .replace("fct_out", &table(name))
    };
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, t) in ["src_orders", "src_payments", "src_stores"]
        .iter()
        .enumerate()
    {
        files.push((
            format!("sources/x/{t}/sql-scripts/ddl.{t}.sql"),
            format!("{};\n", set["sources"][i].as_str().unwrap()),
        ));
    }
    for p in pairs {
        let name = p["name"].as_str().unwrap();
        let t = table(name);
        let dir = format!("facts/x/{t}/sql-scripts");
        files.push((
            format!("{dir}/ddl.{t}.sql"),
            format!("{};\n", named(p["sink_ddl"].as_str().unwrap(), name)),
        ));
        files.push((
            format!("{dir}/dml.{t}.sql"),
            format!("{};\n", named(p["old"].as_str().unwrap(), name)),
        ));
        if ["old", "new"]
            .iter()
            .any(|side| p[side].as_str().unwrap().contains("fct_out2"))
        {
            let t2 = format!("{t}_2");
            files.push((
                format!("facts/x/{t2}/sql-scripts/ddl.{t2}.sql"),
                format!("{};\n", named(set["second_sink"].as_str().unwrap(), name)),
            ));
        }
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let r = crate::support::repo::Repo::new(crate::support::project(&refs));
    r.commit("old", 1_700_000_000);
    for p in pairs {
        let name = p["name"].as_str().unwrap();
        let t = table(name);
        r.write(
            &format!("facts/x/{t}/sql-scripts/dml.{t}.sql"),
            &format!("{};\n", named(p["new"].as_str().unwrap(), name)),
        );
    }
    r.commit("new", 1_700_000_100);
    let config = r.pipelines.parent().unwrap().join("config.yaml");
    std::fs::write(
        &config,
        "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:8083\n    jobmanager_url: http://127.0.0.1:8081\n",
    )
    .unwrap();
    let check = |engine: &str| {
        verdicts(&run(&[
            "--config",
            config.to_str().unwrap(),
            "pipeline",
            "upgrade-check",
            r.pipelines.to_str().unwrap(),
            "--since",
            "HEAD~1",
            "--engine",
            engine,
            "--output",
            "json",
        ]))
    };
    let offline = check("offline");
    for p in pairs {
        let (name, want) = (p["name"].as_str().unwrap(), p["verdict"].as_str().unwrap());
        let (got, tier, _) = &offline[&table(name)];
        assert_eq!(tier, "offline");
        assert!(
            got == want || got == "unknown",
            "{name}: offline says {got}, a real restore says {want} ({})",
            p["restore"]
        );
    }
    let required = std::env::var("FLINKPIPE_E2E").is_ok_and(|v| v == "required");
    let up = std::process::Command::new("curl")
        .args(["-fsS", "--max-time", "5", "http://127.0.0.1:8083/v1/info"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !up {
        assert!(!required, "FLINKPIPE_E2E=required but no SQL Gateway");
        eprintln!("engine verdicts skipped: no local Flink stack");
        return;
    }
    let engine = check("local");
    let wrong: Vec<String> = pairs
        .iter()
        .filter_map(|p| {
            let (name, want) = (p["name"].as_str().unwrap(), p["verdict"].as_str().unwrap());
            let (got, tier, _) = &engine[&table(name)];
            (got != want || tier != "engine")
                .then(|| format!("{name}: {got} ({tier}), want {want}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `--empirical` where it cannot run (no Flink behind the configured gateway, a table without unit
/// tests): each statement keeps its offline verdict, says why in `reasons`, and carries an
/// `empirical` object with `outcome: not-run`. Nothing is contacted but the closed port.
#[test]
fn empirical_not_run_keeps_the_offline_verdict_and_says_why() {
    let r = changed_repo();
    let config = r.root.join("config.yaml");
    std::fs::write(
        &config,
        "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:1\n    jobmanager_url: http://127.0.0.1:1\n",
    )
    .unwrap();
    let out = crate::support::command()
        .arg("--config")
        .arg(&config)
        .args([
            "pipeline",
            "upgrade-check",
            r.pipelines.to_str().unwrap(),
            "--since",
            "HEAD~1",
            "--empirical",
            "--timeout",
            "60",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    let out = Outcome::of("pipeline upgrade-check --empirical", out, None).code(1);
    let mut v: Value = out.stdout_json();
    v["base_commit"] = "<base>".into();
    insta::assert_json_snapshot!("upgrade_check_empirical_not_run", v);
}

/// `--empirical` runs on the local Flink: with `--engine offline` it is a usage error; `--timeout`
/// goes with `--empirical` only.
#[test]
fn empirical_flags_parse_and_refuse_what_does_not_fit() {
    let r = changed_repo();
    let p = r.pipelines.to_str().unwrap();
    run(&[
        "pipeline",
        "upgrade-check",
        p,
        "--since",
        "HEAD~1",
        "--empirical",
        "--engine",
        "offline",
    ])
    .code(2)
    .stderr_has("--empirical runs on the local Flink: it cannot go with --engine offline");
    run(&[
        "pipeline",
        "upgrade-check",
        p,
        "--since",
        "HEAD~1",
        "--timeout",
        "30",
    ])
    .code(2)
    .stderr_has("--empirical");
    run(&[
        "pipeline",
        "upgrade-check",
        p,
        "--empirical",
        "--timeout",
        "soon",
    ])
    .code(2);
    // Without --empirical nothing changes: no `empirical` key.
    let v = run(&[
        "pipeline",
        "upgrade-check",
        p,
        "--since",
        "HEAD~1",
        "--engine",
        "offline",
        "--output",
        "json",
    ])
    .stdout_json();
    assert!(
        v["statements"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("empirical").is_none()),
        "{v:#}"
    );
}

/// `--engine local` given explicitly answers from the engine or not at all: with no Flink behind
/// the configured gateway it fails (exit 2) naming the address tried, and compares nothing. Without
/// `--engine` the same project falls back to the offline reading, and every statement says why.
#[test]
fn explicit_engine_local_fails_when_no_engine_answers_and_only_the_default_falls_back() {
    let r = changed_repo();
    let config = r.root.join("config.yaml");
    std::fs::write(
        &config,
        "flinkpipe:\n  gateway:\n    url: http://127.0.0.1:1\n    jobmanager_url: http://127.0.0.1:1\n",
    )
    .unwrap();
    let p = r.pipelines.to_str().unwrap();
    let c = config.to_str().unwrap();
    let out = run(&[
        "--config",
        c,
        "pipeline",
        "upgrade-check",
        p,
        "--since",
        "HEAD~1",
        "--engine",
        "local",
        "--output",
        "json",
    ])
    .code(2)
    .stderr_has("--engine local: the local Flink does not answer at http://127.0.0.1:1");
    assert!(out.stdout_raw().trim().is_empty(), "{}", out.stdout_raw());
    let out = run(&[
        "--config",
        c,
        "pipeline",
        "upgrade-check",
        p,
        "--since",
        "HEAD~1",
        "--output",
        "json",
    ])
    .code(1);
    let v = out.stdout_json();
    for s in v["statements"].as_array().unwrap() {
        if s["verdict"] == "unchanged" {
            continue;
        }
        assert_eq!(s["tier"], "offline", "{s:#}");
        assert!(
            s["reasons"].as_array().unwrap().iter().any(|r| r
                .as_str()
                .unwrap()
                .contains("the local Flink does not answer")),
            "{s:#}"
        );
    }
}

/// The edges of the offline reading (issue #42), each as a project: a statement reading a window
/// aggregate through a view of a view in other folders (a filter after it changed, or the view's
/// window changed); one reading an `upsert-kafka` source (a filter changed: its normalization keeps
/// state, which the offline reading does not place: `unknown`, never `stateless`); a CTAS whose
/// query gains a `COUNT(*)` (judged, not "no DML changed", and a new version whatever the
/// verdict); an OVER aggregate over a named window whose frame changes (as the same change inline);
/// an `IN (SELECT …)` added before an aggregate (a join added).
#[test]
fn offline_verdicts_see_views_updating_sources_ctas_and_named_windows() {
    let orders = "CREATE TABLE src_o (id BIGINT, store_id INT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'kafka', 'topic' = 'o', 'format' = 'json');\n";
    let dim = "CREATE TABLE src_d (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'd', 'key.format' = 'json', 'value.format' = 'json');\n";
    let sink = |t: &str| {
        format!(
            "CREATE TABLE {t} (k BIGINT, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');\n"
        )
    };
    let v_win = "CREATE VIEW v_win AS SELECT store_id, window_start, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE src_o, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY store_id, window_start, window_end;\n";
    let v_top = "CREATE VIEW v_top AS SELECT store_id, total FROM v_win WHERE total > 0;\n";
    let over = |frame: &str| {
        format!(
            "INSERT INTO fct_over SELECT id, SUM(amount) OVER w FROM src_o WINDOW w AS (PARTITION BY store_id ORDER BY ts {frame});\n"
        )
    };
    let ctas = |calls: &str| {
        format!(
            "CREATE TABLE fct_ctas (store_id INT, PRIMARY KEY (store_id) NOT ENFORCED) WITH ('connector' = 'blackhole') AS SELECT store_id, {calls} FROM src_o GROUP BY store_id;\n"
        )
    };
    let semi = "INSERT INTO fct_semi SELECT store_id, COUNT(*) FROM src_o GROUP BY store_id;\n";
    let files: Vec<(String, String)> = vec![
        (
            "sources/x/src_o/sql-scripts/ddl.src_o.sql".into(),
            orders.into(),
        ),
        (
            "sources/x/src_d/sql-scripts/ddl.src_d.sql".into(),
            dim.into(),
        ),
        (
            "views/x/v_win/sql-scripts/ddl.v_win.sql".into(),
            v_win.into(),
        ),
        (
            "views/y/v_top/sql-scripts/ddl.v_top.sql".into(),
            v_top.into(),
        ),
        (
            "facts/x/fct_view/sql-scripts/ddl.fct_view.sql".into(),
            sink("fct_view"),
        ),
        (
            "facts/x/fct_view/sql-scripts/dml.fct_view.sql".into(),
            "INSERT INTO fct_view SELECT store_id, total FROM v_top WHERE total > 1;\n".into(),
        ),
        (
            "facts/x/fct_win/sql-scripts/ddl.fct_win.sql".into(),
            sink("fct_win"),
        ),
        (
            "facts/x/fct_win/sql-scripts/dml.fct_win.sql".into(),
            "INSERT INTO fct_win SELECT store_id, total FROM v_win;\n".into(),
        ),
        (
            "facts/x/fct_up/sql-scripts/ddl.fct_up.sql".into(),
            sink("fct_up"),
        ),
        (
            "facts/x/fct_up/sql-scripts/dml.fct_up.sql".into(),
            "INSERT INTO fct_up SELECT id, CHAR_LENGTH(name) FROM src_d WHERE id > 1;\n".into(),
        ),
        (
            "facts/x/fct_ctas/sql-scripts/ddl.fct_ctas.sql".into(),
            ctas("SUM(amount) AS total"),
        ),
        (
            "facts/x/fct_over/sql-scripts/ddl.fct_over.sql".into(),
            sink("fct_over"),
        ),
        (
            "facts/x/fct_over/sql-scripts/dml.fct_over.sql".into(),
            over("ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"),
        ),
        (
            "facts/x/fct_semi/sql-scripts/ddl.fct_semi.sql".into(),
            sink("fct_semi"),
        ),
        (
            "facts/x/fct_semi/sql-scripts/dml.fct_semi.sql".into(),
            semi.into(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let r = crate::support::repo::Repo::new(crate::support::project(&refs));
    r.commit("old", 1_700_000_000);
    r.edit("facts/x/fct_view/sql-scripts/dml.fct_view.sql", |s| {
        s.replace("total > 1", "total > 5")
    });
    // The view a statement reads changes its window: the statement's DML changed too (an alias).
    r.edit("views/x/v_win/sql-scripts/ddl.v_win.sql", |s| {
        s.replace("'10' SECOND", "'20' SECOND")
    });
    r.edit("facts/x/fct_win/sql-scripts/dml.fct_win.sql", |s| {
        s.replace("SELECT store_id, total", "SELECT store_id AS k, total AS v")
    });
    r.edit("facts/x/fct_up/sql-scripts/dml.fct_up.sql", |s| {
        s.replace("id > 1", "id > 5")
    });
    r.write(
        "facts/x/fct_ctas/sql-scripts/ddl.fct_ctas.sql",
        &ctas("SUM(amount) AS total, COUNT(*) AS n"),
    );
    r.write(
        "facts/x/fct_over/sql-scripts/dml.fct_over.sql",
        &over("ROWS BETWEEN 5 PRECEDING AND CURRENT ROW"),
    );
    r.write(
        "facts/x/fct_semi/sql-scripts/dml.fct_semi.sql",
        &semi.replace(" GROUP BY", " WHERE id IN (SELECT id FROM src_d) GROUP BY"),
    );
    r.commit("new", 1_700_000_100);
    let out = run(&[
        "pipeline",
        "upgrade-check",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--engine",
        "offline",
        "--output",
        "json",
    ])
    .code(1);
    let v = verdicts(&out);
    let want = |t: &str, verdict: &str, action: &str| {
        assert_eq!(
            v.get(t)
                .map(|(v, tier, a)| (v.as_str(), tier.as_str(), a.as_str())),
            Some((verdict, "offline", action)),
            "{t}: {}",
            out.stdout_raw()
        );
    };
    // Its filter after the aggregate changed, and the window of the view behind the view it reads.
    want(
        "fct_view",
        "state-compatible-semantics-changed",
        "new-version",
    );
    want(
        "fct_win",
        "state-compatible-semantics-changed",
        "new-version",
    );
    want("fct_up", "unknown", "new-version");
    want("fct_ctas", "state-incompatible", "new-version");
    want(
        "fct_over",
        "state-compatible-semantics-changed",
        "new-version",
    );
    want("fct_semi", "state-incompatible", "new-version");
    assert_eq!(v.len(), 6, "{v:#?}");
    // A CTAS changed only by an alias: compatible state, yet a new version (its query is its
    // schema), so the exit status says a new version is needed.
    r.write(
        "facts/x/fct_ctas/sql-scripts/ddl.fct_ctas.sql",
        &ctas("SUM(amount) AS total2, COUNT(*) AS n"),
    );
    r.commit("alias", 1_700_000_200);
    let out = run(&[
        "pipeline",
        "upgrade-check",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--engine",
        "offline",
        "--output",
        "json",
    ])
    .code(1);
    let v = verdicts(&out);
    assert_eq!(
        v.get("fct_ctas").map(|(v, _, a)| (v.as_str(), a.as_str())),
        Some(("state-compatible", "new-version")),
        "{}",
        out.stdout_raw()
    );
}
