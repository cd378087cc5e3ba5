//! `flinkpipe sql query "SELECT …" | --file F`: a read-only query on the configured target.

use crate::cli::args::ReadArgs;
use crate::cli::render::{QueryDisplay, query_outcome};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::query::{self, QueryRequest};
use std::path::PathBuf;

/// Options of `sql query`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The query.
    #[arg(
        value_name = "SQL",
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    pub sql: Option<String>,
    /// Read the query from this file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The project whose tables the SQL Gateway declares for the query (its catalog is per session).
    #[arg(
        long,
        env = "PIPELINES",
        default_value = "pipelines",
        value_name = "DIR"
    )]
    pub pipelines: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
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
