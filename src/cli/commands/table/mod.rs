//! `flinkpipe table …`: table folders, the inventory and unit tests.

mod build_inventory;
mod delete_unit_tests;
mod init;
mod init_unit_tests;
mod preview;
mod run_unit_tests;
mod update_makefiles;
mod update_tables;
mod validate_table_names;

use crate::cli::args::TableCommand;
use crate::cli::{CmdResult, Invocation};

pub fn run(inv: &Invocation, cmd: &TableCommand) -> CmdResult {
    match cmd {
        TableCommand::Init(args) => init::exec(inv, args),
        TableCommand::ValidateTableNames { dir } => validate_table_names::exec(inv, &dir.pipelines),
        TableCommand::BuildInventory { dir } => build_inventory::exec(inv, &dir.pipelines),
        TableCommand::InitUnitTests(args) => init_unit_tests::exec(inv, args),
        TableCommand::RunUnitTests(args)
        | TableCommand::RunValidationTests(args)
        | TableCommand::ValidateUnitTests(args) => run_unit_tests::exec(inv, args),
        TableCommand::DeleteUnitTests(args) => delete_unit_tests::exec(inv, args),
        TableCommand::Preview(args) => preview::exec(inv, args),
        TableCommand::UpdateTables(args) => update_tables::exec(inv, args),
        TableCommand::UpdateMakefile {
            table,
            dir,
            allow_unknown,
        } => update_makefiles::exec(inv, &dir.pipelines, Some(table), *allow_unknown),
        TableCommand::UpdateAllMakefiles { dir, allow_unknown } => {
            update_makefiles::exec(inv, &dir.pipelines, None, *allow_unknown)
        }
    }
}
