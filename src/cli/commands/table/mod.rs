//! `flinkpipe table …`: table folders, the inventory and unit tests.

pub mod build_inventory;
pub mod delete_unit_tests;
pub mod init;
pub mod init_unit_tests;
pub mod preview;
pub mod run_unit_tests;
pub mod update_all_makefiles;
pub mod update_makefile;
pub mod update_tables;
pub mod validate_table_names;

use crate::cli::{CmdResult, Invocation};

/// The commands of `flinkpipe table`, in the order `--help` lists them.
#[derive(Debug, clap::Subcommand)]
pub enum TableCommand {
    /// Create a table folder from the templates: `sql-scripts/ddl.<table>.sql`, `dml.<table>.sql`,
    /// `tests/` and a Makefile; the name follows the naming convention (`src_<product>_…`,
    /// `<product>_fct_…`, …).
    Init(init::Args),
    /// Check file names, table names per layer and product, changelog.mode and cleanup policy.
    ValidateTableNames(validate_table_names::Args),
    /// Scan the pipelines tree and write DIR/inventory.json (shift_left's shape).
    BuildInventory(build_inventory::Args),
    /// Write a tests/ folder for TABLE from its SQL (shift_left's files): foundation DDLs renamed to
    /// `<parent>_ut`, typed sample inputs, a validation SQL and an expected-rows CSV per test case.
    /// Never overwrites a file.
    InitUnitTests(init_unit_tests::Args),
    /// Run TABLE's unit tests on the configured target (local Flink SQL Gateway + Kafka, or Confluent
    /// Cloud) and print PASS/FAIL per test case and output; exit 1 when any fails. Everything the run
    /// creates carries the suffix and is removed afterwards (also on failure and Ctrl-C) unless --keep.
    RunUnitTests(run_unit_tests::Args),
    /// shift_left's name for running the validation of the unit tests: the same as run-unit-tests
    /// (every run checks the outputs).
    RunValidationTests(run_unit_tests::Args),
    /// shift_left's other name for running the validation of the unit tests: the same as
    /// run-unit-tests.
    ValidateUnitTests(run_unit_tests::Args),
    /// Replace a string in the names of the SQL files under FOLDER (DML by default): identifiers only,
    /// never strings or comments; prints the diff, then rewrites every file or none.
    UpdateTables(update_tables::Args),
    /// Regenerate TABLE's Makefile from the current template (`templates/table/Makefile`, or the
    /// project's override); targets written below the line `# --- flinkpipe: your targets below ---`
    /// are kept.
    UpdateMakefile(update_makefile::Args),
    /// Regenerate the Makefile of every table folder under DIR (as update-makefile), all or nothing.
    UpdateAllMakefiles(update_all_makefiles::Args),
    /// Remove every statement, test table and topic that runs of TABLE's unit tests create (also after
    /// a killed run).
    DeleteUnitTests(delete_unit_tests::Args),
    /// shift_left's place for `pipeline explain`: the engine's plan of each statement of the scope's
    /// tables (--table-name, --product-name, --table-list-file-name, …).
    Explain(crate::cli::commands::pipeline::explain::Args),
    /// Print the rows of a table of the project, read from the configured target (from the start of
    /// its topic to its current end where the connector allows; folded by its primary key).
    Preview(preview::Args),
}

/// Runs one parsed `table` command.
pub fn run(inv: &Invocation, cmd: &TableCommand) -> CmdResult {
    match cmd {
        TableCommand::Init(args) => init::exec(inv, args),
        TableCommand::ValidateTableNames(args) => validate_table_names::exec(inv, args),
        TableCommand::BuildInventory(args) => build_inventory::exec(inv, args),
        TableCommand::InitUnitTests(args) => init_unit_tests::exec(inv, args),
        TableCommand::RunUnitTests(args) => run_unit_tests::exec(inv, args),
        TableCommand::RunValidationTests(args) => run_unit_tests::exec(inv, args),
        TableCommand::ValidateUnitTests(args) => run_unit_tests::exec(inv, args),
        TableCommand::UpdateTables(args) => update_tables::exec(inv, args),
        TableCommand::UpdateMakefile(args) => update_makefile::exec(inv, args),
        TableCommand::UpdateAllMakefiles(args) => update_all_makefiles::exec(inv, args),
        TableCommand::DeleteUnitTests(args) => delete_unit_tests::exec(inv, args),
        TableCommand::Preview(args) => preview::exec(inv, args),
        TableCommand::Explain(args) => crate::cli::commands::pipeline::explain::exec(inv, args),
    }
}
