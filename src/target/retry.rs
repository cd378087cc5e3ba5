//! Backoff policy and the one retry loop of both targets and the executor.
//!
//! [`Backoff`] is pure (functions of the attempt number, unit-tested without sleeping). It spaces two
//! things: retries of a failed call (429, 5xx, connection errors; Confluent's error codes:
//! <https://docs.confluent.io/cloud/current/flink/operate-and-deploy/flink-rest-api.html>) and the
//! polls of a statement's phase
//! (<https://docs.confluent.io/cloud/current/flink/concepts/statements.html>): backoff from 1 s to
//! 10–30 s with jitter (as `confluent-sql` polls, <https://pypi.org/project/confluent-sql/>) and an
//! explicit, configurable timeout on every wait.
//!
//! [`retry`] runs a call until it succeeds, fails for good, or its [`Limit`] is reached: a number of
//! attempts (a target's own short retries of one request) or a point in time (the executor retries a
//! transient error for as long as the statement's `--timeout` allows). It honours `Retry-After` and
//! keeps a [`RetryLog`] of what it retried, for the message when it gives up.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// Exponential backoff with deterministic jitter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// Delay before the first retry (or the first poll).
    pub initial: Duration,
    /// Growth factor per attempt (≥ 1).
    pub factor: f64,
    /// Upper bound of a delay, before jitter.
    pub max: Duration,
    /// Relative jitter, e.g. 0.1 for ±10 %.
    pub jitter: f64,
    /// Attempts allowed in total, including the first (retry policies only; polls are bounded by a
    /// timeout instead).
    pub max_attempts: u32,
}

impl Backoff {
    /// HTTP retries: 0.5 s, ×2, cap 30 s, ±20 %, 6 attempts (the Confluent CLI retries 4 times, 1–30 s).
    pub const HTTP: Backoff = Backoff {
        initial: Duration::from_millis(500),
        factor: 2.0,
        max: Duration::from_secs(30),
        jitter: 0.2,
        max_attempts: 6,
    };

    /// Phase polls: 200 ms, ×1.5, cap 10 s, ±10 %. Starts below the reference's 1 s because DDL
    /// statements usually complete within a second and every poll saved shortens the critical path.
    pub const POLL: Backoff = Backoff {
        initial: Duration::from_millis(200),
        factor: 1.5,
        max: Duration::from_secs(10),
        jitter: 0.1,
        max_attempts: u32::MAX,
    };

    /// The delay before retry number `attempt` (0-based), before jitter.
    pub fn base_delay(&self, attempt: u32) -> Duration {
        let exp = self.factor.max(1.0).powi(attempt.min(64) as i32);
        let secs = (self.initial.as_secs_f64() * exp).min(self.max.as_secs_f64());
        Duration::from_secs_f64(secs)
    }

    /// The delay before retry number `attempt`, with jitter derived from `seed` (a hash of the
    /// statement name, say) so that parallel clients do not retry in lock-step, yet a test is
    /// reproducible.
    pub fn delay(&self, attempt: u32, seed: u64) -> Duration {
        let base = self.base_delay(attempt).as_secs_f64();
        let r = unit_random(seed ^ u64::from(attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let j = 1.0 + self.jitter * (2.0 * r - 1.0);
        Duration::from_secs_f64((base * j).max(0.0))
    }

    /// The delay to wait after a response that carried `retry_after` (`Retry-After` seconds): the
    /// server's value wins when present, capped at `max` (a hostile or buggy header cannot stall a
    /// deploy); else [`Backoff::delay`].
    pub fn delay_after(&self, attempt: u32, seed: u64, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(d) => d.min(self.max),
            None => self.delay(attempt, seed),
        }
    }

    /// Whether another attempt is allowed after `attempts` were made.
    pub fn may_retry(&self, attempts: u32) -> bool {
        attempts < self.max_attempts
    }

    /// A copy with every duration scaled by `k` (tests run the production policies in milliseconds).
    pub fn scaled(&self, k: f64) -> Backoff {
        Backoff {
            initial: self.initial.mul_f64(k),
            max: self.max.mul_f64(k),
            ..*self
        }
    }
}

/// A number in [0, 1) from a seed (splitmix64).
fn unit_random(seed: u64) -> f64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// A stable seed for a name (FNV-1a).
pub fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Parses a `Retry-After` header value: delta-seconds only (HTTP dates are not used by Confluent; an
/// unparsable value is ignored and the policy's own delay applies).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim();
    if let Ok(s) = v.parse::<u64>() {
        return Some(Duration::from_secs(s));
    }
    v.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// How long [`retry`] keeps trying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most the policy's [`Backoff::max_attempts`] attempts: a target's own retries of one request.
    Attempts,
    /// Until this instant (tokio's clock), however many attempts that takes: the last wait is cut short so that one
    /// more attempt happens at the deadline. The executor's retries, bounded by `--timeout`.
    Until(Instant),
}

/// Why a failed attempt may be repeated: the same call may succeed later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transient {
    /// A short cause, counted in the [`RetryLog`]: `HTTP 429`, `HTTP 503`, `no answer`.
    pub cause: String,
    /// The server's `Retry-After`, when it sent one.
    pub retry_after: Option<Duration>,
}

/// An error that says whether repeating the call may help.
pub trait Retryable {
    /// `Some` for a transient error (429, 5xx, no answer), `None` for a permanent one.
    fn transient(&self) -> Option<Transient>;
}

/// What [`retry`] retried: how often, for which causes, how long it waited in total.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetryLog {
    /// Retries made (attempts after the first).
    pub retries: u32,
    /// Cause → count (`HTTP 429` → 4).
    pub causes: BTreeMap<String, u32>,
    /// Total time spent waiting between attempts.
    pub waited: Duration,
}

impl RetryLog {
    /// Whether nothing was retried.
    pub fn is_empty(&self) -> bool {
        self.retries == 0
    }

    /// Notes one retry of `cause` after a wait of `delay`.
    pub fn note(&mut self, cause: &str, delay: Duration) {
        self.retries += 1;
        *self.causes.entry(cause.to_string()).or_default() += 1;
        self.waited += delay;
    }
}

impl fmt::Display for RetryLog {
    /// `retried 5 times over 12.3s (HTTP 429 ×4, no answer ×1)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let causes: Vec<String> = self
            .causes
            .iter()
            .map(|(c, n)| format!("{c} ×{n}"))
            .collect();
        write!(
            f,
            "retried {} time{} over {:.1}s ({})",
            self.retries,
            if self.retries == 1 { "" } else { "s" },
            self.waited.as_secs_f64(),
            causes.join(", ")
        )
    }
}

/// A call [`retry`] gave up on: the last error, and what was retried before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaveUp<E> {
    /// The last attempt's error (permanent, or transient when the limit was reached).
    pub error: E,
    /// The retries made before it.
    pub log: RetryLog,
}

/// Runs `op` until it succeeds, fails with a permanent error, or `limit` is reached; a transient error
/// is retried after [`Backoff::delay_after`] (the server's `Retry-After` wins, capped at
/// [`Backoff::max`]). `seed` spreads the jitter of parallel callers (see [`seed_of`]).
pub async fn retry<T, E, F, Fut>(
    policy: &Backoff,
    limit: Limit,
    seed: u64,
    mut op: F,
) -> Result<T, GaveUp<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Retryable + fmt::Display,
{
    let mut log = RetryLog::default();
    let mut attempt = 0u32;
    loop {
        let error = match op().await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        attempt += 1;
        let Some(t) = error.transient() else {
            return Err(GaveUp { error, log });
        };
        let delay = policy.delay_after(attempt - 1, seed, t.retry_after);
        let delay = match limit {
            Limit::Attempts if policy.may_retry(attempt) => delay,
            Limit::Until(deadline) => match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => delay.min(left),
                _ => return Err(GaveUp { error, log }),
            },
            Limit::Attempts => return Err(GaveUp { error, log }),
        };
        tracing::info!("{error}; retrying in {delay:.1?}");
        log.note(&t.cause, delay);
        tokio::time::sleep(delay).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error for the retry tests: transient (with an optional Retry-After) or permanent.
    #[derive(Debug, Clone, PartialEq)]
    enum E {
        Busy(Option<Duration>),
        Broken,
    }

    impl fmt::Display for E {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{self:?}")
        }
    }

    impl Retryable for E {
        fn transient(&self) -> Option<Transient> {
            match self {
                E::Busy(after) => Some(Transient {
                    cause: "HTTP 429".into(),
                    retry_after: *after,
                }),
                E::Broken => None,
            }
        }
    }

    /// Runs `retry` over scripted answers (time paused: sleeps cost nothing and are exact).
    async fn scripted(
        limit: impl FnOnce() -> Limit,
        answers: Vec<Result<u32, E>>,
    ) -> (Result<u32, GaveUp<E>>, usize) {
        let mut it = answers.into_iter();
        let mut calls = 0;
        let policy = Backoff::HTTP;
        let limit = limit();
        let r = retry(&policy, limit, 7, || {
            calls += 1;
            let next = it.next().unwrap_or(Err(E::Busy(None)));
            async move { next }
        })
        .await;
        (r, calls)
    }

    #[tokio::test(start_paused = true)]
    async fn retry_counts_attempts_and_stops_on_a_permanent_error() {
        let (r, calls) =
            scripted(|| Limit::Attempts, vec![Err(E::Busy(None)), Err(E::Broken)]).await;
        let g = r.unwrap_err();
        assert_eq!((g.error, calls, g.log.retries), (E::Broken, 2, 1));
        // Six attempts, then the last transient error.
        let (r, calls) = scripted(|| Limit::Attempts, vec![]).await;
        let g = r.unwrap_err();
        assert_eq!((calls, g.log.retries), (6, 5));
        assert_eq!(g.log.causes["HTTP 429"], 5);
        let (r, calls) = scripted(|| Limit::Attempts, vec![Err(E::Busy(None)), Ok(3)]).await;
        assert_eq!((r.unwrap(), calls), (3, 2));
    }

    #[tokio::test(start_paused = true)]
    async fn retry_until_a_deadline_keeps_going_past_the_attempt_count() {
        let start = Instant::now();
        let deadline = start + Duration::from_secs(600);
        // 20 transient errors (more than the policy's 6 attempts), then success.
        let mut answers: Vec<Result<u32, E>> = (0..20).map(|_| Err(E::Busy(None))).collect();
        answers.push(Ok(1));
        let (r, calls) = scripted(|| Limit::Until(deadline), answers).await;
        assert_eq!((r.unwrap(), calls), (1, 21));
        // Nothing but errors: gives up at the deadline, after a last attempt there.
        let start = Instant::now();
        let deadline = start + Duration::from_secs(100);
        let (r, _) = scripted(|| Limit::Until(deadline), vec![]).await;
        let g = r.unwrap_err();
        // (The timer wheel rounds each sleep up to the millisecond.)
        assert!(Instant::now() >= deadline);
        assert!(g.log.waited > Duration::from_secs(99), "{:?}", g.log.waited);
        assert!(
            g.log.to_string().starts_with("retried ") && g.log.to_string().contains("HTTP 429 ×"),
            "{}",
            g.log
        );
    }

    #[tokio::test(start_paused = true)]
    async fn retry_honours_retry_after() {
        let start = Instant::now();
        let (r, _) = scripted(
            || Limit::Attempts,
            vec![Err(E::Busy(Some(Duration::from_secs(7)))), Ok(1)],
        )
        .await;
        assert_eq!(r.unwrap(), 1);
        assert_eq!(Instant::now() - start, Duration::from_secs(7));
    }

    #[test]
    fn grows_and_caps() {
        let b = Backoff::HTTP;
        assert_eq!(b.base_delay(0), Duration::from_millis(500));
        assert_eq!(b.base_delay(1), Duration::from_secs(1));
        assert_eq!(b.base_delay(3), Duration::from_secs(4));
        assert_eq!(b.base_delay(20), Duration::from_secs(30));
    }

    #[test]
    fn jitter_stays_within_bounds_and_is_deterministic() {
        let b = Backoff::POLL;
        for attempt in 0..20 {
            for seed in [1u64, 42, seed_of("dev-usw2-dml-x")] {
                let base = b.base_delay(attempt).as_secs_f64();
                let d = b.delay(attempt, seed).as_secs_f64();
                assert!(
                    d >= base * 0.9 - 1e-9 && d <= base * 1.1 + 1e-9,
                    "{d} vs {base}"
                );
                assert_eq!(b.delay(attempt, seed), b.delay(attempt, seed));
            }
        }
        assert_ne!(b.delay(3, 1), b.delay(3, 2));
    }

    #[test]
    fn retry_after_wins() {
        let b = Backoff::HTTP;
        assert_eq!(
            b.delay_after(0, 1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(
            b.delay_after(0, 1, Some(Duration::from_secs(1000))),
            Duration::from_secs(30)
        );
        assert_eq!(b.delay_after(0, 1, None), b.delay(0, 1));
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn attempts_are_bounded() {
        let b = Backoff::HTTP;
        assert!(b.may_retry(5));
        assert!(!b.may_retry(6));
    }

    #[test]
    fn scaled_for_tests() {
        let b = Backoff::POLL.scaled(0.01);
        assert_eq!(b.initial, Duration::from_millis(2));
        assert_eq!(b.max, Duration::from_millis(100));
    }
}
