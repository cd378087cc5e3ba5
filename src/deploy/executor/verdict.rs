//! The upgrade verdict of a running statement against its new SQL, by the best judge at hand: the
//! target's own planner when it has one (the SQL Gateway compiles both texts, and
//! [`crate::changes::upgrade::compare_plans`] diffs their stateful exec nodes), else the SQL front
//! end ([`crate::changes::upgrade::compare_sql`], in [`super::decide`]). The planner's answer is
//! gathered before deciding ([`super::Known::engine_verdict`]), so the decision stays a pure
//! function of its facts.

use super::decide::Known;
use crate::changes::upgrade::{Verdict, compare_plans};
use crate::deploy::spec::{DeployNode, Step};
use crate::plan::Action;
use crate::sql::text::normalize_sql;
use crate::target::{Phase, StatementKind, StatementSpec, StatementState, Target};

/// Whether deciding `step`, whose statement is in state `s`, would weigh the upgrade verdict of
/// the running text against the new one, and the target's planner could give it: a restarted DML
/// (not one the interrupted run already made) whose SQL changed, running or stopped with a text it
/// carries, on a target with savepoints ([`Known::savepoint_restart`]).
pub fn asks_for_engine_verdict(
    s: &StatementState,
    step: &Step,
    node: &DeployNode,
    known: Known,
) -> bool {
    known.savepoint_restart
        && !known.ours
        && !step.is_drop
        && node.action == Action::Restart
        && step.spec.kind == StatementKind::Dml
        && matches!(s.phase, Phase::Running | Phase::Stopped | Phase::Stopping)
        && normalize_sql(&s.sql) != normalize_sql(&step.spec.sql)
        && !crate::sql::analyze(&s.sql).statements.is_empty()
}

/// The verdict of the target's planner on replacing `running` by `new`: both texts compiled on the
/// target ([`Target::compiled_plan`]) and their plans compared. `None` when the target has no
/// planner, either text cannot be compiled there (the old text may read a table the project no
/// longer declares) or the plans cannot be read: the SQL front end's verdict then stands.
pub async fn engine_verdict(
    target: &dyn Target,
    running: &StatementState,
    new: &StatementSpec,
) -> Option<Verdict> {
    let old = StatementSpec {
        name: new.name.clone(),
        sql: running.sql.clone(),
        properties: running.properties.clone(),
        kind: StatementKind::Dml,
        compute_pool: None,
    };
    let compiled = |spec: StatementSpec, side: &'static str| async move {
        match target.compiled_plan(&spec).await {
            Ok(plan) => plan,
            Err(e) => {
                tracing::info!(
                    "{}: the {side} SQL was not compiled on the target ({e}): the SQL front end's verdict is used",
                    spec.name
                );
                None
            }
        }
    };
    let old_plan = compiled(old, "running").await?;
    let new_plan = compiled(new.clone(), "new").await?;
    match compare_plans(&old_plan, &new_plan) {
        Ok(a) => Some(a.verdict),
        Err(e) => {
            tracing::info!(
                "{}: the compiled plans could not be compared ({e}): the SQL front end's verdict is used",
                new.name
            );
            None
        }
    }
}
