//! Plain data produced by the SQL front end: what one file (or one statement) creates, writes and reads,
//! and whether its queries keep state.
//!
//! Everything here is serialisable and free of parser types, so the inventory, graph, plan and versioning
//! layers depend on these shapes only, never on `sqlparser`'s AST.

use serde::{Deserialize, Serialize};

/// A position in a SQL file: 1-based line and column (columns count characters, as editors do).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// A source span `[start, end)` in a SQL file, by line/column.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub struct SourceSpan {
    /// First character.
    pub start: Location,
    /// Just after the last character (exclusive).
    pub end: Location,
}

/// A relation name as written, with quotes removed and its 1–3 parts kept separate
/// (`catalog.database.table`; on Confluent Cloud `environment.cluster.topic`).
///
/// Flink matches identifiers case-sensitively, so parts keep their case. A quoted part may itself contain
/// `.`, which is why the parts are stored as a vector and not as one dotted string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TableName {
    /// The parts, unquoted, outermost first.
    pub parts: Vec<String>,
}

impl TableName {
    /// Builds a name from its parts (already unquoted).
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(parts: I) -> Self {
        TableName {
            parts: parts.into_iter().map(Into::into).collect(),
        }
    }

    /// The last part: the table (or topic) name without catalog and database.
    pub fn table(&self) -> &str {
        self.parts.last().map(String::as_str).unwrap_or("")
    }

    /// The parts joined with `.`, as the corpus labels and `sql refs` print names (`cat.db.t`).
    /// Not a key: `` `x.y` `` and `` `x`.`y` `` print alike; compare names with [`TableName::key`].
    pub fn dotted(&self) -> String {
        self.parts.join(".")
    }

    /// The name as one string that tells every name apart, for keys and comparisons: the parts
    /// joined with `.`, a part written back in backquotes (`` ` `` doubled inside, as Flink SQL
    /// escapes it) when it is empty or holds a `.` or a `` ` `` — so `` `x.y` `` (one identifier)
    /// keys as `` `x.y` `` and `` `x`.`y` `` (two) as `x.y`. Parts compare exactly, as Flink compares
    /// identifiers (case-sensitive; backquotes are not part of the identifier: `` `t` `` is `t`).
    /// [`TableName::from_key`] reads it back.
    pub fn key(&self) -> String {
        self.parts
            .iter()
            .map(|p| key_part(p))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The name a [`TableName::key`] was made from (`from_key(&n.key()) == n` for every name with at
    /// least one part). A string that is not such a key (an unclosed backquote) is read as far as it
    /// goes, the rest as one part.
    pub fn from_key(key: &str) -> TableName {
        let mut parts = Vec::new();
        let mut cur = String::new();
        let mut chars = key.chars().peekable();
        let mut quoted = false;
        let mut was_quoted = false;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '`') if chars.peek() == Some(&'`') => {
                    chars.next();
                    cur.push('`');
                }
                (true, '`') => quoted = false,
                (true, c) => cur.push(c),
                (false, '`') if cur.is_empty() && !was_quoted => {
                    quoted = true;
                    was_quoted = true;
                }
                (false, '.') => {
                    parts.push(std::mem::take(&mut cur));
                    was_quoted = false;
                }
                (false, c) => cur.push(c),
            }
        }
        parts.push(cur);
        TableName { parts }
    }
}

/// One part of a [`TableName::key`]: bare, or backquoted when it is empty or holds `.` or `` ` ``.
pub fn key_part(part: &str) -> String {
    if part.is_empty() || part.contains('.') || part.contains('`') {
        format!("`{}`", part.replace('`', "``"))
    } else {
        part.to_string()
    }
}

impl std::fmt::Display for TableName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.dotted())
    }
}

/// One occurrence of a relation name in a table position of a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRef {
    /// The name as written (unquoted parts).
    pub name: TableName,
    /// Where the name is written (the whole possibly-qualified name). `None` when the parser gave no span.
    pub span: Option<SourceSpan>,
}

/// The kind of a top-level statement, in the vocabulary of `flinkpipe sql refs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// `CREATE [TEMPORARY] TABLE` without query (also `… LIKE …`).
    CreateTable,
    /// `CREATE [OR REPLACE] TABLE … AS SELECT`.
    Ctas,
    /// `CREATE [OR ALTER] MATERIALIZED TABLE`.
    CreateMaterializedTable,
    /// `CREATE [TEMPORARY] VIEW`.
    CreateView,
    /// `INSERT INTO|OVERWRITE` (also `EXECUTE INSERT`).
    Insert,
    /// `EXECUTE STATEMENT SET BEGIN … END` or `BEGIN STATEMENT SET; … END`.
    StatementSet,
    /// A query alone (writes nothing).
    Select,
    /// `SET` / `RESET`.
    Set,
    /// `ALTER …`.
    Alter,
    /// `DROP …`.
    Drop,
    /// `USE [CATALOG] …`, `USE MODULES …`.
    Use,
    /// `CREATE [TEMPORARY [SYSTEM]] FUNCTION`.
    CreateFunction,
    /// Anything else (`CREATE CATALOG/DATABASE/MODEL`, `EXPLAIN`, `SHOW`, unparsable fragments, …).
    Other,
}

impl StatementKind {
    /// Whether the statement creates a relation: CREATE TABLE, CTAS, CREATE MATERIALIZED TABLE, CREATE VIEW.
    pub fn creates_relation(self) -> bool {
        matches!(
            self,
            StatementKind::CreateTable
                | StatementKind::Ctas
                | StatementKind::CreateMaterializedTable
                | StatementKind::CreateView
        )
    }
}

/// Whether a query keeps keyed state across events (definitions:
/// `docs/src/concepts/statefulness.md`; Flink's stateful operators:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/overview/#stateful-operators>).
///
/// Ordered `None < Stateless < Unknown < Stateful`, so that the maximum over a file's (or a table's)
/// statements is the answer for the whole: one stateful query makes the whole stateful, and one query the
/// front end could not read makes a stateless answer unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statefulness {
    /// No query writes to a table (DDL only, SELECT only, INSERT … VALUES only).
    None,
    /// Queries that write, none of which keeps state (projection, filter, UNION ALL, UNNEST, LATERAL TABLE).
    Stateless,
    /// A query writes, but the parser could not read it and the token-level fallback found no stateful
    /// operator in it: it may still hold state (the part that could not be read may aggregate or join).
    /// The front end itself reports its keyword-level estimate for such a statement (with
    /// [`StatementInfo::fallback`] set and a warning); project analysis, where deploy decisions are made,
    /// records the table as `Unknown`, and deploy decisions treat it as stateful
    /// ([`Statefulness::may_hold_state`]).
    Unknown,
    /// At least one writing query keeps state.
    Stateful,
}

/// How text output shows [`Statefulness::Unknown`] wherever a decision rests on it (plans, `sql
/// refs`): the fallback could not tell, and every decision treats it as stateful.
pub const UNKNOWN_STATE_TEXT: &str = "unknown (treated as stateful)";

impl Statefulness {
    /// Whether a running job of this query may hold state that a restart would lose: `Stateful`, and
    /// `Unknown` (the conservative answer where the SQL could not be read).
    pub fn may_hold_state(self) -> bool {
        matches!(self, Statefulness::Stateful | Statefulness::Unknown)
    }
}

/// Why a query is stateful: one entry per operator found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateReason {
    /// `GROUP BY` (not over a window).
    GroupAggregate,
    /// An aggregate function without `GROUP BY` (`SELECT COUNT(*) FROM t`).
    GlobalAggregate,
    /// `SELECT DISTINCT`.
    Distinct,
    /// A join of two streams (explicit or comma), not temporal.
    RegularJoin,
    /// A join whose condition bounds time with an `INTERVAL`.
    IntervalJoin,
    /// `FOR SYSTEM_TIME AS OF`: event-time temporal join or processing-time lookup join; the file alone
    /// cannot tell them apart (project analysis may, knowing both DDLs).
    TemporalJoin,
    /// A subquery in an expression: `IN`/`EXISTS` (semi/anti join) or scalar.
    SubqueryJoin,
    /// `GROUP BY` over a window TVF (or the legacy `GROUP BY TUMBLE(…)`).
    WindowAggregate,
    /// `OVER` aggregation, `LAG`/`LEAD`.
    Over,
    /// `ROW_NUMBER()`/`RANK()` … `OVER` (deduplication, Top-N).
    TopN,
    /// `UNION`, `INTERSECT`, `EXCEPT` without `ALL`.
    Union,
    /// `MATCH_RECOGNIZE`.
    MatchRecognize,
    /// `ORDER BY` in a writing query on a stream: a streaming query may only sort on a time attribute
    /// (Flink's temporal sort buffers rows until the watermark passes them), and `ORDER BY … LIMIT n` is a
    /// streaming Top-N (Flink SQL reference, Queries › ORDER BY clause and LIMIT clause; Top-N).
    Sort,
    /// The query reads a view whose query keeps state (the planner inlines the view, so its
    /// operators run in this statement's job); set by the project analysis, which sees the view.
    View,
    /// The query reads an updating source: an `upsert-kafka` table, or one whose `'changelog.mode'`
    /// is `upsert` or `retract` (on Confluent Cloud also a table with a primary key and no mode: its
    /// default is `upsert`). Flink's planner puts a `ChangelogNormalize` after an upsert source, which
    /// keeps the last row of each key (Flink "Dynamic Tables › Table to Stream Conversion", changelog
    /// modes); set by the project analysis, which sees the source's DDL.
    UpdatingSource,
}

/// A column of a created table (physical, computed or metadata).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Column name, unquoted.
    pub name: String,
    /// Data type as written (normalised whitespace), e.g. `DECIMAL(10, 2)`; for a computed column the
    /// expression after `AS`.
    pub data_type: String,
    /// `false` for `NOT NULL` and primary key columns.
    pub nullable: bool,
    /// Computed (`c AS expr`) or `METADATA … VIRTUAL`: not writable by an INSERT.
    pub computed: bool,
    /// `METADATA [FROM '…'] [VIRTUAL]`.
    pub metadata: bool,
}

/// What one top-level statement does. A statement set is one statement with several sinks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementInfo {
    /// What the statement is.
    pub kind: StatementKind,
    /// 1-based line of the statement's first token.
    pub line: usize,
    /// The statement's own text, trimmed, without the final `;`. Empty in a lean analysis
    /// ([`FileAnalysis::strip_to_references`], [`deserialize_lean`]).
    #[serde(deserialize_with = "lean_or::<_, String>")]
    pub text: String,
    /// Relations created or written, in order of appearance (may repeat).
    pub sinks: Vec<TableRef>,
    /// Relations read, in order of appearance (may repeat), CTE names and aliases excluded.
    pub sources: Vec<TableRef>,
    /// Bases of `CREATE TABLE x LIKE y` (also listed in `sources`): a schema edge, no data flow.
    pub like_sources: Vec<TableName>,
    /// Right sides of `FOR SYSTEM_TIME AS OF` joins (also in `sources`), for project-level lookup-join analysis.
    pub temporal_join_sources: Vec<TableName>,
    /// `TEMPORARY` table or view: file-local.
    pub temporary: bool,
    /// `None` when the statement writes no query result (only a written
    /// result's state counts, docs/src/concepts/statefulness.md); else by `state_reasons`.
    pub statefulness: Statefulness,
    /// Stateful operators found, in order of first appearance, without repeats.
    pub state_reasons: Vec<StateReason>,
    /// Joins by kind, for shift_left's `complexity` block.
    pub joins: JoinCounts,
    /// For CREATE TABLE / CTAS / materialized table: declared columns, primary key and WITH options.
    /// Empty in a lean analysis ([`FileAnalysis::strip_to_references`], [`deserialize_lean`]).
    #[serde(deserialize_with = "lean_or::<_, Vec<Column>>")]
    pub columns: Vec<Column>,
    /// `PRIMARY KEY (…) NOT ENFORCED` columns (table or column constraint).
    pub primary_key: Vec<String>,
    /// `WITH ('k' = 'v', …)` options, keys and values unquoted, in order.
    pub with_options: Vec<(String, String)>,
    /// `DISTRIBUTED BY …` clause as written, if any.
    pub distribution: Option<String>,
    /// `true` when the statement was handled by the token-level fallback instead of the parser.
    pub fallback: bool,
    /// For `SET`, `RESET` and `USE`: the session change the statement makes (added for deploy properties
    /// and for resolving the names of later statements; `None` for other statements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionChange>,
    /// For a statement set: one entry per `INSERT` member, in order, with that member's own sink and
    /// sources (`sinks`/`sources` above are the union over the members). Empty for other statements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<StatementMember>,
}

impl StatementInfo {
    /// Whether this statement's statefulness is the token-level fallback's keyword estimate for a query
    /// it could not read: the parser rejected it and it writes a query's result (an INSERT, statement
    /// set, CTAS, view or materialized table, or any statement where the fallback found a sink but no
    /// plain `CREATE TABLE`). A `CREATE TABLE` without query holds no state, so the fallback can tell.
    pub fn state_estimated(&self) -> bool {
        self.fallback
            && self.kind != StatementKind::CreateTable
            && (matches!(
                self.kind,
                StatementKind::Insert
                    | StatementKind::StatementSet
                    | StatementKind::Ctas
                    | StatementKind::CreateView
                    | StatementKind::CreateMaterializedTable
            ) || !self.sinks.is_empty())
    }
}

/// One `INSERT` member of a statement set: what it writes and what it reads (CTE names excluded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementMember {
    /// The relation the member writes.
    pub sink: TableRef,
    /// Relations the member reads, in order of appearance (may repeat).
    pub sources: Vec<TableRef>,
    /// 1-based line of the member's first token.
    pub line: usize,
}

/// A change to the session made by `SET`, `RESET` or `USE`; the statements after it in the file run with
/// it (Flink SQL client and gateway semantics). Other statements keep names as written: resolving them
/// against `USE` is project-level work (a `USE` changes how later unqualified and partly qualified
/// names resolve:
/// <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/use/>). On
/// Confluent Cloud, `SET` values become statement properties (`spec.properties`), e.g.
/// `client.statement-name`, `sql.state-ttl`
/// (<https://docs.confluent.io/cloud/current/flink/reference/statements/set.html>).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SessionChange {
    /// `SET 'key' = 'value'` or `SET key = value` (quotes removed).
    Set {
        /// Property key, e.g. `sql.state-ttl`.
        key: String,
        /// Property value, e.g. `12 hours`.
        value: String,
    },
    /// `RESET 'key'`, or `RESET` alone (`key: None`: every property).
    Reset {
        /// Property key, if one is named.
        key: Option<String>,
    },
    /// `USE CATALOG c`.
    UseCatalog {
        /// The catalog (Confluent: environment) made current.
        catalog: String,
    },
    /// `USE db` or `USE c.db`.
    UseDatabase {
        /// `[catalog, database]` or `[database]` as written (Confluent: cluster).
        database: TableName,
    },
}

/// Join counts as shift_left's `complexity` block reports them: explicit joins by their JOIN keyword,
/// whatever their right side (tables, temporal/lookup joins, `LATERAL TABLE`); `CROSS JOIN` and comma joins
/// excluded. Whether a join keeps state is told by [`StateReason`], not by these counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JoinCounts {
    /// `JOIN` without a kind keyword (and other kinds not listed below).
    pub regular: usize,
    /// `LEFT [OUTER] JOIN`.
    pub left: usize,
    /// `RIGHT [OUTER] JOIN`.
    pub right: usize,
    /// `INNER JOIN`.
    pub inner: usize,
    /// `FULL [OUTER] JOIN`.
    pub outer: usize,
}

/// A problem found while reading SQL: the statement could not be parsed (and the fallback was used), the
/// text breaks a documented limit, or it was read but is not what Flink accepts as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqlWarning {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// The construct or parser message, e.g. `Expected: ), found: WATERMARK`.
    pub message: String,
    /// What kind of problem it is (decides the diagnostic code and whether the answer can be trusted).
    #[serde(default)]
    pub kind: WarningKind,
}

/// The kinds of [`SqlWarning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// The parser rejected the statement: its references were read by the token-level fallback.
    #[default]
    Fallback,
    /// The tokenizer stopped (unterminated string, comment or quoted identifier): the text after it is not
    /// analysed. An error for the project: a statement after an unclosed `/*` would silently not be
    /// deployed (#29).
    Tokenizer,
    /// A `;` is missing between two statements: each was read on its own, as Flink would not.
    MissingSemicolon,
    /// The statement was read exactly, but Flink does not accept it as written (e.g. `WITH … INSERT`).
    Syntax,
    /// A template placeholder (`${name}`, `{{ name }}`) that no variable resolved: names containing it are
    /// kept whole, as written.
    Placeholder,
    /// The text exceeds a documented limit ([`crate::sql::limits`]): the file or statement is not (fully)
    /// analysed. An error: the file's references are not known.
    Limit,
}

impl WarningKind {
    /// The stable diagnostic code of the kind (`sql-fallback`, `sql-limit`, …).
    pub fn code(self) -> &'static str {
        match self {
            WarningKind::Fallback => "sql-fallback",
            WarningKind::Tokenizer => "sql-tokenizer",
            WarningKind::MissingSemicolon => "sql-missing-semicolon",
            WarningKind::Syntax => "sql-syntax",
            WarningKind::Placeholder => "sql-placeholder",
            WarningKind::Limit => "sql-limit",
        }
    }

    /// Whether the answer for the file cannot be used at all (its references, or the statements
    /// after a tokenizer error, are unknown): a limit or a tokenizer error.
    pub fn is_error(self) -> bool {
        matches!(self, WarningKind::Limit | WarningKind::Tokenizer)
    }
}

/// The analysis of one SQL file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FileAnalysis {
    /// Top-level statements in file order (a statement set is one).
    pub statements: Vec<StatementInfo>,
    /// Tokenizer and parser problems (each parse failure also sets [`StatementInfo::fallback`]).
    pub warnings: Vec<SqlWarning>,
}

impl FileAnalysis {
    /// Makes the analysis *lean*: every statement's [`StatementInfo::text`] and
    /// [`StatementInfo::columns`] are emptied (and their memory freed); everything else stays. A lean
    /// analysis holds what the inventory and the graph read (kinds, sinks, sources, statefulness, keys,
    /// options, members), about a fifth of a whole one: commands that only build the inventory keep
    /// 100,000 tables' analyses in a fraction of the memory.
    pub fn strip_to_references(&mut self) {
        for s in &mut self.statements {
            s.text = String::new();
            s.columns = Vec::new();
        }
    }
}

thread_local! {
    /// Set while [`deserialize_lean`] runs on this thread.
    static LEAN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` (a deserialisation of [`FileAnalysis`] values) so that the analyses come out lean, as
/// [`FileAnalysis::strip_to_references`] leaves them: statement texts and column lists are skipped
/// in the input without being built, which is most of a stored analysis's bytes and allocations.
pub fn deserialize_lean<T>(f: impl FnOnce() -> T) -> T {
    super::with_flag(&LEAN, true, f)
}

/// A field that [`deserialize_lean`] skips: its value is read past (`IgnoredAny`) and the default
/// returned.
fn lean_or<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    if LEAN.with(std::cell::Cell::get) {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(T::default())
    } else {
        T::deserialize(d)
    }
}

#[cfg(test)]
mod key_tests {
    use super::TableName;
    use std::collections::HashMap;

    /// Every string of `alphabet` up to `len` characters.
    fn strings(alphabet: &[char], len: usize) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..len {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            out.extend(last.iter().cloned());
        }
        out
    }

    /// Issue #41 item 13, exhaustively over a small alphabet that holds the troublesome characters
    /// (`.`, `` ` ``): two names have the same key only when they are the same name (`` `x.y` `` is not
    /// `` `x`.`y` ``), and every key reads back as its name.
    #[test]
    fn keys_tell_every_name_apart_and_read_back() {
        let parts = strings(&['a', '.', '`'], 3);
        let mut names: Vec<TableName> = Vec::new();
        for a in &parts {
            names.push(TableName::new([a.clone()]));
            for b in &parts {
                names.push(TableName::new([a.clone(), b.clone()]));
                for c in &parts {
                    names.push(TableName::new([a.clone(), b.clone(), c.clone()]));
                }
            }
        }
        let mut seen: HashMap<String, &TableName> = HashMap::new();
        for n in &names {
            let k = n.key();
            if let Some(other) = seen.insert(k.clone(), n) {
                panic!("{n:?} and {other:?} share the key {k}");
            }
            assert_eq!(&TableName::from_key(&k), n, "{k}");
        }
        assert_eq!(seen.len(), 40 + 40 * 40 + 40 * 40 * 40);
        assert_eq!(TableName::new(["x.y"]).key(), "`x.y`");
        assert_eq!(TableName::new(["x", "y"]).key(), "x.y");
        assert_eq!(TableName::new(["a`b"]).key(), "`a``b`");
        assert_eq!(TableName::new(["cat", "db", "t"]).key(), "cat.db.t");
    }
}
