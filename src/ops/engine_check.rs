//! `pipeline validate --engine local`: the Flink planner as a CI gate before any cloud is involved.
//! Every statement of the project (or of the tables changed since a ref, and their children, which
//! read what changed) is `EXPLAIN`ed on a local Apache Flink SQL Gateway with the project's DDL and
//! the declared external tables declared in the session. What the planner rejects — a type error, an
//! unknown column or function, a typo, an updating query into an append-only sink (Flink: "Table
//! sink … doesn't support consuming update changes") — becomes an error diagnostic at the file and
//! line of the statement (the line the planner names, when it names one). A table's DDL is checked
//! by declaring it for the statements that read or write it; one that no checked statement uses is
//! counted as not checked.
//!
//! The engine is `flinkpipe.gateway` when configured, else the local stack's
//! (`http://127.0.0.1:8083`, JobManager `http://127.0.0.1:8081`; `make up`).

use super::{Context, OpsError};
use crate::changes::{self, ChangeKind};
use crate::config::process_env;
use crate::deploy::env_sql::EnvSql;
use crate::deploy::spec::{self, Step};
use crate::diagnostics::Diagnostic;
use crate::plan::StatementNaming;
use crate::target::{StatementKind, Target, TargetError};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct EngineCheckRequest {
    /// Only the tables whose files changed since this ref (and their children); `None`: every table.
    pub since: Option<super::changes::ChangeRequest>,
    pub allow_unknown: bool,
}

/// What the planner said of one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum EngineOutcome {
    /// The planner made a plan.
    Valid,
    /// The planner rejected it (the engine's message).
    Rejected { message: String },
    /// The statement cannot be explained as sent (several statements in one file, a temporary
    /// view): a warning, not a rejection.
    NotChecked { reason: String },
    /// A DDL statement, checked through the statements that declare its table.
    Declared {
        /// Whether a checked statement declared it.
        used: bool,
    },
}

/// One checked statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineStatement {
    pub table_name: String,
    pub statement: String,
    /// `ddl` (checked by declaring its table) or `dml` (explained).
    pub kind: StatementKind,
    /// `pipelines/…/dml.t.sql`.
    pub file: String,
    pub line: usize,
    #[serde(flatten)]
    pub outcome: EngineOutcome,
}

/// The result of the engine check.
#[derive(Debug, Clone, Serialize)]
pub struct EngineCheck {
    /// The engine, as the gateway describes itself.
    pub engine: String,
    pub statements: Vec<EngineStatement>,
    /// One error per rejection (`engine-rejected`, or `engine-changelog-mismatch` for an updating
    /// query into a sink that takes only inserts), at the statement's file and line.
    pub diagnostics: Vec<Diagnostic>,
}

impl EngineCheck {
    /// Statements the planner accepted.
    pub fn valid(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| s.outcome == EngineOutcome::Valid)
            .count()
    }

    /// Statements the planner rejected (a DDL that could not be declared counts once, the statements
    /// that needed it too).
    pub fn rejected(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| matches!(s.outcome, EngineOutcome::Rejected { .. }))
            .count()
    }

    /// Statements sent to the planner (DML, statement sets, CTAS, materialized tables).
    pub fn explained(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| s.kind == StatementKind::Dml)
            .count()
    }

    /// DDL statements no checked statement declared (their SQL was not seen by the planner).
    pub fn unchecked(&self) -> usize {
        self.statements
            .iter()
            .filter(|s| s.outcome == EngineOutcome::Declared { used: false })
            .count()
    }
}

/// Explains the statements on the local engine.
///
/// Errors: errors in the project, git errors (with `since`), unreadable SQL, invalid rewrite rules;
/// an engine that does not answer (with how to start the local stack).
pub fn engine_check(
    ctx: &Context,
    pipelines: &Path,
    req: &EngineCheckRequest,
) -> Result<EngineCheck, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        req.allow_unknown,
        "no engine check: fix the errors above",
    )?;
    let wanted = match &req.since {
        None => None,
        Some(change) => Some(changed_and_children(&project, pipelines, &cfg, change)?),
    };
    let naming = StatementNaming::from_config(&cfg);
    let env = EnvSql::from_config(&cfg, &process_env)?;
    let base = super::source_base(pipelines);
    let mut work: Vec<(String, Step)> = Vec::new();
    for t in project.inventory.tables.values().filter(|t| !t.external) {
        if wanted.as_ref().is_some_and(|w| !w.contains(&t.name)) {
            continue;
        }
        for step in spec::table_steps(&project, &t.name, &naming, &env)? {
            if !step.is_drop {
                work.push((t.name.clone(), step));
            }
        }
    }
    let settings = crate::target::settings::gateway(&cfg, &process_env).unwrap_or_else(|| {
        crate::target::GatewaySettings::new("http://127.0.0.1:8083", "http://127.0.0.1:8081")
    });
    let gw = super::target::gateway_with(&cfg, Some(&project), settings)?;
    let engine = gw.describe();
    let rt = super::target::runtime()?;
    let shown = |p: &Path| match &base {
        Some(b) => p
            .strip_prefix(b)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.display().to_string()),
        None => p.display().to_string(),
    };
    // Every DDL statement of the project (a parent outside `--since` is declared too), by statement
    // name, for declaration failures.
    let mut ddl_at: BTreeMap<String, (String, usize, String)> = BTreeMap::new();
    for t in project.inventory.tables.values().filter(|t| !t.external) {
        for s in spec::table_steps(&project, &t.name, &naming, &env)?
            .into_iter()
            .filter(|s| s.spec.kind == StatementKind::Ddl)
        {
            ddl_at.insert(s.spec.name.clone(), (shown(&s.file), s.line, s.spec.sql));
        }
    }
    let mut checker = Checker {
        ddl_at: &ddl_at,
        statements: Vec::new(),
        diagnostics: Vec::new(),
        declared_ok: BTreeSet::new(),
        ddl_rejected: BTreeMap::new(),
        reported: BTreeSet::new(),
    };
    for (table, step) in &work {
        if step.spec.kind == StatementKind::Ddl {
            continue;
        }
        let file = shown(&step.file);
        let outcome = match rt.block_on(gw.validate_statement(&step.spec)) {
            Ok(()) => checker.valid(step),
            Err(TargetError::Invalid(message)) => checker.rejected(table, step, &file, &message),
            Err(e @ TargetError::Transport { .. }) => {
                return Err(OpsError::Target(format!(
                    "the local Flink does not answer ({e}); start it with `make up` (scripts/local-flink.sh) or set flinkpipe.gateway.url"
                )));
            }
            Err(TargetError::Config(reason)) => {
                checker.report(
                    Diagnostic::warning(
                        "engine-not-checked",
                        format!("the local Flink cannot check {}: {reason}", step.spec.name),
                    )
                    .at(file.clone(), Some(step.line), None),
                    format!("dml:{}", step.spec.name),
                );
                EngineOutcome::NotChecked { reason }
            }
            // The engine failed, not the statement: no verdict on the SQL.
            Err(e) => {
                return Err(OpsError::Target(format!(
                    "the local Flink could not check {}: {}",
                    step.spec.name,
                    first_lines(&e.to_string())
                )));
            }
        };
        checker.statements.push(EngineStatement {
            table_name: table.clone(),
            statement: step.spec.name.clone(),
            kind: step.spec.kind,
            file,
            line: step.line,
            outcome,
        });
    }
    for (table, step) in work
        .iter()
        .filter(|(_, s)| s.spec.kind == StatementKind::Ddl)
    {
        let outcome = match checker.ddl_rejected.get(&step.spec.name) {
            Some(message) => EngineOutcome::Rejected {
                message: message.clone(),
            },
            None => EngineOutcome::Declared {
                used: checker.declared_ok.contains(&table.to_ascii_lowercase()),
            },
        };
        checker.statements.push(EngineStatement {
            table_name: table.clone(),
            statement: step.spec.name.clone(),
            kind: step.spec.kind,
            file: shown(&step.file),
            line: step.line,
            outcome,
        });
    }
    let (statements, diagnostics) = (checker.statements, checker.diagnostics);
    ctx.console.diagnostics(&diagnostics, None);
    Ok(EngineCheck {
        engine,
        statements,
        diagnostics,
    })
}

/// The tables whose files changed since `change` (not deleted) and their children: what a change
/// can break.
///
/// Errors: git errors, a bad ref.
fn changed_and_children(
    project: &crate::project::Project,
    pipelines: &Path,
    cfg: &crate::config::Config,
    change: &super::changes::ChangeRequest,
) -> Result<BTreeSet<String>, OpsError> {
    let set = changes::list_changes(pipelines, &super::changes::change_options(change)?, cfg)?;
    let mut names = BTreeSet::new();
    for f in set
        .files
        .iter()
        .filter(|f| f.change_kind != ChangeKind::Deleted)
    {
        if project.inventory.tables.contains_key(&f.new_table_name) {
            names.insert(f.new_table_name.clone());
            names.extend(
                project
                    .graph
                    .children(&f.new_table_name)
                    .into_iter()
                    .map(str::to_string),
            );
        }
    }
    Ok(names)
}

/// What the checks found so far.
struct Checker<'a> {
    /// Every DDL statement of the project by statement name: `(file shown, line, SQL)`.
    ddl_at: &'a BTreeMap<String, (String, usize, String)>,
    statements: Vec<EngineStatement>,
    diagnostics: Vec<Diagnostic>,
    /// Tables (lower case) a valid statement read or wrote: their DDL was declared and used.
    declared_ok: BTreeSet<String>,
    /// DDL statements that could not be declared: statement name → the engine's message.
    ddl_rejected: BTreeMap<String, String>,
    /// Keys of the diagnostics given (`ddl:<statement>`, `dml:<statement>`): each is given once.
    reported: BTreeSet<String>,
}

impl Checker<'_> {
    fn report(&mut self, d: Diagnostic, key: String) {
        if self.reported.insert(key) {
            self.diagnostics.push(d);
        }
    }

    /// `step` is valid: the tables it reads and writes were declared and used.
    fn valid(&mut self, step: &Step) -> EngineOutcome {
        self.declared_ok.extend(
            crate::sql::analyze(&step.spec.sql)
                .statements
                .iter()
                .flat_map(|s| s.sources.iter().chain(s.sinks.iter()))
                .map(|n| n.name.table().to_ascii_lowercase()),
        );
        EngineOutcome::Valid
    }

    /// The planner rejected `step` (of `table`, in `file`) with `message`: a table's DDL that cannot
    /// be declared is that DDL's error, reported once at its own file and line; anything else is the
    /// statement's, at the position the message gives.
    fn rejected(&mut self, table: &str, step: &Step, file: &str, message: &str) -> EngineOutcome {
        let message = first_lines(message);
        let ddl_at = self.ddl_at;
        match declaration_failure(&message)
            .and_then(|(st, cause)| ddl_at.get(st).map(|a| (st, cause, a)))
        {
            Some((st, cause, (f, l, sql))) => {
                let (line, column) = position(cause, sql, *l);
                self.ddl_rejected
                    .entry(st.to_string())
                    .or_insert_with(|| cause.to_string());
                self.report(
                    Diagnostic::error(
                        code_of(cause),
                        format!("the Flink planner rejects the DDL of {st}: {cause}"),
                    )
                    .at(f.clone(), Some(line), column),
                    format!("ddl:{st}"),
                );
            }
            None => {
                // A declaration of a table the project does not define (an external table's
                // DDL): its position is in that DDL, not in this statement.
                let (line, column) =
                    if declaration_failure(&message).is_some() || message.contains("declaring ") {
                        (step.line, None)
                    } else {
                        explained_position(&message, &step.spec.sql, step.line)
                    };
                self.report(
                    Diagnostic::error(
                        code_of(&message),
                        format!(
                            "the Flink planner rejects {} ({table}): {message}",
                            step.spec.name
                        ),
                    )
                    .at(file.to_string(), Some(line), column),
                    format!("dml:{}", step.spec.name),
                );
            }
        }
        EngineOutcome::Rejected { message }
    }
}

/// The engine's message without its Java stack trace: the lines up to the first `\tat …` frame,
/// at most 6.
fn first_lines(message: &str) -> String {
    message
        .lines()
        .take_while(|l| !l.trim_start().starts_with("at ") && !l.starts_with('\t'))
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The statement whose DDL could not be declared and the engine's cause: `declaring table k from
/// S: cause` → `(S, cause)`.
fn declaration_failure(message: &str) -> Option<(&str, &str)> {
    let rest = message.split("declaring table ").nth(1)?;
    let (_, after) = rest.split_once(" from ")?;
    let (statement, cause) = after.split_once(": ")?;
    Some((statement.trim(), cause.trim()))
}

/// `engine-changelog-mismatch` for an updating changelog into a sink that takes only inserts
/// (Flink: "… doesn't support consuming update changes …"), else `engine-rejected`.
fn code_of(message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    if m.contains("doesn't support consuming update")
        || m.contains("does not support consuming update")
    {
        "engine-changelog-mismatch"
    } else {
        "engine-rejected"
    }
}

/// [`position`] for a statement as the gateway explains it: the text after `EXPLAIN ` is the
/// statement itself, or a part of it (the query of a CTAS or materialized table: its lines start
/// further down), or a rewrite (a statement set's other form: not mapped, the statement's line).
fn explained_position(message: &str, sql: &str, start: usize) -> (usize, Option<usize>) {
    let spec = crate::target::StatementSpec {
        name: String::new(),
        sql: sql.to_string(),
        properties: Default::default(),
        kind: StatementKind::Dml,
        compute_pool: None,
    };
    let sent = crate::target::gateway::explain_sql(&spec);
    let sent = sent
        .as_deref()
        .and_then(|e| e.strip_prefix("EXPLAIN "))
        .unwrap_or(sql);
    match sql.find(sent) {
        Some(0) => position(message, sql, start),
        Some(at) => {
            let skipped = sql[..at].matches('\n').count();
            let (line, column) = position(message, sent, start + skipped);
            // The first line of the part starts mid-line in the file: its columns are not mapped.
            (line, column.filter(|_| line > start + skipped))
        }
        None => (start, None),
    }
}

/// The file line (and column) of what the planner names (`at line 3, column 5`, `From line 3,
/// column 8 to …`) in a statement that starts at file line `start`; the statement's own line when
/// the planner names none, or one outside the statement's text. The text is sent as `EXPLAIN ` +
/// the statement, or declared as written, so its lines are the file's from `start` on; a column
/// on the first line is not mapped (the prefix shifts it).
fn position(message: &str, sql: &str, start: usize) -> (usize, Option<usize>) {
    let lower = message.to_ascii_lowercase();
    let Some(i) = lower.find("line ") else {
        return (start, None);
    };
    let number = |s: &str| -> Option<usize> {
        s.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    };
    let rest = &lower[i + 5..];
    let Some(n) = number(rest) else {
        return (start, None);
    };
    if n == 0 || n > sql.lines().count().max(1) {
        return (start, None);
    }
    let column = rest
        .split_once("column ")
        .and_then(|(_, c)| number(c))
        .filter(|_| n > 1);
    (start + n - 1, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planner_message_is_read_for_its_position_its_declaration_and_its_kind() {
        let sql = "INSERT INTO a\nSELECT x\nFROM b";
        assert_eq!(
            position(
                "SQL validation failed. From line 2, column 8 to line 2, column 10: Column 'x' not found",
                sql,
                3
            ),
            (4, Some(8))
        );
        assert_eq!(position("at line 1, column 20", sql, 3), (3, None));
        assert_eq!(position("no position", sql, 3), (3, None));
        assert_eq!(position("at line 9, column 1", sql, 3), (3, None));
        // A CTAS is explained by its query, which starts on the statement's third line.
        let ctas = "CREATE TABLE t\nWITH ('x' = 'y')\nAS SELECT a,\n  b\nFROM s";
        assert_eq!(
            explained_position(
                "From line 2, column 3 to line 2, column 3: Column 'b' not found",
                ctas,
                10
            ),
            (13, Some(3))
        );
        assert_eq!(
            explained_position("at line 2, column 3", sql, 3),
            (4, Some(3))
        );
        assert_eq!(
            declaration_failure(
                "declaring table src_orders from dev-ddl-src-orders: CalciteContextException: Unknown identifier 'INTT'"
            ),
            Some((
                "dev-ddl-src-orders",
                "CalciteContextException: Unknown identifier 'INTT'"
            ))
        );
        assert_eq!(declaration_failure("Column 'x' not found"), None);
        assert_eq!(
            code_of(
                "Table sink 'default_catalog.default_database.t' doesn't support consuming update changes which is produced by node GroupAggregate"
            ),
            "engine-changelog-mismatch"
        );
        assert_eq!(code_of("Column 'x' not found"), "engine-rejected");
        assert_eq!(
            first_lines("Oops: bad\n\tat org.apache.Foo\n\tat bar"),
            "Oops: bad"
        );
    }
}
