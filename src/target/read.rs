//! The read loop: pulls pages from a running query ([`ResultStream`]), folds them into a snapshot and
//! decides when to stop (as Confluent's Python driver `confluent-sql` reads a statement's results,
//! <https://pypi.org/project/confluent-sql/>; a changelog never says "consistent now", Flink's
//! dynamic tables:
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/concepts/dynamic_tables/>):
//!
//! - the end of a bounded result (Confluent: COMPLETED without `next`; gateway: `EOS`) — the snapshot
//!   is **complete**;
//! - `max_rows`: the rows printed are the first `max_rows` of the snapshot folded to the stop
//!   condition, never a changelog cut mid-way. The read itself stops at `max_rows` rows only where
//!   no later change can alter them: an append-only result (Confluent's
//!   `status.traits.is_append_only`, else [`ResultStream::append_only`]) that has sent only `+I`; with the raw changelog, at
//!   `max_rows` changes (what was asked for);
//! - `idle`: no new change for that long once changes have arrived (an unbounded query over a topic
//!   has caught up);
//! - `timeout`: wall clock since the start;
//! - cancellation (Ctrl-C).
//!
//! A snapshot boundary is a poll that returns no new change (Flink sends no "consistent now" marker):
//! with `follow`, each boundary whose rows differ from the last emitted snapshot is handed to the
//! caller. Before any stop but Ctrl-C is reported, the query's state is read once
//! ([`ResultStream::check_failed`]): a FAILED query is an error with its failure detail, never a
//! result. Whatever ends the loop, the query is closed (its statement deleted, its job cancelled).

use super::TargetError;
use crate::results::changelog::{Change, Inconsistency, Mode, Row, RowKind, Snapshot};
use crate::results::value::Column;
use serde::Serialize;
use std::time::{Duration, Instant};

/// One page of a running query's result.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The columns, once known (every page may repeat them).
    pub columns: Option<Vec<Column>>,
    /// The result's upsert key (0-based column positions), when the target says so.
    pub upsert_key: Option<Vec<usize>>,
    /// Whether the result is append-only (only `+I`), when the target says so before the rows
    /// (Confluent's `status.traits.is_append_only`); `None`: unknown (the SQL Gateway).
    pub append_only: Option<bool>,
    /// Changes in arrival order, values typed by their columns.
    pub changes: Vec<Change>,
    /// The result has ended: no more changes will come.
    pub end: bool,
}

/// A query running on a target.
#[async_trait::async_trait]
pub trait ResultStream: Send {
    /// The name it runs under (statement name; gateway job name), to find it again if left behind.
    fn name(&self) -> &str;
    /// The next page; an empty page means "nothing new yet". Implementations wait a little between
    /// empty polls themselves only when the wire asks (not ready); the loop paces the rest.
    async fn next_page(&mut self) -> Result<Page, TargetError>;
    /// Reads the query's state once, before the loop reports any stop (end, max rows, idle,
    /// timeout): `Err` with the engine's failure detail when the query FAILED (Confluent phase
    /// FAILED/FAILING; SQL Gateway operation ERROR or job FAILED), so a failed query is never
    /// reported as a complete or partial result. The default: nothing to check.
    async fn check_failed(&mut self) -> Result<(), TargetError> {
        Ok(())
    }
    /// Whether the result is append-only, asked only when the pages did not say
    /// ([`Page::append_only`]) and a row limit was reached with only `+I` received (SQL Gateway:
    /// the root of `EXPLAIN CHANGELOG_MODE` is `[I]`). `None`: unknown (the default), and the read
    /// goes on to its stop condition.
    async fn append_only(&mut self) -> Option<bool> {
        None
    }
    /// Stops the query and releases what it holds. Called exactly once, whatever ended the read.
    async fn close(&mut self) -> Result<(), TargetError>;
}

/// When to stop and what to keep.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Print at most this many rows: the first of the snapshot folded to the stop condition (see
    /// the module docs for when it also stops the read); with `changelog`, stop at this many changes.
    pub max_rows: Option<usize>,
    /// Stop after this long without a new change, once changes have arrived.
    pub idle: Duration,
    /// Stop after this long in all (`None`: no limit, e.g. `--follow` until Ctrl-C).
    pub timeout: Option<Duration>,
    /// Keep the raw changes.
    pub changelog: bool,
    /// Fold by these column names (a table's primary key) instead of the result's upsert key.
    pub key_columns: Option<Vec<String>>,
    /// The first pause after an empty poll before any change; it doubles up to
    /// [`MAX_PENDING_POLL`] while nothing comes (see [`pause_after_empty`]).
    pub poll: Duration,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_rows: None,
            idle: Duration::from_secs(5),
            timeout: Some(Duration::from_secs(60)),
            changelog: false,
            key_columns: None,
            poll: Duration::from_millis(500),
        }
    }
}

/// Why the read stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The result ended (bounded query): the snapshot is complete.
    End,
    MaxRows,
    Idle,
    Timeout,
    Interrupted,
}

/// What a read found.
#[derive(Debug, Clone, Serialize)]
pub struct QueryResult {
    /// The statement (or job) the query ran as.
    pub statement: String,
    pub columns: Vec<Column>,
    /// The snapshot's rows, in arrival order: the first `max_rows` of them.
    pub rows: Vec<Row>,
    /// Rows in the snapshot when the read stopped (more than `rows` when `max_rows` cut them).
    pub total_rows: usize,
    /// Whether the result ended (not cut by a limit, idleness, timeout or Ctrl-C).
    pub complete: bool,
    /// The snapshot is what the result held when the read stopped early (a row limit, idleness, a
    /// timeout, Ctrl-C), not its final state: `!complete`.
    pub partial: bool,
    /// The raw changes in arrival order (with `changelog`).
    pub changes: Option<Vec<Change>>,
    /// How rows were identified: the key columns, or `None` for whole rows.
    pub key: Option<Vec<String>>,
    /// Retractions of rows that were not in the result.
    pub inconsistencies: Vec<Inconsistency>,
    pub stopped_by: StopReason,
    /// Changes received.
    pub change_count: usize,
    /// Seconds from the start to the first change (`None`: none came).
    pub first_row_seconds: Option<f64>,
    pub seconds: f64,
    /// Closing the query failed (it may be left running under `statement`): the (masked) error.
    pub close_error: Option<String>,
}

/// What the loop reports while it runs (progress, `--follow` snapshots).
pub trait ReadObserver: Sync {
    /// After each page: changes received so far, rows in the snapshot, time since the start.
    fn progress(&self, _changes: usize, _rows: usize, _elapsed: Duration) {}
    /// A new snapshot (`follow` only), different from the previous one.
    fn snapshot(&self, _columns: &[Column], _rows: &[&Row]) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl ReadObserver for Quiet {}

/// Reads `stream` until a stop condition (see module docs), then closes it. `cancel` resolves on
/// Ctrl-C. `follow` hands every changed snapshot to the observer.
///
/// Errors: the target failed while reading (the query is still closed first).
pub async fn read(
    stream: &mut dyn ResultStream,
    options: &ReadOptions,
    follow: bool,
    observer: &dyn ReadObserver,
    cancel: impl std::future::Future<Output = ()>,
) -> Result<QueryResult, TargetError> {
    tokio::pin!(cancel);
    let start = Instant::now();
    let mut columns: Vec<Column> = Vec::new();
    let mut snapshot: Option<Snapshot> = None;
    let mut key: Option<Vec<String>> = None;
    let mut raw: Vec<Change> = Vec::new();
    let mut first_change: Option<Duration> = None;
    let mut last_change = start;
    let mut changes = 0usize;
    let mut emitted: Option<Vec<String>> = None;
    let mut empty_streak = 0u32;
    let mut append_only: Option<bool> = None;
    let mut only_inserts = true;
    let outcome: Result<StopReason, TargetError> = async {
        loop {
            if let Some(t) = options.timeout
                && start.elapsed() >= t
            {
                return Ok(StopReason::Timeout);
            }
            let page = tokio::select! {
                p = stream.next_page() => p?,
                _ = &mut cancel => return Ok(StopReason::Interrupted),
            };
            if let Some(c) = page.columns
                && columns.is_empty()
            {
                columns = c;
            }
            if page.append_only.is_some() {
                append_only = page.append_only;
            }
            if snapshot.is_none() && (!columns.is_empty() || !page.changes.is_empty()) {
                let (mode, k) = mode_for(&columns, options, page.upsert_key.as_deref());
                key = k;
                snapshot = Some(Snapshot::new(mode));
            }
            let got = page.changes.len();
            if got > 0 {
                empty_streak = 0;
            }
            let mut at_max = false;
            let mut consumed = 0usize;
            if got > 0 {
                first_change.get_or_insert(start.elapsed());
                last_change = Instant::now();
                let s = snapshot.as_mut().expect("created above");
                // Change by change, so that a page bigger than the limit stops exactly at it.
                for c in page.changes {
                    changes += 1;
                    consumed += 1;
                    if options.changelog {
                        raw.push(c.clone());
                    }
                    only_inserts &= c.kind == RowKind::Insert;
                    s.apply(c.kind, c.row);
                    if let Some(max) = options.max_rows {
                        // Rows of an append-only result are final: the first `max` are known.
                        // Any other result is folded to its stop condition first.
                        let reached = if options.changelog {
                            changes >= max
                        } else if only_inserts && s.len() >= max {
                            if append_only.is_none() {
                                append_only = Some(stream.append_only().await.unwrap_or(false));
                            }
                            append_only == Some(true)
                        } else {
                            false
                        };
                        if reached {
                            at_max = true;
                            break;
                        }
                    }
                }
            }
            let rows = snapshot.as_ref().map_or(0, Snapshot::len);
            observer.progress(changes, rows, start.elapsed());
            if page.end && consumed == got {
                return Ok(StopReason::End);
            }
            if at_max || options.max_rows == Some(0) {
                return Ok(StopReason::MaxRows);
            }
            if got == 0 {
                // A snapshot boundary: every change received so far is applied.
                if follow && let Some(s) = &snapshot {
                    let now = s.canonical();
                    if emitted.as_ref() != Some(&now) {
                        observer.snapshot(&columns, &first(s.rows(), options.max_rows));
                        emitted = Some(now);
                    }
                }
                if first_change.is_some() && last_change.elapsed() >= options.idle && !follow {
                    return Ok(StopReason::Idle);
                }
                empty_streak += 1;
                let pause = pause_after_empty(
                    options,
                    empty_streak,
                    first_change.map(|_| last_change.elapsed()),
                    options.timeout.map(|t| t.saturating_sub(start.elapsed())),
                );
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = &mut cancel => return Ok(StopReason::Interrupted),
                }
            }
        }
    }
    .await;
    // A failed query is a failure whatever stopped the read (Ctrl-C excepted: the user asked).
    let outcome = match outcome {
        Ok(StopReason::Interrupted) => Ok(StopReason::Interrupted),
        Ok(reason) => stream.check_failed().await.map(|()| reason),
        Err(e) => Err(e),
    };
    let close_error = stream.close().await.err().map(|e| e.to_string());
    let stopped_by = outcome?;
    let s = snapshot.unwrap_or_else(|| Snapshot::new(Mode::Multiset));
    let complete = stopped_by == StopReason::End;
    Ok(QueryResult {
        statement: stream.name().to_string(),
        columns,
        rows: first(s.rows(), options.max_rows)
            .into_iter()
            .cloned()
            .collect(),
        total_rows: s.len(),
        complete,
        partial: !complete,
        changes: options.changelog.then_some(raw),
        key,
        inconsistencies: s.inconsistencies().to_vec(),
        stopped_by,
        change_count: changes,
        first_row_seconds: first_change.map(|d| d.as_secs_f64()),
        seconds: start.elapsed().as_secs_f64(),
        close_error,
    })
}

/// The first `max` rows (all without a limit).
fn first(rows: Vec<&Row>, max: Option<usize>) -> Vec<&Row> {
    rows.into_iter().take(max.unwrap_or(usize::MAX)).collect()
}

/// The longest pause between polls of a query that has sent nothing yet (Confluent's driver backs
/// off the same way: 0.5 s doubling to 5 s).
pub const MAX_PENDING_POLL: Duration = Duration::from_secs(5);
/// The first pause after an empty page once rows are flowing.
pub const FLOWING_POLL: Duration = Duration::from_millis(150);

/// The pause after the `streak`-th empty poll in a row. Before any change (`since_last_change`
/// `None`: the statement is PENDING or warming up) `poll` doubles up to [`MAX_PENDING_POLL`]; once
/// changes flow, [`FLOWING_POLL`] doubling up to `poll`, never past the idle deadline. Never
/// longer than the time left before the timeout (`left`).
pub fn pause_after_empty(
    options: &ReadOptions,
    streak: u32,
    since_last_change: Option<Duration>,
    left: Option<Duration>,
) -> Duration {
    let doubling = |base: Duration, cap: Duration| {
        let factor = 1u32 << streak.saturating_sub(1).min(6);
        base.saturating_mul(factor).min(cap.max(base))
    };
    let mut pause = match since_last_change {
        None => doubling(options.poll, MAX_PENDING_POLL),
        Some(since) => doubling(FLOWING_POLL.min(options.poll), options.poll).min(
            options
                .idle
                .saturating_sub(since)
                .max(Duration::from_millis(10)),
        ),
    };
    if let Some(left) = left {
        pause = pause.min(left.max(Duration::from_millis(10)));
    }
    pause
}

/// How to fold: by the requested key columns when they are all in the result, else by the
/// result's upsert key, else as whole rows.
fn mode_for(
    columns: &[Column],
    options: &ReadOptions,
    upsert_key: Option<&[usize]>,
) -> (Mode, Option<Vec<String>>) {
    if let Some(names) = &options.key_columns {
        let positions: Option<Vec<usize>> = names
            .iter()
            .map(|n| columns.iter().position(|c| c.name.eq_ignore_ascii_case(n)))
            .collect();
        if let Some(p) = positions
            && !p.is_empty()
        {
            return (Mode::Keyed(p), Some(names.clone()));
        }
    }
    match upsert_key {
        Some(k) if !k.is_empty() && k.iter().all(|&i| i < columns.len().max(i + 1)) => (
            Mode::Keyed(k.to_vec()),
            Some(
                k.iter()
                    .map(|&i| columns.get(i).map_or(format!("#{i}"), |c| c.name.clone()))
                    .collect(),
            ),
        ),
        _ => (Mode::Multiset, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query that answers the given pages in turn (then the end) and notes when it was polled.
    struct Scripted {
        pages: std::collections::VecDeque<Page>,
        polls: Vec<tokio::time::Instant>,
    }

    #[async_trait::async_trait]
    impl ResultStream for Scripted {
        fn name(&self) -> &str {
            "q"
        }
        async fn next_page(&mut self) -> Result<Page, TargetError> {
            self.polls.push(tokio::time::Instant::now());
            Ok(self.pages.pop_front().unwrap_or(Page {
                end: true,
                ..Page::default()
            }))
        }
        async fn close(&mut self) -> Result<(), TargetError> {
            Ok(())
        }
    }

    /// The read loop itself on a virtual clock (no real waiting): while a statement is PENDING the
    /// pauses between polls double from 0.5 s to 5 s; once rows flow an empty page is polled again
    /// after 0.15 s, doubling to 0.5 s.
    #[tokio::test(start_paused = true)]
    async fn the_read_loop_backs_off_while_pending_and_polls_fast_once_rows_flow() {
        let mut pages: std::collections::VecDeque<Page> = (0..6).map(|_| Page::default()).collect();
        pages.push_back(Page {
            columns: Some(vec![Column {
                name: "id".into(),
                type_name: "BIGINT".into(),
            }]),
            changes: vec![Change {
                kind: RowKind::Insert,
                row: vec![serde_json::json!(1)],
            }],
            ..Page::default()
        });
        pages.extend((0..3).map(|_| Page::default()));
        let mut q = Scripted {
            pages,
            polls: Vec::new(),
        };
        let r = read(
            &mut q,
            &ReadOptions::default(),
            false,
            &Quiet,
            std::future::pending(),
        )
        .await
        .unwrap();
        assert_eq!(r.stopped_by, StopReason::End);
        let gaps: Vec<u128> = q
            .polls
            .windows(2)
            .map(|w| (w[1] - w[0]).as_millis())
            .collect();
        assert_eq!(gaps, [500, 1000, 2000, 4000, 5000, 5000, 0, 150, 300, 500]);
    }

    #[test]
    fn pending_polls_back_off_to_five_seconds_and_flowing_polls_stay_fast() {
        let o = ReadOptions::default();
        let ms = |d: Duration| d.as_millis() as u64;
        let pending: Vec<u64> = (1..=6)
            .map(|n| ms(pause_after_empty(&o, n, None, None)))
            .collect();
        assert_eq!(pending, [500, 1000, 2000, 4000, 5000, 5000]);
        let flowing: Vec<u64> = (1..=4)
            .map(|n| ms(pause_after_empty(&o, n, Some(Duration::ZERO), None)))
            .collect();
        assert_eq!(flowing, [150, 300, 500, 500]);
        // Never past the idle deadline nor the timeout.
        let near_idle = pause_after_empty(&o, 3, Some(Duration::from_millis(4_900)), None);
        assert_eq!(ms(near_idle), 100);
        let near_end = pause_after_empty(&o, 6, None, Some(Duration::from_millis(700)));
        assert_eq!(ms(near_end), 700);
    }
}
