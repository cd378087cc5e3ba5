//! `flinkpipe sql refs FILE…`: sinks, sources, statements and statefulness of SQL files.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::refs;
use std::path::PathBuf;

/// Options of `sql refs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// SQL files to analyse.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let files = args.files.as_slice();
    let out = refs::refs(files);
    let ok = !out.iter().any(|f| f.unreadable());
    if inv.json() {
        print_json(&out);
        return Ok(ok);
    }
    for f in &out {
        // An unreadable file has only its error to show, not an empty result.
        if f.unreadable() {
            for w in &f.warnings {
                eprintln!("{}", w.render(Some(&f.text)));
            }
            continue;
        }
        println!("{}", f.file);
        println!("  sinks:        {}", f.sinks.join(", "));
        println!("  sources:      {}", f.sources.join(", "));
        let state = match f.statefulness {
            crate::sql::Statefulness::Unknown => crate::sql::UNKNOWN_STATE_TEXT.to_string(),
            s => serde_json::to_value(s)
                .unwrap()
                .as_str()
                .unwrap_or("")
                .to_string(),
        };
        println!("  statefulness: {state}");
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
            eprintln!("{}", w.render(Some(&f.text)));
        }
    }
    Ok(ok)
}
