//! `flinkpipe project assess-unused-tables [DIR] [--include-topics | --no-topics] [--output-file F]`.

use crate::cli::args::ProjectArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::unused::{self, AssessRequest};
use std::path::Path;
use std::path::PathBuf;

/// Options of `project assess-unused-tables`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    /// Also assess the Kafka topics (the default; `--no-topics` skips them).
    #[arg(long, overrides_with = "no_topics")]
    pub include_topics: bool,
    /// Do not assess the Kafka topics.
    #[arg(long)]
    pub no_topics: bool,
    /// The report file [default: unused_tables_<time>.txt in $FLINKPIPE_OUTPUT_DIR, else the
    /// project's .flinkpipe/].
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let pipelines = args.project.pipelines();
    let allow_unknown = args.project.allow_unknown;
    let include_topics = !args.no_topics;
    let output_file = args.output_file.as_deref();
    let r = unused::assess(
        &inv.ctx,
        &AssessRequest {
            pipelines: pipelines.to_path_buf(),
            include_topics,
            output_file: output_file.map(Path::to_path_buf),
            allow_unknown,
        },
    )?;
    if inv.json() {
        print_json(&r);
        return Ok(true);
    }
    println!(
        "{} of {} table(s) used by no running statement ({} of {} statement(s) running):",
        r.unused_tables.len(),
        r.tables,
        r.running_statements,
        r.statements
    );
    for t in &r.unused_tables {
        match &t.kept_because {
            None => println!(
                "  {:<40} {:<12} {:<10} can be deleted",
                t.table_name, t.table_type, t.product_name
            ),
            Some(why) => println!(
                "  {:<40} {:<12} {:<10} kept: {why}",
                t.table_name, t.table_type, t.product_name
            ),
        }
    }
    match (&r.unused_topics, &r.topics_skipped) {
        (Some(topics), _) => {
            println!(
                "{} of {} topic(s) unused:",
                topics.len(),
                r.total_topics.unwrap_or_default()
            );
            for t in topics {
                println!(
                    "  {:<48} {}",
                    t.topic_name,
                    t.table_name
                        .as_ref()
                        .map(|tb| format!("table {tb}"))
                        .unwrap_or_else(|| "(no table of the project)".into())
                );
            }
        }
        (None, Some(why)) => eprintln!("warning: topics not assessed: {why}"),
        _ => {}
    }
    if let Some(f) = &r.output_file {
        println!("Results saved to: {}", f.display());
    }
    Ok(true)
}
