//! The layering rule of `docs/src/architecture.md` holds in the code: every top-level module of `src/`
//! is on a floor, imports only its own floor or below (except the upward imports the page lists, each
//! with its reason), and no two modules import each other in a circle.
//!
//! An import is a `crate::<module>` path in code (lines that are comments do not count: a doc link is
//! not a dependency).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The page's floors: module → floor number (1-based, as numbered on the page), and the allowed
/// upward imports `(from, to)`.
struct Rule {
    floor: BTreeMap<String, usize>,
    allowed: BTreeSet<(String, String)>,
}

/// The backticked words of `text`, in order.
fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_string())
        .collect()
}

fn read_rule() -> Rule {
    let page =
        fs::read_to_string(root().join("docs/src/architecture.md")).expect("architecture.md");
    let mut section = "";
    let mut floor = BTreeMap::new();
    let mut allowed = BTreeSet::new();
    for line in page.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = if h.starts_with("Floors") {
                "floors"
            } else if h.starts_with("Allowed upward imports") {
                "allowed"
            } else {
                ""
            };
            continue;
        }
        match section {
            "floors" => {
                // `12. `a`, `b` — what they hold`: the modules are the spans before the dash.
                let Some((num, rest)) = line.split_once(". ") else {
                    continue;
                };
                let Ok(n) = num.trim().parse::<usize>() else {
                    continue;
                };
                let head = rest.split(" — ").next().unwrap_or("");
                for m in code_spans(head) {
                    assert!(
                        floor.insert(m.clone(), n).is_none(),
                        "architecture.md puts `{m}` on two floors"
                    );
                }
            }
            "allowed" => {
                if let Some(item) = line.strip_prefix("- ") {
                    let spans = code_spans(item.split(':').next().unwrap_or(""));
                    assert!(
                        spans.len() == 2 && item.contains('→') && item.contains(": "),
                        "architecture.md: an allowed upward import reads ``- `from` → `to`: why``, not {item:?}"
                    );
                    allowed.insert((spans[0].clone(), spans[1].clone()));
                }
            }
            _ => {}
        }
    }
    assert!(floor.len() > 10, "architecture.md lists no floors");
    Rule { floor, allowed }
}

/// The top-level module of a source file: `src/a.rs` and `src/a/**` are `a`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::<module>` import in code: `(from, to) → first place (file:line)`.
fn imports() -> BTreeMap<(String, String), String> {
    let src = root().join("src");
    let mut found = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.expect("walk src");
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let from = module_of(&src, path);
        if from == "lib" {
            continue;
        }
        let text = fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // Drop a trailing comment and string contents would need a lexer; `crate::` in a string is
            // not used in this code base, and a trailing `// crate::x` is cut here.
            let code = code.split(" //").next().unwrap_or(code);
            for (at, _) in code.match_indices("crate::") {
                let before = code[..at].chars().last();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let to: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
                    .collect();
                if to.is_empty() || to == from {
                    continue;
                }
                found.entry((from.clone(), to)).or_insert_with(|| {
                    format!("{}:{}", path.strip_prefix(root()).unwrap().display(), n + 1)
                });
            }
        }
    }
    found
}

/// The top-level modules of `src/` (files and folders next to `lib.rs`).
fn modules() -> BTreeSet<String> {
    fs::read_dir(root().join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|m| m != "lib")
        .collect()
}

#[test]
fn every_module_is_on_a_floor_of_the_code_map() {
    let rule = read_rule();
    let missing: Vec<_> = modules()
        .into_iter()
        .filter(|m| !rule.floor.contains_key(m))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/src/architecture.md puts these modules of src/ on no floor: {missing:?}"
    );
    let gone: Vec<_> = rule
        .floor
        .keys()
        .filter(|m| !modules().contains(*m))
        .collect();
    assert!(
        gone.is_empty(),
        "docs/src/architecture.md lists modules src/ does not have: {gone:?}"
    );
}

#[test]
fn no_module_imports_a_floor_above_it_unless_the_code_map_says_why() {
    let rule = read_rule();
    let mut upward = Vec::new();
    let mut used_allowances = BTreeSet::new();
    for ((from, to), at) in imports() {
        let (Some(f), Some(t)) = (rule.floor.get(&from), rule.floor.get(&to)) else {
            continue; // reported by the floor test
        };
        if t > f {
            if rule.allowed.contains(&(from.clone(), to.clone())) {
                used_allowances.insert((from, to));
            } else {
                upward.push(format!(
                    "{at}: `{from}` (floor {f}) imports `{to}` (floor {t})"
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "upward imports not listed in docs/src/architecture.md:\n{}",
        upward.join("\n")
    );
    let stale: Vec<_> = rule.allowed.difference(&used_allowances).collect();
    assert!(
        stale.is_empty(),
        "docs/src/architecture.md allows upward imports the code no longer has: {stale:?}"
    );
}

#[test]
fn no_two_modules_import_each_other_in_a_circle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut at = BTreeMap::new();
    for ((from, to), place) in imports() {
        edges.entry(from.clone()).or_default().insert(to.clone());
        at.insert((from, to), place);
    }
    // Depth-first search for a back edge; the first circle found is reported with where each of its
    // imports is.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for n in edges.get(m).into_iter().flatten() {
            match state.get(n.as_str()).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(n, edges, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let start = stack.iter().position(|s| s == n).unwrap();
                    let mut circle = stack[start..].to_vec();
                    circle.push(n.clone());
                    return Some(circle);
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in edges.keys() {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0
            && let Some(circle) = visit(m, &edges, &mut state, &mut Vec::new())
        {
            let places: Vec<String> = circle
                .windows(2)
                .map(|w| {
                    format!(
                        "{} → {} ({})",
                        w[0],
                        w[1],
                        at[&(w[0].clone(), w[1].clone())]
                    )
                })
                .collect();
            panic!("import circle: {}", places.join(", "));
        }
    }
}
