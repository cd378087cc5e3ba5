//! `flinkpipe project init NAME [PATH]`: a new project.

use crate::cli::args::{ProjectInitArgs, ProjectTypeArg};
use crate::cli::render::created;
use crate::cli::{CmdResult, Invocation};
use crate::ops::scaffold::{self, ProjectInitRequest, ProjectType};

pub fn exec(inv: &Invocation, args: &ProjectInitArgs) -> CmdResult {
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
