//! `flinkpipe project update-ut-ddl [IMPACTED…] [--project-path DIR] [--git-branch REF]
//! [--modified-files-path F] [--dry-run]`: unit-test copies follow their parents' DDLs.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::update_ut_ddl::{self, UpdateUtDdlRequest};
use std::path::PathBuf;

/// Options of `project update-ut-ddl` (shift_left's names).
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Tables whose test copies to update, or files listing them (shift_left's IMPACTED: an
    /// impacted_tables.json, modified_flink_files.json or table list); none: the tables changed since
    /// --git-branch, those of --modified-files-path, else every table with a DDL.
    #[arg(value_name = "IMPACTED")]
    pub impacted: Vec<String>,
    /// The pipelines folder.
    #[arg(
        long,
        value_name = "DIR",
        env = "PIPELINES",
        default_value = "pipelines"
    )]
    pub project_path: PathBuf,
    /// The tables whose DDL changed since this git ref.
    #[arg(long, value_name = "REF")]
    pub git_branch: Option<String>,
    /// The tables of this file (modified_flink_files.json, impacted_tables.json or a table list).
    #[arg(long, value_name = "FILE")]
    pub modified_files_path: Option<PathBuf>,
    /// shift_left's whole-file replacement: accepted; flinkpipe always replaces the column list and
    /// keeps the test table's name and WITH options.
    #[arg(long)]
    pub full_replace: bool,
    /// shift_left's git repository root: accepted and not needed (the repository is found from the
    /// pipelines folder).
    #[arg(long, value_name = "DIR")]
    pub repo_root: Option<PathBuf>,
    /// Print the diff without writing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let u = update_ut_ddl::update_ut_ddl(
        &inv.ctx,
        &args.project_path,
        &UpdateUtDdlRequest {
            tables: args.impacted.clone(),
            since: args.git_branch.clone(),
            modified_files: args.modified_files_path.clone(),
            apply: !args.dry_run,
        },
    )?;
    for h in &u.by_hand {
        eprintln!("warning[by-hand]: {h}");
    }
    if inv.json() {
        print_json(&UpdateView {
            applied: u.applied,
            files: u
                .edits
                .iter()
                .map(|e| FileView {
                    file: &e.file,
                    change: &e.note,
                })
                .collect(),
            by_hand: &u.by_hand,
        });
        return Ok(true);
    }
    print!("{}", u.diff());
    if u.edits.is_empty() {
        println!("The unit-test folders match their tables' DDLs: nothing to update.");
    } else {
        for e in &u.edits {
            println!("{}: {}", e.file, e.note);
        }
        println!(
            "{} file(s) {}",
            u.edits.len(),
            if u.applied {
                "updated"
            } else {
                "to update (run again without --dry-run)"
            }
        );
    }
    Ok(true)
}

/// `--output json`: each file changed with what changed in words (not its whole text), what is
/// left to do by hand, and whether it was written.
#[derive(serde::Serialize)]
struct UpdateView<'a> {
    applied: bool,
    files: Vec<FileView<'a>>,
    by_hand: &'a [String],
}

/// One file of [`UpdateView`].
#[derive(serde::Serialize)]
struct FileView<'a> {
    file: &'a str,
    change: &'a str,
}
