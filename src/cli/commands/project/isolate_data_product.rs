//! `flinkpipe project isolate-data-product PRODUCT SOURCE_FOLDER TARGET_FOLDER`.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::isolate;
use std::path::Path;

pub fn exec(inv: &Invocation, product: &str, source: &Path, target: &Path) -> CmdResult {
    let r = isolate::isolate(&inv.ctx, product, source, target)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    println!(
        "isolated product {} into {}: {} table(s), {} ancestor(s) of other products ({}), {} external table(s) declared, {} file(s)",
        r.product_name,
        r.pipelines.display(),
        r.tables.len(),
        r.ancestors.len(),
        r.ancestors.join(", "),
        r.external.len(),
        r.files
    );
    Ok(true)
}
