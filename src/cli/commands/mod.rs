//! One file per command, mirroring `flinkpipe <group> <command>`: each declares its options (`Args`,
//! composed from the flag groups of [`crate::cli::args`]), calls one operation of [`crate::ops`] in
//! `exec` and renders its report; its `--output json` is the serialisation of that report (a view
//! struct beside `exec` where the JSON must differ). Each group's `mod.rs` lists its commands (the
//! clap subcommand enum) and dispatches them. Command files import only `ops`, the flag groups and
//! the renderers, never each other. Adding a command: its file and one variant and one arm in its
//! group's `mod.rs`.

pub mod completions;
pub mod man;
pub mod pipeline;
pub mod project;
pub mod sql;
pub mod statement;
pub mod table;
pub mod version;

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
