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
    /// Folder for impacted_tables.json [default: $FLINKPIPE_OUTPUT_DIR, else the project's
    /// .flinkpipe/].
    #[arg(long, value_name = "DIR", conflicts_with = "output_file")]
    pub output_dir: Option<PathBuf>,
    /// shift_left's option: the pipelines folder (over DIR and $PIPELINES).
    #[arg(long, value_name = "DIR")]
    pub project_path: Option<PathBuf>,
    /// shift_left's option: the file to write instead of <output dir>/impacted_tables.json.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project_path.as_deref().unwrap_or(&args.dir.pipelines);
    let refs = &args.refs;
    let modified_files_path = args.modified_files_path.as_deref();
    let output = match &args.output_file {
        Some(f) => changes::Output::File(f.clone()),
        None => changes::Output::Dir(args.output_dir.clone()),
    };
    let r = changes::list_impacted_tables(
        &inv.ctx,
        pipelines,
        &refs.request(),
        modified_files_path,
        &output,
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
