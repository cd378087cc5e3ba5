//! `flinkpipe sql query "SELECT …" | --file F`: a read-only query on the configured target.

use crate::cli::args::QueryArgs;
use crate::cli::render::{QueryDisplay, query_outcome};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::query::{self, QueryRequest};

pub fn exec(inv: &Invocation, args: &QueryArgs) -> CmdResult {
    let (sql, origin) = match (&args.sql, &args.file) {
        (Some(s), _) => (s.clone(), "command line".to_string()),
        (None, Some(f)) => (
            crate::fsutil::read_user_text(f, crate::fsutil::MAX_SQL_FILE_BYTES)
                .map_err(|e| Failure::new(format!("cannot read {}: {e}", f.display())))?,
            f.display().to_string(),
        ),
        (None, None) => return Err(Failure::usage("give a query or --file F")),
    };
    let display = QueryDisplay::new(inv.json(), &args.read);
    let outcome = query::query(
        &inv.ctx,
        &QueryRequest {
            sql,
            origin,
            pipelines: Some(args.pipelines.clone()).filter(|p| p.is_dir()),
            read: args.read.options()?,
            follow: args.read.follow,
        },
        &display,
    )?;
    display.finish();
    query_outcome(inv.json(), &args.read, &outcome);
    Ok(outcome.result.close_error.is_none())
}
