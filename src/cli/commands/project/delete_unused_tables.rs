//! `flinkpipe project delete-unused-tables FILE [--pipelines DIR] [--dry-run] [--no-ack]`: lists the
//! tables, checks each is still unused, asks, drops.

use crate::cli::render::{confirm, print_json};
use crate::cli::{CmdResult, Invocation};
use crate::ops::unused;
use std::path::Path;
use std::time::Duration;

pub fn exec(
    inv: &Invocation,
    list: &Path,
    pipelines: &Path,
    dry_run: bool,
    no_ack: bool,
    timeout: u64,
) -> CmdResult {
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
            print_json(&serde_json::json!({"tables": tables, "dropped": [], "dry_run": true}));
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
        print_json(&serde_json::json!({"tables": tables, "dropped": dropped, "dry_run": false}));
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
