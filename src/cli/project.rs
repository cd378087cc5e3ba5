//! `flinkpipe project …`: project-wide reports.

use super::args::{ChangeRefs, GlobalArgs, ProjectCommand};
use super::{CmdResult, Failure, is_json, load_config, load_project, print_json, render};
use crate::changes::{self, ChangeKind, ChangeOptions, ChangeSet, ModifiedFiles};
use crate::fsutil::{to_json_pretty, write_atomic};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Serialize)]
struct CrossProduct {
    table_name: String,
    product_name: String,
    /// Parents in another product.
    parents: Vec<String>,
    /// Children in another product.
    children: Vec<String>,
}

pub(super) fn run(global: &GlobalArgs, cmd: &ProjectCommand) -> CmdResult {
    match cmd {
        ProjectCommand::Init(args) => super::scaffold::project_init(global, args),
        ProjectCommand::ReportTableCrossProducts { dir, allow_unknown } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            let inv = &project.inventory;
            let product = |n: &str| inv.tables.get(n).map(|t| t.product.as_str()).unwrap_or("");
            let rows: Vec<CrossProduct> = inv
                .tables
                .values()
                .filter(|t| !t.external)
                .map(|t| CrossProduct {
                    table_name: t.name.clone(),
                    product_name: t.product.clone(),
                    parents: project
                        .graph
                        .parents(&t.name)
                        .into_iter()
                        .filter(|p| product(p) != t.product && !inv.tables[*p].external)
                        .map(str::to_string)
                        .collect(),
                    children: project
                        .graph
                        .children(&t.name)
                        .into_iter()
                        .filter(|c| product(c) != t.product)
                        .map(str::to_string)
                        .collect(),
                })
                .filter(|r| !r.parents.is_empty() || !r.children.is_empty())
                .collect();
            if is_json(global) {
                print_json(&rows);
            } else {
                let body: Vec<Vec<String>> = rows
                    .iter()
                    .map(|r| {
                        vec![
                            r.table_name.clone(),
                            r.product_name.clone(),
                            r.parents.join(", "),
                            r.children.join(", "),
                        ]
                    })
                    .collect();
                print!(
                    "{}",
                    render::table(
                        &[
                            "table",
                            "product",
                            "parents in other products",
                            "children in other products"
                        ],
                        &body
                    )
                );
            }
            Ok(!project.has_errors())
        }
        ProjectCommand::ListTablesWithOneChild { dir, allow_unknown } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            let rows: Vec<(String, String)> = project
                .inventory
                .tables
                .values()
                .filter_map(|t| {
                    let c = project.graph.children(&t.name);
                    (c.len() == 1).then(|| (t.name.clone(), c[0].to_string()))
                })
                .collect();
            if is_json(global) {
                print_json(
                    &rows
                        .iter()
                        .map(|(t, c)| serde_json::json!({"table_name": t, "child": c}))
                        .collect::<Vec<_>>(),
                );
            } else {
                let body: Vec<Vec<String>> = rows
                    .iter()
                    .map(|(t, c)| vec![t.clone(), c.clone()])
                    .collect();
                print!("{}", render::table(&["table", "only child"], &body));
            }
            Ok(!project.has_errors())
        }
        ProjectCommand::ListModifiedFiles {
            dir,
            refs,
            output_dir,
        } => list_modified_files(global, &dir.pipelines, refs, output_dir.as_deref()),
        ProjectCommand::UpdateTablesVersion(args) => {
            super::versioning::update_tables_version(global, args)
        }
        ProjectCommand::ListImpactedTables {
            dir,
            refs,
            modified_files_path,
            output_dir,
        } => list_impacted_tables(
            global,
            &dir.pipelines,
            refs,
            modified_files_path.as_deref(),
            output_dir.as_deref(),
        ),
    }
}

/// The change options of the arguments. Errors (usage): a `--since-date` that is not `YYYY-MM-DD`.
pub(super) fn change_options(refs: &ChangeRefs) -> Result<ChangeOptions, Failure> {
    if let Some(d) = &refs.since_date
        && changes::git::parse_date(d).is_none()
    {
        return Err(Failure::usage(
            changes::ChangeError::BadDate(d.clone()).to_string(),
        ));
    }
    Ok(ChangeOptions {
        since: refs.since.clone(),
        head: refs.head.clone(),
        since_date: refs.since_date.clone(),
        file_filter: refs.file_filter.clone(),
        include_uncommitted: refs.include_uncommitted,
    })
}

fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    changes::utc_timestamp(secs)
}

fn write_output(dir: Option<&Path>, name: &str, contents: &str) -> Result<PathBuf, Failure> {
    let path = dir.unwrap_or(Path::new(".")).join(name);
    write_atomic(&path, contents.as_bytes())
        .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
    Ok(path)
}

fn list_modified_files(
    global: &GlobalArgs,
    dir: &Path,
    refs: &ChangeRefs,
    output_dir: Option<&Path>,
) -> CmdResult {
    let cfg = load_config(global)?;
    let set = changes::list_changes(dir, &change_options(refs)?, &cfg)?;
    let filter = refs
        .file_filter
        .as_deref()
        .map(|f| format!(".{}", f.trim_start_matches('.')));
    let out = set.to_modified_files(filter.as_deref(), &now());
    write_output(
        output_dir,
        "modified_flink_files.json",
        &to_json_pretty(&out),
    )?;
    write_output(
        output_dir,
        "modified_flink_files.txt",
        &set.table_names_text(),
    )?;
    if is_json(global) {
        print_json(&out);
    } else {
        print!("{}", modified_text(&set));
    }
    Ok(true)
}

/// The text report of a change set: one row per file, then the test files.
fn modified_text(set: &ChangeSet) -> String {
    let body: Vec<Vec<String>> = set
        .files
        .iter()
        .map(|f| {
            let mut details = Vec::new();
            if let Some(old) = &f.old_path {
                details.push(format!("from {old}"));
                if f.table_name != f.new_table_name {
                    details.push(format!("table renamed to {}", f.new_table_name));
                }
                details.push(format!("content: {}", f.content_kind));
            } else if let Some(base) = &f.base_table_name {
                details.push(format!("table renamed from {base}"));
            }
            if let Some(d) = &f.schema_diff {
                let s = d.summary();
                if !s.is_empty() {
                    details.push(s);
                }
            }
            if let Some(n) = &f.note {
                details.push(n.clone());
            }
            vec![
                f.path.clone(),
                f.table_name.clone(),
                f.change_kind.to_string(),
                details.join("; "),
            ]
        })
        .collect();
    let mut s = format!(
        "{} file(s) changed between {} ({}) and {}\n",
        set.files.len(),
        set.baseline_ref,
        set.base_commit.get(..12).unwrap_or(&set.base_commit),
        set.head_ref
    );
    if !body.is_empty() {
        s.push_str(&render::table(
            &["file", "table", "change", "details"],
            &body,
        ));
    }
    if !set.tests.is_empty() {
        s.push_str("tests:\n");
        for t in &set.tests {
            s.push_str(&format!("  {} ({})\n", t.path, t.change_kind));
        }
    }
    if !set.external_tables.is_empty() {
        s.push_str("external tables:\n");
        for x in &set.external_tables {
            s.push_str(&format!(
                "  {} ({}{}) in {}\n",
                x.table_name,
                x.change_kind,
                if x.details.is_empty() {
                    String::new()
                } else {
                    format!(": {}", x.details)
                },
                x.manifest
            ));
        }
    }
    s
}

fn list_impacted_tables(
    global: &GlobalArgs,
    dir: &Path,
    refs: &ChangeRefs,
    modified_files_path: Option<&Path>,
    output_dir: Option<&Path>,
) -> CmdResult {
    let cfg = load_config(global)?;
    let opts = change_options(refs)?;
    let started = std::time::Instant::now();
    let (files, tests, externals) = match modified_files_path {
        Some(p) => {
            let modified = ModifiedFiles::read(p)?;
            let (files, tests) = modified.to_file_changes(dir);
            (files, tests, modified.external_tables)
        }
        None => {
            let set = changes::list_changes(dir, &opts, &cfg)?;
            (set.files, set.tests, set.external_tables)
        }
    };
    tracing::info!(
        files = files.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "changes listed"
    );
    let (graph, source) = changes::load_head_graph(dir, &cfg, &opts, &files, &externals)?;
    tracing::info!(
        ?source,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "head graph loaded"
    );
    let impact = changes::impacted_tables(&files, &tests, &externals, &graph)?;
    // A list written elsewhere (another branch, an old run) may name tables this tree does not have.
    if let Some(p) = modified_files_path {
        for t in &impact.impacts {
            if t.change_kind != ChangeKind::Deleted
                && !graph.is_defined(&t.table_name)
                && !externals.iter().any(|x| x.table_name == t.table_name)
            {
                eprintln!(
                    "warning[modified-files]: {}: '{}' is not a table of {}; nothing of it is impacted",
                    p.display(),
                    t.table_name,
                    dir.display()
                );
            }
        }
    }
    write_output(output_dir, "impacted_tables.json", &to_json_pretty(&impact))?;
    if is_json(global) {
        print_json(&impact);
    } else {
        let mut body: Vec<Vec<String>> = Vec::new();
        for t in &impact.impacts {
            if t.descendants.is_empty() {
                let why = match t.change_kind {
                    ChangeKind::Cosmetic => "cosmetic: impacts nothing",
                    _ => "no descendants",
                };
                body.push(vec![
                    t.table_name.clone(),
                    t.change_kind.to_string(),
                    String::new(),
                    why.into(),
                ]);
            }
            for d in &t.descendants {
                body.push(vec![
                    t.table_name.clone(),
                    t.change_kind.to_string(),
                    d.table_name.clone(),
                    d.reason.clone(),
                ]);
            }
        }
        print!(
            "{}",
            render::table(
                &["changed table", "change", "impacted table", "reason"],
                &body
            )
        );
        println!(
            "{} impacted table(s); DDL modified: {}",
            impact.impacted_tables.len(),
            if impact.ddl_modified_tables.is_empty() {
                "none".to_string()
            } else {
                impact.ddl_modified_tables.join(", ")
            }
        );
    }
    Ok(true)
}
