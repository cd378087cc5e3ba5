//! `flinkpipe statement stop|resume|delete NAME`: one statement on the configured target.

pub mod delete;
pub mod resume;
pub mod stop;

use crate::cli::{CmdResult, Invocation};

/// `statement …`: one statement on the configured target.
#[derive(Debug, clap::Subcommand)]
pub enum StatementCommand {
    /// Stop a statement and wait until it is STOPPED.
    Stop(stop::Args),
    /// Resume a stopped statement and wait until it is RUNNING.
    Resume(resume::Args),
    /// Delete a statement and wait until it is gone (a name that does not exist is an error).
    Delete(delete::Args),
}

/// Runs one parsed `statement` command.
pub fn run(inv: &Invocation, cmd: &StatementCommand) -> CmdResult {
    match cmd {
        StatementCommand::Stop(args) => stop::exec(inv, args),
        StatementCommand::Resume(args) => resume::exec(inv, args),
        StatementCommand::Delete(args) => delete::exec(inv, args),
    }
}
