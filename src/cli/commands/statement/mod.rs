//! `flinkpipe statement stop|resume|delete NAME`: one statement on the configured target.

mod delete;
mod resume;
mod stop;

use crate::cli::args::StatementCommand;
use crate::cli::{CmdResult, Invocation};

pub fn run(inv: &Invocation, cmd: &StatementCommand) -> CmdResult {
    match cmd {
        StatementCommand::Stop { name, timeout } => stop::exec(inv, name, *timeout),
        StatementCommand::Resume { name, timeout } => resume::exec(inv, name, *timeout),
        StatementCommand::Delete { name, timeout } => delete::exec(inv, name, *timeout),
    }
}
