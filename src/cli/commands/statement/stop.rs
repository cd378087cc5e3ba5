//! `flinkpipe statement stop NAME`: Stop a statement and wait until it is STOPPED.

use crate::cli::args::statement_project_dir;
use crate::cli::render::statement_outcome;
use crate::cli::{CmdResult, Invocation};
use crate::ops::statement::{self, StatementRequest, StatementVerb};
use std::time::Duration;

/// Options of `statement stop`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The statement name.
    pub name: String,
    /// Longest wait, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub timeout: u64,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let (name, timeout) = (args.name.as_str(), args.timeout);
    let outcome = statement::act(
        &inv.ctx,
        &StatementRequest {
            name: name.to_string(),
            verb: StatementVerb::Stop,
            timeout: Duration::from_secs(timeout),
            pipelines: statement_project_dir(),
        },
    )?;
    statement_outcome(inv.json(), &outcome);
    Ok(true)
}
