//! The one rule for every write into a project: nothing is written, renamed, created or deleted
//! through a symbolic link that leaves the root the command was given (the pipelines folder).
//!
//! The scan follows symbolic links (teams link shared tables in), so a table folder, its `tests/` or
//! a product folder may be a link to a folder outside the tree: reading through it is allowed, writing
//! is not. A [`Confinement`] checks every folder a file is written into, from the root down: a folder
//! that is a link is resolved (`canonicalize`) and must stay under the root's own resolved path; a
//! folder that does not exist yet is fine (flinkpipe creates it as a real folder, not a link); a link
//! that cannot be resolved (dangling, a loop) is refused, as is a path with `..` below the root. A
//! link inside the project that stays inside is fine. The file itself may be a link: replacing it is
//! a rename over the link, which never touches what it points to.
//!
//! [`super::Batch`] checks every file it stages (so every batch writer gets the rule), and
//! [`write_atomic_within`] / [`create_dir_all_within`] do it for single writes and folders.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::RwLock;

/// Why a path may not be written: where it leaves the root.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {why}; nothing is written, renamed or deleted through it", link.display())]
pub struct Escape {
    /// The folder (a symbolic link, or the path itself) through which the write would leave the root.
    pub link: PathBuf,
    /// What is wrong with it.
    pub why: EscapeReason,
}

/// How a path leaves its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscapeReason {
    /// A symbolic link whose target (resolved) is outside the root (resolved).
    LinkOutside { target: PathBuf, root: PathBuf },
    /// A symbolic link that cannot be resolved (dangling, or a loop).
    UnresolvableLink,
    /// The path is not under the root at all, or climbs out of it with `..`.
    OutsideRoot { root: PathBuf },
}

impl std::fmt::Display for EscapeReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EscapeReason::LinkOutside { target, root } => write!(
                f,
                "is a symbolic link to {}, outside the project ({})",
                target.display(),
                root.display()
            ),
            EscapeReason::UnresolvableLink => {
                write!(f, "is a symbolic link that cannot be resolved")
            }
            EscapeReason::OutsideRoot { root } => {
                write!(f, "is outside the project ({})", root.display())
            }
        }
    }
}

impl From<Escape> for std::io::Error {
    fn from(e: Escape) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, e)
    }
}

/// The root a command writes under, and the folders already found to stay under it (checked once
/// each, so that a batch of 100,000 files costs one lookup per file). Shared between threads.
#[derive(Debug)]
pub struct Confinement {
    /// The root made absolute (lexically, as given).
    root: PathBuf,
    /// The root resolved (`None`: it does not exist, and nothing can be written under it anyway).
    resolved: Option<PathBuf>,
    safe: RwLock<HashSet<PathBuf>>,
}

impl Confinement {
    /// The confinement of the tree at `root`.
    pub fn new(root: &Path) -> Confinement {
        Confinement {
            root: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            resolved: std::fs::canonicalize(root).ok(),
            safe: RwLock::new(HashSet::new()),
        }
    }

    /// Checks that writing the file `path` (creating, replacing or removing it) goes through no
    /// folder that leaves the root.
    ///
    /// Errors: the [`Escape`] (the link, and why).
    pub fn check_file(&self, path: &Path) -> Result<(), Escape> {
        match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => self.check_dir(dir).map_err(|e| {
                if e.link == dir && matches!(e.why, EscapeReason::OutsideRoot { .. }) {
                    Escape {
                        link: path.to_path_buf(),
                        why: e.why,
                    }
                } else {
                    e
                }
            }),
            _ => self.check_dir(Path::new(".")),
        }
    }

    /// Checks that the folder `dir` (existing or to be created) is under the root and reached through
    /// no link that leaves it; the folder itself may be a link that stays inside.
    ///
    /// Errors: the [`Escape`].
    pub fn check_dir(&self, dir: &Path) -> Result<(), Escape> {
        let Some(resolved_root) = &self.resolved else {
            return Ok(());
        };
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        if self.is_safe(&abs) {
            return Ok(());
        }
        let outside = || Escape {
            link: dir.to_path_buf(),
            why: EscapeReason::OutsideRoot {
                root: self.root.clone(),
            },
        };
        let Ok(rel) = abs.strip_prefix(&self.root) else {
            // Another spelling of a folder of the root (through a link to it, say): its deepest
            // existing ancestor, resolved, must be under the resolved root.
            let mut probe = abs.as_path();
            loop {
                if let Ok(r) = std::fs::canonicalize(probe) {
                    return if r.starts_with(resolved_root)
                        && !abs.strip_prefix(probe).is_ok_and(climbs)
                    {
                        Ok(())
                    } else {
                        Err(outside())
                    };
                }
                match probe.parent() {
                    Some(p) => probe = p,
                    None => return Err(outside()),
                }
            }
        };
        if climbs(rel) {
            return Err(outside());
        }
        let mut cur = self.root.clone();
        for c in rel.components() {
            cur.push(c);
            if self.is_safe(&cur) {
                continue;
            }
            match std::fs::symlink_metadata(&cur) {
                // Not there yet: created as a real folder below folders already checked.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&cur) {
                    Ok(target) if target.starts_with(resolved_root) => {}
                    Ok(target) => {
                        return Err(Escape {
                            link: cur,
                            why: EscapeReason::LinkOutside {
                                target,
                                root: resolved_root.clone(),
                            },
                        });
                    }
                    Err(_) => {
                        return Err(Escape {
                            link: cur,
                            why: EscapeReason::UnresolvableLink,
                        });
                    }
                },
                // A folder, a file (the write then fails on its own), or unreadable (likewise).
                _ => {}
            }
            self.safe
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(cur.clone());
        }
        Ok(())
    }

    fn is_safe(&self, abs: &Path) -> bool {
        abs == self.root
            || self
                .safe
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(abs)
    }
}

/// Whether a relative path climbs (`..`) or jumps (a root, a prefix) out of where it starts.
fn climbs(rel: &Path) -> bool {
    rel.components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Where `path` is, or would be once created: every existing part resolved (symbolic links, `..`
/// after a link taken physically), the rest appended as written, `.` dropped and `..` taken as the
/// parent. Two paths name the same place when their resolutions are equal, and one is inside the other
/// when its resolution starts with the other's, though neither exists yet.
pub fn resolve(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut cur = PathBuf::new();
    let mut exists = true;
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                cur.pop();
            }
            other => {
                cur.push(other);
                if exists {
                    match std::fs::canonicalize(&cur) {
                        Ok(real) => cur = real,
                        Err(_) => exists = std::fs::symlink_metadata(&cur).is_ok(),
                    }
                }
            }
        }
    }
    cur
}

/// [`super::write_atomic_changed`] of a file of the tree at `root`, after [`Confinement::check_file`].
///
/// Errors: an [`Escape`] (as an `io::Error` of kind `PermissionDenied`, nothing written), or those of
/// [`super::write_atomic_changed`].
pub fn write_atomic_within(root: &Path, path: &Path, contents: &[u8]) -> std::io::Result<bool> {
    Confinement::new(root).check_file(path)?;
    super::write_atomic_changed(path, contents)
}

/// `create_dir_all(dir)` for a folder of the tree at `root`, after [`Confinement::check_dir`]: no
/// folder is created through a link that leaves the root.
///
/// Errors: an [`Escape`] (as an `io::Error` of kind `PermissionDenied`, nothing created), or those of
/// `create_dir_all`.
pub fn create_dir_all_within(root: &Path, dir: &Path) -> std::io::Result<()> {
    Confinement::new(root).check_dir(dir)?;
    std::fs::create_dir_all(dir)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_that_leave_the_root_are_refused_and_links_inside_are_fine() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("pipelines");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("facts/p/t")).unwrap();
        std::fs::create_dir_all(root.join("shared/u")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        symlink(&outside, root.join("facts/p/t/tests")).unwrap();
        symlink(root.join("shared/u"), root.join("facts/p/u")).unwrap();
        symlink("../../shared", root.join("facts/p/rel")).unwrap();
        symlink(dir.path().join("gone"), root.join("facts/p/dangling")).unwrap();
        let c = Confinement::new(&root);
        let e = c
            .check_file(&root.join("facts/p/t/tests/x.sql"))
            .unwrap_err();
        assert_eq!(e.link, root.join("facts/p/t/tests"));
        assert!(
            matches!(e.why, EscapeReason::LinkOutside { .. }),
            "{e}: {:?}",
            e.why
        );
        // Below the link too, and for a folder to be created under it.
        assert!(c.check_dir(&root.join("facts/p/t/tests/a/b")).is_err());
        assert!(c.check_file(&root.join("facts/p/u/x.sql")).is_ok());
        assert!(c.check_file(&root.join("facts/p/rel/u/x.sql")).is_ok());
        assert!(c.check_file(&root.join("facts/p/t/new/x.sql")).is_ok());
        assert!(c.check_file(&root.join("x.json")).is_ok());
        assert_eq!(
            c.check_file(&root.join("facts/p/dangling/x"))
                .unwrap_err()
                .why,
            EscapeReason::UnresolvableLink
        );
        assert!(c.check_file(&root.join("facts/../../x")).is_err());
        assert!(c.check_file(&outside.join("x")).is_err());
        // The verdict is the same when asked again (from the cache).
        assert!(c.check_file(&root.join("facts/p/t/tests/y.sql")).is_err());
        assert!(c.check_file(&root.join("facts/p/u/y.sql")).is_ok());
        // A root that is itself a link: its folders are inside.
        let alias = dir.path().join("alias");
        symlink(&root, &alias).unwrap();
        let c = Confinement::new(&alias);
        assert!(c.check_file(&alias.join("facts/p/u/x.sql")).is_ok());
        assert!(c.check_file(&root.join("facts/p/u/x.sql")).is_ok());
        assert!(c.check_file(&alias.join("facts/p/t/tests/x.sql")).is_err());
        // Resolution: through links and `..`, for folders that exist and that do not.
        assert_eq!(
            resolve(&alias.join("facts/new/../p")),
            resolve(&root.join("facts/p"))
        );
        assert_eq!(
            resolve(&alias.join("a/b/../c")),
            std::fs::canonicalize(&root).unwrap().join("a/c")
        );
        assert!(
            resolve(&root.join("facts/p/t/tests/new"))
                .starts_with(std::fs::canonicalize(&outside).unwrap())
        );
        // Nothing was created or written by the checks.
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        assert!(write_atomic_within(&root, &root.join("facts/p/t/tests/z"), b"x").is_err());
        assert!(create_dir_all_within(&root, &root.join("facts/p/t/tests/d")).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}
