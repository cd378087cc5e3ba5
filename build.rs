//! Build script: computes a fingerprint of the SQL front end for the analysis cache
//! (`src/project/cache.rs`). Cached analyses are only valid for the code that produced them, and the crate
//! version alone does not change between two builds of a work tree; hashing the sources of `src/sql/` and
//! `Cargo.lock` (which pins sqlparser) makes any change to either a cache miss.

use std::hash::{Hash, Hasher};
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=src/sql");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let mut files = Vec::new();
    collect(Path::new("src/sql"), &mut files);
    files.sort();
    // std's hasher is enough here: the value only has to be the same for one build of the binary.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in files
        .iter()
        .map(|p| p.as_path())
        .chain([Path::new("Cargo.lock")])
    {
        f.to_string_lossy().hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    println!(
        "cargo:rustc-env=FLINKPIPE_SQL_FINGERPRINT={:016x}",
        h.finish()
    );
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
