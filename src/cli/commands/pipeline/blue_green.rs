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
        &versioning::BlueGreenOptions {
            default_version: args.default_version.clone(),
            apply: args.apply,
            allow_unknown: args.allow_unknown,
            fail_on_breaking: args.fail_on.is_some(),
            in_place: args.in_place,
        },
    )?;
    versioned(inv.json(), &v);
    Ok(true)
}
