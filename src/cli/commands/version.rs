//! `flinkpipe version [--config]`: the version; `--config` (`--show-config`) the effective
//! configuration, secrets masked.

use crate::cli::args::VersionArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Failure, Invocation};
use crate::ops::version::{self, VERSION};

pub fn exec(inv: &Invocation, args: &VersionArgs) -> CmdResult {
    if !args.show_config {
        if inv.json() {
            print_json(&serde_json::json!({ "version": VERSION }));
        } else {
            println!("flinkpipe {VERSION}");
        }
        return Ok(true);
    }
    let shown = version::show_config(&inv.ctx, &args.dir.pipelines)?;
    if inv.json() {
        let value: serde_json::Value =
            serde_yaml_ng::from_str(&shown.yaml).map_err(|e| Failure::new(e.to_string()))?;
        print_json(
            &serde_json::json!({ "version": VERSION, "source": shown.source, "config": value }),
        );
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
