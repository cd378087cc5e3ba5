//! A fluent test of the real binary, after cargo's `project().file(..).build()` and just's
//! `Test::new()…success()`: a temporary project, the command line, the environment, and checks on the
//! outcome whose text has its volatile parts redacted (the project's temporary path as `[ROOT]`,
//! durations such as `1.2s` as `[TIME]`), so that expected outputs can be written out whole.
//!
//! Every run checks that none of the fake Confluent Cloud's secrets ([`crate::fake_confluent::all_secrets`]: keys,
//! secrets and their Basic tokens) is printed.
//!
//! ```ignore
//! Test::fixture()
//!     .config("kafka:\n  cluster_type: dev\n")
//!     .args(&["pipeline", "validate", "[PIPELINES]"])
//!     .run()
//!     .success()
//!     .stdout_is("ok: 36 tables, …\n");
//!
//! let fake = FakeConfluent::start();
//! let t = Test::fixture().confluent(&fake);
//! let plan = t.cmd(&["--output", "json", "pipeline", "deploy", "[PIPELINES]"]).success().stdout_json();
//! ```

use super::repo::{Repo, T_CHANGE};
use crate::fake_confluent::{CLOUD_KEY, CLOUD_SECRET, ENV, FakeConfluent, KEY, ORG, SECRET};
use std::path::{Path, PathBuf};
use std::process::Output;

/// The `config.yaml` of a project on the fake Confluent Cloud: its organization ([`ORG`]) and
/// environment ([`ENV`]), AWS us-west-2, compute pool `lfcp-fake`
/// ([`crate::fake_confluent::DEFAULT_POOL`]); `flink:` is the last section, so that
/// [`Test::config_append`] can add keys to it.
pub fn confluent_config() -> String {
    format!(
        "kafka:\n  cluster_type: dev\nconfluent_cloud:\n  organization_id: {ORG}\n  environment_id: {ENV}\n  cloud_provider: aws\n  cloud_region: us-west-2\nflink:\n  compute_pool_id: lfcp-fake\n"
    )
}

/// The Flink endpoint and API key of `fake` (`SL_FLINK_SQL_ENDPOINT`, `SL_FLINK_API_KEY`,
/// `SL_FLINK_API_SECRET`).
fn flink_env(fake: &FakeConfluent) -> Vec<(&'static str, String)> {
    vec![
        ("SL_FLINK_SQL_ENDPOINT", fake.endpoint()),
        ("SL_FLINK_API_KEY", KEY.to_string()),
        ("SL_FLINK_API_SECRET", SECRET.to_string()),
    ]
}

/// The control plane of `fake`: the Cloud and Metrics APIs (`FLINKPIPE_CLOUD_API_URL`,
/// `FLINKPIPE_METRICS_URL`) and the Cloud API key (`SL_CONFLUENT_CLOUD_API_KEY`,
/// `SL_CONFLUENT_CLOUD_API_SECRET`).
fn cloud_env(fake: &FakeConfluent) -> Vec<(&'static str, String)> {
    vec![
        ("FLINKPIPE_CLOUD_API_URL", fake.endpoint()),
        ("FLINKPIPE_METRICS_URL", fake.endpoint()),
        ("SL_CONFLUENT_CLOUD_API_KEY", CLOUD_KEY.to_string()),
        ("SL_CONFLUENT_CLOUD_API_SECRET", CLOUD_SECRET.to_string()),
    ]
}

/// The DML of the example project's `int_sales_orders_enriched`, under the pipelines folder (the
/// table the blue-green runbook changes, [`Test::release_applied_filter`]).
pub const ENRICHED_DML: &str =
    "intermediates/sales/int_orders_enriched/sql-scripts/dml.int_sales_orders_enriched.sql";

/// A project in a temporary folder and the command to run on it.
pub struct Test {
    /// The temporary folder, until [`Test::git`] hands it to a [`Repo`].
    tmp: Option<tempfile::TempDir>,
    repo: Option<Repo>,
    /// The project root (holds `pipelines/` and `config.yaml`).
    pub root: PathBuf,
    /// The pipelines folder.
    pub pipelines: PathBuf,
    args: Vec<String>,
    /// Arguments added after those of every run ([`Test::pipelines_last`]).
    trailing: Vec<String>,
    /// Variables set (`Some`) or removed (`None`), in order.
    env: Vec<(String, Option<String>)>,
}

impl Test {
    /// An empty project: `<tmp>/pipelines/`.
    pub fn new() -> Test {
        let tmp = tempfile::tempdir().unwrap();
        let pipelines = tmp.path().join("pipelines");
        std::fs::create_dir_all(&pipelines).unwrap();
        Test {
            root: tmp.path().to_path_buf(),
            pipelines,
            tmp: Some(tmp),
            repo: None,
            args: Vec::new(),
            trailing: Vec::new(),
            env: Vec::new(),
        }
    }

    /// A copy of our example project (`fixtures/pipelines`).
    pub fn fixture() -> Test {
        let (tmp, pipelines) = super::our_fixture();
        Test {
            root: tmp.path().to_path_buf(),
            pipelines,
            tmp: Some(tmp),
            repo: None,
            args: Vec::new(),
            trailing: Vec::new(),
            env: Vec::new(),
        }
    }

    /// A copy of our example project on the fake `fake`, both planes: [`Test::confluent`] (the
    /// Flink endpoint and key) and [`Test::cloud_api`] (the Cloud and Metrics APIs, the Cloud key).
    pub fn confluent_fixture(fake: &FakeConfluent) -> Test {
        Test::fixture().confluent(fake).cloud_api(fake)
    }

    /// The project of the blue-green runbook: a git repository of the example project (its
    /// baseline committed on `main`) on the fake `fake`, every run ending with the pipelines folder.
    pub fn release_repo(fake: &FakeConfluent) -> Test {
        Test::fixture().git().confluent(fake).pipelines_last()
    }

    /// The runbook up to the green deploy, on a [`Test::release_repo`]: blue deployed
    /// (`pipeline deploy --dir pipelines`); on branch `feature`, `file` (under the pipelines folder)
    /// changed by `edit` and committed as `change` at [`T_CHANGE`]; `pipeline blue-green --since main
    /// --apply`, its versioning committed as `versioning` a minute later.
    pub fn release_applied(
        &self,
        file: &str,
        edit: impl FnOnce(String) -> String,
        change: &str,
        versioning: &str,
    ) {
        self.cmd(&["pipeline", "deploy", "--dir", "pipelines"])
            .success();
        self.repo().branch("feature");
        self.repo().edit(file, edit);
        self.repo().commit(change, T_CHANGE);
        self.cmd(&["pipeline", "blue-green", "--since", "main", "--apply"])
            .success();
        self.repo().commit(versioning, T_CHANGE + 60);
    }

    /// [`Test::release_applied`] with the runbook's change: `int_sales_orders_enriched`
    /// ([`ENRICHED_DML`]) filters out test orders (`WHERE o.channel <> 'test'`), committed as `filter
    /// test orders`, its versioning as `version the impacted tables`.
    pub fn release_applied_filter(&self) {
        self.release_applied(
            ENRICHED_DML,
            |t| {
                t.replace(
                    "  ON o.currency = r.currency;",
                    "  ON o.currency = r.currency\nWHERE o.channel <> 'test';",
                )
            },
            "filter test orders",
            "version the impacted tables",
        );
    }

    /// An empty folder: no `pipelines/`, no configuration (for commands that take no project).
    pub fn empty() -> Test {
        let t = Test::new();
        std::fs::remove_dir(&t.pipelines).unwrap();
        t
    }

    /// A copy of shift_left's fixture project (see [`super::shift_left_fixture`]).
    pub fn shift_left_fixture() -> Test {
        Test::copy(super::shift_left_fixture())
    }

    /// A project copied by [`super::copy_pipelines`] (its guard and pipelines folder).
    pub fn copy((tmp, pipelines): (tempfile::TempDir, PathBuf)) -> Test {
        Test {
            root: tmp.path().to_path_buf(),
            pipelines,
            tmp: Some(tmp),
            repo: None,
            args: Vec::new(),
            trailing: Vec::new(),
            env: Vec::new(),
        }
    }

    /// A file under the pipelines folder (`sources/src_x/sql-scripts/ddl.src_x.sql`).
    pub fn file(self, rel: &str, content: &str) -> Test {
        let p = self.pipelines.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    /// The project's `config.yaml`.
    pub fn config(self, yaml: &str) -> Test {
        std::fs::write(self.root.join("config.yaml"), yaml).unwrap();
        self
    }

    /// `yaml` added at the end of the project's `config.yaml` (after [`Test::confluent`], keys of
    /// its `flink:` section when indented).
    pub fn config_append(self, yaml: &str) -> Test {
        let p = self.root.join("config.yaml");
        let mut text = std::fs::read_to_string(&p).unwrap_or_default();
        text.push_str(yaml);
        std::fs::write(p, text).unwrap();
        self
    }

    /// The project is a git repository (the work tree is the project root) whose current content is
    /// committed on `main` as the baseline; [`Test::repo`] commits and branches.
    pub fn git(mut self) -> Test {
        let tmp = self.tmp.take().expect("git() once");
        self.repo = Some(Repo::new((tmp, self.pipelines.clone())));
        self
    }

    /// The git repository of [`Test::git`].
    pub fn repo(&self) -> &Repo {
        self.repo.as_ref().expect("a test made with .git()")
    }

    /// Arguments; `[PIPELINES]` and `[ROOT]` stand for the project's folders.
    pub fn args(mut self, args: &[&str]) -> Test {
        let args = self.expand(args);
        self.args.extend(args);
        self
    }

    /// Every run ([`Test::run`], [`Test::cmd`], [`Test::command`]) ends with the pipelines folder
    /// (the commands of a test that all take it last).
    pub fn pipelines_last(mut self) -> Test {
        self.trailing = vec![self.pipelines.display().to_string()];
        self
    }

    /// An environment variable for the run.
    pub fn env(mut self, key: &str, value: &str) -> Test {
        self.env.push((key.to_string(), Some(value.to_string())));
        self
    }

    /// An environment variable removed for the run (one that an earlier call set).
    pub fn env_remove(mut self, key: &str) -> Test {
        self.env.push((key.to_string(), None));
        self
    }

    /// The project's target is the fake Confluent Cloud `fake`: `config.yaml` is
    /// [`confluent_config`] (its organization and environment; a later [`Test::config`] replaces it)
    /// and the Flink endpoint and API key are the fake's (`SL_FLINK_SQL_ENDPOINT`,
    /// `SL_FLINK_API_KEY`, `SL_FLINK_API_SECRET`).
    pub fn confluent(self, fake: &FakeConfluent) -> Test {
        self.config(&confluent_config()).envs(flink_env(fake))
    }

    /// The Flink catalog and database named: `catalog_name: my-env` and `database_name:
    /// my-cluster` added to the `flink:` section of [`confluent_config`] (after [`Test::confluent`]).
    pub fn flink_catalog(self) -> Test {
        self.config_append("  catalog_name: my-env\n  database_name: my-cluster\n")
    }

    /// The control plane too: the Cloud API and the Metrics API are the fake's
    /// (`FLINKPIPE_CLOUD_API_URL`, `FLINKPIPE_METRICS_URL`) with its Cloud API key
    /// (`SL_CONFLUENT_CLOUD_API_KEY`, `SL_CONFLUENT_CLOUD_API_SECRET`).
    pub fn cloud_api(self, fake: &FakeConfluent) -> Test {
        self.envs(cloud_env(fake))
    }

    fn envs(mut self, vars: Vec<(&str, String)>) -> Test {
        for (k, v) in vars {
            self.env.push((k.to_string(), Some(v)));
        }
        self
    }

    /// The target is the Flink SQL Gateway at `url` (`FLINKPIPE_GATEWAY_URL`), its JobManager's REST
    /// API at the same address (`FLINKPIPE_JOBMANAGER_URL`).
    pub fn gateway(self, url: &str) -> Test {
        self.env("FLINKPIPE_GATEWAY_URL", url)
            .env("FLINKPIPE_JOBMANAGER_URL", url)
    }

    /// Runs the binary from the project root (the developer's own settings removed, see
    /// [`super::command`]).
    pub fn run(&self) -> Outcome {
        self.run_with(&self.args)
    }

    /// Runs one command on the same project and environment (a test of several steps): `args` as
    /// for [`Test::args`], the arguments given there left out.
    pub fn cmd(&self, args: &[&str]) -> Outcome {
        self.run_with(&self.expand(args))
    }

    /// [`Test::cmd`] against the fake `fake`, both planes, whatever the test's own target: the
    /// variables of [`Test::confluent`] and [`Test::cloud_api`] for this run (the configuration is
    /// the project's).
    pub fn cmd_on(&self, fake: &FakeConfluent, args: &[&str]) -> Outcome {
        let mut c = self.command(args);
        c.envs(flink_env(fake)).envs(cloud_env(fake));
        let output = c.output().unwrap();
        self.outcome(&self.expand(args).join(" "), output)
    }

    /// [`Test::cmd`] with more environment variables (after the test's own, so they win).
    pub fn cmd_env(&self, args: &[&str], env: &[(&str, &str)]) -> Outcome {
        let mut c = self.command(args);
        c.envs(env.iter().copied());
        let output = c.output().unwrap();
        self.outcome(&self.expand(args).join(" "), output)
    }

    /// The command of [`Test::cmd`], not started (for a run that talks to the binary through its
    /// standard input); stdin is null unless changed. Check its output with [`Test::outcome`].
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        self.command_of(&self.expand(args))
    }

    fn command_of(&self, args: &[String]) -> std::process::Command {
        let mut c = super::command();
        c.args(args)
            .args(&self.trailing)
            .current_dir(&self.root)
            .stdin(std::process::Stdio::null());
        for (k, v) in &self.env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    }

    /// The outcome of a run of [`Test::command`] (`what` names it in failures), checked for secrets.
    pub fn outcome(&self, what: &str, output: Output) -> Outcome {
        Outcome::of(what, output, Some(&self.root))
    }

    /// Runs the binary outside any project (from the system's temporary folder, as
    /// [`super::flinkpipe`]): for commands given every path, or none.
    pub fn outside(args: &[&str]) -> Outcome {
        Outcome::of(&args.join(" "), super::flinkpipe(args), None)
    }

    fn expand(&self, args: &[&str]) -> Vec<String> {
        let pipelines = self.pipelines.display().to_string();
        let root = self.root.display().to_string();
        args.iter()
            .map(|a| {
                a.replace("[PIPELINES]", &pipelines)
                    .replace("[ROOT]", &root)
            })
            .collect()
    }

    fn run_with(&self, args: &[String]) -> Outcome {
        let output = self.command_of(args).output().unwrap();
        self.outcome(&args.join(" "), output)
    }

    /// The temporary folder (kept alive as long as the test).
    pub fn path(&self) -> &Path {
        &self.root
    }
}

/// What a run printed and how it ended.
pub struct Outcome {
    pub output: Output,
    /// The project root, shown as `[ROOT]` (none for a run outside a project).
    root: Option<PathBuf>,
    command: String,
}

impl Outcome {
    /// The outcome of `command` (its text for failures) that printed `output`, in the project at
    /// `root` if any; asserts that none of the fake Confluent Cloud's secrets was printed.
    pub fn of(command: &str, output: Output, root: Option<&Path>) -> Outcome {
        Outcome {
            output,
            root: root.map(Path::to_path_buf),
            command: command.to_string(),
        }
        .no_secrets()
    }

    /// Asserts exit status 0.
    pub fn success(self) -> Outcome {
        self.status(0)
    }

    /// Asserts a failure: an exit status other than 0 (and not a crash by a signal).
    pub fn failure(self) -> Outcome {
        assert!(
            matches!(self.output.status.code(), Some(c) if c != 0),
            "flinkpipe {}: expected a failure, got {:?}\nstdout:\n{}\nstderr:\n{}",
            self.command,
            self.output.status,
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// Asserts an exit status (the same as [`Outcome::status`]).
    pub fn code(self, code: i32) -> Outcome {
        self.status(code)
    }

    /// Asserts that no secret of the fake Confluent Cloud is in the output.
    fn no_secrets(self) -> Outcome {
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        );
        for secret in crate::fake_confluent::all_secrets() {
            assert!(
                !all.contains(&secret),
                "flinkpipe {}: a secret in the output:\n{all}",
                self.command
            );
        }
        self
    }

    /// Asserts an exit status.
    pub fn status(self, code: i32) -> Outcome {
        assert_eq!(
            self.output.status.code(),
            Some(code),
            "flinkpipe {}\nstdout:\n{}\nstderr:\n{}",
            self.command,
            self.stdout(),
            self.stderr()
        );
        self
    }

    /// Standard output, redacted.
    pub fn stdout(&self) -> String {
        redact(
            &String::from_utf8_lossy(&self.output.stdout),
            self.root.as_deref(),
        )
    }

    /// Standard error, redacted.
    pub fn stderr(&self) -> String {
        redact(
            &String::from_utf8_lossy(&self.output.stderr),
            self.root.as_deref(),
        )
    }

    /// Standard output as printed (no redaction).
    pub fn stdout_raw(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// Standard error as printed (no redaction: for a duration the test chose, `after 0.5s`).
    pub fn stderr_raw(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Standard output parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.output.stdout).unwrap_or_else(|e| {
            panic!(
                "flinkpipe {}: not JSON ({e}):\n{}",
                self.command,
                self.stdout()
            )
        })
    }

    /// Standard output parsed as JSON (the same as [`Outcome::json`]), for a chain ending on a
    /// successful run: `t.cmd(..).success().stdout_json()`.
    pub fn stdout_json(&self) -> serde_json::Value {
        self.json()
    }

    /// Asserts that the redacted standard output is exactly `expected`.
    pub fn stdout_is(self, expected: &str) -> Outcome {
        assert_eq!(self.stdout(), expected, "flinkpipe {}", self.command);
        self
    }

    /// Asserts that the redacted standard error is exactly `expected`.
    pub fn stderr_is(self, expected: &str) -> Outcome {
        assert_eq!(self.stderr(), expected, "flinkpipe {}", self.command);
        self
    }

    /// Asserts that the redacted standard output does not contain `part`.
    pub fn stdout_lacks(self, part: &str) -> Outcome {
        let out = self.stdout();
        self.holds(&out, part, false)
    }

    /// Asserts that the redacted standard error does not contain `part`.
    pub fn stderr_lacks(self, part: &str) -> Outcome {
        let err = self.stderr();
        self.holds(&err, part, false)
    }

    /// Asserts that the redacted standard error contains `part`.
    pub fn stderr_has(self, part: &str) -> Outcome {
        let err = self.stderr();
        self.holds(&err, part, true)
    }

    /// Asserts that the redacted standard output contains `part`.
    pub fn stdout_has(self, part: &str) -> Outcome {
        let out = self.stdout();
        self.holds(&out, part, true)
    }

    /// Asserts that `text` (one of the outputs) contains `part` when `wanted`, else that it does not.
    fn holds(self, text: &str, part: &str, wanted: bool) -> Outcome {
        assert!(
            text.contains(part) == wanted,
            "flinkpipe {}: {part:?} {} in\n{text}",
            self.command,
            if wanted { "not" } else { "unexpectedly" }
        );
        self
    }
}

/// `text` with the project root if any (as given and canonical) shown as `[ROOT]` and durations
/// (`0.3s`, `12.5s`) as `[TIME]`.
pub fn redact(text: &str, root: Option<&Path>) -> String {
    let mut out = text.to_string();
    let mut roots = Vec::new();
    if let Some(root) = root {
        roots.push(root.display().to_string());
        if let Ok(c) = root.canonicalize() {
            roots.push(c.display().to_string());
        }
    }
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    for r in roots {
        out = out.replace(&r, "[ROOT]");
    }
    let mut redacted = String::with_capacity(out.len());
    let b = out.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.');
        if starts_word && b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
                let mut k = j + 1;
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                let ends_word = k + 1 >= b.len() || !b[k + 1].is_ascii_alphanumeric();
                if k < b.len() && b[k] == b's' && ends_word {
                    redacted.push_str("[TIME]");
                    i = k + 1;
                    continue;
                }
            }
        }
        let ch = out[i..].chars().next().unwrap();
        redacted.push(ch);
        i += ch.len_utf8();
    }
    redacted
}

#[test]
fn redaction_of_paths_and_durations() {
    let root = Path::new("/tmp/abc");
    assert_eq!(
        redact(
            "wrote /tmp/abc/pipelines/x in 1.25s (first row after 0.3s), 2 tables, v1.5",
            Some(root)
        ),
        "wrote [ROOT]/pipelines/x in [TIME] (first row after [TIME]), 2 tables, v1.5"
    );
}
