//! `flinkpipe pipeline validate [DIR] [--strict] [--deny CLASS …] [--since REF [--fail-on breaking]]`:
//! the project's errors and warnings, each with file and line, and one summary line that says `ok` only
//! when every statement was parsed; with `--since`, the schema changes since REF and the downstream
//! statements that read what changed.

use crate::cli::args::{EngineChoice, FailOn, ProjectArgs};
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::engine_check;
use crate::ops::schema_changes::{self, ColumnChange, SchemaChange};
use crate::ops::validate::{self, Gate, Verdict};

/// Options of `pipeline validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Also check the schema changes since this git ref against every downstream reader (column
    /// lineage): removed and retyped columns, primary-key changes, added columns.
    #[arg(long, value_name = "REF")]
    pub since: Option<String>,
    /// Fail (exit 1) on these findings: `breaking` = a changed column that a reader uses.
    #[arg(long, value_enum, requires = "since")]
    pub fail_on: Option<FailOn>,
    /// The CI gate: a statement not read as Flink reads it is an error (exit 1): sql-fallback
    /// (the parser rejected it), sql-missing-semicolon, sql-syntax, sql-placeholder,
    /// unknown-column (a column its table's DDL does not have), and scaffold-todo (a
    /// TODO(flinkpipe) that table init left).
    #[arg(long)]
    pub strict: bool,
    /// Make the warnings of CLASS errors (exit 1), e.g. `--deny unknown-layer`; repeatable;
    /// `all` denies every warning.
    #[arg(long, value_name = "CLASS", value_parser = crate::diagnostics::DeniedClass::parse)]
    pub deny: Vec<crate::diagnostics::DeniedClass>,
    /// `local`: also EXPLAIN every statement (with --since: those of the changed tables and
    /// their children) on the local Flink with the project's DDL; what the planner rejects
    /// (type errors, unknown columns, an updating query into an append-only sink) is an error
    /// at its file and line.
    #[arg(long, value_enum, default_value_t = EngineChoice::Offline)]
    pub engine: EngineChoice,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let gate = Gate {
        strict: args.strict,
        deny: args.deny.clone(),
    };
    let since = args.since.as_deref();
    let fail_on_breaking = args.fail_on.is_some();
    let engine = args.engine == EngineChoice::Local;
    let v = validate::validate(&inv.ctx, pipelines, allow_unknown, &gate)?;
    let checked = match engine && !v.has_errors() {
        true => Some(engine_check::engine_check(
            &inv.ctx,
            pipelines,
            &engine_check::EngineCheckRequest {
                since: since.map(|r| crate::ops::changes::ChangeRequest {
                    since: Some(r.to_string()),
                    ..Default::default()
                }),
                allow_unknown,
            },
        )?),
        false => None,
    };
    let rejected = checked.as_ref().map_or(0, |c| c.rejected());
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
    let failed = v.has_errors() || (fail_on_breaking && breaking > 0) || rejected > 0;
    if inv.json() {
        match (&changes, &checked) {
            (None, None) => print_json(&v.diagnostics),
            (schema_changes, engine_check) => print_json(&ValidateView {
                diagnostics: &v.diagnostics,
                schema_changes: schema_changes.as_ref(),
                engine_check: engine_check.as_ref(),
            }),
        }
        return Ok(!failed);
    }
    if let Some(c) = &checked {
        println!(
            "engine: {} statement(s) explained on {}: {} valid, {rejected} rejected (a DDL that cannot be declared counts with every statement that needs it); {} DDL statement(s) not used by any checked statement (not seen by the planner)",
            c.explained(),
            c.engine,
            c.valid(),
            c.unchecked(),
        );
    }
    for c in changes.iter().flatten() {
        print_change(c, fail_on_breaking);
    }
    let counts = format!(
        "{} tables, {} edges, {} warning(s){}",
        v.tables,
        v.edges,
        v.diagnostics.iter().filter(|d| !d.is_error()).count(),
        changes
            .as_ref()
            .map(|c| format!(", {} schema change(s), {breaking} breaking", c.len()))
            .unwrap_or_default()
    );
    match v.verdict() {
        Verdict::Ok if fail_on_breaking && breaking > 0 => println!("breaking: {counts}"),
        Verdict::Ok if rejected > 0 => {
            println!("failed: {counts}, {rejected} rejected by the engine")
        }
        Verdict::Ok if breaking > 0 => println!(
            "ok: {counts} — {breaking} breaking change(s) listed above do not fail the check without --fail-on breaking"
        ),
        Verdict::Ok => println!("ok: {counts}"),
        Verdict::Unverified => println!(
            "not verified: {counts}; {} statement(s) could not be parsed and were read by the token-level fallback (references and statefulness estimated): fix them, or gate with --strict",
            v.unparsed_statements
        ),
        // The console's diagnostics end with their count (`1 error(s), 0 warning(s)`).
        Verdict::Failed => {}
    }
    Ok(!failed)
}

/// One schema change and its readers, on stderr: `error[breaking]: FILE: column t.c removed`.
fn print_change(c: &SchemaChange, fail_on_breaking: bool) {
    let what = match &c.change {
        ColumnChange::Removed => format!("column {}.{} removed", c.table, c.column),
        ColumnChange::Renamed { to } => format!("column {}.{} renamed to {to}", c.table, c.column),
        ColumnChange::Nullable => format!("column {}.{} became nullable", c.table, c.column),
        ColumnChange::Retyped { old_type, new_type } => format!(
            "column {}.{} retyped {old_type} → {new_type}",
            c.table, c.column
        ),
        ColumnChange::PrimaryKey { old, new } => format!(
            "primary key of {} changed ({}) → ({})",
            c.table,
            old.join(", "),
            new.join(", ")
        ),
        ColumnChange::Added => format!("column {}.{} added", c.table, c.column),
        ColumnChange::Reordered { old, new } => format!(
            "columns of {} reordered ({}) → ({})",
            c.table,
            old.join(", "),
            new.join(", ")
        ),
        ColumnChange::Grain { old, new } => format!(
            "grain of {} changed: grouped by ({}) → ({})",
            c.table,
            old.join(", "),
            new.join(", ")
        ),
    };
    let level = match (c.breaking, fail_on_breaking) {
        (true, true) => "error",
        (true, false) => "warning",
        (false, _) => "note",
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

/// `--output json` with `--since` or `--engine local`: the diagnostics next to the schema changes
/// and the engine's verdicts (without either, the diagnostics alone, as before).
#[derive(serde::Serialize)]
struct ValidateView<'a, D, C, E> {
    diagnostics: &'a D,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_changes: Option<&'a C>,
    #[serde(skip_serializing_if = "Option::is_none")]
    engine_check: Option<&'a E>,
}
