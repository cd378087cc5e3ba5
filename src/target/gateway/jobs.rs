//! Jobs on the JobManager REST API
//! (<https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/ops/rest_api/>): a statement is
//! found again as the
//! newest job named after it (or, for a materialized table, the refresh job carrying its name in the
//! job parameters); its phase, failure cause, stop savepoint and deployed SQL (by hash) are read from
//! the job. A deleted statement whose job had already ended stays in the JobManager's history, so
//! its deletion is remembered ([`JobBook`]), across runs when a file is configured.

use super::GatewayTarget;
use super::wire::{self, JobOverview};
use crate::target::{Phase, Restored, StatementState, TargetError};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What this process knows about jobs that the JobManager cannot tell later.
#[derive(Debug, Default)]
pub(super) struct JobBook {
    /// Jobs whose statement was deleted (a FAILED or FINISHED job stays in the JobManager's history;
    /// deleting its statement hides it).
    deleted: BTreeSet<String>,
    /// Where `deleted` is kept across runs (a JSON list of job ids); `None`: this process only.
    file: Option<PathBuf>,
    /// Savepoints taken by stops in this process: job id → path.
    savepoints: BTreeMap<String, String>,
}

impl JobBook {
    /// The book, with the deleted jobs read from `file` (a missing or unreadable file means nothing
    /// was deleted yet).
    pub fn load(file: Option<PathBuf>) -> JobBook {
        let deleted = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        JobBook {
            deleted,
            file,
            savepoints: BTreeMap::new(),
        }
    }

    /// Whether the statement of this job was deleted.
    pub fn is_deleted(&self, jid: &str) -> bool {
        self.deleted.contains(jid)
    }

    /// Remembers that the statement of `jid` was deleted, in the file when one is configured.
    /// Errors: the file cannot be written (`name` is the statement, for the message).
    pub fn delete(&mut self, jid: &str, name: &str) -> Result<(), TargetError> {
        self.deleted.insert(jid.to_string());
        let Some(f) = &self.file else {
            return Ok(());
        };
        let write = || -> std::io::Result<()> {
            if let Some(dir) = f.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let text = serde_json::to_vec_pretty(&self.deleted).map_err(std::io::Error::other)?;
            crate::fsutil::write_atomic(f, &text)
        };
        write().map_err(|e| {
            TargetError::Config(format!(
                "{name}: cannot record the deletion in {}: {e}",
                f.display()
            ))
        })
    }

    /// The savepoint a stop in this process took for `jid`.
    pub fn savepoint(&self, jid: &str) -> Option<&String> {
        self.savepoints.get(jid)
    }

    /// Remembers the savepoint of a stop.
    pub fn stopped_with(&mut self, jid: &str, path: &str) {
        self.savepoints.insert(jid.to_string(), path.to_string());
    }
}

impl GatewayTarget {
    fn book(&self) -> std::sync::MutexGuard<'_, JobBook> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every job of the cluster (`GET /jobs/overview`).
    pub(super) async fn jobs(&self) -> Result<Vec<JobOverview>, TargetError> {
        let v = self.http.get(self.http.jm("jobs/overview")).await?;
        let jobs: Vec<JobOverview> = v
            .get("jobs")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| TargetError::Config(format!("unexpected /jobs/overview answer: {e}")))?
            .unwrap_or_default();
        Ok(jobs)
    }

    /// The newest job of a statement, ignoring jobs whose statement this process deleted. A
    /// materialized table's refresh job is named by Flink after the table, so it must also carry the
    /// statement's name in its job parameters (two projects may deploy the same table name).
    pub(super) async fn newest(&self, jobs: &[JobOverview], name: &str) -> Option<JobOverview> {
        fn newest_first(mut v: Vec<&JobOverview>) -> Vec<&JobOverview> {
            v.sort_by_key(|j| std::cmp::Reverse((j.start_time, wire::job_is_live(&j.state))));
            v
        }
        // Only the newest job speaks for the statement: an older one (stopped before a resume,
        // failed before a restart) never comes back when the newest is deleted.
        let hidden = |j: &JobOverview| self.book().is_deleted(&j.jid);
        let direct = newest_first(jobs.iter().filter(|j| j.name == name).collect());
        if let Some(j) = direct.first() {
            return (!hidden(j)).then(|| (*j).clone());
        }
        // A materialized table's refresh job: by table when the project is known, else any refresh
        // job; either way it must carry the statement's name in its job parameters.
        let table = self.defs.materialized_table(name);
        if table.is_none() && self.defs.statement(name).is_some() {
            return None;
        }
        let refresh = newest_first(
            jobs.iter()
                .filter(|j| match table {
                    Some(t) => wire::is_materialized_job(&j.name, t),
                    None => j.name.starts_with("Materialized_table_"),
                })
                .collect(),
        );
        for j in refresh {
            if self.job_tag(&j.jid, wire::TAG_STATEMENT).await.as_deref() == Some(name) {
                return (!hidden(j)).then(|| j.clone());
            }
        }
        None
    }

    /// A flinkpipe tag of a job (`pipeline.global-job-parameters`, `/jobs/{id}/config`), if any.
    pub(super) async fn job_tag(&self, jid: &str, key: &str) -> Option<String> {
        self.job_tags(jid).await.remove(key)
    }

    /// Every string job parameter of a job (`/jobs/{id}/config` → `execution-config.user-config`);
    /// empty when the JobManager does not answer.
    pub(super) async fn job_tags(&self, jid: &str) -> BTreeMap<String, String> {
        let Ok(config) = self
            .http
            .get(self.http.jm(&format!("jobs/{jid}/config")))
            .await
        else {
            return BTreeMap::new();
        };
        config
            .pointer("/execution-config/user-config")
            .and_then(Value::as_object)
            .map(|u| {
                u.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Where the newest job of `name` restored its state from (`/jobs/{id}/checkpoints` →
    /// `latest.restored`); `None` when it has no job or started without state.
    pub(super) async fn restored_of(&self, name: &str) -> Result<Option<Restored>, TargetError> {
        let jobs = self.jobs().await?;
        let Some(job) = self.newest(&jobs, name).await else {
            return Ok(None);
        };
        let cps = self
            .http
            .get(self.http.jm(&format!("jobs/{}/checkpoints", job.jid)))
            .await?;
        Ok(wire::restored_from(&cps).map(|(path, savepoint)| Restored {
            job: job.jid.clone(),
            path,
            savepoint,
        }))
    }

    /// The statement state of a job: phase, and detail (failure cause, savepoint path), SQL and
    /// properties read back by hash.
    pub(super) async fn job_state(
        &self,
        name: &str,
        job: &JobOverview,
    ) -> Result<Option<StatementState>, TargetError> {
        let mut detail = String::new();
        let mut stopped_sp = None;
        if job.state == "FINISHED" {
            stopped_sp = self.book().savepoint(&job.jid).cloned();
        }
        if job.state == "FINISHED" && stopped_sp.is_none() {
            let cps = self
                .http
                .get(self.http.jm(&format!("jobs/{}/checkpoints", job.jid)))
                .await
                .unwrap_or(Value::Null);
            stopped_sp = wire::stop_savepoint(&cps);
        }
        let Some(mut phase) = wire::job_phase(&job.state, stopped_sp.is_some()) else {
            return Ok(None);
        };
        if phase == Phase::Running {
            // A RUNNING job may still be deploying its tasks (or about to fail on a missing topic):
            // it counts as running once every task runs.
            let details = self
                .http
                .get(self.http.jm(&format!("jobs/{}", job.jid)))
                .await
                .unwrap_or(Value::Null);
            if let Some((running, total)) = wire::tasks_running(&details)
                && running < total
            {
                phase = Phase::Pending;
                detail = format!("{running} of {total} tasks running");
            }
        }
        if let Some(sp) = &stopped_sp {
            detail = format!("stopped with savepoint {sp}");
        }
        if matches!(phase, Phase::Failed | Phase::Failing | Phase::Degraded) {
            let ex = self
                .http
                .get(self.http.jm(&format!("jobs/{}/exceptions", job.jid)))
                .await
                .unwrap_or(Value::Null);
            detail = wire::job_failure(&ex).unwrap_or_default();
        }
        let tags = self.job_tags(&job.jid).await;
        let tag = |k: &str| tags.get(k).map(String::as_str);
        let sql_tag = tag(wire::TAG_SQL);
        let props_tag = tag(wire::TAG_PROPERTIES);
        // The text the job carries (jobs deployed since flinkpipe keeps it), else the project's
        // when the hash matches, else a comment that reads as no statement.
        let (carried_sql, carried_props) = wire::deployed_texts(
            sql_tag,
            tag(wire::TAG_SQL_TEXT),
            props_tag,
            tag(wire::TAG_PROPERTIES_TEXT),
        );
        let spec = self.defs.statement(name);
        let sql = match (spec, carried_sql) {
            (Some(spec), _) if sql_tag == Some(wire::sql_hash(&spec.sql).as_str()) => {
                spec.sql.clone()
            }
            (_, Some(text)) => text,
            (Some(_), None) => format!(
                "-- deployed SQL is not the project's current text (job {}, hash {})",
                job.jid,
                sql_tag.unwrap_or("none")
            ),
            (None, None) => format!("-- job {} (SQL not in the project)", job.jid),
        };
        let properties = match (spec, carried_props) {
            (Some(spec), _)
                if props_tag == Some(wire::properties_hash(&spec.properties).as_str()) =>
            {
                spec.properties.clone()
            }
            (_, Some(p)) => p,
            _ => BTreeMap::new(),
        };
        Ok(Some(StatementState {
            name: name.to_string(),
            stopped: phase == Phase::Stopped,
            meta: Default::default(),
            phase,
            detail,
            sql,
            properties,
        }))
    }

    /// The stop savepoint of a stopped job.
    pub(super) async fn savepoint_of(&self, job: &JobOverview) -> Option<String> {
        if let Some(sp) = self.book().savepoint(&job.jid) {
            return Some(sp.clone());
        }
        let cps = self
            .http
            .get(self.http.jm(&format!("jobs/{}/checkpoints", job.jid)))
            .await
            .ok()?;
        wire::stop_savepoint(&cps)
    }

    /// Remembers the savepoint a stop of `jid` took.
    pub(super) fn stopped_with(&self, jid: &str, path: &str) {
        self.book().stopped_with(jid, path);
    }

    /// Hides an ended job whose statement was deleted (persisted when a file is configured).
    pub(super) fn forget_job(&self, jid: &str, name: &str) -> Result<(), TargetError> {
        self.book().delete(jid, name)
    }
}
