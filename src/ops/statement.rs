//! `statement stop|resume|delete NAME`: one statement on the configured target, waiting until it is
//! STOPPED, RUNNING or gone. Also the wait-for-the-goal step that `undeploy` and `decommission` use for
//! every statement they act on.

use super::target::{self, Connected};
use super::{Context, OpsError};
use crate::deploy::executor;
use crate::project::LoadOptions;
use crate::target::{Phase, StatementState, Target};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// What to do to a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementVerb {
    /// Stop it (Confluent: `spec.stopped = true`; gateway: `STOP JOB … WITH SAVEPOINT`); it can be
    /// resumed.
    Stop,
    /// Resume a stopped statement from where it stopped.
    Resume,
    /// Delete it (gateway: cancel the job without savepoint); its table stays.
    Delete,
}

impl StatementVerb {
    /// `stop`, `resume`, `delete`.
    pub fn as_str(self) -> &'static str {
        match self {
            StatementVerb::Stop => "stop",
            StatementVerb::Resume => "resume",
            StatementVerb::Delete => "delete",
        }
    }

    /// `Stop`, `Resume`, `Delete` (a question or a heading).
    pub fn capitalised(self) -> &'static str {
        match self {
            StatementVerb::Stop => "Stop",
            StatementVerb::Resume => "Resume",
            StatementVerb::Delete => "Delete",
        }
    }

    /// `stopped`, `resumed`, `deleted`.
    pub fn past(self) -> &'static str {
        match self {
            StatementVerb::Stop => "stopped",
            StatementVerb::Resume => "resumed",
            StatementVerb::Delete => "deleted",
        }
    }

    /// Whether a statement in this state has reached the verb's goal: STOPPED (or ended: COMPLETED,
    /// FAILED, gone) for stop, RUNNING or COMPLETED for resume, gone for delete.
    pub fn reached(self, s: Option<&StatementState>) -> bool {
        match self {
            StatementVerb::Stop => s.is_none_or(|s| s.phase.has_ended()),
            StatementVerb::Resume => {
                s.is_some_and(|s| matches!(s.phase, Phase::Running | Phase::Completed))
            }
            StatementVerb::Delete => s.is_none(),
        }
    }
}

impl std::fmt::Display for StatementVerb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One statement, acted on.
#[derive(Debug, Clone)]
pub struct StatementRequest {
    pub name: String,
    pub verb: StatementVerb,
    /// Longest wait for the goal.
    pub timeout: Duration,
    /// The project whose SQL the SQL Gateway needs to resume a job (it keeps no statement text):
    /// `$PIPELINES`, else `./pipelines` when it exists.
    pub pipelines: Option<PathBuf>,
}

/// The statement after the verb.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementOutcome {
    pub statement: String,
    pub action: StatementVerb,
    /// The phase reached; `None` once deleted (serialised `absent`).
    #[serde(serialize_with = "crate::plan::status::serialize_or_absent")]
    pub phase: Option<Phase>,
    /// The target's detail (e.g. the savepoint a gateway job was stopped with).
    pub detail: String,
    /// What the server says beyond the phase: the offsets a stopped statement stopped at, its
    /// exceptions when it failed, state limit, warnings ([`crate::target::ServerNotes`]).
    #[serde(flatten)]
    pub server: crate::target::ServerNotes,
}

/// Applies `req.verb` to one statement and waits for its goal.
///
/// Errors: no statement of that name (with the closest existing name), the target cannot be
/// reached, refuses, or the goal is not reached in time.
pub fn act(ctx: &Context, req: &StatementRequest) -> Result<StatementOutcome, OpsError> {
    let cfg = match &req.pipelines {
        Some(d) => ctx.project_config(d)?,
        None => ctx.config()?,
    };
    let project = match &req.pipelines {
        Some(d) if target::TargetKind::of(&cfg) == target::TargetKind::SqlGateway => Some(
            crate::project::load(
                d,
                &cfg,
                LoadOptions {
                    allow_unknown: true,
                },
            )
            .map_err(|e| {
                OpsError::Target(format!("reading the project in {}: {e}", d.display()))
            })?,
        ),
        _ => None,
    };
    let c = target::connect(&cfg, project.as_ref())?;
    let _lock = match &req.pipelines {
        Some(d) => super::lock::lock_target(
            d,
            &c,
            &crate::plan::StatementNaming::from_config(&cfg).prefix,
            &format!("statement {}", req.verb),
        )?,
        None => None,
    };
    let rt = target::runtime()?;
    // A name that does not exist is an error, not a success: a typo while decommissioning must show.
    let existing = rt
        .block_on(c.target.get_statement(&req.name))
        .map_err(|e| c.error(&format!("{} {}", req.verb, req.name), e))?;
    if existing.is_none() {
        let live = rt.block_on(target::live_statements(&c))?;
        return Err(OpsError::StatementNotFound {
            name: req.name.clone(),
            target: c.scrubber.scrub(&c.target.describe()),
            hint: crate::plan::suggest(&req.name, live.keys()),
        });
    }
    let r = rt.block_on(apply(&c, &req.name, req.verb, req.timeout));
    let s = match r {
        Ok(s) => s,
        Err(e) => {
            // Why it did not reach its goal: the newest exception, when the server has one.
            let why = rt
                .block_on(c.target.exceptions(&req.name))
                .ok()
                .and_then(|x| x.into_iter().next())
                .map(|x| format!(" (latest exception: {}: {})", x.name, x.message))
                .unwrap_or_default();
            return Err(c.error(&format!("{} {}", req.verb, req.name), format!("{e}{why}")));
        }
    };
    let mut server = s
        .as_ref()
        .map(|s| (*s.meta.notes).clone())
        .unwrap_or_default();
    if let Some(s) = &s {
        server.exceptions = rt.block_on(super::status::exceptions_of(&c, s));
    }
    Ok(StatementOutcome {
        statement: req.name.clone(),
        action: req.verb,
        detail: s.as_ref().map(|s| s.detail.clone()).unwrap_or_default(),
        phase: s.map(|s| s.phase),
        server,
    })
}

/// Sends `verb` for `name` and waits (polling with backoff) until the goal is reached or `timeout`
/// passes. Returns the last state (`None`: gone).
pub async fn apply(
    c: &Connected,
    name: &str,
    verb: StatementVerb,
    timeout: Duration,
) -> Result<Option<StatementState>, crate::target::TargetError> {
    apply_on(c.target.as_ref(), name, verb, timeout).await
}

/// The result of acting on one statement ([`act_in_order`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Done {
    pub statement: String,
    /// The phase reached: `None` when acting failed (serialised `null`), `Some(None)` once deleted
    /// (serialised `absent`).
    #[serde(serialize_with = "crate::plan::status::serialize_reached")]
    pub phase: Option<Option<Phase>>,
    /// `None`: done; else the (masked) error.
    pub error: Option<String>,
}

/// Applies `verb` to each statement of `names` in order, waiting for each goal ([`apply_on`]); a
/// failure is recorded (its message masked with `scrubber`) and the next one tried. What
/// `decommission` and `rollback` do with the statements they planned.
pub async fn act_in_order<'a>(
    target: &dyn Target,
    names: impl IntoIterator<Item = &'a str>,
    verb: StatementVerb,
    timeout: Duration,
    scrubber: &crate::target::Scrubber,
) -> Vec<Done> {
    let mut out = Vec::new();
    for name in names {
        out.push(match apply_on(target, name, verb, timeout).await {
            Ok(s) => Done {
                statement: name.to_string(),
                phase: Some(s.map(|s| s.phase)),
                error: None,
            },
            Err(e) => Done {
                statement: name.to_string(),
                phase: None,
                error: Some(scrubber.scrub(&format!("{verb} {name}: {e}"))),
            },
        });
    }
    out
}

/// [`apply`] on any [`Target`] (an in-memory one in tests).
pub async fn apply_on(
    target: &dyn Target,
    name: &str,
    verb: StatementVerb,
    timeout: Duration,
) -> Result<Option<StatementState>, crate::target::TargetError> {
    if !request_on(target, name, verb).await? {
        return Ok(None);
    }
    wait_on(target, name, verb, timeout).await
}

/// Sends `verb` for `name`. Returns whether there is a goal to wait for (`false`: a delete found
/// the statement gone already).
async fn request_on(
    target: &dyn Target,
    name: &str,
    verb: StatementVerb,
) -> Result<bool, crate::target::TargetError> {
    match verb {
        StatementVerb::Stop => target.stop_statement(name).await?,
        StatementVerb::Resume => target.resume_statement(name).await?,
        StatementVerb::Delete => return target.delete_statement(name).await,
    }
    Ok(true)
}

/// Polls `name` (with backoff) until `verb`'s goal is reached or `timeout` passes.
async fn wait_on(
    target: &dyn Target,
    name: &str,
    verb: StatementVerb,
    timeout: Duration,
) -> Result<Option<StatementState>, crate::target::TargetError> {
    let poll = crate::target::Backoff::POLL;
    executor::wait_until(target, name, timeout, poll, |s| verb.reached(s)).await
}

/// What [`act_watched`] did: one [`Done`] per statement it got to, in order, and the signal that
/// ended it early, if one did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acted {
    pub results: Vec<Done>,
    /// The signal (SIGINT, SIGTERM, SIGHUP) after which no further statement was started.
    pub interrupted: Option<super::signals::Interrupt>,
}

/// [`act_in_order`], recorded and interruptible, for `decommission` and `rollback`:
/// `requested(name)` is called as soon as the target accepted the verb for a statement, before its
/// goal is awaited (the caller journals it; an error there stops the sequence, since what follows
/// could not be recorded); a signal of `signals` (SIGINT, SIGTERM, SIGHUP) ends the wait of the
/// statement under way — its request was sent and recorded, its result says it was not confirmed —
/// and no further statement is started. A request already sent is never abandoned half-way.
pub async fn act_watched<'a>(
    target: &dyn Target,
    names: impl IntoIterator<Item = &'a str>,
    verb: StatementVerb,
    timeout: Duration,
    scrubber: &crate::target::Scrubber,
    requested: &mut dyn FnMut(&str) -> Result<(), String>,
    mut signals: Option<&mut super::signals::Interrupts>,
) -> Acted {
    use futures_util::FutureExt;
    let mut out = Acted {
        results: Vec::new(),
        interrupted: None,
    };
    let failed = |name: &str, e: String| Done {
        statement: name.to_string(),
        phase: None,
        error: Some(scrubber.scrub(&format!("{verb} {name}: {e}"))),
    };
    for name in names {
        if let Some(s) = signals.as_deref_mut()
            && let Some(which) = s.recv().now_or_never()
        {
            out.interrupted = Some(which);
            break;
        }
        let wait = match request_on(target, name, verb).await {
            Ok(w) => w,
            Err(e) => {
                out.results.push(failed(name, e.to_string()));
                continue;
            }
        };
        if let Err(e) = requested(name) {
            out.results.push(failed(name, e));
            break;
        }
        if !wait {
            out.results.push(Done {
                statement: name.to_string(),
                phase: Some(None),
                error: None,
            });
            continue;
        }
        let waited = match signals.as_deref_mut() {
            Some(s) => {
                tokio::select! {
                    r = wait_on(target, name, verb, timeout) => Ok(r),
                    which = s.recv() => Err(which),
                }
            }
            None => Ok(wait_on(target, name, verb, timeout).await),
        };
        out.results.push(match waited {
            Ok(Ok(s)) => Done {
                statement: name.to_string(),
                phase: Some(s.map(|s| s.phase)),
                error: None,
            },
            Ok(Err(e)) => failed(name, e.to_string()),
            Err(which) => {
                out.interrupted = Some(which);
                failed(
                    name,
                    format!(
                        "interrupted ({}) before the target confirmed it: the request was sent",
                        which.as_str()
                    ),
                )
            }
        });
        if out.interrupted.is_some() {
            break;
        }
    }
    out
}
