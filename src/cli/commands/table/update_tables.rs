//! `flinkpipe table update-tables FOLDER [CLASS] --string-to-change-from A --string-to-change-to B
//! [--ddl | --both-ddl-dml] [--dry-run]`: the diff, then every file rewritten or none.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::update_tables::{self, SqlKinds, UpdateTablesRequest};
use std::path::PathBuf;

/// Options of `table update-tables`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The folder whose `sql-scripts/` files are edited (the pipelines folder or one below).
    pub folder: PathBuf,
    /// shift_left's SQL processor class: only its default (a string replacement) is accepted.
    #[arg(value_name = "CLASS")]
    pub class_to_use: Option<String>,
    /// Edit the DDL files instead of the DML files.
    #[arg(long, conflicts_with = "both_ddl_dml")]
    pub ddl: bool,
    /// Edit both DDL and DML files.
    #[arg(long)]
    pub both_ddl_dml: bool,
    /// The text to replace in names.
    #[arg(long, value_name = "A")]
    pub string_to_change_from: String,
    /// Its replacement [default: empty: remove it].
    #[arg(long, value_name = "B")]
    pub string_to_change_to: Option<String>,
    /// Print the diff, change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let kinds = if args.both_ddl_dml {
        SqlKinds::Both
    } else if args.ddl {
        SqlKinds::Ddl
    } else {
        SqlKinds::Dml
    };
    let r = update_tables::update_tables(&UpdateTablesRequest {
        folder: args.folder.clone(),
        kinds,
        from: args.string_to_change_from.clone(),
        to: args.string_to_change_to.clone().unwrap_or_default(),
        class_to_use: args.class_to_use.clone(),
        dry_run: args.dry_run,
    })?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    for c in &r.changed {
        print!("{}", c.diff);
    }
    let edits: usize = r.changed.iter().map(|c| c.edits).sum();
    println!(
        "{} of {} file(s) {}, {edits} name(s) changed",
        r.changed.len(),
        r.files_seen,
        if r.applied {
            "rewritten"
        } else if args.dry_run {
            "to rewrite (run again without --dry-run)"
        } else {
            "changed"
        }
    );
    Ok(true)
}
