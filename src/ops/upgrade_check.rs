//! `pipeline upgrade-check`: for each statement whose DML changed since a git ref, can the new SQL take
//! over the running statement's state? One verdict per statement (all sinks of a statement set
//! together) from [`crate::changes::upgrade`]: offline from the SQL front end, and with `--engine
//! local` from the compiled plans of the local Flink (old and new SQL compiled with the project's DDL
//! at the head), with the action each target takes. With `--empirical`, a changed stateful
//! statement that has unit tests is restored for real on the local Flink
//! ([`crate::unittest::upgrade`]), and that run's outcome is the verdict (tier `empirical`).

use super::{Context, OpsError};
use crate::changes::upgrade::{self, Assessment, OperatorDiff, Tier, Verdict};
use crate::changes::{self, ChangeKind, FileRole};
use crate::config::process_env;
use crate::target::{StatementKind, StatementSpec};
use crate::unittest::upgrade::{self as empirical, Evidence, Outcome};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

/// Where plans are compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// The SQL front end only.
    Offline,
    /// The SQL Gateway of the local Flink (the project's gateway target if it has one, else
    /// `$FLINKPIPE_GATEWAY_URL`, else `http://127.0.0.1:8083`), asked for explicitly (`--engine
    /// local`): when it does not answer the check fails ([`OpsError::Usage`], exit 2) naming the
    /// address tried, instead of answering from another tier.
    Local,
    /// The default (no `--engine`): the local Flink when it answers, else the offline reading, with a
    /// note in each statement's reasons.
    #[default]
    Auto,
}

/// What `upgrade-check` compares.
#[derive(Debug, Clone, Default)]
pub struct UpgradeCheckRequest {
    /// The git refs (base and head), as for `list-modified-files`.
    pub change: super::changes::ChangeRequest,
    /// Only the statements writing these tables (any of their sinks); empty: every changed one.
    pub tables: Vec<String>,
    /// Where plans are compiled.
    pub engine: Engine,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
    /// Restore each changed stateful statement for real on its unit-test fixtures (needs
    /// [`Engine::Local`]).
    pub empirical: bool,
    /// The time limit of one statement's empirical run (default [`EMPIRICAL_TIMEOUT`]).
    pub timeout: Option<std::time::Duration>,
}

/// The default time limit of one statement's empirical run.
pub const EMPIRICAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// What deploying the change does on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpgradeAction {
    /// Nothing to deploy.
    None,
    /// Restart the new statement from the old one's offsets (no state to keep).
    RestartFromOffsets,
    /// Stop the old job with a savepoint and start the new statement from it (SQL Gateway).
    RestoreFromSavepoint,
    /// Deploy a new version beside the old one (blue-green), or accept the state loss.
    NewVersion,
}

/// The action per target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Actions {
    /// On an Apache Flink SQL Gateway.
    pub gateway: UpgradeAction,
    /// On Confluent Cloud, which exposes no savepoints: a stateful change needs a new version.
    pub confluent_cloud: UpgradeAction,
}

impl Actions {
    /// The actions a verdict calls for.
    pub fn of(v: Verdict) -> Actions {
        match v {
            Verdict::Unchanged => Actions {
                gateway: UpgradeAction::None,
                confluent_cloud: UpgradeAction::None,
            },
            Verdict::Stateless => Actions {
                gateway: UpgradeAction::RestartFromOffsets,
                confluent_cloud: UpgradeAction::RestartFromOffsets,
            },
            Verdict::StateCompatible => Actions {
                gateway: UpgradeAction::RestoreFromSavepoint,
                confluent_cloud: UpgradeAction::NewVersion,
            },
            _ => Actions {
                gateway: UpgradeAction::NewVersion,
                confluent_cloud: UpgradeAction::NewVersion,
            },
        }
    }
}

/// The verdict of one changed statement.
#[derive(Debug, Clone, Serialize)]
pub struct StatementVerdict {
    /// The DML statement's name on the target (`<prefix>-<product>-dml-<table>`).
    pub statement: String,
    /// The tables it writes (every sink of a statement set).
    pub tables: Vec<String>,
    /// The answer.
    pub verdict: Verdict,
    /// Which reading gave it (`engine`: the compiled plans of the local Flink).
    pub tier: Tier,
    /// The stateful operators compared.
    pub operators: Vec<OperatorDiff>,
    /// Why, in sentences (an engine that could not be used says so here).
    pub reasons: Vec<String>,
    /// The DML file (`pipelines/…`) and the line of its statement.
    pub file: String,
    pub line: usize,
    /// What a deploy does, per target.
    pub action: Actions,
    /// The empirical run (`--empirical` only): what it showed, or why it did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empirical: Option<Evidence>,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct UpgradeReport {
    /// The base commit compared with.
    pub base_commit: String,
    pub statements: Vec<StatementVerdict>,
}

impl UpgradeReport {
    /// Whether every change can be deployed in place on a gateway (no new version needed).
    pub fn all_in_place(&self) -> bool {
        self.statements.iter().all(|s| {
            !s.verdict.needs_new_version() && s.action.gateway != UpgradeAction::NewVersion
        })
    }
}

/// The verdicts of the statements changed since the request's ref.
///
/// Errors: errors in the project, git errors, unreadable SQL files, a bad `--since-date`.
pub fn upgrade_check(
    ctx: &Context,
    pipelines: &Path,
    req: &UpgradeCheckRequest,
) -> Result<UpgradeReport, OpsError> {
    if req.empirical && req.engine == Engine::Offline {
        return Err(OpsError::Usage(
            "--empirical runs on the local Flink: it cannot go with --engine offline".into(),
        ));
    }
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        req.allow_unknown,
        "no upgrade check: fix the errors above",
    )?;
    let set = changes::list_changes(
        pipelines,
        &super::changes::change_options(&req.change)?,
        &cfg,
    )?;
    let naming = crate::plan::StatementNaming::from_config(&cfg);
    let wanted: BTreeSet<&str> = req.tables.iter().map(String::as_str).collect();
    let mut todo = Vec::new();
    for f in set
        .files
        .iter()
        // Added statements replace nothing (no state to take over), deleted ones run no more.
        // So are the DDL files whose statement is a query (CTAS, materialized table): its job keeps
        // the query's state as a DML's does.
        .filter(|f| {
            (f.role == FileRole::Dml || (f.role == FileRole::Ddl && derived(&project, f)))
                && !matches!(f.change_kind, ChangeKind::Deleted | ChangeKind::Added)
        })
    {
        let new = std::fs::read_to_string(&f.abs_path)
            .map_err(|e| OpsError::Usage(format!("{}: {e}", f.abs_path.display())))?;
        let old = changes::git::read_at(
            pipelines,
            &set.base_commit,
            f.old_path.as_deref().unwrap_or(&f.path),
        )?;
        let analysis = crate::sql::analyze(&new);
        let mut tables: Vec<String> = analysis
            .sinks()
            .into_iter()
            .map(|t| t.table().to_string())
            .collect();
        tables.dedup();
        if tables.is_empty() {
            tables.push(f.new_table_name.clone());
        }
        if !wanted.is_empty() && !tables.iter().any(|t| wanted.contains(t.as_str())) {
            continue;
        }
        let line = analysis
            .statements
            .iter()
            .find(|s| s.kind.creates_relation() || !s.sinks.is_empty())
            .map(|s| s.line)
            .unwrap_or(1);
        let product = project
            .inventory
            .tables
            .get(&f.new_table_name)
            .map(|t| t.product.clone())
            .unwrap_or_default();
        todo.push((
            f,
            old,
            new,
            tables,
            line,
            naming.dml(&product, &f.new_table_name),
        ));
    }
    // The engine, when asked for and there is something to compile.
    let mut engine_url = String::new();
    let engine = match req.engine {
        Engine::Local | Engine::Auto if !todo.is_empty() => {
            let settings =
                crate::target::settings::gateway(&cfg, &process_env).unwrap_or_else(|| {
                    crate::target::GatewaySettings::new(
                        "http://127.0.0.1:8083",
                        "http://127.0.0.1:8081",
                    )
                });
            engine_url = settings.gateway_url.clone();
            Some(super::target::gateway_with(&cfg, Some(&project), settings)?)
        }
        _ => None,
    };
    let rt = super::target::runtime()?;
    let dir = tempfile::tempdir()?;
    let mut engine_down: Option<String> = None;
    let mut cancel: Option<crate::deploy::executor::Cancel> = None;
    let mut statements = Vec::new();
    for (f, old, new, tables, line, statement) in todo {
        let file = format!("pipelines/{}", f.path);
        let a = match &old {
            None => Assessment {
                verdict: Verdict::Unknown,
                tier: Tier::Offline,
                operators: Vec::new(),
                reasons: vec![
                    "the statement is new since the base: there is no state to take over".into(),
                ],
            },
            Some(_) if f.content_kind == ChangeKind::Cosmetic || f.same_sql_content => Assessment {
                verdict: Verdict::Unchanged,
                tier: Tier::Offline,
                operators: Vec::new(),
                reasons: vec!["only formatting, comments or keyword case changed".into()],
            },
            Some(old) => {
                let around = |sql: &str, at_base: bool| {
                    surroundings(&project, &cfg, sql, |rel| {
                        if at_base {
                            changes::git::read_at(pipelines, &set.base_commit, rel)
                                .ok()
                                .flatten()
                        } else {
                            std::fs::read_to_string(project.inventory.disk_path(rel)).ok()
                        }
                    })
                };
                let offline =
                    upgrade::compare_sql_in(old, &around(old, true), &new, &around(&new, false));
                match (&engine, &engine_down) {
                    (Some(gw), None) => {
                        match rt.block_on(compile_both(gw, old, &new, &statement, dir.path())) {
                            Ok(Some(a)) => a,
                            Ok(None) => with_reason(
                                offline,
                                "the local Flink cannot compile this statement (COMPILE PLAN takes INSERT and statement sets): offline reading",
                            ),
                            Err(Fail::Down(e)) if req.engine == Engine::Local && !req.empirical => {
                                return Err(OpsError::Usage(format!(
                                    "--engine local: the local Flink does not answer at {} ({e}); nothing was compared (start it with `make up`, or choose --engine offline)",
                                    engine_url
                                )));
                            }
                            Err(Fail::Down(e)) => {
                                engine_down = Some(e.clone());
                                with_reason(
                                    offline,
                                    &format!(
                                        "the local Flink does not answer ({e}): offline reading"
                                    ),
                                )
                            }
                            Err(Fail::Rejected(side, e)) => with_reason(
                                offline,
                                &format!(
                                    "the local Flink rejected the {side} SQL ({e}): offline reading"
                                ),
                            ),
                        }
                    }
                    (Some(_), Some(e)) => with_reason(
                        offline,
                        &format!("the local Flink does not answer ({e}): offline reading"),
                    ),
                    (None, _) => offline,
                }
            }
        };
        let (a, evidence) = if req.empirical {
            let why_not = if old.is_none() {
                Some("there is no old statement to restore from".to_string())
            } else if matches!(a.verdict, Verdict::Unchanged | Verdict::Stateless) {
                Some(format!("{}: no state to restore", a.verdict))
            } else if !has_unit_tests(&project, &f.new_table_name) {
                Some(format!(
                    "{} has no unit tests (tests/{}): the empirical run uses their fixtures",
                    f.new_table_name,
                    crate::unittest::definitions::FILE_NAME
                ))
            } else if engine.is_none() {
                Some("the local Flink is not configured".into())
            } else if engine_down.is_some() {
                Some("the local Flink does not answer".into())
            } else {
                None
            };
            let ev = match (why_not, &engine, &old) {
                (None, Some(gw), Some(old_sql)) => {
                    let cancel =
                        cancel.get_or_insert_with(|| super::unit_tests::on_ctrl_c(ctx, &rt));
                    empirical_run(
                        &EmpiricalInput {
                            project: &project,
                            cfg: &cfg,
                            table: &f.new_table_name,
                            old: old_sql,
                            timeout: req.timeout.unwrap_or(EMPIRICAL_TIMEOUT),
                        },
                        gw,
                        &rt,
                        cancel,
                    )
                }
                (Some(why), _, _) => Evidence::not_run(why),
                _ => Evidence::not_run("the local Flink is not configured"),
            };
            (with_evidence(a, &ev), Some(ev))
        } else {
            (a, None)
        };
        let mut a = a;
        let action = if derived(&project, f) && a.verdict != Verdict::Unchanged {
            a.reasons.push(format!(
                "{} is a CTAS or materialized table: its query is its schema, so a changed query creates the table anew (a new version); a deploy in place refuses it when the table holds state",
                f.new_table_name
            ));
            Actions {
                gateway: UpgradeAction::NewVersion,
                confluent_cloud: UpgradeAction::NewVersion,
            }
        } else {
            Actions::of(a.verdict)
        };
        statements.push(StatementVerdict {
            statement,
            tables,
            empirical: evidence,
            action,
            verdict: a.verdict,
            tier: a.tier,
            operators: a.operators,
            reasons: a.reasons,
            file,
            line,
        });
    }
    Ok(UpgradeReport {
        base_commit: set.base_commit,
        statements,
    })
}

/// Whether the file's table is created by a query (CTAS, materialized table).
fn derived(project: &crate::project::Project, f: &changes::FileChange) -> bool {
    project
        .inventory
        .tables
        .get(&f.new_table_name)
        .is_some_and(|t| {
            matches!(
                t.ddl_kind,
                Some(
                    crate::sql::StatementKind::Ctas
                        | crate::sql::StatementKind::CreateMaterializedTable
                )
            )
        })
}

/// What the project knows around a statement's text ([`upgrade::Surroundings`]): the views it reads,
/// directly or through other views (their DDL files' texts as `read` gives them: a path relative to
/// the pipelines folder), and the updating sources it reads, directly or through those views
/// ([`crate::inventory::reads_as_updating`]). Names are resolved as the inventory resolves them; a
/// name the project does not define is left out.
fn surroundings(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
    sql: &str,
    read: impl Fn(&str) -> Option<String>,
) -> upgrade::Surroundings {
    let tables = &project.inventory.tables;
    let mut out = upgrade::Surroundings::default();
    let mut seen = BTreeSet::new();
    // Depth first, a view's text after those of the views it reads.
    fn walk(
        names: Vec<String>,
        tables: &std::collections::BTreeMap<String, crate::inventory::Table>,
        project: &crate::project::Project,
        read: &dyn Fn(&str) -> Option<String>,
        seen: &mut BTreeSet<String>,
        out: &mut upgrade::Surroundings,
    ) {
        for name in names {
            if !seen.insert(name.clone()) {
                continue;
            }
            let Some(t) = tables.get(&name) else { continue };
            if crate::inventory::reads_as_updating(t) {
                out.updating_sources.push(name.clone());
            }
            if t.ddl_kind == Some(crate::sql::StatementKind::CreateView) {
                let inner: Vec<String> = t
                    .reads
                    .iter()
                    .filter(|r| r.kind == crate::inventory::ReadKind::Data)
                    .map(|r| r.name.clone())
                    .collect();
                walk(inner, tables, project, read, seen, out);
                if let Some(text) = t
                    .ddl_ref
                    .as_deref()
                    .and_then(|r| read(project.inventory.rel_to_root(r)))
                {
                    out.views.push(text);
                }
            }
        }
    }
    let names: Vec<String> = crate::sql::analyze(sql)
        .sources()
        .iter()
        .map(|n| crate::inventory::resolve_name(n, cfg))
        .collect();
    walk(names, tables, project, &read, &mut seen, &mut out);
    // The least known of the sinks' states.
    let states: Vec<upgrade::SinkState> = crate::sql::analyze(sql)
        .sinks()
        .iter()
        .map(|n| {
            upgrade::SinkState::of(
                tables
                    .get(&crate::inventory::resolve_name(n, cfg))
                    .and_then(|t| t.connector()),
            )
        })
        .collect();
    out.sink_state = if states.is_empty() || states.contains(&upgrade::SinkState::Unknown) {
        upgrade::SinkState::Unknown
    } else if states.contains(&upgrade::SinkState::Kept) {
        upgrade::SinkState::Kept
    } else {
        upgrade::SinkState::None
    };
    out
}

/// What one statement's empirical run needs.
struct EmpiricalInput<'a> {
    project: &'a crate::project::Project,
    cfg: &'a crate::config::Config,
    /// The table whose DML changed.
    table: &'a str,
    /// The old SQL text (at the base commit).
    old: &'a str,
    timeout: std::time::Duration,
}

/// Whether `table` has a `tests/test_definitions.yaml` in its folder.
fn has_unit_tests(project: &crate::project::Project, table: &str) -> bool {
    project.inventory.tables.get(table).is_some_and(|t| {
        project
            .inventory
            .disk_path(&t.folder)
            .join("tests")
            .join(crate::unittest::definitions::FILE_NAME)
            .is_file()
    })
}

/// Prepares the table's unit-test suite and runs [`empirical::run`] on it; why not, when it cannot.
fn empirical_run(
    input: &EmpiricalInput<'_>,
    gw: &crate::target::GatewayTarget,
    rt: &tokio::runtime::Runtime,
    cancel: &crate::deploy::executor::Cancel,
) -> Evidence {
    use crate::unittest::prepare::{self, PrepareOptions};
    let cfg = input.cfg;
    let suffix = match super::unit_tests::suffix(cfg, None) {
        Ok(s) => s,
        Err(e) => return Evidence::not_run(e.to_string()),
    };
    let suite = match prepare::prepare(
        input.project,
        cfg,
        input.table,
        &PrepareOptions {
            suffix: suffix.clone(),
            storage: crate::unittest::rewrite::Storage::Kafka {
                bootstrap: super::unit_tests::bootstrap(cfg),
            },
            case: None,
        },
    ) {
        Ok(s) => s,
        Err(e) => return Evidence::not_run(format!("its unit tests cannot be prepared: {e}")),
    };
    let old = match empirical::rename_onto(&suite, cfg, input.old) {
        Ok(o) => o,
        Err(e) => {
            return Evidence::not_run(format!(
                "the old SQL cannot be renamed onto the test tables: {e}"
            ));
        }
    };
    let plan = match empirical::plan(&suite, &old, &suite.tested) {
        Ok(p) => p,
        Err(why) => return Evidence::not_run(why),
    };
    let opts = empirical::RunOptions {
        naming: crate::unittest::TestNaming {
            prefix: crate::plan::StatementNaming::from_config(cfg).prefix,
            suffix,
        },
        timeout: input.timeout,
        poll: std::time::Duration::from_millis(500),
    };
    let kafka = crate::target::kafka::KafkaAdmin::new(&super::unit_tests::bootstrap(cfg));
    rt.block_on(empirical::run(gw, &kafka, &suite, &plan, &opts, cancel))
}

/// The assessment an empirical run gives: its outcome decides, the engine's (or offline) operators
/// stay as the explanation; a run that proved nothing leaves the assessment as it was, saying why.
fn with_evidence(a: Assessment, ev: &Evidence) -> Assessment {
    let (verdict, why) = match ev.outcome {
        // The same result on a few rows does not outweigh a plan that computes its state otherwise.
        Outcome::SameResult
            if matches!(
                a.verdict,
                Verdict::StateCompatibleSemanticsChanged | Verdict::StateIncompatible
            ) =>
        {
            (
                Verdict::StateCompatibleSemanticsChanged,
                format!(
                    "empirical: the new SQL restored the old one's savepoint and its result on test case {} equals a fresh run's, but the {} reading sees the state computed otherwise ({}): the results may differ on other rows",
                    ev.case.as_deref().unwrap_or("?"),
                    tier_name(a.tier),
                    a.verdict
                ),
            )
        }
        Outcome::SameResult => (
            Verdict::StateCompatible,
            format!(
                "empirical: the new SQL restored the old one's savepoint (test case {}, {} + {} rows) and its result equals a fresh run's",
                ev.case.as_deref().unwrap_or("?"),
                ev.rows_first_half,
                ev.rows_second_half
            ),
        ),
        Outcome::DifferentResult => (
            Verdict::StateCompatibleSemanticsChanged,
            format!(
                "empirical: the new SQL restored the old one's savepoint (test case {}), but {} output row(s) differ from a fresh run's",
                ev.case.as_deref().unwrap_or("?"),
                ev.rows_differing
            ),
        ),
        Outcome::RestoreFailed => (
            Verdict::StateIncompatible,
            format!(
                "empirical: the new SQL failed to restore the old one's savepoint: {}",
                ev.error.as_deref().unwrap_or("?")
            ),
        ),
        Outcome::Inconclusive => {
            let tier = tier_name(a.tier);
            return with_reason(
                a,
                &format!(
                    "empirical run inconclusive ({}): {tier} reading",
                    ev.error.as_deref().unwrap_or("?")
                ),
            );
        }
        Outcome::NotRun => {
            let tier = tier_name(a.tier);
            return with_reason(
                a,
                &format!(
                    "empirical tier not available: {}: {tier} reading",
                    ev.why_not.as_deref().unwrap_or("?")
                ),
            );
        }
    };
    let mut out = with_reason(a, &why);
    out.verdict = verdict;
    out.tier = Tier::Empirical;
    out
}

fn tier_name(t: Tier) -> &'static str {
    match t {
        Tier::Offline => "offline",
        Tier::Engine => "engine",
        Tier::Empirical => "empirical",
    }
}

fn with_reason(mut a: Assessment, why: &str) -> Assessment {
    a.reasons.insert(0, why.to_string());
    a
}

enum Fail {
    /// Transport: the engine is not there.
    Down(String),
    /// The planner refused one side (`old`/`new`).
    Rejected(&'static str, String),
}

async fn compile_both(
    gw: &crate::target::GatewayTarget,
    old: &str,
    new: &str,
    name: &str,
    dir: &Path,
) -> Result<Option<Assessment>, Fail> {
    let spec = |sql: &str| StatementSpec {
        name: name.to_string(),
        sql: sql.to_string(),
        properties: Default::default(),
        kind: StatementKind::Dml,
        compute_pool: None,
    };
    let compile = |side: &'static str, sql: String| async move {
        gw.compile_plan(&spec(&sql), dir)
            .await
            .map_err(|e| match e {
                crate::target::TargetError::Invalid(m) => Fail::Rejected(side, m),
                e if e.is_retryable() => Fail::Down(e.to_string()),
                e => Fail::Rejected(side, e.to_string()),
            })
    };
    let Some(po) = compile("old", old.to_string()).await? else {
        return Ok(None);
    };
    let Some(pn) = compile("new", new.to_string()).await? else {
        return Ok(None);
    };
    upgrade::compare_plans(&po, &pn)
        .map(Some)
        .map_err(|e| Fail::Rejected("compiled", e.to_string()))
}
