//! `project isolate-data-product PRODUCT SOURCE_FOLDER TARGET_FOLDER`: a new project tree with one
//! product's tables and every ancestor they read (their folders copied whole, generated metadata
//! left out), the external tables they read declared in its `seeds/external_tables.json`, and the
//! source project's `config.yaml`. The copy is made beside the target, checked to load without
//! errors, and only then moved into place: the new tree validates on its own, or nothing is written.

use super::{Context, OpsError};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What was isolated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Isolated {
    pub product_name: String,
    /// The new pipelines folder (`TARGET_FOLDER/pipelines`).
    pub pipelines: PathBuf,
    /// The product's tables.
    pub tables: Vec<String>,
    /// Tables of other products they read, and those sharing a statement set with them (copied
    /// too).
    pub ancestors: Vec<String>,
    /// External tables they read (declared in the new `seeds/external_tables.json`).
    pub external: Vec<String>,
    /// Files copied.
    pub files: usize,
}

/// Refuses a target folder inside the source pipelines folder (the copy would become tables of the
/// source: every table twice) or a source inside the target, whatever the spelling: both resolved
/// ([`crate::fsutil::resolve`]: symbolic links, `..`, a target that does not exist yet).
fn overlapping(source: &Path, target: &Path) -> Result<(), OpsError> {
    let (s, t) = (
        crate::fsutil::resolve(source),
        crate::fsutil::resolve(target),
    );
    let why = if t.starts_with(&s) {
        "is inside the source pipelines folder"
    } else if s.starts_with(&t) {
        "holds the source pipelines folder"
    } else {
        return Ok(());
    };
    Err(OpsError::Refused(format!(
        "target folder {} ({}) {why} {} ({}): give a folder outside it (nothing was written)",
        target.display(),
        t.display(),
        source.display(),
        s.display()
    )))
}

/// Isolates `product` of the project at `source` (its pipelines folder) into `target/pipelines`.
///
/// Errors: a target inside the source or holding it, errors in the source project, an unknown
/// product (with the products there are), a target whose `pipelines/` exists already, a copy that does not load without errors (removed), a file that
/// cannot be copied (nothing left behind).
pub fn isolate(
    ctx: &Context,
    product: &str,
    source: &Path,
    target: &Path,
) -> Result<Isolated, OpsError> {
    overlapping(source, target)?;
    let cfg = ctx.project_config(source)?;
    let project = ctx.load_valid_project(
        &cfg,
        source,
        false,
        "nothing isolated: fix the errors above",
    )?;
    let tables = product_tables(&project.inventory, product, source)?;
    let (ancestors, external) = what_they_need(&project, &tables);
    let dest = target.join("pipelines");
    if dest.exists() {
        return Err(OpsError::Refused(format!(
            "{} exists already: give a new target folder (nothing was written)",
            dest.display()
        )));
    }
    std::fs::create_dir_all(target).map_err(|source| OpsError::Write {
        path: target.to_path_buf(),
        source,
    })?;
    let staging = target.join(format!(
        ".pipelines.flinkpipe-isolate-{}",
        std::process::id()
    ));
    let staged = stage(&project.inventory, &staging, &tables, &ancestors, &external)
        .and_then(|files| stands_alone(&staging, &cfg).map(|()| files));
    let mut files = match staged {
        Ok(f) => f,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    std::fs::rename(&staging, &dest).map_err(|source| {
        let _ = std::fs::remove_dir_all(&staging);
        OpsError::Write {
            path: dest.clone(),
            source,
        }
    })?;
    // The configuration last, once the tree is in place: a failed run leaves no config.yaml behind.
    if let Some(c) = cfg.source.as_ref().filter(|c| c.is_file()) {
        let to = target.join("config.yaml");
        if !to.exists() {
            // Copied beside it, then renamed: its permission bits kept (a 0600 file stays 0600).
            let tmp = target.join(format!(
                ".config.yaml.flinkpipe-isolate-{}",
                std::process::id()
            ));
            let copied = std::fs::copy(c, &tmp)
                .and_then(|_| std::fs::rename(&tmp, &to))
                .map_err(|source| {
                    let _ = std::fs::remove_file(&tmp);
                    OpsError::Write {
                        path: to.clone(),
                        source,
                    }
                });
            if let Err(e) = copied {
                let _ = std::fs::remove_dir_all(&dest);
                return Err(e);
            }
            files += 1;
        }
    }
    Ok(Isolated {
        product_name: product.to_string(),
        pipelines: dest,
        tables,
        ancestors,
        external,
        files,
    })
}

/// The tables of `product`, sorted. Errors: it has none (the message names the products there are).
fn product_tables(
    inv: &crate::inventory::Inventory,
    product: &str,
    source: &Path,
) -> Result<Vec<String>, OpsError> {
    let mut tables: Vec<String> = inv
        .tables
        .values()
        .filter(|t| !t.external && !t.unknown && t.product == product)
        .map(|t| t.name.clone())
        .collect();
    tables.sort();
    if tables.is_empty() {
        let products: BTreeSet<&str> = inv
            .tables
            .values()
            .filter(|t| !t.external)
            .map(|t| t.product.as_str())
            .collect();
        return Err(OpsError::Refused(format!(
            "no table of product '{product}' in {} (products: {})",
            source.display(),
            products.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(tables)
}

/// The tables of other products that `tables` need, `(copied, external)`: their ancestors and —
/// until nothing is added — the tables that share a statement set with any of them (its writer's
/// folder holds the DML; the other sinks need their DDL folders); external and unknown ones are
/// declared, not copied.
fn what_they_need(
    project: &crate::project::Project,
    tables: &[String],
) -> (Vec<String>, Vec<String>) {
    let inv = &project.inventory;
    let mut all: BTreeSet<String> = tables.iter().cloned().collect();
    loop {
        let names: Vec<&str> = all.iter().map(String::as_str).collect();
        let mut next: BTreeSet<String> = all.clone();
        next.extend(project.graph.ancestors(&names));
        for n in &all {
            if let Some(t) = inv.tables.get(n) {
                next.extend(t.written_by.iter().cloned());
                next.extend(t.extra_sinks.iter().cloned());
            }
        }
        if next.len() == all.len() {
            break;
        }
        all = next;
    }
    let mut ancestors = Vec::new();
    let mut external = Vec::new();
    for a in all.iter().filter(|a| !tables.contains(a)) {
        match inv.tables.get(a) {
            Some(t) if t.external || t.unknown => external.push(a.clone()),
            Some(_) => ancestors.push(a.clone()),
            None => {}
        }
    }
    (ancestors, external)
}

/// Copies the folders of `tables` and `ancestors` into `staging` and declares `external` in its
/// `seeds/external_tables.json`; returns the number of files written.
fn stage(
    inv: &crate::inventory::Inventory,
    staging: &Path,
    tables: &[String],
    ancestors: &[String],
    external: &[String],
) -> Result<usize, OpsError> {
    let mut files = 0;
    for name in tables.iter().chain(ancestors) {
        let t = &inv.tables[name];
        let rel = inv.rel_to_root(&t.folder);
        files += copy_folder(&inv.disk_path(&t.folder), &staging.join(rel))?;
    }
    if !external.is_empty() {
        let entries: Vec<serde_json::Value> = external
            .iter()
            .map(|e| {
                let t = &inv.tables[e];
                serde_json::json!({
                    "table_name": t.name,
                    "kafka_topic": t.kafka_topic.clone().unwrap_or_else(|| t.name.clone()),
                    "product_name": t.product,
                })
            })
            .collect();
        let path = staging.join("seeds/external_tables.json");
        write(
            &path,
            &crate::fsutil::to_json_pretty(&serde_json::json!({"tables": entries})),
        )?;
        files += 1;
    }
    Ok(files)
}

/// The staged copy must load without errors on its own. Errors: the first three of its errors.
fn stands_alone(staging: &Path, cfg: &crate::config::Config) -> Result<(), OpsError> {
    let copy = crate::project::load(
        staging,
        cfg,
        crate::project::LoadOptions {
            allow_unknown: false,
        },
    )?;
    if copy.has_errors() {
        let first: Vec<String> = copy
            .diagnostics
            .iter()
            .filter(|d| d.severity == crate::diagnostics::Severity::Error)
            .take(3)
            .map(|d| d.message.clone())
            .collect();
        return Err(OpsError::Refused(format!(
            "the isolated tree does not validate on its own ({}); nothing was written",
            first.join("; ")
        )));
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), OpsError> {
    let werr = |source| OpsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(werr)?;
    }
    std::fs::write(path, text).map_err(|source| OpsError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Copies a table folder, leaving out generated metadata; returns the number of files.
fn copy_folder(from: &Path, to: &Path) -> Result<usize, OpsError> {
    let mut n = 0;
    for e in walkdir::WalkDir::new(from).follow_links(false) {
        let e = e.map_err(|e| OpsError::Io(std::io::Error::other(e.to_string())))?;
        let rel = e.path().strip_prefix(from).unwrap_or(e.path());
        let dst = to.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).map_err(|source| OpsError::Write {
                path: dst.clone(),
                source,
            })?;
        } else if e.file_type().is_file() && e.file_name() != crate::metadata::DEFINITION_FILE {
            std::fs::copy(e.path(), &dst).map_err(|source| OpsError::Write {
                path: dst.clone(),
                source,
            })?;
            n += 1;
        }
    }
    Ok(n)
}
