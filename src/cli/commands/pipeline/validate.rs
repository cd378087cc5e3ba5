//! `flinkpipe pipeline validate [DIR] [--since REF [--fail-on breaking]]`: the project's errors and
//! warnings, each with file and line; with `--since`, the schema changes since REF and the downstream
//! statements that read what changed.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::schema_changes::{self, ColumnChange};
use crate::ops::validate;
use std::path::Path;

pub fn exec(
    inv: &Invocation,
    pipelines: &Path,
    allow_unknown: bool,
    since: Option<&str>,
    fail_on_breaking: bool,
) -> CmdResult {
    let v = validate::validate(&inv.ctx, pipelines, allow_unknown)?;
    let changes = match since {
        Some(r) if !v.has_errors() => Some(schema_changes::schema_changes(
            &inv.ctx,
            pipelines,
            &crate::ops::changes::ChangeRequest {
                since: Some(r.to_string()),
                ..Default::default()
            },
            allow_unknown,
        )?),
        _ => None,
    };
    let breaking = changes.iter().flatten().filter(|c| c.breaking).count();
    if inv.json() {
        match &changes {
            Some(c) => print_json(&serde_json::json!({
                "diagnostics": v.diagnostics,
                "schema_changes": c,
            })),
            None => print_json(&v.diagnostics),
        }
    } else {
        for c in changes.iter().flatten() {
            let what = match &c.change {
                ColumnChange::Removed => format!("column {}.{} removed", c.table, c.column),
                ColumnChange::Renamed { to } => {
                    format!("column {}.{} renamed to {to}", c.table, c.column)
                }
                ColumnChange::Nullable => {
                    format!("column {}.{} became nullable", c.table, c.column)
                }
                ColumnChange::Retyped { old_type, new_type } => {
                    format!(
                        "column {}.{} retyped {old_type} → {new_type}",
                        c.table, c.column
                    )
                }
                ColumnChange::PrimaryKey { old, new } => format!(
                    "primary key of {} changed ({}) → ({})",
                    c.table,
                    old.join(", "),
                    new.join(", ")
                ),
                ColumnChange::Added => format!("column {}.{} added", c.table, c.column),
                ColumnChange::Grain { old, new } => format!(
                    "grain of {} changed: grouped by ({}) → ({})",
                    c.table,
                    old.join(", "),
                    new.join(", ")
                ),
            };
            let level = if c.breaking {
                if fail_on_breaking { "error" } else { "warning" }
            } else {
                "note"
            };
            let class = if c.breaking {
                "breaking"
            } else if c.change == ColumnChange::Added {
                "additive"
            } else {
                "unread"
            };
            eprintln!("{level}[{class}]: {}: {what}", c.file);
            for r in &c.readers {
                eprintln!(
                    "  read by {}.{} ({}:{}{})",
                    r.table,
                    r.column,
                    r.file,
                    r.line,
                    r.via
                        .as_ref()
                        .map(|v| format!(", through {v}"))
                        .unwrap_or_default()
                );
            }
        }
        if !v.has_errors() {
            println!(
                "{}: {} tables, {} edges, {} warning(s){}",
                if fail_on_breaking && breaking > 0 {
                    "breaking"
                } else {
                    "ok"
                },
                v.tables,
                v.edges,
                v.diagnostics.len(),
                changes
                    .as_ref()
                    .map(|c| format!(", {} schema change(s), {breaking} breaking", c.len()))
                    .unwrap_or_default()
            );
        }
    }
    Ok(!v.has_errors() && !(fail_on_breaking && breaking > 0))
}
