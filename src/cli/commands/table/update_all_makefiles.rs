//! `flinkpipe table update-all-makefiles [DIR]`: every table Makefile regenerated from the current
//! template (as `update-makefile`), all or nothing.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{self, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::makefiles;

/// Options of `table update-all-makefiles`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let r = makefiles::update_makefiles(
        &inv.ctx,
        args.project.pipelines(),
        None,
        args.project.allow_unknown,
    )?;
    if inv.json() {
        print_json(&r);
    } else {
        render::makefiles(&r);
    }
    Ok(true)
}
