//! `flinkpipe table build-inventory [DIR]`: writes `DIR/inventory.json` (shift_left's shape).

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::inventory;

/// Options of `table build-inventory`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let w = inventory::build_inventory(&inv.ctx, pipelines)?;
    if inv.json() {
        print_json(&w.inventory);
    } else {
        println!(
            "{} tables {} {}",
            w.inventory.len(),
            if w.written {
                "written to"
            } else {
                "already in (unchanged)"
            },
            w.path.display()
        );
    }
    Ok(true)
}
