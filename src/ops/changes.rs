//! `project list-modified-files` (the files changed since a git ref, by a tree diff that never checks
//! out) and `project list-impacted-tables` (the descendants those changes impact), writing shift_left's
//! `modified_flink_files.json` / `.txt` and `impacted_tables.json` (the files of shift_left
//! 0.1.52's `project list-modified-files` and `project list-impacted-tables`,
//! <https://github.com/jbcodeforce/shift_left_utils>).

use super::{Context, OpsError};
use crate::changes::{self, ChangeOptions};
use crate::fsutil::{to_json_pretty, write_atomic};
use std::path::{Path, PathBuf};

pub use crate::changes::{ChangeKind, ChangeSet, ImpactedTables, ModifiedFiles};

/// Which commits to compare.
#[derive(Debug, Clone, Default)]
pub struct ChangeRequest {
    /// Base ref; compared from merge-base(REF, head) (default `origin/main`, else `main`).
    pub since: Option<String>,
    /// Head ref (default `HEAD`).
    pub head: Option<String>,
    /// Base = the newest first-parent commit before this day (UTC), `YYYY-MM-DD`.
    pub since_date: Option<String>,
    /// Keep only files with this extension.
    pub file_filter: Option<String>,
    /// Compare with the work tree instead of the head commit.
    pub include_uncommitted: bool,
    /// Fill `running` from the configured target (one list call) when one is configured
    /// (`--running`); off, the operation reads git alone and contacts no server.
    pub running_from_target: bool,
}

/// shift_left's `--baseline` of `list-modified-files`: which of its two bases a diff starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Baseline {
    /// The commit before the `--since` date (shift_left's default), else the branch.
    #[default]
    Since,
    /// The branch's tip (merge-base with the head), even when a date is given.
    Branch,
}

impl ChangeRequest {
    /// shift_left 0.1.52's form `list-modified-files BRANCH [--since YYYY-MM-DD] [--baseline
    /// since|branch]` read as ours: the base is the day's commit when a date is given and the
    /// baseline is `since`, else BRANCH (as `--since BRANCH`). `branch: None` changes nothing.
    pub fn with_branch(mut self, branch: Option<String>, baseline: Baseline) -> ChangeRequest {
        let Some(branch) = branch else {
            return self;
        };
        let dated = self.since_date.is_some()
            || self
                .since
                .as_deref()
                .is_some_and(|s| changes::git::parse_date(s).is_some());
        if baseline == Baseline::Branch || !dated {
            self.since = Some(branch);
            self.since_date = None;
        }
        self
    }
}

/// The library's change options: a `since` that is a day (`YYYY-MM-DD`, shift_left's `--since`)
/// is read as `since_date`. Errors (usage): a `since_date` that is not `YYYY-MM-DD`.
pub fn change_options(req: &ChangeRequest) -> Result<ChangeOptions, OpsError> {
    let mut req = req.clone();
    if req.since_date.is_none()
        && let Some(s) = req.since.as_deref()
        && changes::git::parse_date(s).is_some()
    {
        req.since_date = req.since.take();
    }
    let req = &req;
    if let Some(d) = &req.since_date
        && changes::git::parse_date(d).is_none()
    {
        return Err(OpsError::Usage(
            changes::ChangeError::BadDate(d.clone()).to_string(),
        ));
    }
    Ok(ChangeOptions {
        since: req.since.clone(),
        head: req.head.clone(),
        since_date: req.since_date.clone(),
        file_filter: req.file_filter.clone(),
        include_uncommitted: req.include_uncommitted,
    })
}

/// The changes and the files written.
#[derive(Debug, Clone)]
pub struct ModifiedReport {
    pub set: ChangeSet,
    /// The content of `modified_flink_files.json`.
    pub modified: ModifiedFiles,
    /// Where `modified_flink_files.json` and `.txt` were written.
    pub written: Vec<PathBuf>,
}

/// Fills `running` of every row from the configured target's statements (one list call): the
/// table's DML statement, else its DDL statement, is RUNNING. The product comes from the file's folder.
fn fill_running(
    cfg: &crate::config::Config,
    set: &ChangeSet,
    modified: &mut ModifiedFiles,
) -> Result<(), OpsError> {
    let naming = crate::plan::StatementNaming::from_config(cfg);
    let layout = crate::scan::Layout::with_overrides(&cfg.flinkpipe.layers);
    let c = super::target::connect(cfg, None)?;
    let rt = super::target::runtime()?;
    let live = rt.block_on(super::target::live_statements(&c))?;
    for (row, f) in modified.file_list.iter_mut().zip(&set.files) {
        let parts: Vec<&str> = f.path.split('/').collect();
        let folder: Vec<&str> = parts
            .iter()
            .position(|p| *p == "sql-scripts")
            .map_or(&parts[..parts.len().saturating_sub(1)], |i| &parts[..i])
            .to_vec();
        let (_, product) = layout.classify(&folder);
        let table = if row.new_table_name.is_empty() {
            &row.table_name
        } else {
            &row.new_table_name
        };
        let phase = live
            .get(&naming.dml(&product, table))
            .or_else(|| live.get(&naming.ddl(&product, table)))
            .map(|s| s.phase.clone());
        row.running = Some(phase == Some(crate::target::Phase::Running));
    }
    Ok(())
}

fn write_output(dir: Option<&Path>, name: &str, contents: &str) -> Result<PathBuf, OpsError> {
    let path = dir.unwrap_or(Path::new(".")).join(name);
    write_atomic(&path, contents.as_bytes()).map_err(|source| OpsError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Lists the files changed since a ref and writes `modified_flink_files.json` and `.txt` into
/// `output_dir` (default: [`super::output_dir`]).
///
/// Errors: not a git repository, unknown refs, a bad date (usage), files that cannot be written.
pub fn list_modified_files(
    ctx: &Context,
    pipelines: &Path,
    req: &ChangeRequest,
    output_dir: Option<&Path>,
) -> Result<ModifiedReport, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let set = changes::list_changes(pipelines, &change_options(req)?, &cfg)?;
    let filter = req
        .file_filter
        .as_deref()
        .map(|f| format!(".{}", f.trim_start_matches('.')));
    let mut modified = set.to_modified_files(filter.as_deref(), &super::now_utc());
    if !set.files.is_empty() {
        // A statement set changes as a whole: name every table its statement writes.
        let opts = change_options(req)?;
        let (graph, _) =
            changes::load_head_graph(pipelines, &cfg, &opts, &set.files, &set.external_tables)?;
        for row in &mut modified.file_list {
            let statements = graph.statements();
            if let Some(owner) = statements.writer(&row.new_table_name) {
                let sinks = statements.sinks(owner);
                if sinks.len() > 1 {
                    row.statement_sinks = sinks.into_iter().map(str::to_string).collect();
                }
            }
        }
    }
    // The list reads only git: the target only adds `running`, so a target that does not answer
    // leaves it unknown (null) with a warning and never fails the command.
    if req.running_from_target
        && super::target::TargetKind::is_configured(&cfg)
        && let Err(e) = fill_running(&cfg, &set, &mut modified)
    {
        ctx.console.warn(&format!(
            "warning[target]: `running` left unknown (null): {e}; without --running the target is not asked"
        ));
    }
    let dir = super::output_dir(output_dir, pipelines)?;
    let output_dir = Some(dir.as_path());
    let written = vec![
        write_output(
            output_dir,
            "modified_flink_files.json",
            &to_json_pretty(&modified),
        )?,
        write_output(
            output_dir,
            "modified_flink_files.txt",
            &set.table_names_text(),
        )?,
    ];
    Ok(ModifiedReport {
        set,
        modified,
        written,
    })
}

/// Where `list-impacted-tables` writes: a file (shift_left's `--output-file`), or
/// `impacted_tables.json` in a folder (`--output-dir`, else [`super::output_dir`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    File(PathBuf),
    Dir(Option<PathBuf>),
}

/// The impact and the file written.
#[derive(Debug, Clone)]
pub struct ImpactReport {
    pub impact: ImpactedTables,
    pub written: PathBuf,
}

/// Lists the descendants impacted by the changes since a ref (or those of a `modified_flink_files.json`)
/// and writes `impacted_tables.json` into `output_dir` (default: [`super::output_dir`]). Tables a given
/// list names but this tree does not have are warned about.
///
/// Errors: as [`list_modified_files`]; an unreadable list; removed external tables still read.
pub fn list_impacted_tables(
    ctx: &Context,
    pipelines: &Path,
    req: &ChangeRequest,
    modified_files_path: Option<&Path>,
    output: &Output,
) -> Result<ImpactReport, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let opts = change_options(req)?;
    let started = std::time::Instant::now();
    let mut base_commit = None;
    let (files, tests, externals) = match modified_files_path {
        Some(p) => {
            let modified = ModifiedFiles::read(p)?;
            let (files, tests) = modified.to_file_changes(pipelines);
            (files, tests, modified.external_tables)
        }
        None => {
            let set = changes::list_changes(pipelines, &opts, &cfg)?;
            base_commit = Some(set.base_commit.clone());
            (set.files, set.tests, set.external_tables)
        }
    };
    tracing::info!(
        files = files.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "changes listed"
    );
    let (graph, source) = changes::load_head_graph(pipelines, &cfg, &opts, &files, &externals)?;
    tracing::info!(
        ?source,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "head graph loaded"
    );
    let mut impact = changes::impacted_tables(&files, &tests, &externals, &graph)?;
    // A schema change: which columns of each impacted table read what changed (column lineage).
    if let Some(base) = &base_commit
        && files.iter().any(|f| f.schema_diff.is_some())
    {
        let project = ctx.load_project(&cfg, pipelines, true)?;
        if !project.has_errors() {
            let found =
                super::schema_changes::with_readers(&project, &cfg, pipelines, &files, base)?;
            for i in &mut impact.impacts {
                for d in &mut i.descendants {
                    let mut cols: Vec<String> = found
                        .iter()
                        .filter(|c| c.table == i.table_name)
                        .flat_map(|c| {
                            c.readers
                                .iter()
                                .filter(|r| r.table == d.table_name)
                                .map(move |r| {
                                    format!("{} (reads {}.{})", r.column, c.table, c.column)
                                })
                        })
                        .collect();
                    cols.sort();
                    cols.dedup();
                    d.affected_columns = cols;
                }
            }
        }
    }
    // The test folders that use a changed or impacted table as a foundation (shift_left's
    // unit_test_ddl_paths), besides the test files that changed themselves.
    let touched: std::collections::BTreeSet<String> = impact
        .ddl_modified_tables
        .iter()
        .chain(&impact.impacted_tables)
        .chain(impact.impacts.iter().map(|i| &i.table_name))
        .cloned()
        .collect();
    for p in crate::unittest::definitions::foundation_ddl_paths(pipelines, &touched) {
        if !impact.unit_test_ddl_paths.contains(&p) {
            impact.unit_test_ddl_paths.push(p);
        }
    }
    impact.unit_test_ddl_paths.sort();
    // A list written elsewhere (another branch, an old run) may name tables this tree does not have.
    if let Some(p) = modified_files_path {
        for t in &impact.impacts {
            if t.change_kind != ChangeKind::Deleted
                && !graph.is_defined(&t.table_name)
                && !externals.iter().any(|x| x.table_name == t.table_name)
            {
                ctx.console.warn(&format!(
                    "warning[modified-files]: {}: '{}' is not a table of {}; nothing of it is impacted",
                    p.display(),
                    t.table_name,
                    pipelines.display()
                ));
            }
        }
    }
    let json = to_json_pretty(&impact);
    let written = match output {
        Output::File(f) => {
            if let Some(parent) = f.parent().filter(|p| !p.as_os_str().is_empty()) {
                super::output_dir(Some(parent), pipelines)?;
            }
            write_atomic(f, json.as_bytes()).map_err(|source| OpsError::Write {
                path: f.clone(),
                source,
            })?;
            f.clone()
        }
        Output::Dir(d) => {
            let dir = super::output_dir(d.as_deref(), pipelines)?;
            write_output(Some(&dir), "impacted_tables.json", &json)?
        }
    };
    Ok(ImpactReport { impact, written })
}
