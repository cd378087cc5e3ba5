//! `flinkpipe project delete-unused-tables FILE [--pipelines DIR] [--dry-run] [--no-ack]`: lists the
//! tables, checks each is still unused, asks, drops.

use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::unused;
use std::path::PathBuf;
use std::time::Duration;

/// Options of `project delete-unused-tables`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table list.
    pub table_list_file: PathBuf,
    /// The pipelines folder [default: $PIPELINES, else ./pipelines].
    #[arg(
        long = "pipelines",
        value_name = "DIR",
        env = "PIPELINES",
        default_value = "pipelines"
    )]
    pub pipelines: PathBuf,
    /// List what would be dropped, drop nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub no_ack: bool,
    /// Longest wait for one DROP, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let list = args.table_list_file.as_path();
    let pipelines = args.pipelines.as_path();
    let (dry_run, no_ack, timeout) = (args.dry_run, args.no_ack, args.timeout);
    let prepared = unused::prepare_drop(&inv.ctx, pipelines, list, Duration::from_secs(timeout))?;
    let tables = prepared.tables.clone();
    if !inv.json() {
        println!("Tables to drop (DROP TABLE; on Confluent Cloud their topics go with them):");
        for t in &tables {
            println!("  {} ({}, {})", t.table_name, t.table_type, t.product_name);
        }
    }
    if dry_run {
        if inv.json() {
            print_json(&DropView {
                tables: &tables,
                dropped: &[],
                dry_run: true,
            });
        } else {
            println!("dry run: nothing dropped");
        }
        return Ok(true);
    }
    if !no_ack && !confirm(&format!("Drop these {} table(s)?", tables.len()))? {
        println!("nothing dropped");
        return Ok(false);
    }
    let dropped = prepared.execute();
    let ok = dropped.iter().all(|d| d.error.is_none());
    if inv.json() {
        print_json(&DropView {
            tables: &tables,
            dropped: &dropped,
            dry_run: false,
        });
    } else {
        for d in &dropped {
            match &d.error {
                None => println!("dropped {}", d.table_name),
                Some(e) => eprintln!("error: {}: {e}", d.table_name),
            }
        }
    }
    Ok(ok)
}

/// `--output json`: the tables checked as unused and each drop's outcome.
#[derive(serde::Serialize)]
struct DropView<'a, T> {
    tables: &'a T,
    dropped: &'a [unused::Dropped],
    dry_run: bool,
}
