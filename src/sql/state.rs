//! Statefulness rules: which operators keep keyed state across events.
//!
//! Sources of the rules: `docs/src/concepts/statefulness.md` and Flink's stateful operators
//! (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/overview/#stateful-operators>).
//! Stateful: group and global aggregates, `SELECT DISTINCT`, regular joins (explicit or comma),
//! interval joins, `IN`/`EXISTS`/scalar subqueries (semi/anti joins), window aggregations, `OVER`
//! (and `LAG`/`LEAD`), `ROW_NUMBER` dedup/Top-N, `UNION`/`INTERSECT`/`EXCEPT` without `ALL`,
//! `MATCH_RECOGNIZE`, temporal joins `FOR SYSTEM_TIME AS OF` (conservatively: the file alone cannot tell a
//! lookup join from an event-time temporal join). Stateless: projection, filter, `UNION ALL`, `UNNEST`,
//! `LATERAL TABLE`, a bare window-TVF projection, `ML_PREDICT`.

use super::model::{StateReason, Statefulness};

/// Aggregate functions of Flink SQL (built-in), upper-case. A call of one of these without `OVER` makes its
/// SELECT an aggregation (group or global).
const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "SUM0",
    "AVG",
    "MIN",
    "MAX",
    "COLLECT",
    "LISTAGG",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
    "FIRST_VALUE",
    "LAST_VALUE",
    "ARRAY_AGG",
    "JSON_OBJECTAGG",
    "JSON_ARRAYAGG",
    "APPROX_COUNT_DISTINCT",
    "BOOL_AND",
    "BOOL_OR",
    "EVERY",
    "SOME",
    "ANY_VALUE",
    "MEDIAN",
    "PERCENTILE",
    "PERCENTILE_CONT",
    "PERCENTILE_DISC",
    "GROUPING",
];

/// Window table-valued functions (Flink `TABLE(TUMBLE(TABLE t, …))`) and the legacy group-window functions
/// used in `GROUP BY TUMBLE(ts, INTERVAL …)`.
const WINDOW_FUNCTIONS: &[&str] = &["TUMBLE", "HOP", "CUMULATE", "SESSION"];

/// Ranking functions whose `OVER` use is Flink's deduplication / Top-N pattern.
const RANKING: &[&str] = &["ROW_NUMBER", "RANK", "DENSE_RANK"];

/// Functions that always need an ordered per-key history.
const HISTORY: &[&str] = &["LAG", "LEAD"];

fn last_part(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// Whether the last part of `name` is one of `list` (any case). The last part is taken once, not once per
/// candidate: these run for every function call of every query.
fn last_part_in(name: &str, list: &[&str]) -> bool {
    let last = last_part(name);
    list.iter().any(|a| a.eq_ignore_ascii_case(last))
}

/// Whether `name` (any case, possibly qualified) is a built-in aggregate function.
pub fn is_aggregate(name: &str) -> bool {
    last_part_in(name, AGGREGATES)
}

/// Whether `name` is a window TVF / legacy group-window function.
pub fn is_window_function(name: &str) -> bool {
    last_part_in(name, WINDOW_FUNCTIONS)
}

/// Whether `name` is `ROW_NUMBER`, `RANK` or `DENSE_RANK`.
pub fn is_ranking(name: &str) -> bool {
    last_part_in(name, RANKING)
}

/// Whether `name` is `LAG` or `LEAD`.
pub fn is_history(name: &str) -> bool {
    last_part_in(name, HISTORY)
}

/// The statefulness of one statement: `None` when it writes no query result, otherwise stateful iff some
/// operator keeping state was found.
pub fn classify(writes_query: bool, reasons: &[StateReason]) -> Statefulness {
    if !writes_query {
        Statefulness::None
    } else if reasons.is_empty() {
        Statefulness::Stateless
    } else {
        Statefulness::Stateful
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_aggregate("count"));
        assert!(is_aggregate("SUM"));
        assert!(!is_aggregate("upper"));
        assert!(is_window_function("tumble"));
        assert!(is_ranking("Row_Number"));
        assert!(is_history("lag"));
    }

    #[test]
    fn classification() {
        assert_eq!(classify(false, &[StateReason::Over]), Statefulness::None);
        assert_eq!(classify(true, &[]), Statefulness::Stateless);
        assert_eq!(
            classify(true, &[StateReason::Union]),
            Statefulness::Stateful
        );
    }
}
