//! `flinkpipe project update-ut-ddl [IMPACTED…] [--project-path DIR] [--git-branch REF]
//! [--modified-files-path F] [--dry-run]`: unit-test copies follow their parents' DDLs.

use crate::cli::args::UpdateUtDdlArgs;
use crate::cli::render::print_json;
use crate::cli::{CmdResult, Invocation};
use crate::ops::update_ut_ddl::{self, UpdateUtDdlRequest};

pub fn exec(inv: &Invocation, args: &UpdateUtDdlArgs) -> CmdResult {
    let u = update_ut_ddl::update_ut_ddl(
        &inv.ctx,
        &args.project_path,
        &UpdateUtDdlRequest {
            tables: args.impacted.clone(),
            since: args.git_branch.clone(),
            modified_files: args.modified_files_path.clone(),
            apply: !args.dry_run,
        },
    )?;
    for h in &u.by_hand {
        eprintln!("warning[by-hand]: {h}");
    }
    if inv.json() {
        print_json(&serde_json::json!({
            "applied": u.applied,
            "files": u.edits.iter().map(|e| serde_json::json!({"file": e.file, "change": e.note})).collect::<Vec<_>>(),
            "by_hand": u.by_hand,
        }));
        return Ok(true);
    }
    print!("{}", u.diff());
    if u.edits.is_empty() {
        println!("The unit-test folders match their tables' DDLs: nothing to update.");
    } else {
        for e in &u.edits {
            println!("{}: {}", e.file, e.note);
        }
        println!(
            "{} file(s) {}",
            u.edits.len(),
            if u.applied {
                "updated"
            } else {
                "to update (run again without --dry-run)"
            }
        );
    }
    Ok(true)
}
