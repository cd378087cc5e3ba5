//! `pipeline build-all-metadata`: writes `pipeline_definition.json` in every table folder,
//! `DIR/pipeline_graph.json` and `DIR/inventory.json` as one all-or-nothing batch.

use super::{Context, OpsError};
use crate::fsutil::{Batch, WrittenRecord, to_json_pretty};
use crate::inventory::shift_left::{INVENTORY_FILE, to_inventory_file};
use crate::metadata::{self, GraphFile};
use crate::project::{LoadSummary, Project};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What was written.
#[derive(Debug, Clone)]
pub struct MetadataWritten {
    pub tables: usize,
    pub edges: usize,
    /// `pipeline_definition.json` files given a new content.
    pub definitions_written: usize,
    /// `pipeline_definition.json` files that already held their content (not rewritten).
    pub definitions_unchanged: usize,
    /// Whether `pipeline_graph.json` got a new content.
    pub graph_written: bool,
    /// Whether `inventory.json` got a new content.
    pub inventory_written: bool,
    pub graph_path: PathBuf,
    pub inventory_path: PathBuf,
    /// The content of `pipeline_graph.json`, when asked for (`with_graph` of [`build_all_metadata`]).
    pub graph: Option<GraphFile>,
}

/// Builds the project and writes its metadata. Diagnostics go to the console. With `with_graph`, the
/// report holds the content of `pipeline_graph.json` (for `--output json`; at 100,000 tables building
/// it again takes a tenth of a second).
///
/// Errors: errors in the project (no file is changed), a file that cannot be replaced (every file is
/// put back).
pub fn build_all_metadata(
    ctx: &Context,
    pipelines: &Path,
    allow_unknown: bool,
    with_graph: bool,
) -> Result<MetadataWritten, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    ctx.recover_tree(pipelines, None)?;
    if !with_graph && let Some(report) = unchanged_metadata(ctx, &cfg, pipelines, allow_unknown) {
        return Ok(report);
    }
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        allow_unknown,
        "metadata not written: fix the errors above (no file was changed)",
    )?;
    ctx.recover_tree(pipelines, Some(&project.diagnostics))?;
    let written = write_metadata(&project, pipelines)?;
    // What this load found, for the next run on the same inputs (see `unchanged_metadata`).
    let definitions = written.metadata.definitions_written + written.metadata.definitions_unchanged;
    if let Some(summary) = LoadSummary::of(&project, definitions) {
        summary.save(pipelines);
    }
    let report = MetadataWritten {
        tables: project.inventory.tables.len(),
        edges: project.graph.edges().count(),
        definitions_written: written.metadata.definitions_written,
        definitions_unchanged: written.metadata.definitions_unchanged,
        graph_written: written.metadata.graph_written,
        inventory_written: written.inventory_written,
        graph_path: pipelines.join(metadata::GRAPH_FILE),
        inventory_path: pipelines.join(INVENTORY_FILE),
        graph: with_graph.then(|| metadata::graph_file(&project)),
    };
    project.free_in_background();
    Ok(report)
}

/// `build-all-metadata` without loading the project, when nothing it derives from changed: the
/// inputs key of the tree, known from the files' stamps ([`crate::project::probe_inputs`]), is the
/// one the recorded metadata files were derived from, every recorded file (the definitions,
/// `pipeline_graph.json`, `inventory.json`) is still as recorded, and the summary of the load that
/// wrote them is kept ([`LoadSummary`]). The run then reports what that load found (its counts, its
/// diagnostics on the console), and writes nothing. `None`: the caller loads the project.
fn unchanged_metadata(
    ctx: &Context,
    cfg: &crate::config::Config,
    pipelines: &Path,
    allow_unknown: bool,
) -> Option<MetadataWritten> {
    let record = WrittenRecord::at(crate::scan::cache::root_file(pipelines, "written")?);
    record.inputs()?;
    let inputs = crate::project::probe_inputs(
        pipelines,
        cfg,
        crate::project::LoadOptions { allow_unknown },
    )?;
    if record.inputs() != Some(inputs) {
        return None;
    }
    let summary = LoadSummary::load(pipelines, inputs)?;
    let graph_path = pipelines.join(metadata::GRAPH_FILE);
    let inventory_path = pipelines.join(INVENTORY_FILE);
    // Every file the load wrote is recorded (a file the record could not hold is written again).
    if record.len() != summary.definitions + 2
        || !record.all_current(&[&graph_path, &inventory_path])
    {
        return None;
    }
    tracing::debug!(
        inputs = %format!("{inputs:032x}"),
        "metadata inputs unchanged: reported from the load summary, no file read"
    );
    ctx.console.diagnostics(
        &summary.diagnostics,
        super::source_base(pipelines).as_deref(),
    );
    Some(MetadataWritten {
        tables: summary.tables,
        edges: summary.edges,
        definitions_written: 0,
        definitions_unchanged: summary.definitions,
        graph_written: false,
        inventory_written: false,
        graph_path,
        inventory_path,
        graph: None,
    })
}

/// Writes every `pipeline_definition.json`, `pipeline_graph.json` and `inventory.json` of a loaded
/// project in one batch; returns which were rewritten and which already held their content.
pub fn write_metadata(project: &Project, pipelines: &Path) -> Result<AllWritten, OpsError> {
    write_metadata_with(
        project,
        pipelines,
        "flinkpipe pipeline build-all-metadata",
        Vec::new(),
    )
}

/// [`write_metadata`] with more files (path, content) written in the same all-or-nothing batch;
/// `command` is what runs, for the batch marker (see [`crate::fsutil::Batch`]).
///
/// Errors: a file that cannot be written (every file is as it was), SIGINT
/// ([`OpsError::Interrupted`]).
pub fn write_metadata_with(
    project: &Project,
    pipelines: &Path,
    command: &str,
    extra: Vec<(PathBuf, String)>,
) -> Result<AllWritten, OpsError> {
    // The record of the files written last time (beside the analysis cache): an unchanged file is
    // known from one stat instead of being read back.
    let record = crate::scan::cache::root_file(pipelines, "written")
        .map_or_else(WrittenRecord::disabled, WrittenRecord::at);
    // Derived from the very inputs the recorded files were, and each of them still as recorded:
    // every file already holds what would be written, so none is generated to be compared.
    let inputs = project.inputs.filter(|_| extra.is_empty());
    if inputs.is_some() && record.inputs() == inputs {
        let mut files = metadata::files(project);
        files.push(pipelines.join(INVENTORY_FILE));
        if record.holds_exactly(&files) {
            return Ok(AllWritten {
                metadata: metadata::Written {
                    definitions_written: 0,
                    definitions_unchanged: files.len() - 2,
                    graph_written: false,
                },
                inventory_written: false,
            });
        }
    }
    let batch = Batch::begin_derived(pipelines, command, metadata::REPAIR)?
        .with_record(record)
        .deriving_from(inputs);
    // inventory.json and the caller's files are staged first and committed with the metadata files.
    let inventory = (
        pipelines.join(INVENTORY_FILE),
        to_json_pretty(&to_inventory_file(&project.inventory)),
    );
    let mut staged = Vec::new();
    let mut inventory_written = false;
    for (i, (path, text)) in std::iter::once(inventory).chain(extra).enumerate() {
        match batch.stage(&path, text.as_bytes()) {
            Ok(s) => {
                if i == 0 {
                    inventory_written = s.is_some();
                }
                staged.extend(s)
            }
            Err(e) => {
                batch.abandon(staged);
                return Err(e.into());
            }
        }
    }
    let metadata = metadata::write_all_with(project, batch, staged)?;
    Ok(AllWritten {
        metadata,
        inventory_written,
    })
}

/// What [`write_metadata`] did: the metadata files ([`metadata::Written`]) and whether
/// `inventory.json` got a new content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllWritten {
    pub metadata: metadata::Written,
    pub inventory_written: bool,
}

/// What `pipeline build-metadata DML_FILE` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct TableMetadataWritten {
    /// The table whose DML (or DDL) the file is.
    pub table_name: String,
    /// The `pipeline_definition.json` files written or already up to date: the table's first, then its
    /// parents' and children's (each of which names the table), sorted.
    pub files: Vec<PathBuf>,
}

/// shift_left's `pipeline build-metadata DML_FILE`: the metadata of one table, the same files
/// `build-all-metadata` writes for it — its `pipeline_definition.json` — and, so that no file
/// disagrees with it, those of its parents and children (shift_left rewrote only the table's and its
/// parents' and left the children stale). All of them are written or none.
///
/// Errors: errors in the project (no file is changed), a file that is no table's DML or DDL (with
/// the tables whose folder holds it, if any), a file that cannot be written.
pub fn build_table_metadata(
    ctx: &Context,
    pipelines: &Path,
    sql_file: &Path,
    allow_unknown: bool,
) -> Result<TableMetadataWritten, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    ctx.recover_tree(pipelines, None)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        allow_unknown,
        "metadata not written: fix the errors above (no file was changed)",
    )?;
    let wanted = sql_file.canonicalize().map_err(|source| OpsError::Read {
        what: "the DML file",
        path: sql_file.to_path_buf(),
        source,
    })?;
    let inv = &project.inventory;
    let same = |r: &Option<String>| {
        r.as_deref()
            .and_then(|r| inv.disk_path(r).canonicalize().ok())
            .is_some_and(|p| p == wanted)
    };
    let table = inv
        .tables
        .values()
        .filter(|t| !t.external)
        .find(|t| same(&t.dml_ref))
        .or_else(|| {
            inv.tables
                .values()
                .filter(|t| !t.external)
                .find(|t| same(&t.ddl_ref))
        })
        .ok_or_else(|| {
            OpsError::Refused(format!(
                "{} is the DML or DDL of no table of {} (build-metadata takes a table's sql-scripts/dml.<table>.sql)",
                sql_file.display(),
                pipelines.display()
            ))
        })?;
    let name = table.name.clone();
    let mut names = vec![name.clone()];
    let mut neighbours: Vec<String> = project
        .graph
        .parents(&name)
        .into_iter()
        .chain(project.graph.children(&name))
        .filter(|n| inv.tables.get(*n).is_some_and(|t| !t.external))
        .map(str::to_string)
        .collect();
    neighbours.sort();
    neighbours.dedup();
    neighbours.retain(|n| *n != name);
    names.extend(neighbours);
    let batch = Batch::begin_derived(
        pipelines,
        "flinkpipe pipeline build-metadata",
        metadata::REPAIR,
    )?;
    let mut staged = Vec::new();
    let mut files = Vec::new();
    for n in &names {
        let (Some(t), Some(def)) = (inv.tables.get(n), metadata::definition(&project, n)) else {
            continue;
        };
        let path = inv.disk_path(&t.folder).join(metadata::DEFINITION_FILE);
        match batch.stage(&path, to_json_pretty(&def).as_bytes()) {
            Ok(s) => staged.extend(s),
            Err(e) => {
                batch.abandon(staged);
                return Err(e.into());
            }
        }
        files.push(path);
    }
    batch.commit(staged)?;
    Ok(TableMetadataWritten {
        table_name: name,
        files,
    })
}

/// The metadata files `pipeline delete-all-metadata DIR` removes: every `pipeline_definition.json`
/// under `dir` and `dir/pipeline_graph.json`, sorted.
#[derive(Debug, Clone, Serialize)]
pub struct MetadataFiles {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
}

/// Lists the metadata files under `dir` (nothing is changed).
///
/// Errors: `dir` is not a folder or cannot be walked.
pub fn list_metadata_files(dir: &Path) -> Result<MetadataFiles, OpsError> {
    if !dir.is_dir() {
        return Err(OpsError::Refused(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(dir).follow_links(false) {
        let e = e.map_err(|e| OpsError::Io(std::io::Error::other(e.to_string())))?;
        if e.file_type().is_file() && e.file_name() == metadata::DEFINITION_FILE {
            files.push(e.path().to_path_buf());
        }
    }
    let graph = dir.join(metadata::GRAPH_FILE);
    if graph.is_file() {
        files.push(graph);
    }
    files.sort();
    Ok(MetadataFiles {
        dir: dir.to_path_buf(),
        files,
    })
}

/// Deletes the listed files, all or none: each is first renamed aside (`.<name>.flinkpipe-delete`),
/// and only when every rename worked are they removed; a failed rename puts the others back. A file
/// already gone is skipped. Returns the number removed.
///
/// Errors: a file that cannot be moved (naming it; every file is as it was).
pub fn delete_metadata_files(list: &MetadataFiles) -> Result<usize, OpsError> {
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    // Never through a link that leaves the folder (the walk does not follow links; this is the rule).
    let confine = crate::fsutil::Confinement::new(&list.dir);
    for f in &list.files {
        if let Err(e) = confine.check_file(f) {
            return Err(OpsError::Write {
                path: f.clone(),
                source: e.into(),
            });
        }
    }
    for f in &list.files {
        if !f.exists() {
            continue;
        }
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let aside = f.with_file_name(format!(
            ".{}.flinkpipe-delete-{}",
            name.unwrap_or_default(),
            std::process::id()
        ));
        if let Err(source) = std::fs::rename(f, &aside) {
            for (from, to) in moved.iter().rev() {
                let _ = std::fs::rename(to, from);
            }
            return Err(OpsError::Write {
                path: f.clone(),
                source,
            });
        }
        moved.push((f.clone(), aside));
    }
    for (_, aside) in &moved {
        let _ = std::fs::remove_file(aside);
    }
    Ok(moved.len())
}
