//! `flinkpipe pipeline delete-all-metadata [DIR] [--no-ack] [--dry-run]`: lists every
//! `pipeline_definition.json` under DIR (and `pipeline_graph.json`), asks, deletes all or none.

use crate::cli::args::PipelinesDir;
use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::metadata;

/// Options of `pipeline delete-all-metadata`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// List what would be deleted, delete nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let dir = args.dir.pipelines.as_path();
    let (no_ack, dry_run) = (args.no_ack, args.dry_run);
    let list = metadata::list_metadata_files(dir)?;
    if !inv.json() {
        println!(
            "{} metadata file(s) under {}:",
            list.files.len(),
            dir.display()
        );
        for f in &list.files {
            println!("  {}", f.display());
        }
    }
    let deleted = if dry_run || list.files.is_empty() {
        0
    } else if !no_ack && !confirm(&format!("Delete these {} file(s)?", list.files.len()))? {
        if !inv.json() {
            println!("nothing deleted");
        }
        return Ok(false);
    } else {
        metadata::delete_metadata_files(&list)?
    };
    if inv.json() {
        print_json(&DeletedView {
            list: &list,
            dry_run,
            deleted,
        });
    } else if dry_run {
        println!("dry run: nothing deleted");
    } else {
        println!(
            "deleted {deleted} file(s); `flinkpipe pipeline build-all-metadata` writes them again"
        );
    }
    Ok(true)
}

/// `--output json`: the folder and files listed, and how many were deleted.
#[derive(serde::Serialize)]
struct DeletedView<'a> {
    #[serde(flatten)]
    list: &'a metadata::MetadataFiles,
    dry_run: bool,
    deleted: usize,
}
