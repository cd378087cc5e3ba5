//! Compute pool capacity before a deploy: how many statements the plan will start in each pool,
//! against each pool's `status.current_cfu` and `spec.max_cfu`
//! (<https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>),
//! so that a deploy that would push a pool past `flink.max_cfu_percent_before_allocation` (shift_left's
//! key, default 0.8) stops before it creates anything.
//!
//! **The estimate**: one CFU per statement that will start running — a DML, statement set, CTAS or
//! materialized table that is absent, stopped or failed now, or that a carry-over starts beside the
//! running one, or that moves to another pool (it starts in the new one). A DDL completes at once
//! (0), a statement that replaces a running one in place, in the same pool, needs nothing more (0). Confluent does not say what a statement will use before it runs (statements
//! scale with their load), so this is a floor, not a forecast.

use crate::deploy::DeployNode;
use crate::deploy::executor::{DeployOptions, Known, StepPlan, decide};
use crate::plan::Action;
use crate::target::cloud::{ComputePool, PoolPhase};
use crate::target::{StatementKind, StatementState};
use serde::Serialize;
use std::collections::BTreeMap;

/// shift_left's default share of a pool a deploy may fill.
pub const DEFAULT_MAX_CFU_RATIO: f64 = 0.8;

/// The statements a plan starts, by pool (`None`: the environment's default pool).
pub fn starts_by_pool(
    nodes: &[DeployNode],
    live: &BTreeMap<String, StatementState>,
    options: &DeployOptions,
    carry_over: bool,
) -> BTreeMap<Option<String>, Vec<String>> {
    let mut out: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
    let known = Known {
        carry_over,
        ..Known::default()
    };
    for n in nodes.iter().filter(|n| n.action != Action::Skip) {
        for step in n.steps.iter().filter(|s| s.spec.kind == StatementKind::Dml) {
            let existing = live.get(&step.spec.name);
            let is_live = existing.is_some_and(|s| s.phase.is_live());
            let starts = match decide::decide(existing, step, n, options, known) {
                StepPlan::Create | StepPlan::DropAndRecreate | StepPlan::FinishHandover => true,
                // In place it needs nothing more; moved to another pool, it starts in the new
                // one (and frees a CFU in the old one, which this floor does not count).
                StepPlan::Recreate { .. } => {
                    !is_live
                        || existing.is_some_and(|s| decide::pool_moved(s, &step.spec).is_some())
                }
                StepPlan::CarryOver => true,
                StepPlan::StopResume { stop_first }
                | StepPlan::SavepointRestart { stop_first, .. } => !stop_first,
                StepPlan::Adopt { .. } | StepPlan::Refuse(_) | StepPlan::SkipDrop => false,
            };
            if starts {
                out.entry(step.spec.compute_pool.clone())
                    .or_default()
                    .push(step.spec.name.clone());
            }
        }
    }
    out
}

/// What a pool can take.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    /// The new statements fit under the limit.
    Fits,
    /// They would push the pool past the limit.
    OverLimit,
    /// The pool does not exist in the environment.
    Missing,
    /// The pool exists but is not PROVISIONED (its phase: PROVISIONING, FAILED, DEPROVISIONING…):
    /// statements sent there would not run. Blocks unless `--allow-pool-overcommit`.
    NotReady {
        /// The pool's phase (serialised as its wire spelling).
        phase: PoolPhase,
    },
    /// The pool does not say how many CFUs it uses (no `status.current_cfu`): capacity not checked.
    /// Does not block; never reported as fitting.
    UsageUnknown,
}

/// One pool's check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolCheck {
    /// `lfcp-…`.
    pub pool: String,
    /// `spec.display_name` (empty when the pool is missing).
    pub display_name: String,
    /// `status.current_cfu`; `None` when the pool is missing or does not say.
    pub current_cfu: Option<u32>,
    /// `spec.max_cfu`.
    pub max_cfu: u32,
    /// CFUs the deploy adds (one per statement it starts, an estimate).
    pub needed_cfu: u32,
    /// The limit: `max_cfu × ratio`.
    pub limit_cfu: f64,
    /// The statements it starts there.
    pub statements: Vec<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
}

impl PoolCheck {
    /// Whether the deploy must stop here (unless `--allow-pool-overcommit` for
    /// [`Verdict::OverLimit`] and [`Verdict::NotReady`]).
    pub fn blocks(&self) -> bool {
        matches!(
            self.verdict,
            Verdict::OverLimit | Verdict::Missing | Verdict::NotReady { .. }
        )
    }

    /// CFUs in use after the deploy, as estimated (`current + needed`, never overflowing); `None`
    /// when the current use is unknown.
    pub fn after_deploy(&self) -> Option<u64> {
        self.current_cfu
            .map(|c| u64::from(c).saturating_add(u64::from(self.needed_cfu)))
    }

    /// One line for the user.
    pub fn describe(&self, ratio: f64) -> String {
        let name = if self.display_name.is_empty() {
            self.pool.clone()
        } else {
            format!("{} ({})", self.pool, self.display_name)
        };
        match &self.verdict {
            Verdict::Fits => format!(
                "compute pool {name}: {} of {} CFUs in use, this deploy starts {} statement(s) needing about {} more: fits under {:.1} ({:.0} % of {})",
                self.current_cfu.unwrap_or(0),
                self.max_cfu,
                self.statements.len(),
                self.needed_cfu,
                self.limit_cfu,
                ratio * 100.0,
                self.max_cfu
            ),
            Verdict::OverLimit => format!(
                "compute pool {name}: {} of {} CFUs in use, and this deploy starts {} statement(s) needing about {} more (one CFU per running statement, an estimate): {} > {:.1} ({:.0} % of {}, flink.max_cfu_percent_before_allocation)",
                self.current_cfu.unwrap_or(0),
                self.max_cfu,
                self.statements.len(),
                self.needed_cfu,
                self.after_deploy().unwrap_or(0),
                self.limit_cfu,
                ratio * 100.0,
                self.max_cfu
            ),
            Verdict::Missing => format!(
                "compute pool {} does not exist in this environment ({} statement(s) would go there)",
                self.pool,
                self.statements.len()
            ),
            Verdict::NotReady { phase } => format!(
                "compute pool {name} is {}, not PROVISIONED: the {} statement(s) this deploy starts there would not run (wait until it is PROVISIONED, or give the tables another pool)",
                phase.as_str(),
                self.statements.len()
            ),
            Verdict::UsageUnknown => format!(
                "compute pool {name}: its use is unknown (the control plane gives no status.current_cfu), so whether the {} statement(s) this deploy starts fit under {:.1} CFUs ({:.0} % of {}) is not checked",
                self.statements.len(),
                self.limit_cfu,
                ratio * 100.0,
                self.max_cfu
            ),
        }
    }
}

/// Checks one pool (`None`: it does not exist) against the statements a deploy starts in it.
pub fn check_pool(
    id: &str,
    pool: Option<&ComputePool>,
    statements: &[String],
    ratio: f64,
) -> PoolCheck {
    let needed = u32::try_from(statements.len()).unwrap_or(u32::MAX);
    let Some(p) = pool else {
        return PoolCheck {
            pool: id.to_string(),
            display_name: String::new(),
            current_cfu: None,
            max_cfu: 0,
            needed_cfu: needed,
            limit_cfu: 0.0,
            statements: statements.to_vec(),
            verdict: Verdict::Missing,
        };
    };
    let limit = f64::from(p.max_cfu) * ratio;
    let verdict = if p.phase != PoolPhase::Provisioned {
        Verdict::NotReady {
            phase: p.phase.clone(),
        }
    } else {
        match p.current_cfu {
            None if needed > 0 => Verdict::UsageUnknown,
            // u64: `current + needed` cannot overflow; exact in an f64 at these sizes.
            Some(c) if needed > 0 && (u64::from(c) + u64::from(needed)) as f64 > limit + 1e-9 => {
                Verdict::OverLimit
            }
            _ => Verdict::Fits,
        }
    };
    PoolCheck {
        pool: id.to_string(),
        display_name: p.display_name.clone(),
        current_cfu: p.current_cfu,
        max_cfu: p.max_cfu,
        needed_cfu: needed,
        limit_cfu: limit,
        statements: statements.to_vec(),
        verdict,
    }
}

/// The capacity check of a deploy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    /// `flink.max_cfu_percent_before_allocation`.
    pub ratio: f64,
    /// Each pool the deploy starts statements in.
    pub pools: Vec<PoolCheck>,
    /// Why (part of) the check was not made: no Cloud API key, statements in the environment's
    /// default pool.
    pub notes: Vec<String>,
}

impl Capacity {
    /// The pools that stop the deploy: missing, or over the limit or not ready unless
    /// `allow_overcommit`.
    pub fn blocking(&self, allow_overcommit: bool) -> Vec<&PoolCheck> {
        self.pools
            .iter()
            .filter(|p| {
                matches!(p.verdict, Verdict::Missing)
                    || (!allow_overcommit
                        && matches!(p.verdict, Verdict::OverLimit | Verdict::NotReady { .. }))
            })
            .collect()
    }
}

/// `flink.max_cfu_percent_before_allocation` as a ratio.
///
/// Errors: a value outside (0, 1], naming the config file and the key's line when it can be found.
pub fn ratio_of(cfg: &crate::config::Config) -> Result<f64, crate::config::ConfigError> {
    const KEY: &str = "flink.max_cfu_percent_before_allocation";
    match cfg.flink.max_cfu_percent_before_allocation {
        None => Ok(DEFAULT_MAX_CFU_RATIO),
        Some(r) if r > 0.0 && r <= 1.0 => Ok(r),
        Some(r) => Err(crate::config::ConfigError::Parse {
            path: cfg
                .source
                .clone()
                .unwrap_or_else(|| std::path::PathBuf::from("config.yaml")),
            message: format!(
                "{}{KEY}: {r} is not a share of the pool between 0 and 1 (0.8 = 80 %)",
                cfg.line_of(KEY)
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default()
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(current: u32, max: u32, phase: PoolPhase) -> ComputePool {
        pool_using(Some(current), max, phase)
    }

    fn pool_using(current: Option<u32>, max: u32, phase: PoolPhase) -> ComputePool {
        ComputePool {
            id: "lfcp-1".into(),
            display_name: "sales".into(),
            cloud: "AWS".into(),
            region: "us-west-2".into(),
            max_cfu: max,
            current_cfu: current,
            phase,
            default_pool: false,
        }
    }

    #[test]
    fn verdicts() {
        let two = vec!["a".to_string(), "b".to_string()];
        let p = pool(2, 5, PoolPhase::Provisioned);
        // 2 + 2 = 4 ≤ 4.0 (80 % of 5): fits; 3 + 2 = 5 > 4.0: over.
        assert_eq!(
            check_pool("lfcp-1", Some(&p), &two, 0.8).verdict,
            Verdict::Fits
        );
        let full = pool(3, 5, PoolPhase::Provisioned);
        let c = check_pool("lfcp-1", Some(&full), &two, 0.8);
        assert_eq!(c.verdict, Verdict::OverLimit);
        assert!(c.blocks());
        assert!(
            c.describe(0.8).contains("3 of 5 CFUs in use") && c.describe(0.8).contains("5 > 4.0"),
            "{}",
            c.describe(0.8)
        );
        // Nothing to start: never over.
        assert_eq!(
            check_pool("lfcp-1", Some(&full), &[], 0.8).verdict,
            Verdict::Fits
        );
        assert_eq!(
            check_pool("lfcp-9", None, &two, 0.8).verdict,
            Verdict::Missing
        );
        let new = pool(0, 5, PoolPhase::Provisioning);
        assert_eq!(
            check_pool("lfcp-1", Some(&new), &two, 0.8).verdict,
            Verdict::NotReady {
                phase: PoolPhase::Provisioning
            }
        );
    }

    /// Every pool that is not PROVISIONED blocks (even with room), unless overcommit is allowed; a
    /// pool that does not say its use is never reported as fitting; huge numbers do not overflow.
    #[test]
    fn pools_not_ready_block_unknown_use_is_not_a_fit_and_sums_saturate() {
        let one = vec!["a".to_string()];
        for phase in [
            PoolPhase::Provisioning,
            PoolPhase::Failed,
            PoolPhase::Deprovisioning,
            PoolPhase::Unknown("PAUSED".into()),
        ] {
            let c = check_pool("lfcp-1", Some(&pool(0, 50, phase.clone())), &one, 0.8);
            assert!(c.blocks(), "{phase:?}");
            assert!(
                c.describe(0.8).contains("not PROVISIONED"),
                "{}",
                c.describe(0.8)
            );
            let cap = Capacity {
                ratio: 0.8,
                pools: vec![c],
                notes: Vec::new(),
            };
            assert_eq!(cap.blocking(false).len(), 1);
            assert!(
                cap.blocking(true).is_empty(),
                "--allow-pool-overcommit proceeds"
            );
        }
        let unknown = check_pool(
            "lfcp-1",
            Some(&pool_using(None, 5, PoolPhase::Provisioned)),
            &one,
            0.8,
        );
        assert_eq!(unknown.verdict, Verdict::UsageUnknown);
        assert!(!unknown.blocks());
        let text = unknown.describe(0.8);
        assert!(text.contains("unknown") && !text.contains("fits"), "{text}");
        let full = check_pool(
            "lfcp-1",
            Some(&pool(u32::MAX, u32::MAX, PoolPhase::Provisioned)),
            &one,
            0.8,
        );
        assert_eq!(full.verdict, Verdict::OverLimit);
        assert_eq!(full.after_deploy(), Some(u64::from(u32::MAX) + 1));
    }
}
