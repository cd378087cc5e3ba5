//! `flinkpipe man [--out DIR]`: the man page (roff), or one page per command in a folder.

use crate::cli::args::Cli;
use crate::cli::{CmdResult, Failure};
use clap::CommandFactory;
use std::path::PathBuf;

/// Options of `man`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Write `flinkpipe.1`, `flinkpipe-pipeline.1`, … into this folder instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn exec(args: &Args) -> CmdResult {
    let cmd = Cli::command();
    let io = |e: std::io::Error| Failure::new(e.to_string());
    match &args.out {
        None => {
            clap_mangen::Man::new(cmd)
                .render(&mut std::io::stdout())
                .map_err(io)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(io)?;
            clap_mangen::generate_to(cmd, dir).map_err(io)?;
            let mut pages: Vec<String> = std::fs::read_dir(dir)
                .map_err(io)?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("flinkpipe") && n.ends_with(".1"))
                .collect();
            pages.sort();
            println!("{} man pages written to {}", pages.len(), dir.display());
        }
    }
    Ok(true)
}
