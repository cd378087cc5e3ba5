//! What to do with one statement: a pure function of what the target says about it, the step, its
//! node (the plan's action, statefulness) and the options. No I/O: the executor's `effects` gathers the
//! facts, calls [`decide`] and carries the [`StepPlan`] out.
//!
//! The rules (Confluent's carry-over offsets,
//! <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/carry-over-offsets.html>;
//! the statement name is the idempotency key and a statement's SQL cannot change in place,
//! <https://docs.confluent.io/cloud/current/flink/concepts/statements.html>;
//! docs/src/guide/deploy.md, "How it runs"):
//! - a `DROP` statement runs only on a restart with `--allow-drop`;
//! - absent → create; present with the same SQL and live → adopt (a DDL of a restarted table: keep);
//! - a stateless DML restarted with changed properties or changed SQL → carry the offsets over
//!   (Confluent only);
//! - a DML restarted with changed SQL on a target with savepoints (the SQL Gateway), judged by the
//!   upgrade verdict of the running text against the new one: `state-compatible` (or `unchanged`) →
//!   stop with a savepoint and start the new SQL from it (`upgrade (savepoint)`), `stateless` → the
//!   same, leaving the old operators' state behind (`restart (offsets)`); the other verdicts as below;
//! - a DML with the same SQL that is stopped, or live and restarted statelessly (or not restarted
//!   but stopped) → stop if needed and resume in place;
//! - a changed DDL → refused, or with `--allow-drop` on a restart: drop the table and recreate;
//! - changed SQL of a statement the plan does not restart → refused (left alone);
//! - new SQL replacing a live or stopped DML whose running text is not *proven* stateless (the
//!   verdict `stateless`; `unknown` and every other verdict count as stateful), whatever the new
//!   SQL is → refused (state loss) unless `--allow-state-loss` names it;
//! - anything else (a restarted stateful DML, FAILED, STOPPED with new SQL…) → delete and create
//!   again, validating the new text first when the old one is live.

use super::{DeployOptions, carry_temp_name};
use crate::changes::upgrade::Verdict;
use crate::deploy::spec::{DeployNode, Step};
use crate::plan::Action;
use crate::sql::text::normalize_sql;
use crate::target::{Phase, StatementKind, StatementSpec, StatementState};
use std::collections::BTreeMap;

/// Facts about a statement besides its state, gathered before deciding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Known {
    /// The interrupted run (journal) created or adopted this statement: it is not restarted again.
    pub ours: bool,
    /// An interrupted carry-over left its temporary statement (`<name>-co`, ours, present): the
    /// second handover must be finished.
    pub handover_pending: bool,
    /// The target can carry offsets over ([`crate::target::Target::supports_carry_over`]).
    pub carry_over: bool,
    /// The target can stop with a savepoint and start new SQL from it
    /// ([`crate::target::Target::supports_savepoint_restart`]).
    pub savepoint_restart: bool,
    /// The target's planner's verdict on the running text against the new one
    /// ([`super::verdict::engine_verdict`]), when it gave one; else the SQL front end's is used.
    pub engine_verdict: Option<Verdict>,
}

impl Known {
    /// What `target` can do ([`crate::target::Target::supports_carry_over`],
    /// [`crate::target::Target::supports_savepoint_restart`]), nothing known about the statement: what
    /// a dry run and the capacity estimate decide with.
    pub fn of_target(target: &dyn crate::target::Target) -> Known {
        Known {
            carry_over: target.supports_carry_over(),
            savepoint_restart: target.supports_savepoint_restart(),
            ..Known::default()
        }
    }
}

/// Why a step is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The table definition changed: it would need `DROP TABLE` (data loss), allowed only with
    /// `--allow-drop` on a restart.
    DdlChanged,
    /// The statement exists with different SQL and the plan does not restart it.
    SqlChanged {
        /// Its phase.
        phase: Phase,
    },
    /// The statement runs in another compute pool than the plan gives it, and the plan does not
    /// restart it: moving it means recreating it in the new pool.
    PoolChanged {
        /// The pool it runs in.
        from: String,
        /// The pool the plan gives it.
        to: String,
    },
    /// A stateful DML with new SQL whose verdict forbids a restore from a savepoint (or on a target
    /// without savepoints, Confluent Cloud): recreating it loses its state, allowed only with
    /// `--allow-state-loss`.
    StateLoss {
        /// The upgrade verdict of the running text against the new one (offline reading; `unknown`
        /// when the target has no text of it: a gateway job deployed before its text travelled with it).
        verdict: crate::changes::upgrade::Verdict,
    },
}

/// What to do with one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepPlan {
    /// A `DROP` statement without `--allow-drop` on a restart: not run.
    SkipDrop,
    /// Finish an interrupted carry-over (the temporary statement holds the offsets).
    FinishHandover,
    /// Absent: create it.
    Create,
    /// Same SQL and live: wait for it (`keep`: a DDL of a restarted table).
    Adopt {
        /// The plan restarts the table but the DDL is unchanged: report "kept".
        keep: bool,
    },
    /// A stateless DML restarted with changed properties: carry its offsets over.
    CarryOver,
    /// New SQL whose running job's state it can take over: stop the job with a savepoint (unless
    /// stopped already) and start the new SQL from it, under the same name; should the new job not
    /// start or not restore from that savepoint, the old SQL starts again from it.
    SavepointRestart {
        /// All the state (`upgrade (savepoint)`) or the sources' offsets only (`restart (offsets)`).
        restore: crate::target::Restore,
        /// The upgrade verdict of the running text against the new one.
        verdict: Verdict,
        /// Whether a stop must be requested first (it is not STOPPED yet).
        stop_first: bool,
    },
    /// Same SQL: stop it (unless stopped already) and resume it in place.
    StopResume {
        /// Whether a stop must be requested first (it is not STOPPED yet).
        stop_first: bool,
    },
    /// Leave it alone and fail the node.
    Refuse(Refusal),
    /// A changed DDL with `--allow-drop` on a restart: drop the table, delete the statement, create.
    DropAndRecreate,
    /// Delete (wait until gone) and create again.
    Recreate {
        /// The old statement is live: the new text must validate before it is deleted.
        validate_first: bool,
    },
}

/// Whether a step is a `DROP` statement that must not run: drops run only on a restart with
/// `--allow-drop` (shift_left 0.1.52 dropped every table it redeployed).
pub fn skips_drop(step: &Step, node: &DeployNode, options: &DeployOptions) -> bool {
    step.is_drop && !(options.allow_drop && node.action == Action::Restart)
}

/// Whether `existing` may be the target of an interrupted carry-over handover whose temporary
/// statement the journal recorded (`temp_is_ours`): absent, or carrying over from the temporary one.
pub fn handover_candidate(
    existing: Option<&StatementState>,
    spec: &StatementSpec,
    temp_is_ours: bool,
) -> bool {
    let temp = carry_temp_name(&spec.name);
    temp_is_ours && existing.is_none_or(|e| e.properties.get(OFFSET_FROM) == Some(&temp))
}

/// Decides what to do with `step` of `node`, given the statement's state (`None`: absent).
pub fn decide(
    existing: Option<&StatementState>,
    step: &Step,
    node: &DeployNode,
    options: &DeployOptions,
    known: Known,
) -> StepPlan {
    let spec = &step.spec;
    if skips_drop(step, node, options) {
        return StepPlan::SkipDrop;
    }
    if known.handover_pending {
        return StepPlan::FinishHandover;
    }
    let Some(s) = existing else {
        return StepPlan::Create;
    };
    let same = normalize_sql(&s.sql) == normalize_sql(&spec.sql);
    let restart = node.action == Action::Restart && !known.ours;
    let dml = spec.kind == StatementKind::Dml;
    let live = s.phase.is_live();
    let failed = s.phase.has_failed();
    // A DML that runs (or would resume) in another pool than the plan's: a change of the statement,
    // like new properties — it cannot move in place. A COMPLETED (bounded) one runs nowhere.
    let moved = dml && s.phase != Phase::Completed && pool_moved(s, spec).is_some();
    if same {
        if (live || s.phase == Phase::Completed) && (!restart || !dml) && !moved {
            return StepPlan::Adopt { keep: restart };
        }
        if (live || s.phase == Phase::Stopped)
            && dml
            && restart
            && node.stateless
            && !node.upsert_sink
            && (!same_properties(s, spec) || moved)
            && known.carry_over
        {
            // Properties and pools cannot change in place: hand the offsets over (carry-over) to a
            // statement created with the new ones.
            return StepPlan::CarryOver;
        }
        if (live || matches!(s.phase, Phase::Stopped | Phase::Stopping))
            && dml
            && !restart
            && let Some((from, to)) = moved.then(|| pool_moved(s, spec)).flatten()
        {
            // Left where it runs: moving it is a restart the plan did not ask for.
            return StepPlan::Refuse(Refusal::PoolChanged { from, to });
        }
        if (live || matches!(s.phase, Phase::Stopped | Phase::Stopping))
            && dml
            && (node.stateless || !restart)
            && !moved
        {
            return StepPlan::StopResume {
                stop_first: s.phase != Phase::Stopped,
            };
        }
    } else if !dml && !failed {
        return if restart && options.allow_drop {
            StepPlan::DropAndRecreate
        } else {
            StepPlan::Refuse(Refusal::DdlChanged)
        };
    } else if !restart && !failed && s.phase != Phase::Stopped {
        return StepPlan::Refuse(Refusal::SqlChanged {
            phase: s.phase.clone(),
        });
    }
    // New SQL on a target with savepoints: the running job's savepoint takes the state (or only the
    // offsets) over when the verdict says it can; the others fall to the refusal below.
    if !same
        && dml
        && restart
        && known.savepoint_restart
        && matches!(s.phase, Phase::Running | Phase::Stopped)
    {
        use crate::target::Restore;
        let verdict = running_verdict(known, node, &s.sql, &spec.sql);
        let restore = match verdict {
            Verdict::Unchanged | Verdict::StateCompatible => Some(Restore::State),
            Verdict::Stateless => Some(Restore::Offsets),
            _ => None,
        };
        if let Some(restore) = restore {
            return StepPlan::SavepointRestart {
                restore,
                verdict,
                stop_first: s.phase != Phase::Stopped,
            };
        }
    }
    // A stateless DML restarted with new SQL, whose running text is stateless too: the new text takes
    // over the old one's offsets (Confluent's carry-over, `sql.tables.initial-offset-from`), so
    // nothing is read twice. Not into a sink that takes updates (carry-over excludes upsert sinks),
    // and not from a stateful old statement (its sink holds
    // rows the new one would never retract).
    if !same
        && dml
        && restart
        && node.stateless
        && !node.upsert_sink
        && known.carry_over
        && (live || s.phase == Phase::Stopped)
        && running_verdict(known, node, &s.sql, &spec.sql) == Verdict::Stateless
    {
        return StepPlan::CarryOver;
    }
    // A DML with new SQL that may hold state now (live or stopped): recreating it starts it from
    // nothing, so its state is lost — refused unless allowed for it. What holds state is the
    // *running* statement, whatever the new SQL is (a window SUM replaced by a plain projection
    // discards the window's state), so the node's own statefulness (that of the new SQL) does not
    // excuse it. Only a proof lets it through: the verdict `stateless` (both texts read exactly,
    // neither keeps state); every other verdict — `unknown`, and any verdict added later — counts
    // as stateful.
    if !same
        && dml
        && restart
        && (live || matches!(s.phase, Phase::Stopped | Phase::Stopping))
        && !state_loss_allowed(options, node, spec)
    {
        let verdict = running_verdict(known, node, &s.sql, &spec.sql);
        // Only a verdict that proves no state is lost lets the replacement through.
        if !proves_no_state(verdict) {
            return StepPlan::Refuse(Refusal::StateLoss { verdict });
        }
    }
    // Restart of a DML (stateful, SQL or pool changed), or a FAILED/STOPPED statement: the SQL of a
    // statement cannot change in place. A statement that may still run is deleted only once the
    // new text validates, so a broken file never takes a running job down.
    StepPlan::Recreate {
        validate_first: must_validate(&s.phase),
    }
}

/// Whether `verdict` proves that replacing the running statement loses no state: only
/// [`Verdict::Stateless`] (neither text keeps operator state). `unchanged` is not a proof here (the
/// texts differ, and a stateful text formatted anew keeps its state only through a restore), nor is
/// `unknown` or any verdict this rule does not name.
pub fn proves_no_state(verdict: Verdict) -> bool {
    verdict == Verdict::Stateless
}

/// Whether `--allow-state-loss` names the node's table, the statement, or `all`.
fn state_loss_allowed(options: &DeployOptions, node: &DeployNode, spec: &StatementSpec) -> bool {
    options
        .allow_state_loss
        .iter()
        .any(|a| a == "all" || a.eq_ignore_ascii_case(&node.table) || *a == spec.name)
}

/// The upgrade verdict of the running text against the new one: the target's planner's when it gave
/// one ([`Known::engine_verdict`]), else the SQL front end's
/// ([`crate::changes::upgrade::compare_sql`]); `unknown` for a running text without a statement (the
/// SQL Gateway's jobs deployed before their text travelled with them). `stateless` only when both
/// read exactly. The texts alone do not show the state of a view they read or of an updating
/// source's normalization, which the project analysis sees: a `stateless` reading of the texts of a
/// node the project calls stateful (or unknown) is `unknown`, which counts as stateful.
fn running_verdict(known: Known, node: &DeployNode, old: &str, new: &str) -> Verdict {
    let v = if let Some(v) = known.engine_verdict {
        v
    } else if crate::sql::analyze(old).statements.is_empty() {
        Verdict::Unknown
    } else {
        crate::changes::upgrade::compare_sql(old, new).verdict
    };
    if v == Verdict::Stateless && !node.stateless {
        Verdict::Unknown
    } else {
        v
    }
}

/// Whether the new text must validate before a statement in `phase` is replaced: always, except
/// when it has ended (FAILED, STOPPED, COMPLETED) — nothing runs that a broken text could take down.
/// PENDING, RUNNING, DEGRADED, FAILING, STOPPING, DELETING and any phase this version does not know
/// ([`Phase::Unknown`]) may still run, or run again: they are checked first.
pub fn must_validate(phase: &Phase) -> bool {
    !phase.has_ended()
}

/// The move of a statement to another compute pool, `(from, to)`: the pool it runs in
/// (`spec.compute_pool_id` as the target reports it) differs from the pool the plan gives it. `None`
/// when they agree or either is unknown (a target without pools, the environment's default pool).
pub fn pool_moved(s: &StatementState, spec: &StatementSpec) -> Option<(String, String)> {
    match (&s.meta.compute_pool_id, &spec.compute_pool) {
        (Some(from), Some(to)) if from != to => Some((from.clone(), to.clone())),
        _ => None,
    }
}

/// The property carry-over sets
/// (<https://docs.confluent.io/cloud/current/flink/operate-and-deploy/carry-over-offsets.html>).
pub(super) const OFFSET_FROM: &str = "sql.tables.initial-offset-from";

/// Properties the target adds itself or that carry-over sets: not compared.
const MANAGED_PROPERTIES: &[&str] = &["sql.current-catalog", "sql.current-database", OFFSET_FROM];

/// Whether the deployed properties equal the files', ignoring those the target adds itself
/// (`sql.current-catalog`, `sql.current-database`) and the one carry-over sets.
pub fn same_properties(s: &StatementState, spec: &StatementSpec) -> bool {
    let relevant = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        m.iter()
            .filter(|(k, _)| !MANAGED_PROPERTIES.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    relevant(&s.properties) == relevant(&spec.properties)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DDL: &str = "CREATE TABLE a (id INT)";
    const DML: &str = "INSERT INTO a SELECT * FROM src";

    fn step(kind: StatementKind, sql: &str) -> Step {
        Step {
            spec: StatementSpec {
                name: "dev-x-a".into(),
                sql: sql.into(),
                properties: BTreeMap::new(),
                kind,
                compute_pool: None,
            },
            is_drop: sql.starts_with("DROP"),
            rewritten_by: Vec::new(),
            file: Default::default(),
            line: 0,
        }
    }

    fn node(action: Action, stateless: bool) -> DeployNode {
        DeployNode {
            table: "a".into(),
            action,
            reason: "test".into(),
            parents: vec![],
            stateless,
            steps: vec![],
            kept_live: false,
            kept_pending: false,
            upsert_sink: false,
        }
    }

    fn state(sql: &str, phase: Phase) -> StatementState {
        StatementState {
            name: "dev-x-a".into(),
            stopped: phase == Phase::Stopped,
            meta: Default::default(),
            phase,
            detail: String::new(),
            sql: sql.into(),
            properties: BTreeMap::new(),
        }
    }

    fn opts(allow_drop: bool) -> DeployOptions {
        DeployOptions {
            allow_drop,
            ..DeployOptions::default()
        }
    }

    const CONFLUENT: Known = Known {
        ours: false,
        handover_pending: false,
        carry_over: true,
        savepoint_restart: false,
        engine_verdict: None,
    };

    const GATEWAY: Known = Known {
        ours: false,
        handover_pending: false,
        carry_over: false,
        savepoint_restart: true,
        engine_verdict: None,
    };

    /// Every phase a statement can be in, with the same SQL, for each plan action and kind.
    #[test]
    fn same_sql_every_phase() {
        use Phase::*;
        use StepPlan as P;
        let phases = [
            Pending,
            Running,
            Completed,
            Degraded,
            Failing,
            Failed,
            Stopping,
            Stopped,
            Deleting,
            Unknown("X".into()),
        ];
        for phase in phases {
            let live = matches!(phase, Running | Pending | Degraded);
            // Checked first unless it has ended: FAILING, STOPPING, DELETING and unknown phases may
            // still run.
            let checked = !matches!(phase, Failed | Stopped | Completed);
            let recreate = |_: bool| P::Recreate {
                validate_first: checked,
            };
            let ddl = step(StatementKind::Ddl, DDL);
            let dml = step(StatementKind::Dml, DML);
            let e = state(DDL, phase.clone());
            let d = state(DML, phase.clone());
            let create = node(Action::Create, true);
            let restart_stateless = node(Action::Restart, true);
            let restart_stateful = node(Action::Restart, false);
            // A DDL with the same text: adopted (or kept on a restart) while live or COMPLETED.
            let want_ddl = |keep| {
                if live || phase == Completed {
                    P::Adopt { keep }
                } else {
                    recreate(false)
                }
            };
            assert_eq!(
                decide(Some(&e), &ddl, &create, &opts(false), CONFLUENT),
                want_ddl(false),
                "{phase}"
            );
            assert_eq!(
                decide(Some(&e), &ddl, &restart_stateful, &opts(false), CONFLUENT),
                want_ddl(true),
                "{phase}"
            );
            // A DML not restarted: adopted when live or COMPLETED, resumed when stopped.
            let want = if live || phase == Completed {
                P::Adopt { keep: false }
            } else if matches!(phase, Stopped | Stopping) {
                P::StopResume {
                    stop_first: phase != Stopped,
                }
            } else {
                recreate(false)
            };
            assert_eq!(
                decide(Some(&d), &dml, &create, &opts(false), CONFLUENT),
                want,
                "{phase}"
            );
            // A stateless DML restarted: stopped and resumed in place.
            let want = if live || matches!(phase, Stopped | Stopping) {
                P::StopResume {
                    stop_first: phase != Stopped,
                }
            } else {
                recreate(false)
            };
            assert_eq!(
                decide(Some(&d), &dml, &restart_stateless, &opts(false), CONFLUENT),
                want,
                "{phase}"
            );
            // A stateful DML restarted: deleted and created again (validated first when live).
            assert_eq!(
                decide(Some(&d), &dml, &restart_stateful, &opts(false), CONFLUENT),
                recreate(live),
                "{phase}"
            );
            // Created or adopted by the interrupted run: never restarted a second time.
            let ours = Known {
                ours: true,
                ..CONFLUENT
            };
            let want = if live || phase == Completed {
                P::Adopt { keep: false }
            } else if matches!(phase, Stopped | Stopping) {
                P::StopResume {
                    stop_first: phase != Stopped,
                }
            } else {
                recreate(false)
            };
            assert_eq!(
                decide(Some(&d), &dml, &restart_stateful, &opts(false), ours),
                want,
                "{phase}"
            );
        }
    }

    #[test]
    fn absent_statements_are_created_and_drops_need_allow_drop_on_a_restart() {
        let n = node(Action::Create, true);
        let dml = step(StatementKind::Dml, DML);
        assert_eq!(
            decide(None, &dml, &n, &opts(false), CONFLUENT),
            StepPlan::Create
        );
        let drop = step(StatementKind::Ddl, "DROP TABLE IF EXISTS a");
        for (action, allow, skip) in [
            (Action::Create, false, true),
            (Action::Create, true, true),
            (Action::Restart, false, true),
            (Action::Restart, true, false),
        ] {
            let n = node(action, true);
            let got = decide(None, &drop, &n, &opts(allow), CONFLUENT);
            assert_eq!(
                got == StepPlan::SkipDrop,
                skip,
                "{action:?} {allow}: {got:?}"
            );
        }
    }

    #[test]
    fn changed_sql_is_refused_unless_the_plan_restarts() {
        use Phase::*;
        let ddl = step(StatementKind::Ddl, "CREATE TABLE a (id BIGINT)");
        let dml = step(StatementKind::Dml, "INSERT INTO a SELECT id FROM src");
        let create = node(Action::Create, true);
        let restart = node(Action::Restart, false);
        // A changed DDL: refused, or dropped and recreated with --allow-drop on a restart.
        for phase in [Completed, Running, Pending, Stopped] {
            let e = state(DDL, phase.clone());
            assert_eq!(
                decide(Some(&e), &ddl, &create, &opts(true), CONFLUENT),
                StepPlan::Refuse(Refusal::DdlChanged)
            );
            assert_eq!(
                decide(Some(&e), &ddl, &restart, &opts(false), CONFLUENT),
                StepPlan::Refuse(Refusal::DdlChanged)
            );
            assert_eq!(
                decide(Some(&e), &ddl, &restart, &opts(true), CONFLUENT),
                StepPlan::DropAndRecreate
            );
        }
        // A failed DDL is simply recreated.
        assert_eq!(
            decide(
                Some(&state(DDL, Failed)),
                &ddl,
                &create,
                &opts(false),
                CONFLUENT
            ),
            StepPlan::Recreate {
                validate_first: false
            }
        );
        // A changed DML: left alone while live unless restarted; a restart validates first. The
        // node is stateful while its texts read as stateless (state they do not show: a view, an
        // updating source): `unknown`, refused while it may hold state, unless allowed.
        let allowed = DeployOptions {
            allow_state_loss: vec!["a".into()],
            ..DeployOptions::default()
        };
        for phase in [Running, Pending, Degraded, Completed] {
            let d = state(DML, phase.clone());
            assert_eq!(
                decide(Some(&d), &dml, &create, &opts(false), CONFLUENT),
                StepPlan::Refuse(Refusal::SqlChanged {
                    phase: phase.clone()
                })
            );
            let recreate = StepPlan::Recreate {
                validate_first: phase != Completed,
            };
            assert_eq!(
                decide(Some(&d), &dml, &restart, &opts(false), CONFLUENT),
                if phase == Completed {
                    recreate.clone()
                } else {
                    StepPlan::Refuse(Refusal::StateLoss {
                        verdict: Verdict::Unknown,
                    })
                }
            );
            assert_eq!(
                decide(Some(&d), &dml, &restart, &allowed, CONFLUENT),
                recreate
            );
        }
        // Failed or stopped with new SQL: recreated, nothing live to protect; FAILING may still
        // run, so it is checked first.
        for phase in [Failed, Failing, Stopped] {
            assert_eq!(
                decide(
                    Some(&state(DML, phase.clone())),
                    &dml,
                    &create,
                    &opts(false),
                    CONFLUENT
                ),
                StepPlan::Recreate {
                    validate_first: phase == Failing
                }
            );
        }
    }

    /// A stateful statement whose SQL changed holds state that a recreate loses: refused unless
    /// `--allow-state-loss` names its table, its statement or `all`; one that ended holds none.
    #[test]
    fn a_stateful_restart_with_new_sql_needs_the_state_loss_allowed() {
        use Phase::*;
        let old = "INSERT INTO a SELECT k, SUM(v) FROM src GROUP BY k";
        let new = step(
            StatementKind::Dml,
            "INSERT INTO a SELECT k, SUM(v) + COUNT(*) FROM src GROUP BY k",
        );
        let restart = node(Action::Restart, false);
        for phase in [Running, Pending, Degraded, Stopped, Stopping] {
            let d = state(old, phase.clone());
            assert_eq!(
                decide(Some(&d), &new, &restart, &opts(false), CONFLUENT),
                StepPlan::Refuse(Refusal::StateLoss {
                    verdict: crate::changes::upgrade::Verdict::StateIncompatible
                }),
                "{phase}"
            );
            for allowed in ["all", "a", "dev-x-a"] {
                let o = DeployOptions {
                    allow_state_loss: vec![allowed.to_string()],
                    ..opts(false)
                };
                assert_eq!(
                    decide(Some(&d), &new, &restart, &o, CONFLUENT),
                    StepPlan::Recreate {
                        validate_first: must_validate(&phase)
                    },
                    "{phase} {allowed}"
                );
            }
        }
        let other = DeployOptions {
            allow_state_loss: vec!["b".into()],
            ..opts(false)
        };
        assert!(matches!(
            decide(
                Some(&state(old, Running)),
                &new,
                &restart,
                &other,
                CONFLUENT
            ),
            StepPlan::Refuse(Refusal::StateLoss { .. })
        ));
        // A gateway job without its text (deployed before it travelled with it): unknown, refused.
        let d = state("-- deployed SQL is not the project's current text", Running);
        assert_eq!(
            decide(Some(&d), &new, &restart, &opts(false), CONFLUENT),
            StepPlan::Refuse(Refusal::StateLoss {
                verdict: crate::changes::upgrade::Verdict::Unknown
            })
        );
        // Ended: nothing held, recreated.
        for phase in [Failed, Completed] {
            assert_eq!(
                decide(
                    Some(&state(old, phase.clone())),
                    &new,
                    &restart,
                    &opts(false),
                    CONFLUENT
                ),
                StepPlan::Recreate {
                    validate_first: false
                },
                "{phase}"
            );
        }
        // The same SQL restarted by the cascade is the plan's own rebuild: not refused.
        let same = step(StatementKind::Dml, old);
        assert_eq!(
            decide(
                Some(&state(old, Running)),
                &same,
                &restart,
                &opts(false),
                CONFLUENT
            ),
            StepPlan::Recreate {
                validate_first: true
            }
        );
    }

    #[test]
    fn new_properties_carry_offsets_over_only_where_the_target_can() {
        let mut dml = step(StatementKind::Dml, DML);
        dml.spec
            .properties
            .insert("sql.state-ttl".into(), "1 h".into());
        let restart = node(Action::Restart, true);
        for phase in [
            Phase::Running,
            Phase::Pending,
            Phase::Degraded,
            Phase::Stopped,
        ] {
            let d = state(DML, phase.clone());
            assert_eq!(
                decide(Some(&d), &dml, &restart, &opts(false), CONFLUENT),
                StepPlan::CarryOver,
                "{phase}"
            );
            let gateway = Known {
                carry_over: false,
                ..CONFLUENT
            };
            assert_eq!(
                decide(Some(&d), &dml, &restart, &opts(false), gateway),
                StepPlan::StopResume {
                    stop_first: phase != Phase::Stopped
                },
                "{phase}"
            );
        }
        // Managed properties do not count as a change.
        let mut d = state(DML, Phase::Running);
        d.properties
            .insert("sql.current-catalog".into(), "env".into());
        let plain = step(StatementKind::Dml, DML);
        assert!(same_properties(&d, &plain.spec));
        assert_eq!(
            decide(Some(&d), &plain, &restart, &opts(false), CONFLUENT),
            StepPlan::StopResume { stop_first: true }
        );
    }

    /// A stateless statement restarted with new SQL continues from the old one's offsets where the
    /// target carries them over, in every phase it can be handed over from; a stateful one, a
    /// target without carry-over and a statement that ended or failed are recreated.
    #[test]
    fn new_sql_of_a_stateless_statement_carries_offsets_over() {
        use Phase::*;
        let new = step(
            StatementKind::Dml,
            "INSERT INTO a SELECT * FROM src WHERE id > 0",
        );
        let stateless = node(Action::Restart, true);
        let stateful = node(Action::Restart, false);
        let gateway = Known {
            carry_over: false,
            ..CONFLUENT
        };
        for phase in [Running, Pending, Degraded, Stopped] {
            let d = state(DML, phase.clone());
            assert_eq!(
                decide(Some(&d), &new, &stateless, &opts(false), CONFLUENT),
                StepPlan::CarryOver,
                "{phase}"
            );
            let recreate = StepPlan::Recreate {
                validate_first: must_validate(&phase),
            };
            let loss = DeployOptions {
                allow_state_loss: vec!["all".into()],
                ..opts(false)
            };
            assert_eq!(
                decide(Some(&d), &new, &stateful, &loss, CONFLUENT),
                recreate,
                "{phase}"
            );
            assert_eq!(
                decide(Some(&d), &new, &stateless, &opts(false), gateway),
                recreate,
                "{phase}"
            );
        }
        for phase in [Failed, Completed] {
            let d = state(DML, phase.clone());
            assert_eq!(
                decide(Some(&d), &new, &stateless, &opts(false), CONFLUENT),
                StepPlan::Recreate {
                    validate_first: false
                },
                "{phase}"
            );
        }
        // A stateful running text replaced by a stateless one: its state is lost, so it is refused
        // (issue #41 item 7) unless allowed; then recreated.
        let d = state(
            "INSERT INTO a SELECT id, COUNT(*) FROM src GROUP BY id",
            Running,
        );
        assert!(matches!(
            decide(Some(&d), &new, &stateless, &opts(false), CONFLUENT),
            StepPlan::Refuse(Refusal::StateLoss { .. })
        ));
        let loss = DeployOptions {
            allow_state_loss: vec!["all".into()],
            ..opts(false)
        };
        assert_eq!(
            decide(Some(&d), &new, &stateless, &loss, CONFLUENT),
            StepPlan::Recreate {
                validate_first: true
            }
        );
        // A sink that takes updates, from a stateless text: recreated.
        let upsert = DeployNode {
            upsert_sink: true,
            ..node(Action::Restart, true)
        };
        let d = state(DML, Running);
        assert_eq!(
            decide(Some(&d), &new, &upsert, &opts(false), CONFLUENT),
            StepPlan::Recreate {
                validate_first: true
            }
        );
        // A running text that cannot be read is not proven stateless: refused.
        let unreadable = state("-- deployed SQL is not the project's current text", Running);
        assert_eq!(
            decide(Some(&unreadable), &new, &stateless, &opts(false), CONFLUENT),
            StepPlan::Refuse(Refusal::StateLoss {
                verdict: Verdict::Unknown
            })
        );
        // Not restarted by the plan: left alone, as before.
        let d = state(DML, Running);
        assert!(matches!(
            decide(
                Some(&d),
                &new,
                &node(Action::Skip, true),
                &opts(false),
                CONFLUENT
            ),
            StepPlan::Refuse(_)
        ));
    }

    /// On a target with savepoints (the SQL Gateway) a changed DML whose running text it can read is
    /// judged by its verdict: `state-compatible` is upgraded from the savepoint, `stateless` restarted
    /// from the offsets in it, the others keep the refusal (or, allowed, the recreate).
    #[test]
    fn new_sql_on_the_gateway_restarts_from_a_savepoint_by_its_verdict() {
        use crate::target::Restore;
        use Phase::*;
        let sum = "INSERT INTO a SELECT k, SUM(v) FROM src GROUP BY k";
        let restart = node(Action::Restart, false);
        let stateless = node(Action::Restart, true);
        let cases = [
            (
                sum,
                "INSERT INTO a SELECT k, SUM(v) AS total FROM src GROUP BY k",
                &restart,
                Some((Restore::State, Verdict::StateCompatible)),
            ),
            (
                DML,
                "INSERT INTO a SELECT * FROM src WHERE id > 0",
                &stateless,
                Some((Restore::Offsets, Verdict::Stateless)),
            ),
            (
                sum,
                "INSERT INTO a SELECT k, SUM(v) + COUNT(*) FROM src GROUP BY k",
                &restart,
                None,
            ),
            (
                sum,
                "INSERT INTO a SELECT k, SUM(v) FROM src WHERE v > 1 GROUP BY k",
                &restart,
                None,
            ),
        ];
        for (old, new, n, want) in cases {
            let new = step(StatementKind::Dml, new);
            for phase in [Running, Stopped] {
                let d = state(old, phase.clone());
                let got = decide(Some(&d), &new, n, &opts(false), GATEWAY);
                match want {
                    Some((restore, verdict)) => assert_eq!(
                        got,
                        StepPlan::SavepointRestart {
                            restore,
                            verdict,
                            stop_first: phase == Running
                        },
                        "{old} → {} ({phase})",
                        new.spec.sql
                    ),
                    None => {
                        assert!(
                            matches!(got, StepPlan::Refuse(Refusal::StateLoss { .. })),
                            "{got:?}"
                        );
                        // --allow-state-loss names it: recreated, as on Confluent.
                        let loss = DeployOptions {
                            allow_state_loss: vec!["a".into()],
                            ..opts(false)
                        };
                        assert_eq!(
                            decide(Some(&d), &new, n, &loss, GATEWAY),
                            StepPlan::Recreate {
                                validate_first: must_validate(&phase)
                            }
                        );
                    }
                }
            }
            // A job that cannot take a savepoint (starting, restarting) or has ended: as before.
            for phase in [Pending, Degraded, Failed] {
                let got = decide(
                    Some(&state(old, phase.clone())),
                    &new,
                    n,
                    &opts(false),
                    GATEWAY,
                );
                assert!(
                    !matches!(got, StepPlan::SavepointRestart { .. }),
                    "{phase}: {got:?}"
                );
            }
            // Not restarted by the plan: left alone.
            let got = decide(
                Some(&state(old, Running)),
                &new,
                &node(Action::Skip, false),
                &opts(false),
                GATEWAY,
            );
            assert!(matches!(got, StepPlan::Refuse(Refusal::SqlChanged { .. })));
        }
        // A job deployed before the text travelled with it: unknown, refused.
        let unreadable = state("-- deployed SQL is not the project's current text", Running);
        let new = step(
            StatementKind::Dml,
            "INSERT INTO a SELECT k, SUM(v) AS t FROM src GROUP BY k",
        );
        assert_eq!(
            decide(Some(&unreadable), &new, &restart, &opts(false), GATEWAY),
            StepPlan::Refuse(Refusal::StateLoss {
                verdict: Verdict::Unknown
            })
        );
        // The same SQL restarted statelessly: resumed, never through the savepoint upgrade.
        assert_eq!(
            decide(
                Some(&state(DML, Running)),
                &step(StatementKind::Dml, DML),
                &stateless,
                &opts(false),
                GATEWAY
            ),
            StepPlan::StopResume { stop_first: true }
        );
    }

    #[test]
    fn an_interrupted_handover_is_finished_first() {
        let dml = step(StatementKind::Dml, DML);
        let known = Known {
            handover_pending: true,
            ..CONFLUENT
        };
        assert_eq!(
            decide(
                None,
                &dml,
                &node(Action::Restart, true),
                &opts(false),
                known
            ),
            StepPlan::FinishHandover
        );
        // Candidates: absent, or carrying over from the temporary statement.
        assert!(handover_candidate(None, &dml.spec, true));
        assert!(!handover_candidate(None, &dml.spec, false));
        let mut d = state(DML, Phase::Running);
        assert!(!handover_candidate(Some(&d), &dml.spec, true));
        d.properties
            .insert(OFFSET_FROM.into(), carry_temp_name(&dml.spec.name));
        assert!(handover_candidate(Some(&d), &dml.spec, true));
    }

    /// Issue #41 item 7, for every input of the kind: a live or stopped DML whose running text keeps
    /// state (or cannot be read), replaced by any new text — stateful or not — with the node either
    /// way, on either target and under any verdict the target's planner may give, is never replaced
    /// without `--allow-state-loss`: the only outcomes are the refusal and, where the target restores
    /// the state from a savepoint, that restore.
    #[test]
    fn no_replacement_discards_state_without_the_flag() {
        use Phase::*;
        let old_texts = [
            "INSERT INTO a SELECT window_start, SUM(v) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
            "INSERT INTO a SELECT id, COUNT(*) FROM src GROUP BY id",
            "INSERT INTO a SELECT DISTINCT id FROM src",
            "INSERT INTO a SELECT s.id, t.v FROM src s JOIN t ON s.id = t.id",
            "INSERT INTO a SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) AS rn FROM src) WHERE rn = 1",
            "-- deployed SQL is not the project's current text",
            "INSERT INTO a SELECT id, LAST_VALUE(v) FROM src GROUP BY id",
        ];
        let new_texts = [
            "INSERT INTO a SELECT * FROM src",
            "INSERT INTO a SELECT id, v * 2 FROM src WHERE v > 0",
            "INSERT INTO a SELECT id, COUNT(*) FROM src GROUP BY id",
            "INSERT INTO a SELECT id, MAX(v) FROM src GROUP BY id",
            "INSERT INTO a SELECT window_start, SUM(v) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end",
        ];
        let verdicts = [
            None,
            Some(Verdict::Unchanged),
            Some(Verdict::StateCompatible),
            Some(Verdict::StateCompatibleSemanticsChanged),
            Some(Verdict::StateIncompatible),
            Some(Verdict::Unknown),
        ];
        let mut checked = 0;
        for old in old_texts {
            for new in new_texts.iter().filter(|n| **n != old) {
                let new = step(StatementKind::Dml, new);
                for phase in [Running, Pending, Degraded, Stopped, Stopping] {
                    let d = state(old, phase.clone());
                    for stateless in [true, false] {
                        for upsert_sink in [true, false] {
                            let n = DeployNode {
                                upsert_sink,
                                ..node(Action::Restart, stateless)
                            };
                            for base in [CONFLUENT, GATEWAY] {
                                for engine_verdict in verdicts {
                                    let known = Known {
                                        engine_verdict,
                                        ..base
                                    };
                                    let got = decide(Some(&d), &new, &n, &opts(false), known);
                                    let case = format!(
                                        "{old} → {} ({phase}, stateless node {stateless}, {known:?})",
                                        new.spec.sql
                                    );
                                    match &got {
                                        StepPlan::Refuse(Refusal::StateLoss { verdict }) => {
                                            assert!(!proves_no_state(*verdict), "{case}")
                                        }
                                        StepPlan::SavepointRestart {
                                            restore: crate::target::Restore::State,
                                            ..
                                        } => assert!(known.savepoint_restart, "{case}"),
                                        other => panic!("{case}: {other:?}"),
                                    }
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        // Every pair but the two where the texts are the same (the window and the COUNT).
        assert_eq!(checked, (7 * 5 - 2) * 5 * 2 * 2 * 2 * 6);
    }

    /// A DML whose texts read as stateless but that the project calls stateful (it reads a view
    /// with a window aggregate, or an updating source: state the texts do not show) is never
    /// restarted from offsets nor carried over: the verdict is `unknown`, and the change refused.
    #[test]
    fn texts_that_read_stateless_of_a_stateful_node_are_unknown() {
        let old = "INSERT INTO a SELECT store_id, total FROM v_win WHERE total > 1;";
        let new = "INSERT INTO a SELECT store_id, total FROM v_win WHERE total > 5;";
        let dml = step(StatementKind::Dml, new);
        let running = state(old, Phase::Running);
        let stateful = node(Action::Restart, false);
        for known in [CONFLUENT, GATEWAY] {
            assert_eq!(
                decide(Some(&running), &dml, &stateful, &opts(false), known),
                StepPlan::Refuse(Refusal::StateLoss {
                    verdict: Verdict::Unknown
                }),
                "{known:?}"
            );
        }
        // The same texts of a node the project calls stateless: offsets carried over.
        let stateless = node(Action::Restart, true);
        assert_eq!(
            decide(Some(&running), &dml, &stateless, &opts(false), CONFLUENT),
            StepPlan::CarryOver
        );
    }
}
