//! `flinkpipe pipeline report TABLE [DIR] [--children-too] [--parent-only] [--yaml | --json]
//! [--output-file-name F] [--open]`: the parent tree (and child tree with `--children-too`), in
//! shift_left's formats too.

use crate::cli::args::ReportFormats;
use crate::cli::render::{print_json, tree_text};
use crate::cli::{CmdResult, Invocation};
use crate::ops::report;
use std::path::Path;

pub fn exec(
    inv: &Invocation,
    pipelines: &Path,
    table: &str,
    children_too: bool,
    parent_only: bool,
    formats: &ReportFormats,
    allow_unknown: bool,
) -> CmdResult {
    let r = report::table_report(
        &inv.ctx,
        pipelines,
        table,
        children_too,
        parent_only,
        allow_unknown,
    )?;
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
            print_json(&serde_json::json!({"report": r, "page": page}));
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
