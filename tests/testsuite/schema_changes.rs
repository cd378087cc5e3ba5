//! Schema changes checked against every downstream reader (`pipeline validate --since REF --fail-on
//! breaking`), over generated projects: removing any column of any table is reported as breaking
//! exactly when some downstream statement reads it (the generator knows who reads what), and the
//! readers are named with their file:line.

use crate::support::Rng;
use crate::support::Test;
use crate::support::project;
use crate::support::repo::{Repo, T_BASE};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

fn ddl(name: &str, cols: &[String]) -> String {
    let body: Vec<String> = cols.iter().map(|c| format!("  {c} STRING,")).collect();
    format!(
        "CREATE TABLE IF NOT EXISTS {name} (\n{}\n  PRIMARY KEY ({}) NOT ENFORCED\n) WITH ('connector' = 'upsert-kafka', 'topic' = '{name}', 'key.format' = 'json', 'value.format' = 'json');\n",
        body.join("\n"),
        cols[0]
    )
}

/// Files, every table's columns, and who reads each `(table, column)`.
struct Generated {
    files: Vec<(String, String)>,
    columns: BTreeMap<String, Vec<String>>,
    read: BTreeSet<(String, String)>,
    folder: BTreeMap<String, String>,
}

fn generate(rng: &mut Rng) -> Generated {
    let mut g = Generated {
        files: Vec::new(),
        columns: BTreeMap::new(),
        read: BTreeSet::new(),
        folder: BTreeMap::new(),
    };
    for i in 0..2 {
        let t = format!("src_{i}");
        let cols: Vec<String> = (0..4).map(|k| format!("{t}_c{k}")).collect();
        let dir = format!("sources/{t}");
        g.files
            .push((format!("{dir}/sql-scripts/ddl.{t}.sql"), ddl(&t, &cols)));
        g.columns.insert(t.clone(), cols);
        g.folder.insert(t, dir);
    }
    for k in 0..(3 + rng.below(3)) {
        let t = format!("t{k}");
        let tables: Vec<String> = g.columns.keys().cloned().collect();
        let parent = tables[rng.below(tables.len())].clone();
        let pcols = g.columns[&parent].clone();
        // The child keeps the parent's key and a random subset of its other columns; maybe filters on
        // one more.
        let mut picked: Vec<String> = vec![pcols[0].clone()];
        for c in &pcols[1..] {
            if rng.below(2) == 0 {
                picked.push(c.clone());
            }
        }
        let filter = (rng.below(2) == 0).then(|| pcols[rng.below(pcols.len())].clone());
        for c in picked.iter().chain(filter.iter()) {
            g.read.insert((parent.clone(), c.clone()));
        }
        let own: Vec<String> = picked.iter().map(|c| format!("{t}_{c}")).collect();
        let select: Vec<String> = picked
            .iter()
            .zip(&own)
            .map(|(c, o)| format!("{c} AS {o}"))
            .collect();
        let mut dml = format!(
            "INSERT INTO {t}\nSELECT {}\nFROM {parent}",
            select.join(", ")
        );
        if let Some(f) = &filter {
            dml.push_str(&format!("\nWHERE {f} <> ''"));
        }
        dml.push_str(";\n");
        let dir = format!("intermediates/{t}");
        g.files
            .push((format!("{dir}/sql-scripts/ddl.{t}.sql"), ddl(&t, &own)));
        g.files
            .push((format!("{dir}/sql-scripts/dml.{t}.sql"), dml));
        g.columns.insert(t.clone(), own);
        g.folder.insert(t, dir);
    }
    g
}

fn check(r: &Repo) -> (Option<i32>, Value) {
    let o = Test::outside(&[
        "pipeline",
        "validate",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--fail-on",
        "breaking",
        "--output",
        "json",
    ]);
    let v: Value =
        serde_json::from_str(&o.stdout_raw()).unwrap_or_else(|e| panic!("{e}: {}", o.stderr_raw()));
    (o.output.status.code(), v)
}

#[test]
fn removing_a_column_is_breaking_exactly_when_a_downstream_statement_reads_it() {
    let mut cases = 0;
    let mut breaking_cases = 0;
    for seed in 1..=3u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let g = generate(&mut rng);
        let refs: Vec<(&str, &str)> = g
            .files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        let r = Repo::new(project(&refs));
        let mut time = T_BASE;
        for (table, cols) in &g.columns {
            // Not the key: removing it would also change the primary key.
            for c in &cols[1..] {
                let rel = format!("{}/sql-scripts/ddl.{table}.sql", g.folder[table]);
                let original = std::fs::read_to_string(r.path(&rel)).unwrap();
                r.edit(&rel, |t| t.replace(&format!("  {c} STRING,\n"), ""));
                time += 60;
                r.commit("drop a column", time);
                let (code, v) = check(&r);
                let changes = v["schema_changes"].as_array().unwrap();
                let change = changes
                    .iter()
                    .find(|x| x["table"] == table.as_str() && x["column"] == c.as_str())
                    .unwrap_or_else(|| panic!("seed {seed}: {table}.{c} not reported: {v:#}"));
                // Read downstream, or written by position: every generated writer is an INSERT
                // without a column list, which now fills one column more than its sink has.
                let expected =
                    g.read.contains(&(table.clone(), c.clone())) || !table.starts_with("src_");
                assert_eq!(
                    change["breaking"], expected,
                    "seed {seed}: removing {table}.{c}: {change:#}"
                );
                assert_eq!(
                    code,
                    Some(if expected { 1 } else { 0 }),
                    "seed {seed}: {table}.{c}"
                );
                if expected {
                    breaking_cases += 1;
                    let readers = change["readers"].as_array().unwrap();
                    assert!(
                        readers.iter().any(|x| (x["via"].is_null()
                            || x["by_position"] == "no_column_list")
                            && x["file"].as_str().is_some_and(|f| f.ends_with(".sql"))
                            && x["line"].as_u64().is_some_and(|l| l >= 1)),
                        "seed {seed}: {change:#}"
                    );
                }
                std::fs::write(r.path(&rel), original).unwrap();
                time += 60;
                r.commit("restore", time);
                cases += 1;
            }
        }
    }
    assert!(cases > 20, "{cases}");
    assert!(
        breaking_cases > 5 && breaking_cases < cases,
        "{breaking_cases} of {cases}"
    );
}

/// A column used two levels downstream (passed through a middle table by `SELECT *`): removing it is
/// breaking, naming the direct reader and, through it, the reader two levels down, with file:line.
#[test]
fn a_column_used_two_levels_down_is_reported_with_both_readers() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        (
            "sources/s/sql-scripts/ddl.s.sql".to_string(),
            ddl("s", &cols(&["id", "x", "y"])),
        ),
        (
            "intermediates/m/sql-scripts/ddl.m.sql".to_string(),
            ddl("m", &cols(&["id", "x", "y"])),
        ),
        (
            "intermediates/m/sql-scripts/dml.m.sql".to_string(),
            "INSERT INTO m SELECT * FROM s;\n".to_string(),
        ),
        (
            "facts/f/sql-scripts/ddl.f.sql".to_string(),
            ddl("f", &cols(&["id", "total"])),
        ),
        (
            "facts/f/sql-scripts/dml.f.sql".to_string(),
            "-- totals\nINSERT INTO f\nSELECT id, CONCAT(x, '!') AS total\nFROM m;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("sources/s/sql-scripts/ddl.s.sql", |t| {
        t.replace("  x STRING,\n", "")
    });
    r.commit("drop s.x", T_BASE + 60);
    let (code, v) = check(&r);
    assert_eq!(code, Some(1), "{v:#}");
    let change = &v["schema_changes"][0];
    assert_eq!(change["table"], "s");
    assert_eq!(change["column"], "x");
    assert_eq!(change["breaking"], true);
    assert_eq!(change["file"], "pipelines/sources/s/sql-scripts/ddl.s.sql");
    let readers: Vec<(String, String, String)> = change["readers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["by_position"].is_null())
        .map(|x| {
            (
                format!(
                    "{}.{}",
                    x["table"].as_str().unwrap(),
                    x["column"].as_str().unwrap()
                ),
                format!("{}:{}", x["file"].as_str().unwrap(), x["line"]),
                x["via"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    assert_eq!(
        readers,
        vec![
            (
                "f.total".to_string(),
                "pipelines/facts/f/sql-scripts/dml.f.sql:2".to_string(),
                "m.x".to_string()
            ),
            (
                "m.x".to_string(),
                "pipelines/intermediates/m/sql-scripts/dml.m.sql:1".to_string(),
                "-".to_string()
            ),
        ]
    );
    // `SELECT * FROM s` now sends one column fewer into m: m's statement reads s by position.
    assert!(
        change["readers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["table"] == "m"
                && x["by_position"] == "star"
                && x["line"] == 1
                && x["via"]
                    .as_str()
                    .unwrap()
                    .contains("2 output column(s) for 3 column(s) of m")),
        "{change:#}"
    );
    // list-impacted-tables says which columns of each impacted table see the change.
    let out = r.root.join("out");
    let o = Test::outside(&[
        "--output",
        "json",
        "project",
        "list-impacted-tables",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_str(&o.stdout_raw()).unwrap();
    let affected: BTreeMap<String, Value> = v["impacts"][0]["descendants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["table_name"].as_str().unwrap().to_string(),
                d["affected_columns"].clone(),
            )
        })
        .collect();
    // m reads s by position (`SELECT *`): all of it sees the change.
    assert_eq!(
        affected["m"],
        serde_json::json!(["* (reads s.x)", "x (reads s.x)"])
    );
    assert_eq!(affected["f"], serde_json::json!(["total (reads s.x)"]));
}

/// A column renamed in place (same position, same type) is reported as renamed, not removed and added,
/// and is breaking for its readers; an added column alone is additive.
#[test]
fn a_renamed_column_is_reported_as_renamed_and_an_added_one_as_additive() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        (
            "sources/s/sql-scripts/ddl.s.sql".to_string(),
            ddl("s", &cols(&["id", "x", "y"])),
        ),
        (
            "intermediates/m/sql-scripts/ddl.m.sql".to_string(),
            ddl("m", &cols(&["id", "y"])),
        ),
        (
            "intermediates/m/sql-scripts/dml.m.sql".to_string(),
            "INSERT INTO m SELECT id, y FROM s;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("sources/s/sql-scripts/ddl.s.sql", |t| {
        t.replace("  y STRING,\n", "  y2 STRING,\n  extra STRING,\n")
    });
    r.commit("rename s.y, add s.extra", T_BASE + 60);
    let (code, v) = check(&r);
    assert_eq!(code, Some(1), "{v:#}");
    let changes = v["schema_changes"].as_array().unwrap();
    let find = |c: &str| {
        changes
            .iter()
            .find(|x| x["column"] == c)
            .unwrap_or_else(|| panic!("{c}: {v:#}"))
    };
    assert_eq!(
        find("y")["change"],
        serde_json::json!({"kind": "renamed", "to": "y2"})
    );
    assert_eq!(find("y")["breaking"], true);
    assert_eq!(find("y")["readers"][0]["table"], "m");
    assert_eq!(find("extra")["change"]["kind"], "added");
    assert_eq!(find("extra")["breaking"], false);
    assert!(changes.iter().all(|x| x["column"] != "y2"), "{v:#}");
}

/// A statement that now groups by another key changes its table's grain: every reader of the table is
/// named, and `--fail-on breaking` fails.
#[test]
fn a_grain_change_is_breaking_for_the_readers_of_the_table() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        ("sources/s/sql-scripts/ddl.s.sql".to_string(), ddl("s", &cols(&["id", "k", "v"]))),
        ("facts/a/sql-scripts/ddl.a.sql".to_string(), ddl("a", &cols(&["k", "total"]))),
        (
            "facts/a/sql-scripts/dml.a.sql".to_string(),
            "INSERT INTO a\nSELECT k, CAST(SUM(CAST(v AS INT)) AS STRING) AS total\nFROM s\nGROUP BY k;\n".to_string(),
        ),
        ("views/r/sql-scripts/ddl.r.sql".to_string(), ddl("r", &cols(&["k", "total"]))),
        ("views/r/sql-scripts/dml.r.sql".to_string(), "INSERT INTO r SELECT k, total FROM a;\n".to_string()),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("facts/a/sql-scripts/dml.a.sql", |t| {
        t.replace("SELECT k,", "SELECT id AS k,")
            .replace("GROUP BY k", "GROUP BY id")
    });
    r.commit("group by id", T_BASE + 60);
    let (code, v) = check(&r);
    assert_eq!(code, Some(1), "{v:#}");
    let change = v["schema_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["change"]["kind"] == "grain")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(change["table"], "a");
    assert_eq!(change["change"]["old"], serde_json::json!(["s.k"]));
    assert_eq!(change["change"]["new"], serde_json::json!(["s.id"]));
    assert_eq!(change["breaking"], true);
    assert!(
        change["readers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["table"] == "r"),
        "{change:#}"
    );
}

/// `blue-green --fail-on breaking` refuses a release whose schema change breaks a reader, naming it,
/// and writes nothing.
#[test]
fn blue_green_fail_on_breaking_refuses_and_writes_nothing() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        (
            "sources/s/sql-scripts/ddl.s.sql".to_string(),
            ddl("s", &cols(&["id", "x"])),
        ),
        (
            "intermediates/m/sql-scripts/ddl.m.sql".to_string(),
            ddl("m", &cols(&["id", "x"])),
        ),
        (
            "intermediates/m/sql-scripts/dml.m.sql".to_string(),
            "INSERT INTO m SELECT id, x FROM s;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("sources/s/sql-scripts/ddl.s.sql", |t| {
        t.replace("  x STRING,\n", "")
    });
    r.commit("drop s.x", T_BASE + 60);
    let o = Test::outside(&[
        "pipeline",
        "blue-green",
        r.pipelines.to_str().unwrap(),
        "--since",
        "HEAD~1",
        "--apply",
        "--fail-on",
        "breaking",
    ]);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert!(err.contains("s.x (pipelines/sources/s/sql-scripts/ddl.s.sql) is read by m.x (pipelines/intermediates/m/sql-scripts/dml.m.sql:1)"), "{err}");
    assert!(!r.pipelines.join("blue_green.json").exists());
    assert!(
        std::fs::read_to_string(r.path("intermediates/m/sql-scripts/dml.m.sql"))
            .unwrap()
            .contains("INSERT INTO m ")
    );
}

/// A view of the project (its DDL holds its query) is a reader like a DML: dropping a column it reads
/// is breaking, and its own readers follow through it.
#[test]
fn a_view_reading_a_removed_column_is_a_breaking_reader() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        (
            "sources/s/sql-scripts/ddl.s.sql".to_string(),
            ddl("s", &cols(&["id", "label", "qty"])),
        ),
        (
            "views/v/sql-scripts/ddl.v.sql".to_string(),
            "CREATE VIEW v AS\nSELECT id, UPPER(label) AS name FROM s;\n".to_string(),
        ),
        (
            "facts/f/sql-scripts/ddl.f.sql".to_string(),
            ddl("f", &cols(&["id", "name"])),
        ),
        (
            "facts/f/sql-scripts/dml.f.sql".to_string(),
            "INSERT INTO f SELECT id, name FROM v;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("sources/s/sql-scripts/ddl.s.sql", |t| {
        t.replace("  label STRING,\n", "")
    });
    r.commit("drop s.label", T_BASE + 60);
    let (code, v) = check(&r);
    assert_eq!(code, Some(1), "{v:#}");
    let change = &v["schema_changes"][0];
    assert_eq!(change["column"], "label");
    let readers: Vec<String> = change["readers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            format!(
                "{}.{}",
                x["table"].as_str().unwrap(),
                x["column"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(readers, vec!["f.name", "v.name"], "{v:#}");
}

/// The example of issue 42, item 8: a source read by position in every way a reader can (`b.*`, `*`,
/// `b.*` of a join, `*` of a CTE, `*` of a view of the file, `*` into a column list) and by name.
fn positional_files() -> Vec<(String, String)> {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let three = cols(&["id", "region", "amount"]);
    let mut files = vec![
        (
            "sources/src_b/sql-scripts/ddl.src_b.sql".to_string(),
            ddl("src_b", &three),
        ),
        (
            "sources/c/sql-scripts/ddl.c.sql".to_string(),
            ddl("c", &cols(&["id", "name"])),
        ),
    ];
    let readers: [(&str, Vec<String>, &str); 7] = [
        (
            "t_star",
            three.clone(),
            "-- qualified star\nINSERT INTO t_star\nSELECT b.*\nFROM src_b AS b;\n",
        ),
        (
            "t_bare",
            three.clone(),
            "INSERT INTO t_bare SELECT * FROM src_b;\n",
        ),
        (
            "t_join",
            cols(&["id", "region", "amount", "name"]),
            "INSERT INTO t_join\nSELECT b.*, c.name\nFROM src_b AS b JOIN c ON b.id = c.id;\n",
        ),
        (
            "t_cte",
            three.clone(),
            "INSERT INTO t_cte\nWITH x AS (SELECT * FROM src_b)\nSELECT * FROM x;\n",
        ),
        (
            "t_view",
            three.clone(),
            "CREATE TEMPORARY VIEW v AS SELECT * FROM src_b;\nINSERT INTO t_view SELECT * FROM v;\n",
        ),
        (
            "t_list",
            three.clone(),
            "INSERT INTO t_list (id, region, amount)\nSELECT * FROM src_b;\n",
        ),
        (
            "t_named",
            three.clone(),
            "INSERT INTO t_named (id, region, amount)\nSELECT id, region, amount FROM src_b;\n",
        ),
    ];
    for (t, c, dml) in readers {
        files.push((
            format!("intermediates/{t}/sql-scripts/ddl.{t}.sql"),
            ddl(t, &c),
        ));
        files.push((
            format!("intermediates/{t}/sql-scripts/dml.{t}.sql"),
            dml.to_string(),
        ));
    }
    files
}

/// The positional readers of `table` in a change of `v`: `(reader table, file:line, by_position)`.
fn by_position(v: &Value, table: &str) -> BTreeSet<(String, String, String)> {
    v["schema_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["table"] == table && c["breaking"] == true)
        .flat_map(|c| c["readers"].as_array().unwrap().iter())
        .filter(|r| !r["by_position"].is_null())
        .map(|r| {
            (
                r["table"].as_str().unwrap().to_string(),
                format!("{}:{}", r["file"].as_str().unwrap(), r["line"]),
                r["by_position"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn star_readers(tables: &[&str]) -> BTreeSet<(String, String, String)> {
    tables
        .iter()
        .map(|t| {
            let line = match *t {
                "t_star" => 2,
                "t_view" => 2,
                _ => 1,
            };
            (
                t.to_string(),
                format!("pipelines/intermediates/{t}/sql-scripts/dml.{t}.sql:{line}"),
                "star".to_string(),
            )
        })
        .collect()
}

/// Issue 42, item 8: columns of a source moved (same names, same types, other order) are breaking for
/// every statement that reads it by position — `b.*`, `*`, `b.*` of a join, `*` of a CTE, `*` of a
/// view, `*` into a column list — each named with its file:line; not for a reader by name.
#[test]
fn reordered_columns_are_breaking_for_positional_readers_only() {
    let files = positional_files();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("sources/src_b/sql-scripts/ddl.src_b.sql", |t| {
        t.replace(
            "  id STRING,\n  region STRING,\n",
            "  region STRING,\n  id STRING,\n",
        )
    });
    r.commit("reorder src_b", T_BASE + 60);
    let (code, v) = check(&r);
    assert_eq!(code, Some(1), "{v:#}");
    let change = v["schema_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["change"]["kind"] == "reordered")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(change["table"], "src_b");
    assert_eq!(
        change["change"]["old"],
        serde_json::json!(["id", "region", "amount"])
    );
    assert_eq!(
        change["change"]["new"],
        serde_json::json!(["region", "id", "amount"])
    );
    assert_eq!(change["breaking"], true);
    assert_eq!(
        by_position(&v, "src_b"),
        star_readers(&["t_star", "t_bare", "t_join", "t_cte", "t_view", "t_list"]),
        "{v:#}"
    );
    // The reader's message says what it now gets.
    let star = change["readers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["table"] == "t_star")
        .unwrap();
    assert_eq!(star["column"], "id");
    assert!(
        star["via"].as_str().unwrap().contains("`*` over src_b"),
        "{star:#}"
    );
}

/// Issue 42, item 8: a column inserted in the middle, or appended, changes the count of `*`: breaking
/// for each positional reader whose sink did not grow with it (named with file:line), additive for
/// readers by name; a reader whose sink gained the same column reads the same values at each position.
#[test]
fn added_columns_are_breaking_for_positional_readers_whose_sink_did_not_follow() {
    for (what, edit) in [
        (
            "inserted in the middle",
            "  id STRING,\n  extra STRING,\n  region STRING,\n  amount STRING,\n",
        ),
        (
            "appended",
            "  id STRING,\n  region STRING,\n  amount STRING,\n  extra STRING,\n",
        ),
    ] {
        let files = positional_files();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        let r = Repo::new(project(&refs));
        let three = "  id STRING,\n  region STRING,\n  amount STRING,\n";
        r.edit("sources/src_b/sql-scripts/ddl.src_b.sql", |t| {
            t.replace(three, edit)
        });
        // t_bare's sink follows the source: same columns in the same order.
        r.edit("intermediates/t_bare/sql-scripts/ddl.t_bare.sql", |t| {
            t.replace(three, edit)
        });
        r.commit("add src_b.extra", T_BASE + 60);
        let (code, v) = check(&r);
        assert_eq!(code, Some(1), "{what}: {v:#}");
        let added = v["schema_changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["table"] == "src_b" && c["column"] == "extra")
            .unwrap_or_else(|| panic!("{what}: {v:#}"));
        assert_eq!(added["change"]["kind"], "added", "{what}");
        assert_eq!(added["breaking"], true, "{what}: {added:#}");
        assert_eq!(
            by_position(&v, "src_b"),
            star_readers(&["t_star", "t_join", "t_cte", "t_view", "t_list"]),
            "{what}: {v:#}"
        );
        assert!(
            added["readers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|x| x["table"] != "t_named" && x["table"] != "t_bare"),
            "{what}: {added:#}"
        );
    }
}

/// Issue 42, item 8: a sink's columns moved are breaking for the statements that write it by
/// position — an INSERT … SELECT or INSERT … VALUES without a column list — and not for one with a
/// column list.
#[test]
fn a_reordered_sink_is_breaking_for_its_writers_without_a_column_list() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let three = cols(&["id", "region", "amount"]);
    let mut files = vec![(
        "sources/s/sql-scripts/ddl.s.sql".to_string(),
        ddl("s", &three),
    )];
    for (t, dml) in [
        (
            "w_select",
            "INSERT INTO w_select\nSELECT id, region, amount FROM s;\n",
        ),
        (
            "w_values",
            "INSERT INTO w_values VALUES ('1', 'eu', '2');\n",
        ),
        (
            "w_listed",
            "INSERT INTO w_listed (id, region, amount) SELECT id, region, amount FROM s;\n",
        ),
    ] {
        files.push((
            format!("intermediates/{t}/sql-scripts/ddl.{t}.sql"),
            ddl(t, &three),
        ));
        files.push((
            format!("intermediates/{t}/sql-scripts/dml.{t}.sql"),
            dml.to_string(),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    for t in ["w_select", "w_values", "w_listed"] {
        r.edit(&format!("intermediates/{t}/sql-scripts/ddl.{t}.sql"), |x| {
            x.replace(
                "  region STRING,\n  amount STRING,\n",
                "  amount STRING,\n  region STRING,\n",
            )
        });
    }
    r.commit("reorder the sinks", T_BASE + 60);
    let (code, v) = check(&r);
    assert_eq!(code, Some(1), "{v:#}");
    for (t, breaking) in [("w_select", true), ("w_values", true), ("w_listed", false)] {
        let c = v["schema_changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["table"] == t && c["change"]["kind"] == "reordered")
            .unwrap_or_else(|| panic!("{t}: {v:#}"));
        assert_eq!(c["breaking"], breaking, "{t}: {c:#}");
        if breaking {
            assert_eq!(
                by_position(&v, t),
                BTreeSet::from([(
                    t.to_string(),
                    format!("pipelines/intermediates/{t}/sql-scripts/dml.{t}.sql:1"),
                    "no_column_list".to_string()
                )]),
                "{v:#}"
            );
        }
    }
}

/// Issue 42, item 10: a column renamed in a parent's DDL and still read downstream by its old name is
/// an `unknown-column` error of `validate --strict` at the reader's file:line (a warning class: without
/// the gate the run passes).
#[test]
fn strict_validate_fails_on_a_renamed_column_still_read_downstream() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        (
            "sources/s/sql-scripts/ddl.s.sql".to_string(),
            ddl("s", &cols(&["id", "x", "y"])),
        ),
        (
            "intermediates/m/sql-scripts/ddl.m.sql".to_string(),
            ddl("m", &cols(&["id", "y"])),
        ),
        (
            "intermediates/m/sql-scripts/dml.m.sql".to_string(),
            "INSERT INTO m\nSELECT id,\n  y\nFROM s;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    let dir = r.pipelines.to_str().unwrap().to_string();
    Test::outside(&["pipeline", "validate", &dir, "--strict"]).success();
    r.edit("sources/s/sql-scripts/ddl.s.sql", |t| {
        t.replace("  y STRING,\n", "  y2 STRING,\n")
    });
    r.commit("rename s.y", T_BASE + 60);
    let o = Test::outside(&["pipeline", "validate", &dir, "--strict"]);
    let o = o.code(1);
    let err = o.stderr_raw();
    assert!(
        err.contains("error[unknown-column]: pipelines/intermediates/m/sql-scripts/dml.m.sql:3"),
        "{err}"
    );
    assert!(err.contains("did you mean 'y2'?"), "{err}");
    Test::outside(&["pipeline", "validate", &dir]).success();
}

/// #44 item 8: `validate --since` without `--fail-on` lists a breaking change as a warning and says,
/// in the summary line, that it does not fail the check (exit 0); with `--fail-on breaking` the
/// same change is an error and the summary says `breaking` (exit 1). Never `ok: … 1 breaking`.
#[test]
fn validate_since_says_whether_a_breaking_change_fails_the_check() {
    let cols = |names: &[&str]| -> Vec<String> { names.iter().map(|s| s.to_string()).collect() };
    let files = [
        (
            "sources/s/sql-scripts/ddl.s.sql".to_string(),
            ddl("s", &cols(&["id", "x"])),
        ),
        (
            "intermediates/m/sql-scripts/ddl.m.sql".to_string(),
            ddl("m", &cols(&["id", "x"])),
        ),
        (
            "intermediates/m/sql-scripts/dml.m.sql".to_string(),
            "INSERT INTO m SELECT id, x FROM s;\n".to_string(),
        ),
    ];
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let r = Repo::new(project(&refs));
    r.edit("sources/s/sql-scripts/ddl.s.sql", |t| {
        t.replace("  x STRING,\n", "")
    });
    r.commit("drop s.x", T_BASE + 60);
    let p = r.pipelines.to_str().unwrap();
    let o = Test::outside(&["pipeline", "validate", p, "--since", "HEAD~1"]).success();
    let out = o.stdout_raw();
    let last = out.lines().last().unwrap_or_default().to_string();
    assert!(
        last.starts_with("ok: ")
            && last.ends_with(
                "— 1 breaking change(s) listed above do not fail the check without --fail-on breaking"
            ),
        "{out}"
    );
    assert!(
        o.stderr_raw().contains("warning[breaking]"),
        "{}",
        o.stderr_raw()
    );
    let o = Test::outside(&[
        "pipeline",
        "validate",
        p,
        "--since",
        "HEAD~1",
        "--fail-on",
        "breaking",
    ])
    .code(1);
    let out = o.stdout_raw();
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("breaking: ") && l.contains("1 breaking")),
        "{out}"
    );
    assert!(
        o.stderr_raw().contains("error[breaking]"),
        "{}",
        o.stderr_raw()
    );
}
