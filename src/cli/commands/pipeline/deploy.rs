//! `flinkpipe pipeline deploy [DIR] SCOPE`: executes the plan on the configured target and prints a
//! summary table (`--dry-run`: what each statement would get).

use crate::cli::args::DeployArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::deploy::{self, DeployOutcome, DeployRequest, Deployed, DryRun, Outcome};
use std::time::Duration;

pub fn exec(inv: &Invocation, args: &DeployArgs) -> CmdResult {
    let req = DeployRequest {
        plan: args.plan.live_request()?,
        max_parallel: args.max_parallel,
        dry_run: args.dry_run,
        timeout: Duration::from_secs(args.timeout),
        resume: args.resume,
        allow_drop: args.allow_drop,
        journal: args.journal.clone(),
        blue_green: args.blue_green,
    };
    match deploy::deploy(&inv.ctx, &req)? {
        DeployOutcome::DryRun(d) => {
            dry_run(inv.json(), &d);
            Ok(true)
        }
        DeployOutcome::Deployed(d) => {
            report(inv.json(), &d);
            Ok(d.report.success())
        }
    }
}

fn dry_run(json: bool, d: &DryRun) {
    if json {
        print_json(
            &serde_json::json!({"scope": d.scope, "dry_run": true, "statements": d.statements}),
        );
        return;
    }
    println!("Dry run for {}: nothing is sent to the target\n", d.scope);
    let rows: Vec<Vec<String>> = d
        .statements
        .iter()
        .map(|s| {
            vec![
                s.table_name.clone(),
                s.action.clone(),
                s.statement.clone(),
                s.reason.clone(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(&["table", "action", "statement", "reason"], &rows)
    );
}

fn outcome_text(o: &Outcome) -> (String, String) {
    match o {
        Outcome::Done => ("done".into(), String::new()),
        Outcome::Skipped(r) => ("skipped".into(), r.clone()),
        Outcome::Failed(r) => ("FAILED".into(), r.clone()),
        Outcome::Interrupted(r) => ("interrupted".into(), r.clone()),
        Outcome::NotStarted => ("not started".into(), String::new()),
    }
}

fn report(json: bool, d: &Deployed) {
    let report = &d.report;
    if json {
        print_json(&serde_json::json!({
            "scope": d.scope,
            "success": report.success(),
            "interrupted": report.interrupted,
            "seconds": report.seconds,
            "journal": d.journal.display().to_string(),
            "nodes": report.nodes,
        }));
        return;
    }
    let rows: Vec<Vec<String>> = report
        .nodes
        .iter()
        .map(|n| {
            let (status, reason) = outcome_text(&n.outcome);
            let stmts = n
                .statements
                .iter()
                .map(|s| {
                    format!(
                        "{} {}{}",
                        s.name,
                        s.action,
                        s.phase
                            .as_ref()
                            .map(|p| format!(" {p}"))
                            .unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            vec![
                n.table_name.clone(),
                n.action.as_str().to_string(),
                status,
                format!("{:.1}s", n.seconds),
                if stmts.is_empty() { "-".into() } else { stmts },
                reason,
            ]
        })
        .collect();
    println!("Deploy of {}\n", d.scope);
    print!(
        "{}",
        table(
            &["table", "action", "result", "time", "statements", "reason"],
            &rows
        )
    );
    let count = |f: fn(&Outcome) -> bool| report.nodes.iter().filter(|n| f(&n.outcome)).count();
    println!(
        "\n{} done, {} failed, {} skipped, {} interrupted or not started in {:.1}s",
        count(|o| matches!(o, Outcome::Done)),
        count(|o| matches!(o, Outcome::Failed(_))),
        count(|o| matches!(o, Outcome::Skipped(_))),
        count(|o| matches!(o, Outcome::Interrupted(_) | Outcome::NotStarted)),
        report.seconds
    );
    if report.interrupted {
        let running: Vec<&str> = report
            .nodes
            .iter()
            .filter(|n| matches!(n.outcome, Outcome::Interrupted(_)))
            .map(|n| n.table_name.as_str())
            .collect();
        if !running.is_empty() {
            println!(
                "in flight when interrupted (statements may still be starting): {}",
                running.join(", ")
            );
        }
        println!(
            "journal: {} — run the same command with --resume to continue",
            d.journal.display()
        );
    }
}
