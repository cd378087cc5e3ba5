//! Plan scopes and options from their command-line forms: `--table-name`, `--product-name`, `--dir`,
//! `--table-list-file-name` (shift_left's table-list formats), `--exclude-table-file-name`, and the
//! folder arguments (`--dir D`, `--select path:D`) made relative to the pipelines folder.

use super::{Console, OpsError};
use crate::plan::{PlanOptions, Scope};
use crate::project::Project;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where a plan starts, as the user gave it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ScopeRequest {
    /// No scope given.
    #[default]
    None,
    /// `--table-name T` (repeatable).
    Tables(Vec<String>),
    /// `--product-name P`.
    Product(String),
    /// `--dir D`: a folder relative to the pipelines folder, or a path from the current folder inside it.
    Dir(String),
    /// `--table-list-file-name F` (see [`read_table_list`]).
    TableList(PathBuf),
    /// The green tables of a blue-green release (`deploy --blue-green`).
    Green(Vec<String>),
}

impl ScopeRequest {
    pub fn is_none(&self) -> bool {
        matches!(self, ScopeRequest::None)
    }
}

/// The scope and planning options of a plan request (the flags of `build-execution-plan`).
#[derive(Debug, Clone, Default)]
pub struct PlanRequest {
    /// The pipelines folder.
    pub pipelines: PathBuf,
    pub scope: ScopeRequest,
    pub may_start_descendants: bool,
    pub force_ancestors: bool,
    pub cross_product: bool,
    pub dml_only: bool,
    /// `--exclude-table-file-name F`.
    pub exclude_file: Option<PathBuf>,
    /// Keep unknown references as external tables (warning) instead of failing.
    pub allow_unknown: bool,
    /// `--compute-pool-id`: the pool of every statement of this run (over `flinkpipe.compute_pools`
    /// and `flink.compute_pool_id`).
    pub compute_pool_id: Option<String>,
}

/// The library's scope and options for a request on `project`. Table names (`--table-name`, a table
/// list, the exclude list) are resolved as everywhere ([`crate::inventory::names`]); a name resolved to
/// another table is noted on `console`. An excluded name that names no table is kept as written.
///
/// Errors (usage): no scope; (input) a table list that cannot be read or parsed, an unknown or
/// ambiguous table name.
pub fn resolve(
    req: &PlanRequest,
    project: &Project,
    console: &dyn Console,
) -> Result<(Scope, PlanOptions), OpsError> {
    let names = |given: &[String]| -> Result<Vec<String>, OpsError> {
        let mut out: Vec<String> = Vec::with_capacity(given.len());
        for g in given {
            let r = project.resolve_table(g)?;
            if let Some(note) = r.note() {
                console.note(&note);
            }
            if !out.contains(&r.name) {
                out.push(r.name);
            }
        }
        Ok(out)
    };
    let scope = match &req.scope {
        ScopeRequest::Tables(t) => Scope::Tables(names(t)?),
        ScopeRequest::Product(p) => Scope::Product(p.clone()),
        ScopeRequest::Dir(d) => Scope::Dir(scope_dir(&req.pipelines, d)),
        ScopeRequest::TableList(f) => Scope::Tables(names(&read_table_list(f)?)?),
        ScopeRequest::Green(t) => Scope::Green(t.clone()),
        ScopeRequest::None => {
            return Err(OpsError::Usage(
                "give a scope: --table-name, --product-name, --dir or --table-list-file-name"
                    .into(),
            ));
        }
    };
    let exclude: BTreeSet<String> = match &req.exclude_file {
        Some(f) => read_table_list(f)?
            .into_iter()
            .map(|g| match project.resolve_table(&g) {
                Ok(r) => {
                    if let Some(note) = r.note() {
                        console.note(&note);
                    }
                    r.name
                }
                Err(_) => g,
            })
            .collect(),
        None => BTreeSet::new(),
    };
    let options = PlanOptions {
        may_start_descendants: req.may_start_descendants,
        force_ancestors: req.force_ancestors,
        cross_product: req.cross_product,
        dml_only: req.dml_only,
        exclude,
        pools: Default::default(),
    };
    Ok((scope, options))
}

/// A selection expression with every `path:D` made relative to the pipelines folder as [`scope_dir`]
/// does for `--dir` (an absolute path, or one relative to the current folder, that lies inside it).
pub fn select_paths(pipelines: &Path, expr: &str) -> String {
    expr.split(' ')
        .map(|word| {
            word.split(',')
                .map(|part| match part.find("path:") {
                    Some(at) => {
                        let value = &part[at + 5..];
                        let trimmed = value.trim_end_matches('+');
                        format!(
                            "{}path:{}{}",
                            &part[..at],
                            scope_dir(pipelines, trimmed),
                            &value[trimmed.len()..]
                        )
                    }
                    None => part.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--dir D` relative to the pipelines folder, as the plan expects it. D is taken as written (relative to
/// the pipelines folder: `facts/sales`) unless it names an existing folder from here (an absolute path,
/// `./facts/sales` from the pipelines folder, `sales` from `facts/`) that lies inside the pipelines
/// folder: then it is made relative to it.
pub fn scope_dir(pipelines: &Path, d: &str) -> String {
    let given = Path::new(d);
    let inside = || -> Option<String> {
        let root = pipelines.canonicalize().ok()?;
        let at = given.canonicalize().ok()?;
        let rel = at.strip_prefix(&root).ok()?;
        Some(if rel.as_os_str().is_empty() {
            root.file_name()?.to_string_lossy().into_owned()
        } else {
            crate::fsutil::slash_path(rel)
        })
    };
    if given.is_absolute() || given.starts_with(".") || given.starts_with("..") || given.is_dir() {
        inside().unwrap_or_else(|| d.to_string())
    } else {
        d.to_string()
    }
}

/// Reads a table list: one name per line (`#` comments), a JSON array of names, shift_left's
/// `modified_flink_files.json` (`file_list[].table_name`) or `impacted_tables.json` (`impacted_tables`).
/// Names come back sorted and unique.
///
/// Errors: an unreadable file, invalid JSON (with serde's line and column), JSON of another shape.
pub fn read_table_list(path: &Path) -> Result<Vec<String>, OpsError> {
    let text = crate::fsutil::read_data_file(path).map_err(|e| {
        OpsError::TableList(format!("cannot read table list {}: {e}", path.display()))
    })?;
    let trimmed = text.trim_start();
    let mut names: Vec<String> = if trimmed.starts_with('[') || trimmed.starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            OpsError::TableList(format!(
                "invalid JSON in table list {}: {e}",
                path.display()
            ))
        })?;
        let strings = |a: &serde_json::Value| {
            a.as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect::<Vec<_>>()
            })
        };
        if let Some(list) = strings(&v) {
            list
        } else if let Some(list) = v.get("file_list").and_then(|f| f.as_array()) {
            list.iter()
                .filter_map(|x| {
                    x.get("table_name")
                        .and_then(|t| t.as_str())
                        .map(str::to_string)
                })
                .collect()
        } else if let Some(list) = v.get("impacted_tables").and_then(strings) {
            list
        } else {
            return Err(OpsError::TableList(format!(
                "table list {}: expected a JSON list of table names",
                path.display()
            )));
        }
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    names.sort();
    names.dedup();
    Ok(names)
}
