//! An in-process fake of the Confluent Cloud for Apache Flink statements API (`sql/v1`), faithful to
//! the service (<https://docs.confluent.io/cloud/current/api.html#tag/Statements-(sqlv1)>;
//! <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>) where
//! flinkpipe depends on it, with fault injection. Shared by the deploy test modules.
//!
//! It is a small HTTP/1.1 server on tokio (one request per connection, `Connection: close`), written by
//! hand rather than with axum so that faults below HTTP — a connection dropped before or after the
//! request was processed, a response slower than the client's timeout — are one line each. It binds
//! 127.0.0.1:0 only, runs on its own thread and runtime (so tests that run the real binary can use it),
//! bounds every connection in time and the whole run in requests, and records every request in order.
//!
//! Lifecycle: phases advance **on reads** (each GET of a statement, or each list, applies at most one
//! pending transition), and no sooner than `step` after the previous transition (0 by default; the
//! benchmark uses 1 s). Scripts: DDL → COMPLETED; INSERT / CTAS / STATEMENT SET → RUNNING; `FAIL_ME` in
//! the SQL → FAILED with a detail; carry-over (`sql.tables.initial-offset-from`) waits for the old
//! statement to be STOPPED; per-name outcomes ([`Outcome`]) override.
//!
//! Also: dry runs (`sql.dry-run=true`) answered COMPLETED or FAILED in the POST and never
//! stored; `EXPLAIN` statements completing with a one-row plan; `spec.compute_pool_id` and
//! `metadata.created_at` per statement and the list's `spec.compute_pool_id` filter; compute pools
//! on the same port (`fcpm/v2`: list, get, create PROVISIONING → PROVISIONED, delete; a missing pool
//! answers 404; a pool the key may not see ([`FakeConfluent::deny_pool`]) answers 403 "was not
//! found", as the real service does; `current_cfu` = its other workloads plus one per running statement
//! (left out for [`FakeConfluent::hide_pool_usage`]),
//! and at the cap new statements stay PENDING with `POOL_EXHAUSTED`); the Metrics API
//! (`POST /v2/metrics/cloud/query`, grouped by statement, a resource filter required). Both take the
//! Cloud API key ([`CLOUD_KEY`]) and refuse the Flink key with 401, as the statements API refuses
//! the Cloud key. The Kafka REST API v3 (`/kafka/v3/`, the Kafka key [`KAFKA_KEY`]): topics, and
//! consumer groups with their consumers, assignments and lags ([`FakeConfluent::add_group`]).

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const ORG: &str = "1111aaaa-11aa-11aa-11aa-111111aaaaaa";
pub const ENV: &str = "env-abc123";
pub const KEY: &str = "FAKEKEY7Q2ZLMN0P";
pub const SECRET: &str = "fake-secret-Zx9vB3nQ8wLk2Jr5";
/// The Cloud API key of the control plane (`fcpm/v2`) and the Metrics API; the Flink key is refused
/// there with 401, as on the real service
/// (<https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>).
pub const CLOUD_KEY: &str = "CLOUDKEY4R7T2WQ9X";
pub const CLOUD_SECRET: &str = "cloud-secret-Pq7mW2xZ9sLk4Nv8";
/// The pool every statement runs in unless its POST names another.
pub const DEFAULT_POOL: &str = "lfcp-fake";
/// The Kafka API key the fake's Kafka REST API (`/kafka/v3/`) accepts (and no other plane).
pub const KAFKA_KEY: &str = "KAFKAKEY8M3N5BV2";
pub const KAFKA_SECRET: &str = "kafka-secret-Hj6tR1yU4iO9pL3k";
/// The Kafka cluster the fake's REST API serves.
pub const KAFKA_CLUSTER: &str = "lkc-fake01";

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path without the query, relative to the statements collection when under it
    /// (`/statements`, `/statements/<name>`), else the full path.
    pub path: String,
    pub query: String,
    /// `name` of a POST body.
    pub body_name: Option<String>,
    /// The raw body (secrets never travel in bodies; kept for assertions on PATCH bodies).
    pub body: String,
    pub content_type: Option<String>,
    /// Whether the Authorization header carried the right credentials.
    pub authorized: bool,
    /// Whether any header value contained the secret in clear (must never happen).
    pub secret_in_clear: bool,
}

impl Recorded {
    /// A statement POST with `sql.dry-run=true`.
    pub fn is_dry_run(&self) -> bool {
        self.method == "POST"
            && serde_json::from_str::<serde_json::Value>(&self.body)
                .ok()
                .and_then(|v| {
                    v.pointer("/spec/properties/sql.dry-run")
                        .and_then(|x| x.as_str())
                        .map(|x| x == "true")
                })
                .unwrap_or(false)
    }
}

/// What a fault does to the matching request.
#[derive(Debug, Clone)]
pub enum FaultAction {
    /// Answer with this status, extra headers and body, without processing the request.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Close the connection without answering and without processing.
    DropBefore,
    /// Process the request (a POST creates the statement), then close without answering: the client
    /// cannot know the outcome.
    DropAfter,
    /// Wait this long, then process and answer normally (exercises client timeouts).
    Slow(Duration),
    /// Answer 307 to this absolute URL prefix + the request's path and query.
    Redirect(String),
}

/// A fault for the next `times` requests that match.
#[derive(Debug, Clone)]
pub struct Fault {
    /// `GET`, `POST`, … or `None` for any.
    pub method: Option<String>,
    /// Substring of the path, or `None` for any.
    pub path_contains: Option<String>,
    pub action: FaultAction,
    pub times: usize,
}

impl Fault {
    pub fn new(
        method: Option<&str>,
        path_contains: Option<&str>,
        action: FaultAction,
        times: usize,
    ) -> Self {
        Fault {
            method: method.map(str::to_string),
            path_contains: path_contains.map(str::to_string),
            action,
            times,
        }
    }

    /// `status` with an empty body.
    pub fn status(method: Option<&str>, status: u16, times: usize) -> Self {
        Self::new(
            method,
            None,
            FaultAction::Status {
                status,
                headers: vec![],
                body: String::new(),
            },
            times,
        )
    }

    /// 429 with `Retry-After: secs`.
    pub fn too_many(method: Option<&str>, secs: u64, times: usize) -> Self {
        Self::new(
            method,
            None,
            FaultAction::Status {
                status: 429,
                headers: vec![("Retry-After".into(), secs.to_string())],
                body: String::new(),
            },
            times,
        )
    }
}

/// A per-statement outcome that overrides the default script.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// PENDING → FAILED with this detail.
    Fail(String),
    /// Stays PENDING forever.
    StuckPending,
    /// PENDING → RUNNING → DEGRADED (stays).
    Degraded,
    /// PENDING with `POOL_EXHAUSTED` detail forever.
    PoolExhausted,
}

#[derive(Debug, Clone)]
struct Stmt {
    name: String,
    sql: String,
    properties: BTreeMap<String, String>,
    stopped: bool,
    phase: String,
    detail: String,
    script: VecDeque<(String, String)>,
    last_change: Instant,
    version: u64,
    is_dml: bool,
    deleting_reads: u32,
    carry_from: Option<String>,
    /// A query's canned result (SELECT statements matched by [`FakeConfluent::add_query`]).
    results: Option<QueryScript>,
    /// `spec.compute_pool_id`.
    pool: String,
    /// `metadata.created_at` (RFC 3339).
    created_at: String,
    /// `status.scaling_status.scaling_state` is `POOL_EXHAUSTED`.
    pool_exhausted: bool,
    /// `metadata.labels`, as POSTed.
    labels: BTreeMap<String, String>,
    /// `status.state_limit_status`: (state, detail).
    state_limit: Option<(String, String)>,
    /// `status.warnings`: (severity, reason, message).
    warnings: Vec<(String, String, String)>,
    /// Exceptions besides the one of a FAILED statement: (name, message), oldest first.
    exceptions: Vec<(String, String)>,
    /// `status.latest_offsets`, filled once STOPPED.
    latest_offsets: BTreeMap<String, String>,
    /// PUTs still to meet a concurrent change (the version bumped just before): answered 409.
    conflicts: u32,
}

/// A compute pool of `fcpm/v2`
/// (<https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>).
#[derive(Debug, Clone)]
pub struct Pool {
    pub id: String,
    pub display_name: String,
    pub max_cfu: u32,
    /// PROVISIONING → PROVISIONED after one read.
    pub phase: String,
    /// CFUs used by statements outside the fake's own (another team's): added to the count.
    pub extra_cfu: u32,
    /// `status.current_cfu` is left out of the answers.
    pub usage_hidden: bool,
}

/// A dry run the fake answered (never stored as a statement).
#[derive(Debug, Clone)]
pub struct DryRun {
    pub name: String,
    pub sql: String,
    pub properties: BTreeMap<String, String>,
    /// COMPLETED or FAILED.
    pub phase: String,
}

/// The canned result of a query: the schema, the upsert key, pages of `(op, row)` (`op` `None` is
/// sent without the field, meaning `+I`), and whether the query is bounded (COMPLETED once drained).
#[derive(Debug, Clone, Default)]
pub struct QueryScript {
    /// `traits.schema.columns`: `[{"name": …, "type": {"type": …}}]`.
    pub columns: serde_json::Value,
    pub upsert_columns: Option<Vec<usize>>,
    pub pages: Vec<Vec<(Option<u8>, serde_json::Value)>>,
    pub bounded: bool,
    /// Results reads answered 409 "not ready" after the statement is RUNNING (the real service
    /// also answers 409 while PENDING).
    pub not_ready_reads: u32,
    /// `(page, detail)`: the statement goes FAILED with `detail` when page `page` (0-based) is
    /// served (its rows still sent, as rows flushed before the failure); later pages carry none.
    pub fail_at: Option<(usize, String)>,
    /// After the failure the results end (a page without `next`) instead of going on empty.
    pub fail_ends: bool,
    /// An extra `(name, value)` the service adds to every `next` link; a page read without it is
    /// answered 400 (a client that rebuilds links instead of following them).
    pub next_param: Option<(String, String)>,
}

#[derive(Default)]
struct State {
    statements: BTreeMap<String, Stmt>,
    order: Vec<String>,
    requests: Vec<Recorded>,
    faults: Vec<Fault>,
    outcomes: BTreeMap<String, Outcome>,
    next_id: u64,
    /// SELECTs whose SQL contains the text get the script.
    queries: Vec<(String, QueryScript)>,
    chaos: Option<Chaos>,
    /// Compute pools by id.
    pools: BTreeMap<String, Pool>,
    /// Pools the Cloud API key may not see (403).
    denied_pools: Vec<String>,
    pool_seq: u64,
    /// Dry runs answered, in order.
    dry_runs: Vec<DryRun>,
    /// Dry runs of SQL containing the text FAIL with the detail.
    dry_run_failures: Vec<(String, String)>,
    /// Dry runs are stored as statements answered PENDING, ending (COMPLETED or FAILED) on the
    /// next read, and kept until deleted ([`FakeConfluent::keep_dry_runs`]).
    keep_dry_runs: bool,
    /// Statements whose transitions a list does not apply (only a GET of the statement does):
    /// "the plan read it PENDING, the deploy's next read found it FAILED".
    get_only: std::collections::BTreeSet<String>,
    /// Metrics API values by statement: (records in, records out, pending records).
    metrics: BTreeMap<String, (u64, u64, u64)>,
    /// Bodies of the Metrics API queries received.
    metric_queries: Vec<serde_json::Value>,
    /// Environments of the organization besides [`ENV`] (`org/v2/environments`).
    environments: Vec<(String, String)>,
    /// Topics of [`KAFKA_CLUSTER`] (name, partitions), for the Kafka REST API.
    topics: Vec<(String, u64)>,
    /// Consumer groups of [`KAFKA_CLUSTER`], for the Kafka REST API's consumer-group endpoints.
    groups: Vec<FakeGroup>,
    /// `/lags` answers 404, as on a cluster that is not dedicated.
    lags_unsupported: bool,
    /// Every text field of every answer echoes the credentials ([`FakeConfluent::echo_secrets`]).
    echo_secrets: bool,
    /// Materialized tables by name: what a `CREATE [OR ALTER] MATERIALIZED TABLE` statement makes
    /// (the GA `sql/v1` Materialized Tables API).
    materialized: BTreeMap<String, FakeMaterialized>,
}

/// A materialized table of the fake (`sql.v1.MaterializedTable`), with its versions.
#[derive(Debug, Clone)]
pub struct FakeMaterialized {
    pub name: String,
    /// `spec.kafka_cluster_id`: [`KAFKA_CLUSTER`].
    pub kafka_cluster_id: String,
    /// `status.phase`.
    pub phase: String,
    pub detail: String,
    pub stopped: bool,
    /// `status.version` and `status.latest_version`.
    pub version: u32,
    pub latest_version: u32,
    /// `metadata.resource_version`, one more per update.
    pub resource_version: u32,
    /// `spec.query`.
    pub query: String,
    /// `spec.compute_pool_id`.
    pub pool: String,
    /// Each version's `CREATE OR ALTER …` statement, version 1 first.
    pub statements: Vec<String>,
    /// Updates to answer 409 (a concurrent change) before one goes through.
    pub conflicts: u32,
}

/// A consumer group of the fake's Kafka cluster.
#[derive(Debug, Clone, Default)]
pub struct FakeGroup {
    pub id: String,
    /// `STABLE`, `EMPTY`, …
    pub state: String,
    /// Consumers: (consumer id, assigned (topic, partition)s).
    pub consumers: Vec<(String, Vec<(String, i64)>)>,
    /// Committed offsets: (topic, partition, current offset, log end offset).
    pub offsets: Vec<(String, i64, i64, i64)>,
}

/// Random faults on a share of all requests ([`FakeConfluent::set_chaos`]).
#[derive(Debug, Clone, Default)]
struct Chaos {
    /// One request in `one_in` fails.
    one_in: u64,
    /// splitmix64 state: the same seed injects the same faults into the same request sequence.
    rng: u64,
    /// 429s and 503s answered so far.
    injected: BTreeMap<u16, usize>,
}

impl Chaos {
    fn next(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The fault for the next request, if it is one of the unlucky ones: 429 with `Retry-After: 1`
    /// or 503, half each, neither processed.
    fn draw(&mut self) -> Option<FaultAction> {
        let r = self.next();
        if !r.is_multiple_of(self.one_in) {
            return None;
        }
        let status = if (r >> 32) & 1 == 0 { 429 } else { 503 };
        *self.injected.entry(status).or_default() += 1;
        let headers = if status == 429 {
            vec![("Retry-After".to_string(), "1".to_string())]
        } else {
            vec![]
        };
        Some(FaultAction::Status {
            status,
            headers,
            body: String::new(),
        })
    }
}

/// Behaviour knobs.
#[derive(Debug, Clone)]
pub struct FakeOptions {
    /// Minimum time between two transitions of a statement (0: one per read).
    pub step: Duration,
    /// Delay added before every answer.
    pub latency: Duration,
    /// Total requests served before the fake answers 500 "request budget exhausted".
    pub max_requests: usize,
    /// Default `page_size` of the list.
    pub default_page_size: usize,
}

impl Default for FakeOptions {
    fn default() -> Self {
        FakeOptions {
            step: Duration::ZERO,
            latency: Duration::ZERO,
            max_requests: 20_000,
            default_page_size: 10,
        }
    }
}

/// A running fake server.
pub struct FakeConfluent {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    options: FakeOptions,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl FakeConfluent {
    /// Starts a fake with default options.
    pub fn start() -> Self {
        Self::start_with(FakeOptions::default())
    }

    /// A fake with the default pool ([`DEFAULT_POOL`], display name `default`, 50 CFU, none in
    /// use: the `flink.compute_pool_id` of [`crate::support::test::confluent_config`]) on its
    /// control plane.
    pub fn with_default_pool() -> Self {
        let f = Self::start();
        f.add_pool(DEFAULT_POOL, "default", 50, 0);
        f
    }

    /// Starts a fake on 127.0.0.1 with an ephemeral port, on its own thread.
    pub fn start_with(options: FakeOptions) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let st = state.clone();
        let opts = options.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let serve = async {
                    loop {
                        let Ok((sock, _)) = listener.accept().await else {
                            continue;
                        };
                        let st = st.clone();
                        let opts = opts.clone();
                        tokio::spawn(async move {
                            let _ = tokio::time::timeout(
                                Duration::from_secs(30),
                                handle(sock, st, opts),
                            )
                            .await;
                        });
                    }
                };
                tokio::select! {
                    _ = serve => {}
                    _ = rx => {}
                }
            });
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        FakeConfluent {
            addr,
            state,
            options,
            _shutdown: tx,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn add_fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push(f);
    }

    /// From now on, one request in `one_in` (drawn from `seed`) answers 429 (`Retry-After: 1`) or
    /// 503 without being processed, on top of the scripted faults.
    pub fn set_chaos(&self, one_in: u64, seed: u64) {
        self.state.lock().unwrap().chaos = Some(Chaos {
            one_in: one_in.max(1),
            rng: seed,
            injected: BTreeMap::new(),
        });
    }

    /// The faults the chaos injected so far: status → count.
    pub fn chaos_injected(&self) -> BTreeMap<u16, usize> {
        self.state
            .lock()
            .unwrap()
            .chaos
            .as_ref()
            .map(|c| c.injected.clone())
            .unwrap_or_default()
    }

    pub fn set_outcome(&self, name: &str, o: Outcome) {
        self.state
            .lock()
            .unwrap()
            .outcomes
            .insert(name.to_string(), o);
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Names of the POSTed statements, in order (duplicates included); dry runs
    /// (`sql.dry-run=true`, never stored) are not creates and are left out ([`FakeConfluent::dry_runs`]).
    pub fn posts(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && !r.is_dry_run())
            .filter_map(|r| r.body_name)
            .collect()
    }

    /// Names of statements that were actually created, in creation order.
    pub fn created(&self) -> Vec<String> {
        self.state.lock().unwrap().order.clone()
    }

    /// The query statements created (`sql query`, `table preview`, live tests: names holding
    /// `-query-`), in creation order.
    pub fn queries(&self) -> Vec<String> {
        self.created()
            .into_iter()
            .filter(|n| n.contains("-query-"))
            .collect()
    }

    /// Whether statement `name` was deleted: a DELETE was sent and it is gone or DELETING (the
    /// fake shows DELETING until the next read).
    pub fn was_deleted(&self, name: &str) -> bool {
        self.deletes().iter().any(|d| d == name) && self.phase(name).is_none_or(|p| p == "DELETING")
    }

    /// DELETE paths requested.
    pub fn deletes(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "DELETE")
            .map(|r| r.path.trim_start_matches("/statements/").to_string())
            .collect()
    }

    /// Phase of a statement (`None`: absent).
    pub fn phase(&self, name: &str) -> Option<String> {
        self.state
            .lock()
            .unwrap()
            .statements
            .get(name)
            .map(|s| s.phase.clone())
    }

    /// SQL of a stored statement.
    pub fn sql(&self, name: &str) -> Option<String> {
        self.state
            .lock()
            .unwrap()
            .statements
            .get(name)
            .map(|s| s.sql.clone())
    }

    /// `spec.compute_pool_id` of a stored statement.
    pub fn statement_pool(&self, name: &str) -> Option<String> {
        self.state
            .lock()
            .unwrap()
            .statements
            .get(name)
            .map(|s| s.pool.clone())
    }

    /// Properties of a stored statement.
    pub fn properties(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.state
            .lock()
            .unwrap()
            .statements
            .get(name)
            .map(|s| s.properties.clone())
    }

    /// Phases of every stored statement.
    pub fn phases(&self) -> BTreeMap<String, String> {
        self.state
            .lock()
            .unwrap()
            .statements
            .iter()
            .map(|(k, v)| (k.clone(), v.phase.clone()))
            .collect()
    }

    /// Stores a statement directly (as if deployed earlier) in `phase`.
    pub fn seed(&self, name: &str, sql: &str, phase: &str) {
        let mut st = self.state.lock().unwrap();
        let is_dml = !is_ddl(sql);
        st.statements.insert(
            name.to_string(),
            Stmt {
                name: name.to_string(),
                sql: sql.to_string(),
                properties: BTreeMap::new(),
                stopped: phase == "STOPPED",
                phase: phase.to_string(),
                detail: String::new(),
                script: VecDeque::new(),
                last_change: Instant::now(),
                version: 1,
                is_dml,
                deleting_reads: 0,
                carry_from: None,
                results: None,
                pool: DEFAULT_POOL.to_string(),
                created_at: rfc3339_days_ago(0),
                pool_exhausted: false,
                labels: BTreeMap::new(),
                state_limit: None,
                warnings: Vec::new(),
                exceptions: Vec::new(),
                latest_offsets: BTreeMap::new(),
                conflicts: 0,
            },
        );
    }

    /// Sets a stored statement's `spec.properties` (`sql.current-catalog`, …), as its owner sent them.
    pub fn set_properties(&self, name: &str, properties: &[(&str, &str)]) {
        let mut st = self.state.lock().unwrap();
        let s = st.statements.get_mut(name).expect("a stored statement");
        s.properties = properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    }

    /// Removes a statement at once, as if deleted earlier (nothing recorded as a request).
    pub fn remove(&self, name: &str) {
        self.state.lock().unwrap().statements.remove(name);
    }

    /// Stores a statement as [`FakeConfluent::seed`] does, in `pool`, created `age_days` ago.
    pub fn seed_in_pool(&self, name: &str, sql: &str, phase: &str, pool: &str, age_days: u64) {
        self.seed(name, sql, phase);
        let mut st = self.state.lock().unwrap();
        let s = st.statements.get_mut(name).unwrap();
        s.pool = pool.to_string();
        s.created_at = rfc3339_days_ago(age_days);
    }

    /// Adds a topic to [`KAFKA_CLUSTER`] (listed by `GET /kafka/v3/clusters/<id>/topics`, two per
    /// page).
    pub fn add_topic(&self, name: &str, partitions: u64) {
        self.state
            .lock()
            .unwrap()
            .topics
            .push((name.to_string(), partitions));
    }

    /// Adds a consumer group to [`KAFKA_CLUSTER`] (listed two per page by `GET
    /// /kafka/v3/clusters/<id>/consumer-groups`, with `/consumers`, `/consumers/<id>/assignments`
    /// and `/lags`).
    pub fn add_group(&self, group: FakeGroup) {
        self.state.lock().unwrap().groups.push(group);
    }

    /// Makes `/lags` answer 404, as Confluent Cloud does on clusters that are not dedicated.
    pub fn unsupported_lags(&self) {
        self.state.lock().unwrap().lags_unsupported = true;
    }

    /// Adds an environment to the organization's (`GET /org/v2/environments` lists [`ENV`], named
    /// `dev`, then these, one per page).
    pub fn add_environment(&self, id: &str, display_name: &str) {
        self.state
            .lock()
            .unwrap()
            .environments
            .push((id.to_string(), display_name.to_string()));
    }

    /// Adds a PROVISIONED compute pool of `max_cfu`, `extra_cfu` of which other workloads use.
    pub fn add_pool(&self, id: &str, display_name: &str, max_cfu: u32, extra_cfu: u32) {
        self.state.lock().unwrap().pools.insert(
            id.to_string(),
            Pool {
                id: id.to_string(),
                display_name: display_name.to_string(),
                max_cfu,
                phase: "PROVISIONED".into(),
                extra_cfu,
                usage_hidden: false,
            },
        );
    }

    /// Sets a pool's `status.phase` (`FAILED`, `DEPROVISIONING`, …).
    pub fn set_pool_phase(&self, id: &str, phase: &str) {
        if let Some(p) = self.state.lock().unwrap().pools.get_mut(id) {
            p.phase = phase.to_string();
        }
    }

    /// Leaves `status.current_cfu` out of the pool's answers.
    pub fn hide_pool_usage(&self, id: &str) {
        if let Some(p) = self.state.lock().unwrap().pools.get_mut(id) {
            p.usage_hidden = true;
        }
    }

    /// The Cloud API key may not see pool `id`: reads and deletes of it answer 403 "The compute pool
    /// … was not found." (the real service's answer to a key without permission).
    pub fn deny_pool(&self, id: &str) {
        self.state.lock().unwrap().denied_pools.push(id.to_string());
    }

    /// A compute pool and its `status.current_cfu`.
    pub fn pool(&self, id: &str) -> Option<(Pool, u32)> {
        let st = self.state.lock().unwrap();
        st.pools.get(id).map(|p| (p.clone(), current_cfu(&st, p)))
    }

    /// Ids of the compute pools.
    pub fn pool_ids(&self) -> Vec<String> {
        self.state.lock().unwrap().pools.keys().cloned().collect()
    }

    /// From now on, dry runs are answered PENDING and stored until deleted (the answer the API
    /// allows but the service has not been seen to give): the client must poll and clean up.
    pub fn keep_dry_runs(&self) {
        self.state.lock().unwrap().keep_dry_runs = true;
    }

    /// Every dry run answered so far.
    pub fn dry_runs(&self) -> Vec<DryRun> {
        self.state.lock().unwrap().dry_runs.clone()
    }

    /// Dry runs of SQL containing `needle` answer FAILED with `detail`.
    pub fn fail_dry_run(&self, needle: &str, detail: &str) {
        self.state
            .lock()
            .unwrap()
            .dry_run_failures
            .push((needle.to_string(), detail.to_string()));
    }

    /// What the Metrics API reports for a statement.
    pub fn set_metrics(&self, name: &str, records_in: u64, records_out: u64, pending: u64) {
        self.state
            .lock()
            .unwrap()
            .metrics
            .insert(name.to_string(), (records_in, records_out, pending));
    }

    /// Bodies of the Metrics API queries received.
    pub fn metric_queries(&self) -> Vec<serde_json::Value> {
        self.state.lock().unwrap().metric_queries.clone()
    }

    /// Gives the next SELECT statements whose SQL contains `sql_contains` this result.
    pub fn add_query(&self, sql_contains: &str, script: QueryScript) {
        self.state
            .lock()
            .unwrap()
            .queries
            .push((sql_contains.to_string(), script));
    }

    /// Names of stored statements (deleted ones excluded once gone).
    pub fn names(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap()
            .statements
            .keys()
            .cloned()
            .collect()
    }

    /// Replaces the pending transitions of a stored statement: each read (GET or list) applies the
    /// next `(phase, detail)` (no sooner than `step`), as for a statement just created.
    pub fn script(&self, name: &str, steps: &[(&str, &str)]) {
        let mut st = self.state.lock().unwrap();
        if let Some(s) = st.statements.get_mut(name) {
            s.script = steps
                .iter()
                .map(|(p, d)| (p.to_string(), d.to_string()))
                .collect();
        }
    }

    /// From now on, listings do not move `name` along its script; only a GET of it does.
    pub fn advance_on_get_only(&self, name: &str) {
        self.state.lock().unwrap().get_only.insert(name.to_string());
    }

    /// Forces a phase now (e.g. FAILED with a detail, or DEGRADED after RUNNING).
    pub fn force_phase(&self, name: &str, phase: &str, detail: &str) {
        let mut st = self.state.lock().unwrap();
        if let Some(s) = st.statements.get_mut(name) {
            s.phase = phase.to_string();
            s.detail = detail.to_string();
            s.script.clear();
            s.version += 1;
        }
    }

    /// From now on every human text of every answer (`detail`, `message`, `title`, `reason` at any
    /// depth: `status.detail`, exceptions, warnings, error bodies) ends with [`echoed_secrets`], as
    /// some error paths of real services echo the credentials they were given.
    pub fn echo_secrets(&self) {
        self.state.lock().unwrap().echo_secrets = true;
    }

    /// Sets `status.state_limit_status` of a stored statement (`APPROACHING_SOFT_LIMIT`, …).
    pub fn set_state_limit(&self, name: &str, state: &str, detail: &str) {
        self.with_stmt(name, |s| {
            s.state_limit = Some((state.to_string(), detail.to_string()))
        });
    }

    /// Adds one of `status.warnings` to a stored statement.
    pub fn add_warning(&self, name: &str, severity: &str, reason: &str, message: &str) {
        self.with_stmt(name, |s| {
            s.warnings
                .push((severity.into(), reason.into(), message.into()))
        });
    }

    /// Adds an exception (newest so far) to a stored statement's `/exceptions`.
    pub fn add_exception(&self, name: &str, class: &str, message: &str) {
        self.with_stmt(name, |s| s.exceptions.push((class.into(), message.into())));
    }

    /// The materialized table `name`, when a statement made it.
    pub fn materialized(&self, name: &str) -> Option<FakeMaterialized> {
        self.state.lock().unwrap().materialized.get(name).cloned()
    }

    /// Changes the materialized table `name` (its phase, detail, versions…).
    pub fn with_materialized(&self, name: &str, f: impl FnOnce(&mut FakeMaterialized)) {
        let mut s = self.state.lock().unwrap();
        f(s.materialized
            .get_mut(name)
            .expect("a materialized table of the fake"));
    }

    /// The next `n` PUTs of `name` meet a concurrent change: the statement's version is bumped just
    /// before each, so its `resource_version` is stale and the PUT is answered 409.
    pub fn conflict_puts(&self, name: &str, n: u32) {
        self.with_stmt(name, |s| s.conflicts = n);
    }

    /// `metadata.labels` of a stored statement.
    pub fn labels(&self, name: &str) -> Option<BTreeMap<String, String>> {
        self.state
            .lock()
            .unwrap()
            .statements
            .get(name)
            .map(|s| s.labels.clone())
    }

    fn with_stmt(&self, name: &str, f: impl FnOnce(&mut Stmt)) {
        let mut st = self.state.lock().unwrap();
        let s = st
            .statements
            .get_mut(name)
            .unwrap_or_else(|| panic!("no statement {name}"));
        f(s);
        s.version += 1;
    }

    /// Requests received so far.
    pub fn request_count(&self) -> usize {
        self.state.lock().unwrap().requests.len()
    }

    pub fn options(&self) -> &FakeOptions {
        &self.options
    }
}

/// A DML that ends by itself: its reads are bounded (`sql.tables.scan.bounded.mode` set).
fn is_bounded_dml(props: &BTreeMap<String, String>) -> bool {
    props
        .get("sql.tables.scan.bounded.mode")
        .is_some_and(|m| m != "unbounded")
}

fn is_ddl(sql: &str) -> bool {
    let u = strip_leading_comments(sql).to_ascii_uppercase();
    let words: Vec<&str> = u.split_whitespace().collect();
    let starts = |w: &[&str]| words.len() >= w.len() && words[..w.len()] == *w;
    if starts(&["INSERT"]) || starts(&["EXECUTE"]) || starts(&["SELECT"]) || starts(&["WITH"]) {
        return false;
    }
    if starts(&["CREATE"]) && words.contains(&"AS") && !starts(&["CREATE", "VIEW"]) {
        // CTAS (CREATE TABLE … AS SELECT): runs.
        return !u.contains(" AS SELECT")
            && !u.contains("\nAS SELECT")
            && !u.contains(" AS\nSELECT")
            && !u.contains("AS (SELECT");
    }
    true
}

fn strip_leading_comments(sql: &str) -> String {
    sql.lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What [`FakeConfluent::echo_secrets`] appends: every key, secret and Basic token the fake accepts.
pub fn echoed_secrets() -> String {
    format!(
        " (auth key={KEY} secret={SECRET} header=Basic {} cloud={CLOUD_KEY}:{CLOUD_SECRET} Basic {})",
        basic(KEY, SECRET),
        basic(CLOUD_KEY, CLOUD_SECRET)
    )
}

/// Every secret the fake knows, and the Basic tokens built from them: none may ever be printed.
pub fn all_secrets() -> Vec<String> {
    vec![
        KEY.into(),
        SECRET.into(),
        CLOUD_KEY.into(),
        CLOUD_SECRET.into(),
        KAFKA_KEY.into(),
        KAFKA_SECRET.into(),
        basic(KEY, SECRET),
        basic(CLOUD_KEY, CLOUD_SECRET),
        basic(KAFKA_KEY, KAFKA_SECRET),
    ]
}

/// Appends [`echoed_secrets`] to every human text of `v`.
fn echo_into(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    serde_json::Value::String(t)
                        if matches!(k.as_str(), "detail" | "message" | "title" | "reason") =>
                    {
                        t.push_str(&echoed_secrets())
                    }
                    _ => echo_into(x),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(echo_into),
        _ => {}
    }
}

fn basic(key: &str, secret: &str) -> String {
    flinkpipe::target::secrets::base64(format!("{key}:{secret}").as_bytes())
}

struct Req {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

async fn read_request(sock: &mut TcpStream) -> Option<Req> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target, String::new()),
    };
    Some(Req {
        method,
        path,
        query,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}

struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

fn json(status: u16, v: serde_json::Value) -> Resp {
    Resp {
        status,
        headers: vec![],
        body: v.to_string(),
    }
}

fn err(status: u16, detail: &str) -> Resp {
    json(
        status,
        serde_json::json!({"errors": [{"id": "e1", "status": status.to_string(), "detail": detail, "source": {}}]}),
    )
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        403 => "Forbidden",
        409 => "Conflict",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

async fn write_resp(sock: &mut TcpStream, r: Resp, id: u64) {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nX-Request-Id: req-{id}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.body.len()
    );
    for (k, v) in &r.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&r.body);
    let _ = sock.write_all(out.as_bytes()).await;
    let _ = sock.flush().await;
    let _ = sock.shutdown().await;
}

async fn handle(mut sock: TcpStream, st: Arc<Mutex<State>>, opts: FakeOptions) {
    let Some(req) = read_request(&mut sock).await else {
        return;
    };
    let base = format!("/sql/v1/organizations/{ORG}/environments/{ENV}");
    let rel = req.path.strip_prefix(&base).map(str::to_string);
    // The control plane (`fcpm/v2`) and the Metrics API take a Cloud API key, the statements API
    // the Flink key; each refuses the other.
    let control = req.path.starts_with("/fcpm/")
        || req.path.starts_with("/v2/metrics/")
        || req.path.starts_with("/org/");
    let kafka = req.path.starts_with("/kafka/v3/");
    let (key, secret) = if kafka {
        (KAFKA_KEY, KAFKA_SECRET)
    } else if control {
        (CLOUD_KEY, CLOUD_SECRET)
    } else {
        (KEY, SECRET)
    };
    let auth_ok = req.header("authorization") == Some(&format!("Basic {}", basic(key, secret)));
    let secret_in_clear = req
        .headers
        .iter()
        .any(|(_, v)| v.contains(SECRET) || v.contains(CLOUD_SECRET) || v.contains(KAFKA_SECRET));
    let body_name = serde_json::from_str::<serde_json::Value>(&req.body)
        .ok()
        .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string));
    let (fault, id, over_budget) = {
        let mut s = st.lock().unwrap();
        s.next_id += 1;
        let id = s.next_id;
        s.requests.push(Recorded {
            method: req.method.clone(),
            path: rel.clone().unwrap_or_else(|| req.path.clone()),
            query: req.query.clone(),
            body_name,
            body: req.body.clone(),
            content_type: req.header("content-type").map(str::to_string),
            authorized: auth_ok,
            secret_in_clear,
        });
        let over = s.requests.len() > opts.max_requests;
        let mut fault = None;
        if let Some(i) = s.faults.iter().position(|f| {
            f.times > 0
                && f.method.as_deref().is_none_or(|m| m == req.method)
                && f.path_contains
                    .as_deref()
                    .is_none_or(|p| req.path.contains(p))
        }) {
            s.faults[i].times -= 1;
            fault = Some(s.faults[i].action.clone());
            if s.faults[i].times == 0 {
                s.faults.remove(i);
            }
        }
        if fault.is_none() {
            fault = s.chaos.as_mut().and_then(Chaos::draw);
        }
        (fault, id, over)
    };
    if !opts.latency.is_zero() {
        tokio::time::sleep(opts.latency).await;
    }
    if over_budget {
        write_resp(&mut sock, err(500, "fake: request budget exhausted"), id).await;
        return;
    }
    match fault {
        Some(FaultAction::Status {
            status,
            headers,
            body,
        }) => {
            write_resp(
                &mut sock,
                Resp {
                    status,
                    headers,
                    body,
                },
                id,
            )
            .await;
            return;
        }
        Some(FaultAction::DropBefore) => return,
        Some(FaultAction::Redirect(prefix)) => {
            let q = if req.query.is_empty() {
                String::new()
            } else {
                format!("?{}", req.query)
            };
            let r = Resp {
                status: 307,
                headers: vec![("Location".into(), format!("{prefix}{}{q}", req.path))],
                body: String::new(),
            };
            write_resp(&mut sock, r, id).await;
            return;
        }
        Some(FaultAction::Slow(d)) => tokio::time::sleep(d).await,
        _ => {}
    }
    let resp = if !auth_ok {
        let mut r = err(401, "Valid authentication credentials must be provided");
        r.headers.push((
            "WWW-Authenticate".into(),
            "Basic error=\"invalid_key\", error_description=\"The API Key is invalid\"".into(),
        ));
        r
    } else {
        let host = req.header("host").unwrap_or("127.0.0.1").to_string();
        match rel {
            Some(rel) => route(&st, &opts, &req, &rel, &host, &base),
            None if kafka => route_kafka(&st, &req, &host),
            None if control => route_control(&st, &req, &host),
            None => err(404, &format!("no route {}", req.path)),
        }
    };
    if matches!(fault, Some(FaultAction::DropAfter)) {
        return;
    }
    let mut resp = resp;
    if st.lock().unwrap().echo_secrets
        && let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&resp.body)
    {
        echo_into(&mut v);
        resp.body = v.to_string();
    }
    write_resp(&mut sock, resp, id).await;
}

fn view(s: &Stmt) -> serde_json::Value {
    let traits = match (s.phase.as_str(), &s.results) {
        ("RUNNING" | "COMPLETED", Some(q)) => serde_json::json!({
            "sql_kind": "SELECT",
            "is_bounded": q.bounded,
            "is_append_only": q.pages.iter().flatten().all(|(op, _)| op.unwrap_or(0) == 0),
            "upsert_columns": q.upsert_columns,
            "schema": {"columns": q.columns}
        }),
        ("RUNNING" | "COMPLETED" | "DEGRADED" | "STOPPED", _) => serde_json::json!({
            "sql_kind": if s.is_dml { "INSERT_INTO" } else { "CREATE_TABLE" },
            "is_bounded": !s.is_dml, "is_append_only": true, "upsert_columns": null, "schema": null
        }),
        _ => serde_json::json!({}),
    };
    let mut v = serde_json::json!({
        "api_version": "sql/v1", "kind": "Statement", "name": s.name,
        "organization_id": ORG, "environment_id": ENV,
        "metadata": {"self": format!("http://fake{}/statements/{}", statements_base(), s.name), "resource_version": s.version.to_string(), "uid": format!("uid-{}", s.name), "labels": s.labels, "created_at": s.created_at},
        "spec": {"statement": s.sql, "properties": s.properties, "compute_pool_id": s.pool, "principal": "sa-fake", "stopped": s.stopped},
        "status": {"phase": s.phase, "detail": s.detail, "traits": traits,
                   "scaling_status": {"scaling_state": if s.pool_exhausted && s.phase == "PENDING" { "POOL_EXHAUSTED" } else { "OK" }},
                   "network_kind": "PUBLIC",
                   "warnings": s.warnings.iter().map(|(sev, reason, message)| serde_json::json!({"severity": sev, "created_at": "2026-01-01T10:00:00Z", "reason": reason, "message": message})).collect::<Vec<_>>(),
                   "latest_offsets": if s.phase == "STOPPED" { serde_json::json!(s.latest_offsets) } else { serde_json::json!({}) },
                   "latest_offsets_timestamp": if s.phase == "STOPPED" && !s.latest_offsets.is_empty() { "2026-01-01T10:05:00Z" } else { "0001-01-01T00:00:00Z" }}
    });
    if let Some((state, detail)) = &s.state_limit {
        v["status"]["state_limit_status"] = serde_json::json!({"state_limit_state": state, "detail": detail, "last_updated": "2026-01-01T10:00:00Z"});
    }
    v
}

/// The statements collection's path under the fake's host.
fn statements_base() -> String {
    format!("/sql/v1/organizations/{ORG}/environments/{ENV}")
}

/// The offsets a stopped statement of the fake reports: one topic per table it reads (`FROM x` /
/// `JOIN x`), two partitions.
fn offsets_of(sql: &str) -> BTreeMap<String, String> {
    let words: Vec<&str> = sql.split_whitespace().collect();
    words
        .windows(2)
        .filter(|w| w[0].eq_ignore_ascii_case("FROM") || w[0].eq_ignore_ascii_case("JOIN"))
        .map(|w| w[1].trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_'))
        .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("select"))
        .map(|t| {
            (
                t.to_string(),
                "partition:0,offset:100;partition:1,offset:200".to_string(),
            )
        })
        .collect()
}

/// Applies at most one pending transition of `name`, respecting `step`.
fn advance(state: &mut State, name: &str, step: Duration) {
    advance_depth(state, name, step, 0)
}

fn advance_depth(state: &mut State, name: &str, step: Duration, depth: u8) {
    let carry = state
        .statements
        .get(name)
        .and_then(|s| s.carry_from.clone());
    // Time passes for the referenced statement too (the real service does not wait for reads).
    if let Some(o) = carry.as_deref()
        && o != name
        && depth == 0
    {
        advance_depth(state, o, step, 1);
    }
    let old_stopped = carry
        .as_ref()
        .map(|o| state.statements.get(o).is_none_or(|s| s.phase == "STOPPED"))
        .unwrap_or(true);
    let Some(s) = state.statements.get_mut(name) else {
        return;
    };
    if s.last_change.elapsed() < step {
        return;
    }
    if s.phase == "PENDING" && !old_stopped {
        return;
    }
    if let Some((p, d)) = s.script.pop_front() {
        if p == "STOPPED" {
            s.latest_offsets = offsets_of(&s.sql);
        }
        s.phase = p;
        s.detail = d;
        s.version += 1;
        s.last_change = Instant::now();
    }
}

fn route(
    st: &Arc<Mutex<State>>,
    opts: &FakeOptions,
    req: &Req,
    rel: &str,
    host: &str,
    base: &str,
) -> Resp {
    let mut s = st.lock().unwrap();
    let query: BTreeMap<String, String> = req
        .query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match (req.method.as_str(), rel) {
        ("GET", "/statements") => {
            let names: Vec<String> = s
                .statements
                .keys()
                .filter(|n| !s.get_only.contains(*n))
                .cloned()
                .collect();
            for n in &names {
                advance(&mut s, n, opts.step);
            }
            let size = query
                .get("page_size")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(opts.default_page_size)
                .clamp(1, 100);
            let start = query
                .get("page_token")
                .and_then(|t| t.strip_prefix("tok"))
                .and_then(|t| usize::from_str_radix(t, 16).ok())
                .unwrap_or(0);
            let pool = query.get("spec.compute_pool_id");
            // `label_selector=k=v,k2=v2`: every pair must match.
            let selector: Vec<(String, String)> = query
                .get("label_selector")
                .map(|l| percent_decode(l))
                .map(|l| {
                    l.split(',')
                        .filter_map(|p| p.split_once('='))
                        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            let all: Vec<&Stmt> = s
                .statements
                .values()
                .filter(|x| pool.is_none_or(|p| *p == x.pool))
                .filter(|x| selector.iter().all(|(k, v)| x.labels.get(k) == Some(v)))
                .collect();
            let page: Vec<serde_json::Value> =
                all.iter().skip(start).take(size).map(|x| view(x)).collect();
            let next = if start + size < all.len() {
                format!(
                    "http://{host}{base}/statements?page_size={size}&page_token=tok{:x}",
                    start + size
                )
            } else {
                String::new()
            };
            json(
                200,
                serde_json::json!({"api_version": "sql/v1", "kind": "StatementList", "metadata": {"self": "", "next": next}, "data": page}),
            )
        }
        ("POST", "/statements") => {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                return err(400, "body must be JSON");
            };
            let name = v
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_string();
            if !flinkpipe::plan::naming::is_valid_statement_name(&name) {
                let mut r = err(422, "invalid statement name");
                r.body = serde_json::json!({"errors":[{"status":"422","code":"invalid_configuration","detail":"invalid name","source":{"pointer":"/name"}}]}).to_string();
                return r;
            }
            let sql = v
                .pointer("/spec/statement")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string();
            if sql.trim().is_empty() || sql.len() > 131_072 {
                return err(
                    400,
                    "spec.statement must be non-empty and at most 131072 characters",
                );
            }
            let mut props = BTreeMap::new();
            if let Some(p) = v.pointer("/spec/properties").and_then(|p| p.as_object()) {
                for (k, val) in p {
                    let Some(val) = val.as_str() else {
                        return err(400, &format!("property {k} must be a string"));
                    };
                    props.insert(k.clone(), val.to_string());
                }
            }
            let pool = v
                .pointer("/spec/compute_pool_id")
                .and_then(|x| x.as_str())
                .unwrap_or(DEFAULT_POOL)
                .to_string();
            if pool != DEFAULT_POOL && !s.pools.contains_key(&pool) {
                return err(400, &format!("logical compute pool={pool} not found"));
            }
            let mut kept_dry_run: Option<(String, String)> = None;
            if props.get("sql.dry-run").is_some_and(|v| v == "true") {
                // Parsed and validated, not executed: the POST's answer is final, nothing is stored
                // (unless `keep_dry_runs`: stored, answered PENDING, ending on the next read).
                let failure = s
                    .dry_run_failures
                    .iter()
                    .find(|(needle, _)| sql.contains(needle.as_str()))
                    .map(|(_, d)| d.clone())
                    .or_else(|| {
                        (sql.contains("FAIL_ME")
                            || props.get("fake.outcome").is_some_and(|o| o == "fail"))
                        .then(|| "SQL validation failed. Error while validating the statement: Object 'FAIL_ME' not found".to_string())
                    });
                let (phase, detail) = match &failure {
                    Some(d) => ("FAILED", d.clone()),
                    None => ("COMPLETED", String::new()),
                };
                s.dry_runs.push(DryRun {
                    name: name.clone(),
                    sql: sql.clone(),
                    properties: props.clone(),
                    phase: phase.to_string(),
                });
                if s.keep_dry_runs {
                    kept_dry_run = Some((phase.to_string(), detail));
                } else {
                    let traits = if failure.is_none() {
                        serde_json::json!({"sql_kind": if is_ddl(&sql) { "CREATE_TABLE" } else { "INSERT_INTO" }, "is_bounded": is_ddl(&sql), "is_append_only": true, "upsert_columns": null, "schema": null})
                    } else {
                        serde_json::json!({})
                    };
                    return json(
                        201,
                        serde_json::json!({
                            "api_version": "sql/v1", "kind": "Statement", "name": name,
                            "organization_id": ORG, "environment_id": ENV,
                            "metadata": {"resource_version": "1", "uid": "", "labels": {}},
                            "spec": {"statement": sql, "properties": props, "compute_pool_id": pool, "principal": "sa-fake", "stopped": false},
                            "status": {"phase": phase, "detail": detail, "traits": traits}
                        }),
                    );
                }
            }
            if s.statements.contains_key(&name) {
                let mut r = json(
                    409,
                    serde_json::json!({"errors":[{"status":"409","code":"resource_already_exists","title":"Resource Already exists","detail":format!("Statement {name} already exists")}]}),
                );
                r.headers.push((
                    "Location".into(),
                    format!("http://{host}{base}/statements/{name}"),
                ));
                return r;
            }
            let is_dml = !is_ddl(&sql);
            let mut script = VecDeque::new();
            let mut outcome = s.outcomes.get(&name).cloned();
            // A pool at its cap starts nothing new
            // (<https://docs.confluent.io/cloud/current/flink/concepts/compute-pools.html>).
            if outcome.is_none()
                && is_dml
                && s.pools
                    .get(&pool)
                    .is_some_and(|p| current_cfu(&s, p) >= p.max_cfu)
            {
                outcome = Some(Outcome::PoolExhausted);
            }
            let scripted = outcome.is_some();
            let mut detail = String::new();
            let mut pool_exhausted = false;
            match outcome {
                Some(Outcome::Fail(d)) => script.push_back(("FAILED".into(), d)),
                Some(Outcome::StuckPending) => {}
                Some(Outcome::PoolExhausted) => {
                    detail = "POOL_EXHAUSTED: the compute pool is full".into();
                    pool_exhausted = true;
                }
                Some(Outcome::Degraded) => {
                    script.push_back(("RUNNING".into(), String::new()));
                    script.push_back(("DEGRADED".into(), "task manager lost; restarting".into()));
                }
                None if sql.contains("FAIL_ME") => script.push_back((
                    "FAILED".into(),
                    "SQL validation failed. Object 'FAIL_ME' not found".into(),
                )),
                // A bounded statement (its sources read up to their latest offset) runs and
                // completes, as Confluent's do.
                None if is_dml && is_bounded_dml(&props) => {
                    script.push_back(("RUNNING".into(), String::new()));
                    script.push_back(("COMPLETED".into(), String::new()));
                }
                None if is_dml => script.push_back(("RUNNING".into(), String::new())),
                None => script.push_back(("COMPLETED".into(), String::new())),
            }
            if let Some(end) = kept_dry_run {
                script.clear();
                script.push_back(end);
            }
            let carry_from = props.get("sql.tables.initial-offset-from").cloned();
            let upper = strip_leading_comments(&sql)
                .trim_start()
                .to_ascii_uppercase();
            let results = if upper.starts_with("EXPLAIN") {
                // A plan of one row, as Confluent's EXPLAIN answers (its text names what it explains).
                if !scripted && !sql.contains("FAIL_ME") {
                    script.clear();
                    script.push_back(("COMPLETED".into(), String::new()));
                }
                let what: String = sql["EXPLAIN".len()..]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                // Its physical details, as Confluent documents them: the sink's table, and a
                // changelog mode (with an upsert key) only when it is not append-only.
                let words: Vec<&str> = what.split(' ').collect();
                let sink = words
                    .iter()
                    .position(|w| w.eq_ignore_ascii_case("INTO"))
                    .and_then(|i| words.get(i + 1))
                    .map(|t| t.trim_matches('`').to_string())
                    .unwrap_or_default();
                let grouped = words
                    .windows(3)
                    .find(|w| w[0].eq_ignore_ascii_case("GROUP") && w[1].eq_ignore_ascii_case("BY"))
                    .map(|w| w[2].trim_end_matches([',', ';']).to_string());
                let mode = match &grouped {
                    Some(key) => format!("Changelog mode: upsert\nUpsert key: ({key})\n"),
                    None => String::new(),
                };
                Some(QueryScript {
                    columns: serde_json::json!([{"name": "plan", "type": {"type": "VARCHAR", "nullable": false, "length": 2147483647}}]),
                    upsert_columns: None,
                    pages: vec![vec![(
                        None,
                        serde_json::json!([format!(
                            "== Physical Plan ==\n\nStreamSink [3]\n  +- StreamCalc [2]\n    +- StreamTableSourceScan [1]\n\n== Physical Details ==\n\n[1] StreamTableSourceScan\nChangelog mode: append\n\n[3] StreamSink\nTable: `env`.`cluster`.`{sink}`\n{mode}State size: low\n\n-- of: {what}"
                        )]),
                    )]],
                    bounded: true,
                    ..QueryScript::default()
                })
            } else if upper.starts_with("SELECT") || upper.starts_with("WITH") {
                let found = s
                    .queries
                    .iter()
                    .find(|(needle, _)| sql.contains(needle.as_str()))
                    .map(|(_, q)| q.clone());
                if found.is_some() && !scripted && !sql.contains("FAIL_ME") {
                    script.clear();
                    script.push_back(("RUNNING".into(), String::new()));
                }
                found
            } else {
                None
            };
            let stmt = Stmt {
                name: name.clone(),
                sql,
                properties: props,
                stopped: false,
                phase: "PENDING".into(),
                detail,
                script,
                last_change: Instant::now(),
                version: 1,
                is_dml,
                deleting_reads: 0,
                carry_from,
                results,
                pool,
                created_at: rfc3339_days_ago(0),
                pool_exhausted,
                labels: v
                    .pointer("/metadata/labels")
                    .and_then(|l| l.as_object())
                    .map(|l| {
                        l.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                            .collect()
                    })
                    .unwrap_or_default(),
                state_limit: None,
                warnings: Vec::new(),
                exceptions: Vec::new(),
                latest_offsets: BTreeMap::new(),
                conflicts: 0,
            };
            let body = view(&stmt);
            materialize(&mut s, &stmt);
            s.statements.insert(name.clone(), stmt);
            s.order.push(name.clone());
            let mut r = json(201, body);
            r.headers.push((
                "Location".into(),
                format!("http://{host}{base}/statements/{name}"),
            ));
            r
        }
        ("GET", path) if path.starts_with("/statements/") && path.ends_with("/results") => {
            let name = path
                .trim_start_matches("/statements/")
                .trim_end_matches("/results")
                .to_string();
            advance(&mut s, &name, opts.step);
            let Some(x) = s.statements.get_mut(&name) else {
                return err(404, &format!("Statement resource={name} does not exist"));
            };
            let not_ready = || err(409, &format!("Results for Statement={name} not ready"));
            if matches!(x.phase.as_str(), "PENDING" | "DELETING") {
                return not_ready();
            }
            let Some(q) = x.results.as_mut() else {
                return json(
                    200,
                    serde_json::json!({"api_version": "sql/v1", "kind": "StatementResult", "metadata": {"next": ""}, "results": {"data": []}}),
                );
            };
            if q.not_ready_reads > 0 {
                q.not_ready_reads -= 1;
                return not_ready();
            }
            let token = query
                .get("page_token")
                .and_then(|t| t.parse::<usize>().ok())
                .unwrap_or(0);
            if let Some((k, v)) = &q.next_param
                && token > 0
                && query.get(k.as_str()) != Some(v)
            {
                return err(400, &format!("missing {k} in the results link"));
            }
            if let Some((at, detail)) = q.fail_at.clone()
                && token >= at
            {
                if x.phase != "FAILED" {
                    x.phase = "FAILED".into();
                    x.detail = detail;
                    x.version += 1;
                }
                let data: Vec<serde_json::Value> = if token == at {
                    q.pages
                        .get(token)
                        .into_iter()
                        .flatten()
                        .map(|(op, row)| serde_json::json!({"op": op.unwrap_or(0), "row": row}))
                        .collect()
                } else {
                    Vec::new()
                };
                let next = if q.fail_ends {
                    String::new()
                } else {
                    let extra = q
                        .next_param
                        .as_ref()
                        .map(|(k, v)| format!("&{k}={v}"))
                        .unwrap_or_default();
                    format!(
                        "http://{host}{base}/statements/{name}/results?page_token={}{extra}",
                        token + 1
                    )
                };
                return json(
                    200,
                    serde_json::json!({"api_version": "sql/v1", "kind": "StatementResult", "metadata": {"self": "", "next": next}, "results": {"data": data}}),
                );
            }
            let data: Vec<serde_json::Value> = q
                .pages
                .get(token)
                .into_iter()
                .flatten()
                .map(|(op, row)| match op {
                    Some(op) => serde_json::json!({"op": op, "row": row}),
                    None => serde_json::json!({"row": row}),
                })
                .collect();
            let drained = token + 1 >= q.pages.len();
            let next = if drained && q.bounded {
                x.phase = "COMPLETED".into();
                x.version += 1;
                String::new()
            } else {
                let extra = q
                    .next_param
                    .as_ref()
                    .map(|(k, v)| format!("&{k}={v}"))
                    .unwrap_or_default();
                format!(
                    "http://{host}{base}/statements/{name}/results?page_token={}{extra}",
                    token + 1
                )
            };
            json(
                200,
                serde_json::json!({"api_version": "sql/v1", "kind": "StatementResult", "metadata": {"self": "", "next": next}, "results": {"data": data}}),
            )
        }
        ("GET", path) if path.starts_with("/statements/") && path.ends_with("/exceptions") => {
            let name = path
                .trim_start_matches("/statements/")
                .trim_end_matches("/exceptions")
                .to_string();
            let Some(x) = s.statements.get(&name) else {
                return err(404, &format!("Statement resource={name} does not exist"));
            };
            // The 10 newest, newest first; a FAILED statement's own failure is the newest.
            let mut all: Vec<(String, String)> = x.exceptions.clone();
            if matches!(x.phase.as_str(), "FAILED" | "FAILING") && !x.detail.is_empty() {
                all.push((
                    "org.apache.flink.table.api.TableException".into(),
                    format!(
                        "org.apache.flink.table.api.ValidationException: {}",
                        x.detail
                    ),
                ));
            }
            let data: Vec<serde_json::Value> = all
                .iter()
                .rev()
                .take(10)
                .enumerate()
                .map(|(i, (class, message))| serde_json::json!({"kind": "StatementException", "name": class, "message": message, "timestamp": format!("2026-01-01T10:{:02}:00Z", 59 - i.min(59))}))
                .collect();
            json(
                200,
                serde_json::json!({"api_version": "sql/v1", "kind": "StatementExceptionList", "metadata": {"self": format!("http://{host}{base}/statements/{name}/exceptions")}, "data": data}),
            )
        }
        ("GET", "/materialized-tables") => {
            let all: Vec<serde_json::Value> = s
                .materialized
                .values()
                .map(|m| materialized_view(m, host, base))
                .collect();
            page_of(
                &all,
                &query,
                &format!("http://{host}{base}/materialized-tables"),
                "MaterializedTableList",
            )
        }
        (m, path) if path.starts_with("/databases/") => {
            route_materialized(&mut s, m, path, req, &query, host, base)
        }
        (m, path) if path.starts_with("/statements/") => {
            let name = path.trim_start_matches("/statements/").to_string();
            let missing = || err(404, &format!("Statement resource={name} does not exist"));
            match m {
                "GET" => {
                    let gone = match s.statements.get_mut(&name) {
                        None => return missing(),
                        Some(x) if x.phase == "DELETING" => {
                            if x.deleting_reads == 0 {
                                true
                            } else {
                                x.deleting_reads -= 1;
                                false
                            }
                        }
                        Some(_) => false,
                    };
                    if gone {
                        s.statements.remove(&name);
                        return missing();
                    }
                    advance(&mut s, &name, opts.step);
                    json(200, view(&s.statements[&name]))
                }
                "DELETE" => match s.statements.get_mut(&name) {
                    None => missing(),
                    Some(x) => {
                        x.phase = "DELETING".into();
                        x.deleting_reads = 1;
                        x.script.clear();
                        Resp {
                            status: 202,
                            headers: vec![],
                            body: String::new(),
                        }
                    }
                },
                // The GA update (`updateSqlv1Statement`): the whole statement with the
                // `metadata.resource_version` last read (a stale one is 409), `name`, `metadata` and
                // `spec.stopped` required; only `spec.stopped` may change; 202 without a body.
                "PUT" => {
                    let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                        return err(400, "body must be JSON");
                    };
                    let Some(x) = s.statements.get_mut(&name) else {
                        return missing();
                    };
                    if x.conflicts > 0 {
                        x.conflicts -= 1;
                        x.version += 1;
                    }
                    let Some(version) = v
                        .pointer("/metadata/resource_version")
                        .and_then(|r| r.as_str())
                    else {
                        return err(400, "metadata.resource_version is required");
                    };
                    if version != x.version.to_string() {
                        return json(
                            409,
                            serde_json::json!({"errors":[{"status":"409","code":"conflict","detail":format!("Statement {name} was modified: resource_version {version} is stale")}]}),
                        );
                    }
                    if v.get("name").and_then(|n| n.as_str()) != Some(name.as_str()) {
                        return err(400, "name must be the statement's");
                    }
                    let Some(stop) = v.pointer("/spec/stopped").and_then(|b| b.as_bool()) else {
                        return err(400, "spec.stopped is required");
                    };
                    if v.pointer("/spec/statement").and_then(|t| t.as_str()) != Some(x.sql.as_str())
                    {
                        let mut r = err(422, "spec.statement cannot be changed");
                        r.body = serde_json::json!({"errors":[{"status":"422","code":"invalid_configuration","detail":"spec.statement is immutable","source":{"pointer":"/spec/statement"}}]}).to_string();
                        return r;
                    }
                    let props: BTreeMap<String, String> = v
                        .pointer("/spec/properties")
                        .and_then(|p| serde_json::from_value(p.clone()).ok())
                        .unwrap_or_default();
                    if props != x.properties {
                        return err(400, "spec.properties cannot be changed");
                    }
                    if let Err(e) = set_stopped(x, stop) {
                        return e;
                    }
                    Resp {
                        status: 202,
                        headers: vec![],
                        body: String::new(),
                    }
                }
                "PATCH" => {
                    let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                        return err(400, "body must be a JSON patch");
                    };
                    let Some(x) = s.statements.get_mut(&name) else {
                        return missing();
                    };
                    let ops = v.as_array().cloned().unwrap_or_default();
                    for op in ops {
                        let path = op.get("path").and_then(|p| p.as_str()).unwrap_or("");
                        let kind = op
                            .get("op")
                            .and_then(|p| p.as_str())
                            .unwrap_or("")
                            .to_ascii_lowercase();
                        if path != "/spec/stopped" || kind != "replace" {
                            return err(422, &format!("unsupported patch {kind} {path}"));
                        }
                        let stop = op.get("value").and_then(|v| v.as_bool()).unwrap_or(false);
                        if let Err(e) = set_stopped(x, stop) {
                            return e;
                        }
                    }
                    json(200, view(x))
                }
                _ => err(405, "method not allowed"),
            }
        }
        _ => err(404, &format!("no route {}", req.path)),
    }
}

/// A `CREATE [OR ALTER] MATERIALIZED TABLE [IF NOT EXISTS] t … AS query` statement makes the
/// materialized table `t` (RUNNING, version 1) or evolves it (one version more); other statements
/// leave the tables alone.
fn materialize(s: &mut State, stmt: &Stmt) {
    let text = strip_leading_comments(&stmt.sql);
    let words: Vec<&str> = text.split_whitespace().collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let at = match upper
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["CREATE", "MATERIALIZED", "TABLE", "IF", "NOT", "EXISTS", ..] => 6,
        ["CREATE", "MATERIALIZED", "TABLE", ..] => 3,
        ["CREATE", "OR", "ALTER", "MATERIALIZED", "TABLE", ..] => 5,
        _ => return,
    };
    let Some(raw) = words.get(at) else {
        return;
    };
    let name = raw
        .split('(')
        .next()
        .unwrap_or("")
        .rsplit('.')
        .next()
        .unwrap_or("")
        .trim_matches('`')
        .to_string();
    let query = upper
        .iter()
        .position(|w| w == "AS")
        .map(|i| words[i + 1..].join(" "))
        .unwrap_or_default();
    let pool = stmt.pool.clone();
    match s.materialized.get_mut(&name) {
        Some(m) if at == 5 => {
            m.version += 1;
            m.latest_version = m.version;
            m.resource_version += 1;
            m.query = query;
            m.statements.push(text.clone());
        }
        Some(_) => {}
        None => {
            s.materialized.insert(
                name.clone(),
                FakeMaterialized {
                    name,
                    kafka_cluster_id: KAFKA_CLUSTER.to_string(),
                    phase: "RUNNING".into(),
                    detail: "Materialized table is running.".into(),
                    stopped: false,
                    version: 1,
                    latest_version: 1,
                    resource_version: 1,
                    query,
                    pool,
                    statements: vec![text.clone()],
                    conflicts: 0,
                },
            );
        }
    }
}

/// `sql.v1.MaterializedTable`.
fn materialized_view(m: &FakeMaterialized, host: &str, base: &str) -> serde_json::Value {
    serde_json::json!({
        "api_version": "sql/v1",
        "kind": "MaterializedTable",
        "metadata": {
            "self": format!("http://{host}{base}/databases/{}/materialized-tables/{}", m.kafka_cluster_id, m.name),
            "uid": format!("uid-{}", m.name),
            "resource_version": m.resource_version.to_string(),
            "labels": {},
        },
        "name": m.name,
        "organization_id": ORG,
        "environment_id": ENV,
        "spec": {
            "kafka_cluster_id": m.kafka_cluster_id,
            "compute_pool_id": m.pool,
            "principal": "sa-fake",
            "stopped": m.stopped,
            "table_options": {},
            "query": m.query,
        },
        "status": {
            "phase": m.phase,
            "detail": m.detail,
            "warnings": [],
            "creation_statement": m.statements.last().cloned().unwrap_or_default(),
            "version": m.version,
            "latest_version": m.latest_version,
        },
    })
}

/// One page of a `sql/v1` list (`page_size`, at most 100, default 10; `page_token` = the index to
/// start at), with `metadata.next` while items are left.
fn page_of(
    all: &[serde_json::Value],
    query: &BTreeMap<String, String>,
    self_url: &str,
    kind: &str,
) -> Resp {
    let size: usize = match query.get("page_size").map(|p| p.parse::<usize>()) {
        None => 10,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        Some(_) => return err(400, "page_size must be between 1 and 100"),
    };
    let from: usize = query
        .get("page_token")
        .and_then(|t| t.strip_prefix("mt"))
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let end = (from + size).min(all.len());
    let next = if end < all.len() {
        format!("{self_url}?page_size={size}&page_token=mt{end}")
    } else {
        String::new()
    };
    json(
        200,
        serde_json::json!({
            "api_version": "sql/v1",
            "kind": kind,
            "metadata": {"self": self_url, "next": next},
            "data": all.get(from..end).unwrap_or(&[]),
        }),
    )
}

/// `…/databases/{kafka_cluster_id}/materialized-tables/{table_name}[/versions]`: GET, the GA `PUT`
/// (the whole table with the `metadata.resource_version` last read, a stale one 409; only
/// `spec.stopped` is applied: STOPPED at once, a resume RUNNING; 200 with the table), DELETE
/// (204), and the versions list.
fn route_materialized(
    s: &mut State,
    method: &str,
    path: &str,
    req: &Req,
    query: &BTreeMap<String, String>,
    host: &str,
    base: &str,
) -> Resp {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (cluster, name, versions) = match parts.as_slice() {
        ["databases", c, "materialized-tables", n] => (*c, *n, false),
        ["databases", c, "materialized-tables", n, "versions"] => (*c, *n, true),
        _ => return err(404, &format!("no route {}", req.path)),
    };
    let missing = || err(404, &format!("Materialized table {name} does not exist"));
    if s.materialized
        .get(name)
        .is_none_or(|m| m.kafka_cluster_id != cluster)
    {
        return missing();
    }
    match (method, versions) {
        ("GET", true) => {
            let m = &s.materialized[name];
            let all: Vec<serde_json::Value> = m
                .statements
                .iter()
                .enumerate()
                .map(|(i, st)| {
                    serde_json::json!({
                        "api_version": "sql/v1",
                        "kind": "MaterializedTableVersion",
                        "metadata": {"self": format!("http://{host}{base}{path}/{}", i + 1)},
                        "name": format!("{name}-v{}", i + 1),
                        "organization_id": ORG,
                        "environment_id": ENV,
                        "spec": {"version": i + 1, "statement": st, "changes": []},
                    })
                })
                .collect();
            page_of(
                &all,
                query,
                &format!("http://{host}{base}{path}"),
                "MaterializedTableVersionList",
            )
        }
        ("GET", false) => json(200, materialized_view(&s.materialized[name], host, base)),
        ("PUT", false) => {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                return err(400, "body must be JSON");
            };
            let m = s.materialized.get_mut(name).unwrap();
            if m.conflicts > 0 {
                m.conflicts -= 1;
                m.resource_version += 1;
            }
            let Some(version) = v
                .pointer("/metadata/resource_version")
                .and_then(|r| r.as_str())
            else {
                return err(400, "metadata.resource_version is required");
            };
            if version != m.resource_version.to_string() {
                return json(
                    409,
                    serde_json::json!({"errors":[{"status":"409","code":"conflict","detail":format!("Materialized table {name} was modified: resource_version {version} is stale")}]}),
                );
            }
            if v.get("name").and_then(|n| n.as_str()) != Some(name) {
                return err(400, "name must be the table's");
            }
            if v.pointer("/spec/kafka_cluster_id").and_then(|c| c.as_str()) != Some(cluster) {
                return err(400, "spec.kafka_cluster_id must match the path");
            }
            let Some(stop) = v.pointer("/spec/stopped").and_then(|b| b.as_bool()) else {
                return err(400, "spec.stopped is required");
            };
            m.stopped = stop;
            m.phase = if stop { "STOPPED" } else { "RUNNING" }.into();
            m.resource_version += 1;
            json(200, materialized_view(m, host, base))
        }
        ("DELETE", false) => {
            s.materialized.remove(name);
            Resp {
                status: 204,
                headers: vec![],
                body: String::new(),
            }
        }
        _ => err(405, "method not allowed"),
    }
}

/// Sets `spec.stopped` (PUT or PATCH): a stop of a PENDING, RUNNING or DEGRADED statement goes
/// STOPPING → STOPPED on the next reads (its `latest_offsets` filled), a stop of another phase only
/// sets the flag; a resume of a STOPPED INSERT/CTAS/STATEMENT SET goes PENDING → RUNNING, of another
/// kind is 400.
fn set_stopped(x: &mut Stmt, stop: bool) -> Result<(), Resp> {
    if stop {
        x.stopped = true;
        if matches!(x.phase.as_str(), "PENDING" | "RUNNING" | "DEGRADED") {
            x.script.clear();
            x.script.push_back(("STOPPING".into(), String::new()));
            x.script.push_back(("STOPPED".into(), String::new()));
        }
    } else if x.phase == "STOPPED" {
        if !x.is_dml {
            return Err(err(
                400,
                "only INSERT INTO, CREATE TABLE AS and EXECUTE STATEMENT SET can be resumed",
            ));
        }
        x.stopped = false;
        x.latest_offsets.clear();
        x.script.clear();
        x.script.push_back(("PENDING".into(), String::new()));
        x.script.push_back(("RUNNING".into(), String::new()));
    }
    x.version += 1;
    Ok(())
}

/// `%XX` sequences decoded, `+` as a space (a query value).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                match std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// RFC 3339 (`2025-11-07T18:45:05.000000Z`) of now minus `days`.
fn rfc3339_days_ago(days: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let t = flinkpipe::time::utc_timestamp(now - days as i64 * 86_400);
    format!("{}.000000Z", t.trim_end_matches(" UTC").replace(' ', "T"))
}

/// `status.current_cfu` of a pool: its other workloads plus one per running statement of the fake in
/// it, capped at `max_cfu`
/// (<https://docs.confluent.io/cloud/current/flink/concepts/compute-pools.html>).
fn current_cfu(st: &State, p: &Pool) -> u32 {
    let running = st
        .statements
        .values()
        .filter(|s| s.pool == p.id && s.is_dml)
        .filter(|s| matches!(s.phase.as_str(), "RUNNING" | "DEGRADED" | "STOPPING"))
        .count() as u32;
    (p.extra_cfu + running).min(p.max_cfu)
}

fn pool_view(st: &State, p: &Pool, host: &str) -> serde_json::Value {
    let mut v = pool_view_full(st, p, host);
    if p.usage_hidden {
        v["status"].as_object_mut().unwrap().remove("current_cfu");
    }
    v
}

fn pool_view_full(st: &State, p: &Pool, host: &str) -> serde_json::Value {
    serde_json::json!({
        "api_version": "fcpm/v2", "kind": "ComputePool", "id": p.id,
        "metadata": {"self": format!("http://{host}/fcpm/v2/compute-pools/{}", p.id),
                     "resource_name": format!("crn://confluent.cloud/organization={ORG}/environment={ENV}/flink-region=aws.us-west-2/compute-pool={}", p.id),
                     "created_at": rfc3339_days_ago(1), "updated_at": rfc3339_days_ago(0)},
        "spec": {"display_name": p.display_name, "cloud": "AWS", "region": "us-west-2", "max_cfu": p.max_cfu,
                 "enable_ai": false, "default_pool": false, "environment": {"id": ENV}},
        "status": {"phase": p.phase, "current_cfu": current_cfu(st, p)}
    })
}

/// Every `resource.compute_pool.id` a Metrics API filter names (EQ leaves of AND/OR trees).
fn filtered_pools(f: &serde_json::Value, out: &mut Vec<String>) {
    if f.get("field").and_then(|x| x.as_str()) == Some("resource.compute_pool.id")
        && let Some(v) = f.get("value").and_then(|x| x.as_str())
    {
        out.push(v.to_string());
    }
    for sub in f
        .get("filters")
        .and_then(|x| x.as_array())
        .into_iter()
        .flatten()
    {
        filtered_pools(sub, out);
    }
}

/// The control plane (`fcpm/v2` compute pools,
/// <https://docs.confluent.io/cloud/current/api.html#tag/Compute-Pools-(fcpmv2)>) and the Metrics
/// API (`POST /v2/metrics/cloud/query`).
/// The Kafka REST API v3: the topics of [`KAFKA_CLUSTER`], two per page (`metadata.next`).
fn route_kafka(st: &Arc<Mutex<State>>, req: &Req, host: &str) -> Resp {
    let s = st.lock().unwrap();
    let list = format!("/kafka/v3/clusters/{KAFKA_CLUSTER}/topics");
    let groups = format!("/kafka/v3/clusters/{KAFKA_CLUSTER}/consumer-groups");
    if req.method == "GET" && req.path.starts_with(&groups) {
        return route_groups(&s, req, host, &groups);
    }
    if req.method != "GET" || req.path != list {
        return err(404, &format!("no route {} {}", req.method, req.path));
    }
    let start = req
        .query
        .split('&')
        .find_map(|p| p.strip_prefix("page_token=tp"))
        .and_then(|t| t.parse::<usize>().ok())
        .unwrap_or(0);
    let mut all = s.topics.clone();
    all.sort();
    let page: Vec<serde_json::Value> = all
        .iter()
        .skip(start)
        .take(2)
        .map(|(name, partitions)| {
            serde_json::json!({"kind": "KafkaTopic", "cluster_id": KAFKA_CLUSTER, "topic_name": name,
                "is_internal": name.starts_with("__"), "replication_factor": 3, "partitions_count": partitions})
        })
        .collect();
    let next = if start + 2 < all.len() {
        format!("http://{host}{list}?page_token=tp{}", start + 2)
    } else {
        String::new()
    };
    json(
        200,
        serde_json::json!({"kind": "KafkaTopicList", "metadata": {"self": format!("http://{host}{list}"), "next": next}, "data": page}),
    )
}

/// The consumer-group endpoints of the Kafka REST API v3 (shapes of
/// <https://docs.confluent.io/cloud/current/api.html#tag/Consumer-Group-(v3)>).
fn route_groups(s: &State, req: &Req, host: &str, base: &str) -> Resp {
    let rest = req.path[base.len()..].trim_start_matches('/');
    let parts: Vec<&str> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split('/').collect()
    };
    let collection = |kind: &str, data: Vec<serde_json::Value>, next: String| {
        json(
            200,
            serde_json::json!({"kind": kind, "metadata": {"self": format!("http://{host}{}", req.path), "next": next}, "data": data}),
        )
    };
    let group = |id: &str| s.groups.iter().find(|g| g.id == id);
    match parts.as_slice() {
        [] => {
            let start = req
                .query
                .split('&')
                .find_map(|p| p.strip_prefix("page_token=cg"))
                .and_then(|t| t.parse::<usize>().ok())
                .unwrap_or(0);
            let mut all = s.groups.clone();
            all.sort_by(|a, b| a.id.cmp(&b.id));
            let page = all
                .iter()
                .skip(start)
                .take(2)
                .map(|g| {
                    serde_json::json!({"kind": "KafkaConsumerGroup", "cluster_id": KAFKA_CLUSTER,
                        "consumer_group_id": g.id, "is_simple": false, "partition_assignor": "range",
                        "state": g.state, "type": "CLASSIC", "is_mixed_consumer_group": false,
                        "coordinator": {"related": format!("http://{host}/kafka/v3/clusters/{KAFKA_CLUSTER}/brokers/1")},
                        "consumers": {"related": format!("http://{host}{base}/{}/consumers", g.id)},
                        "lag_summary": {"related": format!("http://{host}{base}/{}/lag-summary", g.id)}})
                })
                .collect();
            let next = if start + 2 < all.len() {
                format!("http://{host}{base}?page_token=cg{}", start + 2)
            } else {
                String::new()
            };
            collection("KafkaConsumerGroupList", page, next)
        }
        [id, "consumers"] => match group(id) {
            Some(g) => collection(
                "KafkaConsumerList",
                g.consumers
                    .iter()
                    .map(|(c, _)| {
                        serde_json::json!({"kind": "KafkaConsumer", "cluster_id": KAFKA_CLUSTER,
                            "consumer_group_id": g.id, "consumer_id": c, "instance_id": null,
                            "client_id": format!("{c}-client"),
                            "assignments": {"related": format!("http://{host}{base}/{}/consumers/{c}/assignments", g.id)}})
                    })
                    .collect(),
                String::new(),
            ),
            None => err(404, &format!("Consumer group {id} not found")),
        },
        [id, "consumers", cid, "assignments"] => {
            match group(id).and_then(|g| g.consumers.iter().find(|(c, _)| c == cid)) {
                Some((c, assigned)) => collection(
                    "KafkaConsumerAssignmentList",
                    assigned
                        .iter()
                        .map(|(t, p)| {
                            serde_json::json!({"kind": "KafkaConsumerAssignment", "cluster_id": KAFKA_CLUSTER,
                                "consumer_group_id": id, "consumer_id": c, "topic_name": t, "partition_id": p})
                        })
                        .collect(),
                    String::new(),
                ),
                None => err(404, &format!("Consumer {cid} not found")),
            }
        }
        [id, "lags"] if s.lags_unsupported => {
            err(404, &format!("consumer lags of {id}: available on dedicated clusters only"))
        }
        [id, "lags"] => match group(id) {
            Some(g) => collection(
                "KafkaConsumerLagList",
                g.offsets
                    .iter()
                    .map(|(t, p, cur, end)| {
                        let consumer = g
                            .consumers
                            .iter()
                            .find(|(_, a)| a.iter().any(|(at, ap)| at == t && ap == p))
                            .map(|(c, _)| c.clone())
                            .unwrap_or_default();
                        serde_json::json!({"kind": "KafkaConsumerLag", "cluster_id": KAFKA_CLUSTER,
                            "consumer_group_id": g.id, "topic_name": t, "partition_id": p,
                            "current_offset": cur, "log_end_offset": end, "lag": end - cur,
                            "consumer_id": consumer, "instance_id": null, "client_id": ""})
                    })
                    .collect(),
                String::new(),
            ),
            None => err(404, &format!("Consumer group {id} not found")),
        },
        _ => err(404, &format!("no route {} {}", req.method, req.path)),
    }
}

fn route_control(st: &Arc<Mutex<State>>, req: &Req, host: &str) -> Resp {
    let mut s = st.lock().unwrap();
    let query: BTreeMap<String, String> = req
        .query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let env_ok = query.get("environment").is_some_and(|e| e == ENV);
    let not_found = |id: &str| err(404, &format!("The compute pool {id} does not exist."));
    let denied = |id: &str| err(403, &format!("The compute pool {id} was not found."));
    let path = req.path.as_str();
    match (req.method.as_str(), path) {
        ("GET", "/org/v2/environments") => {
            // One environment per page: the client must follow `metadata.next`.
            let start = query
                .get("page_token")
                .and_then(|t| t.strip_prefix("et"))
                .and_then(|t| t.parse::<usize>().ok())
                .unwrap_or(0);
            let all: Vec<serde_json::Value> = std::iter::once((ENV.to_string(), "dev".to_string()))
                .chain(s.environments.iter().cloned())
                .map(|(id, name)| {
                    serde_json::json!({"api_version": "org/v2", "kind": "Environment", "id": id, "display_name": name,
                        "metadata": {"created_at": "2025-01-02T03:04:05Z"}, "stream_governance_config": {"package": "ESSENTIALS"}})
                })
                .collect();
            let next = if start + 1 < all.len() {
                format!(
                    "http://{host}/org/v2/environments?page_size=1&page_token=et{}",
                    start + 1
                )
            } else {
                String::new()
            };
            let page: Vec<_> = all.into_iter().skip(start).take(1).collect();
            json(
                200,
                serde_json::json!({"api_version": "org/v2", "kind": "EnvironmentList", "metadata": {"next": next}, "data": page}),
            )
        }
        ("GET", "/fcpm/v2/compute-pools") => {
            if !env_ok {
                return err(400, "environment query parameter is required");
            }
            // One pool per page, whatever is asked: the client must follow `metadata.next`.
            let size = 1;
            let start = query
                .get("page_token")
                .and_then(|t| t.strip_prefix("pt"))
                .and_then(|t| t.parse::<usize>().ok())
                .unwrap_or(0);
            let all: Vec<serde_json::Value> =
                s.pools.values().map(|p| pool_view(&s, p, host)).collect();
            let next = if start + size < all.len() {
                format!(
                    "http://{host}/fcpm/v2/compute-pools?environment={ENV}&page_size={size}&page_token=pt{}",
                    start + size
                )
            } else {
                String::new()
            };
            let page: Vec<_> = all.into_iter().skip(start).take(size).collect();
            json(
                200,
                serde_json::json!({"api_version": "fcpm/v2", "kind": "ClusterList", "metadata": {"next": next}, "data": page}),
            )
        }
        ("POST", "/fcpm/v2/compute-pools") => {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                return err(400, "body must be JSON");
            };
            let name = v
                .pointer("/spec/display_name")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string();
            let valid_name = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !valid_name {
                return err(422, "spec.display_name is invalid");
            }
            let max = v
                .pointer("/spec/max_cfu")
                .and_then(|x| x.as_u64())
                .unwrap_or(0);
            if ![5, 10, 20, 30, 40, 50].contains(&max) {
                return err(
                    422,
                    &format!("spec.max_cfu {max} is not one of 5, 10, 20, 30, 40, 50"),
                );
            }
            if v.pointer("/spec/environment/id").and_then(|x| x.as_str()) != Some(ENV) {
                return err(400, "spec.environment.id is required");
            }
            if s.pools.values().any(|p| p.display_name == name) {
                return err(409, &format!("compute pool {name} already exists"));
            }
            s.pool_seq += 1;
            let id = format!("lfcp-new{}", s.pool_seq);
            let p = Pool {
                id: id.clone(),
                display_name: name,
                max_cfu: max as u32,
                phase: "PROVISIONING".into(),
                extra_cfu: 0,
                usage_hidden: false,
            };
            let body = pool_view(&s, &p, host);
            s.pools.insert(id, p);
            json(202, body)
        }
        ("POST", "/v2/metrics/cloud/query") => {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                return err(400, "body must be JSON");
            };
            s.metric_queries.push(v.clone());
            let metric = v
                .pointer("/aggregations/0/metric")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string();
            let mut pools = Vec::new();
            filtered_pools(&v["filter"], &mut pools);
            if pools.is_empty() {
                return err(400, "a resource filter is required for the cloud dataset");
            }
            if v["intervals"].as_array().is_none_or(|i| i.is_empty()) {
                return err(400, "intervals are required");
            }
            let grouped = v["format"].as_str() == Some("GROUPED");
            let mut data = Vec::new();
            for (name, (rin, rout, pending)) in &s.metrics {
                let Some(x) = s.statements.get(name) else {
                    continue;
                };
                if !pools.contains(&x.pool) {
                    continue;
                }
                // Two one-minute points: counters split in two (their sum is the value), the gauge
                // going down to the value (the newest point is the current backlog).
                let values: [u64; 2] = match metric.as_str() {
                    "io.confluent.flink/num_records_in" => [rin / 2, rin - rin / 2],
                    "io.confluent.flink/num_records_out" => [rout / 2, rout - rout / 2],
                    "io.confluent.flink/pending_records" => [pending + 7, *pending],
                    _ => continue,
                };
                let stamps = ["2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z"];
                if grouped {
                    data.push(serde_json::json!({"resource.flink_statement.name": name,
                        "points": stamps.iter().zip(values).map(|(t, v)| serde_json::json!({"timestamp": t, "value": v as f64})).collect::<Vec<_>>()}));
                } else {
                    for (t, val) in stamps.iter().zip(values) {
                        data.push(serde_json::json!({"timestamp": t, "value": val as f64, "resource.flink_statement.name": name}));
                    }
                }
            }
            json(200, serde_json::json!({"data": data}))
        }
        (m, p) if p.starts_with("/fcpm/v2/compute-pools/") => {
            let id = p.trim_start_matches("/fcpm/v2/compute-pools/").to_string();
            // `updateFcpmV2ComputePool`: no query; `spec.environment.id` in the body is required,
            // `max_cfu` one of 5, 10, 20, 30, 40, 50 (else 422); 200 with the pool.
            if m == "PATCH" {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&req.body) else {
                    return err(400, "body must be JSON");
                };
                if v.pointer("/spec/environment/id").and_then(|x| x.as_str()) != Some(ENV) {
                    return err(400, "spec.environment.id is required");
                }
                if s.denied_pools.contains(&id) {
                    return denied(&id);
                }
                let max = v.pointer("/spec/max_cfu").and_then(|x| x.as_u64());
                if let Some(max) = max
                    && ![5, 10, 20, 30, 40, 50].contains(&max)
                {
                    return err(
                        422,
                        &format!("spec.max_cfu {max} is not one of 5, 10, 20, 30, 40, 50"),
                    );
                }
                let Some(pool) = s.pools.get_mut(&id) else {
                    return not_found(&id);
                };
                if let Some(max) = max {
                    pool.max_cfu = max as u32;
                }
                let pool = pool.clone();
                return json(200, pool_view(&s, &pool, host));
            }
            if !env_ok {
                return err(400, "environment query parameter is required");
            }
            if s.denied_pools.contains(&id) {
                return denied(&id);
            }
            match m {
                "GET" => {
                    let Some(pool) = s.pools.get_mut(&id) else {
                        return not_found(&id);
                    };
                    if pool.phase == "PROVISIONING" {
                        pool.phase = "PROVISIONED".into();
                    }
                    let pool = pool.clone();
                    json(200, pool_view(&s, &pool, host))
                }
                "DELETE" => {
                    if s.pools.remove(&id).is_none() {
                        return not_found(&id);
                    }
                    Resp {
                        status: 204,
                        headers: vec![],
                        body: String::new(),
                    }
                }
                _ => err(405, "method not allowed"),
            }
        }
        _ => err(404, &format!("no route {}", req.path)),
    }
}
