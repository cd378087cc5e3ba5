//! shift_left's reports over the live pipeline, built from [`super::status`] (and `status --lag`):
//! `pipeline healthcheck PRODUCT` (a verdict per table of the product), `pipeline
//! report-running-statements` (the running statements of a scope with their records and backlog
//! since a date), and `pipeline analyze-pool-usage` (CFUs per compute pool, the project's statements
//! in each, and consolidation advice; the control plane, a Cloud API key).

use super::scope::{PlanRequest, ScopeRequest};
use super::status::{self, RuntimeMetrics, StatusRequest};
use super::{Context, OpsError};
use crate::target::Phase;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A table's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Health {
    /// Every statement of the table runs (or completed, for a DDL) and runs the SQL of the files.
    Healthy,
    /// It runs, but the deployed SQL differs from the files.
    Drifted,
    /// DEGRADED or PENDING; on the SQL Gateway also a running job backpressured high, whose
    /// checkpointing fails or that restarted recently; a materialized table being created or
    /// evolved, or whose state could not be read.
    Degraded,
    /// A statement is absent or STOPPED.
    NotRunning,
    /// A statement FAILED.
    Failed,
    /// No job writes the table on this target: a plain `CREATE TABLE` or `CREATE VIEW` that the SQL
    /// Gateway declares in each deploy's session (never a statement of its own). Not a failure.
    Declared,
}

/// One table of the product.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableHealth {
    pub table_name: String,
    pub health: Health,
    /// Each statement: name and phase (`None`: absent).
    pub statements: Vec<(String, Option<Phase>)>,
    /// Pending records (consumer lag) of its job, when metrics could be read.
    pub pending_records: Option<u64>,
    /// How many times its job restarted since it was submitted (SQL Gateway: the JobManager's
    /// `numRestarts`), the most of its statements'; `None` when not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// Its job's checkpoints (SQL Gateway: the JobManager), of the statement whose checkpointing
    /// fails if one does; `None` when not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<crate::target::metrics::Checkpoints>,
    /// The first problem's detail (the FAILED statement's error).
    pub detail: Option<String>,
    /// What the server says about each statement of the table that has something to say (Confluent
    /// Cloud: latest exceptions, state limit, warnings, offsets of a stopped statement); left out of
    /// JSON when none has.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server: Vec<StatementNotes>,
}

/// The server's notes on one statement ([`crate::target::ServerNotes`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementNotes {
    pub statement: String,
    #[serde(flatten)]
    pub notes: crate::target::ServerNotes,
}

/// `pipeline healthcheck PRODUCT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthReport {
    pub product_name: String,
    pub target: String,
    pub tables: Vec<TableHealth>,
    /// Tables per verdict.
    pub summary: BTreeMap<String, usize>,
    /// Why metrics were not read (no Cloud API key), when they were not.
    pub metrics_skipped: Option<String>,
}

impl HealthReport {
    /// Whether every table is healthy (drift alone is not a failure of the pipeline).
    pub fn healthy(&self) -> bool {
        self.tables.iter().all(|t| {
            matches!(
                t.health,
                Health::Healthy | Health::Drifted | Health::Declared
            )
        })
    }
}

/// The status of `req` with metrics when they can be read; without them (and why) otherwise.
fn status_with_lag(
    ctx: &Context,
    plan: PlanRequest,
    lag_minutes: u32,
) -> Result<(status::StatusReport, Option<String>), OpsError> {
    let with = StatusRequest {
        plan: plan.clone(),
        lag: true,
        lag_minutes,
    };
    match status::status(ctx, &with) {
        Ok(r) => Ok((r, None)),
        Err(OpsError::ProjectHasErrors(w)) => Err(OpsError::ProjectHasErrors(w)),
        Err(e) => {
            let why = e.to_string();
            let r = status::status(
                ctx,
                &StatusRequest {
                    plan,
                    lag: false,
                    lag_minutes,
                },
            )?;
            Ok((r, Some(why)))
        }
    }
}

/// shift_left's `pipeline healthcheck PRODUCT`: every table of the product with a verdict from its
/// statements' live phases, drift and backlog.
///
/// Errors: errors in the project, an unknown product, the target's.
pub fn healthcheck(
    ctx: &Context,
    pipelines: &Path,
    product: &str,
) -> Result<HealthReport, OpsError> {
    let plan = PlanRequest {
        pipelines: pipelines.to_path_buf(),
        scope: ScopeRequest::Product(product.to_string()),
        ..PlanRequest::default()
    };
    let (r, metrics_skipped) = status_with_lag(ctx, plan, 10)?;
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        false,
        "nothing checked: fix the errors above",
    )?;
    let naming = crate::plan::StatementNaming::from_config(&cfg);
    let mut by_table: BTreeMap<String, Vec<&status::StatementRow>> = BTreeMap::new();
    for s in &r.statements {
        by_table.entry(s.table_name.clone()).or_default().push(s);
    }
    let mut tables = Vec::new();
    for (table, all_rows) in by_table {
        let rows = counted_rows(&project, &naming, &r.statements, &table, &all_rows);
        let materialized = r.materialized_tables.iter().find(|m| m.table_name == table);
        let mut health = if rows.is_empty() {
            Health::Declared
        } else {
            table_health(&rows)
        };
        // A materialized table's query runs apart from the statement that created it: its own
        // phase decides (the creating statement may well have COMPLETED, or been deleted).
        let materialized_problem = materialized.and_then(|m| {
            let (h, why) = materialized_health(m);
            // Drift of its creating statement's SQL still shows on a query that runs.
            health = if h == Health::Healthy && health == Health::Drifted {
                Health::Drifted
            } else {
                h
            };
            why
        });
        let pending_records = rows
            .iter()
            .filter_map(|s| {
                s.lag
                    .as_ref()
                    .and_then(|l: &RuntimeMetrics| l.pending_records)
            })
            .max();
        let backpressured = rows.iter().find(|s| {
            s.lag
                .as_ref()
                .is_some_and(|l| l.backpressure == Some(crate::target::metrics::Backpressure::High))
        });
        let restarts = rows
            .iter()
            .filter_map(|s| s.lag.as_ref().and_then(|l| l.restarts))
            .max();
        let all_checkpoints: Vec<(&str, &crate::target::metrics::Checkpoints)> = rows
            .iter()
            .filter_map(|s| {
                let c = s.lag.as_ref()?.checkpoints.as_ref()?;
                Some((s.statement.as_str(), c))
            })
            .collect();
        let failing = all_checkpoints
            .iter()
            .find_map(|(s, c)| c.failing().map(|f| (*s, *c, f)));
        let checkpoints = failing
            .map(|(_, c, _)| c)
            .or_else(|| all_checkpoints.first().map(|(_, c)| *c))
            .cloned();
        let restarted = rows.iter().find_map(|s| {
            let l = s.lag.as_ref()?;
            let n = l.restarts.filter(|n| *n > 0)?;
            restarted_recently(l).then(|| {
                format!(
                    "{}: restarted {n} time{} since it was submitted, the last failure {} s ago",
                    s.statement,
                    if n == 1 { "" } else { "s" },
                    l.last_failure_ms_ago.unwrap_or(0) / 1000
                )
            })
        });
        let checkpoint_failed = failing.map(|(s, _, f)| {
            format!(
                "{s}: checkpoint {} failed at {}{}",
                f.id,
                crate::target::metrics::watermark_text(f.at_ms)
                    .unwrap_or_else(|| f.at_ms.to_string()),
                if f.message.is_empty() {
                    String::new()
                } else {
                    format!(": {}", f.message)
                }
            )
        });
        tables.push(TableHealth {
            table_name: table,
            health,
            statements: rows
                .iter()
                .map(|s| (s.statement.clone(), s.phase.clone()))
                .collect(),
            pending_records,
            restarts,
            checkpoints,
            detail: materialized_problem
                .or_else(|| {
                    rows.iter()
                        .find_map(|s| s.detail.clone().filter(|d| !d.is_empty()))
                })
                .or_else(|| {
                    rows.iter()
                        .find_map(|s| s.server.exceptions.first().map(|e| e.message.clone()))
                })
                .or(checkpoint_failed)
                .or(restarted)
                .or_else(|| backpressured.map(|s| format!("{}: backpressure high", s.statement))),
            server: rows
                .iter()
                .filter(|s| !s.server.is_empty())
                .map(|s| StatementNotes {
                    statement: s.statement.clone(),
                    notes: s.server.clone(),
                })
                .collect(),
        });
    }
    let mut summary = BTreeMap::new();
    for t in &tables {
        let key = serde_json::to_value(t.health)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *summary.entry(key).or_insert(0) += 1;
    }
    Ok(HealthReport {
        product_name: product.to_string(),
        target: r.target,
        tables,
        summary,
        metrics_skipped,
    })
}

/// How recent a job's last failure must be for its restarts to make it degraded: within this
/// window the job is restarting or flapping; a restart long ago that it recovered from is
/// reported (`restarts`) but no longer a verdict.
pub const RECENT_RESTART_MS: i64 = 10 * 60 * 1000;

/// Whether the job restarted and its last failure is within [`RECENT_RESTART_MS`] (unknown when
/// the JobManager keeps no exception history: not counted).
fn restarted_recently(l: &RuntimeMetrics) -> bool {
    l.restarts.is_some_and(|n| n > 0)
        && l.last_failure_ms_ago
            .is_some_and(|ago| ago < RECENT_RESTART_MS)
}

/// The verdict of one statement's phase: absent, STOPPED, STOPPING or DELETING → not running,
/// FAILED → failed, DEGRADED or PENDING → degraded, the rest healthy.
fn phase_health(p: Option<&Phase>) -> Health {
    match p {
        None | Some(Phase::Stopped | Phase::Stopping | Phase::Deleting) => Health::NotRunning,
        Some(Phase::Failed) => Health::Failed,
        Some(Phase::Degraded | Phase::Pending) => Health::Degraded,
        _ => Health::Healthy,
    }
}

/// A table's verdict from the statements that count for it: the worst phase, then drift. A running
/// job is degraded when its vertices are backpressured (high), when its checkpointing fails
/// ([`crate::target::metrics::Checkpoints::failing`]: checkpoints failed in a row, or none ever
/// completed) or when it restarted recently ([`RECENT_RESTART_MS`]: each restart replays from the
/// last checkpoint and spends an attempt of the cluster's restart strategy).
fn table_health(rows: &[&status::StatementRow]) -> Health {
    let mut health = rows
        .iter()
        .map(|s| phase_health(s.phase.as_ref()))
        .max()
        .unwrap_or(Health::NotRunning);
    let backpressured = rows.iter().any(|s| {
        s.lag
            .as_ref()
            .is_some_and(|l| l.backpressure == Some(crate::target::metrics::Backpressure::High))
    });
    let troubled = rows.iter().any(|s| {
        s.lag.as_ref().is_some_and(|l| {
            restarted_recently(l)
                || l.checkpoints
                    .as_ref()
                    .is_some_and(|c| c.failing().is_some())
        })
    });
    if health == Health::Healthy && (backpressured || troubled) {
        health = Health::Degraded;
    }
    if health == Health::Healthy && rows.iter().any(|s| s.sql_drift == Some(true)) {
        health = Health::Drifted;
    }
    health
}

/// The verdict of a materialized table from the target's materialized-tables API, with the reason
/// when it is not healthy: its phase (a query being created or evolved — CREATING, ALTERING, or a
/// newer version not active yet — is degraded until it runs), not listed → not running, the API
/// not read → degraded (nothing tells that its query runs).
fn materialized_health(m: &status::MaterializedTableRow) -> (Health, Option<String>) {
    let Some(t) = &m.materialized else {
        return match &m.unreadable {
            Some(why) => (
                Health::Degraded,
                Some(format!(
                    "materialized table {}: the materialized-tables API could not be read: {why}",
                    m.table_name
                )),
            ),
            None => (
                Health::NotRunning,
                Some(format!(
                    "materialized table {}: not listed by the target's materialized-tables API",
                    m.table_name
                )),
            ),
        };
    };
    // As a statement's phase, but what is not known to run is not healthy: no phase, an unknown
    // one, FAILING, or a version being activated.
    let h = match &t.phase {
        None | Some(Phase::Unknown(_)) => Health::Degraded,
        Some(Phase::Failing) => Health::Failed,
        Some(Phase::Running) if t.evolving() => Health::Degraded,
        p => phase_health(p.as_ref()),
    };
    let why = (h != Health::Healthy).then(|| {
        format!(
            "materialized table {}: {}{}",
            t.name,
            t.describe(),
            if t.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", t.detail)
            }
        )
    });
    (h, why)
}

/// The statements whose phases tell whether `table` is live. A DDL statement that lives only in a
/// deploy's session (SQL Gateway: [`status::StatementRow::session_scoped`]) is never listed, so it
/// does not count — unless it is the table's job (a CTAS, a materialized table), which the target
/// lists. A table written by another table's statement set counts that set's job (`rows` of the
/// whole report are searched for it). Empty: no job writes the table on this target
/// ([`Health::Declared`]).
fn counted_rows<'a>(
    project: &crate::project::Project,
    naming: &crate::plan::StatementNaming,
    report: &'a [status::StatementRow],
    table: &str,
    rows: &[&'a status::StatementRow],
) -> Vec<&'a status::StatementRow> {
    use crate::sql::StatementKind as SqlKind;
    let t = project.inventory.tables.get(table);
    let ddl_is_job = t.is_some_and(|t| {
        matches!(
            t.ddl_kind,
            Some(SqlKind::Ctas | SqlKind::CreateMaterializedTable)
        )
    });
    let mut counted: Vec<&status::StatementRow> = rows
        .iter()
        .copied()
        .filter(|s| !s.session_scoped || ddl_is_job)
        .collect();
    let writer = t
        .and_then(|t| t.written_by.as_ref())
        .and_then(|w| project.inventory.tables.get(w));
    if let Some(w) = writer {
        let set = naming.dml(&w.product, &w.name);
        if !counted.iter().any(|s| s.statement == set)
            && let Some(row) = report.iter().find(|s| s.statement == set)
        {
            counted.push(row);
        }
    }
    counted
}

/// One running statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunningStatement {
    pub table_name: String,
    pub statement: String,
    pub phase: crate::target::Phase,
    pub compute_pool: Option<String>,
    pub metrics: Option<RuntimeMetrics>,
}

/// `pipeline report-running-statements`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunningReport {
    pub scope: String,
    /// The metrics window: from `--from-date` (whole minutes, at least 1), else the last 10 minutes.
    pub window_minutes: u32,
    pub statements: Vec<RunningStatement>,
    pub metrics_skipped: Option<String>,
}

/// shift_left's `pipeline report-running-statements`: the RUNNING (and DEGRADED) statements of the
/// scope (default: every table) with records in and out and pending records since `from_date`
/// (`YYYY-MM-DDThh:mm:ss`, UTC).
///
/// Errors: a date that does not parse or lies ahead (usage), errors in the project, the target's.
pub fn report_running_statements(
    ctx: &Context,
    plan: PlanRequest,
    from_date: Option<&str>,
) -> Result<RunningReport, OpsError> {
    let window_minutes = match from_date {
        None => 10,
        Some(d) => {
            let text = if d.ends_with('Z') {
                d.to_string()
            } else {
                format!("{d}Z")
            };
            let at = crate::time::parse_rfc3339(&text).ok_or_else(|| {
                OpsError::Usage(format!(
                    "--from-date {d}: expected YYYY-MM-DDThh:mm:ss (UTC)"
                ))
            })?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |x| x.as_secs() as i64);
            if at > now {
                return Err(OpsError::Usage(format!("--from-date {d} is in the future")));
            }
            (((now - at) / 60).max(1)).min(u32::MAX as i64) as u32
        }
    };
    let (r, metrics_skipped) = status_with_lag(ctx, plan, window_minutes)?;
    let statements = r
        .statements
        .iter()
        .filter_map(|s| Some((s, s.phase.clone().filter(Phase::is_processing)?)))
        .map(|(s, phase)| RunningStatement {
            table_name: s.table_name.clone(),
            statement: s.statement.clone(),
            phase,
            compute_pool: s.compute_pool.clone(),
            metrics: s.lag.clone(),
        })
        .collect();
    Ok(RunningReport {
        scope: r.scope,
        window_minutes,
        statements,
        metrics_skipped,
    })
}

/// One compute pool's use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolUsage {
    pub id: String,
    pub display_name: String,
    pub max_cfu: u32,
    pub current_cfu: Option<u32>,
    /// `current_cfu / max_cfu`, percent.
    pub usage_percent: Option<f64>,
    /// Statements running there (RUNNING, PENDING, DEGRADED), any owner.
    pub running_statements: usize,
    /// The project's running statements there (of the product or folder when one is given), by
    /// product.
    pub project_statements: BTreeMap<String, usize>,
}

/// `pipeline analyze-pool-usage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolUsageReport {
    pub environment: String,
    /// The share of a pool a deploy may fill (`flink.max_cfu_percent_before_allocation`).
    pub ratio: f64,
    pub pools: Vec<PoolUsage>,
    /// Consolidation advice, one sentence each.
    pub advice: Vec<String>,
    /// Pools to resize in place (`spec.max_cfu`): those at or past the ratio, to the smallest size
    /// under which their current use stays below it; applied with `--apply`. Left out of JSON when
    /// none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resizes: Vec<PoolResize>,
}

/// A compute pool resized in place (`PATCH fcpm/v2/compute-pools/{id}` with `spec.max_cfu`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolResize {
    pub id: String,
    pub display_name: String,
    /// `spec.max_cfu` now.
    pub from_max_cfu: u32,
    /// The size advised: the smallest of 5, 10, 20, 30, 40, 50 under which `current_cfu` is below
    /// the ratio.
    pub to_max_cfu: u32,
    pub current_cfu: u32,
    /// Advised only (no `--apply`), done, or failed (and why).
    pub outcome: ResizeOutcome,
}

/// What became of a [`PoolResize`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "error", rename_all = "snake_case")]
pub enum ResizeOutcome {
    /// Advice only: rerun with `--apply` to resize.
    Advised,
    /// The server accepted the new size.
    Resized,
    /// The server refused; the (masked) error.
    Failed(String),
}

/// The resize each pool needs: a pool whose `current_cfu` reaches `ratio` × `max_cfu` (new statements
/// would not start there) grows to the smallest size of [`crate::target::cloud::MAX_CFU_VALUES`]
/// whose share below the ratio exceeds its use; a pool already at the largest size, or whose use is
/// unknown, gets none.
pub fn resizes_of(pools: &[PoolUsage], ratio: f64) -> Vec<PoolResize> {
    pools
        .iter()
        .filter_map(|p| {
            let used = p.current_cfu?;
            if f64::from(used) < f64::from(p.max_cfu) * ratio {
                return None;
            }
            let to = crate::target::cloud::MAX_CFU_VALUES
                .iter()
                .copied()
                .find(|v| *v > p.max_cfu && f64::from(*v) * ratio > f64::from(used))?;
            Some(PoolResize {
                id: p.id.clone(),
                display_name: p.display_name.clone(),
                from_max_cfu: p.max_cfu,
                to_max_cfu: to,
                current_cfu: used,
                outcome: ResizeOutcome::Advised,
            })
        })
        .collect()
}

/// shift_left's `pipeline analyze-pool-usage [-p PRODUCT] [-d DIR]`: every compute pool of the
/// environment with its CFUs and running statements (one pool listing, one statement listing), and
/// advice: idle pools to delete, and small pools whose CFUs fit in another pool's free share (below
/// the ratio) to merge there, and pools at or past the ratio to resize in place ([`resizes_of`]).
/// Read-only unless `apply`: then each advised resize is sent (`PATCH fcpm/v2/compute-pools/{id}`),
/// one after the other, a failure recorded and the next one tried.
///
/// Errors: no Cloud API key (named), errors in the project, the targets'.
pub fn analyze_pool_usage(
    ctx: &Context,
    pipelines: &Path,
    product: Option<&str>,
    directory: Option<&str>,
    apply: bool,
) -> Result<PoolUsageReport, OpsError> {
    let list = super::pools::list(ctx, pipelines)?;
    let cfg = ctx.project_config(pipelines)?;
    let ratio = super::capacity::ratio_of(&cfg)?;
    let project = ctx.load_project(&cfg, pipelines, true)?;
    let owned = crate::plan::StatementNaming::from_config(&cfg).owned_statements(&project);
    let in_scope = |table: &str| {
        let Some(t) = project.inventory.tables.get(table) else {
            return false;
        };
        product.is_none_or(|p| t.product == p)
            && directory.is_none_or(|d| {
                let rel = project.inventory.rel_to_root(&t.folder);
                let d = d.trim_end_matches('/');
                rel == d || rel.starts_with(&format!("{d}/")) || t.folder.starts_with(d)
            })
    };
    let c = super::target::connect(&cfg, Some(&project))?;
    let rt = super::target::runtime()?;
    let live = rt.block_on(super::target::live_statements(&c))?;
    let mut pools: Vec<PoolUsage> = list
        .pools
        .iter()
        .map(|row| {
            let p = &row.pool;
            let here: Vec<&crate::target::StatementState> = live
                .values()
                .filter(|s| s.meta.compute_pool_id.as_deref() == Some(p.id.as_str()))
                .filter(|s| s.phase.is_live())
                .collect();
            let mut project_statements = BTreeMap::new();
            for s in &here {
                if let Some(t) = owned.get(&s.name).filter(|t| in_scope(t)) {
                    let product = project.inventory.tables[t].product.clone();
                    *project_statements.entry(product).or_insert(0) += 1;
                }
            }
            PoolUsage {
                id: p.id.clone(),
                display_name: p.display_name.clone(),
                max_cfu: p.max_cfu,
                current_cfu: p.current_cfu,
                usage_percent: row.usage_percent,
                running_statements: here.len(),
                project_statements,
            }
        })
        .collect();
    pools.sort_by(|a, b| a.id.cmp(&b.id));
    let mut advice = Vec::new();
    for p in pools.iter().filter(|p| p.running_statements == 0) {
        advice.push(format!(
            "{} ({}) runs no statement: delete it (flinkpipe project delete-compute-pool {}) unless a deploy is about to use it",
            p.id, p.display_name, p.id
        ));
    }
    // Greedy: the smallest users first, into the pool with the most room below the ratio.
    let mut free: BTreeMap<String, f64> = pools
        .iter()
        .filter_map(|p| {
            p.current_cfu
                .map(|c| (p.id.clone(), f64::from(p.max_cfu) * ratio - f64::from(c)))
        })
        .collect();
    let mut small: Vec<&PoolUsage> = pools
        .iter()
        .filter(|p| p.running_statements > 0 && p.usage_percent.is_some_and(|u| u < 50.0))
        .collect();
    small.sort_by_key(|p| p.current_cfu.unwrap_or(0));
    let mut emptied: Vec<String> = Vec::new();
    for p in small {
        let need = f64::from(p.current_cfu.unwrap_or(0));
        let target = free
            .iter()
            .filter(|(id, room)| **id != p.id && !emptied.contains(id) && **room >= need)
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(id, _)| id.clone());
        if let Some(t) = target {
            advice.push(format!(
                "{} ({}) uses {} of {} CFUs for {} statement(s): they fit in {t} ({:.0} CFUs free below {:.0}%): move them there (flinkpipe.compute_pools) and delete {}",
                p.id,
                p.display_name,
                need,
                p.max_cfu,
                p.running_statements,
                free[&t],
                ratio * 100.0,
                p.id
            ));
            *free.get_mut(&t).expect("listed") -= need;
            free.remove(&p.id);
            emptied.push(p.id.clone());
        }
    }
    let mut resizes = resizes_of(&pools, ratio);
    if apply && !resizes.is_empty() {
        let (client, scrubber) = super::pools::client(&cfg)?;
        for r in &mut resizes {
            r.outcome = match rt.block_on(client.resize_pool(&r.id, r.to_max_cfu)) {
                Ok(_) => ResizeOutcome::Resized,
                Err(e) => ResizeOutcome::Failed(
                    scrubber.scrub(&format!("resizing compute pool {}: {e}", r.id)),
                ),
            };
        }
    }
    Ok(PoolUsageReport {
        environment: list.environment,
        ratio,
        pools,
        advice,
        resizes,
    })
}
