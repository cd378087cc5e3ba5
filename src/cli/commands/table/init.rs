//! `flinkpipe table init NAME LAYER|TABLE_PATH`: a table folder from the templates.

use crate::cli::render::created;
use crate::cli::{CmdResult, Invocation};
use crate::ops::scaffold::{self, TableInit};
use std::path::PathBuf;

/// Options of `table init`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Table name, with or without the convention's prefix (`orders` → `src_<product>_orders` in sources).
    pub name: String,
    /// Layer: sources, intermediates, dimensions, facts, views or seeds (or a folder of
    /// flinkpipe.layers); or shift_left's TABLE_PATH, the folder `<layer>[/<product>]` the table goes
    /// in, relative to the pipelines folder or absolute inside it ($PIPELINES/sources/p1).
    #[arg(value_name = "LAYER|TABLE_PATH")]
    pub layer: String,
    /// The product the table belongs to.
    #[arg(long, alias = "product-name", value_name = "P")]
    pub product: Option<String>,
    /// A table the DML reads (repeatable; required outside sources and seeds).
    #[arg(long = "source", value_name = "TABLE")]
    pub sources: Vec<String>,
    /// The pipelines folder.
    #[arg(
        long,
        env = "PIPELINES",
        default_value = "pipelines",
        value_name = "DIR"
    )]
    pub pipelines: PathBuf,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
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
