//! Canned results of the Confluent fake's query endpoint ([`QueryScript`]) shared by the tests of
//! `sql query`, `table preview`, live tests, unit tests and integration tests.

use crate::fake_confluent::QueryScript;
use serde_json::{Value, json};

/// A nullable column of a result schema: `{"name": name, "type": {"type": t, "nullable": true}}`.
pub fn col(name: &str, t: &str) -> Value {
    json!({"name": name, "type": {"type": t, "nullable": true}})
}

/// The output of the example project's `int_inventory_stock_levels` as Confluent sends it: its
/// schema (`sku_id`, `warehouse_id`, `on_hand`, `movements`, `last_movement_at`), upsert key
/// `(sku_id, warehouse_id)`, bounded, the changelog `pages` of `(op, row)`.
pub fn stock_levels(pages: Vec<Vec<(Option<u8>, Value)>>) -> QueryScript {
    QueryScript {
        columns: json!([
            col("sku_id", "INTEGER"),
            col("warehouse_id", "INTEGER"),
            col("on_hand", "BIGINT"),
            col("movements", "BIGINT"),
            {"name": "last_movement_at", "type": {"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 3}},
        ]),
        upsert_columns: Some(vec![0, 1]),
        pages,
        bounded: true,
        ..QueryScript::default()
    }
}
