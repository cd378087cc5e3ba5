//! `flinkpipe pipeline column-lineage [DIR] [--table T [--column C]] [--upstream|--downstream]
//! [--format json|openlineage|dot|mermaid|html]`.

use crate::cli::args::ProjectArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::column_lineage::{self, LineageRequest};

/// Column lineage formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LineageFormat {
    /// `{"columns", "edges", "unresolved"}`.
    Json,
    /// OpenLineage run events (JSON Lines), one per statement, with the `columnLineage` facet.
    Openlineage,
    Dot,
    Mermaid,
    /// A self-contained page: click a column to see its upstream and downstream.
    Html,
}

/// Options of `pipeline column-lineage`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Only the lineage of this table (transitively).
    #[arg(long)]
    pub table: Option<String>,
    /// With --table: only the lineage of this column.
    #[arg(long, requires = "table")]
    pub column: Option<String>,
    /// Towards the sources only.
    #[arg(long, requires = "table", conflicts_with = "downstream")]
    pub upstream: bool,
    /// Towards the readers only.
    #[arg(long, requires = "table")]
    pub downstream: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LineageFormat::Json)]
    pub format: LineageFormat,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let req = &LineageRequest {
        table: args.table.clone(),
        column: args.column.clone(),
        upstream: args.upstream,
        downstream: args.downstream,
        allow_unknown: args.project.allow_unknown,
    };
    let format = args.format;
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
