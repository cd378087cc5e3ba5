//! One command at a time changes a project's target: the lock of the project **and** target —
//! the canonical pipelines folder, the target's identity ([`crate::target::Target::describe`]: the
//! Confluent Cloud environment and endpoint, or the SQL Gateway and JobManager) and the
//! statement-name prefix — not of a file a flag chooses (`--journal`). `pipeline deploy`, `pipeline
//! undeploy`, `pipeline decommission`, `project housekeep-statements`, `project delete-compute-pool`
//! and `statement stop|resume|delete` take it before they read the target to act on it, and hold it
//! until they end; a second one is refused ([`OpsError::Busy`]) naming the first's command and pid.
//!
//! The lock is an exclusive `flock` on `.flinkpipe/target-<hash>.lock` beside the pipelines folder
//! (the hash is of the three parts above), released when the process ends, even by a crash; the
//! holder writes itself into the file ([`LockHolder`]). Without a pipelines folder (housekeeping or
//! pool deletion run outside a project) there is no project to lock and none is taken.

use super::OpsError;
use super::target::Connected;
use crate::deploy::journal::{hostname, now_secs, try_lock};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Who holds a target lock, as it wrote itself into the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// The command (`pipeline deploy`).
    pub command: String,
    /// Its process id.
    pub pid: u32,
    /// The host it runs on.
    pub host: String,
    /// When it took the lock, Unix time in seconds.
    pub since: u64,
    /// The canonical pipelines folder.
    pub pipelines: PathBuf,
    /// The target, as [`crate::target::Target::describe`] says.
    pub target: String,
    /// The statement-name prefix.
    pub statement_prefix: String,
}

impl fmt::Display for LockHolder {
    /// `` `pipeline deploy` (pid 4242 on host build-7 since 2025-06-01 12:00:00 UTC) ``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` (pid {} on host {} since {})",
            self.command,
            self.pid,
            self.host,
            crate::time::utc_timestamp(self.since as i64)
        )
    }
}

/// A held target lock: released when dropped (or when the process ends).
#[derive(Debug)]
pub struct TargetLock {
    /// The lock file.
    pub path: PathBuf,
    _file: File,
}

/// The lock file of a project and target: `.flinkpipe/target-<16 hex digits>.lock` beside the
/// canonical pipelines folder.
pub fn lock_path(pipelines: &Path, target: &str, statement_prefix: &str) -> PathBuf {
    let canonical = canonical(pipelines);
    let key = format!("{}\n{target}\n{statement_prefix}", canonical.display());
    let hash = xxhash_rust::xxh3::xxh3_64(key.as_bytes());
    super::state_dir(&canonical).join(format!("target-{hash:016x}.lock"))
}

fn canonical(pipelines: &Path) -> PathBuf {
    pipelines.canonicalize().unwrap_or_else(|_| {
        std::path::absolute(pipelines).unwrap_or_else(|_| pipelines.to_path_buf())
    })
}

/// Takes the lock of the project of `pipelines` on the connected target with `statement_prefix`,
/// for `command`, without waiting; `Ok(None)` when `pipelines` is not a folder (no project).
///
/// Errors: [`OpsError::Busy`] naming the holder when another command holds it; the lock file cannot
/// be created or written.
pub fn lock_target(
    pipelines: &Path,
    connected: &Connected,
    statement_prefix: &str,
    command: &str,
) -> Result<Option<TargetLock>, OpsError> {
    if !pipelines.is_dir() {
        return Ok(None);
    }
    lock(
        pipelines,
        &connected.target.describe(),
        statement_prefix,
        command,
    )
    .map(Some)
}

/// [`lock_target`] with the target named by its description.
pub fn lock(
    pipelines: &Path,
    target: &str,
    statement_prefix: &str,
    command: &str,
) -> Result<TargetLock, OpsError> {
    let path = lock_path(pipelines, target, statement_prefix);
    let werr = |source| OpsError::Write {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(werr)?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(werr)?;
    if !try_lock(&file).map_err(werr)? {
        return Err(OpsError::Busy {
            holder: read_holder(&mut file).map(Box::new),
            lock: path,
            command: command.to_string(),
        });
    }
    let me = LockHolder {
        command: command.to_string(),
        pid: std::process::id(),
        host: hostname(),
        since: now_secs(),
        pipelines: canonical(pipelines),
        target: target.to_string(),
        statement_prefix: statement_prefix.to_string(),
    };
    let text = serde_json::to_string(&me).expect("plain data serialises");
    file.set_len(0).map_err(werr)?;
    file.rewind().map_err(werr)?;
    file.write_all(text.as_bytes()).map_err(werr)?;
    file.sync_data().map_err(werr)?;
    Ok(TargetLock { path, _file: file })
}

/// The holder of a taken lock. It writes itself just after taking the lock: an empty or partial
/// file is read again for a moment (up to 2 s) before the holder counts as unknown.
fn read_holder(file: &mut File) -> Option<LockHolder> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let mut text = String::new();
        if file.rewind().is_ok()
            && file.read_to_string(&mut text).is_ok()
            && let Ok(h) = serde_json::from_str(&text)
        {
            return Some(h);
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_per_project_target_and_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipelines");
        std::fs::create_dir(&p).unwrap();
        let first = lock(&p, "env-a", "dev", "pipeline deploy").unwrap();
        // Same project, target and prefix, through another spelling of the folder: refused.
        let other_spelling = dir.path().join("pipelines/../pipelines");
        let Err(OpsError::Busy { holder, .. }) =
            lock(&other_spelling, "env-a", "dev", "pipeline undeploy")
        else {
            panic!("not refused");
        };
        let h = holder.expect("holder named");
        assert_eq!(h.pid, std::process::id());
        assert_eq!(h.command, "pipeline deploy");
        // Another target or prefix: its own lock.
        let _b = lock(&p, "env-b", "dev", "pipeline deploy").unwrap();
        let _c = lock(&p, "env-a", "prod", "pipeline deploy").unwrap();
        drop(first);
        let _again = lock(&p, "env-a", "dev", "pipeline undeploy").unwrap();
    }
}
