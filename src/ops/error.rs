//! [`OpsError`]: why an operation could not do what it was asked, typed by cause. The CLI turns it
//! into a message and an exit status ([`OpsError::is_usage`]: 2, otherwise 1).

use std::path::PathBuf;

/// Errors of the operations layer. Library errors are wrapped unchanged (their messages name the file,
/// line and construct); the variants of its own carry what the message needs.
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// Arguments that do not make sense together or do not parse (`--since-date 2025-13-01`): exit 2.
    #[error("{0}")]
    Usage(String),
    /// The project has errors, already reported through the console with file and line; the text says
    /// what was not done (`nothing deployed: fix the errors above`).
    #[error("{0}")]
    ProjectHasErrors(&'static str),
    /// A table name that the project does not define, with a suggestion (` (did you mean 'x'?)`).
    #[error("unknown table '{name}'{hint}")]
    UnknownTable { name: String, hint: String },
    /// A table name that two or more tables match ignoring case ([`crate::inventory::names`]).
    #[error("table name '{name}' is ambiguous: it matches {}; give the exact name", candidates.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", "))]
    AmbiguousTable {
        name: String,
        candidates: Vec<String>,
    },
    /// A statement name the target does not know, with a suggestion.
    #[error("statement '{name}' not found on {target}{hint}")]
    StatementNotFound {
        name: String,
        target: String,
        hint: String,
    },
    /// A table list (`--table-list-file-name`, `--exclude-table-file-name`, `update-tables-version`).
    #[error("{0}")]
    TableList(String),
    /// A file that could not be written, with the system's reason.
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file or folder that could not be read (not part of the pipelines tree).
    #[error("{what}: cannot read {}: {source}", path.display())]
    Read {
        /// What it is (`flinkpipe.gateway.external_ddl`).
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The operation will not go on, for the reason given (the project has errors before versioning;
    /// `--resume` without a journal, or with the journal of another scope).
    #[error("{0}")]
    Refused(String),
    /// Another command holds the lock of this project and target ([`super::lock`]).
    #[error(
        "another command is changing this project's target: {} holds the lock {}; `{command}` did nothing: wait for it to finish (or stop it), then run it again",
        holder.as_ref().map_or_else(|| "a process that did not say who it is".to_string(), |h| format!("{h}, on {} with statement prefix '{}',", h.target, h.statement_prefix)),
        lock.display()
    )]
    Busy {
        /// The lock file.
        lock: PathBuf,
        /// Who holds it (`None`: it did not say).
        holder: Option<Box<super::lock::LockHolder>>,
        /// The command that was refused.
        command: String,
    },
    /// The deploy target failed or refused; the message has its secrets masked already.
    #[error("{0}")]
    Target(String),
    /// The rewritten files of a version change could not be rebuilt, and some could not be put back.
    #[error("{cause}; and these files could not be restored: {}", stuck.join(", "))]
    RestoreFailed { cause: String, stuck: Vec<String> },
    /// A question the operation needs answered could not be read (`undeploy` without `--no-ack`).
    #[error("cannot read the answer: {0}")]
    Answer(std::io::Error),
    /// A shift_left command whose name flinkpipe keeps but whose work has an issue of its own
    /// (column lineage, unit-test DDL updates, integration tests): it exists, takes shift_left's
    /// arguments, and says so instead of doing something else.
    #[error("`{command}` is not available yet ({what}: an issue of its own); nothing was done")]
    NotYet {
        command: &'static str,
        what: &'static str,
    },
    /// Anything else the system refused (`man --out DIR`): the system's reason.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Scan(#[from] crate::scan::ScanError),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    #[error(transparent)]
    Status(#[from] crate::plan::status::StatusError),
    #[error(transparent)]
    Graph(#[from] crate::graph::GraphError),
    #[error(transparent)]
    Select(#[from] crate::graph::SelectError),
    #[error(transparent)]
    Changes(#[from] crate::changes::ChangeError),
    #[error(transparent)]
    Version(#[from] crate::versioning::VersionError),
    #[error(transparent)]
    Scaffold(#[from] crate::scaffold::ScaffoldError),
    #[error(transparent)]
    Files(#[from] crate::fsutil::PathError),
    /// SIGINT arrived while files were being written: with `committed`, the renames were under way
    /// and were finished (every file is new); otherwise nothing was changed. Exit status 130.
    #[error("interrupted: {}", if *committed {
        "the files were being replaced and were all written first"
    } else {
        "no file was changed"
    })]
    Interrupted { committed: bool },
    #[error(transparent)]
    Record(#[from] crate::versioning::record::RecordError),
    #[error(transparent)]
    Spec(#[from] crate::deploy::spec::SpecError),
    #[error(transparent)]
    Journal(#[from] crate::deploy::journal::JournalError),
    #[error(transparent)]
    Yaml(#[from] serde_yaml_ng::Error),
    #[error(transparent)]
    UnitTest(#[from] crate::unittest::UnitTestError),
    /// A `tests/live_tests.yaml` that is not the documented shape (file and line).
    #[error(transparent)]
    LiveTest(#[from] crate::livetest::LiveTestError),
}

impl From<crate::project::NameError> for OpsError {
    fn from(e: crate::project::NameError) -> Self {
        let hint = e.hint();
        match e {
            crate::project::NameError::Unknown { name, .. } => {
                OpsError::UnknownTable { name, hint }
            }
            crate::project::NameError::Ambiguous { name, candidates } => {
                OpsError::AmbiguousTable { name, candidates }
            }
        }
    }
}

impl From<crate::fsutil::BatchError> for OpsError {
    fn from(e: crate::fsutil::BatchError) -> Self {
        match e {
            crate::fsutil::BatchError::File(e) => OpsError::Files(e),
            crate::fsutil::BatchError::Interrupted { committed } => {
                OpsError::Interrupted { committed }
            }
        }
    }
}

impl OpsError {
    /// Whether this is a usage error (exit status 2): arguments, not input.
    pub fn is_usage(&self) -> bool {
        match self {
            OpsError::Usage(_) => true,
            OpsError::UnitTest(crate::unittest::UnitTestError::Usage(_)) => true,
            // A malformed selection expression is a usage error; a well-formed one naming an unknown
            // table is an error in the input.
            OpsError::Select(e) => matches!(
                e,
                crate::graph::SelectError::BadToken { .. } | crate::graph::SelectError::Empty
            ),
            _ => false,
        }
    }

    /// Whether the operation was interrupted by SIGINT (exit status 130, as for any command a shell
    /// interrupts).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, OpsError::Interrupted { .. })
    }

    /// Whether the message was already shown (diagnostics through the console) and only a closing
    /// line remains, printed without the `error:` prefix.
    pub fn is_reported(&self) -> bool {
        matches!(self, OpsError::ProjectHasErrors(_))
    }
}
