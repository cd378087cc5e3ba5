//! `table build-inventory`: scans the pipelines tree and writes `DIR/inventory.json` in shift_left's
//! shape (shift_left 0.1.52, <https://github.com/jbcodeforce/shift_left_utils>).

use super::{Context, OpsError};
use crate::fsutil::{to_json_pretty, write_atomic_within};
use crate::inventory::Inventory;
use crate::inventory::shift_left::{InventoryFile, to_inventory_file};
use crate::project::{Detail, Layout, scan_with};
use std::path::{Path, PathBuf};

pub use crate::inventory::shift_left::INVENTORY_FILE;

/// What was written.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: PathBuf,
    /// The file's content.
    pub inventory: InventoryFile,
    /// `false` when the file already held this content (it was left untouched).
    pub written: bool,
}

/// Builds and writes `pipelines/inventory.json`. Diagnostics go to the console.
///
/// Errors: errors in the project (nothing is written), an unreadable tree, a file that cannot be
/// written.
pub fn build_inventory(ctx: &Context, pipelines: &Path) -> Result<Written, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    ctx.recover_tree(pipelines, None)?;
    let scanned = scan_with(
        pipelines,
        &Layout::with_overrides(&cfg.flinkpipe.layers),
        Detail::Inventory,
    )?;
    let inv = Inventory::build(&scanned, &cfg);
    crate::project::free_in_background(scanned);
    let mut diags = inv.diagnostics.clone();
    crate::diagnostics::normalize(&mut diags);
    ctx.console
        .diagnostics(&diags, super::source_base(pipelines).as_deref());
    if inv.has_errors() {
        return Err(OpsError::ProjectHasErrors(
            "inventory not written: fix the errors above",
        ));
    }
    ctx.recover_tree(pipelines, Some(&diags))?;
    let inventory = to_inventory_file(&inv);
    crate::project::free_in_background(inv);
    let path = pipelines.join(INVENTORY_FILE);
    let written = write_atomic_within(pipelines, &path, to_json_pretty(&inventory).as_bytes())
        .map_err(|source| OpsError::Write {
            path: path.clone(),
            source,
        })?;
    Ok(Written {
        path,
        inventory,
        written,
    })
}
