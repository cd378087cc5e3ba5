//! The statements of a plan node, read from its SQL files: what [`super::executor`] sends.
//!
//! - Each top-level statement of `ddl.<table>.sql` / `dml.<table>.sql` is one statement (a statement
//!   set is one unit, sent as written). The first keeps the plan's name; later ones get `-2`, `-3`, ….
//! - `SET 'k' = 'v'` statements become properties of the statements that follow them (`RESET` removes
//!   them), `USE CATALOG c` / `USE db` become `sql.current-catalog` / `sql.current-database`: Confluent
//!   takes one statement per call and has no session
//!   (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>).
//! - `.properties` files in `sql-scripts/` (read by [`crate::sql::text::parse_properties`], the parser change detection
//!   uses too) add properties: a file named `ddl.*.properties` to the DDL statements,
//!   `dml.*.properties` to the DML, any other to both. Values are sent as written.
//! - `DROP` statements are marked: the executor runs them only with `--allow-drop` on a restart
//!   (shift_left 0.1.52 dropped every table it redeployed).
//! - Every statement goes to its node's compute pool (the plan's `compute_pool_id`) and gets the
//!   rewrite rules of the environment in effect ([`super::env_sql`]): what is sent and what `status`
//!   compares are the same text; the files never change.

use super::env_sql::{EnvSql, RewriteError};
use crate::plan::naming::fit_length;
use crate::plan::{Action, PlanNode};
use crate::project::Project;
use crate::sql::{SessionChange, StatementKind as SqlKind};
use crate::target::{StatementKind, StatementSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One statement to run for a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// What to send (after the environment's rewrite rules).
    pub spec: StatementSpec,
    /// The statement drops something (`DROP TABLE …`): needs `--allow-drop`.
    pub is_drop: bool,
    /// Labels of the per-environment rules that changed what is sent (`prod[0]`), in order.
    pub rewritten_by: Vec<String>,
    /// The SQL file the statement comes from (empty when it comes from no file).
    pub file: PathBuf,
    /// 1-based line of the statement's first token in [`Step::file`] (0 when unknown).
    pub line: usize,
}

/// A plan node with its statements, ready for the executor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployNode {
    /// The table.
    pub table: String,
    /// The plan's action.
    pub action: Action,
    /// The plan's reason.
    pub reason: String,
    /// Tables of the plan this node waits for.
    pub parents: Vec<String>,
    /// The table's query keeps no state (restarts may keep offsets).
    pub stateless: bool,
    /// The table takes updates (a primary key, `'changelog.mode'` other than `append`, or the
    /// `upsert-kafka` connector): Confluent Cloud carries offsets over only into append-only sinks
    /// (<https://docs.confluent.io/cloud/current/flink/operate-and-deploy/carry-over-offsets.html>).
    pub upsert_sink: bool,
    /// DDL statements first, then DML, in file order. For a node the plan skips: the statements it
    /// keeps, which the executor never sends but waits for while they are still starting (PENDING)
    /// before the node's children start.
    pub steps: Vec<Step>,
    /// A plan skip because its statement ran when the plan read it (RUNNING, PENDING, COMPLETED:
    /// [`crate::plan::Cause::Running`]): before its children start, the executor requires the target
    /// to show it in its goal phase (a PENDING one is waited for), and fails the node when it reads
    /// FAILED, STOPPED or absent instead.
    pub kept_live: bool,
    /// A plan skip whose statement the plan read PENDING: it is checked (and waited for) before
    /// anything below it starts — whenever any descendant in the plan runs, not only a child — since
    /// a statement that never starts takes every reader below it down too.
    pub kept_pending: bool,
}

/// Why the statements of a node cannot be built: nothing of it is sent.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// A SQL file that cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A per-environment rewrite rule could not be applied to a statement of the file.
    #[error("{path}: {source}")]
    Rewrite {
        /// The file.
        path: PathBuf,
        /// The rule, the statement and why.
        source: RewriteError,
    },
}

/// Resolves a stored file reference (`pipelines/facts/p1/t/sql-scripts/dml.t.sql`) against the project.
fn resolve(project: &Project, rel: &str) -> PathBuf {
    let root = &project.inventory.root;
    let via_parent = root.parent().map(|p| p.join(rel));
    match via_parent {
        Some(p) if p.exists() => p,
        _ => {
            let stripped = rel
                .strip_prefix(&format!("{}/", project.inventory.root_name))
                .unwrap_or(rel);
            root.join(stripped)
        }
    }
}

/// The statement-text helpers live with the SQL front end ([`crate::sql::text`]); re-exported for
/// the deploy engine.
use crate::sql::text::parse_properties;

/// The properties of a `sql-scripts/` folder: (for DDL, for DML).
type FolderProperties = (BTreeMap<String, String>, BTreeMap<String, String>);

/// Properties from the `.properties` files of a `sql-scripts/` folder: (for DDL, for DML). A file that
/// is refused (not a regular file, over the size limit, not UTF-8) or cannot be read is an error
/// naming it: a property file skipped silently would deploy the statements without its settings.
fn folder_properties(dir: &Path) -> Result<FolderProperties, SpecError> {
    let mut ddl = BTreeMap::new();
    let mut dml = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok((ddl, dml));
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "properties"))
        .collect();
    files.sort();
    for f in files {
        let text = read(&f)?;
        let props = parse_properties(&text);
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("ddl.") {
            ddl.extend(props);
        } else if name.starts_with("dml.") {
            dml.extend(props);
        } else {
            ddl.extend(props.clone());
            dml.extend(props);
        }
    }
    Ok((ddl, dml))
}

/// Splits one SQL text into steps named `base`, `base-2`, …; `SET`/`RESET`/`USE` become properties.
pub fn steps_from_sql(
    sql: &str,
    base: &str,
    kind: StatementKind,
    mut props: BTreeMap<String, String>,
) -> Vec<Step> {
    let analysis = crate::sql::analyze(sql);
    let mut steps = Vec::new();
    for st in &analysis.statements {
        match (&st.kind, &st.session) {
            (_, Some(SessionChange::Set { key, value })) => {
                props.insert(key.clone(), value.clone());
            }
            (_, Some(SessionChange::Reset { key })) => match key {
                Some(k) => {
                    props.remove(k);
                }
                None => props.clear(),
            },
            (_, Some(SessionChange::UseCatalog { catalog })) => {
                props.insert("sql.current-catalog".into(), catalog.clone());
            }
            (_, Some(SessionChange::UseDatabase { database })) => {
                if let [c, d] = database.parts.as_slice() {
                    props.insert("sql.current-catalog".into(), c.clone());
                    props.insert("sql.current-database".into(), d.clone());
                } else if let Some(d) = database.parts.last() {
                    props.insert("sql.current-database".into(), d.clone());
                }
            }
            (SqlKind::Set | SqlKind::Use, _) => {}
            (k, _) => {
                let text = st.text.trim().trim_end_matches(';').trim().to_string();
                if text.is_empty() {
                    continue;
                }
                let name = if steps.is_empty() {
                    base.to_string()
                } else {
                    fit_length(format!("{base}-{}", steps.len() + 1))
                };
                // A CTAS or a materialized table in the DDL file runs a job like a DML (success =
                // RUNNING).
                let kind = match k {
                    SqlKind::Ctas
                    | SqlKind::CreateMaterializedTable
                    | SqlKind::Insert
                    | SqlKind::StatementSet => StatementKind::Dml,
                    _ => kind,
                };
                steps.push(Step {
                    spec: StatementSpec {
                        name,
                        sql: text,
                        properties: props.clone(),
                        kind,
                        compute_pool: None,
                    },
                    is_drop: matches!(k, SqlKind::Drop),
                    rewritten_by: Vec::new(),
                    file: PathBuf::new(),
                    line: st.line,
                });
            }
        }
    }
    steps
}

/// The deploy nodes of a plan, in plan order. Skipped nodes get the statements they keep (to be
/// awaited while PENDING, never sent; none when their files cannot be read); a table written by another
/// table's statement set runs only its DDL, the set's owner waits for it (the set runs with its
/// owner, once every sink exists), and its children wait for the owner (the data comes from the set).
pub fn deploy_nodes(
    project: &Project,
    plan: &crate::plan::ExecutionPlan,
    env: &EnvSql,
) -> Result<Vec<DeployNode>, SpecError> {
    let in_plan: std::collections::BTreeSet<&str> =
        plan.nodes.iter().map(|n| n.table_name.as_str()).collect();
    plan.nodes
        .iter()
        .map(|n| {
            let steps = if n.action == Action::Skip {
                kept_statements(project, n, env)
            } else {
                node_steps(project, n, env)?
            };
            let mut parents: Vec<String> = n
                .parents
                .iter()
                .filter(|p| in_plan.contains(p.as_str()))
                .cloned()
                .collect();
            // A statement set writes the other sinks too: their DDL must exist before it runs.
            let descendants = project.graph.descendants(&[n.table_name.as_str()]);
            for (other, t) in &project.inventory.tables {
                if t.written_by.as_deref() == Some(n.table_name.as_str())
                    && in_plan.contains(other.as_str())
                    && !descendants.contains(other)
                    && !parents.contains(other)
                {
                    parents.push(other.clone());
                }
            }
            // A parent filled by another table's statement set has data only once that set runs:
            // wait for the set's owner too.
            let own_desc = project.graph.descendants(&[n.table_name.as_str()]);
            for p in n.parents.clone() {
                if let Some(owner) = project
                    .inventory
                    .tables
                    .get(&p)
                    .and_then(|t| t.written_by.clone())
                    && owner != n.table_name
                    && in_plan.contains(owner.as_str())
                    && !own_desc.contains(&owner)
                    && !parents.contains(&owner)
                {
                    parents.push(owner);
                }
            }
            Ok(DeployNode {
                table: n.table_name.clone(),
                action: n.action,
                reason: n.reason.clone(),
                parents,
                stateless: n.upgrade_mode == crate::plan::UpgradeMode::Stateless,
                upsert_sink: project
                    .inventory
                    .tables
                    .get(&n.table_name)
                    .is_some_and(takes_updates),
                steps,
                kept_live: n.action == Action::Skip && n.cause == crate::plan::Cause::Running,
                kept_pending: n.action == Action::Skip
                    && n.cause == crate::plan::Cause::Running
                    && n.current_phase == Some(crate::plan::status::Phase::Pending),
            })
        })
        .collect()
}

/// Whether a table is written as a changelog with updates rather than appended to: its
/// `'changelog.mode'` option when set (`append` appends), else a primary key or the `upsert-kafka`
/// connector (Confluent Cloud's default mode of a table with a primary key is `upsert`).
pub fn takes_updates(t: &crate::inventory::Table) -> bool {
    let mode = t
        .with_options
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("changelog.mode"))
        .map(|(_, v)| v.to_ascii_lowercase());
    match mode {
        Some(m) => m != "append",
        None => !t.primary_key.is_empty() || t.connector() == Some("upsert-kafka"),
    }
}

fn read(path: &Path) -> Result<String, SpecError> {
    crate::fsutil::read_user_text(path, crate::fsutil::MAX_SQL_FILE_BYTES).map_err(|source| {
        SpecError::Read {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// A SQL file of the project as it is deployed: its template placeholders substituted with
/// `flinkpipe.sql_variables` (the files are never changed).
fn read_sql(project: &Project, path: &Path) -> Result<String, SpecError> {
    Ok(crate::sql::placeholders::substitute(
        &read(path)?,
        &project.inventory.sql_variables,
    ))
}

/// The steps of one node (see module docs): none for a skipped node, the DDL only when the plan runs
/// it.
pub fn node_steps(
    project: &Project,
    node: &PlanNode,
    env: &EnvSql,
) -> Result<Vec<Step>, SpecError> {
    if node.action == Action::Skip {
        return Ok(Vec::new());
    }
    statements_of(project, node, node.run_ddl, env)
}

/// The statements a node the plan skips keeps (none when its files cannot be read): its DDL, then the
/// job whose phase tells whether the table is live — its own DML, or, for a table written by another
/// table's statement set, that set's DML (the statement the plan read). The executor checks the job
/// before the node's children start; a DDL statement may be absent while the table is live (the SQL
/// Gateway's DDL is session-scoped, and users delete COMPLETED DDL statements on Confluent Cloud).
fn kept_statements(project: &Project, node: &PlanNode, env: &EnvSql) -> Vec<Step> {
    let mut steps = statements_of(project, node, true, env).unwrap_or_default();
    let owner = project
        .inventory
        .tables
        .get(&node.table_name)
        .and_then(|t| t.written_by.as_deref());
    if let Some(owner) = owner {
        steps.extend(
            table_statements(
                project,
                owner,
                None,
                node.dml_statement_name.as_deref(),
                node.compute_pool_id.as_deref(),
                env,
            )
            .unwrap_or_default(),
        );
    }
    steps
}

/// Every statement a node's files define (DDL when `with_ddl`, then DML), whatever the plan's action,
/// as sent (the environment's rules applied, in the node's compute pool): what `pipeline status`
/// compares with the deployed SQL.
pub fn statements_of(
    project: &Project,
    node: &PlanNode,
    with_ddl: bool,
    env: &EnvSql,
) -> Result<Vec<Step>, SpecError> {
    let ddl_name = if with_ddl {
        node.ddl_statement_name.as_deref()
    } else {
        None
    };
    table_statements(
        project,
        &node.table_name,
        ddl_name,
        node.dml_statement_name.as_deref(),
        node.compute_pool_id.as_deref(),
        env,
    )
}

/// Every statement of every table of the project (DDL then DML, names from `naming`): what a target
/// without a persistent catalog needs to know (the SQL Gateway target declares tables from them).
pub fn project_statements(
    project: &Project,
    naming: &crate::plan::StatementNaming,
    env: &EnvSql,
) -> Result<Vec<StatementSpec>, SpecError> {
    let mut out = Vec::new();
    for t in project.inventory.tables.values().filter(|t| !t.external) {
        let ddl = t.ddl_ref.as_ref().map(|_| naming.ddl(&t.product, &t.name));
        let dml = t.dml_ref.as_ref().map(|_| naming.dml(&t.product, &t.name));
        for step in table_statements(project, &t.name, ddl.as_deref(), dml.as_deref(), None, env)? {
            out.push(step.spec);
        }
    }
    Ok(out)
}

/// Every statement of one table of the project (DDL then DML, names from `naming`, no compute pool),
/// as sent: what `pipeline validate --engine local` explains.
pub fn table_steps(
    project: &Project,
    table: &str,
    naming: &crate::plan::StatementNaming,
    env: &EnvSql,
) -> Result<Vec<Step>, SpecError> {
    let Some(t) = project.inventory.tables.get(table) else {
        return Ok(Vec::new());
    };
    let ddl = t.ddl_ref.as_ref().map(|_| naming.ddl(&t.product, &t.name));
    let dml = t.dml_ref.as_ref().map(|_| naming.dml(&t.product, &t.name));
    table_statements(project, table, ddl.as_deref(), dml.as_deref(), None, env)
}

/// The statements of one table: its DDL file's (named `ddl_name`, when given) and its DML file's
/// (named `dml_name`), unless another table's statement set writes it; each in `pool`, with the
/// environment's rules applied.
fn table_statements(
    project: &Project,
    table: &str,
    ddl_name: Option<&str>,
    dml_name: Option<&str>,
    pool: Option<&str>,
    env: &EnvSql,
) -> Result<Vec<Step>, SpecError> {
    let Some(t) = project.inventory.tables.get(table) else {
        return Ok(Vec::new());
    };
    let mut steps = Vec::new();
    let scripts = t
        .ddl_ref
        .as_ref()
        .or(t.dml_ref.as_ref())
        .map(|r| resolve(project, r))
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let (ddl_props, dml_props) = match scripts.as_deref() {
        Some(dir) => folder_properties(dir)?,
        None => Default::default(),
    };
    let finish = |path: &Path, mut new: Vec<Step>| -> Result<Vec<Step>, SpecError> {
        for step in &mut new {
            step.file = path.to_path_buf();
            step.spec.compute_pool = pool.map(str::to_string);
            step.rewritten_by = env
                .apply(&mut step.spec)
                .map_err(|source| SpecError::Rewrite {
                    path: path.to_path_buf(),
                    source,
                })?;
        }
        Ok(new)
    };
    if let (Some(r), Some(name)) = (&t.ddl_ref, ddl_name) {
        let path = resolve(project, r);
        let text = read_sql(project, &path)?;
        steps.extend(finish(
            &path,
            steps_from_sql(&text, name, StatementKind::Ddl, ddl_props),
        )?);
    }
    if t.written_by.is_none()
        && let (Some(r), Some(name)) = (&t.dml_ref, dml_name)
    {
        let path = resolve(project, r);
        let text = read_sql(project, &path)?;
        steps.extend(finish(
            &path,
            steps_from_sql(&text, name, StatementKind::Dml, dml_props),
        )?);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_statements_become_properties() {
        let sql = "SET 'sql.state-ttl' = '12 hours';\nSET 'x' = 'y';\nRESET 'x';\nINSERT INTO a SELECT * FROM b;\n";
        let steps = steps_from_sql(sql, "dev-dml-a", StatementKind::Dml, BTreeMap::new());
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].spec.sql, "INSERT INTO a SELECT * FROM b");
        assert_eq!(
            steps[0].spec.properties,
            BTreeMap::from([("sql.state-ttl".to_string(), "12 hours".to_string())])
        );
    }

    #[test]
    fn several_statements_and_drops() {
        let sql =
            "DROP TABLE IF EXISTS a;\nCREATE TABLE a (id INT) WITH ('connector' = 'kafka');\n";
        let steps = steps_from_sql(sql, "dev-ddl-a", StatementKind::Ddl, BTreeMap::new());
        assert_eq!(steps.len(), 2);
        assert!(steps[0].is_drop);
        assert_eq!(steps[0].spec.name, "dev-ddl-a");
        assert_eq!(steps[1].spec.name, "dev-ddl-a-2");
        assert!(!steps[1].is_drop);
    }

    #[test]
    fn statement_set_is_one_unit() {
        let sql =
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END;";
        let steps = steps_from_sql(sql, "dev-dml-a", StatementKind::Dml, BTreeMap::new());
        assert_eq!(steps.len(), 1);
        assert!(steps[0].spec.sql.starts_with("EXECUTE STATEMENT SET"));
        assert!(steps[0].spec.sql.ends_with("END"));
    }
}
