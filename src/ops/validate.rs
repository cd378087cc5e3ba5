//! `pipeline validate` (the project: duplicates, unknown references, cycles, statement-name
//! collisions, …) and `table validate-table-names` (the naming convention).

use super::{Context, OpsError};
use crate::diagnostics::Diagnostic;
use crate::plan::StatementNaming;
use crate::project::{Layout, scan};
use crate::scaffold::naming;
use serde::Serialize;
use std::path::Path;

/// The result of `pipeline validate`.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    pub tables: usize,
    pub edges: usize,
    /// Every diagnostic: the project's, then statement-name collisions.
    pub diagnostics: Vec<Diagnostic>,
}

impl Validation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks the project. The project's diagnostics and the statement-name collisions (which depend on
/// the configuration) go to the console and into the result.
///
/// Errors: the tree cannot be read.
pub fn validate(
    ctx: &Context,
    pipelines: &Path,
    allow_unknown: bool,
) -> Result<Validation, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let mut project = ctx.load_project(&cfg, pipelines, allow_unknown)?;
    let collisions = crate::plan::naming::collisions(&project, &StatementNaming::from_config(&cfg));
    ctx.console
        .diagnostics(&collisions, super::source_base(pipelines).as_deref());
    project.diagnostics.extend(collisions);
    Ok(Validation {
        tables: project.inventory.tables.len(),
        edges: project.graph.edges().count(),
        diagnostics: project.diagnostics,
    })
}

/// The result of `table validate-table-names`.
#[derive(Debug, Clone, Serialize)]
pub struct NamingLint {
    /// Table folders checked.
    pub folders: usize,
    pub findings: Vec<Diagnostic>,
}

/// Checks file names, table names per layer and product, `changelog.mode`, cleanup policy and schema
/// contexts with the project's configuration ([`Context::project_config`]). The findings are
/// returned, not sent to the console.
///
/// Errors: the tree cannot be read, an invalid configuration.
pub fn validate_table_names(ctx: &Context, pipelines: &Path) -> Result<NamingLint, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let scanned = scan(pipelines, &Layout::with_overrides(&cfg.flinkpipe.layers))?;
    let findings = naming::lint(&scanned, &naming::Convention::from_config(&cfg));
    Ok(NamingLint {
        folders: scanned.folders.len(),
        findings,
    })
}
