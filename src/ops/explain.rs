//! `pipeline explain SCOPE` (shift_left's `table explain`): the plan the engine makes of each
//! statement of the scope's tables, as the engine prints it. Each statement is explained as sent
//! (the environment's rewrite rules applied) with `EXPLAIN`, run as a query on the configured target
//! (`Target::start_query` + [`crate::target::read::read`]) under a query name, which is removed at
//! the end whatever happens.
//!
//! What `EXPLAIN` takes (<https://docs.confluent.io/cloud/current/flink/reference/statements/explain.html>):
//! a query, an `INSERT`, `STATEMENT SET BEGIN … END` and, on Confluent Cloud, `CREATE TABLE … AS
//! SELECT`; a statement set is explained as `EXPLAIN STATEMENT SET …` (the form both engines take),
//! a materialized table (and a CTAS on the SQL Gateway) by its query. A plain DDL statement has no
//! plan and is listed as such.

use super::scope::PlanRequest;
use super::target::{self, Connected, TargetKind};
use super::{Context, OpsError};
use crate::config::process_env;
use crate::deploy::env_sql::EnvSql;
use crate::deploy::spec;
use crate::engine_plan::{self, SinkChangelog};
use crate::plan::{Origin, StatementNaming, StatementStatus};
use crate::target::gateway::catalog;
use crate::target::read::{self, Quiet, ReadOptions};
use crate::target::{StatementKind, StatementSpec};
use serde::Serialize;
use std::time::Duration;

/// What to explain.
#[derive(Debug, Clone)]
pub struct ExplainRequest {
    /// The scope (its start tables are explained, not their ancestors).
    pub plan: PlanRequest,
    /// Longest wait for one plan.
    pub timeout: Duration,
    /// Also read the changelog each sink receives and its upsert key ([`Explained::sinks`]): on the
    /// SQL Gateway from the compiled plan (`COMPILE PLAN`, which needs the engine on this machine),
    /// on Confluent Cloud from the `EXPLAIN` text's physical details.
    pub changelog_mode: bool,
    /// Also write each plan to `<table>_explain_report.json` (shift_left's `--persist-report`, its
    /// shape `{"table_name", "trace"}`) in [`super::output_dir`].
    pub persist_report: bool,
}

/// The plan of one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explained {
    pub table_name: String,
    /// The statement name.
    pub statement: String,
    /// The `EXPLAIN` sent; `None` for a statement that has no plan.
    pub explain: Option<String>,
    /// The engine's plan text.
    pub plan: Option<String>,
    /// Why there is no plan: the engine's message, or why it was not asked.
    pub error: Option<String>,
    /// Whether `error` is a failure (the engine rejected the statement, or the read failed), rather
    /// than a statement that has no plan (a DDL).
    pub failed: bool,
    /// With [`ExplainRequest::changelog_mode`]: the changelog each sink of the statement receives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sinks: Option<Vec<SinkChangelog>>,
}

/// The plans of a scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExplainReport {
    pub scope: String,
    /// The target, secrets masked.
    pub target: String,
    pub statements: Vec<Explained>,
    /// The reports written with [`ExplainRequest::persist_report`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub persisted: Vec<std::path::PathBuf>,
}

impl ExplainReport {
    /// Whether every statement that has a plan got one.
    pub fn success(&self) -> bool {
        self.statements.iter().all(|s| !s.failed)
    }
}

/// The `EXPLAIN` of a statement on `kind`, `None` for what `EXPLAIN` does not take.
pub fn explain_sql(spec: &StatementSpec, kind: TargetKind) -> Option<String> {
    if kind == TargetKind::SqlGateway {
        return crate::target::gateway::explain_sql(spec);
    }
    let converted = catalog::execute_statement_set(&spec.sql);
    let text = converted.as_deref().unwrap_or(&spec.sql).trim();
    let upper: String = text
        .chars()
        .take(60)
        .collect::<String>()
        .to_ascii_uppercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if upper.starts_with("INSERT ") || upper.starts_with("SELECT ") || upper.starts_with("WITH ") {
        Some(format!("EXPLAIN {text}"))
    } else if upper.starts_with("EXECUTE STATEMENT SET") {
        Some(format!("EXPLAIN {}", text["EXECUTE".len()..].trim_start()))
    } else if upper.starts_with("CREATE MATERIALIZED TABLE") {
        catalog::query_after_as(text).map(|q| format!("EXPLAIN {q}"))
    } else if catalog::query_after_as(text).is_some() && upper.starts_with("CREATE ") {
        // CREATE TABLE … AS SELECT: Confluent explains it as written.
        Some(format!("EXPLAIN {text}"))
    } else {
        None
    }
}

/// Explains every statement of the scope's tables.
///
/// Errors: errors in the project, no or an unknown scope, unreadable SQL, invalid rewrite rules, a
/// target that cannot be reached. An engine that rejects one statement is reported for that
/// statement ([`ExplainReport::success`]).
pub fn explain(ctx: &Context, req: &ExplainRequest) -> Result<ExplainReport, OpsError> {
    let cfg = ctx.project_config(&req.plan.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.plan.pipelines,
        req.plan.allow_unknown,
        "nothing explained: fix the errors above",
    )?;
    let env = EnvSql::from_config(&cfg, &process_env)?;
    let plan = super::plan::plan_with(
        &cfg,
        &project,
        &req.plan,
        &StatementStatus::default(),
        ctx.console,
    )?;
    let kind = TargetKind::of(&cfg);
    let mut work: Vec<(String, StatementSpec, Option<String>)> = Vec::new();
    for n in plan
        .nodes
        .iter()
        .filter(|n| matches!(n.origin, Origin::Start))
    {
        for step in spec::statements_of(&project, n, true, &env)? {
            if step.is_drop {
                continue;
            }
            let explain = explain_sql(&step.spec, kind);
            work.push((n.table_name.clone(), step.spec, explain));
        }
    }
    let c = target::connect(&cfg, Some(&project))?;
    let rt = target::runtime()?;
    let naming = StatementNaming::from_config(&cfg);
    let options = ReadOptions {
        timeout: Some(req.timeout),
        idle: Duration::from_secs(2),
        poll: Duration::from_millis(300),
        ..ReadOptions::default()
    };
    // The changelog mode on the gateway comes from the compiled plan, which only the concrete client
    // can ask for.
    let compiler = match (req.changelog_mode, kind) {
        (true, TargetKind::SqlGateway) => crate::target::settings::gateway(&cfg, &process_env)
            .map(|s| target::gateway_with(&cfg, Some(&project), s))
            .transpose()?,
        _ => None,
    };
    let plans_dir = tempfile::tempdir()?;
    let mut statements = Vec::new();
    for (table, spec, explain) in work {
        let explained = match (explain, &compiler) {
            (None, _) => not_explainable(table, spec),
            (Some(sql), Some(gw)) => {
                let compiled = rt.block_on(gw.compile_plan(&spec, plans_dir.path()));
                compiled_changelog(&c, table, spec, sql, compiled)
            }
            (Some(sql), None) => {
                let query = StatementSpec {
                    name: super::query::query_name(&naming),
                    sql: sql.clone(),
                    properties: spec.properties.clone(),
                    kind: StatementKind::Dml,
                    compute_pool: spec.compute_pool.clone(),
                };
                let outcome = rt.block_on(async {
                    // Listening before the create: a signal during it still lets the query be
                    // removed.
                    let mut signals = super::signals::Interrupts::listen();
                    let mut stream = c.target.start_query(&query).await?;
                    read::read(stream.as_mut(), &options, false, &Quiet, async move {
                        signals.recv().await;
                    })
                    .await
                });
                explained_plan(ctx, &c, req.changelog_mode, table, spec, sql, outcome)
            }
        };
        statements.push(explained);
    }
    let mut persisted = Vec::new();
    if req.persist_report {
        let dir = super::output_dir(None, &req.plan.pipelines)?;
        for s in statements.iter().filter(|s| s.plan.is_some()) {
            let path = dir.join(format!("{}_explain_report.json", s.table_name));
            let body = serde_json::json!({"table_name": s.table_name, "trace": s.plan});
            crate::fsutil::write_atomic(&path, crate::fsutil::to_json_pretty(&body).as_bytes())
                .map_err(|source| OpsError::Write {
                    path: path.clone(),
                    source,
                })?;
            persisted.push(path);
        }
    }
    Ok(ExplainReport {
        scope: plan.scope,
        target: c.scrubber.scrub(&c.target.describe()),
        statements,
        persisted,
    })
}

/// A statement EXPLAIN does not take (a DDL, …): reported, not failed.
fn not_explainable(table: String, spec: StatementSpec) -> Explained {
    Explained {
        table_name: table,
        error: Some(if spec.kind == StatementKind::Ddl {
            "a DDL statement: EXPLAIN takes queries, INSERT, statement sets and CTAS".into()
        } else {
            "EXPLAIN does not take this statement".into()
        }),
        statement: spec.name,
        explain: None,
        plan: None,
        failed: false,
        sinks: None,
    }
}

/// The sinks' changelog modes from the plan the gateway compiled (`compiled`). A CTAS or
/// materialized table has no COMPILE PLAN: a limit, not a failure.
fn compiled_changelog(
    c: &Connected,
    table: String,
    spec: StatementSpec,
    sql: String,
    compiled: Result<Option<serde_json::Value>, crate::target::TargetError>,
) -> Explained {
    let (sinks, error, failed) = match compiled {
        Ok(Some(plan)) => match engine_plan::sinks_of_compiled_plan(&plan) {
            Ok(s) => (Some(s), None, false),
            Err(e) => (None, Some(e), true),
        },
        Ok(None) => (
            None,
            Some("COMPILE PLAN takes INSERT and statement sets only: no changelog mode for a CTAS or materialized table here".to_string()),
            false,
        ),
        Err(e) => (None, Some(c.scrubber.scrub(&e.to_string())), true),
    };
    Explained {
        table_name: table,
        statement: spec.name,
        explain: Some(sql),
        plan: None,
        failed,
        error,
        sinks,
    }
}

/// The plan an `EXPLAIN` query returned (`outcome`; its rows' first column, line by line), with the
/// sinks' changelog modes read from it when `changelog_mode`. A query that could not be removed is
/// a warning on the console.
fn explained_plan(
    ctx: &Context,
    c: &Connected,
    changelog_mode: bool,
    table: String,
    spec: StatementSpec,
    sql: String,
    outcome: Result<read::QueryResult, crate::target::TargetError>,
) -> Explained {
    let (plan_text, error) = match outcome {
        Ok(r) => {
            if let Some(e) = &r.close_error {
                ctx.console.warn(&format!(
                    "warning[explain]: {} could not be removed ({}): `flinkpipe pipeline decommission --orphans --delete` removes it",
                    r.statement,
                    c.scrubber.scrub(e)
                ));
            }
            let text: Vec<String> = r
                .rows
                .iter()
                .filter_map(|row| row.first().map(plain))
                .collect();
            if text.is_empty() {
                (
                    None,
                    Some(format!("no plan came back ({:?})", r.stopped_by)),
                )
            } else {
                (Some(text.join("\n")), None)
            }
        }
        Err(e) => (None, Some(c.scrubber.scrub(&e.to_string()))),
    };
    let sinks = (changelog_mode && error.is_none())
        .then(|| engine_plan::sinks_of_confluent_explain(plan_text.as_deref().unwrap_or("")));
    Explained {
        table_name: table,
        statement: spec.name,
        explain: Some(sql),
        failed: error.is_some(),
        plan: plan_text,
        error,
        sinks,
    }
}

/// A value as plain text (a string without its JSON quotes).
fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn spec(sql: &str, kind: StatementKind) -> StatementSpec {
        StatementSpec {
            name: "dev-x".into(),
            sql: sql.into(),
            properties: BTreeMap::new(),
            kind,
            compute_pool: None,
        }
    }

    #[test]
    fn what_explain_takes_on_each_target() {
        let c = TargetKind::ConfluentCloud;
        let g = TargetKind::SqlGateway;
        let insert = spec("INSERT INTO a SELECT * FROM b", StatementKind::Dml);
        assert_eq!(
            explain_sql(&insert, c).as_deref(),
            Some("EXPLAIN INSERT INTO a SELECT * FROM b")
        );
        assert_eq!(explain_sql(&insert, g), explain_sql(&insert, c));
        let set = spec(
            "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END",
            StatementKind::Dml,
        );
        assert_eq!(
            explain_sql(&set, c).as_deref(),
            Some("EXPLAIN STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END")
        );
        let ctas = spec("CREATE TABLE t AS SELECT id FROM b", StatementKind::Dml);
        assert_eq!(
            explain_sql(&ctas, c).as_deref(),
            Some("EXPLAIN CREATE TABLE t AS SELECT id FROM b")
        );
        assert_eq!(
            explain_sql(&ctas, g).as_deref(),
            Some("EXPLAIN SELECT id FROM b")
        );
        let ddl = spec("CREATE TABLE t (id INT)", StatementKind::Ddl);
        assert_eq!(explain_sql(&ddl, c), None);
        assert_eq!(explain_sql(&ddl, g), None);
    }
}
