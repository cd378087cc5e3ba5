//! Reliability at scale and under abuse: graph walks on 100,000-table chains (no recursion per level),
//! metadata whose size follows each table's own edges, special and oversized files refused by name,
//! builds killed or interrupted mid-batch (the tree all old or all new, no temporary file left once the
//! next command ran), and the smaller input checks (a `sql-scripts` file, a BOM, unknown phases,
//! config errors with key and line, control characters in names).
//!
//! The 1,000,000-table chain and the 10,000-reader fan-out are `#[ignore]`d here and measured by
//! `scripts/bench-shapes.sh` (BENCHMARKS.md).

use crate::support::test::Outcome;
use crate::support::{command, project};
use flinkpipe::config::Config;
use flinkpipe::graph::{
    self, EdgeKind, GraphError, NodeInfo, PipelineGraph, child_tree, parent_tree, render_tree_text,
};
use flinkpipe::inventory::{self, Inventory, ReadKind, Reference};
use flinkpipe::lineage;
use flinkpipe::plan::{Action, PlanOptions, Scope, StatementNaming, StatementStatus, build_plan};
use flinkpipe::project::{LoadOptions, Project};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// The chain length of the in-memory walks: far beyond what one stack frame per level survives on a
/// test thread's 2 MiB stack (the recursive walks aborted at 10,937 and ~87,500 tables on the main
/// thread's 8 MiB in release). The 1,000,000-table chain is measured by `scripts/bench-shapes.sh`.
const CHAIN: usize = 100_000;

fn name(i: usize) -> String {
    if i == 0 {
        "src_c_0".to_string()
    } else {
        format!("int_c_{i}")
    }
}

fn chain_graph(n: usize, ring: bool) -> PipelineGraph {
    let nodes = (0..n)
        .map(|i| NodeInfo {
            name: name(i),
            product: Some("c".into()),
            layer: if i == 0 { "source" } else { "intermediate" }.into(),
            path: Some(format!("pipelines/intermediates/c/{}", name(i))),
            external: false,
        })
        .collect();
    let mut edges: Vec<(String, String, EdgeKind)> = (1..n)
        .map(|i| (name(i - 1), name(i), EdgeKind::Data))
        .collect();
    if ring {
        edges.push((name(n - 1), name(0), EdgeKind::Data));
    }
    PipelineGraph::build(nodes, edges).unwrap()
}

#[test]
fn graph_walks_on_a_100000_table_chain_do_not_recurse() {
    let g = chain_graph(CHAIN, false);
    let (first, last) = (name(0), name(CHAIN - 1));
    assert_eq!(g.ancestors(&[&last]).len(), CHAIN - 1);
    assert_eq!(g.descendants(&[&first]).len(), CHAIN - 1);
    let order = g.topo_order(None).unwrap();
    assert_eq!((order[0].as_str(), order.len()), (first.as_str(), CHAIN));
    assert_eq!(g.waves(None).unwrap().len(), CHAIN);
    assert!(g.cycles().is_empty());
    let selected = graph::select(&g, &format!("+{last}")).unwrap();
    assert_eq!(selected.len(), CHAIN);
    assert_eq!(
        graph::to_json(&g, None)["edges"].as_array().unwrap().len(),
        CHAIN - 1
    );
    assert!(graph::to_dot(&g, Some(&selected)).contains(&format!("\"{last}\"")));
    assert!(graph::to_mermaid(&g, None).lines().count() > CHAIN);

    // The report trees: built, measured, rendered and dropped without one frame per level.
    let up = parent_tree(&g, &last, None).unwrap();
    assert_eq!(up.depth(), CHAIN - 1);
    let text = render_tree_text(&up);
    assert_eq!(text.lines().count(), CHAIN);
    let deepest = text.lines().last().unwrap();
    assert!(
        deepest.starts_with(&format!("[depth {}] ", CHAIN - 1))
            && deepest.ends_with("└── src_c_0 (source, c)"),
        "{deepest}"
    );
    // Indentation stops growing at TEXT_INDENT_LIMIT levels: the text is linear in its lines.
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 4 * graph::TEXT_INDENT_LIMIT + 100, "{widest}");
    drop(up);
    let down = child_tree(&g, &first, None).unwrap();
    assert_eq!(down.depth(), CHAIN - 1);
    drop(down);

    // A ring of the same length: one cycle found, ordering refused naming it.
    let ring = chain_graph(CHAIN, true);
    let cycles = ring.cycles();
    assert_eq!((cycles.len(), cycles[0].len()), (1, CHAIN));
    assert!(matches!(
        ring.topo_order(None),
        Err(GraphError::Cycle { .. })
    ));
}

#[test]
fn pictures_of_a_long_chain_are_drawn() {
    let g = chain_graph(5_000, false);
    let svg = graph::to_svg(&g, None);
    assert!(svg.contains("int_c_4999"));
    let html = graph::to_html(&g, None);
    assert!(html.contains("int_c_4999"));
}

/// A chain of `n` tables as a loaded project (inventory built in memory).
fn chain_project(n: usize) -> Project {
    let mut tables = BTreeMap::new();
    for i in 0..n {
        let mut t = inventory::external_table(&name(i), "c".into(), None, "pipelines");
        t.external = false;
        t.table_type = if i == 0 { "source" } else { "intermediate" }.into();
        t.folder = format!("pipelines/intermediates/c/{}", name(i));
        t.ddl_ref = Some(format!("{}/sql-scripts/ddl.{}.sql", t.folder, name(i)));
        if i > 0 {
            t.dml_ref = Some(format!("{}/sql-scripts/dml.{}.sql", t.folder, name(i)));
            t.reads = vec![Reference {
                name: name(i - 1),
                kind: ReadKind::Data,
                file: t.dml_ref.clone().unwrap(),
                line: 1,
                column: 1,
            }];
        }
        tables.insert(name(i), t);
    }
    let inv = Inventory {
        root_name: "pipelines".into(),
        root: PathBuf::from("pipelines"),
        tables,
        diagnostics: Vec::new(),
        sql_variables: Default::default(),
        manifests_key: None,
    };
    let p = flinkpipe::project::Project::from(lineage::link(inv, LoadOptions::default()));
    assert!(
        !p.has_errors(),
        "{:?}",
        &p.diagnostics[..3.min(p.diagnostics.len())]
    );
    p
}

/// The cascade used to compute every cascading table's ancestors again (O(N²): 1.25·10⁹ steps here,
/// which would not end in the test's lifetime); now each table's ancestors are walked once.
#[test]
fn plans_of_a_50000_table_chain_cascade_in_linear_time() {
    const CHAIN: usize = 50_000;
    let p = chain_project(CHAIN);
    let naming = StatementNaming::from_config(&Config::default());
    let status = StatementStatus::default();
    // From the last table: every ancestor is in the plan.
    let up = build_plan(
        &p,
        &naming,
        &status,
        &Scope::Tables(vec![name(CHAIN - 1)]),
        &PlanOptions::default(),
    )
    .unwrap();
    assert_eq!(up.nodes.len(), CHAIN);
    // From the source with the cascade: every descendant, each walking only its new ancestors.
    let opts = PlanOptions {
        may_start_descendants: true,
        ..Default::default()
    };
    let down = build_plan(&p, &naming, &status, &Scope::Tables(vec![name(0)]), &opts).unwrap();
    assert_eq!(down.nodes.len(), CHAIN);
    assert!(down.nodes.iter().all(|n| n.action != Action::Skip));
    assert_eq!(down.wave_count(), CHAIN);
}

// ---- on disk ---------------------------------------------------------------------------------------

fn ddl(t: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {t} (\n  id BIGINT,\n  amount DOUBLE,\n  PRIMARY KEY (id) NOT ENFORCED\n) WITH (\n  'connector' = 'upsert-kafka',\n  'topic' = '{t}',\n  'properties.bootstrap.servers' = 'localhost:9092',\n  'key.format' = 'json',\n  'value.format' = 'json'\n);\n"
    )
}

fn dml(t: &str, parent: &str) -> String {
    format!("INSERT INTO {t}\nSELECT id, amount FROM {parent};\n")
}

/// Writes a table folder under `root`.
fn table(root: &Path, layer: &str, t: &str, parent: Option<&str>) {
    let scripts = root.join(layer).join("c").join(t).join("sql-scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(scripts.join(format!("ddl.{t}.sql")), ddl(t)).unwrap();
    if let Some(p) = parent {
        std::fs::write(scripts.join(format!("dml.{t}.sql")), dml(t, p)).unwrap();
    }
}

/// `src_c_0 → int_c_1 → … → int_c_<n-1>` on disk.
fn chain_on_disk(n: usize) -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = project(&[]);
    table(&root, "sources", &name(0), None);
    for i in 1..n {
        table(&root, "intermediates", &name(i), Some(&name(i - 1)));
    }
    (tmp, root)
}

/// `src_f_hub` read by `int_f_0` … `int_f_<n-1>` on disk.
fn fanout_on_disk(n: usize) -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = project(&[]);
    table(&root, "sources", "src_f_hub", None);
    for i in 0..n {
        table(
            &root,
            "intermediates",
            &format!("int_f_{i}"),
            Some("src_f_hub"),
        );
    }
    (tmp, root)
}

/// Runs the binary, killing it (and failing) if it has not ended after `secs`: a hang guard, not a
/// timing assertion (every command here ends in well under a second on a quiet machine).
fn run_bounded(args: &[&str], secs: u64) -> Outcome {
    let child = command()
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(o) => Outcome::of(&args.join(" "), o.unwrap(), None),
        Err(_) => {
            // SAFETY: our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("flinkpipe {args:?} still running after {secs} s: it hangs");
        }
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_deep_report_prints_as_text_and_json_is_refused_past_its_depth_limit() {
    let n = graph::MAX_JSON_DEPTH + 3;
    let (_t, root) = chain_on_disk(n);
    let last = name(n - 1);
    let r = path_str(&root);
    let o = run_bounded(&["pipeline", "report", &last, r], 120);
    let o = o.success();
    let text = o.stdout_raw();
    assert_eq!(
        text.lines().count(),
        n + 1,
        "a title line, then one line per table"
    );
    assert!(text.contains(&format!("[depth {}] ", n - 1)));
    let o = run_bounded(&["pipeline", "report", &last, r, "--output", "json"], 120);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains(&format!(
            "error: the parent tree of '{last}' is {} levels deep; --output json nests one object per level and writes at most {}",
            n - 1,
            graph::MAX_JSON_DEPTH
        )) && o.stderr_raw().contains(&format!("--select '+{last}' --format json")),
        "{}",
        o.stderr_raw()
    );
    // One level is fine.
    let o = run_bounded(
        &[
            "pipeline",
            "report",
            &last,
            r,
            "--parent-only",
            "--output",
            "json",
        ],
        120,
    );
    o.success();
}

/// Every `pipeline_definition.json` is proportional to its own table's parents and children: an
/// embedded parent carries only this table as its child (shift_left's readers find the rest in the
/// parent's own file).
#[test]
fn metadata_files_grow_with_their_own_edges_not_with_their_siblings() {
    let size_of_a_reader = |readers: usize| {
        let (_t, root) = fanout_on_disk(readers);
        let o = run_bounded(&["pipeline", "build-all-metadata", path_str(&root)], 300);
        o.success();
        let file = root.join("intermediates/c/int_f_0/pipeline_definition.json");
        let def: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let parent = &def["parents"][0];
        assert_eq!(parent["table_name"], "src_f_hub");
        let siblings: Vec<&str> = parent["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["table_name"].as_str().unwrap())
            .collect();
        assert_eq!(
            siblings,
            ["int_f_0"],
            "the embedded parent lists this table only"
        );
        let hub: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("sources/c/src_f_hub/pipeline_definition.json"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(hub["children"].as_array().unwrap().len(), readers);
        std::fs::metadata(&file).unwrap().len()
    };
    // Same file whatever the number of the hub's other readers.
    assert_eq!(size_of_a_reader(3), size_of_a_reader(300));
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// A small valid project: a source and a reader.
fn two_tables() -> (tempfile::TempDir, PathBuf) {
    let (t, root) = project(&[]);
    table(&root, "sources", "src_a", None);
    table(&root, "intermediates", "int_b", Some("src_a"));
    (t, root)
}

#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_by_name_never_read() {
    let commands = |root: &Path| -> Vec<Vec<String>> {
        let r = path_str(root).to_string();
        [
            vec!["pipeline", "validate"],
            vec!["table", "build-inventory"],
            vec!["pipeline", "build-all-metadata"],
        ]
        .into_iter()
        .map(|c| {
            c.into_iter()
                .map(str::to_string)
                .chain([r.clone()])
                .collect()
        })
        .chain([vec![
            "pipeline".into(),
            "build-execution-plan".into(),
            r.clone(),
            "--table-name".into(),
            "int_b".into(),
            "--offline".into(),
        ]])
        .collect()
    };
    // A FIFO named like a DML, a SQL file linked to /dev/zero, a FIFO as external_tables.json.
    /// What the file is, how to make it in a project root, the error that names it.
    type Case<'a> = (&'a str, &'a dyn Fn(&Path), &'a str);
    let cases: [Case; 3] = [
        (
            "pipelines/intermediates/c/int_x/sql-scripts/dml.int_x.sql",
            &|root| {
                let dir = root.join("intermediates/c/int_x/sql-scripts");
                std::fs::create_dir_all(&dir).unwrap();
                mkfifo(&dir.join("dml.int_x.sql"));
            },
            "error[file-refused]: pipelines/intermediates/c/int_x/sql-scripts/dml.int_x.sql: not a regular file but a FIFO (named pipe): refused (flinkpipe reads only regular files)",
        ),
        (
            "pipelines/intermediates/c/int_z/sql-scripts/ddl.int_z.sql",
            &|root| {
                let dir = root.join("intermediates/c/int_z/sql-scripts");
                std::fs::create_dir_all(&dir).unwrap();
                std::os::unix::fs::symlink("/dev/zero", dir.join("ddl.int_z.sql")).unwrap();
            },
            "error[file-refused]: pipelines/intermediates/c/int_z/sql-scripts/ddl.int_z.sql: not a regular file but a character device: refused",
        ),
        (
            "pipelines/seeds/external_tables.json",
            &|root| {
                std::fs::create_dir_all(root.join("seeds")).unwrap();
                mkfifo(&root.join("seeds/external_tables.json"));
            },
            "error[bad-external-tables]: pipelines/seeds/external_tables.json: cannot read external tables manifest: not a regular file but a FIFO (named pipe): refused",
        ),
    ];
    for (what, plant, want) in cases {
        let (_t, root) = two_tables();
        plant(&root);
        for args in commands(&root) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = run_bounded(&args, 120);
            let o = o.code(1);
            assert!(
                o.stderr_raw().contains(want),
                "{what}: {args:?}: {}",
                o.stderr_raw()
            );
        }
    }
    // A FIFO given as --statement-status.
    let (t, root) = two_tables();
    let fifo = t.path().join("status.json");
    mkfifo(&fifo);
    let o = run_bounded(
        &[
            "pipeline",
            "build-execution-plan",
            path_str(&root),
            "--table-name",
            "int_b",
            "--statement-status",
            path_str(&fifo),
        ],
        120,
    );
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains(&format!(
            "cannot read statement status file {}: not a regular file but a FIFO (named pipe): refused",
            fifo.display()
        )),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn files_over_the_size_limit_are_refused_with_their_size() {
    let (_t, root) = two_tables();
    let dir = root.join("intermediates/c/int_big/sql-scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let f = std::fs::File::create(dir.join("dml.int_big.sql")).unwrap();
    f.set_len(flinkpipe::fsutil::MAX_SQL_FILE_BYTES + 1)
        .unwrap();
    let o = run_bounded(&["pipeline", "validate", path_str(&root)], 120);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("error[file-refused]: pipelines/intermediates/c/int_big/sql-scripts/dml.int_big.sql: too large (8388609 bytes, over the limit of 8 MiB for this kind of file): refused"),
        "{}",
        o.stderr_raw()
    );
}

#[test]
fn small_input_mistakes_are_reported_not_skipped() {
    // A `sql-scripts` that is a file: an error, not a table lost silently.
    let (_t, root) = two_tables();
    let folder = root.join("intermediates/c/int_q");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("sql-scripts"), "not a folder").unwrap();
    let o = run_bounded(&["pipeline", "validate", path_str(&root)], 120);
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("error[sql-scripts-not-a-folder]: pipelines/intermediates/c/int_q/sql-scripts: sql-scripts is not a folder"),
        "{}",
        o.stderr_raw()
    );

    // A UTF-8 byte order mark in external_tables.json is accepted.
    let (_t, root) = two_tables();
    std::fs::create_dir_all(root.join("seeds")).unwrap();
    std::fs::write(
        root.join("seeds/external_tables.json"),
        "\u{feff}{\"tables\": [{\"table_name\": \"ext_x\", \"kafka_topic\": \"x\"}]}",
    )
    .unwrap();
    let o = run_bounded(&["pipeline", "validate", path_str(&root)], 120);
    o.success();

    // A phase that is not a statement phase.
    let (t, root) = two_tables();
    let status = t.path().join("status.json");
    std::fs::write(&status, r#"{"dev-usw2-c-dml-int-b": "BANANA"}"#).unwrap();
    let o = run_bounded(
        &[
            "pipeline",
            "build-execution-plan",
            path_str(&root),
            "--table-name",
            "int_b",
            "--statement-status",
            path_str(&status),
        ],
        120,
    );
    let o = o.code(1);
    assert!(
        o.stderr_raw().contains("'dev-usw2-c-dml-int-b' has phase 'BANANA': not a statement phase (valid phases: PENDING, RUNNING,"),
        "{}",
        o.stderr_raw()
    );

    // A config value of the wrong type: the key and the line.
    let (t, root) = two_tables();
    let cfg = t.path().join("config.yaml");
    std::fs::write(&cfg, "kafka: {}\nflinkpipe:\n  layers: 5\n").unwrap();
    let o = run_bounded(
        &[
            "--config",
            path_str(&cfg),
            "pipeline",
            "validate",
            path_str(&root),
        ],
        120,
    );
    let o = o.code(1);
    let err = o.stderr_raw();
    assert!(
        err.contains("flinkpipe.layers") && err.contains("line 3"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn control_characters_in_folder_names_are_escaped_in_text() {
    let (_t, root) = two_tables();
    // A table folder whose name holds an escape sequence and a tab, with no SQL file in it.
    let folder = root.join("intermediates/c/int_\u{1b}[31mred\tx/sql-scripts");
    std::fs::create_dir_all(&folder).unwrap();
    let o = run_bounded(&["pipeline", "validate", path_str(&root)], 120);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert!(!err.contains('\u{1b}') && !err.contains('\t'), "{err:?}");
    assert!(err.contains("int_\\x1b[31mred\\tx"), "{err}");
    // JSON keeps the exact name (escaped by JSON itself).
    let o = run_bounded(
        &["pipeline", "validate", path_str(&root), "--output", "json"],
        120,
    );
    assert!(
        o.stdout_raw().contains("int_\\u001b[31mred\\tx"),
        "{}",
        o.stdout_raw()
    );
}

// ---- interrupted builds ------------------------------------------------------------------------

/// Every `pipeline_definition.json` of the tree, with its content.
fn definitions(root: &Path) -> BTreeMap<PathBuf, String> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() == "pipeline_definition.json")
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            (e.into_path(), text)
        })
        .collect()
}

/// Temporary files, backups and batch markers left in the tree.
fn leftovers(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n.contains(".flinkpipe-tmp-")
                || n.contains(".flinkpipe-old-")
                || n.starts_with(".flinkpipe-batch-")
        })
        .map(|e| e.into_path())
        .collect()
}

/// A tree of `n` chained tables whose metadata was built once and then replaced by a marker text
/// (`OLD`), so that the next build rewrites every file.
fn built_chain(n: usize) -> (tempfile::TempDir, PathBuf, BTreeMap<PathBuf, String>) {
    let (t, root) = chain_on_disk(n);
    let o = run_bounded(&["pipeline", "build-all-metadata", path_str(&root)], 600);
    o.success();
    let new = definitions(&root);
    assert_eq!(new.len(), n);
    for p in new.keys() {
        std::fs::write(p, "OLD").unwrap();
    }
    (t, root, new)
}

/// All old (`OLD`) or all new (`new`), nothing else.
fn all_old_or_all_new(root: &Path, new: &BTreeMap<PathBuf, String>) -> &'static str {
    let now = definitions(root);
    assert_eq!(now.len(), new.len());
    if now.values().all(|t| t == "OLD") {
        "old"
    } else {
        let mixed = now.iter().filter(|(p, t)| new[*p] != **t).count();
        assert_eq!(
            mixed,
            0,
            "{mixed} of {} files neither new nor all old",
            now.len()
        );
        "new"
    }
}

/// Starts `build-all-metadata`, waits until its batch marker appears (the batch began) plus
/// `delay`, and sends `signal`. Returns its exit status.
fn signal_build(root: &Path, signal: libc::c_int, delay: Duration) -> std::process::ExitStatus {
    let mut child = command()
        .args(["pipeline", "build-all-metadata", path_str(root)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let marker = root.join(format!(".flinkpipe-batch-{}", child.id()));
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !marker.exists() && child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the batch never began"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(delay);
    // SAFETY: our own child (it may have ended already: the signal then goes nowhere harmful only if
    // the pid was not reused, which the wait below makes moot for a zombie we have not reaped).
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    child.wait().unwrap()
}

/// SIGINT, and SIGTERM and SIGHUP alike (#29): the batch is finished or abandoned, never torn.
#[cfg(unix)]
#[test]
fn sigint_finishes_or_abandons_the_batch_and_exits_130() {
    use std::os::unix::process::ExitStatusExt;
    let (_t, root, new) = built_chain(1_000);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let mut seen = std::collections::BTreeSet::new();
        for delay_ms in [0, 10, 50, 200] {
            for p in new.keys() {
                std::fs::write(p, "OLD").unwrap();
            }
            let status = signal_build(&root, signal, Duration::from_millis(delay_ms));
            let state = all_old_or_all_new(&root, &new);
            match (status.code(), status.signal()) {
                // Interrupted in the batch: abandoned (all old) or finished first (all new).
                (Some(130), _) => {}
                // The batch had ended: the signal came after it (default action) or after the exit.
                (Some(0), _) => assert_eq!(state, "new"),
                (None, Some(s)) if s == signal => assert_eq!(state, "new"),
                other => panic!("signal {signal}: exit status {other:?}"),
            }
            assert_eq!(
                leftovers(&root),
                Vec::<PathBuf>::new(),
                "nothing left after signal {signal}"
            );
            seen.insert((status.code(), state));
        }
        // At least one interrupt landed inside the batch.
        assert!(
            seen.iter().any(|(c, _)| *c == Some(130)),
            "signal {signal}: {seen:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_killed_build_is_completed_or_undone_by_the_next_command() {
    let (_t, root, new) = built_chain(1_000);
    let mut killed_mid_batch = 0;
    for delay_ms in [0, 10, 50, 200] {
        for p in new.keys() {
            std::fs::write(p, "OLD").unwrap();
        }
        let _ = signal_build(&root, libc::SIGKILL, Duration::from_millis(delay_ms));
        let left = leftovers(&root);
        if !left.is_empty() {
            killed_mid_batch += 1;
            // validate reports the interrupted batch with the command that repairs it (an error when
            // files were being replaced, a warning when only temporaries remain).
            let o = run_bounded(&["pipeline", "validate", path_str(&root)], 300);
            assert!(
                o.stderr_raw()
                    .contains("[interrupted-write]: pipelines/.flinkpipe-batch-")
                    && o.stderr_raw()
                        .contains("flinkpipe pipeline build-all-metadata"),
                "{}",
                o.stderr_raw()
            );
        }
        // The next command that writes the tree (here the inventory) cleans up first.
        let o = run_bounded(&["table", "build-inventory", path_str(&root)], 300);
        o.success();
        assert_eq!(
            leftovers(&root),
            Vec::<PathBuf>::new(),
            "no temporary file survives"
        );
        all_old_or_all_new(&root, &new);
    }
    assert!(killed_mid_batch > 0, "no kill landed inside a batch");
}

#[test]
fn temporary_files_of_dead_processes_are_reported_and_removed_by_the_next_writer() {
    let (_t, root) = two_tables();
    // A pid that has just ended.
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    let folder = root.join("intermediates/c/int_b");
    let stale = [
        folder.join(format!(".pipeline_definition.json.flinkpipe-tmp-{pid}")),
        root.join(format!(".inventory.json.flinkpipe-tmp-{pid}")),
        folder.join(format!(".pipeline_definition.json.flinkpipe-old-{pid}")),
    ];
    for f in &stale {
        std::fs::write(f, "junk").unwrap();
    }
    let o = run_bounded(&["pipeline", "validate", path_str(&root)], 120);
    let o = o.success();
    assert!(
        o.stderr_raw().contains("warning[stale-temporary-files]: ")
            && o.stderr_raw().contains("3 temporary file(s)"),
        "{}",
        o.stderr_raw()
    );
    assert!(stale.iter().all(|f| f.exists()), "validate writes nothing");
    let o = run_bounded(&["pipeline", "build-all-metadata", path_str(&root)], 120);
    let o = o.success();
    assert!(stale.iter().all(|f| !f.exists()), "{}", o.stderr_raw());
    assert_eq!(leftovers(&root), Vec::<PathBuf>::new());
}

#[test]
fn project_init_ignores_temporary_files() {
    let t = tempfile::tempdir().unwrap();
    let o = run_bounded(&["project", "init", "shop", path_str(t.path())], 60);
    o.success();
    let gi = std::fs::read_to_string(t.path().join("shop/.gitignore")).unwrap();
    for want in [
        ".*.flinkpipe-tmp-*",
        ".*.flinkpipe-old-*",
        ".flinkpipe-batch-*",
    ] {
        assert!(gi.lines().any(|l| l == want), "{want} missing in:\n{gi}");
    }
}

// ---- the scale benchmarks (scripts/bench-shapes.sh) ---------------------------------------------

/// `FLINKPIPE_BENCH_TREE=<dir with pipelines/>`: every command on a big generated tree (a
/// 1,000,000-table chain in BENCHMARKS.md) ends successfully.
#[test]
#[ignore]
fn bench_commands_on_a_generated_tree() {
    let Some(dir) = std::env::var_os("FLINKPIPE_BENCH_TREE") else {
        return;
    };
    let root = PathBuf::from(dir).join("pipelines");
    for args in [
        vec!["pipeline", "validate"],
        vec!["pipeline", "build-all-metadata"],
    ] {
        let mut a = args.clone();
        a.push(path_str(&root));
        let o = run_bounded(&a, 3600);
        o.success();
    }
}

/// The leftover walk of recovery does not follow symbolic links: leftover-named files reached through
/// a link (outside the project, or a second path into it) are neither renamed nor removed.
#[cfg(unix)]
#[test]
fn recovery_does_not_follow_symbolic_links_out_of_the_tree() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("pipelines");
    let outside = t.path().join("elsewhere");
    std::fs::create_dir_all(root.join("facts")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // A pid that has just ended.
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    let foreign = [
        outside.join(format!(".secret.json.flinkpipe-tmp-{pid}")),
        outside.join(format!(".secret.json.flinkpipe-old-{pid}")),
    ];
    for f in &foreign {
        std::fs::write(f, "not the project's").unwrap();
    }
    std::os::unix::fs::symlink(&outside, root.join("facts/linked")).unwrap();
    // A leftover inside the tree is still cleaned up.
    let own = root.join(format!("facts/.a.sql.flinkpipe-tmp-{pid}"));
    std::fs::write(&own, "junk").unwrap();
    let rec = flinkpipe::fsutil::recover(&root, true).unwrap();
    assert_eq!(rec.removed, 1, "{rec:?}");
    assert!(!own.exists());
    assert!(
        foreign.iter().all(|f| f.exists()),
        "files outside the tree are untouched"
    );
    assert!(!outside.join("secret.json").exists());
}
