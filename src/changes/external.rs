//! Changes to the external tables a project reads: `seeds/external_tables.json` manifests (shift_left's
//! `{"tables":[{"table_name","kafka_topic","product_name"}]}`), compared entry by entry between the base
//! and the head. Pure: both sides' bytes in, per-table changes out.
//!
//! - a table declared only at the head is `added` (it impacts nothing: a table that starts reading it
//!   changed its own files);
//! - a table declared only at the base is `deleted` (an error in the impact when tables at the head
//!   still read it and no folder defines it now);
//! - a table whose topic or product changed is an `options` change (its children read another topic:
//!   they are impacted);
//! - a table that moved from one manifest to another without a change is not reported; with a change
//!   it is one `options` change.

use super::ChangeKind;
use crate::inventory::{ExternalDeclaration, parse_external_manifest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How one external table changed between the base and the head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalTableChange {
    /// The table's name.
    pub table_name: String,
    /// `added`, `deleted` or `options` (topic or product changed).
    pub change_kind: ChangeKind,
    /// The manifest that declares it (at the head; at the base for a deletion), relative to the
    /// pipelines folder, e.g. `seeds/external_tables.json`.
    pub manifest: String,
    /// What changed, e.g. `kafka_topic 'orders' → 'orders.v2'`; empty for additions and deletions.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub details: String,
}

/// Whether `rel` (relative to the pipelines folder, `/`-separated) is an external tables manifest, by
/// the scan's rule: a file `external_tables.json` in a folder `seeds`, not below `sql-scripts/` or
/// `tests/`.
pub fn is_manifest(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let [dirs @ .., parent, name] = parts.as_slice() else {
        return false;
    };
    *name == "external_tables.json"
        && *parent == "seeds"
        && !dirs.iter().any(|d| *d == "sql-scripts" || *d == "tests")
}

/// One side of a manifest: its declarations by table name. `None` bytes (the file does not exist on that
/// side) is an empty manifest.
///
/// Errors: the bytes are not UTF-8 or not a manifest; the message gives the position.
fn side(bytes: Option<&[u8]>) -> Result<BTreeMap<String, ExternalDeclaration>, String> {
    let Some(bytes) = bytes else {
        return Ok(BTreeMap::new());
    };
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let mut out = BTreeMap::new();
    for d in parse_external_manifest(text).map_err(|e| e.message)? {
        // The first declaration of a name wins, as in the inventory.
        out.entry(d.table_name.clone()).or_insert(d);
    }
    Ok(out)
}

/// One changed manifest file: its path relative to the pipelines folder (the head path of a renamed
/// file), its bytes at the base and at the head (`None` where the file does not exist on that side).
pub type ManifestVersions = (String, Option<Vec<u8>>, Option<Vec<u8>>);

/// The changes between two versions of manifests, one [`ManifestVersions`] per changed manifest file.
/// Sorted by table name.
///
/// The base side is read leniently: a manifest that does not parse there (written before today's
/// rules, or broken on the base branch) counts as empty, so its tables show as added and impact nothing.
///
/// Errors: `(path, message)` for a manifest whose head side is not a manifest.
pub fn diff_manifests(
    manifests: &[ManifestVersions],
) -> Result<Vec<ExternalTableChange>, (String, String)> {
    // Per table: (base declaration and its manifest, head declaration and its manifest).
    type Sides = (
        Option<(ExternalDeclaration, String)>,
        Option<(ExternalDeclaration, String)>,
    );
    let mut tables: BTreeMap<String, Sides> = BTreeMap::new();
    for (path, old, new) in manifests {
        let old = side(old.as_deref()).unwrap_or_default();
        let new = side(new.as_deref()).map_err(|e| (path.clone(), e))?;
        for (name, d) in old {
            tables.entry(name).or_default().0 = Some((d, path.clone()));
        }
        for (name, d) in new {
            tables.entry(name).or_default().1 = Some((d, path.clone()));
        }
    }
    let mut out = Vec::new();
    for (table_name, sides) in tables {
        let (change_kind, manifest, details) = match sides {
            (None, Some((_, m))) => (ChangeKind::Added, m, String::new()),
            (Some((_, m)), None) => (ChangeKind::Deleted, m, String::new()),
            (Some((old, _)), Some((new, m))) => {
                let mut what = Vec::new();
                if old.effective_topic() != new.effective_topic() {
                    what.push(format!(
                        "kafka_topic '{}' → '{}'",
                        old.effective_topic(),
                        new.effective_topic()
                    ));
                }
                if old.effective_product() != new.effective_product() {
                    what.push(format!(
                        "product_name '{}' → '{}'",
                        old.effective_product(),
                        new.effective_product()
                    ));
                }
                if what.is_empty() {
                    continue;
                }
                (ChangeKind::Options, m, what.join(", "))
            }
            (None, None) => continue,
        };
        out.push(ExternalTableChange {
            table_name,
            change_kind,
            manifest,
            details,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(json: &str) -> Option<Vec<u8>> {
        Some(json.as_bytes().to_vec())
    }

    const M: &str = "seeds/external_tables.json";

    #[test]
    fn manifest_paths() {
        assert!(is_manifest("seeds/external_tables.json"));
        assert!(is_manifest("sales/seeds/external_tables.json"));
        assert!(!is_manifest("external_tables.json"));
        assert!(!is_manifest("seeds/other.json"));
        assert!(!is_manifest(
            "facts/t/sql-scripts/seeds/external_tables.json"
        ));
        assert!(!is_manifest("facts/t/tests/seeds/external_tables.json"));
    }

    #[test]
    fn added_deleted_and_changed_tables() {
        let base = r#"{"tables":[
            {"table_name":"crm_customers","kafka_topic":"crm.customers"},
            {"table_name":"erp_orders"},
            {"table_name":"old_feed","kafka_topic":"old"},
            {"table_name":"same","kafka_topic":"same.t","product_name":"p"}]}"#;
        let head = r#"{"tables":[
            {"table_name":"crm_customers","kafka_topic":"crm.customers.v2"},
            {"table_name":"erp_orders","product_name":"erp"},
            {"table_name":"new_feed"},
            {"table_name":"same","kafka_topic":"same.t","product_name":"p"}]}"#;
        let got = diff_manifests(&[(M.into(), m(base), m(head))]).unwrap();
        let rows: Vec<(&str, ChangeKind, &str)> = got
            .iter()
            .map(|c| (c.table_name.as_str(), c.change_kind, c.details.as_str()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    "crm_customers",
                    ChangeKind::Options,
                    "kafka_topic 'crm.customers' → 'crm.customers.v2'"
                ),
                (
                    "erp_orders",
                    ChangeKind::Options,
                    "product_name 'common' → 'erp'"
                ),
                ("new_feed", ChangeKind::Added, ""),
                ("old_feed", ChangeKind::Deleted, ""),
            ]
        );
        assert!(got.iter().all(|c| c.manifest == M));
    }

    #[test]
    fn absent_topic_means_the_table_name() {
        let base = r#"{"tables":[{"table_name":"t"}]}"#;
        let head = r#"{"tables":[{"table_name":"t","kafka_topic":"t"}]}"#;
        assert_eq!(
            diff_manifests(&[(M.into(), m(base), m(head))]).unwrap(),
            vec![]
        );
    }

    #[test]
    fn a_table_moved_between_manifests_is_one_change_or_none() {
        let a = "sales/seeds/external_tables.json".to_string();
        let b = "seeds/external_tables.json".to_string();
        let moved = diff_manifests(&[
            (a.clone(), m(r#"{"tables":[{"table_name":"t"}]}"#), None),
            (b.clone(), None, m(r#"{"tables":[{"table_name":"t"}]}"#)),
        ])
        .unwrap();
        assert_eq!(moved, vec![]);
        let changed = diff_manifests(&[
            (
                a,
                m(r#"{"tables":[{"table_name":"t"}]}"#),
                m(r#"{"tables":[]}"#),
            ),
            (
                b.clone(),
                None,
                m(r#"{"tables":[{"table_name":"t","kafka_topic":"x"}]}"#),
            ),
        ])
        .unwrap();
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0].change_kind, ChangeKind::Options);
        assert_eq!(changed[0].manifest, b);
        assert_eq!(changed[0].details, "kafka_topic 't' → 'x'");
    }

    #[test]
    fn a_broken_side_is_named() {
        let err = diff_manifests(&[(M.into(), m(r#"{"tables":[]}"#), m("{\n\"tables\": [{}]}"))])
            .unwrap_err();
        assert_eq!(err.0, M);
        assert_eq!(err.1, "missing field `table_name` at line 2 column 13");
        let err = diff_manifests(&[(M.into(), None, Some(vec![0xff]))]).unwrap_err();
        assert!(err.1.starts_with("not UTF-8"), "{}", err.1);
        // A base that does not parse counts as empty.
        let got = diff_manifests(&[(
            M.into(),
            Some(vec![0xff]),
            m(r#"{"tables":[{"table_name":"t"}]}"#),
        )])
        .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].change_kind, ChangeKind::Added);
    }
}
