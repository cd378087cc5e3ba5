//! The changelog compressor: folds a stream of `+I`/`-U`/`+U`/`-D` rows into the snapshot they stand
//! for (Flink's dynamic tables and their changelog,
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/dynamic_tables/>,
//! folded as Confluent's Python driver `confluent-sql` does,
//! <https://pypi.org/project/confluent-sql/>).
//!
//! - **Keyed** (an upsert key is known: Confluent's `status.traits.upsert_columns`, or the table's
//!   primary key for a preview): `+I`/`+U` put the row under its key, `-D` removes the key and `-U`
//!   changes nothing. Under Flink's upsert semantics an update-before carries no information when
//!   the result is keyed: an upsert sink drops it and a key leaves the result only on `-D`
//!   (<https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/concepts/dynamic_tables/#table-to-stream-conversion>),
//!   as Confluent's `confluent-sql` driver's changelog compressor does. So a read that stops
//!   between a `-U` and its `+U` still holds the key.
//! - **Multiset** (no key): `+I`/`+U` add one copy of the row, `-U`/`-D` remove one equal copy.
//!
//! A retraction of a row (or key) that is not there is kept as an [`Inconsistency`], never ignored
//! silently. Rows keep the order in which they (or their key) first arrived, so a snapshot reads like
//! the stream that built it. Pure: no I/O, no clock; `O(1)` expected per change.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// The kind of a change (Flink's `RowKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RowKind {
    /// `+I`: a new row.
    #[serde(rename = "+I")]
    Insert,
    /// `-U`: the row as it was before an update (a retraction).
    #[serde(rename = "-U")]
    UpdateBefore,
    /// `+U`: the row after an update.
    #[serde(rename = "+U")]
    UpdateAfter,
    /// `-D`: a deleted row (a retraction).
    #[serde(rename = "-D")]
    Delete,
}

impl RowKind {
    /// `+I`, `-U`, `+U`, `-D`.
    pub fn short(self) -> &'static str {
        match self {
            RowKind::Insert => "+I",
            RowKind::UpdateBefore => "-U",
            RowKind::UpdateAfter => "+U",
            RowKind::Delete => "-D",
        }
    }

    /// Confluent Cloud's `op` code of a statement result row
    /// (<https://docs.confluent.io/cloud/current/api.html#tag/Statement-Results-(sqlv1)>): 0 `+I`,
    /// 1 `-U`, 2 `+U`, 3 `-D`; an absent `op` means `+I`. `None` for another number.
    pub fn from_op(op: Option<u64>) -> Option<RowKind> {
        match op {
            None | Some(0) => Some(RowKind::Insert),
            Some(1) => Some(RowKind::UpdateBefore),
            Some(2) => Some(RowKind::UpdateAfter),
            Some(3) => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// The SQL Gateway's row kind names in a fetched result
    /// (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>):
    /// `INSERT`, `UPDATE_BEFORE`, `UPDATE_AFTER`, `DELETE`.
    pub fn from_name(name: &str) -> Option<RowKind> {
        match name {
            "INSERT" => Some(RowKind::Insert),
            "UPDATE_BEFORE" => Some(RowKind::UpdateBefore),
            "UPDATE_AFTER" => Some(RowKind::UpdateAfter),
            "DELETE" => Some(RowKind::Delete),
            _ => None,
        }
    }

    /// Whether the change adds a row (`+I`, `+U`) rather than retracting one.
    pub fn is_accumulate(self) -> bool {
        matches!(self, RowKind::Insert | RowKind::UpdateAfter)
    }
}

impl std::fmt::Display for RowKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.short())
    }
}

/// A row: typed values in column order (numbers as numbers, a DECIMAL as its exact text at the
/// declared scale, timestamps as ISO strings, NULL as null; see [`super::value::typed`]).
pub type Row = Vec<Value>;

/// One change of a changelog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub kind: RowKind,
    pub row: Row,
}

/// A retraction of a row or key that the snapshot does not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inconsistency {
    /// 0-based position of the change in the stream.
    pub position: usize,
    pub kind: RowKind,
    pub row: Row,
}

impl std::fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "change #{} {} retracts a row that is not in the result: {}",
            self.position + 1,
            self.kind,
            Value::Array(self.row.clone())
        )
    }
}

/// How rows are identified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// By the values of these columns (0-based positions).
    Keyed(Vec<usize>),
    /// As whole rows, with multiplicity.
    Multiset,
}

/// The folded result: the rows a changelog stands for at this point.
#[derive(Debug, Clone)]
pub struct Snapshot {
    mode: Mode,
    /// Rows in arrival order; `None` where a row was removed (compacted now and then).
    slots: Vec<Option<Row>>,
    /// Keyed: key → slot. Multiset: whole row → slots holding an equal row (most recent last).
    index: HashMap<String, Vec<usize>>,
    live: usize,
    changes: usize,
    inconsistencies: Vec<Inconsistency>,
}

impl Snapshot {
    /// An empty snapshot.
    pub fn new(mode: Mode) -> Snapshot {
        Snapshot {
            mode,
            slots: Vec::new(),
            index: HashMap::new(),
            live: 0,
            changes: 0,
            inconsistencies: Vec::new(),
        }
    }

    /// Folds a whole changelog.
    pub fn fold(mode: Mode, changes: impl IntoIterator<Item = Change>) -> Snapshot {
        let mut s = Snapshot::new(mode);
        for c in changes {
            s.apply(c.kind, c.row);
        }
        s
    }

    pub fn mode(&self) -> &Mode {
        &self.mode
    }

    /// The identity of a row: its key columns (keyed) or the whole row (multiset), as canonical JSON.
    fn identity(&self, row: &Row) -> String {
        match &self.mode {
            Mode::Keyed(cols) => {
                let key: Vec<&Value> = cols
                    .iter()
                    .map(|&i| row.get(i).unwrap_or(&Value::Null))
                    .collect();
                serde_json::to_string(&key).expect("JSON values serialise")
            }
            Mode::Multiset => serde_json::to_string(row).expect("JSON values serialise"),
        }
    }

    /// Applies one change.
    pub fn apply(&mut self, kind: RowKind, row: Row) {
        let position = self.changes;
        self.changes += 1;
        let id = self.identity(&row);
        if let Mode::Keyed(_) = self.mode {
            // Keyed: `-U` carries nothing (the `+U` that follows replaces the row in place).
            if kind == RowKind::UpdateBefore {
                return;
            }
            let slot = self.index.get(&id).and_then(|v| v.first().copied());
            match (kind.is_accumulate(), slot) {
                (true, Some(slot)) => {
                    if self.slots[slot].is_none() {
                        self.live += 1;
                    }
                    self.slots[slot] = Some(row);
                }
                (true, None) => {
                    self.slots.push(Some(row));
                    self.index.insert(id, vec![self.slots.len() - 1]);
                    self.live += 1;
                }
                (false, Some(slot)) if self.slots[slot].is_some() => {
                    self.slots[slot] = None;
                    self.live -= 1;
                    self.compact_if_sparse();
                }
                (false, _) => self.inconsistencies.push(Inconsistency {
                    position,
                    kind,
                    row,
                }),
            }
            return;
        }
        if kind.is_accumulate() {
            self.slots.push(Some(row));
            self.index.entry(id).or_default().push(self.slots.len() - 1);
            self.live += 1;
            return;
        }
        let removed = match self.index.get_mut(&id) {
            Some(v) => {
                let slot = v.pop();
                if v.is_empty() {
                    self.index.remove(&id);
                }
                slot
            }
            None => None,
        };
        match removed {
            Some(slot) => {
                self.slots[slot] = None;
                self.live -= 1;
                self.compact_if_sparse();
            }
            None => self.inconsistencies.push(Inconsistency {
                position,
                kind,
                row,
            }),
        }
    }

    /// Rebuilds the slot vector when more than half of it is holes, keeping the order.
    fn compact_if_sparse(&mut self) {
        if self.slots.len() < 64 || self.live * 2 > self.slots.len() {
            return;
        }
        let old = std::mem::take(&mut self.slots);
        let mut moved: HashMap<usize, usize> = HashMap::with_capacity(self.live);
        for (i, r) in old.into_iter().enumerate() {
            if let Some(r) = r {
                moved.insert(i, self.slots.len());
                self.slots.push(Some(r));
            }
        }
        // Keys whose row is gone lose their place (multiset entries always point at live rows).
        self.index.retain(|_, v| {
            v.retain(|s| moved.contains_key(s));
            !v.is_empty()
        });
        for v in self.index.values_mut() {
            for s in v.iter_mut() {
                *s = moved[s];
            }
        }
    }

    /// The rows, in the order they (or their key) first arrived.
    pub fn rows(&self) -> Vec<&Row> {
        self.slots.iter().flatten().collect()
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Changes applied so far.
    pub fn changes(&self) -> usize {
        self.changes
    }

    /// Retractions of rows that were not there, in stream order.
    pub fn inconsistencies(&self) -> &[Inconsistency] {
        &self.inconsistencies
    }

    /// The rows as a sorted list of canonical JSON texts: equal for two snapshots that hold the same
    /// rows in any order (for "did the snapshot change?" and order-insensitive comparisons).
    pub fn canonical(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .rows()
            .into_iter()
            .map(|r| serde_json::to_string(r).expect("JSON values serialise"))
            .collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Row {
        v.as_array().unwrap().clone()
    }

    #[test]
    fn keyed_updates_replace_and_deletes_remove() {
        let mut s = Snapshot::new(Mode::Keyed(vec![0]));
        s.apply(RowKind::Insert, row(json!(["a", 1])));
        s.apply(RowKind::Insert, row(json!(["b", 1])));
        s.apply(RowKind::UpdateBefore, row(json!(["a", 1])));
        s.apply(RowKind::UpdateAfter, row(json!(["a", 2])));
        // An upsert stream may omit -U.
        s.apply(RowKind::UpdateAfter, row(json!(["b", 5])));
        s.apply(RowKind::Insert, row(json!(["c", 1])));
        s.apply(RowKind::Delete, row(json!(["c", 1])));
        assert_eq!(s.rows(), [&row(json!(["a", 2])), &row(json!(["b", 5]))]);
        assert!(s.inconsistencies().is_empty());
    }

    #[test]
    fn keyed_update_before_changes_nothing() {
        let mut s = Snapshot::new(Mode::Keyed(vec![0]));
        s.apply(RowKind::Insert, row(json!(["EU", 1])));
        s.apply(RowKind::Insert, row(json!(["US", 1])));
        s.apply(RowKind::UpdateBefore, row(json!(["EU", 1])));
        // A read that stops here still holds both keys, with their last values.
        assert_eq!(s.rows(), [&row(json!(["EU", 1])), &row(json!(["US", 1]))]);
        s.apply(RowKind::UpdateAfter, row(json!(["EU", 2])));
        assert_eq!(s.rows(), [&row(json!(["EU", 2])), &row(json!(["US", 1]))]);
        // A -U of a key never seen is not a retraction of anything either.
        s.apply(RowKind::UpdateBefore, row(json!(["XX", 1])));
        assert_eq!(s.len(), 2);
        assert!(s.inconsistencies().is_empty());
    }

    #[test]
    fn multiset_removes_one_equal_copy_and_reports_missing_retractions() {
        let mut s = Snapshot::new(Mode::Multiset);
        for _ in 0..2 {
            s.apply(RowKind::Insert, row(json!(["x", 1])));
        }
        s.apply(RowKind::UpdateBefore, row(json!(["x", 1])));
        s.apply(RowKind::UpdateAfter, row(json!(["x", 2])));
        s.apply(RowKind::Delete, row(json!(["nope", 0])));
        assert_eq!(s.len(), 2);
        assert_eq!(s.canonical(), [r#"["x",1]"#, r#"["x",2]"#]);
        assert_eq!(s.inconsistencies().len(), 1);
        assert_eq!(
            s.inconsistencies()[0].to_string(),
            r#"change #5 -D retracts a row that is not in the result: ["nope",0]"#
        );
    }

    #[test]
    fn kinds_from_both_wires() {
        assert_eq!(RowKind::from_op(None), Some(RowKind::Insert));
        assert_eq!(RowKind::from_op(Some(3)), Some(RowKind::Delete));
        assert_eq!(RowKind::from_op(Some(7)), None);
        assert_eq!(
            RowKind::from_name("UPDATE_BEFORE"),
            Some(RowKind::UpdateBefore)
        );
        assert_eq!(
            serde_json::to_string(&RowKind::UpdateAfter).unwrap(),
            r#""+U""#
        );
    }

    #[test]
    fn compaction_keeps_order_and_index() {
        let mut s = Snapshot::new(Mode::Keyed(vec![0]));
        for i in 0..200 {
            s.apply(RowKind::Insert, row(json!([i, 0])));
        }
        for i in 0..150 {
            s.apply(RowKind::Delete, row(json!([i, 0])));
        }
        s.apply(RowKind::UpdateAfter, row(json!([160, 9])));
        let rows = s.rows();
        assert_eq!(rows.len(), 50);
        assert_eq!(rows[0], &row(json!([150, 0])));
        assert_eq!(rows[10], &row(json!([160, 9])));
        s.apply(RowKind::Delete, row(json!([199, 0])));
        assert_eq!(s.len(), 49);
        assert!(s.inconsistencies().is_empty());
    }
}
