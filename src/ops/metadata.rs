//! `pipeline build-all-metadata`: writes `pipeline_definition.json` in every table folder,
//! `DIR/pipeline_graph.json` and `DIR/inventory.json` as one all-or-nothing batch.

use super::{Context, OpsError};
use crate::fsutil::{Batch, to_json_pretty};
use crate::inventory::shift_left::{INVENTORY_FILE, to_inventory_file};
use crate::metadata::{self, GraphFile};
use crate::project::Project;
use std::path::{Path, PathBuf};

/// What was written.
#[derive(Debug, Clone)]
pub struct MetadataWritten {
    pub tables: usize,
    pub edges: usize,
    /// `pipeline_definition.json` files written.
    pub definitions: usize,
    pub graph_path: PathBuf,
    pub inventory_path: PathBuf,
    /// The content of `pipeline_graph.json`.
    pub graph: GraphFile,
}

/// Builds the project and writes its metadata. Diagnostics go to the console.
///
/// Errors: errors in the project (no file is changed), a file that cannot be replaced (every file is
/// put back).
pub fn build_all_metadata(
    ctx: &Context,
    pipelines: &Path,
    allow_unknown: bool,
) -> Result<MetadataWritten, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    ctx.recover_tree(pipelines, None)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        allow_unknown,
        "metadata not written: fix the errors above (no file was changed)",
    )?;
    ctx.recover_tree(pipelines, Some(&project.diagnostics))?;
    let written = write_metadata(&project, pipelines)?;
    Ok(MetadataWritten {
        tables: project.inventory.tables.len(),
        edges: project.graph.edges().count(),
        definitions: written - 1,
        graph_path: pipelines.join(metadata::GRAPH_FILE),
        inventory_path: pipelines.join(INVENTORY_FILE),
        graph: metadata::graph_file(&project),
    })
}

/// Writes every `pipeline_definition.json`, `pipeline_graph.json` and `inventory.json` of a loaded
/// project in one batch; returns the number of metadata files written (definitions and the graph).
pub fn write_metadata(project: &Project, pipelines: &Path) -> Result<usize, OpsError> {
    write_metadata_with(
        project,
        pipelines,
        "flinkpipe pipeline build-all-metadata",
        Vec::new(),
    )
}

/// [`write_metadata`] with more files (path, content) written in the same all-or-nothing batch;
/// `command` is what runs, for the batch marker (see [`crate::fsutil::Batch`]).
///
/// Errors: a file that cannot be written (every file is as it was), SIGINT
/// ([`OpsError::Interrupted`]).
pub fn write_metadata_with(
    project: &Project,
    pipelines: &Path,
    command: &str,
    extra: Vec<(PathBuf, String)>,
) -> Result<usize, OpsError> {
    let batch = Batch::begin(pipelines, command, metadata::REPAIR)?;
    // inventory.json and the caller's files are staged first and committed with the metadata files.
    let inventory = (
        pipelines.join(INVENTORY_FILE),
        to_json_pretty(&to_inventory_file(&project.inventory)),
    );
    let mut staged = Vec::new();
    for (path, text) in std::iter::once(inventory).chain(extra) {
        match batch.stage(&path, text.as_bytes()) {
            Ok(s) => staged.extend(s),
            Err(e) => {
                batch.abandon(staged);
                return Err(e.into());
            }
        }
    }
    Ok(metadata::write_all_with(project, batch, staged)?)
}
