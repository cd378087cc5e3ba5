//! The changelog compressor as a property: for random final states and random valid changelogs that
//! lead to them (inserts, update pairs, upserts without `-U`, deletes, re-inserts), the fold equals the
//! final state, keyed and as a multiset; a retraction of a missing row is reported, never applied.

use crate::support::Rng;
use flinkpipe::results::{Change, Mode, RowKind, Snapshot};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A row `[key, value, label]` with typed values (a NULL now and then).
fn row(rng: &mut Rng, key: i64) -> Vec<Value> {
    let v = match rng.below(4) {
        0 => Value::Null,
        1 => json!(rng.below(3) as f64 + 0.5),
        _ => json!(rng.below(5)),
    };
    vec![json!(key), v, json!(["a", "b", "c"][rng.below(3)])]
}

fn sorted(rows: impl IntoIterator<Item = Vec<Value>>) -> Vec<String> {
    let mut v: Vec<String> = rows
        .into_iter()
        .map(|r| serde_json::to_string(&r).unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn keyed_fold_equals_the_final_state() {
    for seed in 1..=400u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut state: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
        let mut log: Vec<Change> = Vec::new();
        let keys = 1 + rng.below(12) as i64;
        for _ in 0..rng.below(120) {
            let k = rng.below(keys as usize) as i64;
            match (state.get(&k).cloned(), rng.below(4)) {
                (None, _) => {
                    let r = row(&mut rng, k);
                    log.push(Change {
                        kind: RowKind::Insert,
                        row: r.clone(),
                    });
                    state.insert(k, r);
                }
                (Some(old), 0) => {
                    log.push(Change {
                        kind: RowKind::Delete,
                        row: old,
                    });
                    state.remove(&k);
                }
                (Some(old), 1) => {
                    // An upsert stream without -U.
                    let _ = old;
                    let r = row(&mut rng, k);
                    log.push(Change {
                        kind: RowKind::UpdateAfter,
                        row: r.clone(),
                    });
                    state.insert(k, r);
                }
                (Some(old), _) => {
                    let r = row(&mut rng, k);
                    log.push(Change {
                        kind: RowKind::UpdateBefore,
                        row: old,
                    });
                    log.push(Change {
                        kind: RowKind::UpdateAfter,
                        row: r.clone(),
                    });
                    state.insert(k, r);
                }
            }
        }
        let s = Snapshot::fold(Mode::Keyed(vec![0]), log.clone());
        assert_eq!(
            sorted(s.rows().into_iter().cloned()),
            sorted(state.values().cloned()),
            "seed {seed}: {log:?}"
        );
        assert!(s.inconsistencies().is_empty(), "seed {seed}");
        assert_eq!(s.len(), state.len());
        assert_eq!(s.changes(), log.len());
        // Every intermediate state is one a correct upsert fold has: `-U` changes nothing, so a read
        // stopping between a `-U` and its `+U` still holds the key (issue 21).
        let mut live = Snapshot::new(Mode::Keyed(vec![0]));
        let mut upsert: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for (i, c) in log.iter().enumerate() {
            live.apply(c.kind, c.row.clone());
            let key = c.row[0].to_string();
            match c.kind {
                RowKind::Insert | RowKind::UpdateAfter => {
                    upsert.insert(key, c.row.clone());
                }
                RowKind::Delete => {
                    upsert.remove(&key);
                }
                RowKind::UpdateBefore => {}
            }
            assert_eq!(
                sorted(live.rows().into_iter().cloned()),
                sorted(upsert.values().cloned()),
                "seed {seed}, after change #{i}"
            );
        }
    }
}

#[test]
fn multiset_fold_equals_the_final_state() {
    for seed in 1..=400u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
        let mut state: Vec<Vec<Value>> = Vec::new();
        let mut log: Vec<Change> = Vec::new();
        for _ in 0..rng.below(150) {
            let op = if state.is_empty() { 0 } else { rng.below(4) };
            match op {
                0 => {
                    // Equal rows on purpose: the multiset counts copies.
                    let k = rng.below(4) as i64;
                    let r = row(&mut rng, k);
                    log.push(Change {
                        kind: RowKind::Insert,
                        row: r.clone(),
                    });
                    state.push(r);
                }
                1 => {
                    let old = state.swap_remove(rng.below(state.len()));
                    log.push(Change {
                        kind: RowKind::Delete,
                        row: old,
                    });
                }
                _ => {
                    let i = rng.below(state.len());
                    let k = rng.below(4) as i64;
                    let new = row(&mut rng, k);
                    log.push(Change {
                        kind: RowKind::UpdateBefore,
                        row: state[i].clone(),
                    });
                    log.push(Change {
                        kind: RowKind::UpdateAfter,
                        row: new.clone(),
                    });
                    state[i] = new;
                }
            }
        }
        let s = Snapshot::fold(Mode::Multiset, log.clone());
        assert_eq!(
            sorted(s.rows().into_iter().cloned()),
            sorted(state.clone()),
            "seed {seed}"
        );
        assert!(s.inconsistencies().is_empty(), "seed {seed}");
    }
}

#[test]
fn a_retraction_of_a_missing_row_is_reported_and_changes_nothing() {
    for mode in [Mode::Keyed(vec![0]), Mode::Multiset] {
        // Keyed, `-U` is not a retraction at all: only the `-D` is reported.
        let keyed = matches!(mode, Mode::Keyed(_));
        let mut rng = Rng(7);
        let rows: Vec<Vec<Value>> = (0..20).map(|k| row(&mut rng, k)).collect();
        let mut s = Snapshot::fold(
            mode.clone(),
            rows.iter().map(|r| Change {
                kind: RowKind::Insert,
                row: r.clone(),
            }),
        );
        let before = s.canonical();
        for kind in [RowKind::UpdateBefore, RowKind::Delete] {
            s.apply(kind, vec![json!(999), Value::Null, json!("z")]);
        }
        assert_eq!(s.canonical(), before, "{mode:?}");
        let found: Vec<(usize, RowKind)> = s
            .inconsistencies()
            .iter()
            .map(|i| (i.position, i.kind))
            .collect();
        let want: &[(usize, RowKind)] = if keyed {
            &[(21, RowKind::Delete)]
        } else {
            &[(20, RowKind::UpdateBefore), (21, RowKind::Delete)]
        };
        assert_eq!(found, want, "{mode:?}");
    }
}
