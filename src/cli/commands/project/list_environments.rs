//! `flinkpipe project list-environments [DIR]`: the organization's Confluent Cloud environments.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::pools;

/// Options of `project list-environments`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dir: PipelinesDir,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.dir.pipelines.as_path();
    let r = pools::list_environments(&inv.ctx, pipelines)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    println!(
        "{:<2} {:<24} {:<32} {:<12} created",
        "", "id", "name", "governance"
    );
    for e in &r.environments {
        let mark = if r.configured.as_deref() == Some(e.id.as_str()) {
            "*"
        } else {
            ""
        };
        println!(
            "{mark:<2} {:<24} {:<32} {:<12} {}",
            e.id,
            e.display_name,
            e.stream_governance.as_deref().unwrap_or("-"),
            e.created_at.as_deref().unwrap_or("-")
        );
    }
    if let Some(c) = &r.configured
        && !r.environments.iter().any(|e| e.id == *c)
    {
        eprintln!("warning: the configured environment {c} is not among them");
    }
    Ok(true)
}
