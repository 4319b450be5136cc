//! Per-proxy counts in a shared crawl's totals: how a worker's
//! [`ProxyTally`]s become fields of the crawl's `:stats` hash, and how the
//! whole crawl's per-proxy table is read back from them.
//!
//! Each proxy has a few fields, `proxy|<shown>|<what>`: `ok`, `failed`,
//! `benched`, `lat_us` (the latency sum, µs) and `lat_<bucket>` (the latency
//! histogram, see [`Latency::buckets`](crate::fetch::proxy_stats::Latency::buckets)). `<shown>` is the proxy as reports show
//! it (scheme, host, port; never credentials) and cannot hold a `|` (a URL
//! host cannot). Being plain `HINCRBY` totals in the same hash as the other
//! counters, they get the same care: a field that is not a number is reported
//! and left out, and a field whose name makes no sense is ignored.

use std::collections::BTreeMap;

use crate::fetch::{ProxyStats, ProxyTally};

/// The start of every per-proxy field.
pub const PROXY_FIELD: &str = "proxy|";

/// `tally` of proxy `shown` as `(field, increment)` pairs (zeros left out).
pub fn proxy_fields(shown: &str, tally: &ProxyTally) -> Vec<(String, u64)> {
    let field = |what: &str| format!("{PROXY_FIELD}{shown}|{what}");
    let sum = u64::try_from(tally.latency.sum_us()).unwrap_or(u64::MAX);
    let mut fields = vec![
        (field("ok"), tally.successes),
        (field("failed"), tally.failures),
        (field("benched"), tally.benchings),
        (field("lat_us"), sum),
    ];
    for (bucket, n) in tally.latency.buckets() {
        fields.push((field(&format!("lat_{bucket}")), n));
    }
    fields.retain(|(_, n)| *n > 0);
    fields
}

/// Takes the per-proxy fields out of `counters` (a crawl's totals) and
/// returns the per-proxy table they add up to, by proxy name.
pub fn take_proxy_stats(counters: &mut BTreeMap<String, u64>) -> Vec<ProxyStats> {
    let mut tallies: BTreeMap<String, ProxyTally> = BTreeMap::new();
    counters.retain(|name, n| {
        let Some(rest) = name.strip_prefix(PROXY_FIELD) else {
            return true;
        };
        if let Some((shown, what)) = rest.rsplit_once('|') {
            let tally = tallies.entry(shown.to_string()).or_default();
            if !add(tally, what, *n) {
                tracing::warn!("ignoring the crawl-wide total {name:?}: not a known proxy counter");
            }
        }
        false
    });
    tallies
        .iter()
        .map(|(shown, tally)| tally.stats(shown))
        .collect()
}

/// Adds `n` to the counter `what` of `tally`; `false` if there is no such counter.
fn add(tally: &mut ProxyTally, what: &str, n: u64) -> bool {
    let slot = match what {
        "ok" => &mut tally.successes,
        "failed" => &mut tally.failures,
        "benched" => &mut tally.benchings,
        "lat_us" => {
            tally.latency.add_sum_us(u128::from(n));
            return true;
        }
        _ => {
            let bucket = what.strip_prefix("lat_").and_then(|b| b.parse().ok());
            return bucket.is_some_and(|b| tally.latency.add_bucket(b, n));
        }
    };
    *slot = slot.saturating_add(n);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn tally(latencies_ms: &[u64], failures: u64, benchings: u64) -> ProxyTally {
        let mut t = ProxyTally {
            failures,
            benchings,
            ..ProxyTally::default()
        };
        for ms in latencies_ms {
            t.successes += 1;
            t.latency.add(Duration::from_millis(*ms));
        }
        t
    }

    /// Two workers' fields, summed as Redis would, read back as the table one
    /// process holding all the counts would show.
    #[test]
    fn fields_from_two_workers_add_up() {
        let (a, b) = (tally(&[10, 20, 30], 1, 1), tally(&[40, 50], 2, 0));
        let mut counters = BTreeMap::from([("html".to_string(), 5)]);
        for (field, n) in proxy_fields("http://127.0.0.1:3128", &a)
            .into_iter()
            .chain(proxy_fields("http://127.0.0.1:3128", &b))
        {
            *counters.entry(field).or_default() += n;
        }
        let mut whole = a.clone();
        whole.merge(&b);
        assert_eq!(whole.latency.count(), 5);
        let got = take_proxy_stats(&mut counters);
        assert_eq!(got, vec![whole.stats("http://127.0.0.1:3128")]);
        assert_eq!(got[0].successes, 5);
        assert_eq!((got[0].failures, got[0].benchings), (3, 1));
        assert_eq!(got[0].mean_ms, 30.0);
        assert_eq!(counters, BTreeMap::from([("html".to_string(), 5)]));
    }

    #[test]
    fn nonsense_fields_are_dropped_without_panicking() {
        let mut counters: BTreeMap<String, u64> = [
            ("proxy|http://p:1|ok", 2),
            ("proxy|http://p:1|lat_9999", 7),
            ("proxy|http://p:1|lat_x", 7),
            ("proxy|http://p:1|lat_us", u64::MAX),
            ("proxy|http://p:1|lat_500", u64::MAX),
            ("proxy|http://p:1|wat", 1),
            ("proxy|nobar", 3),
            ("proxy|http://p:1|lat_495", u64::MAX),
            ("proxy|http://p:1|lat_20", 1),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let got = take_proxy_stats(&mut counters);
        assert!(counters.is_empty(), "{counters:?}");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].successes, 2);
        assert!(got[0].mean_ms.is_finite() && got[0].p50_ms.is_finite());
    }
}
