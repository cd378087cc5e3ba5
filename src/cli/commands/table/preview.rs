//! `flinkpipe table preview TABLE [--where EXPR] [--limit N]`: the rows of a table of the project.

use crate::cli::args::PreviewArgs;
use crate::cli::render::{QueryDisplay, query_outcome};
use crate::cli::{CmdResult, Invocation};
use crate::ops::query::{self, PreviewRequest};

pub fn exec(inv: &Invocation, args: &PreviewArgs) -> CmdResult {
    let mut read = args.read.options()?;
    if args.limit.is_some() {
        read.max_rows = args.limit;
    }
    let display = QueryDisplay::new(inv.json(), &args.read);
    let outcome = query::preview(
        &inv.ctx,
        &PreviewRequest {
            pipelines: args.dir.pipelines.clone(),
            table: args.table.clone(),
            filter: args.filter.clone(),
            read,
            follow: args.read.follow,
            allow_unknown: args.allow_unknown,
        },
        &display,
    )?;
    display.finish();
    query_outcome(inv.json(), &args.read, &outcome);
    Ok(outcome.result.close_error.is_none())
}
