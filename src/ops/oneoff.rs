//! One-off statements that must finish (COMPLETED) and are then removed: a `DROP TABLE` of
//! `project delete-unused-tables`, the ALTERs of `pipeline prepare`. The statement is created unless
//! one of that name exists (a rerun after a crash: adopted; one being deleted or FAILED: waited out,
//! then created again), waited for, then deleted: nothing is left behind.

use super::target::Connected;
use crate::target::{Phase, StatementKind, StatementSpec};
use std::time::Duration;

/// Runs `sql` as statement `name` until COMPLETED, then deletes the statement.
///
/// Errors: the target's (FAILED with its detail, a timeout), secrets masked.
pub async fn run_to_completion(
    c: &Connected,
    name: &str,
    sql: &str,
    compute_pool: Option<String>,
    timeout: Duration,
) -> Result<(), String> {
    let spec = StatementSpec {
        name: name.to_string(),
        sql: sql.to_string(),
        properties: Default::default(),
        kind: StatementKind::Ddl,
        compute_pool,
    };
    let target = c.target.as_ref();
    let gone = |s: Option<&crate::target::StatementState>| s.is_none();
    let r = async {
        match target.get_statement(name).await? {
            None => {
                target.create_statement(&spec).await?;
            }
            // A statement of that name on its way out (an earlier run's), or one that failed: it
            // goes first, then this one is created.
            Some(s) if matches!(s.phase, Phase::Deleting | Phase::Failed) => {
                if s.phase == Phase::Failed {
                    target.delete_statement(name).await?;
                }
                crate::deploy::executor::wait_until(
                    target,
                    name,
                    timeout,
                    crate::target::Backoff::POLL,
                    gone,
                )
                .await?;
                target.create_statement(&spec).await?;
            }
            // The same statement from a run that died before removing it: adopted.
            Some(_) => {}
        }
        crate::deploy::executor::wait_until(
            target,
            name,
            timeout,
            crate::target::Backoff::POLL,
            |s| s.is_some_and(|s| s.phase == Phase::Completed),
        )
        .await?;
        target.delete_statement(name).await
    }
    .await;
    r.map(|_| ()).map_err(|e| c.scrubber.scrub(&e.to_string()))
}
