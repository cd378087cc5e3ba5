//! Pipeline metadata files.
//!
//! - `pipeline_definition.json` in every table folder, in shift_left's shape
//!   (shift_left 0.1.52, <https://github.com/jbcodeforce/shift_left_utils>): the table, its
//!   `complexity` block, and its parents and children as embedded objects. Embedded children are
//!   flat; an embedded parent carries, as shift_left's do, a
//!   `children` list with this table in it — but only this table, not the parent's other children, so a
//!   file's size is proportional to the table's own parents and children. (With every sibling embedded,
//!   one source read by 1,000 tables made each reader's file ~1 MB and the tree ~1 GB: quadratic in the
//!   fan-out.) shift_left's readers use only `table_name`, `path` and `type` of embedded entries and
//!   re-read `<path>/pipeline_definition.json` to navigate, where the parent's full children are.
//!   Files are rewritten whole from the current graph, so a rebuild never keeps stale edges (shift_left
//!   0.1.52 merged old and new edges forever).
//! - `pipeline_graph.json` at the pipelines root: the whole graph for flinkpipe's own use (one file,
//!   read once, instead of walking every folder).
//!
//! Building is O(N + E) in all (every file is O(its own parents + children)); writing is parallel and
//! all or nothing.

use crate::fsutil::{Batch, BatchError, Staged, to_json_pretty};
use crate::inventory::{Inventory, Table};
use crate::project::Project;
use crate::sql::Statefulness;
use rayon::prelude::*;
use serde::Serialize;

/// shift_left's `complexity` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Complexity {
    pub number_of_regular_joins: usize,
    pub number_of_left_joins: usize,
    pub number_of_right_joins: usize,
    pub number_of_inner_joins: usize,
    pub number_of_outer_joins: usize,
    /// `Simple` (≤ 2 joins), `Medium` (≤ 4), `Complex`.
    pub complexity_type: &'static str,
    /// `Stateful` or `Stateless`.
    pub state_form: &'static str,
    /// Present (`true`) when the table's statefulness rests on SQL the parser rejected and the token-level
    /// fallback read: `state_form` is then `Stateful` unless a stateful operator was seen (unknown counts as
    /// stateful). Not a shift_left field; omitted otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub state_from_fallback: bool,
}

/// One `pipeline_definition.json` (or an object embedded in one).
#[derive(Debug, Clone, Serialize)]
pub struct PipelineDefinition {
    pub table_name: String,
    pub product_name: String,
    #[serde(rename = "type")]
    pub table_type: String,
    pub dml_ref: String,
    pub ddl_ref: String,
    pub path: String,
    pub kafka_topic: Option<String>,
    pub complexity: Complexity,
    pub parents: Vec<PipelineDefinition>,
    pub children: Vec<PipelineDefinition>,
}

/// `Stateful` / `Stateless` as shift_left spells the upgrade mode (a table with no query is stateless; one
/// whose statefulness is unknown may hold state, so it is `Stateful`).
pub fn state_form(s: Statefulness) -> &'static str {
    if s.may_hold_state() {
        "Stateful"
    } else {
        "Stateless"
    }
}

fn complexity(t: &Table) -> Complexity {
    let j = t.joins;
    let total = j.regular + j.left + j.right + j.inner + j.outer;
    Complexity {
        number_of_regular_joins: j.regular,
        number_of_left_joins: j.left,
        number_of_right_joins: j.right,
        number_of_inner_joins: j.inner,
        number_of_outer_joins: j.outer,
        complexity_type: match total {
            0..=2 => "Simple",
            3..=4 => "Medium",
            _ => "Complex",
        },
        state_form: state_form(t.statefulness),
        state_from_fallback: t.state_from_fallback,
    }
}

fn flat(t: &Table) -> PipelineDefinition {
    PipelineDefinition {
        table_name: t.name.clone(),
        product_name: t.product.clone(),
        table_type: t.table_type.clone(),
        dml_ref: t.dml_ref.clone().unwrap_or_default(),
        ddl_ref: t.ddl_ref.clone().unwrap_or_default(),
        path: t.folder.clone(),
        kafka_topic: t.kafka_topic.clone(),
        complexity: complexity(t),
        parents: Vec::new(),
        children: Vec::new(),
    }
}

/// The definition of `name`: its flat children, and its parents, each embedded with `children` holding
/// only `name` (flat). Size: O(parents + children of `name`).
pub fn definition(project: &Project, name: &str) -> Option<PipelineDefinition> {
    let inv = &project.inventory;
    let table = inv.tables.get(name)?;
    let g = &project.graph;
    let mut def = flat(table);
    def.parents = g
        .parents(name)
        .into_iter()
        .filter_map(|p| inv.tables.get(p))
        .map(|p| {
            let mut pd = flat(p);
            pd.children = vec![flat(table)];
            pd
        })
        .collect();
    def.children = g
        .children(name)
        .into_iter()
        .filter_map(|c| inv.tables.get(c))
        .map(flat)
        .collect();
    Some(def)
}

/// One edge of `pipeline_graph.json`.
#[derive(Debug, Clone, Serialize)]
pub struct GraphFileParent {
    pub table_name: String,
    /// `data` or `like`.
    pub kind: String,
}

/// One table of `pipeline_graph.json`.
#[derive(Debug, Clone, Serialize)]
pub struct GraphFileTable {
    pub table_name: String,
    pub product_name: String,
    #[serde(rename = "type")]
    pub table_type: String,
    pub path: String,
    pub ddl_ref: Option<String>,
    pub dml_ref: Option<String>,
    pub external: bool,
    pub state_form: &'static str,
    /// As [`Complexity::state_from_fallback`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub state_from_fallback: bool,
    pub state_reasons: Vec<crate::sql::StateReason>,
    pub parents: Vec<GraphFileParent>,
    pub children: Vec<String>,
    pub written_by: Option<String>,
    pub extra_sinks: Vec<String>,
}

/// `pipeline_graph.json`: every table with its parents and children, sorted by name.
#[derive(Debug, Clone, Serialize)]
pub struct GraphFile {
    pub format: &'static str,
    pub tables: Vec<GraphFileTable>,
}

/// The whole-graph file's content.
pub fn graph_file(project: &Project) -> GraphFile {
    let g = &project.graph;
    let tables = project
        .inventory
        .tables
        .values()
        .map(|t| GraphFileTable {
            table_name: t.name.clone(),
            product_name: t.product.clone(),
            table_type: t.table_type.clone(),
            path: t.folder.clone(),
            ddl_ref: t.ddl_ref.clone(),
            dml_ref: t.dml_ref.clone(),
            external: t.external,
            state_form: state_form(t.statefulness),
            state_from_fallback: t.state_from_fallback,
            state_reasons: t.state_reasons.clone(),
            parents: g
                .parent_edges(&t.name)
                .into_iter()
                .map(|(p, k)| GraphFileParent {
                    table_name: p.to_string(),
                    kind: format!("{k:?}").to_lowercase(),
                })
                .collect(),
            children: g
                .children(&t.name)
                .into_iter()
                .map(str::to_string)
                .collect(),
            written_by: t.written_by.clone(),
            extra_sinks: t.extra_sinks.clone(),
        })
        .collect();
    GraphFile {
        format: "flinkpipe-graph/1",
        tables,
    }
}

/// File name of the whole-graph file at the pipelines root.
pub const GRAPH_FILE: &str = "pipeline_graph.json";
/// File name of the per-folder definition.
pub const DEFINITION_FILE: &str = "pipeline_definition.json";

/// Writes every table folder's `pipeline_definition.json` and the root's `pipeline_graph.json`, all or
/// nothing, as one [`Batch`] under the pipelines root: every new content is first written to a temporary
/// file beside its target (in parallel, one file in memory per worker thread); only when all are staged
/// are they renamed over the targets. If staging fails (a target that is a folder, a read-only file
/// system) or SIGINT arrives, the temporaries are removed and no file has changed; a SIGINT during the
/// renames lets them finish. Files whose content is already identical are left untouched.
///
/// Returns what was written and what was already up to date ([`Written`]). Errors: the first failure, naming
/// the file, or the interrupt.
pub fn write_all(project: &Project) -> Result<Written, BatchError> {
    let batch = Batch::begin_derived(&project.inventory.root, WRITER, REPAIR)?;
    write_all_with(project, batch, Vec::new())
}

/// What writes the metadata, as a batch marker says it.
const WRITER: &str = "flinkpipe pipeline build-all-metadata";
/// The command that rewrites every metadata file (and so repairs an interrupted batch).
pub const REPAIR: &str = "flinkpipe pipeline build-all-metadata";

/// [`write_all`] in a batch the caller opened, with more files it already staged in it
/// (`inventory.json`) committed together; they are discarded when staging fails.
pub fn write_all_with(
    project: &Project,
    batch: Batch,
    extra: Vec<Staged>,
) -> Result<Written, BatchError> {
    let started = std::time::Instant::now();
    let inv: &Inventory = &project.inventory;
    let tables: Vec<&Table> = inv.tables.values().filter(|t| !t.external).collect();
    let results: Vec<Result<Option<Staged>, BatchError>> = tables
        .par_iter()
        .filter_map(|t| definition(project, &t.name).map(|d| (t, d)))
        .map(|(t, d)| batch.stage(&definition_path(inv, t), to_json_pretty(&d).as_bytes()))
        .chain(rayon::iter::once(batch.stage(
            &inv.root.join(GRAPH_FILE),
            to_json_pretty(&graph_file(project)).as_bytes(),
        )))
        .collect();
    let mut staged = extra;
    let mut first_error = None;
    let mut written = Written {
        definitions_written: 0,
        definitions_unchanged: 0,
        graph_written: false,
    };
    let graph_at = results.len() - 1;
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(Some(s)) => {
                if i == graph_at {
                    written.graph_written = true;
                } else {
                    written.definitions_written += 1;
                }
                staged.push(s);
            }
            Ok(None) => {
                if i != graph_at {
                    written.definitions_unchanged += 1;
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        // An interrupt wins over the files it made fail.
        let e = if batch.interrupted() {
            BatchError::Interrupted { committed: false }
        } else {
            e
        };
        batch.abandon(staged);
        return Err(e);
    }
    tracing::info!(
        files = staged.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "metadata staged"
    );
    batch.commit(staged)?;
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        "metadata committed"
    );
    Ok(written)
}

/// The files [`write_all`] writes for `project`: every `pipeline_definition.json` (one per table that
/// is not external, in the inventory's order), then `pipeline_graph.json`.
pub fn files(project: &Project) -> Vec<std::path::PathBuf> {
    let inv = &project.inventory;
    inv.tables
        .values()
        .filter(|t| !t.external)
        .map(|t| definition_path(inv, t))
        .chain(std::iter::once(inv.root.join(GRAPH_FILE)))
        .collect()
}

/// Where a table's `pipeline_definition.json` is written: in its folder.
fn definition_path(inv: &Inventory, t: &Table) -> std::path::PathBuf {
    inv.disk_path(&t.folder).join(DEFINITION_FILE)
}

/// What [`write_all`] did with the metadata files: how many `pipeline_definition.json` files got a
/// new content, how many already held it (left untouched, mtime kept), and whether
/// `pipeline_graph.json` was rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub definitions_written: usize,
    pub definitions_unchanged: usize,
    pub graph_written: bool,
}
