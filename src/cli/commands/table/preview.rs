//! `flinkpipe table preview TABLE [--where EXPR] [--limit N]`: the rows of a table of the project.

use crate::cli::args::{ProjectArgs, ReadArgs};
use crate::cli::render::{QueryDisplay, query_outcome};
use crate::cli::{CmdResult, Invocation};
use crate::ops::query::{self, PreviewRequest};

/// Options of `table preview`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The table (its current version is found from the unversioned name).
    pub table: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Only rows matching this SQL condition.
    #[arg(long = "where", value_name = "EXPR")]
    pub filter: Option<String>,
    /// At most N rows (same as --max-rows).
    #[arg(long, value_name = "N", conflicts_with = "max_rows")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Of a blue-green pair, which table to read: green (the newest version, what the name
    /// resolves to) or blue (the version before it, still running until decommission).
    #[arg(long, value_enum, default_value_t = SideArg::Green)]
    pub side: SideArg,
}

/// `--side` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SideArg {
    Green,
    Blue,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let mut read = args.read.options()?;
    if args.limit.is_some() {
        read.max_rows = args.limit;
    }
    let display = QueryDisplay::new(inv.json(), &args.read);
    let outcome = query::preview(
        &inv.ctx,
        &PreviewRequest {
            pipelines: args.project.dir.pipelines.clone(),
            table: args.table.clone(),
            filter: args.filter.clone(),
            read,
            follow: args.read.follow,
            allow_unknown: args.project.allow_unknown,
            side: match args.side {
                SideArg::Green => query::Side::Green,
                SideArg::Blue => query::Side::Blue,
            },
        },
        &display,
    )?;
    display.finish();
    query_outcome(inv.json(), &args.read, &outcome);
    Ok(outcome.result.close_error.is_none())
}
