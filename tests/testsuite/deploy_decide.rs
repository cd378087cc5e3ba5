//! The executor against the in-memory target (`memory_target`), on tokio's paused clock: what it
//! decides and does for each state a statement can be in, when a parent counts as done (`--resume`
//! and plan skips: PENDING is not done), and transient errors retried for as long as the statement
//! timeout allows. The wire-level behaviour is tested against `fake_confluent` in `deploy_executor`.

use crate::memory_target::{Call, MemoryTarget, Op, http};
use flinkpipe::deploy::executor::{
    DeployOptions, DeployReport, Outcome, Session, Skip, StatementAction, StepError, StepPlan,
};
use flinkpipe::deploy::journal::JournalState;
use flinkpipe::deploy::{DeployNode, Step, deploy};
use flinkpipe::plan::Action;
use flinkpipe::target::TargetError;
use flinkpipe::target::{Phase, StatementKind, StatementSpec};
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
        file: Default::default(),
        line: 0,
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
        kept_live: false,
        kept_pending: false,
        upsert_sink: false,
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

/// The typed error a failed node ended with (panics when it did not fail on a statement step).
fn step_error<'a>(r: &'a DeployReport, table: &str) -> &'a StepError {
    match outcome(r, table) {
        Outcome::Failed(f) => f
            .step_error()
            .unwrap_or_else(|| panic!("{table}: {f}: not a step failure")),
        o => panic!("{table}: {o:?}: not failed"),
    }
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

impl Kept {
    /// Whether `o` is the skip this kind of keeping gives: the plan's reason, or the journal's.
    fn skipped(self, o: &Outcome) -> bool {
        match self {
            Kept::PlanSkip => {
                o == &Outcome::Skipped(Skip::Plan("in scope; statement is PENDING".into()))
            }
            Kept::JournalDone => o == &Outcome::Skipped(Skip::Journal),
        }
    }
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
        assert!(kept.skipped(&parent.outcome), "{kept:?}: {r:#?}");
        assert_eq!(parent.statements.len(), 1, "{kept:?}");
        assert_eq!(parent.statements[0].action, StatementAction::Awaited);
        assert_eq!(
            parent.statements[0].phase,
            Some(flinkpipe::target::Phase::Running)
        );
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
                assert!(kept.skipped(outcome(&r, "src")), "{what}: {r:#?}");
                assert!(r.nodes[0].statements.is_empty(), "{what}");
                assert!(calls_on_parent.is_empty(), "{what}: {log:?}");
                assert_eq!(outcome(&r, "x"), &Outcome::Done, "{what}");
            }
            Want::Awaited => {
                assert!(kept.skipped(outcome(&r, "src")), "{what}: {r:#?}");
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
                    matches!(outcome(&r, "x"), Outcome::Skipped(Skip::ParentFailed { parent }) if parent == "src"),
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
    assert!(
        matches!(step_error(&r, "a"), StepError::GaveUp { statement, what, .. } if statement == "dml-a" && what == "GET"),
        "{r:#?}"
    );
    // The rendered reason (the one Display) names the call, the retries and the last error.
    let Outcome::Failed(why) = outcome(&r, "a") else {
        panic!("{r:#?}")
    };
    let why = why.to_string();
    assert!(
        why.starts_with("dml-a: GET kept failing for 600s, retried ")
            && why.contains("(HTTP 503 ×")
            && why.ends_with("; last error: GET /statements/x: HTTP 503: (empty body)"),
        "{why}"
    );
    let elapsed = Instant::now() - start;
    assert!(elapsed >= TIMEOUT && elapsed < TIMEOUT * 2, "{elapsed:?}");
    assert!(
        matches!(outcome(&r, "b"), Outcome::Skipped(Skip::ParentFailed { parent }) if parent == "a"),
        "{r:#?}"
    );
    assert_eq!(outcome(&r, "c"), &Outcome::Done);
    // A permanent error is not retried.
    let t = MemoryTarget::new();
    t.fail(Op::Get, Some("ddl-a"), http(403, None), 1);
    let r = run(&t, &nodes[..1], JournalState::default()).await;
    assert!(
        matches!(
            step_error(&r, "a"),
            StepError::Read {
                source: TargetError::Http { status: 403, .. },
                ..
            }
        ),
        "{r:#?}"
    );
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
        ("ddl-a", "CREATE TABLE a (id BIGINT)", "ddl_changed"),
        ("dml-a", "INSERT INTO a SELECT 2 FROM src", "sql_changed"),
    ] {
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
        let mut a = node("a", &[], Action::Create);
        let i = usize::from(name == "dml-a");
        a.steps[i].spec.sql = sql.into();
        let r = run(&t, &[a], JournalState::default()).await;
        assert!(
            match step_error(&r, "a") {
                StepError::DdlChanged { statement } => expect == "ddl_changed" && statement == name,
                StepError::SqlChanged { statement, .. } =>
                    expect == "sql_changed" && statement == name,
                _ => false,
            },
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
            .map(|n| (n, flinkpipe::plan::Phase::Pending))
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

/// Every phase a statement about to be replaced can be in (the API calls the list extensible, so
/// unknown ones too): the new text is checked first unless the old statement has ended (FAILED,
/// STOPPED, COMPLETED), and a text that does not validate leaves it alone — nothing deleted, nothing
/// created. (DELETING is left out: the in-memory target answers it absent on the next read.)
#[tokio::test(start_paused = true)]
async fn a_replacement_is_checked_first_in_every_phase_that_may_still_run() {
    use flinkpipe::target::TargetError;
    let phases = [
        Phase::Pending,
        Phase::Running,
        Phase::Completed,
        Phase::Degraded,
        Phase::Failing,
        Phase::Failed,
        Phase::Stopping,
        Phase::Stopped,
        Phase::Unknown("RESTARTING".into()),
        Phase::Unknown("SUSPENDED".into()),
    ];
    for phase in phases {
        let ended = matches!(phase, Phase::Failed | Phase::Stopped | Phase::Completed);
        assert_eq!(
            flinkpipe::deploy::executor::decide::must_validate(&phase),
            !ended,
            "{phase}"
        );
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed(
            "dml-a",
            "INSERT INTO a SELECT 0 FROM src",
            phase.clone(),
            &[],
        );
        t.fail(
            Op::Validate,
            Some("dml-a"),
            TargetError::Invalid("Object 'src' not found".into()),
            1,
        );
        // The state loss is accepted: only the validation decides.
        let session = Session {
            resume: JournalState::default(),
            ..Session::quiet()
        };
        let opts = DeployOptions {
            allow_state_loss: vec!["a".into()],
            ..options()
        };
        let r = deploy(&t, &[node("a", &[], Action::Restart)], &opts, &session).await;
        let validated = t.log().contains(&Call::Validate("dml-a".into()));
        assert_eq!(validated, !ended, "{phase}: {:?}", t.log());
        if ended {
            assert_eq!(t.deletes(), ["dml-a"], "{phase}");
            assert_eq!(t.created(), ["dml-a"], "{phase}");
        } else {
            assert!(
                t.deletes().is_empty() && t.creates().is_empty(),
                "{phase}: {:?}",
                t.log()
            );
            assert!(
                matches!(step_error(&r, "a"), StepError::Invalid { cause, .. } if cause.contains("Object 'src' not found")),
                "{phase}: {r:#?}"
            );
            assert_eq!(r.nodes[0].statements[1].action, StatementAction::Refused);
        }
    }
}

/// The position of the first call matching `c` in the log.
fn at(t: &MemoryTarget, c: &Call) -> usize {
    t.log()
        .iter()
        .position(|x| x == c)
        .unwrap_or_else(|| panic!("{c:?} not in {:?}", t.log()))
}

/// A carry-over never stops the running statement on the strength of a temporary statement (`-co`)
/// it has not checked: the new text passes the dry run first; a `-co` left by an earlier run that is
/// FAILED, has older SQL or other properties is deleted and created again before the stop; a live,
/// up-to-date one is reused; a text that does not validate stops, deletes and creates nothing.
#[tokio::test(start_paused = true)]
async fn a_carry_over_checks_its_temporary_statement_before_any_stop() {
    use flinkpipe::target::TargetError;
    const FROM: &str = "sql.tables.initial-offset-from";
    let restart = || {
        let mut a = node("a", &[], Action::Restart);
        a.stateless = true;
        a.steps[1]
            .spec
            .properties
            .insert("sql.state-ttl".into(), "1 h".into());
        a
    };
    let target = || {
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
        t
    };
    let stop_a = Call::Stop("dml-a".into());
    // Leftovers that must be replaced: FAILED; live with older SQL; live with older properties.
    for (phase, sql, props) in [
        (
            Phase::Failed,
            dml_sql("a"),
            vec![(FROM, "dml-a"), ("sql.state-ttl", "1 h")],
        ),
        (
            Phase::Pending,
            "INSERT INTO a SELECT 0 FROM src".to_string(),
            vec![(FROM, "dml-a"), ("sql.state-ttl", "1 h")],
        ),
        (Phase::Pending, dml_sql("a"), vec![(FROM, "dml-a")]),
    ] {
        let t = target();
        t.seed("dml-a-co", &sql, phase.clone(), &[]);
        t.set_properties("dml-a-co", &props);
        let r = run(&t, &[restart()], JournalState::default()).await;
        assert!(r.success(), "{phase} {sql} {props:?}: {r:#?}");
        assert_eq!(
            r.nodes[0].statements[1].action,
            StatementAction::CarriedOver
        );
        let validate = at(&t, &Call::Validate("dml-a".into()));
        let delete_co = at(&t, &Call::Delete("dml-a-co".into()));
        let create_co = at(&t, &Call::Create("dml-a-co".into()));
        let stop = at(&t, &stop_a);
        assert!(
            validate < delete_co && delete_co < create_co && create_co < stop,
            "{phase}: {:?}",
            t.log()
        );
        let end = t.state("dml-a").unwrap();
        assert_eq!(end.phase, Phase::Running);
        assert_eq!(end.properties["sql.state-ttl"], "1 h");
        assert_eq!(end.properties[FROM], "dml-a-co");
        assert!(t.state("dml-a-co").is_none());
    }
    // A live, up-to-date leftover is reused: checked, not replaced.
    let t = target();
    t.seed("dml-a-co", &dml_sql("a"), Phase::Pending, &[Phase::Running]);
    t.set_properties("dml-a-co", &[(FROM, "dml-a"), ("sql.state-ttl", "1 h")]);
    let r = run(&t, &[restart()], JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert!(at(&t, &Call::Validate("dml-a".into())) < at(&t, &stop_a));
    assert!(
        !t.creates().contains(&"dml-a-co".to_string()),
        "{:?}",
        t.log()
    );
    // A new text that does not validate: nothing stopped, deleted or created.
    for leftover in [None, Some(Phase::Failed)] {
        let t = target();
        if let Some(p) = &leftover {
            t.seed(
                "dml-a-co",
                "INSERT INTO a SELECT 0 FROM src",
                p.clone(),
                &[],
            );
            t.set_properties("dml-a-co", &[(FROM, "dml-a")]);
        }
        t.fail(
            Op::Validate,
            Some("dml-a"),
            TargetError::Invalid("Object 'src' not found".into()),
            1,
        );
        let r = run(&t, &[restart()], JournalState::default()).await;
        assert!(
            matches!(step_error(&r, "a"), StepError::Invalid { .. }),
            "{leftover:?}: {r:#?}"
        );
        let writes: Vec<Call> = t
            .log()
            .into_iter()
            .filter(|c| !matches!(c, Call::Get(..) | Call::Validate(_)))
            .collect();
        assert!(writes.is_empty(), "{leftover:?}: {writes:?}");
        assert_eq!(t.phase("dml-a"), Some(Phase::Running));
    }
}

/// `--resume` after a carry-over was interrupted between its handovers (`<name>` gone, `-co` running
/// with the offsets): the new text is checked before `<name>` is created again, and a text that does
/// not validate leaves `-co` running.
#[tokio::test(start_paused = true)]
async fn finishing_an_interrupted_carry_over_checks_the_new_text_first() {
    use flinkpipe::target::TargetError;
    for valid in [true, false] {
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a-co", &dml_sql("a"), Phase::Running, &[]);
        t.set_properties("dml-a-co", &[("sql.tables.initial-offset-from", "dml-a")]);
        if !valid {
            t.fail(
                Op::Validate,
                Some("dml-a"),
                TargetError::Invalid("Object 'src' not found".into()),
                1,
            );
        }
        let mut resume = JournalState::default();
        resume
            .ours
            .extend(["ddl-a".to_string(), "dml-a-co".to_string()]);
        let mut a = node("a", &[], Action::Restart);
        a.stateless = true;
        let r = run(&t, &[a], resume).await;
        let validate = at(&t, &Call::Validate("dml-a".into()));
        if valid {
            assert!(r.success(), "{r:#?}");
            assert!(validate < at(&t, &Call::Create("dml-a".into())));
            assert_eq!(t.phase("dml-a"), Some(Phase::Running));
        } else {
            assert!(matches!(outcome(&r, "a"), Outcome::Failed(_)), "{r:#?}");
            assert!(!t.creates().contains(&"dml-a".to_string()), "{:?}", t.log());
            assert!(!t.log().contains(&Call::Stop("dml-a-co".into())));
            assert_eq!(t.phase("dml-a-co"), Some(Phase::Running));
        }
    }
}

/// A target that cannot check a job's new text (the SQL Gateway for a text its EXPLAIN does not
/// take) never replaces a running job with it: the node fails saying so, nothing is deleted.
#[tokio::test(start_paused = true)]
async fn a_job_that_cannot_be_checked_does_not_replace_a_running_one() {
    let t = MemoryTarget::without_carry_over();
    t.cannot_check_dml();
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed(
        "dml-a",
        "INSERT INTO a SELECT 0 FROM src",
        Phase::Running,
        &[],
    );
    let a = DeployNode {
        stateless: true,
        ..node("a", &[], Action::Restart)
    };
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(
        matches!(step_error(&r, "a"), StepError::Unchecked { .. }),
        "{r:#?}"
    );
    assert!(
        t.deletes().is_empty() && t.creates().is_empty(),
        "{:?}",
        t.log()
    );
    // Nothing runs to protect: a FAILED one is replaced without a check.
    let t = MemoryTarget::without_carry_over();
    t.cannot_check_dml();
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed(
        "dml-a",
        "INSERT INTO a SELECT 0 FROM src",
        Phase::Failed,
        &[],
    );
    let r = run(
        &t,
        &[node("a", &[], Action::Restart)],
        JournalState::default(),
    )
    .await;
    assert!(r.success(), "{r:#?}");
}

/// `--allow-drop` on a changed DDL: the new DDL is checked before anything is dropped, and the DROP
/// names the table of the text actually sent (after the environment's rewrite rules: here qualified
/// and renamed), not the plan's table name. A DDL the server rejects drops nothing and fails the node
/// with the server's message.
#[tokio::test(start_paused = true)]
async fn allow_drop_checks_the_new_ddl_and_drops_what_it_recreates() {
    use flinkpipe::target::TargetError;
    let options = DeployOptions {
        allow_drop: true,
        ..options()
    };
    let sent = "CREATE TABLE `prod_cat`.`sales`.`a_v2` (id BIGINT)";
    for valid in [true, false] {
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
        if !valid {
            t.fail(
                Op::Validate,
                Some("ddl-a"),
                TargetError::Invalid("Unknown type 'BIGINTT'".into()),
                1,
            );
        }
        let mut a = node("a", &[], Action::Restart);
        a.steps[0].spec.sql = sent.into();
        let r = deploy(&t, &[a], &options, &Session::quiet()).await;
        if valid {
            assert_eq!(
                r.nodes[0].statements[0].action,
                StatementAction::Recreated,
                "{r:#?}"
            );
            let validate = at(&t, &Call::Validate("ddl-a".into()));
            let drop = at(&t, &Call::Create("ddl-a-drop".into()));
            assert!(validate < drop, "{:?}", t.log());
            let sqls = t.created_sql();
            let (_, drop_sql) = sqls.iter().find(|(n, _)| n == "ddl-a-drop").unwrap();
            assert_eq!(drop_sql, "DROP TABLE IF EXISTS `prod_cat`.`sales`.`a_v2`");
        } else {
            assert!(
                matches!(step_error(&r, "a"), StepError::InvalidDdl { cause, .. } if cause.contains("Unknown type 'BIGINTT'")),
                "{r:#?}"
            );
            assert!(
                t.creates().is_empty() && t.deletes().is_empty(),
                "{:?}",
                t.log()
            );
        }
    }
}

/// A statement whose compute pool changed (`--compute-pool-id`, `flinkpipe.compute_pools`) is a
/// changed statement: a restart recreates it in the new pool after checking it (or carries its
/// offsets over into the new pool when stateless); without a restart it is left where it runs and the
/// node fails saying so, never adopted silently in the old pool. The capacity estimate counts it in
/// the new pool.
#[tokio::test(start_paused = true)]
async fn a_statement_moved_to_another_pool_is_recreated_there_or_reported() {
    let in_pool = |action: Action, stateless: bool| {
        let mut a = node("a", &[], action);
        a.stateless = stateless;
        for s in &mut a.steps {
            s.spec.compute_pool = Some("lfcp-new".into());
        }
        a
    };
    let target = || {
        let t = MemoryTarget::new();
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a", &dml_sql("a"), Phase::Running, &[]);
        t.set_pool("dml-a", "lfcp-old");
        t
    };
    // A stateful restart: checked, deleted, created in the new pool.
    let t = target();
    let r = run(
        &t,
        &[in_pool(Action::Restart, false)],
        JournalState::default(),
    )
    .await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Recreated);
    assert!(at(&t, &Call::Validate("dml-a".into())) < at(&t, &Call::Delete("dml-a".into())));
    assert_eq!(
        t.state("dml-a").unwrap().meta.compute_pool_id.as_deref(),
        Some("lfcp-new")
    );
    // A stateless restart: offsets carried over into the new pool.
    let t = target();
    let r = run(
        &t,
        &[in_pool(Action::Restart, true)],
        JournalState::default(),
    )
    .await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(
        r.nodes[0].statements[1].action,
        StatementAction::CarriedOver
    );
    assert_eq!(
        t.state("dml-a").unwrap().meta.compute_pool_id.as_deref(),
        Some("lfcp-new")
    );
    // Not restarted: left alone, the node fails naming both pools.
    let t = target();
    let r = run(
        &t,
        &[in_pool(Action::Create, false)],
        JournalState::default(),
    )
    .await;
    assert!(
        matches!(step_error(&r, "a"), StepError::PoolChanged { from, to, .. } if from == "lfcp-old" && to == "lfcp-new"),
        "{r:#?}"
    );
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Refused);
    assert!(t.deletes().is_empty() && t.creates().is_empty());
    // Capacity: the recreated statement starts in the new pool.
    let mut live = BTreeMap::new();
    let mut old = flinkpipe::target::StatementState {
        name: "dml-a".into(),
        phase: Phase::Running,
        detail: String::new(),
        sql: dml_sql("a"),
        properties: BTreeMap::new(),
        stopped: false,
        meta: Default::default(),
    };
    old.meta.compute_pool_id = Some("lfcp-old".into());
    live.insert("dml-a".to_string(), old.clone());
    let starts = flinkpipe::ops::capacity::starts_by_pool(
        &[in_pool(Action::Restart, false)],
        &live,
        &options(),
        true,
    );
    assert_eq!(
        starts.get(&Some("lfcp-new".to_string())),
        Some(&vec!["dml-a".to_string()]),
        "{starts:?}"
    );
    // In the same pool, replacing it in place needs nothing more.
    old.meta.compute_pool_id = Some("lfcp-new".into());
    live.insert("dml-a".to_string(), old);
    let mut n = in_pool(Action::Restart, false);
    n.steps[1].spec.sql = "INSERT INTO a SELECT 1 FROM src".into();
    let starts = flinkpipe::ops::capacity::starts_by_pool(&[n], &live, &options(), true);
    assert!(starts.is_empty(), "{starts:?}");
}

/// A job the JobManager lists a moment after its submission (a loaded Flink cluster, a materialized
/// table's refresh job found by its tags) is waited for, not reported as deleted; one that stays
/// absent past the visibility grace is reported as gone, and its children are not started.
#[tokio::test(start_paused = true)]
async fn a_statement_listed_late_is_waited_for_and_one_never_listed_is_reported_gone() {
    for (reads, listed) in [(1, true), (5, true), (u32::MAX, false)] {
        let t = MemoryTarget::new();
        t.listed_late("dml-a", reads);
        let nodes = vec![
            node("a", &[], Action::Create),
            node("b", &["a"], Action::Create),
        ];
        let r = run(&t, &nodes, JournalState::default()).await;
        if listed {
            assert!(r.success(), "absent for {reads} reads: {r:#?}");
            assert_eq!(t.state("dml-a").unwrap().phase, Phase::Running);
            assert_eq!(t.created(), ["ddl-a", "dml-a", "ddl-b", "dml-b"]);
        } else {
            assert!(!r.success());
            match outcome(&r, "a") {
                Outcome::Failed(f) => assert!(
                    matches!(f.step_error(), Some(StepError::Disappeared { statement }) if statement == "dml-a"),
                    "{f}"
                ),
                o => panic!("{o:?}"),
            }
            assert!(
                !t.created().contains(&"dml-b".to_string()),
                "{:?}",
                t.created()
            );
        }
    }
}

/// A target with savepoints (as the SQL Gateway) where table `a` is declared and its job runs
/// `running`.
fn savepoint_target_running(running: &str) -> MemoryTarget {
    let t = MemoryTarget::with_savepoints();
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed("dml-a", running, Phase::Running, &[]);
    t
}

/// Table `a` restarted with the DML `sql`.
fn a_restarted_with(sql: &str) -> DeployNode {
    let mut a = node("a", &[], Action::Restart);
    a.steps[1].spec.sql = sql.into();
    a
}

/// On a target with savepoints (as the SQL Gateway), a running aggregate whose new SQL keeps its
/// state (aliases only) is stopped with a savepoint and the new SQL started from it, nothing deleted
/// or created; a projection change is started from the same kind of savepoint taking only the
/// offsets.
#[tokio::test(start_paused = true)]
async fn a_state_compatible_change_is_upgraded_from_a_savepoint_and_a_stateless_one_from_its_offsets()
 {
    use flinkpipe::target::Restore;
    let old = "INSERT INTO a SELECT k, SUM(v) FROM src GROUP BY k";
    let new = "INSERT INTO a SELECT k, SUM(v) AS total FROM src GROUP BY k";
    let t = savepoint_target_running(old);
    let a = a_restarted_with(new);
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Upgraded);
    let log = t.log();
    let at = |c: &Call| log.iter().position(|l| l == c).unwrap_or(usize::MAX);
    let validate = at(&Call::Validate("dml-a".into()));
    let stop = at(&Call::Stop("dml-a".into()));
    let start = at(&Call::StartFrom(
        "dml-a".into(),
        "sp-dml-a-1".into(),
        Restore::State,
    ));
    assert!(
        validate < stop && stop < start && start < log.len(),
        "{log:?}"
    );
    assert!(t.creates().is_empty() && t.deletes().is_empty(), "{log:?}");
    assert_eq!(t.state("dml-a").unwrap().sql, new);
    assert_eq!(t.phase("dml-a"), Some(Phase::Running));

    // A stateless change: the offsets only.
    let t = savepoint_target_running(&dml_sql("a"));
    let mut a = a_restarted_with("INSERT INTO a SELECT * FROM src WHERE id > 0");
    a.stateless = true;
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(
        r.nodes[0].statements[1].action,
        StatementAction::RestartedFromOffsets
    );
    assert!(t.log().contains(&Call::StartFrom(
        "dml-a".into(),
        "sp-dml-a-1".into(),
        Restore::Offsets
    )));
    assert!(t.creates().is_empty() && t.deletes().is_empty());

    // A state-incompatible change: refused, nothing stopped.
    let t = savepoint_target_running(old);
    let a = a_restarted_with("INSERT INTO a SELECT k, SUM(v) + COUNT(*) FROM src GROUP BY k");
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(
        matches!(
            outcome(&r, "a"),
            Outcome::Failed(w) if matches!(
                w.step_error(),
                Some(StepError::StateLoss { table, verdict: flinkpipe::changes::upgrade::Verdict::StateIncompatible, .. }) if table == "a"
            ) && w.to_string().contains("--allow-state-loss a")
        ),
        "{r:#?}"
    );
    assert!(
        !t.log().contains(&Call::Stop("dml-a".into())),
        "{:?}",
        t.log()
    );
    assert_eq!(t.phase("dml-a"), Some(Phase::Running));
}

/// A compiled plan measured on Flink 2.2 (`tests/data/upgrade/plans/<name>.json`).
fn measured_plan(name: &str) -> serde_json::Value {
    let path = format!(
        "{}/tests/data/upgrade/plans/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// On a target with a planner (the SQL Gateway), the verdict on a changed running job is the
/// planner's, from the two compiled plans, not the SQL front end's: a change the front end calls
/// incompatible is upgraded in place when the plans keep their state, and one it calls compatible
/// is refused when they do not. Texts the planner cannot compile leave the front end's verdict.
#[tokio::test(start_paused = true)]
async fn the_planners_verdict_on_a_changed_job_outweighs_the_sql_front_ends() {
    use flinkpipe::changes::upgrade::Verdict;
    use flinkpipe::target::Restore;
    let old = "INSERT INTO a SELECT k, SUM(v) FROM src GROUP BY k";
    // The front end sees a COUNT(*) added: state-incompatible. The planner (as when the new
    // aggregate is pruned) keeps the same state: state-compatible.
    let counted = "INSERT INTO a SELECT k, SUM(v) + COUNT(*) FROM src GROUP BY k";
    let t = savepoint_target_running(old);
    t.compiles(old, measured_plan("sum"));
    t.compiles(counted, measured_plan("sum_alias"));
    let a = a_restarted_with(counted);
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Upgraded);
    assert!(t.log().contains(&Call::StartFrom(
        "dml-a".into(),
        "sp-dml-a-1".into(),
        Restore::State
    )));
    assert_eq!(t.compiled(), vec![old.to_string(), counted.to_string()]);
    assert!(t.creates().is_empty() && t.deletes().is_empty());

    // The front end sees aliases only: state-compatible. The planner's plans differ in their
    // aggregate calls: state-incompatible, refused, nothing stopped.
    let aliased = "INSERT INTO a SELECT k, SUM(v) AS total FROM src GROUP BY k";
    let t = savepoint_target_running(old);
    t.compiles(old, measured_plan("sum"));
    t.compiles(aliased, measured_plan("sum_count"));
    let a = a_restarted_with(aliased);
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(
        matches!(
            outcome(&r, "a"),
            Outcome::Failed(w) if matches!(
                w.step_error(),
                Some(StepError::StateLoss { verdict: Verdict::StateIncompatible, .. })
            )
        ),
        "{r:#?}"
    );
    assert!(
        !t.log().contains(&Call::Stop("dml-a".into())),
        "{:?}",
        t.log()
    );
    assert_eq!(t.phase("dml-a"), Some(Phase::Running));

    // The planner cannot compile the running text (it reads a table no longer declared): the
    // front end's verdict (aliases only: compatible) stands.
    let t = savepoint_target_running(old);
    let a = a_restarted_with(aliased);
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(r.success(), "{r:#?}");
    assert_eq!(r.nodes[0].statements[1].action, StatementAction::Upgraded);
    assert_eq!(t.compiled(), vec![old.to_string()]);
}

/// The new SQL fails on its start from the savepoint (a restore the engine rejects), or runs without
/// having restored from it: its job is removed and the old SQL starts again from the same savepoint,
/// so nothing is lost; the node fails saying so and its children are skipped.
#[tokio::test(start_paused = true)]
async fn a_failed_upgrade_starts_the_old_sql_again_from_the_same_savepoint() {
    use flinkpipe::target::Restore;
    let old = "INSERT INTO a SELECT k, SUM(v) FROM src GROUP BY k";
    let new = "INSERT INTO a SELECT k, SUM(v) AS total FROM src GROUP BY k";
    for unrestored in [false, true] {
        let t = MemoryTarget::with_savepoints();
        if unrestored {
            t.restore_nothing_for("AS total");
        } else {
            t.fail_starts_of(
                "AS total",
                "org.apache.flink.util.StateMigrationException: the new state serializer is incompatible",
            );
        }
        t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
        t.seed("dml-a", old, Phase::Running, &[]);
        let mut a = node("a", &[], Action::Restart);
        a.steps[1].spec.sql = new.into();
        let r = run(
            &t,
            &[a, node("b", &["a"], Action::Create)],
            JournalState::default(),
        )
        .await;
        let (savepoint, cause) = match outcome(&r, "a") {
            Outcome::Failed(w) => match w.step_error() {
                Some(StepError::UpgradeFailed {
                    savepoint,
                    cause,
                    rollback: None,
                    ..
                }) => (savepoint.clone(), cause.clone()),
                e => panic!("{e:?}: {r:#?}"),
            },
            o => panic!("{o:?}: {r:#?}"),
        };
        assert_eq!(savepoint, "sp-dml-a-1");
        assert!(
            cause.contains(if unrestored {
                "without restoring any state"
            } else {
                "StateMigrationException"
            }),
            "{cause}"
        );
        assert_eq!(
            outcome(&r, "b"),
            &Outcome::Skipped(Skip::ParentFailed { parent: "a".into() }),
            "{r:#?}"
        );
        assert_eq!(r.nodes[0].statements[1].action, StatementAction::Upgrade);
        // New SQL, then the old one, both from the one savepoint; the old one runs.
        assert_eq!(t.started_sql(), [new, old]);
        let starts: Vec<Call> = t
            .log()
            .into_iter()
            .filter(|c| matches!(c, Call::StartFrom(..)))
            .collect();
        assert_eq!(
            starts,
            [
                Call::StartFrom("dml-a".into(), "sp-dml-a-1".into(), Restore::State),
                Call::StartFrom("dml-a".into(), "sp-dml-a-1".into(), Restore::State),
            ]
        );
        assert_eq!(t.state("dml-a").unwrap().sql, old);
        assert_eq!(t.phase("dml-a"), Some(Phase::Running));
        assert_eq!(t.deletes(), ["dml-a"], "only the failed new job is removed");
    }
    // The rollback itself fails: the message names the savepoint that holds the state.
    let t = MemoryTarget::with_savepoints();
    t.fail_starts_of("GROUP BY k", "no slots");
    t.seed("ddl-a", &ddl_sql("a"), Phase::Completed, &[]);
    t.seed("dml-a", old, Phase::Running, &[]);
    let mut a = node("a", &[], Action::Restart);
    a.steps[1].spec.sql = new.into();
    let r = run(&t, &[a], JournalState::default()).await;
    assert!(
        matches!(
            outcome(&r, "a"),
            Outcome::Failed(w) if matches!(
                w.step_error(),
                Some(StepError::UpgradeFailed { rollback: Some(_), savepoint, .. }) if savepoint == "sp-dml-a-1"
            ) && w.to_string().contains("the state is kept in that savepoint")
        ),
        "{r:#?}"
    );
}

/// On a target that lists only jobs (the SQL Gateway: DDL is session-scoped, no DDL statement is ever
/// listed), a table is live when the job that writes it runs. For every table of `fixtures/` with a
/// job: its job absent, every other job RUNNING and no DDL statement at all, the plan creates it and
/// keeps its ancestors, and the deploy creates it — also below a table written by another table's
/// statement set (`int_sales_store_orders`, written by the set of `int_sales_web_orders`), whose kept
/// node is checked through that set's job, not through its absent DDL (#41.6).
#[tokio::test(start_paused = true)]
async fn a_kept_ancestor_is_live_when_the_job_writing_it_runs_whatever_its_ddl_statement() {
    use flinkpipe::plan::{self, Scope, StatementNaming, StatementStatus};
    use flinkpipe::sql::model::StatementKind as SqlKind;
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
    // Each table's job: the DML that writes it (its own or its statement set's), else a CTAS's or a
    // materialized table's DDL.
    let job = |name: &str| -> Option<String> {
        let t = &project.inventory.tables[name];
        let owner = t
            .written_by
            .as_ref()
            .map(|w| &project.inventory.tables[w])
            .unwrap_or(t);
        if t.external {
            None
        } else if owner.dml_ref.is_some() {
            Some(naming.dml(&owner.product, &owner.name))
        } else if matches!(
            t.ddl_kind,
            Some(SqlKind::Ctas | SqlKind::CreateMaterializedTable)
        ) {
            Some(naming.ddl(&t.product, &t.name))
        } else {
            None
        }
    };
    let jobs: BTreeMap<String, String> = project
        .inventory
        .tables
        .keys()
        .filter_map(|t| Some((t.clone(), job(t)?)))
        .collect();
    let mut below_a_set_sink = 0;
    for (table, own) in &jobs {
        let status: StatementStatus = jobs
            .values()
            .filter(|j| *j != own)
            .map(|j| (j.clone(), Phase::Running))
            .collect();
        let plan = plan::build_plan(
            &project,
            &naming,
            &status,
            &Scope::Tables(vec![table.clone()]),
            &Default::default(),
        )
        .unwrap();
        let nodes = flinkpipe::deploy::deploy_nodes(
            &project,
            &plan,
            &flinkpipe::deploy::env_sql::EnvSql::none(),
        )
        .unwrap();
        let t = MemoryTarget::with_savepoints();
        for (j, sql) in nodes
            .iter()
            .flat_map(|n| n.steps.iter())
            .filter(|s| status.phases.contains_key(&s.spec.name))
            .map(|s| (s.spec.name.clone(), s.spec.sql.clone()))
            .collect::<BTreeMap<_, _>>()
        {
            t.seed(&j, &sql, Phase::Running, &[]);
        }
        let r = run(&t, &nodes, JournalState::default()).await;
        assert!(r.success(), "{table}: {r:#?}");
        assert_eq!(outcome(&r, table), &Outcome::Done, "{table}");
        let kept_set_sink = plan.nodes.iter().any(|n| {
            n.action == Action::Skip && project.inventory.tables[&n.table_name].written_by.is_some()
        });
        below_a_set_sink += usize::from(kept_set_sink);
    }
    assert!(
        below_a_set_sink > 0,
        "no table below a kept statement-set sink"
    );
}
