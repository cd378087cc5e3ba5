//! Which compute pool each table's statements run in: a pure function of the table, its product and
//! the configuration, so the plan shows it (`compute_pool_id` of every node) and the deploy sends it
//! (`spec.compute_pool_id` of a statement,
//! <https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>). Capacity is not the
//! plan's concern: the deploy reads the pools before it creates anything.

use std::collections::BTreeMap;

/// The pool rules of a run, in order of precedence:
/// 1. `run`: `--compute-pool-id` of the command (every statement of this run);
/// 2. `by_name[table]`, then `by_name[product]`: `flinkpipe.compute_pools`;
/// 3. `default`: `flink.compute_pool_id` (`$SL_FLINK_COMPUTE_POOL_ID`).
///
/// With none of them the statement goes to the environment's default pool (`None`); a target
/// without pools (the SQL Gateway) gets an empty assignment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolAssignment {
    /// `--compute-pool-id`.
    pub run: Option<String>,
    /// Table or product name → pool id.
    pub by_name: BTreeMap<String, String>,
    /// `flink.compute_pool_id`.
    pub default: Option<String>,
}

impl PoolAssignment {
    /// The pool of `table` of `product`.
    pub fn pool_for(&self, table: &str, product: &str) -> Option<String> {
        self.run
            .clone()
            .or_else(|| self.by_name.get(table).cloned())
            .or_else(|| self.by_name.get(product).cloned())
            .or_else(|| self.default.clone())
            .filter(|p| !p.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence() {
        let mut a = PoolAssignment {
            run: None,
            by_name: BTreeMap::from([
                ("sales".to_string(), "lfcp-sales".to_string()),
                ("sales_fct_x".to_string(), "lfcp-x".to_string()),
            ]),
            default: Some("lfcp-default".into()),
        };
        assert_eq!(
            a.pool_for("sales_fct_x", "sales").as_deref(),
            Some("lfcp-x")
        );
        assert_eq!(
            a.pool_for("sales_dim_y", "sales").as_deref(),
            Some("lfcp-sales")
        );
        assert_eq!(
            a.pool_for("c360_z", "c360").as_deref(),
            Some("lfcp-default")
        );
        a.run = Some("lfcp-run".into());
        assert_eq!(
            a.pool_for("sales_fct_x", "sales").as_deref(),
            Some("lfcp-run")
        );
        assert_eq!(PoolAssignment::default().pool_for("t", "p"), None);
    }
}
