//! `flinkpipe project list-topics PATH [--pipelines DIR]`: the configured Kafka's topics, each with
//! its table, and `PATH/topic_list.txt`.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::topics;
use std::path::PathBuf;

/// Options of `project list-topics`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder where topic_list.txt is written.
    #[arg(value_name = "PATH")]
    pub project_path: PathBuf,
    /// The pipelines folder (to name each topic's table) [default: $PIPELINES, else ./pipelines].
    #[arg(
        long = "pipelines",
        value_name = "DIR",
        env = "PIPELINES",
        default_value = "pipelines"
    )]
    pub pipelines: PathBuf,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let out_dir = args.project_path.as_path();
    let pipelines = args.pipelines.as_path();
    let r = topics::list_topics(&inv.ctx, pipelines, out_dir)?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    println!(
        "{} topic(s) on {}{}:",
        r.topics.len(),
        r.cluster,
        r.cluster_id
            .as_ref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default()
    );
    for t in &r.topics {
        println!(
            "  {:<48} {:>3} partition(s)  {}",
            t.topic_name,
            t.partitions_count,
            match (&t.table_name, t.is_internal) {
                (_, true) => "(internal)".to_string(),
                (Some(tb), _) => format!("table {tb}"),
                (None, _) => "(not ours)".to_string(),
            }
        );
    }
    println!("Topic list saved in {}", r.file.display());
    Ok(true)
}
