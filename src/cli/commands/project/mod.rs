//! `flinkpipe project …`: projects, project-wide reports, changes since a git ref, compute pools and
//! statement housekeeping.

mod assess_unused_tables;
mod create_compute_pool;
mod delete_all_compute_pools;
mod delete_compute_pool;
mod delete_integration_tests;
mod delete_unused_tables;
mod get_statement_list;
mod housekeep_statements;
mod init;
mod init_integration_tests;
mod isolate_data_product;
mod list_compute_pools;
mod list_environments;
mod list_impacted_tables;
mod list_modified_files;
mod list_tables_with_one_child;
mod list_topics;
mod report_table_cross_products;
mod run_integration_tests;
mod run_unit_tests;
mod update_tables_version;
mod update_ut_ddl;
mod validate_config;

use crate::cli::args::ProjectCommand;
use crate::cli::{CmdResult, Invocation};

pub fn run(inv: &Invocation, cmd: &ProjectCommand) -> CmdResult {
    match cmd {
        ProjectCommand::Init(args) => init::exec(inv, args),
        ProjectCommand::ReportTableCrossProducts { dir, allow_unknown } => {
            report_table_cross_products::exec(inv, &dir.pipelines, *allow_unknown)
        }
        ProjectCommand::ListTablesWithOneChild { dir, allow_unknown } => {
            list_tables_with_one_child::exec(inv, &dir.pipelines, *allow_unknown)
        }
        ProjectCommand::ListModifiedFiles {
            dir,
            refs,
            output_dir,
            offline,
        } => list_modified_files::exec(inv, &dir.pipelines, refs, output_dir.as_deref(), *offline),
        ProjectCommand::ListImpactedTables {
            dir,
            refs,
            modified_files_path,
            output_dir,
        } => list_impacted_tables::exec(
            inv,
            &dir.pipelines,
            refs,
            modified_files_path.as_deref(),
            output_dir.as_deref(),
        ),
        ProjectCommand::UpdateTablesVersion(args) => update_tables_version::exec(inv, args),
        ProjectCommand::UpdateUtDdl(args) => update_ut_ddl::exec(inv, args),
        ProjectCommand::RunUnitTests(args) => run_unit_tests::exec(inv, args),
        ProjectCommand::ListComputePools { dir } => list_compute_pools::exec(inv, &dir.pipelines),
        ProjectCommand::CreateComputePool(args) => create_compute_pool::exec(inv, args),
        ProjectCommand::DeleteComputePool(args) => delete_compute_pool::exec(inv, args),
        ProjectCommand::HousekeepStatements(args) => housekeep_statements::exec(inv, args),
        ProjectCommand::DeleteAllComputePools(args) => delete_all_compute_pools::exec(inv, args),
        ProjectCommand::ListTopics {
            project_path,
            pipelines,
        } => list_topics::exec(inv, project_path, pipelines),
        ProjectCommand::AssessUnusedTables {
            dir,
            no_topics,
            output_file,
            allow_unknown,
            ..
        } => assess_unused_tables::exec(
            inv,
            &dir.pipelines,
            !*no_topics,
            output_file.as_deref(),
            *allow_unknown,
        ),
        ProjectCommand::DeleteUnusedTables {
            table_list_file,
            pipelines,
            dry_run,
            no_ack,
            timeout,
        } => {
            delete_unused_tables::exec(inv, table_list_file, pipelines, *dry_run, *no_ack, *timeout)
        }
        ProjectCommand::IsolateDataProduct {
            product_name,
            source_folder,
            target_folder,
        } => isolate_data_product::exec(inv, product_name, source_folder, target_folder),
        ProjectCommand::InitIntegrationTests(args) => init_integration_tests::exec(inv, args),
        ProjectCommand::RunIntegrationTests(args) => run_integration_tests::exec(inv, args),
        ProjectCommand::DeleteIntegrationTests(args) => delete_integration_tests::exec(inv, args),
        ProjectCommand::ListEnvironments { dir } => list_environments::exec(inv, &dir.pipelines),
        ProjectCommand::ValidateConfig { target } => validate_config::exec(inv, *target),
        ProjectCommand::GetStatementList {
            compute_pool_id,
            dir,
            allow_unknown,
        } => get_statement_list::exec(inv, &dir.pipelines, compute_pool_id, *allow_unknown),
    }
}
