//! The ready queue: a node starts as soon as every parent in the plan is done, up to `max_parallel`
//! at once; a failed node skips its descendants (with the reason), independent branches go on; Ctrl-C
//! starts nothing new and abandons what runs at its next await.
//!
//! "Done" is the target's word, not the plan's or the journal's: a node the plan keeps (skip) or the
//! interrupted run finished (`--resume`) releases its children only once its statements read RUNNING
//! or COMPLETED; one still PENDING is waited for first ([`settle`]). A journal entry the target
//! contradicts (the statement is absent, FAILED, STOPPED…) is not trusted: that node runs again. A
//! plan skip none of whose children runs is not read at all (nothing waits on it).

use super::effects::{Ctx, Settled, run_step, settle};
use super::{
    DeployOptions, DeployReport, Failure, Interruption, NodeResult, Outcome, Session, Skip,
    StatementAction, StatementResult, StepError,
};
use crate::deploy::journal::{Entry, now_secs};
use crate::deploy::spec::DeployNode;
use crate::plan::Action;
use crate::target::{Phase, StatementKind, Target};
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use tokio::time::Instant;

/// Runs the nodes and reports on each, in plan order.
pub(super) async fn run(
    target: &dyn Target,
    nodes: &[DeployNode],
    options: &DeployOptions,
    session: &Session<'_>,
) -> DeployReport {
    let start = Instant::now();
    let cancel = &session.cancel;
    let resume = &session.resume;
    let ctx = Ctx {
        target,
        options,
        journal: session.journal,
        progress: session.progress,
        scrubber: &session.scrubber,
        resume,
    };
    let mut sched = Sched::new(nodes);
    let mut running = FuturesUnordered::new();
    let mut in_flight: BTreeSet<usize> = BTreeSet::new();
    let mut interrupted = false;

    loop {
        if !interrupted && cancel.is_cancelled() {
            interrupted = true;
        }
        // Start what may start.
        while !interrupted && in_flight.len() < options.max_parallel.max(1) {
            let Some(i) = sched.ready.pop_front() else {
                break;
            };
            if sched.results[i].is_some() {
                continue;
            }
            let n = &nodes[i];
            let kept = if n.action == Action::Skip {
                Some((Skip::Plan(n.reason.clone()), false))
            } else if resume.done.contains(&n.table) {
                Some((Skip::Journal, true))
            } else {
                None
            };
            // A plan skip is checked only when a child will run on it; a journal entry always is.
            if let Some((reason, journal)) = &kept
                && (n.steps.is_empty() || !(*journal || sched.feeds_a_run(i)))
            {
                let r = NodeResult {
                    table_name: n.table.clone(),
                    action: n.action,
                    outcome: Outcome::Skipped(reason.clone()),
                    statements: vec![],
                    seconds: 0.0,
                };
                sched.finish(i, r, &ctx);
                continue;
            }
            in_flight.insert(i);
            let ctx = &ctx;
            running.push(async move {
                let r = match kept {
                    Some((reason, journal)) => run_kept(ctx, n, reason, journal).await,
                    None => run_node(ctx, n).await,
                };
                (i, r)
            });
        }
        if in_flight.is_empty() {
            break;
        }
        tokio::select! {
            Some((i, r)) = running.next() => {
                in_flight.remove(&i);
                sched.finish(i, r, &ctx);
            }
            _ = cancel.cancelled(), if !interrupted => {
                interrupted = true;
            }
        }
        if interrupted {
            break;
        }
    }
    // In-flight nodes are abandoned (their futures are dropped here).
    drop(running);
    let mut out = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        let r = sched.results[i].take().unwrap_or_else(|| NodeResult {
            table_name: n.table.clone(),
            action: n.action,
            outcome: if !interrupted {
                // Only a dependency cycle leaves a node unreached without an interruption.
                Outcome::Failed(Failure::Cycle)
            } else if in_flight.contains(&i) {
                Outcome::Interrupted(Interruption::WhileRunning)
            } else {
                Outcome::NotStarted
            },
            statements: vec![],
            seconds: 0.0,
        });
        out.push(r);
    }
    ctx.record(Entry::RunEnded {
        interrupted,
        at: now_secs(),
    });
    DeployReport {
        nodes: out,
        interrupted,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The ready queue and what is known about each node.
struct Sched<'n> {
    nodes: &'n [DeployNode],
    children: Vec<Vec<usize>>,
    /// Parents not finished yet, per node.
    waiting: Vec<usize>,
    results: Vec<Option<NodeResult>>,
    ready: VecDeque<usize>,
    /// Memo of [`Sched::runs_below`], and the nodes it has entered.
    below: Vec<Option<bool>>,
    entered: Vec<bool>,
}

impl<'n> Sched<'n> {
    /// The graph of the plan's nodes (parents outside the plan are ignored); nodes without parents
    /// in the plan are ready.
    fn new(nodes: &'n [DeployNode]) -> Self {
        let index: BTreeMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.table.as_str(), i))
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut waiting: Vec<usize> = vec![0; nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            for p in &n.parents {
                if let Some(&pi) = index.get(p.as_str()) {
                    children[pi].push(i);
                    waiting[i] += 1;
                }
            }
        }
        let ready = (0..nodes.len()).filter(|&i| waiting[i] == 0).collect();
        Sched {
            nodes,
            children,
            waiting,
            results: vec![None; nodes.len()],
            ready,
            below: vec![None; nodes.len()],
            entered: vec![false; nodes.len()],
        }
    }

    /// Whether a child of node `i` in the plan is not a plan skip (it will run, or be checked); for
    /// a node the plan read PENDING ([`DeployNode::kept_pending`]), whether any descendant is not.
    fn feeds_a_run(&mut self, i: usize) -> bool {
        if self.nodes[i].kept_pending {
            self.runs_below(i)
        } else {
            self.children[i]
                .iter()
                .any(|&c| self.nodes[c].action != Action::Skip)
        }
    }

    /// Whether a descendant of node `i` is not a plan skip; memoised, so that every node is visited
    /// once however many PENDING nodes ask (a chain of a million).
    fn runs_below(&mut self, i: usize) -> bool {
        if let Some(v) = self.below[i] {
            return v;
        }
        // Iterative post-order: a node's answer once all its children have theirs (a node met again
        // while in progress — only in a cycle, which never runs — counts as no).
        let mut stack = vec![(i, false)];
        while let Some((n, expanded)) = stack.pop() {
            if self.below[n].is_some() {
                continue;
            }
            if expanded {
                let v = self.children[n]
                    .iter()
                    .any(|&c| self.nodes[c].action != Action::Skip || self.below[c] == Some(true));
                self.below[n] = Some(v);
                continue;
            }
            if std::mem::replace(&mut self.entered[n], true) {
                continue;
            }
            stack.push((n, true));
            for &c in &self.children[n] {
                if self.below[c].is_none() && !self.entered[c] {
                    stack.push((c, false));
                }
            }
        }
        self.below[i].unwrap_or(false)
    }

    /// Marks node `i` finished and releases its children, or skips them (recursively) when it failed.
    fn finish(&mut self, i: usize, result: NodeResult, ctx: &Ctx<'_>) {
        let nodes = self.nodes;
        let blocked_reason = match &result.outcome {
            Outcome::Failed(_) => Some(Skip::ParentFailed {
                parent: nodes[i].table.clone(),
            }),
            Outcome::Skipped(r) if r.blocks_children() => Some(Skip::AncestorNotDeployed {
                ancestor: nodes[i].table.clone(),
                because: Box::new(r.clone()),
            }),
            _ => None,
        };
        self.results[i] = Some(result);
        for c in self.children[i].clone() {
            if self.results[c].is_some() {
                continue;
            }
            if let Some(reason) = &blocked_reason {
                let r = NodeResult {
                    table_name: nodes[c].table.clone(),
                    action: nodes[c].action,
                    outcome: Outcome::Skipped(reason.clone()),
                    statements: vec![],
                    seconds: 0.0,
                };
                ctx.progress
                    .node_finished(&nodes[c].table, &format!("skipped: {reason}"));
                self.finish(c, r, ctx);
            } else {
                self.waiting[c] -= 1;
                if self.waiting[c] == 0 {
                    self.ready.push_back(c);
                }
            }
        }
    }
}

/// A node the plan keeps (skip), or that the interrupted run finished (`journal`): its statements
/// are checked and a PENDING one is waited for ([`settle`]); the node is skipped with `reason` once
/// they are done. A journal-done node whose statement the target does not show done (absent, FAILED,
/// STOPPED, …) runs again. A plan skip of a statement that ran when planned
/// ([`DeployNode::kept_live`]) that reads FAILED, STOPPED, absent… now fails (its children are not
/// started on it: #29); DEGRADED still runs and counts as done. That holds for the statement the
/// plan read — the table's job (its DML), else its DDL —: the DDL statement of a table whose job
/// runs may be gone (users delete COMPLETED DDL statements) without the table being. For other plan
/// skips (out of scope, excluded) the plan's decision stands.
async fn run_kept(ctx: &Ctx<'_>, node: &DeployNode, reason: Skip, journal: bool) -> NodeResult {
    let start = Instant::now();
    let mut statements = Vec::new();
    let mut outcome = Outcome::Skipped(reason);
    let steps: Vec<_> = node.steps.iter().filter(|s| !s.is_drop).collect();
    // The statement whose phase the plan read: the job (DML) when there is one, else the DDL.
    let read_by_plan = steps
        .iter()
        .rposition(|s| s.spec.kind == StatementKind::Dml)
        .or_else(|| steps.len().checked_sub(1));
    for (i, step) in steps.into_iter().enumerate() {
        let failed = match settle(ctx, &node.table, &step.spec).await {
            Ok(Settled::Done) => None,
            Ok(Settled::Awaited(r)) => {
                statements.push(r);
                None
            }
            Ok(Settled::NotDone(state)) if journal => {
                tracing::info!(
                    "{}: the journal says done, the target says {}: running it again",
                    step.spec.name,
                    crate::plan::status::phase_or_absent(state.as_ref().map(|s| &s.phase))
                );
                return run_node(ctx, node).await;
            }
            Ok(Settled::NotDone(state))
                if !node.kept_live
                    || read_by_plan != Some(i)
                    || state.as_ref().is_some_and(|s| s.phase == Phase::Degraded) =>
            {
                None
            }
            Ok(Settled::NotDone(state)) => {
                let statement = step.spec.name.clone();
                let error = match &state {
                    Some(s) if matches!(s.phase, Phase::Failed | Phase::Failing) => {
                        StepError::Failed {
                            statement,
                            phase: s.phase.clone(),
                            detail: s.detail.clone(),
                        }
                    }
                    s => StepError::NoLongerRunning {
                        statement,
                        phase: s.as_ref().map(|s| s.phase.clone()),
                    },
                };
                let result =
                    StatementResult::new(&step.spec.name, StatementAction::Awaited, state.as_ref());
                Some((result, error))
            }
            Err(f) => Some((f.result, f.error)),
        };
        if let Some((result, error)) = failed {
            statements.push(result);
            let r = Failure::step(error, ctx.scrubber);
            ctx.record(Entry::NodeFailed {
                table: node.table.clone(),
                reason: r.to_string(),
            });
            ctx.progress
                .node_finished(&node.table, &format!("failed: {r}"));
            outcome = Outcome::Failed(r);
            break;
        }
    }
    NodeResult {
        table_name: node.table.clone(),
        action: node.action,
        outcome,
        statements,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Runs a node's statements in order; the first failure ends it.
async fn run_node(ctx: &Ctx<'_>, node: &DeployNode) -> NodeResult {
    let start = Instant::now();
    ctx.progress.node_started(&node.table);
    ctx.record(Entry::NodeStarted {
        table: node.table.clone(),
    });
    let mut statements = Vec::new();
    let mut outcome = Outcome::Done;
    for step in &node.steps {
        match run_step(ctx, node, step).await {
            Ok(r) => statements.push(r),
            Err(f) => {
                statements.push(f.result);
                outcome = Outcome::Failed(Failure::step(f.error, ctx.scrubber));
                break;
            }
        }
    }
    match &outcome {
        Outcome::Done => {
            ctx.record(Entry::NodeDone {
                table: node.table.clone(),
            });
            ctx.progress.node_finished(&node.table, "done");
        }
        Outcome::Failed(r) => {
            ctx.record(Entry::NodeFailed {
                table: node.table.clone(),
                reason: r.to_string(),
            });
            ctx.progress
                .node_finished(&node.table, &format!("failed: {r}"));
        }
        _ => {}
    }
    NodeResult {
        table_name: node.table.clone(),
        action: node.action,
        outcome,
        statements,
        seconds: start.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(i: usize, action: Action, pending: bool) -> DeployNode {
        DeployNode {
            table: format!("t{i}"),
            action,
            reason: "test".into(),
            parents: if i == 0 {
                vec![]
            } else {
                vec![format!("t{}", i - 1)]
            },
            stateless: true,
            steps: vec![],
            kept_live: action == Action::Skip,
            kept_pending: pending,
            upsert_sink: false,
        }
    }

    /// Every PENDING node of a 200,000-table chain asks whether anything below it runs: answered in
    /// linear time (the leaf is created), and only the leaf's parent is fed directly.
    #[test]
    fn pending_nodes_of_a_long_chain_are_answered_in_linear_time() {
        let n = 200_000;
        let nodes: Vec<DeployNode> = (0..n)
            .map(|i| {
                if i == n - 1 {
                    node(i, Action::Create, false)
                } else {
                    node(i, Action::Skip, true)
                }
            })
            .collect();
        let mut sched = Sched::new(&nodes);
        let start = std::time::Instant::now();
        assert!((0..n - 1).all(|i| sched.feeds_a_run(i)));
        assert!(!sched.feeds_a_run(n - 1));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        // Without a run below, no PENDING node is fed.
        let skips: Vec<DeployNode> = (0..1000).map(|i| node(i, Action::Skip, true)).collect();
        let mut sched = Sched::new(&skips);
        assert!((0..1000).all(|i| !sched.feeds_a_run(i)));
    }
}
