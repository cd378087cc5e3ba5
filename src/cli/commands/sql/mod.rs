//! `flinkpipe sql …`: the Flink SQL front end on files.

pub mod query;
pub mod refs;

use crate::cli::{CmdResult, Invocation};

/// The commands of `flinkpipe sql`, in the order `--help` lists them.
#[derive(Debug, clap::Subcommand)]
pub enum SqlCommand {
    /// Print the sinks, sources, statements and statefulness of SQL files.
    Refs(refs::Args),
    /// Run a read-only query (SELECT, SHOW, DESCRIBE, EXPLAIN) on the configured target and print its
    /// result: the snapshot its changelog folds into, or the raw changes with --changelog.
    Query(query::Args),
}

/// Runs one parsed `sql` command.
pub fn run(inv: &Invocation, cmd: &SqlCommand) -> CmdResult {
    match cmd {
        SqlCommand::Refs(args) => refs::exec(inv, args),
        SqlCommand::Query(args) => query::exec(inv, args),
    }
}
