//! `flinkpipe pipeline status [DIR] [SCOPE]`: the live phase of every statement of the scope, the
//! plan's action and SQL drift.

use crate::cli::args::StatusArgs;
use crate::cli::render::{print_json, table};
use crate::cli::{CmdResult, Invocation};
use crate::ops::status;
use crate::ops::target::TargetKind;

pub fn exec(inv: &Invocation, args: &StatusArgs) -> CmdResult {
    let r = status::status(&inv.ctx, &args.plan.live_request()?)?;
    if inv.json() {
        print_json(&serde_json::json!({
            "scope": r.scope,
            "statements": r.statements,
            "blue_green": r.blue_green,
            "orphans": r.orphans,
        }));
        return Ok(true);
    }
    println!("Status of {} on {}\n", r.scope, r.target);
    let rows: Vec<Vec<String>> = r
        .statements
        .iter()
        .map(|s| {
            vec![
                s.table_name.clone(),
                s.statement.clone(),
                s.phase.clone().unwrap_or_else(|| "absent".into()),
                match s.sql_drift {
                    None => "-",
                    Some(false) => "no",
                    Some(true) => "yes",
                }
                .to_string(),
                s.plan_action.as_str().to_string(),
                s.detail.clone().unwrap_or_default(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &["table", "statement", "phase", "sql drift", "plan", "detail"],
            &rows
        )
    );
    println!(
        "\n{} statement(s), {} with SQL that differs from the files",
        rows.len(),
        r.drifted()
    );
    if !r.blue_green.is_empty() {
        println!(
            "\nBlue-green (pipelines/blue_green.json), blue statements next to their green successors:\n"
        );
        let phase = |p: &Option<String>| p.clone().unwrap_or_else(|| "absent".into());
        let rows: Vec<Vec<String>> = r
            .blue_green
            .iter()
            .map(|b| {
                vec![
                    b.blue_statement.clone(),
                    phase(&b.blue_phase),
                    b.green_statement.clone().unwrap_or_else(|| "-".into()),
                    phase(&b.green_phase),
                ]
            })
            .collect();
        print!(
            "{}",
            table(
                &["blue statement", "phase", "green statement", "phase"],
                &rows
            )
        );
        println!("(validate the green tables, then: flinkpipe pipeline decommission --delete)");
    }
    if !r.orphans.is_empty() {
        println!("\nOrphans: statements under the prefix that no table of the tree owns:\n");
        let rows: Vec<Vec<String>> = r
            .orphans
            .iter()
            .map(|o| vec![o.statement.clone(), o.phase.clone(), o.detail.clone()])
            .collect();
        print!("{}", table(&["statement", "phase", "detail"], &rows));
        println!("(stop or delete them with: flinkpipe pipeline decommission --orphans)");
    }
    if r.target_kind == TargetKind::SqlGateway {
        println!(
            "(SQL Gateway: DDL statements live only in a deploy's session, so 'absent' is their normal state between runs; a deploy declares them again)"
        );
    }
    Ok(true)
}
