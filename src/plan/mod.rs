//! Execution plan: which statements to create, restart or leave alone, in which order and in which
//! parallel waves. Pure data, computed from the project graph, the naming rules and the statements'
//! current phases; no server is contacted (shift_left 0.1.52 could create compute pools while
//! "planning"). Each node carries a typed [`Decision`] (origin and cause); its reason is rendered
//! from it.
//!
//! Rules (shift_left 0.1.52's `pipeline build-execution-plan`,
//! <https://github.com/jbcodeforce/shift_left_utils>,
//! with its defects fixed):
//! - Every ancestor of the start tables is in the plan, parents first: running ones are skipped
//!   (`--force-ancestors` restarts them), the others are created.
//! - Start tables of a table scope are (re)started; those of a product or folder scope only when not
//!   running.
//! - A table without a job of its own (a plain `CREATE TABLE` / `CREATE VIEW`) whose DDL statement is
//!   absent while a statement that reads it exists is only declared again (`CREATE … IF NOT EXISTS`):
//!   the table exists. On the SQL Gateway DDL statements live in a session and are always absent
//!   between runs; on Confluent Cloud users delete COMPLETED DDL statements. This is not a restart.
//! - With `--may-start-descendants`, a child of a table whose own statement is (re)started for a
//!   reason of its own — a start table, a job that is not running, a restarted running job — restarts
//!   when the parent or the child is stateful; a stateless child of a stateless parent keeps running.
//!   A re-declared table, and an ancestor without a job, cascade nothing ([`Decision::cascades`]), so
//!   restarts stay within the start tables, their descendants and the ancestors they need. The child's
//!   non-running ancestors are started first, whatever their product (the child needs their data).
//!   Scope filters (product, exclusions) apply at every level of the cascade (shift_left 0.1.52
//!   applied them to the first level only).
//! - External tables are never deployed.

pub mod decision;
pub mod naming;
pub mod pools;
pub mod status;

pub use decision::{Cause, Decision, Origin};
pub use naming::StatementNaming;
pub use pools::PoolAssignment;
pub use status::Phase;
pub use status::StatementStatus;

use crate::graph::PipelineGraph;
use crate::inventory::Table;
use crate::project::Project;
use crate::sql::{Statefulness, StatementKind};
use petgraph::Direction::Incoming;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What the plan starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `--table-name T` or `--table-list-file-name F`.
    Tables(Vec<String>),
    /// `--product-name P`: every table of the product.
    Product(String),
    /// `--dir D`: every table whose folder is under D (path relative to the pipelines root or its parent).
    Dir(String),
    /// `deploy --blue-green`: the green tables of a blue-green release. Like a product or folder
    /// scope, they are started only when not running, so deploying the release again changes nothing.
    Green(Vec<String>),
}

/// Planning options (the flags of `build-execution-plan`).
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub may_start_descendants: bool,
    pub force_ancestors: bool,
    pub cross_product: bool,
    pub dml_only: bool,
    /// Tables never touched (`--exclude-table-file-name`).
    pub exclude: BTreeSet<String>,
    /// The compute pool of each table's statements ([`PoolAssignment`]).
    pub pools: PoolAssignment,
}

/// What happens to a table's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// No statement exists yet: create it.
    Create,
    /// A statement exists (running or not): replace it.
    Restart,
    /// Leave it as it is.
    Skip,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Restart => "restart",
            Action::Skip => "skip",
        }
    }
}

/// One table of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanNode {
    pub table_name: String,
    pub action: Action,
    /// One line saying why, rendered from `origin` and `cause`.
    pub reason: String,
    /// How the table entered the plan (start table, ancestor, descendant).
    pub origin: Origin,
    /// Why it gets its action.
    pub cause: Cause,
    /// Parallel wave (0-based) among the nodes that run; `None` for skipped nodes.
    pub wave: Option<usize>,
    pub ddl_statement_name: Option<String>,
    pub dml_statement_name: Option<String>,
    /// Whether the DDL statement runs (false for `--dml-only` restarts, DML-only nodes and skips).
    pub run_ddl: bool,
    /// How the table's statement may be restarted: `Stateful` or `Stateless` (shift_left's names).
    pub upgrade_mode: UpgradeMode,
    /// The table's statefulness as the project analysis records it; `unknown` (SQL read by the
    /// token-level fallback, which could not tell) gives `upgrade_mode` `Stateful`.
    pub statefulness: Statefulness,
    /// Current phase of the DML (else DDL) statement, if known.
    pub current_phase: Option<Phase>,
    /// The compute pool its statements run in (`--compute-pool-id`, `flinkpipe.compute_pools`,
    /// `flink.compute_pool_id`); `None`: the environment's default pool, an external table, or a
    /// target without pools.
    pub compute_pool_id: Option<String>,
    pub product_name: String,
    #[serde(rename = "type")]
    pub table_type: String,
    pub path: String,
    pub parents: Vec<String>,
    pub children: Vec<String>,
    /// A restarted table whose running job the new SQL takes over from a savepoint (SQL Gateway,
    /// read from the live target: `upgrade (savepoint)` or `restart (offsets)`); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_place: Option<Restore>,
}

/// How a statement started from the savepoint of its stopped job takes the old job's state over
/// (Flink "Savepoints",
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/state/savepoints/>).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Restore {
    /// Every operator's state is restored (an upgrade of a `state-compatible` change): state the new
    /// job cannot map fails its start.
    #[serde(rename = "upgrade (savepoint)")]
    State,
    /// Only the state the new job has operators for (a `stateless` change: its sources' offsets);
    /// the rest is left behind (`execution.state-recovery.ignore-unclaimed-state = true`).
    #[serde(rename = "restart (offsets)")]
    Offsets,
}

impl Restore {
    /// How plans name it: `upgrade (savepoint)`, `restart (offsets)`.
    pub fn as_str(self) -> &'static str {
        match self {
            Restore::State => "upgrade (savepoint)",
            Restore::Offsets => "restart (offsets)",
        }
    }
}

impl PlanNode {
    /// Whether the node only declares its table again ([`Cause::Redeclared`]): a table without a job
    /// whose `CREATE … IF NOT EXISTS` runs again (on the SQL Gateway, in the deploy's session). Nothing
    /// starts or restarts, so plan summaries do not count it as a create.
    pub fn redeclares(&self) -> bool {
        self.action != Action::Skip && matches!(self.cause, Cause::Redeclared { .. })
    }

    /// The action as text plans show it: `declare` for a re-declaration, else [`Action::as_str`].
    pub fn shown_action(&self) -> &'static str {
        if self.redeclares() {
            "declare"
        } else if let (Action::Restart, Some(r)) = (self.action, self.in_place) {
            r.as_str()
        } else {
            self.action.as_str()
        }
    }
}

/// shift_left's upgrade mode of a table (`pipeline_definition.json`'s `state_form`): whether its
/// statement holds state, so that a restart loses it and its children must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UpgradeMode {
    Stateful,
    Stateless,
}

impl UpgradeMode {
    /// The mode of a table's statefulness (a table with no query is stateless).
    /// Unknown statefulness (SQL read by the token-level fallback) counts as stateful.
    pub fn of(s: Statefulness) -> UpgradeMode {
        if s.may_hold_state() {
            UpgradeMode::Stateful
        } else {
            UpgradeMode::Stateless
        }
    }

    /// `Stateful`, `Stateless`.
    pub fn as_str(self) -> &'static str {
        match self {
            UpgradeMode::Stateful => "Stateful",
            UpgradeMode::Stateless => "Stateless",
        }
    }
}

/// The mode column of a text plan: `Stateful`, `Stateless`, or `unknown (treated as stateful)` for a
/// table whose SQL the token-level fallback read without telling its state.
pub fn mode_text(mode: UpgradeMode, statefulness: Statefulness) -> &'static str {
    if statefulness == Statefulness::Unknown {
        crate::sql::UNKNOWN_STATE_TEXT
    } else {
        mode.as_str()
    }
}

impl std::fmt::Display for UpgradeMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The plan: nodes in execution order (every parent before its children).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecutionPlan {
    /// Human description of the scope, e.g. `table p1_fct_order`.
    pub scope: String,
    pub nodes: Vec<PlanNode>,
}

impl ExecutionPlan {
    /// Number of waves of running nodes.
    pub fn wave_count(&self) -> usize {
        self.nodes
            .iter()
            .filter_map(|n| n.wave)
            .max()
            .map_or(0, |w| w + 1)
    }
}

/// Why a plan cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("unknown table '{name}'{hint}")]
    UnknownTable { name: String, hint: String },
    #[error("no table belongs to product '{name}' (products: {})", known.join(", "))]
    EmptyProduct {
        /// The product asked for.
        name: String,
        /// The products the project has, sorted.
        known: Vec<String>,
    },
    #[error("no table folder is under '{0}'")]
    EmptyDir(String),
    #[error("the scope is empty: give a table, a product, a folder or a table list")]
    EmptyScope,
    /// Two tables of the project would deploy under one statement name.
    #[error("{0}")]
    StatementNameCollision(String),
    #[error("cannot order the plan: {0}")]
    Graph(#[from] crate::graph::GraphError),
}

struct Planner<'a> {
    project: &'a Project,
    graph: &'a PipelineGraph,
    naming: &'a StatementNaming,
    status: &'a StatementStatus,
    options: &'a PlanOptions,
    decisions: BTreeMap<String, Decision>,
    /// Which statement writes which tables (a statement set restarts all of them).
    statements: crate::graph::StatementIndex,
    /// Tables whose ancestors [`Planner::add_ancestors`] has already handled (by graph index): a later
    /// call does not walk through them again, so the cascade costs O(N + E) in all instead of one
    /// ancestor walk per cascading table (O(N²) on a chain).
    ancestors_done: Vec<bool>,
}

impl Planner<'_> {
    fn table(&self, name: &str) -> &Table {
        &self.project.inventory.tables[name]
    }

    /// The statement whose phase tells whether the table is running: its DML (or the DML of the
    /// statement set that writes it), else its DDL (CTAS, DDL-only seeds).
    fn main_statement(&self, t: &Table) -> String {
        if let Some(w) = &t.written_by {
            let wt = self.table(w);
            return self.naming.dml(&wt.product, &wt.name);
        }
        if t.dml_ref.is_some() {
            self.naming.dml(&t.product, &t.name)
        } else {
            self.naming.ddl(&t.product, &t.name)
        }
    }

    fn phase(&self, t: &Table) -> Option<&Phase> {
        self.status.phase(&self.main_statement(t))
    }

    fn running(&self, t: &Table) -> bool {
        self.status.is_running(&self.main_statement(t))
    }

    /// Create when no statement exists, else restart.
    fn start_action(&self, t: &Table) -> Action {
        if self.phase(t).is_some() {
            Action::Restart
        } else {
            Action::Create
        }
    }

    /// A decision for `t` with its phase and job kind filled in.
    fn decision(&self, t: &Table, action: Action, origin: Origin, cause: Cause) -> Decision {
        Decision {
            action,
            origin,
            cause,
            phase: self.phase(t).cloned(),
            dml_only_kept: false,
            has_job: has_job(t),
        }
    }

    /// The decision for a table that is not running and must be started (as a start table of a
    /// product or folder scope, or as an ancestor): started, unless it has no job of its own and a
    /// statement that reads it exists — then the table exists and is only declared again.
    fn not_running(&self, t: &Table, origin: Origin) -> Decision {
        let cause = match (has_job(t), self.existing_reader(&t.name)) {
            (false, Some(read_by)) => Cause::Redeclared { read_by },
            _ => Cause::NotRunning,
        };
        self.decision(t, self.start_action(t), origin, cause)
    }

    /// A deployed statement (any phase) that reads `name`, directly or through tables without a job
    /// of their own (views, plain tables written by nobody here): proof that the table exists.
    fn existing_reader(&self, name: &str) -> Option<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![name.to_string()];
        let mut found: Option<String> = None;
        while let Some(n) = stack.pop() {
            for c in self.graph.children(&n) {
                if !seen.insert(c.to_string()) {
                    continue;
                }
                let t = self.table(c);
                let statement = self.main_statement(t);
                if self.status.phase(&statement).is_some() {
                    if found.as_ref().is_none_or(|f| statement < *f) {
                        found = Some(statement);
                    }
                } else if !has_job(t) {
                    stack.push(c.to_string());
                }
            }
        }
        found
    }

    fn decide(&mut self, name: &str, d: Decision) {
        self.decisions.entry(name.to_string()).or_insert(d);
    }

    /// Gives every other table written by a statement that the plan (re)starts the same action
    /// ([`Origin::SameStatement`]): a statement set restarts as one job. Tables already planned to
    /// start, external or excluded ones are left as they are. Returns the tables added or upgraded,
    /// sorted; call until it returns nothing.
    fn add_statement_siblings(&mut self) -> Vec<String> {
        let mut changed = Vec::new();
        let starting: Vec<(String, Action)> = self
            .decisions
            .iter()
            .filter(|(_, d)| d.action != Action::Skip && d.has_job)
            .map(|(n, d)| (n.clone(), d.action))
            .collect();
        for (name, action) in starting {
            for sibling in self.statements.co_sinks(&name) {
                let t = self.table(sibling);
                if self.skip_cause(t).is_some() {
                    continue;
                }
                if self
                    .decisions
                    .get(sibling)
                    .is_some_and(|d| d.action != Action::Skip)
                {
                    continue;
                }
                let d = self.decision(
                    t,
                    action,
                    Origin::SameStatement { of: name.clone() },
                    Cause::SameStatement,
                );
                self.decisions.insert(sibling.to_string(), d);
                changed.push(sibling.to_string());
            }
        }
        changed.sort();
        changed.dedup();
        changed
    }

    fn skip_cause(&self, t: &Table) -> Option<Cause> {
        if t.external {
            return Some(Cause::External);
        }
        if self.options.exclude.contains(&t.name) {
            return Some(Cause::Excluded);
        }
        None
    }

    /// Adds every ancestor of `names` not decided yet: running ones are skipped (or restarted with
    /// `--force-ancestors`), the others started. An ancestor skipped earlier only for being outside
    /// the products (it was met as a child first) is started when it is not running: the tables in
    /// `names` start and need its data, whatever the order the cascade met them in. Returns the
    /// ancestors added (or upgraded) whose start cascades to their children.
    fn add_ancestors(&mut self, names: &[&str], of: Option<&str>) -> Vec<String> {
        let origin = Origin::Ancestor {
            of: of.map(str::to_string),
        };
        let mut cascading = Vec::new();
        // Only ancestors not handled by an earlier call: handling one again would change nothing (it is
        // decided, and an `OutsideProducts` skip was upgraded the first time if it ever could be).
        let starts: Vec<_> = names
            .iter()
            .filter_map(|n| self.graph.index_of(n))
            .collect();
        let mut new: Vec<String> = self
            .graph
            .reach_unseen(&starts, Incoming, &mut self.ancestors_done)
            .into_iter()
            .map(|i| self.graph.name(i).to_string())
            .collect();
        for s in starts {
            self.ancestors_done[s.index()] = true;
        }
        new.sort();
        for a in new {
            if let Some(d) = self.decisions.get(&a) {
                let t = self.table(&a);
                if matches!(d.cause, Cause::OutsideProducts { .. })
                    && self.skip_cause(t).is_none()
                    && !self.running(t)
                {
                    let d = self.not_running(t, origin.clone());
                    if d.cascades() {
                        cascading.push(a.clone());
                    }
                    self.decisions.insert(a.clone(), d);
                }
                continue;
            }
            let t = self.table(&a);
            let d = if let Some(c) = self.skip_cause(t) {
                self.decision(t, Action::Skip, origin.clone(), c)
            } else if self.running(t) {
                if self.options.force_ancestors {
                    self.decision(t, Action::Restart, origin.clone(), Cause::ForcedAncestor)
                } else {
                    self.decision(t, Action::Skip, origin.clone(), Cause::Running)
                }
            } else {
                self.not_running(t, origin.clone())
            };
            if d.cascades() {
                cascading.push(a.clone());
            }
            self.decide(&a, d);
        }
        cascading
    }
}

/// Whether a table runs a job of its own: a DML, a statement set that writes it, a CTAS or a
/// materialized table. A plain `CREATE TABLE` or `CREATE VIEW` only declares a catalog object.
fn has_job(t: &Table) -> bool {
    t.dml_ref.is_some()
        || t.written_by.is_some()
        || matches!(
            t.ddl_kind,
            Some(StatementKind::Ctas | StatementKind::CreateMaterializedTable)
        )
}

/// Builds the execution plan.
///
/// Errors: a start table that does not exist (with a suggestion), an empty product or folder scope, a
/// cycle among the tables of the plan.
pub fn build_plan(
    project: &Project,
    naming: &StatementNaming,
    status: &StatementStatus,
    scope: &Scope,
    options: &PlanOptions,
) -> Result<ExecutionPlan, PlanError> {
    let start = StartTables::of(&project.inventory, scope)?;
    if let Some(c) = naming::collisions(project, naming).into_iter().next() {
        return Err(PlanError::StatementNameCollision(c.message));
    }
    let mut p = Planner {
        project,
        graph: &project.graph,
        naming,
        status,
        options,
        decisions: BTreeMap::new(),
        statements: crate::graph::StatementIndex::from_inventory(&project.inventory),
        ancestors_done: vec![false; project.graph.len()],
    };
    p.decide_start(&start);
    p.cascade(&start);
    if options.dml_only {
        p.keep_ddl_only_tables();
    }
    let nodes = p.nodes()?;
    Ok(ExecutionPlan {
        scope: start.text,
        nodes,
    })
}

/// The tables a [`Scope`] starts from, checked against the inventory.
struct StartTables {
    /// In the scope's order.
    names: Vec<String>,
    /// How the plan names its scope (`table a, b`, `product p`, `folder pipelines/facts`).
    text: String,
    /// Named one by one (`--table-name`): each gets its action whether it runs or not.
    by_name: bool,
}

impl StartTables {
    /// Errors: an empty scope, an unknown table (with the closest name), a product or folder with
    /// no table of the project.
    fn of(inv: &crate::inventory::Inventory, scope: &Scope) -> Result<StartTables, PlanError> {
        Ok(match scope {
            Scope::Tables(names) | Scope::Green(names) => {
                if names.is_empty() {
                    return Err(PlanError::EmptyScope);
                }
                if let Some(n) = names.iter().find(|n| !inv.tables.contains_key(*n)) {
                    return Err(PlanError::UnknownTable {
                        name: n.clone(),
                        hint: suggest(n, inv.tables.keys()),
                    });
                }
                let by_name = matches!(scope, Scope::Tables(_));
                let what = if by_name { "table" } else { "green tables" };
                StartTables {
                    names: names.clone(),
                    text: format!("{what} {}", names.join(", ")),
                    by_name,
                }
            }
            Scope::Product(p) => {
                let names: Vec<String> = inv
                    .tables
                    .values()
                    .filter(|t| &t.product == p && !t.external)
                    .map(|t| t.name.clone())
                    .collect();
                if names.is_empty() {
                    let products: BTreeSet<String> = inv
                        .tables
                        .values()
                        .filter(|t| !t.external)
                        .map(|t| t.product.clone())
                        .collect();
                    return Err(PlanError::EmptyProduct {
                        name: p.clone(),
                        known: products.into_iter().collect(),
                    });
                }
                StartTables {
                    names,
                    text: format!("product {p}"),
                    by_name: false,
                }
            }
            Scope::Dir(d) => {
                let d = d.trim_end_matches('/');
                let with_root =
                    if d.starts_with(&format!("{}/", inv.root_name)) || d == inv.root_name {
                        d.to_string()
                    } else {
                        format!("{}/{d}", inv.root_name)
                    };
                let names: Vec<String> = inv
                    .tables
                    .values()
                    .filter(|t| {
                        !t.external
                            && (t.folder == with_root
                                || t.folder.starts_with(&format!("{with_root}/")))
                    })
                    .map(|t| t.name.clone())
                    .collect();
                if names.is_empty() {
                    return Err(PlanError::EmptyDir(d.to_string()));
                }
                StartTables {
                    names,
                    text: format!("folder {with_root}"),
                    by_name: false,
                }
            }
        })
    }
}

impl Planner<'_> {
    /// Step 1 and 2: the start tables' decisions, then their ancestors'.
    fn decide_start(&mut self, start: &StartTables) {
        for s in &start.names {
            let t = self.table(s);
            let d = if let Some(c) = self.skip_cause(t) {
                self.decision(t, Action::Skip, Origin::Start, c)
            } else if start.by_name {
                self.decision(t, self.start_action(t), Origin::Start, Cause::Requested)
            } else if self.running(t) {
                self.decision(t, Action::Skip, Origin::Start, Cause::Running)
            } else {
                self.not_running(t, Origin::Start)
            };
            self.decide(s, d);
        }
        let start_refs: Vec<&str> = start.names.iter().map(String::as_str).collect();
        self.add_ancestors(&start_refs, None);
    }

    /// Step 3: statement sets and the descendant cascade, filters applied at every level, to a
    /// fixpoint: a statement that (re)starts for one of its tables (re)starts every table it writes
    /// (those tables get the same action, with their ancestors), and with
    /// `--may-start-descendants` every table whose start cascades (see `Decision::cascades`)
    /// restarts its children as needed.
    fn cascade(&mut self, start: &StartTables) {
        let start_products: BTreeSet<String> = start
            .names
            .iter()
            .map(|s| self.table(s).product.clone())
            .collect();
        let descend = self.options.may_start_descendants;
        let mut queue: VecDeque<String> = if descend {
            self.decisions
                .iter()
                .filter(|(_, d)| d.cascades())
                .map(|(n, _)| n.clone())
                .collect()
        } else {
            VecDeque::new()
        };
        loop {
            // Siblings of every statement (re)started so far, including the ancestors just added
            // (an ancestor started for a sibling may itself write a statement set): until none is
            // added.
            let siblings = self.add_statement_siblings();
            let found = !siblings.is_empty();
            for sibling in siblings {
                let added = self.add_ancestors(&[sibling.as_str()], Some(&sibling));
                if descend {
                    queue.extend(added);
                    queue.push_back(sibling);
                }
            }
            if queue.is_empty() {
                if found {
                    continue;
                }
                break;
            }
            while let Some(parent) = queue.pop_front() {
                for child in self.decide_children(&parent, &start_products) {
                    let added = self.add_ancestors(&[child.as_str()], Some(&child));
                    queue.extend(added);
                    queue.push_back(child);
                }
            }
        }
    }

    /// Decides the undecided children of `parent` (a table whose start cascades); returns those
    /// whose own start cascades in turn.
    fn decide_children(&mut self, parent: &str, start_products: &BTreeSet<String>) -> Vec<String> {
        let parent_stateful = self.table(parent).statefulness.may_hold_state();
        let origin = Origin::Descendant {
            of: parent.to_string(),
        };
        let mut cascading = Vec::new();
        for child in self.graph.children(parent) {
            if self.decisions.contains_key(child) {
                continue;
            }
            let t = self.table(child);
            let d = if let Some(c) = self.skip_cause(t) {
                self.decision(t, Action::Skip, origin.clone(), c)
            } else if !self.options.cross_product && !start_products.contains(&t.product) {
                let product = t.product.clone();
                self.decision(
                    t,
                    Action::Skip,
                    origin.clone(),
                    Cause::OutsideProducts { product },
                )
            } else if !self.running(t) {
                self.decision(t, self.start_action(t), origin.clone(), Cause::NotRunning)
            } else if parent_stateful || t.statefulness.may_hold_state() {
                let stateful = if parent_stateful { parent } else { child }.to_string();
                self.decision(
                    t,
                    Action::Restart,
                    origin.clone(),
                    Cause::StatefulChain { stateful },
                )
            } else {
                self.decision(t, Action::Skip, origin.clone(), Cause::StatelessChain)
            };
            let cascades = d.cascades();
            self.decide(child, d);
            if cascades {
                cascading.push(child.to_string());
            }
        }
        cascading
    }

    /// `--dml-only` restarts DML statements only: a DDL-only table (CTAS, seed without DML) is
    /// left as is.
    fn keep_ddl_only_tables(&mut self) {
        let tables = &self.project.inventory.tables;
        for (name, d) in self.decisions.iter_mut() {
            let t = &tables[name];
            if d.action == Action::Restart && t.dml_ref.is_none() && t.written_by.is_none() {
                d.action = Action::Skip;
                d.dml_only_kept = true;
            }
        }
    }

    /// Step 4: order, waves, statement names. Execution order is wave-major over the whole plan (a
    /// topological order that reads top-down as the deploy proceeds); a running node's wave is the
    /// rank of its level among the levels that contain running nodes, so waves only grow down the
    /// list.
    ///
    /// Errors: the decided tables form a cycle.
    fn nodes(&self) -> Result<Vec<PlanNode>, PlanError> {
        let all: BTreeSet<String> = self.decisions.keys().cloned().collect();
        let levels = self.graph.waves(Some(&all))?;
        let mut wave_of = BTreeMap::new();
        let mut next_wave = 0;
        for level in &levels {
            let running: Vec<&String> = level
                .iter()
                .filter(|n| self.decisions[*n].action != Action::Skip)
                .collect();
            if running.is_empty() {
                continue;
            }
            for n in running {
                wave_of.insert(n.clone(), next_wave);
            }
            next_wave += 1;
        }
        Ok(levels
            .into_iter()
            .flatten()
            .map(|name| {
                let wave = wave_of.get(&name).copied();
                self.node(name, wave)
            })
            .collect())
    }

    /// The plan's node of the decided table `name`, in wave `wave` (`None` when skipped).
    fn node(&self, name: String, wave: Option<usize>) -> PlanNode {
        let (naming, options) = (self.naming, self.options);
        let t = self.table(&name);
        let decision = self.decisions[&name].clone();
        let mut reason = decision.reason();
        if let Some(w) = &t.written_by {
            reason.push_str(&format!("; written by the statement set of {w}"));
        }
        let action = decision.action;
        let owner = t.written_by.as_ref().map(|w| self.table(w)).unwrap_or(t);
        let dml = (owner.dml_ref.is_some() && !t.external)
            .then(|| naming.dml(&owner.product, &owner.name));
        let ddl = (t.ddl_ref.is_some() && !t.external).then(|| naming.ddl(&t.product, &t.name));
        let run_ddl = action != Action::Skip
            && ddl.is_some()
            && !(options.dml_only && action == Action::Restart && dml.is_some());
        let names = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
        PlanNode {
            wave,
            current_phase: self.phase(t).cloned(),
            compute_pool_id: (!t.external)
                .then(|| options.pools.pool_for(&t.name, &t.product))
                .flatten(),
            action,
            reason,
            origin: decision.origin,
            cause: decision.cause,
            ddl_statement_name: ddl,
            dml_statement_name: dml,
            run_ddl,
            upgrade_mode: UpgradeMode::of(t.statefulness),
            statefulness: t.statefulness,
            product_name: t.product.clone(),
            table_type: t.table_type.clone(),
            path: t.folder.clone(),
            parents: names(self.graph.parents(&name)),
            children: names(self.graph.children(&name)),
            in_place: None,
            table_name: name,
        }
    }
}

/// ` (did you mean 'x'?)` for the closest name (case-insensitive edit distance, see
/// [`crate::graph::closest`]), else empty.
pub fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a String>) -> String {
    crate::diagnostics::closest(name, candidates.map(String::as_str))
        .map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default()
}
