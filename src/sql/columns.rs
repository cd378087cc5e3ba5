//! Column lineage of one SQL text: for each statement that writes a query result (INSERT, every member
//! of a statement set, CTAS, CREATE VIEW, materialized table), each output column with the source
//! columns it is computed from (**direct**), and the source columns that shape which rows are produced
//! without being copied (**indirect**: filters, join conditions, grouping keys, window time columns,
//! `OVER` partitions and orders, temporal-join times, subqueries in conditions), statement-wide, as
//! OpenLineage's column-lineage facet has them.
//!
//! Exactly right or explicitly unsure: a reference that cannot be bound to one relation (a bare column
//! with several candidate relations of unknown schema, `*` over an unknown schema, MATCH_RECOGNIZE,
//! JSON_TABLE, a scalar subquery in a projection) makes the statement *unresolved* with the reason;
//! nothing is guessed. The rules are written down in `tests/data/column_lineage/SPEC.md` (output names,
//! CTEs and subqueries resolved through to base tables, `window_start`/`window_end`/`window_time`
//! produced by the window, `UNNEST`/`LATERAL TABLE` outputs direct from their arguments).
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

/// The column lineage of one writing statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementColumns {
    /// The relation written, as written (dotted).
    pub sink: String,
    /// 1-based line of the statement (of the member, in a statement set).
    pub line: usize,
    /// The output columns, in order.
    pub columns: Vec<OutputColumn>,
    /// Source columns that shape the rows without being copied.
    pub indirect: BTreeSet<SourceColumn>,
    /// The grain: the source columns of its `GROUP BY` keys and `OVER (PARTITION BY …)` keys (dedup,
    /// Top-N), statement-wide. A change of it changes what one row means.
    pub grain: BTreeSet<SourceColumn>,
    /// Why the statement could not be resolved with certainty (empty: resolved).
    pub unresolved: Vec<String>,
}

/// The column lineage of every writing statement of `sql`, in order. `schemas` gives the columns of
/// tables defined elsewhere; the text's own `CREATE TABLE`s add to it, and its views and CTAS are
/// resolved through. A unit that does not parse yields no statement.
pub fn lineage(sql: &str, schemas: &dyn Schemas) -> Vec<StatementColumns> {
    let mut local = Local {
        outer: schemas,
        tables: BTreeMap::new(),
        views: BTreeMap::new(),
    };
    let mut out = Vec::new();
    for (line, parsed) in super::parse_units(sql) {
        let Ok(statements) = parsed else {
            continue;
        };
        for st in &statements {
            statement(&mut local, st, line, &mut out);
        }
    }
    out
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
    /// Views and CTAS of the text: their output columns with sources, and the columns that shape their
    /// rows (a statement reading the view is shaped by them too).
    views: BTreeMap<String, (Vec<Out>, BTreeSet<SourceColumn>)>,
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
            let r = written(local, &sink, line_of(&ct.name, line), q, &declared, false);
            remember(local, &sink, &r);
            out.push(r);
        }
        Statement::CreateView(cv) => {
            let sink = dotted(&cv.name);
            let declared: Vec<String> = cv.columns.iter().map(|c| c.name.value.clone()).collect();
            let r = written(
                local,
                &sink,
                line_of(&cv.name, line),
                &cv.query,
                &declared,
                false,
            );
            remember(local, &sink, &r);
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
            out.push(written(local, &sink, line_of(name, line), q, &listed, true));
        }
        _ => {}
    }
}

fn remember(local: &mut Local, sink: &str, r: &StatementColumns) {
    local.views.insert(
        sink.to_string(),
        (
            r.columns
                .iter()
                .map(|c| (c.name.clone(), c.direct.clone()))
                .collect(),
            r.indirect.clone(),
        ),
    );
}

/// The lineage of `query` written into `sink`: output names from `listed` (an INSERT column list or a
/// view's / CTAS's declared columns), else (for an INSERT) the sink's writable DDL columns by position,
/// else the query's own output names.
fn written(
    local: &Local,
    sink: &str,
    line: usize,
    q: &Query,
    listed: &[String],
    insert: bool,
) -> StatementColumns {
    let mut w = Walk {
        local,
        ctes: Vec::new(),
        indirect: BTreeSet::new(),
        grain: BTreeSet::new(),
        unresolved: Vec::new(),
        using_join: false,
    };
    let outputs = w.query(q, &[]);
    let mut result = StatementColumns {
        sink: sink.to_string(),
        line,
        columns: Vec::new(),
        indirect: std::mem::take(&mut w.indirect),
        grain: std::mem::take(&mut w.grain),
        unresolved: std::mem::take(&mut w.unresolved),
    };
    let Some(outputs) = outputs else {
        if result.unresolved.is_empty() {
            result
                .unresolved
                .push("the query's columns cannot be listed".into());
        }
        return result;
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
        return result;
    }
    result.columns = names
        .into_iter()
        .zip(outputs)
        .map(|(name, (_, direct))| OutputColumn { name, direct })
        .collect();
    result
}

/// A relation in the scope of a SELECT.
#[derive(Debug, Clone)]
struct Rel {
    /// The names it is referred to by (its alias; else its name as written and that name's last part).
    names: Vec<String>,
    kind: RelKind,
}

#[derive(Debug, Clone)]
enum RelKind {
    /// A base table: its columns when its schema is known.
    Base {
        table: String,
        columns: Option<Vec<String>>,
    },
    /// A CTE, a derived table, a view of the text, a function's outputs.
    Derived(Vec<Out>),
    /// A window TVF over a relation: its columns plus `window_start`, `window_end`, `window_time`.
    Window(Box<RelKind>),
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
            RelKind::Window(inner) => {
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
            RelKind::Window(inner) => {
                if WINDOW_COLUMNS.iter().any(|w| same(w, col)) {
                    Some(BTreeSet::new())
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
            RelKind::Window(inner) => {
                let mut v = inner.all()?;
                v.extend(
                    WINDOW_COLUMNS
                        .iter()
                        .map(|w| (w.to_string(), BTreeSet::new())),
                );
                Some(v)
            }
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
    ctes: Vec<BTreeMap<String, Vec<Out>>>,
    indirect: BTreeSet<SourceColumn>,
    grain: BTreeSet<SourceColumn>,
    unresolved: Vec<String>,
    /// A `JOIN … USING` was met in the current SELECT.
    using_join: bool,
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

    fn cte(&self, name: &str) -> Option<Vec<Out>> {
        self.ctes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name).cloned())
    }

    /// The outputs of `q`; `outer` is the enclosing scope (correlated subqueries).
    fn query(&mut self, q: &Query, outer: &[Rel]) -> Option<Vec<Out>> {
        let mut scope = BTreeMap::new();
        self.ctes.push(BTreeMap::new());
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let outs = self.query(&cte.query, outer);
                if let Some(mut outs) = outs {
                    rename(&mut outs, &cte.alias);
                    scope.insert(cte.alias.name.value.clone(), outs.clone());
                    if let Some(top) = self.ctes.last_mut() {
                        top.insert(cte.alias.name.value.clone(), outs);
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
        if let Some(order) = &q.order_by
            && let OrderByKind::Expressions(list) = &order.kind
        {
            for o in list {
                self.order_term(&o.expr, outs.as_deref(), &rels, outer, true);
            }
        }
        self.ctes.pop();
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
                let (r, _) = self.set_expr(right, outer);
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
                (Some(outs), Vec::new())
            }
            _ => {
                self.unsure("a query form column lineage does not read");
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
                        Some(r) => match r.kind.all() {
                            Some(cols) => outs.extend(cols),
                            None => self.unsure(format!("{q}.* whose columns are unknown")),
                        },
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
                    let kind = self.table_function(&dotted(name), &args.args, rels, outer);
                    rels.push(aliased(kind, alias, &dotted(name), self));
                    return;
                }
                let table = dotted(name);
                let kind = if let Some(outs) = self.cte(&table) {
                    RelKind::Derived(outs)
                } else if let Some((outs, shaped)) = self.local.views.get(&table) {
                    self.indirect.extend(shaped.iter().cloned());
                    RelKind::Derived(outs.clone())
                } else {
                    RelKind::Base {
                        columns: self.local.columns(&table, false),
                        table: table.clone(),
                    }
                };
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
                rels.push(Rel { names, kind });
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
                });
            }
            TableFactor::TableFunction { expr, alias } => {
                let kind = match expr {
                    Expr::Function(f) => {
                        let args: Vec<FunctionArg> = match &f.args {
                            FunctionArguments::List(l) => l.args.clone(),
                            _ => Vec::new(),
                        };
                        self.table_function(&dotted(&f.name), &args, rels, outer)
                    }
                    other => {
                        let s = self.expr(other, rels, outer);
                        RelKind::Derived(vec![("EXPR$0".into(), s)])
                    }
                };
                rels.push(aliased(kind, alias, "", self));
            }
            TableFactor::Function {
                name, args, alias, ..
            } => {
                let kind = self.table_function(&dotted(name), args, rels, outer);
                rels.push(aliased(kind, alias, &dotted(name), self));
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

    /// A table-valued function: a window TVF over `TABLE t` (t's columns plus the window's, the
    /// `DESCRIPTOR` time column indirect), else a function whose outputs come from its arguments.
    fn table_function(
        &mut self,
        name: &str,
        args: &[FunctionArg],
        rels: &[Rel],
        outer: &[Rel],
    ) -> RelKind {
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
            let inner = if let Some(outs) = self.cte(&t) {
                RelKind::Derived(outs)
            } else if let Some((outs, shaped)) = self.local.views.get(&t) {
                self.indirect.extend(shaped.iter().cloned());
                RelKind::Derived(outs.clone())
            } else {
                RelKind::Base {
                    columns: self.local.columns(&t, false),
                    table: t.clone(),
                }
            };
            // DESCRIPTOR(ts): the time column, indirect.
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
                                Some(s) => self.indirect.extend(s),
                                None => self.unsure(format!("window time column {}", col.value)),
                            }
                        }
                    }
                }
            }
            return RelKind::Window(Box::new(inner));
        }
        if table.is_some() {
            self.unsure(format!("table function {name} over a table"));
            return RelKind::Derived(Vec::new());
        }
        let mut src = BTreeSet::new();
        for e in exprs {
            src.extend(self.expr(e, rels, outer));
        }
        RelKind::Derived(vec![(FUNCTION_OUTPUT.to_string(), src)])
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
        for (qualifier, col) in c.refs {
            match self.resolve(qualifier.as_deref(), &col, rels, outer) {
                Some(s) => out.extend(s),
                None => self.unsure(format!(
                    "column {} cannot be bound to one relation",
                    match &qualifier {
                        Some(q) => format!("{q}.{col}"),
                        None => col.clone(),
                    }
                )),
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

/// The name of a table function's single output when its alias names none.
const FUNCTION_OUTPUT: &str = "EXPR$0";

/// A relation built by a function, with its alias (and column aliases) applied.
fn aliased(kind: RelKind, alias: &Option<TableAlias>, name: &str, w: &mut Walk) -> Rel {
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
    Rel { names, kind }
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
    refs: Vec<(Option<String>, String)>,
    subqueries: Vec<Query>,
    windows: Vec<sqlparser::ast::WindowSpec>,
    unsure: Vec<String>,
}

impl Visitor for Collect {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> std::ops::ControlFlow<()> {
        match e {
            Expr::Identifier(i) if !is_niladic(i) => {
                self.refs.push((None, i.value.clone()));
            }
            Expr::CompoundIdentifier(parts) => {
                let (last, rest) = parts.split_last().expect("a compound identifier");
                let q = rest
                    .iter()
                    .map(|p| p.value.clone())
                    .collect::<Vec<_>>()
                    .join(".");
                self.refs.push((Some(q), last.value.clone()));
            }
            Expr::CompoundFieldAccess { root, .. } => {
                // `col['k']`, `col.f`: the root column is read.
                if let Expr::Identifier(i) = root.as_ref() {
                    self.refs.push((None, i.value.clone()));
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
        self.refs.push((None, SUBQUERY_MARK.to_string()));
        std::ops::ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> std::ops::ControlFlow<()> {
        if let Some(at) = self
            .refs
            .iter()
            .rposition(|(q, c)| q.is_none() && c == SUBQUERY_MARK)
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
                ("window_start".to_string(), vec![]),
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
}
