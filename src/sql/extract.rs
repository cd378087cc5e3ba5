//! Extraction of sinks, sources, DDL facts, joins and state reasons from parsed statements.
//!
//! Queries are walked structurally (query → set operation → SELECT → FROM items → joins) so that CTE scopes
//! are exact: a CTE name hides the catalog table of the same name in later CTEs and in the main query, but
//! not inside its own body (Flink's WITH clause:
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/queries/with/>).
//! Expressions are walked with sqlparser's `Visitor`; a subquery met in an expression is handed
//! back to the structural walk (and marks the statement stateful: semi/anti join or
//! scalar subquery join).

use std::ops::ControlFlow;

use sqlparser::ast::{
    ColumnOption, CreateTable, CreateTableLikeKind, CreateTableOptions, Distinct, Expr, FromTable,
    Function, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident, JoinConstraint,
    JoinOperator, ObjectName, Query, Reset, Set, SetExpr, SetQuantifier, SqlOption, Statement,
    TableConstraint, TableFactor, TableObject, TableVersion, TableWithJoins, Use, Value, Visit,
    Visitor,
};
use sqlparser::tokenizer::{Span, Token};

use super::dialect::{TABLE_ARG, table_argument};
use super::model::{
    Column, JoinCounts, Location, SessionChange, SourceSpan, StateReason, StatementKind, TableName,
    TableRef,
};
use super::state;

/// What the walk of one statement found.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub kind: Option<StatementKind>,
    pub sinks: Vec<TableRef>,
    pub sources: Vec<TableRef>,
    pub like_sources: Vec<TableName>,
    pub temporal: Vec<TableName>,
    pub temporary: bool,
    pub reasons: Vec<StateReason>,
    pub joins: JoinCounts,
    pub writes_query: bool,
    pub columns: Vec<Column>,
    pub primary_key: Vec<String>,
    pub with_options: Vec<(String, String)>,
    pub session: Option<SessionChange>,
    /// Reserved words found where a relation name belongs (`FROM ORDER`, `JOIN ON`): not relations (Flink
    /// requires reserved words used as names to be quoted), reported as broken clauses.
    pub rejected: Vec<TableRef>,
}

/// Reserved words of Flink SQL that structure a query or a statement, upper-case. Flink (Calcite) rejects
/// them as unquoted identifiers (Flink SQL reference, Overview › Reserved Keywords); one of them where a
/// table name belongs means the name is missing (`FROM GROUP BY …`), never a table called `GROUP`.
const RESERVED_WORDS: &[&str] = &[
    "ALL",
    "AND",
    "AS",
    "BETWEEN",
    "BY",
    "CASE",
    "CREATE",
    "CROSS",
    "DISTINCT",
    "ELSE",
    "END",
    "EXCEPT",
    "EXISTS",
    "FETCH",
    "FOR",
    "FROM",
    "FULL",
    "GROUP",
    "HAVING",
    "IN",
    "INNER",
    "INSERT",
    "INTERSECT",
    "INTO",
    "IS",
    "JOIN",
    "LEFT",
    "LIKE",
    "LIMIT",
    "MATCH_RECOGNIZE",
    "MINUS",
    "NATURAL",
    "NOT",
    "NULL",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "RIGHT",
    "SELECT",
    "SET",
    "THEN",
    "UNION",
    "USING",
    "VALUES",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
];

/// Whether an identifier as written (`value`, unquoted when `quote` is `None`) is one of the reserved words
/// that can never name a table unquoted ([`RESERVED_WORDS`]).
pub(crate) fn is_reserved_word(value: &str, quote: Option<char>) -> bool {
    quote.is_none()
        && value.len() <= 15
        && RESERVED_WORDS.iter().any(|w| w.eq_ignore_ascii_case(value))
}

/// How a FROM item takes part in joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rel {
    /// A table, view, derived table or window TVF: joining two of them is a regular join.
    Stream,
    /// `UNNEST`, `LATERAL TABLE(f(..))`, a table function without table argument: a correlate, no join state.
    Correlated,
    /// `t FOR SYSTEM_TIME AS OF …`.
    Temporal,
}

#[derive(Debug, Default, Clone, Copy)]
struct SelectCtx {
    has_aggregate: bool,
    window_tvf: bool,
}

#[derive(Default)]
struct Walker {
    facts: Facts,
    /// CTE names visible at the current point, innermost last (a stack, truncated when a scope ends).
    ctes: Vec<String>,
    /// How many times each name is on `ctes`: the lookup of every relation name, in O(1) (a chain of
    /// 100,000 CTEs made the linear lookup quadratic).
    visible: std::collections::HashMap<String, u32>,
    sel: SelectCtx,
}

/// Converts a sqlparser span to ours (`None` for the empty span of synthesised nodes).
pub(crate) fn source_span(span: Span) -> Option<SourceSpan> {
    if span.start.line == 0 {
        return None;
    }
    Some(SourceSpan {
        start: Location {
            line: span.start.line as usize,
            column: span.start.column as usize,
        },
        end: Location {
            line: span.end.line as usize,
            column: span.end.column as usize,
        },
    })
}

fn ident_ref(idents: &[&Ident]) -> Option<TableRef> {
    let first = idents.first()?;
    let last = idents.last()?;
    let name = TableName::new(idents.iter().map(|i| i.value.clone()));
    Some(TableRef {
        name,
        span: source_span(Span::new(first.span.start, last.span.end)),
    })
}

fn object_ref(name: &ObjectName) -> Option<TableRef> {
    let idents: Vec<&Ident> = name.0.iter().filter_map(|p| p.as_ident()).collect();
    ident_ref(&idents)
}

fn contains_interval(expr: &Expr) -> bool {
    sqlparser::ast::visit_expressions(expr, |e| {
        if matches!(e, Expr::Interval(_)) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .is_break()
}

fn function_name(f: &Function) -> &str {
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .map(|i| i.value.as_str())
        .unwrap_or("")
}

impl Walker {
    fn reason(&mut self, r: StateReason) {
        if !self.facts.reasons.contains(&r) {
            self.facts.reasons.push(r);
        }
    }

    fn is_cte(&self, r: &TableRef) -> bool {
        r.name.parts.len() == 1 && self.visible.contains_key(&r.name.parts[0])
    }

    fn push_cte(&mut self, name: &str) {
        *self.visible.entry(name.to_string()).or_default() += 1;
        self.ctes.push(name.to_string());
    }

    fn truncate_ctes(&mut self, mark: usize) {
        while self.ctes.len() > mark {
            if let Some(name) = self.ctes.pop()
                && let Some(count) = self.visible.get_mut(&name)
            {
                *count -= 1;
                if *count == 0 {
                    self.visible.remove(&name);
                }
            }
        }
    }

    fn source(&mut self, r: Option<TableRef>) {
        if let Some(r) = r
            && !self.is_cte(&r)
        {
            self.facts.sources.push(r);
        }
    }

    /// A table factor's name: a source, unless it is a bare reserved word (then the clause is broken).
    fn table_source(&mut self, name: &ObjectName) -> Option<TableRef> {
        if let [part] = name.0.as_slice()
            && let Some(ident) = part.as_ident()
            && is_reserved_word(&ident.value, ident.quote_style)
        {
            self.facts.rejected.extend(object_ref(name));
            return None;
        }
        object_ref(name)
    }

    fn visit<V: Visit>(&mut self, node: &V) {
        let mut v = ExprVisitor { w: self, depth: 0 };
        let _ = node.visit(&mut v);
    }

    fn walk_query(&mut self, q: &Query) {
        let mark = self.ctes.len();
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                self.walk_query(&cte.query);
                self.push_cte(&cte.alias.name.value);
            }
        }
        self.walk_set_expr(&q.body);
        if let Some(order_by) = &q.order_by {
            // A query's own ORDER BY on a stream: a temporal sort (only a time attribute may lead it), or
            // with LIMIT / FETCH a streaming Top-N. Both keep state (Flink SQL reference: ORDER BY clause,
            // LIMIT clause). ORDER BY inside OVER windows and aggregate calls is not a query's.
            if matches!(&order_by.kind, sqlparser::ast::OrderByKind::Expressions(e) if !e.is_empty())
            {
                self.reason(StateReason::Sort);
            }
            self.visit(order_by);
        }
        self.truncate_ctes(mark);
    }

    fn walk_set_expr(&mut self, s: &SetExpr) {
        // The parser builds `a UNION ALL b UNION ALL …` as a left-deep tree, one level per operator:
        // walk down its left spine in a loop (20,000 branches overflowed the stack as recursion), then
        // the right sides in order, so sources keep their written order.
        let mut rights = Vec::new();
        let mut leaf = s;
        while let SetExpr::SetOperation {
            set_quantifier,
            left,
            right,
            ..
        } = leaf
        {
            if !matches!(
                set_quantifier,
                SetQuantifier::All | SetQuantifier::AllByName
            ) {
                self.reason(StateReason::Union);
            }
            rights.push(right.as_ref());
            leaf = left;
        }
        match leaf {
            SetExpr::Select(sel) => self.walk_select(sel),
            SetExpr::Query(q) => self.walk_query(q),
            SetExpr::Values(v) => self.visit(v),
            SetExpr::Table(t) => {
                let parts: Vec<&Ident> = t.schema_name.iter().chain(t.table_name.iter()).collect();
                self.source(ident_ref(&parts));
            }
            _ => {}
        }
        for right in rights.into_iter().rev() {
            self.walk_set_expr(right);
        }
    }

    fn walk_select(&mut self, sel: &sqlparser::ast::Select) {
        let saved = std::mem::take(&mut self.sel);
        if matches!(sel.distinct, Some(Distinct::Distinct | Distinct::On(_))) {
            self.reason(StateReason::Distinct);
        }
        let mut streams = 0;
        for twj in &sel.from {
            if self.walk_twj(twj) == Rel::Stream {
                streams += 1;
            }
        }
        if streams > 1 {
            // Comma join: a regular (or interval) join, not counted in `joins` (no JOIN keyword, as in
            // shift_left's complexity block).
            let interval = sel.selection.as_ref().is_some_and(contains_interval);
            self.reason(if interval {
                StateReason::IntervalJoin
            } else {
                StateReason::RegularJoin
            });
        }
        for item in &sel.projection {
            self.visit(item);
        }
        if let Some(e) = &sel.selection {
            self.visit(e);
        }
        let mut legacy_window = false;
        let grouped = match &sel.group_by {
            GroupByExpr::All(_) => true,
            GroupByExpr::Expressions(exprs, _) => {
                for e in exprs {
                    match e {
                        Expr::Function(f) if state::is_window_function(function_name(f)) => {
                            legacy_window = true
                        }
                        Expr::Identifier(i)
                            if i.value.eq_ignore_ascii_case("window_start")
                                || i.value.eq_ignore_ascii_case("window_end") =>
                        {
                            legacy_window = true
                        }
                        _ => {}
                    }
                    self.visit(e);
                }
                !exprs.is_empty()
            }
        };
        if let Some(h) = &sel.having {
            self.visit(h);
        }
        if let Some(q) = &sel.qualify {
            self.visit(q);
        }
        for w in &sel.named_window {
            self.visit(w);
        }
        if grouped {
            self.reason(if legacy_window || self.sel.window_tvf {
                StateReason::WindowAggregate
            } else {
                StateReason::GroupAggregate
            });
        } else if self.sel.has_aggregate {
            self.reason(StateReason::GlobalAggregate);
        }
        self.sel = saved;
    }

    fn walk_twj(&mut self, twj: &TableWithJoins) -> Rel {
        let first = self.walk_factor(&twj.relation);
        for join in &twj.joins {
            let right = self.walk_factor(&join.relation);
            let constraint = match &join.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c)
                | JoinOperator::CrossJoin(c)
                | JoinOperator::Semi(c)
                | JoinOperator::LeftSemi(c)
                | JoinOperator::RightSemi(c)
                | JoinOperator::Anti(c)
                | JoinOperator::LeftAnti(c)
                | JoinOperator::RightAnti(c)
                | JoinOperator::StraightJoin(c) => Some(c),
                _ => None,
            };
            let on = match constraint {
                Some(JoinConstraint::On(e)) => Some(e),
                _ => None,
            };
            if let Some(e) = on {
                self.visit(e);
            }
            // Join counts follow shift_left's `complexity` block: every explicit JOIN by its keyword
            // (`JOIN` alone is "regular"), CROSS JOINs excluded.
            let counts = &mut self.facts.joins;
            match &join.join_operator {
                JoinOperator::Inner(_) => counts.inner += 1,
                JoinOperator::Left(_) | JoinOperator::LeftOuter(_) => counts.left += 1,
                JoinOperator::Right(_) | JoinOperator::RightOuter(_) => counts.right += 1,
                JoinOperator::FullOuter(_) => counts.outer += 1,
                JoinOperator::CrossJoin(_)
                | JoinOperator::CrossApply
                | JoinOperator::OuterApply => {}
                _ => counts.regular += 1,
            }
            if right != Rel::Stream || first == Rel::Correlated {
                // Temporal/lookup joins have their own reason; correlates (UNNEST, LATERAL TABLE) keep no
                // join state.
                continue;
            }
            let interval = on.is_some_and(contains_interval);
            self.reason(if interval {
                StateReason::IntervalJoin
            } else {
                StateReason::RegularJoin
            });
        }
        first
    }

    /// Walks the arguments of a table-valued function: `TABLE t` arguments are sources, a subquery argument
    /// is a derived table (not a scalar subquery). Returns whether a relation argument was found.
    fn walk_tvf_args<'a>(&mut self, args: impl Iterator<Item = &'a FunctionArg>) -> bool {
        let mut relation = false;
        for arg in args {
            let e = match arg {
                FunctionArg::Named { arg, .. }
                | FunctionArg::ExprNamed { arg, .. }
                | FunctionArg::Unnamed(arg) => arg,
            };
            match e {
                FunctionArgExpr::Expr(Expr::Subquery(q)) => {
                    relation = true;
                    self.walk_query(q);
                }
                FunctionArgExpr::Expr(expr) => {
                    if table_argument(expr).is_some() {
                        relation = true;
                    }
                    self.visit(expr);
                }
                other => self.visit(other),
            }
        }
        relation
    }

    fn walk_function_call(&mut self, f: &Function) -> bool {
        if state::is_window_function(function_name(f)) {
            self.sel.window_tvf = true;
        }
        match &f.args {
            FunctionArguments::List(list) => self.walk_tvf_args(list.args.iter()),
            FunctionArguments::Subquery(q) => {
                self.walk_query(q);
                true
            }
            FunctionArguments::None => false,
        }
    }

    fn walk_factor(&mut self, tf: &TableFactor) -> Rel {
        match tf {
            TableFactor::Table {
                name,
                args,
                version,
                ..
            } => {
                if let Some(args) = args {
                    // `FROM ML_PREDICT(TABLE t, MODEL m, …)`, `FROM TUMBLE(TABLE t, …)`: a table function.
                    if state::is_window_function(&name.to_string()) {
                        self.sel.window_tvf = true;
                    }
                    return if self.walk_tvf_args(args.args.iter()) {
                        Rel::Stream
                    } else {
                        Rel::Correlated
                    };
                }
                let r = self.table_source(name);
                if let Some(TableVersion::ForSystemTimeAsOf(e)) = version {
                    self.visit(e);
                    if let Some(r) = &r
                        && !self.is_cte(r)
                    {
                        self.facts.temporal.push(r.name.clone());
                    }
                    self.source(r);
                    self.reason(StateReason::TemporalJoin);
                    return Rel::Temporal;
                }
                self.source(r);
                Rel::Stream
            }
            TableFactor::TableFunction { expr, .. } => match expr {
                Expr::Function(f) => {
                    if self.walk_function_call(f) {
                        Rel::Stream
                    } else {
                        Rel::Correlated
                    }
                }
                other => {
                    self.visit(other);
                    Rel::Correlated
                }
            },
            TableFactor::Function { args, .. } => {
                // `LATERAL TABLE(f(x))` / `LATERAL f(x)`: the arguments may still hold subqueries.
                if self.walk_tvf_args(args.iter()) {
                    Rel::Stream
                } else {
                    Rel::Correlated
                }
            }
            TableFactor::UNNEST { array_exprs, .. } => {
                for e in array_exprs {
                    self.visit(e);
                }
                Rel::Correlated
            }
            TableFactor::Derived { subquery, .. } => {
                self.walk_query(subquery);
                Rel::Stream
            }
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                self.walk_twj(table_with_joins);
                Rel::Stream
            }
            TableFactor::MatchRecognize { table, .. } => {
                // Pattern variables (`A`, `B`) and MEASURES are not relations.
                self.reason(StateReason::MatchRecognize);
                self.walk_factor(table);
                Rel::Stream
            }
            TableFactor::Pivot { table, .. } | TableFactor::Unpivot { table, .. } => {
                self.walk_factor(table);
                Rel::Stream
            }
            _ => Rel::Stream,
        }
    }

    fn on_expr(&mut self, e: &Expr) {
        match e {
            Expr::Function(f) => {
                let name = function_name(f);
                if f.over.is_some() {
                    self.reason(if state::is_ranking(name) {
                        StateReason::TopN
                    } else {
                        StateReason::Over
                    });
                } else if state::is_history(name) {
                    self.reason(StateReason::Over);
                } else if state::is_aggregate(name) {
                    self.sel.has_aggregate = true;
                }
            }
            Expr::Prefixed { prefix, .. } if prefix.value == TABLE_ARG => {
                if let Some(idents) = table_argument(e) {
                    self.source(ident_ref(&idents));
                }
            }
            _ => {}
        }
    }
}

/// Visits expressions of the current query level; nested queries go back to the structural walk.
struct ExprVisitor<'w> {
    w: &'w mut Walker,
    depth: usize,
}

impl Visitor for ExprVisitor<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.w.reason(StateReason::SubqueryJoin);
            self.w.walk_query(q);
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            self.w.on_expr(e);
        }
        ControlFlow::Continue(())
    }
}

/// The parts of a name joined with `.`, unquoted.
fn name_text(name: &ObjectName) -> String {
    name.0
        .iter()
        .filter_map(|p| p.as_ident())
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

fn option_value(e: &Expr) -> String {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// sqlparser prints `DECIMAL(10,2)`; the model shows types as written with normalised whitespace
/// (`DECIMAL(10, 2)`).
fn normalise_type(t: &str) -> String {
    let mut out = String::with_capacity(t.len() + 4);
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == ',' && chars.peek().is_some_and(|n| !n.is_whitespace()) {
            out.push(' ');
        }
    }
    out
}

fn create_table_facts(w: &mut Walker, ct: &CreateTable) {
    w.facts.kind = Some(if ct.dynamic {
        StatementKind::CreateMaterializedTable
    } else if ct.query.is_some() {
        StatementKind::Ctas
    } else {
        StatementKind::CreateTable
    });
    w.facts.temporary = ct.temporary;
    if let Some(r) = object_ref(&ct.name) {
        w.facts.sinks.push(r);
    }
    for c in &ct.columns {
        let mut col = Column {
            name: c.name.value.clone(),
            data_type: normalise_type(&c.data_type.to_string()),
            nullable: true,
            computed: false,
            metadata: false,
        };
        for o in &c.options {
            match &o.option {
                ColumnOption::NotNull => col.nullable = false,
                ColumnOption::Alias(e) => {
                    col.computed = true;
                    col.data_type = e.to_string();
                }
                ColumnOption::PrimaryKey(_) => {
                    col.nullable = false;
                    w.facts.primary_key.push(c.name.value.clone());
                }
                ColumnOption::DialectSpecific(toks) => {
                    let is = |k: &str| {
                        toks.iter().any(
                            |t| matches!(t, Token::Word(wd) if wd.value.eq_ignore_ascii_case(k)),
                        )
                    };
                    if is("METADATA") {
                        col.metadata = true;
                        col.computed |= is("VIRTUAL");
                    }
                }
                _ => {}
            }
        }
        w.facts.columns.push(col);
    }
    for c in &ct.constraints {
        if let TableConstraint::PrimaryKey(pk) = c {
            for ic in &pk.columns {
                let name = match &ic.column.expr {
                    Expr::Identifier(i) => i.value.clone(),
                    other => other.to_string(),
                };
                w.facts.primary_key.push(name);
            }
        }
    }
    // Flink: primary key columns are implicitly NOT NULL.
    for col in &mut w.facts.columns {
        if w.facts.primary_key.contains(&col.name) {
            col.nullable = false;
        }
    }
    if let CreateTableOptions::With(opts) = &ct.table_options {
        for o in opts {
            if let SqlOption::KeyValue { key, value } = o {
                let key = key
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident())
                    .map(|i| i.value.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                w.facts.with_options.push((key, option_value(value)));
            }
        }
    }
    if let Some(like) = &ct.like {
        let (CreateTableLikeKind::Plain(l) | CreateTableLikeKind::Parenthesized(l)) = like;
        if let Some(r) = object_ref(&l.name) {
            w.facts.like_sources.push(r.name.clone());
            w.facts.sources.push(r);
        }
    }
    if let Some(q) = &ct.query {
        w.facts.writes_query = true;
        w.walk_query(q);
    }
}

/// Extracts the facts of one parsed statement (a member of a statement set is passed separately).
pub(crate) fn statement_facts(stmt: &Statement, into: &mut Facts) {
    let mut w = Walker {
        facts: std::mem::take(into),
        ..Walker::default()
    };
    match stmt {
        Statement::Insert(ins) => {
            w.facts.kind = Some(StatementKind::Insert);
            if let TableObject::TableName(name) = &ins.table
                && let Some(r) = object_ref(name)
            {
                w.facts.sinks.push(r);
            }
            if let Some(q) = &ins.source {
                if !matches!(q.body.as_ref(), SetExpr::Values(_)) {
                    w.facts.writes_query = true;
                }
                w.walk_query(q);
            }
        }
        Statement::Query(q) => {
            w.facts.kind = Some(StatementKind::Select);
            // A SELECT-only statement writes nothing: its state does not count (only
            // a written query result does, docs/src/concepts/statefulness.md), its reads do.
            let saved = std::mem::take(&mut w.facts.reasons);
            w.walk_query(q);
            w.facts.reasons = saved;
        }
        Statement::CreateTable(ct) => create_table_facts(&mut w, ct),
        Statement::CreateView(cv) => {
            w.facts.kind = Some(if cv.materialized {
                StatementKind::CreateMaterializedTable
            } else {
                StatementKind::CreateView
            });
            w.facts.temporary = cv.temporary;
            if let Some(r) = object_ref(&cv.name) {
                w.facts.sinks.push(r);
            }
            // A view's query counts in the file's statefulness (docs/src/concepts/statefulness.md).
            w.facts.writes_query = true;
            w.walk_query(&cv.query);
        }
        Statement::Set(set) => {
            w.facts.kind = Some(StatementKind::Set);
            if let Set::SingleAssignment {
                variable, values, ..
            } = set
                && let Some(value) = values.first()
            {
                w.facts.session = Some(SessionChange::Set {
                    key: name_text(variable),
                    value: option_value(value),
                });
            }
        }
        Statement::Reset(r) => {
            w.facts.kind = Some(StatementKind::Set);
            let key = match &r.reset {
                Reset::ConfigurationParameter(name) => Some(name_text(name)),
                _ => None,
            };
            w.facts.session = Some(SessionChange::Reset { key });
        }
        Statement::Use(u) => {
            w.facts.kind = Some(StatementKind::Use);
            w.facts.session = match u {
                Use::Catalog(name) => Some(SessionChange::UseCatalog {
                    catalog: name_text(name),
                }),
                Use::Object(name) | Use::Database(name) | Use::Schema(name) => {
                    object_ref(name).map(|r| SessionChange::UseDatabase { database: r.name })
                }
                _ => None,
            };
        }
        Statement::Drop { .. } | Statement::DropFunction(_) => {
            w.facts.kind = Some(StatementKind::Drop)
        }
        // `ALTER VIEW v AS query`, `ALTER MATERIALIZED TABLE m AS query` (Flink 2.x): not sinks (an
        // ALTER is never a sink), but the new query's reads are sources and its state counts.
        Statement::AlterView(av) => {
            w.facts.kind = Some(StatementKind::Alter);
            if let sqlparser::ast::AlterViewOperation::As { query, .. } = &av.operation {
                w.facts.writes_query = true;
                w.walk_query(query);
            }
        }
        Statement::AlterTable(_) => w.facts.kind = Some(StatementKind::Alter),
        Statement::CreateFunction(_) => w.facts.kind = Some(StatementKind::CreateFunction),
        // Batch-mode DELETE / UPDATE write their target (`DELETE FROM t` writes `t`:
        // https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/delete/);
        // subqueries in WHERE are reads.
        Statement::Delete(d) => {
            w.facts.kind = Some(StatementKind::Other);
            let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &d.from;
            for twj in from {
                if let TableFactor::Table { name, .. } = &twj.relation
                    && let Some(r) = object_ref(name)
                {
                    w.facts.sinks.push(r);
                }
            }
            if let Some(e) = &d.selection {
                w.visit(e);
            }
            w.facts.reasons.clear();
        }
        Statement::Update(u) => {
            w.facts.kind = Some(StatementKind::Other);
            if let TableFactor::Table { name, .. } = &u.table.relation
                && let Some(r) = object_ref(name)
            {
                w.facts.sinks.push(r);
            }
            for a in &u.assignments {
                w.visit(&a.value);
            }
            if let Some(e) = &u.selection {
                w.visit(e);
            }
            w.facts.reasons.clear();
        }
        _ => w.facts.kind = Some(StatementKind::Other),
    }
    *into = w.facts;
}
