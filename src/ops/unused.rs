//! `project assess-unused-tables` and `project delete-unused-tables FILE`: tables of the tree that no
//! running statement reads or writes — read from the SQL the target runs, so another team's running
//! statement that reads a table counts too (shift_left looked only at statements it could map to its
//! own tables) — and, with `include_topics`, the topics of those tables and the topics no table of
//! the project owns.
//!
//! A table is offered for deletion only when nothing in the tree reads it either (no child) and it
//! is not a declared sink of its product (`flinkpipe.sink_tables`). Deleting is listing, asking, and
//! `DROP TABLE IF EXISTS` per table (on Confluent Cloud that deletes its topic), each table checked
//! again against a fresh listing right before.

use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::config::Config;
use crate::project::Project;
use crate::target::{Phase, StatementState};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A table no running statement uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnusedTable {
    pub table_name: String,
    #[serde(rename = "type")]
    pub table_type: String,
    pub product_name: String,
    pub path: String,
    /// Tables of the tree that read it (their jobs do not run either).
    pub children: Vec<String>,
    /// Whether `delete-unused-tables` may drop it: no child and not a declared sink.
    pub deletable: bool,
    /// Why it is kept, when it is not deletable.
    pub kept_because: Option<String>,
}

/// A topic no running statement uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnusedTopic {
    pub topic_name: String,
    /// The unused table whose storage it is; `None`: no table of the project owns it (another
    /// team's, or left behind).
    pub table_name: Option<String>,
}

/// The assessment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnusedReport {
    /// Statements read from the target, and those running (RUNNING, PENDING, DEGRADED).
    pub statements: usize,
    pub running_statements: usize,
    /// Tables of the tree (not external).
    pub tables: usize,
    pub unused_tables: Vec<UnusedTable>,
    /// With topics: the unused topics (internal ones left out), and how many topics there are.
    pub unused_topics: Option<Vec<UnusedTopic>>,
    pub total_topics: Option<usize>,
    /// Why topics were not assessed (no Kafka API key, broker unreachable), if they were asked for.
    pub topics_skipped: Option<String>,
    /// The text report (shift_left's `unused_tables_<timestamp>.txt`).
    pub output_file: Option<PathBuf>,
}

fn running(p: &Phase) -> bool {
    matches!(p, Phase::Running | Phase::Pending | Phase::Degraded)
}

/// Tables (by table part of the name) the running statements read or write.
fn used_by_running(live: &BTreeMap<String, StatementState>) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for s in live.values().filter(|s| running(&s.phase)) {
        let a = crate::sql::analyze(&s.sql);
        for st in &a.statements {
            for r in st.sinks.iter().chain(&st.sources) {
                if let Some(t) = r.name.parts.last() {
                    used.insert(t.clone());
                }
            }
        }
    }
    used
}

fn assess_loaded(
    cfg: &Config,
    project: &Project,
    live: &BTreeMap<String, StatementState>,
) -> Vec<UnusedTable> {
    let used = used_by_running(live);
    let sinks: BTreeSet<&str> = cfg
        .flinkpipe
        .sink_tables
        .iter()
        .map(String::as_str)
        .collect();
    project
        .inventory
        .tables
        .values()
        .filter(|t| !t.external && !t.unknown && !used.contains(&t.name))
        .map(|t| {
            let children: Vec<String> = project
                .graph
                .children(&t.name)
                .into_iter()
                .map(str::to_string)
                .collect();
            let kept_because = if sinks.contains(t.name.as_str()) {
                Some("a declared sink of its product (flinkpipe.sink_tables)".to_string())
            } else if !children.is_empty() {
                Some(format!("read by {} in the tree", children.join(", ")))
            } else {
                None
            };
            UnusedTable {
                table_name: t.name.clone(),
                table_type: t.table_type.clone(),
                product_name: t.product.clone(),
                path: t.folder.clone(),
                deletable: kept_because.is_none(),
                kept_because,
                children,
            }
        })
        .collect()
}

/// What to assess.
#[derive(Debug, Clone)]
pub struct AssessRequest {
    pub pipelines: PathBuf,
    pub include_topics: bool,
    /// The text report; default `unused_tables_<timestamp>.txt` in [`super::output_dir`].
    pub output_file: Option<PathBuf>,
    pub allow_unknown: bool,
}

/// Assesses the tree against one listing of the target (and, with topics, one of the Kafka
/// cluster) and writes the text report. Read-only on every server.
///
/// Errors: errors in the project, the target's. A topic listing that fails is not an error: it is
/// said in [`UnusedReport::topics_skipped`].
pub fn assess(ctx: &Context, req: &AssessRequest) -> Result<UnusedReport, OpsError> {
    let cfg = ctx.project_config(&req.pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        &req.pipelines,
        req.allow_unknown,
        "nothing assessed: fix the errors above",
    )?;
    let c = target::connect(&cfg, Some(&project))?;
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&c))?;
    let unused_tables = assess_loaded(&cfg, &project, &live);
    let (mut unused_topics, mut total_topics, mut topics_skipped) = (None, None, None);
    if req.include_topics {
        let tmp = tempfile::tempdir()?;
        match super::topics::list_topics(ctx, &req.pipelines, tmp.path()) {
            Ok(list) => {
                let unused: BTreeSet<&str> = unused_tables
                    .iter()
                    .map(|t| t.table_name.as_str())
                    .collect();
                let used = used_by_running(&live);
                total_topics = Some(list.topics.len());
                unused_topics = Some(
                    list.topics
                        .iter()
                        .filter(|t| !t.is_internal)
                        .filter(|t| match &t.table_name {
                            Some(tb) => unused.contains(tb.as_str()),
                            None => !used.contains(&t.topic_name),
                        })
                        .map(|t| UnusedTopic {
                            topic_name: t.topic_name.clone(),
                            table_name: t.table_name.clone(),
                        })
                        .collect(),
                );
            }
            Err(e) => topics_skipped = Some(e.to_string()),
        }
    }
    let mut report = UnusedReport {
        statements: live.len(),
        running_statements: live.values().filter(|s| running(&s.phase)).count(),
        tables: project
            .inventory
            .tables
            .values()
            .filter(|t| !t.external && !t.unknown)
            .count(),
        unused_tables,
        unused_topics,
        total_topics,
        topics_skipped,
        output_file: None,
    };
    let file = match &req.output_file {
        Some(f) => f.clone(),
        None => super::output_dir(None, &req.pipelines)?.join(format!(
            "unused_tables_{}.txt",
            super::now_utc()
                .replace([':', '-'], "")
                .replace('T', "_")
                .trim_end_matches('Z')
        )),
    };
    crate::fsutil::write_atomic(&file, text_report(&report).as_bytes()).map_err(|source| {
        OpsError::Write {
            path: file.clone(),
            source,
        }
    })?;
    report.output_file = Some(file);
    Ok(report)
}

/// shift_left's text report; the table names are alone on their lines, so the file is also a table
/// list for `delete-unused-tables` (only the deletable tables are listed there).
fn text_report(r: &UnusedReport) -> String {
    let mut out = format!(
        "Unused Tables Assessment - {}\n{}\n\nTotal unused tables: {}\n\n",
        super::now_utc(),
        "=".repeat(80),
        r.unused_tables.len()
    );
    if !r.unused_tables.is_empty() {
        out.push_str(&format!("Unused Tables:\n{}\n", "-".repeat(80)));
        for t in r.unused_tables.iter().filter(|t| t.deletable) {
            out.push_str(&format!(
                "{}\n  Type: {}\n  Product: {}\n  Has Children: False\n  Path: {}\n\n",
                t.table_name, t.table_type, t.product_name, t.path
            ));
        }
        for t in r.unused_tables.iter().filter(|t| !t.deletable) {
            out.push_str(&format!(
                "  # kept: {} ({}) is {}\n",
                t.table_name,
                t.table_type,
                t.kept_because.as_deref().unwrap_or_default()
            ));
        }
    }
    if let Some(topics) = &r.unused_topics {
        out.push_str(&format!("\nTotal unused topics: {}\n\n", topics.len()));
        if !topics.is_empty() {
            out.push_str(&format!("Unused Topics:\n{}\n", "-".repeat(80)));
            for t in topics {
                out.push_str(&format!("  topic: {}\n", t.topic_name));
            }
        }
    }
    out
}

/// Table names in a list file: one per line, alone on it (a plain list, or the report of
/// [`assess`]); blank lines, `#` comments, indented lines and headers are skipped, and reading stops
/// at the topics section.
pub fn read_table_list(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("Total unused topics") || line.starts_with("Unused Topics") {
            break;
        }
        let l = line.trim_end();
        if l.is_empty() || l.starts_with([' ', '\t', '#']) {
            continue;
        }
        if l.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'))
            && !out.iter().any(|x: &String| x == l)
        {
            out.push(l.to_string());
        }
    }
    out
}

/// A drop ready to run (after the caller asked).
pub struct PreparedDrop {
    cfg: Config,
    project: Project,
    connected: Connected,
    rt: tokio::runtime::Runtime,
    _lock: Option<super::lock::TargetLock>,
    timeout: Duration,
    /// The tables to drop, in the file's order.
    pub tables: Vec<UnusedTable>,
}

/// One table's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    pub table_name: String,
    pub error: Option<String>,
}

/// Reads the list and checks every table against the tree and one fresh listing of the target:
/// each must be a table of the tree that is unused and deletable.
///
/// Errors: an unreadable or empty list, a name that is no table of the tree, a table that is used
/// now, read in the tree or a declared sink — all named at once, nothing dropped.
pub fn prepare_drop(
    ctx: &Context,
    pipelines: &Path,
    list_file: &Path,
    timeout: Duration,
) -> Result<PreparedDrop, OpsError> {
    let text = crate::fsutil::read_data_file(list_file).map_err(|source| OpsError::Read {
        what: "the table list",
        path: list_file.to_path_buf(),
        source,
    })?;
    let names = read_table_list(&text);
    if names.is_empty() {
        return Err(OpsError::TableList(format!(
            "{}: no table name in it (one per line)",
            list_file.display()
        )));
    }
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        false,
        "nothing dropped: fix the errors above",
    )?;
    let c = target::connect(&cfg, Some(&project))?;
    let lock = super::lock::lock_target(
        pipelines,
        &c,
        &crate::plan::StatementNaming::from_config(&cfg).prefix,
        "project delete-unused-tables",
    )?;
    let rt = target::runtime()?;
    let live = rt.block_on(target::live_statements(&c))?;
    let unused = assess_loaded(&cfg, &project, &live);
    let mut refused = Vec::new();
    let mut tables = Vec::new();
    for n in &names {
        match unused.iter().find(|t| t.table_name == *n) {
            Some(t) if t.deletable => tables.push(t.clone()),
            Some(t) => refused.push(format!(
                "{n}: {}",
                t.kept_because.as_deref().unwrap_or_default()
            )),
            None if project.inventory.tables.get(n).is_some_and(|t| !t.external) => {
                refused.push(format!("{n}: a running statement reads or writes it"))
            }
            None => refused.push(format!("{n}: no table of the tree has this name")),
        }
    }
    if !refused.is_empty() {
        return Err(OpsError::Refused(format!(
            "nothing dropped: {}",
            refused.join("; ")
        )));
    }
    Ok(PreparedDrop {
        cfg,
        project,
        connected: c,
        rt,
        _lock: lock,
        timeout,
        tables,
    })
}

impl PreparedDrop {
    /// Drops the tables one by one (`DROP TABLE IF EXISTS`, a statement named
    /// `<prefix>-<product>-ddl-<table>-drop`, waited for and removed), each checked again first
    /// against a fresh listing: one a statement started to use since is not dropped (its error says
    /// so) and the others go on.
    pub fn execute(self) -> Vec<Dropped> {
        let naming = crate::plan::StatementNaming::from_config(&self.cfg);
        let c = &self.connected;
        let mut out = Vec::new();
        for t in &self.tables {
            let still = self
                .rt
                .block_on(target::live_statements(c))
                .map_err(|e| e.to_string())
                .map(|live| {
                    assess_loaded(&self.cfg, &self.project, &live)
                        .iter()
                        .any(|u| u.table_name == t.table_name && u.deletable)
                });
            let error = match still {
                Err(e) => Some(e),
                Ok(false) => Some("a statement uses it since it was listed: not dropped".into()),
                Ok(true) => {
                    let name = crate::plan::naming::fit_length(format!(
                        "{}-drop",
                        naming.ddl(&t.product_name, &t.table_name)
                    ));
                    let sql = format!(
                        "DROP TABLE IF EXISTS {}",
                        crate::sql::quote_identifier(&t.table_name)
                    );
                    self.rt
                        .block_on(super::oneoff::run_to_completion(
                            c,
                            &name,
                            &sql,
                            None,
                            self.timeout,
                        ))
                        .err()
                }
            };
            out.push(Dropped {
                table_name: t.table_name.clone(),
                error,
            });
        }
        out
    }
}
