//! `flinkpipe pipeline …`: metadata, validation, reports, graph export and execution plans.

use super::args::{GlobalArgs, GraphFormat, PipelineCommand, PlanArgs};
use super::{CmdResult, Failure, is_json, load_config, load_project, print_json, render};
use crate::fsutil::to_json_pretty;
use crate::graph;
use crate::inventory::shift_left::to_inventory_file;
use crate::metadata;
use crate::plan::{self, PlanOptions, Scope, StatementNaming, StatementStatus};
use std::collections::BTreeSet;
use std::path::Path;

pub(super) fn run(global: &GlobalArgs, cmd: &PipelineCommand) -> CmdResult {
    match cmd {
        PipelineCommand::BuildAllMetadata { dir, allow_unknown } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            if project.has_errors() {
                eprintln!("metadata not written: fix the errors above (no file was changed)");
                return Ok(false);
            }
            let written = write_metadata(&project, &dir.pipelines)?;
            let inv_path = dir.pipelines.join(super::table::INVENTORY_FILE);
            if is_json(global) {
                print_json(&metadata::graph_file(&project));
            } else {
                let edges = project.graph.edges().count();
                println!(
                    "{} tables, {edges} edges: wrote {} pipeline_definition.json files, {} and {}",
                    project.inventory.tables.len(),
                    written - 1,
                    dir.pipelines.join(metadata::GRAPH_FILE).display(),
                    inv_path.display()
                );
            }
            Ok(true)
        }
        PipelineCommand::Validate { dir, allow_unknown } => {
            let mut project = load_project(global, &dir.pipelines, *allow_unknown)?;
            // Statement names depend on the configuration: checked here, not in every command.
            let collisions = crate::plan::naming::collisions(
                &project,
                &StatementNaming::from_config(&load_config(global)?),
            );
            super::print_diagnostics_in(
                &collisions,
                super::scaffold::source_base(&dir.pipelines).as_deref(),
            );
            project.diagnostics.extend(collisions);
            if is_json(global) {
                print_json(&project.diagnostics);
            } else if !project.has_errors() {
                println!(
                    "ok: {} tables, {} edges, {} warning(s)",
                    project.inventory.tables.len(),
                    project.graph.edges().count(),
                    project.diagnostics.len()
                );
            }
            Ok(!project.has_errors())
        }
        PipelineCommand::Report {
            table,
            dir,
            children_too,
            parent_only,
            allow_unknown,
        } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            if project.graph.node(table).is_none() {
                return Err(Failure::new(format!(
                    "unknown table '{table}'{}",
                    plan::suggest(table, project.inventory.tables.keys())
                )));
            }
            let depth = parent_only.then_some(1);
            let parents = graph::parent_tree(&project.graph, table, depth)?;
            let children = if *children_too {
                Some(graph::child_tree(&project.graph, table, depth)?)
            } else {
                None
            };
            if is_json(global) {
                print_json(
                    &serde_json::json!({ "table_name": table, "parents": parents, "children": children }),
                );
            } else {
                println!("Parents of {table}:");
                print!("{}", graph::render_tree_text(&parents));
                if let Some(c) = &children {
                    println!("\nChildren of {table}:");
                    print!("{}", graph::render_tree_text(c));
                }
            }
            Ok(!project.has_errors())
        }
        PipelineCommand::Graph {
            dir,
            select,
            format,
            allow_unknown,
        } => {
            let project = load_project(global, &dir.pipelines, *allow_unknown)?;
            let subset = match select {
                Some(expr) => Some(
                    graph::select(&project.graph, &select_paths(&dir.pipelines, expr)).map_err(
                        |e| match e {
                            // A malformed expression is a usage error; a well-formed one naming an unknown
                            // table is an error in the input.
                            graph::SelectError::BadToken { .. } | graph::SelectError::Empty => {
                                Failure::usage(e.to_string())
                            }
                            _ => Failure::new(e.to_string()),
                        },
                    )?,
                ),
                None => None,
            };
            let subset = subset.as_ref();
            match format {
                GraphFormat::Dot => print!("{}", graph::to_dot(&project.graph, subset)),
                GraphFormat::Mermaid => print!("{}", graph::to_mermaid(&project.graph, subset)),
                GraphFormat::Json => print_json(&graph::to_json(&project.graph, subset)),
                GraphFormat::Svg => print!("{}", graph::to_svg(&project.graph, subset)),
                GraphFormat::Html => print!("{}", graph::to_html(&project.graph, subset)),
            }
            Ok(!project.has_errors())
        }
        PipelineCommand::BuildExecutionPlan(args) => build_execution_plan(global, args),
        PipelineCommand::BlueGreen(args) => super::versioning::blue_green(global, args),
        PipelineCommand::Deploy(args) => super::deploy::deploy(global, args),
        PipelineCommand::Undeploy(args) => super::deploy::undeploy(global, args),
        PipelineCommand::Status(args) => super::deploy::status(global, args),
    }
}

/// Writes every `pipeline_definition.json`, `pipeline_graph.json` and `inventory.json`; returns the number
/// of metadata files written.
pub(super) fn write_metadata(
    project: &crate::lineage::Project,
    dir: &Path,
) -> Result<usize, Failure> {
    // inventory.json is staged first and committed with the metadata files.
    let inv_path = dir.join(super::table::INVENTORY_FILE);
    let inventory = crate::fsutil::stage(
        &inv_path,
        to_json_pretty(&to_inventory_file(&project.inventory)).as_bytes(),
    )?;
    // One batch: the metadata files and inventory.json are all replaced, or none is.
    Ok(metadata::write_all_with(
        project,
        inventory.into_iter().collect(),
    )?)
}

fn build_execution_plan(global: &GlobalArgs, args: &PlanArgs) -> CmdResult {
    let cfg = load_config(global)?;
    let project = load_project(global, &args.dir.pipelines, args.allow_unknown)?;
    if project.has_errors() {
        eprintln!("no plan: fix the errors above");
        return Ok(false);
    }
    let (scope, options) = plan_inputs(args)?;
    let status = match &args.statement_status {
        Some(f) => {
            let status = StatementStatus::read(f)?;
            warn_status_file(f, &status, &project, &StatementNaming::from_config(&cfg));
            status
        }
        None if args.live => super::deploy::live_status(&cfg, &project)?,
        None if args.offline => StatementStatus::default(),
        // A configured target (all settings and secrets present) is asked; otherwise plan offline.
        None if cfg.confluent_settings(&super::deploy::env_lookup).is_ok()
            || cfg.gateway_settings(&super::deploy::env_lookup).is_some() =>
        {
            super::deploy::live_status(&cfg, &project)?
        }
        None => StatementStatus::default(),
    };
    let naming = StatementNaming::from_config(&cfg);
    let plan = plan::build_plan(&project, &naming, &status, &scope, &options)?;
    if is_json(global) {
        print_json(&plan);
    } else {
        print!("{}", render_plan(&plan));
    }
    Ok(true)
}

/// Warnings about a `--statement-status` file that would silently plan the wrong actions: phases that
/// are not statement phases (a typo counts as not running, so the statement would be restarted), and a
/// file none of whose statements this project names (another prefix, region or environment).
fn warn_status_file(
    file: &Path,
    status: &StatementStatus,
    project: &crate::lineage::Project,
    naming: &StatementNaming,
) {
    for (statement, phase) in status.unknown_phases() {
        eprintln!(
            "warning[statement-status]: {}: '{statement}' has phase '{phase}', which is not a statement phase ({}); it counts as not running",
            file.display(),
            crate::plan::status::PHASES.join(", ")
        );
    }
    if status.phases.is_empty() {
        return;
    }
    let ours = project
        .inventory
        .tables
        .values()
        .filter(|t| !t.external)
        .flat_map(|t| {
            [
                naming.ddl(&t.product, &t.name),
                naming.dml(&t.product, &t.name),
            ]
        })
        .any(|n| status.phases.contains_key(&n));
    if !ours {
        let example = project
            .inventory
            .tables
            .values()
            .find(|t| !t.external)
            .map(|t| format!(" (e.g. '{}')", naming.dml(&t.product, &t.name)))
            .unwrap_or_default();
        eprintln!(
            "warning[statement-status]: {}: none of its {} statements is a statement of this project{example}: every table counts as not running; check kafka.cluster_type, confluent_cloud.cloud_region and flinkpipe.statement_prefix",
            file.display(),
            status.phases.len()
        );
    }
}

/// A selection expression with every `path:D` made relative to the pipelines folder as [`scope_dir`]
/// does for `--dir` (an absolute path, or one relative to the current folder, that lies inside it).
fn select_paths(pipelines: &Path, expr: &str) -> String {
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
fn scope_dir(pipelines: &Path, d: &str) -> String {
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

/// The scope and planning options of plan arguments. Errors: no scope, unreadable table lists.
pub(super) fn plan_inputs(args: &PlanArgs) -> Result<(Scope, PlanOptions), Failure> {
    let scope = if !args.table_name.is_empty() {
        Scope::Tables(args.table_name.clone())
    } else if let Some(p) = &args.product_name {
        Scope::Product(p.clone())
    } else if let Some(d) = &args.scope_dir {
        Scope::Dir(scope_dir(&args.dir.pipelines, d))
    } else if let Some(f) = &args.table_list_file_name {
        Scope::Tables(read_table_list(f)?)
    } else {
        return Err(Failure::usage(
            "give a scope: --table-name, --product-name, --dir or --table-list-file-name",
        ));
    };
    let exclude: BTreeSet<String> = match &args.exclude_table_file_name {
        Some(f) => read_table_list(f)?.into_iter().collect(),
        None => BTreeSet::new(),
    };
    let options = PlanOptions {
        may_start_descendants: args.may_start_descendants,
        force_ancestors: args.force_ancestors,
        cross_product: args.cross_product_deployment,
        dml_only: args.dml_only,
        exclude,
    };
    Ok((scope, options))
}

/// The plan as an aligned text table followed by a one-line summary.
pub fn render_plan(plan: &plan::ExecutionPlan) -> String {
    let rows: Vec<Vec<String>> = plan
        .nodes
        .iter()
        .map(|n| {
            vec![
                n.wave.map(|w| w.to_string()).unwrap_or_else(|| "-".into()),
                n.action.as_str().to_string(),
                n.table_name.clone(),
                n.product_name.clone(),
                n.table_type.clone(),
                n.upgrade_mode.to_string(),
                n.dml_statement_name
                    .clone()
                    .or(n.ddl_statement_name.clone())
                    .unwrap_or_else(|| "-".into()),
                n.reason.clone(),
            ]
        })
        .collect();
    let mut out = format!("Execution plan for {}\n\n", plan.scope);
    out.push_str(&render::table(
        &[
            "wave",
            "action",
            "table",
            "product",
            "type",
            "mode",
            "statement",
            "reason",
        ],
        &rows,
    ));
    let count = |a: plan::Action| plan.nodes.iter().filter(|n| n.action == a).count();
    out.push_str(&format!(
        "\n{} table{}: {} to create, {} to restart, {} to skip; {} wave(s)\n",
        plan.nodes.len(),
        if plan.nodes.len() == 1 { "" } else { "s" },
        count(plan::Action::Create),
        count(plan::Action::Restart),
        count(plan::Action::Skip),
        plan.wave_count()
    ));
    out
}

/// Reads a table list: one name per line (`#` comments), a JSON array of names, shift_left's
/// `modified_flink_files.json` (`file_list[].table_name`) or `impacted_tables.json` (`impacted_tables`).
pub fn read_table_list(path: &Path) -> Result<Vec<String>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::new(format!("cannot read table list {}: {e}", path.display())))?;
    let trimmed = text.trim_start();
    let mut names: Vec<String> = if trimmed.starts_with('[') || trimmed.starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Failure::new(format!(
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
            return Err(Failure::new(format!(
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
