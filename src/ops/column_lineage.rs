//! `pipeline column-lineage`: the column lineage of the whole project ([`crate::sql::columns`] on each
//! writing statement, with the project's DDLs as schemas), or the upstream / downstream of one table or
//! column, as JSON (a superset of shift_left's `lineage.json` fields), DOT or Mermaid.

use super::{Context, OpsError};
use crate::inventory::resolve_name;
use crate::sql::columns::{self, Schemas};
use crate::sql::{StatementKind, TableName};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// A column of a table of the project.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ColumnInfo {
    pub table: String,
    pub column: String,
    /// The type as the DDL writes it.
    #[serde(rename = "type")]
    pub data_type: String,
}

/// How a column feeds another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// Copied, renamed, cast or computed from.
    Direct,
    /// Shapes which rows are produced (filter, join, grouping, window, ordering) without being copied.
    Indirect,
}

/// One edge: `source_table.source_column` feeds `table.column`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    pub table: String,
    pub column: String,
    pub source_table: String,
    pub source_column: String,
    pub kind: EdgeKind,
    /// The statement's file (relative, `pipelines/…`) and 1-based line.
    pub file: String,
    pub line: usize,
    /// The line of the top-level statement (an `EXECUTE STATEMENT SET`'s for its members): the Flink
    /// job, one OpenLineage run event.
    #[serde(skip)]
    pub statement_line: usize,
}

/// A statement whose lineage is not certain, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unresolved {
    pub table: String,
    pub file: String,
    pub line: usize,
    pub reasons: Vec<String>,
}

/// The lineage: `{"columns", "edges", "unresolved"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnLineage {
    pub columns: Vec<ColumnInfo>,
    pub edges: Vec<Edge>,
    pub unresolved: Vec<Unresolved>,
}

/// Which part of the lineage to keep.
#[derive(Debug, Clone, Default)]
pub struct LineageRequest {
    /// Only the lineage of this table (with `column`: of this column), transitively.
    pub table: Option<String>,
    pub column: Option<String>,
    /// Towards the sources (default with `table`: both directions).
    pub upstream: bool,
    /// Towards the readers.
    pub downstream: bool,
    pub allow_unknown: bool,
}

/// Schemas of the project's tables: each DDL's first `CREATE TABLE`'s columns (computed ones marked),
/// looked up by the name as the inventory resolves it (the configured catalog and database dropped,
/// other qualifiers kept: `other_db.t` is not the project's `t`).
struct ProjectSchemas<'c> {
    tables: BTreeMap<String, Vec<(String, bool)>>,
    cfg: &'c crate::config::Config,
}

impl Schemas for ProjectSchemas<'_> {
    fn columns(&self, table: &str, writable: bool) -> Option<Vec<String>> {
        let key = resolve_name(&TableName::new(table.split('.')), self.cfg);
        self.tables.columns(&key, writable)
    }
}

/// The column lineage of the project at `pipelines`, or of `req.table` (`req.column`).
///
/// Errors: errors in the project, an unknown table or column, unreadable SQL files.
pub fn column_lineage(
    ctx: &Context,
    pipelines: &Path,
    req: &LineageRequest,
) -> Result<ColumnLineage, OpsError> {
    let cfg = ctx.project_config(pipelines)?;
    let project = ctx.load_valid_project(
        &cfg,
        pipelines,
        req.allow_unknown,
        "no lineage: fix the errors above",
    )?;
    let mut lineage = project_lineage(&project, &cfg, &BTreeMap::new())?;
    if let Some(t) = &req.table {
        let t = ctx
            .resolve_tables(&project, std::slice::from_ref(t))?
            .remove(0);
        if let Some(c) = &req.column
            && !lineage
                .columns
                .iter()
                .any(|i| i.table == t && &i.column == c)
            && !lineage.edges.iter().any(|e| e.table == t && &e.column == c)
        {
            return Err(OpsError::Usage(format!("table {t} has no column {c}")));
        }
        let both = !req.upstream && !req.downstream;
        lineage = restrict(
            lineage,
            &t,
            req.column.as_deref(),
            req.upstream || both,
            req.downstream || both,
        );
    }
    Ok(lineage)
}

/// Table → its columns in order, each with whether it is computed (not written by an INSERT).
pub type TableColumns = BTreeMap<String, Vec<(String, bool)>>;

/// Schemas of a loaded project (table → its DDL's columns in order, computed ones marked), and the
/// columns with their types.
///
/// Errors: unreadable DDL files.
pub fn schemas_of(
    project: &crate::project::Project,
) -> Result<(TableColumns, Vec<ColumnInfo>), OpsError> {
    let inv = &project.inventory;
    let mut schemas = BTreeMap::new();
    let mut infos = Vec::new();
    for t in inv.tables.values().filter(|t| !t.external) {
        let Some(ddl) = &t.ddl_ref else { continue };
        let analysis = crate::sql::analyze(&read_sql(project, ddl)?);
        let Some(create) = analysis.statements.iter().find(|s| {
            matches!(
                s.kind,
                StatementKind::CreateTable
                    | StatementKind::Ctas
                    | StatementKind::CreateMaterializedTable
            ) && !s.columns.is_empty()
        }) else {
            continue;
        };
        schemas.insert(
            t.name.clone(),
            create
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.computed))
                .collect::<Vec<_>>(),
        );
        infos.extend(create.columns.iter().map(|c| ColumnInfo {
            table: t.name.clone(),
            column: c.name.clone(),
            data_type: c.data_type.clone(),
        }));
    }
    Ok((schemas, infos))
}

/// A SQL file of the project (relative reference), placeholders substituted.
pub fn read_sql(project: &crate::project::Project, rel: &str) -> Result<String, OpsError> {
    let inv = &project.inventory;
    let path = inv.disk_path(rel);
    let text = crate::fsutil::read_user_text(&path, crate::fsutil::MAX_SQL_FILE_BYTES)
        .map_err(|e| OpsError::Refused(format!("cannot read {}: {e}", path.display())))?;
    Ok(crate::sql::placeholders::substitute(
        &text,
        &inv.sql_variables,
    ))
}

/// One writing statement of the project with its file (`pipelines/…`) and the project's name of the
/// table it writes.
#[derive(Debug, Clone)]
pub struct ProjectStatement {
    pub file: String,
    pub table: String,
    pub columns: columns::StatementColumns,
}

/// The column lineage of a loaded project. `schema_overrides` replaces tables' columns (in order;
/// the columns a change removed kept at their place, so that their readers are still bound to them).
///
/// Errors: unreadable SQL files.
pub fn project_lineage(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
    schema_overrides: &BTreeMap<String, Vec<String>>,
) -> Result<ColumnLineage, OpsError> {
    let (statements, infos) = project_statements(project, cfg, schema_overrides)?;
    let key = |written: &str| -> String { resolve_name(&TableName::new(written.split('.')), cfg) };
    let mut edges = BTreeSet::new();
    let mut unresolved = Vec::new();
    for ProjectStatement {
        file,
        table,
        columns: st,
    } in statements
    {
        if !st.unresolved.is_empty() {
            // Listed as unresolved, with no edge: an edge of an unsure statement may be wrong.
            unresolved.push(Unresolved {
                table,
                file,
                line: st.line,
                reasons: st.unresolved,
            });
            continue;
        }
        for c in &st.columns {
            let feeds = c
                .direct
                .iter()
                .map(|s| (s, EdgeKind::Direct))
                .chain(st.indirect.iter().map(|s| (s, EdgeKind::Indirect)));
            for ((src_table, src_col), kind) in feeds {
                edges.insert(Edge {
                    table: table.clone(),
                    column: c.name.clone(),
                    source_table: key(src_table),
                    source_column: src_col.clone(),
                    kind,
                    file: file.clone(),
                    line: st.line,
                    statement_line: st.statement_line,
                });
            }
        }
    }
    Ok(ColumnLineage {
        columns: infos,
        edges: edges.into_iter().collect(),
        unresolved,
    })
}

/// Every writing statement of a loaded project (each DML file, and the DDL of a CTAS, materialized
/// table or view without DML) read with the project's DDLs as schemas (`schema_overrides` replacing
/// tables' columns, in order), in file order; and the columns with their types. A statement whose sink
/// cannot be read (a statement the parser rejects, with no sink the token-level reading finds) is
/// given the table of its file.
///
/// Errors: unreadable SQL files.
pub fn project_statements(
    project: &crate::project::Project,
    cfg: &crate::config::Config,
    schema_overrides: &BTreeMap<String, Vec<String>>,
) -> Result<(Vec<ProjectStatement>, Vec<ColumnInfo>), OpsError> {
    let inv = &project.inventory;
    let read = |rel: &str| read_sql(project, rel);
    // Schemas and column types from the DDLs.
    let (mut schemas, infos) = schemas_of(project)?;
    for (table, cols) in schema_overrides {
        let head = schemas.remove(table).unwrap_or_default();
        let computed = |c: &String| head.iter().any(|(k, comp)| k == c && *comp);
        schemas.insert(
            table.clone(),
            cols.iter().map(|c| (c.clone(), computed(c))).collect(),
        );
    }
    let schemas = ProjectSchemas {
        tables: schemas,
        cfg,
    };
    let key = |written: &str| -> String { resolve_name(&TableName::new(written.split('.')), cfg) };
    // File → the table it belongs to.
    let mut files: BTreeMap<&String, &String> = BTreeMap::new();
    for t in inv
        .tables
        .values()
        .filter(|t| !t.external && t.written_by.is_none())
    {
        if let Some(dml) = &t.dml_ref {
            files.insert(dml, &t.name);
        }
        // A CTAS, a materialized table or a view: its DDL holds its query.
        if let (
            Some(
                StatementKind::Ctas
                | StatementKind::CreateMaterializedTable
                | StatementKind::CreateView,
            ),
            Some(ddl),
        ) = (t.ddl_kind, &t.ddl_ref)
            && t.dml_ref.is_none()
        {
            files.insert(ddl, &t.name);
        }
    }
    let mut out = Vec::new();
    for (file, owner) in files {
        for st in columns::lineage(&read(file)?, &schemas) {
            let table = if st.sink.is_empty() {
                owner.clone()
            } else {
                key(&st.sink)
            };
            out.push(ProjectStatement {
                file: file.clone(),
                table,
                columns: st,
            });
        }
    }
    Ok((out, infos))
}

/// The edges reached from `table` (`column`) upstream and/or downstream, transitively, with the
/// columns they touch and the unresolved statements of the tables reached.
fn restrict(
    all: ColumnLineage,
    table: &str,
    column: Option<&str>,
    upstream: bool,
    downstream: bool,
) -> ColumnLineage {
    let start: Vec<(String, String)> = match column {
        Some(c) => vec![(table.to_string(), c.to_string())],
        None => {
            let mut v: BTreeSet<(String, String)> = all
                .columns
                .iter()
                .filter(|c| c.table == table)
                .map(|c| (c.table.clone(), c.column.clone()))
                .collect();
            v.extend(
                all.edges
                    .iter()
                    .filter(|e| e.table == table)
                    .map(|e| (e.table.clone(), e.column.clone())),
            );
            v.into_iter().collect()
        }
    };
    let mut kept: BTreeSet<usize> = BTreeSet::new();
    for (dir_up, on) in [(true, upstream), (false, downstream)] {
        if !on {
            continue;
        }
        let mut seen: BTreeSet<(String, String)> = start.iter().cloned().collect();
        let mut queue: VecDeque<(String, String)> = start.iter().cloned().collect();
        while let Some((t, c)) = queue.pop_front() {
            for (i, e) in all.edges.iter().enumerate() {
                let (here, next) = if dir_up {
                    ((&e.table, &e.column), (&e.source_table, &e.source_column))
                } else {
                    ((&e.source_table, &e.source_column), (&e.table, &e.column))
                };
                if *here.0 == t && *here.1 == c {
                    kept.insert(i);
                    let n = (next.0.clone(), next.1.clone());
                    if seen.insert(n.clone()) {
                        queue.push_back(n);
                    }
                }
            }
        }
    }
    let edges: Vec<Edge> = kept.into_iter().map(|i| all.edges[i].clone()).collect();
    let touched: BTreeSet<(&str, &str)> = edges
        .iter()
        .flat_map(|e| {
            [
                (e.table.as_str(), e.column.as_str()),
                (e.source_table.as_str(), e.source_column.as_str()),
            ]
        })
        .chain(start.iter().map(|(t, c)| (t.as_str(), c.as_str())))
        .collect();
    let tables: BTreeSet<&str> = touched.iter().map(|(t, _)| *t).collect();
    ColumnLineage {
        columns: all
            .columns
            .iter()
            .filter(|c| touched.contains(&(c.table.as_str(), c.column.as_str())))
            .cloned()
            .collect(),
        unresolved: all
            .unresolved
            .iter()
            .filter(|u| tables.contains(u.table.as_str()))
            .cloned()
            .collect(),
        edges,
    }
}

/// DOT: one node per `table.column`, direct edges solid, indirect dashed.
pub fn to_dot(l: &ColumnLineage) -> String {
    let mut out = String::from(
        "digraph column_lineage {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n",
    );
    for e in &l.edges {
        let style = match e.kind {
            EdgeKind::Direct => "",
            EdgeKind::Indirect => " [style=dashed]",
        };
        out.push_str(&format!(
            "  \"{}.{}\" -> \"{}.{}\"{style};\n",
            esc(&e.source_table),
            esc(&e.source_column),
            esc(&e.table),
            esc(&e.column)
        ));
    }
    out.push_str("}\n");
    out
}

/// Mermaid `flowchart LR`: columns get ids `c0, c1, …`; indirect edges dotted.
pub fn to_mermaid(l: &ColumnLineage) -> String {
    let mut ids: BTreeMap<(String, String), usize> = BTreeMap::new();
    for e in &l.edges {
        for k in [
            (e.source_table.clone(), e.source_column.clone()),
            (e.table.clone(), e.column.clone()),
        ] {
            let n = ids.len();
            ids.entry(k).or_insert(n);
        }
    }
    let mut out = String::from("flowchart LR\n");
    let mut by_id: Vec<(&(String, String), &usize)> = ids.iter().collect();
    by_id.sort_by_key(|(_, i)| **i);
    for ((t, c), i) in by_id {
        out.push_str(&format!(
            "  c{i}[\"{}.{}\"]\n",
            t.replace('"', "#quot;"),
            c.replace('"', "#quot;")
        ));
    }
    for e in &l.edges {
        let a = ids[&(e.source_table.clone(), e.source_column.clone())];
        let b = ids[&(e.table.clone(), e.column.clone())];
        let arrow = match e.kind {
            EdgeKind::Direct => "-->",
            EdgeKind::Indirect => "-.->",
        };
        out.push_str(&format!("  c{a} {arrow} c{b}\n"));
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The namespace of flinkpipe's OpenLineage datasets and jobs.
const OPENLINEAGE_NAMESPACE: &str = "flinkpipe";
const OPENLINEAGE_PRODUCER: &str = "https://github.com/flinkpipe/flinkpipe";

/// OpenLineage (spec 2-0-2): one `COMPLETE` run event per statement — a Flink job: a statement set
/// is one event, with one output per table its INSERTs write — named by its file and line, JSON Lines,
/// with the `columnLineage` dataset facet (1-2-0) on each output: each column's input fields with
/// their transformation type, `DIRECT` or `INDIRECT` (no subtype: flinkpipe does not tell an identity
/// from a transformation). `event_time` is RFC 3339; run ids are derived from the statement, so that
/// the same lineage gives the same events.
pub fn to_openlineage(l: &ColumnLineage, event_time: &str) -> String {
    use serde_json::{Map, Value, json};
    // (file, statement line) → table → column → inputs
    type Fields = BTreeMap<String, BTreeSet<(String, String, EdgeKind)>>;
    let mut statements: BTreeMap<(String, usize), BTreeMap<String, Fields>> = BTreeMap::new();
    for e in &l.edges {
        statements
            .entry((e.file.clone(), e.statement_line))
            .or_default()
            .entry(e.table.clone())
            .or_default()
            .entry(e.column.clone())
            .or_default()
            .insert((e.source_table.clone(), e.source_column.clone(), e.kind));
    }
    fn facet_fields(fields: &Fields) -> Value {
        let mut facet_fields = Map::new();
        for (col, srcs) in fields {
            let input_fields: Vec<Value> = srcs
                .iter()
                .map(|(t, c, k)| {
                    json!({
                        "namespace": OPENLINEAGE_NAMESPACE,
                        "name": t,
                        "field": c,
                        "transformations": [{"type": match k {
                            EdgeKind::Direct => "DIRECT",
                            EdgeKind::Indirect => "INDIRECT",
                        }}],
                    })
                })
                .collect();
            facet_fields.insert(col.clone(), json!({ "inputFields": input_fields }));
        }
        Value::Object(facet_fields)
    }
    let mut out = String::new();
    for ((file, line), tables) in statements {
        let inputs: BTreeSet<&String> = tables
            .values()
            .flat_map(|f| f.values())
            .flat_map(|s| s.iter().map(|(t, _, _)| t))
            .collect();
        let outputs: Vec<Value> = tables
            .iter()
            .map(|(table, fields)| {
                json!({
                    "namespace": OPENLINEAGE_NAMESPACE,
                    "name": table,
                    "facets": {"columnLineage": {
                        "_producer": OPENLINEAGE_PRODUCER,
                        "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
                        "fields": facet_fields(fields),
                    }},
                })
            })
            .collect();
        let h = xxhash_rust::xxh3::xxh3_128(format!("{file}:{line}").as_bytes());
        let run_id = format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (h >> 96) as u32,
            (h >> 80) as u16,
            (h >> 68) as u16 & 0xfff,
            (h >> 52) as u16 & 0xfff,
            h as u64 & 0xffff_ffff_ffff
        );
        let event = json!({
            "eventType": "COMPLETE",
            "eventTime": event_time,
            "producer": OPENLINEAGE_PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id},
            "job": {"namespace": OPENLINEAGE_NAMESPACE, "name": format!("{file}:{line}")},
            "inputs": inputs.iter().map(|t| json!({"namespace": OPENLINEAGE_NAMESPACE, "name": t})).collect::<Vec<_>>(),
            "outputs": outputs,
        });
        out.push_str(&event.to_string());
        out.push('\n');
    }
    out
}

/// A self-contained HTML page of the column lineage: one card per table with its columns; clicking a
/// column highlights its upstream (blue) and downstream (orange) columns, indirect edges dashed in the
/// list of edges below. Works offline; `page.html#table.column` starts with that column selected.
pub fn to_html(l: &ColumnLineage) -> String {
    let mut tables: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for c in &l.columns {
        tables.entry(&c.table).or_default().insert(&c.column);
    }
    for e in &l.edges {
        tables.entry(&e.table).or_default().insert(&e.column);
        tables
            .entry(&e.source_table)
            .or_default()
            .insert(&e.source_column);
    }
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let mut cards = String::new();
    for (t, cols) in &tables {
        cards.push_str(&format!("<section class=\"t\"><h2>{}</h2><ul>", esc(t)));
        for c in cols {
            cards.push_str(&format!(
                "<li data-c=\"{}\">{}</li>",
                esc(&format!("{t}.{c}")),
                esc(c)
            ));
        }
        cards.push_str("</ul></section>");
    }
    let data = serde_json::to_string(&l.edges)
        .expect("plain data")
        .replace('<', "\\u003c");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>flinkpipe column lineage</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n<header><h1>flinkpipe column lineage</h1><span id=\"info\">click a column</span><span class=\"key\"><b class=\"sel\">selected</b><b class=\"up\">upstream</b><b class=\"down\">downstream</b></span></header>\n<main>{cards}</main>\n<pre id=\"edges\"></pre>\n<script id=\"edge-data\" type=\"application/json\">{data}</script>\n<script>{HTML_SCRIPT}</script>\n</body>\n</html>\n"
    )
}

const HTML_STYLE: &str = "body{font-family:Menlo,Consolas,monospace;font-size:13px;margin:0}header{padding:8px 12px;border-bottom:1px solid #ccc;display:flex;gap:16px;align-items:center}h1{font-size:15px;margin:0}main{display:flex;flex-wrap:wrap;gap:10px;padding:12px}.t{border:1px solid #bbb;border-radius:6px;padding:4px 8px;min-width:180px}.t h2{font-size:13px;margin:2px 0 4px}ul{list-style:none;margin:0;padding:0}li{cursor:pointer;padding:1px 4px;border-radius:3px}li.sel,b.sel{background:#222;color:#fff}li.up,b.up{background:#cfe2ff}li.down,b.down{background:#ffd8a8}b{font-weight:normal;padding:1px 6px;margin-left:6px;border-radius:3px}#edges{padding:0 12px 12px;white-space:pre-wrap}";

const HTML_SCRIPT: &str = r#"(() => {
  const edges = JSON.parse(document.getElementById('edge-data').textContent);
  const key = (t, c) => t + '.' + c;
  const walk = (start, up) => {
    const seen = new Set([start]); const queue = [start]; const used = [];
    while (queue.length) {
      const at = queue.shift();
      for (const e of edges) {
        const [here, next] = up ? [key(e.table, e.column), key(e.source_table, e.source_column)]
                                : [key(e.source_table, e.source_column), key(e.table, e.column)];
        if (here === at) { used.push(e); if (!seen.has(next)) { seen.add(next); queue.push(next); } }
      }
    }
    seen.delete(start); return [seen, used];
  };
  const items = Array.from(document.querySelectorAll('li[data-c]'));
  const select = (c) => {
    const [up, usedUp] = walk(c, true); const [down, usedDown] = walk(c, false);
    for (const li of items) {
      const k = li.dataset.c;
      li.className = k === c ? 'sel' : up.has(k) ? 'up' : down.has(k) ? 'down' : '';
    }
    document.getElementById('info').textContent = c + ': ' + up.size + ' upstream, ' + down.size + ' downstream';
    document.getElementById('edges').textContent = usedUp.concat(usedDown).map(e =>
      key(e.source_table, e.source_column) + (e.kind === 'direct' ? ' --> ' : ' -.-> ') + key(e.table, e.column) + '   ' + e.file + ':' + e.line).join('\n');
    history.replaceState(null, '', '#' + encodeURIComponent(c));
  };
  for (const li of items) li.addEventListener('click', () => select(li.dataset.c));
  const start = decodeURIComponent((location.hash || '').slice(1));
  if (start) select(start);
})();
"#;
