//! `project init` and `table init`: new projects and table folders from the templates.

use super::{Context, OpsError};
use crate::scaffold::{self, ProjectInit};

pub use crate::scaffold::{ProjectType, TableInit};
use std::path::PathBuf;

pub use crate::scaffold::Created;

/// A new project.
#[derive(Debug, Clone)]
pub struct ProjectInitRequest {
    /// The folder created.
    pub name: String,
    /// Where it is created.
    pub parent: PathBuf,
    pub project_type: ProjectType,
    /// Products (`data_product`: default `data_product_1`).
    pub products: Vec<String>,
}

/// Creates a project: `pipelines/` layer folders, a commented `config.yaml`, `.gitignore`, `README.md`.
///
/// Errors: a file that exists (nothing is overwritten), a bad name, a folder that cannot be written.
pub fn project_init(req: &ProjectInitRequest) -> Result<Created, OpsError> {
    let products = if req.products.is_empty() && req.project_type == ProjectType::DataProduct {
        vec![scaffold::DEFAULT_PRODUCT.to_string()]
    } else {
        req.products.clone()
    };
    Ok(scaffold::init_project(&ProjectInit {
        name: req.name.clone(),
        parent: req.parent.clone(),
        project_type: req.project_type,
        products,
    })?)
}

/// What `table init` created.
#[derive(Debug, Clone)]
pub struct TableCreated {
    /// The table name after the naming convention (`src_sales_orders`).
    pub table_name: String,
    pub created: Created,
}

/// Creates a table folder from the templates, with the project's configuration
/// ([`Context::project_config`]).
///
/// Errors: a bad name, layer or product, a source that is not a table of the project, a file that
/// exists.
pub fn table_init(ctx: &Context, req: &TableInit) -> Result<TableCreated, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let style = match super::target::TargetKind::of(&cfg) {
        super::target::TargetKind::SqlGateway => scaffold::DdlStyle::Gateway {
            bootstrap_servers: super::unit_tests::bootstrap(&cfg),
        },
        super::target::TargetKind::ConfluentCloud => scaffold::DdlStyle::Confluent,
    };
    let t = scaffold::init_table(req, &cfg, &style)?;
    Ok(TableCreated {
        table_name: t.naming.table.clone(),
        created: t.created,
    })
}
