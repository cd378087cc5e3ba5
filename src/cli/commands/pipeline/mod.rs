//! `flinkpipe pipeline …`: metadata, validation, reports, graph export, execution plans, blue-green,
//! deploy, undeploy, status and explain.

mod blue_green;
mod build_all_metadata;
mod build_execution_plan;
mod build_metadata;
mod column_lineage;
mod decommission;
mod delete_all_metadata;
mod deploy;
mod explain;
mod graph;
mod health;
mod prepare;
mod release_check;
mod report;
mod rollback;
mod status;
mod test_live;
mod undeploy;
mod upgrade_check;
mod validate;

use crate::cli::args::PipelineCommand;
use crate::cli::{CmdResult, Invocation};

pub fn run(inv: &Invocation, cmd: &PipelineCommand) -> CmdResult {
    match cmd {
        PipelineCommand::BuildAllMetadata { dir, allow_unknown } => {
            build_all_metadata::exec(inv, &dir.pipelines, *allow_unknown)
        }
        PipelineCommand::Validate {
            dir,
            allow_unknown,
            since,
            fail_on,
            strict,
            deny,
            engine,
        } => validate::exec(
            inv,
            &dir.pipelines,
            *allow_unknown,
            crate::ops::validate::Gate {
                strict: *strict,
                deny: deny.clone(),
            },
            since.as_deref(),
            fail_on.is_some(),
            *engine == crate::cli::args::EngineChoice::Local,
        ),
        PipelineCommand::Report {
            table,
            dir,
            children_too,
            parent_only,
            formats,
            allow_unknown,
            ..
        } => report::exec(
            inv,
            &dir.pipelines,
            table,
            *children_too,
            *parent_only,
            formats,
            *allow_unknown,
        ),
        PipelineCommand::BuildMetadata {
            dml_file,
            dir,
            allow_unknown,
        } => build_metadata::exec(inv, &dir.pipelines, dml_file, *allow_unknown),
        PipelineCommand::FieldLineage {
            table_name,
            dir,
            output_dir,
            open,
        } => column_lineage::field_lineage(
            inv,
            &dir.pipelines,
            table_name,
            output_dir.as_deref(),
            *open,
        ),
        PipelineCommand::Healthcheck { product_name, dir } => {
            health::healthcheck(inv, &dir.pipelines, product_name)
        }
        PipelineCommand::ReportRunningStatements {
            dir,
            table_name,
            product_name,
            scope_dir,
            from_date,
        } => health::running(
            inv,
            &dir.pipelines,
            table_name.as_deref(),
            product_name.as_deref(),
            scope_dir.as_deref(),
            from_date.as_deref(),
        ),
        PipelineCommand::AnalyzePoolUsage {
            dir,
            product_name,
            directory,
        } => health::pool_usage(
            inv,
            &dir.pipelines,
            product_name.as_deref(),
            directory.as_deref(),
        ),
        PipelineCommand::Prepare {
            sql_file,
            dir,
            compute_pool_id,
            timeout,
        } => prepare::exec(
            inv,
            sql_file,
            &dir.pipelines,
            compute_pool_id.as_deref(),
            *timeout,
        ),
        PipelineCommand::DeleteAllMetadata {
            dir,
            no_ack,
            dry_run,
        } => delete_all_metadata::exec(inv, &dir.pipelines, *no_ack, *dry_run),
        PipelineCommand::Graph {
            dir,
            select,
            format,
            allow_unknown,
        } => graph::exec(
            inv,
            &dir.pipelines,
            select.as_deref(),
            *format,
            *allow_unknown,
        ),
        PipelineCommand::ColumnLineage {
            dir,
            table,
            column,
            upstream,
            downstream,
            format,
            allow_unknown,
        } => column_lineage::exec(
            inv,
            &dir.pipelines,
            &crate::ops::column_lineage::LineageRequest {
                table: table.clone(),
                column: column.clone(),
                upstream: *upstream,
                downstream: *downstream,
                allow_unknown: *allow_unknown,
            },
            *format,
        ),
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
