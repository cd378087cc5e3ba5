//! `flinkpipe pipeline delete-all-metadata [DIR] [--no-ack] [--dry-run]`: lists every
//! `pipeline_definition.json` under DIR (and `pipeline_graph.json`), asks, deletes all or none.

use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::metadata;
use std::path::Path;

pub fn exec(inv: &Invocation, dir: &Path, no_ack: bool, dry_run: bool) -> CmdResult {
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
        print_json(&serde_json::json!({
            "dir": list.dir, "files": list.files, "dry_run": dry_run, "deleted": deleted,
        }));
    } else if dry_run {
        println!("dry run: nothing deleted");
    } else {
        println!(
            "deleted {deleted} file(s); `flinkpipe pipeline build-all-metadata` writes them again"
        );
    }
    Ok(true)
}
