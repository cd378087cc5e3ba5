//! `flinkpipe pipeline …`: metadata, validation, reports, graph export, execution plans, blue-green,
//! deploy, undeploy, status and explain.

pub mod analyze_pool_usage;
pub mod blue_green;
pub mod build_all_metadata;
pub mod build_execution_plan;
pub mod build_metadata;
pub mod column_lineage;
pub mod decommission;
pub mod delete_all_metadata;
pub mod deploy;
pub mod explain;
pub mod field_lineage;
pub mod graph;
pub mod healthcheck;
pub mod prepare;
pub mod release_check;
pub mod report;
pub mod report_running_statements;
pub mod rollback;
pub mod status;
pub mod test_live;
pub mod undeploy;
pub mod upgrade_check;
pub mod validate;

use crate::cli::{CmdResult, Invocation};

/// The commands of `flinkpipe pipeline`, in the order `--help` lists them.
#[derive(Debug, clap::Subcommand)]
pub enum PipelineCommand {
    /// Write pipeline_definition.json in every table folder, DIR/pipeline_graph.json and DIR/inventory.json.
    BuildAllMetadata(build_all_metadata::Args),
    /// Write the metadata of the one table whose DML (or DDL) is DML_FILE: its
    /// pipeline_definition.json, and those of its parents and children, which name it (shift_left's
    /// `build-metadata`).
    BuildMetadata(build_metadata::Args),
    /// A health verdict per table of PRODUCT from its statements' live phases, SQL drift and
    /// backlog (shift_left's healthcheck); exit 1 when a table is not running, degraded or failed.
    Healthcheck(healthcheck::Args),
    /// The running statements of the scope (default: every table) with records in and out and
    /// pending records since --from-date (default: the last 10 minutes).
    ReportRunningStatements(report_running_statements::Args),
    /// CFUs per compute pool, the project's running statements in each, and consolidation advice
    /// (a Cloud API key).
    AnalyzePoolUsage(analyze_pool_usage::Args),
    /// shift_left's column lineage of TABLE: its upstream and downstream columns (the JSON of
    /// `column-lineage`) written as <DIR>/<table>_lineage.json; --open also writes the HTML page.
    FieldLineage(field_lineage::Args),
    /// Run one-off SQL (ALTERs, …) on the configured target with the project's catalog and database:
    /// statement by statement, each waited for until COMPLETED and removed; the first failure stops.
    Prepare(prepare::Args),
    /// Delete every pipeline_definition.json under DIR (and DIR/pipeline_graph.json): lists them, asks,
    /// then removes all of them or none.
    DeleteAllMetadata(delete_all_metadata::Args),
    /// Check the project: duplicate tables, empty folders, DDL/DML mismatches, unknown references, cycles.
    Validate(validate::Args),
    /// Print a table's parent tree (and child tree with --children-too).
    Report(report::Args),
    /// Export the dependency graph (or a selection of it).
    Graph(graph::Args),
    /// Column-level lineage: each sink column with the source columns it is computed from (direct)
    /// and those that shape its rows (indirect: filters, joins, grouping, windows), across the
    /// project; statements that cannot be resolved with certainty are listed, never guessed.
    ColumnLineage(column_lineage::Args),
    /// For each statement whose DML changed since a git ref: can the new SQL take over the running
    /// statement's state? `unchanged`, `stateless` (restart from offsets), `state-compatible`
    /// (restore from a savepoint), `state-compatible-semantics-changed` or `state-incompatible` (a
    /// new version), `unknown`; from the compiled plans of the local Flink (`--engine local`: fails,
    /// exit 2, when it does not answer; without `--engine` it is used when it answers) or the SQL
    /// front end (`--engine offline`). Exit 1 when a change needs a
    /// new version.
    UpgradeCheck(upgrade_check::Args),
    /// Compute the execution plan of a table, product, folder or table list. Writes nothing anywhere;
    /// the current statement phases come from --statement-status, else from the configured target
    /// (one read-only list call) unless --offline.
    BuildExecutionPlan(build_execution_plan::Args),
    /// Version the subgraph impacted since a git ref for a blue-green deploy (`t` → `t_v2`): prints the
    /// diff and the green plan; `--apply` rewrites the files and rebuilds the inventory and metadata.
    BlueGreen(blue_green::Args),
    /// Execute the plan on the configured target — Confluent Cloud for Apache Flink, or an Apache
    /// Flink SQL Gateway when flinkpipe.gateway.url is set: parents first, independent tables in
    /// parallel; a failure skips its descendants; a journal makes `--resume` safe after a crash or
    /// Ctrl-C (exit 130). (`--version` here is shift_left's: a release version, not flinkpipe's.)
    #[command(disable_version_flag = true)]
    Deploy(deploy::Args),
    /// Delete the statements of the scope's tables and their descendants, children first (tables are
    /// dropped only with --allow-drop).
    Undeploy(undeploy::Args),
    /// Live phase of every statement of the scope (default: all tables) against the plan, and SQL
    /// drift between the deployed text and the files.
    Status(status::Args),
    /// After a blue-green: stop or delete the blue statements of the green sets recorded in
    /// pipelines/blue_green.json (children first), and with --orphans every statement under the
    /// statement-name prefix that no table owns; never a statement of a table of the tree.
    Decommission(decommission::Args),
    /// Before cut-over: compare each green table of the open blue-green release with its blue table
    /// (bounded snapshot reads like `table preview`): row counts, keys only in blue / only in green,
    /// values that differ, null counts, numeric sum/min/max, freshness and lag; a verdict per table
    /// (same, expected-difference, catching-up, differs). Exit 1 unless every table is same or
    /// expected-difference.
    ReleaseCheck(release_check::Args),
    /// Green is not trusted: stop (or delete) the green statements of the open blue-green release,
    /// children first, leave blue untouched, record the release as rolled back in
    /// pipelines/blue_green.json and print the git command that restores the blue SQL. A release
    /// whose blue statements were deleted (decommission --delete) cannot be rolled back.
    Rollback(rollback::Args),
    /// Run the data tests of tests/live_tests.yaml (not_null, unique, accepted_values, row_count,
    /// freshness, custom SQL) on the deployed tables as bounded queries; failing rows (up to N),
    /// JUnit; exit 1 on a failure. --blue-green tests the green tables of the open release.
    TestLive(test_live::Args),
    /// Print the engine's plan (EXPLAIN) of each statement of the scope's tables, as they would be
    /// sent (the environment's rewrite rules applied).
    Explain(explain::Args),
}

/// Runs one parsed `pipeline` command.
pub fn run(inv: &Invocation, cmd: &PipelineCommand) -> CmdResult {
    match cmd {
        PipelineCommand::BuildAllMetadata(args) => build_all_metadata::exec(inv, args),
        PipelineCommand::BuildMetadata(args) => build_metadata::exec(inv, args),
        PipelineCommand::Healthcheck(args) => healthcheck::exec(inv, args),
        PipelineCommand::ReportRunningStatements(args) => {
            report_running_statements::exec(inv, args)
        }
        PipelineCommand::AnalyzePoolUsage(args) => analyze_pool_usage::exec(inv, args),
        PipelineCommand::FieldLineage(args) => field_lineage::exec(inv, args),
        PipelineCommand::Prepare(args) => prepare::exec(inv, args),
        PipelineCommand::DeleteAllMetadata(args) => delete_all_metadata::exec(inv, args),
        PipelineCommand::Validate(args) => validate::exec(inv, args),
        PipelineCommand::Report(args) => report::exec(inv, args),
        PipelineCommand::Graph(args) => graph::exec(inv, args),
        PipelineCommand::ColumnLineage(args) => column_lineage::exec(inv, args),
        PipelineCommand::UpgradeCheck(args) => upgrade_check::exec(inv, args),
        PipelineCommand::BuildExecutionPlan(args) => build_execution_plan::exec(inv, args),
        PipelineCommand::BlueGreen(args) => blue_green::exec(inv, args),
        PipelineCommand::Deploy(args) => deploy::exec(inv, args),
        PipelineCommand::Undeploy(args) => undeploy::exec(inv, args),
        PipelineCommand::Status(args) => status::exec(inv, args),
        PipelineCommand::Decommission(args) => decommission::exec(inv, args),
        PipelineCommand::ReleaseCheck(args) => release_check::exec(inv, args),
        PipelineCommand::Rollback(args) => rollback::exec(inv, args),
        PipelineCommand::TestLive(args) => test_live::exec(inv, args),
        PipelineCommand::Explain(args) => explain::exec(inv, args),
    }
}
