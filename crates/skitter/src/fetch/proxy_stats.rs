//! What a proxy did, in numbers that add up: [`ProxyStats`], the report's
//! line for one proxy, and [`Latency`], the histogram its mean and median
//! come from. The pool counts into them for this process's report and the
//! [`ProxyLedger`](super::ProxyLedger) for totals kept elsewhere.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

/// What one proxy did, for the reports. Latencies are from sending a request
/// to its response head.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProxyStats {
    /// The proxy, credentials removed.
    pub proxy: String,
    /// Requests that got a response through it.
    pub successes: u64,
    /// Requests it failed (connect error, timeout, 407, its own 403 or 5xx).
    pub failures: u64,
    /// Times it was benched.
    pub benchings: u64,
    /// Mean latency of its successes, in milliseconds.
    pub mean_ms: f64,
    /// Median latency of its successes, in milliseconds (to within 1/8).
    pub p50_ms: f64,
}

/// Latencies in a log-linear histogram (8 buckets per doubling, so a
/// quantile is within 1/8 of the truth) of microseconds: bounded memory
/// however many requests a crawl makes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    buckets: BTreeMap<u16, u64>,
    count: u64,
    sum_us: u128,
}

impl Latency {
    /// Records one latency.
    pub fn add(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        *self.buckets.entry(bucket_of(us)).or_default() += 1;
        self.count += 1;
        self.sum_us += u128::from(us);
    }

    /// Latencies recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sum of all latencies recorded, in microseconds.
    pub fn sum_us(&self) -> u128 {
        self.sum_us
    }

    /// The histogram: `(bucket, latencies in it)`, buckets ascending. A bucket
    /// is a small number standing for a range of microseconds (8 per
    /// doubling); see [`Latency::add_bucket`].
    pub fn buckets(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.buckets.iter().map(|(b, n)| (*b, *n))
    }

    /// Adds `n` latencies to `bucket` (one of [`Latency::buckets`]'), so a
    /// histogram stored elsewhere can be rebuilt. `false`, and nothing added,
    /// for a bucket no latency can fall in (read from garbled data).
    pub fn add_bucket(&mut self, bucket: u16, n: u64) -> bool {
        if bucket > MAX_BUCKET {
            return false;
        }
        let slot = self.buckets.entry(bucket).or_default();
        *slot = slot.saturating_add(n);
        self.count = self.count.saturating_add(n);
        true
    }

    /// Adds `us` microseconds to the sum the mean is taken from (with
    /// [`Latency::add_bucket`]).
    pub fn add_sum_us(&mut self, us: u128) {
        self.sum_us = self.sum_us.saturating_add(us);
    }

    /// Adds `other`'s latencies to these.
    pub fn merge(&mut self, other: &Latency) {
        for (bucket, n) in other.buckets() {
            self.add_bucket(bucket, n);
        }
        self.add_sum_us(other.sum_us);
    }

    /// The mean, in milliseconds (0 when empty).
    pub fn mean_ms(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        self.sum_us as f64 / self.count as f64 / 1000.0
    }

    /// The `q` quantile (0 to 1), in milliseconds: the lower bound of its
    /// bucket (0 when empty).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen: u64 = 0;
        for (&bucket, &n) in &self.buckets {
            seen = seen.saturating_add(n);
            if seen >= rank {
                return bucket_floor(bucket) as f64 / 1000.0;
            }
        }
        0.0
    }
}

/// The bucket of `u64::MAX`, the last one.
const MAX_BUCKET: u16 = 8 + 60 * 8 + 7;

/// The bucket of a value: the value itself below 8, then 8 buckets per power of two.
fn bucket_of(us: u64) -> u16 {
    if us < 8 {
        return us as u16;
    }
    let e = 63 - us.leading_zeros() as u64;
    let m = (us >> (e - 3)) & 7;
    (8 + (e - 3) * 8 + m) as u16
}

/// The smallest value in a bucket.
fn bucket_floor(b: u16) -> u64 {
    let b = u64::from(b);
    if b < 8 {
        return b;
    }
    let e = (b - 8) / 8 + 3;
    let m = (b - 8) % 8;
    (8 + m) << (e - 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_quantiles_are_within_an_eighth() {
        let mut l = Latency::default();
        assert_eq!((l.mean_ms(), l.quantile_ms(0.5)), (0.0, 0.0));
        for ms in 1..=100u64 {
            l.add(Duration::from_millis(ms));
        }
        assert_eq!(l.count(), 100);
        assert!((l.mean_ms() - 50.5).abs() < 1e-9);
        let p50 = l.quantile_ms(0.5);
        assert!((50.0 * 7.0 / 8.0..=50.0).contains(&p50), "{p50}");
        let p99 = l.quantile_ms(0.99);
        assert!((99.0 * 7.0 / 8.0..=99.0).contains(&p99), "{p99}");
        for us in [0u64, 7, 8, 9, 15, 16, 1000, u64::MAX / 2] {
            let b = bucket_of(us);
            assert!(bucket_floor(b) <= us, "{us}");
            assert!(us - bucket_floor(b) <= us / 8, "{us}");
        }
    }
}
