//! `flinkpipe sql …`: the SQL front end on files.

use super::args::{GlobalArgs, SqlCommand};
use super::{CmdResult, is_json, print_json};
use crate::diagnostics::Diagnostic;
use crate::project::scan::read_sql;
use crate::sql::{Statefulness, StatementKind};
use serde::Serialize;

#[derive(Serialize)]
struct StatementRefs {
    kind: StatementKind,
    line: usize,
    sinks: Vec<String>,
    sources: Vec<String>,
}

#[derive(Serialize)]
struct FileRefs {
    file: String,
    sinks: Vec<String>,
    sources: Vec<String>,
    statefulness: Statefulness,
    statements: Vec<StatementRefs>,
    warnings: Vec<Diagnostic>,
}

fn sorted(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = names.collect();
    v.sort();
    v.dedup();
    v
}

pub(super) fn run(global: &GlobalArgs, cmd: &SqlCommand) -> CmdResult {
    match cmd {
        SqlCommand::Refs { files } => {
            let mut out = Vec::new();
            let mut texts = Vec::new();
            let mut ok = true;
            for f in files {
                let shown = f.display().to_string();
                let mut diags = Vec::new();
                let file = read_sql(f, shown.clone(), &mut diags);
                ok &= !diags.iter().any(Diagnostic::is_error);
                let a = &file.analysis;
                texts.push(file.text.clone());
                out.push(FileRefs {
                    file: shown,
                    sinks: a.sinks().iter().map(|n| n.dotted()).collect(),
                    sources: a.sources().iter().map(|n| n.dotted()).collect(),
                    statefulness: a.statefulness(),
                    statements: a
                        .statements
                        .iter()
                        .map(|s| StatementRefs {
                            kind: s.kind,
                            line: s.line,
                            sinks: sorted(s.sinks.iter().map(|r| r.name.dotted())),
                            sources: sorted(s.sources.iter().map(|r| r.name.dotted())),
                        })
                        .collect(),
                    warnings: diags,
                });
            }
            if is_json(global) {
                print_json(&out);
            } else {
                for (f, text) in out.iter().zip(&texts) {
                    // An unreadable file has only its error to show, not an empty result.
                    if f.warnings.iter().any(|w| w.is_error()) {
                        for w in &f.warnings {
                            eprintln!("{}", w.render(Some(text)));
                        }
                        continue;
                    }
                    println!("{}", f.file);
                    println!("  sinks:        {}", f.sinks.join(", "));
                    println!("  sources:      {}", f.sources.join(", "));
                    println!(
                        "  statefulness: {}",
                        serde_json::to_value(f.statefulness)
                            .unwrap()
                            .as_str()
                            .unwrap_or("")
                    );
                    for s in &f.statements {
                        println!(
                            "  line {:>4}  {:<26} sinks [{}] sources [{}]",
                            s.line,
                            serde_json::to_value(s.kind).unwrap().as_str().unwrap_or(""),
                            s.sinks.join(", "),
                            s.sources.join(", ")
                        );
                    }
                    for w in &f.warnings {
                        eprintln!("{}", w.render(Some(text)));
                    }
                }
            }
            Ok(ok)
        }
    }
}
