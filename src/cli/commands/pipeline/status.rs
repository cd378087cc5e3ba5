//! `flinkpipe pipeline status [DIR] [SCOPE]`: the live phase of every statement of the scope, the
//! plan's action and SQL drift.

use crate::cli::args::PlanArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::status::{self, RuntimeMetrics, StatusRequest};
use crate::ops::target::TargetKind;
use crate::target::Phase;

/// Options of `pipeline status`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Also show runtime metrics: records in and out, pending records (consumer lag), watermark,
    /// backpressure, and on the SQL Gateway the job's checkpoints and restarts (Confluent Cloud: the
    /// Metrics API, a Cloud API key; SQL Gateway: the JobManager).
    #[arg(long)]
    pub lag: bool,
    /// Window of the Metrics API record counts, in minutes (Confluent Cloud).
    #[arg(long, default_value_t = 10, value_name = "MINUTES", requires = "lag")]
    pub lag_minutes: u32,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let r = status::status(
        &inv.ctx,
        &StatusRequest {
            plan: args.plan.request(),
            lag: args.lag,
            lag_minutes: args.lag_minutes,
        },
    )?;
    if inv.json() {
        print_json(&StatusView {
            lag_source: r.lag.as_ref().map(|l| l.source.as_str()),
            report: &r,
        });
        return Ok(true);
    }
    print_text(&r, inv.global.verbose > 0);
    Ok(true)
}

/// The report as text: the statements, then runtime metrics, blue-green and orphans when there are.
fn print_text(r: &status::StatusReport, verbose: bool) {
    println!("Status of {} on {}\n", r.scope, r.target);
    let (text, shown) = crate::cli::render::status_statements(r, verbose);
    print!("{text}");
    let folded = r.statements.len() - shown;
    println!(
        "\n{} statement(s), {} with SQL that differs from the files{}",
        r.statements.len(),
        r.drifted(),
        if folded > 0 {
            format!(
                "; {folded} DDL statement(s) declared in each deploy's session folded into their table's row"
            )
        } else {
            String::new()
        }
    );
    let notes = crate::cli::render::server_notes(
        r.statements
            .iter()
            .map(|s| (s.statement.as_str(), &s.server)),
    );
    print!("{notes}");
    let rewritten: Vec<String> = r
        .statements
        .iter()
        .filter(|s| !s.rewritten_by.is_empty())
        .map(|s| format!("{} ({})", s.statement, s.rewritten_by.join(" ")))
        .collect();
    if !rewritten.is_empty() {
        println!(
            "compared after the rewrite rules of environment {}: {}",
            r.environment,
            rewritten.join(", ")
        );
    }
    if let Some(source) = &r.lag {
        print_metrics(r, &source.source);
    }
    if !r.materialized_tables.is_empty() {
        print_materialized_tables(r);
    }
    if !r.blue_green.is_empty() {
        print_blue_green(r);
    }
    if !r.unit_test_statements.is_empty() {
        print_unit_test_statements(r);
    }
    if !r.orphans.is_empty() {
        print_orphans(r);
    }
    if r.target_kind == TargetKind::SqlGateway {
        println!(
            "(SQL Gateway: DDL statements live only in a deploy's session, so 'absent' is their normal state between runs; a deploy declares them again)"
        );
    }
}

/// Records in and out, pending, watermark, backpressure, checkpoints and restarts of the statements
/// with a job.
fn print_metrics(r: &status::StatusReport, source: &str) {
    println!("\nRuntime metrics ({source}):\n");
    // Statements with a job: metrics, or a phase in which a job runs (a COMPLETED DDL has none).
    let rows: Vec<Vec<String>> = r
        .statements
        .iter()
        .filter(|s| {
            s.lag.is_some()
                || s.phase
                    .as_ref()
                    .is_some_and(|p| p.is_live() || *p == Phase::Failing)
        })
        .map(|s| {
            let mut row = vec![s.statement.clone()];
            row.extend(lag_cells(s.lag.as_ref()));
            row
        })
        .collect();
    let mut headers = vec![
        "statement",
        "records in",
        "records out",
        "pending",
        "watermark",
        "backpressure",
        "checkpoints",
        "restarts",
    ];
    // The job's checkpoints and restarts come from the JobManager (SQL Gateway): columns no
    // statement has a value in (Confluent Cloud's Metrics API) are left out.
    let job_health = r
        .statements
        .iter()
        .filter_map(|s| s.lag.as_ref())
        .any(|m| m.checkpoints.is_some() || m.restarts.is_some());
    let rows = if job_health {
        rows
    } else {
        headers.truncate(6);
        rows.into_iter()
            .map(|mut row| {
                row.truncate(6);
                row
            })
            .collect()
    };
    print!("{}", table(&headers, &rows));
}

/// The materialized tables of the scope as the target's materialized-tables API tells them: phase,
/// active version (and one being activated), stopped, and what the server says.
fn print_materialized_tables(r: &status::StatusReport) {
    println!("\nMaterialized tables (the target's materialized-tables API):\n");
    let rows: Vec<Vec<String>> = r
        .materialized_tables
        .iter()
        .map(|m| {
            let (state, note) = match (&m.materialized, &m.unreadable) {
                (_, Some(why)) if m.materialized.is_none() => ("unreadable".into(), why.clone()),
                (Some(t), _) => (
                    t.describe(),
                    std::iter::once(t.detail.clone())
                        .chain(t.warnings.iter().map(|w| format!("warning: {w}")))
                        .filter(|x| !x.is_empty())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                (None, _) => ("absent".into(), "not listed by the API".into()),
            };
            let stopped = m
                .materialized
                .as_ref()
                .map_or("-", |t| if t.stopped { "yes" } else { "no" });
            vec![
                m.table_name.clone(),
                state,
                stopped.to_string(),
                if m.materialized.is_some() && m.unreadable.is_some() {
                    "?".to_string()
                } else {
                    m.versions.len().to_string()
                },
                note,
            ]
        })
        .collect();
    print!(
        "{}",
        table(&["table", "phase", "stopped", "versions", "detail"], &rows)
    );
}

/// The blue statements next to their green successors (and their lag with `--lag`), and who still
/// reads blue.
fn print_blue_green(r: &status::StatusReport) {
    println!(
        "\nBlue-green (pipelines/blue_green.json), blue statements next to their green successors:\n"
    );
    let phase = |p: &Option<Phase>| crate::plan::status::phase_or_absent(p.as_ref()).to_string();
    let rows: Vec<Vec<String>> = r
        .blue_green
        .iter()
        .map(|b| {
            vec![
                b.blue_statement.clone(),
                phase(&b.blue_phase),
                b.green_statement.clone().unwrap_or_else(|| "-".into()),
                phase(&b.green_phase),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &["blue statement", "phase", "green statement", "phase"],
            &rows
        )
    );
    if r.lag.is_some() {
        println!("\nBlue next to green (records in / out / pending, watermark):\n");
        let rows: Vec<Vec<String>> = r
            .blue_green
            .iter()
            .map(|b| {
                vec![
                    b.blue_statement.clone(),
                    lag_summary(b.blue_lag.as_ref()),
                    b.green_statement.clone().unwrap_or_else(|| "-".into()),
                    lag_summary(b.green_lag.as_ref()),
                ]
            })
            .collect();
        print!(
            "{}",
            table(&["blue", "blue lag", "green", "green lag"], &rows)
        );
    }
    print!("{}", crate::cli::render::blue_readers(&r.blue_readers));
    println!("(validate the green tables, then: flinkpipe pipeline decommission --delete)");
}

/// The tool's own unit-test statements still on the target (not orphans).
fn print_unit_test_statements(r: &status::StatusReport) {
    println!("\nUnit-test statements (flinkpipe's own test runs, not orphans):\n");
    let rows: Vec<Vec<String>> = r
        .unit_test_statements
        .iter()
        .map(|o| vec![o.statement.clone(), o.phase.to_string(), o.detail.clone()])
        .collect();
    print!("{}", table(&["statement", "phase", "detail"], &rows));
    println!("(remove them with: flinkpipe table delete-unit-tests TABLE)");
}

/// Statements under the prefix that no table of the tree owns.
fn print_orphans(r: &status::StatusReport) {
    println!("\nOrphans: statements under the prefix that no table of the tree owns:\n");
    let rows: Vec<Vec<String>> = r
        .orphans
        .iter()
        .map(|o| vec![o.statement.clone(), o.phase.to_string(), o.detail.clone()])
        .collect();
    print!("{}", table(&["statement", "phase", "detail"], &rows));
    println!("(stop or delete them with: flinkpipe pipeline decommission --orphans)");
}

fn count(v: Option<u64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_else(|| "-".into())
}

/// records in, records out (with what they count over), pending, watermark, backpressure,
/// checkpoints, restarts.
fn lag_cells(m: Option<&RuntimeMetrics>) -> Vec<String> {
    let Some(m) = m else {
        return vec!["-".into(); 7];
    };
    let over = m.counted.describe();
    vec![
        format!("{} ({over})", count(m.records_in)),
        count(m.records_out),
        count(m.pending_records),
        m.watermark_ms
            .and_then(status::watermark_text)
            .unwrap_or_else(|| "-".into()),
        m.backpressure
            .map(|b| b.as_str().to_string())
            .unwrap_or_else(|| "-".into()),
        m.checkpoints
            .as_ref()
            .map(|c| c.describe())
            .unwrap_or_else(|| "-".into()),
        count(m.restarts),
    ]
}

/// `in 1200 / out 1100 / pending 3, 2026-01-01T10:00:00.000Z`.
fn lag_summary(m: Option<&RuntimeMetrics>) -> String {
    match m {
        None => "-".into(),
        Some(m) => format!(
            "in {} / out {} / pending {}{}",
            count(m.records_in),
            count(m.records_out),
            count(m.pending_records),
            m.watermark_ms
                .and_then(status::watermark_text)
                .map(|w| format!(", {w}"))
                .unwrap_or_default()
        ),
    }
}

/// `--output json`: the whole report, and `lag_source` (what the metrics were read from) at the top
/// level as before.
#[derive(serde::Serialize)]
struct StatusView<'a> {
    #[serde(flatten)]
    report: &'a status::StatusReport,
    lag_source: Option<&'a str>,
}
