//! `flinkpipe project list-topics PATH [--pipelines DIR]`: the configured Kafka's topics, each with
//! its table, and `PATH/topic_list.txt`.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::topics;
use std::path::Path;

pub fn exec(inv: &Invocation, out_dir: &Path, pipelines: &Path) -> CmdResult {
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
