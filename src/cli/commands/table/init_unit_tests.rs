//! `flinkpipe table init-unit-tests TABLE [DIR]`: a tests/ folder from the table's SQL.

use crate::cli::args::ProjectArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, InitRequest};

/// `table init-unit-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// The table under test.
    pub table: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Number of test cases.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub nb_test_cases: usize,
    /// Even test cases read their inputs from CSV files.
    #[arg(long)]
    pub create_csv: bool,
    /// Test suffix: '_' and 2-3 letters or digits [default: app.post_fix_unit_test, else _ut].
    #[arg(long, value_name = "S")]
    pub post_fix_unit_test: Option<String>,
    /// shift_left's option (test data from an LLM), accepted: the data is generated from the
    /// table's SQL, typed as its columns, as without it (a warning says so).
    #[arg(long)]
    pub ai: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    if args.ai {
        inv.ctx.console.warn(
            "warning[ai]: --ai: flinkpipe asks no LLM; the test data is generated from the table's SQL",
        );
    }
    let g = unit_tests::init(
        &inv.ctx,
        &InitRequest {
            pipelines: args.project.dir.pipelines.clone(),
            table: args.table.clone(),
            nb_test_cases: args.nb_test_cases,
            create_csv: args.create_csv,
            suffix: args.post_fix_unit_test.clone(),
            allow_unknown: args.project.allow_unknown,
        },
    )?;
    if inv.json() {
        print_json(&g);
        return Ok(true);
    }
    println!(
        "unit tests of {} in {} (inputs: {})",
        g.table_name,
        g.folder,
        if g.inputs.is_empty() {
            "none".to_string()
        } else {
            g.inputs.join(", ")
        }
    );
    for f in &g.written {
        println!("  wrote {f}");
    }
    for f in &g.kept {
        println!("  kept  {f} (exists)");
    }
    Ok(true)
}
