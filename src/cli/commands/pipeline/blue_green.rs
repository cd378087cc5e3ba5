//! `flinkpipe pipeline blue-green [DIR] --since REF [--apply]`: versions the subgraph impacted since a
//! git ref (`t` → `t_v2`), prints the diff and the green plan.

use crate::cli::args::BlueGreenArgs;
use crate::cli::render::versioned;
use crate::cli::{CmdResult, Invocation};
use crate::ops::versioning;

pub fn exec(inv: &Invocation, args: &BlueGreenArgs) -> CmdResult {
    let v = versioning::blue_green(
        &inv.ctx,
        &args.dir.pipelines,
        &args.refs.request(),
        &args.default_version,
        args.apply,
        args.allow_unknown,
        args.fail_on.is_some(),
        args.in_place,
    )?;
    versioned(inv.json(), &v);
    Ok(true)
}
