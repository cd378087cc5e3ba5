//! What a deploy checks before it creates anything: the server-side dry run of every statement it
//! would create (`deploy --dry-run`), and the capacity of the compute pools it starts statements in.
//!
//! - **Dry runs.** Each statement the executor would create — absent, or replacing one whose SQL or
//!   properties changed — is submitted to the target's dry run ([`crate::target::Target::dry_run_statement`]:
//!   Confluent Cloud `sql.dry-run=true`, SQL Gateway `EXPLAIN`), up to `max_parallel` at once. On
//!   Confluent Cloud a statement is checked against the catalog as it is now, so a DML that reads or
//!   writes a table this deploy creates first cannot be checked before that table exists; it is
//!   reported as not checked, with the table (the SQL Gateway declares every table of the project in
//!   its session, so it checks them all).
//! - **One writer per table** ([`one_writer`], [`crate::inventory::writers`]): the statements that will
//!   run once the deploy is done — the live ones it keeps and the ones it sends — are checked before
//!   anything is created; a table or storage location written by two of them refuses the deploy.
//! - **Capacity** ([`super::capacity`]): each pool's `current_cfu`/`max_cfu` read from the control
//!   plane with the Cloud API key; without that key the check is skipped with a note.

use super::capacity::{self, Capacity};
use super::target::{Connected, TargetKind};
use super::{Context, OpsError};
use crate::deploy::DeployNode;
use crate::deploy::executor::{DeployOptions, Known, StepPlan, decide, verdict};
use crate::plan::{Action, Cause, ExecutionPlan};
use crate::target::cloud::{self, CloudClient};
use crate::target::gateway::catalog;
use crate::target::retry::{Backoff, Limit, retry, seed_of};
use crate::target::{Checked, StatementState, TargetError};
use futures_util::StreamExt;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The server's verdict on one statement of a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum ServerCheck {
    /// The server parsed and validated it.
    Valid,
    /// The server rejects it: its message.
    Invalid(String),
    /// Not checked, and why (a DDL on the SQL Gateway, a table this deploy creates first, …).
    NotChecked(String),
    /// The check itself failed (the target's error, secrets masked).
    Error(String),
}

impl ServerCheck {
    /// Whether this check fails the dry run.
    pub fn fails(&self) -> bool {
        matches!(self, ServerCheck::Invalid(_) | ServerCheck::Error(_))
    }

    /// `valid`, `INVALID`, `not checked`, `ERROR`.
    pub fn label(&self) -> &'static str {
        match self {
            ServerCheck::Valid => "valid",
            ServerCheck::Invalid(_) => "INVALID",
            ServerCheck::NotChecked(_) => "not checked",
            ServerCheck::Error(_) => "ERROR",
        }
    }
}

/// What the executor would do with a statement, for a dry run and the capacity estimate (from the
/// same pure decision), with the target's planner's verdict on it when [`engine_verdicts`] has one.
pub fn intended(
    existing: Option<&StatementState>,
    node: &DeployNode,
    step: &crate::deploy::Step,
    options: &DeployOptions,
    known: Known,
    verdicts: &EngineVerdicts,
) -> StepPlan {
    let known = Known {
        engine_verdict: verdicts.get(&step.spec.name).copied(),
        ..known
    };
    decide::decide(existing, step, node, options, known)
}

/// The target's planner's upgrade verdicts: statement name → verdict.
pub type EngineVerdicts = BTreeMap<String, crate::changes::upgrade::Verdict>;

/// The verdicts of the target's planner ([`verdict::engine_verdict`]) on every step whose decision
/// weighs one ([`verdict::asks_for_engine_verdict`]: a restarted DML with new SQL on the SQL
/// Gateway), so that a plan and a dry run say what the deploy will do. A step the planner could
/// not judge has no entry (the SQL front end's verdict stands). Costs two compilations per such
/// step (a few seconds each on the local Flink); none on a target without a planner.
pub fn engine_verdicts(
    c: &Connected,
    rt: &tokio::runtime::Runtime,
    nodes: &[DeployNode],
    live: &BTreeMap<String, StatementState>,
) -> EngineVerdicts {
    let known = Known::of_target(c.target.as_ref());
    let mut out = EngineVerdicts::new();
    for n in nodes {
        for s in &n.steps {
            let Some(existing) = live.get(&s.spec.name) else {
                continue;
            };
            if verdict::asks_for_engine_verdict(existing, s, n, known)
                && let Some(v) = rt.block_on(verdict::engine_verdict(
                    c.target.as_ref(),
                    existing,
                    &s.spec,
                ))
            {
                out.insert(s.spec.name.clone(), v);
            }
        }
    }
    out
}

/// Whether a decision creates a statement whose text the server should check first.
fn creates(plan: &StepPlan) -> bool {
    matches!(
        plan,
        StepPlan::Create
            | StepPlan::Recreate { .. }
            | StepPlan::CarryOver
            | StepPlan::SavepointRestart { .. }
            | StepPlan::DropAndRecreate
    )
}

/// The server-side dry runs of a deploy: statement name → verdict, for every statement it would
/// create; statements it keeps, resumes or refuses get no entry.
pub fn server_checks(
    c: &Connected,
    rt: &tokio::runtime::Runtime,
    plan: &ExecutionPlan,
    nodes: &[DeployNode],
    live: &BTreeMap<String, StatementState>,
    options: &DeployOptions,
    verdicts: &EngineVerdicts,
) -> BTreeMap<String, ServerCheck> {
    let known = Known::of_target(c.target.as_ref());
    // Tables this deploy defines for the first time (their DDL statement is absent and no statement
    // proves the table exists): on Confluent, what reads or writes them cannot be checked yet.
    // Tables this deploy defines for the first time: created by a statement it creates (CREATE
    // TABLE/VIEW, CTAS, materialized table) of a table not known to exist (a re-declared table exists).
    // Keyed as the gateway's catalog keys them (last name part, lower case), from the SQL sent.
    let mut created: BTreeMap<String, String> = BTreeMap::new();
    for (pn, n) in plan.nodes.iter().zip(nodes) {
        if n.action == Action::Skip || matches!(pn.cause, Cause::Redeclared { .. }) {
            continue;
        }
        for s in n.steps.iter().filter(|s| !s.is_drop) {
            if matches!(
                intended(live.get(&s.spec.name), n, s, options, known, verdicts),
                StepPlan::Create
            ) {
                for (key, name) in catalog::created_tables(&s.spec.sql) {
                    created.insert(key, name);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    let mut to_check = Vec::new();
    for n in nodes {
        if n.action == Action::Skip {
            continue;
        }
        for s in &n.steps {
            let decided = intended(live.get(&s.spec.name), n, s, options, known, verdicts);
            if matches!(decided, StepPlan::DropAndRecreate) {
                out.insert(
                    s.spec.name.clone(),
                    ServerCheck::NotChecked(
                        "the table is dropped first (--allow-drop): its new definition is checked when it runs".into(),
                    ),
                );
                continue;
            }
            if !creates(&decided) {
                continue;
            }
            if c.kind == TargetKind::ConfluentCloud {
                // What it reads or writes besides what it creates itself (a CTAS).
                let own: BTreeSet<String> = catalog::created_tables(&s.spec.sql)
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect();
                let needs: Vec<&str> = catalog::referenced_tables(&s.spec.sql)
                    .into_iter()
                    .filter(|k| !own.contains(k))
                    .filter_map(|k| created.get(&k).map(String::as_str))
                    .collect();
                if !needs.is_empty() {
                    out.insert(
                        s.spec.name.clone(),
                        ServerCheck::NotChecked(format!(
                            "reads or writes {}, which this deploy creates first: the server checks it when the deploy creates it",
                            needs.join(", ")
                        )),
                    );
                    continue;
                }
            }
            to_check.push(s.spec.clone());
        }
    }
    let results: Vec<(String, ServerCheck)> = rt.block_on(async {
        futures_util::stream::iter(to_check)
            .map(|spec| async move {
                let r = retry(&Backoff::HTTP, Limit::Attempts, seed_of(&spec.name), || {
                    c.target.dry_run_statement(&spec)
                })
                .await
                .map_err(|g| g.error);
                let check = match r {
                    Ok(Checked::Valid) => ServerCheck::Valid,
                    Ok(Checked::NotChecked(why)) => ServerCheck::NotChecked(why),
                    Err(TargetError::Invalid(cause)) => {
                        ServerCheck::Invalid(c.scrubber.scrub(&cause))
                    }
                    Err(e) => ServerCheck::Error(c.scrubber.scrub(&e.to_string())),
                };
                (spec.name, check)
            })
            .buffer_unordered(options.max_parallel.max(1))
            .collect()
            .await
    });
    out.extend(results);
    out
}

/// Whether a control-plane settings error is only the Cloud API key (or secret) not being set: the
/// one case where the capacity check is skipped with a warning rather than failing.
fn is_missing_cloud_key(e: &crate::config::ConfigError) -> bool {
    use crate::config::ConfigError;
    match e {
        ConfigError::Missing {
            settings, secrets, ..
        } => settings.is_empty() && !secrets.is_empty(),
        ConfigError::Secret(_) => true,
        _ => false,
    }
}

/// The capacity check of a deploy on Confluent Cloud: `None` on the SQL Gateway, or when the plan
/// starts nothing. Without a Cloud API key the pools are not read (a note says so); a pool that does
/// not say what it uses is warned about, never counted as fitting.
///
/// Errors: `flink.max_cfu_percent_before_allocation` outside (0, 1] (file and line named); other
/// control-plane settings errors (an environment id missing, an invalid URL); the control plane's
/// errors (a Flink key given as the Cloud key: 401, a key without permission: 403, both named).
pub fn capacity(
    ctx: &Context,
    cfg: &crate::config::Config,
    c: &Connected,
    rt: &tokio::runtime::Runtime,
    nodes: &[DeployNode],
    live: &BTreeMap<String, StatementState>,
    options: &DeployOptions,
) -> Result<Option<Capacity>, OpsError> {
    if c.kind != TargetKind::ConfluentCloud {
        return Ok(None);
    }
    let ratio = capacity::ratio_of(cfg)?;
    let starts = capacity::starts_by_pool(nodes, live, options, c.target.supports_carry_over());
    if starts.is_empty() {
        return Ok(None);
    }
    let mut notes = Vec::new();
    if let Some(default) = starts.get(&None) {
        notes.push(format!(
            "{} statement(s) go to the environment's default pool (no flink.compute_pool_id): its capacity is not checked",
            default.len()
        ));
    }
    let pools: Vec<(&String, &Vec<String>)> = starts
        .iter()
        .filter_map(|(p, s)| p.as_ref().map(|p| (p, s)))
        .collect();
    if pools.is_empty() {
        return Ok(Some(Capacity {
            ratio,
            pools: Vec::new(),
            notes,
        }));
    }
    let client = match cloud::settings(cfg, &crate::config::process_env) {
        Ok(s) => CloudClient::new(s).map_err(|e| c.error("the control plane", e))?,
        // Only a Cloud API key that is not set skips the check; any other settings error surfaces.
        Err(e) if is_missing_cloud_key(&e) => {
            let note = format!(
                "compute pool capacity not checked: set {} and {} (a Cloud API key) to check it before deploying",
                crate::target::secrets::CLOUD_API_KEY_VAR,
                crate::target::secrets::CLOUD_API_SECRET_VAR
            );
            ctx.console.warn(&format!("warning[capacity]: {note}"));
            notes.push(note);
            return Ok(Some(Capacity {
                ratio,
                pools: Vec::new(),
                notes,
            }));
        }
        Err(e) => return Err(e.into()),
    };
    let mut checks = Vec::new();
    for (id, statements) in pools {
        let pool = rt
            .block_on(client.get_pool(id))
            .map_err(|e| c.error(&format!("reading compute pool {id}"), e))?;
        let check = capacity::check_pool(id, pool.as_ref(), statements, ratio);
        if check.verdict == capacity::Verdict::UsageUnknown {
            ctx.console
                .warn(&format!("warning[capacity]: {}", check.describe(ratio)));
        }
        checks.push(check);
    }
    Ok(Some(Capacity {
        ratio,
        pools: checks,
        notes,
    }))
}

/// The one-writer rule on the state after a deploy: every statement the plan sends (the nodes it
/// creates or restarts, with the SQL of the tree) and every statement of the target that is still
/// running (PENDING, RUNNING, DEGRADED, FAILING) and that the deploy does not replace — the
/// project's, and those of any other statement-name prefix or team (another `cluster_type`, a
/// workspace's `INSERT INTO`), with the SQL it runs now; a carry-over's `<name>-co` counts as
/// `<name>`. Tables are compared as Flink resolves them ([`crate::inventory::writers::Frame`]): a running
/// statement's names under its own `sql.current-catalog` / `sql.current-database` (else the
/// target's defaults, `default_namespace`), the tree's under the project's catalog and database.
/// Storage comes from the tree's DDLs, else from the live `CREATE` statements the target lists.
/// With `session_scoped` tables (the SQL Gateway, [`crate::target::Target::session_scoped_tables`])
/// a running statement of another prefix names its own session's tables, not the project's: it is
/// left out (a name says nothing there; two projects on one shared stack are not two writers).
///
/// Errors: [`OpsError::Refused`] naming every table or storage written by two of them, with the
/// file:line of each INSERT of the tree and the line of the other statement's SQL; tables of
/// `flinkpipe.multi_writer_tables` are accepted.
pub fn one_writer(
    cfg: &crate::config::Config,
    project: &crate::project::Project,
    nodes: &[DeployNode],
    live: &BTreeMap<String, StatementState>,
    default_namespace: (Option<String>, Option<String>),
    session_scoped: bool,
) -> Result<(), OpsError> {
    use crate::inventory::writers::{self, Collision};
    use crate::target::Phase;
    let naming = crate::plan::StatementNaming::from_config(cfg);
    let frame = writers::Frame::new(cfg, default_namespace);
    let sent: BTreeSet<&str> = nodes
        .iter()
        .filter(|n| n.action != Action::Skip)
        .flat_map(|n| n.steps.iter().map(|s| s.spec.name.as_str()))
        .collect();
    // A carry-over's temporary statement (`<name>-co`) is the same writer as `<name>`: the executor's
    // handover owns it (and a resume finishes it).
    let carried: BTreeSet<String> = sent
        .iter()
        .copied()
        .chain(live.keys().map(String::as_str))
        .map(crate::deploy::executor::carry_temp_name)
        .collect();
    let inv = &project.inventory;
    // Storage: live CREATEs first, the tree's DDLs over them.
    let mut storage = BTreeMap::new();
    for st in live.values() {
        storage.extend(writers::created_storage(&crate::sql::analyze(&st.sql), cfg));
    }
    storage.extend(writers::inventory_storage(&inv.tables));
    let mut writes: Vec<writers::Write> = writers::tree_writes(&inv.tables, |t, dml| {
        if dml {
            naming.dml(&t.product, &t.name)
        } else {
            naming.ddl(&t.product, &t.name)
        }
    })
    .into_iter()
    .filter(|w| sent.contains(w.statement.as_str()))
    .map(|mut w| {
        w.table = frame.key_of_inventory(&w.table);
        w
    })
    .collect();
    for st in live.values() {
        let running = matches!(
            st.phase,
            Phase::Pending | Phase::Running | Phase::Degraded | Phase::Failing
        );
        if !running || sent.contains(st.name.as_str()) || carried.contains(&st.name) {
            continue;
        }
        if session_scoped && !naming.is_under_prefix(&st.name) {
            continue;
        }
        writes.extend(writers::running_writes(
            &st.name,
            &crate::sql::analyze(&st.sql),
            &st.properties,
            &frame,
            cfg,
            &storage,
        ));
    }
    let allowed: BTreeSet<String> = writers::allowed(cfg)
        .iter()
        .map(|t| frame.key_of_inventory(t))
        .collect();
    // Only what this deploy causes: a collision that involves a statement it sends (two live
    // statements it leaves alone were there before and stay whatever it does).
    let found: Vec<writers::Conflict> = writers::conflicts(&writes, &allowed)
        .into_iter()
        .filter(|c| c.writes.iter().any(|w| sent.contains(w.statement.as_str())))
        .map(|mut c| {
            if let Collision::Table(t) = &c.on {
                c.on = Collision::Table(frame.display(t));
            }
            for w in &mut c.writes {
                w.table = frame.display(&w.table);
            }
            c
        })
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = found.iter().map(|c| format!("  {c}")).collect();
    Err(OpsError::Refused(format!(
        "one writer per table: after this deploy\n{}\nnothing was created: stop or version the other writer first (blue-green versions every sink of a statement set), or list a table fed by two jobs on purpose in flinkpipe.multi_writer_tables",
        lines.join("\n")
    )))
}

#[cfg(test)]
mod tests {
    use super::is_missing_cloud_key;
    use crate::config::{Config, ConfigError};

    /// Only the Cloud API key not being set skips the capacity check; a missing environment id (or any
    /// other settings error) surfaces.
    #[test]
    fn only_a_missing_cloud_key_skips_the_capacity_check() {
        let cfg = Config::default();
        let no_key = crate::target::cloud::settings(&cfg, &|v| {
            (v == "SL_FLINK_ENV_ID").then(|| "env-1".to_string())
        })
        .unwrap_err();
        assert!(is_missing_cloud_key(&no_key), "{no_key}");
        let no_env = crate::target::cloud::settings(&cfg, &|v| {
            v.starts_with("SL_CONFLUENT_CLOUD_API")
                .then(|| "x".to_string())
        })
        .unwrap_err();
        assert!(!is_missing_cloud_key(&no_env), "{no_env}");
        let both = crate::target::cloud::settings(&cfg, &|_| None).unwrap_err();
        assert!(!is_missing_cloud_key(&both), "{both}");
        assert!(!is_missing_cloud_key(&ConfigError::Parse {
            path: "config.yaml".into(),
            message: "bad".into()
        }));
    }
}
