//! `flinkpipe table …`: table folders and the inventory.

mod build_inventory;
mod init;
mod preview;
mod validate_table_names;

use crate::cli::args::TableCommand;
use crate::cli::{CmdResult, Invocation};

pub fn run(inv: &Invocation, cmd: &TableCommand) -> CmdResult {
    match cmd {
        TableCommand::Init(args) => init::exec(inv, args),
        TableCommand::ValidateTableNames { dir } => validate_table_names::exec(inv, &dir.pipelines),
        TableCommand::BuildInventory { dir } => build_inventory::exec(inv, &dir.pipelines),
        TableCommand::Preview(args) => preview::exec(inv, args),
    }
}
