//! The deploy executor against the fake Confluent server: order, parallelism, idempotency and the same
//! final state under every injected fault; failure propagation; timeouts; restarts; journal and resume.

use crate::fake_confluent::{
    ENV, FakeConfluent, FakeOptions, Fault, FaultAction, KEY, ORG, Outcome, SECRET,
};
use flinkpipe::deploy::executor::{
    Cancel, DeployOptions, DeployReport, Outcome as NodeOutcome, Session, Skip, StepError,
};
use flinkpipe::deploy::journal::{self, Journal, JournalState};
use flinkpipe::deploy::{DeployNode, Step, deploy};
use flinkpipe::target::{
    Backoff, ConfluentSettings, ConfluentTarget, Credentials, Masked, Phase, StatementKind,
    StatementSpec, TargetError,
};

/// The typed error of a node that failed on a statement step (`None`: it did not).
fn step_error(o: &NodeOutcome) -> Option<&StepError> {
    match o {
        NodeOutcome::Failed(f) => f.step_error(),
        _ => None,
    }
}
use flinkpipe::plan::Action;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

fn target(fake: &FakeConfluent) -> ConfluentTarget {
    target_with_retry(fake, Backoff::HTTP.scaled(0.01))
}

fn target_with_retry(fake: &FakeConfluent, retry: Backoff) -> ConfluentTarget {
    ConfluentTarget::new(ConfluentSettings {
        endpoint: fake.endpoint(),
        organization_id: ORG.into(),
        environment_id: ENV.into(),
        compute_pool_id: Some("lfcp-fake".into()),
        principal: None,
        catalog: None,
        database: None,
        credentials: Credentials {
            key: Masked::new(KEY),
            secret: Masked::new(SECRET),
        },
        request_timeout: Duration::from_millis(400),
        retry,
    })
    .unwrap()
}

fn options() -> DeployOptions {
    DeployOptions {
        max_parallel: 4,
        statement_timeout: Duration::from_secs(5),
        degraded_grace: Duration::from_millis(100),
        poll: Backoff::POLL.scaled(0.02),
        create_retry: Backoff::HTTP.scaled(0.01),
        allow_drop: false,
        allow_state_loss: Vec::new(),
        visibility_grace: Duration::from_secs(1),
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
        is_drop: sql.starts_with("DROP"),
        rewritten_by: Vec::new(),
        file: Default::default(),
        line: 0,
    }
}

fn node(table: &str, parents: &[&str], action: Action) -> DeployNode {
    let src = if parents.is_empty() {
        "src_topic".to_string()
    } else {
        parents.join(" JOIN ")
    };
    DeployNode {
        table: table.into(),
        action,
        reason: "test".into(),
        parents: parents.iter().map(|s| s.to_string()).collect(),
        stateless: true,
        kept_live: false,
        kept_pending: false,
        upsert_sink: false,
        steps: vec![
            step(
                &format!("dev-ddl-{table}"),
                &format!("CREATE TABLE {table} (id INT)"),
                StatementKind::Ddl,
            ),
            step(
                &format!("dev-dml-{table}"),
                &format!("INSERT INTO {table} SELECT * FROM {src}"),
                StatementKind::Dml,
            ),
        ],
    }
}

/// a → b, a → c, {b, c} → d; e alone.
fn diamond() -> Vec<DeployNode> {
    vec![
        node("a", &[], Action::Create),
        node("e", &[], Action::Create),
        node("b", &["a"], Action::Create),
        node("c", &["a"], Action::Create),
        node("d", &["b", "c"], Action::Create),
    ]
}

async fn run(fake: &FakeConfluent, nodes: &[DeployNode], opts: &DeployOptions) -> DeployReport {
    let t = target(fake);
    let session = Session {
        scrubber: flinkpipe::target::Scrubber::new([KEY.to_string(), SECRET.to_string()]),
        ..Session::quiet()
    };
    deploy(&t, nodes, opts, &session).await
}

/// Every statement created exactly once, each parent's statements before its children's.
fn assert_order_and_no_duplicates(fake: &FakeConfluent, nodes: &[DeployNode]) {
    let created = fake.created();
    let posts = fake.posts();
    let mut seen = std::collections::BTreeSet::new();
    for p in &created {
        assert!(seen.insert(p.clone()), "created twice: {p} in {created:?}");
    }
    let pos = |n: &str| created.iter().position(|c| c == n);
    for n in nodes.iter().filter(|n| n.action != Action::Skip) {
        for p in &n.parents {
            let parent_last = pos(&format!("dev-dml-{p}")).expect("parent created");
            let child_first = pos(&format!("dev-ddl-{}", n.table)).expect("child created");
            assert!(
                parent_last < child_first,
                "{p} before {}: {created:?}",
                n.table
            );
        }
    }
    assert!(posts.len() >= created.len());
    assert!(
        fake.deletes().is_empty(),
        "no delete outside the plan: {:?}",
        fake.deletes()
    );
    for r in fake.requests() {
        assert!(!r.secret_in_clear);
        assert!(!r.body.contains(SECRET));
    }
}

fn final_phases(fake: &FakeConfluent) -> BTreeMap<String, String> {
    fake.phases()
}

fn expected_final() -> BTreeMap<String, String> {
    ["a", "b", "c", "d", "e"]
        .iter()
        .flat_map(|t| {
            [
                (format!("dev-ddl-{t}"), "COMPLETED".to_string()),
                (format!("dev-dml-{t}"), "RUNNING".to_string()),
            ]
        })
        .collect()
}

#[tokio::test]
async fn deploys_parents_first_in_parallel() {
    let fake = FakeConfluent::start();
    let nodes = diamond();
    let report = run(&fake, &nodes, &options()).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(final_phases(&fake), expected_final());
    assert_order_and_no_duplicates(&fake, &nodes);
    assert_eq!(fake.posts().len(), 10, "no POST repeated");
}

#[tokio::test]
async fn same_final_state_under_every_fault() {
    let faults: Vec<(&str, Vec<Fault>)> = vec![
        (
            "429 Retry-After on reads",
            vec![Fault::too_many(Some("GET"), 1, 3)],
        ),
        ("429 on create", vec![Fault::too_many(Some("POST"), 1, 2)]),
        ("500 burst", vec![Fault::status(None, 500, 4)]),
        ("502 burst", vec![Fault::status(Some("GET"), 502, 3)]),
        ("503 on create", vec![Fault::status(Some("POST"), 503, 3)]),
        (
            "dropped before processing",
            vec![Fault::new(None, None, FaultAction::DropBefore, 4)],
        ),
        (
            "POST processed, answer lost",
            vec![Fault::new(Some("POST"), None, FaultAction::DropAfter, 3)],
        ),
        (
            "slow responses beyond the client timeout",
            vec![Fault::new(
                Some("GET"),
                None,
                FaultAction::Slow(Duration::from_millis(900)),
                2,
            )],
        ),
        (
            "slow POST processed after the client gave up",
            vec![Fault::new(
                Some("POST"),
                None,
                FaultAction::Slow(Duration::from_millis(900)),
                1,
            )],
        ),
    ];
    for (what, fs) in faults {
        let fake = FakeConfluent::start();
        for f in fs {
            fake.add_fault(f);
        }
        let nodes = diamond();
        let report = run(&fake, &nodes, &options()).await;
        assert!(report.success(), "{what}: {report:#?}");
        assert_eq!(final_phases(&fake), expected_final(), "{what}");
        assert_order_and_no_duplicates(&fake, &nodes);
    }
}

/// A pipeline of `n` tables drawn from `seed`: table `i` reads up to two earlier tables.
fn generated(seed: u64, n: usize) -> Vec<DeployNode> {
    let mut rng = seed;
    let mut next = move || {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        rng >> 33
    };
    let names: Vec<String> = (0..n).map(|i| format!("g{i}")).collect();
    (0..n)
        .map(|i| {
            let mut parents: Vec<&str> = Vec::new();
            if i > 0 {
                for _ in 0..next() % 3 {
                    let p = names[(next() as usize) % i].as_str();
                    if !parents.contains(&p) {
                        parents.push(p);
                    }
                }
            }
            node(&names[i], &parents, Action::Create)
        })
        .collect()
}

/// #15, "done when fault-injected deploys (429/5xx on a third of requests) complete in every run":
/// generated pipelines against the fake with one request in three answering 429 (`Retry-After`) or
/// 503, for several seeds. The target's own retries are cut to two attempts so that the executor's
/// timed retries carry the load (before #15 a node failed once a call's attempts ran out).
#[tokio::test]
async fn a_third_of_requests_failing_with_429_or_503_still_deploys_every_run() {
    for seed in 1..=6 {
        let fake = FakeConfluent::start();
        fake.set_chaos(3, seed);
        let nodes = generated(seed, 24);
        let t = target_with_retry(
            &fake,
            Backoff {
                max_attempts: 2,
                ..Backoff::HTTP.scaled(0.002)
            },
        );
        let mut opts = options();
        opts.create_retry = Backoff::HTTP.scaled(0.002);
        opts.max_parallel = 8;
        opts.statement_timeout = Duration::from_secs(30);
        let session = Session {
            scrubber: flinkpipe::target::Scrubber::new([KEY.to_string(), SECRET.to_string()]),
            ..Session::quiet()
        };
        let report = deploy(&t, &nodes, &opts, &session).await;
        let injected = fake.chaos_injected();
        assert!(report.success(), "seed {seed}, {injected:?}: {report:#?}");
        assert!(
            injected.get(&429).is_some_and(|n| *n > 0)
                && injected.get(&503).is_some_and(|n| *n > 0),
            "seed {seed}: {injected:?}"
        );
        let phases = final_phases(&fake);
        assert_eq!(phases.len(), 48, "seed {seed}");
        for (name, phase) in &phases {
            let want = if name.contains("-ddl-") {
                "COMPLETED"
            } else {
                "RUNNING"
            };
            assert_eq!(phase, want, "seed {seed}: {name}");
        }
        assert_order_and_no_duplicates(&fake, &nodes);
        eprintln!(
            "seed {seed}: {} requests, injected {injected:?}, {:.1}s",
            fake.request_count(),
            report.seconds
        );
    }
}

#[tokio::test]
async fn same_host_redirect_is_followed() {
    let fake = FakeConfluent::start();
    fake.add_fault(Fault::new(
        None,
        None,
        FaultAction::Redirect(fake.endpoint()),
        5,
    ));
    let nodes = diamond();
    let report = run(&fake, &nodes, &options()).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(final_phases(&fake), expected_final());
}

#[tokio::test]
async fn a_failure_skips_descendants_and_spares_independent_branches() {
    let fake = FakeConfluent::start();
    fake.set_outcome(
        "dev-dml-b",
        Outcome::Fail("The 'kafka.partitions' option is not supported anymore.".into()),
    );
    let nodes = diamond();
    let report = run(&fake, &nodes, &options()).await;
    assert!(!report.success());
    let by: BTreeMap<&str, &NodeOutcome> = report
        .nodes
        .iter()
        .map(|n| (n.table_name.as_str(), &n.outcome))
        .collect();
    assert!(
        matches!(step_error(by["b"]), Some(StepError::Failed { statement, phase: Phase::Failed, detail })
            if statement == "dev-dml-b" && detail.contains("kafka.partitions")),
        "{:?}",
        by["b"]
    );
    assert!(
        matches!(by["d"], NodeOutcome::Skipped(Skip::ParentFailed { parent }) if parent == "b"),
        "{:?}",
        by["d"]
    );
    assert_eq!(by["a"], &NodeOutcome::Done);
    assert_eq!(by["c"], &NodeOutcome::Done);
    assert_eq!(by["e"], &NodeOutcome::Done);
    assert!(
        fake.phase("dev-ddl-d").is_none(),
        "nothing of d was created"
    );
}

/// A node the plan skips (running already, out of scope) never blocks its children, whatever its
/// reason reads: the plan's own reasons start with "ancestor of …" or "parent …" too (found by the
/// end-to-end test on a real Flink: a skipped running ancestor blocked a restarted child).
#[tokio::test]
async fn plan_skips_never_block_children_whatever_their_reason() {
    for reason in [
        "ancestor of d; statement is RUNNING",
        "parent of b; statement is RUNNING",
        "in scope; statement is RUNNING",
    ] {
        let fake = FakeConfluent::start();
        let mut a = node("a", &[], Action::Skip);
        a.reason = reason.into();
        a.steps.clear();
        let nodes = vec![a, node("b", &["a"], Action::Create)];
        let report = run(&fake, &nodes, &options()).await;
        assert!(report.success(), "{reason}: {:?}", report.nodes);
        assert_eq!(report.nodes[1].outcome, NodeOutcome::Done, "{reason}");
    }
    // A skip caused by a failure still propagates, two levels down.
    let fake = FakeConfluent::start();
    fake.set_outcome("dev-dml-a", Outcome::Fail("boom".into()));
    let nodes = vec![
        node("a", &[], Action::Create),
        node("b", &["a"], Action::Create),
        node("c", &["b"], Action::Create),
    ];
    let report = run(&fake, &nodes, &options()).await;
    assert!(
        matches!(&report.nodes[2].outcome, NodeOutcome::Skipped(Skip::AncestorNotDeployed { ancestor, because })
            if ancestor == "b" && **because == Skip::ParentFailed { parent: "a".into() }),
        "{:?}",
        report.nodes[2].outcome
    );
}

#[tokio::test]
async fn a_full_pool_is_reported_as_pool_exhausted_not_as_a_timeout() {
    let fake = FakeConfluent::start();
    fake.set_outcome("dev-dml-a", Outcome::PoolExhausted);
    let mut opts = options();
    opts.statement_timeout = Duration::from_millis(300);
    let nodes = vec![
        node("a", &[], Action::Create),
        node("b", &["a"], Action::Create),
    ];
    let report = run(&fake, &nodes, &opts).await;
    // Reported as a full pool, not as a generic timeout.
    assert!(
        matches!(step_error(&report.nodes[0].outcome), Some(StepError::PoolExhausted { statement, pool, .. })
            if statement == "dev-dml-a" && pool.as_deref() == Some("lfcp-fake")),
        "{report:#?}"
    );
    assert_eq!(
        report.nodes[1].outcome,
        NodeOutcome::Skipped(Skip::ParentFailed {
            parent: report.nodes[0].table_name.clone()
        })
    );
}

#[tokio::test]
async fn degraded_past_the_grace_period_fails() {
    let fake = FakeConfluent::start();
    fake.set_outcome("dev-dml-a", Outcome::Degraded);
    // RUNNING is reached first, so force DEGRADED before the wait sees RUNNING: use a stuck script.
    let nodes = vec![node("a", &[], Action::Create)];
    let report = run(&fake, &nodes, &options()).await;
    // The script goes PENDING → RUNNING → DEGRADED: RUNNING is success for a DML.
    assert!(report.success(), "{report:#?}");
    // A statement already DEGRADED when adopted must recover within the grace period.
    let fake = FakeConfluent::start();
    fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
    fake.seed(
        "dev-dml-a",
        "INSERT INTO a SELECT * FROM src_topic",
        "DEGRADED",
    );
    let report = run(&fake, &nodes, &options()).await;
    assert!(
        matches!(step_error(&report.nodes[0].outcome), Some(StepError::Degraded { statement, .. }) if statement == "dev-dml-a"),
        "{report:#?}"
    );
    assert!(fake.posts().is_empty() && fake.deletes().is_empty());
}

#[tokio::test]
async fn existing_statements_are_adopted_or_refused_never_recreated() {
    let fake = FakeConfluent::start();
    fake.seed("dev-ddl-a", "CREATE  TABLE a (id INT);", "COMPLETED");
    fake.seed(
        "dev-dml-a",
        "INSERT INTO a SELECT * FROM src_topic",
        "RUNNING",
    );
    fake.seed("dev-ddl-b", "CREATE TABLE b (id BIGINT)", "COMPLETED");
    let nodes = vec![
        node("a", &[], Action::Create),
        node("b", &["a"], Action::Create),
    ];
    let report = run(&fake, &nodes, &options()).await;
    assert_eq!(report.nodes[0].outcome, NodeOutcome::Done);
    assert_eq!(report.nodes[0].statements[0].action, "adopted");
    assert!(
        matches!(step_error(&report.nodes[1].outcome), Some(StepError::DdlChanged { statement }) if statement == "dev-ddl-b"),
        "{report:#?}"
    );
    assert!(fake.posts().is_empty(), "{:?}", fake.posts());
    assert!(fake.deletes().is_empty());
}

#[tokio::test]
async fn restarts_stateless_in_place_and_stateful_by_recreate() {
    let fake = FakeConfluent::start();
    for t in ["a", "b"] {
        fake.seed(
            &format!("dev-ddl-{t}"),
            &format!("CREATE TABLE {t} (id INT)"),
            "COMPLETED",
        );
        fake.seed(
            &format!("dev-dml-{t}"),
            &format!("INSERT INTO {t} SELECT * FROM src_topic"),
            "RUNNING",
        );
    }
    let a = node("a", &[], Action::Restart);
    let mut b = node("b", &[], Action::Restart);
    b.stateless = false;
    let report = run(&fake, &[a, b], &options()).await;
    assert!(report.success(), "{report:#?}");
    let acts: Vec<(String, String)> = report
        .nodes
        .iter()
        .flat_map(|n| {
            n.statements
                .iter()
                .map(|s| (s.name.clone(), s.action.to_string()))
        })
        .collect();
    assert!(
        acts.contains(&("dev-ddl-a".into(), "kept".into())),
        "{acts:?}"
    );
    assert!(
        acts.contains(&("dev-dml-a".into(), "resumed".into())),
        "{acts:?}"
    );
    assert!(
        acts.contains(&("dev-dml-b".into(), "recreated".into())),
        "{acts:?}"
    );
    assert_eq!(
        fake.deletes(),
        vec!["dev-dml-b"],
        "only the stateful DML is deleted"
    );
    assert_eq!(fake.posts(), vec!["dev-dml-b"]);
    assert_eq!(fake.phase("dev-dml-a").as_deref(), Some("RUNNING"));
}

#[tokio::test]
async fn drop_statements_need_allow_drop() {
    let fake = FakeConfluent::start();
    let mut n = node("a", &[], Action::Restart);
    n.steps.insert(
        0,
        step(
            "dev-ddl-a-drop0",
            "DROP TABLE IF EXISTS a",
            StatementKind::Ddl,
        ),
    );
    let report = run(&fake, std::slice::from_ref(&n), &options()).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(report.nodes[0].statements[0].action, "drop skipped");
    assert!(!fake.posts().iter().any(|p| p.contains("drop")));
    // With --allow-drop on a restart it runs.
    let fake = FakeConfluent::start();
    let mut opts = options();
    opts.allow_drop = true;
    let report = run(&fake, &[n], &opts).await;
    assert!(report.success(), "{report:#?}");
    assert!(fake.posts().iter().any(|p| p.contains("drop")));
}

#[tokio::test]
async fn interrupted_run_resumes_without_duplicates() {
    let fake = FakeConfluent::start_with(FakeOptions {
        step: Duration::from_millis(150),
        ..FakeOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let jpath = dir.path().join("deploy.jsonl");
    let nodes = diamond();
    let t = target(&fake);
    let cancel = Cancel::default();
    {
        let j = Mutex::new(Journal::create(&jpath).unwrap());
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(400)).await;
            c2.cancel();
        });
        let session = Session {
            journal: Some(&j),
            cancel: cancel.clone(),
            ..Session::quiet()
        };
        let report = deploy(&t, &nodes, &options(), &session).await;
        assert!(report.interrupted);
        assert!(
            report.nodes.iter().any(|n| matches!(
                n.outcome,
                NodeOutcome::Interrupted(_) | NodeOutcome::NotStarted
            )),
            "{report:#?}"
        );
    }
    let entries = journal::read(&jpath).unwrap();
    let state = JournalState::replay(&entries);
    assert!(!state.ended);
    let j = Mutex::new(Journal::append(&jpath).unwrap());
    let session = Session {
        journal: Some(&j),
        resume: state,
        ..Session::quiet()
    };
    let report = deploy(&t, &nodes, &options(), &session).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(final_phases(&fake), expected_final());
    assert_order_and_no_duplicates(&fake, &nodes);
    assert_eq!(fake.created().len(), 10);
}

#[tokio::test]
async fn max_parallel_one_is_sequential() {
    let fake = FakeConfluent::start();
    let nodes: Vec<DeployNode> = (0..6)
        .map(|i| node(&format!("t{i}"), &[], Action::Create))
        .collect();
    let mut opts = options();
    opts.max_parallel = 1;
    let report = run(&fake, &nodes, &opts).await;
    assert!(report.success());
    // Sequential: each table's DML is created before the next table's DDL.
    let created = fake.created();
    for w in created.chunks(2) {
        assert!(
            w[0].contains("-ddl-") && w[1].contains("-dml-"),
            "{created:?}"
        );
        assert_eq!(w[0].replace("-ddl-", "-"), w[1].replace("-dml-", "-"));
    }
}

#[tokio::test]
async fn stateless_restart_with_new_properties_carries_offsets_over_under_the_same_name() {
    let fake = FakeConfluent::start();
    fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
    fake.seed(
        "dev-dml-a",
        "INSERT INTO a SELECT * FROM src_topic",
        "RUNNING",
    );
    let mut a = node("a", &[], Action::Restart);
    a.steps[1]
        .spec
        .properties
        .insert("sql.state-ttl".into(), "1 h".into());
    let report = run(&fake, &[a], &options()).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(report.nodes[0].statements[1].action, "carried over");
    assert_eq!(fake.posts(), vec!["dev-dml-a-co", "dev-dml-a"]);
    assert_eq!(fake.deletes(), vec!["dev-dml-a", "dev-dml-a-co"]);
    let props = fake.properties("dev-dml-a").unwrap();
    assert_eq!(props["sql.tables.initial-offset-from"], "dev-dml-a-co");
    assert_eq!(props["sql.state-ttl"], "1 h");
    assert_eq!(fake.phase("dev-dml-a").as_deref(), Some("RUNNING"));
    assert_eq!(fake.phase("dev-dml-a-co"), None);
    // The new text was checked on the server first (a dry run, never stored), then each handover
    // stopped the old statement before deleting it.
    let reqs: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .map(|r| {
            if r.is_dry_run() {
                "DRY RUN".to_string()
            } else {
                format!("{} {}", r.method, r.body_name.unwrap_or(r.path))
            }
        })
        .collect();
    let dry = fake.dry_runs();
    assert_eq!(dry.len(), 1, "{dry:?}");
    assert!(dry[0].name.starts_with("dev-dml-a-dry-"), "{dry:?}");
    assert_eq!(dry[0].properties["sql.state-ttl"], "1 h");
    assert_eq!(
        reqs,
        vec![
            "DRY RUN",
            "POST dev-dml-a-co",
            // Stops are the GA PUT of the whole statement (`spec.stopped`), named in its body.
            "PUT dev-dml-a",
            "DELETE /statements/dev-dml-a",
            "POST dev-dml-a",
            "PUT dev-dml-a-co",
            "DELETE /statements/dev-dml-a-co",
        ]
    );
}

#[tokio::test]
async fn an_interrupted_carry_over_is_finished_on_resume() {
    for second_post_done in [false, true] {
        let fake = FakeConfluent::start();
        fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
        // The first handover happened: the temporary statement runs, the old one is gone.
        fake.seed(
            "dev-dml-a-co",
            "INSERT INTO a SELECT * FROM src_topic",
            "RUNNING",
        );
        let mut a = node("a", &[], Action::Restart);
        a.steps[1]
            .spec
            .properties
            .insert("sql.state-ttl".into(), "1 h".into());
        let mut resume = JournalState::default();
        resume.ours.insert("dev-dml-a-co".into());
        if second_post_done {
            let t = target(&fake);
            let mut s = a.steps[1].spec.clone();
            s.properties.insert(
                "sql.tables.initial-offset-from".into(),
                "dev-dml-a-co".into(),
            );
            flinkpipe::target::Target::create_statement(&t, &s)
                .await
                .unwrap();
            resume.ours.insert("dev-dml-a".into());
        }
        let posts_before = fake.posts().len();
        let session = Session {
            resume,
            ..Session::quiet()
        };
        let report = deploy(&target(&fake), &[a], &options(), &session).await;
        assert!(report.success(), "{second_post_done}: {report:#?}");
        assert_eq!(fake.phase("dev-dml-a").as_deref(), Some("RUNNING"));
        assert_eq!(
            fake.phase("dev-dml-a-co"),
            None,
            "temporary statement removed"
        );
        assert_eq!(
            fake.posts().len() - posts_before,
            usize::from(!second_post_done),
            "{:?}",
            fake.posts()
        );
    }
}

#[tokio::test]
async fn a_revoked_key_fails_the_node_at_once_with_a_hint_and_no_secret() {
    let fake = FakeConfluent::start();
    fake.add_fault(Fault::new(
        None,
        Some("dev-ddl-d"),
        FaultAction::Status {
            status: 401,
            headers: vec![(
                "WWW-Authenticate".into(),
                "Basic error=\"invalid_key\"".into(),
            )],
            body: r#"{"errors":[{"status":"401","detail":"Valid authentication credentials must be provided"}]}"#.into(),
        },
        100,
    ));
    let nodes = diamond();
    let report = run(&fake, &nodes, &options()).await;
    let d = report.nodes.iter().find(|n| n.table_name == "d").unwrap();
    assert!(
        matches!(
            step_error(&d.outcome).and_then(StepError::target_error),
            Some(TargetError::Http { status: 401, .. })
        ),
        "{report:#?}"
    );
    // The rendered reason carries the hint and no secret.
    let NodeOutcome::Failed(f) = &d.outcome else {
        panic!("{report:#?}")
    };
    let r = f.to_string();
    assert!(r.contains("SL_FLINK_API_KEY"), "{r}");
    assert!(!r.contains(SECRET) && !r.contains(KEY));
    let d_calls = fake
        .requests()
        .iter()
        .filter(|q| q.path.contains("dev-ddl-d"))
        .count();
    assert_eq!(d_calls, 1, "a 401 is not retried");
    assert_eq!(
        report
            .nodes
            .iter()
            .filter(|n| n.outcome == NodeOutcome::Done)
            .count(),
        4
    );
}

#[tokio::test]
async fn a_resume_is_awaited_even_while_the_phase_still_reads_stopped() {
    let fake = FakeConfluent::start_with(FakeOptions {
        step: Duration::from_millis(100),
        ..FakeOptions::default()
    });
    fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
    fake.seed(
        "dev-dml-a",
        "INSERT INTO a SELECT * FROM src_topic",
        "STOPPED",
    );
    let report = run(&fake, &[node("a", &[], Action::Create)], &options()).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(report.nodes[0].statements[1].action, "resumed");
    assert_eq!(fake.phase("dev-dml-a").as_deref(), Some("RUNNING"));
    assert!(fake.posts().is_empty() && fake.deletes().is_empty());
}

/// A target whose planner rejects (or cannot be asked about) every new text: the Confluent fake,
/// with `validate_statement` overridden.
struct Validating {
    inner: ConfluentTarget,
    answer: fn() -> Result<(), flinkpipe::target::TargetError>,
}

#[async_trait::async_trait]
impl flinkpipe::target::Target for Validating {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    async fn list_statements(
        &self,
    ) -> Result<Vec<flinkpipe::target::StatementState>, flinkpipe::target::TargetError> {
        self.inner.list_statements().await
    }
    async fn get_statement(
        &self,
        name: &str,
    ) -> Result<Option<flinkpipe::target::StatementState>, flinkpipe::target::TargetError> {
        self.inner.get_statement(name).await
    }
    async fn create_statement(
        &self,
        spec: &StatementSpec,
    ) -> Result<flinkpipe::target::StatementState, flinkpipe::target::TargetError> {
        self.inner.create_statement(spec).await
    }
    async fn stop_statement(&self, name: &str) -> Result<(), flinkpipe::target::TargetError> {
        self.inner.stop_statement(name).await
    }
    async fn resume_statement(&self, name: &str) -> Result<(), flinkpipe::target::TargetError> {
        self.inner.resume_statement(name).await
    }
    async fn delete_statement(&self, name: &str) -> Result<bool, flinkpipe::target::TargetError> {
        self.inner.delete_statement(name).await
    }
    async fn check_compute_pool(&self) -> Result<(), flinkpipe::target::TargetError> {
        self.inner.check_compute_pool().await
    }
    async fn validate_statement(
        &self,
        _spec: &StatementSpec,
    ) -> Result<(), flinkpipe::target::TargetError> {
        (self.answer)()
    }
}

/// A running statement is deleted for a restart only once its new text validates: a rejected or
/// uncheckable text fails the node and leaves the running statement alone (found by a new user on a
/// real Flink: a broken file took a running job down).
#[tokio::test]
async fn a_restart_with_sql_that_does_not_validate_leaves_the_running_statement_alone() {
    let invalid: fn() -> Result<(), flinkpipe::target::TargetError> = || {
        Err(flinkpipe::target::TargetError::Invalid(
            "SqlParserException: SQL parse failed. Encountered \"d\" at line 19, column 11.".into(),
        ))
    };
    let unreachable: fn() -> Result<(), flinkpipe::target::TargetError> =
        || Err(flinkpipe::target::TargetError::Config("no session".into()));
    for (answer, expect) in [(invalid, "invalid"), (unreachable, "unvalidated")] {
        let fake = FakeConfluent::start();
        fake.seed("dev-ddl-b", "CREATE TABLE b (id INT)", "COMPLETED");
        fake.seed(
            "dev-dml-b",
            "INSERT INTO b SELECT 1 FROM src_topic",
            "RUNNING",
        );
        let mut b = node("b", &[], Action::Restart);
        b.stateless = false;
        let t = Validating {
            inner: target(&fake),
            answer,
        };
        // The state loss is accepted, so what stops the replacement is the validation alone.
        let opts = DeployOptions {
            allow_state_loss: vec!["b".into()],
            ..options()
        };
        let report = deploy(&t, &[b], &opts, &Session::quiet()).await;
        assert!(!report.success());
        assert!(
            match step_error(&report.nodes[0].outcome) {
                Some(StepError::Invalid { statement, .. }) =>
                    expect == "invalid" && statement == "dev-dml-b",
                Some(StepError::Unvalidated { statement, .. }) =>
                    expect == "unvalidated" && statement == "dev-dml-b",
                _ => false,
            },
            "{:?}",
            report.nodes[0].outcome
        );
        assert!(fake.deletes().is_empty(), "nothing deleted");
        assert_eq!(fake.phase("dev-dml-b").as_deref(), Some("RUNNING"));
    }
}

/// Issue #29 item 3, the whole kind: a parent that is PENDING when the deploy reads it and then goes
/// FAILED — a DML or a DDL, failing on the next read or after some more PENDING reads, kept by the
/// plan (a rerun), adopted by a run that creates (a fresh deploy or `--resume` of a run that created
/// it) — fails the deploy: its children are never created and the report counts the parent failed.
#[tokio::test]
async fn a_pending_parent_that_fails_fails_the_deploy_and_starts_no_child() {
    for kind in [StatementKind::Dml, StatementKind::Ddl] {
        for pending_reads in 0..3 {
            for (path, action, ours) in [
                ("rerun (plan skip)", Action::Skip, false),
                ("fresh deploy (adopted)", Action::Create, false),
                ("--resume (ours)", Action::Create, true),
            ] {
                // The plan read it PENDING earlier; a run that creates reads it itself first
                // (FAILED on that read is simply recreated, as any FAILED statement).
                if action != Action::Skip && pending_reads == 0 {
                    continue;
                }
                let case = format!("{kind:?} {path}, {pending_reads} more PENDING reads");
                let fake = FakeConfluent::start();
                let (failing, other) = match kind {
                    StatementKind::Dml => ("dev-dml-a", "dev-ddl-a"),
                    StatementKind::Ddl => ("dev-ddl-a", "dev-dml-a"),
                };
                let sql_of = |n: &str| {
                    if n.contains("-ddl-") {
                        "CREATE TABLE a (id INT)".to_string()
                    } else {
                        "INSERT INTO a SELECT * FROM src_topic".to_string()
                    }
                };
                fake.seed(failing, &sql_of(failing), "PENDING");
                let mut script = vec![("PENDING", ""); pending_reads];
                script.push(("FAILED", "Table 'src_topic' does not exist"));
                fake.script(failing, &script);
                let other_phase = if other.contains("-ddl-") {
                    "COMPLETED"
                } else {
                    "RUNNING"
                };
                // A failing DDL: its DML is not there yet.
                if kind == StatementKind::Dml {
                    fake.seed(other, &sql_of(other), other_phase);
                }
                let mut a = node("a", &[], action);
                a.kept_live = action == Action::Skip;
                a.reason = "in scope; statement is PENDING".into();
                // A failing DDL: a table without a job (its DDL is the statement the plan read).
                if kind == StatementKind::Ddl {
                    a.steps.retain(|s| s.spec.kind == StatementKind::Ddl);
                }
                let nodes = vec![a, node("b", &["a"], Action::Create)];
                let t = target(&fake);
                let mut resume = JournalState::default();
                if ours {
                    resume.ours.insert(failing.to_string());
                }
                let session = Session {
                    resume,
                    ..Session::quiet()
                };
                let report = deploy(&t, &nodes, &options(), &session).await;
                assert!(!report.success(), "{case}: {report:#?}");
                assert!(
                    matches!(step_error(&report.nodes[0].outcome), Some(StepError::Failed { statement, phase: Phase::Failed, detail })
                        if statement == failing && detail.starts_with("Table 'src_topic' does not exist")),
                    "{case}: {:?}",
                    report.nodes[0].outcome
                );
                assert_eq!(
                    report.nodes[1].outcome,
                    NodeOutcome::Skipped(Skip::ParentFailed { parent: "a".into() }),
                    "{case}"
                );
                let created = fake.created();
                assert!(
                    !created.iter().any(|c| c.ends_with("-b")),
                    "{case}: a child was created: {created:?}"
                );
                assert!(fake.deletes().is_empty(), "{case}: {:?}", fake.deletes());
            }
        }
    }
}

/// The other side: a PENDING parent that reaches its goal (RUNNING; a DDL: COMPLETED) is waited for,
/// and only then are its children created.
#[tokio::test]
async fn a_pending_parent_is_waited_for_before_its_children_start() {
    for kind in [StatementKind::Dml, StatementKind::Ddl] {
        let fake = FakeConfluent::start();
        fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
        fake.seed(
            "dev-dml-a",
            "INSERT INTO a SELECT * FROM src_topic",
            "RUNNING",
        );
        let (pending, goal) = match kind {
            StatementKind::Dml => ("dev-dml-a", "RUNNING"),
            StatementKind::Ddl => ("dev-ddl-a", "COMPLETED"),
        };
        fake.force_phase(pending, "PENDING", "");
        fake.script(pending, &[("PENDING", ""), ("PENDING", ""), (goal, "")]);
        let mut a = node("a", &[], Action::Skip);
        a.kept_live = true;
        let nodes = vec![a, node("b", &["a"], Action::Create)];
        let report = run(&fake, &nodes, &options()).await;
        assert!(report.success(), "{kind:?}: {report:#?}");
        assert_eq!(fake.phase(pending).as_deref(), Some(goal));
        assert_eq!(report.nodes[1].outcome, NodeOutcome::Done);
        assert_eq!(
            report.nodes[0].statements[0].action.as_str(),
            "awaited",
            "{:?}",
            report.nodes[0].statements
        );
    }
}

/// A parent the plan kept as running that reads STOPPED or absent when its children are about to
/// start fails too (nothing is started on it); a plan skip of another kind (out of scope) does not.
#[tokio::test]
async fn a_kept_parent_no_longer_running_fails_and_other_skips_do_not() {
    for phase in [Some("STOPPED"), None] {
        let fake = FakeConfluent::start();
        fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
        if let Some(p) = phase {
            fake.seed("dev-dml-a", "INSERT INTO a SELECT * FROM src_topic", p);
        }
        let mut a = node("a", &[], Action::Skip);
        a.kept_live = true;
        let nodes = vec![a.clone(), node("b", &["a"], Action::Create)];
        let report = run(&fake, &nodes, &options()).await;
        assert!(
            matches!(step_error(&report.nodes[0].outcome), Some(StepError::NoLongerRunning { statement, phase: seen })
                if statement == "dev-dml-a" && *seen == phase.map(Phase::parse)),
            "{phase:?}: {:?}",
            report.nodes[0].outcome
        );
        assert!(!fake.created().iter().any(|c| c.ends_with("-b")));
        // Not kept as running (e.g. excluded): the plan's decision stands.
        let fake = FakeConfluent::start();
        a.kept_live = false;
        let nodes = vec![a.clone(), node("b", &["a"], Action::Create)];
        let report = run(&fake, &nodes, &options()).await;
        assert!(report.success(), "{report:#?}");
    }
}

/// A PENDING ancestor two levels up — its child kept running, its grandchild to be created — is
/// waited for too: when it goes FAILED, nothing below it starts.
#[tokio::test]
async fn a_pending_grandparent_that_fails_starts_nothing_below_it() {
    let fake = FakeConfluent::start();
    fake.seed("dev-ddl-a", "CREATE TABLE a (id INT)", "COMPLETED");
    fake.seed(
        "dev-dml-a",
        "INSERT INTO a SELECT * FROM src_topic",
        "PENDING",
    );
    fake.script("dev-dml-a", &[("PENDING", ""), ("FAILED", "boom")]);
    fake.seed("dev-ddl-b", "CREATE TABLE b (id INT)", "COMPLETED");
    fake.seed("dev-dml-b", "INSERT INTO b SELECT * FROM a", "RUNNING");
    let mut a = node("a", &[], Action::Skip);
    a.kept_live = true;
    a.kept_pending = true;
    let mut b = node("b", &["a"], Action::Skip);
    b.kept_live = true;
    let nodes = vec![a, b, node("c", &["b"], Action::Create)];
    let report = run(&fake, &nodes, &options()).await;
    assert!(!report.success(), "{report:#?}");
    assert!(
        matches!(step_error(&report.nodes[0].outcome), Some(StepError::Failed { statement, phase: Phase::Failed, detail })
            if statement == "dev-dml-a" && detail.starts_with("boom")),
        "{:?}",
        report.nodes[0].outcome
    );
    assert!(
        !fake.created().iter().any(|c| c.ends_with("-c")),
        "{:?}",
        fake.created()
    );
    assert_eq!(
        report.nodes[2].outcome,
        NodeOutcome::Skipped(Skip::AncestorNotDeployed {
            ancestor: "b".into(),
            because: Box::new(Skip::ParentFailed { parent: "a".into() }),
        })
    );
}

/// A table kept running whose COMPLETED DDL statement was deleted (as Confluent users do): its job
/// runs, so the table exists — its children start, nothing fails.
#[tokio::test]
async fn a_kept_parent_whose_finished_ddl_statement_was_deleted_still_releases_its_children() {
    let fake = FakeConfluent::start();
    fake.seed(
        "dev-dml-a",
        "INSERT INTO a SELECT * FROM src_topic",
        "RUNNING",
    );
    let mut a = node("a", &[], Action::Skip);
    a.kept_live = true;
    let nodes = vec![a, node("b", &["a"], Action::Create)];
    let report = run(&fake, &nodes, &options()).await;
    assert!(report.success(), "{report:#?}");
    assert_eq!(report.nodes[1].outcome, NodeOutcome::Done);
    assert!(
        fake.phase("dev-ddl-a").is_none(),
        "nothing sent for the kept table"
    );
}
