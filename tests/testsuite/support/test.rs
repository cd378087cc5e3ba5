//! A fluent test of the real binary, after cargo's `project().file(..).build()` and just's
//! `Test::new()…success()`: a temporary project, the command line, the environment, and checks on the
//! outcome whose text has its volatile parts redacted (the project's temporary path as `[ROOT]`,
//! durations such as `1.2s` as `[TIME]`), so that expected outputs can be written out whole.
//!
//! ```ignore
//! Test::fixture()
//!     .config("kafka:\n  cluster_type: dev\n")
//!     .args(&["pipeline", "validate", "[PIPELINES]"])
//!     .run()
//!     .success()
//!     .stdout_is("ok: 36 tables, …\n");
//! ```

use std::path::{Path, PathBuf};
use std::process::Output;

/// A project in a temporary folder and the command to run on it.
pub struct Test {
    tmp: tempfile::TempDir,
    /// The project root (holds `pipelines/` and `config.yaml`).
    pub root: PathBuf,
    /// The pipelines folder.
    pub pipelines: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
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
            tmp,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// A copy of our example project (`fixtures/pipelines`).
    pub fn fixture() -> Test {
        let (tmp, pipelines) = super::our_fixture();
        Test {
            root: tmp.path().to_path_buf(),
            pipelines,
            tmp,
            args: Vec::new(),
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

    /// Arguments; `[PIPELINES]` and `[ROOT]` stand for the project's folders.
    pub fn args(mut self, args: &[&str]) -> Test {
        let pipelines = self.pipelines.display().to_string();
        let root = self.root.display().to_string();
        self.args.extend(args.iter().map(|a| {
            a.replace("[PIPELINES]", &pipelines)
                .replace("[ROOT]", &root)
        }));
        self
    }

    /// An environment variable for the run.
    pub fn env(mut self, key: &str, value: &str) -> Test {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// The project's target is the fake Confluent Cloud `fake`: its endpoint and the Flink API key
    /// (`SL_FLINK_SQL_ENDPOINT`, `SL_FLINK_API_KEY`, `SL_FLINK_API_SECRET`). The configuration's
    /// organization and environment must be the fake's ([`crate::fake_confluent::ORG`], `ENV`).
    pub fn confluent(self, fake: &crate::fake_confluent::FakeConfluent) -> Test {
        self.env("SL_FLINK_SQL_ENDPOINT", &fake.endpoint())
            .env("SL_FLINK_API_KEY", crate::fake_confluent::KEY)
            .env("SL_FLINK_API_SECRET", crate::fake_confluent::SECRET)
    }

    /// Runs the binary from the project root (the developer's own settings removed, see
    /// [`super::command`]).
    pub fn run(&self) -> Outcome {
        self.run_with(&self.args)
    }

    /// Runs one command on the same project and environment (a test of several steps): `args` as
    /// for [`Test::args`], the arguments given there left out.
    pub fn cmd(&self, args: &[&str]) -> Outcome {
        let pipelines = self.pipelines.display().to_string();
        let root = self.root.display().to_string();
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                a.replace("[PIPELINES]", &pipelines)
                    .replace("[ROOT]", &root)
            })
            .collect();
        self.run_with(&args)
    }

    fn run_with(&self, args: &[String]) -> Outcome {
        let mut c = super::command();
        c.args(args)
            .current_dir(&self.root)
            .stdin(std::process::Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        Outcome {
            output: c.output().unwrap(),
            root: self.root.clone(),
            command: args.join(" "),
        }
    }

    /// The temporary folder (kept alive as long as the test).
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }
}

/// What a run printed and how it ended.
pub struct Outcome {
    pub output: Output,
    root: PathBuf,
    command: String,
}

impl Outcome {
    /// Asserts exit status 0.
    pub fn success(self) -> Outcome {
        self.status(0)
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
        redact(&String::from_utf8_lossy(&self.output.stdout), &self.root)
    }

    /// Standard error, redacted.
    pub fn stderr(&self) -> String {
        redact(&String::from_utf8_lossy(&self.output.stderr), &self.root)
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

    /// Asserts that the redacted standard error contains `part`.
    pub fn stderr_has(self, part: &str) -> Outcome {
        let err = self.stderr();
        assert!(
            err.contains(part),
            "flinkpipe {}: {part:?} not in\n{err}",
            self.command
        );
        self
    }

    /// Asserts that the redacted standard output contains `part`.
    pub fn stdout_has(self, part: &str) -> Outcome {
        let out = self.stdout();
        assert!(
            out.contains(part),
            "flinkpipe {}: {part:?} not in\n{out}",
            self.command
        );
        self
    }
}

/// `text` with the project root (as given and canonical) shown as `[ROOT]` and durations
/// (`0.3s`, `12.5s`) as `[TIME]`.
pub fn redact(text: &str, root: &Path) -> String {
    let mut out = text.to_string();
    let mut roots = vec![root.display().to_string()];
    if let Ok(c) = root.canonicalize() {
        roots.push(c.display().to_string());
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
            root
        ),
        "wrote [ROOT]/pipelines/x in [TIME] (first row after [TIME]), 2 tables, v1.5"
    );
}
