//! `flinkpipe pipeline blue-green [DIR] --since REF [--apply]`: versions the subgraph impacted since a
//! git ref (`t` → `t_v2`), prints the diff and the green plan.

use crate::cli::args::{ChangeRefs, FailOn, ProjectArgs};
use crate::cli::render::versioned;
use crate::cli::{CmdResult, Invocation};
use crate::ops::versioning;

/// Options of `pipeline blue-green`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Suffix for tables without a version yet.
    #[arg(long, default_value = "_v2", value_name = "SUFFIX")]
    pub default_version: String,
    /// Rewrite the files and rebuild inventory.json and the metadata (default: only print the diff and plan).
    #[arg(long)]
    pub apply: bool,
    /// Refuse (exit 1) when a schema change since the ref is breaking for a downstream reader.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Version only what needs it: a table whose statement is `stateless` by `pipeline
    /// upgrade-check` (on the SQL Gateway also `state-compatible`, restored from a savepoint) and
    /// whose schema did not change is upgraded in place, its readers untouched.
    #[arg(long)]
    pub in_place: bool,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let v = versioning::blue_green(
        &inv.ctx,
        &args.project.dir.pipelines,
        &args.refs.request(),
        &versioning::BlueGreenOptions {
            default_version: args.default_version.clone(),
            apply: args.apply,
            allow_unknown: args.project.allow_unknown,
            fail_on_breaking: args.fail_on.is_some(),
            in_place: args.in_place,
        },
    )?;
    versioned(inv.json(), &v);
    Ok(true)
}
