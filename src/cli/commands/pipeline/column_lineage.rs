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
