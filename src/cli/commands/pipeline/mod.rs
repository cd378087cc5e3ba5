//! `flinkpipe pipeline …`: metadata, validation, reports, graph export, execution plans, blue-green,
//! deploy, undeploy, status and explain.

mod blue_green;
mod build_all_metadata;
mod build_execution_plan;
mod column_lineage;
mod decommission;
mod deploy;
mod explain;
mod graph;
mod report;
mod status;
mod undeploy;
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
        ),
        PipelineCommand::Report {
            table,
            dir,
            children_too,
            parent_only,
            allow_unknown,
        } => report::exec(
            inv,
            &dir.pipelines,
            table,
            *children_too,
            *parent_only,
            *allow_unknown,
        ),
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
        PipelineCommand::BuildExecutionPlan(args) => build_execution_plan::exec(inv, args),
        PipelineCommand::BlueGreen(args) => blue_green::exec(inv, args),
        PipelineCommand::Deploy(args) => deploy::exec(inv, args),
        PipelineCommand::Undeploy(args) => undeploy::exec(inv, args),
        PipelineCommand::Status(args) => status::exec(inv, args),
        PipelineCommand::Decommission(args) => decommission::exec(inv, args),
        PipelineCommand::Explain(args) => explain::exec(inv, args),
    }
}
