//! `flinkpipe pipeline blue-green` and `flinkpipe project update-tables-version`: version a subgraph.

use super::args::{BlueGreenArgs, GlobalArgs, UpdateTablesVersionArgs};
use super::pipeline::{read_table_list, write_metadata};
use super::project::change_options;
use super::{CmdResult, Failure, is_json, load_config, load_project, print_json, render};
use crate::changes;
use crate::config::Config;
use crate::lineage::Project;
use crate::plan::StatementNaming;
use crate::versioning::{self, VersionPlan, VersionRequest};
use std::path::Path;

pub(super) fn blue_green(global: &GlobalArgs, args: &BlueGreenArgs) -> CmdResult {
    check_suffix(&args.default_version)?;
    let cfg = load_config(global)?;
    let project = loaded(global, &args.dir.pipelines, args.allow_unknown)?;
    let set = changes::list_changes(&args.dir.pipelines, &change_options(&args.refs)?, &cfg)?;
    let req = versioning::blue_green_request(
        &project,
        &cfg,
        &args.dir.pipelines,
        &set,
        &args.default_version,
    )?;
    run(
        global,
        &cfg,
        &project,
        &req,
        &args.dir.pipelines,
        args.apply,
        args.allow_unknown,
        Some(&set.baseline_ref),
    )
}

pub(super) fn update_tables_version(
    global: &GlobalArgs,
    args: &UpdateTablesVersionArgs,
) -> CmdResult {
    check_suffix(&args.default_version)?;
    let cfg = load_config(global)?;
    let project = loaded(global, &args.dir.pipelines, args.allow_unknown)?;
    let seeds = read_table_list(&args.table_list)?;
    let req = VersionRequest {
        seed_reasons: seeds
            .iter()
            .map(|s| (s.clone(), "listed".to_string()))
            .collect(),
        seeds,
        default_suffix: args.default_version.clone(),
        ..Default::default()
    };
    run(
        global,
        &cfg,
        &project,
        &req,
        &args.dir.pipelines,
        !args.dry_run,
        args.allow_unknown,
        None,
    )
}

/// `--default-version` must be `_v<digits>` (a usage error otherwise).
fn check_suffix(suffix: &str) -> Result<(), Failure> {
    versioning::names::next_version("t", suffix)
        .map(|_| ())
        .map_err(Failure::usage)
}

fn loaded(global: &GlobalArgs, dir: &Path, allow_unknown: bool) -> Result<Project, Failure> {
    let project = load_project(global, dir, allow_unknown)?;
    if project.has_errors() {
        return Err(Failure::new(
            "the project has errors (above): fix them before versioning",
        ));
    }
    Ok(project)
}

#[allow(clippy::too_many_arguments)]
fn run(
    global: &GlobalArgs,
    cfg: &Config,
    project: &Project,
    req: &VersionRequest,
    dir: &Path,
    apply: bool,
    allow_unknown: bool,
    baseline: Option<&str>,
) -> CmdResult {
    let naming = StatementNaming::from_config(cfg);
    let plan = versioning::plan_versions(project, cfg, &naming, req)?;
    for e in &plan.edits {
        for n in &e.notes {
            eprintln!("warning[storage]: {}: {n}", e.file);
        }
    }
    if apply && !plan.edits.is_empty() {
        versioning::apply(&plan)?;
        // The SQL files and the metadata change together: if the rebuild fails, the files go back.
        let rebuilt = super::load_project(global, dir, allow_unknown).and_then(|p| {
            if p.has_errors() {
                Err(Failure::new(
                    "the rewritten project has errors (above); nothing was changed",
                ))
            } else {
                write_metadata(&p, dir).map(|_| ())
            }
        });
        if let Err(e) = rebuilt {
            let stuck = versioning::restore(&plan);
            if !stuck.is_empty() {
                return Err(Failure::new(format!(
                    "{}; and these files could not be restored: {}",
                    e.message,
                    stuck.join(", ")
                )));
            }
            return Err(e);
        }
    }
    if is_json(global) {
        print_json(&serde_json::json!({
            "baseline_ref": baseline,
            "applied": apply && !plan.edits.is_empty(),
            "renames": plan.renames,
            "unchanged": plan.unchanged.iter().map(|(t, r)| serde_json::json!({"table_name": t, "reason": r})).collect::<Vec<_>>(),
            "files": plan.edits,
            "green": plan.green,
        }));
        return Ok(true);
    }
    print!("{}", render_text(&plan, apply, baseline));
    Ok(true)
}

fn render_text(plan: &VersionPlan, apply: bool, baseline: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(b) = baseline {
        out.push_str(&format!("Versioning the tables changed since {b}\n"));
    }
    for (t, why) in &plan.unchanged {
        out.push_str(&format!("{t}: unchanged ({why})\n"));
    }
    if plan.renames.is_empty() {
        out.push_str(
            "Nothing to version: no table with a logic or schema change needs a new version.\n",
        );
        return out;
    }
    if !apply {
        out.push_str(&versioning::unified_diff(plan));
        out.push('\n');
    }
    let rows: Vec<Vec<String>> = plan
        .green
        .iter()
        .map(|g| {
            vec![
                g.wave.to_string(),
                g.blue_table_name.clone(),
                g.table_name.clone(),
                g.dml_statement_name
                    .clone()
                    .or(g.ddl_statement_name.clone())
                    .unwrap_or_default(),
                g.blue_dml_statement_name
                    .clone()
                    .unwrap_or_else(|| "-".into()),
                g.reason.clone(),
            ]
        })
        .collect();
    out.push_str("Green deployment (create, parents first):\n\n");
    out.push_str(&render::table(
        &[
            "wave",
            "blue table",
            "green table",
            "create statement",
            "stop after validation",
            "reason",
        ],
        &rows,
    ));
    out.push_str(&format!(
        "\n{} table(s) versioned, {} file(s) {}\n",
        plan.renames.len(),
        plan.edits.len(),
        if apply {
            "rewritten; inventory and metadata rebuilt"
        } else {
            if baseline.is_some() {
                "to rewrite (run again with --apply)"
            } else {
                "to rewrite (run again without --dry-run)"
            }
        }
    ));
    out
}
