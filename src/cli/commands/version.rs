//! `flinkpipe version [--config]`: the version; `--config` (`--show-config`) the effective
//! configuration, secrets masked.

use crate::cli::args::PipelinesDir;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::version::{self, VERSION};

/// Options of `version`.
#[derive(Debug, clap::Args, Clone)]
pub struct Args {
    /// Print the effective configuration (YAML, secrets masked). `version --config [FILE]` means the same.
    #[arg(long)]
    pub show_config: bool,
    /// The project whose `config.yaml` is shown when no other is found.
    #[command(flatten)]
    pub dir: PipelinesDir,
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    if !args.show_config {
        if inv.json() {
            print_json(&VersionView {
                version: VERSION,
                source: None,
                config: None,
            });
        } else {
            println!("flinkpipe {VERSION}");
        }
        return Ok(true);
    }
    let shown = version::show_config(&inv.ctx, &args.dir.pipelines)?;
    if inv.json() {
        let value: serde_json::Value =
            serde_yaml_ng::from_str(&shown.yaml).map_err(|e| Failure::new(e.to_string()))?;
        print_json(&VersionView {
            version: VERSION,
            source: Some(&shown.source),
            config: Some(value),
        });
    } else {
        println!(
            "# flinkpipe {VERSION}, configuration from {} (secrets masked)",
            shown.source
        );
        println!(
            "# statement names: {}-<product>-<ddl|dml>-<table> (region {}; target: {})",
            shown.statement_prefix,
            shown.region,
            shown.target.describe()
        );
        print!("{}", shown.yaml);
    }
    Ok(true)
}

/// `--output json`: the version; with `--show-config`, where the configuration was read and its
/// value (secrets masked).
#[derive(serde::Serialize)]
struct VersionView<'a> {
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<serde_json::Value>,
}
