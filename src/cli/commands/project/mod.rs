//! `flinkpipe project …`: projects, project-wide reports, changes since a git ref, compute pools and
//! statement housekeeping.

pub mod assess_unused_tables;
pub mod create_compute_pool;
pub mod delete_all_compute_pools;
pub mod delete_compute_pool;
pub mod delete_integration_tests;
pub mod delete_unused_tables;
pub mod get_statement_list;
pub mod housekeep_statements;
pub mod init;
pub mod init_integration_tests;
pub mod isolate_data_product;
pub mod list_compute_pools;
pub mod list_environments;
pub mod list_impacted_tables;
pub mod list_modified_files;
pub mod list_tables_with_one_child;
pub mod list_topics;
pub mod report_table_cross_products;
pub mod run_integration_tests;
pub mod run_unit_tests;
pub mod update_tables_version;
pub mod update_ut_ddl;
pub mod validate_config;

use crate::cli::{CmdResult, Invocation};

/// The commands of `flinkpipe project`, in the order `--help` lists them.
#[derive(Debug, clap::Subcommand)]
pub enum ProjectCommand {
    /// Create a project: pipelines/ layer folders, a commented config.yaml, .gitignore and README.md.
    /// Never overwrites a file.
    Init(init::Args),
    /// List tables whose parents or children belong to another product.
    ReportTableCrossProducts(report_table_cross_products::Args),
    /// List tables that have exactly one child (candidates for merging statements).
    ListTablesWithOneChild(list_tables_with_one_child::Args),
    /// List the files changed since a git ref (read-only: never checks out) and write
    /// modified_flink_files.json and modified_flink_files.txt.
    ListModifiedFiles(list_modified_files::Args),
    /// List the descendants impacted by the changes since a git ref (or listed in a
    /// modified_flink_files.json) and write impacted_tables.json.
    ListImpactedTables(list_impacted_tables::Args),
    /// Run the unit tests of many tables (every table with a tests/ folder, or a product, a folder,
    /// a list, or the impacted set) with one summary; exit 1 when any fails.
    RunUnitTests(run_unit_tests::Args),
    /// Give the listed tables and all their descendants their next version (`t` → `t_v2`, `t_v2` → `t_v3`),
    /// rewriting DDL and DML by token spans, then rebuild the inventory and metadata.
    UpdateTablesVersion(update_tables_version::Args),
    /// Bring the unit-test folders up to date with their parents' DDLs (shift_left's command): each
    /// foundation DDL of a changed table gets its column list, each CSV input its columns (added
    /// ones empty, dropped ones removed); a diff first, written all or nothing unless --dry-run.
    UpdateUtDdl(update_ut_ddl::Args),
    /// List the compute pools of the Confluent Cloud environment: phase, CFUs in use and maximum,
    /// and what of the configuration sends statements there (a Cloud API key:
    /// SL_CONFLUENT_CLOUD_API_KEY / SL_CONFLUENT_CLOUD_API_SECRET).
    ListComputePools(list_compute_pools::Args),
    /// Create a compute pool in the environment's cloud and region and wait until it is
    /// PROVISIONED (a Cloud API key).
    CreateComputePool(create_compute_pool::Args),
    /// Delete a compute pool; refused while statements of the project run in it (a Cloud API key).
    DeleteComputePool(delete_compute_pool::Args),
    /// Delete (or stop, or resume) statements that pile up: by name prefix (default 'workspace'),
    /// phase (default COMPLETED and FAILED), age and compute pool, from one listing; never a running
    /// statement of the project unless named with --statement-name.
    HousekeepStatements(housekeep_statements::Args),
    /// Check every key of the configuration file (type, allowed values, required for the target) and
    /// print all problems at once with their line numbers; exit 1 when there is one.
    ValidateConfig(validate_config::Args),
    /// Delete every compute pool whose display name contains PRODUCT (or those listed in
    /// --compute-pool-list-file): lists them with what is in them, keeps protected ones (statements
    /// of the project or of an open release, pools the configuration uses), asks, then deletes (a
    /// Cloud API key).
    DeleteAllComputePools(delete_all_compute_pools::Args),
    /// List the topics of the configured Kafka (the SQL Gateway's broker, or the Confluent Cloud
    /// cluster's Kafka REST API with a Kafka API key: SL_KAFKA_API_KEY / SL_KAFKA_API_SECRET), each
    /// with the table that owns it, and write PATH/topic_list.txt (shift_left's format).
    ListTopics(list_topics::Args),
    /// Tables of the tree that no running statement reads or writes (from the SQL the target runs),
    /// and with topics the Kafka topics nobody uses; writes shift_left's unused_tables_<time>.txt.
    AssessUnusedTables(assess_unused_tables::Args),
    /// Drop the tables listed in FILE (one per line, or the report of assess-unused-tables) after
    /// checking each is still unused, not read in the tree and not a declared sink; lists and asks
    /// first.
    DeleteUnusedTables(delete_unused_tables::Args),
    /// Write the integration tests of a sink's subgraph under its tests/integration/: rows for every
    /// source, the sink's expected rows (not filled in yet) and the definitions. Never overwrites a file.
    InitIntegrationTests(init_integration_tests::Args),
    /// Run the integration tests of a sink: every statement of its subgraph on test tables
    /// (`<t>_it`), the sources fed, the sink's changelog folded and compared; exit 1 when one fails.
    RunIntegrationTests(run_integration_tests::Args),
    /// Remove the statements, test tables and topics of a sink's integration tests (also what a
    /// killed run left).
    DeleteIntegrationTests(delete_integration_tests::Args),
    /// Copy one product's tables and every ancestor they read into TARGET_FOLDER/pipelines (external
    /// tables declared in its seeds/external_tables.json, config.yaml copied): a project that
    /// validates on its own, or nothing is written.
    IsolateDataProduct(isolate_data_product::Args),
    /// List the environments of the Confluent Cloud organization, the configured one marked (a Cloud
    /// API key).
    ListEnvironments(list_environments::Args),
    /// Every statement on a compute pool: phase, the table of the project that owns it (or none: not
    /// ours) and its age (a Flink API key).
    GetStatementList(get_statement_list::Args),
}

/// Runs one parsed `project` command.
pub fn run(inv: &Invocation, cmd: &ProjectCommand) -> CmdResult {
    match cmd {
        ProjectCommand::Init(args) => init::exec(inv, args),
        ProjectCommand::ReportTableCrossProducts(args) => {
            report_table_cross_products::exec(inv, args)
        }
        ProjectCommand::ListTablesWithOneChild(args) => list_tables_with_one_child::exec(inv, args),
        ProjectCommand::ListModifiedFiles(args) => list_modified_files::exec(inv, args),
        ProjectCommand::ListImpactedTables(args) => list_impacted_tables::exec(inv, args),
        ProjectCommand::RunUnitTests(args) => run_unit_tests::exec(inv, args),
        ProjectCommand::UpdateTablesVersion(args) => update_tables_version::exec(inv, args),
        ProjectCommand::UpdateUtDdl(args) => update_ut_ddl::exec(inv, args),
        ProjectCommand::ListComputePools(args) => list_compute_pools::exec(inv, args),
        ProjectCommand::CreateComputePool(args) => create_compute_pool::exec(inv, args),
        ProjectCommand::DeleteComputePool(args) => delete_compute_pool::exec(inv, args),
        ProjectCommand::HousekeepStatements(args) => housekeep_statements::exec(inv, args),
        ProjectCommand::ValidateConfig(args) => validate_config::exec(inv, args),
        ProjectCommand::DeleteAllComputePools(args) => delete_all_compute_pools::exec(inv, args),
        ProjectCommand::ListTopics(args) => list_topics::exec(inv, args),
        ProjectCommand::AssessUnusedTables(args) => assess_unused_tables::exec(inv, args),
        ProjectCommand::DeleteUnusedTables(args) => delete_unused_tables::exec(inv, args),
        ProjectCommand::InitIntegrationTests(args) => init_integration_tests::exec(inv, args),
        ProjectCommand::RunIntegrationTests(args) => run_integration_tests::exec(inv, args),
        ProjectCommand::DeleteIntegrationTests(args) => delete_integration_tests::exec(inv, args),
        ProjectCommand::IsolateDataProduct(args) => isolate_data_product::exec(inv, args),
        ProjectCommand::ListEnvironments(args) => list_environments::exec(inv, args),
        ProjectCommand::GetStatementList(args) => get_statement_list::exec(inv, args),
    }
}
