//! `flinkpipe pipeline report TABLE [DIR] [--children-too] [--parent-only] [--yaml | --json]
//! [--output-file-name F] [--open]`: the parent tree (and child tree with `--children-too`), in
//! shift_left's formats too.

use crate::cli::args::ProjectArgs;
use crate::cli::render::{print_json, tree_text};
use crate::cli::{CmdResult, Invocation};
use crate::ops::report;
use std::path::{Path, PathBuf};

/// shift_left's output options of `pipeline report`.
#[derive(Debug, clap::Args, Clone)]
pub struct ReportFormats {
    /// Print the report as YAML (shift_left's `--yaml`).
    #[arg(long, conflicts_with = "json")]
    pub yaml: bool,
    /// Print the report as JSON (shift_left's `--json`; the same as `--output json`).
    #[arg(long)]
    pub json: bool,
    /// Also write the report to this file (YAML with --yaml, else JSON), atomically.
    #[arg(long, value_name = "FILE")]
    pub output_file_name: Option<PathBuf>,
    /// Write the lineage page of the report's tables to `<table>_pipeline_graph.html` (in
    /// $FLINKPIPE_OUTPUT_DIR, else the project's .flinkpipe/) and print its path; open it when a browser is
    /// configured ($BROWSER).
    #[arg(long)]
    pub open: bool,
}

/// Options of `pipeline report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table name.
    pub table: String,
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Also print the children tree.
    #[arg(long)]
    pub children_too: bool,
    /// Print only the direct parents (and children with --children-too).
    #[arg(long)]
    pub parent_only: bool,
    /// shift_left's negations (its defaults), accepted and ignored.
    #[arg(long, hide = true)]
    pub no_parent_only: bool,
    #[arg(long, hide = true)]
    pub no_children_too: bool,
    #[command(flatten)]
    pub formats: ReportFormats,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let table = args.table.as_str();
    let (children_too, parent_only) = (args.children_too, args.parent_only);
    let formats = &args.formats;
    let r = report::table_report(
        &inv.ctx,
        pipelines,
        table,
        children_too,
        parent_only,
        allow_unknown,
    )?;
    // A table name that cannot name the page is refused before any file is written.
    if formats.open {
        report::page_file_name(&r.table_name)?;
    }
    let wants_document = formats.yaml || formats.json || formats.output_file_name.is_some();
    let document = if wants_document || inv.json() {
        Some(report::report_document(&r, formats.yaml)?)
    } else {
        None
    };
    if let (Some(path), Some(doc)) = (&formats.output_file_name, &document) {
        report::write_report_file(path, doc)?;
        eprintln!("wrote {}", path.display());
    }
    let page = if formats.open {
        let p = report::write_report_page(
            &inv.ctx,
            pipelines,
            &r.table_name,
            children_too,
            allow_unknown,
            None,
        )?;
        open_in_browser(&p);
        Some(p)
    } else {
        None
    };
    if formats.yaml && !inv.json() {
        print!("{}", document.as_deref().unwrap_or_default());
    } else if formats.json || inv.json() {
        if page.is_some() && inv.json() {
            print_json(&ReportView {
                report: &r,
                page: page.as_ref(),
            });
        } else {
            print!("{}", document.as_deref().unwrap_or_default());
        }
    } else {
        println!("Parents of {}:", r.table_name);
        print!("{}", tree_text(&r.parents));
        if let Some(c) = &r.children {
            println!("\nChildren of {}:", r.table_name);
            print!("{}", tree_text(c));
        }
    }
    if let Some(p) = page.as_ref().filter(|_| !inv.json()) {
        eprintln!("lineage page: {}", p.display());
    }
    Ok(!r.project_has_errors)
}

/// Opens the page with `$BROWSER` when it is set; otherwise (a CI runner, a server) the printed path
/// is all there is, as the issue asks.
fn open_in_browser(page: &Path) {
    if let Some(browser) = crate::config::process_env("BROWSER") {
        let _ = std::process::Command::new(browser)
            .arg(page)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// `--output json` with `--open`: the report and the page written.
#[derive(serde::Serialize)]
struct ReportView<'a, R, P> {
    report: &'a R,
    page: Option<&'a P>,
}
