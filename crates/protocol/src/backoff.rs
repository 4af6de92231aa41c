//! Reconnect delays as a pure function (A-5, G-10). Jitter is injected so that tests are exact.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackoffPolicy {
    /// 1 s, 2 s, 4 s, 8 s, 16 s, capped at 30 s, ±20 % jitter.
    Adapter,
    /// G-10: 1 s, 2 s, 4 s, 8 s, then 30 s. **Decision:** the same ±20 % jitter, so a fleet does not reconnect in step.
    V3,
}

/// Jitter fraction of A-5.
pub const JITTER: f64 = 0.2;

/// The delay before reconnect attempt number `failures + 1`, where `failures` counts the drops since the last
/// successful `ready` (0 for the first retry). `jitter` is in `[-1, 1]` (clamped) and scales the ±20 %.
pub fn backoff(policy: BackoffPolicy, failures: u32, jitter: f64) -> Duration {
    let base_secs: u64 = match policy {
        BackoffPolicy::Adapter => 1u64.checked_shl(failures.min(16)).unwrap_or(u64::MAX).min(30),
        BackoffPolicy::V3 => match failures {
            0 => 1,
            1 => 2,
            2 => 4,
            3 => 8,
            _ => 30,
        },
    };
    let j = if jitter.is_finite() { jitter.clamp(-1.0, 1.0) } else { 0.0 };
    Duration::from_secs_f64(base_secs as f64 * (1.0 + JITTER * j))
}

/// A small deterministic PRNG (xorshift64*) for jitter, so the state machines stay pure and seedable.
#[derive(Debug, Clone)]
pub struct Jitter(u64);

impl Jitter {
    pub fn new(seed: u64) -> Jitter {
        Jitter(seed | 1)
    }
    /// Next value in `[-1, 1)`.
    // Not an Iterator: it never ends, and callers (session.rs) want an f64, not an Option.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11; // 53 random bits
        (r as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a5_adapter_sequence_without_jitter() {
        let secs: Vec<u64> = (0..8).map(|n| backoff(BackoffPolicy::Adapter, n, 0.0).as_secs()).collect();
        assert_eq!(secs, vec![1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn g10_v3_sequence_without_jitter() {
        let secs: Vec<u64> = (0..7).map(|n| backoff(BackoffPolicy::V3, n, 0.0).as_secs()).collect();
        assert_eq!(secs, vec![1, 2, 4, 8, 30, 30, 30]);
    }

    #[test]
    fn a5_jitter_bounds_are_plus_minus_20_percent() {
        assert_eq!(backoff(BackoffPolicy::Adapter, 3, 1.0), Duration::from_secs_f64(9.6));
        assert_eq!(backoff(BackoffPolicy::Adapter, 3, -1.0), Duration::from_secs_f64(6.4));
        // out-of-range and NaN jitter cannot push the delay outside the band
        assert_eq!(backoff(BackoffPolicy::Adapter, 0, 7.0), Duration::from_secs_f64(1.2));
        assert_eq!(backoff(BackoffPolicy::Adapter, 0, f64::NAN), Duration::from_secs(1));
        assert_eq!(backoff(BackoffPolicy::Adapter, u32::MAX, 0.0), Duration::from_secs(30));
    }

    #[test]
    fn jitter_source_stays_in_range_and_varies() {
        let mut j = Jitter::new(42);
        let v: Vec<f64> = (0..1000).map(|_| j.next()).collect();
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(v.iter().any(|x| *x > 0.5) && v.iter().any(|x| *x < -0.5));
    }
}
