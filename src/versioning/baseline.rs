//! What the impacted tables were called at the base commit, read from git objects (never a checkout), so
//! that a subgraph already versioned against the same base is recognised and not bumped again.

use crate::changes::ChangeError;
use crate::config::Config;
use crate::inventory::{first_created, first_insert_target, resolve_name};
use crate::project::Project;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// For each table of `tables` whose folder existed at `base_commit`: the table name there (from the DML's
/// first INSERT target, else the DDL's CREATE), keyed by the table's name at the head.
///
/// Errors: the pipelines folder is not in a git work tree, or the commit cannot be read.
pub fn base_names(
    pipelines_dir: &Path,
    base_commit: &str,
    project: &Project,
    config: &Config,
    tables: &BTreeSet<String>,
) -> Result<BTreeMap<String, String>, ChangeError> {
    let (repo, _, prefix) = crate::changes::git::open(pipelines_dir)?;
    let tree = repo
        .revparse_single(base_commit)
        .and_then(|o| o.peel_to_tree())
        .map_err(|e| ChangeError::BadRef {
            name: base_commit.to_string(),
            message: e.message().to_string(),
        })?;
    let inv = &project.inventory;
    let read = |rel: &str| -> Option<String> {
        let in_root = inv.rel_to_root(rel);
        let path = if prefix.is_empty() {
            in_root.to_string()
        } else {
            format!("{prefix}/{in_root}")
        };
        let entry = tree.get_path(Path::new(&path)).ok()?;
        let blob = repo.find_blob(entry.id()).ok()?;
        String::from_utf8(blob.content().to_vec()).ok()
    };
    let mut out = BTreeMap::new();
    for name in tables {
        let Some(t) = inv.tables.get(name) else {
            continue;
        };
        let from_dml = t.dml_ref.as_deref().and_then(read).and_then(|text| {
            first_insert_target(&crate::sql::analyze(&text)).map(|r| resolve_name(&r.name, config))
        });
        let base = from_dml.or_else(|| {
            t.ddl_ref.as_deref().and_then(read).and_then(|text| {
                first_created(&crate::sql::analyze(&text))
                    .map(|(r, _)| resolve_name(&r.name, config))
            })
        });
        if let Some(b) = base {
            out.insert(name.clone(), b);
        }
    }
    Ok(out)
}
