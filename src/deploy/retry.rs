//! Backoff policy: pure functions of the attempt number, unit-tested without sleeping.
//!
//! Used for two things: retrying a failed HTTP call (429, 5xx, connection errors;
//! `confluent-cloud-flink-api.md` §9) and spacing the polls of a statement's phase (§4: "backoff from
//! 1 s to 10–30 s with jitter and an explicit, configurable timeout on every wait").

use std::time::Duration;

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

#[cfg(test)]
mod tests {
    use super::*;

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
