//! `flinkpipe pipeline build-all-metadata [DIR]`: `pipeline_definition.json` in every table folder,
//! `DIR/pipeline_graph.json` and `DIR/inventory.json`, all or nothing.

use crate::cli::args::ProjectArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::metadata;

/// Options of `pipeline build-all-metadata`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let w = metadata::build_all_metadata(&inv.ctx, pipelines, allow_unknown, inv.json())?;
    if let Some(graph) = &w.graph {
        print_json(graph);
    } else {
        let state = |written: bool| if written { "written" } else { "unchanged" };
        println!(
            "{} tables, {} edges: pipeline_definition.json files {} written, {} unchanged; {} {}; {} {}",
            w.tables,
            w.edges,
            w.definitions_written,
            w.definitions_unchanged,
            w.graph_path.display(),
            state(w.graph_written),
            w.inventory_path.display(),
            state(w.inventory_written)
        );
    }
    Ok(true)
}
