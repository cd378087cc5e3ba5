//! `flinkpipe pipeline field-lineage TABLE [DIR] [-o DIR] [--open]` (shift_left's name).

use crate::cli::args::PipelinesDir;
use crate::cli::{CmdResult, Invocation};
use crate::ops::column_lineage::{self, LineageRequest};
use std::path::PathBuf;

/// Options of `pipeline field-lineage`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table.
    pub table_name: String,
    #[command(flatten)]
    pub dir: PipelinesDir,
    /// Output folder for the lineage JSON and HTML page [default: $FLINKPIPE_OUTPUT_DIR, else the
    /// project's .flinkpipe/].
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Open the HTML page.
    #[arg(long)]
    pub open: bool,
}

/// `pipeline field-lineage TABLE [DIR] [-o DIR] [--open]` (shift_left's name): the column lineage of
/// TABLE, upstream and downstream, written as `<DIR>/<table>_lineage.json` (the JSON of
/// `column-lineage`); `--open` also writes `<table>_lineage.html` and prints its path.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let table = args.table_name.as_str();
    let output_dir = args.output_dir.as_deref();
    let open = args.open;
    let l = column_lineage::column_lineage(
        &inv.ctx,
        pipelines,
        &LineageRequest {
            table: Some(table.to_string()),
            ..Default::default()
        },
    )?;
    // The name becomes a file name in DIR: one plain component, or nothing is written.
    let table = crate::fsutil::file_name_component(table).map_err(|why| {
        crate::ops::OpsError::Refused(format!(
            "table name {shown} cannot name a file in the output folder: it {why}; nothing was written", shown = crate::fsutil::shown_name(table)
        ))
    })?;
    let dir = crate::ops::output_dir(output_dir, pipelines)?;
    let json = dir.join(format!("{table}_lineage.json"));
    crate::fsutil::write_atomic(&json, crate::fsutil::to_json_pretty(&l).as_bytes()).map_err(
        |e| crate::ops::OpsError::Refused(format!("cannot write {}: {e}", json.display())),
    )?;
    println!("wrote {}", json.display());
    if open {
        let html = dir.join(format!("{table}_lineage.html"));
        crate::fsutil::write_atomic(&html, column_lineage::to_html(&l).as_bytes()).map_err(
            |e| crate::ops::OpsError::Refused(format!("cannot write {}: {e}", html.display())),
        )?;
        println!("wrote {} (open it in a browser)", html.display());
    }
    Ok(true)
}
