//! Column lineage of one SQL text: for each statement that writes a query result (INSERT, every member
//! of a statement set, CTAS, CREATE VIEW, materialized table), each output column with the source
//! columns it is computed from (**direct**), and the source columns that shape which rows are produced
//! without being copied (**indirect**: filters, join conditions, grouping keys, window time columns,
//! `OVER` partitions and orders, temporal-join times, subqueries in conditions), statement-wide, as
//! OpenLineage's column-lineage facet has them.
//!
//! Exactly right or explicitly unsure: a reference that cannot be bound to one relation (a bare column
//! with several candidate relations of unknown schema, `*` over an unknown schema, MATCH_RECOGNIZE,
//! JSON_TABLE, a scalar subquery in a projection), a column its relation does not have
//! ([`StatementColumns::unknown_columns`]) and a statement the parser cannot read make the statement
//! *unresolved* with the reason; nothing is guessed. The rules are written down in
//! `tests/data/column_lineage/SPEC.md` (output names, CTEs and subqueries resolved through to base
//! tables, `window_start`/`window_end`/`window_time` of a window TVF computed from its `DESCRIPTOR` time
//! column, as Flink's planner derives them, `UNNEST`/`LATERAL TABLE` outputs direct from their
//! arguments).
//!
//! Positional reads are recorded ([`StatementColumns::positional`]): `*` / `t.*` expanded over a
//! table's columns and an INSERT without a column list depend on the order and count of that table's
//! columns, not only on their names.
//!
//! Schemas (a table's columns, in order) come from the caller ([`Schemas`]): the project's DDLs, or the
//! file's own `CREATE TABLE`s. Views and CTAS created earlier in the same text are resolved through.
//! Pure: no I/O. Cost: one walk of each statement's tree.

use std::collections::{BTreeMap, BTreeSet};

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident,
    ObjectName, OrderByKind, Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr,
    Statement, TableAlias, TableFactor, TableObject, TableVersion, TableWithJoins, Visit, Visitor,
    WindowType,
};

use super::dialect::table_argument;

/// A column of a table: `(table as written, dotted; column)`.
pub type SourceColumn = (String, String);

/// An output of a query: its name and direct sources.
type Out = (String, BTreeSet<SourceColumn>);

/// A table's columns, in order, for the tables whose DDL is known.
pub trait Schemas {
    /// The columns of `table` (as written, dotted), or `None` when its schema is unknown. `writable`:
    /// only the columns an INSERT writes (computed and `METADATA … VIRTUAL` columns left out).
    fn columns(&self, table: &str, writable: bool) -> Option<Vec<String>>;
}

/// Tables by their name as written (`db.t` and `t` are different tables: which database a bare name
/// means is the caller's to say, as the project does with its configured catalog and database).
impl Schemas for BTreeMap<String, Vec<(String, bool)>> {
    fn columns(&self, table: &str, writable: bool) -> Option<Vec<String>> {
        let cols = self.get(table)?;
        Some(
            cols.iter()
                .filter(|(_, computed)| !writable || !computed)
                .map(|(c, _)| c.clone())
                .collect(),
        )
    }
}

/// One output column and what it is computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputColumn {
    /// The sink's column name (INSERT column list, the sink's DDL by position, else the query's output
    /// name, `EXPR$<i>` for an unnamed expression).
    pub name: String,
    /// Source columns its value is computed from.
    pub direct: BTreeSet<SourceColumn>,
}

/// How a statement depends on the order and count of a table's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PositionalKind {
    /// `*` or `t.*` expanded over the table's columns (directly, or through a CTE, a derived table, a
    /// view of the text or a window TVF): a column added, removed or moved changes what the statement
    /// outputs at each position.
    Star,
    /// An INSERT into the table without a column list (`SELECT …` or `VALUES`): the query's outputs
    /// fill the table's writable columns by position.
    NoColumnList,
}

/// A table whose column order and count a statement relies on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Positional {
    /// The table as written (dotted).
    pub table: String,
    /// How it relies on them.
    pub kind: PositionalKind,
}

/// A column reference that names a column its relation does not have (the relation's columns are
/// known: a DDL, a CTE, a derived table): Flink rejects the statement ("Column 'x' not found").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownColumn {
    /// The column as written, with its qualifier if any (`o.amount`).
    pub column: String,
    /// The relations it was looked up in (tables as written, dotted; CTE and alias names otherwise).
    pub relations: Vec<String>,
    /// The columns those relations do have (for a "did you mean").
    pub known: Vec<String>,
    /// 1-based line of the reference.
    pub line: usize,
}

/// The column lineage of one writing statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementColumns {
    /// The relation written, as written (dotted); empty when a statement the parser cannot read names
    /// no sink the token-level reading recognises.
    pub sink: String,
    /// 1-based line of the statement (of the member, in a statement set).
    pub line: usize,
    /// 1-based line of the top-level statement (the `EXECUTE STATEMENT SET` of a member: one Flink
    /// job; else [`Self::line`]'s statement).
    pub statement_line: usize,
    /// The output columns, in order.
    pub columns: Vec<OutputColumn>,
    /// Source columns that shape the rows without being copied.
    pub indirect: BTreeSet<SourceColumn>,
    /// The grain: the source columns of its `GROUP BY` keys and `OVER (PARTITION BY …)` keys (dedup,
    /// Top-N), statement-wide. A change of it changes what one row means.
    pub grain: BTreeSet<SourceColumn>,
    /// Why the statement could not be resolved with certainty (empty: resolved).
    pub unresolved: Vec<String>,
    /// The tables whose column order and count the statement relies on, sorted (also filled for an
    /// unresolved statement, as far as its text shows them).
    pub positional: Vec<Positional>,
    /// Column references to columns their relation does not have (each also an `unresolved` reason).
    pub unknown_columns: Vec<UnknownColumn>,
    /// `(outputs, sink columns)` when the query's output count differs from the columns it fills.
    pub width_mismatch: Option<(usize, usize)>,
    /// An INSERT (its outputs fill the sink's columns in order); else a view or CTAS, whose columns
    /// are its query's, by name.
    pub insert: bool,
}

/// Why a unit that does not parse has no column lineage (an `unresolved` reason).
fn unparsed_reason(why: &str) -> String {
    format!("the statement cannot be parsed ({why}): its column lineage is unknown")
}

/// The column lineage of every writing statement of `sql`, in order. `schemas` gives the columns of
/// tables defined elsewhere; the text's own `CREATE TABLE`s add to it, and its views and CTAS are
/// resolved through. A writing unit the parser cannot read (or that is over the parser's limits) yields
/// one unresolved statement per sink the token-level reading finds in it (sink empty when it finds
/// none), with the parser's message: its columns are unknown, not constants.
pub fn lineage(sql: &str, schemas: &dyn Schemas) -> Vec<StatementColumns> {
    let mut local = Local {
        outer: schemas,
        tables: BTreeMap::new(),
        views: BTreeMap::new(),
    };
    let mut out = Vec::new();
    let mut analysis: Option<super::FileAnalysis> = None;
    for (line, parsed) in super::parse_units(sql) {
        match parsed {
            Ok(statements) => {
                for st in &statements {
                    statement(&mut local, st, line, &mut out);
                }
            }
            // Not a writing statement (SET, USE, CREATE FUNCTION, …): nothing to read.
            Err(why) if why == super::OPAQUE_UNIT => {}
            Err(why) => {
                let a = analysis.get_or_insert_with(|| super::analyze(sql));
                out.extend(unparsed(a, line, &why));
            }
        }
    }
    out
}

/// The unresolved statements of a unit at `line` that does not parse: one per sink the token-level
/// reading finds (none for a unit that writes nothing: a `SELECT`, a `CREATE TABLE` without query).
fn unparsed(a: &super::FileAnalysis, line: usize, why: &str) -> Vec<StatementColumns> {
    use super::StatementKind as K;
    let infos: Vec<&super::StatementInfo> =
        a.statements.iter().filter(|s| s.line == line).collect();
    let writes = |k: K| {
        matches!(
            k,
            K::Insert | K::StatementSet | K::Ctas | K::CreateView | K::CreateMaterializedTable
        )
    };
    if !infos.is_empty() && infos.iter().all(|s| !writes(s.kind)) {
        return Vec::new();
    }
    let mut sinks: Vec<String> = infos
        .iter()
        .flat_map(|s| s.sinks.iter().map(|r| r.name.dotted()))
        .collect();
    sinks.sort();
    sinks.dedup();
    if sinks.is_empty() {
        sinks.push(String::new());
    }
    sinks
        .into_iter()
        .map(|sink| StatementColumns {
            sink,
            line,
            statement_line: line,
            columns: Vec::new(),
            indirect: BTreeSet::new(),
            grain: BTreeSet::new(),
            unresolved: vec![unparsed_reason(why)],
            positional: Vec::new(),
            unknown_columns: Vec::new(),
            width_mismatch: None,
            insert: false,
        })
        .collect()
}

/// The INSERTs of `sql`, in order: the table each writes (as written, dotted) and the columns it
/// names (`INSERT INTO t (a, b) …`; `None` when it names none, so its values go by position). A
/// statement that does not parse is left out.
pub fn insert_column_lists(sql: &str) -> Vec<(String, Option<Vec<String>>)> {
    let mut out = Vec::new();
    for (_, parsed) in super::parse_units(sql) {
        let Ok(statements) = parsed else {
            continue;
        };
        for st in &statements {
            let Statement::Insert(ins) = st else {
                continue;
            };
            let TableObject::TableName(name) = &ins.table else {
                continue;
            };
            let listed: Vec<String> = ins
                .columns
                .iter()
                .filter_map(|c| {
                    c.0.last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.clone())
                })
                .collect();
            out.push((dotted(name), (!listed.is_empty()).then_some(listed)));
        }
    }
    out
}

/// Schemas of the text being read: its own `CREATE TABLE`s over the caller's, and its views.
struct Local<'a> {
    outer: &'a dyn Schemas,
    tables: BTreeMap<String, Vec<(String, bool)>>,
    /// Views and CTAS of the text: their output columns with sources, the columns that shape their
    /// rows (a statement reading the view is shaped by them too), and the tables whose column order
    /// their outputs follow (`*`).
    views: BTreeMap<String, View>,
}

/// A view or CTAS of the text, as its readers see it.
struct View {
    outs: Vec<Out>,
    shaped: BTreeSet<SourceColumn>,
    origins: BTreeSet<String>,
}

impl Local<'_> {
    fn columns(&self, table: &str, writable: bool) -> Option<Vec<String>> {
        self.tables
            .columns(table, writable)
            .or_else(|| self.outer.columns(table, writable))
    }
}

fn dotted(name: &ObjectName) -> String {
    name.0
        .iter()
        .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
        .collect::<Vec<_>>()
        .join(".")
}

fn line_of(name: &ObjectName, fallback: usize) -> usize {
    name.0
        .first()
        .and_then(|p| p.as_ident())
        .map(|i| i.span.start.line as usize)
        .filter(|l| *l > 0)
        .unwrap_or(fallback)
}

fn statement(local: &mut Local, st: &Statement, line: usize, out: &mut Vec<StatementColumns>) {
    match st {
        Statement::CreateTable(ct) if ct.query.is_none() => {
            let cols = ct
                .columns
                .iter()
                .map(|c| {
                    let computed = c.options.iter().any(|o| {
                        matches!(
                            o.option,
                            sqlparser::ast::ColumnOption::Generated { .. }
                                | sqlparser::ast::ColumnOption::Alias(_)
                        )
                    }) || c.data_type.to_string().is_empty();
                    (c.name.value.clone(), computed)
                })
                .collect();
            local.tables.insert(dotted(&ct.name), cols);
        }
        Statement::CreateTable(ct) => {
            let q = ct.query.as_ref().expect("CTAS");
            let sink = dotted(&ct.name);
            let declared: Vec<String> = ct.columns.iter().map(|c| c.name.value.clone()).collect();
            let (r, origins) = written(
                local,
                &sink,
                line_of(&ct.name, line),
                line,
                q,
                &declared,
                false,
            );
            remember(local, &sink, &r, origins);
            out.push(r);
        }
        Statement::CreateView(cv) => {
            let sink = dotted(&cv.name);
            let declared: Vec<String> = cv.columns.iter().map(|c| c.name.value.clone()).collect();
            let (r, origins) = written(
                local,
                &sink,
                line_of(&cv.name, line),
                line,
                &cv.query,
                &declared,
                false,
            );
            remember(local, &sink, &r, origins);
            out.push(r);
        }
        Statement::Insert(ins) => {
            let TableObject::TableName(name) = &ins.table else {
                return;
            };
            let Some(q) = &ins.source else {
                return;
            };
            let sink = dotted(name);
            let listed: Vec<String> = ins
                .columns
                .iter()
                .filter_map(|c| {
                    c.0.last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.clone())
                })
                .collect();
            out.push(written(local, &sink, line_of(name, line), line, q, &listed, true).0);
        }
        _ => {}
    }
}

fn remember(local: &mut Local, sink: &str, r: &StatementColumns, origins: BTreeSet<String>) {
    local.views.insert(
        sink.to_string(),
        View {
            outs: r
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.direct.clone()))
                .collect(),
            shaped: r.indirect.clone(),
            origins,
        },
    );
}

/// The lineage of `query` written into `sink`: output names from `listed` (an INSERT column list or a
/// view's / CTAS's declared columns), else (for an INSERT) the sink's writable DDL columns by position,
/// else the query's own output names. Also the tables whose column order the outputs follow (`*`).
fn written(
    local: &Local,
    sink: &str,
    line: usize,
    statement_line: usize,
    q: &Query,
    listed: &[String],
    insert: bool,
) -> (StatementColumns, BTreeSet<String>) {
    let mut w = Walk {
        local,
        ctes: Vec::new(),
        indirect: BTreeSet::new(),
        grain: BTreeSet::new(),
        unresolved: Vec::new(),
        using_join: false,
        origins: BTreeSet::new(),
        unknown: Vec::new(),
    };
    let outputs = w.query(q, &[]);
    let origins = std::mem::take(&mut w.origins);
    let mut positional: BTreeSet<Positional> = origins
        .iter()
        .map(|t| Positional {
            table: t.clone(),
            kind: PositionalKind::Star,
        })
        .collect();
    if insert && listed.is_empty() {
        positional.insert(Positional {
            table: sink.to_string(),
            kind: PositionalKind::NoColumnList,
        });
    }
    let mut result = StatementColumns {
        sink: sink.to_string(),
        line,
        statement_line,
        columns: Vec::new(),
        indirect: std::mem::take(&mut w.indirect),
        grain: std::mem::take(&mut w.grain),
        unresolved: std::mem::take(&mut w.unresolved),
        positional: positional.into_iter().collect(),
        unknown_columns: std::mem::take(&mut w.unknown),
        width_mismatch: None,
        insert,
    };
    let Some(outputs) = outputs else {
        if result.unresolved.is_empty() {
            result
                .unresolved
                .push("the query's columns cannot be listed".into());
        }
        return (result, origins);
    };
    let names: Vec<String> = if !listed.is_empty() {
        listed.to_vec()
    } else if insert {
        local
            .columns(sink, true)
            .unwrap_or_else(|| outputs.iter().map(|o| o.0.clone()).collect())
    } else {
        outputs.iter().map(|o| o.0.clone()).collect()
    };
    if names.len() != outputs.len() {
        // Positions cannot be matched (a static PARTITION column, a DDL out of step): no column is
        // named rather than a wrong one.
        result.unresolved.push(format!(
            "{} output column(s) for {} column(s) of {sink}",
            outputs.len(),
            names.len()
        ));
        result.width_mismatch = Some((outputs.len(), names.len()));
        return (result, origins);
    }
    result.columns = names
        .into_iter()
        .zip(outputs)
        .map(|(name, (_, direct))| OutputColumn { name, direct })
        .collect();
    (result, origins)
}

/// A relation in the scope of a SELECT.
#[derive(Debug, Clone)]
struct Rel {
    /// The names it is referred to by (its alias; else its name as written and that name's last part).
    names: Vec<String>,
    kind: RelKind,
    /// The tables whose column order its columns follow: a base table itself; the tables a CTE, a
    /// derived table or a view expands with `*`.
    origins: BTreeSet<String>,
}

/// A CTE: its outputs and the tables whose column order they follow.
type Cte = (Vec<Out>, BTreeSet<String>);

#[derive(Debug, Clone)]
enum RelKind {
    /// A base table: its columns when its schema is known.
    Base {
        table: String,
        columns: Option<Vec<String>>,
    },
    /// A CTE, a derived table, a view of the text, a function's outputs.
    Derived(Vec<Out>),
    /// A window TVF over a relation: its columns plus `window_start`, `window_end`, `window_time`,
    /// computed from `time` (the `DESCRIPTOR` column's sources).
    Window {
        inner: Box<RelKind>,
        time: BTreeSet<SourceColumn>,
    },
}

const WINDOW_COLUMNS: [&str; 3] = ["window_start", "window_end", "window_time"];

/// Confluent Cloud's system column of every table (its Kafka record timestamp).
const ROWTIME: &str = "$rowtime";

impl RelKind {
    /// Whether the relation has `col` (`None`: unknown).
    fn has(&self, col: &str) -> Option<bool> {
        match self {
            // Confluent Cloud's system column: every table has it.
            RelKind::Base { .. } if col == ROWTIME => Some(true),
            RelKind::Base { columns, .. } => columns.as_ref().map(|c| find(c, col).is_some()),
            RelKind::Derived(outs) => Some(outs.iter().any(|(n, _)| same(n, col))),
            RelKind::Window { inner, .. } => {
                if WINDOW_COLUMNS.iter().any(|w| same(w, col)) {
                    Some(true)
                } else {
                    inner.has(col)
                }
            }
        }
    }

    /// The sources of `col` of this relation (a base table of unknown schema is taken at its word).
    fn sources(&self, col: &str) -> Option<BTreeSet<SourceColumn>> {
        match self {
            RelKind::Base { table, .. } if col == ROWTIME => {
                Some(BTreeSet::from([(table.clone(), col.to_string())]))
            }
            RelKind::Base { table, columns } => match columns {
                Some(c) => find(c, col).map(|c| BTreeSet::from([(table.clone(), c.to_string())])),
                None => Some(BTreeSet::from([(table.clone(), col.to_string())])),
            },
            RelKind::Derived(outs) => outs
                .iter()
                .find(|(n, _)| same(n, col))
                .map(|(_, s)| s.clone()),
            RelKind::Window { inner, time } => {
                if WINDOW_COLUMNS.iter().any(|w| same(w, col)) {
                    Some(time.clone())
                } else {
                    inner.sources(col)
                }
            }
        }
    }

    /// Every column with its sources (`None`: unknown schema).
    fn all(&self) -> Option<Vec<Out>> {
        match self {
            RelKind::Base { table, columns } => columns.as_ref().map(|c| {
                c.iter()
                    .map(|c| (c.clone(), BTreeSet::from([(table.clone(), c.clone())])))
                    .collect()
            }),
            RelKind::Derived(outs) => Some(outs.clone()),
            RelKind::Window { inner, time } => {
                let mut v = inner.all()?;
                v.extend(WINDOW_COLUMNS.iter().map(|w| (w.to_string(), time.clone())));
                Some(v)
            }
        }
    }

    /// The columns it is known to have (empty for a base table of unknown schema).
    fn known(&self) -> Vec<String> {
        match self {
            RelKind::Base { columns, .. } => columns.clone().unwrap_or_default(),
            RelKind::Derived(outs) => outs.iter().map(|o| o.0.clone()).collect(),
            RelKind::Window { inner, .. } => {
                let mut v = inner.known();
                v.extend(WINDOW_COLUMNS.iter().map(|w| w.to_string()));
                v
            }
        }
    }

    /// The name an unknown column is reported against: a base table's name as written, else `alias`.
    fn reported_name(&self, alias: &str) -> String {
        match self {
            RelKind::Base { table, .. } => table.clone(),
            RelKind::Window { inner, .. } => inner.reported_name(alias),
            RelKind::Derived(_) => alias.to_string(),
        }
    }
}

/// Exact match first, then case-insensitive (Flink's default catalog matches case-sensitively, but
/// a column written in another case in a project is far more likely the same column than another).
fn find<'c>(cols: &'c [String], col: &str) -> Option<&'c str> {
    cols.iter()
        .find(|c| *c == col)
        .or_else(|| cols.iter().find(|c| c.eq_ignore_ascii_case(col)))
        .map(String::as_str)
}

fn same(a: &str, b: &str) -> bool {
    a == b || a.eq_ignore_ascii_case(b)
}

struct Walk<'a> {
    local: &'a Local<'a>,
    /// CTE scopes, innermost last.
    ctes: Vec<BTreeMap<String, Cte>>,
    indirect: BTreeSet<SourceColumn>,
    grain: BTreeSet<SourceColumn>,
    unresolved: Vec<String>,
    /// A `JOIN … USING` was met in the current SELECT.
    using_join: bool,
    /// Set by [`Walk::query`] (and the bodies it walks) on return: the tables whose column order the
    /// query's outputs follow (its `*` expansions).
    origins: BTreeSet<String>,
    /// Column references to columns their relations do not have.
    unknown: Vec<UnknownColumn>,
}

/// Where a column reference is read: into the value (direct) or into the row set's shape (indirect).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Direct,
    Indirect,
}

impl Walk<'_> {
    fn unsure(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.unresolved.contains(&why) {
            self.unresolved.push(why);
        }
    }

    fn cte(&self, name: &str) -> Option<Cte> {
        self.ctes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name).cloned())
    }

    /// A relation named in FROM (or in a window TVF's `TABLE t`): a CTE of the scope, a view of the
    /// text, else a base table; with the tables whose column order its columns follow.
    fn named(&mut self, table: &str) -> (RelKind, BTreeSet<String>) {
        if let Some((outs, origins)) = self.cte(table) {
            (RelKind::Derived(outs), origins)
        } else if let Some(v) = self.local.views.get(table) {
            self.indirect.extend(v.shaped.iter().cloned());
            (RelKind::Derived(v.outs.clone()), v.origins.clone())
        } else {
            (
                RelKind::Base {
                    columns: self.local.columns(table, false),
                    table: table.to_string(),
                },
                BTreeSet::from([table.to_string()]),
            )
        }
    }

    /// The outputs of `q`; `outer` is the enclosing scope (correlated subqueries). Sets
    /// [`Walk::origins`] to the tables whose column order the outputs follow.
    fn query(&mut self, q: &Query, outer: &[Rel]) -> Option<Vec<Out>> {
        self.ctes.push(BTreeMap::new());
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let outs = self.query(&cte.query, outer);
                let origins = std::mem::take(&mut self.origins);
                if let Some(mut outs) = outs {
                    rename(&mut outs, &cte.alias);
                    if let Some(top) = self.ctes.last_mut() {
                        top.insert(cte.alias.name.value.clone(), (outs, origins));
                    }
                } else {
                    self.unsure(format!(
                        "the columns of CTE {} cannot be listed",
                        cte.alias.name.value
                    ));
                }
            }
        }
        let (outs, rels) = self.set_expr(&q.body, outer);
        let origins = std::mem::take(&mut self.origins);
        if let Some(order) = &q.order_by
            && let OrderByKind::Expressions(list) = &order.kind
        {
            for o in list {
                self.order_term(&o.expr, outs.as_deref(), &rels, outer, true);
            }
        }
        self.ctes.pop();
        self.origins = origins;
        outs
    }

    /// An ORDER BY / GROUP BY term: an output name or position of the query, else an expression over its
    /// relations; indirect.
    /// `outputs_first`: a bare name binds to an output alias before a relation's column (ORDER BY, as
    /// Calcite binds it); otherwise to a relation's column first (GROUP BY).
    fn order_term(
        &mut self,
        e: &Expr,
        outs: Option<&[Out]>,
        rels: &[Rel],
        outer: &[Rel],
        outputs_first: bool,
    ) -> BTreeSet<SourceColumn> {
        let s = if let (Expr::Identifier(i), Some(outs)) = (e, outs)
            && (outputs_first || rels.iter().all(|r| r.kind.has(&i.value) != Some(true)))
            && let Some((_, s)) = outs.iter().find(|(n, _)| same(n, &i.value))
        {
            s.clone()
        } else if let (Expr::Value(v), Some(outs)) = (e, outs)
            && let Ok(n) = v.value.to_string().parse::<usize>()
            && let Some((_, s)) = outs.get(n.wrapping_sub(1))
        {
            s.clone()
        } else {
            self.expr(e, rels, outer)
        };
        self.indirect.extend(s.iter().cloned());
        s
    }

    /// The outputs of a query body, and the relations of its (first) SELECT.
    fn set_expr(&mut self, body: &SetExpr, outer: &[Rel]) -> (Option<Vec<Out>>, Vec<Rel>) {
        match body {
            SetExpr::Select(s) => self.select(s, outer),
            SetExpr::Query(q) => (self.query(q, outer), Vec::new()),
            SetExpr::SetOperation { left, right, .. } => {
                let (l, rels) = self.set_expr(left, outer);
                let mut origins = std::mem::take(&mut self.origins);
                let (r, _) = self.set_expr(right, outer);
                origins.append(&mut self.origins);
                self.origins = origins;
                match (l, r) {
                    (Some(mut l), Some(r)) if l.len() == r.len() => {
                        for (a, b) in l.iter_mut().zip(r) {
                            a.1.extend(b.1);
                        }
                        (Some(l), rels)
                    }
                    (Some(_), Some(_)) => {
                        self.unsure("the branches of a set operation have different widths");
                        (None, rels)
                    }
                    _ => (None, rels),
                }
            }
            SetExpr::Values(v) => {
                let width = v.rows.first().map_or(0, |r| r.len());
                let mut outs: Vec<Out> = (0..width)
                    .map(|i| (format!("EXPR${i}"), BTreeSet::new()))
                    .collect();
                for row in &v.rows {
                    for (i, e) in row.iter().enumerate() {
                        let s = self.expr(e, &[], outer);
                        if let Some(o) = outs.get_mut(i) {
                            o.1.extend(s);
                        }
                    }
                }
                self.origins.clear();
                (Some(outs), Vec::new())
            }
            _ => {
                self.unsure("a query form column lineage does not read");
                self.origins.clear();
                (None, Vec::new())
            }
        }
    }

    fn select(&mut self, s: &Select, outer: &[Rel]) -> (Option<Vec<Out>>, Vec<Rel>) {
        let saved_using = std::mem::take(&mut self.using_join);
        let result = self.select_inner(s, outer);
        self.using_join = saved_using;
        result
    }

    fn select_inner(&mut self, s: &Select, outer: &[Rel]) -> (Option<Vec<Out>>, Vec<Rel>) {
        let mut rels: Vec<Rel> = Vec::new();
        let mut conditions: Vec<&Expr> = Vec::new();
        for twj in &s.from {
            self.walk_from_item(twj, &mut rels, &mut conditions, outer);
        }
        if !s.lateral_views.is_empty() {
            self.unsure("LATERAL VIEW");
        }
        for c in conditions {
            let src = self.expr(c, &rels, outer);
            self.indirect.extend(src);
        }
        if let Some(w) = &s.selection {
            let src = self.expr_in(w, &rels, outer, Role::Indirect);
            self.indirect.extend(src);
        }
        if let Some(h) = &s.having {
            let src = self.expr_in(h, &rels, outer, Role::Indirect);
            self.indirect.extend(src);
        }
        if let Some(q) = &s.qualify {
            let src = self.expr_in(q, &rels, outer, Role::Indirect);
            self.indirect.extend(src);
        }
        let mut outs: Vec<Out> = Vec::new();
        let mut origins: BTreeSet<String> = BTreeSet::new();
        for (i, item) in s.projection.iter().enumerate() {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let name = match e {
                        Expr::Identifier(id) => id.value.clone(),
                        Expr::CompoundIdentifier(parts) => parts
                            .last()
                            .map_or_else(|| format!("EXPR${i}"), |p| p.value.clone()),
                        _ => format!("EXPR${}", outs.len()),
                    };
                    let src = self.expr(e, &rels, outer);
                    outs.push((name, src));
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let src = self.expr(expr, &rels, outer);
                    outs.push((alias.value.clone(), src));
                }
                SelectItem::Wildcard(_) if self.using_join => {
                    self.unsure("* over a JOIN … USING (the shared columns once)");
                }
                SelectItem::Wildcard(_) => {
                    if rels.is_empty() {
                        self.unsure("* without a relation");
                    }
                    for r in &rels {
                        origins.extend(r.origins.iter().cloned());
                        match r.kind.all() {
                            Some(cols) => outs.extend(cols),
                            None => self.unsure(format!(
                                "* over {} whose columns are unknown",
                                r.names.first().cloned().unwrap_or_default()
                            )),
                        }
                    }
                }
                SelectItem::QualifiedWildcard(kind, _) => {
                    let q = match kind {
                        SelectItemQualifiedWildcardKind::ObjectName(n) => dotted(n),
                        SelectItemQualifiedWildcardKind::Expr(_) => {
                            self.unsure("an expression's .*");
                            continue;
                        }
                    };
                    match rels.iter().find(|r| r.names.iter().any(|n| same(n, &q))) {
                        Some(r) => {
                            origins.extend(r.origins.iter().cloned());
                            match r.kind.all() {
                                Some(cols) => outs.extend(cols),
                                None => self.unsure(format!("{q}.* whose columns are unknown")),
                            }
                        }
                        None => self.unsure(format!("{q}.* names no relation in scope")),
                    }
                }
                SelectItem::ExprWithAliases { .. } => self.unsure("a multi-alias select item"),
            }
        }
        match &s.group_by {
            GroupByExpr::Expressions(list, _) => {
                for e in list {
                    let keys = self.order_term(e, Some(&outs), &rels, outer, false);
                    self.grain.extend(keys);
                }
            }
            GroupByExpr::All(_) => {
                for o in &outs {
                    self.indirect.extend(o.1.iter().cloned());
                }
            }
        }
        for w in &s.named_window {
            if let sqlparser::ast::NamedWindowExpr::WindowSpec(spec) = &w.1 {
                self.window_spec(spec, &rels, outer);
            }
        }
        self.origins = origins;
        (Some(outs), rels)
    }

    /// A FROM item and its joins: relations added to `rels`, join conditions to `conditions`.
    fn walk_from_item<'q>(
        &mut self,
        twj: &'q TableWithJoins,
        rels: &mut Vec<Rel>,
        conditions: &mut Vec<&'q Expr>,
        outer: &[Rel],
    ) {
        self.factor(&twj.relation, rels, conditions, outer);
        for j in &twj.joins {
            self.factor(&j.relation, rels, conditions, outer);
            use sqlparser::ast::{JoinConstraint, JoinOperator as J};
            let constraint = match &j.join_operator {
                J::Join(c)
                | J::Inner(c)
                | J::Left(c)
                | J::LeftOuter(c)
                | J::Right(c)
                | J::RightOuter(c)
                | J::FullOuter(c)
                | J::CrossJoin(c)
                | J::Semi(c)
                | J::LeftSemi(c)
                | J::RightSemi(c)
                | J::Anti(c)
                | J::LeftAnti(c)
                | J::RightAnti(c) => Some(c),
                _ => None,
            };
            match constraint {
                Some(JoinConstraint::On(e)) => conditions.push(e),
                Some(JoinConstraint::Using(cols)) => {
                    // `SELECT *` over a USING join lists the shared columns once: not expanded here.
                    self.using_join = true;
                    for c in cols {
                        let col =
                            c.0.last()
                                .and_then(|p| p.as_ident())
                                .map(|i| i.value.clone());
                        if let Some(col) = col {
                            for r in rels.iter() {
                                if r.kind.has(&col) != Some(false)
                                    && let Some(s) = r.kind.sources(&col)
                                {
                                    self.indirect.extend(s);
                                }
                            }
                        }
                    }
                }
                Some(JoinConstraint::Natural) => self.unsure("NATURAL JOIN"),
                _ => {}
            }
        }
    }

    fn factor<'q>(
        &mut self,
        tf: &'q TableFactor,
        rels: &mut Vec<Rel>,
        conditions: &mut Vec<&'q Expr>,
        outer: &[Rel],
    ) {
        match tf {
            TableFactor::Table {
                name,
                alias,
                args,
                version,
                ..
            } => {
                if let Some(args) = args {
                    let (kind, origins) =
                        self.table_function(&dotted(name), &args.args, rels, outer);
                    rels.push(aliased(kind, origins, alias, &dotted(name), self));
                    return;
                }
                let table = dotted(name);
                let (kind, origins) = self.named(&table);
                let mut names = Vec::new();
                match alias {
                    Some(a) => names.push(a.name.value.clone()),
                    None => {
                        names.push(table.clone());
                        if let Some(last) = table.rsplit('.').next()
                            && last != table
                        {
                            names.push(last.to_string());
                        }
                    }
                }
                let mut kind = kind;
                if let Some(a) = alias
                    && !a.columns.is_empty()
                {
                    match kind.all() {
                        Some(mut outs) => {
                            rename(&mut outs, a);
                            kind = RelKind::Derived(outs);
                        }
                        None => {
                            self.unsure(format!("column aliases over {table} of unknown schema"))
                        }
                    }
                }
                if let Some(TableVersion::ForSystemTimeAsOf(e)) = version {
                    conditions.push(e);
                }
                rels.push(Rel {
                    names,
                    kind,
                    origins,
                });
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                // A LATERAL subquery sees the relations before it.
                let outs = if *lateral {
                    let mut scope: Vec<Rel> = rels.clone();
                    scope.extend(outer.iter().cloned());
                    self.query(subquery, &scope)
                } else {
                    self.query(subquery, outer)
                };
                let origins = std::mem::take(&mut self.origins);
                let kind = match outs {
                    Some(mut outs) => {
                        if let Some(a) = alias {
                            rename(&mut outs, a);
                        }
                        RelKind::Derived(outs)
                    }
                    None => {
                        self.unsure("a derived table whose columns cannot be listed");
                        RelKind::Derived(Vec::new())
                    }
                };
                rels.push(Rel {
                    names: alias.iter().map(|a| a.name.value.clone()).collect(),
                    kind,
                    origins,
                });
            }
            TableFactor::TableFunction { expr, alias } => {
                let (kind, origins) = match expr {
                    Expr::Function(f) => {
                        let args: Vec<FunctionArg> = match &f.args {
                            FunctionArguments::List(l) => l.args.clone(),
                            _ => Vec::new(),
                        };
                        self.table_function(&dotted(&f.name), &args, rels, outer)
                    }
                    other => {
                        let s = self.expr(other, rels, outer);
                        (
                            RelKind::Derived(vec![("EXPR$0".into(), s)]),
                            BTreeSet::new(),
                        )
                    }
                };
                rels.push(aliased(kind, origins, alias, "", self));
            }
            TableFactor::Function {
                name, args, alias, ..
            } => {
                let (kind, origins) = self.table_function(&dotted(name), args, rels, outer);
                rels.push(aliased(kind, origins, alias, &dotted(name), self));
            }
            TableFactor::UNNEST {
                alias, array_exprs, ..
            } => {
                let mut src = BTreeSet::new();
                for e in array_exprs {
                    src.extend(self.expr(e, rels, outer));
                }
                match alias {
                    Some(a) if !a.columns.is_empty() => rels.push(Rel {
                        names: vec![a.name.value.clone()],
                        kind: RelKind::Derived(
                            a.columns
                                .iter()
                                .map(|c| (c.name.value.clone(), src.clone()))
                                .collect(),
                        ),
                        origins: BTreeSet::new(),
                    }),
                    _ => self.unsure("UNNEST without column names"),
                }
            }
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.walk_from_item(table_with_joins, rels, conditions, outer),
            TableFactor::MatchRecognize { .. } => self.unsure("MATCH_RECOGNIZE"),
            TableFactor::JsonTable { .. } => self.unsure("JSON_TABLE"),
            _ => self.unsure("a FROM item column lineage does not read"),
        }
    }

    /// A table-valued function: a window TVF over `TABLE t` (t's columns plus the window's, computed
    /// from the `DESCRIPTOR` time column, as Flink's planner derives them), else a function whose
    /// outputs come from its arguments; with the tables whose column order its columns follow.
    fn table_function(
        &mut self,
        name: &str,
        args: &[FunctionArg],
        rels: &[Rel],
        outer: &[Rel],
    ) -> (RelKind, BTreeSet<String>) {
        let exprs: Vec<&Expr> = args
            .iter()
            .filter_map(|a| match a {
                FunctionArg::Named { arg, .. }
                | FunctionArg::ExprNamed { arg, .. }
                | FunctionArg::Unnamed(arg) => match arg {
                    FunctionArgExpr::Expr(e) => Some(e),
                    _ => None,
                },
            })
            .collect();
        let window = super::state::is_window_function(name);
        let table = exprs.iter().find_map(|e| table_argument(e));
        if window && let Some(parts) = table {
            let t: String = parts
                .iter()
                .map(|i| i.value.clone())
                .collect::<Vec<_>>()
                .join(".");
            let (inner, origins) = self.named(&t);
            // DESCRIPTOR(ts): the time column the window columns are computed from.
            let mut time = BTreeSet::new();
            for e in &exprs {
                if let Expr::Function(f) = e
                    && f.name.to_string().eq_ignore_ascii_case("DESCRIPTOR")
                    && let FunctionArguments::List(l) = &f.args
                {
                    for a in &l.args {
                        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Identifier(col))) =
                            a
                        {
                            match inner.sources(&col.value) {
                                Some(s) => time.extend(s),
                                None => self.unsure(format!("window time column {}", col.value)),
                            }
                        }
                    }
                }
            }
            return (
                RelKind::Window {
                    inner: Box::new(inner),
                    time,
                },
                origins,
            );
        }
        if table.is_some() {
            self.unsure(format!("table function {name} over a table"));
            return (RelKind::Derived(Vec::new()), BTreeSet::new());
        }
        let mut src = BTreeSet::new();
        for e in exprs {
            src.extend(self.expr(e, rels, outer));
        }
        (
            RelKind::Derived(vec![(FUNCTION_OUTPUT.to_string(), src)]),
            BTreeSet::new(),
        )
    }

    fn expr(&mut self, e: &Expr, rels: &[Rel], outer: &[Rel]) -> BTreeSet<SourceColumn> {
        self.expr_in(e, rels, outer, Role::Direct)
    }

    /// The source columns `e` reads (`role` says where they go: a direct read returns them; `OVER`
    /// clauses and subqueries add theirs to the indirect set).
    fn expr_in(
        &mut self,
        e: &Expr,
        rels: &[Rel],
        outer: &[Rel],
        role: Role,
    ) -> BTreeSet<SourceColumn> {
        let mut out = BTreeSet::new();
        let mut c = Collect {
            refs: Vec::new(),
            subqueries: Vec::new(),
            windows: Vec::new(),
            unsure: Vec::new(),
        };
        let _ = e.visit(&mut c);
        for why in c.unsure {
            self.unsure(why);
        }
        for q in c.subqueries {
            // A subquery in an expression: every column it reads shapes the rows (or, in a projection,
            // cannot be told apart as direct): indirect; in a projection, unresolved.
            if role == Role::Direct {
                self.unsure("a subquery inside a projected expression");
            }
            let mut scope: Vec<Rel> = rels.to_vec();
            scope.extend(outer.iter().cloned());
            let saved = std::mem::take(&mut self.indirect);
            let outs = self.query(&q, &scope);
            let mut inner = std::mem::replace(&mut self.indirect, saved);
            for o in outs.into_iter().flatten() {
                inner.extend(o.1);
            }
            self.indirect.extend(inner);
        }
        // The columns of `OVER (PARTITION BY … ORDER BY …)` shape the rows, they are not the value:
        // one occurrence of each is taken out of the direct references.
        for spec in &c.windows {
            let mut inner = Collect {
                refs: Vec::new(),
                subqueries: Vec::new(),
                windows: Vec::new(),
                unsure: Vec::new(),
            };
            for p in &spec.partition_by {
                let _ = p.visit(&mut inner);
            }
            for o in &spec.order_by {
                let _ = o.expr.visit(&mut inner);
            }
            for r in inner.refs {
                if let Some(at) = c.refs.iter().position(|x| *x == r) {
                    c.refs.remove(at);
                }
            }
        }
        for spec in c.windows {
            self.window_spec(&spec, rels, outer);
        }
        for (qualifier, col, line) in c.refs {
            let written = match &qualifier {
                Some(q) => format!("{q}.{col}"),
                None => col.clone(),
            };
            match self.resolve(qualifier.as_deref(), &col, rels, outer) {
                Some(s) => out.extend(s),
                None => match missing(qualifier.as_deref(), &col, rels, outer) {
                    Some((relations, known)) => {
                        self.unsure(format!(
                            "column {written} is not a column of {}",
                            relations.join(" or ")
                        ));
                        let u = UnknownColumn {
                            column: written,
                            relations,
                            known,
                            line,
                        };
                        if !self.unknown.contains(&u) {
                            self.unknown.push(u);
                        }
                    }
                    None => {
                        self.unsure(format!("column {written} cannot be bound to one relation"))
                    }
                },
            }
        }
        out
    }

    fn window_spec(&mut self, spec: &sqlparser::ast::WindowSpec, rels: &[Rel], outer: &[Rel]) {
        for p in &spec.partition_by {
            let s = self.expr(p, rels, outer);
            self.grain.extend(s.iter().cloned());
            self.indirect.extend(s);
        }
        for o in &spec.order_by {
            let s = self.expr(&o.expr, rels, outer);
            self.indirect.extend(s);
        }
    }

    /// Binds a column reference to one relation of the scope (then of the enclosing scopes).
    fn resolve(
        &self,
        qualifier: Option<&str>,
        col: &str,
        rels: &[Rel],
        outer: &[Rel],
    ) -> Option<BTreeSet<SourceColumn>> {
        for scope in [rels, outer] {
            if let Some(q) = qualifier {
                if let Some(r) = scope.iter().find(|r| r.names.iter().any(|n| same(n, q))) {
                    return r.kind.sources(col);
                }
                continue;
            }
            if scope.is_empty() {
                continue;
            }
            let known: Vec<&Rel> = scope
                .iter()
                .filter(|r| r.kind.has(col) == Some(true))
                .collect();
            let unknown: Vec<&Rel> = scope.iter().filter(|r| r.kind.has(col).is_none()).collect();
            match (known.len(), unknown.len()) {
                (1, 0) => return known[0].kind.sources(col),
                (0, 1) => return unknown[0].kind.sources(col),
                (0, 0) => continue,
                _ => return None,
            }
        }
        // `alias.row_col.field`: the first part names the relation, the second its column.
        if let Some(q) = qualifier
            && let Some((first, rest)) = q.split_once('.')
        {
            let root = rest.split('.').next().unwrap_or(rest);
            if rels
                .iter()
                .chain(outer)
                .any(|r| r.names.iter().any(|n| same(n, first)))
            {
                return self.resolve(Some(first), root, rels, outer);
            }
            return self.resolve(None, first, rels, outer);
        }
        // `row_col.field`: a qualifier that names no relation may be a ROW column of one.
        if let Some(q) = qualifier {
            return self.resolve(None, q, rels, outer);
        }
        None
    }
}

/// The relations a column reference that [`Walk::resolve`] could not bind was looked up in, when each
/// of them is known not to have it, with the columns they have: the qualifier's relation, or every
/// relation of the scopes for a bare column. `None` when some candidate's columns are unknown or the
/// reference is ambiguous.
fn missing(
    qualifier: Option<&str>,
    col: &str,
    rels: &[Rel],
    outer: &[Rel],
) -> Option<(Vec<String>, Vec<String>)> {
    let name = |r: &Rel| {
        r.kind
            .reported_name(r.names.first().map_or("", String::as_str))
    };
    match qualifier {
        Some(q) if !q.contains('.') => {
            let r = rels
                .iter()
                .chain(outer)
                .find(|r| r.names.iter().any(|n| same(n, q)))?;
            (r.kind.has(col) == Some(false)).then(|| (vec![name(r)], r.kind.known()))
        }
        Some(_) => None,
        None => {
            let all: Vec<&Rel> = rels.iter().chain(outer).collect();
            if all.is_empty() || all.iter().any(|r| r.kind.has(col) != Some(false)) {
                return None;
            }
            let mut names: Vec<String> = all.iter().map(|r| name(r)).collect();
            names.dedup();
            Some((names, all.iter().flat_map(|r| r.kind.known()).collect()))
        }
    }
}

/// The name of a table function's single output when its alias names none.
const FUNCTION_OUTPUT: &str = "EXPR$0";

/// A relation built by a function, with its alias (and column aliases) applied.
fn aliased(
    kind: RelKind,
    origins: BTreeSet<String>,
    alias: &Option<TableAlias>,
    name: &str,
    w: &mut Walk,
) -> Rel {
    let mut kind = kind;
    if let Some(a) = alias
        && !a.columns.is_empty()
    {
        kind = match kind {
            RelKind::Derived(outs) if outs.len() == 1 && outs[0].0 == FUNCTION_OUTPUT => {
                let src = outs[0].1.clone();
                RelKind::Derived(
                    a.columns
                        .iter()
                        .map(|c| (c.name.value.clone(), src.clone()))
                        .collect(),
                )
            }
            other => match other.all() {
                Some(mut outs) => {
                    rename(&mut outs, a);
                    RelKind::Derived(outs)
                }
                None => {
                    w.unsure("column aliases over a function of unknown columns");
                    other
                }
            },
        };
    } else if matches!(&kind, RelKind::Derived(o) if o.len() == 1 && o[0].0 == FUNCTION_OUTPUT) {
        w.unsure(format!(
            "the outputs of table function {name} are not named"
        ));
    }
    let mut names: Vec<String> = alias.iter().map(|a| a.name.value.clone()).collect();
    if names.is_empty() && !name.is_empty() {
        names.push(name.to_string());
    }
    Rel {
        names,
        kind,
        origins,
    }
}

/// Applies `AS x(a, b, …)` column aliases to outputs, by position.
fn rename(outs: &mut [Out], alias: &TableAlias) {
    for (o, c) in outs.iter_mut().zip(&alias.columns) {
        o.0 = c.name.value.clone();
    }
}

/// Collects the column references of an expression (not inside its subqueries, which are handed back,
/// nor inside `OVER` specifications, handed back too).
struct Collect {
    /// `(qualifier, column, 1-based line)`.
    refs: Vec<(Option<String>, String, usize)>,
    subqueries: Vec<Query>,
    windows: Vec<sqlparser::ast::WindowSpec>,
    unsure: Vec<String>,
}

impl Visitor for Collect {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> std::ops::ControlFlow<()> {
        match e {
            Expr::Identifier(i) if !is_niladic(i) => {
                self.refs
                    .push((None, i.value.clone(), i.span.start.line as usize));
            }
            Expr::CompoundIdentifier(parts) => {
                let (last, rest) = parts.split_last().expect("a compound identifier");
                let q = rest
                    .iter()
                    .map(|p| p.value.clone())
                    .collect::<Vec<_>>()
                    .join(".");
                self.refs
                    .push((Some(q), last.value.clone(), last.span.start.line as usize));
            }
            Expr::CompoundFieldAccess { root, .. } => {
                // `col['k']`, `col.f`: the root column is read.
                if let Expr::Identifier(i) = root.as_ref() {
                    self.refs
                        .push((None, i.value.clone(), i.span.start.line as usize));
                }
            }
            Expr::Subquery(q) | Expr::Exists { subquery: q, .. } => {
                self.subqueries.push((**q).clone());
            }
            Expr::In {
                target: sqlparser::ast::InTarget::Subquery(subquery),
                ..
            } => self.subqueries.push((**subquery).clone()),
            Expr::Function(f) => self.function(f),
            _ => {}
        }
        std::ops::ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, _q: &Query) -> std::ops::ControlFlow<()> {
        // Subqueries are walked by the caller with their own scope; their columns must not be taken
        // as the outer expression's. The visitor still descends, so refs found below a subquery are
        // dropped by `post_visit_query`.
        self.refs.push((None, SUBQUERY_MARK.to_string(), 0));
        std::ops::ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> std::ops::ControlFlow<()> {
        if let Some(at) = self
            .refs
            .iter()
            .rposition(|(q, c, _)| q.is_none() && c == SUBQUERY_MARK)
        {
            self.refs.truncate(at);
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// Marks where a subquery's references start in [`Collect::refs`].
const SUBQUERY_MARK: &str = "\u{0}subquery";

impl Collect {
    fn function(&mut self, f: &Function) {
        if let Some(WindowType::WindowSpec(spec)) = &f.over {
            self.windows.push(spec.clone());
        }
        if f.filter.is_some() {
            self.unsure.push("an aggregate FILTER clause".into());
        }
    }
}

/// Words sqlparser reads as identifiers that are values in Flink SQL (`CURRENT_TIMESTAMP` without
/// parentheses, …).
fn is_niladic(i: &Ident) -> bool {
    i.quote_style.is_none()
        && [
            "CURRENT_TIMESTAMP",
            "CURRENT_DATE",
            "CURRENT_TIME",
            "LOCALTIMESTAMP",
            "LOCALTIME",
            "CURRENT_ROW_TIMESTAMP",
            // Time units given as arguments (`TIMESTAMPDIFF(SECOND, a, b)`): reserved words in Flink,
            // a column of that name must be quoted.
            "MICROSECOND",
            "MILLISECOND",
            "SECOND",
            "MINUTE",
            "HOUR",
            "DAY",
            "WEEK",
            "MONTH",
            "QUARTER",
            "YEAR",
        ]
        .iter()
        .any(|k| i.value.eq_ignore_ascii_case(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> BTreeMap<String, Vec<(String, bool)>> {
        BTreeMap::new()
    }

    fn cols(r: &StatementColumns) -> Vec<(String, Vec<String>)> {
        r.columns
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.direct.iter().map(|(t, c)| format!("{t}.{c}")).collect(),
                )
            })
            .collect()
    }

    fn ind(r: &StatementColumns) -> Vec<String> {
        r.indirect.iter().map(|(t, c)| format!("{t}.{c}")).collect()
    }

    #[test]
    fn projections_aggregates_filters_and_joins() {
        let sql = "CREATE TABLE o (id BIGINT, cid BIGINT, amount DOUBLE, ts TIMESTAMP(3));\n\
                   CREATE TABLE c (id BIGINT, name STRING);\n\
                   CREATE TABLE out (name STRING, total DOUBLE, n BIGINT);\n\
                   INSERT INTO out SELECT c.name, SUM(o.amount * 2), COUNT(*) FROM o JOIN c ON o.cid = c.id WHERE amount > 0 GROUP BY c.name;";
        let r = &lineage(sql, &none())[0];
        assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
        assert_eq!(
            cols(r),
            vec![
                ("name".to_string(), vec!["c.name".to_string()]),
                ("total".to_string(), vec!["o.amount".to_string()]),
                ("n".to_string(), vec![]),
            ]
        );
        assert_eq!(ind(r), vec!["c.id", "c.name", "o.amount", "o.cid"]);
    }

    #[test]
    fn ctes_subqueries_windows_and_unknown_schemas() {
        let sql = "INSERT INTO s SELECT window_start, k, SUM(v) AS total FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, k;";
        let r = &lineage(sql, &none())[0];
        assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
        assert_eq!(
            cols(r),
            vec![
                ("window_start".to_string(), vec!["t.ts".to_string()]),
                ("k".to_string(), vec!["t.k".to_string()]),
                ("total".to_string(), vec!["t.v".to_string()]),
            ]
        );
        assert_eq!(ind(r), vec!["t.k", "t.ts"]);

        let sql = "INSERT INTO s WITH x AS (SELECT a + b AS ab, k FROM t) SELECT ab, k FROM (SELECT * FROM x) y;";
        let r = &lineage(sql, &none())[0];
        assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
        assert_eq!(
            cols(r),
            vec![
                ("ab".to_string(), vec!["t.a".to_string(), "t.b".to_string()]),
                ("k".to_string(), vec!["t.k".to_string()]),
            ]
        );

        // Two relations of unknown schema and a bare column: unsure, not guessed.
        let r = &lineage(
            "INSERT INTO s SELECT a FROM t1 JOIN t2 ON t1.k = t2.k;",
            &none(),
        )[0];
        assert!(!r.unresolved.is_empty());
        // * over an unknown schema.
        let r = &lineage("INSERT INTO s SELECT * FROM t1;", &none())[0];
        assert!(!r.unresolved.is_empty());
    }

    #[test]
    fn lateral_using_order_by_and_partition_columns() {
        // A LATERAL subquery sees the relations before it.
        let sql = "INSERT INTO s SELECT l.v FROM t, LATERAL (SELECT u.name AS v FROM users u WHERE u.id = t.a) AS l;";
        let r = &lineage(sql, &none())[0];
        assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
        assert_eq!(
            cols(r),
            vec![("v".to_string(), vec!["users.name".to_string()])]
        );
        assert_eq!(ind(r), vec!["t.a", "users.id"]);
        // SELECT * over JOIN … USING: not expanded (the shared columns once), unresolved.
        let sql = "CREATE TABLE a (id INT, x INT);\nCREATE TABLE b (id INT, y INT);\nINSERT INTO t SELECT * FROM a JOIN b USING (id);";
        assert!(!lineage(sql, &none())[0].unresolved.is_empty());
        // ORDER BY binds an output alias first.
        let sql = "INSERT INTO t SELECT b AS a, a AS b FROM s ORDER BY a;";
        let r = &lineage(sql, &none())[0];
        assert_eq!(ind(r), vec!["s.b"]);
        // Outputs that cannot be matched to the sink's columns by position: no column at all.
        let sql = "CREATE TABLE t (x INT, y INT, dt STRING);\nINSERT INTO t PARTITION (dt = '2024') SELECT a, b, c, d FROM s;";
        let r = &lineage(sql, &none())[0];
        assert!(!r.unresolved.is_empty());
        assert!(r.columns.is_empty());
        // `other_db.t` is not the local `t`.
        let mut schemas = none();
        schemas.insert(
            "src".to_string(),
            vec![("id".to_string(), false), ("n".to_string(), false)],
        );
        let r = &lineage("INSERT INTO s SELECT * FROM other_db.src;", &schemas)[0];
        assert!(!r.unresolved.is_empty(), "{:?}", r.columns);
    }

    #[test]
    fn top_n_unnest_union_and_statement_sets() {
        let sql = "INSERT INTO s SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn FROM t) WHERE rn = 1;";
        let r = &lineage(sql, &none())[0];
        assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
        assert_eq!(ind(r), vec!["t.k", "t.ts"]);

        let sql =
            "INSERT INTO s SELECT o.id, i.sku FROM o CROSS JOIN UNNEST(o.items) AS i(sku, qty);";
        let r = &lineage(sql, &none())[0];
        assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
        assert_eq!(
            cols(r),
            vec![
                ("id".to_string(), vec!["o.id".to_string()]),
                ("sku".to_string(), vec!["o.items".to_string()]),
            ]
        );

        let sql = "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT x FROM t UNION ALL SELECT y FROM u; INSERT INTO b SELECT z FROM t WHERE q > 1; END;";
        let r = lineage(sql, &none());
        assert_eq!(r.len(), 2);
        assert_eq!(
            cols(&r[0]),
            vec![("x".to_string(), vec!["t.x".to_string(), "u.y".to_string()])]
        );
        assert_eq!(r[1].sink, "b");
        assert_eq!(ind(&r[1]), vec!["t.q"]);
    }

    fn schemas(tables: &[(&str, &[&str])]) -> BTreeMap<String, Vec<(String, bool)>> {
        tables
            .iter()
            .map(|(t, cols)| {
                (
                    t.to_string(),
                    cols.iter().map(|c| (c.to_string(), false)).collect(),
                )
            })
            .collect()
    }

    fn positional(r: &StatementColumns) -> Vec<(String, PositionalKind)> {
        r.positional
            .iter()
            .map(|p| (p.table.clone(), p.kind))
            .collect()
    }

    /// Issue 42, item 8: `*` (bare, qualified, of a join, through a CTE, a derived table, a view of
    /// the text, a window TVF) records the tables whose column order the outputs follow; an INSERT
    /// without a column list (SELECT or VALUES) records its sink; naming columns records nothing.
    #[test]
    fn positional_reads_are_recorded_for_every_kind_of_star_and_insert_without_columns() {
        use PositionalKind::{NoColumnList, Star};
        let s = schemas(&[
            ("a", &["id", "region", "v"]),
            ("b", &["id", "w"]),
            ("t", &["id", "region", "v"]),
        ]);
        let cases: Vec<(&str, Vec<(&str, PositionalKind)>)> = vec![
            (
                "INSERT INTO t SELECT * FROM a;",
                vec![("a", Star), ("t", NoColumnList)],
            ),
            (
                "INSERT INTO t (id, region, v) SELECT x.* FROM a AS x;",
                vec![("a", Star)],
            ),
            (
                "INSERT INTO t (id, region, v) SELECT a.* FROM a JOIN b ON a.id = b.id;",
                vec![("a", Star)],
            ),
            (
                "INSERT INTO t (id, region, v, w) SELECT * FROM a JOIN b ON a.id = b.id;",
                vec![("a", Star), ("b", Star)],
            ),
            (
                "INSERT INTO t (id, region, v) WITH c AS (SELECT * FROM a) SELECT * FROM c;",
                vec![("a", Star)],
            ),
            (
                "INSERT INTO t (id, region, v) WITH c AS (SELECT * FROM a) SELECT id, region, v FROM c;",
                vec![],
            ),
            (
                "INSERT INTO t (id, region, v) SELECT * FROM (SELECT * FROM a) AS d;",
                vec![("a", Star)],
            ),
            (
                "INSERT INTO t (id, region, v) SELECT d.* FROM (SELECT id, region, v FROM a) AS d;",
                vec![],
            ),
            (
                "CREATE TEMPORARY VIEW vw AS SELECT * FROM a;\nINSERT INTO t (id, region, v) SELECT * FROM vw;",
                vec![("a", Star)],
            ),
            (
                "INSERT INTO t VALUES (1, 'eu', 2);",
                vec![("t", NoColumnList)],
            ),
            ("INSERT INTO t (id, region, v) VALUES (1, 'eu', 2);", vec![]),
            (
                "INSERT INTO t SELECT id, region, v FROM a;",
                vec![("t", NoColumnList)],
            ),
            (
                "INSERT INTO t (id, region, v) SELECT id, region, v FROM a UNION ALL SELECT * FROM a;",
                vec![("a", Star)],
            ),
        ];
        for (sql, want) in cases {
            let r = lineage(sql, &s);
            let r = r.last().unwrap();
            let want: Vec<(String, PositionalKind)> =
                want.into_iter().map(|(t, k)| (t.to_string(), k)).collect();
            assert_eq!(positional(r), want, "{sql}");
        }
        // A window TVF over a table: `*` gives the table's columns, then the window's.
        let r = &lineage(
            "INSERT INTO t SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(v), INTERVAL '1' MINUTE));",
            &s,
        )[0];
        assert!(positional(r).contains(&("a".to_string(), Star)), "{r:?}");
        assert_eq!(r.width_mismatch, Some((6, 3)));
    }

    /// Issue 42, item 11: the window columns of every window TVF are computed from its DESCRIPTOR
    /// column (Flink's planner derives them from it), through CTEs and `*`; the time column is indirect
    /// only where it shapes the rows (grouped by a window column).
    #[test]
    fn window_bounds_are_direct_from_the_descriptor_column() {
        let s = schemas(&[("o", &["id", "amount", "ts"])]);
        for tvf in [
            "TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '1' MINUTE)",
            "HOP(TABLE o, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)",
            "CUMULATE(TABLE o, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1' HOUR)",
            "SESSION(TABLE o PARTITION BY id, DESCRIPTOR(ts), INTERVAL '5' MINUTE)",
        ] {
            let sql = format!(
                "INSERT INTO s SELECT window_start, window_end, window_time, SUM(amount) AS total FROM TABLE({tvf}) GROUP BY window_start, window_end, window_time;"
            );
            let r = &lineage(&sql, &s)[0];
            assert!(r.unresolved.is_empty(), "{tvf}: {:?}", r.unresolved);
            assert_eq!(
                cols(r),
                vec![
                    ("window_start".to_string(), vec!["o.ts".to_string()]),
                    ("window_end".to_string(), vec!["o.ts".to_string()]),
                    ("window_time".to_string(), vec!["o.ts".to_string()]),
                    ("total".to_string(), vec!["o.amount".to_string()]),
                ],
                "{tvf}"
            );
            assert_eq!(ind(r), vec!["o.ts"], "{tvf}");
        }
        // Without grouping, the window only adds columns: the time column is not indirect.
        let r = &lineage(
            "INSERT INTO s WITH w AS (SELECT * FROM TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '1' MINUTE))) SELECT id, window_end FROM w;",
            &s,
        )[0];
        assert_eq!(
            cols(r),
            vec![
                ("id".to_string(), vec!["o.id".to_string()]),
                ("window_end".to_string(), vec!["o.ts".to_string()]),
            ]
        );
        assert!(ind(r).is_empty(), "{:?}", ind(r));
    }

    /// Issue 42, item 10: a column its relation does not have (qualified or bare, in a projection, a
    /// filter, a CTE) is unresolved with the reason and listed with its line; a bare column over one
    /// relation of known schema binds to it (no "cannot be bound to one relation").
    #[test]
    fn unknown_columns_of_known_relations_are_reported_with_their_line() {
        let s = schemas(&[("src", &["id", "region", "amount"]), ("c", &["id", "name"])]);
        let cases = [
            (
                "INSERT INTO t\nSELECT id,\n  channel FROM src;",
                "channel",
                3,
            ),
            (
                "INSERT INTO t SELECT id FROM src\nWHERE channel = 'x';",
                "channel",
                2,
            ),
            (
                "INSERT INTO t SELECT s.id, s.chanel FROM src AS s;",
                "s.chanel",
                1,
            ),
            (
                "INSERT INTO t WITH x AS (SELECT id FROM src)\nSELECT region FROM x;",
                "region",
                2,
            ),
            (
                "INSERT INTO t SELECT src.id, nme FROM src JOIN c ON src.id = c.id;",
                "nme",
                1,
            ),
        ];
        for (sql, col, line) in cases {
            let r = &lineage(sql, &s)[0];
            assert_eq!(r.unknown_columns.len(), 1, "{sql}: {r:?}");
            let u = &r.unknown_columns[0];
            assert_eq!((u.column.as_str(), u.line), (col, line), "{sql}");
            assert!(
                r.unresolved
                    .iter()
                    .any(|w| w.contains("is not a column of")),
                "{sql}: {:?}",
                r.unresolved
            );
            assert!(
                !r.unresolved.iter().any(|w| w.contains("cannot be bound")),
                "{sql}: {:?}",
                r.unresolved
            );
        }
        // Known columns, a correlated reference, `$rowtime`: nothing unknown.
        let r = &lineage(
            "INSERT INTO t SELECT id, `$rowtime` FROM src WHERE id IN (SELECT c.id FROM c WHERE c.name = src.region);",
            &s,
        )[0];
        assert!(r.unknown_columns.is_empty(), "{:?}", r.unknown_columns);
        // A relation of unknown schema: not an error, taken at its word.
        let r = &lineage("INSERT INTO t SELECT channel FROM elsewhere;", &s)[0];
        assert!(
            r.unknown_columns.is_empty() && r.unresolved.is_empty(),
            "{r:?}"
        );
    }

    /// Issue 42, item 9: a writing statement the parser cannot read is an unresolved statement (its
    /// sink from the token-level reading, the parser's message in the reason), not no statement; a
    /// unit that writes nothing stays silent.
    #[test]
    fn unparseable_writing_statements_are_unresolved_with_line_and_reason() {
        let cases = [
            ("INSERT INTO t SELEC a FROM s;", "t", 1),
            ("-- x\nINSERT INTO db.t SELECT a,, b FROM s;", "db.t", 2),
            (
                "CREATE TABLE x (a INT);\nINSERT INTO t SELECT a FROM s WHERE;",
                "t",
                2,
            ),
            (
                "EXECUTE STATEMENT SET BEGIN\nINSERT INTO t SELECT a FROM s;\nINSERT INTO u SELEC b FROM s;\nEND;",
                "t",
                1,
            ),
            ("CREATE VIEW v AS SELECT a FROM s WHERE a = = 1;", "v", 1),
        ];
        for (sql, sink, line) in cases {
            let r = lineage(sql, &none());
            let st = r
                .iter()
                .find(|st| st.sink == sink)
                .unwrap_or_else(|| panic!("{sql}: {r:?}"));
            assert_eq!(st.line, line, "{sql}");
            assert!(st.columns.is_empty(), "{sql}");
            assert!(
                st.unresolved[0].starts_with("the statement cannot be parsed ("),
                "{sql}: {:?}",
                st.unresolved
            );
        }
        assert!(lineage("SELEC a FROM s;", &none()).is_empty());
        assert!(lineage("SET 'a' = 'b';\nCREATE TABLE x (a INT);", &none()).is_empty());
    }
}
