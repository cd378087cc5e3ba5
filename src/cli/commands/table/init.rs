//! `flinkpipe table init NAME LAYER`: a table folder from the templates.

use crate::cli::args::TableInitArgs;
use crate::cli::render::created;
use crate::cli::{CmdResult, Invocation};
use crate::ops::scaffold::{self, TableInit};

pub fn exec(inv: &Invocation, args: &TableInitArgs) -> CmdResult {
    let t = scaffold::table_init(
        &inv.ctx,
        &TableInit {
            pipelines: args.pipelines.clone(),
            name: args.name.clone(),
            layer: args.layer.clone(),
            product: args.product.clone(),
            sources: args.sources.clone(),
        },
    )?;
    created(inv.json(), Some(&t.table_name), &t.created);
    Ok(true)
}
