//! Rendering shared by the commands: aligned text tables, diagnostics with their source line, JSON,
//! execution plans and one-statement results.

use crate::diagnostics::Diagnostic;
use crate::ops::plan::{Action, ExecutionPlan};
use crate::plan::status::phase_or_absent;
use std::path::Path;

/// Renders rows as an aligned text table with a header line and a rule under it. The last column is
/// not padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cols {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(width[i] - c.chars().count() + 2));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    out.push_str(&line(
        width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    ));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

/// Prints diagnostics on stderr, one per line with a closing count, each followed by a snippet of its
/// source line (file paths are relative to `base`, the pipelines folder's parent; files that cannot be
/// read get none).
pub fn print_diagnostics_in(diags: &[Diagnostic], base: Option<&Path>) {
    let mut cache: std::collections::HashMap<&str, Option<String>> = Default::default();
    for d in diags {
        let source = match (&d.file, base, d.line) {
            (Some(f), Some(b), Some(_)) => cache
                .entry(f.as_str())
                .or_insert_with(|| {
                    // Bounded and regular files only: the file may be the FIFO or device refused.
                    crate::fsutil::read_user_text(&b.join(f), crate::fsutil::MAX_DATA_FILE_BYTES)
                        .ok()
                })
                .as_deref(),
            _ => None,
        };
        eprintln!("{}", d.render(source));
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        eprintln!("{errors} error(s), {} warning(s)", diags.len() - errors);
    }
}

/// Prints a value as pretty JSON on stdout.
/// A duration in seconds as people read it: one decimal and a unit (`2.000999927520752` →
/// `2.0 s`, `-0.5` → `-0.5 s`).
pub fn seconds(v: f64) -> String {
    format!("{v:.1} s")
}

pub fn print_json<T: serde::Serialize>(value: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("plain data serialises")
    );
}

/// The plan as an aligned text table followed by a one-line summary; a `pool` column when any table
/// has a compute pool.
pub fn plan(plan: &ExecutionPlan) -> String {
    let pools = plan.nodes.iter().any(|n| n.compute_pool_id.is_some());
    let rows: Vec<Vec<String>> = plan
        .nodes
        .iter()
        .map(|n| {
            let mut row = vec![
                n.wave.map(|w| w.to_string()).unwrap_or_else(|| "-".into()),
                n.shown_action().to_string(),
                n.table_name.clone(),
                n.product_name.clone(),
                n.table_type.clone(),
                crate::plan::mode_text(n.upgrade_mode, n.statefulness).to_string(),
                n.dml_statement_name
                    .clone()
                    .or(n.ddl_statement_name.clone())
                    .unwrap_or_else(|| "-".into()),
            ];
            if pools {
                row.push(n.compute_pool_id.clone().unwrap_or_else(|| "-".into()));
            }
            row.push(n.reason.clone());
            row
        })
        .collect();
    let mut header = vec![
        "wave",
        "action",
        "table",
        "product",
        "type",
        "mode",
        "statement",
    ];
    if pools {
        header.push("pool");
    }
    header.push("reason");
    let mut out = format!("Execution plan for {}\n\n", plan.scope);
    out.push_str(&table(&header, &rows));
    // Only what starts or restarts counts as create or restart; re-declarations are said apart.
    let count = |a: Action| {
        plan.nodes
            .iter()
            .filter(|n| n.action == a && !n.redeclares())
            .count()
    };
    let declared = plan.nodes.iter().filter(|n| n.redeclares()).count();
    out.push_str(&format!(
        "\n{} table{}: {} to create, {} to restart, {} to skip{}; {} wave(s)\n",
        plan.nodes.len(),
        if plan.nodes.len() == 1 { "" } else { "s" },
        count(Action::Create),
        count(Action::Restart),
        count(Action::Skip),
        if declared > 0 {
            format!(", {declared} to declare again (DDL only: nothing starts)")
        } else {
            String::new()
        },
        plan.wave_count()
    ));
    out
}

/// Prints the result of `statement stop|resume|delete`.
pub fn statement_outcome(json: bool, o: &crate::ops::statement::StatementOutcome) {
    if json {
        print_json(o);
        return;
    }
    statement_outcome_line(o);
    print!("{}", server_notes([(o.statement.as_str(), &o.server)]));
}

fn statement_outcome_line(o: &crate::ops::statement::StatementOutcome) {
    if o.detail.is_empty() {
        println!(
            "{}: {} done (phase {})",
            o.statement,
            o.action,
            phase_or_absent(o.phase.as_ref())
        );
    } else {
        // e.g. the savepoint a gateway job was stopped with: resume starts from it.
        println!(
            "{}: {} done (phase {}: {})",
            o.statement,
            o.action,
            phase_or_absent(o.phase.as_ref()),
            o.detail
        );
    }
}

/// Prints what `project init` / `table init` created.
pub fn created(json: bool, table: Option<&str>, c: &crate::ops::scaffold::Created) {
    if json {
        /// `--output json` of `project init` and `table init`.
        #[derive(serde::Serialize)]
        struct CreatedView<'a> {
            table_name: Option<&'a str>,
            root: &'a Path,
            files: &'a [String],
        }
        print_json(&CreatedView {
            table_name: table,
            root: &c.root,
            files: &c.files,
        });
        return;
    }
    match table {
        Some(t) => println!("created table {t} in {}", c.root.display()),
        None => println!("created project {}", c.root.display()),
    }
    for f in &c.files {
        println!("  {f}");
    }
}

/// Prints what `pipeline blue-green` / `project update-tables-version` versioned (or would).
pub fn versioned(json: bool, v: &crate::ops::versioning::Versioned) {
    let plan = &v.plan;
    if json {
        print_json(&VersionedView {
            baseline_ref: &v.baseline_ref,
            applied: v.applied,
            renames: &plan.renames,
            unchanged: plan
                .unchanged
                .iter()
                .map(|(table_name, reason)| UnchangedView { table_name, reason })
                .collect(),
            files: &plan.edits,
            green: &plan.green,
            recorded: &v.recorded,
            in_place: &v.in_place,
        });
        return;
    }
    for t in &v.in_place {
        println!(
            "{}: {} ({})",
            t.table_name,
            if t.in_place {
                "upgraded in place"
            } else {
                "versioned"
            },
            t.reason
        );
    }
    print!(
        "{}",
        versioned_text(plan, v.apply, v.baseline_ref.as_deref())
    );
    if let Some(r) = &v.recorded {
        println!(
            "Recorded in pipelines/blue_green.json ({} table(s), release {}). Next: commit, then `flinkpipe pipeline deploy --blue-green`; validate the green tables; then `flinkpipe pipeline decommission --delete`.",
            r.tables.len(),
            r.created_at
        );
    }
}

fn versioned_text(
    plan: &crate::ops::versioning::VersionPlan,
    apply: bool,
    baseline: Option<&str>,
) -> String {
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
        out.push_str(&crate::versioning::unified_diff(plan));
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
    out.push_str(&table(
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

/// A parent or child tree as indented text.
pub fn tree_text(root: &crate::graph::TreeNode) -> String {
    crate::graph::render_tree_text(root)
}

/// Asks a yes/no question on the terminal; `y`/`yes` is yes, anything else no.
pub fn confirm(question: &str) -> Result<bool, crate::cli::Failure> {
    use std::io::{BufRead, Write};
    print!("{question} [y/N] ");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| crate::cli::Failure::new(format!("cannot read the answer: {e}")))?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// Rows printed as text cut values longer than this (characters), with `…`.
const MAX_CELL: usize = 40;

/// A value of a column of type `type_name` as text: strings as they are (a DECIMAL is its exact
/// text), `NULL`, numbers and booleans, nested values as compact JSON written by their types (a
/// DECIMAL inside is a number with its digits).
fn cell(v: &serde_json::Value, type_name: &str) -> String {
    match v {
        serde_json::Value::Null => "NULL".into(),
        serde_json::Value::String(s) => s.clone(),
        other => serde_json::to_string(&crate::results::value::JsonCell {
            value: other,
            type_name,
        })
        .unwrap_or_else(|_| other.to_string()),
    }
}

fn cut(s: String) -> String {
    if s.chars().count() <= MAX_CELL {
        return s.replace(['\n', '\r', '\t'], " ");
    }
    let head: String = s.chars().take(MAX_CELL - 1).collect();
    format!("{}…", head.replace(['\n', '\r', '\t'], " "))
}

/// Column names made unique (`x`, `x_2`): JSON objects cannot hold a name twice.
fn unique_names(columns: &[crate::ops::query::Column]) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    columns
        .iter()
        .map(|c| {
            let n = seen.entry(c.name.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                c.name.clone()
            } else {
                format!("{}_{}", c.name, n)
            }
        })
        .collect()
}

/// A row as a JSON object in column order, each value written by its column's type
/// ([`crate::results::value::JsonCell`]: a DECIMAL as a number with its exact digits).
struct NamedRow<'a> {
    names: &'a [String],
    columns: &'a [crate::ops::query::Column],
    values: &'a [serde_json::Value],
}

impl serde::Serialize for NamedRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.names.len()))?;
        for (i, n) in self.names.iter().enumerate() {
            m.serialize_entry(
                n,
                &crate::results::value::JsonCell {
                    value: self.values.get(i).unwrap_or(&serde_json::Value::Null),
                    type_name: self.columns.get(i).map_or("", |c| c.type_name.as_str()),
                },
            )?;
        }
        m.end()
    }
}

/// A change as `{"kind": "+U", "row": {…}}`, the row's columns in order.
#[derive(serde::Serialize)]
struct NamedChange<'a> {
    kind: crate::ops::query::RowKind,
    row: NamedRow<'a>,
}

/// `--output json` of a query: `{"columns", "rows", "complete"}` first, as scripts read them.
#[derive(serde::Serialize)]
struct QueryJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    table_name: Option<&'a str>,
    columns: &'a [crate::ops::query::Column],
    rows: Vec<NamedRow<'a>>,
    complete: bool,
    /// The snapshot is what the result held when the read stopped early.
    partial: bool,
    /// Rows in the snapshot (more than `rows` when `--max-rows`/`--limit` cut them).
    total_rows: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<Vec<NamedChange<'a>>>,
    statement: &'a str,
    sql: &'a str,
    stopped_by: crate::ops::query::StopReason,
    key: Option<&'a [String]>,
    change_count: usize,
    first_row_seconds: Option<f64>,
    seconds: f64,
    inconsistencies: Vec<TypedInconsistency<'a>>,
}

/// An inconsistency as `{"position", "kind", "row": [values]}`, the values written by their
/// columns' types (a DECIMAL as a number with its digits).
#[derive(serde::Serialize)]
struct TypedInconsistency<'a> {
    position: usize,
    kind: crate::ops::query::RowKind,
    row: PositionalRow<'a>,
}

/// A row as a JSON array, each value written by its column's type.
struct PositionalRow<'a> {
    columns: &'a [crate::ops::query::Column],
    values: &'a [serde_json::Value],
}

impl serde::Serialize for PositionalRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.values.len()))?;
        for (i, v) in self.values.iter().enumerate() {
            seq.serialize_element(&crate::results::value::JsonCell {
                value: v,
                type_name: self.columns.get(i).map_or("", |c| c.type_name.as_str()),
            })?;
        }
        seq.end()
    }
}

/// Progress of a query on a terminal (a spinner with rows read and elapsed time) and, with
/// `--follow`, each new snapshot as it comes.
pub struct QueryDisplay {
    json: bool,
    args: crate::cli::args::ReadArgs,
    spinner: Option<indicatif::ProgressBar>,
}

impl QueryDisplay {
    pub fn new(json: bool, args: &crate::cli::args::ReadArgs) -> QueryDisplay {
        let spinner =
            (std::io::IsTerminal::is_terminal(&std::io::stderr()) && !args.follow).then(|| {
                let pb = indicatif::ProgressBar::new_spinner();
                pb.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} {msg}")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
                pb.enable_steady_tick(std::time::Duration::from_millis(120));
                pb.set_message("starting the query…");
                pb
            });
        QueryDisplay {
            json,
            args: args.clone(),
            spinner,
        }
    }

    /// Clears the spinner.
    pub fn finish(&self) {
        if let Some(s) = &self.spinner {
            s.finish_and_clear();
        }
    }
}

impl crate::ops::query::ReadObserver for QueryDisplay {
    fn progress(&self, changes: usize, rows: usize, elapsed: std::time::Duration) {
        if let Some(s) = &self.spinner {
            s.set_message(if changes == 0 {
                format!("waiting for the first rows… {:.0}s", elapsed.as_secs_f64())
            } else {
                format!(
                    "{rows} row(s) from {changes} change(s), {:.0}s",
                    elapsed.as_secs_f64()
                )
            });
        }
    }

    fn snapshot(&self, columns: &[crate::ops::query::Column], rows: &[&crate::ops::query::Row]) {
        let rows: Vec<crate::ops::query::Row> = rows.iter().map(|r| (*r).clone()).collect();
        if self.json {
            let names = unique_names(columns);
            let named: Vec<NamedRow> = rows
                .iter()
                .map(|r| NamedRow {
                    names: &names,
                    columns,
                    values: r,
                })
                .collect();
            #[derive(serde::Serialize)]
            struct Snap<'a> {
                columns: &'a [crate::ops::query::Column],
                rows: Vec<NamedRow<'a>>,
                complete: bool,
            }
            println!(
                "{}",
                serde_json::to_string(&Snap {
                    columns,
                    rows: named,
                    complete: false
                })
                .unwrap_or_default()
            );
        } else {
            print!("{}", rows_text(self.args.format, columns, &rows, None));
            println!("-- {} row(s) at {}", rows.len(), crate::ops::now_utc());
        }
    }
}

/// Rows as text in the chosen layout; `kinds` adds a first `op` column (`+I`, `-U`, …).
fn rows_text(
    format: crate::cli::args::RowFormat,
    columns: &[crate::ops::query::Column],
    rows: &[crate::ops::query::Row],
    kinds: Option<&[crate::ops::query::RowKind]>,
) -> String {
    use crate::cli::args::RowFormat;
    let names = unique_names(columns);
    let type_of = |i: usize| columns.get(i).map_or("", |c| c.type_name.as_str());
    match format {
        RowFormat::Table => {
            let mut header: Vec<String> = Vec::new();
            let mut types: Vec<String> = Vec::new();
            if kinds.is_some() {
                header.push("op".into());
                types.push(String::new());
            }
            header.extend(names.iter().cloned());
            types.extend(columns.iter().map(|c| c.type_name.clone()));
            let mut body: Vec<Vec<String>> = vec![types];
            for (i, r) in rows.iter().enumerate() {
                let mut line = Vec::new();
                if let Some(k) = kinds {
                    line.push(k[i].short().to_string());
                }
                line.extend(r.iter().enumerate().map(|(i, v)| cut(cell(v, type_of(i)))));
                body.push(line);
            }
            let h: Vec<&str> = header.iter().map(String::as_str).collect();
            // The types line sits under the names, above the rule.
            let t = table(&h, &body);
            let mut lines: Vec<&str> = t.lines().collect();
            if lines.len() >= 3 {
                lines.swap(1, 2);
            }
            let mut out = lines.join("\n");
            out.push('\n');
            out
        }
        RowFormat::Csv => {
            // NULL is an empty field, the empty string an empty quoted field `""` (RFC 4180
            // quoting; most CSV readers read the two apart so).
            let field = |t: &str| -> String {
                if t.is_empty() || t.contains([',', '"', '\n', '\r']) {
                    format!("\"{}\"", t.replace('"', "\"\""))
                } else {
                    t.to_string()
                }
            };
            let mut out = String::new();
            let mut header: Vec<String> = Vec::new();
            if kinds.is_some() {
                header.push("op".into());
            }
            header.extend(names.iter().map(|n| field(n)));
            out.push_str(&header.join(","));
            out.push('\n');
            for (i, r) in rows.iter().enumerate() {
                let mut rec: Vec<String> = Vec::new();
                if let Some(k) = kinds {
                    rec.push(k[i].short().to_string());
                }
                rec.extend(r.iter().enumerate().map(|(i, v)| match v {
                    serde_json::Value::Null => String::new(),
                    other => field(&cell(other, type_of(i))),
                }));
                out.push_str(&rec.join(","));
                out.push('\n');
            }
            out
        }
        RowFormat::Jsonl => {
            let mut out = String::new();
            for (i, r) in rows.iter().enumerate() {
                let row = NamedRow {
                    names: &names,
                    columns,
                    values: r,
                };
                let line = match kinds {
                    Some(k) => serde_json::to_string(&NamedChange { kind: k[i], row }),
                    None => serde_json::to_string(&row),
                };
                out.push_str(&line.unwrap_or_default());
                out.push('\n');
            }
            out
        }
    }
}

/// Prints the result of `sql query` / `table preview`.
pub fn query_outcome(
    json: bool,
    args: &crate::cli::args::ReadArgs,
    o: &crate::ops::query::QueryOutcome,
) {
    use crate::ops::query::StopReason;
    let r = &o.result;
    for i in &r.inconsistencies {
        let row = PositionalRow {
            columns: &r.columns,
            values: &i.row,
        };
        eprintln!(
            "warning[changelog]: change #{} {} retracts a row that is not in the result: {}",
            i.position + 1,
            i.kind,
            serde_json::to_string(&row).unwrap_or_default()
        );
    }
    let names = unique_names(&r.columns);
    if json && args.follow {
        // One JSON line per snapshot was printed as they came; the last one is the result.
        return;
    }
    if json {
        let rows: Vec<NamedRow> = r
            .rows
            .iter()
            .map(|v| NamedRow {
                names: &names,
                columns: &r.columns,
                values: v,
            })
            .collect();
        let changes: Option<Vec<NamedChange>> = r.changes.as_ref().map(|c| {
            c.iter()
                .map(|c| NamedChange {
                    kind: c.kind,
                    row: NamedRow {
                        names: &names,
                        columns: &r.columns,
                        values: &c.row,
                    },
                })
                .collect()
        });
        print_json(&QueryJson {
            table_name: o.table.as_deref(),
            columns: &r.columns,
            rows,
            complete: r.complete,
            partial: r.partial,
            total_rows: r.total_rows,
            changes,
            statement: &r.statement,
            sql: &o.sql,
            stopped_by: r.stopped_by,
            key: r.key.as_deref(),
            change_count: r.change_count,
            first_row_seconds: r.first_row_seconds,
            seconds: r.seconds,
            inconsistencies: r
                .inconsistencies
                .iter()
                .map(|i| TypedInconsistency {
                    position: i.position,
                    kind: i.kind,
                    row: PositionalRow {
                        columns: &r.columns,
                        values: &i.row,
                    },
                })
                .collect(),
        });
        return;
    }
    if args.follow {
        // The snapshots were printed as they came.
    } else if let Some(changes) = &r.changes {
        let rows: Vec<crate::ops::query::Row> = changes.iter().map(|c| c.row.clone()).collect();
        let kinds: Vec<crate::ops::query::RowKind> = changes.iter().map(|c| c.kind).collect();
        print!(
            "{}",
            rows_text(args.format, &r.columns, &rows, Some(&kinds))
        );
    } else {
        print!("{}", rows_text(args.format, &r.columns, &r.rows, None));
    }
    let why = match r.stopped_by {
        StopReason::End => "complete".to_string(),
        StopReason::MaxRows if r.changes.is_some() => {
            "stopped at the change limit (--max-rows / --limit)".to_string()
        }
        StopReason::MaxRows => {
            "stopped at the row limit (--max-rows / --limit; the result is append-only, its rows final)"
                .to_string()
        }
        StopReason::Idle => format!(
            "stopped after {}s without new rows (the stream may go on)",
            args.idle
        ),
        StopReason::Timeout => match &o.unbounded {
            Some(h) => format!("stopped at the timeout: {h}"),
            None => "stopped at the timeout (the stream may go on)".to_string(),
        },
        StopReason::Interrupted => "interrupted".to_string(),
    };
    let first = r
        .first_row_seconds
        .map(|s| format!(", first row after {s:.1}s"))
        .unwrap_or_default();
    let partial = if r.partial { "partial snapshot, " } else { "" };
    let shown = if r.total_rows > r.rows.len() {
        format!("first {} of {}", r.rows.len(), r.total_rows)
    } else {
        r.rows.len().to_string()
    };
    eprintln!(
        "{shown} row(s) from {} change(s); {partial}{why}; {} in {:.1}s{first}",
        r.change_count, r.statement, r.seconds
    );
}

/// Prints the results of `table run-unit-tests` / `project run-unit-tests`: per suite a table (test
/// case, output, result, rows expected/actual, first difference, time), the differences, then one
/// summary line (`N passed, N failed`).
/// What a `--dry-run` of unit or integration tests found: the cases and test tables, and the checks
/// a real run would fail (an expected CSV not filled in yet).
pub fn dry_run_report(json: bool, d: &crate::ops::unit_tests::DryRun) {
    if json {
        println!("{}", serde_json::to_string_pretty(&d).expect("plain data"));
    } else if d.ready() {
        println!(
            "{}: {} test case(s) ready ({}); test tables: {}; nothing was run (--dry-run)",
            d.table_name,
            d.cases.len(),
            d.cases.join(", "),
            d.test_tables.join(", ")
        );
    } else {
        println!(
            "{}: {} test case(s) checked ({}), {} check(s) not ready: a run would fail them; test tables: {}; nothing was run (--dry-run)",
            d.table_name,
            d.cases.len(),
            d.cases.join(", "),
            d.not_ready.len(),
            d.test_tables.join(", ")
        );
        for n in &d.not_ready {
            match n.reason {
                crate::ops::unit_tests::NotReadyReason::NotFilledIn => println!(
                    "  {} / {} ({}): not filled in yet: write the expected rows (a run lists what the output holds, as CSV lines) and delete its `# flinkpipe: not filled in yet` line",
                    n.case, n.output, n.file
                ),
            }
        }
    }
}

pub fn unit_test_report(json: bool, r: &crate::ops::unit_tests::RunReport) {
    if json {
        /// `--output json` of a unit- or integration-test run.
        #[derive(serde::Serialize)]
        struct RunView<'a> {
            passed: bool,
            seconds: f64,
            suites: &'a [crate::unittest::run::SuiteResult],
            without_tests: &'a [String],
            junit: Option<&'a Path>,
        }
        print_json(&RunView {
            passed: r.passed(),
            seconds: r.seconds,
            suites: &r.suites,
            without_tests: &r.without_tests,
            junit: r.junit.as_deref(),
        });
        return;
    }
    let mut counts = Counts::default();
    for s in &r.suites {
        print_suite(r.kind, s, &mut counts);
    }
    if !r.without_tests.is_empty() {
        println!(
            "no unit tests (no tests/test_definitions.yaml): {}",
            r.without_tests.join(", ")
        );
    }
    if let Some(j) = &r.junit {
        println!("JUnit XML: {}", j.display());
    }
    println!(
        "{} passed, {} failed, {} error(s) in {:.1}s",
        counts.pass, counts.fail, counts.error, r.seconds
    );
}

/// The report's lines by verdict ([`crate::unittest::run::ReportLine`]: the rows of the tables
/// printed).
#[derive(Default)]
struct Counts {
    pass: usize,
    fail: usize,
    error: usize,
}

/// One suite: a row per test case output (or per case without outputs), the full differences of
/// those cut short in the table, cleanup errors, whether its tables were kept.
fn print_suite(
    kind: crate::ops::unit_tests::TestKind,
    s: &crate::unittest::run::SuiteResult,
    counts: &mut Counts,
) {
    use crate::ops::unit_tests::TestKind;
    use crate::unittest::run::{ReportLine, Verdict};
    let (what, delete) = match kind {
        TestKind::Unit => ("Unit tests", "table delete-unit-tests"),
        TestKind::Integration => ("Integration tests", "project delete-integration-tests"),
    };
    println!("{what} of {} on {}\n", s.table, s.target);
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for line in s.lines() {
        match line.verdict() {
            Verdict::Pass => counts.pass += 1,
            Verdict::Fail => counts.fail += 1,
            Verdict::Error => counts.error += 1,
        }
        match line {
            ReportLine::Setup(e) => rows.push(vec![
                "(setup)".into(),
                "-".into(),
                "ERROR".into(),
                "-".into(),
                e.to_string(),
                "-".into(),
            ]),
            ReportLine::Case(c) => rows.push(vec![
                c.name.clone(),
                "-".into(),
                c.result.as_str().into(),
                "-".into(),
                c.error.clone().unwrap_or_default(),
                format!("{:.1}s", c.seconds),
            ]),
            ReportLine::Output(c, o) => {
                rows.push(output_row(&c.name, o));
                notes.extend(output_note(&c.name, o));
            }
        }
    }
    print!(
        "{}",
        table(
            &[
                "test case",
                "output",
                "result",
                "rows exp/act",
                "first difference",
                "time"
            ],
            &rows
        )
    );
    for n in notes {
        println!("{n}");
    }
    for e in &s.cleanup_errors {
        println!("cleanup: {e} (run `flinkpipe {delete} {}`)", s.table);
    }
    if s.kept {
        println!(
            "kept: the test tables, topics and last statements are in place (`flinkpipe {delete} {}` removes them)",
            s.table
        );
    }
    println!();
}

/// The row of one output of test case `case`: its table and file, verdict, rows expected/actual,
/// the first difference (kept short: the note gives every one in full) and its time.
fn output_row(case: &str, o: &crate::unittest::run::OutputResult) -> Vec<String> {
    let rows_text = format!(
        "{}/{}",
        o.expected_rows.map_or("-".into(), |n| n.to_string()),
        o.actual_rows.map_or("-".into(), |n| n.to_string())
    );
    let first = truncate_chars(
        &o.differences
            .first()
            .cloned()
            .or_else(|| o.detail.clone())
            .unwrap_or_default(),
        80,
    );
    vec![
        case.to_string(),
        format!(
            "{} ({})",
            o.table,
            o.file.rsplit('/').next().unwrap_or(&o.file)
        ),
        o.result.as_str().into(),
        rows_text,
        first,
        format!("{:.1}s", o.seconds),
    ]
}

/// The full differences of a failed output, when the table's row could not show them all (more
/// than one, some not listed, a detail, or a first one cut); the rows it produced when its expected
/// file is not filled in yet.
fn output_note(case: &str, o: &crate::unittest::run::OutputResult) -> Option<String> {
    let cut = o.differences.len() > 1
        || o.difference_count > o.differences.len()
        || o.detail.is_some()
        || o.differences
            .first()
            .is_some_and(|d| d.chars().count() > 80);
    if o.result == crate::unittest::run::Verdict::Pass || !cut {
        return None;
    }
    let mut n = if o.actual_csv.is_empty() {
        format!("{case} / {}: {} difference(s)", o.file, o.difference_count)
    } else {
        format!("{case} / {}: not filled in yet", o.file)
    };
    if let Some(d) = &o.detail {
        n.push_str(&format!("\n    {d}"));
    }
    for d in &o.differences {
        n.push_str(&format!("\n    {d}"));
    }
    for line in &o.actual_csv {
        n.push_str(&format!("\n      {line}"));
    }
    Some(n)
}

/// `text` cut to `max` characters, with `…` when it was longer.
fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Width of the default text views that must fit a terminal (`pipeline status`).
pub const TEXT_WIDTH: usize = 120;

/// The statements table of `pipeline status` as text: one row per statement, except that the DDL
/// rows of session-scoped tables (SQL Gateway) are folded into their table's row — a table with a
/// job shows only its job, a table without one shows its DDL once as `session` (declared in each
/// deploy's session, never a statement of its own). The plan column says `declare` for a table the
/// plan only declares again. Unless `verbose`, the detail column is cut with `…` so that each line
/// fits [`TEXT_WIDTH`] columns; `--output json` and `-v` keep the full text. Returns the text and
/// the number of rows.
pub fn status_statements(r: &crate::ops::status::StatusReport, verbose: bool) -> (String, usize) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for s in &r.statements {
        let has_job = r
            .statements
            .iter()
            .any(|o| o.table_name == s.table_name && !o.session_scoped);
        if s.session_scoped && has_job {
            continue;
        }
        let (phase, detail) = if s.session_scoped && s.phase.is_none() {
            (
                "session".to_string(),
                "declared from its DDL in each deploy's session".to_string(),
            )
        } else {
            (
                phase_or_absent(s.phase.as_ref()).to_string(),
                s.detail.clone().unwrap_or_default(),
            )
        };
        rows.push(vec![
            s.table_name.clone(),
            s.statement.clone(),
            phase,
            match s.sql_drift {
                None => "-",
                Some(false) => "no",
                Some(true) => "yes",
            }
            .to_string(),
            if s.plan_redeclares {
                "declare".to_string()
            } else {
                s.plan_action.as_str().to_string()
            },
            detail,
        ]);
    }
    let header = ["table", "statement", "phase", "sql drift", "plan", "detail"];
    if !verbose {
        fit_last_column(&header, &mut rows, TEXT_WIDTH);
    }
    let n = rows.len();
    (table(&header, &rows), n)
}

/// What the server says beyond the phase, per statement that has something to say
/// ([`crate::target::ServerNotes::lines`]: the newest exception, a state limit other than OK, warnings,
/// the offsets of a stopped statement), as an indented block after a blank line; empty when no
/// statement has notes.
pub fn server_notes<'a>(
    notes: impl IntoIterator<Item = (&'a str, &'a crate::target::ServerNotes)>,
) -> String {
    let mut out = String::new();
    for (statement, n) in notes {
        for line in n.lines() {
            out.push_str(&format!("  {statement}: {line}\n"));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("\nWhat the server says:\n{out}")
    }
}

/// Cuts the last column of `rows` with `…` so that [`table`]'s lines fit `width` columns (at least 12
/// characters of it are kept).
fn fit_last_column(header: &[&str], rows: &mut [Vec<String>], width: usize) {
    let cols = header.len();
    let before: usize = (0..cols - 1)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
                + 2
        })
        .sum();
    let room = width.saturating_sub(before).max(12);
    for r in rows.iter_mut() {
        r[cols - 1] = truncate_chars(&r[cols - 1], room);
    }
}

/// The readers of the blue tables of the open releases (`status`, `release-check`, `decommission`):
/// per blue table its topic, the statements not the project's that read it, and the consumer groups
/// with committed offsets on its topic; empty when there is no open release.
pub fn blue_readers(r: &crate::ops::readers::ReadersReport) -> String {
    use crate::ops::readers::{FoundIn, GroupCheck};
    if r.tables.is_empty() {
        return String::new();
    }
    let source = match &r.consumer_groups {
        GroupCheck::Broker { bootstraps } => {
            format!("consumer groups from Kafka {}", bootstraps.join(", "))
        }
        GroupCheck::KafkaRest { url, cluster_id } => {
            format!("consumer groups from the Kafka REST API {url}, cluster {cluster_id}")
        }
        GroupCheck::Nothing => "no Kafka topic: no consumer groups".to_string(),
        GroupCheck::NotChecked { reason } => format!("consumer groups not checked: {reason}"),
        GroupCheck::Failed { error } => format!("consumer groups unreadable: {error}"),
    };
    let mut out = format!("\nReaders of the blue tables ({source}):\n");
    for t in &r.tables {
        let topic = t
            .topic
            .as_ref()
            .map(|x| format!(" (topic {x})"))
            .unwrap_or_default();
        if t.statements.is_empty() && t.consumer_groups.is_empty() {
            out.push_str(&format!("  {}{topic}: no reader\n", t.blue_table_name));
            continue;
        }
        out.push_str(&format!("  {}{topic}:\n", t.blue_table_name));
        for s in &t.statements {
            out.push_str(&format!(
                "    statement {} {} (read in its {}){}\n",
                s.statement,
                s.phase,
                match s.found_in {
                    FoundIn::SqlText => "SQL",
                    FoundIn::JobPlan => "job plan",
                    FoundIn::SourceTopics => "Kafka sources",
                },
                if s.running() {
                    ", blocks decommission"
                } else {
                    ""
                }
            ));
        }
        for g in &t.consumer_groups {
            out.push_str(&format!(
                "    consumer group {}: {}, {} member(s), lag {} over {} partition(s){}\n",
                g.group_id,
                g.state,
                g.members,
                g.lag.map_or("unknown".to_string(), |l| l.to_string()),
                g.partitions,
                if g.members > 0 {
                    ", blocks decommission"
                } else {
                    ""
                }
            ));
        }
    }
    for (name, e) in &r.unknown_statements {
        out.push_str(&format!("  what {name} reads is unknown: {e}\n"));
    }
    out
}

/// `table update-makefile` and `update-all-makefiles`: one line per Makefile with what was done.
pub fn makefiles(r: &crate::ops::makefiles::MakefilesReport) {
    use crate::ops::makefiles::MakefileChange;
    for m in &r.makefiles {
        let what = match m.change {
            MakefileChange::Created => "created".to_string(),
            MakefileChange::Updated => format!("updated, {} line(s) of yours kept", m.kept_lines),
            MakefileChange::Replaced => {
                "replaced (it had no marker line: nothing in it was kept)".into()
            }
            MakefileChange::Unchanged => "unchanged".into(),
            MakefileChange::Skipped => "skipped (its type is no layer of the template)".into(),
        };
        println!("{}: {} {what}", m.table_name, m.path.display());
    }
}

/// `--output json` of `pipeline blue-green` and `project update-tables-version`: the versioning
/// plan (renames, tables left as they are and why, file edits, the green set), whether it was
/// applied, the release recorded and the in-place upgrades.
#[derive(serde::Serialize)]
struct VersionedView<'a, R, F, G, Rec, I> {
    baseline_ref: &'a Option<String>,
    applied: bool,
    renames: &'a R,
    unchanged: Vec<UnchangedView<'a>>,
    files: &'a F,
    green: &'a G,
    recorded: &'a Rec,
    in_place: &'a I,
}

/// A table of [`VersionedView`] left unversioned, with the reason.
#[derive(serde::Serialize)]
struct UnchangedView<'a> {
    table_name: &'a str,
    reason: &'a str,
}
