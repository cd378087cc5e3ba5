//! The project: [`load`] turns a pipelines tree into a [`Project`] — the scan ([`crate::scan`]: layout,
//! parallel read and parse, analysis cache), the inventory ([`crate::inventory`]) and the graph
//! ([`crate::lineage::link`]), with every diagnostic found on the way — and [`discover_pipelines`]
//! finds the tree from the current folder. Table names users give resolve by
//! [`crate::inventory::names`] ([`Project::resolve_table`]).

pub use crate::inventory::names::{NameError, Resolved};
pub mod summary;

pub use crate::scan::{Detail, Layout, ScanError, scan, scan_with};
pub use summary::LoadSummary;

use crate::config::Config;
use crate::diagnostics::Diagnostic;
use crate::graph::PipelineGraph;
use crate::inventory::Inventory;
use std::path::Path;

pub use crate::lineage::LoadOptions;

/// A loaded project: its inventory, its graph and every diagnostic found on the way.
#[derive(Debug, Clone)]
pub struct Project {
    pub inventory: Inventory,
    pub graph: PipelineGraph,
    /// Scan, inventory and lineage diagnostics, errors first.
    pub diagnostics: Vec<Diagnostic>,
    /// The key of everything the project was built from: the scan's inputs ([`crate::scan::ScanResult::inputs`]),
    /// the manifests the inventory read ([`Inventory::manifests_key`]), the configuration and the load
    /// options. Two loads with the same key give the same project, so
    /// the files derived from it alone are the same (see [`crate::fsutil::WrittenRecord::inputs`]).
    /// `None` when the scan's is.
    pub inputs: Option<u128>,
}

impl From<crate::lineage::Linked> for Project {
    fn from(l: crate::lineage::Linked) -> Project {
        Project {
            inventory: l.inventory,
            graph: l.graph,
            diagnostics: l.diagnostics,
            inputs: None,
        }
    }
}

impl Project {
    /// Frees the project on a thread of its own, for an operation that is done with it: at 100,000
    /// tables freeing its millions of small values takes about a second, which the command's report
    /// need not wait for (a process that exits meanwhile simply ends that thread).
    pub fn free_in_background(self) {
        free_in_background(self);
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

impl Project {
    /// Resolves a user-given table name among the project's tables ([`crate::inventory::names::resolve`]).
    ///
    /// Errors: as [`crate::inventory::names::resolve`].
    pub fn resolve_table(&self, given: &str) -> Result<Resolved, NameError> {
        crate::inventory::names::resolve(given, self.inventory.tables.keys().map(String::as_str))
    }
}

/// Drops `value` on a thread of its own (see [`Project::free_in_background`]): for the large values
/// of a whole tree (a scan, an inventory) that an operation is done with before its end.
pub fn free_in_background<T: Send + 'static>(value: T) {
    std::thread::spawn(move || drop(value));
}

/// Scans `root`, builds the inventory and the graph.
///
/// Errors: only when `root` is not a folder; everything else is in [`Project::diagnostics`].
pub fn load(root: &Path, config: &Config, options: LoadOptions) -> Result<Project, ScanError> {
    let started = std::time::Instant::now();
    let layout = Layout::with_overrides(&config.flinkpipe.layers);
    let scan = scan_with(root, &layout, Detail::Inventory)?;
    tracing::info!(
        folders = scan.folders.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "scanned and parsed"
    );
    let inventory = Inventory::build(&scan, config);
    let inputs = scan
        .inputs
        .zip(inventory.manifests_key)
        .and_then(|(scanned, manifests)| inputs_key(scanned, manifests, config, options));
    // The inventory holds what it needs of the analyses: free them while the graph is built (at
    // 100,000 tables they are most of the memory, and freeing millions of small values takes a
    // tenth of a second per 10,000 tables).
    let freed = std::thread::spawn(move || drop(scan));
    tracing::info!(
        tables = inventory.tables.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "inventory built"
    );
    let linked = crate::lineage::link(inventory, options);
    let _ = freed.join();
    let mut project = Project::from(linked);
    project.inputs = inputs;
    tracing::info!(
        edges = project.graph.edges().count(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "graph built"
    );
    Ok(project)
}

/// The key of a project's inputs ([`Project::inputs`]) from the scan's key, the manifests' key, the
/// configuration and the load options; `None` if the configuration cannot be serialised.
fn inputs_key(
    scanned: u128,
    manifests: u128,
    config: &Config,
    options: LoadOptions,
) -> Option<u128> {
    let config = serde_json::to_vec(config).ok()?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&scanned.to_le_bytes());
    h.update(&manifests.to_le_bytes());
    crate::scan::cache::hash_field(&mut h, &config);
    h.update(&[u8::from(options.allow_unknown)]);
    Some(h.digest128())
}

/// The key [`load`] would give the project at `root` ([`Project::inputs`]), known from the files'
/// stamps alone ([`crate::scan::probe`]; the manifests are read, they are small): no SQL file is
/// read or parsed, no inventory or graph built. `None` whenever the key cannot be had that way (the
/// cache is off, a SQL file changed since the last scan, the walk has something to report); a load
/// then says what the tree holds.
pub fn probe_inputs(root: &Path, config: &Config, options: LoadOptions) -> Option<u128> {
    let layout = Layout::with_overrides(&config.flinkpipe.layers);
    let (scanned, manifests) = crate::scan::probe(root, &layout)?;
    let manifests = crate::inventory::manifests_key(&manifests)?;
    inputs_key(scanned, manifests, config, options)
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
