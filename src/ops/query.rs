//! `sql query` (a read-only query on the configured target) and `table preview` (the rows of a table
//! of the project): start the query under a recognisable name, read it until it ends or a stop
//! condition holds ([`crate::target::read`]), fold its changelog into a snapshot, and always stop it.
//!
//! Query names are `<statement prefix>-query-<8 hex digits>`: a run killed before it could stop its
//! query leaves a statement (Confluent) or job (SQL Gateway) under the project's prefix that
//! `pipeline status` lists as an orphan and `pipeline decommission --orphans` removes.

use super::target::{self, TargetKind};
use super::{Context, OpsError};
use crate::plan::StatementNaming;
use crate::project::{LoadOptions, Project};
use crate::target::read::{self, QueryResult};
use crate::target::{StatementKind, StatementSpec};

pub use crate::results::{Change, Column, Row, RowKind};
pub use crate::target::read::{ReadObserver, ReadOptions, StopReason};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A query to run.
#[derive(Debug, Clone)]
pub struct QueryRequest {
    /// The SQL text (one `SELECT`, `WITH … SELECT`, `VALUES`, `SHOW`, `DESCRIBE` or `EXPLAIN`).
    pub sql: String,
    /// Where the SQL came from (`--file F`, else `command line`), for messages.
    pub origin: String,
    /// The project whose tables the SQL Gateway declares in its session before the query (the
    /// gateway's catalog is per session): `--pipelines`, `$PIPELINES`, `./pipelines` when it exists.
    pub pipelines: Option<PathBuf>,
    pub read: ReadOptions,
    /// Print a new snapshot each time it changes (through the observer), until Ctrl-C or timeout.
    pub follow: bool,
}

/// A table preview.
#[derive(Debug, Clone)]
pub struct PreviewRequest {
    pub pipelines: PathBuf,
    /// The table, as written (`int_x`, or the unversioned name of `int_x_v2`).
    pub table: String,
    /// A filter (`--where`), SQL.
    pub filter: Option<String>,
    pub read: ReadOptions,
    pub follow: bool,
    pub allow_unknown: bool,
    /// Read the blue table of a blue-green release (the version before the resolved one) through
    /// the green one's definition, instead of the table the name resolves to.
    pub side: Side,
}

/// Which table of a blue-green pair `table preview` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    /// The table the name resolves to (its newest version).
    #[default]
    Green,
    /// The version before it, the one still running until decommission.
    Blue,
}

/// A query's result and the SQL that ran.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueryOutcome {
    /// The SQL sent.
    pub sql: String,
    /// The table previewed (`table preview` only), after name resolution.
    pub table: Option<String>,
    /// Why the read may not end by itself (an aggregate over tables read without a bound), and
    /// how to bound it; `None` when it is bounded or carries no aggregate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbounded: Option<String>,
    #[serde(flatten)]
    pub result: QueryResult,
}

/// Why a read-only query over live topics may not end by itself: it aggregates (`GROUP BY`,
/// `DISTINCT`, `OVER`, a join) over tables it reads without `scan.bounded.mode` and has no `LIMIT`, so
/// its result keeps updating as rows arrive and the read stops only at `--idle` or `--timeout`.
/// `None` otherwise. Words are matched outside strings and comments (the SQL front end's tokens).
pub fn unbounded_hint(sql: &str) -> Option<String> {
    let tokens = crate::sql::lexer::tokenize_significant(sql)?;
    let words: Vec<String> = tokens
        .iter()
        .filter_map(|t| match &t.token {
            sqlparser::tokenizer::Token::Word(w) if w.quote_style.is_none() => {
                Some(w.value.to_ascii_uppercase())
            }
            _ => None,
        })
        .collect();
    let has = |w: &str| words.iter().any(|x| x == w);
    let aggregates = has("GROUP") || has("DISTINCT") || has("OVER") || has("JOIN");
    let bounded = sql.to_ascii_lowercase().contains("scan.bounded.mode") || has("LIMIT");
    (aggregates && !bounded).then(|| {
        "the query aggregates over tables read without a bound, so its result keeps updating and the read ends only at --idle or --timeout: bound each table with /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ after its name, add LIMIT N, or read one table with `table preview`".to_string()
    })
}

/// Runs a read-only query. Ctrl-C ends it with the snapshot held then; the query is stopped in every
/// case (a failure to stop it is in `close_error`, with the name to clean).
///
/// Errors: SQL that is not one read-only statement (refused before any server is contacted), a
/// target that cannot be reached, a query the engine rejects (its message, extracted).
pub fn query(
    ctx: &Context,
    req: &QueryRequest,
    observer: &dyn ReadObserver,
) -> Result<QueryOutcome, OpsError> {
    check_read_only(&req.sql, &req.origin)?;
    let cfg = match &req.pipelines {
        Some(p) => ctx.project_config(p)?,
        None => ctx.config()?,
    };
    let project = match &req.pipelines {
        Some(p) if TargetKind::of(&cfg) == TargetKind::SqlGateway => Some(crate::project::load(
            p,
            &cfg,
            LoadOptions {
                allow_unknown: true,
            },
        )?),
        _ => None,
    };
    let unbounded = unbounded_hint(&req.sql).filter(|_| !req.follow);
    if let Some(h) = &unbounded {
        ctx.console.warn(&format!("warning[unbounded]: {h}"));
    }
    let result = run(
        ctx,
        &cfg,
        project.as_ref(),
        &req.sql,
        BTreeMap::new(),
        &req.read,
        req.follow,
        observer,
    )?;
    Ok(QueryOutcome {
        sql: req.sql.clone(),
        table: None,
        unbounded,
        result,
    })
}

/// Previews a table of the project: `SELECT * FROM <table> [WHERE …]`, read from the start of the
/// table and bounded at its current end where the connector allows (Kafka: `scan.startup.mode`
/// `earliest-offset`, `scan.bounded.mode` `latest-offset` — a hint on the SQL Gateway, statement
/// properties on Confluent Cloud), folded by the table's primary key when it has one.
///
/// Errors: an unknown table (with the closest names), an external table the target cannot read, as
/// [`query`].
pub fn preview(
    ctx: &Context,
    req: &PreviewRequest,
    observer: &dyn ReadObserver,
) -> Result<QueryOutcome, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no preview: fix the errors above",
    )?;
    let name = ctx.resolve_table(&project, &req.table)?;
    let table = &project.inventory.tables[&name];
    let read_name = match req.side {
        Side::Green => name.clone(),
        Side::Blue => crate::versioning::names::previous_version(&name).ok_or_else(|| {
            OpsError::Usage(format!(
                "--side blue: {name} has no version suffix, so no blue-green release replaced a blue table by it"
            ))
        })?,
    };
    let (sql, properties) = bounded_select(
        TargetKind::of(&cfg),
        table.connector(),
        &read_name,
        req.filter.as_deref(),
    );
    // The blue table is declared (SQL Gateway) from the green DDL with its name.
    let aliases = if read_name == name {
        Vec::new()
    } else {
        vec![(name.clone(), read_name.clone())]
    };
    let mut read = req.read.clone();
    if read.key_columns.is_none() && !table.primary_key.is_empty() {
        read.key_columns = Some(table.primary_key.clone());
    }
    let result = run_on(
        ctx,
        &cfg,
        Some(&project),
        &aliases,
        &sql,
        properties,
        &read,
        req.follow,
        observer,
    )?;
    Ok(QueryOutcome {
        sql,
        table: Some(read_name),
        unbounded: None,
        result,
    })
}

/// Reads the current snapshot of `read_name` as [`preview`] reads `table` (same bounded read, same
/// hints and statement properties from `table`'s connector, folded by `table`'s primary key): for
/// `pipeline release-check`, which reads a blue table (`t`) through its green successor's
/// definition (`t_v2`) after the files were renamed. On the SQL Gateway the blue name is declared
/// from the green DDL with the name replaced ([`target::connect_with_aliases`]).
///
/// Errors: an unknown `table`, as [`query`].
pub fn snapshot_as(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    table: &str,
    read_name: &str,
    read: &ReadOptions,
) -> Result<QueryOutcome, OpsError> {
    snapshot(ctx, cfg, project, table, read_name, read, true)
}

/// [`snapshot_as`] of `table` under its own name, folded by the result's own changelog (its upsert
/// key when the service gives one, else whole rows) instead of the table's declared primary key:
/// an append-only table holding two rows of one key shows both (`pipeline test-live`, `unique: key`).
///
/// Errors: as [`snapshot_as`].
pub fn snapshot_unfolded(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    table: &str,
    read: &ReadOptions,
) -> Result<QueryOutcome, OpsError> {
    snapshot(ctx, cfg, project, table, table, read, false)
}

/// Runs a read-only query of the project's tables as a bounded read: on Confluent Cloud every
/// table it reads is read from its earliest offset to its current end (the statement properties
/// of [`preview`]); on the SQL Gateway every Kafka table of the project it reads gets the hint of
/// [`preview`] ([`crate::sql::rewrite::with_table_hints`]), except a reference the query already
/// hints and a window TVF's `TABLE t` argument, which are read as the query says.
/// The query is always stopped. `origin` names where the SQL came from, for messages.
///
/// Errors: SQL that is not one read-only statement, as [`query`].
pub fn bounded_query(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    sql: &str,
    origin: &str,
    read: &ReadOptions,
) -> Result<QueryOutcome, OpsError> {
    check_read_only(sql, origin)?;
    let kind = TargetKind::of(cfg);
    let (_, properties) = bounded_select(kind, None, "x", None);
    // On the SQL Gateway every Kafka table of the project the query reads gets the hint that
    // `table preview` gives its table: read from the earliest offset up to the current end.
    let bounded;
    let sql = if kind == TargetKind::SqlGateway {
        let hint_for = |name: &crate::sql::TableName| -> Option<String> {
            let t = project.inventory.tables.get(name.table())?;
            bounded_read_options(t.connector()).map(str::to_string)
        };
        bounded = crate::sql::rewrite::with_table_hints(sql, &hint_for)
            .map_err(|e| OpsError::Usage(format!("{origin}: {e}")))?
            .0;
        bounded.as_str()
    } else {
        sql
    };
    let result = run(
        ctx,
        cfg,
        Some(project),
        sql,
        properties,
        read,
        false,
        &read::Quiet,
    )?;
    Ok(QueryOutcome {
        sql: sql.to_string(),
        table: None,
        unbounded: None,
        result,
    })
}

fn snapshot(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: &Project,
    table: &str,
    read_name: &str,
    read: &ReadOptions,
    fold_by_key: bool,
) -> Result<QueryOutcome, OpsError> {
    let t = project
        .inventory
        .tables
        .get(table)
        .ok_or_else(|| OpsError::Usage(format!("unknown table {table}")))?;
    let (sql, properties) = bounded_select(TargetKind::of(cfg), t.connector(), read_name, None);
    let mut read = read.clone();
    if fold_by_key && read.key_columns.is_none() && !t.primary_key.is_empty() {
        read.key_columns = Some(t.primary_key.clone());
    }
    let aliases = if read_name == table {
        Vec::new()
    } else {
        vec![(table.to_string(), read_name.to_string())]
    };
    let result = run_on(
        ctx,
        cfg,
        Some(project),
        &aliases,
        &sql,
        properties,
        &read,
        false,
        &read::Quiet,
    )?;
    Ok(QueryOutcome {
        sql,
        table: Some(read_name.to_string()),
        unbounded: None,
        result,
    })
}

/// The dynamic table options that read a table of this connector from its start to its current end
/// on the SQL Gateway (Flink's Kafka connector: `scan.startup.mode`, `scan.bounded.mode`; an
/// upsert-kafka table always starts at the earliest offset); `None` for a connector without them.
fn bounded_read_options(connector: Option<&str>) -> Option<&'static str> {
    match connector {
        Some("kafka") => {
            Some("'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset'")
        }
        Some("upsert-kafka") => Some("'scan.bounded.mode' = 'latest-offset'"),
        _ => None,
    }
}

/// `SELECT * FROM name [WHERE …]` bounded at the table's current end (see [`preview`]), and the
/// statement properties that bound it on Confluent Cloud.
fn bounded_select(
    kind: TargetKind,
    connector: Option<&str>,
    name: &str,
    filter: Option<&str>,
) -> (String, BTreeMap<String, String>) {
    let kafka = matches!(connector, Some("kafka" | "upsert-kafka"));
    let hint = match (kind, bounded_read_options(connector)) {
        (TargetKind::SqlGateway, Some(options)) => format!(" /*+ OPTIONS({options}) */"),
        _ => String::new(),
    };
    let mut sql = format!("SELECT * FROM {}{hint}", crate::sql::quote_identifier(name));
    if let Some(f) = filter {
        sql.push_str(&format!(" WHERE {f}"));
    }
    let mut properties = BTreeMap::new();
    if kind == TargetKind::ConfluentCloud && (kafka || connector.is_none()) {
        // Confluent tables are Kafka topics (no 'connector' option).
        properties.insert(
            "sql.tables.scan.startup.mode".to_string(),
            "earliest-offset".to_string(),
        );
        properties.insert(
            "sql.tables.scan.bounded.mode".to_string(),
            "latest-offset".to_string(),
        );
    }
    (sql, properties)
}

/// Refuses anything but one read-only statement: `sql query` is for reading.
pub(crate) fn check_read_only(sql: &str, origin: &str) -> Result<(), OpsError> {
    let a = crate::sql::analyze(sql);
    let statements: Vec<_> = a
        .statements
        .iter()
        .filter(|s| !matches!(s.kind, crate::sql::StatementKind::Set))
        .collect();
    let first_word = |line: usize| -> String {
        sql.lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase()
    };
    match statements.as_slice() {
        [] => Err(OpsError::Usage(format!("{origin}: no query to run"))),
        [s] => {
            let word = first_word(s.line);
            let reading = matches!(s.kind, crate::sql::StatementKind::Select)
                || (matches!(s.kind, crate::sql::StatementKind::Other)
                    && matches!(
                        word.as_str(),
                        "SHOW" | "DESCRIBE" | "DESC" | "EXPLAIN" | "VALUES" | "(" | "WITH"
                    ));
            if reading && s.sinks.is_empty() {
                Ok(())
            } else {
                Err(OpsError::Usage(format!(
                    "{origin}:{}: `sql query` is for reading: this {} statement writes or defines (deploy it with `pipeline deploy`)",
                    s.line,
                    if word.is_empty() {
                        "SQL".to_string()
                    } else {
                        word
                    }
                )))
            }
        }
        [_, second, ..] => Err(OpsError::Usage(format!(
            "{origin}:{}: one query at a time ({} statements given)",
            second.line,
            statements.len()
        ))),
    }
}

/// A fresh query name: `<prefix>-query-<8 hex digits>` (time and process, so two runs never share one).
pub fn query_name(naming: &StatementNaming) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (nanos, std::process::id()).hash(&mut h);
    let id = h.finish() as u32;
    crate::plan::naming::fit_length(format!("{}-query-{id:08x}", naming.prefix))
}

#[allow(clippy::too_many_arguments)]
fn run(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: Option<&Project>,
    sql: &str,
    properties: BTreeMap<String, String>,
    options: &ReadOptions,
    follow: bool,
    observer: &dyn ReadObserver,
) -> Result<QueryResult, OpsError> {
    run_on(
        ctx,
        cfg,
        project,
        &[],
        sql,
        properties,
        options,
        follow,
        observer,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_on(
    ctx: &Context,
    cfg: &crate::config::Config,
    project: Option<&Project>,
    aliases: &[(String, String)],
    sql: &str,
    properties: BTreeMap<String, String>,
    options: &ReadOptions,
    follow: bool,
    observer: &dyn ReadObserver,
) -> Result<QueryResult, OpsError> {
    let naming = StatementNaming::from_config(cfg);
    let c = target::connect_with_aliases(cfg, project, aliases)?;
    let rt = target::runtime()?;
    let spec = StatementSpec {
        name: query_name(&naming),
        sql: sql.to_string(),
        properties,
        kind: StatementKind::Dml,
        compute_pool: None,
    };
    let result = rt.block_on(async {
        // SIGINT, SIGTERM and SIGHUP alike, listened for before the create: whichever arrives, even
        // during the create, the query's statement is deleted before the command ends.
        let mut signals = super::signals::Interrupts::listen();
        let mut stream = c
            .target
            .start_query(&spec)
            .await
            .map_err(|e| c.error(&format!("query {}", spec.name), e))?;
        let cancel = async move {
            signals.recv().await;
        };
        read::read(stream.as_mut(), options, follow, observer, cancel)
            .await
            .map_err(|e| c.error(&format!("query {}", spec.name), e))
    })?;
    if let Some(e) = &result.close_error {
        ctx.console.warn(&format!(
            "warning[query]: the query {} could not be stopped ({}): it may still run; `flinkpipe pipeline decommission --orphans --delete` removes it",
            result.statement,
            c.scrubber.scrub(e)
        ));
    }
    Ok(result)
}

#[cfg(test)]
mod unbounded_tests {
    use super::unbounded_hint;

    #[test]
    fn an_aggregate_over_unbounded_tables_gets_the_hint() {
        for sql in [
            "SELECT store_id, COUNT(*) FROM orders GROUP BY store_id",
            "select distinct store_id from orders",
            "SELECT o.id, s.name FROM orders o JOIN stores s ON o.sid = s.id",
            "SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY t) FROM orders",
        ] {
            assert!(unbounded_hint(sql).is_some(), "{sql}");
        }
        for sql in [
            "SELECT * FROM orders",
            "SELECT store_id, COUNT(*) FROM orders GROUP BY store_id LIMIT 10",
            "SELECT store_id, COUNT(*) FROM orders /*+ OPTIONS('scan.bounded.mode' = 'latest-offset') */ GROUP BY store_id",
            "SELECT 'group by' AS note FROM orders -- GROUP BY\n",
            "SELECT `group` FROM orders",
        ] {
            assert!(unbounded_hint(sql).is_none(), "{sql}");
        }
    }
}
