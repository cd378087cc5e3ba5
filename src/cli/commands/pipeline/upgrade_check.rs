//! `flinkpipe pipeline upgrade-check [DIR] [--since REF] [--table-name T …] [--engine local|offline]
//! [--empirical [--timeout S]]`.

use crate::changes::upgrade::Tier;
use crate::cli::args::{ChangeRefs, EngineChoice, ProjectArgs};
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::upgrade_check::{self, Engine, UpgradeAction, UpgradeCheckRequest};

/// `pipeline upgrade-check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub refs: ChangeRefs,
    /// Only the statements writing this table (repeatable).
    #[arg(long = "table-name", value_name = "TABLE")]
    pub tables: Vec<String>,
    /// Where plans are compiled. Not given: the local Flink when it answers, else offline (each
    /// statement says so); `local` given explicitly fails (exit 2) when the local Flink does not answer.
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,
    /// Restore each changed stateful statement for real on the local Flink, on its table's unit-test
    /// fixtures: the old SQL on half the rows, stopped with a savepoint, the new SQL started from it
    /// on the other half, its result compared with a fresh run of the new SQL (tier `empirical`).
    /// Implies `--engine local`; a statement without unit tests keeps its engine verdict.
    #[arg(long)]
    pub empirical: bool,
    /// Time limit of one statement's empirical run, in seconds.
    #[arg(long, value_name = "S", requires = "empirical", default_value_t = 300)]
    pub timeout: u64,
}

fn action(a: UpgradeAction) -> &'static str {
    match a {
        UpgradeAction::None => "none",
        UpgradeAction::RestartFromOffsets => "restart (offsets)",
        UpgradeAction::RestoreFromSavepoint => "upgrade (savepoint)",
        UpgradeAction::NewVersion => "new version",
    }
}

pub fn exec(inv: &Invocation, args: &Args) -> CmdResult {
    let report = upgrade_check::upgrade_check(
        &inv.ctx,
        &args.project.dir.pipelines,
        &UpgradeCheckRequest {
            change: args.refs.request(),
            tables: args.tables.clone(),
            engine: match args.engine {
                Some(EngineChoice::Offline) => Engine::Offline,
                Some(EngineChoice::Local) => Engine::Local,
                None => Engine::Auto,
            },
            allow_unknown: args.project.allow_unknown,
            empirical: args.empirical,
            timeout: Some(std::time::Duration::from_secs(args.timeout)),
        },
    )?;
    let ok = report.all_in_place();
    if inv.json() {
        print_json(&report);
        return Ok(ok);
    }
    if report.statements.is_empty() {
        println!(
            "no DML, CTAS or materialized-table query changed since {}",
            &report.base_commit[..report.base_commit.len().min(12)]
        );
        return Ok(true);
    }
    let rows: Vec<Vec<String>> = report
        .statements
        .iter()
        .map(|s| {
            vec![
                s.statement.clone(),
                s.tables.join(", "),
                s.verdict.to_string(),
                match s.tier {
                    Tier::Offline => "offline",
                    Tier::Engine => "engine",
                    Tier::Empirical => "empirical",
                }
                .to_string(),
                action(s.action.gateway).into(),
                action(s.action.confluent_cloud).into(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "statement",
                "tables",
                "verdict",
                "tier",
                "gateway",
                "confluent cloud"
            ],
            &rows
        )
    );
    for s in &report.statements {
        for r in &s.reasons {
            println!("  {}:{}: {}: {r}", s.file, s.line, s.statement);
        }
        for row in s.empirical.iter().flat_map(|e| &e.differing_rows) {
            println!("  {}:{}: {}: {row}", s.file, s.line, s.statement);
        }
    }
    Ok(ok)
}
