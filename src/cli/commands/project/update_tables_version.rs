//! `flinkpipe project update-tables-version FILE [DIR]`: the listed tables and their descendants get
//! their next version (`t` → `t_v2`), files rewritten by token spans.

use crate::cli::args::ProjectArgs;
use crate::cli::render::versioned;
use crate::cli::{CmdResult, Invocation};
use crate::ops::versioning;
use std::path::PathBuf;

/// Options of `project update-tables-version`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Tables to version (one per line, a JSON list, modified_flink_files.json or impacted_tables.json);
    /// their descendants are versioned too.
    #[arg(value_name = "TABLE_LIST_FILE")]
    pub table_list: PathBuf,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Suffix for tables without a version yet.
    #[arg(long, default_value = "_v2", value_name = "SUFFIX")]
    pub default_version: String,
    /// Print the diff without writing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let v = versioning::update_tables_version(
        &inv.ctx,
        &args.project.dir.pipelines,
        &args.table_list,
        &args.default_version,
        !args.dry_run,
        args.project.allow_unknown,
    )?;
    versioned(inv.json(), &v);
    Ok(true)
}
