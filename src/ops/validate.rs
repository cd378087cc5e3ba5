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
    let mut more = crate::plan::naming::collisions(&project, &StatementNaming::from_config(&cfg));
    more.extend(
        crate::fsutil::interrupted_batches(pipelines)
            .iter()
            .map(|b| interrupted_batch(b, pipelines, &project.inventory.root_name)),
    );
    ctx.console
        .diagnostics(&more, super::source_base(pipelines).as_deref());
    project.diagnostics.extend(more);
    Ok(Validation {
        tables: project.inventory.tables.len(),
        edges: project.graph.edges().count(),
        diagnostics: project.diagnostics,
    })
}

/// The diagnostic for a batch of files whose writer was killed (see [`crate::fsutil::Batch`]): an error
/// when the tree is part old, part new (killed while replacing files or putting them back), a warning
/// when only temporary files remain; each names the command that repairs the tree.
fn interrupted_batch(
    b: &crate::fsutil::InterruptedBatch,
    pipelines: &Path,
    root_name: &str,
) -> Diagnostic {
    use crate::fsutil::BatchPhase;
    let what = if b.command.is_empty() {
        "a flinkpipe command".to_string()
    } else {
        format!("`{}`", b.command)
    };
    let when = if b.started_at > 0 {
        format!(
            ", started {}",
            crate::changes::utc_timestamp(b.started_at as i64)
        )
    } else {
        String::new()
    };
    let repair = if b.repair.is_empty() {
        crate::metadata::REPAIR
    } else {
        b.repair.as_str()
    };
    let repair = format!("{repair} {}", pipelines.display());
    let file = format!(
        "{root_name}/{}",
        b.marker
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let killed = format!("{what} (pid {}{when}) was killed", b.pid);
    let d = match b.phase {
        Some(BatchPhase::Committing) => Diagnostic::error(
            "interrupted-write",
            format!(
                "{killed} while replacing files: the tree is part old, part new; run `{repair}` to complete it (any command that writes the tree finishes the interrupted batch first)"
            ),
        ),
        Some(BatchPhase::RollingBack) => Diagnostic::error(
            "interrupted-write",
            format!(
                "{killed} while putting files back after a failed write: the tree is part old, part new; run `{repair}` to repair it"
            ),
        ),
        _ => Diagnostic::warning(
            "interrupted-write",
            format!(
                "{killed} before replacing any file (every file is as it was); its temporary files are removed by the next command that writes the tree, e.g. `{repair}`"
            ),
        ),
    };
    d.at(file, None, None)
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
