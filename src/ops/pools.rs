//! `project list-compute-pools`, `project create-compute-pool NAME --max-cfu N`, `project
//! delete-compute-pool ID`: Confluent Cloud compute pools of the configured environment, through the
//! control plane (`fcpm/v2`, a Cloud API key: [`crate::target::cloud`]). Planning never creates a
//! pool (shift_left 0.1.52 could); these commands are the explicit way.
//!
//! Deleting is two steps, so that the caller can show what runs there and ask first: [`prepare_delete`]
//! reads the pool and the statements in it (one listing of the data plane), [`PreparedDelete::execute`]
//! deletes. A pool where statements of the project run, or statements of a blue-green release still
//! open, is not deleted without `force`; a pool holding statements the project does not own (another
//! team's, in any phase but COMPLETED; without a pipelines folder every statement counts as such) is
//! not deleted without `delete_foreign_statements`, wherever the command runs: they are named
//! instead. The statements are listed again right before the delete.

use super::target::{self, TargetKind};
use super::{Context, OpsError};
use crate::config::{Config, process_env};
use crate::plan::StatementNaming;
use crate::target::Phase;
use crate::target::Scrubber;
use crate::target::cloud::{self, CloudClient, ComputePool, MAX_CFU_VALUES, PoolPhase};
use crate::versioning::record::BlueGreenRecord;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// A client of the control plane and the scrubber of every secret.
pub(super) fn client(cfg: &Config) -> Result<(CloudClient, Scrubber), OpsError> {
    if TargetKind::of(cfg) == TargetKind::SqlGateway {
        return Err(OpsError::Refused(
            "compute pools are Confluent Cloud's: the configured target is an Apache Flink SQL Gateway (flinkpipe.gateway.url)".into(),
        ));
    }
    let scrubber = target::secrets_scrubber(&process_env);
    let settings = cloud::settings(cfg, &process_env)?;
    let client =
        CloudClient::new(settings).map_err(|e| OpsError::Target(scrubber.scrub(&e.to_string())))?;
    Ok((client, scrubber))
}

/// A pool and what of the configuration sends statements there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolRow {
    #[serde(flatten)]
    pub pool: ComputePool,
    /// `current_cfu / max_cfu`, percent; `None` when the pool does not say what it uses (or has no
    /// capacity).
    pub usage_percent: Option<f64>,
    /// What of the configuration points at it: `flink.compute_pool_id`, `flinkpipe.compute_pools: sales`.
    pub configured_for: Vec<String>,
}

/// The pools of the environment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolList {
    pub environment: String,
    pub pools: Vec<PoolRow>,
    /// Pools the configuration names that the environment does not have.
    pub missing: Vec<String>,
}

/// Every compute pool of the environment (one paginated listing), with what of the configuration
/// uses each.
///
/// Errors: no environment id or Cloud API key (named), the control plane's errors (401 with a Flink
/// key: says a Cloud key is needed).
pub fn list(ctx: &Context, pipelines: &std::path::Path) -> Result<PoolList, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let (client, scrubber) = client(&cfg)?;
    let rt = target::runtime()?;
    let pools = rt
        .block_on(client.list_pools())
        .map_err(|e| OpsError::Target(scrubber.scrub(&format!("listing compute pools: {e}"))))?;
    let mut uses: Vec<(String, String)> = Vec::new();
    if let Some(p) = &cfg.flink.compute_pool_id {
        uses.push((p.clone(), "flink.compute_pool_id".into()));
    }
    for (name, p) in &cfg.flinkpipe.compute_pools {
        uses.push((p.clone(), format!("flinkpipe.compute_pools: {name}")));
    }
    let rows = pools
        .into_iter()
        .map(|p| PoolRow {
            usage_percent: p
                .current_cfu
                .filter(|_| p.max_cfu > 0)
                .map(|c| f64::from(c) * 100.0 / f64::from(p.max_cfu)),
            configured_for: uses
                .iter()
                .filter(|(id, _)| *id == p.id)
                .map(|(_, what)| what.clone())
                .collect(),
            pool: p,
        })
        .collect::<Vec<_>>();
    let mut missing: Vec<String> = uses
        .iter()
        .map(|(id, _)| id.clone())
        .filter(|id| !rows.iter().any(|r| r.pool.id == *id))
        .collect();
    missing.sort();
    missing.dedup();
    Ok(PoolList {
        environment: client.environment_id().to_string(),
        pools: rows,
        missing,
    })
}

/// A pool to create.
#[derive(Debug, Clone)]
pub struct CreatePoolRequest {
    pub pipelines: PathBuf,
    /// `spec.display_name`: `^(?:[0-9A-Za-z\-])[\w\.-]{0,63}$`
    /// (<https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>).
    pub name: String,
    /// One of [`MAX_CFU_VALUES`].
    pub max_cfu: u32,
    /// Wait until PROVISIONED, at most this long (`None`: return at once).
    pub wait: Option<Duration>,
}

/// Creates a pool in the environment's cloud and region and waits until it is PROVISIONED.
///
/// Errors (before anything is sent): a name or `max_cfu` the API refuses, no cloud or region
/// configured; then the control plane's errors (409: the name is taken), a pool that FAILED or is
/// still PROVISIONING when the wait ends.
pub fn create(ctx: &Context, req: &CreatePoolRequest) -> Result<ComputePool, OpsError> {
    let valid_name = req
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        && req.name.chars().count() <= 64
        && req
            .name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !valid_name {
        return Err(OpsError::Usage(format!(
            "'{}' is not a compute pool name: 1 to 64 letters, digits, '_', '.' or '-', starting with a letter, a digit or '-'",
            req.name
        )));
    }
    if !MAX_CFU_VALUES.contains(&req.max_cfu) {
        return Err(OpsError::Usage(format!(
            "--max-cfu {}: Confluent Cloud takes {}",
            req.max_cfu,
            MAX_CFU_VALUES
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let cfg = ctx.project_config(&req.pipelines)?;
    let (client, scrubber) = client(&cfg)?;
    let rt = target::runtime()?;
    let fail = |doing: &str, e: crate::target::TargetError| {
        OpsError::Target(scrubber.scrub(&format!("{doing}: {e}")))
    };
    let mut pool = rt
        .block_on(client.create_pool(&req.name, req.max_cfu))
        .map_err(|e| fail(&format!("creating compute pool {}", req.name), e))?;
    let Some(wait) = req.wait else {
        return Ok(pool);
    };
    let deadline = std::time::Instant::now() + wait;
    let mut n = 0;
    while pool.phase == PoolPhase::Provisioning && std::time::Instant::now() < deadline {
        std::thread::sleep(
            crate::target::Backoff::POLL
                .delay(n, 7)
                .min(Duration::from_secs(10)),
        );
        n += 1;
        if let Some(p) = rt
            .block_on(client.get_pool(&pool.id))
            .map_err(|e| fail(&format!("reading compute pool {}", pool.id), e))?
        {
            pool = p;
        }
    }
    match &pool.phase {
        PoolPhase::Provisioned => Ok(pool),
        PoolPhase::Provisioning => Err(OpsError::Target(format!(
            "compute pool {} ({}) was created but is still PROVISIONING after {}s",
            pool.id,
            pool.display_name,
            wait.as_secs()
        ))),
        other => Err(OpsError::Target(format!(
            "compute pool {} ({}) was created but is {}",
            pool.id,
            pool.display_name,
            other.as_str()
        ))),
    }
}

/// A pool to delete.
#[derive(Debug, Clone)]
pub struct DeletePoolRequest {
    pub pipelines: PathBuf,
    /// `lfcp-…`.
    pub id: String,
    pub allow_unknown: bool,
    /// Delete it although statements of the project or of an open release are in it (each one is
    /// named in [`DeletePlan::ignored`]).
    pub force: bool,
    /// Delete it although statements the project does not own (another team's, any phase but
    /// COMPLETED) are in it; `force` does not cover them.
    pub delete_foreign_statements: bool,
}

/// A statement that is in the pool (any phase but DELETING).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InPool {
    pub statement: String,
    pub phase: crate::target::Phase,
    /// The table of the project that owns it, `None`: not the project's.
    pub table_name: Option<String>,
}

/// What deleting the pool touches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeletePlan {
    pub pool: ComputePool,
    /// Every statement in it, in any phase but DELETING (they go with the pool), the project's first.
    pub statements: Vec<InPool>,
    /// With `force`: the refusals it overrode, one line each.
    pub ignored: Vec<String>,
}

/// A delete ready to run (after the caller asked).
pub struct PreparedDelete {
    /// This project's target lock, held until the delete ends.
    _lock: Option<super::lock::TargetLock>,
    client: CloudClient,
    scrubber: Scrubber,
    rt: tokio::runtime::Runtime,
    guard: PoolGuard,
    pub plan: DeletePlan,
}

/// What protects the statements of a pool from its deletion: the project's statements, those of
/// open blue-green releases, and — without a pipelines folder — every live statement.
struct PoolGuard {
    cfg: Config,
    pipelines: PathBuf,
    /// Statement → table of the project.
    owned: std::collections::BTreeMap<String, String>,
    /// Statements of open blue-green releases → why.
    releases: std::collections::BTreeMap<String, String>,
    has_project: bool,
    /// Override the refusals for the project's own statements and the configured pools.
    force: bool,
    /// Delete the pool although statements the project does not own are in it.
    delete_foreign: bool,
}

/// Whether a statement the project does not own may go with its pool: only a COMPLETED one (a
/// finished query or DDL). Any other phase — live, STOPPED (resumable), FAILED (restartable), or a
/// phase flinkpipe does not know — protects the pool.
pub fn foreign_statement_is_disposable(phase: &Phase) -> bool {
    *phase == Phase::Completed
}

impl PoolGuard {
    /// The statements in pool `id` (one listing of the data plane; any phase but DELETING), the
    /// project's first, and the refusals `force` / `delete_foreign` overrode; or the refusal naming
    /// those that protect the pool: a statement of the project or of an open release in **any** phase
    /// (a STOPPED one can be resumed, a FAILED one restarted: deleting the pool deletes them), unless
    /// `force`; a statement the project does not own in any phase but COMPLETED
    /// ([`foreign_statement_is_disposable`]; without a pipelines folder, every statement), unless
    /// `delete_foreign`.
    fn statements_in(
        &self,
        rt: &tokio::runtime::Runtime,
        pool: &ComputePool,
    ) -> Result<(Vec<InPool>, Vec<String>), OpsError> {
        let c = target::connect(&self.cfg, None)?;
        let live = rt.block_on(target::live_statements(&c))?;
        let mut statements: Vec<InPool> = live
            .values()
            .filter(|s| s.meta.compute_pool_id.as_deref() == Some(pool.id.as_str()))
            .filter(|s| s.phase != Phase::Deleting)
            .map(|s| InPool {
                statement: s.name.clone(),
                phase: s.phase.clone(),
                table_name: self.owned.get(&s.name).cloned(),
            })
            .collect();
        statements.sort_by_key(|s| (s.table_name.is_none(), s.statement.clone()));
        let mut refusals = Vec::new();
        let ours: Vec<String> = statements
            .iter()
            .filter(|s| s.table_name.is_some())
            .map(|s| format!("{} ({})", s.statement, s.phase))
            .collect();
        if !ours.is_empty() {
            refusals.push(format!(
                "compute pool {} ({}) holds statements of this project: {}; delete or move them first (pipeline undeploy, or flinkpipe.compute_pools and a redeploy)",
                pool.id,
                pool.display_name,
                ours.join(", ")
            ));
        }
        // Blue statements of an open release serve production whatever the tree says now.
        let released: Vec<String> = statements
            .iter()
            .filter_map(|s| {
                self.releases
                    .get(&s.statement)
                    .map(|why| format!("{} ({}): {why}", s.statement, s.phase))
            })
            .collect();
        if !released.is_empty() {
            refusals.push(format!(
                "compute pool {} ({}) holds statements of an open blue-green release: {}; decommission the release (pipeline decommission) or move them first",
                pool.id,
                pool.display_name,
                released.join("; ")
            ));
        }
        // Statements this project does not own go with the pool: another team's job (RUNNING, or
        // STOPPED and resumable, or FAILED and restartable) is never deleted unless the caller says
        // so by name. Without a pipelines folder no statement can be told apart from the project's,
        // so every one counts as foreign. Only a COMPLETED statement (a finished query) loses nothing.
        let foreign: Vec<String> = statements
            .iter()
            .filter(|s| s.table_name.is_none() && !self.releases.contains_key(&s.statement))
            .filter(|s| !foreign_statement_is_disposable(&s.phase))
            .map(|s| format!("{} ({})", s.statement, s.phase))
            .collect();
        let mut foreign_refusals = Vec::new();
        if !foreign.is_empty() {
            let whose = if self.has_project {
                "that this project does not own".to_string()
            } else {
                format!(
                    "that cannot be told apart from the project's (there is no pipelines folder at {})",
                    self.pipelines.display()
                )
            };
            foreign_refusals.push(format!(
                "compute pool {} ({}) holds {} statement(s) {whose}: {}; deleting the pool deletes them: stop or delete them first (project housekeep-statements --statement-name …), or pass --delete-foreign-statements",
                pool.id,
                pool.display_name,
                foreign.len(),
                foreign.join(", "),
            ));
        }
        let refused_foreign = !foreign_refusals.is_empty() && !self.delete_foreign;
        let refused_own = !refusals.is_empty() && !self.force;
        if refused_own || refused_foreign {
            let mut why = Vec::new();
            if refused_own {
                why.push(format!(
                    "{} (--force deletes it anyway)",
                    refusals.join("; ")
                ));
            }
            if refused_foreign {
                why.extend(foreign_refusals);
            }
            return Err(OpsError::Refused(format!(
                "{}; nothing deleted",
                why.join("; ")
            )));
        }
        refusals.extend(foreign_refusals);
        Ok((statements, refusals))
    }
}

/// Reads the pool and the statements running in it.
///
/// Errors: the pool does not exist; statements of the project, or of a blue-green release still
/// open in this environment (`pipelines/blue_green.json`), are in it in any phase (unless `force`);
/// statements the project does not own are in it in any phase but COMPLETED (without a pipelines
/// folder: any statement; unless `delete_foreign_statements`) — each refused, named; the targets'
/// errors.
pub fn prepare_delete(ctx: &Context, req: &DeletePoolRequest) -> Result<PreparedDelete, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let (client, scrubber) = client(&cfg)?;
    let rt = target::runtime()?;
    let pool = rt
        .block_on(client.get_pool(&req.id))
        .map_err(|e| {
            OpsError::Target(scrubber.scrub(&format!("reading compute pool {}: {e}", req.id)))
        })?
        .ok_or_else(|| {
            OpsError::Refused(format!(
                "compute pool {} does not exist in environment {}",
                req.id,
                client.environment_id()
            ))
        })?;
    let has_project = req.pipelines.is_dir();
    let lock = super::lock::lock_target(
        &req.pipelines,
        &target::connect(&cfg, None)?,
        &StatementNaming::from_config(&cfg).prefix,
        "project delete-compute-pool",
    )?;
    let (owned, releases) = if has_project {
        protected_statements(ctx, &cfg, &req.pipelines, req.allow_unknown)?
    } else {
        Default::default()
    };
    let guard = PoolGuard {
        cfg,
        pipelines: req.pipelines.clone(),
        owned,
        releases,
        has_project,
        force: req.force,
        delete_foreign: req.delete_foreign_statements,
    };
    let (statements, ignored) = guard.statements_in(&rt, &pool)?;
    Ok(PreparedDelete {
        _lock: lock,
        client,
        scrubber,
        rt,
        guard,
        plan: DeletePlan {
            pool,
            statements,
            ignored,
        },
    })
}

impl PreparedDelete {
    /// Deletes the pool. `Ok(false)`: it was gone already.
    ///
    /// The statements in the pool are listed again right before the delete (the caller may have
    /// asked in between): the same protections apply, and a live statement that was not in the plan
    /// the caller saw stops the delete (named).
    pub fn execute(self) -> Result<bool, OpsError> {
        let id = self.plan.pool.id.clone();
        let (now, _) = self.guard.statements_in(&self.rt, &self.plan.pool)?;
        let new: Vec<String> = now
            .iter()
            .filter(|s| {
                !self
                    .plan
                    .statements
                    .iter()
                    .any(|p| p.statement == s.statement)
            })
            .map(|s| format!("{} ({})", s.statement, s.phase))
            .collect();
        if !new.is_empty() {
            return Err(OpsError::Refused(format!(
                "compute pool {id} ({}): statement(s) started there since it was read: {}; nothing deleted, run the command again to see them",
                self.plan.pool.display_name,
                new.join(", ")
            )));
        }
        self.rt.block_on(self.client.delete_pool(&id)).map_err(|e| {
            OpsError::Target(
                self.scrubber
                    .scrub(&format!("deleting compute pool {id}: {e}")),
            )
        })
    }
}

/// One statement on a compute pool (`project get-statement-list POOL`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolStatement {
    pub statement: String,
    pub phase: crate::target::Phase,
    /// The table of the project that owns it; `None`: not ours.
    pub table_name: Option<String>,
    /// `metadata.created_at`, when the target says.
    pub created_at: Option<String>,
    /// Whole days since it was created.
    pub age_days: Option<u64>,
}

/// Every statement on a pool, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolStatements {
    pub compute_pool_id: String,
    pub statements: Vec<PoolStatement>,
}

/// Statement name → the table or release that protects it.
type StatementsBy = std::collections::BTreeMap<String, String>;

/// The statements a pool deletion must not take with it: those the project's tables own (statement →
/// table) and those of its open blue-green releases (statement → why).
///
/// Errors: errors reading the project or `pipelines/blue_green.json`.
fn protected_statements(
    ctx: &Context,
    cfg: &crate::config::Config,
    pipelines: &std::path::Path,
    allow_unknown: bool,
) -> Result<(StatementsBy, StatementsBy), OpsError> {
    let project = ctx.load_project(cfg, pipelines, allow_unknown)?;
    let naming = StatementNaming::from_config(cfg);
    let record = BlueGreenRecord::read(pipelines)?;
    Ok((
        naming.owned_statements(&project),
        super::housekeep::open_release_statements(&record, &naming),
    ))
}

/// shift_left's `project get-statement-list POOL`: every statement on compute pool `pool_id` (one
/// listing of the data plane), with its phase, the project's table that owns it (by statement name,
/// [`StatementNaming::owned_statements`]) and its age. Without a pipelines folder every owner is
/// `None`. Read-only; a Flink API key is enough.
///
/// Errors: errors in the project's configuration, the target's errors.
pub fn statements_on_pool(
    ctx: &Context,
    pipelines: &std::path::Path,
    pool_id: &str,
    allow_unknown: bool,
) -> Result<PoolStatements, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let owned = if pipelines.is_dir() {
        let project = ctx.load_project(&cfg, pipelines, allow_unknown)?;
        StatementNaming::from_config(&cfg).owned_statements(&project)
    } else {
        Default::default()
    };
    let c = target::connect(&cfg, None)?;
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&c))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let statements = live
        .values()
        .filter(|s| s.meta.compute_pool_id.as_deref() == Some(pool_id))
        .map(|s| PoolStatement {
            statement: s.name.clone(),
            phase: s.phase.clone(),
            table_name: owned.get(&s.name).cloned(),
            created_at: s.meta.created_at.clone(),
            age_days: s
                .meta
                .created_at
                .as_deref()
                .and_then(crate::time::parse_rfc3339)
                .map(|t| ((now - t).max(0) / 86_400) as u64),
        })
        .collect();
    Ok(PoolStatements {
        compute_pool_id: pool_id.to_string(),
        statements,
    })
}

/// The environments of the organization (`project list-environments`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentList {
    /// The configured `confluent_cloud.environment_id` (or `SL_FLINK_ENV_ID`), if any.
    pub configured: Option<String>,
    pub environments: Vec<cloud::Environment>,
}

/// shift_left's `project list-environments`: every environment of the organization, through the org
/// API (`org/v2/environments`, every page), with the configured one marked. A Cloud API key.
///
/// Errors: no Cloud API key (named), the API's errors (secrets masked).
pub fn list_environments(
    ctx: &Context,
    pipelines: &std::path::Path,
) -> Result<EnvironmentList, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let scrubber = target::secrets_scrubber(&process_env);
    let settings = cloud::org_settings(&cfg, &process_env)?;
    let configured = Some(settings.environment_id.clone()).filter(|e| !e.is_empty());
    let client =
        CloudClient::new(settings).map_err(|e| OpsError::Target(scrubber.scrub(&e.to_string())))?;
    let rt = target::runtime()?;
    let environments = rt
        .block_on(client.list_environments())
        .map_err(|e| OpsError::Target(scrubber.scrub(&format!("listing environments: {e}"))))?;
    Ok(EnvironmentList {
        configured,
        environments,
    })
}

/// Which pools `project delete-all-compute-pools` deletes.
#[derive(Debug, Clone)]
pub struct DeleteAllPoolsRequest {
    pub pipelines: PathBuf,
    /// Pools whose display name contains this (shift_left's rule).
    pub product: Option<String>,
    /// A file with one pool id per line (`#` comments and blank lines ignored): only these pools
    /// (shift_left's `--compute-pool-list-file`; it wins over `product`).
    pub list_file: Option<PathBuf>,
    pub allow_unknown: bool,
    /// Delete pools the configuration names, or that hold statements of the project or of an open
    /// release, all the same.
    pub force: bool,
    /// Delete pools that hold statements the project does not own (any phase but COMPLETED);
    /// `force` does not cover them.
    pub delete_foreign_statements: bool,
}

/// A selected pool that is not deleted, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeptPool {
    pub id: String,
    pub display_name: Option<String>,
    pub reason: String,
}

/// What `delete-all-compute-pools` would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeleteAllPlan {
    pub environment: String,
    /// The selection in words (`display name contains 'sales'`).
    pub selection: String,
    /// The pools to delete, each with the statements that go with it.
    pub pools: Vec<DeletePlan>,
    /// Selected pools that are protected (or do not exist), not deleted.
    pub kept: Vec<KeptPool>,
}

/// One pool's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolDeleteOutcome {
    pub id: String,
    /// `true`: deleted; `false`: it was gone already, or `error` says why it was not.
    pub deleted: bool,
    pub error: Option<String>,
}

/// The deletes ready to run (after the caller asked).
pub struct PreparedDeleteAll {
    _lock: Option<super::lock::TargetLock>,
    client: CloudClient,
    scrubber: Scrubber,
    rt: tokio::runtime::Runtime,
    guard: PoolGuard,
    pub plan: DeleteAllPlan,
}

/// Reads the environment's pools, selects them (by display name or list file) and checks each as
/// `delete-compute-pool` does: a pool holding statements of the project or of an open release (any
/// phase), or a pool the configuration sends statements to (`flink.compute_pool_id`,
/// `flinkpipe.compute_pools`), is kept unless `force`; a pool holding statements the project does not
/// own (any phase but COMPLETED; without a pipelines folder, any statement) is kept unless
/// `delete_foreign_statements` — each named with its reason. Nothing is deleted here.
///
/// Errors: neither a product nor a list file (deleting every pool of an environment is not offered),
/// an unreadable list file, the targets' errors.
pub fn prepare_delete_all(
    ctx: &Context,
    req: &DeleteAllPoolsRequest,
) -> Result<PreparedDeleteAll, OpsError> {
    let listed: Option<Vec<String>> = match &req.list_file {
        Some(f) => {
            let text = crate::fsutil::read_data_file(f).map_err(|source| OpsError::Read {
                what: "--compute-pool-list-file",
                path: f.clone(),
                source,
            })?;
            Some(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect(),
            )
        }
        None => None,
    };
    let selection = match (&listed, &req.product) {
        (Some(ids), _) => format!("the {} pool(s) listed in the file", ids.len()),
        (None, Some(p)) if !p.is_empty() => format!("display name contains '{p}'"),
        _ => {
            return Err(OpsError::Usage(
                "name the pools: PRODUCT (pools whose display name contains it) or --compute-pool-list-file F; every pool of the environment is never deleted at once".into(),
            ));
        }
    };
    let cfg = ctx.project_config(&req.pipelines)?;
    let (client, scrubber) = client(&cfg)?;
    let rt = target::runtime()?;
    let pools = rt
        .block_on(client.list_pools())
        .map_err(|e| OpsError::Target(scrubber.scrub(&format!("listing compute pools: {e}"))))?;
    let has_project = req.pipelines.is_dir();
    let lock = super::lock::lock_target(
        &req.pipelines,
        &target::connect(&cfg, None)?,
        &StatementNaming::from_config(&cfg).prefix,
        "project delete-all-compute-pools",
    )?;
    let (owned, releases) = if has_project {
        protected_statements(ctx, &cfg, &req.pipelines, req.allow_unknown)?
    } else {
        Default::default()
    };
    let mut configured: Vec<(String, String)> = Vec::new();
    if let Some(p) = &cfg.flink.compute_pool_id {
        configured.push((p.clone(), "flink.compute_pool_id".into()));
    }
    for (name, p) in &cfg.flinkpipe.compute_pools {
        configured.push((p.clone(), format!("flinkpipe.compute_pools: {name}")));
    }
    let guard = PoolGuard {
        cfg,
        pipelines: req.pipelines.clone(),
        owned,
        releases,
        has_project,
        force: req.force,
        delete_foreign: req.delete_foreign_statements,
    };
    let mut kept = Vec::new();
    let selected: Vec<ComputePool> = match &listed {
        Some(ids) => {
            for id in ids {
                if !pools.iter().any(|p| p.id == *id) {
                    kept.push(KeptPool {
                        id: id.clone(),
                        display_name: None,
                        reason: format!(
                            "no such compute pool in environment {}",
                            client.environment_id()
                        ),
                    });
                }
            }
            pools.into_iter().filter(|p| ids.contains(&p.id)).collect()
        }
        None => {
            let product = req.product.as_deref().unwrap_or_default();
            pools
                .into_iter()
                .filter(|p| p.display_name.contains(product))
                .collect()
        }
    };
    let mut plans = Vec::new();
    for pool in selected {
        let uses: Vec<&str> = configured
            .iter()
            .filter(|(id, _)| *id == pool.id)
            .map(|(_, w)| w.as_str())
            .collect();
        if !uses.is_empty() && !req.force {
            kept.push(KeptPool {
                id: pool.id.clone(),
                display_name: Some(pool.display_name.clone()),
                reason: format!(
                    "the configuration sends statements there ({}); --force deletes it anyway",
                    uses.join(", ")
                ),
            });
            continue;
        }
        match guard.statements_in(&rt, &pool) {
            Ok((statements, ignored)) => plans.push(DeletePlan {
                pool,
                statements,
                ignored,
            }),
            Err(OpsError::Refused(reason)) => kept.push(KeptPool {
                id: pool.id.clone(),
                display_name: Some(pool.display_name.clone()),
                reason,
            }),
            Err(e) => return Err(e),
        }
    }
    Ok(PreparedDeleteAll {
        _lock: lock,
        plan: DeleteAllPlan {
            environment: client.environment_id().to_string(),
            selection,
            pools: plans,
            kept,
        },
        client,
        scrubber,
        rt,
        guard,
    })
}

impl PreparedDeleteAll {
    /// Deletes the planned pools one by one. Each pool's statements are listed again right before
    /// its delete: a pool that became protected, or where a statement started that was not in the
    /// plan, is not deleted (its `error` says why) and the others go on.
    pub fn execute(self) -> Vec<PoolDeleteOutcome> {
        let mut out = Vec::new();
        for plan in &self.plan.pools {
            let id = plan.pool.id.clone();
            let checked = self
                .guard
                .statements_in(&self.rt, &plan.pool)
                .and_then(|(now, _)| {
                    let new: Vec<String> = now
                        .iter()
                        .filter(|s| !plan.statements.iter().any(|p| p.statement == s.statement))
                        .map(|s| format!("{} ({})", s.statement, s.phase))
                        .collect();
                    if new.is_empty() {
                        Ok(())
                    } else {
                        Err(OpsError::Refused(format!(
                            "statement(s) started there since it was read: {}; not deleted",
                            new.join(", ")
                        )))
                    }
                });
            let result = checked.and_then(|()| {
                self.rt.block_on(self.client.delete_pool(&id)).map_err(|e| {
                    OpsError::Target(
                        self.scrubber
                            .scrub(&format!("deleting compute pool {id}: {e}")),
                    )
                })
            });
            out.push(match result {
                Ok(deleted) => PoolDeleteOutcome {
                    id,
                    deleted,
                    error: None,
                },
                Err(e) => PoolDeleteOutcome {
                    id,
                    deleted: false,
                    error: Some(e.to_string()),
                },
            });
        }
        out
    }
}
