//! The command line, defined once with clap's derive API; the same definitions feed `--help`, the shell
//! completions and the man page. Command groups follow shift_left's (`project`, `table`, `pipeline`)
//! plus `sql`. Global options work before or after the subcommand.

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
    Project(ProjectCommand),
    /// One table: create its folder, the inventory, the naming lint, its unit tests, a preview of its
    /// rows.
    #[command(subcommand)]
    Table(TableCommand),
    /// The pipeline: validation, metadata, graph, execution plans, deploy, status, undeploy,
    /// blue-green, decommission, explain.
    #[command(subcommand)]
    Pipeline(PipelineCommand),
    /// The Flink SQL front end.
    #[command(subcommand)]
    Sql(SqlCommand),
    /// One statement on the deploy target: stop, resume or delete it by name.
    #[command(subcommand)]
    Statement(StatementCommand),
    /// Print the version; `--config` (or `--show-config`) prints the effective configuration, secrets
    /// masked.
    Version(VersionArgs),
    /// Print a shell completion script (`flinkpipe completions bash > /etc/bash_completion.d/flinkpipe`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a folder.
    Man(ManArgs),
}

/// The pipelines folder argument: DIR, else $PIPELINES, else `./pipelines` (as `table init` finds it).
#[derive(Debug, Args, Clone)]
pub struct PipelinesDir {
    /// The pipelines folder: DIR, else $PIPELINES, else ./pipelines.
    #[arg(value_name = "DIR", env = "PIPELINES", default_value = "pipelines")]
    pub pipelines: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// Create a project: pipelines/ layer folders, a commented config.yaml, .gitignore and README.md.
    /// Never overwrites a file.
    Init(ProjectInitArgs),
    /// List tables whose parents or children belong to another product.
    ReportTableCrossProducts {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// List tables that have exactly one child (candidates for merging statements).
    ListTablesWithOneChild {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// List the files changed since a git ref (read-only: never checks out) and write
    /// modified_flink_files.json and modified_flink_files.txt.
    ListModifiedFiles {
        #[command(flatten)]
        dir: PipelinesDir,
        #[command(flatten)]
        refs: ChangeRefs,
        /// Folder for modified_flink_files.json and .txt [default: $FLINKPIPE_OUTPUT_DIR, else
        /// ~/.shift_left, as shift_left; never the work tree unless given].
        #[arg(long, value_name = "DIR")]
        output_dir: Option<PathBuf>,
        /// Do not ask the configured target whether the tables' statements run (`running` is then
        /// null, as when no target is configured).
        #[arg(long)]
        offline: bool,
    },
    /// List the descendants impacted by the changes since a git ref (or listed in a
    /// modified_flink_files.json) and write impacted_tables.json.
    ListImpactedTables {
        #[command(flatten)]
        dir: PipelinesDir,
        #[command(flatten)]
        refs: ChangeRefs,
        /// Read the changes from this modified_flink_files.json instead of git.
        #[arg(long, value_name = "FILE")]
        modified_files_path: Option<PathBuf>,
        /// Folder for impacted_tables.json [default: $FLINKPIPE_OUTPUT_DIR, else ~/.shift_left].
        #[arg(long, value_name = "DIR")]
        output_dir: Option<PathBuf>,
    },
    /// Run the unit tests of many tables (every table with a tests/ folder, or a product, a folder,
    /// a list, or the impacted set) with one summary; exit 1 when any fails.
    RunUnitTests(ProjectRunUnitTestsArgs),
    /// Give the listed tables and all their descendants their next version (`t` → `t_v2`, `t_v2` → `t_v3`),
    /// rewriting DDL and DML by token spans, then rebuild the inventory and metadata.
    UpdateTablesVersion(UpdateTablesVersionArgs),
    /// Bring the unit-test folders up to date with their parents' DDLs (shift_left's command): each
    /// foundation DDL of a changed table gets its column list, each CSV input its columns (added
    /// ones empty, dropped ones removed); a diff first, written all or nothing unless --dry-run.
    UpdateUtDdl(UpdateUtDdlArgs),
    /// List the compute pools of the Confluent Cloud environment: phase, CFUs in use and maximum,
    /// and what of the configuration sends statements there (a Cloud API key:
    /// SL_CONFLUENT_CLOUD_API_KEY / SL_CONFLUENT_CLOUD_API_SECRET).
    ListComputePools {
        #[command(flatten)]
        dir: PipelinesDir,
    },
    /// Create a compute pool in the environment's cloud and region and wait until it is
    /// PROVISIONED (a Cloud API key).
    CreateComputePool(CreateComputePoolArgs),
    /// Delete a compute pool; refused while statements of the project run in it (a Cloud API key).
    DeleteComputePool(DeleteComputePoolArgs),
    /// Delete (or stop, or resume) statements that pile up: by name prefix (default 'workspace'),
    /// phase (default COMPLETED and FAILED), age and compute pool, from one listing; never a running
    /// statement of the project unless named with --statement-name.
    HousekeepStatements(HousekeepArgs),
    /// Check every key of the configuration file (type, allowed values, required for the target) and
    /// print all problems at once with their line numbers; exit 1 when there is one.
    ValidateConfig {
        /// Check what this target needs [default: gateway when flinkpipe.gateway.url (or
        /// FLINKPIPE_GATEWAY_URL) is set, else confluent].
        #[arg(long, value_enum)]
        target: Option<ConfigTarget>,
    },
    /// Delete every compute pool whose display name contains PRODUCT (or those listed in
    /// --compute-pool-list-file): lists them with what is in them, keeps protected ones (statements
    /// of the project or of an open release, pools the configuration uses), asks, then deletes (a
    /// Cloud API key).
    DeleteAllComputePools(DeleteAllComputePoolsArgs),
    /// List the topics of the configured Kafka (the SQL Gateway's broker, or the Confluent Cloud
    /// cluster's Kafka REST API with a Kafka API key: SL_KAFKA_API_KEY / SL_KAFKA_API_SECRET), each
    /// with the table that owns it, and write PATH/topic_list.txt (shift_left's format).
    ListTopics {
        /// The folder where topic_list.txt is written.
        #[arg(value_name = "PATH")]
        project_path: PathBuf,
        /// The pipelines folder (to name each topic's table) [default: $PIPELINES, else ./pipelines].
        #[arg(
            long = "pipelines",
            value_name = "DIR",
            env = "PIPELINES",
            default_value = "pipelines"
        )]
        pipelines: PathBuf,
    },
    /// Tables of the tree that no running statement reads or writes (from the SQL the target runs),
    /// and with topics the Kafka topics nobody uses; writes shift_left's unused_tables_<time>.txt.
    AssessUnusedTables {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Also assess the Kafka topics (the default; `--no-topics` skips them).
        #[arg(long, overrides_with = "no_topics")]
        include_topics: bool,
        /// Do not assess the Kafka topics.
        #[arg(long)]
        no_topics: bool,
        /// The report file [default: unused_tables_<time>.txt in $FLINKPIPE_OUTPUT_DIR, else
        /// ~/.shift_left].
        #[arg(long, value_name = "FILE")]
        output_file: Option<PathBuf>,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Drop the tables listed in FILE (one per line, or the report of assess-unused-tables) after
    /// checking each is still unused, not read in the tree and not a declared sink; lists and asks
    /// first.
    DeleteUnusedTables {
        /// The table list.
        table_list_file: PathBuf,
        /// The pipelines folder [default: $PIPELINES, else ./pipelines].
        #[arg(
            long = "pipelines",
            value_name = "DIR",
            env = "PIPELINES",
            default_value = "pipelines"
        )]
        pipelines: PathBuf,
        /// List what would be dropped, drop nothing.
        #[arg(long)]
        dry_run: bool,
        /// Do not ask for confirmation.
        #[arg(long)]
        no_ack: bool,
        /// Longest wait for one DROP, in seconds.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// Write the integration tests of a sink's subgraph under its tests/integration/: rows for every
    /// source, the sink's expected rows (not filled in yet) and the definitions. Never overwrites a file.
    InitIntegrationTests(InitIntegrationTestsArgs),
    /// Run the integration tests of a sink: every statement of its subgraph on test tables
    /// (`<t>_it`), the sources fed, the sink's changelog folded and compared; exit 1 when one fails.
    RunIntegrationTests(RunIntegrationTestsArgs),
    /// Remove the statements, test tables and topics of a sink's integration tests (also what a
    /// killed run left).
    DeleteIntegrationTests(DeleteIntegrationTestsArgs),
    /// Copy one product's tables and every ancestor they read into TARGET_FOLDER/pipelines (external
    /// tables declared in its seeds/external_tables.json, config.yaml copied): a project that
    /// validates on its own, or nothing is written.
    IsolateDataProduct {
        /// The product to isolate.
        product_name: String,
        /// The source project's pipelines folder.
        source_folder: PathBuf,
        /// The new project's folder (its pipelines/ must not exist).
        target_folder: PathBuf,
    },
    /// List the environments of the Confluent Cloud organization, the configured one marked (a Cloud
    /// API key).
    ListEnvironments {
        #[command(flatten)]
        dir: PipelinesDir,
    },
    /// Every statement on a compute pool: phase, the table of the project that owns it (or none: not
    /// ours) and its age (a Flink API key).
    GetStatementList {
        /// The compute pool id (`lfcp-…`).
        compute_pool_id: String,
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
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

/// `project init-integration-tests`.
#[derive(Debug, Args, Clone)]
pub struct InitIntegrationTestsArgs {
    #[command(flatten)]
    pub target: IntegrationTarget,
    /// Number of scenarios, each with its own rows.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub nb_scenarios: usize,
    /// Even scenarios read their inputs from CSV files.
    #[arg(long)]
    pub create_csv: bool,
}

/// `project run-integration-tests`.
#[derive(Debug, Args, Clone)]
pub struct RunIntegrationTestsArgs {
    #[command(flatten)]
    pub target: IntegrationTarget,
    /// Run only this scenario (a test case of the definitions).
    #[arg(long, value_name = "NAME")]
    pub scenario_name: Option<String>,
    /// Check the subgraph and the definitions (every file they name, every statement renamed) as a
    /// run does first, and stop there: nothing is contacted.
    #[arg(long)]
    pub dry_run: bool,
    /// The compute pool of the test statements (Confluent Cloud) [default: flink.compute_pool_id].
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
    /// shift_left's option: each scenario's time is in the report whatever it says.
    #[arg(long, overrides_with = "no_measure_latency")]
    pub measure_latency: bool,
    /// shift_left's option (see --measure-latency).
    #[arg(long)]
    pub no_measure_latency: bool,
    /// Also write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Leave the test tables, topics and statements in place (to inspect them);
    /// delete-integration-tests removes them.
    #[arg(long)]
    pub keep: bool,
    /// Write the results as JUnit XML to FILE (for CI).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Longest wait for one statement, in seconds [default: flinkpipe.unit_tests.timeout_seconds, else 300].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
}

/// `project delete-integration-tests`.
#[derive(Debug, Args, Clone)]
pub struct DeleteIntegrationTestsArgs {
    #[command(flatten)]
    pub target: IntegrationTarget,
    /// shift_left's option: the command never asks.
    #[arg(long)]
    pub no_confirm: bool,
}

/// The deploy target `project validate-config` checks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfigTarget {
    /// An Apache Flink SQL Gateway (flinkpipe.gateway.*).
    Gateway,
    /// Confluent Cloud for Apache Flink.
    Confluent,
}

/// Options of `project create-compute-pool`.
#[derive(Debug, Args, Clone)]
pub struct CreateComputePoolArgs {
    /// The pool's display name (letters, digits, '_', '.', '-'; at most 64).
    pub name: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// The pool's maximum CFUs: 5, 10, 20, 30, 40 or 50.
    #[arg(long, value_name = "N")]
    pub max_cfu: u32,
    /// Longest wait for PROVISIONED, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,
    /// Return as soon as the pool is requested (PROVISIONING).
    #[arg(long)]
    pub no_wait: bool,
}

/// Options of `project delete-all-compute-pools`.
#[derive(Debug, Args, Clone)]
pub struct DeleteAllComputePoolsArgs {
    /// Delete the pools whose display name contains this.
    #[arg(
        value_name = "PRODUCT",
        required_unless_present = "compute_pool_list_file"
    )]
    pub product: Option<String>,
    /// A file with one compute pool id per line: only these pools are deleted.
    #[arg(long, value_name = "FILE")]
    pub compute_pool_list_file: Option<PathBuf>,
    /// The pipelines folder (the project whose statements protect a pool) [default: $PIPELINES, else
    /// ./pipelines].
    #[arg(
        long = "pipelines",
        value_name = "DIR",
        env = "PIPELINES",
        default_value = "pipelines"
    )]
    pub pipelines: PathBuf,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// List what would be deleted, delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Delete protected pools too (what was overridden is printed).
    #[arg(long)]
    pub force: bool,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Options of `project delete-compute-pool`.
#[derive(Debug, Args, Clone)]
pub struct DeleteComputePoolArgs {
    /// The pool id (`lfcp-…`).
    pub id: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Delete it although statements of the project or of an open blue-green release are in it
    /// (in any phase); what was ignored is printed.
    #[arg(long)]
    pub force: bool,
}

/// Statement phases `housekeep-statements` filters on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum StatusArg {
    Completed,
    Failed,
    Stopped,
    Running,
    Degraded,
    Pending,
}

/// What `housekeep-statements` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HousekeepAction {
    Delete,
    Stop,
    Resume,
}

/// Options of `project housekeep-statements`.
#[derive(Debug, Args, Clone)]
pub struct HousekeepArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Statements whose name starts with this [default: workspace, unless --statement-name is given].
    #[arg(long, value_name = "PREFIX")]
    pub starts_with: Option<String>,
    /// Statements in this phase (repeatable) [default: COMPLETED and FAILED to delete, RUNNING and
    /// DEGRADED to stop, STOPPED to resume].
    #[arg(long, value_enum, ignore_case = true, value_name = "PHASE")]
    pub status: Vec<StatusArg>,
    /// Statements created at least this many days ago.
    #[arg(long, default_value_t = 0, value_name = "DAYS")]
    pub age: u64,
    /// What to do with them.
    #[arg(long, value_enum, ignore_case = true, default_value_t = HousekeepAction::Delete)]
    pub action: HousekeepAction,
    /// A statement to act on whatever its prefix, phase or age, even a running one of the project
    /// (repeatable).
    #[arg(long, value_name = "NAME")]
    pub statement_name: Vec<String>,
    /// Only statements in this compute pool.
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
    /// List what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one statement, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Where `pipeline upgrade-check` compiles plans and `pipeline validate` checks statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    /// The SQL front end only.
    Offline,
    /// The local Flink's SQL Gateway (the project's gateway target, else http://127.0.0.1:8083):
    /// upgrade-check falls back to the offline reading when it does not answer; validate fails.
    Local,
}

/// `pipeline upgrade-check`.
#[derive(Debug, Args)]
pub struct UpgradeCheckArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Only the statements writing this table (repeatable).
    #[arg(long = "table-name", value_name = "TABLE")]
    pub tables: Vec<String>,
    /// Where plans are compiled.
    #[arg(long, value_enum, default_value_t = EngineChoice::Local)]
    pub engine: EngineChoice,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
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

#[derive(Debug, Subcommand)]
pub enum TableCommand {
    /// Create a table folder from the templates: `sql-scripts/ddl.<table>.sql`, `dml.<table>.sql`,
    /// `tests/` and a Makefile; the name follows the naming convention (`src_<product>_…`,
    /// `<product>_fct_…`, …).
    Init(TableInitArgs),
    /// Check file names, table names per layer and product, changelog.mode and cleanup policy.
    ValidateTableNames {
        #[command(flatten)]
        dir: PipelinesDir,
    },
    /// Scan the pipelines tree and write DIR/inventory.json (shift_left's shape).
    BuildInventory {
        #[command(flatten)]
        dir: PipelinesDir,
    },
    /// Write a tests/ folder for TABLE from its SQL (shift_left's files): foundation DDLs renamed to
    /// `<parent>_ut`, typed sample inputs, a validation SQL and an expected-rows CSV per test case.
    /// Never overwrites a file.
    InitUnitTests(InitUnitTestsArgs),
    /// Run TABLE's unit tests on the configured target (local Flink SQL Gateway + Kafka, or Confluent
    /// Cloud) and print PASS/FAIL per test case and output; exit 1 when any fails. Everything the run
    /// creates carries the suffix and is removed afterwards (also on failure and Ctrl-C) unless --keep.
    RunUnitTests(RunUnitTestsArgs),
    /// shift_left's name for running the validation of the unit tests: the same as run-unit-tests
    /// (every run checks the outputs).
    RunValidationTests(RunUnitTestsArgs),
    /// shift_left's other name for running the validation of the unit tests: the same as
    /// run-unit-tests.
    ValidateUnitTests(RunUnitTestsArgs),
    /// Replace a string in the names of the SQL files under FOLDER (DML by default): identifiers only,
    /// never strings or comments; prints the diff, then rewrites every file or none.
    UpdateTables(UpdateTablesArgs),
    /// Regenerate TABLE's Makefile from the current template (`templates/table/Makefile`, or the
    /// project's override); targets written below the line `# --- flinkpipe: your targets below ---`
    /// are kept.
    UpdateMakefile {
        /// The table whose folder's Makefile is regenerated.
        table: String,
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Regenerate the Makefile of every table folder under DIR (as update-makefile), all or nothing.
    UpdateAllMakefiles {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Remove every statement, test table and topic that runs of TABLE's unit tests create (also after
    /// a killed run).
    DeleteUnitTests(DeleteUnitTestsArgs),
    /// Print the rows of a table of the project, read from the configured target (from the start of
    /// its topic to its current end where the connector allows; folded by its primary key).
    Preview(PreviewArgs),
}

/// Options of `table update-tables`.
#[derive(Debug, Args, Clone)]
pub struct UpdateTablesArgs {
    /// The folder whose `sql-scripts/` files are edited (the pipelines folder or one below).
    pub folder: PathBuf,
    /// shift_left's SQL processor class: only its default (a string replacement) is accepted.
    #[arg(value_name = "CLASS")]
    pub class_to_use: Option<String>,
    /// Edit the DDL files instead of the DML files.
    #[arg(long, conflicts_with = "both_ddl_dml")]
    pub ddl: bool,
    /// Edit both DDL and DML files.
    #[arg(long)]
    pub both_ddl_dml: bool,
    /// The text to replace in names.
    #[arg(long, value_name = "A")]
    pub string_to_change_from: String,
    /// Its replacement [default: empty: remove it].
    #[arg(long, value_name = "B")]
    pub string_to_change_to: Option<String>,
    /// Print the diff, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `table init-unit-tests`.
#[derive(Debug, Args, Clone)]
pub struct InitUnitTestsArgs {
    /// The table under test.
    pub table: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Number of test cases.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub nb_test_cases: usize,
    /// Even test cases read their inputs from CSV files.
    #[arg(long)]
    pub create_csv: bool,
    /// Test suffix: '_' and 2-3 letters or digits [default: app.post_fix_unit_test, else _ut].
    #[arg(long, value_name = "S")]
    pub post_fix_unit_test: Option<String>,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
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

/// `table run-unit-tests`.
#[derive(Debug, Args, Clone)]
pub struct RunUnitTestsArgs {
    /// The table under test.
    pub table: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Run only this test case.
    #[arg(long, value_name = "NAME", conflicts_with = "run_all")]
    pub test_case_name: Option<String>,
    /// Run every test case (the default; shift_left's option).
    #[arg(long)]
    pub run_all: bool,
    /// Check the suite (test definitions, every file they name, the SQL under test) as a run does
    /// first, and stop there: nothing is contacted.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub run: UnitTestRunOptions,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// `table delete-unit-tests`.
#[derive(Debug, Args, Clone)]
pub struct DeleteUnitTestsArgs {
    /// The table whose test artefacts are removed.
    pub table: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Test suffix [default: app.post_fix_unit_test, else _ut].
    #[arg(long, value_name = "S")]
    pub post_fix_unit_test: Option<String>,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// `project run-unit-tests`.
#[derive(Debug, Args, Clone)]
pub struct ProjectRunUnitTestsArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Only these tables.
    #[arg(long, group = "ut_scope", value_name = "T")]
    pub table_name: Vec<String>,
    /// Only the tables of this product.
    #[arg(long, group = "ut_scope", value_name = "P")]
    pub product_name: Option<String>,
    /// Only the tables under this folder.
    #[arg(long = "dir", group = "ut_scope", value_name = "D")]
    pub scope_dir: Option<String>,
    /// Only the tables changed since --since REF and their descendants (list-impacted-tables).
    #[arg(long, group = "ut_scope")]
    pub impacted: bool,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Suites run at once (suites sharing a test table wait for each other).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_parallel: usize,
    #[command(flatten)]
    pub run: UnitTestRunOptions,
}

/// Options of `table preview`.
#[derive(Debug, Args, Clone)]
pub struct PreviewArgs {
    /// The table (its current version is found from the unversioned name).
    pub table: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Only rows matching this SQL condition.
    #[arg(long = "where", value_name = "EXPR")]
    pub filter: Option<String>,
    /// At most N rows (same as --max-rows).
    #[arg(long, value_name = "N", conflicts_with = "max_rows")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

#[derive(Debug, Subcommand)]
pub enum PipelineCommand {
    /// Write pipeline_definition.json in every table folder, DIR/pipeline_graph.json and DIR/inventory.json.
    BuildAllMetadata {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Write the metadata of the one table whose DML (or DDL) is DML_FILE: its
    /// pipeline_definition.json, and those of its parents and children, which name it (shift_left's
    /// `build-metadata`).
    BuildMetadata {
        /// The table's DML file (`…/sql-scripts/dml.<table>.sql`); a DDL file for a table without DML.
        dml_file: PathBuf,
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// A health verdict per table of PRODUCT from its statements' live phases, SQL drift and
    /// backlog (shift_left's healthcheck); exit 1 when a table is not running, degraded or failed.
    Healthcheck {
        /// The product.
        product_name: String,
        #[command(flatten)]
        dir: PipelinesDir,
    },
    /// The running statements of the scope (default: every table) with records in and out and
    /// pending records since --from-date (default: the last 10 minutes).
    ReportRunningStatements {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Only this table.
        #[arg(long, group = "running_scope", value_name = "T")]
        table_name: Option<String>,
        /// Only the tables of this product.
        #[arg(long, group = "running_scope", value_name = "P")]
        product_name: Option<String>,
        /// Only the tables under this folder.
        #[arg(long = "dir", group = "running_scope", value_name = "D")]
        scope_dir: Option<String>,
        /// Metrics from this time on (UTC).
        #[arg(long, value_name = "YYYY-MM-DDThh:mm:ss")]
        from_date: Option<String>,
    },
    /// CFUs per compute pool, the project's running statements in each, and consolidation advice
    /// (a Cloud API key).
    AnalyzePoolUsage {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Count only the statements of this product.
        #[arg(short = 'p', long = "product-name", value_name = "P")]
        product_name: Option<String>,
        /// Count only the statements of tables under this folder.
        #[arg(short = 'd', long = "directory", value_name = "D")]
        directory: Option<String>,
    },
    /// shift_left's column lineage of TABLE: its upstream and downstream columns (the JSON of
    /// `column-lineage`) written as <DIR>/<table>_lineage.json; --open also writes the HTML page.
    FieldLineage {
        /// The table.
        table_name: String,
        #[command(flatten)]
        dir: PipelinesDir,
        /// Output folder for the lineage JSON and HTML page.
        #[arg(short = 'o', long, value_name = "DIR")]
        output_dir: Option<PathBuf>,
        /// Open the HTML page.
        #[arg(long)]
        open: bool,
    },
    /// Run one-off SQL (ALTERs, …) on the configured target with the project's catalog and database:
    /// statement by statement, each waited for until COMPLETED and removed; the first failure stops.
    Prepare {
        /// The SQL file.
        sql_file: PathBuf,
        #[command(flatten)]
        dir: PipelinesDir,
        /// The compute pool to run them in [default: flink.compute_pool_id].
        #[arg(long, value_name = "POOL_ID")]
        compute_pool_id: Option<String>,
        /// Longest wait for one statement, in seconds.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// Delete every pipeline_definition.json under DIR (and DIR/pipeline_graph.json): lists them, asks,
    /// then removes all of them or none.
    DeleteAllMetadata {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Do not ask for confirmation.
        #[arg(long)]
        no_ack: bool,
        /// List what would be deleted, delete nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check the project: duplicate tables, empty folders, DDL/DML mismatches, unknown references, cycles.
    Validate {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
        /// Also check the schema changes since this git ref against every downstream reader (column
        /// lineage): removed and retyped columns, primary-key changes, added columns.
        #[arg(long, value_name = "REF")]
        since: Option<String>,
        /// Fail (exit 1) on these findings: `breaking` = a changed column that a reader uses.
        #[arg(long, value_enum, requires = "since")]
        fail_on: Option<FailOn>,
        /// The CI gate: a statement not read as Flink reads it is an error (exit 1): sql-fallback
        /// (the parser rejected it), sql-missing-semicolon, sql-syntax, sql-placeholder, and
        /// scaffold-todo (a TODO(flinkpipe) that table init left).
        #[arg(long)]
        strict: bool,
        /// Make the warnings of CLASS errors (exit 1), e.g. `--deny unknown-layer`; repeatable;
        /// `all` denies every warning.
        #[arg(long, value_name = "CLASS", value_parser = crate::diagnostics::DeniedClass::parse)]
        deny: Vec<crate::diagnostics::DeniedClass>,
        /// `local`: also EXPLAIN every statement (with --since: those of the changed tables and
        /// their children) on the local Flink with the project's DDL; what the planner rejects
        /// (type errors, unknown columns, an updating query into an append-only sink) is an error
        /// at its file and line.
        #[arg(long, value_enum, default_value_t = EngineChoice::Offline)]
        engine: EngineChoice,
    },
    /// Print a table's parent tree (and child tree with --children-too).
    Report {
        /// The table name.
        table: String,
        #[command(flatten)]
        dir: PipelinesDir,
        /// Also print the children tree.
        #[arg(long)]
        children_too: bool,
        /// Print only the direct parents (and children with --children-too).
        #[arg(long)]
        parent_only: bool,
        /// shift_left's negations (its defaults), accepted and ignored.
        #[arg(long, hide = true)]
        no_parent_only: bool,
        #[arg(long, hide = true)]
        no_children_too: bool,
        #[command(flatten)]
        formats: ReportFormats,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Export the dependency graph (or a selection of it).
    Graph {
        #[command(flatten)]
        dir: PipelinesDir,
        /// dbt-style selection: `t`, `+t`, `t+`, `+t+`, `@t`, `product:P`, `layer:L`, `path:DIR`;
        /// space = union, comma = intersection.
        #[arg(long, value_name = "EXPR")]
        select: Option<String>,
        /// Graph format.
        #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
        format: GraphFormat,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// Column-level lineage: each sink column with the source columns it is computed from (direct)
    /// and those that shape its rows (indirect: filters, joins, grouping, windows), across the
    /// project; statements that cannot be resolved with certainty are listed, never guessed.
    ColumnLineage {
        #[command(flatten)]
        dir: PipelinesDir,
        /// Only the lineage of this table (transitively).
        #[arg(long)]
        table: Option<String>,
        /// With --table: only the lineage of this column.
        #[arg(long, requires = "table")]
        column: Option<String>,
        /// Towards the sources only.
        #[arg(long, requires = "table", conflicts_with = "downstream")]
        upstream: bool,
        /// Towards the readers only.
        #[arg(long, requires = "table")]
        downstream: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = LineageFormat::Json)]
        format: LineageFormat,
        /// Keep unknown references as external tables (warning) instead of failing.
        #[arg(long)]
        allow_unknown: bool,
    },
    /// For each statement whose DML changed since a git ref: can the new SQL take over the running
    /// statement's state? `unchanged`, `stateless` (restart from offsets), `state-compatible`
    /// (restore from a savepoint), `state-compatible-semantics-changed` or `state-incompatible` (a
    /// new version), `unknown`; from the compiled plans of the local Flink (`--engine local`, the
    /// default when it answers) or the SQL front end (`--engine offline`). Exit 1 when a change needs a
    /// new version.
    UpgradeCheck(UpgradeCheckArgs),
    /// Compute the execution plan of a table, product, folder or table list. Writes nothing anywhere;
    /// the current statement phases come from --statement-status, else from the configured target
    /// (one read-only list call) unless --offline.
    BuildExecutionPlan(BuildPlanArgs),
    /// Version the subgraph impacted since a git ref for a blue-green deploy (`t` → `t_v2`): prints the
    /// diff and the green plan; `--apply` rewrites the files and rebuilds the inventory and metadata.
    BlueGreen(BlueGreenArgs),
    /// Execute the plan on the configured target — Confluent Cloud for Apache Flink, or an Apache
    /// Flink SQL Gateway when flinkpipe.gateway.url is set: parents first, independent tables in
    /// parallel; a failure skips its descendants; a journal makes `--resume` safe after a crash or
    /// Ctrl-C (exit 130). (`--version` here is shift_left's: a release version, not flinkpipe's.)
    #[command(disable_version_flag = true)]
    Deploy(DeployArgs),
    /// Delete the statements of the scope's tables and their descendants, children first (tables are
    /// dropped only with --allow-drop).
    Undeploy(UndeployArgs),
    /// Live phase of every statement of the scope (default: all tables) against the plan, and SQL
    /// drift between the deployed text and the files.
    Status(StatusArgs),
    /// After a blue-green: stop or delete the blue statements of the green sets recorded in
    /// pipelines/blue_green.json (children first), and with --orphans every statement under the
    /// statement-name prefix that no table owns; never a statement of a table of the tree.
    Decommission(DecommissionArgs),
    /// Before cut-over: compare each green table of the open blue-green release with its blue table
    /// (bounded snapshot reads like `table preview`): row counts, keys only in blue / only in green,
    /// values that differ, null counts, numeric sum/min/max, freshness and lag; a verdict per table
    /// (same, expected-difference, catching-up, differs). Exit 1 unless every table is same or
    /// expected-difference.
    ReleaseCheck(ReleaseCheckArgs),
    /// Green is not trusted: stop (or delete) the green statements of the open blue-green release,
    /// children first, leave blue untouched, record the release as rolled back in
    /// pipelines/blue_green.json and print the git command that restores the blue SQL. A release
    /// whose blue statements were deleted (decommission --delete) cannot be rolled back.
    Rollback(RollbackArgs),
    /// Run the data tests of tests/live_tests.yaml (not_null, unique, accepted_values, row_count,
    /// freshness, custom SQL) on the deployed tables as bounded queries; failing rows (up to N),
    /// JUnit; exit 1 on a failure. --blue-green tests the green tables of the open release.
    TestLive(TestLiveArgs),
    /// Print the engine's plan (EXPLAIN) of each statement of the scope's tables, as they would be
    /// sent (the environment's rewrite rules applied).
    Explain(ExplainArgs),
}

/// shift_left's output options of `pipeline report`.
#[derive(Debug, Args, Clone)]
pub struct ReportFormats {
    /// Print the report as YAML (shift_left's `--yaml`).
    #[arg(long, conflicts_with = "json")]
    pub yaml: bool,
    /// Print the report as JSON (shift_left's `--json`; the same as `--output json`).
    #[arg(long)]
    pub json: bool,
    /// Also write the report to this file (YAML with --yaml, else JSON), atomically.
    #[arg(long, value_name = "FILE")]
    pub output_file_name: Option<PathBuf>,
    /// Write the lineage page of the report's tables to `<table>_pipeline_graph.html` (in
    /// $FLINKPIPE_OUTPUT_DIR, else ~/.shift_left) and print its path; open it when a browser is
    /// configured ($BROWSER).
    #[arg(long)]
    pub open: bool,
}

/// Options of `pipeline explain`.
#[derive(Debug, Args, Clone)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Explain this table (repeatable).
    #[arg(long, group = "explain_scope")]
    pub table_name: Vec<String>,
    /// Explain every table of this product.
    #[arg(long, group = "explain_scope")]
    pub product_name: Option<String>,
    /// Explain every table under this folder (relative to the pipelines folder).
    #[arg(long = "dir", group = "explain_scope", value_name = "D")]
    pub scope_dir: Option<String>,
    /// Explain the tables listed in this file.
    #[arg(long, group = "explain_scope", value_name = "FILE")]
    pub table_list_file_name: Option<PathBuf>,
    /// Longest wait for one plan, in seconds.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub timeout: u64,
    /// Print, instead of the plan, the changelog each sink receives (append-only, upsert or
    /// retract, with its +I/-U/+U/-D kinds) and its upsert key.
    #[arg(long)]
    pub changelog_mode: bool,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Options of `pipeline release-check`.
#[derive(Debug, Args, Clone)]
pub struct ReleaseCheckArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Check only this table of the open release (blue or green name), or the pair BLUE=GREEN
    /// (repeatable).
    #[arg(long, value_name = "TABLE|BLUE=GREEN")]
    pub table_name: Vec<String>,
    /// A declared difference: `table.column` (values of that column; a key column also declares
    /// keys only on one side) or `table` (any difference). Repeatable.
    #[arg(long, value_name = "TABLE[.COLUMN]")]
    pub expect_diff: Vec<String>,
    /// Green is catching-up when its newest time value is more than this many seconds behind blue's.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub max_lag: f64,
    /// Sample rows shown per kind of difference.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub samples: usize,
    /// Text layout (with --output text): a table, or Markdown for a pull-request comment.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Stop one side's read after this many seconds without a new row, once rows have arrived.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub idle: f64,
    /// Stop one side's read after this many seconds in all.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Text layout of `pipeline release-check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Markdown,
}

/// Options of `pipeline test-live`.
#[derive(Debug, Args, Clone)]
pub struct TestLiveArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Test the green tables of the open blue-green release (pipelines/blue_green.json).
    #[arg(long)]
    pub blue_green: bool,
    /// Test only this table (repeatable); default: every table with a tests/live_tests.yaml.
    #[arg(long, value_name = "T")]
    pub table_name: Vec<String>,
    /// Failing rows shown per test.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub max_failing_rows: usize,
    /// Write the results as JUnit XML to FILE (for CI).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Stop a read after this many seconds without a new row, once rows have arrived.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub idle: f64,
    /// Stop a read after this many seconds in all.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Options of `pipeline rollback`.
#[derive(Debug, Args, Clone)]
pub struct RollbackArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Stop the green statements (resumable; the default).
    #[arg(long, conflicts_with = "delete")]
    pub stop: bool,
    /// Delete the green statements (their tables and topics stay).
    #[arg(long)]
    pub delete: bool,
    /// List what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one statement to stop or disappear, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Options of `pipeline decommission`.
#[derive(Debug, Args, Clone)]
pub struct DecommissionArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Stop the statements (resumable; the default).
    #[arg(long, conflicts_with = "delete")]
    pub stop: bool,
    /// Delete the statements (their tables and topics stay).
    #[arg(long)]
    pub delete: bool,
    /// Also every orphan: a statement under the statement-name prefix that no table of the tree owns.
    #[arg(long)]
    pub orphans: bool,
    /// List what would be done, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one statement to stop or disappear, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Also stop or delete a blue statement whose green successor is not RUNNING (a declaration:
    /// COMPLETED); what was ignored is printed.
    #[arg(long)]
    pub force: bool,
}

/// Options of `pipeline deploy`.
#[derive(Debug, Args, Clone)]
pub struct DeployArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub pool: PoolArgs,
    /// Tables deployed at once (each waits for its parents); `--max-thread` is shift_left's name.
    #[arg(
        long,
        visible_alias = "max-thread",
        default_value_t = 4,
        value_name = "N"
    )]
    pub max_parallel: usize,
    /// shift_left's flag, accepted: a deploy is parallel whenever --max-parallel is above 1.
    #[arg(long, hide = true)]
    pub parallel: bool,
    /// When a compute pool the statements go to is missing or full, create one they fit in (sized
    /// under flink.max_cfu_percent_before_allocation; a Cloud API key), wait until it is
    /// PROVISIONED and send them there; with --dry-run, say which pools it would create.
    #[arg(long)]
    pub pool_creation: bool,
    /// Deploy the tables recorded at version V (`_v2`, `v2` or `2`) by blue-green releases in
    /// pipelines/blue_green.json (and their non-running ancestors), instead of a scope.
    #[arg(long = "version", value_name = "V", conflicts_with_all = ["scope", "blue_green"])]
    pub release_version: Option<String>,
    /// Print what would be sent, contact the target read-only, change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Longest wait for one statement to reach RUNNING (DML) or COMPLETED (DDL), in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub timeout: u64,
    /// Continue an interrupted deploy from its journal without creating anything twice.
    #[arg(long)]
    pub resume: bool,
    /// Allow DROP TABLE for restarted tables whose DDL changed (data loss).
    #[arg(long)]
    pub allow_drop: bool,
    /// Let this table's (or statement's) stateful DML be recreated with its new SQL, losing its
    /// state (repeatable; `all`: every one). Without it such a restart is refused.
    #[arg(long, value_name = "TABLE")]
    pub allow_state_loss: Vec<String>,
    /// Journal file (default: `<project>/.flinkpipe/deploy-journal.jsonl`).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Deploy the green tables recorded by `pipeline blue-green --apply` in pipelines/blue_green.json
    /// (and their non-running ancestors), instead of a scope.
    #[arg(long, conflicts_with = "scope")]
    pub blue_green: bool,
    /// Deploy even when the statements would push a compute pool past
    /// flink.max_cfu_percent_before_allocation.
    #[arg(long)]
    pub allow_pool_overcommit: bool,
}

/// Options of `pipeline undeploy`.
#[derive(Debug, Args, Clone)]
pub struct UndeployArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Also drop the tables (DROP TABLE: deletes their topics' data).
    #[arg(long)]
    pub allow_drop: bool,
    /// Longest wait for one statement to disappear, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
}

/// Options of `pipeline status`.
#[derive(Debug, Args, Clone)]
pub struct StatusArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Also show runtime metrics: records in and out, pending records (consumer lag), watermark and
    /// backpressure (Confluent Cloud: the Metrics API, a Cloud API key; SQL Gateway: the JobManager).
    #[arg(long)]
    pub lag: bool,
    /// Window of the Metrics API record counts, in minutes (Confluent Cloud).
    #[arg(long, default_value_t = 10, value_name = "MINUTES", requires = "lag")]
    pub lag_minutes: u32,
}

/// `statement …`: one statement on the configured target.
#[derive(Debug, Subcommand)]
pub enum StatementCommand {
    /// Stop a statement and wait until it is STOPPED.
    Stop {
        /// The statement name.
        name: String,
        /// Longest wait, in seconds.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// Resume a stopped statement and wait until it is RUNNING.
    Resume {
        /// The statement name.
        name: String,
        /// Longest wait, in seconds.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// Delete a statement and wait until it is gone (a name that does not exist is an error).
    Delete {
        /// The statement name.
        name: String,
        /// Longest wait, in seconds.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
}

/// What makes `pipeline validate --since` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A removed or retyped column, or a key change, that a downstream statement reads.
    Breaking,
}

/// Column lineage formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LineageFormat {
    /// `{"columns", "edges", "unresolved"}`.
    Json,
    /// OpenLineage run events (JSON Lines), one per statement, with the `columnLineage` facet.
    Openlineage,
    Dot,
    Mermaid,
    /// A self-contained page: click a column to see its upstream and downstream.
    Html,
}

/// Graph export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Mermaid,
    Json,
    /// A picture: layers in columns, products as colours (rendered in-process).
    Svg,
    /// A self-contained lineage page: search a table, highlight its ancestors and descendants.
    Html,
}

/// Scope and options of an execution plan.
#[derive(Debug, Args, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
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
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Where `build-execution-plan` takes the current statement phases from (its own options: `deploy`,
/// `undeploy` and `status` always read the target, so they do not list them).
#[derive(Debug, Args, Clone)]
pub struct PhaseArgs {
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

/// `--compute-pool-id` of `build-execution-plan` and `deploy` (`undeploy` and `status` act on the
/// statements where they run, so they do not list it).
#[derive(Debug, Args, Clone)]
pub struct PoolArgs {
    /// Run every statement of the plan in this compute pool (over flinkpipe.compute_pools and
    /// flink.compute_pool_id; Confluent Cloud).
    #[arg(long, value_name = "POOL_ID")]
    pub compute_pool_id: Option<String>,
}

/// Options of `pipeline build-execution-plan`.
#[derive(Debug, Args, Clone)]
pub struct BuildPlanArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub phases: PhaseArgs,
    #[command(flatten)]
    pub pool: PoolArgs,
}

#[derive(Debug, Subcommand)]
pub enum SqlCommand {
    /// Print the sinks, sources, statements and statefulness of SQL files.
    Refs {
        /// SQL files to analyse.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Run a read-only query (SELECT, SHOW, DESCRIBE, EXPLAIN) on the configured target and print its
    /// result: the snapshot its changelog folds into, or the raw changes with --changelog.
    Query(QueryArgs),
}

/// Options of `sql query`.
#[derive(Debug, Args, Clone)]
pub struct QueryArgs {
    /// The query.
    #[arg(
        value_name = "SQL",
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    pub sql: Option<String>,
    /// Read the query from this file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The project whose tables the SQL Gateway declares for the query (its catalog is per session).
    #[arg(
        long,
        env = "PIPELINES",
        default_value = "pipelines",
        value_name = "DIR"
    )]
    pub pipelines: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
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

/// Options of `pipeline blue-green`.
#[derive(Debug, Args, Clone)]
pub struct BlueGreenArgs {
    #[command(flatten)]
    pub dir: PipelinesDir,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Suffix for tables without a version yet.
    #[arg(long, default_value = "_v2", value_name = "SUFFIX")]
    pub default_version: String,
    /// Rewrite the files and rebuild inventory.json and the metadata (default: only print the diff and plan).
    #[arg(long)]
    pub apply: bool,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
    /// Refuse (exit 1) when a schema change since the ref is breaking for a downstream reader.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Version only what needs it: a table whose statement is `stateless` by `pipeline
    /// upgrade-check` (on the SQL Gateway also `state-compatible`, restored from a savepoint) and
    /// whose schema did not change is upgraded in place, its readers untouched.
    #[arg(long)]
    pub in_place: bool,
}

/// Options of `project update-ut-ddl` (shift_left's names).
#[derive(Debug, Args, Clone)]
pub struct UpdateUtDdlArgs {
    /// Tables whose test copies to update, or files listing them (shift_left's IMPACTED: an
    /// impacted_tables.json, modified_flink_files.json or table list); none: the tables changed since
    /// --git-branch, those of --modified-files-path, else every table with a DDL.
    #[arg(value_name = "IMPACTED")]
    pub impacted: Vec<String>,
    /// The pipelines folder.
    #[arg(
        long,
        value_name = "DIR",
        env = "PIPELINES",
        default_value = "pipelines"
    )]
    pub project_path: PathBuf,
    /// The tables whose DDL changed since this git ref.
    #[arg(long, value_name = "REF")]
    pub git_branch: Option<String>,
    /// The tables of this file (modified_flink_files.json, impacted_tables.json or a table list).
    #[arg(long, value_name = "FILE")]
    pub modified_files_path: Option<PathBuf>,
    /// shift_left's whole-file replacement: accepted; flinkpipe always replaces the column list and
    /// keeps the test table's name and WITH options.
    #[arg(long)]
    pub full_replace: bool,
    /// shift_left's git repository root: accepted and not needed (the repository is found from the
    /// pipelines folder).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    /// Print the diff without writing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Options of `project update-tables-version`.
#[derive(Debug, Args, Clone)]
pub struct UpdateTablesVersionArgs {
    /// Tables to version (one per line, a JSON list, modified_flink_files.json or impacted_tables.json);
    /// their descendants are versioned too.
    #[arg(value_name = "TABLE_LIST_FILE")]
    pub table_list: PathBuf,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Suffix for tables without a version yet.
    #[arg(long, default_value = "_v2", value_name = "SUFFIX")]
    pub default_version: String,
    /// Print the diff without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep unknown references as external tables (warning) instead of failing.
    #[arg(long)]
    pub allow_unknown: bool,
}

/// Options of `version`.
#[derive(Debug, Args, Clone)]
pub struct VersionArgs {
    /// Print the effective configuration (YAML, secrets masked). `version --config [FILE]` means the same.
    #[arg(long)]
    pub show_config: bool,
    /// The project whose `config.yaml` is shown when no other is found.
    #[command(flatten)]
    pub dir: PipelinesDir,
}

/// Options of `man`.
#[derive(Debug, Args, Clone)]
pub struct ManArgs {
    /// Write `flinkpipe.1`, `flinkpipe-pipeline.1`, … into this folder instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Layouts of `project init`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProjectTypeArg {
    /// `pipelines/<layer>/`.
    Kimball,
    /// `pipelines/<layer>/<product>/` per product.
    #[value(name = "data_product", alias = "data-product")]
    DataProduct,
}

/// Options of `project init`.
#[derive(Debug, Args, Clone)]
pub struct ProjectInitArgs {
    /// Project name: the folder created.
    pub name: String,
    /// Where the project folder is created.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Folder layout.
    #[arg(long, value_enum, default_value_t = ProjectTypeArg::Kimball)]
    pub project_type: ProjectTypeArg,
    /// A product (repeatable) [data_product default: data_product_1].
    #[arg(long = "product", value_name = "P")]
    pub products: Vec<String>,
}

/// Options of `table init`.
#[derive(Debug, Args, Clone)]
pub struct TableInitArgs {
    /// Table name, with or without the convention's prefix (`orders` → `src_<product>_orders` in sources).
    pub name: String,
    /// Layer: sources, intermediates, dimensions, facts, views or seeds (or a folder of flinkpipe.layers).
    pub layer: String,
    /// The product the table belongs to.
    #[arg(long, alias = "product-name", value_name = "P")]
    pub product: Option<String>,
    /// A table the DML reads (repeatable; required outside sources and seeds).
    #[arg(long = "source", value_name = "TABLE")]
    pub sources: Vec<String>,
    /// The pipelines folder.
    #[arg(
        long,
        env = "PIPELINES",
        default_value = "pipelines",
        value_name = "DIR"
    )]
    pub pipelines: PathBuf,
}

impl PlanArgs {
    /// The plan request of these arguments (every statement in its configured pool).
    pub fn request(&self) -> PlanRequest {
        let scope = if !self.table_name.is_empty() {
            ScopeRequest::Tables(self.table_name.clone())
        } else if let Some(p) = &self.product_name {
            ScopeRequest::Product(p.clone())
        } else if let Some(d) = &self.scope_dir {
            ScopeRequest::Dir(d.clone())
        } else if let Some(f) = &self.table_list_file_name {
            ScopeRequest::TableList(f.clone())
        } else {
            ScopeRequest::None
        };
        PlanRequest {
            pipelines: self.dir.pipelines.clone(),
            scope,
            may_start_descendants: self.may_start_descendants,
            force_ancestors: self.force_ancestors,
            cross_product: self.cross_product_deployment,
            dml_only: self.dml_only,
            exclude_file: self.exclude_table_file_name.clone(),
            allow_unknown: self.allow_unknown,
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

impl PhaseArgs {
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

impl ExplainArgs {
    /// The plan request of the scope.
    pub fn request(&self) -> PlanRequest {
        let scope = if !self.table_name.is_empty() {
            ScopeRequest::Tables(self.table_name.clone())
        } else if let Some(p) = &self.product_name {
            ScopeRequest::Product(p.clone())
        } else if let Some(d) = &self.scope_dir {
            ScopeRequest::Dir(d.clone())
        } else if let Some(f) = &self.table_list_file_name {
            ScopeRequest::TableList(f.clone())
        } else {
            ScopeRequest::None
        };
        PlanRequest {
            pipelines: self.dir.pipelines.clone(),
            scope,
            allow_unknown: self.allow_unknown,
            ..PlanRequest::default()
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
