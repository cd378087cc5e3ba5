//! `flinkpipe project update-tables-version FILE [DIR]`: the listed tables and their descendants get
//! their next version (`t` → `t_v2`), files rewritten by token spans.

use crate::cli::args::UpdateTablesVersionArgs;
use crate::cli::render::versioned;
use crate::cli::{CmdResult, Invocation};
use crate::ops::versioning;

pub fn exec(inv: &Invocation, args: &UpdateTablesVersionArgs) -> CmdResult {
    let v = versioning::update_tables_version(
        &inv.ctx,
        &args.dir.pipelines,
        &args.table_list,
        &args.default_version,
        !args.dry_run,
        args.allow_unknown,
    )?;
    versioned(inv.json(), &v);
    Ok(true)
}
