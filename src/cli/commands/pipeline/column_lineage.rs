//! `flinkpipe pipeline column-lineage [DIR] [--table T [--column C]] [--upstream|--downstream]
//! [--format json|openlineage|dot|mermaid|html]`.

use crate::cli::args::LineageFormat;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::column_lineage::{self, LineageRequest};
use std::path::Path;

pub fn exec(
    inv: &Invocation,
    pipelines: &Path,
    req: &LineageRequest,
    format: LineageFormat,
) -> CmdResult {
    let l = column_lineage::column_lineage(&inv.ctx, pipelines, req)?;
    match format {
        LineageFormat::Json => print_json(&l),
        LineageFormat::Openlineage => print!(
            "{}",
            column_lineage::to_openlineage(
                &l,
                &crate::ops::now_utc()
                    .replacen(' ', "T", 1)
                    .replace(" UTC", "Z")
            )
        ),
        LineageFormat::Html => print!("{}", column_lineage::to_html(&l)),
        LineageFormat::Dot => print!("{}", column_lineage::to_dot(&l)),
        LineageFormat::Mermaid => print!("{}", column_lineage::to_mermaid(&l)),
    }
    for u in &l.unresolved {
        eprintln!(
            "note: {}:{}: the column lineage of {} is not certain: {}",
            u.file,
            u.line,
            u.table,
            u.reasons.join("; ")
        );
    }
    Ok(true)
}

/// `pipeline field-lineage TABLE [DIR] [-o DIR] [--open]` (shift_left's name): the column lineage of
/// TABLE, upstream and downstream, written as `<DIR>/<table>_lineage.json` (the JSON of
/// `column-lineage`); `--open` also writes `<table>_lineage.html` and prints its path.
pub fn field_lineage(
    inv: &Invocation,
    pipelines: &Path,
    table: &str,
    output_dir: Option<&Path>,
    open: bool,
) -> CmdResult {
    let l = column_lineage::column_lineage(
        &inv.ctx,
        pipelines,
        &LineageRequest {
            table: Some(table.to_string()),
            ..Default::default()
        },
    )?;
    let dir = output_dir.map_or_else(|| Path::new(".").to_path_buf(), Path::to_path_buf);
    std::fs::create_dir_all(&dir).map_err(|e| {
        crate::ops::OpsError::Refused(format!("cannot create {}: {e}", dir.display()))
    })?;
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
