//! `pipeline deploy`: executes the plan of a scope on the configured target (parents first, ready
//! tables in parallel), recording each step in the journal; or, with `dry_run`, reads the target and
//! reports what each statement would get, changing nothing.

use super::capacity::Capacity;
use super::preflight::{self, ServerCheck};
use super::scope::PlanRequest;
use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::config::process_env;
use crate::deploy::DeployNode;
use crate::deploy::env_sql::EnvSql;
use crate::deploy::executor::{self, Cancel, DeployOptions, Session};
use crate::deploy::journal::{self, Entry, Journal, JournalState};
use crate::deploy::spec;
use crate::plan::{self, ExecutionPlan, StatementStatus};
use crate::project::Project;
use crate::sql::text::normalize_sql;
use crate::target::StatementState;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

pub use crate::deploy::executor::{DeployReport, NodeResult, Outcome, StatementResult};

/// What to deploy and how.
#[derive(Debug, Clone)]
pub struct DeployRequest {
    pub plan: PlanRequest,
    /// Tables deployed at once (each waits for its parents); at least 1.
    pub max_parallel: usize,
    /// Read the target and report, change nothing.
    pub dry_run: bool,
    /// Longest wait for one statement to reach RUNNING (DML) or COMPLETED (DDL).
    pub timeout: Duration,
    /// Continue an interrupted deploy from its journal.
    pub resume: bool,
    /// Allow `DROP TABLE` for restarted tables whose DDL changed.
    pub allow_drop: bool,
    /// Tables or statements whose stateful DML may be recreated with new SQL, losing its state
    /// (`all`: every one).
    pub allow_state_loss: Vec<String>,
    /// The journal file (default `<project>/.flinkpipe/deploy-journal.jsonl`).
    pub journal: Option<PathBuf>,
    /// Deploy the green tables of the newest open release of `pipelines/blue_green.json` (the scope
    /// must then be empty).
    pub blue_green: bool,
    /// Deploy the tables recorded at this version (`_v2`) by the releases of `pipelines/blue_green.json`
    /// for this statement prefix (the scope must then be empty).
    pub version: Option<String>,
    /// Deploy even when a compute pool would go past `flink.max_cfu_percent_before_allocation`.
    pub allow_pool_overcommit: bool,
    /// shift_left's `--pool-creation`: when the capacity check finds a pool missing or full, create
    /// a pool for the statements that would start there (sized so they fit under the ratio), wait
    /// until it is PROVISIONED and send them there; a dry run says which pools it would create.
    pub pool_creation: bool,
}

/// One statement of a dry run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DryRunStatement {
    pub table_name: String,
    /// What the executor would do and the phase now: `create (now absent)`, `delete and recreate
    /// (now RUNNING)`, `keep (now RUNNING)`, `drop (needs --allow-drop)`, `skip`.
    pub action: String,
    /// The statement name, `-` for a node without statements.
    pub statement: String,
    /// The plan's reason.
    pub reason: String,
    /// The server's dry run of the text it would send (statements it would create only).
    pub check: Option<ServerCheck>,
    /// The compute pool it would run in (`None`: the target's default).
    pub compute_pool: Option<String>,
    /// The per-environment rules that change what is sent (`prod[0]`).
    pub rewritten_by: Vec<String>,
    /// The SQL that would be sent (after those rules).
    pub sql: Option<String>,
    /// The executor would refuse this step (state loss, a changed DDL, new SQL not restarted, a
    /// compute pool move): the real run fails on it, so the dry run does too.
    pub refused: bool,
}

/// What a dry run found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DryRun {
    pub scope: String,
    /// The environment whose rewrite rules apply (`kafka.cluster_type` or `flinkpipe.environment`).
    pub environment: String,
    /// The target the server checks ran on (its description, secrets masked).
    pub target: String,
    pub statements: Vec<DryRunStatement>,
    /// The compute pool check (Confluent Cloud; `None` when nothing starts or on the SQL Gateway).
    pub capacity: Option<Capacity>,
    /// `--allow-pool-overcommit` was given.
    pub allow_pool_overcommit: bool,
    /// `--pool-creation`: the pools the real run would create, and for which statements (the pool
    /// each replaces no longer blocks). Left out of JSON when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pools_to_create: Vec<PoolToCreate>,
}

/// A compute pool `deploy --pool-creation` creates for statements that do not fit in theirs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolToCreate {
    /// The pool they do not fit in (missing, or over the ratio).
    pub instead_of: String,
    /// The statements moved to the new pool.
    pub statements: Vec<String>,
    /// Its `spec.max_cfu`.
    pub max_cfu: u32,
}

impl DryRun {
    /// Whether the real deploy would get past its checks: no step is refused
    /// ([`DryRunStatement::refused`]), every server check passes and no pool blocks
    /// ([`DryRun::blocking_pools`]).
    pub fn success(&self) -> bool {
        self.statements
            .iter()
            .all(|s| !s.refused && s.check.as_ref().is_none_or(|c| !c.fails()))
            && self.blocking_pools().is_empty()
    }

    /// The pools that would stop the real run: those the capacity check blocks, except those whose
    /// statements `--pool-creation` would move to a new pool (the real run creates it and checks
    /// again).
    pub fn blocking_pools(&self) -> Vec<&super::capacity::PoolCheck> {
        self.capacity
            .as_ref()
            .map(|c| {
                c.blocking(self.allow_pool_overcommit)
                    .into_iter()
                    .filter(|p| !self.pools_to_create.iter().any(|n| n.instead_of == p.pool))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// What a deploy did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deployed {
    pub scope: String,
    pub report: DeployReport,
    /// The journal of the run (for `--resume`).
    pub journal: PathBuf,
}

/// The result of [`deploy`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DeployOutcome {
    DryRun(DryRun),
    Deployed(Deployed),
}

/// Deploys (or dry-runs) the plan of `req`. Warnings (a running statement the plan keeps although its
/// files changed) go to the console; progress to the terminal. Ctrl-C starts nothing new and ends the
/// run cleanly (the report says `interrupted`).
///
/// Errors: errors in the project, a target that cannot be reached or listed, an unknown scope, a
/// journal that cannot be written or (with `resume`) read or that belongs to another scope.
pub fn deploy(ctx: &Context, req: &DeployRequest) -> Result<DeployOutcome, OpsError> {
    let cfg = ctx.project_config(&req.plan.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.plan.pipelines,
        req.plan.allow_unknown,
        "nothing deployed: fix the errors above",
    )?;
    let mut plan_req = req.plan.clone();
    if req.blue_green {
        plan_req = green_scope(ctx, &cfg, &project, &plan_req, req.dry_run)?;
    } else if let Some(v) = &req.version {
        plan_req = version_scope(ctx, &cfg, &project, &plan_req, v, req.dry_run)?;
    }
    // Every input is checked before any server is contacted: the scope (unknown tables, products,
    // folders, table lists), the SQL files of the plan, and the journal to resume from.
    let env = EnvSql::from_config(&cfg, &process_env)?;
    let offline = super::plan::plan_with(
        &cfg,
        &project,
        &plan_req,
        &StatementStatus::default(),
        ctx.console,
    )?;
    spec::deploy_nodes(&project, &offline, &env)?;
    let jpath = req
        .journal
        .clone()
        .unwrap_or_else(|| super::state_dir(&plan_req.pipelines).join("deploy-journal.jsonl"));
    let resume = if req.resume && !req.dry_run {
        resume_state(&jpath, &offline.scope)?
    } else {
        JournalState::default()
    };
    let c = target::connect(&cfg, Some(&project))?;
    // One command at a time changes this project's target, whatever journal it writes (#29): taken
    // before the target is read, held until the run ends. A dry run changes nothing and takes none.
    let _lock = if req.dry_run {
        None
    } else {
        let prefix = crate::plan::StatementNaming::from_config(&cfg).prefix;
        super::lock::lock_target(&plan_req.pipelines, &c, &prefix, "pipeline deploy")?
    };
    let rt = target::runtime()?;
    let live = rt.block_on(async {
        c.target
            .check_compute_pool()
            .await
            .map_err(|e| c.error(&format!("checking the target ({})", c.target.describe()), e))?;
        target::live_statements(&c).await
    })?;
    let plan = super::plan::plan_with(
        &cfg,
        &project,
        &plan_req,
        &target::status_of(&live),
        &super::Silent,
    )?;
    let mut nodes = spec::deploy_nodes(&project, &plan, &env)?;
    preflight::one_writer(
        &cfg,
        &project,
        &nodes,
        &live,
        c.target.default_namespace(),
        c.target.session_scoped_tables(),
    )?;
    warn_skipped_drift(ctx, &project, &plan, &live, &env);
    let options = DeployOptions {
        max_parallel: req.max_parallel.max(1),
        statement_timeout: req.timeout,
        allow_drop: req.allow_drop,
        allow_state_loss: req.allow_state_loss.clone(),
        ..DeployOptions::default()
    };
    let mut capacity = preflight::capacity(ctx, &cfg, &c, &rt, &nodes, &live, &options)?;
    if req.pool_creation
        && let Some(cap) = &capacity
        && create_pools(ctx, &cfg, req, &plan_req.pipelines, cap, &mut nodes)?
    {
        capacity = preflight::capacity(ctx, &cfg, &c, &rt, &nodes, &live, &options)?;
    }
    if req.dry_run {
        let verdicts = preflight::engine_verdicts(&c, &rt, &nodes, &live);
        let checks = preflight::server_checks(&c, &rt, &plan, &nodes, &live, &options, &verdicts);
        return Ok(DeployOutcome::DryRun(dry_run(
            &plan,
            &nodes,
            &live,
            &options,
            crate::deploy::executor::Known::of_target(c.target.as_ref()),
            &verdicts,
            DryRunExtras {
                checks,
                pools_to_create: match (&capacity, req.pool_creation) {
                    (Some(cap), true) => pools_to_create(cap)
                        .into_iter()
                        .map(|(instead_of, statements, max_cfu)| PoolToCreate {
                            instead_of,
                            statements,
                            max_cfu,
                        })
                        .collect(),
                    _ => Vec::new(),
                },
                capacity,
                environment: env.environment.clone(),
                target: c.scrubber.scrub(&c.target.describe()),
                allow_pool_overcommit: req.allow_pool_overcommit,
            },
        )));
    }
    if let Some(cap) = &capacity {
        let blocking = cap.blocking(req.allow_pool_overcommit);
        if !blocking.is_empty() {
            let lines: Vec<String> = blocking.iter().map(|p| p.describe(cap.ratio)).collect();
            return Err(OpsError::Refused(format!(
                "{}; nothing was created: free capacity, give the tables another pool (flinkpipe.compute_pools or --compute-pool-id), or rerun with --allow-pool-overcommit",
                lines.join("; ")
            )));
        }
    }
    let journal = Mutex::new(start_journal(&jpath, req.resume, &plan)?);
    let report = run(
        ctx,
        &c,
        &rt,
        &plan,
        &nodes,
        &options,
        Some(&journal),
        resume,
    );
    Ok(DeployOutcome::Deployed(Deployed {
        scope: plan.scope,
        report,
        journal: jpath,
    }))
}

/// `--pool-creation`: a compute pool for each group of statements that do not fit in theirs
/// (`<prefix>-<timestamp>-<n>`, as many CFUs as they need), and those statements moved into it; a dry
/// run only says what it would create. Returns whether a pool was created (the capacity is then read
/// again).
///
/// Errors: those of [`super::pools::create`].
fn create_pools(
    ctx: &Context,
    cfg: &crate::config::Config,
    req: &DeployRequest,
    pipelines: &std::path::Path,
    cap: &Capacity,
    nodes: &mut [DeployNode],
) -> Result<bool, OpsError> {
    let wanted = pools_to_create(cap);
    if wanted.is_empty() {
        return Ok(false);
    }
    let naming = crate::plan::StatementNaming::from_config(cfg);
    for (i, (old, statements, max_cfu)) in wanted.iter().enumerate() {
        let name = format!(
            "{}-{}-{}",
            naming.prefix,
            super::now_compact().replace('_', "-"),
            i + 1
        );
        if req.dry_run {
            ctx.console.note(&format!(
                "note: --pool-creation would create compute pool {name} ({max_cfu} CFUs) for {} statement(s) that do not fit in {old}: {}",
                statements.len(),
                statements.join(", ")
            ));
            continue;
        }
        let pool = super::pools::create(
            ctx,
            &super::pools::CreatePoolRequest {
                pipelines: pipelines.to_path_buf(),
                name: name.clone(),
                max_cfu: *max_cfu,
                wait: Some(req.timeout),
            },
        )?;
        ctx.console.note(&format!(
            "created compute pool {} ({name}, {max_cfu} CFUs) for {} statement(s) that did not fit in {old}",
            pool.id,
            statements.len()
        ));
        for n in nodes.iter_mut() {
            for step in n.steps.iter_mut() {
                if statements.contains(&step.spec.name) {
                    step.spec.compute_pool = Some(pool.id.clone());
                }
            }
        }
    }
    Ok(!req.dry_run)
}

/// The journal of this run at `jpath` (appended to with `--resume`, else new), its first entry the
/// run's scope and tables.
///
/// Errors: the journal cannot be created, locked or written.
fn start_journal(
    jpath: &std::path::Path,
    resume: bool,
    plan: &ExecutionPlan,
) -> Result<Journal, OpsError> {
    let mut j = if resume {
        Journal::append(jpath)?
    } else {
        Journal::create(jpath)?
    };
    j.record(&Entry::Run {
        scope: plan.scope.clone(),
        tables: plan.nodes.iter().map(|n| n.table_name.clone()).collect(),
        at: journal::now_secs(),
    })?;
    Ok(j)
}

/// The scope of `deploy --blue-green`: the green tables of the newest release of
/// `pipelines/blue_green.json` still open in this environment, as a table scope (so they are started,
/// with their non-running ancestors). Green tables that write Kafka topics of their own are listed on
/// the console: Flink does not create topics, and a green child reads its green parent's new topic.
///
/// Errors: a scope given as well (usage), no open release, a green table the tree no longer has.
fn green_scope(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    req: &PlanRequest,
    dry_run: bool,
) -> Result<PlanRequest, OpsError> {
    use crate::versioning::record::{BLUE_GREEN_FILE, BlueGreenRecord};
    if !req.scope.is_none() {
        return Err(OpsError::Usage(
            "--blue-green deploys the recorded green tables: give no other scope".into(),
        ));
    }
    let naming = crate::plan::StatementNaming::from_config(cfg);
    let record = BlueGreenRecord::read(&req.pipelines)?;
    let Some(release) = record.open_release(&naming.prefix) else {
        return Err(OpsError::Refused(format!(
            "--blue-green: {} records no green set still open for statement prefix '{}': run `flinkpipe pipeline blue-green --since REF --apply` and commit first",
            req.pipelines.join(BLUE_GREEN_FILE).display(),
            naming.prefix
        )));
    };
    let mut tables = Vec::new();
    for t in &release.tables {
        if !project.inventory.tables.contains_key(&t.green_table_name) {
            return Err(OpsError::Refused(format!(
                "--blue-green: the green table '{}' of the release of {} is not in the tree any more",
                t.green_table_name, release.created_at
            )));
        }
        tables.push(t.green_table_name.clone());
    }
    if super::target::TargetKind::of(cfg) == super::target::TargetKind::SqlGateway {
        green_topics(ctx, project, &tables, dry_run);
    }
    Ok(PlanRequest {
        scope: super::scope::ScopeRequest::Green(tables),
        ..req.clone()
    })
}

/// The pools `--pool-creation` makes: for each pool the capacity check finds missing or over the
/// limit, (that pool, the statements that would start there, the smallest pool size in which they
/// fit under the ratio — 50 CFUs at most).
fn pools_to_create(cap: &super::capacity::Capacity) -> Vec<(String, Vec<String>, u32)> {
    use super::capacity::Verdict;
    cap.pools
        .iter()
        .filter(|p| matches!(p.verdict, Verdict::Missing | Verdict::OverLimit))
        .map(|p| {
            let need = f64::from(p.needed_cfu.max(1));
            let size = crate::target::cloud::MAX_CFU_VALUES
                .iter()
                .copied()
                .find(|v| f64::from(*v) * cap.ratio >= need)
                .unwrap_or(50);
            (p.pool.clone(), p.statements.clone(), size)
        })
        .collect()
}

/// The scope of `deploy --version V`: every green table that the releases of
/// `pipelines/blue_green.json` for this statement prefix recorded at version `V` (its name ends with
/// `_vN`), as a table scope. shift_left stored `--version` and never used it.
///
/// Errors: a scope given as well (usage), a version that is not `_vN`/`vN`/`N`, no table recorded at
/// it, a recorded table the tree no longer has.
fn version_scope(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    req: &PlanRequest,
    version: &str,
    dry_run: bool,
) -> Result<PlanRequest, OpsError> {
    use crate::versioning::record::{BLUE_GREEN_FILE, BlueGreenRecord};
    if !req.scope.is_none() {
        return Err(OpsError::Usage(
            "--version deploys the tables recorded at that version: give no other scope".into(),
        ));
    }
    let digits = version
        .trim_start_matches('_')
        .trim_start_matches(['v', 'V']);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(OpsError::Usage(format!(
            "--version {version}: expected a version such as _v2 (or v2, 2)"
        )));
    }
    let suffix = format!("_v{digits}");
    let naming = crate::plan::StatementNaming::from_config(cfg);
    let record = BlueGreenRecord::read(&req.pipelines)?;
    let mut tables: Vec<String> = Vec::new();
    for release in record
        .releases
        .iter()
        .filter(|r| r.statement_prefix == naming.prefix)
    {
        for t in &release.tables {
            if t.green_table_name.ends_with(&suffix) && !tables.contains(&t.green_table_name) {
                if !project.inventory.tables.contains_key(&t.green_table_name) {
                    return Err(OpsError::Refused(format!(
                        "--version {version}: the table '{}' recorded by the release of {} is not in the tree any more",
                        t.green_table_name, release.created_at
                    )));
                }
                tables.push(t.green_table_name.clone());
            }
        }
    }
    if tables.is_empty() {
        return Err(OpsError::Refused(format!(
            "--version {version}: {} records no table at version {suffix} for statement prefix '{}'",
            req.pipelines.join(BLUE_GREEN_FILE).display(),
            naming.prefix
        )));
    }
    if super::target::TargetKind::of(cfg) == super::target::TargetKind::SqlGateway {
        green_topics(ctx, project, &tables, dry_run);
    }
    Ok(PlanRequest {
        scope: super::scope::ScopeRequest::Green(tables),
        ..req.clone()
    })
}

/// The Kafka topics of the green tables (tables with a `kafka` or `upsert-kafka` connector and a
/// `'topic'`): Flink does not create topics, and a green child reads its green parent's new topic, so
/// they are created first — on the broker each table's `'properties.bootstrap.servers'` names — unless
/// they exist. A dry run only lists them. A broker that cannot be reached is a warning naming the
/// topics to create by hand (`scripts/local-flink.sh topics DIR` on the local stack).
fn green_topics(ctx: &Context, project: &Project, tables: &[String], dry_run: bool) {
    let mut by_broker: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in tables {
        let table = &project.inventory.tables[t];
        let opt = |k: &str| {
            table
                .with_options
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        if !matches!(table.connector(), Some("kafka" | "upsert-kafka")) {
            continue;
        }
        if let (Some(topic), Some(broker)) = (opt("topic"), opt("properties.bootstrap.servers")) {
            by_broker.entry(broker).or_default().push(topic);
        }
    }
    for (broker, topics) in by_broker {
        if dry_run {
            ctx.console.note(&format!(
                "note: the green tables' topics would be created on {broker} if missing: {}",
                topics.join(", ")
            ));
            continue;
        }
        let admin = crate::target::kafka::KafkaAdmin::new(&broker);
        let created = target::runtime().map_err(|e| e.to_string()).and_then(|rt| {
            rt.block_on(admin.ensure(&topics))
                .map_err(|e| e.to_string())
        });
        match created {
            Ok(created) if !created.is_empty() => ctx.console.note(&format!(
                "created the green tables' Kafka topics on {broker}: {}",
                created.join(", ")
            )),
            Ok(_) => {}
            Err(e) => ctx.console.warn(&format!(
                "warning[topics]: the green tables write new Kafka topics, which Flink does not create: {}; creating them on {broker} failed ({e}): create them before this deploy (local stack: scripts/local-flink.sh topics DIR)",
                topics.join(", ")
            )),
        }
    }
}

/// What an earlier run of the same scope achieved, from its journal.
fn resume_state(jpath: &Path, scope: &str) -> Result<JournalState, OpsError> {
    let entries = journal::read(jpath).map_err(|e| {
        OpsError::Refused(format!(
            "{e} (--resume needs the journal of an earlier run)"
        ))
    })?;
    let st = JournalState::replay(&entries);
    if st.scope.as_deref() != Some(scope) {
        return Err(OpsError::Refused(format!(
            "--resume: the journal {} is for '{}', not '{}'",
            jpath.display(),
            st.scope.unwrap_or_default(),
            scope
        )));
    }
    Ok(st)
}

/// Runs the executor with progress display and Ctrl-C handling.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    ctx: &Context,
    c: &Connected,
    rt: &tokio::runtime::Runtime,
    plan: &ExecutionPlan,
    nodes: &[DeployNode],
    options: &DeployOptions,
    journal: Option<&Mutex<Journal>>,
    resume: JournalState,
) -> DeployReport {
    let waves: BTreeMap<String, usize> = plan
        .nodes
        .iter()
        .filter_map(|n| n.wave.map(|w| (n.table_name.clone(), w)))
        .collect();
    let progress = crate::deploy::progress::auto(waves, c.scrubber.clone());
    let session = Session {
        journal,
        resume,
        progress: progress.as_ref(),
        scrubber: c.scrubber.clone(),
        cancel: Cancel::default(),
    };
    rt.block_on(async {
        // SIGINT, SIGTERM and SIGHUP alike: the run ends cleanly, its journal whole.
        let mut signals = super::signals::Interrupts::listen();
        let run = executor::deploy(c.target.as_ref(), nodes, options, &session);
        tokio::pin!(run);
        let mut interrupted = false;
        loop {
            tokio::select! {
                report = &mut run => break report,
                which = signals.recv(), if !interrupted => {
                    interrupted = true;
                    ctx.console.note(&format!(
                        "\ninterrupted ({}): no new statement will start; finishing cleanly",
                        which.as_str()
                    ));
                    session.cancel.cancel();
                }
            }
        }
    })
}

/// Warns about statements the plan keeps (skip) although their files changed since they were
/// deployed: the plan does not restart a running statement by itself.
fn warn_skipped_drift(
    ctx: &Context,
    project: &Project,
    plan: &ExecutionPlan,
    live: &BTreeMap<String, StatementState>,
    env: &EnvSql,
) {
    for n in plan.nodes.iter().filter(|n| n.action == plan::Action::Skip) {
        // A file that cannot be read is reported by the operations that use it, not here.
        let Ok(steps) = spec::statements_of(project, n, false, env) else {
            continue;
        };
        for st in steps {
            if let Some(l) = live.get(&st.spec.name)
                && normalize_sql(&l.sql) != normalize_sql(&st.spec.sql)
            {
                ctx.console.warn(&format!(
                    "warning[drift]: {} is {} with SQL that differs from the files of {}; the plan keeps it (restart it with --table-name {}, or version it with pipeline blue-green)",
                    st.spec.name, l.phase, n.table_name, n.table_name
                ));
            }
            // A statement stays in its pool until it is recreated: a new pool for a table the plan
            // keeps is said, not done silently.
            if let Some(l) = live.get(&st.spec.name)
                && st.spec.kind == crate::target::StatementKind::Dml
                && l.phase != crate::target::Phase::Completed
                && let Some((from, to)) = crate::deploy::executor::decide::pool_moved(l, &st.spec)
            {
                ctx.console.warn(&format!(
                    "warning[pool]: {} runs in compute pool {from}, but the configuration now gives {} compute pool {to}; the plan keeps it, so it stays in {from} (restart it with --table-name {} to move it)",
                    st.spec.name, n.table_name, n.table_name
                ));
            }
        }
    }
}

/// What a dry run found besides the plan.
struct DryRunExtras {
    checks: BTreeMap<String, ServerCheck>,
    capacity: Option<Capacity>,
    environment: String,
    target: String,
    allow_pool_overcommit: bool,
    pools_to_create: Vec<PoolToCreate>,
}

fn dry_run(
    plan: &ExecutionPlan,
    nodes: &[DeployNode],
    live: &BTreeMap<String, StatementState>,
    options: &DeployOptions,
    known: crate::deploy::executor::Known,
    verdicts: &preflight::EngineVerdicts,
    extras: DryRunExtras,
) -> DryRun {
    use crate::deploy::executor::{Refusal, StepPlan, decide};
    let statements = nodes
        .iter()
        .flat_map(|n| {
            if n.steps.is_empty() {
                return vec![DryRunStatement {
                    table_name: n.table.clone(),
                    action: n.action.as_str().to_string(),
                    statement: "-".into(),
                    reason: n.reason.clone(),
                    check: None,
                    compute_pool: None,
                    rewritten_by: Vec::new(),
                    sql: None,
                    refused: false,
                }];
            }
            n.steps
                .iter()
                .map(|s| {
                    let existing = live.get(&s.spec.name);
                    let now = existing
                        .map(|l| l.phase.to_string())
                        .unwrap_or_else(|| "absent".into());
                    let decided = (n.action != plan::Action::Skip)
                        .then(|| preflight::intended(existing, n, s, options, known, verdicts));
                    let refused = matches!(decided, Some(StepPlan::Refuse(_)));
                    let what = match decided {
                        None => "skip".to_string(),
                        Some(d) => match d {
                            StepPlan::SkipDrop => "drop (needs --allow-drop)".to_string(),
                            StepPlan::FinishHandover => "finish the carry-over".into(),
                            StepPlan::Create => "create".into(),
                            StepPlan::Adopt { keep: true } => "keep".into(),
                            StepPlan::Adopt { keep: false } => "adopt".into(),
                            StepPlan::StopResume { stop_first: true } => "stop and resume".into(),
                            StepPlan::StopResume { stop_first: false } => "resume".into(),
                            StepPlan::Refuse(Refusal::DdlChanged) => {
                                "refuse (DDL changed: needs --allow-drop)".into()
                            }
                            StepPlan::Refuse(Refusal::SqlChanged { .. }) => {
                                "refuse (different SQL, not restarted)".into()
                            }
                            StepPlan::Refuse(Refusal::StateLoss { verdict }) => format!(
                                "refuse (stateful, new SQL: {verdict}; the restart would lose its state: a new version with `pipeline blue-green`, or --allow-state-loss {})",
                                n.table
                            ),
                            StepPlan::Refuse(Refusal::PoolChanged { from, to }) => format!(
                                "refuse (runs in compute pool {from}, the plan gives it {to}: restart the table to move it)"
                            ),
                            StepPlan::DropAndRecreate => "drop and recreate".into(),
                            StepPlan::Recreate { .. } => match existing
                                .and_then(|l| decide::pool_moved(l, &s.spec))
                            {
                                Some((from, to)) => format!(
                                    "delete and recreate (moves from compute pool {from} to {to})"
                                ),
                                None => "delete and recreate".into(),
                            },
                            StepPlan::SavepointRestart {
                                restore,
                                verdict,
                                stop_first,
                            } => format!(
                                "{} ({verdict}: {}{})",
                                restore.as_str(),
                                if stop_first { "stop with a savepoint, " } else { "" },
                                match restore {
                                    crate::target::Restore::State => "start the new SQL from it, the old SQL again if it fails",
                                    crate::target::Restore::Offsets => "start the new SQL from its offsets",
                                }
                            ),
                            StepPlan::CarryOver => match existing
                                .and_then(|l| decide::pool_moved(l, &s.spec))
                            {
                                Some((from, to)) => format!(
                                    "carry offsets over (moves from compute pool {from} to {to})"
                                ),
                                None => "carry offsets over".into(),
                            },
                        },
                    };
                    DryRunStatement {
                        table_name: n.table.clone(),
                        action: format!("{what} (now {now})"),
                        statement: s.spec.name.clone(),
                        reason: n.reason.clone(),
                        check: extras.checks.get(&s.spec.name).cloned(),
                        compute_pool: s.spec.compute_pool.clone(),
                        rewritten_by: s.rewritten_by.clone(),
                        sql: Some(s.spec.sql.clone()),
                        refused,
                    }
                })
                .collect()
        })
        .collect();
    DryRun {
        scope: plan.scope.clone(),
        environment: extras.environment,
        target: extras.target,
        statements,
        capacity: extras.capacity,
        allow_pool_overcommit: extras.allow_pool_overcommit,
        pools_to_create: extras.pools_to_create,
    }
}
