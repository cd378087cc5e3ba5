//! `flinkpipe project list-impacted-tables [DIR]`: the descendants impacted by the changes since a git
//! ref, each with its reason; writes `impacted_tables.json`.

use crate::cli::args::{ChangeRefs, PipelinesDir};
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::changes::{self, ChangeKind};
use std::path::PathBuf;

/// Options of `project list-impacted-tables`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Read the changes from this modified_flink_files.json instead of git.
    #[arg(long, value_name = "FILE")]
    pub modified_files_path: Option<PathBuf>,
    /// Folder for impacted_tables.json [default: $FLINKPIPE_OUTPUT_DIR, else ~/.shift_left].
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let refs = &args.refs;
    let modified_files_path = args.modified_files_path.as_deref();
    let output_dir = args.output_dir.as_deref();
    let r = changes::list_impacted_tables(
        &inv.ctx,
        pipelines,
        &refs.request(),
        modified_files_path,
        output_dir,
    )?;
    eprintln!("wrote {}", r.written.display());
    let impact = &r.impact;
    if inv.json() {
        print_json(impact);
        return Ok(true);
    }
    let mut body: Vec<Vec<String>> = Vec::new();
    for t in &impact.impacts {
        if t.descendants.is_empty() {
            let why = match t.change_kind {
                ChangeKind::Cosmetic => "cosmetic: impacts nothing",
                _ => "no descendants",
            };
            body.push(vec![
                t.table_name.clone(),
                t.change_kind.to_string(),
                String::new(),
                why.into(),
            ]);
        }
        for d in &t.descendants {
            body.push(vec![
                t.table_name.clone(),
                t.change_kind.to_string(),
                d.table_name.clone(),
                if d.affected_columns.is_empty() {
                    d.reason.clone()
                } else {
                    format!(
                        "{}; affected columns: {}",
                        d.reason,
                        d.affected_columns.join(", ")
                    )
                },
            ]);
        }
    }
    print!(
        "{}",
        table(
            &["changed table", "change", "impacted table", "reason"],
            &body
        )
    );
    println!(
        "{} impacted table(s); DDL modified: {}",
        impact.impacted_tables.len(),
        if impact.ddl_modified_tables.is_empty() {
            "none".to_string()
        } else {
            impact.ddl_modified_tables.join(", ")
        }
    );
    Ok(true)
}
