//! `flinkpipe table …`: the inventory.

use super::args::{GlobalArgs, TableCommand};
use super::{CmdResult, Failure, is_json, load_config, print_json};
use crate::fsutil::{to_json_pretty, write_atomic};
use crate::inventory::Inventory;
use crate::inventory::shift_left::to_inventory_file;
use crate::project::{Layout, scan};

/// File name of the inventory at the pipelines root.
pub const INVENTORY_FILE: &str = "inventory.json";

pub(super) fn run(global: &GlobalArgs, cmd: &TableCommand) -> CmdResult {
    match cmd {
        TableCommand::Init(args) => super::scaffold::table_init(global, args),
        TableCommand::ValidateTableNames { dir } => {
            super::scaffold::validate_table_names(global, &dir.pipelines)
        }
        TableCommand::BuildInventory { dir } => {
            let cfg = load_config(global)?;
            let scanned = scan(
                &dir.pipelines,
                &Layout::with_overrides(&cfg.flinkpipe.layers),
            )?;
            let inv = Inventory::build(&scanned, &cfg);
            let mut diags = inv.diagnostics.clone();
            crate::diagnostics::normalize(&mut diags);
            super::print_diagnostics_in(
                &diags,
                super::scaffold::source_base(&dir.pipelines).as_deref(),
            );
            if inv.has_errors() {
                eprintln!("inventory not written: fix the errors above");
                return Ok(false);
            }
            let file = to_inventory_file(&inv);
            let path = dir.pipelines.join(INVENTORY_FILE);
            write_atomic(&path, to_json_pretty(&file).as_bytes())
                .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
            if is_json(global) {
                print_json(&file);
            } else {
                println!("{} tables written to {}", file.len(), path.display());
            }
            Ok(true)
        }
    }
}
