//! `flinkpipe table update-makefile TABLE [DIR]` and `table update-all-makefiles [DIR]`: the table
//! Makefiles regenerated from the current template, the user's targets below the marker kept.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::makefiles::{self, MakefileChange};
use std::path::Path;

pub fn exec(
    inv: &Invocation,
    pipelines: &Path,
    table: Option<&str>,
    allow_unknown: bool,
) -> CmdResult {
    let r = makefiles::update_makefiles(&inv.ctx, pipelines, table, allow_unknown)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    for m in &r.makefiles {
        let what = match m.change {
            MakefileChange::Created => "created".to_string(),
            MakefileChange::Updated => format!("updated, {} line(s) of yours kept", m.kept_lines),
            MakefileChange::Replaced => {
                "replaced (it had no marker line: nothing in it was kept)".into()
            }
            MakefileChange::Unchanged => "unchanged".into(),
            MakefileChange::Skipped => "skipped (its type is no layer of the template)".into(),
        };
        println!("{}: {} {what}", m.table_name, m.path.display());
    }
    Ok(true)
}
