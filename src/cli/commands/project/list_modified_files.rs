//! `flinkpipe project list-modified-files [DIR]`: the files changed since a git ref, each with its
//! table and change kind; writes `modified_flink_files.json` / `.txt`.

use crate::cli::args::ChangeRefs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::changes::{self, Baseline, ChangeSet, ModifiedFiles};
use std::path::PathBuf;

/// Options of `project list-modified-files`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pipelines folder [default: $PIPELINES, else <--project-path>/pipelines, else
    /// ./pipelines]; or shift_left's BRANCH_NAME: a value that is not a folder is the branch to
    /// compare with (as --since BRANCH).
    #[arg(value_name = "DIR|BRANCH")]
    pub dir_or_branch: Option<String>,
    /// shift_left's option: the project (the git repository) whose pipelines/ folder is read.
    #[arg(long, value_name = "DIR")]
    pub project_path: Option<PathBuf>,
    /// shift_left's option, with BRANCH and a --since day: `since` (default) compares with the
    /// day's commit, `branch` with the branch.
    #[arg(long, value_enum, default_value_t = BaselineArg::Since)]
    pub baseline: BaselineArg,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Folder for modified_flink_files.json and .txt [default: $FLINKPIPE_OUTPUT_DIR, else the
    /// project's .flinkpipe/].
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Also ask the configured target whether each table's statement runs (one list call; fills
    /// `running`). Without it the list reads git alone and contacts no server (`running` is null),
    /// so it runs in CI with no target reachable.
    #[arg(long, conflicts_with = "offline")]
    pub running: bool,
    /// Contact no server (the default; kept for scripts that pass it).
    #[arg(long)]
    pub offline: bool,
}

/// shift_left's `--baseline` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BaselineArg {
    /// The commit before the --since day.
    Since,
    /// The branch.
    Branch,
}

/// The pipelines folder and the branch of the positional argument: a folder is the pipelines
/// folder, anything else shift_left's BRANCH_NAME.
pub fn pipelines_and_branch(
    positional: Option<&str>,
    project_path: Option<&std::path::Path>,
) -> (PathBuf, Option<String>) {
    let default = || {
        crate::config::process_env("PIPELINES")
            .map(PathBuf::from)
            .or_else(|| project_path.map(|p| p.join("pipelines")))
            .unwrap_or_else(|| PathBuf::from("pipelines"))
    };
    match positional {
        Some(p) if std::path::Path::new(p).is_dir() => (PathBuf::from(p), None),
        Some(b) => (default(), Some(b.to_string())),
        None => (default(), None),
    }
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let (pipelines, branch) =
        pipelines_and_branch(args.dir_or_branch.as_deref(), args.project_path.as_deref());
    let pipelines = pipelines.as_path();
    let refs = &args.refs;
    let output_dir = args.output_dir.as_deref();
    let offline = args.offline;
    let baseline = match args.baseline {
        BaselineArg::Since => Baseline::Since,
        BaselineArg::Branch => Baseline::Branch,
    };
    let mut req = refs.request().with_branch(branch, baseline);
    req.running_from_target = args.running && !offline;
    let r = changes::list_modified_files(&inv.ctx, pipelines, &req, output_dir)?;
    let shown: Vec<String> = r.written.iter().map(|p| p.display().to_string()).collect();
    eprintln!("wrote {}", shown.join(" and "));
    if inv.json() {
        print_json(&r.modified);
    } else {
        print!("{}", text(&r.set, &r.modified));
    }
    Ok(true)
}

/// One row per file, then the test files and the external tables.
fn text(set: &ChangeSet, modified: &ModifiedFiles) -> String {
    let body: Vec<Vec<String>> = set
        .files
        .iter()
        .zip(&modified.file_list)
        .map(|(f, row)| {
            let mut details = Vec::new();
            if !row.statement_sinks.is_empty() {
                details.push(format!(
                    "statement set: writes {}",
                    row.statement_sinks.join(", ")
                ));
            }
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
        s.push_str(&table(&["file", "table", "change", "details"], &body));
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
