//! `flinkpipe table init-unit-tests TABLE [DIR]`: a tests/ folder from the table's SQL.

use crate::cli::args::InitUnitTestsArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unit_tests::{self, InitRequest};

pub fn exec(inv: &Invocation, args: &InitUnitTestsArgs) -> CmdResult {
    let g = unit_tests::init(
        &inv.ctx,
        &InitRequest {
            pipelines: args.dir.pipelines.clone(),
            table: args.table.clone(),
            nb_test_cases: args.nb_test_cases,
            create_csv: args.create_csv,
            suffix: args.post_fix_unit_test.clone(),
            allow_unknown: args.allow_unknown,
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
