//! `flinkpipe table update-makefile TABLE [DIR]`: the table's Makefile regenerated from the current
//! template, the user's targets below the marker kept.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{self, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::makefiles;

/// Options of `table update-makefile`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table whose folder's Makefile is regenerated.
    pub table: String,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let r = makefiles::update_makefiles(
        &inv.ctx,
        args.project.pipelines(),
        Some(&args.table),
        args.project.allow_unknown,
    )?;
    if inv.json() {
        print_json(&r);
    } else {
        render::makefiles(&r);
    }
    Ok(true)
}
