//! The executor against the in-memory target (`memory_target`), on tokio's paused clock: what it
//! decides and does for each state a statement can be in, when a parent counts as done (`--resume`
//! and plan skips: PENDING is not done), and transient errors retried for as long as the statement
//! timeout allows. The wire-level behaviour is tested against `fake_confluent` in `deploy_executor`.

use crate::memory_target::{Call, MemoryTarget, Op, http};
use flinkpipe::deploy::executor::{
    DeployOptions, DeployReport, Outcome, Session, StatementAction, StepPlan,
};
use flinkpipe::deploy::journal::JournalState;
use flinkpipe::deploy::{DeployNode, Phase, StatementKind, StatementSpec, Step, deploy};
use flinkpipe::plan::Action;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::time::Instant;

const TIMEOUT: Duration = Duration::from_secs(600);

/// The production policies (paused time makes them free).
fn options() -> DeployOptions {
    DeployOptions {
        statement_timeout: TIMEOUT,
        ..DeployOptions::default()
    }
}

fn step(name: &str, sql: &str, kind: StatementKind) -> Step {
    Step {
        spec: StatementSpec {
            name: name.into(),
            sql: sql.into(),
            properties: BTreeMap::new(),
            kind,
            compute_pool: None,
        },
        is_drop: false,
        rewritten_by: Vec::new(),
    }
}

fn ddl_sql(t: &str) -> String {
    format!("CREATE TABLE {t} (id INT)")
}

fn dml_sql(t: &str) -> String {
    format!("INSERT INTO {t} SELECT * FROM src")
}

fn node(table: &str, parents: &[&str], action: Action) -> DeployNode {
    DeployNode {
        table: table.into(),
        action,
        reason: format!("in scope; action {}", action.as_str()),
        parents: parents.iter().map(|p| p.to_string()).collect(),
        stateless: false,
        steps: vec![
            step(&format!("ddl-{table}"), &ddl_sql(table), StatementKind::Ddl),
            step(&format!("dml-{table}"), &dml_sql(table), StatementKind::Dml),
        ],
    }
}

async fn run(t: &MemoryTarget, nodes: &[DeployNode], resume: JournalState) -> DeployReport {
    let session = Session {
        resume,
        ..Session::quiet()
    };
    deploy(t, nodes, &options(), &session).await
}

fn outcome<'a>(r: &'a DeployReport, table: &str) -> &'a Outcome {
    &r.nodes
        .iter()
        .find(|n| n.table_name == table)
        .unwrap()
        .outcome
}

/// How the parent comes to be kept: skipped by the plan, or done by the interrupted run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kept {
    PlanSkip,
    JournalDone,
}

/// `src` kept (by the plan or the journal) with its DML in `phase` (then `then`), `x` created on it.
async fn kept_parent(
    kept: Kept,
    phase: Option<Phase>,
    then: &[Phase],
) -> (MemoryTarget, DeployReport) {
    let t = MemoryTarget::new();
    t.seed("ddl-src", &ddl_sql("src"), Phase::Completed, &[]);
    if let Some(p) = phase {
        // Phases advance on reads: the first read answers `p` itself.
        let reads: Vec<Phase> = std::iter::once(p.clone())
            .chain(then.iter().cloned())
            .collect();
        t.seed("dml-src", &dml_sql("src"), p, &reads);
    }
    let mut resume = JournalState::default();
    let parent = match kept {
        Kept::PlanSkip => {
            let mut n = node("src", &[], Action::Skip);
            n.reason = "in scope; statement is PENDING".into();
            n
        }
        Kept::JournalDone => {
            resume.done.insert("src".into());
            resume
                .ours
                .extend(["ddl-src".to_string(), "dml-src".to_string()]);
            node("src", &[], Action::Create)
        }
    };
    let nodes = vec![parent, node("x", &["src"], Action::Create)];
    let r = run(&t, &nodes, resume).await;
    (t, r)
}

/// The bug of #15: after a SIGINT, `--resume` skipped a PENDING parent ("src_x skip — in scope;
/// statement is PENDING"), created its child, and the parent stayed PENDING. The child must start only
/// once the parent reads RUNNING.
#[tokio::test(start_paused = true)]
async fn a_pending_parent_is_awaited_before_its_child_starts() {
    for kept in [Kept::PlanSkip, Kept::JournalDone] {
        let (t, r) = kept_parent(
            kept,
            Some(Phase::Pending),
            &[Phase::Pending, Phase::Pending, Phase::Running],
        )
        .await;
        assert!(r.success(), "{kept:?}: {r:#?}");
        let parent = &r.nodes[0];
        assert!(
            matches!(parent.outcome, Outcome::Skipped(_)),
            "{kept:?}: {r:#?}"
        );
        assert_eq!(parent.statements.len(), 1, "{kept:?}");
        assert_eq!(parent.statements[0].action, StatementAction::Awaited);
        assert_eq!(parent.statements[0].phase.as_deref(), Some("RUNNING"));
        let running = t
            .first(|c| *c == Call::Get("dml-src".into(), Some(Phase::Running)))
            .expect("parent seen RUNNING");
        let child = t
            .first(|c| matches!(c, Call::Create(n) if n.ends_with("-x")))
            .expect("child created");
        assert!(running < child, "{kept:?}: {:?}", t.log());
        assert_eq!(t.created(), vec!["ddl-x", "dml-x"], "{kept:?}");
        assert_eq!(t.phase("dml-src"), Some(Phase::Running));
    }
}

/// A kept parent is read only when a child runs on it: plan skips all the way down cost no request.
#[tokio::test(start_paused = true)]
async fn plan_skips_that_feed_nothing_are_not_read() {
    let t = MemoryTarget::new();
    t.seed("dml-a", &dml_sql("a"), Phase::Pending, &[Phase::Pending]);
    let mut nodes = vec![
        node("a", &[], Action::Skip),
        node("b", &["a"], Action::Skip),
    ];
    let r = run(&t, &nodes, JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert!(t.log().is_empty(), "{:?}", t.log());
    // With a child that runs, the PENDING parent is read (and awaited).
    nodes[1].action = Action::Create;
    t.seed(
        "dml-a",
        &dml_sql("a"),
        Phase::Pending,
        &[Phase::Pending, Phase::Running],
    );
    let r = run(&t, &nodes, JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(r.nodes[0].statements[0].action, StatementAction::Awaited);
}

/// Every phase the journal (or the plan) and the target can disagree on, for a parent that is kept:
/// the child never starts while the parent is PENDING; a parent that fails while awaited skips the
/// child; a journal entry the target contradicts is not trusted (the parent runs again); a plan skip
/// of a statement that is not starting stands (the plan decided on it).
#[tokio::test(start_paused = true)]
async fn every_phase_a_kept_parent_can_be_in() {
    use Phase::*;
    /// What should happen to the parent.
    #[derive(Debug, PartialEq)]
    enum Want {
        /// Skipped without any call but reads.
        Skipped,
        /// Skipped after waiting for it.
        Awaited,
        /// Failed (and the child skipped).
        Failed,
        /// Ran again: these calls on dml-src.
        Ran(&'static [&'static str]),
    }
    let cases: Vec<(Option<Phase>, Vec<Phase>, Kept, Want)> = vec![
        (Some(Running), vec![], Kept::PlanSkip, Want::Skipped),
        (Some(Running), vec![], Kept::JournalDone, Want::Skipped),
        (Some(Completed), vec![], Kept::PlanSkip, Want::Skipped),
        (Some(Completed), vec![], Kept::JournalDone, Want::Skipped),
        (Some(Pending), vec![Running], Kept::PlanSkip, Want::Awaited),
        (
            Some(Pending),
            vec![Running],
            Kept::JournalDone,
            Want::Awaited,
        ),
        (Some(Pending), vec![Failed], Kept::PlanSkip, Want::Failed),
        (Some(Pending), vec![Failed], Kept::JournalDone, Want::Failed),
        // Stuck PENDING: the statement timeout ends the wait, the child never starts.
        (Some(Pending), vec![], Kept::PlanSkip, Want::Failed),
        (Some(Pending), vec![], Kept::JournalDone, Want::Failed),
        (None, vec![], Kept::PlanSkip, Want::Skipped),
        (None, vec![], Kept::JournalDone, Want::Ran(&["create"])),
        (Some(Failed), vec![], Kept::PlanSkip, Want::Skipped),
        (
            Some(Failed),
            vec![],
            Kept::JournalDone,
            Want::Ran(&["delete", "create"]),
        ),
        (Some(Stopped), vec![], Kept::PlanSkip, Want::Skipped),
        (
            Some(Stopped),
            vec![],
            Kept::JournalDone,
            Want::Ran(&["resume"]),
        ),
        (Some(Degraded), vec![Running], Kept::PlanSkip, Want::Skipped),
        (
            Some(Degraded),
            vec![Running],
            Kept::JournalDone,
            Want::Ran(&[]),
        ),
    ];
    for (phase, then, kept, want) in cases {
        let what = format!("{phase:?} then {then:?}, {kept:?}");
        let (t, r) = kept_parent(kept, phase, &then).await;
        let log = t.log();
        // Never a child statement while the parent last read PENDING.
        let child = log
            .iter()
            .position(|c| matches!(c, Call::Create(n) if n.ends_with("-x")));
        if let Some(child) = child {
            let last_parent_read = log[..child]
                .iter()
                .rev()
                .find_map(|c| match c {
                    Call::Get(n, p) if n == "dml-src" => Some(p.clone()),
                    _ => None,
                })
                .flatten();
            assert_ne!(last_parent_read, Some(Pending), "{what}: {log:?}");
        }
        let calls_on_parent: Vec<&str> = log
            .iter()
            .filter_map(|c| match c {
                Call::Create(n) if n == "dml-src" => Some("create"),
                Call::Delete(n) if n == "dml-src" => Some("delete"),
                Call::Stop(n) if n == "dml-src" => Some("stop"),
                Call::Resume(n) if n == "dml-src" => Some("resume"),
                _ => None,
            })
            .collect();
        match want {
            Want::Skipped => {
                assert!(
                    matches!(outcome(&r, "src"), Outcome::Skipped(_)),
                    "{what}: {r:#?}"
                );
                assert!(r.nodes[0].statements.is_empty(), "{what}");
                assert!(calls_on_parent.is_empty(), "{what}: {log:?}");
                assert_eq!(outcome(&r, "x"), &Outcome::Done, "{what}");
            }
            Want::Awaited => {
                assert!(matches!(outcome(&r, "src"), Outcome::Skipped(_)), "{what}");
                assert_eq!(r.nodes[0].statements[0].action, StatementAction::Awaited);
                assert!(calls_on_parent.is_empty(), "{what}: {log:?}");
                assert_eq!(outcome(&r, "x"), &Outcome::Done, "{what}");
            }
            Want::Failed => {
                assert!(
                    matches!(outcome(&r, "src"), Outcome::Failed(_)),
                    "{what}: {r:#?}"
                );
                assert!(
                    matches!(outcome(&r, "x"), Outcome::Skipped(why) if why == "parent src failed"),
                    "{what}: {r:#?}"
                );
                assert!(t.created().is_empty(), "{what}: {log:?}");
            }
            Want::Ran(calls) => {
                assert_eq!(outcome(&r, "src"), &Outcome::Done, "{what}: {r:#?}");
                assert_eq!(calls_on_parent, calls, "{what}: {log:?}");
                assert_eq!(outcome(&r, "x"), &Outcome::Done, "{what}");
                assert_eq!(t.phase("dml-src"), Some(Running), "{what}");
            }
        }
    }
}

/// The rate limiting of #15: `GET` of one statement answered 429, 503, 429, 429, 429, 429 within
/// 10–15 s and the node failed with "HTTP 429" (its descendants skipped). Retried by time, it succeeds.
#[tokio::test(start_paused = true)]
async fn a_burst_of_429_and_503_is_retried_by_time_not_by_count() {
    let t = MemoryTarget::new();
    for (status, after) in [
        (429, Some(1)),
        (503, None),
        (429, Some(1)),
        (429, Some(2)),
        (429, None),
        (429, Some(1)),
    ] {
        t.fail(Op::Get, Some("dml-a"), http(status, after), 1);
    }
    // More than the HTTP policy's 6 attempts, on a create too.
    t.fail(Op::Create, Some("ddl-b"), http(429, Some(1)), 9);
    let nodes = vec![
        node("a", &[], Action::Create),
        node("b", &["a"], Action::Create),
    ];
    let start = Instant::now();
    let r = run(&t, &nodes, JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(
        t.created(),
        vec!["ddl-a", "dml-a", "ddl-b", "dml-b"],
        "created once each"
    );
    assert_eq!(t.creates().iter().filter(|n| *n == "ddl-b").count(), 10);
    assert!(Instant::now() - start < TIMEOUT);
}

/// Transient errors that last past the statement timeout fail the node with a summary of what was
/// retried; its descendants are skipped, independent branches go on.
#[tokio::test(start_paused = true)]
async fn transient_errors_past_the_timeout_fail_with_a_summary() {
    let t = MemoryTarget::new();
    t.fail(Op::Get, Some("dml-a"), http(503, None), usize::MAX);
    let nodes = vec![
        node("a", &[], Action::Create),
        node("b", &["a"], Action::Create),
        node("c", &[], Action::Create),
    ];
    let start = Instant::now();
    let r = run(&t, &nodes, JournalState::default()).await;
    let Outcome::Failed(why) = outcome(&r, "a") else {
        panic!("{r:#?}")
    };
    assert!(
        why.starts_with("dml-a: GET kept failing for 600s, retried ")
            && why.contains("(HTTP 503 ×")
            && why.ends_with("; last error: GET /statements/x: HTTP 503: (empty body)"),
        "{why}"
    );
    let elapsed = Instant::now() - start;
    assert!(elapsed >= TIMEOUT && elapsed < TIMEOUT * 2, "{elapsed:?}");
    assert!(
        matches!(outcome(&r, "b"), Outcome::Skipped(w) if w == "parent a failed"),
        "{r:#?}"
    );
    assert_eq!(outcome(&r, "c"), &Outcome::Done);
    // A permanent error is not retried.
    let t = MemoryTarget::new();
    t.fail(Op::Get, Some("ddl-a"), http(403, None), 1);
    let r = run(&t, &nodes[..1], JournalState::default()).await;
    assert!(matches!(outcome(&r, "a"), Outcome::Failed(w) if w.contains("HTTP 403")));
    assert_eq!(t.log().len(), 1, "{:?}", t.log());
}

/// What the executor does for each decision, as seen on the target.
#[tokio::test(start_paused = true)]
async fn each_decision_does_what_it_says() {
    // Adopt: same SQL, live.
    let t = MemoryTarget::new();
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
    let r = run(
        &t,
        &[node("a", &[], Action::Create)],
        JournalState::default(),
    )
    .await;
    let acts: Vec<StatementAction> = r.nodes[0].statements.iter().map(|s| s.action).collect();
    assert_eq!(acts, [StatementAction::Adopted, StatementAction::Adopted]);
    assert!(t.creates().is_empty() && t.deletes().is_empty());

    // Restart of a stateful DML: validated, deleted, created; the unchanged DDL is kept.
    let t = MemoryTarget::new();
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
    let r = run(
        &t,
        &[node("a", &[], Action::Restart)],
        JournalState::default(),
    )
    .await;
    let acts: Vec<StatementAction> = r.nodes[0].statements.iter().map(|s| s.action).collect();
    assert_eq!(acts, [StatementAction::Kept, StatementAction::Recreated]);
    let writes: Vec<Call> = t
        .log()
        .into_iter()
        .filter(|c| !matches!(c, Call::Get(..)))
        .collect();
    assert_eq!(
        writes,
        [
            Call::Validate("dml-a".into()),
            Call::Delete("dml-a".into()),
            Call::Create("dml-a".into())
        ]
    );

    // A stateless restart with new properties on a target without carry-over: stop, resume.
    let t = MemoryTarget::without_carry_over();
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
    let mut a = node("a", &[], Action::Restart);
    a.stateless = true;
    a.steps[1]
        .spec
        .properties
        .insert("sql.state-ttl".into(), "1 h".into());
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Resumed);
    assert!(t.creates().is_empty() && t.deletes().is_empty());

    // Refused: a changed DDL, and a changed DML the plan does not restart; nothing is touched.
    for (name, sql, expect) in [
        (
            "ddl-a",
            "CREATE TABLE a (id BIGINT)",
            "would need DROP TABLE",
        ),
        (
            "dml-a",
            "INSERT INTO a SELECT 2 FROM src",
            "the plan does not restart it",
        ),
    ] {
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
        let mut a = node("a", &[], Action::Create);
        let i = usize::from(name == "dml-a");
        a.steps[i].spec.sql = sql.into();
        let r = run(&t, &[a], JournalState::default()).await;
        assert!(
            matches!(outcome(&r, "a"), Outcome::Failed(w) if w.contains(expect)),
            "{r:#?}"
        );
        assert_eq!(r.nodes[0].statements[i].action, StatementAction::Refused);
        assert!(t.creates().is_empty() && t.deletes().is_empty());
    }
    // The decision type is public: a dry-run or a test can ask for it without a target.
    let plan = flinkpipe::deploy::executor::decide::decide(
        None,
        &node("a", &[], Action::Create).steps[0],
        &node("a", &[], Action::Create),
        &options(),
        Default::default(),
    );
    assert_eq!(plan, StepPlan::Create);
}

/// The retries of a step never send a second POST without a GET between: a create whose answer was
/// lost (the statement exists) is adopted, not created again.
#[tokio::test(start_paused = true)]
async fn a_create_with_a_lost_answer_is_adopted_not_repeated() {
    let t = MemoryTarget::new();
    t.lose_create_answers("dml-a", 1);
    t.fail(Op::Get, Some("dml-a"), http(503, None), 2);
    let r = run(
        &t,
        &[node("a", &[], Action::Create)],
        JournalState::default(),
    )
    .await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(t.created(), vec!["ddl-a", "dml-a"], "{:?}", t.log());
    assert_eq!(
        t.creates(),
        vec!["ddl-a", "dml-a"],
        "one POST each: {:?}",
        t.log()
    );
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Adopted);
}

/// A node the plan keeps carries the statements it keeps, so that the executor can wait for them
/// while they are PENDING (before #15 it carried none and released its children at once).
#[test]
fn a_node_the_plan_keeps_carries_the_statements_to_await() {
    use flinkpipe::plan::{self, Scope, StatementNaming, StatementStatus};
    let (_tmp, pipelines) = crate::support::our_fixture();
    let cfg = flinkpipe::config::Config::default();
    let project = flinkpipe::project::load(
        &pipelines,
        &cfg,
        flinkpipe::project::LoadOptions {
            allow_unknown: true,
        },
    )
    .unwrap();
    let naming = StatementNaming::from_config(&cfg);
    let scope = Scope::Product("sales".into());
    let absent = plan::build_plan(
        &project,
        &naming,
        &StatementStatus::default(),
        &scope,
        &Default::default(),
    )
    .unwrap();
    // Every statement of the plan still starting: the plan keeps them all.
    let status = StatementStatus {
        phases: absent
            .nodes
            .iter()
            .flat_map(|n| [n.ddl_statement_name.clone(), n.dml_statement_name.clone()])
            .flatten()
            .map(|n| (n, "PENDING".to_string()))
            .collect(),
    };
    let plan = plan::build_plan(&project, &naming, &status, &scope, &Default::default()).unwrap();
    let nodes = flinkpipe::deploy::deploy_nodes(
        &project,
        &plan,
        &flinkpipe::deploy::env_sql::EnvSql::none(),
    )
    .unwrap();
    let mut kept = 0;
    for (p, n) in plan.nodes.iter().zip(&nodes) {
        if p.action != Action::Skip {
            continue;
        }
        let names: Vec<&str> = n.steps.iter().map(|s| s.spec.name.as_str()).collect();
        if let Some(dml) = &p.dml_statement_name
            && project.inventory.tables[&p.table_name].written_by.is_none()
        {
            assert!(names.contains(&dml.as_str()), "{}: {names:?}", p.table_name);
            kept += 1;
        }
    }
    assert!(kept > 0, "{:?}", plan.nodes);
}
