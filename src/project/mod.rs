//! The project: where the pipelines tree is, how its folders map to layers and products
//! ([`layout`]), the scan that reads and parses every table folder ([`scan()`], with its analysis
//! [`cache`]), and [`load`], which turns a tree into a [`Project`] — inventory, graph
//! ([`crate::lineage`]) and every diagnostic; [`names`] resolves the table names users give.

pub mod cache;
pub mod layout;
pub mod names;
pub mod scan;

pub use layout::Layout;
pub use names::{NameError, Resolved};
pub use scan::{ScanError, ScanResult, SqlFile, TableFolder, scan};

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::graph::PipelineGraph;
use crate::inventory::Inventory;
use std::path::Path;

/// Options of the commands that build the graph.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Keep unknown references as external nodes (warning) instead of failing (error).
    pub allow_unknown: bool,
}

/// A loaded project: its inventory, its graph and every diagnostic found on the way.
#[derive(Debug, Clone)]
pub struct Project {
    pub inventory: Inventory,
    pub graph: PipelineGraph,
    /// Scan, inventory and lineage diagnostics, errors first.
    pub diagnostics: Vec<Diagnostic>,
}

impl Project {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Scans `root`, builds the inventory and the graph.
///
/// Errors: only when `root` is not a folder; everything else is in [`Project::diagnostics`].
pub fn load(root: &Path, config: &Config, options: LoadOptions) -> Result<Project, ScanError> {
    let started = std::time::Instant::now();
    let layout = Layout::with_overrides(&config.flinkpipe.layers);
    let scan = scan(root, &layout)?;
    tracing::info!(
        folders = scan.folders.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "scanned and parsed"
    );
    let inventory = Inventory::build(&scan, config);
    tracing::info!(
        tables = inventory.tables.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "inventory built"
    );
    let project = crate::lineage::link(inventory, options);
    tracing::info!(
        edges = project.graph.edges().count(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "graph built"
    );
    Ok(project)
}

/// The pipelines folder of the project the current folder `cwd` is in, for commands run without DIR
/// or `$PIPELINES`: `cwd/pipelines` when it is a folder, else the nearest ancestor folder named
/// `pipelines` (`cwd` is inside the tree, for example a table folder), else the nearest ancestor that
/// holds a `pipelines` folder (`cwd` is elsewhere in the project, for example `docs/`). `None` when
/// no ancestor qualifies.
pub fn discover_pipelines(cwd: &Path) -> Option<std::path::PathBuf> {
    if cwd.join("pipelines").is_dir() {
        return Some(cwd.join("pipelines"));
    }
    cwd.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "pipelines") && a.is_dir())
        .or_else(|| cwd.ancestors().find(|a| a.join("pipelines").is_dir()))
        .map(|a| {
            if a.file_name().is_some_and(|n| n == "pipelines") {
                a.to_path_buf()
            } else {
                a.join("pipelines")
            }
        })
}
