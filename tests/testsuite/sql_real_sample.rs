//! Accuracy of the SQL front end on real Flink SQL from public repositories it was not developed
//! against (issue #14): benchmark queries (nexmark/nexmark), an ETL collection written without
//! semicolons (leonardBang/flink-sql-etl) and a random sample of a demo project
//! (jbcodeforce/flink-studies, labelled blind). Labels, repository, commit and path of each file are in
//! `tests/data/real-sql/labels.jsonl` (labelled by the same rules as the shared corpus).
//!
//! The files themselves are not copied into this repository: they are read at the labelled commit from
//! local mirrors of those repositories, `$FLINKPIPE_SQL_MIRRORS/<owner>+<name>/repo` (default
//! `/work/.mirror`, git directories). Without the mirrors the test says so and checks nothing.

use std::path::PathBuf;

use flinkpipe::sql::{self, Statefulness};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Label {
    repo: String,
    commit: String,
    path: String,
    skip: bool,
    sinks: Vec<String>,
    sources: Vec<String>,
    statefulness: String,
}

fn state_name(s: Statefulness) -> &'static str {
    match s {
        Statefulness::None => "none",
        Statefulness::Stateless => "stateless",
        Statefulness::Unknown => "unknown",
        Statefulness::Stateful => "stateful",
    }
}

/// The file at `path` of `commit` in the mirror of `repo`, if the mirror is there.
fn read(mirrors: &std::path::Path, repo: &str, commit: &str, path: &str) -> Option<String> {
    let git = git2::Repository::open(mirrors.join(repo.replace('/', "+")).join("repo")).ok()?;
    let commit = git.find_commit(git2::Oid::from_str(commit).ok()?).ok()?;
    let entry = commit
        .tree()
        .ok()?
        .get_path(std::path::Path::new(path))
        .ok()?;
    let blob = git.find_blob(entry.id()).ok()?;
    String::from_utf8(blob.content().to_vec()).ok()
}

#[test]
fn public_repositories_sample() {
    let mirrors = PathBuf::from(
        std::env::var("FLINKPIPE_SQL_MIRRORS").unwrap_or_else(|_| "/work/.mirror".into()),
    );
    let labels = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/real-sql/labels.jsonl"),
    )
    .expect("labels");
    let labels: Vec<Label> = labels
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("label line"))
        .collect();
    assert!(labels.len() >= 80);
    let (mut total, mut exact, mut missing) = (0, 0, 0);
    for l in labels.iter().filter(|l| !l.skip) {
        let Some(text) = read(&mirrors, &l.repo, &l.commit, &l.path) else {
            missing += 1;
            continue;
        };
        total += 1;
        let a = sql::analyze(&text);
        let sinks: Vec<String> = a.sinks().iter().map(|n| n.dotted()).collect();
        let sources: Vec<String> = a.sources().iter().map(|n| n.dotted()).collect();
        let state = state_name(a.statefulness());
        if sinks == l.sinks && sources == l.sources && state == l.statefulness {
            exact += 1;
        } else {
            println!(
                "MISMATCH {} {}\n  sinks {sinks:?} (label {:?})\n  sources {sources:?} (label {:?})\n  state {state} (label {})",
                l.repo, l.path, l.sinks, l.sources, l.statefulness
            );
        }
    }
    if total == 0 {
        println!(
            "no mirror of the sample's repositories under {}: nothing checked",
            mirrors.display()
        );
        return;
    }
    let accuracy = exact as f64 / total as f64 * 100.0;
    println!("real sample: {exact}/{total} = {accuracy:.1}% exact ({missing} files not found)");
    assert_eq!(missing, 0, "a mirror lacks labelled files");
    assert!(accuracy >= 99.0, "accuracy {accuracy:.1}% below 99%");
}
