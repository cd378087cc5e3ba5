//! Token-level extraction for statements the parser rejects.
//!
//! Works on sqlparser's tokens, so strings, quoted identifiers, comments and hints are already out of the
//! way. It recognises relation positions (after `FROM`, `JOIN`, a comma of a FROM list, `TABLE` inside a
//! table-valued function call, `LIKE` of a `CREATE TABLE`, `INSERT INTO|OVERWRITE`, `CREATE … TABLE|VIEW`)
//! and skips the look-alikes: CTE names, aliases, `LATERAL TABLE(…)`, `UNNEST(…)`, table functions, and
//! `FROM` inside `EXTRACT`/`TRIM`/`SUBSTRING`/`OVERLAY`/`POSITION`, `IS [NOT] DISTINCT FROM` and
//! `METADATA FROM`. A reserved word (`GROUP`, `WHERE`, `ON`, …) in a relation position is never taken for a
//! table (Flink requires reserved words used as names to be quoted): it is reported as a broken clause
//! (`Facts::rejected`). State is estimated from keywords. Cost: linear in the tokens (parenthesis groups
//! are matched once, up front).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Word};

use std::collections::HashSet;

use super::extract::{Facts, is_reserved_word, source_span};
use super::model::{StateReason, StatementKind, TableName, TableRef};
use super::state;

/// Functions whose arguments use `FROM` as a separator, not a relation position.
const FROM_FUNCTIONS: &[&str] = &[
    "EXTRACT",
    "TRIM",
    "SUBSTRING",
    "SUBSTR",
    "OVERLAY",
    "POSITION",
];

struct Scan<'a> {
    t: &'a [TokenWithSpan],
}

impl<'a> Scan<'a> {
    fn word(&self, i: usize) -> Option<&'a Word> {
        match self.t.get(i).map(|t| &t.token) {
            Some(Token::Word(w)) => Some(w),
            _ => None,
        }
    }

    fn kw(&self, i: usize, k: Keyword) -> bool {
        self.word(i)
            .is_some_and(|w| w.quote_style.is_none() && w.keyword == k)
    }

    fn is(&self, i: usize, text: &str) -> bool {
        self.word(i)
            .is_some_and(|w| w.quote_style.is_none() && w.value.eq_ignore_ascii_case(text))
    }

    fn tok(&self, i: usize) -> Option<&'a Token> {
        self.t.get(i).map(|t| &t.token)
    }

    /// Reads a possibly qualified name at `i`; returns it and the index after it.
    fn name(&self, i: usize) -> Option<(TableRef, usize)> {
        let mut parts = Vec::new();
        let mut j = i;
        let start = self.t.get(i)?.span.start;
        let mut end;
        loop {
            let w = self.word(j)?;
            parts.push(w.value.clone());
            end = self.t[j].span.end;
            j += 1;
            if self.tok(j) == Some(&Token::Period) && self.word(j + 1).is_some() {
                j += 1;
            } else {
                break;
            }
        }
        Some((
            TableRef {
                name: TableName::new(parts),
                span: source_span(Span::new(start, end)),
            },
            j,
        ))
    }
}

/// Extracts what can be recognised from the tokens of one statement (or statement set).
pub(crate) fn extract(tokens: &[TokenWithSpan]) -> Facts {
    let s = Scan { t: tokens };
    let mut f = Facts {
        kind: Some(kind(&s)),
        ..Facts::default()
    };
    let depths = depths(tokens);
    let ctes = cte_names(&s, &depths, &group_ends(tokens));
    let mut w = Walk::new(&s, &depths, &ctes);
    let mut i = 0;
    while i < tokens.len() {
        i = w.step(i, &mut f);
    }
    if w.aggregate && !w.group_by {
        push_reason(&mut f, StateReason::GlobalAggregate);
    }
    if w.group_by {
        push_reason(&mut f, StateReason::GroupAggregate);
    }
    sinks(&s, &mut f);
    // A stateful operator without `SELECT` (`INSERT INTO t SELEC … GROUP BY …`) is a query all the same.
    f.writes_query = (w.has_select || !f.reasons.is_empty())
        && matches!(
            f.kind,
            Some(
                StatementKind::Insert
                    | StatementKind::Ctas
                    | StatementKind::CreateView
                    | StatementKind::CreateMaterializedTable
                    | StatementKind::StatementSet
            )
        );
    if matches!(f.kind, Some(StatementKind::Select)) {
        f.reasons.clear();
    }
    f
}

/// CTE names: `WITH name [(cols)] AS (` … `, name [(cols)] AS (`.
fn cte_names(s: &Scan, depths: &[usize], groups: &[usize]) -> HashSet<String> {
    let mut ctes = HashSet::new();
    for i in 0..s.t.len() {
        if s.kw(i, Keyword::WITH) && s.tok(i + 1) != Some(&Token::LParen) {
            let d = depths[i];
            let mut j = i + 1;
            while let Some(w) = s.word(j) {
                let mut k = j + 1;
                if s.tok(k) == Some(&Token::LParen) {
                    k = groups[k];
                }
                if !(s.kw(k, Keyword::AS) && s.tok(k + 1) == Some(&Token::LParen)) {
                    break;
                }
                ctes.insert(w.value.clone());
                let after = groups[k + 1];
                if s.tok(after) == Some(&Token::Comma) && depths.get(after) == Some(&d) {
                    j = after + 1;
                } else {
                    break;
                }
            }
        }
    }
    ctes
}

/// The token walk that finds relations (sources, joins) and the keyword-level state estimate over
/// the tokens of `s`, their parenthesis depths and the statement's CTE names. Its stacks have one
/// entry per open parenthesis group, the statement itself first.
struct Walk<'a> {
    s: &'a Scan<'a>,
    depths: &'a [usize],
    ctes: &'a HashSet<String>,
    /// The word before each open `(`, to know which function a `FROM` sits in.
    openers: Vec<Option<String>>,
    /// Whether each open group holds a query (`(SELECT`, `(WITH`), where an `ORDER BY` sorts the
    /// query's rows (not a window's or an aggregate's arguments).
    query_group: Vec<bool>,
    /// Whether each open group is in a `FROM` list.
    in_from: Vec<bool>,
    /// Relations seen in each open group's current `FROM` list.
    relations_in_list: Vec<usize>,
    group_by: bool,
    aggregate: bool,
    has_select: bool,
}

impl<'a> Walk<'a> {
    fn new(s: &'a Scan<'a>, depths: &'a [usize], ctes: &'a HashSet<String>) -> Walk<'a> {
        Walk {
            s,
            depths,
            ctes,
            openers: Vec::new(),
            query_group: vec![true],
            in_from: vec![false],
            relations_in_list: vec![0],
            group_by: false,
            aggregate: false,
            has_select: false,
        }
    }

    /// Reads the token at `i` into `f`; returns the index of the next token to read (past a
    /// relation's name and alias when one starts here).
    fn step(&mut self, i: usize, f: &mut Facts) -> usize {
        match &self.s.t[i].token {
            Token::LParen => {
                self.open(i);
                return i + 1;
            }
            Token::RParen => {
                self.close(f);
                return i + 1;
            }
            _ => {}
        }
        let relation_at = self.clause(i, f);
        self.state_keywords(i, f);
        match relation_at.and_then(|j| self.relation(i, j, f)) {
            Some(after) => after,
            None => i + 1,
        }
    }

    /// An opening `(` at `i`.
    fn open(&mut self, i: usize) {
        let s = self.s;
        let opener = if i > 0 {
            s.word(i - 1).map(|w| w.value.to_ascii_uppercase())
        } else {
            None
        };
        if let Some(o) = &opener
            && state::is_aggregate(o)
        {
            self.aggregate = true;
        }
        self.openers.push(opener);
        self.query_group
            .push(s.kw(i + 1, Keyword::SELECT) || s.kw(i + 1, Keyword::WITH));
        self.in_from.push(false);
        self.relations_in_list.push(0);
    }

    /// A closing `)`: a group that listed two relations or more joined them.
    fn close(&mut self, f: &mut Facts) {
        self.openers.pop();
        if self.query_group.len() > 1 {
            self.query_group.pop();
        }
        if self.in_from.len() > 1 {
            self.in_from.pop();
        }
        if let Some(c) = (self.relations_in_list.len() > 1)
            .then(|| self.relations_in_list.pop())
            .flatten()
            && c > 1
        {
            push_reason(f, StateReason::RegularJoin);
        }
    }

    /// The clause keyword at `i` (`FROM`, `JOIN`, a list comma, `TABLE t`, `LIKE`, a clause that
    /// ends a `FROM` list): joins counted, `TABLE`/`LIKE` sources added; returns where a relation
    /// starts when one follows.
    fn clause(&mut self, i: usize, f: &mut Facts) -> Option<usize> {
        let (s, depths, ctes) = (self.s, self.depths, self.ctes);
        let tok = &s.t[i].token;
        let top = self.in_from.len() - 1;
        if s.kw(i, Keyword::FROM) {
            let in_function = self
                .openers
                .last()
                .and_then(|o| o.as_deref())
                .is_some_and(|o| FROM_FUNCTIONS.contains(&o));
            let after_distinct =
                i > 0 && (s.kw(i - 1, Keyword::DISTINCT) || s.is(i - 1, "METADATA"));
            if !in_function && !after_distinct {
                self.in_from[top] = true;
                self.relations_in_list[top] = 0;
                return Some(i + 1);
            }
        } else if s.kw(i, Keyword::JOIN) {
            count_join(s, i, f);
            return Some(i + 1);
        } else if *tok == Token::Comma && self.in_from[top] {
            return Some(i + 1);
        } else if s.kw(i, Keyword::TABLE)
            && s.word(i + 1).is_some()
            && s.tok(i + 2) != Some(&Token::LParen)
            && i > 0
        {
            // `TABLE t` argument of a window TVF / ML_PREDICT (not `CREATE TABLE`, `LATERAL TABLE(`).
            let prev_create = s.kw(i - 1, Keyword::CREATE)
                || s.kw(i - 1, Keyword::REPLACE)
                || s.kw(i - 1, Keyword::TEMPORARY)
                || s.is(i - 1, "MATERIALIZED")
                || s.kw(i - 1, Keyword::INTO)
                || s.kw(i - 1, Keyword::OVERWRITE)
                || s.kw(i - 1, Keyword::INSERT);
            if !prev_create && let Some((r, _)) = s.name(i + 1) {
                add_source(f, r, ctes);
            }
        } else if s.kw(i, Keyword::LIKE)
            && depths[i] == 0
            && matches!(f.kind, Some(StatementKind::CreateTable))
        {
            if let Some((r, _)) = s.name(i + 1) {
                f.like_sources.push(r.name.clone());
                f.sources.push(r);
            }
        } else if [
            Keyword::WHERE,
            Keyword::GROUP,
            Keyword::HAVING,
            Keyword::ORDER,
            Keyword::LIMIT,
            Keyword::UNION,
            Keyword::INTERSECT,
            Keyword::EXCEPT,
            Keyword::WINDOW,
            Keyword::SELECT,
            Keyword::INSERT,
            Keyword::MATCH_RECOGNIZE,
        ]
        .iter()
        .any(|k| s.kw(i, *k))
        {
            self.in_from[top] = false;
        } else if *tok == Token::SemiColon {
            self.in_from.iter_mut().for_each(|b| *b = false);
        }
        None
    }

    /// Keyword-level state estimate at `i`: `GROUP BY`, `SELECT DISTINCT`, `OVER` (Top-N when a
    /// ranking function precedes it), `MATCH_RECOGNIZE`, a query's `ORDER BY`, `UNION`/`INTERSECT`/
    /// `EXCEPT` without `ALL`, `IN (SELECT`/`EXISTS (SELECT`.
    fn state_keywords(&mut self, i: usize, f: &mut Facts) {
        let s = self.s;
        if s.kw(i, Keyword::GROUP) && s.kw(i + 1, Keyword::BY) {
            self.group_by = true;
        }
        if s.kw(i, Keyword::SELECT) {
            self.has_select = true;
            if s.kw(i + 1, Keyword::DISTINCT) {
                push_reason(f, StateReason::Distinct);
            }
        }
        if s.kw(i, Keyword::OVER) {
            let ranking = (1..=4)
                .any(|b| i >= b && s.word(i - b).is_some_and(|w| state::is_ranking(&w.value)));
            push_reason(
                f,
                if ranking {
                    StateReason::TopN
                } else {
                    StateReason::Over
                },
            );
        }
        if s.kw(i, Keyword::MATCH_RECOGNIZE) {
            push_reason(f, StateReason::MatchRecognize);
        }
        if s.kw(i, Keyword::ORDER)
            && s.kw(i + 1, Keyword::BY)
            && self.query_group.last() == Some(&true)
        {
            push_reason(f, StateReason::Sort);
        }
        if (s.kw(i, Keyword::UNION) && !s.kw(i + 1, Keyword::ALL))
            || ((s.kw(i, Keyword::INTERSECT) || s.kw(i, Keyword::EXCEPT))
                && !s.kw(i + 1, Keyword::ALL))
        {
            push_reason(f, StateReason::Union);
        }
        if (s.kw(i, Keyword::IN) || s.kw(i, Keyword::EXISTS))
            && s.tok(i + 1) == Some(&Token::LParen)
            && (s.kw(i + 2, Keyword::SELECT) || s.kw(i + 2, Keyword::WITH))
        {
            push_reason(f, StateReason::SubqueryJoin);
        }
    }

    /// The relation that starts at `j` (after the clause token at `i`): a source (with a temporal
    /// join noted), a missing name (a reserved word where the name should be: rejected), or a
    /// parenthesised one counted. Returns the index past the relation when a name was read.
    fn relation(&mut self, i: usize, j: usize, f: &mut Facts) -> Option<usize> {
        let (s, ctes) = (self.s, self.ctes);
        let top = self.in_from.len() - 1;
        if let Some(w) = s.word(j)
            && is_reserved_word(w.value.as_str(), w.quote_style)
            && !matches!(
                w.keyword,
                Keyword::LATERAL
                    | Keyword::UNNEST
                    | Keyword::TABLE
                    | Keyword::SELECT
                    | Keyword::VALUES
            )
        {
            // `FROM GROUP BY …`, `JOIN ON …`: the table name is missing, the keyword is not one.
            if let Some((r, _)) = s.name(j) {
                f.rejected.push(r);
            }
        } else if let Some((r, after)) = relation(s, j) {
            self.relations_in_list[top] += 1;
            if self.relations_in_list[top] == 2 && s.t[i].token == Token::Comma {
                push_reason(f, StateReason::RegularJoin);
            }
            if temporal_after(s, j) {
                f.temporal.push(r.name.clone());
                push_reason(f, StateReason::TemporalJoin);
            }
            add_source(f, r, ctes);
            return Some(after);
        } else if s.tok(j) == Some(&Token::LParen) {
            self.relations_in_list[top] += 1;
        }
        None
    }
}

/// The `JOIN` at `i`, counted by its kind as shift_left's complexity block does (cross joins
/// excluded); a regular join (not correlated, cross or temporal) holds state.
fn count_join(s: &Scan, i: usize, f: &mut Facts) {
    let next_correlated = s.kw(i + 1, Keyword::LATERAL) || s.kw(i + 1, Keyword::UNNEST);
    let before = |k: Keyword| (1..=2).any(|b| i >= b && s.kw(i - b, k));
    let cross = before(Keyword::CROSS);
    if before(Keyword::LEFT) {
        f.joins.left += 1;
    } else if before(Keyword::RIGHT) {
        f.joins.right += 1;
    } else if before(Keyword::FULL) {
        f.joins.outer += 1;
    } else if before(Keyword::INNER) {
        f.joins.inner += 1;
    } else if !cross {
        f.joins.regular += 1;
    }
    if !(next_correlated || cross || temporal_after(s, i + 1)) {
        push_reason(f, StateReason::RegularJoin);
    }
}

/// The sinks: `INSERT INTO|OVERWRITE [TABLE] t`, and the table or view a `CREATE [OR REPLACE]
/// [TEMPORARY] [MATERIALIZED] TABLE|VIEW [IF NOT EXISTS] t` defines (its temporariness noted).
fn sinks(s: &Scan, f: &mut Facts) {
    for i in 0..s.t.len() {
        if s.kw(i, Keyword::INSERT)
            && (s.kw(i + 1, Keyword::INTO) || s.kw(i + 1, Keyword::OVERWRITE))
        {
            let j = if s.kw(i + 2, Keyword::TABLE) {
                i + 3
            } else {
                i + 2
            };
            if let Some((r, after)) = s.name(j) {
                let bare = after == j + 1 && s.word(j).is_some_and(|w| w.quote_style.is_none());
                push_sink(f, r, bare, false);
            }
        }
    }
    if s.kw(0, Keyword::CREATE) || (s.kw(0, Keyword::REPLACE) && s.kw(1, Keyword::TABLE)) {
        let mut j = 1;
        while s.kw(j, Keyword::OR)
            || s.kw(j, Keyword::REPLACE)
            || s.kw(j, Keyword::ALTER)
            || s.kw(j, Keyword::TEMPORARY)
            || s.is(j, "MATERIALIZED")
        {
            f.temporary |= s.kw(j, Keyword::TEMPORARY);
            j += 1;
        }
        if s.kw(j, Keyword::TABLE) || s.kw(j, Keyword::VIEW) {
            j += 1;
            if s.kw(j, Keyword::IF) {
                j += 3;
            }
            if let Some((r, after)) = s.name(j) {
                let bare = after == j + 1 && s.word(j).is_some_and(|w| w.quote_style.is_none());
                push_sink(f, r, bare, true);
            }
        }
    }
}

/// A sink name (`bare`: one unquoted word), unless it is a reserved word (`create table by pgadmin` in a
/// notes line): then the name is missing and the clause is reported instead.
fn push_sink(f: &mut Facts, r: TableRef, bare: bool, first: bool) {
    if bare && is_reserved_word(r.name.table(), None) {
        f.rejected.push(r);
    } else if first {
        f.sinks.insert(0, r);
    } else {
        f.sinks.push(r);
    }
}

fn push_reason(f: &mut Facts, r: StateReason) {
    if !f.reasons.contains(&r) {
        f.reasons.push(r);
    }
}

fn add_source(f: &mut Facts, r: TableRef, ctes: &HashSet<String>) {
    if r.name.parts.len() == 1 && ctes.contains(&r.name.parts[0]) {
        return;
    }
    f.sources.push(r);
}

/// Whether `t [AS alias] FOR SYSTEM_TIME` starts at `j` (the alias comes after the period clause in Flink,
/// so it is checked right after the name).
fn temporal_after(s: &Scan, j: usize) -> bool {
    let mut k = j;
    while s.word(k).is_some() && s.tok(k + 1) == Some(&Token::Period) {
        k += 2;
    }
    s.kw(k + 1, Keyword::FOR) && s.kw(k + 2, Keyword::SYSTEM_TIME)
}

/// The relation named at `j`, or `None` for a subquery, `LATERAL`, `UNNEST`, `TABLE(…)` or a function call.
fn relation(s: &Scan, j: usize) -> Option<(TableRef, usize)> {
    let w = s.word(j)?;
    if w.quote_style.is_none()
        && matches!(
            w.keyword,
            Keyword::LATERAL | Keyword::UNNEST | Keyword::TABLE | Keyword::SELECT | Keyword::VALUES
        )
    {
        return None;
    }
    let (r, after) = s.name(j)?;
    if s.tok(after) == Some(&Token::LParen) {
        return None; // table function
    }
    Some((r, after))
}

/// Parenthesis depth before each token.
fn depths(tokens: &[TokenWithSpan]) -> Vec<usize> {
    let mut d = 0usize;
    tokens
        .iter()
        .map(|t| {
            let here = d;
            match t.token {
                Token::LParen => d += 1,
                Token::RParen => d = d.saturating_sub(1),
                _ => {}
            }
            if t.token == Token::RParen { d } else { here }
        })
        .collect()
}

/// For each token: the index after the balanced group it opens if it is a `(` (the end of the tokens for
/// an unclosed group), else its own index. One pass with a stack.
fn group_ends(tokens: &[TokenWithSpan]) -> Vec<usize> {
    let n = tokens.len();
    let mut ends: Vec<usize> = (0..n).collect();
    let mut open: Vec<usize> = Vec::new();
    for (j, t) in tokens.iter().enumerate() {
        match t.token {
            Token::LParen => open.push(j),
            Token::RParen => {
                if let Some(o) = open.pop() {
                    ends[o] = j + 1;
                }
            }
            _ => {}
        }
    }
    for o in open {
        ends[o] = n;
    }
    ends
}

fn kind(s: &Scan) -> StatementKind {
    let mut i = 0;
    if s.kw(0, Keyword::EXECUTE) {
        if s.kw(1, Keyword::STATEMENT) {
            return StatementKind::StatementSet;
        }
        i = 1;
    }
    if s.kw(0, Keyword::BEGIN) && s.kw(1, Keyword::STATEMENT) {
        return StatementKind::StatementSet;
    }
    match s
        .word(i)
        .filter(|w| w.quote_style.is_none())
        .map(|w| w.keyword)
    {
        Some(Keyword::INSERT) => StatementKind::Insert,
        Some(Keyword::SELECT | Keyword::WITH | Keyword::VALUES) => StatementKind::Select,
        Some(Keyword::SET | Keyword::RESET) => StatementKind::Set,
        Some(Keyword::USE) => StatementKind::Use,
        Some(Keyword::ALTER) => StatementKind::Alter,
        Some(Keyword::DROP) => StatementKind::Drop,
        // `REPLACE TABLE t … AS query` (Flink 1.18+ RTAS).
        Some(Keyword::REPLACE) if s.kw(i + 1, Keyword::TABLE) => StatementKind::Ctas,
        Some(Keyword::CREATE) => {
            let mut j = i + 1;
            let mut materialized = false;
            while s.kw(j, Keyword::OR)
                || s.kw(j, Keyword::REPLACE)
                || s.kw(j, Keyword::ALTER)
                || s.kw(j, Keyword::TEMPORARY)
                || s.is(j, "MATERIALIZED")
            {
                materialized |= s.is(j, "MATERIALIZED");
                j += 1;
            }
            if s.kw(j, Keyword::VIEW) {
                StatementKind::CreateView
            } else if s.kw(j, Keyword::FUNCTION) {
                StatementKind::CreateFunction
            } else if materialized {
                StatementKind::CreateMaterializedTable
            } else if s.kw(j, Keyword::TABLE) {
                let depths = depths(s.t);
                let ctas = (j..s.t.len()).any(|k| {
                    depths[k] == 0
                        && s.kw(k, Keyword::AS)
                        && (s.kw(k + 1, Keyword::SELECT)
                            || s.kw(k + 1, Keyword::WITH)
                            || s.tok(k + 1) == Some(&Token::LParen))
                });
                if ctas {
                    StatementKind::Ctas
                } else {
                    StatementKind::CreateTable
                }
            } else {
                StatementKind::Other
            }
        }
        _ => StatementKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::FlinkDialect;
    use crate::sql::split::split;

    fn run(sql: &str) -> (Vec<String>, Vec<String>, Facts) {
        let file = split(&FlinkDialect, sql);
        let f = extract(&file.tokens);
        let sinks = f.sinks.iter().map(|r| r.name.dotted()).collect();
        let mut sources: Vec<String> = f.sources.iter().map(|r| r.name.dotted()).collect();
        sources.sort();
        sources.dedup();
        (sinks, sources, f)
    }

    #[test]
    fn ctes_aliases_and_functions() {
        let (sinks, sources, f) = run(
            "INSERT INTO out WITH a AS (SELECT * FROM t1), b (x) AS (SELECT x FROM a JOIN t2 ON TRUE) \
             SELECT EXTRACT(YEAR FROM ts), TRIM(BOTH ' ' FROM n) FROM b, LATERAL TABLE(f(x)) AS l(y) \
             WHERE p IS DISTINCT FROM q",
        );
        assert_eq!(sinks, vec!["out"]);
        assert_eq!(sources, vec!["t1", "t2"]);
        assert_eq!(f.kind, Some(StatementKind::Insert));
        assert!(f.reasons.contains(&StateReason::RegularJoin));
    }

    #[test]
    fn tvf_table_argument_and_unnest() {
        let (_, sources, _) = run(
            "INSERT INTO o SELECT * FROM TABLE(TUMBLE(TABLE `c`.`d`.clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) \
             CROSS JOIN UNNEST(arr) AS u(v)",
        );
        assert_eq!(sources, vec!["c.d.clicks"]);
    }

    #[test]
    fn comma_lists_and_temporal() {
        let (_, sources, f) = run(
            "INSERT INTO o SELECT * FROM a, b x, c.d WHERE 1 = 1 UNION SELECT * FROM e JOIN r FOR SYSTEM_TIME AS OF e.ts AS rr ON TRUE",
        );
        assert_eq!(sources, vec!["a", "b", "c.d", "e", "r"]);
        assert_eq!(f.temporal, vec![TableName::new(["r"])]);
        assert!(f.reasons.contains(&StateReason::Union));
        assert!(f.reasons.contains(&StateReason::TemporalJoin));
    }

    #[test]
    fn create_table_like_and_metadata_from() {
        let (sinks, sources, f) = run(
            "CREATE TABLE x (ts TIMESTAMP(3) METADATA FROM 'timestamp', WATERMARK FOR ts AS ts) WITH ('a' = 'b') LIKE base (EXCLUDING ALL)",
        );
        assert_eq!(sinks, vec!["x"]);
        assert_eq!(sources, vec!["base"]);
        assert_eq!(f.like_sources, vec![TableName::new(["base"])]);
        assert_eq!(f.kind, Some(StatementKind::CreateTable));
    }

    #[test]
    fn a_created_table_is_only_a_sink_in_every_create_form() {
        // #22: `CREATE OR REPLACE TABLE cat.db.t` listed `cat.db.t` as a source too.
        for sql in [
            "CREATE OR REPLACE TABLE cat.db.t (id INT) WITH ('a' = 'b',, 'c' = 'd')",
            "CREATE TABLE cat.db.t (id INT) WITH ('a' = 'b',, 'c' = 'd')",
            "CREATE TEMPORARY TABLE cat.db.t (id INT) WITH ('a' = 'b',, 'c' = 'd')",
            "CREATE OR REPLACE TEMPORARY TABLE cat.db.t (id INT) WITH ('a' = 'b',, 'c' = 'd')",
            "CREATE TABLE IF NOT EXISTS cat.db.t (id INT) WITH ('a' = 'b',, 'c' = 'd')",
        ] {
            let (sinks, sources, f) = run(sql);
            assert_eq!(sinks, vec!["cat.db.t"], "{sql}");
            assert!(sources.is_empty(), "{sql}: {sources:?}");
            assert_eq!(f.kind, Some(StatementKind::CreateTable), "{sql}");
            assert!(!f.writes_query, "{sql}");
        }
        let (sinks, sources, f) = run("REPLACE TABLE cat.db.t AS SELECT id,, x FROM cat.db.s");
        assert_eq!(sinks, vec!["cat.db.t"]);
        assert_eq!(sources, vec!["cat.db.s"]);
        assert_eq!(f.kind, Some(StatementKind::Ctas));
    }

    #[test]
    fn a_group_by_without_select_is_still_a_stateful_query() {
        let (sinks, sources, f) = run("INSERT INTO f SELEC id, COUNT(*) FROM s GROUP BY id");
        assert_eq!(sinks, vec!["f"]);
        assert_eq!(sources, vec!["s"]);
        assert!(f.writes_query);
        assert_eq!(
            crate::sql::state::classify(f.writes_query, &f.reasons),
            crate::sql::Statefulness::Stateful
        );
    }

    #[test]
    fn garbage_does_not_panic() {
        for sql in [
            "FROM",
            "JOIN",
            "INSERT INTO",
            "CREATE TABLE IF",
            "((((",
            "))) FROM ,",
            "WITH a AS (",
            "TABLE",
        ] {
            let _ = run(sql);
        }
    }
}
