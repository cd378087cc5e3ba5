//! `flinkpipe pipeline build-metadata DML_FILE [DIR]`: the metadata of one table (its
//! `pipeline_definition.json`, and its parents' and children's), all or nothing.

use crate::cli::args::ProjectArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::metadata;

/// Options of `pipeline build-metadata`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table's DML file (`…/sql-scripts/dml.<table>.sql`); a DDL file for a table without DML.
    pub dml_file: std::path::PathBuf,
    #[command(flatten)]
    pub project: ProjectArgs,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let dml_file = args.dml_file.as_path();
    let w = metadata::build_table_metadata(&inv.ctx, pipelines, dml_file, allow_unknown)?;
    if inv.json() {
        print_json(&w);
    } else {
        println!(
            "{}: wrote {} pipeline_definition.json file(s)",
            w.table_name,
            w.files.len()
        );
        for f in &w.files {
            println!("  {}", f.display());
        }
    }
    Ok(true)
}
