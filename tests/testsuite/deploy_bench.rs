//! Deploy speed against the fake (run with `scripts/bench-deploy.sh`, or
//! `cargo test --release --test testsuite deploy_bench:: -- --ignored --nocapture`): a generated 100-table pipeline,
//! 50 ms per request, 1 s for every statement to leave PENDING. The parallel deploy must finish within
//! 1.2× the critical-path bound (depth × the time of one table deployed alone); a sequential deploy
//! (shift_left's default) takes the sum.

use crate::fake_confluent::{ENV, FakeConfluent, FakeOptions, KEY, ORG, SECRET};
use flinkpipe::deploy::executor::{DeployOptions, Session};
use flinkpipe::deploy::{DeployNode, Step, deploy};
use flinkpipe::plan::Action;
use flinkpipe::target::{
    Backoff, ConfluentSettings, ConfluentTarget, Credentials, Masked, StatementKind, StatementSpec,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn fake() -> FakeConfluent {
    FakeConfluent::start_with(FakeOptions {
        step: Duration::from_secs(1),
        latency: Duration::from_millis(50),
        max_requests: 100_000,
        ..FakeOptions::default()
    })
}

fn target(fake: &FakeConfluent) -> ConfluentTarget {
    ConfluentTarget::new(ConfluentSettings {
        endpoint: fake.endpoint(),
        organization_id: ORG.into(),
        environment_id: ENV.into(),
        compute_pool_id: None,
        principal: None,
        catalog: None,
        database: None,
        credentials: Credentials {
            key: Masked::new(KEY),
            secret: Masked::new(SECRET),
        },
        request_timeout: Duration::from_secs(10),
        retry: Backoff::HTTP,
    })
    .unwrap()
}

fn node(table: &str, parents: Vec<String>) -> DeployNode {
    let spec = |kind, name: String, sql: String| Step {
        spec: StatementSpec {
            name,
            sql,
            properties: BTreeMap::new(),
            kind,
            compute_pool: None,
        },
        is_drop: false,
        rewritten_by: Vec::new(),
        file: Default::default(),
        line: 0,
    };
    let from = if parents.is_empty() {
        "src_topic".to_string()
    } else {
        parents.join(", ")
    };
    DeployNode {
        table: table.into(),
        action: Action::Create,
        reason: "bench".into(),
        parents,
        stateless: true,
        kept_live: false,
        kept_pending: false,
        upsert_sink: false,
        steps: vec![
            spec(
                StatementKind::Ddl,
                format!("bench-ddl-{table}"),
                format!("CREATE TABLE {table} (id INT)"),
            ),
            spec(
                StatementKind::Dml,
                format!("bench-dml-{table}"),
                format!("INSERT INTO {table} SELECT * FROM {from}"),
            ),
        ],
    }
}

/// 100 tables in 4 layers of 20, 30, 30, 20; each table reads 1–2 tables of the layer above.
fn pipeline() -> (Vec<DeployNode>, usize, usize) {
    let layers = [20usize, 30, 30, 20];
    let mut nodes = Vec::new();
    let mut prev: Vec<String> = Vec::new();
    for (l, &n) in layers.iter().enumerate() {
        let mut this = Vec::new();
        for i in 0..n {
            let name = format!("t{l}-{i:02}");
            let parents = if prev.is_empty() {
                vec![]
            } else {
                let a = prev[i % prev.len()].clone();
                let b = prev[(i * 7 + 3) % prev.len()].clone();
                if a == b { vec![a] } else { vec![a, b] }
            };
            nodes.push(node(&name, parents));
            this.push(name);
        }
        prev = this;
    }
    (nodes, layers.len(), *layers.iter().max().unwrap())
}

async fn timed(nodes: &[DeployNode], max_parallel: usize) -> (f64, FakeConfluent) {
    let fake = fake();
    let t = target(&fake);
    let opts = DeployOptions {
        max_parallel,
        statement_timeout: Duration::from_secs(60),
        ..DeployOptions::default()
    };
    let start = Instant::now();
    let report = deploy(&t, nodes, &opts, &Session::quiet()).await;
    let secs = start.elapsed().as_secs_f64();
    assert!(report.success(), "{report:#?}");
    (secs, fake)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: ~15 s; run with scripts/bench-deploy.sh"]
async fn hundred_tables_within_the_critical_path_bound() {
    let (one, _) = timed(&[node("solo", vec![])], 1).await;
    let (nodes, depth, width) = pipeline();
    let (parallel, fake) = timed(&nodes, width).await;
    let bound = depth as f64 * one;
    let sequential_estimate = nodes.len() as f64 * one;
    let ten: Vec<DeployNode> = (0..10).map(|i| node(&format!("s{i}"), vec![])).collect();
    let (seq10, _) = timed(&ten, 1).await;
    println!("one table (DDL + DML) alone:       {one:.2} s");
    println!(
        "100 tables, depth {depth}, width {width}, --max-parallel {width}: {parallel:.2} s ({} requests)",
        fake.request_count()
    );
    println!(
        "critical-path bound (depth x one):  {bound:.2} s  -> ratio {:.3}",
        parallel / bound
    );
    println!(
        "sequential (--max-parallel 1), 10 tables: {seq10:.2} s -> 100 tables ~ {:.1} s (sum: {sequential_estimate:.1} s)",
        seq10 * 10.0
    );
    assert!(
        parallel <= 1.2 * bound,
        "{parallel:.2} s > 1.2 x {bound:.2} s"
    );
    assert_eq!(fake.created().len(), 200);
}
