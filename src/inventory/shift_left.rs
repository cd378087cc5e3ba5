//! shift_left's `inventory.json`: an object keyed by table name (sorted), each value
//! `{table_name, product_name, type, dml_ref, ddl_ref, table_folder_name, kafka_topic}` with paths relative
//! to the parent of the pipelines folder (`pipelines/facts/…`); `dml_ref` is `""` for DDL-only tables.
//! Shape: the `inventory.json` that shift_left 0.1.52 writes
//! (<https://github.com/jbcodeforce/shift_left_utils>).

use super::{Inventory, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One entry of `inventory.json`, field for field as shift_left writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryEntry {
    pub table_name: String,
    pub product_name: String,
    #[serde(rename = "type")]
    pub table_type: String,
    pub dml_ref: String,
    pub ddl_ref: String,
    pub table_folder_name: String,
    pub kafka_topic: Option<String>,
}

impl From<&Table> for InventoryEntry {
    fn from(t: &Table) -> Self {
        InventoryEntry {
            table_name: t.name.clone(),
            product_name: t.product.clone(),
            table_type: t.table_type.clone(),
            dml_ref: t.dml_ref.clone().unwrap_or_default(),
            ddl_ref: t.ddl_ref.clone().unwrap_or_default(),
            table_folder_name: t.folder.clone(),
            kafka_topic: t.kafka_topic.clone(),
        }
    }
}

/// The whole file: table name → entry, sorted by name.
pub type InventoryFile = BTreeMap<String, InventoryEntry>;

/// File name of the inventory at the pipelines root (`$PIPELINES/inventory.json`, as shift_left
/// 0.1.52 names it, <https://github.com/jbcodeforce/shift_left_utils>).
pub const INVENTORY_FILE: &str = "inventory.json";

/// The inventory in shift_left's shape: the tables of folders and manifests (references kept with
/// `--allow-unknown` are graph nodes, not inventory entries).
pub fn to_inventory_file(inv: &Inventory) -> InventoryFile {
    inv.tables
        .values()
        .filter(|t| !t.unknown)
        .map(|t| (t.name.clone(), InventoryEntry::from(t)))
        .collect()
}

/// Parses an `inventory.json` written by shift_left or flinkpipe.
///
/// Errors: invalid JSON or a missing field, with serde's line and column.
pub fn parse_inventory_file(text: &str) -> Result<InventoryFile, serde_json::Error> {
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_shift_left_inventory_with_null_topic() {
        let text = r#"{"a": {"table_name": "a", "product_name": "p2", "type": "intermediate",
            "dml_ref": "pipelines/intermediates/p2/a/sql-scripts/dml.a.sql",
            "ddl_ref": "pipelines/intermediates/p2/a/sql-scripts/ddl.a.sql",
            "table_folder_name": "pipelines/intermediates/p2/a", "kafka_topic": null}}"#;
        let inv = parse_inventory_file(text).unwrap();
        assert_eq!(inv["a"].table_type, "intermediate");
        assert_eq!(inv["a"].kafka_topic, None);
    }
}
