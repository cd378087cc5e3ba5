//! `flinkpipe project validate-config [--target gateway|confluent]`: every problem of the
//! configuration file at once, each with its line; exit 1 when there is one.

use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::config_check::{self, CheckTarget};

/// The deploy target `project validate-config` checks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConfigTarget {
    /// An Apache Flink SQL Gateway (flinkpipe.gateway.*).
    Gateway,
    /// Confluent Cloud for Apache Flink.
    Confluent,
}

/// Options of `project validate-config`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Check what this target needs [default: gateway when flinkpipe.gateway.url (or
    /// FLINKPIPE_GATEWAY_URL) is set, else confluent].
    #[arg(long, value_enum)]
    pub target: Option<ConfigTarget>,
}

/// Runs the command.
pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let target = args.target;
    let target = target.map(|t| match t {
        ConfigTarget::Gateway => CheckTarget::Gateway,
        ConfigTarget::Confluent => CheckTarget::Confluent,
    });
    let r = config_check::validate_config(&inv.ctx, target)?;
    if inv.json() {
        print_json(&r);
        return Ok(r.problems.is_empty());
    }
    let file = r.file.as_ref().map_or_else(
        || "(no config file: defaults)".to_string(),
        |p| p.display().to_string(),
    );
    let target = match r.target {
        CheckTarget::Gateway => "a Flink SQL Gateway",
        CheckTarget::Confluent => "Confluent Cloud",
    };
    if r.problems.is_empty() {
        println!("ok: {file} is valid for {target}");
        return Ok(true);
    }
    for p in &r.problems {
        match p.line {
            Some(l) => eprintln!("error: {file}:{l}: {}", p.message),
            None => eprintln!("error: {file}: {}", p.message),
        }
    }
    eprintln!("{} problem(s) in {file} for {target}", r.problems.len());
    Ok(false)
}
