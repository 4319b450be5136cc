//! Fixed-bucket histograms of the fetched pages' response times and sizes,
//! kept by the [`Tally`](super::Tally) beside its counters.
//!
//! The buckets are constants, so the histograms are a few dozen integers each
//! whatever the crawl's size, and their upper bounds are the `le` labels a
//! Prometheus scrape shows: changing one is a change of the metrics' meaning
//! (see the metrics table in `docs/src/guide/watch.md`).

/// Upper bounds of the response-time buckets, in seconds.
pub const RESPONSE_SECONDS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Upper bounds of the page-size buckets, in bytes.
pub const PAGE_BYTES: [f64; 9] = [
    1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0, 67108864.0,
];

/// Observations in fixed buckets: how many fell at or under each bound and
/// above the last one, and their sum.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    bounds: &'static [f64],
    /// One per bound, then one for everything above the last (not cumulative).
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    /// An empty histogram over `bounds` (ascending).
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: vec![0; bounds.len() + 1],
            sum: 0.0,
        }
    }

    /// Counts one observation.
    pub fn observe(&mut self, value: f64) {
        let i = self.bounds.partition_point(|&b| b < value);
        self.counts[i] += 1;
        self.sum += value;
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Their sum.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// `(upper bound, observations at or under it)` for every bound, cumulative
    /// as Prometheus shows them; the `+Inf` bucket is [`Histogram::count`].
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut total = 0;
        self.bounds
            .iter()
            .zip(&self.counts)
            .map(|(&b, &n)| {
                total += n;
                (b, total)
            })
            .collect()
    }
}

/// The page histograms of a crawl.
#[derive(Clone, Debug, PartialEq)]
pub struct PageHistograms {
    /// Response times of fetched URLs (first attempt's start to the last's end), in seconds.
    pub response_seconds: Histogram,
    /// Body sizes of fetched URLs as received, in bytes.
    pub page_bytes: Histogram,
}

impl Default for PageHistograms {
    fn default() -> Self {
        PageHistograms {
            response_seconds: Histogram::new(&RESPONSE_SECONDS),
            page_bytes: Histogram::new(&PAGE_BYTES),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_inclusive_and_cumulative() {
        let mut h = Histogram::new(&[1.0, 10.0]);
        for v in [0.5, 1.0, 5.0, 10.0, 11.0] {
            h.observe(v);
        }
        assert_eq!(h.cumulative(), vec![(1.0, 2), (10.0, 4)]);
        assert_eq!((h.count(), h.sum()), (5, 27.5));
    }
}
