//! `flinkpipe pipeline …`: metadata, validation, reports, graph export, execution plans, blue-green,
//! deploy, undeploy, status and explain.

mod blue_green;
mod build_all_metadata;
mod build_execution_plan;
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
        PipelineCommand::BuildExecutionPlan(args) => build_execution_plan::exec(inv, args),
        PipelineCommand::BlueGreen(args) => blue_green::exec(inv, args),
        PipelineCommand::Deploy(args) => deploy::exec(inv, args),
        PipelineCommand::Undeploy(args) => undeploy::exec(inv, args),
        PipelineCommand::Status(args) => status::exec(inv, args),
        PipelineCommand::Decommission(args) => decommission::exec(inv, args),
        PipelineCommand::Explain(args) => explain::exec(inv, args),
    }
}
