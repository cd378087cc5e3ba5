//! `flinkpipe sql …`: the Flink SQL front end on files.

mod query;
mod refs;

use crate::cli::args::SqlCommand;
use crate::cli::{CmdResult, Invocation};

pub fn run(inv: &Invocation, cmd: &SqlCommand) -> CmdResult {
    match cmd {
        SqlCommand::Refs { files } => refs::exec(inv, files),
        SqlCommand::Query(args) => query::exec(inv, args),
    }
}
