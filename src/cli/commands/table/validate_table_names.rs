//! `flinkpipe table validate-table-names [DIR]`: the naming lint, each finding with file and line.

use crate::cli::args::PipelinesDir;
use crate::cli::render::{print_diagnostics_in, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::{source_base, validate};

/// Options of `table validate-table-names`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let lint = validate::validate_table_names(&inv.ctx, pipelines)?;
    if inv.json() {
        print_json(&lint.findings);
    } else {
        print_diagnostics_in(&lint.findings, source_base(pipelines).as_deref());
        if lint.findings.is_empty() {
            println!(
                "ok: {} table folders follow the naming convention",
                lint.folders
            );
        }
    }
    Ok(lint.findings.is_empty())
}
