//! `pipeline status`: the live phase of every statement of a scope (default: every table), the plan's
//! action for its table, and whether the deployed SQL differs from the files (drift); for open
//! blue-green releases, blue next to green and who still reads each blue table.

use super::lag::{self, LagSource};
use super::scope::{PlanRequest, ScopeRequest};
use super::target::{self, TargetKind};
use super::{Context, OpsError};
use crate::config::process_env;
use crate::deploy::env_sql::EnvSql;
use crate::deploy::spec;
use crate::plan::{Action, StatementNaming};
use crate::sql::text::normalize_sql;
use crate::target::StatementState;
pub use crate::target::metrics::{RuntimeMetrics, watermark_text};
use crate::versioning::record::{BlueGreenRecord, GreenTable, RecordedStatement, StatementRole};
use serde::Serialize;
use std::collections::BTreeMap;

/// One statement of the status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementRow {
    pub table_name: String,
    pub statement: String,
    /// The live phase; `None`: absent.
    pub phase: Option<crate::target::Phase>,
    /// Whether the deployed SQL differs from the files (whitespace normalised); `None`: absent.
    pub sql_drift: Option<bool>,
    /// The plan's action for the table.
    pub plan_action: Action,
    /// The plan only declares the table again (a table without a job whose DDL statement is gone
    /// while a statement reads it): shown as `declare`, not as a create.
    pub plan_redeclares: bool,
    /// DDL or DML.
    pub kind: crate::target::StatementKind,
    /// A DDL statement that lives only in a deploy's session (SQL Gateway): it is run again by every
    /// deploy, so being absent is its normal state; the text view folds it into its table's row.
    pub session_scoped: bool,
    /// The target's detail; `None`: absent.
    pub detail: Option<String>,
    /// The per-environment rules that change what is sent for it (`prod[0]`): drift compares the
    /// deployed text with the files after them.
    pub rewritten_by: Vec<String>,
    /// The compute pool it runs in (Confluent Cloud), `None`: absent or not reported.
    pub compute_pool: Option<String>,
    /// Runtime metrics (`--lag`), `None`: not asked, or no metrics for it.
    pub lag: Option<RuntimeMetrics>,
    /// What the server says beyond the phase (Confluent Cloud): the latest exceptions of a failed
    /// or degraded statement, its state limit, warnings, the offsets of a stopped one; each field
    /// left out when empty.
    #[serde(flatten)]
    pub server: crate::target::ServerNotes,
}

/// A blue statement of an open blue-green release next to its green successor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlueGreenRow {
    pub blue_table_name: String,
    pub green_table_name: String,
    pub blue_statement: String,
    /// `None`: absent.
    pub blue_phase: Option<crate::target::Phase>,
    pub green_statement: Option<String>,
    /// `None`: absent.
    pub green_phase: Option<crate::target::Phase>,
    /// The blue statement's runtime metrics (`--lag`).
    pub blue_lag: Option<RuntimeMetrics>,
    /// The green statement's runtime metrics (`--lag`).
    pub green_lag: Option<RuntimeMetrics>,
}

/// A statement under the project's statement-name prefix that no table of the tree owns (a blue
/// statement after a rename, a deleted table, a query left by a killed run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Orphan {
    pub statement: String,
    pub phase: crate::target::Phase,
    pub detail: String,
}

/// The status of a scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    pub scope: String,
    /// The target, secrets masked.
    pub target: String,
    /// Which kind of target it is (`confluent_cloud`, `sql_gateway`).
    pub target_kind: TargetKind,
    pub statements: Vec<StatementRow>,
    /// Blue statements of the blue-green releases still open in this environment, with their green
    /// successors.
    pub blue_green: Vec<BlueGreenRow>,
    /// Statements under the prefix that no table owns (unit-test statements excepted).
    pub orphans: Vec<Orphan>,
    /// The tool's own unit-test statements still on the target ([`unit_test_statements`]).
    pub unit_test_statements: Vec<Orphan>,
    /// Who still reads each blue table of the open releases ([`super::readers`]): statements not
    /// the project's, consumer groups on its topic.
    pub blue_readers: super::readers::ReadersReport,
    /// The environment whose rewrite rules apply.
    pub environment: String,
    /// Where the runtime metrics come from (`--lag`); `None`: not asked.
    pub lag: Option<LagSource>,
    /// The tables of the scope that are materialized tables, as the target's materialized-tables
    /// API tells them (Confluent Cloud); empty on a target without one. Left out of JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub materialized_tables: Vec<MaterializedTableRow>,
}

/// A table of the scope whose DDL is `CREATE [OR ALTER] MATERIALIZED TABLE`, on a target with a
/// materialized-tables API ([`crate::target::Target::materialized_tables`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaterializedTableRow {
    /// The project's table.
    pub table_name: String,
    /// The resource; `None` when the API does not list it (never created, or dropped).
    pub materialized: Option<crate::target::materialized::MaterializedTable>,
    /// Its versions, as the API lists them (`status.version` is the active one).
    pub versions: Vec<crate::target::materialized::MaterializedTableVersion>,
    /// Why the API could not be read, when it could not (the rest of the status stands).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// What `pipeline status` shows.
#[derive(Debug, Clone, Default)]
pub struct StatusRequest {
    pub plan: PlanRequest,
    /// Read runtime metrics (records in/out, backlog, watermark, backpressure) of the statements
    /// and of open blue-green releases.
    pub lag: bool,
    /// Window of the Metrics API counters, minutes (Confluent Cloud; default 10).
    pub lag_minutes: u32,
}

impl StatusReport {
    /// Statements whose deployed SQL differs from the files.
    pub fn drifted(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| s.sql_drift == Some(true))
            .count()
    }
}

/// The status of `req`'s scope; with no scope, of every table; with `lag`, the runtime metrics of
/// each statement and of the blue and green statements of open releases, side by side.
///
/// Errors: errors in the project, a target that cannot be listed, unreadable SQL files, an invalid
/// rewrite rule (or `app.sql_content_modifier`); with `lag`, metrics that cannot be read (on
/// Confluent Cloud: no Cloud API key).
pub fn status(ctx: &Context, request: &StatusRequest) -> Result<StatusReport, OpsError> {
    let req = &request.plan;
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing deployed: fix the errors above",
    )?;
    let mut req = req.clone();
    if req.scope.is_none() {
        req.scope = ScopeRequest::Dir(project.inventory.root_name.clone());
    }
    // Inputs are checked before any server is contacted: the scope and the SQL files.
    let offline = super::plan::plan_with(
        &cfg,
        &project,
        &req,
        &crate::plan::StatementStatus::default(),
        ctx.console,
    )?;
    let env = EnvSql::from_config(&cfg, &process_env)?;
    let mut expected = std::collections::BTreeSet::new();
    for n in &offline.nodes {
        for st in spec::statements_of(&project, n, true, &env)? {
            expected.insert(st.spec.name);
        }
    }
    let record = BlueGreenRecord::read(&req.pipelines)?;
    let naming = StatementNaming::from_config(&cfg);
    let c = target::connect(&cfg, Some(&project))?;
    let rt = target::runtime()?;
    // Only the project's statements (Confluent Cloud: filtered by the server on flinkpipe's label),
    // unless one it names is not among them, or a release is open (who still reads a blue table
    // may be anyone's statement).
    let live = if record.open_release(&naming.prefix).is_some() {
        rt.block_on(target::live_statements(&c))?
    } else {
        rt.block_on(target::own_statements(&c, &expected))?
    };
    let plan = super::plan::plan_with(
        &cfg,
        &project,
        &req,
        &target::status_of(&live),
        &super::Silent,
    )?;
    let mut statements = Vec::new();
    for n in &plan.nodes {
        for st in spec::statements_of(&project, n, true, &env)? {
            let l = live.get(&st.spec.name);
            statements.push(StatementRow {
                table_name: n.table_name.clone(),
                statement: st.spec.name.clone(),
                phase: l.map(|l| l.phase.clone()),
                sql_drift: l.map(|l| normalize_sql(&l.sql) != normalize_sql(&st.spec.sql)),
                plan_action: n.action,
                plan_redeclares: n.redeclares(),
                kind: st.spec.kind,
                session_scoped: c.kind == TargetKind::SqlGateway
                    && st.spec.kind == crate::target::StatementKind::Ddl,
                detail: l.map(|l| l.detail.clone()),
                rewritten_by: st.rewritten_by.clone(),
                compute_pool: l.and_then(|l| l.meta.compute_pool_id.clone()),
                lag: None,
                server: l.map(|l| (*l.meta.notes).clone()).unwrap_or_default(),
            });
        }
    }
    for row in &mut statements {
        if let Some(l) = live.get(&row.statement) {
            row.server.exceptions = rt.block_on(exceptions_of(&c, l));
        }
    }
    let materialized_tables = rt.block_on(materialized_rows(
        &project,
        plan.nodes.iter().map(|n| n.table_name.as_str()),
        &c,
        crate::target::kafka_rest::cluster_id(&cfg).as_deref(),
    ));
    let mut blue_green = blue_green_rows(&record, &naming, &live);
    let blue_readers = rt.block_on(super::readers::blue_readers(
        &cfg, &project, &record, &naming, &c, &live,
    ));
    let mut lag_source = None;
    if request.lag {
        // DDL statements have no job and no metrics: they are simply absent from the answer.
        let mut names: std::collections::BTreeSet<String> =
            statements.iter().map(|s| s.statement.clone()).collect();
        for b in &blue_green {
            names.insert(b.blue_statement.clone());
            names.extend(b.green_statement.clone());
        }
        let (metrics, source) =
            lag::collect(&cfg, &c, &rt, &live, &names, request.lag_minutes.max(1))?;
        for s in &mut statements {
            s.lag = metrics.get(&s.statement).cloned();
        }
        for b in &mut blue_green {
            b.blue_lag = metrics.get(&b.blue_statement).cloned();
            b.green_lag = b
                .green_statement
                .as_ref()
                .and_then(|g| metrics.get(g).cloned());
        }
        lag_source = Some(source);
    }
    // Blue statements of an open release are shown with their green successors, not as orphans.
    let suffix = super::unit_tests::suffix(&cfg, None)?;
    let unit_test_statements = unit_test_statements(&project, &naming, &suffix, &live);
    let orphans = orphans(&project, &naming, &suffix, &live)
        .into_iter()
        .filter(|o| !blue_green.iter().any(|b| b.blue_statement == o.statement))
        .collect();
    Ok(StatusReport {
        scope: plan.scope,
        target: c.scrubber.scrub(&c.target.describe()),
        target_kind: c.kind,
        statements,
        blue_green,
        orphans,
        unit_test_statements,
        blue_readers,
        environment: env.environment,
        lag: lag_source,
        materialized_tables,
    })
}

/// The materialized tables among `tables` (their DDL is `CREATE [OR ALTER] MATERIALIZED TABLE`) as
/// the target's materialized-tables API tells them, matched by name in the project's Kafka
/// `cluster` ([`crate::target::materialized::find`]), with their versions. Empty when none of
/// `tables` is one, or the target has no such API; an API that answers an error, or a name that
/// cannot be told apart, gives rows marked [`MaterializedTableRow::unreadable`].
pub async fn materialized_rows<'a>(
    project: &crate::project::Project,
    tables: impl Iterator<Item = &'a str>,
    c: &target::Connected,
    cluster: Option<&str>,
) -> Vec<MaterializedTableRow> {
    let ours: Vec<&str> = tables
        .filter(|t| {
            project
                .inventory
                .tables
                .get(*t)
                .is_some_and(|t| t.is_materialized_table())
        })
        .collect();
    if ours.is_empty() {
        return Vec::new();
    }
    let listed = match c.target.materialized_tables().await {
        Ok(None) => return Vec::new(),
        Ok(Some(l)) => l,
        Err(e) => {
            let why = c.scrubber.scrub(&e.to_string());
            return ours
                .iter()
                .map(|t| MaterializedTableRow {
                    table_name: (*t).to_string(),
                    materialized: None,
                    versions: Vec::new(),
                    unreadable: Some(why.clone()),
                })
                .collect();
        }
    };
    let mut rows = Vec::new();
    for t in ours {
        let (found, ambiguous) = match crate::target::materialized::find(&listed, t, cluster) {
            Ok(m) => (m.cloned(), None),
            Err(why) => (None, Some(why)),
        };
        let (versions, unreadable) = match &found {
            Some(m) => match c.target.materialized_table_versions(m).await {
                Ok(v) => (v, None),
                Err(e) => (
                    Vec::new(),
                    Some(format!(
                        "its versions: {}",
                        c.scrubber.scrub(&e.to_string())
                    )),
                ),
            },
            None => (Vec::new(), ambiguous),
        };
        rows.push(MaterializedTableRow {
            table_name: t.to_string(),
            materialized: found,
            versions,
            unreadable,
        });
    }
    rows
}

/// Blue statements of the releases still open for `naming`'s prefix, each with its green successor
/// (DML to DML, DDL to DDL), names recomputed with `naming`; one row per blue statement (the tables
/// of a statement set are named together, `a, b`).
pub fn blue_green_rows(
    record: &BlueGreenRecord,
    naming: &StatementNaming,
    live: &BTreeMap<String, StatementState>,
) -> Vec<BlueGreenRow> {
    let phase = |n: &str| live.get(n).map(|s| s.phase.clone());
    let mut rows = Vec::new();
    for release in record
        .releases
        .iter()
        .filter(|r| r.is_open_in(&naming.prefix))
    {
        for t in &release.tables {
            for (blue, green) in blue_green_statements(naming, &release.statement_prefix, t) {
                // A statement set writes several tables with one statement: one row, its tables
                // named together.
                if let Some(row) = rows
                    .iter_mut()
                    .find(|r: &&mut BlueGreenRow| r.blue_statement == blue.name)
                {
                    row.blue_table_name
                        .push_str(&format!(", {}", t.blue_table_name));
                    row.green_table_name
                        .push_str(&format!(", {}", t.green_table_name));
                    continue;
                }
                rows.push(BlueGreenRow {
                    blue_table_name: t.blue_table_name.clone(),
                    green_table_name: t.green_table_name.clone(),
                    blue_phase: phase(&blue.name),
                    green_phase: green.as_deref().and_then(phase),
                    blue_statement: blue.name,
                    green_statement: green,
                    blue_lag: None,
                    green_lag: None,
                });
            }
        }
    }
    rows
}

/// The blue statements of a versioned table as named in the environment of `naming` (its job
/// first), each with its green counterpart of the same role. The release recorded them under its own
/// prefix (`release_prefix`): the prefix is replaced and the rest of each name kept (a statement
/// set's DML is named after the table that writes it); a name that was shortened with a hash is
/// computed again from the table name.
pub fn blue_green_statements(
    naming: &StatementNaming,
    release_prefix: &str,
    t: &GreenTable,
) -> Vec<(RecordedStatement, Option<String>)> {
    t.blue_statements
        .iter()
        .map(|b| {
            let green = t
                .green_statements
                .iter()
                .find(|g| g.role == b.role)
                .map(|g| {
                    name_here(
                        naming,
                        release_prefix,
                        &t.product_name,
                        g,
                        &t.green_table_name,
                    )
                });
            (
                RecordedStatement {
                    name: name_here(
                        naming,
                        release_prefix,
                        &t.product_name,
                        b,
                        &t.blue_table_name,
                    ),
                    role: b.role,
                },
                green,
            )
        })
        .collect()
}

/// Every green statement of a versioned table (its declaration first), as named in the environment
/// of `naming` (the same renaming as [`blue_green_statements`]).
pub fn green_statements(
    naming: &StatementNaming,
    release_prefix: &str,
    t: &GreenTable,
) -> Vec<RecordedStatement> {
    t.green_statements
        .iter()
        .map(|g| RecordedStatement {
            name: name_here(
                naming,
                release_prefix,
                &t.product_name,
                g,
                &t.green_table_name,
            ),
            role: g.role,
        })
        .collect()
}

/// A recorded statement name of `table` (recorded under `release_prefix`) as named in the
/// environment of `naming`.
fn name_here(
    naming: &StatementNaming,
    release_prefix: &str,
    product_name: &str,
    recorded: &RecordedStatement,
    table: &str,
) -> String {
    use crate::plan::naming::{MAX_STATEMENT_NAME, fit_length};
    match recorded.name.strip_prefix(release_prefix) {
        Some(rest) if rest.starts_with('-') && recorded.name.len() < MAX_STATEMENT_NAME => {
            fit_length(format!("{}{rest}", naming.prefix))
        }
        // The DDL of a CTAS or materialized table runs its job: recomputed as a DDL name.
        _ if recorded.role == StatementRole::Job && !recorded.name.contains("-ddl-") => {
            naming.dml(product_name, table)
        }
        _ => naming.ddl(product_name, table),
    }
}

/// The statements under `naming`'s prefix that no table of the tree owns. The tool's own unit-test
/// statements (names of [`crate::unittest::TestNaming`] with the configured `suffix` for a table of
/// the tree: `<prefix>-{ddl|dml|ins-N|val-N|out-N|drop|upg-…}-<table>-ut`) are not orphans: see
/// [`unit_test_statements`].
pub fn orphans(
    project: &crate::project::Project,
    naming: &StatementNaming,
    suffix: &crate::unittest::Suffix,
    live: &BTreeMap<String, StatementState>,
) -> Vec<Orphan> {
    let owned = naming.owned_statements(project);
    let tests = unit_test_naming(project, naming, suffix);
    live.values()
        .filter(|s| naming.is_under_prefix(&s.name) && !owned.contains_key(&s.name))
        .filter(|s| !tests(&s.name))
        .map(|s| Orphan {
            statement: s.name.clone(),
            phase: s.phase.clone(),
            detail: s.detail.clone(),
        })
        .collect()
}

/// Whether a statement name is one a unit-test or integration-test run of a table of the tree
/// creates (with `suffix`), and no table of the tree owns.
fn unit_test_naming<'a>(
    project: &'a crate::project::Project,
    naming: &'a StatementNaming,
    suffix: &crate::unittest::Suffix,
) -> impl Fn(&str) -> bool + 'a {
    let tests = crate::unittest::TestNaming {
        prefix: naming.prefix.clone(),
        suffix: suffix.clone(),
    };
    let tables: Vec<String> = project.inventory.tables.keys().cloned().collect();
    let owned = naming.owned_statements(project);
    move |name: &str| !owned.contains_key(name) && tests.owns(name, &tables)
}

/// The tool's own unit-test statements left on the target (a run keeps its last statements with
/// `--keep`, a killed run leaves them, a gateway keeps COMPLETED jobs): labelled, not orphans;
/// `flinkpipe table delete-unit-tests TABLE` removes them.
pub fn unit_test_statements(
    project: &crate::project::Project,
    naming: &StatementNaming,
    suffix: &crate::unittest::Suffix,
    live: &BTreeMap<String, StatementState>,
) -> Vec<Orphan> {
    let tests = unit_test_naming(project, naming, suffix);
    live.values()
        .filter(|s| tests(&s.name))
        .map(|s| Orphan {
            statement: s.name.clone(),
            phase: s.phase.clone(),
            detail: s.detail.clone(),
        })
        .collect()
}

/// The latest exceptions of a statement that failed, is failing or degraded ([`Target::exceptions`],
/// Confluent Cloud's `GET …/statements/{name}/exceptions`); none for a healthy one (no call). A read
/// that fails is logged and shows none: the status itself does not depend on it.
///
/// [`Target::exceptions`]: crate::target::Target::exceptions
pub async fn exceptions_of(
    c: &target::Connected,
    s: &StatementState,
) -> Vec<crate::target::StatementException> {
    use crate::target::Phase;
    if !matches!(s.phase, Phase::Failed | Phase::Failing | Phase::Degraded) {
        return Vec::new();
    }
    match c.target.exceptions(&s.name).await {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(
                "{}",
                c.scrubber
                    .scrub(&format!("reading the exceptions of {}: {e}", s.name))
            );
            Vec::new()
        }
    }
}
