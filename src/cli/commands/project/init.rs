//! `flinkpipe project init NAME [PATH]`: a new project.

use crate::cli::render::created;
use crate::cli::{CmdResult, Invocation};
use crate::ops::scaffold::{self, ProjectInitRequest, ProjectType};
use std::path::PathBuf;

/// Layouts of `project init`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProjectTypeArg {
    /// `pipelines/<layer>/`.
    Kimball,
    /// `pipelines/<layer>/<product>/` per product.
    #[value(name = "data_product", alias = "data-product")]
    DataProduct,
}

/// Options of `project init`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Project name: the folder created.
    pub name: String,
    /// Where the project folder is created.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Folder layout.
    #[arg(long, value_enum, default_value_t = ProjectTypeArg::Kimball)]
    pub project_type: ProjectTypeArg,
    /// A product (repeatable) [data_product default: data_product_1].
    #[arg(long = "product", value_name = "P")]
    pub products: Vec<String>,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let c = scaffold::project_init(&ProjectInitRequest {
        name: args.name.clone(),
        parent: args.path.clone(),
        project_type: match args.project_type {
            ProjectTypeArg::Kimball => ProjectType::Kimball,
            ProjectTypeArg::DataProduct => ProjectType::DataProduct,
        },
        products: args.products.clone(),
    })?;
    created(inv.json(), None, &c);
    Ok(true)
}
