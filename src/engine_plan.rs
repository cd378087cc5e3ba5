//! What the engine's plan of a statement says about its sinks: the changelog each sink receives
//! (append-only, upsert or retract, as `+I/-U/+U/-D` kinds) and the upsert key of that changelog.
//!
//! Two readings, one per target:
//! - the compiled plan of Apache Flink (`COMPILE PLAN '<file>' FOR <INSERT …>`, the JSON of
//!   `org.apache.flink.table.planner.plan.nodes.exec.stream.StreamExecSink`): each
//!   `stream-exec-sink_*` node carries `inputChangelogMode` (`INSERT`, `UPDATE_BEFORE`,
//!   `UPDATE_AFTER`, `DELETE`), `inputUpsertKey` (indexes into the sink's input row) and the sink
//!   table's resolved schema (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/overview/>);
//! - the text of Confluent Cloud's `EXPLAIN` (<https://docs.confluent.io/cloud/current/flink/reference/statements/explain.html>):
//!   its `== Physical Details ==` section lists `[N] StreamSink` with `Table:`, `Changelog mode:`
//!   (`append`, `upsert`, `retract`; left out when append-only) and `Upsert key:` lines.

use serde::Serialize;
use serde_json::Value;

/// How a changelog encodes its changes (Flink's `ChangelogMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangelogMode {
    /// Only `+I`.
    AppendOnly,
    /// Updates as `+U` under a key (no `-U`); may carry `-D`.
    Upsert,
    /// Updates as `-U` then `+U`; may carry `-D`.
    Retract,
}

impl ChangelogMode {
    /// The mode of a set of row kinds: any `-U` is retract, any other update or delete upsert,
    /// only `+I` append-only.
    pub fn of_kinds(kinds: &[RowKind]) -> ChangelogMode {
        if kinds.contains(&RowKind::UpdateBefore) {
            ChangelogMode::Retract
        } else if kinds.iter().any(|k| *k != RowKind::Insert) {
            ChangelogMode::Upsert
        } else {
            ChangelogMode::AppendOnly
        }
    }
}

impl std::fmt::Display for ChangelogMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChangelogMode::AppendOnly => "append-only",
            ChangelogMode::Upsert => "upsert",
            ChangelogMode::Retract => "retract",
        })
    }
}

/// A change's kind (Flink's `RowKind`), serialised as its short form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum RowKind {
    #[serde(rename = "+I")]
    Insert,
    #[serde(rename = "-U")]
    UpdateBefore,
    #[serde(rename = "+U")]
    UpdateAfter,
    #[serde(rename = "-D")]
    Delete,
}

impl RowKind {
    /// `INSERT`, `UPDATE_BEFORE`, `UPDATE_AFTER`, `DELETE` (the compiled plan's spelling), or the
    /// short forms `I`, `UB`, `UA`, `D` (`EXPLAIN CHANGELOG_MODE`'s).
    pub fn parse(s: &str) -> Option<RowKind> {
        match s.trim() {
            "INSERT" | "I" => Some(RowKind::Insert),
            "UPDATE_BEFORE" | "UB" => Some(RowKind::UpdateBefore),
            "UPDATE_AFTER" | "UA" => Some(RowKind::UpdateAfter),
            "DELETE" | "D" => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// `+I`, `-U`, `+U`, `-D`.
    pub fn short(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }
}

/// The changelog one sink of a statement receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SinkChangelog {
    /// The sink table as the engine names it (`default_catalog.default_database.t`, or
    /// `` `env`.`cluster`.`t` `` on Confluent Cloud), identifier quotes removed.
    pub table: String,
    pub mode: ChangelogMode,
    /// The kinds the sink receives; empty when the engine names only the mode (Confluent Cloud).
    pub kinds: Vec<RowKind>,
    /// The upsert key of the changelog (column names of the sink table); `None` when it has none.
    pub upsert_key: Option<Vec<String>>,
    /// The sink table's declared primary key, when the plan shows it.
    pub primary_key: Option<Vec<String>>,
}

impl SinkChangelog {
    /// The last part of [`SinkChangelog::table`] (`t`).
    pub fn table_name(&self) -> &str {
        self.table.rsplit('.').next().unwrap_or(&self.table)
    }
}

/// The sinks of a compiled plan (Flink's `COMPILE PLAN` JSON), in node order.
///
/// Errors: the JSON is not a compiled plan (no `nodes` list).
pub fn sinks_of_compiled_plan(plan: &Value) -> Result<Vec<SinkChangelog>, String> {
    let nodes = plan
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or("not a compiled plan: no `nodes` list")?;
    let mut out = Vec::new();
    for n in nodes {
        let kind = n.get("type").and_then(Value::as_str).unwrap_or("");
        if !kind.starts_with("stream-exec-sink") && !kind.starts_with("batch-exec-sink") {
            continue;
        }
        let table_spec = n.pointer("/dynamicTableSink/table");
        let table = table_spec
            .and_then(|t| t.get("identifier"))
            .and_then(Value::as_str)
            .map(unquote)
            .unwrap_or_default();
        let schema = table_spec.and_then(|t| t.pointer("/resolvedTable/schema"));
        let columns: Vec<String> = schema
            .and_then(|s| s.get("columns"))
            .and_then(Value::as_array)
            .map(|cols| {
                cols.iter()
                    .filter_map(|c| c.get("name").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let primary_key = schema
            .and_then(|s| s.pointer("/primaryKey/columns"))
            .and_then(Value::as_array)
            .map(|cols| {
                cols.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            });
        let mut kinds: Vec<RowKind> = n
            .get("inputChangelogMode")
            .and_then(Value::as_array)
            .map(|ks| {
                ks.iter()
                    .filter_map(Value::as_str)
                    .filter_map(RowKind::parse)
                    .collect()
            })
            .unwrap_or_else(|| vec![RowKind::Insert]);
        kinds.sort();
        kinds.dedup();
        let upsert_key = n
            .get("inputUpsertKey")
            .and_then(Value::as_array)
            .filter(|k| !k.is_empty())
            .map(|idx| {
                idx.iter()
                    .map(|i| {
                        i.as_u64()
                            .and_then(|i| columns.get(i as usize).cloned())
                            .unwrap_or_else(|| format!("#{i}"))
                    })
                    .collect()
            });
        out.push(SinkChangelog {
            table,
            mode: ChangelogMode::of_kinds(&kinds),
            kinds,
            upsert_key,
            primary_key,
        });
    }
    Ok(out)
}

/// The sinks of Confluent Cloud's `EXPLAIN` text, from its `== Physical Details ==` section: each
/// `[N] StreamSink` block's `Table:`, `Changelog mode:` (absent: append-only), `Upsert key:` and
/// `Primary key:` lines.
pub fn sinks_of_confluent_explain(text: &str) -> Vec<SinkChangelog> {
    let details = match text.find("== Physical Details ==") {
        Some(i) => &text[i..],
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut current: Option<SinkChangelog> = None;
    for line in details.lines().map(str::trim) {
        if line.starts_with('[') {
            out.extend(current.take());
            let operator = line.split_once(']').map(|(_, o)| o.trim()).unwrap_or("");
            if operator.ends_with("Sink") {
                current = Some(SinkChangelog {
                    table: String::new(),
                    mode: ChangelogMode::AppendOnly,
                    kinds: Vec::new(),
                    upsert_key: None,
                    primary_key: None,
                });
            }
            continue;
        }
        let Some(sink) = current.as_mut() else {
            continue;
        };
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "table" => sink.table = unquote(value),
            "changelog mode" => {
                sink.mode = match value.to_ascii_lowercase().as_str() {
                    "retract" => ChangelogMode::Retract,
                    "upsert" => ChangelogMode::Upsert,
                    _ => ChangelogMode::AppendOnly,
                }
            }
            "upsert key" => sink.upsert_key = Some(key_list(value)),
            "primary key" => sink.primary_key = Some(key_list(value)),
            _ => {}
        }
    }
    out.extend(current);
    out
}

/// `(a, b)` → `[a, b]`, identifier quotes removed.
fn key_list(s: &str) -> Vec<String> {
    s.trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(|c| c.trim().trim_matches('`').to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// `` `a`.`b`.`c` `` → `a.b.c`.
fn unquote(s: &str) -> String {
    s.replace('`', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_follows_the_kinds() {
        use RowKind::*;
        assert_eq!(
            ChangelogMode::of_kinds(&[Insert]),
            ChangelogMode::AppendOnly
        );
        assert_eq!(
            ChangelogMode::of_kinds(&[Insert, UpdateAfter]),
            ChangelogMode::Upsert
        );
        assert_eq!(
            ChangelogMode::of_kinds(&[Insert, UpdateAfter, Delete]),
            ChangelogMode::Upsert
        );
        assert_eq!(
            ChangelogMode::of_kinds(&[Insert, UpdateBefore, UpdateAfter, Delete]),
            ChangelogMode::Retract
        );
    }

    #[test]
    fn a_compiled_plan_names_the_sink_its_kinds_and_its_upsert_key() {
        let plan: Value =
            serde_json::from_str(include_str!("../tests/data/upgrade/plans/sum.json")).unwrap();
        let sinks = sinks_of_compiled_plan(&plan).unwrap();
        assert_eq!(
            sinks,
            vec![SinkChangelog {
                table: "default_catalog.default_database.snk".into(),
                mode: ChangelogMode::Upsert,
                kinds: vec![RowKind::Insert, RowKind::UpdateAfter],
                upsert_key: Some(vec!["store_id".into()]),
                primary_key: Some(vec!["store_id".into()]),
            }]
        );
        assert_eq!(sinks[0].table_name(), "snk");
        assert!(sinks_of_compiled_plan(&serde_json::json!({"x": 1})).is_err());
    }

    #[test]
    fn confluent_explain_details_give_each_sink() {
        let text = "== Physical Plan ==\n\nStreamSink [5]\n  +- StreamGroupAggregate [4]\n\n== Physical Details ==\n\n[1] StreamTableSourceScan\nTable: `env`.`cluster`.`orders`\nPrimary key: (order_id)\nChangelog mode: append\n\n[4] StreamGroupAggregate\nChangelog mode: retract\nUpsert key: (customer_id)\n\n[5] StreamSink\nTable: `env`.`cluster`.`totals`\nPrimary key: (`customer_id`)\nChangelog mode: upsert\nUpsert key: (`customer_id`)\nState size: low\n\n[7] StreamSink\nTable: `env`.`cluster`.`audit`\n";
        let sinks = sinks_of_confluent_explain(text);
        assert_eq!(sinks.len(), 2);
        assert_eq!(sinks[0].table, "env.cluster.totals");
        assert_eq!(sinks[0].mode, ChangelogMode::Upsert);
        assert_eq!(sinks[0].upsert_key, Some(vec!["customer_id".to_string()]));
        assert_eq!(sinks[0].primary_key, Some(vec!["customer_id".to_string()]));
        assert_eq!(sinks[1].table_name(), "audit");
        assert_eq!(sinks[1].mode, ChangelogMode::AppendOnly);
        assert_eq!(sinks[1].upsert_key, None);
        assert!(sinks_of_confluent_explain("no details").is_empty());
    }
}
