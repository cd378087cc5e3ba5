//! `flinkpipe pipeline deploy|undeploy|status` and `flinkpipe statement stop|resume|delete NAME`: turn
//! arguments into a target, a plan and deploy options, call [`crate::deploy`], render the result.
//!
//! Exit status: 0 success; 1 a node failed, the run was interrupted, or the input has errors.

use super::args::{DeployArgs, GlobalArgs, PlanArgs, StatementCommand, StatusArgs, UndeployArgs};
use super::pipeline::plan_inputs;
use super::{CmdResult, Failure, is_json, load_config, load_project, print_json, render};
use crate::config::Config;
use crate::deploy::executor::{self, Cancel, DeployOptions, DeployReport, Outcome, Session};
use crate::deploy::gateway::catalog::Definitions;
use crate::deploy::journal::{self, Entry, Journal, JournalState};
use crate::deploy::spec::{self, normalize_sql};
use crate::deploy::{
    ConfluentTarget, GatewayTarget, Phase, Scrubber, StatementSpec, StatementState, Target,
};
use crate::lineage::Project;
use crate::plan::{self, ExecutionPlan, StatementNaming, StatementStatus};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// An environment variable, `None` when unset or empty.
pub(super) fn env_lookup(v: &str) -> Option<String> {
    std::env::var(v).ok().filter(|s| !s.is_empty())
}

/// The configured target and a scrubber for its secrets: the Flink SQL Gateway when
/// `flinkpipe.gateway.url` or `FLINKPIPE_GATEWAY_URL` is set (it learns the project's statements, and
/// the external tables' DDL, to declare tables in its session), else Confluent Cloud.
pub(super) fn make_target(
    cfg: &Config,
    project: Option<&Project>,
) -> Result<(Box<dyn Target>, Scrubber), Failure> {
    if let Some(mut settings) = cfg.gateway_settings(&env_lookup) {
        // Deleted finished jobs are remembered beside the deploy journal, in the project.
        settings.deleted_jobs_file =
            project.map(|p| state_dir(&p.inventory.root).join("gateway-deleted-jobs.json"));
        let mut specs = match project {
            Some(p) => spec::project_statements(p, &StatementNaming::from_config(cfg))?,
            None => Vec::new(),
        };
        specs.extend(external_ddl(cfg)?);
        let target = GatewayTarget::new(settings, Definitions::new(specs))
            .map_err(|e| Failure::new(e.to_string()))?;
        tracing::info!("target: {}", target.describe());
        return Ok((Box::new(target), Scrubber::default()));
    }
    let settings = cfg.confluent_settings(&env_lookup).map_err(|e| match e {
        crate::config::ConfigError::Missing { .. } => Failure::new(format!(
            "{e}; to use an Apache Flink SQL Gateway instead, set flinkpipe.gateway.url or $FLINKPIPE_GATEWAY_URL"
        )),
        e => e.into(),
    })?;
    let scrubber = settings.credentials.scrubber();
    let target =
        ConfluentTarget::new(settings).map_err(|e| Failure::new(scrubber.scrub(&e.to_string())))?;
    tracing::info!("target: {}", target.describe());
    Ok((Box::new(target), scrubber))
}

/// The DDL statements of `flinkpipe.gateway.external_ddl` (files, or folders of `*.sql`, sorted).
fn external_ddl(cfg: &Config) -> Result<Vec<StatementSpec>, Failure> {
    let mut files = Vec::new();
    for p in cfg.gateway_external_ddl() {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&p)
                .map_err(|e| {
                    Failure::new(format!(
                        "flinkpipe.gateway.external_ddl: cannot read {}: {e}",
                        p.display()
                    ))
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "sql"))
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(p);
        }
    }
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| {
            Failure::new(format!(
                "flinkpipe.gateway.external_ddl: cannot read {}: {e}",
                f.display()
            ))
        })?;
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("ddl");
        let base = crate::plan::naming::fit_length(format!(
            "external-{}",
            stem.replace(['.', '_'], "-").to_ascii_lowercase()
        ));
        out.extend(
            spec::steps_from_sql(
                &text,
                &base,
                crate::deploy::StatementKind::Ddl,
                BTreeMap::new(),
            )
            .into_iter()
            .map(|s| s.spec),
        );
    }
    Ok(out)
}

/// A tokio runtime for one command.
pub(super) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("cannot start the async runtime: {e}")))
}

/// Every statement on the target, by name (one paginated listing).
pub(super) async fn live_statements(
    target: &dyn Target,
    scrubber: &Scrubber,
) -> Result<BTreeMap<String, StatementState>, Failure> {
    let list = target
        .list_statements()
        .await
        .map_err(|e| Failure::new(scrubber.scrub(&format!("listing statements: {e}"))))?;
    Ok(list.into_iter().map(|s| (s.name.clone(), s)).collect())
}

/// Plan statuses from live states.
pub(super) fn status_of(live: &BTreeMap<String, StatementState>) -> StatementStatus {
    StatementStatus {
        phases: live
            .iter()
            .map(|(k, v)| (k.clone(), v.phase.to_string()))
            .collect(),
    }
}

/// The live statement phases for `build-execution-plan --live`.
pub(super) fn live_status(cfg: &Config, project: &Project) -> Result<StatementStatus, Failure> {
    let (target, scrubber) = make_target(cfg, Some(project))?;
    let target = target.as_ref();
    let rt = runtime()?;
    let live = rt.block_on(live_statements(target, &scrubber))?;
    Ok(status_of(&live))
}

fn load(global: &GlobalArgs, args: &PlanArgs) -> Result<Option<(Config, Project)>, Failure> {
    // deploy, undeploy and status always read the live phases: offline planning options would be ignored.
    if args.offline || args.statement_status.is_some() {
        return Err(Failure::usage(
            "--offline and --statement-status are options of build-execution-plan: deploy, undeploy and status always read the target",
        ));
    }
    let cfg = load_config(global)?;
    let project = load_project(global, &args.dir.pipelines, args.allow_unknown)?;
    if project.has_errors() {
        eprintln!("nothing deployed: fix the errors above");
        return Ok(None);
    }
    Ok(Some((cfg, project)))
}

fn build(
    cfg: &Config,
    project: &Project,
    args: &PlanArgs,
    status: &StatementStatus,
) -> Result<ExecutionPlan, Failure> {
    let (scope, options) = plan_inputs(args)?;
    let naming = StatementNaming::from_config(cfg);
    Ok(plan::build_plan(
        project, &naming, status, &scope, &options,
    )?)
}

/// Default journal: `<project>/.flinkpipe/deploy-journal.jsonl` (the project is the folder holding the
/// pipelines folder).
fn journal_path(args: &DeployArgs) -> PathBuf {
    if let Some(p) = &args.journal {
        return p.clone();
    }
    state_dir(&args.plan.dir.pipelines).join("deploy-journal.jsonl")
}

/// `<project>/.flinkpipe/`: where deploy state is kept (the project is the folder holding the
/// pipelines folder).
fn state_dir(pipelines: &Path) -> PathBuf {
    let root = pipelines
        .canonicalize()
        .unwrap_or_else(|_| pipelines.to_path_buf());
    root.parent().unwrap_or(Path::new(".")).join(".flinkpipe")
}

/// `pipeline deploy`.
pub(super) fn deploy(global: &GlobalArgs, args: &DeployArgs) -> CmdResult {
    let Some((cfg, project)) = load(global, &args.plan)? else {
        return Ok(false);
    };
    let (target, scrubber) = make_target(&cfg, Some(&project))?;
    let target = target.as_ref();
    let rt = runtime()?;
    let live = rt.block_on(async {
        target.check_compute_pool().await.map_err(|e| {
            Failure::new(
                scrubber.scrub(&format!("checking the target ({}): {e}", target.describe())),
            )
        })?;
        live_statements(target, &scrubber).await
    })?;
    let plan = build(&cfg, &project, &args.plan, &status_of(&live))?;
    let nodes = spec::deploy_nodes(&project, &plan)?;
    warn_skipped_drift(&project, &plan, &live);
    if args.dry_run {
        return dry_run(global, &plan, &nodes, &live);
    }
    let jpath = journal_path(args);
    let resume = if args.resume {
        let entries = journal::read(&jpath).map_err(|e| {
            Failure::new(format!(
                "{e} (--resume needs the journal of an earlier run)"
            ))
        })?;
        let st = JournalState::replay(&entries);
        if st.scope.as_deref() != Some(plan.scope.as_str()) {
            return Err(Failure::new(format!(
                "--resume: the journal {} is for '{}', not '{}'",
                jpath.display(),
                st.scope.unwrap_or_default(),
                plan.scope
            )));
        }
        st
    } else {
        JournalState::default()
    };
    let mut j = if args.resume {
        Journal::append(&jpath)?
    } else {
        Journal::create(&jpath)?
    };
    j.record(&Entry::Run {
        scope: plan.scope.clone(),
        tables: plan.nodes.iter().map(|n| n.table_name.clone()).collect(),
        at: journal::now_secs(),
    })?;
    let journal = Mutex::new(j);
    let options = DeployOptions {
        max_parallel: args.max_parallel.max(1),
        statement_timeout: Duration::from_secs(args.timeout),
        ..DeployOptions::default()
    };
    let waves: BTreeMap<String, usize> = plan
        .nodes
        .iter()
        .filter_map(|n| n.wave.map(|w| (n.table_name.clone(), w)))
        .collect();
    let progress = crate::deploy::progress::auto(waves, scrubber.clone());
    let session = Session {
        journal: Some(&journal),
        resume,
        progress: progress.as_ref(),
        scrubber: scrubber.clone(),
        cancel: Cancel::default(),
    };
    let report = rt.block_on(async {
        let c = session.cancel.clone();
        let watcher = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ninterrupted: no new statement will start; finishing cleanly");
                c.cancel();
            }
        });
        let r = executor::deploy(target, &nodes, &options, &session).await;
        watcher.abort();
        r
    });
    drop(session);
    drop(progress);
    render_report(global, &plan, &report, &jpath);
    Ok(report.success())
}

/// Warns about statements the plan keeps (skip) although their files changed since they were
/// deployed: the plan does not restart a running statement by itself.
fn warn_skipped_drift(
    project: &Project,
    plan: &ExecutionPlan,
    live: &BTreeMap<String, StatementState>,
) {
    for n in plan.nodes.iter().filter(|n| n.action == plan::Action::Skip) {
        // A file that cannot be read is reported by the commands that use it, not here.
        let Ok(steps) = spec::statements_of(project, n, false) else {
            continue;
        };
        for st in steps {
            if let Some(l) = live.get(&st.spec.name)
                && normalize_sql(&l.sql) != normalize_sql(&st.spec.sql)
            {
                eprintln!(
                    "warning[drift]: {} is {} with SQL that differs from the files of {}; the plan keeps it (restart it with --table-name {}, or version it with pipeline blue-green)",
                    st.spec.name, l.phase, n.table_name, n.table_name
                );
            }
        }
    }
}

fn dry_run(
    global: &GlobalArgs,
    plan: &ExecutionPlan,
    nodes: &[crate::deploy::DeployNode],
    live: &BTreeMap<String, StatementState>,
) -> CmdResult {
    let rows: Vec<(String, String, String, String)> = nodes
        .iter()
        .flat_map(|n| {
            if n.steps.is_empty() {
                return vec![(
                    n.table.clone(),
                    n.action.as_str().to_string(),
                    "-".into(),
                    n.reason.clone(),
                )];
            }
            n.steps
                .iter()
                .map(|s| {
                    let now = live
                        .get(&s.spec.name)
                        .map(|l| l.phase.to_string())
                        .unwrap_or_else(|| "absent".into());
                    let what = if s.is_drop {
                        "drop (needs --allow-drop)".to_string()
                    } else {
                        format!("{} (now {now})", n.action.as_str())
                    };
                    (n.table.clone(), what, s.spec.name.clone(), n.reason.clone())
                })
                .collect()
        })
        .collect();
    if is_json(global) {
        let v: Vec<_> = rows
            .iter()
            .map(|(t, a, s, r)| serde_json::json!({"table_name": t, "action": a, "statement": s, "reason": r}))
            .collect();
        print_json(&serde_json::json!({"scope": plan.scope, "dry_run": true, "statements": v}));
    } else {
        println!(
            "Dry run for {}: nothing is sent to the target\n",
            plan.scope
        );
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|(t, a, s, r)| vec![t, a, s, r])
            .collect();
        print!(
            "{}",
            render::table(&["table", "action", "statement", "reason"], &rows)
        );
    }
    Ok(true)
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

fn render_report(global: &GlobalArgs, plan: &ExecutionPlan, report: &DeployReport, jpath: &Path) {
    if is_json(global) {
        print_json(&serde_json::json!({
            "scope": plan.scope,
            "success": report.success(),
            "interrupted": report.interrupted,
            "seconds": report.seconds,
            "journal": jpath.display().to_string(),
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
    println!("Deploy of {}\n", plan.scope);
    print!(
        "{}",
        render::table(
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
            jpath.display()
        );
    }
}

/// `pipeline undeploy`: deletes the statements of the scope's tables and their descendants, children
/// before parents; tables are dropped only with `--allow-drop`.
pub(super) fn undeploy(global: &GlobalArgs, args: &UndeployArgs) -> CmdResult {
    let Some((cfg, project)) = load(global, &args.plan)? else {
        return Ok(false);
    };
    let (scope, _) = plan_inputs(&args.plan)?;
    let (target, scrubber) = make_target(&cfg, Some(&project))?;
    let target = target.as_ref();
    let naming = StatementNaming::from_config(&cfg);
    let plan = plan::build_plan(
        &project,
        &naming,
        &StatementStatus::default(),
        &scope,
        &Default::default(),
    )?;
    // The scope's tables (not their ancestors) and every descendant: a child reads its parent.
    let start: Vec<&str> = plan
        .nodes
        .iter()
        .filter(|n| n.origin.is_start())
        .map(|n| n.table_name.as_str())
        .collect();
    let mut set = project.graph.descendants(&start);
    set.extend(start.iter().map(|s| s.to_string()));
    set.retain(|t| project.inventory.tables.get(t).is_some_and(|t| !t.external));
    let mut order: Vec<String> = project.graph.topo_order(Some(&set))?;
    order.reverse();
    let rt = runtime()?;
    let live = rt.block_on(live_statements(target, &scrubber))?;
    let mut todo: Vec<(String, String)> = Vec::new();
    for t in &order {
        let tb = &project.inventory.tables[t];
        let owner = tb
            .written_by
            .as_ref()
            .map(|w| &project.inventory.tables[w])
            .unwrap_or(tb);
        let dml = owner
            .dml_ref
            .as_ref()
            .map(|_| naming.dml(&owner.product, &owner.name));
        let ddl = tb
            .ddl_ref
            .as_ref()
            .map(|_| naming.ddl(&tb.product, &tb.name));
        for name in [dml, ddl].into_iter().flatten() {
            if live.contains_key(&name) && !todo.iter().any(|(_, n)| *n == name) {
                todo.push((t.clone(), name));
            }
        }
    }
    if todo.is_empty() {
        println!(
            "nothing to undeploy: no statement of the {} table(s) exists",
            order.len()
        );
        return Ok(true);
    }
    println!("Statements to delete, in this order (children before parents):");
    for (t, n) in &todo {
        println!("  {n}  ({t})");
    }
    if args.allow_drop {
        println!("Tables to drop (--allow-drop): {}", order.join(", "));
    }
    if !args.no_ack && !confirm("Delete them?")? {
        println!("nothing deleted");
        return Ok(false);
    }
    let options = DeployOptions {
        statement_timeout: Duration::from_secs(args.timeout),
        ..DeployOptions::default()
    };
    let mut ok = true;
    rt.block_on(async {
        for (t, n) in &todo {
            let r = async {
                target.delete_statement(n).await?;
                executor::wait_until(target, n, options.statement_timeout, options.poll, |s| {
                    s.is_none()
                })
                .await
            }
            .await;
            match r {
                Ok(_) => println!("deleted {n} ({t})"),
                Err(e) => {
                    ok = false;
                    eprintln!("error: {}", scrubber.scrub(&format!("deleting {n}: {e}")));
                }
            }
        }
        if args.allow_drop && ok {
            for t in &order {
                let tb = &project.inventory.tables[t];
                let name = crate::plan::naming::fit_length(format!(
                    "{}-drop",
                    naming.ddl(&tb.product, &tb.name)
                ));
                let spec = crate::deploy::StatementSpec {
                    name: name.clone(),
                    sql: format!("DROP TABLE IF EXISTS {}", crate::sql::quote_identifier(t)),
                    properties: Default::default(),
                    kind: crate::deploy::StatementKind::Ddl,
                };
                let r = async {
                    if target.get_statement(&name).await?.is_none() {
                        target.create_statement(&spec).await?;
                    }
                    executor::wait_until(
                        target,
                        &name,
                        options.statement_timeout,
                        options.poll,
                        |s| s.is_some_and(|s| s.phase == Phase::Completed),
                    )
                    .await?;
                    target.delete_statement(&name).await
                }
                .await;
                match r {
                    Ok(_) => println!("dropped table {t}"),
                    Err(e) => {
                        ok = false;
                        eprintln!("error: {}", scrubber.scrub(&format!("dropping {t}: {e}")));
                    }
                }
            }
        }
    });
    Ok(ok)
}

fn confirm(question: &str) -> Result<bool, Failure> {
    print!("{question} [y/N] ");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Failure::new(format!("cannot read the answer: {e}")))?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// `pipeline status`: live phase of every statement of the plan, and SQL drift.
pub(super) fn status(global: &GlobalArgs, args: &StatusArgs) -> CmdResult {
    let mut plan_args = args.plan.clone();
    let no_scope = plan_args.table_name.is_empty()
        && plan_args.product_name.is_none()
        && plan_args.scope_dir.is_none()
        && plan_args.table_list_file_name.is_none();
    let Some((cfg, project)) = load(global, &plan_args)? else {
        return Ok(false);
    };
    if no_scope {
        plan_args.scope_dir = Some(project.inventory.root_name.clone());
    }
    let (target, scrubber) = make_target(&cfg, Some(&project))?;
    let target = target.as_ref();
    let rt = runtime()?;
    let live = rt.block_on(live_statements(target, &scrubber))?;
    let plan = build(&cfg, &project, &plan_args, &status_of(&live))?;
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    let mut drifted = 0;
    for n in &plan.nodes {
        for st in spec::statements_of(&project, n, true)? {
            let l = live.get(&st.spec.name);
            let drift = match l {
                None => "-",
                Some(l) if normalize_sql(&l.sql) == normalize_sql(&st.spec.sql) => "no",
                Some(_) => {
                    drifted += 1;
                    "yes"
                }
            };
            let phase = l
                .map(|l| l.phase.to_string())
                .unwrap_or_else(|| "absent".into());
            rows.push(vec![
                n.table_name.clone(),
                st.spec.name.clone(),
                phase.clone(),
                drift.to_string(),
                n.action.as_str().to_string(),
                l.map(|l| l.detail.clone()).unwrap_or_default(),
            ]);
            json_rows.push(serde_json::json!({
                "table_name": n.table_name, "statement": st.spec.name, "phase": l.map(|l| l.phase.to_string()),
                "sql_drift": l.map(|_| drift == "yes"), "plan_action": n.action, "detail": l.map(|l| l.detail.clone()),
            }));
        }
    }
    if is_json(global) {
        print_json(&serde_json::json!({"scope": plan.scope, "statements": json_rows}));
    } else {
        println!(
            "Status of {} on {}\n",
            plan.scope,
            scrubber.scrub(&target.describe())
        );
        print!(
            "{}",
            render::table(
                &["table", "statement", "phase", "sql drift", "plan", "detail"],
                &rows
            )
        );
        println!(
            "\n{} statement(s), {drifted} with SQL that differs from the files",
            rows.len()
        );
        if cfg.gateway_settings(&env_lookup).is_some() {
            println!(
                "(SQL Gateway: DDL statements live only in a deploy's session, so 'absent' is their normal state between runs; a deploy declares them again)"
            );
        }
    }
    Ok(true)
}

/// `statement stop|resume|delete NAME`.
pub(super) fn statement(global: &GlobalArgs, cmd: &StatementCommand) -> CmdResult {
    let cfg = load_config(global)?;
    // The gateway keeps no statement text: `resume` needs the project's SQL ($PIPELINES, else
    // ./pipelines when it exists).
    let dir = env_lookup("PIPELINES")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from("pipelines")).filter(|p| p.is_dir()));
    let project = match &dir {
        Some(d) if cfg.gateway_settings(&env_lookup).is_some() => Some(
            crate::lineage::load(
                d,
                &cfg,
                crate::lineage::LoadOptions {
                    allow_unknown: true,
                },
            )
            .map_err(|e| Failure::new(format!("reading the project in {}: {e}", d.display())))?,
        ),
        _ => None,
    };
    let (target, scrubber) = make_target(&cfg, project.as_ref())?;
    let target = target.as_ref();
    let rt = runtime()?;
    let poll = crate::deploy::Backoff::POLL;
    let (name, timeout, verb) = match cmd {
        StatementCommand::Stop { name, timeout } => (name, timeout, "stop"),
        StatementCommand::Resume { name, timeout } => (name, timeout, "resume"),
        StatementCommand::Delete { name, timeout } => (name, timeout, "delete"),
    };
    let timeout = Duration::from_secs(*timeout);
    let r = rt.block_on(async {
        match verb {
            "stop" => {
                target.stop_statement(name).await?;
                executor::wait_until(target, name, timeout, poll, |s| {
                    s.is_none_or(|s| {
                        matches!(s.phase, Phase::Stopped | Phase::Completed | Phase::Failed)
                    })
                })
                .await
            }
            "resume" => {
                target.resume_statement(name).await?;
                executor::wait_until(target, name, timeout, poll, |s| {
                    s.is_some_and(|s| matches!(s.phase, Phase::Running | Phase::Completed))
                })
                .await
            }
            _ => {
                if !target.delete_statement(name).await? {
                    return Ok(None);
                }
                executor::wait_until(target, name, timeout, poll, |s| s.is_none()).await
            }
        }
    });
    match r {
        Ok(s) => {
            let detail = s.as_ref().map(|s| s.detail.clone()).unwrap_or_default();
            let phase = s
                .map(|s| s.phase.to_string())
                .unwrap_or_else(|| "absent".into());
            if is_json(global) {
                print_json(
                    &serde_json::json!({"statement": name, "action": verb, "phase": phase, "detail": detail}),
                );
            } else if detail.is_empty() {
                println!("{name}: {verb} done (phase {phase})");
            } else {
                // e.g. the savepoint a gateway job was stopped with: resume starts from it.
                println!("{name}: {verb} done (phase {phase}: {detail})");
            }
            Ok(true)
        }
        Err(e) => Err(Failure::new(scrubber.scrub(&format!("{verb} {name}: {e}")))),
    }
}
