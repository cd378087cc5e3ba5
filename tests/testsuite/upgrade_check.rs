//! Upgrade verdicts from compiled plans (`COMPILE PLAN` JSON of Flink 2.2, in
//! `tests/data/upgrade/plans/`) and from the SQL alone: the rows measured by restoring a `SUM(amount) …
//! GROUP BY store_id` job's savepoint into each variant.

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
        ("sum", "sum_filter", Verdict::StateCompatibleSemanticsChanged),
        ("sum", "sum_city", Verdict::StateCompatibleSemanticsChanged),
        ("sum", "sum_count", Verdict::StateIncompatible),
        ("sum", "max", Verdict::StateIncompatible),
        ("sum", "sum_join", Verdict::StateIncompatible),
        ("proj", "proj_filter", Verdict::Stateless),
        ("proj", "sum", Verdict::StateIncompatible),
        ("sum", "proj", Verdict::StateIncompatible),
    ];
    for (old, new, want) in cases {
        let a = compare_plans(&plan(old), &plan(new)).unwrap();
        assert_eq!(a.verdict, want, "{old} → {new}: {a:#?}");
        assert_eq!(a.tier, Tier::Engine);
        assert!(!a.reasons.is_empty(), "{old} → {new}");
    }
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
    assert!(compare_plans(&serde_json::json!({}), &plan("sum")).is_err());
    assert!(
        compare_plans(
            &serde_json::json!({"nodes": [{"id": 1, "type": "x"}], "edges": [{"source": 1, "target": 9}]}),
            &plan("sum")
        )
        .is_err()
    );
}
