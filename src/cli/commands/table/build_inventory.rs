//! `flinkpipe table build-inventory [DIR]`: writes `DIR/inventory.json` (shift_left's shape).

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::inventory;
use std::path::Path;

pub fn exec(inv: &Invocation, pipelines: &Path) -> CmdResult {
    let w = inventory::build_inventory(&inv.ctx, pipelines)?;
    if inv.json() {
        print_json(&w.inventory);
    } else {
        println!(
            "{} tables written to {}",
            w.inventory.len(),
            w.path.display()
        );
    }
    Ok(true)
}
