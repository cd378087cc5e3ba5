//! `flinkpipe statement stop NAME`: Stop a statement and wait until it is STOPPED.

use crate::cli::args::statement_project_dir;
use crate::cli::render::statement_outcome;
use crate::cli::{CmdResult, Invocation};
use crate::ops::statement::{self, StatementRequest, StatementVerb};
use std::time::Duration;

pub fn exec(inv: &Invocation, name: &str, timeout: u64) -> CmdResult {
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
