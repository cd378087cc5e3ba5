//! `flinkpipe pipeline build-metadata DML_FILE [DIR]`: the metadata of one table (its
//! `pipeline_definition.json`, and its parents' and children's), all or nothing.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::metadata;
use std::path::Path;

pub fn exec(inv: &Invocation, pipelines: &Path, dml_file: &Path, allow_unknown: bool) -> CmdResult {
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
