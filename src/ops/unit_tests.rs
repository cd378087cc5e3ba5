//! `table init-unit-tests`, `table run-unit-tests`, `table delete-unit-tests` and `project
//! run-unit-tests`: the unit tests of one table's SQL on fixtures ([`crate::unittest`]).
//!
//! Every input is checked before the target is contacted ([`crate::unittest::prepare`]); one target is
//! connected per suite (on the SQL Gateway its session holds the suite's tables), and everything a run
//! creates is removed on success, failure, timeout and Ctrl-C unless `keep`.

use super::target::{self, Connected, TargetKind};
use super::{Context, OpsError};
use crate::config::{Config, process_env};
use crate::deploy::executor::Cancel;
use crate::plan::StatementNaming;
use crate::project::Project;
use crate::target::kafka::KafkaAdmin;
use crate::target::{Backoff, Phase, StatementKind, StatementSpec};
use crate::unittest::generate::{self, GenerateOptions, Generated};
use crate::unittest::prepare::{self, PrepareOptions, Suite};
use crate::unittest::rewrite::Storage;
use crate::unittest::run::{self, NoTopics, RunOptions, SuiteResult, Topics};
use crate::unittest::{Suffix, TestNaming, UnitTestError, definitions};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The default Kafka broker of test tables on a gateway (`scripts/local-flink.sh`).
pub const DEFAULT_BOOTSTRAP: &str = "localhost:9092";

/// The suffix: given, else `app.post_fix_unit_test`, else `_ut`. Errors (usage): shift_left's rule
/// broken.
pub fn suffix(cfg: &Config, given: Option<&str>) -> Result<Suffix, OpsError> {
    match given.or(cfg.app.post_fix_unit_test.as_deref()) {
        Some(s) => Suffix::parse(s).map_err(|e| OpsError::Usage(e.to_string())),
        None => Ok(Suffix::default()),
    }
}

/// The Kafka broker of test tables: `$FLINKPIPE_KAFKA_BOOTSTRAP`, `flinkpipe.unit_tests.kafka_bootstrap_servers`,
/// else [`DEFAULT_BOOTSTRAP`].
pub fn bootstrap(cfg: &Config) -> String {
    process_env("FLINKPIPE_KAFKA_BOOTSTRAP")
        .or_else(|| cfg.flinkpipe.unit_tests.kafka_bootstrap_servers.clone())
        .unwrap_or_else(|| DEFAULT_BOOTSTRAP.to_string())
}

pub(super) fn storage_of(kind: TargetKind, cfg: &Config) -> Storage {
    match kind {
        TargetKind::SqlGateway => Storage::Kafka {
            bootstrap: bootstrap(cfg),
        },
        TargetKind::ConfluentCloud => Storage::Confluent,
    }
}

/// `table init-unit-tests`.
#[derive(Debug, Clone)]
pub struct InitRequest {
    pub pipelines: PathBuf,
    pub table: String,
    pub nb_test_cases: usize,
    pub create_csv: bool,
    pub suffix: Option<String>,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
}

/// Writes a `tests/` folder for the table (never overwriting a file).
///
/// Errors: errors in the project, an unknown table, those of [`generate::generate`].
pub fn init(ctx: &Context, req: &InitRequest) -> Result<Generated, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no test written: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let opts = GenerateOptions {
        nb_test_cases: req.nb_test_cases,
        create_csv: req.create_csv,
        suffix: suffix(&cfg, req.suffix.as_deref())?,
    };
    Ok(generate::generate(&project, &cfg, &table, &opts)?)
}

/// `table run-unit-tests` / `project run-unit-tests` options.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Only this test case.
    pub case: Option<String>,
    pub keep: bool,
    /// Longest wait per statement (default `flinkpipe.unit_tests.timeout_seconds`, else 300 s).
    pub timeout: Option<Duration>,
    pub suffix: Option<String>,
    /// Write JUnit XML here.
    pub junit: Option<PathBuf>,
}

/// `table run-unit-tests`.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub pipelines: PathBuf,
    pub table: String,
    pub settings: RunSettings,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
}

/// Unit tests (one table's SQL) or integration tests (a sink's subgraph).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    Unit,
    Integration,
}

/// What a run found.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// What was run (the report's headings).
    pub kind: TestKind,
    pub suites: Vec<SuiteResult>,
    /// Tables of the scope without a `tests/test_definitions.yaml` (project runs).
    pub without_tests: Vec<String>,
    /// Where the JUnit XML was written.
    pub junit: Option<PathBuf>,
    pub seconds: f64,
}

impl RunReport {
    /// Whether every suite passed.
    pub fn passed(&self) -> bool {
        !self.suites.is_empty() && self.suites.iter().all(SuiteResult::passed)
    }
}

pub(super) fn run_options(cfg: &Config, s: &RunSettings, naming: TestNaming) -> RunOptions {
    RunOptions {
        naming,
        timeout: s.timeout.unwrap_or_else(|| {
            Duration::from_secs(cfg.flinkpipe.unit_tests.timeout_seconds.unwrap_or(300))
        }),
        poll: Backoff {
            initial: Duration::from_millis(200),
            factor: 1.5,
            max: Duration::from_secs(1),
            jitter: 0.1,
            max_attempts: u32::MAX,
        },
        keep: s.keep,
    }
}

/// A watcher for the run: the first SIGINT, SIGTERM or SIGHUP cancels (cleanup still runs). The
/// listeners are registered before this returns.
pub(super) fn on_ctrl_c(ctx: &Context, rt: &tokio::runtime::Runtime) -> Cancel {
    let cancel = Cancel::default();
    let c = cancel.clone();
    let mut signals = {
        let _entered = rt.enter();
        super::signals::Interrupts::listen()
    };
    rt.spawn(async move {
        signals.recv().await;
        c.cancel();
    });
    let _ = ctx;
    cancel
}

pub(super) async fn run_one(
    c: &Connected,
    cfg: &Config,
    suite: &Suite,
    opts: &RunOptions,
    cancel: &Cancel,
) -> SuiteResult {
    let kafka;
    let topics: &dyn Topics = match c.kind {
        TargetKind::SqlGateway => {
            kafka = KafkaAdmin::new(&bootstrap(cfg));
            &kafka
        }
        TargetKind::ConfluentCloud => &NoTopics,
    };
    let mut r = run::run_suite(c.target.as_ref(), topics, suite, opts, cancel).await;
    let scrub = |s: &mut String| *s = c.scrubber.scrub(s);
    if let Some(e) = r.error.as_mut() {
        scrub(e);
    }
    for e in r.cleanup_errors.iter_mut() {
        scrub(e);
    }
    for case in r.cases.iter_mut() {
        if let Some(e) = case.error.as_mut() {
            scrub(e);
        }
        for o in case.outputs.iter_mut() {
            if let Some(d) = o.detail.as_mut() {
                scrub(d);
            }
        }
    }
    r
}

pub(super) fn write_junit(path: &Path, suites: &[SuiteResult]) -> Result<(), OpsError> {
    crate::fsutil::write_atomic(path, crate::unittest::junit::to_xml(suites).as_bytes()).map_err(
        |source| OpsError::Write {
            path: path.to_path_buf(),
            source,
        },
    )
}

/// What `table run-unit-tests --dry-run` found: the suite is valid and would run these cases.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    pub table_name: String,
    /// `tests/test_definitions.yaml`, relative.
    pub definitions_file: String,
    /// The test tables the run would create (foundations first, then outputs).
    pub test_tables: Vec<String>,
    /// The test cases that would run.
    pub cases: Vec<String>,
    /// The checks a real run would fail whatever the output holds; empty when the suite is ready.
    pub not_ready: Vec<NotReady>,
}

impl DryRun {
    /// Whether a real run could pass: nothing in [`DryRun::not_ready`].
    pub fn ready(&self) -> bool {
        self.not_ready.is_empty()
    }
}

/// A check of the suite that a real run fails before comparing anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotReady {
    /// The test case.
    pub case: String,
    /// The output table checked.
    pub output: String,
    /// The expected-rows file, relative.
    pub file: String,
    pub reason: NotReadyReason,
}

/// Why a check is not ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotReadyReason {
    /// The expected CSV still holds the `# flinkpipe: not filled in yet` line
    /// ([`crate::unittest::data::NOT_FILLED_IN`]): a run fails the check and lists the output's rows.
    NotFilledIn,
}

/// Checks the suite of `req.table` as a run would before contacting anything (the test definitions,
/// every file they name, the SQL under test: [`prepare::prepare`]) and contacts nothing. Checks a
/// real run would fail whatever the output holds (an expected CSV not filled in yet) are listed in
/// [`DryRun::not_ready`].
///
/// Errors: errors in the project, an unknown table, a test folder that breaks a rule of
/// [`prepare::prepare`] (with file and line).
pub fn dry_run_table(ctx: &Context, req: &RunRequest) -> Result<DryRun, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no test run: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let suite = prepare::prepare(
        &project,
        &cfg,
        &table,
        &PrepareOptions {
            suffix: suffix(&cfg, req.settings.suffix.as_deref())?,
            storage: storage_of(TargetKind::of(&cfg), &cfg),
            case: req.settings.case.clone(),
        },
    )?;
    Ok(dry_run_of(&table, &suite))
}

/// What a run of `suite` would do, and the checks it would fail whatever the output holds.
pub(super) fn dry_run_of(table: &str, suite: &Suite) -> DryRun {
    let not_ready = suite
        .cases
        .iter()
        .flat_map(|c| c.checks.iter().map(move |k| (c, k)))
        .filter_map(|(c, k)| match &k.kind {
            crate::unittest::prepare::CheckKind::Expected(data) if data.not_filled_in => {
                Some(NotReady {
                    case: c.name.clone(),
                    output: k.table.clone(),
                    file: k.file.clone(),
                    reason: NotReadyReason::NotFilledIn,
                })
            }
            _ => None,
        })
        .collect();
    DryRun {
        table_name: table.to_string(),
        definitions_file: suite.definitions_file.clone(),
        test_tables: suite.ut_names(),
        cases: suite.cases.iter().map(|c| c.name.clone()).collect(),
        not_ready,
    }
}

/// Runs the unit tests of one table on the configured target.
///
/// Errors: errors in the project, an unknown table, a test folder that breaks a rule of
/// [`prepare`] (file and line; nothing is created then), a target that cannot be reached.
pub fn run_table(ctx: &Context, req: &RunRequest) -> Result<RunReport, OpsError> {
    let started = std::time::Instant::now();
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no test run: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let suffix = suffix(&cfg, req.settings.suffix.as_deref())?;
    run_prepared(
        ctx,
        &Prepared {
            cfg: &cfg,
            project: &project,
            table: &table,
            suffix,
            settings: &req.settings,
            kind: TestKind::Unit,
            started,
        },
        prepare::prepare,
    )
}

/// How one table's suite is built: [`prepare::prepare`] (its unit tests) or
/// [`crate::unittest::integration::prepare`] (the integration tests of a sink's subgraph).
pub(super) type Preparer =
    fn(&Project, &Config, &str, &PrepareOptions) -> Result<Suite, UnitTestError>;

/// What [`run_prepared`] runs.
pub(super) struct Prepared<'a> {
    pub cfg: &'a Config,
    pub project: &'a Project,
    pub table: &'a str,
    pub suffix: Suffix,
    pub settings: &'a RunSettings,
    pub kind: TestKind,
    /// When the command started (the report's `seconds`).
    pub started: std::time::Instant,
}

/// Builds one table's suite with `prepare` (every input checked before the target is contacted)
/// and runs it on the configured target, cleaning up on success, failure and Ctrl-C; writes JUnit
/// when asked.
///
/// Errors: a test folder that breaks a rule of `prepare` (nothing is created then), a target
/// that cannot be reached, an unwritable JUnit file.
pub(super) fn run_prepared(
    ctx: &Context,
    p: &Prepared<'_>,
    prepare: Preparer,
) -> Result<RunReport, OpsError> {
    let suite = prepare(
        p.project,
        p.cfg,
        p.table,
        &PrepareOptions {
            suffix: p.suffix.clone(),
            storage: storage_of(TargetKind::of(p.cfg), p.cfg),
            case: p.settings.case.clone(),
        },
    )?;
    let c = target::connect(p.cfg, Some(p.project))?;
    let rt = target::runtime()?;
    let naming = TestNaming {
        prefix: StatementNaming::from_config(p.cfg).prefix,
        suffix: p.suffix.clone(),
    };
    let opts = run_options(p.cfg, p.settings, naming);
    let cancel = on_ctrl_c(ctx, &rt);
    let result = rt.block_on(run_one(&c, p.cfg, &suite, &opts, &cancel));
    if result.interrupted {
        ctx.console
            .note("interrupted: the run was stopped and cleaned up");
    }
    let suites = vec![result];
    if let Some(path) = &p.settings.junit {
        write_junit(path, &suites)?;
    }
    Ok(RunReport {
        kind: p.kind,
        suites,
        without_tests: Vec::new(),
        junit: p.settings.junit.clone(),
        seconds: p.started.elapsed().as_secs_f64(),
    })
}

/// Which tables `project run-unit-tests` runs.
#[derive(Debug, Clone)]
pub enum ProjectScope {
    /// Every table with a test folder.
    All,
    Product(String),
    /// Tables under this folder (relative to the pipelines folder, or a path).
    Dir(String),
    Tables(Vec<String>),
    /// The tables changed since a ref and their descendants (`list-impacted-tables`).
    Impacted(super::changes::ChangeRequest),
}

/// `project run-unit-tests`.
#[derive(Debug, Clone)]
pub struct ProjectRunRequest {
    pub pipelines: PathBuf,
    pub scope: ProjectScope,
    pub settings: RunSettings,
    /// Suites run at once (suites sharing a test table never run together).
    pub max_parallel: usize,
}

fn has_tests(project: &Project, table: &str) -> bool {
    project.inventory.tables.get(table).is_some_and(|t| {
        project
            .inventory
            .disk_path(&t.folder)
            .join("tests")
            .join(definitions::FILE_NAME)
            .is_file()
    })
}

fn scope_tables(
    ctx: &Context,
    cfg: &Config,
    project: &Project,
    req: &ProjectRunRequest,
) -> Result<Vec<String>, OpsError> {
    let inv = &project.inventory;
    let own = |t: &&crate::inventory::Table| !t.external && !t.unknown;
    Ok(match &req.scope {
        ProjectScope::All => inv
            .tables
            .values()
            .filter(own)
            .map(|t| t.name.clone())
            .collect(),
        ProjectScope::Product(p) => {
            let v: Vec<String> = inv
                .tables
                .values()
                .filter(own)
                .filter(|t| &t.product == p)
                .map(|t| t.name.clone())
                .collect();
            if v.is_empty() {
                return Err(OpsError::Usage(format!("no table of product '{p}'")));
            }
            v
        }
        ProjectScope::Dir(d) => {
            let d = d.trim_end_matches('/');
            let rel = d.strip_prefix(&format!("{}/", inv.root_name)).unwrap_or(d);
            let v: Vec<String> = inv
                .tables
                .values()
                .filter(own)
                .filter(|t| {
                    let f = inv.rel_to_root(&t.folder);
                    f == rel || f.starts_with(&format!("{rel}/"))
                })
                .map(|t| t.name.clone())
                .collect();
            if v.is_empty() {
                return Err(OpsError::Usage(format!("no table folder under '{d}'")));
            }
            v
        }
        ProjectScope::Tables(list) => ctx.resolve_tables(project, list)?,
        ProjectScope::Impacted(change) => {
            let opts = super::changes::change_options(change)?;
            let set = crate::changes::list_changes(&req.pipelines, &opts, cfg)?;
            let (graph, _) = crate::changes::load_head_graph(
                &req.pipelines,
                cfg,
                &opts,
                &set.files,
                &set.external_tables,
            )?;
            let impact = crate::changes::impacted_tables(
                &set.files,
                &set.tests,
                &set.external_tables,
                &graph,
            )?;
            let mut v: BTreeSet<String> = impact.impacted_tables.into_iter().collect();
            v.extend(impact.impacts.into_iter().map(|i| i.table_name));
            let _ = ctx;
            v.into_iter()
                .filter(|t| inv.tables.contains_key(t))
                .collect()
        }
    })
}

/// Runs the suites of many tables (see [`ProjectScope`]), up to `max_parallel` at once, each on its
/// own connected target; suites that share a test table wait for each other.
///
/// Errors: errors in the project, a bad scope, and — before anything runs — any suite that breaks a
/// rule of [`prepare`].
pub fn run_project(ctx: &Context, req: &ProjectRunRequest) -> Result<RunReport, OpsError> {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    let started = std::time::Instant::now();
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        false,
        "no test run: fix the errors above",
    )?;
    let tables = scope_tables(ctx, &cfg, &project, req)?;
    let suffix = suffix(&cfg, req.settings.suffix.as_deref())?;
    let kind = TargetKind::of(&cfg);
    let (with, without): (Vec<String>, Vec<String>) =
        tables.into_iter().partition(|t| has_tests(&project, t));
    let mut suites = Vec::new();
    for t in &with {
        suites.push(prepare::prepare(
            &project,
            &cfg,
            t,
            &PrepareOptions {
                suffix: suffix.clone(),
                storage: storage_of(kind, &cfg),
                case: None,
            },
        )?);
    }
    if suites.is_empty() {
        return Ok(RunReport {
            kind: TestKind::Unit,
            suites: Vec::new(),
            without_tests: without,
            junit: None,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    let naming = TestNaming {
        prefix: StatementNaming::from_config(&cfg).prefix,
        suffix,
    };
    let opts = run_options(&cfg, &req.settings, naming);
    let rt = target::runtime()?;
    let cancel = on_ctrl_c(ctx, &rt);
    let mut connected = Vec::new();
    for _ in &suites {
        connected.push(target::connect(&cfg, Some(&project))?);
    }
    let max = req.max_parallel.max(1);
    let results = rt.block_on(async {
        let mut pending: Vec<usize> = (0..suites.len()).collect();
        let mut busy: Vec<(usize, BTreeSet<String>)> = Vec::new();
        let mut running = FuturesUnordered::new();
        let mut out: Vec<Option<SuiteResult>> = vec![None; suites.len()];
        loop {
            // Start every pending suite that fits (no shared test table with a running one).
            let mut i = 0;
            while i < pending.len() && running.len() < max {
                let idx = pending[i];
                let names: BTreeSet<String> = suites[idx].ut_names().into_iter().collect();
                if busy.iter().any(|(_, b)| !b.is_disjoint(&names)) || cancel.is_cancelled() {
                    i += 1;
                    continue;
                }
                pending.remove(i);
                busy.push((idx, names));
                let (c, s, o, cfg, cancel) = (&connected[idx], &suites[idx], &opts, &cfg, &cancel);
                running.push(async move { (idx, run_one(c, cfg, s, o, cancel).await) });
            }
            let Some((idx, r)) = running.next().await else {
                break;
            };
            busy.retain(|(b, _)| *b != idx);
            out[idx] = Some(r);
        }
        out.into_iter().flatten().collect::<Vec<_>>()
    });
    if cancel.is_cancelled() {
        ctx.console.note(
            "interrupted: running suites were stopped and cleaned up; the others did not start",
        );
    }
    if let Some(p) = &req.settings.junit {
        write_junit(p, &results)?;
    }
    Ok(RunReport {
        kind: TestKind::Unit,
        suites: results,
        without_tests: without,
        junit: req.settings.junit.clone(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `table delete-unit-tests`.
#[derive(Debug, Clone)]
pub struct DeleteRequest {
    pub pipelines: PathBuf,
    pub table: String,
    pub suffix: Option<String>,
    /// Keep unknown references as external tables.
    pub allow_unknown: bool,
}

/// What `delete-unit-tests` removed.
#[derive(Debug, Clone, Serialize)]
pub struct Deleted {
    pub table_name: String,
    pub statements: Vec<String>,
    pub tables: Vec<String>,
    /// Kafka topics deleted (SQL Gateway target).
    pub topics: Vec<String>,
}

/// Removes every statement, test table and topic a run of the table's tests creates — also what a
/// killed run left: statements are found by name on the target ([`TestNaming::owns`]).
///
/// Errors: errors in the project, an unknown table, an unreadable test definition, the target.
pub fn delete(ctx: &Context, req: &DeleteRequest) -> Result<Deleted, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing deleted: fix the errors above",
    )?;
    let table = ctx.resolve_table(&project, &req.table)?;
    let suffix = suffix(&cfg, req.suffix.as_deref())?;
    let t = &project.inventory.tables[&table];
    let defs_rel = format!("{}/tests/{}", t.folder, definitions::FILE_NAME);
    let defs = definitions::TestDefinitions::load(
        &project
            .inventory
            .disk_path(&t.folder)
            .join("tests")
            .join(definitions::FILE_NAME),
        &defs_rel,
    )?;
    let mut tables: Vec<String> = defs
        .foundations
        .iter()
        .map(|f| f.table_name.clone())
        .collect();
    for c in &defs.test_suite {
        for o in &c.outputs {
            if !tables.contains(&o.table_name) {
                tables.push(o.table_name.clone());
            }
        }
    }
    if !tables.contains(&table) {
        tables.push(table.clone());
    }
    for tt in &tables {
        if project.inventory.tables.contains_key(&suffix.table(tt)) {
            return Err(UnitTestError::in_file(
                &defs_rel,
                format!("{} is a table of the project: refused", suffix.table(tt)),
            )
            .into());
        }
    }
    let naming = TestNaming {
        prefix: StatementNaming::from_config(&cfg).prefix,
        suffix,
    };
    remove_test_objects(&cfg, &project, &naming, &table, &tables)
}

/// Deletes every statement on the target that a run for `tables` creates ([`TestNaming::owns`]),
/// drops their test tables (`DROP TABLE IF EXISTS`) and, on the SQL Gateway, deletes their topics:
/// the clean-up of `delete-unit-tests` and `delete-integration-tests`. `table_name` names the report.
///
/// Errors: the target cannot be reached, a delete or drop fails (its cause, scrubbed).
pub(super) fn remove_test_objects(
    cfg: &Config,
    project: &Project,
    naming: &TestNaming,
    table_name: &str,
    tables: &[String],
) -> Result<Deleted, OpsError> {
    let suffix = &naming.suffix;
    let c = target::connect(cfg, Some(project))?;
    let rt = target::runtime()?;
    let poll = run_options(
        cfg,
        &RunSettings {
            case: None,
            keep: false,
            timeout: None,
            suffix: None,
            junit: None,
        },
        naming.clone(),
    );
    rt.block_on(async {
        let live = target::live_statements(&c).await?;
        let mut statements = Vec::new();
        for name in live.keys().filter(|n| naming.owns(n, tables)) {
            crate::deploy::executor::delete_within(c.target.as_ref(), name, poll.timeout)
                .await
                .map_err(|g| c.error(&format!("deleting {name}"), g.error))?;
            crate::deploy::executor::wait_until(
                c.target.as_ref(),
                name,
                poll.timeout,
                poll.poll,
                |s| s.is_none(),
            )
            .await
            .map_err(|e| c.error(&format!("deleting {name}"), e))?;
            statements.push(name.clone());
        }
        let mut dropped = Vec::new();
        for tt in tables {
            let ut = suffix.table(tt);
            let name = naming.drop(tt);
            let spec = StatementSpec {
                name: name.clone(),
                sql: format!("DROP TABLE IF EXISTS {}", crate::sql::quote_identifier(&ut)),
                properties: Default::default(),
                kind: StatementKind::Ddl,
                compute_pool: None,
            };
            let st = c
                .target
                .create_statement(&spec)
                .await
                .map_err(|e| c.error(&format!("dropping {ut}"), e))?;
            if st.phase == Phase::Failed {
                return Err(c.error(&format!("dropping {ut}"), st.detail));
            }
            crate::deploy::executor::wait_until(
                c.target.as_ref(),
                &name,
                poll.timeout,
                poll.poll,
                |s| s.is_some_and(|s| s.phase == Phase::Completed),
            )
            .await
            .map_err(|e| c.error(&format!("dropping {ut}"), e))?;
            crate::deploy::executor::delete_within(c.target.as_ref(), &name, poll.timeout)
                .await
                .map_err(|g| c.error(&format!("deleting {name}"), g.error))?;
            dropped.push(ut);
        }
        let mut topics = Vec::new();
        if c.kind == TargetKind::SqlGateway {
            let names: Vec<String> = tables.iter().map(|t| suffix.table(t)).collect();
            KafkaAdmin::new(&bootstrap(cfg))
                .delete(&names)
                .await
                .map_err(|e| OpsError::Target(e.to_string()))?;
            topics = names;
        }
        Ok(Deleted {
            table_name: table_name.to_string(),
            statements,
            tables: dropped,
            topics,
        })
    })
}
