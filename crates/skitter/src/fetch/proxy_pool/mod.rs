//! The proxy pool: which proxy the next request goes through, which proxies
//! are benched after failing, and what each one did (for the reports).
//!
//! It owns no HTTP client: reqwest fixes the proxy per client, so the
//! [`Fetcher`](super::Fetcher) holds one client per proxy, in the pool's order,
//! and asks the pool for an index before each request and tells it the result
//! after. Kept apart from the clients, the rules (rotation, back-off, the wait
//! when every proxy is benched) are plain code tested on a paused clock.
//!
//! Benching: a proxy that fails is left out of rotation for [`ProxyBench::base`]
//! (1 s), twice as long after each further failure in a row, at most
//! [`ProxyBench::cap`] (60 s); a success clears its record. Failures reported
//! while it is already benched (requests that were in flight when it failed)
//! do not lengthen its bench, so a burst of requests counts as one failure.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use url::Url;

use super::proxy_ledger::ProxyLedger;
pub use super::proxy_stats::{Latency, ProxyStats};

/// How requests are spread over the pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Rotation {
    /// Each request takes the next proxy in turn (skipping benched ones): the
    /// load is spread evenly whatever the mix of hosts, so a crawl of one site
    /// uses the whole pool. The default.
    #[default]
    RoundRobin,
    /// Each host keeps one proxy (chosen by a hash of the host, the next good
    /// one while it is benched): a site sees one client address, and its
    /// cookies and sessions stay with one exit.
    Sticky,
}

/// How long a failing proxy is left out of rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ProxyBench {
    /// The first bench (default 1 s); doubled per further failure in a row.
    pub base: Duration,
    /// The longest bench (default 60 s); also the longest a request waits when
    /// every proxy is benched.
    pub cap: Duration,
}

impl Default for ProxyBench {
    fn default() -> Self {
        ProxyBench {
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
        }
    }
}

/// A line of a proxy list that is not a usable proxy. The line itself is not
/// repeated: it may hold a password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("proxy list line {line}: {reason}")]
pub struct ProxyListError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The schemes a proxy URL may have.
pub const PROXY_SCHEMES: [&str; 4] = ["http", "https", "socks5", "socks5h"];

/// Parses a proxy list: one proxy URL per line (`http://`, `https://`,
/// `socks5://`, `socks5h://`, with optional `user:pass@`), blank lines and
/// `#` comments (a line's rest from a `#` at its start or after a space)
/// ignored. Returns the URLs as written (credentials kept).
pub fn parse_proxy_list(text: &str) -> Result<Vec<String>, ProxyListError> {
    let mut proxies = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        // A '#' inside a URL's user info would be percent-encoded; a raw one
        // after a space can only start a comment.
        let uncommented = match raw.find(" #").or_else(|| raw.find("\t#")) {
            Some(at) => &raw[..at],
            None => raw,
        };
        let line = uncommented.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        check_proxy(line).map_err(|reason| ProxyListError {
            line: i + 1,
            reason,
        })?;
        proxies.push(line.to_string());
    }
    Ok(proxies)
}

/// Why `proxy` is not a usable proxy URL, if it is not.
fn check_proxy(proxy: &str) -> Result<(), String> {
    let url = Url::parse(proxy).map_err(|e| format!("not a proxy URL ({e})"))?;
    if !PROXY_SCHEMES.contains(&url.scheme()) {
        return Err(format!(
            "scheme {:?} is not one of http, https, socks5, socks5h",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("no host".into());
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
        return Err("a proxy URL has no path, query or fragment".into());
    }
    Ok(())
}

/// A proxy URL as it may be shown: scheme, host and port, never credentials
/// (`http://user:pass@proxy1:3128` → `http://proxy1:3128`).
pub fn shown_proxy(proxy: &str) -> String {
    match Url::parse(proxy) {
        Ok(url) if url.has_host() => match url.port_or_known_default() {
            Some(port) => format!("{}://{}:{port}", url.scheme(), url.host_str().unwrap_or("")),
            None => format!("{}://{}", url.scheme(), url.host_str().unwrap_or("")),
        },
        _ => super::head::redact_proxy(proxy),
    }
}

/// `message` with the proxy's user name and password (if any) replaced by
/// `[redacted]`: a safety net for messages built from errors.
pub(crate) fn scrub(message: &str, proxy: &str) -> String {
    let Ok(url) = Url::parse(proxy) else {
        return message.to_string();
    };
    let mut out = message.to_string();
    for secret in [url.password().unwrap_or(""), url.username()] {
        // A short user name ("u") would redact half the message; only
        // secrets long enough to be worth hiding and unlikely to collide.
        if secret.len() >= 3 {
            out = out.replace(secret, super::head::REDACTED);
        }
    }
    out
}

/// What [`ProxyPool::choose`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Use the proxy with this index.
    Ready(usize),
    /// Every proxy is benched; the first comes back at this instant.
    Wait(Instant),
}

/// The pool's rotation and health state; see the module header.
#[derive(Debug)]
pub(crate) struct ProxyPool {
    shown: Vec<String>,
    rotation: Rotation,
    bench: ProxyBench,
    next: AtomicUsize,
    /// Never held across an await.
    health: Mutex<Vec<Health>>,
    /// Where each count also goes, for a reporter elsewhere (shared crawls).
    ledger: Option<Arc<ProxyLedger>>,
}

#[derive(Debug, Default)]
struct Health {
    benched_until: Option<Instant>,
    /// Failures in a row.
    strikes: u32,
    successes: u64,
    failures: u64,
    benchings: u64,
    latency: Latency,
}

impl ProxyPool {
    /// A pool over `proxies` (as written; only their shown forms are kept).
    pub(crate) fn new(proxies: &[String], rotation: Rotation, bench: ProxyBench) -> Self {
        ProxyPool {
            shown: proxies.iter().map(|p| shown_proxy(p)).collect(),
            rotation,
            bench,
            next: AtomicUsize::new(0),
            health: Mutex::new(proxies.iter().map(|_| Health::default()).collect()),
            ledger: None,
        }
    }

    /// The pool, also adding every count to `ledger`.
    pub(crate) fn with_ledger(mut self, ledger: Option<Arc<ProxyLedger>>) -> Self {
        self.ledger = ledger;
        self
    }

    /// The shown form of proxy `i`.
    pub(crate) fn shown(&self, i: usize) -> &str {
        &self.shown[i]
    }

    fn health(&self) -> std::sync::MutexGuard<'_, Vec<Health>> {
        self.health.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The proxy for a request to `host` (`host[:port]`), or when the first
    /// benched one is back.
    pub(crate) fn choose(&self, host: &str) -> Choice {
        let n = self.shown.len();
        let start = match self.rotation {
            Rotation::RoundRobin => self.next.fetch_add(1, Ordering::Relaxed) % n,
            Rotation::Sticky => {
                // SipHash with fixed keys: the same host maps to the same
                // proxy in every run and on every worker.
                let mut h = std::hash::DefaultHasher::new();
                host.hash(&mut h);
                (h.finish() % n as u64) as usize
            }
        };
        let now = Instant::now();
        let health = self.health();
        let mut earliest: Option<Instant> = None;
        for i in (start..n).chain(0..start) {
            match health[i].benched_until {
                Some(until) if until > now => {
                    earliest = Some(earliest.map_or(until, |e| e.min(until)));
                }
                _ => return Choice::Ready(i),
            }
        }
        Choice::Wait(earliest.unwrap_or(now))
    }

    /// A proxy for a request to `host`, waiting for the first benched one to
    /// come back when every one is benched (at most one bench, so never longer
    /// than [`ProxyBench::cap`]). `Err` when they are all still benched after
    /// that wait (others failed them again meanwhile).
    pub(crate) async fn acquire(&self, host: &str) -> Result<usize, String> {
        match self.choose(host) {
            Choice::Ready(i) => return Ok(i),
            Choice::Wait(until) => {
                let cap = Instant::now() + self.bench.cap;
                tokio::time::sleep_until(until.min(cap)).await;
            }
        }
        match self.choose(host) {
            Choice::Ready(i) => Ok(i),
            Choice::Wait(_) => Err(format!(
                "every proxy of the {} is benched",
                plural(self.shown.len())
            )),
        }
    }

    /// Proxy `i` answered, `latency` after the request was sent.
    pub(crate) fn succeeded(&self, i: usize, latency: Duration) {
        let mut health = self.health();
        let h = &mut health[i];
        h.successes += 1;
        h.strikes = 0;
        h.benched_until = None;
        h.latency.add(latency);
        if let Some(ledger) = &self.ledger {
            ledger.succeeded(&self.shown[i], latency);
        }
    }

    /// Proxy `i` failed a request: it is benched unless it already is.
    pub(crate) fn failed(&self, i: usize) {
        let now = Instant::now();
        let mut health = self.health();
        let h = &mut health[i];
        h.failures += 1;
        if let Some(ledger) = &self.ledger {
            ledger.failed(&self.shown[i]);
        }
        if h.benched_until.is_some_and(|until| until > now) {
            return;
        }
        h.strikes = h.strikes.saturating_add(1);
        let bench = self
            .bench
            .base
            .saturating_mul(1u32 << (h.strikes - 1).min(20))
            .min(self.bench.cap);
        h.benched_until = Some(now + bench);
        h.benchings += 1;
        if let Some(ledger) = &self.ledger {
            ledger.benched(&self.shown[i]);
        }
        tracing::warn!(proxy = %self.shown[i], ?bench, strikes = h.strikes, "proxy benched");
    }

    /// What each proxy did so far, in the pool's order.
    pub(crate) fn stats(&self) -> Vec<ProxyStats> {
        let health = self.health();
        health
            .iter()
            .zip(&self.shown)
            .map(|(h, shown)| ProxyStats {
                proxy: shown.clone(),
                successes: h.successes,
                failures: h.failures,
                benchings: h.benchings,
                mean_ms: h.latency.mean_ms(),
                p50_ms: h.latency.quantile_ms(0.5),
            })
            .collect()
    }
}

/// Writes the per-proxy table the reports end with (nothing for no proxies):
/// one line per proxy, `Proxy: <proxy> ok N failed N benched N mean X ms p50 Y ms`.
pub fn write_table(stats: &[ProxyStats], w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let width = stats.iter().map(|s| s.proxy.len()).max().unwrap_or(0);
    for s in stats {
        writeln!(
            w,
            "Proxy: {:<width$} ok {:>6} failed {:>5} benched {:>4} mean {:>8.1} ms p50 {:>8.1} ms",
            s.proxy, s.successes, s.failures, s.benchings, s.mean_ms, s.p50_ms
        )?;
    }
    Ok(())
}

fn plural(n: usize) -> String {
    if n == 1 {
        "pool's 1 proxy".into()
    } else {
        format!("pool's {n} proxies")
    }
}

#[cfg(test)]
mod tests;
