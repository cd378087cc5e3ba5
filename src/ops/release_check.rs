//! `pipeline release-check`: before cut-over, compares what each green table of the open blue-green
//! release (`pipelines/blue_green.json`) computed with what its blue table computed.
//!
//! Each side is read as `table preview` reads a table ([`super::query::snapshot_as`]: bounded at the
//! table's current end, folded by the green table's primary key), then [`compare`] gives, per
//! blue → green pair: row counts, keys only in blue, keys only in green, keys whose values differ
//! (up to `samples` rows each, side by side), per-column null counts and, for numeric columns,
//! sum/min/max, the newest value of the first timestamp column, how far green's writer is behind
//! blue's writer in the positions each has processed ([`Positions`]: the sink watermark, the source
//! backlog), and a [`Verdict`]. A pair that cannot be read is reported `unreadable` with the reason,
//! and the other pairs are still checked. It also lists who still reads each blue table
//! ([`super::readers`]: statements not the project's, Kafka consumer groups on its topic), which the
//! verdict leaves alone: they are what to move before `pipeline decommission`.

use super::query;
use super::{Context, OpsError};
use crate::results::{Column, Row};
use crate::target::read::QueryResult;
use crate::versioning::record::BlueGreenRecord;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What to check.
#[derive(Debug, Clone)]
pub struct ReleaseCheckRequest {
    pub pipelines: PathBuf,
    /// `BLUE=GREEN` pairs, or names (blue or green) of the open release's tables to restrict to;
    /// empty: every table of the open release.
    pub tables: Vec<String>,
    /// Declared differences: `table` (any difference of that table) or `table.column` (values of
    /// that column; a key column also declares keys only on one side). Either side's name.
    pub expect_diff: Vec<String>,
    /// Green is `catching-up` when its writer's watermark is more than this many seconds behind
    /// blue's writer's (or, without watermarks, when it has more records left to read).
    pub max_lag_seconds: f64,
    /// Sample rows kept per kind of difference.
    pub samples: usize,
    pub read: query::ReadOptions,
    pub allow_unknown: bool,
}

/// The verdict of one table, or of the release (the worst of its tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Same rows on both sides.
    Same,
    /// Differences only in declared columns or keys (`--expect-diff`).
    ExpectedDifference,
    /// Green's writer is behind blue's in the positions it has processed (beyond `--max-lag`):
    /// differences are not judged yet.
    CatchingUp,
    /// One side could not be read (the reason is in [`TableCheck::unreadable`]): nothing is known.
    Unreadable,
    /// Undeclared differences.
    Differs,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::ExpectedDifference => "expected-difference",
            Verdict::CatchingUp => "catching-up",
            Verdict::Unreadable => "unreadable",
            Verdict::Differs => "differs",
        }
    }

    /// Whether the release may be cut over on this verdict.
    pub fn passes(self) -> bool {
        matches!(self, Verdict::Same | Verdict::ExpectedDifference)
    }
}

/// Null count and numeric aggregates of one column on one side.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SideStats {
    pub nulls: usize,
    /// Numeric columns only (`None` otherwise, or without a non-null value).
    pub sum: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// One column of a pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnCheck {
    pub column: String,
    /// `None`: the column is missing on that side.
    pub blue: Option<SideStats>,
    pub green: Option<SideStats>,
    /// Rows (matched by key) whose value of this column differs.
    pub differing_rows: usize,
}

/// A key present on both sides with different values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffSample {
    pub blue: SampleRow,
    pub green: SampleRow,
}

/// A sample row of one side: its values (a [`Row`] through `Deref`), serialised by its columns'
/// types, so a DECIMAL is a JSON number with its exact digits and scale as in `table preview`
/// ([`crate::results::value::JsonCell`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRow {
    pub values: Row,
    /// The column types of the side, in column order.
    pub types: Vec<String>,
}

impl std::ops::Deref for SampleRow {
    type Target = Row;
    fn deref(&self) -> &Row {
        &self.values
    }
}

impl Serialize for SampleRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.values.len()))?;
        for (i, v) in self.values.iter().enumerate() {
            seq.serialize_element(&crate::results::value::JsonCell {
                value: v,
                type_name: self.types.get(i).map_or("UNKNOWN", String::as_str),
            })?;
        }
        seq.end()
    }
}

/// The comparison of one blue → green pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableCheck {
    pub blue_table: String,
    pub green_table: String,
    pub verdict: Verdict,
    /// How rows are matched: the key columns, or `None` for whole rows.
    pub key: Option<Vec<String>>,
    pub blue_rows: usize,
    pub green_rows: usize,
    /// Whether each read reached the end of its bounded result (else it was cut by a limit).
    pub blue_complete: bool,
    pub green_complete: bool,
    pub only_in_blue: usize,
    pub only_in_green: usize,
    pub values_differ: usize,
    pub only_in_blue_samples: Vec<SampleRow>,
    pub only_in_green_samples: Vec<SampleRow>,
    pub values_differ_samples: Vec<DiffSample>,
    pub columns: Vec<ColumnCheck>,
    /// The first TIMESTAMP / TIMESTAMP_LTZ column, whose newest value each side shows: for the
    /// reader only (a filter in green may drop the newest row; freshness is [`Self::positions`]).
    pub time_column: Option<String>,
    pub blue_newest: Option<String>,
    pub green_newest: Option<String>,
    /// Seconds green's writer's watermark is behind blue's writer's (negative: ahead); `None` when
    /// either watermark is unknown.
    pub lag_seconds: Option<f64>,
    /// The positions of both writers, when the target reported them.
    pub positions: Option<Positions>,
    /// The differences that were not declared (columns, `keys`, `columns:` for schema).
    pub undeclared: Vec<String>,
    /// Why the pair could not be read (verdict `unreadable`): the target's message.
    pub unreadable: Option<String>,
    /// The green table's state on the target's materialized-tables API, when it is a materialized
    /// table there (`RUNNING, version 2`): a query not running its active version is not judged
    /// on its rows (verdict at least `catching-up` while being created or evolved, `unreadable`
    /// when failed or stopped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub green_materialized: Option<String>,
}

/// How far each side's writer has got, from its runtime metrics ([`crate::target::metrics`]):
/// the event-time watermark at its sinks and the records still waiting in its sources. Green is
/// behind when its watermark is more than `--max-lag` seconds behind blue's; when either side has
/// no watermark, when it has more records left to read than blue (and some).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Positions {
    pub blue_statement: String,
    pub green_statement: String,
    /// Sink watermarks, milliseconds since the epoch.
    pub blue_watermark_ms: Option<i64>,
    pub green_watermark_ms: Option<i64>,
    /// Records waiting in each writer's source topics.
    pub blue_pending_records: Option<u64>,
    pub green_pending_records: Option<u64>,
}

impl Positions {
    /// Seconds green's watermark is behind blue's (negative: ahead), when both are known.
    pub fn lag_seconds(&self) -> Option<f64> {
        match (self.blue_watermark_ms, self.green_watermark_ms) {
            (Some(b), Some(g)) if b >= 0 && g >= 0 => Some((b - g) as f64 / 1000.0),
            _ => None,
        }
    }

    /// Whether green is behind blue by more than `max_lag_seconds` (watermarks), or, without both
    /// watermarks, has more records left to read than blue.
    pub fn green_behind(&self, max_lag_seconds: f64) -> bool {
        match self.lag_seconds() {
            Some(lag) => lag > max_lag_seconds,
            None => match (self.blue_pending_records, self.green_pending_records) {
                (Some(b), Some(g)) => g > 0 && g > b,
                (None, Some(g)) => g > 0,
                _ => false,
            },
        }
    }
}

/// The whole check.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseCheck {
    pub statement_prefix: Option<String>,
    pub verdict: Verdict,
    pub tables: Vec<TableCheck>,
    /// Why the writers' positions are unknown (freshness not judged), when the target could not tell.
    pub positions_note: Option<String>,
    /// Who still reads the blue tables checked (not part of the verdict).
    pub readers: super::readers::ReadersReport,
}

impl ReleaseCheck {
    pub fn passes(&self) -> bool {
        self.verdict.passes()
    }
}

/// Options of [`compare`].
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// Declared columns of this pair (`*` for the whole table: a lag is then no reason to wait).
    pub expected: BTreeSet<String>,
    pub max_lag_seconds: f64,
    pub samples: usize,
    /// The writers' positions, when known.
    pub positions: Option<Positions>,
}

/// Runs the check: reads both sides of every pair, compares them.
///
/// Errors: no open release and no `BLUE=GREEN` pair, a name not in the release, a green table not
/// in the project, a target error (as `table preview`).
pub fn release_check(ctx: &Context, req: &ReleaseCheckRequest) -> Result<ReleaseCheck, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let naming = crate::plan::StatementNaming::from_config(&cfg);
    let record = BlueGreenRecord::read(&req.pipelines)
        .map_err(|e| OpsError::Usage(format!("release-check: {e}")))?;
    let release = record.open_release(&naming.prefix);
    let mut pairs: Vec<(String, String)> = Vec::new();
    let release_pairs: Vec<(String, String)> = release
        .map(|r| {
            r.tables
                .iter()
                .map(|t| (t.blue_table_name.clone(), t.green_table_name.clone()))
                .collect()
        })
        .unwrap_or_default();
    for given in &req.tables {
        if let Some((b, g)) = given.split_once('=') {
            pairs.push((b.trim().to_string(), g.trim().to_string()));
        } else if let Some(p) = release_pairs
            .iter()
            .find(|(b, g)| b.eq_ignore_ascii_case(given) || g.eq_ignore_ascii_case(given))
        {
            pairs.push(p.clone());
        } else {
            return Err(OpsError::Usage(format!(
                "--table-name {given}: not a table of the open release in {} (give BLUE=GREEN)",
                BlueGreenRecord::path(&req.pipelines).display()
            )));
        }
    }
    if req.tables.is_empty() {
        pairs = release_pairs;
    }
    if pairs.is_empty() {
        return Err(OpsError::Usage(format!(
            "no open blue-green release in {} and no --table-name BLUE=GREEN: nothing to check",
            BlueGreenRecord::path(&req.pipelines).display()
        )));
    }
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "no release check: fix the errors above",
    )?;
    let c = super::target::connect(&cfg, Some(&project))?;
    let rt = super::target::runtime()?;
    let live = rt.block_on(super::target::live_statements(&c))?;
    let writers: Vec<(String, String)> = pairs
        .iter()
        .map(|(b, g)| writer_statements(&project, &naming, release, b, g))
        .collect();
    let wanted: BTreeSet<String> = writers
        .iter()
        .flat_map(|(b, g)| [b.clone(), g.clone()])
        .filter(|n| !n.is_empty())
        .collect();
    let (metrics, positions_note) = match super::lag::collect(&cfg, &c, &rt, &live, &wanted, 10) {
        Ok((m, _)) => (m, None),
        Err(e) => (
            BTreeMap::new(),
            Some(format!(
                "the writers' positions could not be read ({e}): freshness is not judged"
            )),
        ),
    };
    let mut tables = Vec::new();
    for ((blue, green), (blue_st, green_st)) in pairs.iter().zip(&writers) {
        let positions =
            (metrics.contains_key(blue_st) || metrics.contains_key(green_st)).then(|| {
                let (b, g) = (metrics.get(blue_st), metrics.get(green_st));
                Positions {
                    blue_statement: blue_st.clone(),
                    green_statement: green_st.clone(),
                    blue_watermark_ms: b.and_then(|m| m.watermark_ms),
                    green_watermark_ms: g.and_then(|m| m.watermark_ms),
                    blue_pending_records: b.and_then(|m| m.pending_records),
                    green_pending_records: g.and_then(|m| m.pending_records),
                }
            });
        let read = |table: &str, name: &str| {
            query::snapshot_as(ctx, &cfg, &project, table, name, &req.read)
                .map_err(|e| format!("reading {name}: {}", c.scrubber.scrub(&e.to_string())))
        };
        let green_name = match ctx.resolve_table(&project, green) {
            Ok(n) => n,
            Err(e) => {
                tables.push(unreadable(blue, green, e.to_string(), positions));
                continue;
            }
        };
        let sides = read(&green_name, &green_name).and_then(|g| Ok((read(&green_name, blue)?, g)));
        let (b, g) = match sides {
            Ok(v) => v,
            Err(why) => {
                tables.push(unreadable(blue, &green_name, why, positions));
                continue;
            }
        };
        let expected = expected_for(&req.expect_diff, blue, &green_name);
        tables.push(compare(
            blue,
            &green_name,
            &b.result,
            &g.result,
            &CompareOptions {
                expected,
                max_lag_seconds: req.max_lag_seconds,
                samples: req.samples,
                positions,
            },
        ));
    }
    judge_materialized(&project, &c, &rt, &cfg, &mut tables);
    let verdict = tables
        .iter()
        .map(|t| t.verdict)
        .max()
        .unwrap_or(Verdict::Same);
    let mut readers = rt.block_on(super::readers::blue_readers(
        &cfg, &project, &record, &naming, &c, &live,
    ));
    readers.tables.retain(|t| {
        pairs
            .iter()
            .any(|(b, _)| b.eq_ignore_ascii_case(&t.blue_table_name))
    });
    Ok(ReleaseCheck {
        statement_prefix: release.map(|r| r.statement_prefix.clone()),
        verdict,
        tables,
        positions_note,
        readers,
    })
}

/// Green tables that are materialized tables on the target's materialized-tables API (Confluent
/// Cloud) are judged by it too: rows of a query that does not run its active version say nothing
/// final. Being created or evolved (CREATING, ALTERING, PENDING, a version being activated) →
/// at least `catching-up`; FAILED, STOPPED or absent → `unreadable`, with the state. A listing
/// that fails is said in [`TableCheck::green_materialized`] and changes no verdict.
fn judge_materialized(
    project: &crate::project::Project,
    c: &super::target::Connected,
    rt: &tokio::runtime::Runtime,
    cfg: &crate::config::Config,
    tables: &mut [TableCheck],
) {
    use crate::target::materialized::find;
    let is_mt = |t: &str| {
        project
            .inventory
            .tables
            .get(t)
            .is_some_and(|t| t.is_materialized_table())
    };
    if !tables.iter().any(|t| is_mt(&t.green_table)) {
        return;
    }
    let listed = match rt.block_on(c.target.materialized_tables()) {
        Ok(Some(l)) => l,
        Ok(None) => return,
        Err(e) => {
            let why = c.scrubber.scrub(&e.to_string());
            for t in tables.iter_mut().filter(|t| is_mt(&t.green_table)) {
                t.green_materialized = Some(format!("not read: {why}"));
            }
            return;
        }
    };
    let cluster = crate::target::kafka_rest::cluster_id(cfg);
    for t in tables.iter_mut().filter(|t| is_mt(&t.green_table)) {
        let (state, verdict) = match find(&listed, &t.green_table, cluster.as_deref()) {
            Err(why) => (why, Verdict::Unreadable),
            Ok(None) => (
                "not listed by the materialized-tables API".to_string(),
                Verdict::Unreadable,
            ),
            Ok(Some(m)) if m.is_live() => (m.describe(), t.verdict),
            Ok(Some(m)) => {
                let settling = m.evolving()
                    || matches!(
                        m.phase,
                        Some(crate::target::Phase::Pending | crate::target::Phase::Running)
                    );
                (
                    m.describe(),
                    if settling {
                        Verdict::CatchingUp
                    } else {
                        Verdict::Unreadable
                    },
                )
            }
        };
        if verdict > t.verdict {
            t.verdict = verdict;
            if verdict == Verdict::Unreadable && t.unreadable.is_none() {
                t.unreadable = Some(format!(
                    "green materialized table {}: {state}",
                    t.green_table
                ));
            }
        }
        t.green_materialized = Some(state);
    }
}

/// The statements (jobs) that write the blue and the green table of a pair: those recorded for the
/// release, else the green table's own DML and the DML the blue name would have under the same
/// naming. An empty name when there is none (a table without a job).
fn writer_statements(
    project: &crate::project::Project,
    naming: &crate::plan::StatementNaming,
    release: Option<&crate::versioning::record::Release>,
    blue: &str,
    green: &str,
) -> (String, String) {
    use crate::versioning::record::StatementRole;
    let job = |v: &[crate::versioning::record::RecordedStatement]| {
        v.iter()
            .find(|s| s.role == StatementRole::Job)
            .map(|s| s.name.clone())
    };
    if let Some(t) = release.and_then(|r| {
        r.tables.iter().find(|t| {
            t.blue_table_name.eq_ignore_ascii_case(blue)
                && t.green_table_name.eq_ignore_ascii_case(green)
        })
    }) {
        return (
            job(&t.blue_statements).unwrap_or_default(),
            job(&t.green_statements).unwrap_or_default(),
        );
    }
    let product = project
        .inventory
        .tables
        .get(green)
        .map(|t| t.product.clone())
        .unwrap_or_default();
    let green_st = naming
        .table_statements(project, green)
        .into_iter()
        .find(|n| n.contains("-dml-"))
        .unwrap_or_default();
    (naming.dml(&product, blue), green_st)
}

/// The check of a pair that could not be read: verdict `unreadable`, the reason, nothing compared.
fn unreadable(blue: &str, green: &str, why: String, positions: Option<Positions>) -> TableCheck {
    TableCheck {
        blue_table: blue.to_string(),
        green_table: green.to_string(),
        verdict: Verdict::Unreadable,
        key: None,
        blue_rows: 0,
        green_rows: 0,
        blue_complete: false,
        green_complete: false,
        only_in_blue: 0,
        only_in_green: 0,
        values_differ: 0,
        only_in_blue_samples: Vec::new(),
        only_in_green_samples: Vec::new(),
        values_differ_samples: Vec::new(),
        columns: Vec::new(),
        time_column: None,
        blue_newest: None,
        green_newest: None,
        lag_seconds: positions.as_ref().and_then(Positions::lag_seconds),
        positions,
        undeclared: Vec::new(),
        unreadable: Some(why),
        green_materialized: None,
    }
}

/// The declared columns of one pair from `--expect-diff` values (`*`: the whole table).
pub fn expected_for(declared: &[String], blue: &str, green: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for d in declared {
        let (t, c) = match d.rsplit_once('.') {
            Some((t, c)) => (t, c),
            None => (d.as_str(), "*"),
        };
        if t.eq_ignore_ascii_case(blue) || t.eq_ignore_ascii_case(green) {
            out.insert(c.to_ascii_lowercase());
        }
    }
    out
}

fn index_of(columns: &[Column], name: &str) -> Option<usize> {
    columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
}

fn is_numeric(type_name: &str) -> bool {
    matches!(
        crate::results::value::type_root(type_name),
        "TINYINT"
            | "SMALLINT"
            | "INT"
            | "INTEGER"
            | "BIGINT"
            | "FLOAT"
            | "DOUBLE"
            | "DECIMAL"
            | "NUMERIC"
            | "REAL"
    )
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y || crate::results::value::same_decimal(x, y),
        (Value::Number(_), Value::Number(_)) => number(a) == number(b),
        _ => a == b,
    }
}

fn stats(rows: &[Row], col: usize, numeric: bool) -> SideStats {
    let mut s = SideStats::default();
    for r in rows {
        let v = r.get(col).unwrap_or(&Value::Null);
        if v.is_null() {
            s.nulls += 1;
            continue;
        }
        if numeric && let Some(x) = number(v) {
            s.sum = Some(s.sum.unwrap_or(0.0) + x);
            s.min = Some(s.min.map_or(x, |m| m.min(x)));
            s.max = Some(s.max.map_or(x, |m| m.max(x)));
        }
    }
    s
}

fn newest(rows: &[Row], col: Option<usize>) -> Option<String> {
    let col = col?;
    rows.iter()
        .filter_map(|r| r.get(col).and_then(Value::as_str))
        .max_by(|a, b| {
            crate::time::epoch_seconds(a)
                .partial_cmp(&crate::time::epoch_seconds(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(str::to_string)
}

/// Compares the snapshots of a blue and a green table (pure; see the module docs). Rows are matched
/// by the key columns of the read (the green table's primary key) when both sides have them, else
/// as whole rows over the common columns (with multiplicity).
pub fn compare(
    blue_table: &str,
    green_table: &str,
    blue: &QueryResult,
    green: &QueryResult,
    opts: &CompareOptions,
) -> TableCheck {
    let key: Option<Vec<String>> = green
        .key
        .clone()
        .filter(|k| k.iter().all(|c| index_of(&blue.columns, c).is_some()));
    let rows = RowDiff::of(blue, green, key.as_deref());
    let columns = column_checks(blue, green, &rows.differing_by_col);
    let fresh = Freshness::of(blue, green);
    let whole_table_declared = opts.expected.contains("*");
    let behind = !whole_table_declared
        && opts
            .positions
            .as_ref()
            .is_some_and(|p| p.green_behind(opts.max_lag_seconds));
    let undeclared = undeclared(opts, key.as_deref(), &rows, &columns, blue, green);
    let any_diff = rows.keys_differ()
        || !rows.differ.is_empty()
        || columns
            .iter()
            .any(|c| c.blue.is_none() || c.green.is_none());
    let verdict = if behind {
        Verdict::CatchingUp
    } else if !undeclared.is_empty() {
        Verdict::Differs
    } else if any_diff {
        Verdict::ExpectedDifference
    } else {
        Verdict::Same
    };
    let types = |r: &QueryResult| -> Vec<String> {
        r.columns.iter().map(|c| c.type_name.clone()).collect()
    };
    let (blue_types, green_types) = (types(blue), types(green));
    let sample = |r: &Row, types: &Vec<String>| SampleRow {
        values: r.clone(),
        types: types.clone(),
    };
    let take = |v: &[&Row], types: &Vec<String>| -> Vec<SampleRow> {
        v.iter()
            .take(opts.samples)
            .map(|r| sample(r, types))
            .collect()
    };
    TableCheck {
        blue_table: blue_table.to_string(),
        green_table: green_table.to_string(),
        verdict,
        key,
        blue_rows: blue.rows.len(),
        green_rows: green.rows.len(),
        blue_complete: blue.complete,
        green_complete: green.complete,
        only_in_blue: rows.only_blue.len(),
        only_in_green: rows.only_green.len(),
        values_differ: rows.differ.len(),
        only_in_blue_samples: take(&rows.only_blue, &blue_types),
        only_in_green_samples: take(&rows.only_green, &green_types),
        values_differ_samples: rows
            .differ
            .iter()
            .take(opts.samples)
            .map(|(b, g)| DiffSample {
                blue: sample(b, &blue_types),
                green: sample(g, &green_types),
            })
            .collect(),
        columns,
        time_column: fresh.time_column,
        blue_newest: fresh.blue_newest,
        green_newest: fresh.green_newest,
        lag_seconds: opts.positions.as_ref().and_then(Positions::lag_seconds),
        positions: opts.positions.clone(),
        undeclared,
        unreadable: None,
        green_materialized: None,
    }
}

/// A column both sides have: its name and its index in the blue and in the green columns.
type CommonColumn = (String, usize, usize);

/// The rows of blue and green matched by key (or as whole rows without one).
struct RowDiff<'a> {
    only_blue: Vec<&'a Row>,
    only_green: Vec<&'a Row>,
    /// Pairs with the same key whose values differ (only with a key).
    differ: Vec<(&'a Row, &'a Row)>,
    /// Column → rows whose value of it differs.
    differing_by_col: BTreeMap<String, usize>,
}

impl<'a> RowDiff<'a> {
    fn of(blue: &'a QueryResult, green: &'a QueryResult, key: Option<&[String]>) -> Self {
        let common: Vec<CommonColumn> = green
            .columns
            .iter()
            .filter_map(|c| {
                Some((
                    c.name.clone(),
                    index_of(&blue.columns, &c.name)?,
                    index_of(&green.columns, &c.name)?,
                ))
            })
            .collect();
        let key_cols: Vec<CommonColumn> = match key {
            Some(k) => common
                .iter()
                .filter(|(n, _, _)| k.iter().any(|c| c.eq_ignore_ascii_case(n)))
                .cloned()
                .collect(),
            None => common.clone(),
        };
        let by_key_blue = by_key(&blue.rows, true, &key_cols);
        let by_key_green = by_key(&green.rows, false, &key_cols);
        let mut d = RowDiff {
            only_blue: Vec::new(),
            only_green: Vec::new(),
            differ: Vec::new(),
            differing_by_col: BTreeMap::new(),
        };
        for (k, bs) in &by_key_blue {
            let gs = by_key_green.get(k).map(Vec::as_slice).unwrap_or(&[]);
            let n = bs.len().min(gs.len());
            d.only_blue.extend(&bs[n..]);
            if key.is_some() {
                for (b, g) in bs[..n].iter().zip(&gs[..n]) {
                    d.compare_values(b, g, &common);
                }
            }
        }
        for (k, gs) in &by_key_green {
            let nb = by_key_blue.get(k).map_or(0, Vec::len);
            if gs.len() > nb {
                d.only_green.extend(&gs[nb..]);
            }
        }
        d
    }

    /// Counts the common columns where `b` and `g` (rows of the same key) differ.
    fn compare_values(&mut self, b: &'a Row, g: &'a Row, common: &[CommonColumn]) {
        let mut any = false;
        for (name, bi, gi) in common {
            let (bv, gv) = (
                b.get(*bi).unwrap_or(&Value::Null),
                g.get(*gi).unwrap_or(&Value::Null),
            );
            if !same_value(bv, gv) {
                *self.differing_by_col.entry(name.clone()).or_default() += 1;
                any = true;
            }
        }
        if any {
            self.differ.push((b, g));
        }
    }

    fn keys_differ(&self) -> bool {
        !self.only_blue.is_empty() || !self.only_green.is_empty()
    }
}

/// `rows` grouped by their values of `cols` (the blue or the green index of each).
fn by_key<'a>(
    rows: &'a [Row],
    blue_side: bool,
    cols: &[CommonColumn],
) -> BTreeMap<String, Vec<&'a Row>> {
    let mut out: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for row in rows {
        let vals: Vec<&Value> = cols
            .iter()
            .map(|(_, b, g)| {
                row.get(if blue_side { *b } else { *g })
                    .unwrap_or(&Value::Null)
            })
            .collect();
        out.entry(serde_json::to_string(&vals).unwrap_or_default())
            .or_default()
            .push(row);
    }
    out
}

/// One check per column of green, then per column only blue has: its statistics on each side.
fn column_checks(
    blue: &QueryResult,
    green: &QueryResult,
    differing_by_col: &BTreeMap<String, usize>,
) -> Vec<ColumnCheck> {
    let mut names: Vec<String> = green.columns.iter().map(|c| c.name.clone()).collect();
    for c in &blue.columns {
        if index_of(&green.columns, &c.name).is_none() {
            names.push(c.name.clone());
        }
    }
    names
        .iter()
        .map(|n| {
            let side = |r: &QueryResult| {
                index_of(&r.columns, n)
                    .map(|i| stats(&r.rows, i, is_numeric(&r.columns[i].type_name)))
            };
            ColumnCheck {
                column: n.clone(),
                blue: side(blue),
                green: side(green),
                differing_rows: differing_by_col.get(n).copied().unwrap_or(0),
            }
        })
        .collect()
}

/// The newest value of green's first timestamp column on each side (shown, never judged: green may
/// filter out blue's newest row).
struct Freshness {
    time_column: Option<String>,
    blue_newest: Option<String>,
    green_newest: Option<String>,
}

impl Freshness {
    fn of(blue: &QueryResult, green: &QueryResult) -> Self {
        let time_col = green
            .columns
            .iter()
            .position(|c| crate::results::value::type_root(&c.type_name).starts_with("TIMESTAMP"));
        let time_column = time_col.map(|i| green.columns[i].name.clone());
        let blue_time = time_column
            .as_deref()
            .and_then(|n| index_of(&blue.columns, n));
        let blue_newest = newest(&blue.rows, blue_time);
        let green_newest = newest(&green.rows, time_col);
        Freshness {
            time_column,
            blue_newest,
            green_newest,
        }
    }
}

/// What differs and was not declared expected (`opts.expected`: column names, `*` for all): the
/// columns whose values differ, `columns:<c>` for a column one side lacks, `keys` for rows on one
/// side only (declared by a key column, or without a key by `*` alone), `incomplete-read` when a
/// read stopped before the table's end (partial snapshots: nothing can be called the same yet).
fn undeclared(
    opts: &CompareOptions,
    key: Option<&[String]>,
    rows: &RowDiff,
    columns: &[ColumnCheck],
    blue: &QueryResult,
    green: &QueryResult,
) -> Vec<String> {
    let whole = opts.expected.contains("*");
    let declared = |c: &str| whole || opts.expected.contains(&c.to_ascii_lowercase());
    let mut out: Vec<String> = Vec::new();
    for c in rows.differing_by_col.keys() {
        if !declared(c) {
            out.push(c.clone());
        }
    }
    for c in columns {
        if (c.blue.is_none() || c.green.is_none()) && !declared(&c.column) {
            out.push(format!("columns:{}", c.column));
        }
    }
    let keys_declared = whole || key.is_some_and(|k| k.iter().any(|c| declared(c)));
    if rows.keys_differ() && !keys_declared {
        out.push("keys".to_string());
    }
    if !blue.complete || !green.complete {
        out.push("incomplete-read".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::read::StopReason;
    use serde_json::json;

    fn result(cols: &[(&str, &str)], key: Option<&[&str]>, rows: Vec<Value>) -> QueryResult {
        QueryResult {
            statement: "q".into(),
            columns: cols
                .iter()
                .map(|(n, t)| Column {
                    name: n.to_string(),
                    type_name: t.to_string(),
                })
                .collect(),
            total_rows: rows.len(),
            rows: rows
                .into_iter()
                .map(|r| r.as_array().unwrap().clone())
                .collect(),
            complete: true,
            partial: false,
            changes: None,
            key: key.map(|k| k.iter().map(|s| s.to_string()).collect()),
            inconsistencies: Vec::new(),
            stopped_by: StopReason::End,
            change_count: 0,
            first_row_seconds: None,
            seconds: 0.0,
            close_error: None,
        }
    }

    const COLS: &[(&str, &str)] = &[("id", "INT"), ("total", "BIGINT"), ("ts", "TIMESTAMP(3)")];

    fn opts(expected: &[&str]) -> CompareOptions {
        CompareOptions {
            expected: expected.iter().map(|s| s.to_string()).collect(),
            max_lag_seconds: 60.0,
            samples: 5,
            positions: None,
        }
    }

    fn positions(
        blue_wm: Option<i64>,
        green_wm: Option<i64>,
        pending: (Option<u64>, Option<u64>),
    ) -> Positions {
        Positions {
            blue_statement: "p-dml-t".into(),
            green_statement: "p-dml-t-v2".into(),
            blue_watermark_ms: blue_wm,
            green_watermark_ms: green_wm,
            blue_pending_records: pending.0,
            green_pending_records: pending.1,
        }
    }

    /// Sample rows are written by their columns' types: a DECIMAL (held as its exact text) is a
    /// JSON number with its digits and scale, as `table preview` writes it.
    #[test]
    fn sample_rows_write_decimals_as_exact_numbers() {
        let cols: &[(&str, &str)] = &[("id", "INT"), ("amount", "DECIMAL(10, 2)")];
        let b = result(cols, Some(&["id"]), vec![json!([1, "12.50"])]);
        let g = result(
            cols,
            Some(&["id"]),
            vec![json!([1, "35.00"]), json!([2, "0.10"])],
        );
        let c = compare("t", "t_v2", &b, &g, &opts(&[]));
        let v = serde_json::to_string(&c.values_differ_samples).unwrap();
        assert_eq!(v, r#"[{"blue":[1,12.50],"green":[1,35.00]}]"#);
        assert_eq!(
            serde_json::to_string(&c.only_in_green_samples).unwrap(),
            "[[2,0.10]]"
        );
    }

    #[test]
    fn identical_snapshots_are_same() {
        let rows = json!([
            [1, 10, "2026-01-01T00:00:00Z"],
            [2, 20, "2026-01-01T00:01:00Z"]
        ]);
        let b = result(COLS, Some(&["id"]), rows.as_array().unwrap().clone());
        let g = b.clone();
        let c = compare("t", "t_v2", &b, &g, &opts(&[]));
        assert_eq!(c.verdict, Verdict::Same);
        assert_eq!((c.blue_rows, c.green_rows), (2, 2));
        assert_eq!(c.lag_seconds, None, "no positions, no lag");
        let total = &c.columns[1];
        assert_eq!(
            total.blue,
            Some(SideStats {
                nulls: 0,
                sum: Some(30.0),
                min: Some(10.0),
                max: Some(20.0)
            })
        );
        assert_eq!(c.columns[2].blue.as_ref().unwrap().sum, None);
    }

    #[test]
    fn value_and_key_differences_with_samples_and_declarations() {
        let b = result(
            COLS,
            Some(&["id"]),
            vec![
                json!([1, 10, "2026-01-01T00:00:00Z"]),
                json!([2, 20, "2026-01-01T00:01:00Z"]),
                json!([3, null, "2026-01-01T00:01:00Z"]),
            ],
        );
        let g = result(
            COLS,
            Some(&["id"]),
            vec![
                json!([1, 11, "2026-01-01T00:00:00Z"]),
                json!([2, 20, "2026-01-01T00:01:00Z"]),
                json!([4, 40, "2026-01-01T00:01:00Z"]),
            ],
        );
        let c = compare("t", "t_v2", &b, &g, &opts(&[]));
        assert_eq!(c.verdict, Verdict::Differs);
        assert_eq!(
            (c.only_in_blue, c.only_in_green, c.values_differ),
            (1, 1, 1)
        );
        assert_eq!(c.only_in_blue_samples.len(), 1);
        assert_eq!(
            *c.only_in_blue_samples[0],
            vec![json!(3), Value::Null, json!("2026-01-01T00:01:00Z")]
        );
        assert_eq!(c.values_differ_samples[0].green[1], json!(11));
        assert_eq!(c.undeclared, vec!["total".to_string(), "keys".to_string()]);
        assert_eq!(c.columns[1].blue.as_ref().unwrap().nulls, 1);
        assert_eq!(c.columns[1].differing_rows, 1);
        // The column alone does not declare new keys; the table does.
        let c = compare("t", "t_v2", &b, &g, &opts(&["total"]));
        assert_eq!(
            (c.verdict, c.undeclared.clone()),
            (Verdict::Differs, vec!["keys".to_string()])
        );
        let c = compare("t", "t_v2", &b, &g, &opts(&["*"]));
        assert_eq!(c.verdict, Verdict::ExpectedDifference);
        let c = compare(
            "t",
            "t_v2",
            &b,
            &g,
            &CompareOptions {
                samples: 0,
                ..opts(&["total", "id"])
            },
        );
        assert_eq!(c.verdict, Verdict::ExpectedDifference);
        assert!(c.only_in_blue_samples.is_empty());
    }

    /// Freshness is the writers' positions, never the newest surviving value: green that filters
    /// out blue's newest row (its newest value is older) is not behind when its watermark is not.
    #[test]
    fn green_behind_blue_is_judged_on_positions_not_on_the_newest_row() {
        let b = result(
            COLS,
            Some(&["id"]),
            vec![
                json!([1, 10, "2026-01-01T00:00:00Z"]),
                json!([2, 110, "2026-01-01T01:56:00Z"]),
            ],
        );
        // Green filtered row 2 out (a threshold changed): its newest value is 6960 s older.
        let g = result(
            COLS,
            Some(&["id"]),
            vec![json!([1, 10, "2026-01-01T00:00:00Z"])],
        );
        let c = compare("t", "t_v2", &b, &g, &opts(&[]));
        assert_eq!(c.lag_seconds, None);
        assert_eq!(c.verdict, Verdict::Differs);
        // The same positions on both sides: not catching up, the difference is judged.
        let at = |p: Positions| CompareOptions {
            positions: Some(p),
            ..opts(&[])
        };
        let c = compare(
            "t",
            "t_v2",
            &b,
            &g,
            &at(positions(
                Some(7_000_000),
                Some(7_000_000),
                (Some(0), Some(0)),
            )),
        );
        assert_eq!((c.lag_seconds, c.verdict), (Some(0.0), Verdict::Differs));
        // Declared as a whole table: an expected difference.
        let c = compare(
            "t",
            "t_v2",
            &b,
            &g,
            &CompareOptions {
                positions: Some(positions(Some(7_000_000), Some(7_000_000), (None, None))),
                ..opts(&["*"])
            },
        );
        assert_eq!(c.verdict, Verdict::ExpectedDifference);
        // Green's watermark 599.5 s behind blue's: catching up beyond 60 s, not beyond 600 s.
        let behind = positions(Some(600_000), Some(500), (Some(0), Some(0)));
        let c = compare("t", "t_v2", &b, &g, &at(behind.clone()));
        assert_eq!(
            (c.lag_seconds, c.verdict),
            (Some(599.5), Verdict::CatchingUp)
        );
        let c = compare(
            "t",
            "t_v2",
            &b,
            &g,
            &CompareOptions {
                max_lag_seconds: 600.0,
                ..at(behind.clone())
            },
        );
        assert_eq!(c.verdict, Verdict::Differs);
        // A declared whole-table difference is honoured even when green is behind.
        let c = compare(
            "t",
            "t_v2",
            &b,
            &g,
            &CompareOptions {
                positions: Some(behind),
                ..opts(&["*"])
            },
        );
        assert_eq!(c.verdict, Verdict::ExpectedDifference);
        // Without watermarks: the backlog of green's sources against blue's.
        for (pending, is_behind) in [
            ((Some(0), Some(0)), false),
            ((Some(5), Some(5)), false),
            ((Some(0), Some(12)), true),
            ((None, Some(3)), true),
            ((Some(4), None), false),
            ((None, None), false),
        ] {
            let p = positions(None, Some(1), pending);
            assert_eq!(p.green_behind(60.0), is_behind, "{pending:?}");
            let c = compare("t", "t_v2", &b, &g, &at(p));
            let want = if is_behind {
                Verdict::CatchingUp
            } else {
                Verdict::Differs
            };
            assert_eq!(c.verdict, want, "{pending:?}");
        }
    }

    #[test]
    fn an_unreadable_pair_fails_the_release_and_says_why() {
        let t = unreadable("t", "t_v2", "reading t: Object 't' not found".into(), None);
        assert_eq!(t.verdict, Verdict::Unreadable);
        assert!(!t.verdict.passes());
        assert_eq!(
            t.unreadable.as_deref(),
            Some("reading t: Object 't' not found")
        );
        assert!(
            Verdict::Unreadable > Verdict::CatchingUp && Verdict::Unreadable < Verdict::Differs
        );
        assert_eq!(Verdict::Unreadable.as_str(), "unreadable");
    }

    #[test]
    fn keyless_tables_compare_whole_rows_with_multiplicity() {
        let cols = &[("a", "STRING")];
        let b = result(cols, None, vec![json!(["x"]), json!(["x"]), json!(["y"])]);
        let g = result(cols, None, vec![json!(["x"]), json!(["y"]), json!(["z"])]);
        let c = compare("t", "t_v2", &b, &g, &opts(&[]));
        assert_eq!(
            (c.only_in_blue, c.only_in_green, c.values_differ),
            (1, 1, 0)
        );
        assert_eq!(c.verdict, Verdict::Differs);
    }

    #[test]
    fn schema_changes_and_declarations_by_either_name() {
        let b = result(&[("id", "INT")], Some(&["id"]), vec![json!([1])]);
        let g = result(
            &[("id", "INT"), ("n", "INT")],
            Some(&["id"]),
            vec![json!([1, 2])],
        );
        let c = compare("t", "t_v2", &b, &g, &opts(&[]));
        assert_eq!(c.undeclared, vec!["columns:n".to_string()]);
        let exp = expected_for(
            &["t.N".into(), "other.x".into(), "t_v2".into()],
            "t",
            "t_v2",
        );
        assert_eq!(
            exp,
            ["*".to_string(), "n".to_string()].into_iter().collect()
        );
        let c = compare("t", "t_v2", &b, &g, &opts(&["n"]));
        assert_eq!(c.verdict, Verdict::ExpectedDifference);
    }
}
