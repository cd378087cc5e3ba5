//! `flinkpipe completions SHELL`: a completion script from the same clap definitions as `--help`.

use crate::cli::CmdResult;
use crate::cli::args::Cli;
use clap::CommandFactory;

pub fn exec(shell: clap_complete::Shell) -> CmdResult {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "flinkpipe", &mut std::io::stdout());
    Ok(true)
}
