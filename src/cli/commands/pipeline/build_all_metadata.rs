//! `flinkpipe pipeline build-all-metadata [DIR]`: `pipeline_definition.json` in every table folder,
//! `DIR/pipeline_graph.json` and `DIR/inventory.json`, all or nothing.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::metadata;
use std::path::Path;

pub fn exec(inv: &Invocation, pipelines: &Path, allow_unknown: bool) -> CmdResult {
    let w = metadata::build_all_metadata(&inv.ctx, pipelines, allow_unknown)?;
    if inv.json() {
        print_json(&w.graph);
    } else {
        println!(
            "{} tables, {} edges: wrote {} pipeline_definition.json files, {} and {}",
            w.tables,
            w.edges,
            w.definitions,
            w.graph_path.display(),
            w.inventory_path.display()
        );
    }
    Ok(true)
}
