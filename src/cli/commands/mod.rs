//! One file per command, mirroring `flinkpipe <group> <command>`: each parses nothing more, calls one
//! operation of [`crate::ops`] and renders its report. Command files import only `ops`, the shared
//! argument types and the renderers, never each other.

mod completions;
mod man;
mod pipeline;
mod project;
mod sql;
mod statement;
mod table;
mod version;

use super::args::Command;
use super::{CmdResult, Invocation};

/// Runs one parsed command.
pub fn run(inv: &Invocation, command: &Command) -> CmdResult {
    match command {
        Command::Project(c) => project::run(inv, c),
        Command::Table(c) => table::run(inv, c),
        Command::Pipeline(c) => pipeline::run(inv, c),
        Command::Sql(c) => sql::run(inv, c),
        Command::Statement(c) => statement::run(inv, c),
        Command::Version(a) => version::exec(inv, a),
        Command::Completions { shell } => completions::exec(*shell),
        Command::Man(a) => man::exec(a),
    }
}
