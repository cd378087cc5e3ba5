//! `flinkpipe project init-integration-tests --table-name SINK [DIR]`: the sink's
//! tests/integration/ folder, from its subgraph's SQL.

use crate::cli::args::IntegrationTarget;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::OpsError;
use crate::ops::integration_tests::{self, InitRequest};

/// `project init-integration-tests`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub target: IntegrationTarget,
    /// Number of scenarios, each with its own rows.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub nb_scenarios: usize,
    /// Even scenarios read their inputs from CSV files.
    #[arg(long)]
    pub create_csv: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let (table, pipelines) = args.target.resolve().map_err(OpsError::Usage)?;
    let g = integration_tests::init(
        &inv.ctx,
        &InitRequest {
            pipelines,
            table,
            nb_scenarios: args.nb_scenarios,
            create_csv: args.create_csv,
            suffix: args.target.post_fix_integration_test.clone(),
            allow_unknown: args.target.allow_unknown,
        },
    )?;
    if inv.json() {
        print_json(&g);
        return Ok(true);
    }
    println!(
        "integration tests of {} in {} (sources: {})",
        g.table_name,
        g.folder,
        g.inputs.join(", ")
    );
    for f in &g.written {
        println!("  wrote {f}");
    }
    for f in &g.kept {
        println!("  kept  {f} (exists)");
    }
    if !g.written.is_empty() {
        println!(
            "next: check the input rows, write the expected rows of {} (a first run lists what it holds), then `flinkpipe project run-integration-tests --table-name {}`",
            g.table_name, g.table_name
        );
    }
    Ok(true)
}
