//! What a load of the project found, kept for the next run with the same inputs.
//!
//! A [`LoadSummary`] holds the key of a project's inputs ([`super::Project::inputs`]), its number of
//! tables and edges and every diagnostic of the load. It lives beside the analysis cache
//! (`<cache folder>/summary-<hash of the root>.cache`, see [`crate::scan::cache::root_file`]) and is
//! written by `build-all-metadata` once its files are in place. A later run whose inputs have the
//! same key ([`super::probe_inputs`]: from the files' stamps, nothing parsed) would load the very
//! same project, so it can report the summary instead: the same counts and the same diagnostics,
//! without reading a cached analysis or building the inventory and the graph.
//!
//! Like the cache, it is only an optimisation: a missing, foreign or damaged summary (or one of
//! another key) is not used, and one that cannot be written is ignored. Format: JSON
//! `{"format": 2, "inputs": "<32 hex digits>", "tables": N, "edges": N, "definitions": N,
//! "diagnostics": [...]}`, each diagnostic as `--output json` gives it.

use super::Project;
use crate::diagnostics::{Diagnostic, Severity, WARNING_CLASSES};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bumped whenever the layout changes.
const FORMAT: u32 = 2;

/// The counts and diagnostics of a loaded project with the key of its inputs (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSummary {
    /// [`Project::inputs`] of the project summed up.
    pub inputs: u128,
    /// Tables of the inventory (externals included), as `project.inventory.tables.len()`.
    pub tables: usize,
    /// Edges of the graph.
    pub edges: usize,
    /// `pipeline_definition.json` files the load's metadata has (one per table that is not external).
    pub definitions: usize,
    /// The project's diagnostics, in its order (warnings only: a project with errors writes nothing).
    pub diagnostics: Vec<Diagnostic>,
}

/// A diagnostic as stored; its code must be one of [`WARNING_CLASSES`] to be read back.
#[derive(Serialize, Deserialize)]
struct StoredDiagnostic {
    code: String,
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    inputs: String,
    tables: usize,
    edges: usize,
    definitions: usize,
    diagnostics: Vec<StoredDiagnostic>,
}

impl LoadSummary {
    /// The summary of `project`, whose metadata has `definitions` definition files; `None` when it
    /// has no inputs key, or a diagnostic that is an error or of a class outside [`WARNING_CLASSES`]
    /// (which could not be read back as it is).
    pub fn of(project: &Project, definitions: usize) -> Option<LoadSummary> {
        let storable = project
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning && WARNING_CLASSES.contains(&d.code));
        storable.then_some(())?;
        Some(LoadSummary {
            inputs: project.inputs?,
            tables: project.inventory.tables.len(),
            edges: project.graph.edges().count(),
            definitions,
            diagnostics: project.diagnostics.clone(),
        })
    }

    /// The summary stored for the tree at `root` if it is of the inputs key `inputs`.
    pub fn load(root: &Path, inputs: u128) -> Option<LoadSummary> {
        let bytes = std::fs::read(crate::scan::cache::root_file(root, "summary")?).ok()?;
        let stored: Stored = serde_json::from_slice(&bytes).ok()?;
        if stored.format != FORMAT || u128::from_str_radix(&stored.inputs, 16).ok()? != inputs {
            return None;
        }
        let diagnostics = stored
            .diagnostics
            .into_iter()
            .map(|d| {
                let code = WARNING_CLASSES.iter().find(|c| **c == d.code)?;
                Some(Diagnostic {
                    severity: Severity::Warning,
                    code,
                    file: d.file,
                    line: d.line,
                    column: d.column,
                    message: d.message,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(LoadSummary {
            inputs,
            tables: stored.tables,
            edges: stored.edges,
            definitions: stored.definitions,
            diagnostics,
        })
    }

    /// Stores the summary for the tree at `root` (atomically; errors are ignored, see the module
    /// docs).
    pub fn save(&self, root: &Path) {
        let Some(path) = crate::scan::cache::root_file(root, "summary") else {
            return;
        };
        let stored = Stored {
            format: FORMAT,
            inputs: format!("{:032x}", self.inputs),
            tables: self.tables,
            edges: self.edges,
            definitions: self.definitions,
            diagnostics: self
                .diagnostics
                .iter()
                .map(|d| StoredDiagnostic {
                    code: d.code.to_string(),
                    file: d.file.clone(),
                    line: d.line,
                    column: d.column,
                    message: d.message.clone(),
                })
                .collect(),
        };
        let Ok(bytes) = serde_json::to_vec(&stored) else {
            return;
        };
        if let Some(dir) = path.parent()
            && std::fs::create_dir_all(dir).is_err()
        {
            return;
        }
        if let Err(e) = crate::fsutil::replace_atomic(&path, &bytes) {
            tracing::debug!(error = %e, summary = %path.display(), "load summary not written");
        }
    }
}
