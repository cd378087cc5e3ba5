//! The documentation stays walkable: the generated command reference is fresh, the README is short and
//! starts with the two commands, every relative link of the README and the book resolves, and every
//! page of the book is in its `SUMMARY.md`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book_pages() -> Vec<PathBuf> {
    let src = root().join("docs/src");
    let mut pages: Vec<PathBuf> = walkdir::WalkDir::new(&src)
        .into_iter()
        .map(|e| e.expect("walk docs/src").into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

/// The targets of inline markdown links `[text](target)` outside fenced code blocks and code spans.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut fence = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        // Drop code spans so `a](b)` inside backticks is not read as a link.
        let mut plain = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                plain.push(c);
            }
        }
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((n + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    found
}

fn is_relative(target: &str) -> bool {
    !(target.is_empty()
        || target.starts_with('#')
        || target.contains("://")
        || target.starts_with("mailto:"))
}

#[test]
fn command_reference_is_generated_from_the_clap_definitions() {
    let path = root().join("docs/src/reference/commands.md");
    let generated = flinkpipe::cli::reference::markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        fs::write(&path, &generated).expect("write docs/src/reference/commands.md");
        return;
    }
    let current = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "docs/src/reference/commands.md is stale (the clap definitions changed): regenerate it with \
         `UPDATE_DOCS=1 cargo test --test testsuite docs::` and commit it"
    );
}

#[test]
fn readme_is_short_and_starts_with_the_two_commands() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.len() <= 15_000,
        "README.md is {} bytes, over 15,000: move detail into docs/src/",
        readme.len()
    );
    let head: Vec<&str> = readme.lines().take(8).collect();
    let demo = head.iter().position(|l| l.starts_with("make demo "));
    let test = head.iter().position(|l| l.starts_with("make test "));
    assert!(
        matches!((demo, test), (Some(d), Some(t)) if d < t),
        "README.md must start with the `make demo` and `make test` lines: {head:?}"
    );
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_resolves() {
    let mut files = vec![root().join("README.md")];
    files.extend(book_pages());
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("read page");
        let dir = file.parent().expect("a folder");
        for (line, target) in links(&text) {
            if !is_relative(&target) {
                continue;
            }
            let path = target.split('#').next().unwrap_or("");
            if !dir.join(path).exists() {
                broken.push(format!(
                    "{}:{line}: {target}",
                    file.strip_prefix(root()).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken relative links:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_link_reader_sees_links_and_skips_code() {
    let text = "see [a](guide/a.md#x) and `[b](no.md)`\n```\n[c](no.md)\n```\n[d](https://x.org)";
    let got: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
    assert_eq!(got, vec!["guide/a.md#x", "https://x.org"]);
    assert!(!is_relative("https://x.org") && !is_relative("#anchor") && is_relative("a.md"));
}

#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let src = root().join("docs/src");
    let summary = fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<PathBuf> = links(&summary)
        .into_iter()
        .map(|(_, t)| src.join(t))
        .collect();
    let unlisted: Vec<String> = book_pages()
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "SUMMARY.md"))
        .filter(|p| !listed.contains(p))
        .map(|p| relative(&p, &src))
        .collect();
    assert!(
        unlisted.is_empty(),
        "pages missing from docs/src/SUMMARY.md: {unlisted:?}"
    );
    for p in &listed {
        assert!(
            p.exists(),
            "SUMMARY.md lists a missing page: {}",
            relative(p, &src)
        );
    }
}

fn relative(p: &Path, base: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}

/// The book builds with `mdbook build` when mdbook is installed (on `PATH`, or named by
/// `FLINKPIPE_MDBOOK`), with no warning (an unclosed HTML tag, a broken link); skipped otherwise,
/// as CI need not install it.
#[test]
fn the_book_builds_without_warnings_when_mdbook_is_installed() {
    let mdbook = std::env::var("FLINKPIPE_MDBOOK").unwrap_or_else(|_| "mdbook".into());
    let Ok(version) = std::process::Command::new(&mdbook)
        .arg("--version")
        .output()
    else {
        eprintln!("mdbook is not installed: the book was not built");
        return;
    };
    assert!(version.status.success());
    let out = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(&mdbook)
        .arg("build")
        .arg(root().join("docs"))
        .arg("-d")
        .arg(out.path())
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{log}");
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .collect();
    assert!(warnings.is_empty(), "{}", warnings.join("\n"));
    assert!(out.path().join("index.html").is_file());
}
