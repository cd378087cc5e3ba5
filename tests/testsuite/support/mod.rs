//! Test helpers: copy a project tree into a temporary folder and run the real `flinkpipe` binary on it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared/corpus`, beside the repository (CI lays it there).
pub fn corpus() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    assert!(
        p.is_dir(),
        "{} is missing: the tests need the shared folder beside the repository",
        p.display()
    );
    p
}

/// Every `.sql` file under `dir`, sorted.
pub fn sql_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "sql"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    files
}

/// Every readable `.sql` file of the corpus, the test data and the example projects, with its text:
/// the real SQL the front end's differential tests run on.
pub fn sql_texts() -> Vec<(PathBuf, String)> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    [corpus(), repo.join("tests/data"), repo.join("fixtures")]
        .iter()
        .flat_map(|d| sql_files(d))
        .filter_map(|p| Some((p.clone(), std::fs::read_to_string(&p).ok()?)))
        .collect()
}

/// Copies `src` into a fresh temp dir as `<tmp>/pipelines` and returns (guard, pipelines path).
/// shift_left's generated files (inventory.json, pipeline_definition.json) are left out.
pub fn copy_pipelines(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("pipelines");
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(src).unwrap();
        let target = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            let name = entry.file_name().to_string_lossy();
            if name == "inventory.json" || name == "pipeline_definition.json" {
                continue;
            }
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
    (tmp, dst)
}

/// The shift_left fixture, copied.
pub fn shift_left_fixture() -> (tempfile::TempDir, PathBuf) {
    copy_pipelines(&corpus().join("projects/shift_left_fixture/pipelines"))
}

/// Our example project, copied.
pub fn our_fixture() -> (tempfile::TempDir, PathBuf) {
    copy_pipelines(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pipelines"))
}

/// Environment variables that change what the binary does (configuration, targets, statement names):
/// removed for every test run, so that a developer's shell (a shift_left user's `SL_*` exports) cannot
/// change the results.
pub const CONFIG_ENV: &[&str] = &[
    "PIPELINES",
    "SL_CONFIG_FILE",
    "CONFIG_FILE",
    "SL_CLOUD_PROVIDER",
    "SL_CLOUD_REGION",
    "SL_FLINK_ENV_ID",
    "SL_CLOUD_ORGANIZATION_ID",
    "SL_CONFLUENT_PRINCIPAL_ID",
    "SL_FLINK_COMPUTE_POOL_ID",
    "SL_FLINK_ENV_NAME",
    "SL_FLINK_DATABASE_NAME",
    "SL_FLINK_SQL_ENDPOINT",
    "SL_FLINK_API_KEY",
    "SL_FLINK_API_SECRET",
    "FLINKPIPE_GATEWAY_URL",
    "FLINKPIPE_JOBMANAGER_URL",
    "FLINKPIPE_OUTPUT_DIR",
    "SL_CONFLUENT_CLOUD_API_KEY",
    "SL_CONFLUENT_CLOUD_API_SECRET",
    "FLINKPIPE_CLOUD_API_URL",
    "FLINKPIPE_METRICS_URL",
    "FLINKPIPE_ENVIRONMENT",
];

/// A command for the binary with [`CONFIG_ENV`] removed. Files that default to the user's
/// `~/.shift_left/` go to `target/test-output/` instead.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flinkpipe"));
    for v in CONFIG_ENV {
        c.env_remove(v);
    }
    c.env(
        "FLINKPIPE_OUTPUT_DIR",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-output"),
    );
    c
}

/// Runs the binary with `args` (no config file, no $PIPELINES, no SL_* settings) and returns its output.
pub fn flinkpipe(args: &[&str]) -> Output {
    command()
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `files` (relative path → content) under a fresh `<tmp>/pipelines`.
pub fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("pipelines");
    std::fs::create_dir_all(&root).unwrap();
    for (rel, content) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    (tmp, root)
}
pub mod confluent;
pub mod e2e;
pub mod kafka;
pub mod repo;
pub mod rng;
pub mod stack;
pub mod test;

pub use rng::Rng;
pub use test::Test;
