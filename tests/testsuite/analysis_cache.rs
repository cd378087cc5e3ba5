//! The analysis cache never changes a result: every file the commands write is byte-identical with the
//! cache off, cold (empty) and warm (filled by an earlier run), and an edit is seen on the next run.

use crate::support::test::Outcome;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `flinkpipe args…` with the cache in `cache` (or off when `None`).
fn run(args: &[&str], cache: Option<&Path>) -> Outcome {
    let mut cmd = crate::support::command();
    cmd.args(args)
        .env_remove("PIPELINES")
        .env_remove("SL_CONFIG_FILE")
        .env_remove("CONFIG_FILE")
        .env_remove("FLINKPIPE_NO_CACHE")
        .current_dir(std::env::temp_dir());
    match cache {
        Some(dir) => cmd.env("XDG_CACHE_HOME", dir),
        None => cmd.env("FLINKPIPE_NO_CACHE", "1"),
    };
    Outcome::of(&args.join(" "), cmd.output().unwrap(), None)
}

/// Every generated JSON file under `root`, by relative path.
fn outputs(root: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read_to_string(e.path()).unwrap())
        })
        .collect()
}

fn build(root: &Path, cache: Option<&Path>) -> (String, BTreeMap<String, String>) {
    let dir = root.to_str().unwrap();
    let mut out = String::new();
    for args in [
        &["table", "build-inventory", dir][..],
        &["pipeline", "build-all-metadata", dir][..],
        &["--output", "json", "pipeline", "validate", dir][..],
    ] {
        let o = run(args, cache);
        out.push_str(&o.stdout_raw());
        out.push_str(&o.stderr_raw());
    }
    (out, outputs(root))
}

#[test]
fn outputs_are_identical_without_cold_and_warm_cache() {
    let cache = tempfile::tempdir().unwrap();
    let (_t1, plain) = crate::support::our_fixture();
    let (_t2, cached) = crate::support::our_fixture();
    let (plain_out, plain_files) = build(&plain, None);
    assert!(!plain_files.is_empty());

    let (cold_out, cold_files) = build(&cached, Some(cache.path()));
    let mut cache_files: Vec<String> = std::fs::read_dir(cache.path().join("flinkpipe"))
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.split('-').next().unwrap_or_default().to_string()
        })
        .collect();
    cache_files.sort();
    // One analysis cache and one record of the files build-all-metadata wrote, per tree.
    assert_eq!(
        cache_files,
        ["analysis", "written"],
        "one cache file of each kind per tree"
    );
    let (warm_out, warm_files) = build(&cached, Some(cache.path()));
    // A second run without cache on the same tree: it writes nothing and says so, as the warm run.
    let (plain_again, _) = build(&plain, None);
    assert!(
        plain_again.contains("0 written") && plain_again.contains("unchanged"),
        "{plain_again}"
    );

    let strip = |s: &str, root: &Path| s.replace(root.to_str().unwrap(), "<root>");
    assert_eq!(strip(&cold_out, &cached), strip(&plain_out, &plain));
    assert_eq!(strip(&warm_out, &cached), strip(&plain_again, &plain));
    assert_eq!(cold_files, plain_files);
    assert_eq!(warm_files, plain_files);
}

#[test]
fn an_edited_file_is_parsed_again_and_a_damaged_cache_is_ignored() {
    let cache = tempfile::tempdir().unwrap();
    let (_t, root) = crate::support::project(&[
        (
            "sources/p/src_a/sql-scripts/ddl.src_a.sql",
            "CREATE TABLE src_a (id INT);",
        ),
        (
            "sources/p/src_b/sql-scripts/ddl.src_b.sql",
            "CREATE TABLE src_b (id INT);",
        ),
        (
            "facts/p/fct/sql-scripts/ddl.fct.sql",
            "CREATE TABLE fct (id INT);",
        ),
        (
            "facts/p/fct/sql-scripts/dml.fct.sql",
            "INSERT INTO fct SELECT id FROM src_a;",
        ),
    ]);
    let dir = root.to_str().unwrap();
    let graph = |cache: &Path| {
        let o = run(&["pipeline", "graph", dir, "--format", "json"], Some(cache));
        let o = o.success();
        o.stdout_raw()
    };
    let before = graph(cache.path());
    assert!(before.contains("src_a"));

    // Same size, other parent: the content key changes, the new parent must show up.
    std::fs::write(
        root.join("facts/p/fct/sql-scripts/dml.fct.sql"),
        "INSERT INTO fct SELECT id FROM src_b;",
    )
    .unwrap();
    let after = graph(cache.path());
    let uncached = {
        let o = run(&["pipeline", "graph", dir, "--format", "json"], None);
        o.stdout_raw()
    };
    assert_eq!(after, uncached);
    assert_ne!(after, before);

    // Garbage in every cache file: ignored, same result, and the cache is rebuilt.
    for f in std::fs::read_dir(cache.path().join("flinkpipe")).unwrap() {
        std::fs::write(f.unwrap().path(), b"not a cache").unwrap();
    }
    assert_eq!(graph(cache.path()), uncached);
    for f in std::fs::read_dir(cache.path().join("flinkpipe")).unwrap() {
        let text = std::fs::read(f.unwrap().path()).unwrap();
        assert!(text.starts_with(b"flinkpipe-analysis-cache "));
    }
}
