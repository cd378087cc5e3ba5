//! A project of one end-to-end run on the local stack (see [`super::stack`]), after cargo's
//! `project()…build()`: its files in a temporary folder, a `config.yaml` on the SQL Gateway with a
//! statement prefix of the run's own, the binary run with `--config`, and a clean-up whatever
//! happens (the run's jobs cancelled, its topics deleted), so that the shared stack keeps its task
//! slots and stays clean.
//!
//! ```ignore
//! let e = E2e::new(&format!("e2eops{:x}", std::process::id()), &[(DML_FILE, DML)])
//!     .pipelines_last()
//!     .topics(&["int_p_feed"]);
//! let (v, out) = e.json(&["pipeline", "deploy", "--dir", "pipelines"]);
//! ```

use super::repo::Repo;
use super::stack::{cancel_jobs, delete_topics, gateway_config};
use super::test::Outcome;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A project on the local stack and the clean-up of its run (on drop).
pub struct E2e {
    /// The temporary folder (none once a [`Repo`] holds it).
    _tmp: Option<tempfile::TempDir>,
    repo: Option<Repo>,
    /// The project root (holds `pipelines/` and `config.yaml`).
    pub root: PathBuf,
    /// The pipelines folder.
    pub pipelines: PathBuf,
    /// The configuration file every run is given (`--config`).
    pub config: PathBuf,
    /// The statement prefix of the run: its jobs are `<prefix>-…`.
    pub prefix: String,
    /// Whether every run ends with the pipelines folder ([`E2e::pipelines_last`]).
    trailing: bool,
    /// Topics deleted on drop ([`E2e::topics`]).
    topics: Vec<String>,
    /// Whether the drop runs `pipeline undeploy --dir pipelines --no-ack` first.
    undeploy: bool,
}

impl E2e {
    /// `files` (relative path → content) under `<tmp>/pipelines/`, `config.yaml` the
    /// [`gateway_config`] of `prefix`.
    pub fn new(prefix: &str, files: &[(&str, &str)]) -> E2e {
        E2e::copy(prefix, super::project(files))
    }

    /// A project copied by [`super::copy_pipelines`] (its guard and pipelines folder:
    /// [`super::our_fixture`]), `config.yaml` the [`gateway_config`] of `prefix`.
    pub fn copy(prefix: &str, (tmp, pipelines): (tempfile::TempDir, PathBuf)) -> E2e {
        let root = tmp.path().to_path_buf();
        E2e::of(prefix, Some(tmp), None, root, pipelines)
    }

    /// `files` under `pipelines/` of a git repository ([`Repo`]: the baseline committed on `main`);
    /// `config.yaml`, the [`gateway_config`] of `prefix`, is written beside it and not committed.
    pub fn git(prefix: &str, files: &[(&str, &str)]) -> E2e {
        let repo = Repo::new(super::project(files));
        let (root, pipelines) = (repo.root.clone(), repo.pipelines.clone());
        E2e::of(prefix, None, Some(repo), root, pipelines)
    }

    /// The project at `root` (holding `pipelines/`) in the temporary folder `tmp` (one that
    /// `project init` made), `config.yaml` the [`gateway_config`] of `prefix`.
    pub fn at(prefix: &str, tmp: tempfile::TempDir, root: &Path) -> E2e {
        E2e::of(
            prefix,
            Some(tmp),
            None,
            root.to_path_buf(),
            root.join("pipelines"),
        )
    }

    fn of(
        prefix: &str,
        tmp: Option<tempfile::TempDir>,
        repo: Option<Repo>,
        root: PathBuf,
        pipelines: PathBuf,
    ) -> E2e {
        let e = E2e {
            _tmp: tmp,
            repo,
            config: root.join("config.yaml"),
            root,
            pipelines,
            prefix: prefix.to_string(),
            trailing: false,
            topics: Vec::new(),
            undeploy: false,
        };
        e.config(&gateway_config(prefix))
    }

    /// `config.yaml` is `yaml` (built on [`gateway_config`] of [`E2e::prefix`]).
    pub fn config(self, yaml: &str) -> E2e {
        std::fs::write(&self.config, yaml).unwrap();
        self
    }

    /// Every run ends with the pipelines folder.
    pub fn pipelines_last(mut self) -> E2e {
        self.trailing = true;
        self
    }

    /// The run's topics: (re)created empty now on the broker, deleted on drop.
    pub fn topics<S: AsRef<str>>(mut self, topics: &[S]) -> E2e {
        let topics: Vec<String> = topics.iter().map(|t| t.as_ref().to_string()).collect();
        super::stack::runtime()
            .block_on(
                flinkpipe::target::kafka::KafkaAdmin::new(super::stack::KAFKA).recreate(&topics),
            )
            .unwrap();
        self.topics.extend(topics);
        self
    }

    /// Topics deleted on drop, not created now (the broker or the jobs create them).
    pub fn delete_topics_on_drop<S: AsRef<str>>(mut self, topics: &[S]) -> E2e {
        self.topics
            .extend(topics.iter().map(|t| t.as_ref().to_string()));
        self
    }

    /// The drop undeploys the project first (`pipeline undeploy --dir pipelines --no-ack`).
    pub fn undeploy_on_drop(mut self) -> E2e {
        self.undeploy = true;
        self
    }

    /// The git repository of [`E2e::git`].
    pub fn repo(&self) -> &Repo {
        self.repo.as_ref().expect("a project made with E2e::git")
    }

    /// The pipelines folder as an argument.
    pub fn p(&self) -> &str {
        self.pipelines.to_str().unwrap()
    }

    /// The command of a run: `flinkpipe --config <config> args… [pipelines]` from the project root,
    /// stdin null (the developer's own settings removed, see [`super::command`]).
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = super::command();
        c.arg("--config").arg(&self.config).args(args);
        if self.trailing {
            c.arg(&self.pipelines);
        }
        c.current_dir(&self.root).stdin(std::process::Stdio::null());
        c
    }

    /// Runs the binary (see [`E2e::command`]); the outcome is not redacted (read it raw).
    pub fn run(&self, args: &[&str]) -> Outcome {
        let o = self.command(args).output().unwrap();
        Outcome::of(&args.join(" "), o, None)
    }

    /// Runs `--output json args…` and parses its standard output (a failure names the run's exit
    /// status and outputs); the outcome for its status and stderr.
    pub fn json(&self, args: &[&str]) -> (Value, Outcome) {
        let all = [&["--output", "json"], args].concat();
        let out = self.run(&all);
        let v = serde_json::from_str(&out.stdout_raw()).unwrap_or_else(|e| {
            panic!(
                "flinkpipe {args:?}: not JSON ({e}); exit {:?}\nstdout: {}\nstderr: {}",
                out.output.status.code(),
                out.stdout_raw(),
                out.stderr_raw()
            )
        });
        (v, out)
    }

    /// The statement name of `table`'s DML in `product`: `<prefix>-<product>-dml-<table, dashed>`.
    pub fn dml(&self, product: &str, table: &str) -> String {
        format!("{}-{product}-dml-{}", self.prefix, table.replace('_', "-"))
    }
}

/// The clean-up whatever happened (best effort): the undeploy if asked, every job of the run not
/// over cancelled, its topics deleted.
impl Drop for E2e {
    fn drop(&mut self) {
        if self.undeploy {
            let _ = self
                .command(&["pipeline", "undeploy", "--dir", "pipelines", "--no-ack"])
                .output();
        }
        cancel_jobs(&self.prefix);
        delete_topics(&self.topics);
    }
}
