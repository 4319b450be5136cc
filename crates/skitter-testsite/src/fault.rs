//! Fault modes: what makes the test site behave like the real web rather than a
//! clean lab. A [`Faults`] spec says which share of URLs fail, how and how often,
//! whether robots.txt is unavailable for a while, whether the site rate-limits,
//! and whether it goes down as a whole for a spell. Which URLs fail is decided
//! by a seeded hash of the path, so a run is reproducible.
//!
//! Spec syntax (`--faults`), comma-separated `key=value`:
//! `fail=0.1` share of URLs that fail before they answer; `times=1` how often
//! each fails; `status=503` the failing status; `retry-after=2` seconds sent
//! with failures (and with 429s); `reset=0.2` share of failures that reset the
//! connection instead; `stall=2s` failures stall this long first; `robots=3`
//! robots.txt answers 503 to its first 3 requests; `rate=500` answers 429 above
//! 500 requests per second; `outage=1s+3s` every response is 503 from 1 s after
//! start for 3 s; `from-pass=1` nothing fails before the site's pass 1 (see
//! [`crate::Versions`]; passes count from 0, so this is a recrawl's second
//! crawl), and the outage's clock starts with that pass; `dns=0.1` share of
//! virtual host names whose first `dns-times` lookups (default `times`) the
//! site's DNS server answers SERVFAIL (see
//! [`crate::dns::ResponderBuilder::faults`]); `seed=7`.
//!
//! With virtual hosts each host is its own site, as on the web: which of its
//! URLs fail is decided by the hash of host and path, its robots.txt fails
//! its own first requests, and the rate limit counts its own requests. The
//! outage takes every host down at once (a shared server going down).

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The fault modes of one site (all off by default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    /// Share (0–1) of URLs that fail before they answer.
    pub fail_rate: f64,
    /// How many times each failing URL fails (0 acts as 1).
    pub fail_times: u32,
    /// The status failing URLs answer (default 503).
    pub fail_status: Option<u16>,
    /// `Retry-After` seconds sent with failures and 429s.
    pub retry_after: Option<u64>,
    /// Share (0–1) of failures that reset the connection instead of answering.
    pub reset_rate: f64,
    /// Failures first stall this long.
    pub stall: Duration,
    /// robots.txt answers 503 to its first this-many requests.
    pub robots_failures: u32,
    /// Requests per second above which the site answers 429.
    pub rate_limit: Option<u32>,
    /// Every response is 503 from `.0` after start, for `.1`.
    pub outage: Option<(Duration, Duration)>,
    /// Share (0–1) of virtual host names whose first lookups (see
    /// [`Faults::dns_times`]) fail (SERVFAIL) at the site's DNS server.
    pub dns_fail_rate: f64,
    /// How many lookups of a failing name fail (0: `fail_times`, at least 1).
    pub dns_fail_times: u32,
    /// Seeds the choice of failing URLs.
    pub seed: u64,
    /// No fault is served before this pass of a versioned site (passes count
    /// from 0, the default: from the start); the outage's clock starts at the
    /// first request of it.
    pub from_pass: u32,
}

impl Faults {
    /// Whether any fault is on.
    pub fn any(&self) -> bool {
        *self != Faults::default()
    }

    /// Whether `path` is one of the URLs that fail (before answering); with
    /// virtual hosts, `path` is the host's name followed by the path
    /// (`h7.sites.test/p/3`).
    pub fn fails(&self, path: &str) -> bool {
        self.fail_rate > 0.0 && unit(self.seed, path) < self.fail_rate
    }

    /// Whether lookups of `name` (lower case, no trailing dot) fail their
    /// first [`Faults::dns_times`] times.
    pub fn dns_fails(&self, name: &str) -> bool {
        self.dns_fail_rate > 0.0 && unit(self.seed ^ 0xd25, name) < self.dns_fail_rate
    }

    /// How many lookups of a failing name fail.
    pub fn dns_times(&self) -> u32 {
        match self.dns_fail_times {
            0 => self.fail_times.max(1),
            n => n,
        }
    }
}

impl FromStr for Faults {
    type Err = String;

    fn from_str(spec: &str) -> Result<Faults, String> {
        let mut f = Faults::default();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("fault {part:?} is not key=value"))?;
            let bad = |e: String| format!("fault {key}: {e}");
            let num = |v: &str| v.parse::<f64>().map_err(|e| bad(e.to_string()));
            let int = |v: &str| v.parse::<u64>().map_err(|e| bad(e.to_string()));
            let share = |v: &str| match num(v)? {
                x if (0.0..=1.0).contains(&x) => Ok(x),
                x => Err(bad(format!("{x} is not a share between 0 and 1"))),
            };
            match key {
                "fail" => f.fail_rate = share(value)?,
                "times" => {
                    f.fail_times = int(value)?
                        .try_into()
                        .map_err(|_| bad("too large".into()))?
                }
                "status" => {
                    f.fail_status = Some(
                        int(value)?
                            .try_into()
                            .map_err(|_| bad("not a status".into()))?,
                    )
                }
                "retry-after" => f.retry_after = Some(int(value)?),
                "reset" => f.reset_rate = share(value)?,
                "stall" => f.stall = duration(value).map_err(bad)?,
                "robots" => {
                    f.robots_failures = int(value)?
                        .try_into()
                        .map_err(|_| bad("too large".into()))?
                }
                "rate" => f.rate_limit = Some(int(value)?.clamp(1, u32::MAX as u64) as u32),
                "outage" => {
                    let (start, len) = value
                        .split_once('+')
                        .ok_or_else(|| bad("expected START+LENGTH".into()))?;
                    f.outage = Some((duration(start).map_err(bad)?, duration(len).map_err(bad)?));
                }
                "dns" => f.dns_fail_rate = share(value)?,
                "dns-times" => {
                    f.dns_fail_times = int(value)?
                        .try_into()
                        .map_err(|_| bad("too large".into()))?
                }
                "seed" => f.seed = int(value)?,
                "from-pass" => {
                    f.from_pass = int(value)?
                        .try_into()
                        .map_err(|_| bad("too large".into()))?
                }
                other => return Err(format!("unknown fault {other:?}")),
            }
        }
        Ok(f)
    }
}

fn duration(v: &str) -> Result<Duration, String> {
    let (n, unit) = match v.strip_suffix("ms") {
        Some(n) => (n, 0.001),
        None => (v.strip_suffix('s').unwrap_or(v), 1.0),
    };
    let secs = n.parse::<f64>().map_err(|e| e.to_string())? * unit;
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

/// A stable number in [0, 1) for `(seed, path)`.
fn unit(seed: u64, path: &str) -> f64 {
    // FNV-1a, then a splitmix step: stable across runs and platforms.
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for b in path.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// What the site does instead of answering normally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Answer this status (with `Retry-After` seconds, if set).
    Status(u16, Option<u64>),
    /// Drop the connection.
    Reset,
}

/// The live state of the faults: failures served per URL, the rate window.
pub(crate) struct FaultState {
    faults: Faults,
    /// When faults began: at start, or at the first request of `from_pass`.
    started: OnceLock<Instant>,
    /// Failures served so far, by host and path.
    failed: Mutex<HashMap<String, u32>>,
    /// Each host's rate window: when it began, requests in it.
    windows: Mutex<HashMap<usize, (Instant, u32)>>,
}

/// Which request [`FaultState::judge`] judges.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Target<'a> {
    /// The virtual host's index (0 for a site without virtual hosts).
    pub(crate) host: usize,
    /// The virtual host's name, `""` for a site without virtual hosts.
    pub(crate) name: &'a str,
    /// The request's path.
    pub(crate) path: &'a str,
}

impl FaultState {
    pub(crate) fn new(faults: Faults) -> Self {
        let now = Instant::now();
        let started = OnceLock::new();
        if faults.from_pass == 0 {
            let _ = started.set(now);
        }
        FaultState {
            faults,
            started,
            failed: Mutex::new(HashMap::new()),
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// How long a failure stalls first.
    pub(crate) fn stall(&self) -> Duration {
        self.faults.stall
    }

    /// The fault to serve for this request in the site's `pass`, if any.
    pub(crate) fn judge(&self, target: Target<'_>, pass: u32) -> Option<Fault> {
        let Target { host, name, path } = target;
        let f = &self.faults;
        if !f.any() || pass < f.from_pass {
            return None;
        }
        let now = Instant::now();
        let started = *self.started.get_or_init(|| now);
        if let Some((start, len)) = f.outage {
            let t = now.duration_since(started);
            if t >= start && t < start + len {
                return Some(Fault::Status(503, f.retry_after));
            }
        }
        if let Some(limit) = f.rate_limit {
            let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
            let w = windows.entry(host).or_insert((now, 0));
            if now.duration_since(w.0) >= Duration::from_secs(1) {
                *w = (now, 0);
            }
            w.1 += 1;
            if w.1 > limit {
                return Some(Fault::Status(429, f.retry_after));
            }
        }
        // The host's name and the path: on a site without virtual hosts, the path.
        let key = format!("{name}{path}");
        let (failing, times) = if path == "/robots.txt" {
            (f.robots_failures > 0, f.robots_failures)
        } else {
            (f.fails(&key), f.fail_times.max(1))
        };
        if !failing {
            return None;
        }
        let reset = path != "/robots.txt" && unit(f.seed ^ 0x5eed, &key) < f.reset_rate;
        let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        let n = failed.entry(key).or_default();
        if *n >= times {
            return None;
        }
        *n += 1;
        Some(if reset {
            Fault::Reset
        } else {
            let status = if path == "/robots.txt" {
                503
            } else {
                f.fail_status.unwrap_or(503)
            };
            Fault::Status(status, f.retry_after)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request to `path` of a site without virtual hosts.
    fn at(path: &str) -> Target<'_> {
        Target {
            host: 0,
            name: "",
            path,
        }
    }

    #[test]
    fn spec_parses_and_rejects() {
        let f: Faults = "fail=0.1,times=2,status=500,retry-after=3,reset=0.5,stall=250ms,robots=2,rate=100,outage=1s+2s,dns=0.25,dns-times=4,seed=9,from-pass=3"
            .parse()
            .unwrap();
        assert_eq!(f.fail_rate, 0.1);
        assert_eq!(
            (f.fail_times, f.fail_status, f.retry_after),
            (2, Some(500), Some(3))
        );
        assert_eq!(f.stall, Duration::from_millis(250));
        assert_eq!(
            f.outage,
            Some((Duration::from_secs(1), Duration::from_secs(2)))
        );
        assert_eq!((f.robots_failures, f.rate_limit, f.seed), (2, Some(100), 9));
        assert_eq!((f.from_pass, f.dns_fail_rate, f.dns_times()), (3, 0.25, 4));
        for bad in [
            "fail=2",
            "dns=1.5",
            "nope=1",
            "fail",
            "outage=1s",
            "stall=x",
        ] {
            assert!(bad.parse::<Faults>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_failing_share_is_about_the_rate_and_fails_times() {
        let f: Faults = "fail=0.1,times=2,seed=1".parse().unwrap();
        let failing = (0..10_000).filter(|i| f.fails(&format!("/p/{i}"))).count();
        assert!((800..1200).contains(&failing), "{failing}");
        let path = (0..)
            .map(|i| format!("/p/{i}"))
            .find(|p| f.fails(p))
            .unwrap();
        let state = FaultState::new(f);
        assert_eq!(state.judge(at(&path), 0), Some(Fault::Status(503, None)));
        assert_eq!(state.judge(at(&path), 0), Some(Fault::Status(503, None)));
        assert_eq!(state.judge(at(&path), 0), None, "then it answers");
    }

    #[test]
    fn robots_fails_its_first_requests() {
        let state = FaultState::new("robots=1".parse().unwrap());
        assert_eq!(
            state.judge(at("/robots.txt"), 0),
            Some(Fault::Status(503, None))
        );
        assert_eq!(state.judge(at("/robots.txt"), 0), None);
        assert_eq!(state.judge(at("/p/1"), 0), None);
    }

    #[test]
    fn rate_limit_answers_429_above_it() {
        let state = FaultState::new("rate=3,retry-after=1".parse().unwrap());
        let answers: Vec<_> = (0..5).map(|_| state.judge(at("/p/1"), 0)).collect();
        assert_eq!(answers[..3], [None, None, None]);
        assert_eq!(answers[3], Some(Fault::Status(429, Some(1))));
    }

    #[test]
    fn faults_wait_for_their_pass() {
        let state = FaultState::new("robots=1,outage=0s+10s,from-pass=1".parse().unwrap());
        assert_eq!(state.judge(at("/robots.txt"), 0), None);
        assert_eq!(state.judge(at("/p/1"), 0), None);
        assert_eq!(state.judge(at("/p/1"), 1), Some(Fault::Status(503, None)));
    }

    #[test]
    fn each_virtual_host_fails_on_its_own() {
        let f: Faults = "fail=0.2,times=1,robots=1,rate=2,seed=3".parse().unwrap();
        let state = FaultState::new(f.clone());
        let host = |k: usize, name: &'static str, path: &'static str| Target {
            host: k,
            name,
            path,
        };
        // robots.txt of every host fails its own first request.
        for (k, name) in [(0, "h0.sites.test"), (1, "h1.sites.test")] {
            assert_eq!(
                state.judge(host(k, name, "/robots.txt"), 0),
                Some(Fault::Status(503, None)),
                "{name}"
            );
        }
        // Each host has its own rate window (robots.txt counted in it).
        assert_eq!(
            state.judge(host(0, "h0.sites.test", "/robots.txt"), 0),
            None
        );
        assert_eq!(
            state.judge(host(0, "h0.sites.test", "/robots.txt"), 0),
            Some(Fault::Status(429, None))
        );
        assert_eq!(
            state.judge(host(1, "h1.sites.test", "/robots.txt"), 0),
            None
        );
        // Which pages fail depends on the host too: the same path fails on some
        // hosts and not on others, at about the rate.
        let failing = (0..5_000)
            .filter(|k| f.fails(&format!("h{k}.sites.test/p/3")))
            .count();
        assert!((800..1200).contains(&failing), "{failing}");
    }
}
