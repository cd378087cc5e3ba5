//! `flinkpipe project isolate-data-product PRODUCT SOURCE_FOLDER TARGET_FOLDER`.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::isolate;
use std::path::PathBuf;

/// Options of `project isolate-data-product`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The product to isolate.
    pub product_name: String,
    /// The source project's pipelines folder.
    pub source_folder: PathBuf,
    /// The new project's folder (its pipelines/ must not exist).
    pub target_folder: PathBuf,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let product = args.product_name.as_str();
    let (source, target) = (args.source_folder.as_path(), args.target_folder.as_path());
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
