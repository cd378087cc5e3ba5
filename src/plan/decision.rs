//! The typed decision behind each plan node: where the node comes from ([`Origin`]), why it gets its
//! action ([`Cause`]), and whether starting it may restart its children ([`Decision::cascades`]). The
//! one-line human reason of a node is rendered from these values; no code decides on that text.

use super::Action;
use serde::Serialize;

/// How a table entered the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// A table of the scope (`--table-name`, `--table-list-file-name`, `--product-name`, `--dir`).
    Start,
    /// An ancestor of a start table (`of: None`) or of a table the cascade started (`of: Some(child)`).
    Ancestor { of: Option<String> },
    /// A child reached by the `--may-start-descendants` cascade from `of`.
    Descendant { of: String },
    /// Written by the same statement (a statement set) as `of`, which the plan (re)starts: the
    /// statement runs as one job, so this table (re)starts with it.
    SameStatement { of: String },
}

impl Origin {
    /// Whether the table is one the user asked for (a start table).
    pub fn is_start(&self) -> bool {
        matches!(self, Origin::Start)
    }
}

/// Why a node gets its action. Start tables of a table scope are [`Cause::Requested`]; the rest
/// follows the rules of the module documentation of [`crate::plan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// Declared in `seeds/external_tables.json` (or kept with `--allow-unknown`): never deployed.
    External,
    /// Listed by `--exclude-table-file-name`.
    Excluded,
    /// A descendant in a product outside the start tables' products, without
    /// `--cross-product-deployment`.
    OutsideProducts { product: String },
    /// A start table of a table scope: (re)started whatever its phase.
    Requested,
    /// Its statement is not running (absent, FAILED, STOPPED, …): started.
    NotRunning,
    /// Its statement runs (RUNNING, PENDING, COMPLETED): kept.
    Running,
    /// A table without a job of its own (a plain `CREATE TABLE` or `CREATE VIEW`) whose DDL statement
    /// is absent (or not running) while a statement that reads it exists: the table exists. Its
    /// `CREATE … IF NOT EXISTS` is run again — on the SQL Gateway tables live in the session, on
    /// Confluent Cloud users delete COMPLETED DDL statements — which is not a restart and cascades
    /// nothing.
    Redeclared {
        /// The first (by name) statement found that reads the table.
        read_by: String,
    },
    /// A running ancestor restarted by `--force-ancestors`.
    ForcedAncestor,
    /// A running child of a restarted parent, restarted because the parent or the child is stateful.
    StatefulChain {
        /// The table that is stateful (the parent when both are).
        stateful: String,
    },
    /// A running stateless child of a restarted stateless parent: keeps running.
    StatelessChain,
    /// Its statement (a statement set) is (re)started for another table it writes.
    SameStatement,
}

/// The decision for one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub action: Action,
    pub origin: Origin,
    pub cause: Cause,
    /// The table's statement phase the decision was made on (`None`: no statement deployed).
    #[serde(skip)]
    pub phase: Option<crate::plan::Phase>,
    /// `--dml-only` turned a restart of a table without DML into a skip.
    #[serde(skip)]
    pub dml_only_kept: bool,
    /// Whether the table runs a job of its own (a DML, a statement set that writes it, a CTAS or a
    /// materialized table), as opposed to a plain `CREATE TABLE` / `CREATE VIEW`.
    #[serde(skip)]
    pub has_job: bool,
}

impl Decision {
    /// Whether starting this table may restart its children under `--may-start-descendants`.
    ///
    /// Only a table whose own statement is (re)started for a reason of its own cascades: a start
    /// table, a table whose job is not running, a running job restarted by the cascade or by
    /// `--force-ancestors`. A table without a job that is only (re)declared as an ancestor — its DDL
    /// statement is absent, as on the SQL Gateway between runs or on Confluent Cloud after
    /// housekeeping — is not a restart and cascades nothing (issue: a source re-declared for one
    /// table restarted every stateful reader of that source).
    pub fn cascades(&self) -> bool {
        if self.action == Action::Skip {
            return false;
        }
        match (&self.origin, &self.cause) {
            (_, Cause::Redeclared { .. }) => false,
            (Origin::Start, _) => true,
            (Origin::Descendant { .. } | Origin::SameStatement { .. }, _) => true,
            (Origin::Ancestor { .. }, Cause::NotRunning | Cause::ForcedAncestor) => self.has_job,
            (Origin::Ancestor { .. }, _) => false,
        }
    }

    /// The one-line human reason (`ancestor of int_x; statement is FAILED`, …).
    pub fn reason(&self) -> String {
        let phase = match &self.phase {
            Some(p) => format!("statement is {p}"),
            None => "no statement deployed".to_string(),
        };
        let origin = match &self.origin {
            Origin::Start => None,
            Origin::Ancestor { of: None } => Some("ancestor".to_string()),
            Origin::Ancestor { of: Some(c) } => Some(format!("ancestor of {c}")),
            Origin::Descendant { of } => Some(format!("child of {of}")),
            Origin::SameStatement { of } => Some(format!("written by the same statement as {of}")),
        };
        let mut text = match (&self.cause, &self.origin) {
            (Cause::External, _) => "external table: not deployed by this project".to_string(),
            (Cause::Excluded, _) => "excluded by --exclude-table-file-name".to_string(),
            (Cause::OutsideProducts { product }, Origin::Descendant { of }) => {
                format!("child of {of} in product {product}; --cross-product-deployment not set")
            }
            (Cause::OutsideProducts { product }, _) => {
                format!("in product {product}; --cross-product-deployment not set")
            }
            (Cause::Requested, _) => format!("requested; {phase}"),
            (Cause::NotRunning | Cause::Running, Origin::Start) => format!("in scope; {phase}"),
            (Cause::NotRunning | Cause::Running, _) => {
                format!("{}; {phase}", origin.unwrap_or_default())
            }
            (Cause::Redeclared { read_by }, _) => format!(
                "{}; {phase} but {read_by} reads the table: declared again (CREATE … IF NOT EXISTS), not a restart, no cascade",
                origin.unwrap_or_else(|| "in scope".into())
            ),
            (Cause::ForcedAncestor, _) => format!(
                "{}; {phase}; restarted by --force-ancestors",
                origin.unwrap_or_default()
            ),
            (Cause::StatefulChain { stateful }, Origin::Descendant { of }) => {
                format!("child of restarted {of}; {stateful} is stateful")
            }
            (Cause::StatefulChain { stateful }, _) => format!("{stateful} is stateful"),
            (Cause::StatelessChain, Origin::Descendant { of }) => {
                format!("stateless child of stateless {of}: keeps running")
            }
            (Cause::StatelessChain, _) => "stateless: keeps running".to_string(),
            (Cause::SameStatement, Origin::SameStatement { of }) => {
                format!("(re)started with {of}: one statement; {phase}")
            }
            (Cause::SameStatement, _) => format!("(re)started with its statement set; {phase}"),
        };
        if self.dml_only_kept {
            text.push_str("; --dml-only: a DDL-only table is left as it is");
        }
        text
    }
}
