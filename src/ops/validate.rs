//! `pipeline validate` (the project: duplicates, unknown references, cycles, statement-name
//! collisions, …) and `table validate-table-names` (the naming convention).

use super::{Context, OpsError};
use crate::diagnostics::{DeniedClass, Diagnostic, STRICT_CLASSES, Severity};
use crate::plan::StatementNaming;
use crate::project::{Layout, LoadOptions, scan};
use crate::scaffold::naming;
use crate::sql::model::WarningKind;
use serde::Serialize;
use std::path::Path;

/// Which warnings `pipeline validate` turns into errors, so that it can gate a merge in CI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Gate {
    /// `--strict`: every warning of [`crate::diagnostics::STRICT_CLASSES`] (a statement not read as
    /// Flink reads it) is an error.
    pub strict: bool,
    /// `--deny CLASS`, repeatable: the warnings of these classes are errors.
    pub deny: Vec<DeniedClass>,
}

/// The option of a [`Gate`] that makes a warning an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeniedBy {
    /// `--strict`.
    Strict,
    /// `--deny CLASS` (or `--deny all`).
    Deny(DeniedClass),
}

impl std::fmt::Display for DeniedBy {
    /// `--strict`, `--deny all`, `--deny sql-fallback`: the option as the user wrote it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeniedBy::Strict => f.write_str("--strict"),
            DeniedBy::Deny(DeniedClass::All) => f.write_str("--deny all"),
            DeniedBy::Deny(DeniedClass::Code(c)) => write!(f, "--deny {c}"),
        }
    }
}

impl Gate {
    /// The option that makes a warning of class `code` an error under this gate (a `--deny`
    /// first, then `--strict`), or `None` when it stays a warning.
    pub fn denies(&self, code: &str) -> Option<DeniedBy> {
        if let Some(d) = self.deny.iter().find(|d| d.covers(code)) {
            return Some(DeniedBy::Deny(*d));
        }
        (self.strict && STRICT_CLASSES.contains(&code)).then_some(DeniedBy::Strict)
    }

    /// Makes the denied warnings of `diagnostics` errors; the message says which option did
    /// (`… (an error with --strict)`).
    pub fn apply(&self, diagnostics: &mut [Diagnostic]) {
        for d in diagnostics.iter_mut().filter(|d| !d.is_error()) {
            if let Some(why) = self.denies(d.code) {
                d.severity = Severity::Error;
                d.message.push_str(&format!(" (an error with {why})"));
            }
        }
    }
}

/// The result of `pipeline validate`.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    pub tables: usize,
    pub edges: usize,
    /// Every diagnostic: the project's, then statement-name collisions; warnings the [`Gate`] denies
    /// are errors here.
    pub diagnostics: Vec<Diagnostic>,
    /// Statements the parser rejected (one `sql-fallback` diagnostic each, warning or denied): their
    /// references and statefulness are the token-level fallback's estimate, so the project is not
    /// known to be valid even without errors.
    pub unparsed_statements: usize,
}

impl Validation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The verdict of the summary line.
    pub fn verdict(&self) -> Verdict {
        if self.has_errors() {
            Verdict::Failed
        } else if self.unparsed_statements > 0 {
            Verdict::Unverified
        } else {
            Verdict::Ok
        }
    }
}

/// What `pipeline validate` concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No error, and every statement was parsed.
    Ok,
    /// No error, but some statement could not be parsed: its references were estimated by the
    /// fallback (exit 0 unless `--strict`, which makes this [`Verdict::Failed`]).
    Unverified,
    /// Errors (exit 1).
    Failed,
}

/// Checks the project. The project's diagnostics and the statement-name collisions (which depend on
/// the configuration), with the warnings `gate` denies made errors, go to the console and into the
/// result.
///
/// Errors: the tree cannot be read.
pub fn validate(
    ctx: &Context,
    pipelines: &Path,
    allow_unknown: bool,
    gate: &Gate,
) -> Result<Validation, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let mut project = crate::project::load(pipelines, &cfg, LoadOptions { allow_unknown })?;
    let mut more = crate::plan::naming::collisions(&project, &StatementNaming::from_config(&cfg));
    more.extend(
        crate::fsutil::interrupted_batches(pipelines)
            .iter()
            .map(|b| interrupted_batch(b, pipelines, &project.inventory.root_name)),
    );
    project.diagnostics.extend(more);
    // Reading every statement's columns costs a second parse of the tree: done when the gate asks.
    if gate.denies(UNKNOWN_COLUMN).is_some() {
        let found = unknown_columns(&project, &cfg)?;
        project.diagnostics.extend(found);
    }
    gate.apply(&mut project.diagnostics);
    ctx.console.diagnostics(
        &project.diagnostics,
        super::source_base(pipelines).as_deref(),
    );
    let unparsed_statements = project
        .diagnostics
        .iter()
        .filter(|d| d.code == WarningKind::Fallback.code())
        .count();
    Ok(Validation {
        tables: project.inventory.tables.len(),
        edges: project.graph.edges().count(),
        diagnostics: project.diagnostics,
        unparsed_statements,
    })
}

/// The warning class of a column reference its relation does not have.
const UNKNOWN_COLUMN: &str = "unknown-column";

/// One `unknown-column` warning per reference to a column that its relation (a table whose DDL the
/// project has, a CTE, a derived table) does not have, at the reference's file and line, with the
/// closest column it has.
///
/// Errors: unreadable SQL files.
fn unknown_columns(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
) -> Result<Vec<Diagnostic>, OpsError> {
    let (statements, _) = super::column_lineage::project_statements(
        project,
        cfg,
        &std::collections::BTreeMap::new(),
    )?;
    let mut out = Vec::new();
    for st in &statements {
        for u in &st.columns.unknown_columns {
            let bare = u.column.rsplit('.').next().unwrap_or(&u.column);
            let hint = suggestion(bare, &u.known)
                .map(|c| format!("; did you mean '{c}'?"))
                .unwrap_or_default();
            let d = Diagnostic::warning(
                UNKNOWN_COLUMN,
                format!(
                    "the statement writing {} reads column {}, which {} does not have (its columns: {}){hint}",
                    st.table,
                    u.column,
                    u.relations.join(" or "),
                    u.known.join(", ")
                ),
            )
            .at(st.file.clone(), Some(u.line), None);
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    Ok(out)
}

/// The column `wanted` most likely is: the one known column that extends it or that it extends
/// (`y` → `y2`, a rename that kept the stem), else the closest by edit distance.
fn suggestion(wanted: &str, known: &[String]) -> Option<String> {
    let lower = wanted.to_lowercase();
    let stems: Vec<&String> = known
        .iter()
        .filter(|k| {
            let k = k.to_lowercase();
            k != lower && (k.starts_with(&lower) || lower.starts_with(&k))
        })
        .collect();
    match stems.as_slice() {
        [one] => Some((*one).clone()),
        _ => crate::diagnostics::closest(wanted, known.iter().map(String::as_str)),
    }
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
            crate::time::utc_timestamp(b.started_at as i64)
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
