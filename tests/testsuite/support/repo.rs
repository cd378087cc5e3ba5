//! A temporary git repository built with git2 (no `git` CLI) around a copied `pipelines/` tree.
#![allow(dead_code)]

use flinkpipe::changes::{self, ChangeOptions};
use flinkpipe::config::Config;
use git2::{IndexAddOption, Repository, Signature, Time};
use std::fs;
use std::path::PathBuf;

/// 2025-01-10 12:00 UTC.
pub const T_BASE: i64 = 1_736_510_400;
/// 2025-02-10 12:00 UTC.
pub const T_CHANGE: i64 = 1_739_188_800;

/// A git repository whose work tree holds `pipelines/` (copied from `src`), with the baseline committed on
/// `main` at [`T_BASE`].
pub struct Repo {
    pub _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub pipelines: PathBuf,
    pub repo: Repository,
}

impl Repo {
    pub fn new((tmp, pipelines): (tempfile::TempDir, PathBuf)) -> Repo {
        let root = tmp.path().to_path_buf();
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head("main");
        let repo = Repository::init_opts(&root, &opts).unwrap();
        let r = Repo {
            _tmp: tmp,
            root,
            pipelines,
            repo,
        };
        r.commit("baseline", T_BASE);
        r
    }

    /// Stages everything (additions, modifications, deletions) and commits on the current branch.
    pub fn commit(&self, msg: &str, time: i64) -> git2::Oid {
        let mut index = self.repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::new("t", "t@example.com", &Time::new(time, 0)).unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, msg, &tree, &parents)
            .unwrap()
    }

    /// Creates `name` at HEAD and makes it the current branch (the work tree already matches).
    pub fn branch(&self, name: &str) {
        let head = self.repo.head().unwrap().peel_to_commit().unwrap();
        self.repo.branch(name, &head, false).unwrap();
        self.repo.set_head(&format!("refs/heads/{name}")).unwrap();
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.pipelines.join(rel)
    }

    pub fn edit(&self, rel: &str, f: impl FnOnce(String) -> String) {
        let p = self.path(rel);
        let text = fs::read_to_string(&p).unwrap();
        let new = f(text.clone());
        assert_ne!(new, text, "edit of {rel} changed nothing");
        fs::write(p, new).unwrap();
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    pub fn head_name(&self) -> String {
        self.repo.head().unwrap().shorthand().unwrap().to_string()
    }

    pub fn head_commit(&self) -> git2::Oid {
        self.repo.head().unwrap().peel_to_commit().unwrap().id()
    }

    pub fn index_bytes(&self) -> Vec<u8> {
        fs::read(self.root.join(".git/index")).unwrap()
    }

    /// Runs the binary with `args`, then the pipelines folder and `--output-dir <root>/out`, outside
    /// the repository (see [`super::Test::outside`]).
    pub fn run(&self, args: &[&str]) -> super::test::Outcome {
        let mut all: Vec<&str> = args.to_vec();
        let out = self.root.join("out");
        fs::create_dir_all(&out).unwrap();
        let pipelines = self.pipelines.to_str().unwrap().to_string();
        let out = out.to_str().unwrap().to_string();
        all.push(&pipelines);
        all.push("--output-dir");
        all.push(&out);
        super::Test::outside(&all)
    }

    pub fn out_file(&self, name: &str) -> String {
        fs::read_to_string(self.root.join("out").join(name)).unwrap()
    }

    pub fn changes(&self, opts: ChangeOptions) -> changes::ChangeSet {
        changes::list_changes(&self.pipelines, &opts, &Config::default()).unwrap()
    }
}
