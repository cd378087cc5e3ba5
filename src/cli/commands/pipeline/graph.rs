//! `flinkpipe pipeline graph [DIR] [--select EXPR] --format dot|mermaid|json|svg|html`.

use crate::cli::args::GraphFormat;
use crate::cli::{CmdResult, Invocation};
use crate::ops::graph;
use std::path::Path;

pub fn exec(
    inv: &Invocation,
    pipelines: &Path,
    select: Option<&str>,
    format: GraphFormat,
    allow_unknown: bool,
) -> CmdResult {
    let format = match format {
        GraphFormat::Dot => graph::GraphFormat::Dot,
        GraphFormat::Mermaid => graph::GraphFormat::Mermaid,
        GraphFormat::Json => graph::GraphFormat::Json,
        GraphFormat::Svg => graph::GraphFormat::Svg,
        GraphFormat::Html => graph::GraphFormat::Html,
    };
    let g = graph::export(&inv.ctx, pipelines, select, format, allow_unknown)?;
    print!("{}", g.text);
    Ok(!g.project_has_errors)
}
