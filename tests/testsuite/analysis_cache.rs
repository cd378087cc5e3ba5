//! The analysis cache never changes a result: every file the commands write is byte-identical with the
//! cache off, cold (empty) and warm (filled by an earlier run), and an edit is seen on the next run.

use crate::support::test::Outcome;
use std::collections::BTreeMap;
use std::path::Path;

/// `flinkpipe args…` with the cache in `cache` (or off when `None`), outside any project.
fn command(args: &[&str], cache: Option<&Path>) -> std::process::Command {
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
    cmd
}

/// Runs `flinkpipe args…` with the cache in `cache` (or off when `None`).
fn run(args: &[&str], cache: Option<&Path>) -> Outcome {
    let output = command(args, cache).output().unwrap();
    Outcome::of(&args.join(" "), output, None)
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
    // One analysis cache, one record of the SQL files read, one of the files build-all-metadata
    // wrote and the summary of its load, per tree.
    assert_eq!(
        cache_files,
        ["analysis", "read", "summary", "written"],
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
        let path = f.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&path).unwrap();
        // The analyses, and the stamps of the SQL files read (the record of `fsutil::record`).
        let head: &[u8] = if name.starts_with("read-") {
            b"flinkpipe-written "
        } else {
            b"flinkpipe-analysis-cache "
        };
        assert!(text.starts_with(head), "{name}");
    }
}

/// Sets a file's modification time `secs` seconds into the past, keeping its inode and size.
fn age(p: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(secs))
        .unwrap();
}

/// Rewrites a file in place with `content` (same length) and puts back its modification time: the
/// same device, inode, size and time, so only reading the file would see the change.
fn swap_keeping_stamp(p: &Path, content: &str) {
    let before = std::fs::metadata(p).unwrap();
    assert_eq!(before.len(), content.len() as u64);
    std::fs::write(p, content).unwrap();
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(before.modified().unwrap()).unwrap();
}

#[test]
fn an_unchanged_tree_is_neither_read_nor_rewritten_on_later_runs() {
    let cache = tempfile::tempdir().unwrap();
    let dml = "facts/p/fct/sql-scripts/dml.fct.sql";
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
        (dml, "INSERT INTO fct SELECT id FROM src_a;"),
    ]);
    let dir = root.to_str().unwrap();
    let metadata = || {
        run(&["pipeline", "build-all-metadata", dir], Some(cache.path()))
            .success()
            .stdout_raw()
    };
    let stamps = || {
        outputs(&root)
            .keys()
            .map(|rel| {
                let m = std::fs::metadata(root.join(rel)).unwrap();
                (rel.clone(), m.modified().unwrap())
            })
            .collect::<BTreeMap<_, _>>()
    };

    // 1st run, right after the files were written: their stamps are too recent to be trusted
    // (racy), and so are those of the outputs it writes.
    let first = metadata();
    assert!(first.contains("3 written, 0 unchanged"), "{first}");
    let written = stamps();
    // Only for the clock to move on past `RACY` (30 ms): nothing here measures time.
    std::thread::sleep(std::time::Duration::from_millis(250));
    // 2nd run: every SQL file is racy against the first record of files read, so they are read again
    // and the record saved anew (the outputs were settled by the first run: `record::settle`); nothing
    // is rewritten.
    let second = metadata();
    assert!(second.contains("0 written, 3 unchanged"), "{second}");
    assert_eq!(stamps(), written);

    // 3rd and 4th runs: every SQL file and output is known from its stamp and is not opened. A change
    // that keeps the stamp (same inode, size and time) is not seen in either: the DML now reads
    // src_b, the definition on disk says src_x, and both stay as they are.
    let definition_path = root.join("facts/p/fct/pipeline_definition.json");
    let definition = std::fs::read_to_string(&definition_path).unwrap();
    assert!(definition.contains("\"src_a\""), "{definition}");
    swap_keeping_stamp(&root.join(dml), "INSERT INTO fct SELECT id FROM src_b;");
    swap_keeping_stamp(
        &definition_path,
        &definition.replace("\"src_a\"", "\"src_x\""),
    );
    for run in ["3rd", "4th"] {
        let out = metadata();
        assert!(out.contains("0 written, 3 unchanged"), "{run}: {out}");
        assert_eq!(stamps(), written, "{run}");
        let now = std::fs::read_to_string(&definition_path).unwrap();
        assert!(
            now.contains("\"src_x\"") && !now.contains("src_b"),
            "{run}: {now}"
        );
    }

    // build-inventory on the unchanged tree leaves inventory.json as it is, and says so.
    let said = run(&["table", "build-inventory", dir], Some(cache.path()))
        .success()
        .stdout_raw();
    assert!(said.contains("3 tables already in (unchanged)"), "{said}");
    assert_eq!(stamps(), written);

    // Any change of the stamp is seen: here the modification time.
    age(&root.join(dml), 5);
    let changed = metadata();
    assert!(changed.contains("written"), "{changed}");
    let now = std::fs::read_to_string(&definition_path).unwrap();
    assert!(now.contains("\"src_b\"") && !now.contains("src_x"), "{now}");
}

/// A lean analysis (what inventory-only commands load from the cache) is exactly the whole analysis
/// without statement texts and column lists, on every file of the corpus and of the test data: no
/// other field is lost or changed on the way, and the whole deserialisation is unchanged.
#[test]
fn a_lean_analysis_is_the_whole_one_without_texts_and_columns() {
    let corpus = crate::support::corpus();
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real-sql");
    let files: Vec<_> = crate::support::sql_files(&corpus)
        .into_iter()
        .chain(crate::support::sql_files(&real))
        .collect();
    assert!(files.len() > 300, "{} SQL files", files.len());
    let (mut texts, mut columns) = (0usize, 0usize);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let whole = flinkpipe::sql::analyze(&text);
        let json = serde_json::to_string(&whole).unwrap();
        let again: flinkpipe::sql::FileAnalysis = serde_json::from_str(&json).unwrap();
        assert_eq!(again, whole, "{}", path.display());
        let lean: flinkpipe::sql::FileAnalysis =
            flinkpipe::sql::deserialize_lean(|| serde_json::from_str(&json).unwrap());
        let mut stripped = whole.clone();
        stripped.strip_to_references();
        assert_eq!(lean, stripped, "{}", path.display());
        // Outside `deserialize_lean`, deserialisation is whole again.
        let after: flinkpipe::sql::FileAnalysis = serde_json::from_str(&json).unwrap();
        assert_eq!(after, whole, "{}", path.display());
        texts += whole
            .statements
            .iter()
            .filter(|s| !s.text.is_empty())
            .count();
        columns += whole
            .statements
            .iter()
            .map(|s| s.columns.len())
            .sum::<usize>();
    }
    // The files do have what a lean analysis drops.
    assert!(
        texts > 300 && columns > 500,
        "{texts} texts, {columns} columns"
    );
}

/// The inventory built from a lean scan (`Detail::Inventory`, what `build-inventory`,
/// `build-all-metadata` and every command loading the project use) is the one built from whole
/// analyses, field by field, on both example trees: the whole scan fills the cache of a fresh copy, the
/// lean ones read it back (the cache off is `outputs_are_identical_without_cold_and_warm_cache`).
#[test]
fn the_inventory_of_a_lean_scan_is_the_inventory_of_a_whole_one() {
    use flinkpipe::config::Config;
    use flinkpipe::inventory::Inventory;
    use flinkpipe::project::{Detail, Layout, scan_with};
    for (tmp, root) in [
        crate::support::our_fixture(),
        crate::support::shift_left_fixture(),
    ] {
        let cfg = Config::default();
        let layout = Layout::with_overrides(&cfg.flinkpipe.layers);
        let whole = format!(
            "{:?}",
            Inventory::build(&scan_with(&root, &layout, Detail::Full).unwrap(), &cfg).tables
        );
        for _ in 0..2 {
            let lean = format!(
                "{:?}",
                Inventory::build(&scan_with(&root, &layout, Detail::Inventory).unwrap(), &cfg)
                    .tables
            );
            assert_eq!(lean, whole, "{}", root.display());
        }
        drop(tmp);
    }
}

/// Once a run has recorded the inputs its files derive from, an unchanged tree is answered from the
/// record without generating a file; but any change of the inputs is seen, even one that leaves every
/// SQL file's stamp as it was: a new table folder, an edited external-table manifest, a derived file
/// removed by hand.
#[test]
fn metadata_derived_from_recorded_inputs_is_not_generated_again_until_an_input_changes() {
    let cache = tempfile::tempdir().unwrap();
    let (_t, root) = crate::support::project(&[
        (
            "sources/p/src_a/sql-scripts/ddl.src_a.sql",
            "CREATE TABLE src_a (id INT);",
        ),
        (
            "facts/p/fct/sql-scripts/ddl.fct.sql",
            "CREATE TABLE fct (id INT);",
        ),
        (
            "facts/p/fct/sql-scripts/dml.fct.sql",
            "INSERT INTO fct SELECT id FROM src_a JOIN ext_x ON TRUE;",
        ),
        (
            "seeds/external_tables.json",
            r#"{"tables": [{"table_name": "ext_x", "kafka_topic": "x", "product_name": "p"}]}"#,
        ),
    ]);
    let dir = root.to_str().unwrap();
    let metadata = || {
        run(&["pipeline", "build-all-metadata", dir], Some(cache.path()))
            .success()
            .stdout_raw()
    };
    let settle = || std::thread::sleep(std::time::Duration::from_millis(250));
    let fct = root.join("facts/p/fct/pipeline_definition.json");
    let src = root.join("sources/p/src_a/pipeline_definition.json");
    assert!(metadata().contains("2 written, 0 unchanged"));
    settle();
    assert!(metadata().contains("0 written, 2 unchanged"));
    settle();
    // Answered from the record: a definition changed behind flinkpipe's back, keeping its stamp,
    // stays as it is (as any file known from its stamp does).
    let definition = std::fs::read_to_string(&fct).unwrap();
    swap_keeping_stamp(&fct, &definition.replace("\"src_a\"", "\"src_q\""));
    assert!(metadata().contains("0 written, 2 unchanged"));
    assert!(std::fs::read_to_string(&fct).unwrap().contains("\"src_q\""));

    // A new table folder: its definition is written, and src_a's names its new child.
    let scripts = root.join("facts/p/fct2/sql-scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(
        scripts.join("dml.fct2.sql"),
        "INSERT INTO fct2 SELECT id FROM src_a;",
    )
    .unwrap();
    std::fs::write(scripts.join("ddl.fct2.sql"), "CREATE TABLE fct2 (id INT);").unwrap();
    let out = metadata();
    assert!(out.contains("2 written, 1 unchanged"), "{out}");
    assert!(std::fs::read_to_string(&src).unwrap().contains("\"fct2\""));
    settle();
    assert!(metadata().contains("0 written, 3 unchanged"));
    settle();

    // The manifest: ext_x's topic changes, which fct's definition shows for its parent.
    let manifest = root.join("seeds/external_tables.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(std::fs::read_to_string(&fct).unwrap().contains("\"x\""));
    std::fs::write(&manifest, text.replace("\"x\"", "\"x2\"")).unwrap();
    let out = metadata();
    assert!(out.contains("written"), "{out}");
    let now = std::fs::read_to_string(&fct).unwrap();
    assert!(now.contains("\"x2\"") && now.contains("\"src_a\""), "{now}");
    settle();
    assert!(metadata().contains("0 written, 3 unchanged"));
    settle();

    // A derived file removed by hand is written again.
    std::fs::remove_file(&src).unwrap();
    let out = metadata();
    assert!(out.contains("1 written, 2 unchanged"), "{out}");
    assert!(src.is_file());
}

/// Once a run has written the metadata of a tree and no input changed since (every SQL file as the
/// record of files read has it, the same folders, manifests and configuration), `build-all-metadata`
/// reports what that run's load found without reading a SQL file, a cached analysis or building the
/// inventory: the same console output, warnings included (`--output json`, which prints the graph,
/// loads the project). Any change of
/// an input, and anything the walk would report (a stale temporary file), sends it back to a whole
/// load.
#[test]
fn an_unchanged_tree_is_reported_from_the_summary_of_the_last_load() {
    let cache = tempfile::tempdir().unwrap();
    let dml = "facts/p/fct/sql-scripts/dml.fct.sql";
    let (tmp, root) = crate::support::project(&[
        (
            "sources/p/src_a/sql-scripts/ddl.src_a.sql",
            // Warnings each load reports: one of the file's analysis, one of the inventory.
            "CREATE TABLE src_a (id INT) WITH ('topic' = '${TOPIC_A}');",
        ),
        (
            "facts/p/fct/sql-scripts/ddl.fct.sql",
            "CREATE TABLE fct (id INT);\nCREATE TABLE fct_side (id INT);",
        ),
        (dml, "INSERT INTO fct SELECT id FROM src_a;"),
    ]);
    let dir = root.to_str().unwrap();
    // Debug lines of the metadata operation only: the one a reported run logs, nothing else.
    let metadata = |json: bool| {
        let args: &[&str] = if json {
            &["--output", "json", "pipeline", "build-all-metadata", dir]
        } else {
            &["pipeline", "build-all-metadata", dir]
        };
        let output = command(args, Some(cache.path()))
            .env("FLINKPIPE_LOG", "flinkpipe::ops::metadata=debug")
            .output()
            .unwrap();
        let o = Outcome::of("build-all-metadata", output, None).success();
        let (out, err) = (o.stdout_raw(), o.stderr_raw());
        let reported = err.contains("reported from the load summary");
        let err: String = err
            .lines()
            .filter(|l| !l.contains("load summary"))
            .map(|l| format!("{l}\n"))
            .collect();
        (out, err, reported)
    };
    let settle = || std::thread::sleep(std::time::Duration::from_millis(250));
    let (first, first_err, reported) = metadata(false);
    assert!(first.contains("2 written, 0 unchanged"), "{first}");
    assert!(
        first_err.contains("sql-placeholder") && first_err.contains("several-tables-in-ddl"),
        "{first_err}"
    );
    assert!(!reported);
    settle();
    // The SQL files were racy for the first run's record: read again, nothing written.
    let (second, second_err, reported) = metadata(false);
    assert!(second.contains("0 written, 2 unchanged"), "{second}");
    assert!(!reported);
    let (second_json, _, _) = {
        settle();
        metadata(true)
    };
    settle();

    // Reported from the summary: the very output of a whole load, text and JSON.
    let (third, third_err, reported) = metadata(false);
    assert!(reported, "{third}{third_err}");
    assert_eq!(third, second);
    assert_eq!(third_err, second_err);
    // `--output json` prints the graph: always a whole load, with the same output.
    let (third_json, _, reported) = metadata(true);
    assert!(!reported);
    assert_eq!(third_json, second_json);
    // Even with the analysis cache gone: nothing is read from it.
    for e in std::fs::read_dir(cache.path().join("flinkpipe")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("analysis")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    assert!(metadata(false).2);

    // Each change below is seen by a whole load, and the run after it is reported again.
    type Change<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let changes: Vec<Change> = vec![
        ("an edited SQL file", Box::new(|| age(&root.join(dml), 5))),
        (
            "a new table folder",
            Box::new(|| {
                let ddl = root.join("facts/p/fct2/sql-scripts/ddl.fct2.sql");
                std::fs::create_dir_all(ddl.parent().unwrap()).unwrap();
                std::fs::write(&ddl, "CREATE TABLE fct2 (id INT);").unwrap();
                age(&ddl, 5);
            }),
        ),
        (
            "a new manifest",
            Box::new(|| {
                std::fs::create_dir_all(root.join("seeds")).unwrap();
                std::fs::write(
                    root.join("seeds/external_tables.json"),
                    r#"{"tables": [{"table_name": "ext_x", "kafka_topic": "x"}]}"#,
                )
                .unwrap();
            }),
        ),
        (
            "a changed configuration",
            Box::new(|| {
                std::fs::write(
                    tmp.path().join("config.yaml"),
                    "flinkpipe:\n  statement_prefix: other\n",
                )
                .unwrap()
            }),
        ),
        (
            "a stale temporary file",
            Box::new(|| {
                std::fs::write(
                    root.join("facts/p/fct/.pipeline_definition.json.flinkpipe-tmp-999999999"),
                    "{}",
                )
                .unwrap()
            }),
        ),
        (
            "a removed output",
            Box::new(|| {
                std::fs::remove_file(root.join("facts/p/fct/pipeline_definition.json")).unwrap()
            }),
        ),
    ];
    for (what, change) in changes {
        change();
        let (out, err, reported) = metadata(false);
        assert!(!reported, "{what}: {out}{err}");
        assert!(err.contains("sql-placeholder"), "{what}: {err}");
        settle();
        // The whole load's record may hold racy stamps: the next run reads them again.
        metadata(false);
        settle();
        let (again, again_err, reported) = metadata(false);
        assert!(
            reported,
            "{what}: not reported after a whole load: {again}{again_err}"
        );
        assert!(again.contains("0 written"), "{what}: {again}");
        assert!(again_err.contains("sql-placeholder"), "{what}: {again_err}");
    }
    assert!(
        !root
            .join("facts/p/fct/.pipeline_definition.json.flinkpipe-tmp-999999999")
            .exists()
    );
    assert!(root.join("facts/p/fct/pipeline_definition.json").is_file());
    let inventory = std::fs::read_to_string(root.join("inventory.json")).unwrap();
    assert!(
        inventory.contains("fct2") && inventory.contains("ext_x"),
        "{inventory}"
    );
}

/// The run right after one that wrote the metadata is reported from the summary: the files just
/// written are settled before the record of written files is saved (`record::settle`), so they are
/// not racy for the next run, which would otherwise read every one of them back. (SQL files edited
/// just before a run stay racy for the next one: only a file older than its record is trusted.)
#[test]
fn the_run_right_after_a_write_is_reported_from_the_summary() {
    let cache = tempfile::tempdir().unwrap();
    let files = [
        (
            "sources/p/src_a/sql-scripts/ddl.src_a.sql",
            "CREATE TABLE src_a (id INT);",
        ),
        (
            "facts/p/fct/sql-scripts/ddl.fct.sql",
            "CREATE TABLE fct (id INT);",
        ),
        (
            "facts/p/fct/sql-scripts/dml.fct.sql",
            "INSERT INTO fct SELECT id FROM src_a;",
        ),
    ];
    let (_tmp, root) = crate::support::project(&files);
    for (rel, _) in files {
        age(&root.join(rel), 60);
    }
    let dir = root.to_str().unwrap();
    let metadata = || {
        let output = command(&["pipeline", "build-all-metadata", dir], Some(cache.path()))
            .env("FLINKPIPE_LOG", "flinkpipe::ops::metadata=debug")
            .output()
            .unwrap();
        let o = Outcome::of("build-all-metadata", output, None).success();
        (
            o.stdout_raw().to_string(),
            o.stderr_raw().contains("reported from the load summary"),
        )
    };
    let (first, reported) = metadata();
    assert!(first.contains("2 written, 0 unchanged"), "{first}");
    assert!(!reported);
    // No pause: the next run comes right away.
    let (second, reported) = metadata();
    assert!(reported, "{second}");
    assert!(second.contains("0 written, 2 unchanged"), "{second}");
}
