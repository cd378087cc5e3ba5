//! The command line's root and its shared flag groups (cargo's `command_prelude`), defined with clap's
//! derive API; the same definitions feed `--help`, the shell completions, the man page and the
//! generated reference. Each command's own `Args` lives next to its `exec` in
//! `commands/<group>/<command>.rs` and composes the groups here with `#[command(flatten)]`
//! ([`ProjectArgs`], [`ScopeArgs`], [`CascadeArgs`], [`PhaseSourceArgs`], [`PoolArgs`],
//! [`ChangeRefs`], [`ReadArgs`], …), so a command lists exactly the options it honours. Command
//! groups follow shift_left's (`project`, `table`, `pipeline`) plus `sql` and `statement`. Global
//! options work before or after the subcommand.

use super::commands;
use crate::ops::changes::ChangeRequest;
use crate::ops::plan::PhaseSource;
use crate::ops::scope::{PlanRequest, ScopeRequest};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// Manage Apache Flink SQL pipeline projects: scaffolding, validation, inventory, dependency graph, unit
/// tests, execution plans, deploys to Confluent Cloud or an Apache Flink SQL Gateway, blue-green.
#[derive(Debug, Parser)]
#[command(name = "flinkpipe", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options accepted before or after any subcommand.
#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// Output format of the command's result.
    #[arg(long, global = true, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Configuration file (shift_left's config.yaml keys); default $SL_CONFIG_FILE, $CONFIG_FILE, ./config.yaml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// More log output on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The project: create one, cross-product reports, changed and impacted tables, the unit tests of
    /// many tables, table versions, compute pools and statement housekeeping.
    #[command(subcommand)]
    Project(commands::project::ProjectCommand),
    /// One table: create its folder, the inventory, the naming lint, its unit tests, a preview of its
    /// rows.
    #[command(subcommand)]
    Table(commands::table::TableCommand),
    /// The pipeline: validation, metadata, graph, execution plans, deploy, status, undeploy,
    /// blue-green, decommission, explain.
    #[command(subcommand)]
    Pipeline(commands::pipeline::PipelineCommand),
    /// The Flink SQL front end.
    #[command(subcommand)]
    Sql(commands::sql::SqlCommand),
    /// One statement on the deploy target: stop, resume or delete it by name.
    #[command(subcommand)]
    Statement(commands::statement::StatementCommand),
    /// Print the version; `--config` (or `--show-config`) prints the effective configuration, secrets
    /// masked.
    Version(commands::version::Args),
    /// Print a shell completion script (`flinkpipe completions bash > /etc/bash_completion.d/flinkpipe`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a folder.
    Man(commands::man::Args),
}

/// The pipelines folder argument: DIR, else $PIPELINES, else `./pipelines` (as `table init` finds it).
#[derive(Debug, Args, Clone)]
pub struct PipelinesDir {
    /// The pipelines folder: DIR, else $PIPELINES, else ./pipelines.
    #[arg(value_name = "DIR", env = "PIPELINES", default_value = "pipelines")]
    pub pipelines: PathBuf,
}

/// The sink and the project of an integration-test command: `--table-name SINK [DIR]`, or
/// shift_left's `SINK_TABLE_NAME [--project-path DIR]`.
#[derive(Debug, Args, Clone)]
pub struct IntegrationTarget {
    /// The sink table (shift_left's positional form); with --table-name, the pipelines folder.
    #[arg(value_name = "SINK_TABLE_NAME")]
    pub sink_table_name: Option<String>,
    /// The pipelines folder [default: --project-path, $PIPELINES, else ./pipelines].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The sink table.
    #[arg(long, value_name = "SINK")]
    pub table_name: Option<String>,
    /// The pipelines folder (shift_left's option).
    #[arg(long, value_name = "DIR", env = "PIPELINES")]
    pub project_path: Option<PathBuf>,
    /// Test suffix: '_' and 2-3 letters or digits [default: app.post_fix_integration_test, else _it].
    #[arg(long, value_name = "S")]
    pub post_fix_integration_test: Option<String>,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

impl IntegrationTarget {
    /// The sink and the pipelines folder.
    ///
    /// Errors: no sink, or one positional too many.
    pub fn resolve(&self) -> Result<(String, PathBuf), String> {
        let (sink, dir) = match (&self.table_name, &self.sink_table_name, &self.dir) {
            (Some(t), Some(d), None) => (t.clone(), Some(PathBuf::from(d))),
            (Some(_), Some(a), Some(b)) => {
                return Err(format!(
                    "--table-name names the sink: one positional (DIR) at most, not '{a}' and '{}'",
                    b.display()
                ));
            }
            (Some(t), None, d) => (t.clone(), d.clone()),
            (None, Some(t), d) => (t.clone(), d.clone()),
            (None, None, _) => {
                return Err("name the sink table: --table-name SINK [DIR]".to_string());
            }
        };
        let dir = dir
            .or_else(|| self.project_path.clone())
            .unwrap_or_else(|| PathBuf::from("pipelines"));
        Ok((sink, dir))
    }
}

/// Where `pipeline upgrade-check` compiles plans and `pipeline validate` checks statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    /// The SQL front end only.
    Offline,
    /// The local Flink's SQL Gateway (the project's gateway target, else http://127.0.0.1:8083); when
    /// it does not answer, the command fails (exit 2). Only upgrade-check without `--engine` falls
    /// back to the offline reading, saying so.
    Local,
}

/// Which commits to compare (`project list-modified-files`, `project list-impacted-tables`).
#[derive(Debug, Args, Clone)]
pub struct ChangeRefs {
    /// Base ref; compared from merge-base(REF, head) [default: origin/main, else main].
    #[arg(long, value_name = "REF", conflicts_with = "since_date")]
    pub since: Option<String>,
    /// Head ref [default: HEAD].
    #[arg(long, value_name = "REF", conflicts_with = "include_uncommitted")]
    pub head: Option<String>,
    /// Base = the newest commit on HEAD's first-parent chain committed before this day (UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub since_date: Option<String>,
    /// Keep only files with this extension (`sql`) [default: .sql and .properties].
    #[arg(long, value_name = "EXT")]
    pub file_filter: Option<String>,
    /// Compare with the work tree (staged, unstaged and untracked files) instead of the head commit.
    #[arg(long)]
    pub include_uncommitted: bool,
}

/// Options of a unit-test run.
#[derive(Debug, Args, Clone)]
pub struct UnitTestRunOptions {
    /// Leave the test tables, topics and statements in place (to inspect them); delete-unit-tests
    /// removes them.
    #[arg(long)]
    pub keep: bool,
    /// Write the results as JUnit XML to FILE (for CI).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Test suffix: '_' and 2-3 letters or digits [default: app.post_fix_unit_test, else _ut].
    #[arg(long, value_name = "S")]
    pub post_fix_unit_test: Option<String>,
    /// Longest wait for one statement, in seconds [default: flinkpipe.unit_tests.timeout_seconds, else 300].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

/// What makes `pipeline validate --since` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A removed or retyped column, or a key change, that a downstream statement reads.
    Breaking,
}

/// The project a command reads: the pipelines folder and whether unknown references are allowed.
#[derive(Debug, Args, Clone)]
pub struct ProjectArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

impl ProjectArgs {
    /// The pipelines folder.
    pub fn pipelines(&self) -> &std::path::Path {
        &self.dir.pipelines
    }
}

/// The tables a plan starts from (shift_left's scope options): one of them, or none for every table
/// where the command allows it.
#[derive(Debug, Args, Clone)]
pub struct ScopeArgs {
    /// Start from this table (repeatable).
    #[arg(long, group = "scope")]
    pub table_name: Vec<String>,
    /// Start from every table of this product.
    #[arg(long, group = "scope")]
    pub product_name: Option<String>,
    /// Start from every table whose folder is under this path (relative to the pipelines folder).
    #[arg(long = "dir", group = "scope", value_name = "D")]
    pub scope_dir: Option<String>,
    /// Start from the tables listed in this file (one per line, or a JSON list, or modified_flink_files.json).
    #[arg(long, group = "scope", value_name = "FILE")]
    pub table_list_file_name: Option<PathBuf>,
}

impl ScopeArgs {
    /// The scope these options name ([`ScopeRequest::None`] when none is given).
    pub fn request(&self) -> ScopeRequest {
        if !self.table_name.is_empty() {
            ScopeRequest::Tables(self.table_name.clone())
        } else if let Some(p) = &self.product_name {
            ScopeRequest::Product(p.clone())
        } else if let Some(d) = &self.scope_dir {
            ScopeRequest::Dir(d.clone())
        } else if let Some(f) = &self.table_list_file_name {
            ScopeRequest::TableList(f.clone())
        } else {
            ScopeRequest::None
        }
    }
}

/// How far a plan reaches beyond its scope (shift_left's options of `build-execution-plan` and
/// `deploy`): descendants, ancestors, other products, DML only, excluded tables.
#[derive(Debug, Args, Clone)]
pub struct CascadeArgs {
    /// Restart descendants of the started tables when needed (stateful parent or child).
    #[arg(long)]
    pub may_start_descendants: bool,
    /// Restart running ancestors too.
    #[arg(long)]
    pub force_ancestors: bool,
    /// Let the descendant cascade cross into other products.
    #[arg(long)]
    pub cross_product_deployment: bool,
    /// Restart only DML statements of tables that already exist.
    #[arg(long)]
    pub dml_only: bool,
    /// Tables to leave untouched (one per line or a JSON list).
    #[arg(long, value_name = "FILE")]
    pub exclude_table_file_name: Option<PathBuf>,
}

/// The project, the scope and the cascade of an execution plan (`build-execution-plan`, `deploy`,
/// `status`).
#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
    #[command(flatten)]
    pub cascade: CascadeArgs,
}

/// Where `build-execution-plan` takes the current statement phases from (its own options: `deploy`,
/// `undeploy` and `status` always read the target, so they do not list them).
#[derive(Debug, Args, Clone)]
pub struct PhaseSourceArgs {
    /// Current statement phases: JSON map statement name → phase (offline planning).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["live", "offline"])]
    pub statement_status: Option<PathBuf>,
    /// Read the current phases from the target (one paginated list call); an incomplete target
    /// configuration is an error. Without `--live`, they are read whenever a target is configured.
    #[arg(long, conflicts_with = "offline")]
    pub live: bool,
    /// Plan without contacting any target, even when one is configured (every statement counts as
    /// not deployed unless `--statement-status` says otherwise).
    #[arg(long)]
    pub offline: bool,
}

/// shift_left's `--compute-pool-id`: of `build-execution-plan` and `deploy`, and of the commands
/// that run statements of their own (unit and integration tests, explain). `undeploy` takes it
/// for shift_left's scripts, and deletes each statement where it runs.
#[derive(Debug, Args, Clone)]
pub struct PoolArgs {
    /// Run the statements in this compute pool (over flinkpipe.compute_pools and
    /// flink.compute_pool_id, as $SL_FLINK_COMPUTE_POOL_ID; Confluent Cloud).
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
}

impl PoolArgs {
    /// The pool as a configuration override (`flink.compute_pool_id`).
    pub fn overrides(&self) -> crate::ops::ConfigOverrides {
        crate::ops::ConfigOverrides {
            compute_pool_id: self.compute_pool_id.clone(),
            ..Default::default()
        }
    }
}

/// When a query stops and how its result is printed (`sql query`, `table preview`).
#[derive(Debug, Args, Clone)]
pub struct ReadArgs {
    /// Print the first N rows of the snapshot, folded to the stop condition (an updating result is
    /// never cut mid-changelog; an append-only one stops at N rows). With --changelog: stop at N
    /// changes.
    #[arg(long, value_name = "N")]
    pub max_rows: Option<usize>,
    /// Stop after this many seconds without a new row, once rows have arrived (an unbounded query
    /// over a topic ends when it has caught up).
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub idle: f64,
    /// Stop after this many seconds in all [default: 60; none with --follow].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Keep running and print a new snapshot each time it changes, until Ctrl-C (or --timeout).
    #[arg(long)]
    pub follow: bool,
    /// Print the raw changes with their kind (+I, -U, +U, -D) instead of the snapshot.
    #[arg(long)]
    pub changelog: bool,
    /// Text layout of the rows (with --output text).
    #[arg(long, value_enum, default_value_t = RowFormat::Table)]
    pub format: RowFormat,
}

/// How rows are printed as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RowFormat {
    /// An aligned table with the column names and types; wide values are cut.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl ReadArgs {
    /// The read options of these arguments. Errors (usage): a negative or non-finite time.
    pub fn options(&self) -> Result<crate::ops::query::ReadOptions, super::Failure> {
        let secs = |v: f64, what: &str| {
            if v.is_finite() && v >= 0.0 {
                Ok(std::time::Duration::from_secs_f64(v))
            } else {
                Err(super::Failure::usage(format!(
                    "--{what} must be a number of seconds ≥ 0, not {v}"
                )))
            }
        };
        let timeout = match (self.timeout, self.follow) {
            (Some(t), _) => Some(secs(t, "timeout")?),
            (None, true) => None,
            (None, false) => Some(std::time::Duration::from_secs(60)),
        };
        Ok(crate::ops::query::ReadOptions {
            max_rows: self.max_rows,
            idle: secs(self.idle, "idle")?,
            timeout,
            changelog: self.changelog,
            ..Default::default()
        })
    }
}

impl PlanArgs {
    /// The plan request of these arguments (every statement in its configured pool).
    pub fn request(&self) -> PlanRequest {
        PlanRequest {
            pipelines: self.project.dir.pipelines.clone(),
            scope: self.scope.request(),
            may_start_descendants: self.cascade.may_start_descendants,
            force_ancestors: self.cascade.force_ancestors,
            cross_product: self.cascade.cross_product_deployment,
            dml_only: self.cascade.dml_only,
            exclude_file: self.cascade.exclude_table_file_name.clone(),
            allow_unknown: self.project.allow_unknown,
            compute_pool_id: None,
        }
    }

    /// The plan request with `--compute-pool-id` (`build-execution-plan`, `deploy`).
    pub fn request_in(&self, pool: &PoolArgs) -> PlanRequest {
        PlanRequest {
            compute_pool_id: pool.compute_pool_id.clone(),
            ..self.request()
        }
    }
}

impl PhaseSourceArgs {
    /// Where `build-execution-plan` takes the statement phases from.
    pub fn phase_source(&self) -> PhaseSource {
        match &self.statement_status {
            Some(f) => PhaseSource::File(f.clone()),
            None if self.live => PhaseSource::Live,
            None if self.offline => PhaseSource::Offline,
            None => PhaseSource::Auto,
        }
    }
}

impl ChangeRefs {
    /// The change request of these arguments.
    pub fn request(&self) -> ChangeRequest {
        ChangeRequest {
            since: self.since.clone(),
            head: self.head.clone(),
            since_date: self.since_date.clone(),
            file_filter: self.file_filter.clone(),
            include_uncommitted: self.include_uncommitted,
            running_from_target: false,
        }
    }
}

/// shift_left spells it `version --config`, but `--config FILE` is our global option: a `--config` after
/// `version` is read as `--show-config` (keeping a following FILE as the file to show).
pub fn version_config_alias(args: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if a == "--config" || a == "--output" {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    if args.get(i).is_none_or(|a| a != "version") {
        return args;
    }
    let mut out: Vec<OsString> = args[..=i].to_vec();
    // `--show-config` given explicitly (or once already): a `--config` is then only the global option.
    let mut shown = args[i + 1..].iter().any(|a| a == "--show-config");
    let mut show = |out: &mut Vec<OsString>| {
        if !shown {
            out.push("--show-config".into());
            shown = true;
        }
    };
    let mut rest = args[i + 1..].iter().peekable();
    while let Some(a) = rest.next() {
        let s = a.to_string_lossy();
        if s == "--config" {
            show(&mut out);
            if let Some(v) = rest.next_if(|v| !v.to_string_lossy().starts_with('-')) {
                out.push(a.clone());
                out.push(v.clone());
            }
        } else if s.starts_with("--config=") {
            show(&mut out);
            out.push(a.clone());
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// shift_left's boolean options are typer flags, each with a `--no-<flag>` form (`--no-pool-creation`,
/// `--no-dml-only`, `--no-no-ack`, …; <https://typer.tiangolo.com/tutorial/parameter-types/bool/>):
/// every on/off flag of ours (clap's `SetTrue`) takes it too. A `--no-X` that the command does not
/// define itself, where the command has a flag `--X`, switches `--X` off: the `--X` given before it in
/// the same command are dropped (the last form given wins, as typer reads it), and it is not passed
/// on. Everything else is left to clap (an unknown `--no-X` stays an error there).
pub fn negated_flags(args: Vec<OsString>) -> Vec<OsString> {
    use clap::CommandFactory;
    let mut root = Cli::command();
    root.build();
    let mut cur = &root;
    let mut out: Vec<OsString> = Vec::with_capacity(args.len());
    // Where the current (sub)command's own tokens start in `out`.
    let mut start = 0;
    let mut rest = args.into_iter();
    if let Some(program) = rest.next() {
        out.push(program);
        start = 1;
    }
    while let Some(a) = rest.next() {
        let s = a.to_string_lossy().into_owned();
        if s == "--" {
            out.push(a);
            out.extend(rest);
            break;
        }
        if let Some(long) = s.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            let known = cur.get_arguments().find(|x| {
                x.get_long() == Some(name) || x.get_all_aliases().is_some_and(|v| v.contains(&name))
            });
            match known {
                Some(x) => {
                    let value = x.get_action().takes_values() && !long.contains('=');
                    out.push(a);
                    if value && let Some(v) = rest.next() {
                        out.push(v);
                    }
                }
                None => match name.strip_prefix("no-").and_then(|flag| {
                    cur.get_arguments().find(|x| {
                        matches!(x.get_action(), clap::ArgAction::SetTrue)
                            && (x.get_long() == Some(flag)
                                || x.get_all_aliases().is_some_and(|v| v.contains(&flag)))
                    })
                }) {
                    Some(flag) if !long.contains('=') => {
                        let forms: Vec<String> = flag
                            .get_long()
                            .into_iter()
                            .chain(flag.get_all_aliases().unwrap_or_default())
                            .map(|l| format!("--{l}"))
                            .collect();
                        let mut i = start;
                        while i < out.len() {
                            if forms.iter().any(|f| out[i] == **f) {
                                out.remove(i);
                            } else {
                                i += 1;
                            }
                        }
                    }
                    _ => out.push(a),
                },
            }
        } else if s.len() == 2 && s.starts_with('-') {
            let short = s.chars().nth(1);
            let value = cur
                .get_arguments()
                .find(|x| x.get_short() == short)
                .is_some_and(|x| x.get_action().takes_values());
            out.push(a);
            if value && let Some(v) = rest.next() {
                out.push(v);
            }
        } else {
            if let Some(sub) = cur.find_subcommand(&s) {
                cur = sub;
                start = out.len() + 1;
            }
            out.push(a);
        }
    }
    out
}

/// The project whose SQL `statement resume` needs on the SQL Gateway (which keeps no statement text):
/// `$PIPELINES`, else `./pipelines` when it exists.
pub fn statement_project_dir() -> Option<PathBuf> {
    crate::config::process_env("PIPELINES")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("pipelines")).filter(|p| p.is_dir()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alias(args: &[&str]) -> Vec<String> {
        version_config_alias(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn negate(args: &[&str]) -> Vec<String> {
        negated_flags(args.iter().map(OsString::from).collect())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// Every on/off flag of every command takes its `--no-` form, which switches it off (the last
    /// form given wins), and the command line then parses.
    #[test]
    fn every_flag_has_its_no_form_and_the_last_form_wins() {
        use clap::CommandFactory;
        let mut root = Cli::command();
        root.build();
        fn leaves<'a>(
            c: &'a clap::Command,
            path: Vec<&'a str>,
            out: &mut Vec<(Vec<&'a str>, &'a clap::Command)>,
        ) {
            if c.has_subcommands() {
                for s in c.get_subcommands() {
                    let mut p = path.clone();
                    p.push(s.get_name());
                    leaves(s, p, out);
                }
            } else {
                out.push((path, c));
            }
        }
        let mut all = Vec::new();
        leaves(&root, vec![], &mut all);
        let mut flags = 0;
        for (path, cmd) in &all {
            for arg in cmd.get_arguments() {
                let (clap::ArgAction::SetTrue, Some(long)) = (arg.get_action(), arg.get_long())
                else {
                    continue;
                };
                if cmd
                    .get_arguments()
                    .any(|x| x.get_long() == Some(&format!("no-{long}")))
                {
                    continue;
                }
                flags += 1;
                let mut line = vec!["fp"];
                line.extend(path.iter().copied());
                let on = format!("--{long}");
                let off = format!("--no-{long}");
                let mut a = line.clone();
                a.extend([on.as_str(), "x", off.as_str()]);
                let mut want = line.clone();
                want.push("x");
                assert_eq!(negate(&a), want, "{a:?}");
                let mut b = line.clone();
                b.extend([off.as_str(), on.as_str()]);
                let mut want = line.clone();
                want.push(on.as_str());
                assert_eq!(negate(&b), want, "{b:?}");
            }
        }
        assert!(flags > 100, "{flags} flags");
        // Values are not read as flags, global options before the command are skipped with their value.
        assert_eq!(
            negate(&[
                "fp",
                "--output",
                "json",
                "pipeline",
                "deploy",
                "--table-name",
                "--no-dml-only",
                "--dml-only",
                "--no-dml-only"
            ]),
            [
                "fp",
                "--output",
                "json",
                "pipeline",
                "deploy",
                "--table-name",
                "--no-dml-only"
            ]
        );
        // shift_left's --no-ack flag has its --no-no-ack form; an unknown --no- form stays for clap.
        assert_eq!(
            negate(&["fp", "pipeline", "undeploy", "--no-ack", "--no-no-ack"]),
            ["fp", "pipeline", "undeploy"]
        );
        assert_eq!(
            negate(&["fp", "pipeline", "undeploy", "--no-such"]),
            ["fp", "pipeline", "undeploy", "--no-such"]
        );
        let parsed = Cli::try_parse_from(negate(&[
            "fp",
            "pipeline",
            "deploy",
            "--dml-only",
            "--no-dml-only",
        ]))
        .unwrap();
        let Command::Pipeline(commands::pipeline::PipelineCommand::Deploy(d)) = parsed.command
        else {
            panic!()
        };
        assert!(!d.plan.cascade.dml_only);
    }

    #[test]
    fn version_config_is_show_config() {
        assert_eq!(
            alias(&["fp", "version", "--config"]),
            ["fp", "version", "--show-config"]
        );
        assert_eq!(
            alias(&["fp", "--output", "json", "version", "--config", "c.yaml"]),
            [
                "fp",
                "--output",
                "json",
                "version",
                "--show-config",
                "--config",
                "c.yaml"
            ]
        );
        assert_eq!(
            alias(&["fp", "version", "--config", "-v"]),
            ["fp", "version", "--show-config", "-v"]
        );
        // an explicit --show-config makes a following --config FILE the global option only
        assert_eq!(
            alias(&["fp", "version", "--show-config", "--config", "c.yaml"]),
            ["fp", "version", "--show-config", "--config", "c.yaml"]
        );
        // other commands keep their global --config FILE
        assert_eq!(
            alias(&["fp", "pipeline", "validate", "--config", "c.yaml"]),
            ["fp", "pipeline", "validate", "--config", "c.yaml"]
        );
        assert_eq!(
            alias(&["fp", "--config", "c.yaml", "version"]),
            ["fp", "--config", "c.yaml", "version"]
        );
    }
}
