//! `pipeline rollback` (issue #25 §4): against the Confluent fake with the real binary in a temporary
//! git repository of the example project (deploy blue → version a change → commit → deploy green →
//! roll back: green gone, blue running, the record says so, the printed git command restores the
//! blue SQL; a dry run changes nothing; a decommissioned release is refused), and the planning and
//! acting steps on the in-memory target (order, failures, refusals).

use crate::fake_confluent::FakeConfluent;
use crate::memory_target::{MemoryTarget, Op, http};
use crate::support::Rng;
use crate::support::repo::{Repo, T_CHANGE};
use crate::support::test::ENRICHED_DML;
use crate::support::{Test, stderr, stdout};
use flinkpipe::ops::rollback;
use flinkpipe::ops::statement::StatementVerb;
use flinkpipe::plan::StatementNaming;
use flinkpipe::target::{Phase, Target};
use flinkpipe::versioning::record::{
    BlueGreenRecord, Decommission, GreenTable, RecordedStatement, Release, StatementRole,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const BLUE_DML: &str = "dev-usw2-sales-dml-int-sales-orders-enriched";
const GREEN_DML: &str = "dev-usw2-sales-dml-int-sales-orders-enriched-v2";
const GREEN_DDL: &str = "dev-usw2-sales-ddl-int-sales-orders-enriched-v2";

fn repo(fake: &FakeConfluent) -> Test {
    Test::release_repo(fake)
}

fn record_text(t: &Test) -> String {
    std::fs::read_to_string(t.pipelines.join("blue_green.json")).unwrap()
}

fn record(t: &Test) -> Value {
    serde_json::from_str(&record_text(t)).unwrap()
}

/// Blue deployed, a logic change versioned and committed, green deployed beside blue.
fn green_deployed(t: &Test, fake: &FakeConfluent) {
    t.release_applied_filter();
    let d = t
        .cmd(&["--output", "json", "pipeline", "deploy", "--blue-green"])
        .success()
        .stdout_json();
    assert_eq!(d["success"], true, "{d:#}");
    assert_eq!(fake.phase(GREEN_DML).as_deref(), Some("RUNNING"));
    assert_eq!(fake.phase(BLUE_DML).as_deref(), Some("RUNNING"));
}

/// Every green statement the release records, as the fake names them (`-v2` suffix).
fn green_names(fake: &FakeConfluent) -> BTreeSet<String> {
    fake.phases()
        .into_keys()
        .filter(|n| n.ends_with("-v2"))
        .collect()
}

fn git(t: &Test, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .args(args)
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn rollback_deletes_green_children_first_keeps_blue_records_it_and_restores_the_blue_sql() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    green_deployed(&t, &fake);
    let greens = green_names(&fake);
    assert!(
        greens.contains(GREEN_DML) && greens.contains(GREEN_DDL),
        "{greens:?}"
    );
    let blue_before: BTreeMap<String, String> = fake
        .phases()
        .into_iter()
        .filter(|(n, _)| !n.ends_with("-v2"))
        .collect();
    let before_record = record_text(&t);

    // The dry run lists the green statements, children first, and changes nothing.
    let dry = t
        .cmd(&[
            "--output",
            "json",
            "pipeline",
            "rollback",
            "--delete",
            "--dry-run",
        ])
        .success()
        .stdout_json();
    assert_eq!(dry["dry_run"], true);
    let planned: Vec<String> = dry["plan"]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["statement"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        planned.iter().cloned().collect::<BTreeSet<_>>(),
        greens,
        "every green statement, nothing else"
    );
    let pos = |n: &str| planned.iter().position(|p| p == n).unwrap();
    assert!(
        pos(GREEN_DML) < pos(GREEN_DDL),
        "a job before its declaration"
    );
    // The release lists parents first: each table's statements come after its children's.
    let release = &record(&t)["releases"][0];
    let tables = release["tables"].as_array().unwrap();
    let first_of = |t: &Value| {
        t["green_statements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| pos(s["name"].as_str().unwrap()))
            .min()
            .unwrap()
    };
    let last_of = |t: &Value| {
        t["green_statements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| pos(s["name"].as_str().unwrap()))
            .max()
            .unwrap()
    };
    let enriched = tables
        .iter()
        .find(|t| t["blue_table_name"] == "int_sales_orders_enriched")
        .unwrap();
    for t in tables {
        let reads_enriched = t["reason"]
            .as_str()
            .unwrap()
            .contains("int_sales_orders_enriched")
            && t != enriched;
        if reads_enriched {
            assert!(last_of(t) < first_of(enriched), "{t:#} before enriched");
        }
    }
    let base = release["base_commit"].as_str().unwrap();
    assert_eq!(dry["git"]["restore"]["source"], base);
    assert_eq!(dry["git"]["restore"]["source_kind"], "base_commit");
    assert!(fake.deletes().is_empty(), "{:?}", fake.deletes());
    assert_eq!(record_text(&t), before_record, "the dry run writes nothing");

    // Without --no-ack it asks; no answer (stdin closed) changes nothing.
    let declined = t.cmd(&["pipeline", "rollback", "--delete"]);
    let declined = declined.code(1);
    assert!(
        declined
            .stdout()
            .contains("Delete them and record the release as rolled back? [y/N] nothing changed"),
        "{}",
        declined.stdout()
    );
    assert!(fake.deletes().is_empty(), "{:?}", fake.deletes());
    assert_eq!(record_text(&t), before_record);

    // The rollback deletes green, in the planned order, and nothing else.
    let out = t.cmd(&["pipeline", "rollback", "--delete", "--no-ack"]);
    let out = out.success();
    let text = out.stdout();
    assert_eq!(fake.deletes(), planned);
    assert!(green_names(&fake).is_empty(), "{:?}", fake.phases());
    let blue_after: BTreeMap<String, String> = fake.phases();
    assert_eq!(blue_after, blue_before, "blue untouched");
    let rb = &record(&t)["releases"][0]["rolled_back"];
    assert_eq!(rb.as_array().unwrap().len(), 1, "{rb:#}");
    assert_eq!(rb[0]["statement_prefix"], "dev-usw2");
    assert_eq!(rb[0]["action"], "delete");
    assert_eq!(rb[0]["statements"], serde_json::json!(planned));
    assert_eq!(
        record(&t)["releases"][0]["decommissioned"],
        serde_json::json!([])
    );
    assert!(
        text.contains("recorded in blue_green.json: release"),
        "{text}"
    );
    let release_commit = t.repo().head_commit().to_string();
    assert!(
        text.contains(&format!(
            "Now put the blue SQL back in the files ({} path(s), from the release's base commit {}; the release was committed in {}); run from ",
            cmds_count(&text),
            &base[..12],
            &release_commit[..12]
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Blue statements, untouched:\n  {BLUE_DML} (RUNNING)"
        )) || text.contains(&format!("  {BLUE_DML} (RUNNING)\n")),
        "{text}"
    );

    // The printed git commands put the blue SQL back: the files equal the base's again.
    let cmds: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("git "))
        .collect();
    assert_eq!(cmds.len(), 3, "{text}");
    assert!(
        cmds[0].starts_with(&format!(
            "git restore --source={base} --staged --worktree -- "
        )),
        "{text}"
    );
    assert!(
        cmds[0].contains(&format!("pipelines/{ENRICHED_DML}")),
        "{text}"
    );
    assert!(!cmds[0].contains("blue_green.json"), "{text}");
    assert_eq!(cmds[1], "git add pipelines/blue_green.json");
    for c in &cmds {
        let words: Vec<String> = shell_words(c);
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        git(&t, &args);
    }
    assert_eq!(
        git(
            &t,
            &[
                "diff",
                "--stat",
                base,
                "HEAD",
                "--",
                "pipelines",
                ":(exclude)pipelines/blue_green.json"
            ]
        ),
        "",
        "the pipelines folder is the base's again"
    );
    let status = git(&t, &["status", "--porcelain", "--", "pipelines"]);
    assert!(status.is_empty(), "{status}");

    // Closed: status shows no blue-green pair, a second rollback and decommission find nothing open.
    let s = t
        .cmd(&["--output", "json", "pipeline", "status"])
        .success()
        .stdout_json();
    assert_eq!(s["blue_green"], serde_json::json!([]), "{s:#}");
    let again = t.cmd(&["pipeline", "rollback", "--no-ack"]);
    let again = again.code(1);
    assert!(
        again
            .stderr()
            .contains("records no blue-green release to roll back"),
        "{}",
        again.stderr()
    );
    let dec = t
        .cmd(&["pipeline", "decommission", "--delete", "--dry-run"])
        .success()
        .stdout();
    assert!(dec.contains("No blue-green release is open"), "{dec}");
    let check = t.cmd(&["pipeline", "release-check"]);
    let check = check.code(2);
    assert!(
        check.stderr().contains("no open blue-green release"),
        "{}",
        check.stderr()
    );
    let redeploy = t.cmd(&["pipeline", "deploy", "--blue-green"]);
    let redeploy = redeploy.code(1);
    assert!(
        redeploy
            .stderr()
            .contains("records no green set still open"),
        "{}",
        redeploy.stderr()
    );
}

/// The number of paths in the printed `git restore` line.
fn cmds_count(text: &str) -> usize {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("git restore "))
        .map_or(0, |l| {
            l.split(" -- ").nth(1).unwrap_or("").split(' ').count()
        })
}

/// A minimal POSIX split for the commands the rollback prints (single quotes only).
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in s.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn rollback_stops_green_jobs_by_default_and_leaves_declarations() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    green_deployed(&t, &fake);
    let text = t
        .cmd(&["pipeline", "rollback", "--no-ack"])
        .success()
        .stdout();
    assert!(fake.deletes().is_empty(), "{:?}", fake.deletes());
    assert_eq!(fake.phase(GREEN_DML).as_deref(), Some("STOPPED"));
    assert_eq!(fake.phase(GREEN_DDL).as_deref(), Some("COMPLETED"));
    assert_eq!(fake.phase(BLUE_DML).as_deref(), Some("RUNNING"));
    assert!(
        text.contains(&format!("stopped {GREEN_DML} (phase STOPPED)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{GREEN_DDL}: declares the table, runs no job")),
        "{text}"
    );
    let rb = &record(&t)["releases"][0]["rolled_back"][0];
    assert_eq!(rb["action"], "stop");
    let stopped: Vec<&str> = rb["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        stopped.contains(&GREEN_DML) && !stopped.contains(&GREEN_DDL),
        "{rb:#}"
    );
}

#[test]
fn a_decommissioned_release_cannot_be_rolled_back() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    green_deployed(&t, &fake);
    t.cmd(&["pipeline", "decommission", "--delete", "--no-ack"])
        .success()
        .stdout();
    let deletes = fake.deletes();
    let before = record_text(&t);
    for extra in [&["--no-ack"][..], &["--dry-run"][..]] {
        let mut args = vec!["pipeline", "rollback", "--delete"];
        args.extend_from_slice(extra);
        let o = t.cmd(&args);
        let o = o.code(1);
        let err = o.stderr();
        assert!(err.contains("cannot be rolled back"), "{err}");
        assert!(err.contains("was decommissioned at"), "{err}");
        assert_eq!(fake.deletes(), deletes, "nothing more deleted");
        assert_eq!(fake.phase(GREEN_DML).as_deref(), Some("RUNNING"));
        assert_eq!(record_text(&t), before);
    }
}

// ---- planning and acting on the in-memory target ----

fn stmt(name: &str, role: StatementRole) -> RecordedStatement {
    RecordedStatement {
        name: name.into(),
        role,
    }
}

fn table(blue: &str, green: &str) -> GreenTable {
    let d = |t: &str| format!("dev-p-ddl-{}", t.replace('_', "-"));
    let j = |t: &str| format!("dev-p-dml-{}", t.replace('_', "-"));
    GreenTable {
        blue_table_name: blue.into(),
        green_table_name: green.into(),
        product_name: "p".into(),
        blue_statements: vec![
            stmt(&j(blue), StatementRole::Job),
            stmt(&d(blue), StatementRole::Declaration),
        ],
        green_statements: vec![
            stmt(&d(green), StatementRole::Declaration),
            stmt(&j(green), StatementRole::Job),
        ],
        reason: "logic change".into(),
    }
}

fn two_table_record() -> BlueGreenRecord {
    BlueGreenRecord {
        format: 1,
        releases: vec![Release {
            created_at: "2026-12-01T10:00:00Z".into(),
            base_ref: Some("main".into()),
            base_commit: Some("0".repeat(40)),
            statement_prefix: "dev".into(),
            tables: vec![table("int_a", "int_a_v2"), table("fct_b", "fct_b_v2")],
            decommissioned: Vec::new(),
            rolled_back: Vec::new(),
        }],
    }
}

fn seeded() -> MemoryTarget {
    let m = MemoryTarget::new();
    for t in ["int-a", "fct-b", "int-a-v2", "fct-b-v2"] {
        m.seed(
            &format!("dev-p-ddl-{t}"),
            "CREATE TABLE x",
            Phase::Completed,
            &[],
        );
        m.seed(
            &format!("dev-p-dml-{t}"),
            "INSERT INTO x",
            Phase::Running,
            &[],
        );
    }
    m
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

fn naming() -> StatementNaming {
    StatementNaming {
        prefix: "dev".into(),
    }
}

#[test]
fn the_plan_deletes_green_children_first_and_the_record_closes_the_release() {
    let m = seeded();
    let rt = rt();
    let live = rt.block_on(m.list_statements()).unwrap();
    let live: BTreeMap<_, _> = live.into_iter().map(|s| (s.name.clone(), s)).collect();
    let record = two_table_record();
    let plan = rollback::plan(&record, &naming(), &live, StatementVerb::Delete).unwrap();
    let order: Vec<&str> = plan
        .statements
        .iter()
        .map(|t| t.statement.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "dev-p-dml-fct-b-v2",
            "dev-p-ddl-fct-b-v2",
            "dev-p-dml-int-a-v2",
            "dev-p-ddl-int-a-v2"
        ]
    );
    let blue: Vec<(&str, Option<Phase>)> = plan
        .blue
        .iter()
        .map(|b| (b.statement.as_str(), b.phase.clone()))
        .collect();
    assert_eq!(blue.len(), 4);
    assert!(plan.blue.iter().all(|b| !b.needs_attention()), "{blue:?}");
    let scrub = flinkpipe::ops::target::secrets_scrubber(&|_| None);
    let done = rt.block_on(rollback::act(&m, &plan, Duration::from_secs(60), &scrub));
    assert!(done.iter().all(|d| d.error.is_none()), "{done:?}");
    assert_eq!(m.deletes(), order);
    for t in ["int-a", "fct-b"] {
        assert_eq!(m.phase(&format!("dev-p-dml-{t}")), Some(Phase::Running));
        assert_eq!(m.phase(&format!("dev-p-ddl-{t}")), Some(Phase::Completed));
        assert_eq!(m.phase(&format!("dev-p-dml-{t}-v2")), None);
    }
    let closed = rollback::recorded(&record, &plan, &done, "2026-12-02T09:30:00Z").unwrap();
    let rb = &closed.releases[0].rolled_back;
    assert_eq!(rb.len(), 1);
    assert_eq!(rb[0].statement_prefix, "dev");
    assert_eq!(rb[0].at, "2026-12-02T09:30:00Z");
    assert_eq!(rb[0].action, "delete");
    assert_eq!(rb[0].statements, order);
    assert!(!closed.releases[0].is_open_in("dev"));
    assert!(closed.releases[0].is_open_in("prod"), "per environment");
    assert!(closed.open_release("dev").is_none());
    // The record round-trips, and an empty `rolled_back` is left out of the file.
    let text = closed.to_text();
    let back: BlueGreenRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(back, closed);
    assert!(!record.to_text().contains("rolled_back"));
    // Nothing is left to roll back here.
    let again = rollback::plan(&closed, &naming(), &live, StatementVerb::Delete).unwrap_err();
    assert!(
        again
            .to_string()
            .contains("records no blue-green release to roll back"),
        "{again}"
    );
}

#[test]
fn a_failed_stop_keeps_the_release_open_and_stop_skips_declarations_and_stopped_jobs() {
    let m = seeded();
    m.seed("dev-p-dml-int-a-v2", "INSERT INTO x", Phase::Stopped, &[]);
    m.fail(
        Op::Stop,
        Some("dev-p-dml-fct-b-v2"),
        http(400, None),
        usize::MAX,
    );
    let rt = rt();
    let live: BTreeMap<_, _> = rt
        .block_on(m.list_statements())
        .unwrap()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let record = two_table_record();
    let plan = rollback::plan(&record, &naming(), &live, StatementVerb::Stop).unwrap();
    let order: Vec<&str> = plan
        .statements
        .iter()
        .map(|t| t.statement.as_str())
        .collect();
    assert_eq!(order, ["dev-p-dml-fct-b-v2"]);
    let left: BTreeMap<&str, &str> = plan
        .left_alone
        .iter()
        .map(|l| (l.statement.as_str(), l.reason.as_str()))
        .collect();
    assert_eq!(left["dev-p-dml-int-a-v2"], "already STOPPED");
    assert!(left["dev-p-ddl-int-a-v2"].starts_with("declares the table"));
    let scrub = flinkpipe::ops::target::secrets_scrubber(&|_| None);
    let done = rt.block_on(rollback::act(&m, &plan, Duration::from_secs(60), &scrub));
    assert!(done[0].error.is_some(), "{done:?}");
    assert!(rollback::recorded(&record, &plan, &done, "2026-12-02T09:30:00Z").is_none());
    assert_eq!(m.phase("dev-p-dml-fct-b"), Some(Phase::Running));
}

#[test]
fn the_plan_refuses_a_release_decommissioned_here_and_warns_of_a_stopped_blue() {
    let m = seeded();
    m.seed("dev-p-dml-int-a", "INSERT INTO x", Phase::Stopped, &[]);
    let rt = rt();
    let live: BTreeMap<_, _> = rt
        .block_on(m.list_statements())
        .unwrap()
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect();
    let mut record = two_table_record();
    // A stop decommission leaves the release open: rollback works and says blue is not running.
    record.releases[0].decommissioned.push(Decommission {
        statement_prefix: "dev".into(),
        at: "2026-12-02T08:00:00Z".into(),
        action: "stop".into(),
        statements: vec!["dev-p-dml-int-a".into()],
    });
    let plan = rollback::plan(&record, &naming(), &live, StatementVerb::Delete).unwrap();
    let attention: Vec<&str> = plan
        .blue
        .iter()
        .filter(|b| b.needs_attention())
        .map(|b| b.statement.as_str())
        .collect();
    assert_eq!(attention, ["dev-p-dml-int-a"]);
    // A delete decommission here refuses; in another environment it does not.
    record.releases[0].decommissioned.push(Decommission {
        statement_prefix: "dev".into(),
        at: "2026-12-02T09:00:00Z".into(),
        action: "delete".into(),
        statements: vec!["dev-p-dml-int-a".into()],
    });
    let e = rollback::plan(&record, &naming(), &live, StatementVerb::Delete).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the blue-green release of 2026-12-01T10:00:00Z cannot be rolled back for statement prefix 'dev': it was decommissioned at 2026-12-02T09:00:00Z (its blue statements were deleted, green is production); deploy the previous SQL as a new change instead"
    );
    let prod = StatementNaming {
        prefix: "prod".into(),
    };
    let p = rollback::plan(&record, &prod, &BTreeMap::new(), StatementVerb::Delete).unwrap();
    assert!(p.statements.is_empty());
    assert_eq!(p.left_alone.len(), 4, "absent in prod: {:?}", p.left_alone);
    assert!(
        p.left_alone
            .iter()
            .all(|l| l.statement.starts_with("prod-p-"))
    );
}

// ---- the git command that restores the blue SQL ----

fn release_record(base: Option<String>) -> (BlueGreenRecord, Release) {
    let mut record = two_table_record();
    record.releases[0].base_commit = base;
    if record.releases[0].base_commit.is_none() {
        record.releases[0].base_ref = None;
    }
    let release = record.releases[0].clone();
    (record, release)
}

fn small_repo() -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let pipelines = tmp.path().join("pipelines");
    std::fs::create_dir_all(pipelines.join("a")).unwrap();
    std::fs::write(pipelines.join("a/dml.x.sql"), "INSERT INTO x SELECT 1;\n").unwrap();
    std::fs::write(tmp.path().join("README"), "outside the pipelines\n").unwrap();
    Repo::new((tmp, pipelines))
}

/// A listed versioning (no base commit): the files come back from the parent of the commit that
/// added the release; a path edited after that commit is named; files outside the pipelines
/// folder and the record are never listed.
#[test]
fn the_restore_of_a_listed_versioning_comes_from_the_parent_of_its_release_commit() {
    use flinkpipe::versioning::restore::{RestoreSource, restore_for};
    let r = small_repo();
    let before = r.head_commit();
    let (record, release) = release_record(None);
    r.write("a/dml.x.sql", "INSERT INTO x_v2 SELECT 1;\n");
    r.write("b/dml.y.sql", "INSERT INTO y_v2 SELECT 1;\n");
    r.write("blue_green.json", &record.to_text());
    std::fs::write(r.root.join("README"), "edited too\n").unwrap();
    let release_commit = r.commit("version", T_CHANGE);
    r.write("a/dml.x.sql", "INSERT INTO x_v2 SELECT 2;\n");
    r.commit("later edit", T_CHANGE + 60);
    let got = restore_for(&r.pipelines, &release).unwrap();
    assert_eq!(got.release_commit, Some(release_commit.to_string()));
    assert_eq!(got.source, before.to_string());
    assert_eq!(got.source_kind, RestoreSource::ReleaseCommitParent);
    assert_eq!(
        got.paths,
        ["pipelines/a/dml.x.sql", "pipelines/b/dml.y.sql"]
    );
    assert_eq!(got.changed_since, ["pipelines/a/dml.x.sql"]);
    assert_eq!(
        got.commands(&release.created_at),
        [
            format!(
                "git restore --source={before} --staged --worktree -- pipelines/a/dml.x.sql pipelines/b/dml.y.sql"
            ),
            "git add pipelines/blue_green.json".to_string(),
            "git commit -m 'Roll back the blue-green release of 2026-12-01T10:00:00Z'".to_string(),
        ]
    );
}

/// A blue-green not committed yet: the files come from the base commit and the paths from the
/// work tree (untracked files included); without a base commit there is nothing to restore from.
#[test]
fn the_restore_of_an_uncommitted_release_diffs_the_work_tree_and_needs_a_base() {
    use flinkpipe::versioning::restore::{RestoreError, RestoreSource, restore_for};
    let r = small_repo();
    let base = r.head_commit();
    let (record, release) = release_record(Some(base.to_string()));
    r.write("a/dml.x.sql", "INSERT INTO x_v2 SELECT 1;\n");
    r.write("c/ddl.z.sql", "CREATE TABLE z_v2 (a INT);\n");
    r.write("blue_green.json", &record.to_text());
    let got = restore_for(&r.pipelines, &release).unwrap();
    assert_eq!(got.release_commit, None);
    assert_eq!(got.source, base.to_string());
    assert_eq!(got.source_kind, RestoreSource::BaseCommit);
    assert_eq!(
        got.paths,
        ["pipelines/a/dml.x.sql", "pipelines/c/ddl.z.sql"]
    );
    assert!(got.changed_since.is_empty());
    let (_, listed) = release_record(None);
    let e = restore_for(&r.pipelines, &listed).unwrap_err();
    assert!(matches!(e, RestoreError::NoSource { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "the release of 2026-12-01T10:00:00Z has no base commit and no commit adds it to pipelines/blue_green.json: restore the files it rewrote by hand (`git status`)"
    );
}

// ---- a property over random releases ----

/// For every release (1–6 tables, some written by one statement set, green statements live in any
/// phase or absent, blue running) and both verbs: the plan never names a blue statement, names each
/// green statement once, acts on every live green one with `--delete` and on no declaration or
/// STOPPED job with `--stop`, puts a table's job before its declaration and a child's declaration
/// before its parent's, and lists every blue statement once, untouched.
#[test]
fn the_rollback_plan_never_touches_blue_and_goes_children_first_for_every_release() {
    use flinkpipe::target::{StatementMeta, StatementState};
    for seed in 1..400u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let n = 1 + rng.below(6);
        let mut tables: Vec<GreenTable> = (0..n)
            .map(|i| table(&format!("t{i}"), &format!("t{i}_v2")))
            .collect();
        // A statement set: table i's job also writes table i+1 (same job name recorded for both).
        for i in 0..n.saturating_sub(1) {
            if rng.below(4) == 0 {
                let (blue_job, green_job) = (
                    tables[i].blue_statements[0].clone(),
                    tables[i].green_statements[1].clone(),
                );
                tables[i + 1].blue_statements[0] = blue_job;
                tables[i + 1].green_statements[1] = green_job;
            }
        }
        let record = BlueGreenRecord {
            format: 1,
            releases: vec![Release {
                created_at: "2026-12-01T10:00:00Z".into(),
                base_ref: None,
                base_commit: None,
                statement_prefix: "dev".into(),
                tables: tables.clone(),
                decommissioned: Vec::new(),
                rolled_back: Vec::new(),
            }],
        };
        let state = |name: &str, phase: Phase| StatementState {
            name: name.to_string(),
            stopped: phase == Phase::Stopped,
            phase,
            detail: String::new(),
            sql: String::new(),
            properties: BTreeMap::new(),
            meta: StatementMeta::default(),
        };
        let mut live = BTreeMap::new();
        let blue: BTreeSet<String> = tables
            .iter()
            .flat_map(|t| t.blue_statements.iter().map(|s| s.name.clone()))
            .collect();
        for b in &blue {
            live.insert(b.clone(), state(b, Phase::Running));
        }
        for t in &tables {
            for g in &t.green_statements {
                let phase = match rng.below(5) {
                    0 => continue,
                    1 => Phase::Stopped,
                    2 => Phase::Failed,
                    3 => Phase::Completed,
                    _ => Phase::Running,
                };
                live.insert(g.name.clone(), state(&g.name, phase));
            }
        }
        for verb in [StatementVerb::Delete, StatementVerb::Stop] {
            let plan = rollback::plan(&record, &naming(), &live, verb).unwrap();
            let names: Vec<&str> = plan
                .statements
                .iter()
                .map(|t| t.statement.as_str())
                .collect();
            let unique: BTreeSet<&str> = names.iter().copied().collect();
            assert_eq!(unique.len(), names.len(), "seed {seed}: {names:?}");
            assert!(names.iter().all(|n| !blue.contains(*n)), "seed {seed}");
            let pos = |n: &str| names.iter().position(|x| *x == n);
            for t in &plan.statements {
                match verb {
                    StatementVerb::Delete => {}
                    _ => {
                        assert_eq!(t.role, StatementRole::Job, "seed {seed}");
                        assert_ne!(t.phase, flinkpipe::target::Phase::Stopped, "seed {seed}");
                    }
                }
            }
            if verb == StatementVerb::Delete {
                let greens: BTreeSet<&str> = tables
                    .iter()
                    .flat_map(|t| t.green_statements.iter().map(|s| s.name.as_str()))
                    .filter(|n| live.contains_key(*n))
                    .collect();
                assert_eq!(unique, greens, "seed {seed}");
            }
            for (i, t) in tables.iter().enumerate() {
                let (ddl, job) = (&t.green_statements[0].name, &t.green_statements[1].name);
                if let (Some(j), Some(d)) = (pos(job), pos(ddl)) {
                    assert!(j < d, "seed {seed}: {job} before {ddl}");
                }
                for child in &tables[i + 1..] {
                    if let (Some(c), Some(p)) = (pos(&child.green_statements[0].name), pos(ddl)) {
                        assert!(c < p, "seed {seed}: child before parent");
                    }
                }
            }
            let listed: Vec<&str> = plan.blue.iter().map(|b| b.statement.as_str()).collect();
            assert_eq!(listed.len(), blue.len(), "seed {seed}");
            assert_eq!(
                listed.iter().copied().collect::<BTreeSet<_>>(),
                blue.iter().map(String::as_str).collect::<BTreeSet<_>>()
            );
        }
    }
}

// ---- issue #41: an interrupted decommission, a record that does not follow from the tree ----

const WEB_ORDERS_DML: &str =
    "intermediates/sales/int_web_orders/sql-scripts/dml.int_sales_web_orders.sql";

/// Blue deployed; the second INSERT of the example's statement set changed, versioned and
/// committed; green deployed beside blue (the walkthrough of issue #41 item 1).
fn set_green_deployed(t: &Test, fake: &FakeConfluent) {
    t.release_applied(
        WEB_ORDERS_DML,
        |t| {
            t.replace(
                "WHERE channel = 'store';",
                "WHERE channel = 'store' AND amount >= 5;",
            )
        },
        "store orders of 5 or more",
        "blue-green",
    );
    t.cmd(&["pipeline", "deploy", "--blue-green"])
        .success()
        .stdout();
    assert_eq!(
        fake.phase("dev-usw2-sales-dml-int-sales-web-orders-v2")
            .as_deref(),
        Some("RUNNING")
    );
}

/// The newest release's tables: (blue table, green table, blue jobs, green jobs).
type Jobs = Vec<(String, String, Vec<String>, Vec<String>)>;

fn release_jobs(t: &Test) -> Jobs {
    let r = record(t);
    let release = r["releases"].as_array().unwrap().last().unwrap().clone();
    let jobs = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|s| s["role"] == "job")
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    release["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["blue_table_name"].as_str().unwrap().to_string(),
                e["green_table_name"].as_str().unwrap().to_string(),
                jobs(&e["blue_statements"]),
                jobs(&e["green_statements"]),
            )
        })
        .collect()
}

/// Every table of the release has a RUNNING writer: its blue job or its green job.
fn every_table_written(fake: &FakeConfluent, jobs: &Jobs, what: &str) {
    for (blue, green, b, g) in jobs {
        if b.is_empty() && g.is_empty() {
            continue;
        }
        let running = b
            .iter()
            .chain(g)
            .any(|n| fake.phase(n).as_deref() == Some("RUNNING"));
        assert!(
            running,
            "{what}: {blue} / {green} has no running writer: {:?}",
            fake.phases()
        );
    }
}

/// Issue #41 item 1, at every position of the decommission's deletion sequence: the blue
/// statements before that position are gone (a Ctrl-C or kill -9 there; with the release journal's
/// lines, or without them as after a kill between a delete and its line). `rollback --delete` then
/// refuses (exit 1, naming every table whose blue job is gone, nothing stopped or deleted, the record
/// unchanged) whenever a blue job is gone, and succeeds otherwise; `--partial` rolls back the rest.
/// After every rollback each table of the release still has a running writer.
#[test]
fn rollback_after_a_decommission_interrupted_at_any_position_leaves_every_table_a_writer() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    set_green_deployed(&t, &fake);
    let dry = t
        .cmd(&[
            "--output",
            "json",
            "pipeline",
            "decommission",
            "--delete",
            "--dry-run",
        ])
        .success()
        .stdout_json();
    let sequence: Vec<String> = dry["plan"]["statements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["statement"].as_str().unwrap().to_string())
        .collect();
    assert!(sequence.len() >= 6, "{sequence:?}");
    let jobs = release_jobs(&t);
    let snapshot: Vec<(String, String, String)> = fake
        .phases()
        .into_iter()
        .map(|(n, p)| (fake.sql(&n).unwrap(), n, p))
        .collect();
    let record_before = record_text(&t);
    let journal = t.root.join(".flinkpipe/release-journal.jsonl");
    let created_at = record(&t)["releases"].as_array().unwrap().last().unwrap()["created_at"]
        .as_str()
        .unwrap()
        .to_string();
    for k in 0..=sequence.len() {
        for with_journal in [true, false] {
            let what = format!("{k} deleted, journal {with_journal}");
            for (sql, n, p) in &snapshot {
                fake.seed(n, sql, p);
            }
            std::fs::write(t.pipelines.join("blue_green.json"), &record_before).unwrap();
            let _ = std::fs::remove_file(&journal);
            let deleted = &sequence[..k];
            for n in deleted {
                fake.remove(n);
            }
            if with_journal {
                let mut lines = vec![serde_json::json!({"event": "release_run", "command": "decommission", "action": "delete", "statement_prefix": "dev-usw2", "releases": [created_at], "statements": sequence, "at": 1}).to_string()];
                lines.extend(deleted.iter().map(|n| {
                    serde_json::json!({"event": "deleted", "table": "t", "statement": n})
                        .to_string()
                }));
                std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
                std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
            }
            let gone: Vec<&str> = jobs
                .iter()
                .filter(|(_, _, b, _)| !b.is_empty() && b.iter().all(|j| deleted.contains(j)))
                .map(|(blue, ..)| blue.as_str())
                .collect();
            let deletes = fake.deletes().len();
            let o = t.cmd(&["pipeline", "rollback", "--delete", "--no-ack"]);
            if gone.is_empty() {
                o.success();
                every_table_written(&fake, &jobs, &what);
                continue;
            }
            let o = o.code(1);
            let err = o.stderr();
            assert!(err.contains("cannot be rolled back"), "{what}: {err}");
            for blue in &gone {
                assert!(
                    err.contains(&format!(" {blue} (blue ")),
                    "{what}: {blue}: {err}"
                );
            }
            assert_eq!(fake.deletes().len(), deletes, "{what}: nothing deleted");
            assert_eq!(record_text(&t), record_before, "{what}");
            every_table_written(&fake, &jobs, &what);
            // --partial rolls back the tables whose blue is there, and keeps the others written.
            let o = t.cmd(&["pipeline", "rollback", "--delete", "--no-ack", "--partial"]);
            let out = o.success().stdout();
            assert!(
                out.contains("Green statements kept running"),
                "{what}: {out}"
            );
            every_table_written(&fake, &jobs, &what);
            // The kept tables are still on green: the release stays open, no restore is printed.
            assert!(
                out.contains("stays open in blue_green.json"),
                "{what}: {out}"
            );
            assert!(!out.contains("git restore"), "{what}: {out}");
            let v: serde_json::Value = serde_json::from_str(&record_text(&t)).unwrap();
            let release = v["releases"].as_array().unwrap().last().unwrap().clone();
            assert!(
                release
                    .get("rolled_back")
                    .and_then(|r| r.as_array())
                    .is_none_or(|a| a.is_empty()),
                "{what}: {release:#}"
            );
        }
    }
}

/// Issue #41 items 1 and 12, with real signals: a `decommission --delete` interrupted by SIGINT,
/// SIGTERM or SIGHUP while it deletes exits 130, prints every statement it had deleted and records
/// each in the release journal; `rollback` then refuses, naming the tables left without blue; the
/// same decommission run again finishes and records every blue statement of both runs.
#[test]
fn an_interrupted_decommission_exits_130_prints_what_it_did_and_a_rerun_finishes() {
    use crate::fake_confluent::{Fault, FaultAction};
    for signal in ["INT", "TERM", "HUP"] {
        let fake = FakeConfluent::start();
        let t = repo(&fake);
        set_green_deployed(&t, &fake);
        let greens = green_names(&fake);
        fake.add_fault(Fault::new(
            Some("DELETE"),
            None,
            FaultAction::Slow(Duration::from_millis(400)),
            1000,
        ));
        let mut c = t.command(&["pipeline", "decommission", "--delete", "--no-ack"]);
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child = c.spawn().unwrap();
        let t0 = std::time::Instant::now();
        while fake.deletes().len() < 2 && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let kill = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let o = t.outcome(signal, child.wait_with_output().unwrap());
        let o = o.code(130);
        let (out, err) = (o.stdout(), o.stderr());
        assert!(err.contains(&format!("interrupted (SIG{signal})")), "{err}");
        assert!(
            err.contains("run the same command again to finish"),
            "{err}"
        );
        let requested = fake.deletes();
        assert!(requested.len() >= 2, "{requested:?}");
        let journal =
            std::fs::read_to_string(t.root.join(".flinkpipe/release-journal.jsonl")).unwrap();
        let journaled: Vec<String> = journal
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["event"] == "deleted")
            .map(|e| e["statement"].as_str().unwrap().to_string())
            .collect();
        for d in &requested {
            let name = d.trim_start_matches("/statements/");
            assert!(
                journaled.iter().any(|j| j == name),
                "{signal}: {name} not journaled: {journal}"
            );
        }
        for j in &journaled[..journaled.len() - 1] {
            assert!(
                out.contains(&format!("deleted {j} ")),
                "{signal}: {j} not printed: {out}"
            );
        }
        assert!(
            !record_text(&t).contains("\"decommissioned\": [\n"),
            "not closed"
        );

        // Rollback refuses: the blue writer of some tables is gone.
        let jobs = release_jobs(&t);
        let o = t.cmd(&["pipeline", "rollback", "--delete", "--no-ack"]);
        let err = o.code(1).stderr();
        assert!(err.contains("cannot be rolled back"), "{err}");
        assert!(err.contains("only writer"), "{err}");
        for g in &greens {
            assert!(fake.phase(g).is_some(), "{signal}: green {g} deleted");
        }
        every_table_written(&fake, &jobs, signal);

        // The rerun finishes and records both runs' deletions.
        t.cmd(&["pipeline", "decommission", "--delete", "--no-ack"])
            .success()
            .stdout();
        let r = record(&t);
        let done: BTreeSet<String> =
            r["releases"].as_array().unwrap().last().unwrap()["decommissioned"][0]["statements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
        for j in &journaled {
            assert!(done.contains(j), "{signal}: {j} not recorded: {done:?}");
        }
        every_table_written(&fake, &jobs, signal);
    }
}

/// Issue #41 item 2, every kind of entry that does not follow from the tree — a green table the
/// tree does not hold, a green name that is not a next version of its blue, a table of the tree
/// never versioned, another product, green or blue statements naming a running statement outside
/// the release, a role swapped, a statement left out, an entry listed twice, an entry added for a
/// table never versioned: `rollback` and `decommission` (and their dry runs) refuse with exit 1
/// naming the entry and what does not follow, and stop, delete or write nothing.
#[test]
fn rollback_and_decommission_refuse_a_record_that_does_not_follow_from_the_tree() {
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    green_deployed(&t, &fake);
    let good = record(&t);
    let path = t.pipelines.join("blue_green.json");
    let entries = good["releases"][0]["tables"].as_array().unwrap().clone();
    let versioned: BTreeSet<String> = entries
        .iter()
        .map(|e| e["blue_table_name"].as_str().unwrap().to_string())
        .collect();
    // A running statement outside the release: a table of the tree never versioned.
    let outside = fake
        .phases()
        .into_iter()
        .find(|(n, p)| {
            p == "RUNNING"
                && n.contains("-dml-")
                && !n.ends_with("-v2")
                && !versioned
                    .iter()
                    .any(|b| n.ends_with(&format!("-{}", b.replace('_', "-"))))
        })
        .map(|(n, _)| n)
        .expect("a running statement outside the release");
    type Edit = Box<dyn Fn(&mut Value)>;
    let kinds: Vec<(&str, Edit, &str)> = vec![
        (
            "green not in the tree",
            Box::new(|r| {
                r["tables"][0]["green_table_name"] = "int_sales_orders_enriched_v3".into()
            }),
            "green table 'int_sales_orders_enriched_v3' is not a table of the tree",
        ),
        (
            "green not a version of blue",
            Box::new(|r| r["tables"][0]["blue_table_name"] = "int_sales_orders".into()),
            "is not a next version of 'int_sales_orders'",
        ),
        (
            "a tree table never versioned as green",
            Box::new(|r| {
                r["tables"][0]["green_table_name"] = "int_sales_orders".into();
                r["tables"][0]["blue_table_name"] = "int_sales_orders".into();
            }),
            "is not a next version of",
        ),
        (
            "an entry added for a table never versioned",
            Box::new(|r| {
                let mut e = r["tables"][0].clone();
                e["blue_table_name"] = "int_sales_orders".into();
                e["green_table_name"] = "int_sales_orders_v2".into();
                r["tables"].as_array_mut().unwrap().push(e);
            }),
            "green table 'int_sales_orders_v2' is not a table of the tree",
        ),
        (
            "another product",
            Box::new(|r| r["tables"][0]["product_name"] = "c360".into()),
            "product 'c360' recorded",
        ),
        (
            "green statements naming a statement outside the release",
            {
                let o = outside.clone();
                Box::new(move |r| r["tables"][0]["green_statements"][1]["name"] = o.clone().into())
            },
            "green_statements [",
        ),
        (
            "blue statements naming a statement outside the release",
            {
                let o = outside.clone();
                Box::new(move |r| r["tables"][0]["blue_statements"][0]["name"] = o.clone().into())
            },
            "blue_statements [",
        ),
        (
            "a role swapped",
            Box::new(|r| r["tables"][0]["green_statements"][0]["role"] = "job".into()),
            "green_statements [",
        ),
        (
            "a statement left out",
            Box::new(|r| {
                r["tables"][0]["green_statements"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            "green_statements [",
        ),
        (
            "an entry listed twice",
            Box::new(|r| {
                let e = r["tables"][0].clone();
                r["tables"].as_array_mut().unwrap().push(e);
            }),
            "listed twice",
        ),
    ];
    for (kind, edit, expected) in &kinds {
        let mut bad = good.clone();
        edit(&mut bad["releases"][0]);
        let text = serde_json::to_string_pretty(&bad).unwrap();
        std::fs::write(&path, &text).unwrap();
        let phases = fake.phases();
        let deletes = fake.deletes().len();
        for args in [
            &["pipeline", "rollback", "--delete", "--no-ack"][..],
            &["pipeline", "rollback", "--delete", "--dry-run"][..],
            &["pipeline", "decommission", "--delete", "--no-ack"][..],
            &["pipeline", "decommission", "--stop", "--no-ack"][..],
        ] {
            let o = t.cmd(args);
            let err = o.code(1).stderr();
            assert!(
                err.contains(
                    "of the record do not follow from the tree, so nothing was stopped or deleted"
                ),
                "{kind}: {args:?}: {err}"
            );
            assert!(err.contains(expected), "{kind}: {args:?}: {err}");
            assert!(err.contains("release "), "{kind}: {err}");
            assert_eq!(fake.phases(), phases, "{kind}: {args:?}: nothing touched");
            assert_eq!(fake.deletes().len(), deletes, "{kind}: {args:?}");
            assert_eq!(record_text(&t), text, "{kind}: {args:?}: record unchanged");
        }
    }
    // The record as written by blue-green is consistent: rollback works.
    std::fs::write(&path, serde_json::to_string_pretty(&good).unwrap()).unwrap();
    t.cmd(&["pipeline", "rollback", "--delete", "--no-ack"])
        .success()
        .stdout();
    assert_eq!(fake.phase(BLUE_DML).as_deref(), Some("RUNNING"));
    assert_eq!(fake.phase(&outside).as_deref(), Some("RUNNING"));
}

/// Issue #41 item 12 for `rollback`: SIGTERM while it deletes green exits 130, prints each green
/// statement it had deleted, journals it, leaves the release open; the same rollback run again
/// finishes and closes it.
#[test]
fn an_interrupted_rollback_exits_130_prints_what_it_did_and_a_rerun_finishes() {
    use crate::fake_confluent::{Fault, FaultAction};
    let fake = FakeConfluent::start();
    let t = repo(&fake);
    green_deployed(&t, &fake);
    fake.add_fault(Fault::new(
        Some("DELETE"),
        None,
        FaultAction::Slow(Duration::from_millis(400)),
        1000,
    ));
    let mut c = t.command(&["pipeline", "rollback", "--delete", "--no-ack"]);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    let t0 = std::time::Instant::now();
    while fake.deletes().len() < 2 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = t.outcome("rollback", child.wait_with_output().unwrap());
    let o = o.code(130);
    let (out, err) = (o.stdout(), o.stderr());
    assert!(err.contains("interrupted (SIGTERM)"), "{err}");
    let journal = std::fs::read_to_string(t.root.join(".flinkpipe/release-journal.jsonl")).unwrap();
    let journaled: Vec<String> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "deleted")
        .map(|e| e["statement"].as_str().unwrap().to_string())
        .collect();
    assert!(!journaled.is_empty(), "{journal}");
    for j in &journaled[..journaled.len() - 1] {
        assert!(
            out.contains(&format!("deleted {j} ")),
            "{j} not printed: {out}"
        );
    }
    assert!(
        record(&t)["releases"][0].get("rolled_back").is_none(),
        "still open"
    );
    assert_eq!(fake.phase(BLUE_DML).as_deref(), Some("RUNNING"));
    t.cmd(&["pipeline", "rollback", "--delete", "--no-ack"])
        .success()
        .stdout();
    assert!(green_names(&fake).is_empty(), "{:?}", fake.phases());
    assert_eq!(
        record(&t)["releases"][0]["rolled_back"][0]["action"],
        "delete"
    );
}
