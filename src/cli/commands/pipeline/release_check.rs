//! `flinkpipe pipeline release-check [DIR] [--table-name T|BLUE=GREEN] [--expect-diff T.COL]
//! [--max-lag S] [--samples N] [--format text|markdown]`: blue against green before cut-over;
//! exit 1 unless every table is `same` or `expected-difference`.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::query::ReadOptions;
use crate::ops::release_check::{self, ReleaseCheck, ReleaseCheckRequest, SideStats, TableCheck};
use std::time::Duration;

/// Options of `pipeline release-check`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Check only this table of the open release (blue or green name), or the pair BLUE=GREEN
    /// (repeatable).
    #[arg(long, value_name = "TABLE|BLUE=GREEN")]
    pub table_name: Vec<String>,
    /// A declared difference: `table.column` (values of that column; a key column also declares
    /// keys only on one side) or `table` (any difference). Repeatable.
    #[arg(long, value_name = "TABLE[.COLUMN]")]
    pub expect_diff: Vec<String>,
    /// Green is catching-up when its writer's watermark is more than this many seconds behind blue's
    /// writer's (without watermarks: when its sources have more records left to read).
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub max_lag: f64,
    /// Sample rows shown per kind of difference.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub samples: usize,
    /// Text layout (with --output text): a table, or Markdown for a pull-request comment.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Stop one side's read after this many seconds without a new row, once rows have arrived.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub idle: f64,
    /// Stop one side's read after this many seconds in all.
    #[arg(long, default_value_t = 120.0, value_name = "SECONDS")]
    pub timeout: f64,
}

/// Text layout of `pipeline release-check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    Text,
    Markdown,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let secs = |v: f64, what: &str| {
        if v.is_finite() && v >= 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(Failure::usage(format!(
                "--{what} {v}: a number of seconds ≥ 0"
            )))
        }
    };
    if !(args.max_lag.is_finite() && args.max_lag >= 0.0) {
        return Err(Failure::usage(format!(
            "--max-lag {}: a number of seconds ≥ 0",
            args.max_lag
        )));
    }
    let read = ReadOptions {
        idle: secs(args.idle, "idle")?,
        timeout: Some(secs(args.timeout, "timeout")?),
        ..ReadOptions::default()
    };
    let check = release_check::release_check(
        &inv.ctx,
        &ReleaseCheckRequest {
            pipelines: args.project.dir.pipelines.clone(),
            tables: args.table_name.clone(),
            expect_diff: args.expect_diff.clone(),
            max_lag_seconds: args.max_lag,
            samples: args.samples,
            read,
            allow_unknown: args.project.allow_unknown,
        },
    )?;
    if inv.json() {
        print_json(&check);
    } else {
        match args.format {
            CheckFormat::Text => print!("{}", text(&check)),
            CheckFormat::Markdown => print!("{}", markdown(&check)),
        }
    }
    Ok(check.passes())
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x}"))
}

fn side(s: &Option<SideStats>) -> String {
    match s {
        None => "(missing)".to_string(),
        Some(s) if s.sum.is_none() => format!("nulls {}", s.nulls),
        Some(s) => format!(
            "nulls {} sum {} min {} max {}",
            s.nulls,
            num(s.sum),
            num(s.min),
            num(s.max)
        ),
    }
}

fn summary_rows(check: &ReleaseCheck) -> Vec<Vec<String>> {
    check
        .tables
        .iter()
        .map(|t| {
            vec![
                format!("{} → {}", t.blue_table, t.green_table),
                t.verdict.as_str().to_string(),
                format!("{} / {}", t.blue_rows, t.green_rows),
                t.only_in_blue.to_string(),
                t.only_in_green.to_string(),
                t.values_differ.to_string(),
                t.lag_seconds
                    .map_or("-".into(), crate::cli::render::seconds),
            ]
        })
        .collect()
}

const HEADER: &[&str] = &[
    "TABLE",
    "VERDICT",
    "ROWS BLUE / GREEN",
    "ONLY BLUE",
    "ONLY GREEN",
    "VALUES DIFFER",
    "LAG",
];

/// A sample row as JSON, typed by its columns (a DECIMAL with its exact digits).
fn row_text(r: &crate::ops::release_check::SampleRow) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

fn details(t: &TableCheck, out: &mut String, md: bool) {
    let bullet = if md { "- " } else { "  " };
    if let Some(why) = &t.unreadable {
        out.push_str(&format!("{bullet}unreadable: {why}\n"));
        return;
    }
    if !t.blue_complete || !t.green_complete {
        out.push_str(&format!(
            "{bullet}note: a read was cut before the end of its table (blue complete: {}, green complete: {})\n",
            t.blue_complete, t.green_complete
        ));
    }
    if let Some(p) = &t.positions {
        let wm = |ms: Option<i64>| {
            ms.and_then(crate::target::metrics::watermark_text)
                .unwrap_or_else(|| "-".into())
        };
        let n = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        out.push_str(&format!(
            "{bullet}positions: blue {} watermark {} pending {} | green {} watermark {} pending {}\n",
            p.blue_statement,
            wm(p.blue_watermark_ms),
            n(p.blue_pending_records),
            p.green_statement,
            wm(p.green_watermark_ms),
            n(p.green_pending_records)
        ));
    }
    if let Some(c) = &t.time_column {
        out.push_str(&format!(
            "{bullet}newest {c}: blue {} green {}\n",
            t.blue_newest.as_deref().unwrap_or("-"),
            t.green_newest.as_deref().unwrap_or("-")
        ));
    }
    for c in &t.columns {
        if c.blue != c.green || c.differing_rows > 0 {
            out.push_str(&format!(
                "{bullet}column {}: blue {} | green {} | {} row(s) differ\n",
                c.column,
                side(&c.blue),
                side(&c.green),
                c.differing_rows
            ));
        }
    }
    for r in &t.only_in_blue_samples {
        out.push_str(&format!("{bullet}only in blue: {}\n", row_text(r)));
    }
    for r in &t.only_in_green_samples {
        out.push_str(&format!("{bullet}only in green: {}\n", row_text(r)));
    }
    for d in &t.values_differ_samples {
        out.push_str(&format!(
            "{bullet}differs: blue {} | green {}\n",
            row_text(&d.blue),
            row_text(&d.green)
        ));
    }
    if !t.undeclared.is_empty() {
        out.push_str(&format!(
            "{bullet}undeclared differences: {} (declare with --expect-diff {}.COLUMN)\n",
            t.undeclared.join(", "),
            t.green_table
        ));
    }
}

fn text(check: &ReleaseCheck) -> String {
    let mut out = table(HEADER, &summary_rows(check));
    for t in &check.tables {
        if t.verdict != release_check::Verdict::Same {
            out.push_str(&format!("{} → {}:\n", t.blue_table, t.green_table));
            details(t, &mut out, false);
        }
    }
    if let Some(note) = &check.positions_note {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(&format!("release: {}\n", check.verdict.as_str()));
    out.push_str(&crate::cli::render::blue_readers(&check.readers));
    out
}

fn markdown(check: &ReleaseCheck) -> String {
    let mut out = format!(
        "### Release check: **{}**{}\n\n| {} |\n|{}\n",
        check.verdict.as_str(),
        check
            .statement_prefix
            .as_deref()
            .map(|p| format!(" (statement prefix `{p}`)"))
            .unwrap_or_default(),
        HEADER.join(" | "),
        " --- |".repeat(HEADER.len())
    );
    for r in summary_rows(check) {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    if let Some(note) = &check.positions_note {
        out.push_str(&format!("\nNote: {note}\n"));
    }
    for t in &check.tables {
        if t.verdict != release_check::Verdict::Same {
            out.push_str(&format!(
                "\n#### `{}` → `{}`\n\n",
                t.blue_table, t.green_table
            ));
            details(t, &mut out, true);
        }
    }
    let readers = crate::cli::render::blue_readers(&check.readers);
    if !readers.is_empty() {
        out.push_str("\n#### Who still reads blue\n\n```text");
        out.push_str(&readers);
        out.push_str("```\n");
    }
    out
}
