//! Random jitter for politeness gaps and retry back-off: a duration drawn
//! uniformly up to a bound.

use std::time::Duration;

use rand::RngExt;

/// A uniformly random duration in `0..=max`, for politeness and retry jitter.
pub(crate) fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rand::rng().random_range(0..=nanos))
}
