//! Upgrade verdicts: can a changed statement restore the state of the one it replaces?
//!
//! Two readings, pure (text or JSON in, verdict out):
//! - [`compare_plans`] diffs the stateful exec nodes of two compiled plans (Flink's `COMPILE PLAN
//!   '<file>' FOR <INSERT …>` JSON: `nodes[]` in topological order, each with `type` (`stream-exec-
//!   group-aggregate_1`: operator and version), `grouping`, `aggCalls`, `state[]` (name, ttl),
//!   `outputType`, and `edges[]` from `source` to `target` node id; see the Flink documentation
//!   "Table API & SQL › Upgrading", <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/overview/#stateful-upgrades-and-evolution>);
//! - [`compare_sql`], offline, diffs the stateful operators the SQL front end finds in each query
//!   (aggregate calls, grouping keys, joins, filters) when no planner is at hand.
//!
//! The rules, measured on Flink 2.2 by stopping a job with a savepoint and starting each variant from
//! it (`tests/data/upgrade/pairs.json`, `scripts/measure-upgrade-pairs.py`):
//!
//! | change | restore | verdict |
//! |---|---|---|
//! | same plan, aliases only; a `HAVING` after the aggregate (only `generateUpdateBefore` changes) | restores, results right | `state-compatible` |
//! | a filter or another grouping column (same type) feeding the state | restores, state computed under other semantics | `state-compatible-semantics-changed` |
//! | a `STATE_TTL` set, changed or removed (Flink 2.x migrates the TTL wrapping) | restores, state kept under another retention | `state-compatible-semantics-changed` |
//! | `SUM` → `MAX` (or between `SUM`, `MIN`, `MAX`, `COUNT`) with an accumulator of the same type (a BIGINT) | restores, state computed by another function | `state-compatible-semantics-changed` |
//! | an aggregate call added, or changed so its accumulator changes type (`COUNT(*)`, `SUM` → `MAX` of a DECIMAL), a key or state type changed | `StateMigrationException` | `state-incompatible` |
//! | a window turned into or from HOP (the planner gives hopping windows a row count accumulator) | `StateMigrationException` | `state-incompatible` |
//! | a stateful operator added or removed (a join before the aggregate) | state cannot be mapped to the new operators | `state-incompatible` |
//!
//! Operator identity in a savepoint comes from the job graph's shape (Flink hashes each operator from
//! its position, its chained outputs and its inputs unless `table.exec.uid.generation` pins uids), so
//! any change of shape at or above a stateful operator is `state-incompatible`. A sink is such an
//! operator when its connector keeps state ([`SinkState`]: `kafka`, `upsert-kafka`, measured); a
//! change of shape only below the last stateful operator into a sink that keeps none (`blackhole`) is
//! reported and does not decide the verdict, and before a sink not modelled it is `unknown`.

use crate::sql::{self, Statefulness};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Whether the new statement can take over the old one's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Only formatting, comments or case of keywords changed: nothing to upgrade.
    Unchanged,
    /// No operator state before or after: restart from the old statement's offsets.
    Stateless,
    /// Every stateful operator keeps its type, keys, aggregate calls and state: a restore keeps
    /// results right.
    StateCompatible,
    /// A restore succeeds, but the restored state was computed under other semantics (a filter,
    /// grouping key, join condition or expression feeding the state changed).
    StateCompatibleSemanticsChanged,
    /// A restore would fail: an operator was added or removed, or its state changed shape.
    StateIncompatible,
    /// The statements could not be compared (unreadable SQL, no plan).
    Unknown,
}

impl Verdict {
    /// The verdict as printed (`state-compatible`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Unchanged => "unchanged",
            Verdict::Stateless => "stateless",
            Verdict::StateCompatible => "state-compatible",
            Verdict::StateCompatibleSemanticsChanged => "state-compatible-semantics-changed",
            Verdict::StateIncompatible => "state-incompatible",
            Verdict::Unknown => "unknown",
        }
    }

    /// Whether deploying the change in place loses or falsifies state (a new version, or an explicit
    /// acceptance of the loss, is needed).
    pub fn needs_new_version(self) -> bool {
        matches!(
            self,
            Verdict::StateCompatibleSemanticsChanged
                | Verdict::StateIncompatible
                | Verdict::Unknown
        )
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which reading gave the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// The SQL front end's operators, offline.
    Offline,
    /// The compiled plans of the local Flink planner.
    Engine,
    /// A real restore on the local Flink, on the table's unit-test fixtures (`upgrade-check
    /// --empirical`): the old statement run on half the rows, stopped with a savepoint, the new one
    /// started from it on the other half, and its result compared with a fresh run of the new one.
    Empirical,
}

/// How a stateful operator differs between the old and the new statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorChangeKind {
    /// Only in the new statement.
    Added,
    /// Only in the old statement.
    Removed,
    /// In both; its state changed shape (`field` says which part).
    Changed,
    /// In both with the same state; what feeds it, or how it computes, changed (`field`).
    SemanticsChanged,
    /// In both, the same.
    Kept,
}

/// One stateful operator compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OperatorDiff {
    /// The operator (`group-aggregate`, `join`, `deduplicate`; offline: `aggregate`, `join`, …).
    pub operator: String,
    /// How it differs.
    pub change: OperatorChangeKind,
    /// What differs (`aggCalls`, `grouping`, `state`, `input`, …); empty when kept, added or removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// The operator's own description in the old statement, when the reading gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The same in the new statement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

/// The verdict with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assessment {
    /// The answer.
    pub verdict: Verdict,
    /// Which reading gave it.
    pub tier: Tier,
    /// The stateful operators, in the order of the new statement (removed ones last).
    pub operators: Vec<OperatorDiff>,
    /// Why, in sentences.
    pub reasons: Vec<String>,
}

/// Errors reading a compiled plan.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// The JSON is not a compiled plan (no `nodes` array, a node without `id` or `type`).
    #[error("not a compiled Flink plan: {0}")]
    NotAPlan(String),
}

/// One exec node of a compiled plan, normalised for comparison.
#[derive(Debug, Clone)]
struct Node {
    /// `group-aggregate` (operator without the `stream-exec-` prefix and `_N` version suffix).
    operator: String,
    /// The full type (`stream-exec-group-aggregate_1`): a new version of an exec node may store other
    /// state.
    kind: String,
    /// The node without its id and description, identifiers in types blanked.
    body: Value,
    description: Option<String>,
    inputs: Vec<usize>,
    stateful: bool,
}

/// Exec nodes whose state holds keys and accumulators (aggregates). With [`ROW_STORING`], the exec nodes
/// that keep keyed state even when the plan lists no `state` entry for them (plans of older node
/// versions list none).
const AGGREGATING: &[&str] = &[
    "group-aggregate",
    "global-group-aggregate",
    "incremental-group-aggregate",
    "group-table-aggregate",
    "window-aggregate",
    "global-window-aggregate",
    "group-window-aggregate",
    "python-group-aggregate",
    "python-group-window-aggregate",
    "python-over-aggregate",
];

/// Exec nodes whose state holds input rows (so a change of the input row type changes the state's
/// serializer), as opposed to [`AGGREGATING`] ones.
const ROW_STORING: &[&str] = &[
    "join",
    "interval-join",
    "temporal-join",
    "window-join",
    "deduplicate",
    "window-deduplicate",
    "rank",
    "window-rank",
    "sort-limit",
    "limit",
    "temporal-sort",
    "over-aggregate",
    "match",
    "changelog-normalize",
    "multi-join",
];

fn operator_of(kind: &str) -> String {
    let base = kind.strip_prefix("stream-exec-").unwrap_or(kind);
    match base.rsplit_once('_') {
        Some((name, v)) if v.chars().all(|c| c.is_ascii_digit()) => name.to_string(),
        _ => base.to_string(),
    }
}

/// `s` with every backquoted identifier replaced by `` `_` ``: field names in row types follow
/// aliases, which a restore does not see.
fn blank_identifiers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '`' {
            // A doubled backquote inside an identifier is an escaped one.
            loop {
                match chars.next() {
                    Some('`') if chars.peek() == Some(&'`') => {
                        chars.next();
                    }
                    Some('`') | None => break,
                    Some(_) => {}
                }
            }
            out.push_str("`_`");
        } else {
            out.push(c);
        }
    }
    out
}

/// The node's JSON without what a restore does not see: ids, descriptions, aggregate call names and
/// field names.
fn normalise(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let is_agg_call = m.contains_key("internalName");
            Value::Object(
                m.iter()
                    .filter(|(k, _)| {
                        let dropped = matches!(k.as_str(), "id" | "description")
                            || (is_agg_call && k.as_str() == "name");
                        !dropped
                    })
                    .map(|(k, v)| (k.clone(), normalise(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        Value::String(s) => Value::String(blank_identifiers(s)),
        other => other.clone(),
    }
}

fn parse_plan(plan: &Value) -> Result<Vec<Node>, PlanError> {
    let nodes = plan
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or_else(|| PlanError::NotAPlan("no `nodes` array".into()))?;
    let mut index: BTreeMap<i64, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        let id = n
            .get("id")
            .and_then(Value::as_i64)
            .ok_or_else(|| PlanError::NotAPlan(format!("node {i} has no numeric `id`")))?;
        let kind = n
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| PlanError::NotAPlan(format!("node {id} has no `type`")))?;
        index.insert(id, i);
        let operator = operator_of(kind);
        let has_state = n
            .get("state")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        out.push(Node {
            stateful: has_state
                || AGGREGATING.contains(&operator.as_str())
                || ROW_STORING.contains(&operator.as_str()),
            operator,
            kind: kind.to_string(),
            body: normalise(n),
            description: n
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            inputs: Vec::new(),
        });
    }
    if let Some(edges) = plan.get("edges").and_then(Value::as_array) {
        for e in edges {
            let (Some(s), Some(t)) = (
                e.get("source").and_then(Value::as_i64),
                e.get("target").and_then(Value::as_i64),
            ) else {
                return Err(PlanError::NotAPlan(format!(
                    "edge without source/target: {e}"
                )));
            };
            let (Some(&s), Some(&t)) = (index.get(&s), index.get(&t)) else {
                return Err(PlanError::NotAPlan(format!(
                    "edge {s} → {t} names an unknown node"
                )));
            };
            if s >= t {
                // Plans list their nodes in topological order: an edge backwards is a cycle.
                return Err(PlanError::NotAPlan(format!(
                    "edge to node {} from a node not before it",
                    nodes[t].get("id").and_then(Value::as_i64).unwrap_or(-1)
                )));
            }
            out[t].inputs.push(s);
        }
    }
    Ok(out)
}

/// The shape of the plan at node `i`: the operator types of `i` and everything upstream of it, with
/// the order of inputs (what Flink's operator hashing sees).
fn shape(nodes: &[Node], i: usize, memo: &mut BTreeMap<usize, String>) -> String {
    if let Some(s) = memo.get(&i) {
        return s.clone();
    }
    let inputs: Vec<String> = nodes[i]
        .inputs
        .iter()
        .map(|&j| shape(nodes, j, memo))
        .collect();
    let s = format!("{}({})", nodes[i].kind, inputs.join(","));
    memo.insert(i, s.clone());
    s
}

/// Everything upstream of node `i` (bodies, in order), excluding `i`.
fn upstream(nodes: &[Node], i: usize) -> Vec<&Value> {
    let mut seen = vec![false; nodes.len()];
    let mut stack = nodes[i].inputs.clone();
    let mut out = Vec::new();
    while let Some(j) = stack.pop() {
        if std::mem::replace(&mut seen[j], true) {
            continue;
        }
        out.push(j);
        stack.extend(nodes[j].inputs.iter().copied());
    }
    out.sort_unstable();
    out.into_iter().map(|j| &nodes[j].body).collect()
}

/// Top-level field types of a row type text (`ROW<`_` VARCHAR(2147483647), `_` DECIMAL(10, 2)>`).
fn row_field_types(row: &str) -> Vec<String> {
    let Some(inner) = row
        .trim()
        .strip_prefix("ROW<")
        .and_then(|r| r.strip_suffix('>'))
    else {
        return vec![row.trim().to_string()];
    };
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().trim_start_matches("`_`").trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().trim_start_matches("`_`").trim().to_string());
    }
    out
}

/// The field types of a node's `outputType`, in either of the compiled plan's encodings: the
/// summary string (`ROW<`a` BIGINT, …>`) or, when the row holds a time attribute (which the string
/// cannot say), the structured JSON (`{"type": "ROW", "fields": [{"name", "fieldType"}]}`). Both
/// give the same text for the same type (`TIMESTAMP(3)`, `BIGINT NOT NULL`); a time attribute's kind
/// (`*ROWTIME*`) is left out, as the stored value is the same timestamp.
fn row_types(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => row_field_types(s)
            .into_iter()
            .map(|t| t.replace(" *ROWTIME*", "").replace(" *PROCTIME*", ""))
            .collect(),
        Value::Object(o) => match o.get("fields").and_then(Value::as_array) {
            Some(fields) => fields
                .iter()
                .map(|f| f.get("fieldType").map(type_text).unwrap_or_default())
                .collect(),
            None => vec![type_text(v)],
        },
        _ => Vec::new(),
    }
}

/// One type of the structured encoding as the summary string writes it.
fn type_text(t: &Value) -> String {
    let Some(o) = t.as_object() else {
        return t
            .as_str()
            .map(|s| s.replace(" *ROWTIME*", "").replace(" *PROCTIME*", ""))
            .unwrap_or_else(|| t.to_string());
    };
    let not_null = if o.get("nullable").and_then(Value::as_bool) == Some(false) {
        " NOT NULL"
    } else {
        ""
    };
    let precision = o.get("precision").and_then(Value::as_u64);
    let base = match (o.get("type").and_then(Value::as_str), precision) {
        (Some("TIMESTAMP_WITHOUT_TIME_ZONE"), Some(p)) => format!("TIMESTAMP({p})"),
        (Some("TIMESTAMP_WITH_LOCAL_TIME_ZONE"), Some(p)) => format!("TIMESTAMP_LTZ({p})"),
        (Some("TIMESTAMP_WITH_TIME_ZONE"), Some(p)) => format!("TIMESTAMP({p}) WITH TIME ZONE"),
        (Some("ROW"), _) => format!("ROW<{}>", row_types(t).join(", ")),
        _ => {
            let mut rest = o.clone();
            rest.remove("kind");
            rest.remove("nullable");
            return format!("{}{not_null}", Value::Object(rest));
        }
    };
    format!("{base}{not_null}")
}

/// The types at field indexes `idx` of a row whose field types are `types` (`null` where an index is
/// not a field).
fn types_at(idx: &[Value], types: &[String]) -> Value {
    Value::Array(
        idx.iter()
            .map(|k| {
                k.as_u64()
                    .and_then(|k| types.get(k as usize))
                    .map_or(Value::Null, |t| Value::String(t.clone()))
            })
            .collect(),
    )
}

/// What an aggregate call keeps in the state, as far as a restore sees it. The state of an aggregate
/// is one row of its calls' accumulator fields, so only their types matter, not the function that
/// fills them. Flink's built-in declarative functions on an input without retractions
/// (`org.apache.flink.table.planner.functions.aggfunctions`: `SumAggFunction`, `Sum0AggFunction`,
/// `MinAggFunction`, `MaxAggFunction`, `CountAggFunction`, `Count1AggFunction`) keep one field:
/// SUM, SUM0, MIN and MAX of their result type, COUNT a BIGINT; `ListAggFunction` keeps two STRINGs
/// (the concatenation and the delimiter). So `SUM` → `MAX` of a BIGINT or an INT, `MAX` → `MIN`,
/// `COUNT(*)` → `SUM` of a BIGINT, `COUNT(x)` → `COUNT(*)` or another LISTAGG delimiter restores
/// (measured on Flink 2.2: the state was computed otherwise, a semantics change), while `SUM` →
/// `MAX` of a `DECIMAL(10, 2)` (the sum is a `DECIMAL(38, 2)`) or a SUM of an INT → of a BIGINT fails
/// (`StateMigrationException`). Any other call (DISTINCT, a retracting one, another function: AVG,
/// FIRST_VALUE, …) is its whole JSON: a change of it changes the layout (`SUM` → `AVG` and
/// `FIRST_VALUE` → `LAST_VALUE` fail, measured).
fn accumulators(call: &Value, retracts: bool) -> Value {
    let function = call
        .get("internalName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim_start_matches('$')
        .split('$')
        .next()
        .unwrap_or("");
    let distinct = call.get("distinct").and_then(Value::as_bool) == Some(true);
    let result = call
        .get("type")
        .and_then(Value::as_str)
        .map(|t| t.trim_end_matches(" NOT NULL").to_string());
    if !distinct && !retracts {
        match (function, result) {
            ("SUM" | "SUM0" | "MIN" | "MAX", Some(t)) => {
                return Value::Array(vec![Value::String(t)]);
            }
            ("COUNT", _) => return Value::Array(vec![Value::String("BIGINT".into())]),
            // `ListAggFunction`: the concatenation and the delimiter, two STRINGs whatever the
            // delimiter (another one restores, measured).
            ("LISTAGG", _) => {
                return Value::Array(vec![
                    Value::String("STRING".into()),
                    Value::String("STRING".into()),
                ]);
            }
            _ => {}
        }
    }
    call.clone()
}

/// The parts of a stateful node that make up its state's layout (a change of one fails a restore),
/// named, each as JSON.
fn layout(nodes: &[Node], i: usize) -> BTreeMap<&'static str, Value> {
    let n = &nodes[i];
    let b = &n.body;
    let mut out = BTreeMap::new();
    out.insert("type", Value::String(n.kind.clone()));
    // State entries: their names. A TTL set, changed or removed is not part of the layout: Flink
    // 2.x migrates state values into and out of their TTL wrapping on restore (measured on 2.2:
    // a `STATE_TTL` hint added restores); the retention is a semantics change (the body differs).
    if let Some(st) = b.get("state").and_then(Value::as_array) {
        let entries: Vec<Value> = st
            .iter()
            .map(|s| serde_json::json!({ "name": s.get("name") }))
            .collect();
        out.insert("state", Value::Array(entries));
    }
    if let Some(calls) = b.get("aggCalls").and_then(Value::as_array) {
        let retracts = |k: usize| {
            b.get("needRetraction").and_then(Value::as_bool) == Some(true)
                || b.get("aggCallNeedRetractions")
                    .and_then(Value::as_array)
                    .and_then(|r| r.get(k))
                    .and_then(Value::as_bool)
                    == Some(true)
        };
        out.insert(
            "aggCalls",
            Value::Array(
                calls
                    .iter()
                    .enumerate()
                    .map(|(k, c)| accumulators(c, retracts(k)))
                    .collect(),
            ),
        );
    }
    for key in [
        "aggCallNeedRetractions",
        "needRetraction",
        "rankType",
        "outputRankNumber",
        "isRowtime",
        "keepLastRow",
        "joinSpec/joinType",
    ] {
        // A deduplication on event time keeps the row whichever row it keeps (first or last: the
        // same state, measured); on processing time keeping the first row keeps only a flag.
        if key == "keepLastRow" && b.get("isRowtime").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let v = if let Some((a, c)) = key.split_once('/') {
            b.get(a).and_then(|x| x.get(c))
        } else {
            b.get(key)
        };
        if let Some(v) = v {
            out.insert(key, v.clone());
        }
    }
    // Keys: how many, and their types in the input row.
    let input_types: Vec<Vec<String>> = n
        .inputs
        .iter()
        .map(|&j| {
            nodes[j]
                .body
                .get("outputType")
                .map(row_types)
                .unwrap_or_default()
        })
        .collect();
    let input = |side: usize| input_types.get(side).map_or(&[][..], Vec::as_slice);
    for field in ["grouping", "uniqueKeys"] {
        if let (Some(idx), Some(types)) =
            (b.get(field).and_then(Value::as_array), input_types.first())
        {
            out.insert(field, types_at(idx, types));
        }
    }
    if let Some(k) = b
        .get("partitionSpec")
        .and_then(|p| p.get("fields"))
        .and_then(Value::as_array)
    {
        out.insert("partitionSpec", types_at(k, input(0)));
    }
    // An OVER aggregate's partition keys sit in its `overSpec`. Its calls are not layout: a
    // `COUNT(*) OVER w` added beside `SUM(x) OVER w` (ROWS frame) restores (measured on Flink 2.2).
    if let Some(k) = b
        .get("overSpec")
        .and_then(|spec| spec.get("partition"))
        .and_then(|p| p.get("fields"))
        .and_then(Value::as_array)
    {
        out.insert("overPartition", types_at(k, input(0)));
    }
    if let Some(js) = b.get("joinSpec") {
        for (side, field) in [(0usize, "leftKeys"), (1, "rightKeys")] {
            if let Some(idx) = js.get(field).and_then(Value::as_array) {
                out.insert(field, types_at(idx, input(side)));
            }
        }
    }
    // The second phase of a two-phase aggregate keeps the accumulators the first phase sends it:
    // its input row. The planner adds accumulators of its own there (a `COUNT(*)` for hopping
    // windows, to know a shared slice is empty), which the calls do not show: a TUMBLE or CUMULATE
    // window turned into a HOP one, or back, fails a restore (StateMigrationException, measured on
    // Flink 2.2).
    if n.operator.starts_with("global-") || n.operator.starts_with("incremental-") {
        out.insert(
            "accumulators",
            Value::Array(
                input_types
                    .iter()
                    .map(|t| Value::Array(t.iter().cloned().map(Value::String).collect()))
                    .collect(),
            ),
        );
    }
    // The rows an operator stores, or the keys and accumulators an aggregate outputs.
    if ROW_STORING.contains(&n.operator.as_str()) {
        out.insert(
            "input",
            Value::Array(
                input_types
                    .iter()
                    .map(|t| Value::Array(t.iter().cloned().map(Value::String).collect()))
                    .collect(),
            ),
        );
    } else if let Some(t) = b.get("outputType") {
        // Its keys and results. A result's nullability is not in the state: the accumulators are
        // (`COUNT(*)`, a `BIGINT NOT NULL`, → `SUM` of a BIGINT restores, measured on Flink 2.2).
        out.insert(
            "outputType",
            Value::Array(
                row_types(t)
                    .into_iter()
                    .map(|t| Value::String(t.replace(" NOT NULL", "")))
                    .collect(),
            ),
        );
    }
    out
}

/// Fields of a stateful node that say which changes it sends on, not what it stores or how it
/// computes: `generateUpdateBefore` turns on when an operator after it needs `-U` rows (a `HAVING`
/// filter after an aggregate); a restore keeps results right (measured on Flink 2.2).
const CHANGELOG_ONLY: &[&str] = &["generateUpdateBefore"];

/// The top-level fields of two node bodies that differ, named (those in [`CHANGELOG_ONLY`] left
/// out).
fn differing_fields(old: &Value, new: &Value) -> Vec<String> {
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        return if old == new {
            Vec::new()
        } else {
            vec!["node".into()]
        };
    };
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !CHANGELOG_ONLY.contains(&k.as_str()) && o.get(*k) != n.get(*k))
        .map(|k| k.to_string())
        .collect()
}

/// The verdict from two compiled plans (`COMPILE PLAN` JSON) of the old and the new statement.
///
/// Errors: a JSON that is not a compiled plan.
pub fn compare_plans(old: &Value, new: &Value) -> Result<Assessment, PlanError> {
    let old = parse_plan(old)?;
    let new = parse_plan(new)?;
    // A plan of a statement that writes has a sink; one without is not a statement's plan.
    for (side, nodes) in [("old", &old), ("new", &new)] {
        if !nodes.iter().any(|n| n.operator == "sink") {
            return Err(PlanError::NotAPlan(format!(
                "the {side} plan has no sink node"
            )));
        }
    }
    let so: Vec<usize> = (0..old.len()).filter(|&i| old[i].stateful).collect();
    let sn: Vec<usize> = (0..new.len()).filter(|&i| new[i].stateful).collect();
    let mut reasons = Vec::new();
    let mut operators = Vec::new();
    if so.is_empty() && sn.is_empty() {
        reasons.push(
            "neither plan has a stateful operator: restart from the old statement's offsets".into(),
        );
        return Ok(Assessment {
            verdict: Verdict::Stateless,
            tier: Tier::Engine,
            operators,
            reasons,
        });
    }
    let mut memo_o = BTreeMap::new();
    let mut memo_n = BTreeMap::new();
    let mut verdict = Verdict::StateCompatible;
    // Pair the stateful operators in order while they match in type.
    let same_sequence = so.len() == sn.len()
        && so
            .iter()
            .zip(&sn)
            .all(|(&a, &b)| old[a].kind == new[b].kind);
    if !same_sequence {
        verdict = Verdict::StateIncompatible;
        let mut left: Vec<usize> = so.clone();
        for &b in &sn {
            if let Some(p) = left.iter().position(|&a| old[a].kind == new[b].kind) {
                let a = left.remove(p);
                operators.push(OperatorDiff {
                    operator: new[b].operator.clone(),
                    change: OperatorChangeKind::Kept,
                    fields: Vec::new(),
                    old: old[a].description.clone(),
                    new: new[b].description.clone(),
                });
            } else {
                operators.push(OperatorDiff {
                    operator: new[b].operator.clone(),
                    change: OperatorChangeKind::Added,
                    fields: Vec::new(),
                    old: None,
                    new: new[b].description.clone(),
                });
                reasons.push(format!(
                    "a stateful operator is added ({}): its state cannot come from the savepoint, and the operators after it no longer match theirs",
                    new[b].operator
                ));
            }
        }
        for a in left {
            operators.push(OperatorDiff {
                operator: old[a].operator.clone(),
                change: OperatorChangeKind::Removed,
                fields: Vec::new(),
                old: old[a].description.clone(),
                new: None,
            });
            reasons.push(format!(
                "a stateful operator is removed ({}): the savepoint holds state no operator takes",
                old[a].operator
            ));
        }
        return Ok(Assessment {
            verdict,
            tier: Tier::Engine,
            operators,
            reasons,
        });
    }
    for (&a, &b) in so.iter().zip(&sn) {
        let (lo, ln) = (layout(&old, a), layout(&new, b));
        let shape_o = shape(&old, a, &mut memo_o);
        let shape_n = shape(&new, b, &mut memo_n);
        let mut diff = OperatorDiff {
            operator: new[b].operator.clone(),
            change: OperatorChangeKind::Kept,
            fields: Vec::new(),
            old: old[a].description.clone(),
            new: new[b].description.clone(),
        };
        let changed: Vec<String> = {
            let mut keys: Vec<&&str> = lo.keys().chain(ln.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter(|k| lo.get(**k) != ln.get(**k))
                .map(|k| k.to_string())
                .collect()
        };
        if !changed.is_empty() {
            diff.change = OperatorChangeKind::Changed;
            reasons.push(format!(
                "{}: its state changes shape ({}): a restore fails",
                diff.operator,
                changed.join(", ")
            ));
            diff.fields = changed;
            verdict = Verdict::StateIncompatible;
        } else if shape_o != shape_n {
            diff.change = OperatorChangeKind::Changed;
            diff.fields = vec!["input".into()];
            reasons.push(format!(
                "{}: the operators before it changed (the job graph's shape differs): its state cannot be mapped from the savepoint",
                diff.operator
            ));
            verdict = Verdict::StateIncompatible;
        } else {
            let mut fields = differing_fields(&old[a].body, &new[b].body);
            if upstream(&old, a) != upstream(&new, b) {
                fields.push("input".into());
            }
            if !fields.is_empty() {
                diff.change = OperatorChangeKind::SemanticsChanged;
                reasons.push(format!(
                    "{}: its state restores, but {} changed: the restored state was computed under other semantics",
                    diff.operator,
                    if fields == ["input"] {
                        "what feeds it (filter, projection or grouping expression)".to_string()
                    } else {
                        fields.join(", ")
                    }
                ));
                diff.fields = fields;
                if verdict == Verdict::StateCompatible {
                    verdict = Verdict::StateCompatibleSemanticsChanged;
                }
            }
        }
        operators.push(diff);
    }
    // A sink's operator id follows the job graph's shape before it too (Flink's stream graph
    // hasher: each operator from its position, its chained outputs and its inputs' ids), so a sink
    // that keeps state of its own cannot take it from the savepoint when that shape changed.
    if matches!(
        verdict,
        Verdict::StateCompatible | Verdict::StateCompatibleSemanticsChanged
    ) {
        let sinks = |nodes: &[Node]| -> Vec<usize> {
            (0..nodes.len())
                .filter(|&i| nodes[i].operator == "sink")
                .collect()
        };
        for (&a, &b) in sinks(&old).iter().zip(&sinks(&new)) {
            if shape(&old, a, &mut memo_o) == shape(&new, b, &mut memo_n) {
                continue;
            }
            let connector = new[b]
                .body
                .pointer("/dynamicTableSink/table/resolvedTable/options/connector")
                .and_then(Value::as_str)
                .map(str::to_string);
            match SinkState::of(connector.as_deref()) {
                SinkState::None => {}
                SinkState::Kept => {
                    reasons.push(format!(
                        "the sink ({}) keeps state of its own, and the operators before it changed (the job graph's shape differs): its operator id changes, so the savepoint's state cannot be mapped to it",
                        connector.as_deref().unwrap_or("?")
                    ));
                    operators.push(OperatorDiff {
                        operator: "sink".into(),
                        change: OperatorChangeKind::Changed,
                        fields: vec!["input".into()],
                        old: old[a].description.clone(),
                        new: new[b].description.clone(),
                    });
                    verdict = Verdict::StateIncompatible;
                }
                SinkState::Unknown => {
                    reasons.push(format!(
                        "the operators before the sink ({}) changed (the job graph's shape differs): whether this sink keeps state whose operator id then changes is not modelled",
                        connector.as_deref().unwrap_or("connector not in the plan")
                    ));
                    if verdict != Verdict::StateIncompatible {
                        verdict = Verdict::Unknown;
                    }
                }
            }
        }
    }
    // Below the last stateful operator: a change of shape is said, not judged.
    let (tail_o, tail_n) = (
        old.len()
            .checked_sub(1)
            .map(|i| shape(&old, i, &mut memo_o)),
        new.len()
            .checked_sub(1)
            .map(|i| shape(&new, i, &mut memo_n)),
    );
    if tail_o != tail_n && verdict == Verdict::StateCompatible {
        reasons
            .push("the operators after the last stateful one changed; they keep no state".into());
    }
    if verdict == Verdict::StateCompatible {
        reasons.push("every stateful operator keeps its type, keys, aggregate calls and state, fed the same way: a restore keeps results right".into());
    }
    Ok(Assessment {
        verdict,
        tier: Tier::Engine,
        operators,
        reasons,
    })
}

/// Whether a sink's operator keeps state in a savepoint, by its connector: measured on Flink 2.2
/// (`tests/data/upgrade/pairs.json`): `blackhole` keeps none (a restore maps whatever comes before
/// it), `kafka`/`upsert-kafka` keep their writer's (a restore whose graph before the sink changed is
/// refused: "Cannot map checkpoint/savepoint state"); `print` writes to stdout only. Any other
/// connector is not modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SinkState {
    /// The sink keeps no state (`blackhole`, `print`).
    None,
    /// The sink keeps state of its own (`kafka`, `upsert-kafka`).
    Kept,
    /// Not known (another connector, or none given).
    #[default]
    Unknown,
}

impl SinkState {
    /// The sink state of a connector (the `'connector'` option; `None`: not given).
    pub fn of(connector: Option<&str>) -> SinkState {
        match connector.map(str::to_ascii_lowercase).as_deref() {
            Some("blackhole" | "print") => SinkState::None,
            Some("kafka" | "upsert-kafka") => SinkState::Kept,
            _ => SinkState::Unknown,
        }
    }
}

/// The statements of `text` with the aliases of their select items dropped (`SUM(x) AS total` →
/// `SUM(x)`), as text; `None` when a statement does not parse. Two texts equal so differ only in
/// the names of their output columns, which the planner's operators do not see.
fn without_aliases(text: &str) -> Option<String> {
    use sqlparser::ast::{Query, SelectItem, SetExpr, VisitMut, VisitorMut};
    use std::ops::ControlFlow;
    struct Strip;
    impl VisitorMut for Strip {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            if let SetExpr::Select(s) = q.body.as_mut() {
                for item in s.projection.iter_mut() {
                    if let SelectItem::ExprWithAlias { expr, .. } = item {
                        *item = SelectItem::UnnamedExpr(expr.clone());
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut out = String::new();
    for (_, parsed) in sql::parse_units(text) {
        let mut stmts = parsed.ok()?;
        for st in stmts.iter_mut() {
            let _ = st.visit(&mut Strip);
            out.push_str(&st.to_string());
            out.push_str(";\n");
        }
    }
    Some(out)
}

/// One stateful operator as the SQL front end sees it in a query.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SqlOperator {
    operator: String,
    /// What the state is made of (aggregate calls, ranking function, join kind).
    layout: String,
    /// What feeds and keys it (grouping keys, filters, join conditions, sources).
    semantics: String,
    /// For an aggregate, its functions and key count without their arguments: two layouts that
    /// differ only in arguments keep the state only if every argument keeps its type.
    shape: Option<String>,
    /// For an aggregate over a window table function, the function (`TUMBLE`, `HOP`, `CUMULATE`,
    /// `SESSION`).
    window: Option<&'static str>,
    /// For an aggregate, whether it counts rows (`COUNT(*)`, `COUNT(1)`).
    counts_rows: bool,
    /// The expressions its state is keyed by (grouping keys, `PARTITION BY`): their number is in
    /// the layout; their types, which the offline reading does not know, are the state's key type.
    keys: Vec<String>,
}

/// The kind of accumulator an aggregate call `call` (function `name`) keeps, for the offline
/// reading, which does not know types: SUM, SUM0, MIN, MAX and COUNT (not DISTINCT) each keep one
/// field of their result type (see [`accumulators`]), so one of them turned into another restores
/// when the types match (`SUM` → `MAX` of a BIGINT) and fails when they do not (of a DECIMAL):
/// they share a kind, and a change between them is `unknown` offline. Any other function is its own
/// kind.
fn accumulator_kind(name: &str, call: &str) -> String {
    let upper = name.to_uppercase();
    let one_field = matches!(upper.as_str(), "SUM" | "SUM0" | "MIN" | "MAX" | "COUNT")
        && !call.to_uppercase().contains("DISTINCT");
    if one_field {
        "one-field".to_string()
    } else {
        upper
    }
}

/// The window table functions, as Flink's planner names them.
const WINDOW_TVFS: &[&str] = &["TUMBLE", "HOP", "CUMULATE", "SESSION"];

/// The window table function a `FROM` text calls (`TABLE(HOP(TABLE t, …))`), if any.
fn window_tvf(from: &str) -> Option<&'static str> {
    let up = from.to_uppercase();
    WINDOW_TVFS.iter().copied().find(|w| {
        up.match_indices(&format!("{w}(")).any(|(i, _)| {
            !up[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// The name of a join's kind (`inner`, `left outer`, …), as the layout of its state.
fn join_kind(op: &sqlparser::ast::JoinOperator) -> &'static str {
    use sqlparser::ast::JoinOperator as J;
    match op {
        J::Join(_) | J::Inner(_) => "inner",
        J::Left(_) | J::LeftOuter(_) => "left outer",
        J::Right(_) | J::RightOuter(_) => "right outer",
        J::FullOuter(_) => "full outer",
        J::CrossJoin(_) => "cross",
        J::CrossApply | J::OuterApply => "lateral",
        _ => "other",
    }
}

/// The number of grouping expressions (`GROUP BY ALL` counts as none).
fn group_by_len(g: &sqlparser::ast::GroupByExpr) -> usize {
    match g {
        sqlparser::ast::GroupByExpr::Expressions(e, _) => e.len(),
        sqlparser::ast::GroupByExpr::All(_) => 0,
    }
}

/// The named windows of a SELECT (`WINDOW w AS (…)`), lower-case name → (partition keys, the
/// definition's text), a window defined as another (`WINDOW w2 AS w`, or `w2 AS (w ORDER BY …)`)
/// resolved to that one's (chains followed, a cycle or an unknown name left as written).
fn named_windows(
    defs: &[sqlparser::ast::NamedWindowDefinition],
) -> BTreeMap<String, (Vec<String>, String)> {
    use sqlparser::ast::NamedWindowExpr;
    let by_name: BTreeMap<String, &NamedWindowExpr> = defs
        .iter()
        .map(|d| (d.0.value.to_lowercase(), &d.1))
        .collect();
    let resolve = |name: &str| -> (Vec<String>, String) {
        let mut seen = BTreeSet::new();
        let mut cur = name.to_string();
        let mut texts: Vec<String> = Vec::new();
        let mut keys: Vec<String> = Vec::new();
        while seen.insert(cur.clone()) {
            match by_name.get(&cur) {
                Some(NamedWindowExpr::NamedWindow(n)) => cur = n.value.to_lowercase(),
                Some(NamedWindowExpr::WindowSpec(spec)) => {
                    if keys.is_empty() {
                        keys = spec.partition_by.iter().map(|e| e.to_string()).collect();
                    }
                    texts.push(format!("({spec})"));
                    match &spec.window_name {
                        Some(n) => cur = n.value.to_lowercase(),
                        None => break,
                    }
                }
                None => {
                    texts.push(format!("window {cur}"));
                    break;
                }
            }
        }
        texts.reverse();
        (keys, texts.join(" "))
    };
    by_name.keys().map(|n| (n.clone(), resolve(n))).collect()
}

/// The stateful operators of a statement's queries, per SELECT, in order.
/// The stateful operators, the identifiers read and the projections of the CTEs (`cte-projection
/// <name> <items>`).
#[allow(clippy::type_complexity)]
fn sql_operators(
    text: &str,
    updating: &[String],
) -> Option<(
    Statefulness,
    Vec<SqlOperator>,
    BTreeSet<String>,
    Vec<String>,
)> {
    use sqlparser::ast::{Expr, SetExpr, Statement, TableFactor, Visit, Visitor};
    use std::ops::ControlFlow;
    let analysis = sql::analyze(text);
    if analysis.statements.iter().any(|s| s.state_estimated()) {
        return None;
    }
    let state = analysis
        .statements
        .iter()
        .map(|s| s.statefulness)
        .max_by_key(|s| match s {
            Statefulness::Stateful => 3,
            Statefulness::Unknown => 2,
            Statefulness::Stateless => 1,
            Statefulness::None => 0,
        })
        .unwrap_or(Statefulness::None);
    let mut ops = Vec::new();
    struct Selects<'a>(&'a mut Vec<SqlOperator>, &'a mut Vec<String>);
    impl Visitor for Selects<'_> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            match e {
                Expr::Identifier(i) => self.1.push(i.value.to_lowercase()),
                Expr::CompoundIdentifier(parts) => {
                    if let Some(last) = parts.last() {
                        self.1.push(last.value.to_lowercase());
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_query(&mut self, q: &sqlparser::ast::Query) -> ControlFlow<()> {
            // A CTE feeds the SELECTs that read it: its sources, filters and grouping, apart from
            // its projection (whose columns the planner prunes when nothing reads them).
            for cte in q.with.iter().flat_map(|w| w.cte_tables.iter()) {
                let name = &cte.alias.name;
                if let SetExpr::Select(c) = cte.query.body.as_ref() {
                    let from: Vec<String> = c.from.iter().map(|f| f.to_string()).collect();
                    self.1.push(format!(
                        "cte-feed {name} from {} where {} {} having {}",
                        from.join(", "),
                        c.selection
                            .as_ref()
                            .map(|e| e.to_string())
                            .unwrap_or_default(),
                        c.group_by,
                        c.having.as_ref().map(|e| e.to_string()).unwrap_or_default()
                    ));
                    let projection: Vec<String> =
                        c.projection.iter().map(|p| p.to_string()).collect();
                    self.1
                        .push(format!("cte-projection {name} {}", projection.join(", ")));
                } else {
                    self.1.push(format!("cte-feed {name} {}", cte.query));
                }
            }
            let SetExpr::Select(s) = q.body.as_ref() else {
                if let SetExpr::SetOperation {
                    op, set_quantifier, ..
                } = q.body.as_ref()
                    && !matches!(set_quantifier, sqlparser::ast::SetQuantifier::All)
                {
                    self.0.push(SqlOperator {
                        operator: "union".into(),
                        layout: format!("{op}"),
                        semantics: q.body.to_string(),
                        shape: None,
                        window: None,
                        counts_rows: false,
                        keys: Vec::new(),
                    });
                }
                return ControlFlow::Continue(());
            };
            let mut calls = Vec::new();
            // The `FILTER (WHERE …)` of each call: which rows feed its accumulator (a semantics
            // change; the accumulator keeps its type: measured, it restores).
            let mut call_filters: Vec<String> = Vec::new();
            let mut names = Vec::new();
            let mut ranking = Vec::new();
            let mut windows = Vec::new();
            let mut partition_keys = Vec::new();
            let mut over_shape: Vec<String> = Vec::new();
            let named = named_windows(&s.named_window);
            for item in &s.projection {
                let _ = sqlparser::ast::visit_expressions(item, |e: &Expr| {
                    if let Expr::Function(f) = e {
                        let name = f.name.to_string();
                        if let Some(w) = &f.over {
                            // The state is keyed by the partition keys: their number is part of
                            // its layout (another number fails a restore, measured). A named
                            // window (`OVER w … WINDOW w AS (…)`) is its definition: its frame
                            // and keys are read as an inline one's.
                            let (partition, text): (Vec<String>, String) = match w {
                                sqlparser::ast::WindowType::WindowSpec(spec) => (
                                    spec.partition_by.iter().map(|e| e.to_string()).collect(),
                                    match spec
                                        .window_name
                                        .as_ref()
                                        .and_then(|n| named.get(&n.value.to_lowercase()))
                                    {
                                        Some((_, base)) => format!("{base} {spec}"),
                                        None => w.to_string(),
                                    },
                                ),
                                sqlparser::ast::WindowType::NamedWindow(n) => {
                                    match named.get(&n.value.to_lowercase()) {
                                        Some((keys, text)) => (keys.clone(), text.clone()),
                                        None => (vec![format!("window {n}")], w.to_string()),
                                    }
                                }
                            };
                            ranking.push(format!(
                                "{}{} partitions {}",
                                name.to_uppercase(),
                                f.args,
                                partition.len()
                            ));
                            // Without the calls of aggregates over a window: a call added there
                            // restored once (measured), which is no rule.
                            over_shape.push(if sql::state::is_ranking(&name) {
                                format!("{} partitions {}", name.to_uppercase(), partition.len())
                            } else {
                                format!("aggregate partitions {}", partition.len())
                            });
                            partition_keys.extend(partition);
                            windows.push(text);
                        } else if sql::state::is_aggregate(&name) {
                            // The same call twice is one accumulator (the planner merges them).
                            let call = format!("{}{}", name.to_uppercase(), f.args);
                            if let Some(filter) = &f.filter {
                                call_filters.push(format!("{call} FILTER (WHERE {filter})"));
                            }
                            if !calls.contains(&call) {
                                names.push(accumulator_kind(&name, &call));
                                calls.push(call);
                            }
                        }
                    }
                    ControlFlow::<()>::Continue(())
                });
            }
            // Aggregate calls that only a `HAVING` reads are kept in the state all the same (one
            // the projection also makes is the same call: the planner computes it once).
            if let Some(h) = &s.having {
                let _ = sqlparser::ast::visit_expressions(h, |e: &Expr| {
                    if let Expr::Function(f) = e {
                        let name = f.name.to_string();
                        let call = format!("{}{}", name.to_uppercase(), f.args);
                        if let Some(filter) = &f.filter {
                            call_filters.push(format!("{call} FILTER (WHERE {filter})"));
                        }
                        if f.over.is_none()
                            && sql::state::is_aggregate(&name)
                            && !calls.contains(&call)
                        {
                            names.push(accumulator_kind(&name, &call));
                            calls.push(call);
                        }
                    }
                    ControlFlow::<()>::Continue(())
                });
            }
            let group_by = s.group_by.to_string();
            let filters = format!(
                "where {} having {} qualify {}",
                s.selection
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
                s.having.as_ref().map(|e| e.to_string()).unwrap_or_default(),
                s.qualify
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            );
            let from: Vec<String> = s.from.iter().map(|f| f.to_string()).collect();
            let joins: Vec<String> = s
                .from
                .iter()
                .flat_map(|f| f.joins.iter())
                .filter(|j| !matches!(j.relation, TableFactor::UNNEST { .. }))
                .map(|j| join_kind(&j.join_operator).to_string())
                .chain(s.from.iter().skip(1).map(|_| "comma join".to_string()))
                .collect();
            self.1.push(format!("filter {filters}"));
            // What feeds the operators of this SELECT: its sources and `WHERE`. `HAVING` and
            // `QUALIFY` filter after the aggregate (a restore keeps results right, measured); they
            // feed only a ranking of this SELECT, which reads every filter (below).
            let sources = format!(
                "from {} where {}",
                from.join(", "),
                s.selection
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_default()
            );
            // A subquery in `WHERE` (`IN (SELECT …)`, `EXISTS`, a scalar one) is a join the
            // planner adds before this SELECT's aggregate (a semi or anti join, with state of both
            // sides): one added or removed changes the operators (a restore fails, measured).
            if let Some(w) = &s.selection {
                let _ = sqlparser::ast::visit_expressions(w, |e: &Expr| {
                    let kind = match e {
                        Expr::In {
                            target:
                                sqlparser::ast::InTarget::Subquery(_)
                                | sqlparser::ast::InTarget::Table { .. },
                            negated,
                            ..
                        } => Some(if *negated {
                            "anti (not in)"
                        } else {
                            "semi (in)"
                        }),
                        Expr::Exists { negated, .. } => Some(if *negated {
                            "anti (not exists)"
                        } else {
                            "semi (exists)"
                        }),
                        Expr::Subquery(_) => Some("scalar"),
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        self.0.push(SqlOperator {
                            operator: "subquery-join".into(),
                            layout: kind.into(),
                            semantics: format!("{sources} {e}"),
                            shape: None,
                            window: None,
                            counts_rows: false,
                            keys: Vec::new(),
                        });
                    }
                    ControlFlow::<()>::Continue(())
                });
            }
            if !calls.is_empty() || !group_by.is_empty() && group_by != "GROUP BY " {
                self.0.push(SqlOperator {
                    operator: "aggregate".into(),
                    layout: format!("{} keys {}", calls.join(", "), group_by_len(&s.group_by)),
                    semantics: format!("{group_by} {sources} {}", call_filters.join(", ")),
                    shape: Some(format!(
                        "{} keys {}",
                        names.join(", "),
                        group_by_len(&s.group_by)
                    )),
                    window: window_tvf(&from.join(", ")),
                    keys: match &s.group_by {
                        sqlparser::ast::GroupByExpr::Expressions(e, _) => {
                            e.iter().map(|e| e.to_string()).collect()
                        }
                        sqlparser::ast::GroupByExpr::All(_) => Vec::new(),
                    },
                    counts_rows: calls
                        .iter()
                        .any(|c| matches!(c.replace(' ', "").as_str(), "COUNT(*)" | "COUNT(1)")),
                });
            }
            if s.distinct.is_some() {
                self.0.push(SqlOperator {
                    operator: "distinct".into(),
                    layout: "distinct".into(),
                    semantics: sources.clone(),
                    shape: None,
                    window: None,
                    counts_rows: false,
                    keys: Vec::new(),
                });
            }
            for j in &joins {
                self.0.push(SqlOperator {
                    operator: "join".into(),
                    layout: j.clone(),
                    semantics: sources.clone(),
                    shape: None,
                    window: None,
                    counts_rows: false,
                    keys: Vec::new(),
                });
            }
            if !ranking.is_empty() {
                self.0.push(SqlOperator {
                    operator: "over".into(),
                    layout: ranking.join(", "),
                    semantics: format!("over {} {sources}", windows.join(", ")),
                    shape: {
                        over_shape.dedup();
                        Some(over_shape.join(", "))
                    },
                    window: None,
                    counts_rows: false,
                    keys: partition_keys.clone(),
                });
            }
            if let Some(m) = s.from.iter().find_map(|f| match &f.relation {
                TableFactor::MatchRecognize { .. } => Some(f.relation.to_string()),
                _ => None,
            }) {
                // Its state is the pattern's partial matches over kept input rows: a real Flink 2.2
                // restores it under another pattern or other measures (their meaning changes).
                self.0.push(SqlOperator {
                    operator: "match-recognize".into(),
                    layout: "partial matches of input rows".into(),
                    semantics: format!("{m} {sources}"),
                    shape: None,
                    window: None,
                    counts_rows: false,
                    keys: Vec::new(),
                });
            }
            ControlFlow::Continue(())
        }
    }
    // Identifiers read anywhere, and each SELECT's filters (pushed as `filter …`).
    let mut seen = Vec::new();
    for (_, parsed) in sql::parse_units(text) {
        let stmts = parsed.ok()?;
        for st in &stmts {
            if matches!(
                st,
                Statement::Insert(_)
                    | Statement::Query(_)
                    | Statement::CreateTable(_)
                    | Statement::CreateView(_)
            ) {
                let _ = st.visit(&mut Selects(&mut ops, &mut seen));
            }
        }
    }
    let (ctes, seen): (Vec<String>, Vec<String>) =
        seen.into_iter().partition(|s| s.starts_with("cte-"));
    let (filters, columns): (Vec<String>, Vec<String>) =
        seen.into_iter().partition(|s| s.starts_with("filter "));
    let (feeds, projections): (Vec<String>, Vec<String>) =
        ctes.into_iter().partition(|s| s.starts_with("cte-feed "));
    for o in ops.iter_mut() {
        for f in &feeds {
            o.semantics.push_str(&format!(" {f}"));
        }
    }
    // A ranking's range is the filter of the query around it (`WHERE rn <= 3`, Top-N): every
    // filter of the statement feeds what a ranking keeps.
    for o in ops.iter_mut().filter(|o| o.operator == "over") {
        o.semantics
            .push_str(&format!(" around {}", filters.join("; ")));
    }
    // An updating source is normalized first (`ChangelogNormalize`: the last row of each key).
    let state = if updating.is_empty() {
        state
    } else {
        ops.insert(
            0,
            SqlOperator {
                operator: CHANGELOG_NORMALIZE.into(),
                layout: "last row per key".into(),
                semantics: updating.join(", "),
                shape: None,
                window: None,
                counts_rows: false,
                keys: Vec::new(),
            },
        );
        Statefulness::Stateful
    };
    Some((state, ops, columns.into_iter().collect(), projections))
}

/// The operator the offline reading puts for an updating source read (Flink's `ChangelogNormalize`).
const CHANGELOG_NORMALIZE: &str = "changelog-normalize";

/// The window table function calls of a text (`HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND,
/// …)`), whitespace-normalised, in order: the parser's tree keeps not every argument (a
/// `SESSION(TABLE t PARTITION BY k, …)` loses them), so sizes, slides and gaps are read here.
fn window_calls(text: &str) -> Vec<String> {
    let up = text.to_uppercase();
    let mut out = Vec::new();
    for w in WINDOW_TVFS {
        for (i, _) in up.match_indices(&format!("{w}(")) {
            if up[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                continue;
            }
            let mut depth = 0usize;
            let mut end = up.len();
            for (j, c) in up[i + w.len()..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i + w.len() + j + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            out.push((
                i,
                up[i..end].split_whitespace().collect::<Vec<_>>().join(" "),
            ));
        }
    }
    out.sort();
    out.into_iter().map(|(_, c)| c).collect()
}

/// The query hints of a text (`/*+ STATE_TTL('o' = '1d') */`, whitespace-normalised, in order):
/// the parser drops them as comments.
fn hints(text: &str) -> Vec<String> {
    use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};
    Tokenizer::new(&crate::sql::dialect::FlinkDialect, text)
        .tokenize()
        .map(|tokens| {
            tokens
                .into_iter()
                .filter_map(|t| match t {
                    Token::Whitespace(Whitespace::MultiLineComment(c)) if c.starts_with('+') => {
                        Some(c[1..].split_whitespace().collect::<Vec<_>>().join(" "))
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The `STATE_TTL` hints of a text as table (or alias) → retention text, and whether it has other
/// hints (their texts). Flink: `STATE_TTL('orders' = '1d', 'c' = '12h')` sets the retention of
/// the state of the join or aggregate that reads that input
/// (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql/queries/hints/#state-ttl-hints>).
fn state_ttl_hints(text: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut ttl = BTreeMap::new();
    let mut other = Vec::new();
    for h in hints(text) {
        let up = h.to_uppercase();
        let Some(at) = up.find("STATE_TTL") else {
            other.push(h);
            continue;
        };
        let rest = &h[at + "STATE_TTL".len()..];
        let (Some(open), Some(close)) = (rest.find('('), rest.find(')')) else {
            other.push(h);
            continue;
        };
        if open < close {
            for kv in rest[open + 1..close].split(',') {
                if let Some((k, v)) = kv.split_once('=') {
                    let unq = |x: &str| x.trim().trim_matches('\'').to_lowercase();
                    ttl.insert(unq(k), unq(v).replace(' ', ""));
                }
            }
        }
        // Hints beside STATE_TTL in the same comment.
        let (before, after) = (&h[..at], &rest[close + 1..]);
        let others = format!("{before} {after}");
        let others = others.trim_matches(|c: char| c == ',' || c.is_whitespace());
        if !others.is_empty() {
            other.push(others.to_string());
        }
    }
    (ttl, other)
}

/// The offline operators that keep input rows (so the columns they are fed are part of their state).
const SQL_ROW_STORING: &[&str] = &[
    "join",
    "over",
    "match-recognize",
    "distinct",
    "subquery-join",
    CHANGELOG_NORMALIZE,
];

/// The offline verdict from the old and new text of a statement's file, by the SQL front end's
/// reading of their stateful operators: the same operators with the same aggregate calls fed the
/// same way are `state-compatible`; other keys, filters or sources `state-compatible-semantics-
/// changed`; an operator added, removed or with other calls `state-incompatible`. Text the parser
/// cannot read is `unknown`. Cosmetic changes are the caller's to call `unchanged`.
pub fn compare_sql(old: &str, new: &str) -> Assessment {
    compare_sql_in(old, &Surroundings::default(), new, &Surroundings::default())
}

/// What the project knows around a statement that its text does not say: the views it reads and
/// the updating sources it reads (directly or through those views). Flink's planner inlines a view
/// into every query that reads it, so the view's operators, and their state, are the statement's;
/// an updating source (`upsert-kafka`, `'changelog.mode'` `upsert`/`retract`, see
/// [`crate::inventory::reads_as_updating`]) is normalized with state (`ChangelogNormalize`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surroundings {
    /// The `CREATE VIEW` statements of the views read, each whole, a view after the views it
    /// reads.
    pub views: Vec<String>,
    /// The names of the updating sources read.
    pub updating_sources: Vec<String>,
    /// Whether the sinks keep state of their own (the least known of them; [`SinkState::Unknown`]
    /// when not given).
    pub sink_state: SinkState,
}

impl Surroundings {
    /// `sql` preceded by the views' statements (`;`-separated), so that one reading sees them.
    fn around(&self, sql: &str) -> String {
        if self.views.is_empty() {
            return sql.to_string();
        }
        let mut out = String::new();
        for v in &self.views {
            out.push_str(v.trim().trim_end_matches(';'));
            out.push_str(";\n");
        }
        out.push_str(sql);
        out
    }
}

/// [`compare_sql`] of two statements with what the project knows around each ([`Surroundings`]): the
/// views they read compared as part of them, and a statement that reads an updating source holds
/// the normalization's state. The offline reading does not model where the planner puts that
/// normalization against the rest of the query, nor whether a change keeps its operator's identity:
/// a change of a statement that reads an updating source is `unknown` unless a restore fails on
/// other grounds (`--engine local` compares the plans).
pub fn compare_sql_in(
    old: &str,
    old_s: &Surroundings,
    new: &str,
    new_s: &Surroundings,
) -> Assessment {
    let (old_text, new_text) = (old_s.around(old), new_s.around(new));
    let mut a = compare_texts(
        &old_text,
        &old_s.updating_sources,
        &new_text,
        &new_s.updating_sources,
    );
    // Texts equal but for the aliases of their select items compile to the same operators.
    let aliases_only = match (without_aliases(&old_text), without_aliases(&new_text)) {
        (Some(o), Some(n)) => o == n,
        _ => false,
    };
    let reads_updating = !old_s.updating_sources.is_empty() || !new_s.updating_sources.is_empty();
    if reads_updating
        && !aliases_only
        && matches!(
            a.verdict,
            Verdict::StateCompatible | Verdict::StateCompatibleSemanticsChanged
        )
    {
        let mut names: Vec<&String> = old_s
            .updating_sources
            .iter()
            .chain(&new_s.updating_sources)
            .collect();
        names.sort();
        names.dedup();
        a.reasons.push(format!(
            "it reads an updating source ({}): the planner normalizes it with state (ChangelogNormalize), and where that operator sits and whether the change keeps its identity the offline reading does not model (`--engine local` compares the plans)",
            names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", ")
        ));
        a.verdict = Verdict::Unknown;
    }
    // A sink's operator id follows the job graph's shape before it: a sink that keeps state (or
    // may) restores only if that shape stays, which the offline reading knows only of a change of
    // aliases (measured: a `HAVING` or an expression after an aggregate into an upsert-kafka sink is
    // refused, into a blackhole one restores).
    let sink_state =
        if old_s.sink_state == SinkState::Unknown || new_s.sink_state == SinkState::Unknown {
            SinkState::Unknown
        } else if old_s.sink_state == SinkState::Kept || new_s.sink_state == SinkState::Kept {
            SinkState::Kept
        } else {
            SinkState::None
        };
    if sink_state != SinkState::None
        && !aliases_only
        && matches!(
            a.verdict,
            Verdict::StateCompatible | Verdict::StateCompatibleSemanticsChanged
        )
    {
        a.reasons.push(format!(
            "the sink {} state of its own, and its operator id follows the job graph's shape before it, which the offline reading does not know beyond a change of aliases (`--engine local` compares the plans)",
            if sink_state == SinkState::Kept { "keeps" } else { "may keep" }
        ));
        a.verdict = Verdict::Unknown;
    }
    a
}

fn compare_texts(
    old: &str,
    old_updating: &[String],
    new: &str,
    new_updating: &[String],
) -> Assessment {
    let (Some((so, oo, co, po)), Some((sn, on, cn, pn))) = (
        sql_operators(old, old_updating),
        sql_operators(new, new_updating),
    ) else {
        return Assessment {
            verdict: Verdict::Unknown,
            tier: Tier::Offline,
            operators: Vec::new(),
            reasons: vec!["the SQL front end could not read one side exactly (fallback reading): compare with `--engine local`".into()],
        };
    };
    let mut reasons = Vec::new();
    let mut operators = Vec::new();
    let stateless = |s: Statefulness| matches!(s, Statefulness::Stateless | Statefulness::None);
    if stateless(so) && stateless(sn) {
        reasons.push(
            "neither statement has a stateful operator: restart from the old statement's offsets"
                .into(),
        );
        return Assessment {
            verdict: Verdict::Stateless,
            tier: Tier::Offline,
            operators,
            reasons,
        };
    }
    if (!stateless(so) && oo.is_empty()) || (!stateless(sn) && on.is_empty()) {
        return Assessment {
            verdict: Verdict::Unknown,
            tier: Tier::Offline,
            operators,
            reasons: vec!["a stateful operator the offline reading does not model (a UNION branch, a view, a sort): compare with `--engine local`".into()],
        };
    }
    let mut verdict = Verdict::StateCompatible;
    let kinds = |v: &[SqlOperator]| v.iter().map(|o| o.operator.clone()).collect::<Vec<_>>();
    if kinds(&oo) != kinds(&on) || stateless(so) != stateless(sn) {
        verdict = Verdict::StateIncompatible;
        let mut left = oo.clone();
        for o in &on {
            if let Some(p) = left.iter().position(|l| l.operator == o.operator) {
                left.remove(p);
                operators.push(OperatorDiff {
                    operator: o.operator.clone(),
                    change: OperatorChangeKind::Kept,
                    fields: Vec::new(),
                    old: None,
                    new: None,
                });
            } else {
                reasons.push(format!("a stateful operator is added ({})", o.operator));
                operators.push(OperatorDiff {
                    operator: o.operator.clone(),
                    change: OperatorChangeKind::Added,
                    fields: Vec::new(),
                    old: None,
                    new: Some(o.layout.clone()),
                });
            }
        }
        for l in left {
            reasons.push(format!("a stateful operator is removed ({})", l.operator));
            operators.push(OperatorDiff {
                operator: l.operator.clone(),
                change: OperatorChangeKind::Removed,
                fields: Vec::new(),
                old: Some(l.layout.clone()),
                new: None,
            });
        }
        if reasons.is_empty() {
            reasons.push("the stateful operators differ in order or kind".into());
        }
        return Assessment {
            verdict,
            tier: Tier::Offline,
            operators,
            reasons,
        };
    }
    let mut unknown_arguments = false;
    for (o, n) in oo.iter().zip(&on) {
        let mut d = OperatorDiff {
            operator: n.operator.clone(),
            change: OperatorChangeKind::Kept,
            fields: Vec::new(),
            old: None,
            new: None,
        };
        let sliced = |w: Option<&str>| matches!(w, Some("TUMBLE" | "CUMULATE"));
        if o.window != n.window
            && ((o.window == Some("HOP") && sliced(n.window))
                || (sliced(o.window) && n.window == Some("HOP")))
            && !o.counts_rows
            && !n.counts_rows
        {
            // The planner gives a hopping window's aggregate a `COUNT(*)` accumulator of its own
            // (`count1$`, to know a shared slice is empty) that tumbling and cumulating windows
            // have not: StateMigrationException both ways (measured on Flink 2.2).
            d.change = OperatorChangeKind::Changed;
            d.fields = vec!["window".into()];
            d.old = o.window.map(str::to_string);
            d.new = n.window.map(str::to_string);
            reasons.push(format!(
                "{}: a {} window becomes a {} one: the planner keeps a row count for hopping windows only, so the accumulators change shape: a restore fails",
                n.operator,
                o.window.unwrap_or_default(),
                n.window.unwrap_or_default()
            ));
            verdict = Verdict::StateIncompatible;
        } else if o.window != n.window {
            d.change = OperatorChangeKind::Changed;
            d.fields = vec!["window".into()];
            d.old = o.window.map(str::to_string);
            d.new = n.window.map(str::to_string);
            reasons.push(format!(
                "{}: the window table function changes ({} → {}): whether the accumulators keep their shape depends on what the planner adds, which the offline reading does not know (`--engine local` compares them)",
                n.operator,
                o.window.unwrap_or("none"),
                n.window.unwrap_or("none")
            ));
            unknown_arguments = true;
        } else if o.layout != n.layout && o.shape.is_some() && o.shape == n.shape {
            d.change = OperatorChangeKind::Changed;
            d.fields = vec!["arguments".into()];
            d.old = Some(o.layout.clone());
            d.new = Some(n.layout.clone());
            reasons.push(format!(
                "{}: aggregate calls that keep the same kinds of accumulators ({} → {}): the state restores only if each accumulator keeps its type, which the offline reading does not know (`--engine local` compares the accumulator types)",
                n.operator, o.layout, n.layout
            ));
            unknown_arguments = true;
        } else if o.layout != n.layout {
            d.change = OperatorChangeKind::Changed;
            d.fields = vec!["state".into()];
            d.old = Some(o.layout.clone());
            d.new = Some(n.layout.clone());
            reasons.push(format!(
                "{}: its state changes shape ({} → {}): a restore fails",
                n.operator, o.layout, n.layout
            ));
            verdict = Verdict::StateIncompatible;
        } else if o.keys != n.keys {
            d.change = OperatorChangeKind::Changed;
            d.fields = vec!["keys".into()];
            d.old = Some(o.keys.join(", "));
            d.new = Some(n.keys.join(", "));
            reasons.push(format!(
                "{}: it is keyed by other expressions ({} → {}): the state restores only if the key keeps its type (another type fails: StateMigrationException), which the offline reading does not know (`--engine local` compares the key types)",
                n.operator,
                o.keys.join(", "),
                n.keys.join(", ")
            ));
            unknown_arguments = true;
        } else if o.semantics != n.semantics {
            d.change = OperatorChangeKind::SemanticsChanged;
            d.fields = vec!["input".into()];
            reasons.push(format!(
                "{}: its keys, filters or sources changed: the restored state was computed under other semantics",
                n.operator
            ));
            if verdict == Verdict::StateCompatible {
                verdict = Verdict::StateCompatibleSemanticsChanged;
            }
        }
        operators.push(d);
    }
    // A state TTL set, changed or removed: Flink 2.x migrates the state values into or out of
    // their TTL wrapping on restore (measured on Flink 2.2), but the state was kept (and expired)
    // under the old retention. Other hints: not modelled.
    let ((ttl_o, other_o), (ttl_n, other_n)) = (state_ttl_hints(old), state_ttl_hints(new));
    if ttl_o != ttl_n && verdict != Verdict::StateIncompatible {
        reasons.push(format!(
            "a STATE_TTL retention is set, changed or removed ({ttl_o:?} → {ttl_n:?}): the state restores, but it was kept (and expired) under the old retention"
        ));
        operators.push(OperatorDiff {
            operator: "state-ttl".into(),
            change: OperatorChangeKind::SemanticsChanged,
            fields: vec!["ttl".into()],
            old: Some(format!("{ttl_o:?}")),
            new: Some(format!("{ttl_n:?}")),
        });
        if verdict == Verdict::StateCompatible {
            verdict = Verdict::StateCompatibleSemanticsChanged;
        }
    }
    if verdict == Verdict::StateCompatible && window_calls(old) != window_calls(new) {
        reasons.push(format!(
            "a window's size, slide, step or gap changes ({:?} → {:?}): the state restores, but its windows were cut another way",
            window_calls(old),
            window_calls(new)
        ));
        verdict = Verdict::StateCompatibleSemanticsChanged;
    }
    if po != pn && verdict != Verdict::StateIncompatible {
        reasons.push(format!(
            "a CTE's projection changes ({po:?} → {pn:?}): its columns feed the state only if the query reads them (the planner prunes the others), which the offline reading does not follow (`--engine local` compares the plans)"
        ));
        unknown_arguments = true;
    }
    if other_o != other_n && verdict != Verdict::StateIncompatible {
        reasons.push(format!(
            "query hints change ({other_o:?} → {other_n:?}), which the offline reading does not model (`--engine local` compares the plans)"
        ));
        unknown_arguments = true;
    }
    if unknown_arguments && verdict != Verdict::StateIncompatible {
        verdict = Verdict::Unknown;
    }
    // The rows a join, ranking or pattern keeps are the columns it is fed, which the planner prunes to
    // those the statement reads: reading other columns may change them.
    if co != cn
        && verdict != Verdict::StateIncompatible
        && let Some(op) = on
            .iter()
            .find(|o| SQL_ROW_STORING.contains(&o.operator.as_str()))
    {
        let added: Vec<&String> = cn.difference(&co).collect();
        let removed: Vec<&String> = co.difference(&cn).collect();
        reasons.push(format!(
            "{}: it keeps input rows, and the statement reads other columns (added {added:?}, removed {removed:?}): the kept rows may change shape, which the offline reading cannot tell (`--engine local` compares them)",
            op.operator
        ));
        verdict = Verdict::Unknown;
    }
    if verdict == Verdict::StateCompatible {
        reasons.push("the same stateful operators with the same calls, keys and inputs (offline reading: key types are not compared; `--engine local` checks them)".into());
    }
    Assessment {
        verdict,
        tier: Tier::Offline,
        operators,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured rules were measured into `blackhole` sinks, which keep no state.
    const BLACKHOLE: Surroundings = Surroundings {
        views: Vec::new(),
        updating_sources: Vec::new(),
        sink_state: SinkState::None,
    };

    fn compare_blackhole(old: &str, new: &str) -> Assessment {
        compare_sql_in(old, &BLACKHOLE, new, &BLACKHOLE)
    }

    fn compare_blackhole_in(
        old: &str,
        old_s: &Surroundings,
        new: &str,
        new_s: &Surroundings,
    ) -> Assessment {
        let sunk = |s: &Surroundings| Surroundings {
            sink_state: SinkState::None,
            ..s.clone()
        };
        compare_sql_in(old, &sunk(old_s), new, &sunk(new_s))
    }

    #[test]
    fn identifiers_are_blanked_in_types() {
        assert_eq!(
            blank_identifiers("ROW<`a` INT, `b``c` STRING>"),
            "ROW<`_` INT, `_` STRING>"
        );
        assert_eq!(
            row_field_types(
                "ROW<`_` VARCHAR(2147483647), `_` DECIMAL(10, 2), `_` ROW<`_` INT, `_` INT>>"
            ),
            vec![
                "VARCHAR(2147483647)",
                "DECIMAL(10, 2)",
                "ROW<`_` INT, `_` INT>"
            ]
        );
        assert_eq!(
            operator_of("stream-exec-group-aggregate_1"),
            "group-aggregate"
        );
    }

    /// A named window (`OVER w … WINDOW w AS (…)`) is read as its definition: its frame changed is
    /// what the same change inline is (measured inline: `over_rows_range`, `over_rows_to_range`),
    /// whichever way the window is written on each side.
    #[test]
    fn named_windows_are_read_as_their_definitions() {
        let inline = |frame: &str| {
            format!(
                "INSERT INTO snk SELECT id, SUM(amount) OVER (PARTITION BY store_id ORDER BY ts {frame}) FROM src;"
            )
        };
        let named = |frame: &str| {
            format!(
                "INSERT INTO snk SELECT id, SUM(amount) OVER w FROM src WINDOW w AS (PARTITION BY store_id ORDER BY ts {frame});"
            )
        };
        let chained = |frame: &str| {
            format!(
                "INSERT INTO snk SELECT id, SUM(amount) OVER w2 FROM src WINDOW w AS (PARTITION BY store_id ORDER BY ts {frame}), w2 AS w;"
            )
        };
        let frames = [
            "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW",
            "ROWS BETWEEN 5 PRECEDING AND CURRENT ROW",
            "RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW",
        ];
        for form in [&inline as &dyn Fn(&str) -> String, &named, &chained] {
            for (i, a) in frames.iter().enumerate() {
                for (j, b) in frames.iter().enumerate() {
                    let got = compare_blackhole(&form(a), &form(b)).verdict;
                    let want = if i == j {
                        Verdict::StateCompatible
                    } else {
                        Verdict::StateCompatibleSemanticsChanged
                    };
                    assert_eq!(got, want, "{} → {}", form(a), form(b));
                    // Written inline on one side and named on the other: the same reading.
                    assert_eq!(
                        compare_blackhole(&inline(a), &form(b)).verdict,
                        want,
                        "{a} → {b}"
                    );
                }
            }
        }
        // Other partition keys in the definition: the state's key changes.
        assert_eq!(
            compare_blackhole(
                &named(frames[0]),
                &named(frames[0]).replace("PARTITION BY store_id", "PARTITION BY store_id, city")
            )
            .verdict,
            Verdict::StateIncompatible
        );
    }

    /// A view's query runs in the job of every statement that reads it: a statement reading a
    /// window aggregate through a view (or a view of a view) is stateful, and a change of its
    /// filter, or of the view's, is judged as the same SQL inline would be.
    #[test]
    fn views_are_read_as_part_of_the_statements_that_read_them() {
        let view = "CREATE VIEW v_win AS SELECT store_id, window_start, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY store_id, window_start, window_end;";
        let over = "CREATE VIEW v_top AS SELECT * FROM v_win WHERE total > 0;";
        let with = |views: &[&str]| Surroundings {
            views: views.iter().map(|v| v.to_string()).collect(),
            ..Surroundings::default()
        };
        let old = "INSERT INTO snk SELECT store_id, total FROM v_top WHERE total > 1;";
        let new = "INSERT INTO snk SELECT store_id, total FROM v_top WHERE total > 5;";
        // Without the views the texts are stateless filters.
        assert_eq!(compare_blackhole(old, new).verdict, Verdict::Stateless);
        assert_eq!(compare_sql(old, new).verdict, Verdict::Stateless);
        let both = with(&[view, over]);
        let a = compare_blackhole_in(old, &both, new, &both);
        assert_eq!(a.verdict, Verdict::StateCompatible, "{a:#?}");
        // The view's window changed: its state was cut another way.
        let wider = with(&[&view.replace("'10' SECOND", "'20' SECOND"), over]);
        assert_eq!(
            compare_blackhole_in(old, &both, old, &wider).verdict,
            Verdict::StateCompatibleSemanticsChanged
        );
        // A call added to the view's aggregate: its accumulators change.
        let counted = with(&[
            &view.replace("AS total FROM", "AS total, COUNT(*) AS n FROM"),
            over,
        ]);
        assert_eq!(
            compare_blackhole_in(old, &both, old, &counted).verdict,
            Verdict::StateIncompatible
        );
        // Reading the table behind the view instead: the aggregate is gone.
        assert_eq!(
            compare_blackhole_in(
                old,
                &both,
                "INSERT INTO snk SELECT store_id, amount FROM src;",
                &Surroundings::default()
            )
            .verdict,
            Verdict::StateIncompatible
        );
    }

    /// A statement that reads an updating source holds the normalization's state: never
    /// `stateless`; a change that keeps everything else is `unknown` offline (where the planner puts
    /// the normalization is not modelled), and one that fails a restore on other grounds stays
    /// `state-incompatible`.
    #[test]
    fn a_statement_reading_an_updating_source_is_never_stateless_offline() {
        let up = Surroundings {
            updating_sources: vec!["dim".into()],
            ..Surroundings::default()
        };
        let f =
            |bound: u32| format!("INSERT INTO snk SELECT id, name FROM dim WHERE id > {bound};");
        assert_eq!(compare_blackhole(&f(1), &f(5)).verdict, Verdict::Stateless);
        let a = compare_blackhole_in(&f(1), &up, &f(5), &up);
        assert_eq!(a.verdict, Verdict::Unknown, "{a:#?}");
        assert!(
            a.reasons.iter().any(|r| r.contains("ChangelogNormalize")),
            "{a:#?}"
        );
        // Only the aliases of its output columns changed: the same operators.
        assert_eq!(
            compare_blackhole_in(
                &f(1),
                &up,
                &f(1).replace("name FROM", "name AS n FROM"),
                &up
            )
            .verdict,
            Verdict::StateCompatible
        );
        // Reading it no more (the source became append-only, or another one is read).
        assert_eq!(
            compare_blackhole_in(&f(1), &up, &f(5), &Surroundings::default()).verdict,
            Verdict::StateIncompatible
        );
        // An aggregate added after it fails whatever the normalization does.
        assert_eq!(
            compare_blackhole_in(
                &f(1),
                &up,
                "INSERT INTO snk SELECT id, COUNT(*) FROM dim GROUP BY id;",
                &up
            )
            .verdict,
            Verdict::StateIncompatible
        );
    }

    /// A subquery added to a `WHERE` is a join before the aggregate (semi or anti join, state of
    /// both sides): the operators change, as a real restore shows (`in_subquery_before_agg`).
    #[test]
    fn a_subquery_join_added_before_an_aggregate_changes_the_operators() {
        let base = "INSERT INTO snk SELECT store_id, COUNT(*) FROM src GROUP BY store_id;";
        for cond in [
            "id IN (SELECT order_id FROM pay)",
            "id NOT IN (SELECT order_id FROM pay)",
            "EXISTS (SELECT 1 FROM pay WHERE pay.order_id = src.id)",
            "amount > (SELECT MAX(amt) FROM pay)",
        ] {
            let new = base.replace(" GROUP BY", &format!(" WHERE {cond} GROUP BY"));
            assert_eq!(
                compare_blackhole(base, &new).verdict,
                Verdict::StateIncompatible,
                "{new}"
            );
        }
        // The same subquery on both sides with another bound: the join stays, its input changed.
        let with = |b: u32| {
            base.replace(
                " GROUP BY",
                &format!(" WHERE id IN (SELECT order_id FROM pay WHERE amt > {b}) GROUP BY"),
            )
        };
        assert_ne!(
            compare_blackhole(&with(1), &with(2)).verdict,
            Verdict::StateCompatible
        );
    }

    /// A sink that keeps state (or may) restores only if the job graph before it keeps its shape
    /// (measured: a `HAVING` or an expression after an aggregate into an `upsert-kafka` sink is
    /// refused): offline, only a change of aliases is known to keep it.
    #[test]
    fn a_stateful_sink_keeps_only_alias_changes_compatible_offline() {
        let base = "INSERT INTO snk SELECT store_id, COUNT(*) FROM src GROUP BY store_id;";
        let alias =
            "INSERT INTO snk SELECT store_id AS s, COUNT(*) AS n FROM src GROUP BY store_id;";
        let having = "INSERT INTO snk SELECT store_id, COUNT(*) FROM src GROUP BY store_id HAVING COUNT(*) > 0;";
        let filter =
            "INSERT INTO snk SELECT store_id, COUNT(*) FROM src WHERE id > 1 GROUP BY store_id;";
        for (state, alias_v, having_v, filter_v) in [
            (
                SinkState::None,
                Verdict::StateCompatible,
                Verdict::StateCompatible,
                Verdict::StateCompatibleSemanticsChanged,
            ),
            (
                SinkState::Kept,
                Verdict::StateCompatible,
                Verdict::Unknown,
                Verdict::Unknown,
            ),
            (
                SinkState::Unknown,
                Verdict::StateCompatible,
                Verdict::Unknown,
                Verdict::Unknown,
            ),
        ] {
            let s = Surroundings {
                sink_state: state,
                ..Surroundings::default()
            };
            let v = |new: &str| compare_sql_in(base, &s, new, &s).verdict;
            assert_eq!(v(alias), alias_v, "{state:?}");
            assert_eq!(v(having), having_v, "{state:?}");
            assert_eq!(v(filter), filter_v, "{state:?}");
            // What fails a restore on its own stays state-incompatible.
            assert_eq!(
                v("INSERT INTO snk SELECT store_id, COUNT(*), SUM(id) FROM src GROUP BY store_id;"),
                Verdict::StateIncompatible
            );
        }
        assert_eq!(SinkState::of(Some("upsert-kafka")), SinkState::Kept);
        assert_eq!(SinkState::of(Some("Blackhole")), SinkState::None);
        assert_eq!(SinkState::of(Some("jdbc")), SinkState::Unknown);
        assert_eq!(SinkState::of(None), SinkState::Unknown);
    }

    #[test]
    fn offline_reading_of_the_measured_changes() {
        let base = "INSERT INTO snk SELECT store_id, SUM(amount) FROM src GROUP BY store_id;";
        let v = |new: &str| compare_blackhole(base, new).verdict;
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id AS s, SUM(amount) AS total FROM src GROUP BY store_id;"
            ),
            Verdict::StateCompatible
        );
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id, SUM(amount) FROM src WHERE amount > 0 GROUP BY store_id;"
            ),
            Verdict::StateCompatibleSemanticsChanged
        );
        // Another grouping key: the restore needs the same key type, which the text does not say.
        assert_eq!(
            v("INSERT INTO snk SELECT city, SUM(amount) FROM src GROUP BY city;"),
            Verdict::Unknown
        );
        // Another number of grouping keys: another key type.
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id, city, SUM(amount) FROM src GROUP BY store_id, city;"
            ),
            Verdict::StateIncompatible
        );
        // A filter after the aggregate keeps its state and its results.
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id, SUM(amount) FROM src GROUP BY store_id HAVING SUM(amount) > 10;"
            ),
            Verdict::StateCompatible
        );
        // The same call twice is one accumulator.
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id, SUM(amount), SUM(amount) * 2 FROM src GROUP BY store_id;"
            ),
            Verdict::StateCompatible
        );
        // An aggregate call only HAVING reads is state all the same.
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id, SUM(amount) FROM src GROUP BY store_id HAVING COUNT(*) > 5;"
            ),
            Verdict::StateIncompatible
        );
        // A STATE_TTL hint set (the values are migrated into their TTL wrapping) or changed.
        assert_eq!(
            v(
                "INSERT INTO snk SELECT /*+ STATE_TTL('src' = '1h') */ store_id, SUM(amount) FROM src GROUP BY store_id;"
            ),
            Verdict::StateCompatibleSemanticsChanged
        );
        assert_eq!(
            compare_blackhole(
                "INSERT INTO snk SELECT /*+ STATE_TTL('src' = '1h') */ store_id, SUM(amount) FROM src GROUP BY store_id;",
                "INSERT INTO snk SELECT /*+ STATE_TTL('src'='2h') */ store_id, SUM(amount) FROM src GROUP BY store_id;"
            )
            .verdict,
            Verdict::StateCompatibleSemanticsChanged
        );
        // A tumbling window turned into a hopping one: the planner adds a row count.
        let win = |f: &str| {
            format!(
                "INSERT INTO snk SELECT store_id, window_start, SUM(amount) FROM TABLE({f}(TABLE src, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY store_id, window_start, window_end;"
            )
        };
        assert_eq!(
            compare_blackhole(&win("TUMBLE"), &win("HOP")).verdict,
            Verdict::StateIncompatible
        );
        assert_eq!(
            compare_blackhole(&win("HOP"), &win("CUMULATE")).verdict,
            Verdict::StateIncompatible
        );
        assert_eq!(
            compare_blackhole(&win("TUMBLE"), &win("CUMULATE")).verdict,
            Verdict::Unknown
        );
        // A session window's gap (the parser's tree drops a SESSION's arguments).
        let session = |gap: &str| {
            format!(
                "INSERT INTO snk SELECT store_id, window_start, SUM(amount) FROM TABLE(SESSION(TABLE src PARTITION BY store_id, DESCRIPTOR(ts), INTERVAL '{gap}' SECOND)) GROUP BY store_id, window_start, window_end;"
            )
        };
        assert_eq!(
            compare_blackhole(&session("5"), &session("10")).verdict,
            Verdict::StateCompatibleSemanticsChanged
        );
        assert_eq!(
            compare_blackhole(
                &session("5"),
                &session("5").replace(", DESCRIPTOR", ",\n    DESCRIPTOR")
            )
            .verdict,
            Verdict::StateCompatible
        );
        // A CTE's filter feeds the aggregate; a CTE's projection may be pruned.
        let cte = |body: &str| {
            format!(
                "INSERT INTO snk WITH o AS ({body}) SELECT store_id, SUM(amount) FROM o GROUP BY store_id;"
            )
        };
        assert_eq!(
            compare_blackhole(
                &cte("SELECT store_id, amount FROM src"),
                &cte("SELECT store_id, amount FROM src WHERE amount > 1")
            )
            .verdict,
            Verdict::StateCompatibleSemanticsChanged
        );
        assert_eq!(
            compare_blackhole(
                &cte("SELECT store_id, amount, city FROM src"),
                &cte("SELECT store_id, amount, UPPER(city) AS city FROM src")
            )
            .verdict,
            Verdict::Unknown
        );
        // A deduplication partitioned by more keys: another key type.
        let dedup = |keys: &str| {
            format!(
                "INSERT INTO snk SELECT id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {keys} ORDER BY ts) AS rn FROM src) WHERE rn = 1;"
            )
        };
        assert_eq!(
            compare_blackhole(&dedup("id"), &dedup("id, store_id")).verdict,
            Verdict::StateIncompatible
        );
        assert_eq!(
            v("INSERT INTO snk SELECT store_id, SUM(amount), COUNT(*) FROM src GROUP BY store_id;"),
            Verdict::StateIncompatible
        );
        // SUM → MAX keeps one accumulator field: whether its type stays (a BIGINT) or not (a
        // DECIMAL: the sum is a DECIMAL(38, s)) is not in the text.
        assert_eq!(
            v("INSERT INTO snk SELECT store_id, MAX(amount) FROM src GROUP BY store_id;"),
            Verdict::Unknown
        );
        assert_eq!(
            v(
                "INSERT INTO snk SELECT store_id, COUNT(DISTINCT amount) FROM src GROUP BY store_id;"
            ),
            Verdict::StateIncompatible
        );
        assert_eq!(
            v(
                "INSERT INTO snk SELECT s.store_id, SUM(s.amount) FROM src s JOIN stores t ON s.store_id = t.store_id GROUP BY s.store_id;"
            ),
            Verdict::StateIncompatible
        );
        assert_eq!(
            compare_blackhole(
                "INSERT INTO o SELECT a, b FROM s;",
                "INSERT INTO o SELECT a, b * 2 FROM s WHERE b > 1;"
            )
            .verdict,
            Verdict::Stateless
        );
        assert_eq!(
            compare_blackhole("INSERT INTO o SELECT a, b FROM s;", base).verdict,
            Verdict::StateIncompatible
        );
        // A comma join is a join.
        assert_eq!(
            v(
                "INSERT INTO snk SELECT s.store_id, SUM(s.amount) FROM src s, stores t WHERE s.store_id = t.store_id GROUP BY s.store_id;"
            ),
            Verdict::StateIncompatible
        );
        // A stateful operator the reading does not model is not called compatible.
        assert!(
            compare_blackhole(
                "INSERT INTO o SELECT a FROM s UNION ALL SELECT a FROM (SELECT a, COUNT(*) AS n FROM t GROUP BY a);",
                "INSERT INTO o SELECT a FROM s UNION ALL SELECT a FROM (SELECT a, MAX(b) AS n FROM t GROUP BY a);"
            )
            .verdict
            .needs_new_version()
        );
    }
}
