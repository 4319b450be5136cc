//! The per-origin robots.txt cache: fetched once per origin (scheme, host and
//! port), before any other request to it, and kept for the crawl (at most 24 h).
//!
//! Status rules (RFC 9309 §2.3.1): 2xx → parse; 4xx → everything allowed;
//! 5xx, 429, a timeout or a network failure → *unavailable*: the origin's URLs
//! wait (see [`OriginRules::deferral`]) while the file is fetched again with
//! back-off (`retry_unavailable`, doubling up to `max_retry_unavailable`); only
//! an outage longer than `max_outage` makes them skipped, as
//! `robots_unavailable`. Up to five redirects are followed; more count as
//! "unavailable" in the RFC's 4xx sense (allowed); so does a redirect out of
//! the crawl's scope (never followed: robots.txt must not lead the crawler
//! where its pages could not). A host without an address, or with only one
//! the address policy refuses, has no file to wait for, but such an answer
//! is not kept and lets no page through: the page in hand fails as its own
//! fetch would have (see [`OriginRules::unreachable`]), and the origin's next
//! URL asks for the file again. Concurrent first requests to
//! one origin share a single fetch. The size rule applies to the decoded file:
//! the first [`MAX_ROBOTS_BYTES`] are parsed, whatever the encoding, and
//! compressed bytes are never parsed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use super::{Robots, product_token};
use crate::base::outcome::{ErrorKind, FetchFailure};
use crate::base::scope::Scope;
use crate::fetch::{Fetcher, Keep, redirect};

/// Redirects followed when fetching robots.txt (RFC 9309: at least five).
const MAX_REDIRECTS: usize = 5;
/// The decoded bytes of a robots.txt that are parsed (RFC 9309 §2.5: at least
/// 500 KiB); the rest is ignored.
pub const MAX_ROBOTS_BYTES: u64 = 500 * 1024;

/// How the robots.txt of an origin came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotsSource {
    /// Fetched and parsed (2xx).
    Parsed,
    /// 4xx or too many redirects: no rules, everything allowed.
    Missing,
    /// 5xx, 429 or unreachable: everything disallowed for now.
    Unavailable,
}

/// The rules in force for one origin.
#[derive(Debug)]
pub struct OriginRules {
    /// The parsed (or implied) rules.
    pub robots: Robots,
    /// Where they came from.
    pub source: RobotsSource,
    /// The status or error that decided it, for skip messages.
    pub detail: String,
    fetched: Instant,
    /// For an unavailable file: when it is fetched again, counted from `fetched`.
    retry_in: Duration,
    /// For an unavailable file: when the origin's outage began, and how long it
    /// may last before its URLs are skipped.
    outage: Option<(Instant, Duration)>,
    /// Why robots.txt could not be asked for at all, when the host gave no
    /// address or only one the address policy refuses.
    unreachable: Option<FetchFailure>,
}

impl OriginRules {
    /// For an origin whose robots.txt is unavailable and whose outage is still
    /// within the limit: how long its URLs should wait (until the file is
    /// fetched again). `None` once the rules are in force: parsed, missing, or
    /// unavailable for longer than the limit (then everything is disallowed).
    pub fn deferral(&self, now: Instant) -> Option<Duration> {
        let (since, limit) = self.outage?;
        if now.saturating_duration_since(since) >= limit {
            return None;
        }
        let due = self.fetched + self.retry_in;
        Some(
            due.saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        )
    }

    /// For an unavailable file: when the origin's outage began, when the file
    /// is fetched again, and when the outage limit ends.
    pub fn outage(&self) -> Option<(Instant, Instant, Instant)> {
        let (since, limit) = self.outage?;
        Some((since, self.fetched + self.retry_in, since + limit))
    }

    /// Why the origin's robots.txt could not be asked for: its host had no
    /// address (`no_such_host`) or only one the address policy refuses
    /// (`blocked`). The rules then allow everything, since there is no file,
    /// but they authorise no request: the next answer for the name may be an
    /// address the file would have ruled on (a name that appears, a rebinding
    /// server), so the URL in hand fails with this failure, as its own fetch
    /// would have, and the cache does not keep such rules (the next URL of the
    /// origin asks for the file again).
    pub fn unreachable(&self) -> Option<&FetchFailure> {
        self.unreachable.as_ref()
    }
}

/// The cache's memory account: each origin's cost with the generation it was
/// counted in, and the order they were counted in (a later count of the same
/// origin leaves a stale entry behind, skipped when it comes up).
#[derive(Debug, Default)]
struct Sizes {
    order: std::collections::VecDeque<(String, u64)>,
    current: HashMap<String, (usize, u64)>,
    bytes: usize,
    generation: u64,
}

/// An origin whose robots.txt keeps failing.
#[derive(Clone, Copy, Debug)]
struct Outage {
    since: Instant,
    failures: u32,
}

/// Settings of the cache.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RobotsPolicy {
    /// Longest a fetched robots.txt is trusted (RFC 9309 caps it at 24 h).
    pub max_age: Duration,
    /// When an unavailable robots.txt is first fetched again (default 1 s); the
    /// wait doubles with each failure in a row.
    pub retry_unavailable: Duration,
    /// The longest wait between two fetches of an unavailable robots.txt
    /// (default 60 s).
    pub max_retry_unavailable: Duration,
    /// How long an origin's robots.txt may stay unavailable before its URLs are
    /// skipped as `robots_unavailable` (default 10 min). Until then they wait.
    pub max_outage: Duration,
    /// How long the whole crawl may be blocked by robots.txt outages (nothing
    /// in flight, and every URL left waiting on an origin whose robots.txt is
    /// unavailable) before those origins' URLs are skipped as
    /// `robots_unavailable` (default 60 s). While other hosts still have work,
    /// `max_outage` applies instead.
    pub max_blocked: Duration,
    /// Memory for cached files (default 64 MiB), counted as each file's parsed
    /// text plus [`ENTRY_OVERHEAD`] per origin; beyond it the origins fetched
    /// longest ago are forgotten (and fetched again if the crawl comes back to
    /// them), so a crawl of many hosts keeps a bounded cache.
    pub max_cache_bytes: usize,
}

/// What one cached origin costs besides its file's text (key, rules, slot).
pub const ENTRY_OVERHEAD: usize = 256;

impl Default for RobotsPolicy {
    fn default() -> Self {
        RobotsPolicy {
            max_age: Duration::from_secs(24 * 3600),
            retry_unavailable: Duration::from_secs(1),
            max_retry_unavailable: Duration::from_secs(60),
            max_outage: Duration::from_secs(600),
            max_blocked: Duration::from_secs(60),
            max_cache_bytes: 64 << 20,
        }
    }
}

type Slot = Arc<OnceCell<Arc<OriginRules>>>;

/// A robots.txt as stored for other processes of the same crawl.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredRobots {
    /// The body (for `Parsed`), as text.
    pub body: String,
    /// `parsed`, `missing` or `unavailable`.
    pub source: String,
    /// The status or error that decided it.
    pub detail: String,
    /// When it was fetched, in seconds since the Unix epoch.
    pub fetched_unix: u64,
}

/// Where several processes of one crawl share their robots.txt fetches (the
/// Redis frontier implements it), so each origin's file is fetched once per
/// crawl rather than once per worker. Failures to read or write are not errors:
/// the cache then simply fetches for itself.
#[async_trait::async_trait]
pub trait RobotsStore: Send + Sync {
    /// The stored robots.txt of `origin`, if any.
    async fn get_robots(&self, origin: &str) -> Option<StoredRobots>;
    /// Stores `origin`'s robots.txt for the other processes.
    async fn put_robots(&self, origin: &str, robots: &StoredRobots);
}

/// Per-origin robots rules for one crawl.
pub struct RobotsCache {
    fetcher: Fetcher,
    token: String,
    policy: RobotsPolicy,
    origins: Mutex<HashMap<String, Slot>>,
    /// Health probes in flight, by origin (see [`RobotsCache::recheck`]).
    probes: Mutex<HashMap<String, Slot>>,
    /// What the cached files cost, oldest first, to keep within the budget.
    sizes: Mutex<Sizes>,
    outages: Mutex<HashMap<String, Outage>>,
    store: Option<Arc<dyn RobotsStore>>,
    scope: Option<Scope>,
}

impl std::fmt::Debug for RobotsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsCache")
            .field("token", &self.token)
            .field("shared", &self.store.is_some())
            .finish_non_exhaustive()
    }
}

impl RobotsCache {
    /// A cache that fetches with `fetcher` and matches rules for its User-Agent's
    /// product token.
    pub fn new(fetcher: Fetcher, policy: RobotsPolicy) -> Self {
        let token = product_token(&fetcher.config().user_agent).to_string();
        RobotsCache {
            fetcher,
            token,
            policy,
            origins: Mutex::new(HashMap::new()),
            probes: Mutex::new(HashMap::new()),
            sizes: Mutex::new(Sizes::default()),
            outages: Mutex::new(HashMap::new()),
            store: None,
            scope: None,
        }
    }

    /// Follows robots.txt redirects only within `scope` (a crawl's own scope).
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    /// Shares fetched files with the other processes of the crawl through `store`.
    pub fn with_store(mut self, store: Arc<dyn RobotsStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Parses a shared entry, unless it is older than the policy allows.
    fn read_shared(
        &self,
        stored: &StoredRobots,
    ) -> Option<(Robots, RobotsSource, String, Duration)> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        let age = Duration::from_secs(now.saturating_sub(stored.fetched_unix));
        let (robots, source, limit) = match stored.source.as_str() {
            "parsed" => (
                Robots::parse(stored.body.as_bytes()),
                RobotsSource::Parsed,
                self.policy.max_age,
            ),
            "missing" => (
                Robots::allow_all(),
                RobotsSource::Missing,
                self.policy.max_age,
            ),
            _ => (
                Robots::disallow_all(),
                RobotsSource::Unavailable,
                self.policy.retry_unavailable,
            ),
        };
        (age < limit).then(|| (robots, source, stored.detail.clone(), age))
    }

    /// The product token rules are matched for (`skitter`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The rules for `url`'s origin, fetching robots.txt first if need be.
    pub async fn rules_for(&self, url: &Url) -> Arc<OriginRules> {
        let origin = url.origin().ascii_serialization();
        let slot = self.slot(&origin);
        let rules = slot
            .get_or_init(|| self.fetch(origin.clone()))
            .await
            .clone();
        if rules.unreachable.is_some() {
            // For the URLs that waited on this fetch only.
            self.forget(&origin, &slot);
            return rules;
        }
        if self.expired(&rules) {
            self.forget(&origin, &slot);
            let fresh = self.slot(&origin);
            return fresh.get_or_init(|| self.fetch(origin)).await.clone();
        }
        rules
    }

    /// The rules for `url`'s origin, fetched afresh first (bypassing the shared
    /// store) if they are older than `max_age`. The crawler calls it as a health
    /// probe after one of the origin's pages failed: a server that is down fails
    /// its robots.txt too, and its URLs then wait (see
    /// [`OriginRules::deferral`]); a server with a few broken URLs does not.
    ///
    /// The probe runs beside the rules in force: the origin's other URLs go on
    /// with those until its answer replaces them, and the rechecks that overlap
    /// share one probe. (When the probe took the rules' place, every URL of the
    /// origin waited a round trip of the site for it, and on a slow site whose
    /// URLs fail now and then, a recheck each second made every round last two.)
    pub async fn recheck(&self, url: &Url, max_age: Duration) -> Arc<OriginRules> {
        let origin = url.origin().ascii_serialization();
        let current = self.slot(&origin);
        let stale = current
            .get()
            .is_some_and(|rules| rules.fetched.elapsed() >= max_age);
        if !stale {
            return self.rules_for(url).await;
        }
        // The origin's health probe in flight, or a new one.
        let probe = slot_in(&self.probes, &origin);
        let rules = probe
            .get_or_init(|| self.fetch_from(origin.clone(), false))
            .await
            .clone();
        self.install(&origin, &current, &probe, &rules);
        rules
    }

    /// Puts a probe's answer in the place of the rules it was checking (unless
    /// something newer took it meanwhile), then lets the next recheck probe
    /// again: in this order, a recheck in between finds the fresh rules rather
    /// than stale ones and no probe. Rules that could not be asked for are not
    /// kept (see [`OriginRules::unreachable`]): the origin's next URL asks again.
    fn install(&self, origin: &str, checked: &Slot, probe: &Slot, rules: &Arc<OriginRules>) {
        {
            let mut map = self.origins.lock().unwrap_or_else(|e| e.into_inner());
            if map.get(origin).is_some_and(|s| Arc::ptr_eq(s, checked)) {
                if rules.unreachable.is_some() {
                    map.remove(origin);
                } else {
                    let fresh = Arc::new(OnceCell::new_with(Some(rules.clone())));
                    map.insert(origin.to_owned(), fresh);
                }
            }
        }
        let mut probes = self.probes.lock().unwrap_or_else(|e| e.into_inner());
        if probes.get(origin).is_some_and(|p| Arc::ptr_eq(p, probe)) {
            probes.remove(origin);
        }
    }

    fn slot(&self, origin: &str) -> Slot {
        slot_in(&self.origins, origin)
    }

    /// Drops a stale slot, unless another task already replaced it.
    fn forget(&self, origin: &str, stale: &Slot) {
        let mut map = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(origin).is_some_and(|s| Arc::ptr_eq(s, stale)) {
            map.remove(origin);
        }
    }

    fn expired(&self, rules: &OriginRules) -> bool {
        let age = rules.fetched.elapsed();
        match rules.source {
            RobotsSource::Unavailable => age >= rules.retry_in,
            _ => age >= self.policy.max_age,
        }
    }

    /// Counts a freshly cached file and forgets the origins fetched longest ago
    /// while the cache is over its budget.
    fn account(&self, origin: &str, text_len: usize) {
        let cost = text_len + ENTRY_OVERHEAD;
        let mut evicted = Vec::new();
        {
            let mut sizes = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
            sizes.generation += 1;
            let generation = sizes.generation;
            if let Some((old, _)) = sizes.current.insert(origin.to_owned(), (cost, generation)) {
                sizes.bytes -= old;
            }
            sizes.bytes += cost;
            sizes.order.push_back((origin.to_owned(), generation));
            while sizes.bytes > self.policy.max_cache_bytes {
                let Some((name, generation)) = sizes.order.pop_front() else {
                    break;
                };
                if sizes
                    .current
                    .get(&name)
                    .is_some_and(|&(_, g)| g == generation)
                {
                    let (cost, _) = sizes.current.remove(&name).unwrap_or_default();
                    sizes.bytes -= cost;
                    evicted.push(name);
                }
            }
        }
        if !evicted.is_empty() {
            let mut map = self.origins.lock().unwrap_or_else(|e| e.into_inner());
            for name in &evicted {
                map.remove(name);
            }
            tracing::debug!(
                origins = evicted.len(),
                "robots.txt cache over budget: forgot the oldest"
            );
        }
    }

    /// How many origins' files the cache holds, and their cost in bytes.
    pub fn cached(&self) -> (usize, usize) {
        let sizes = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
        (sizes.current.len(), sizes.bytes)
    }

    /// Builds an origin's rules, keeping its outage (if the file is unavailable)
    /// up to date: the back-off before the next fetch, and since when.
    fn rules(&self, origin: &str, answer: Answer, fetched: Instant) -> Arc<OriginRules> {
        let Answer {
            robots,
            source,
            detail,
            unreachable,
            ..
        } = answer;
        let mut outages = self.outages.lock().unwrap_or_else(|e| e.into_inner());
        let (retry_in, outage) = if source == RobotsSource::Unavailable {
            let entry = outages.entry(origin.to_owned()).or_insert(Outage {
                since: fetched,
                failures: 0,
            });
            entry.failures = entry.failures.saturating_add(1);
            let doubling = 1u32 << entry.failures.saturating_sub(1).min(16);
            let retry_in = self
                .policy
                .retry_unavailable
                .saturating_mul(doubling)
                .min(self.policy.max_retry_unavailable);
            (retry_in, Some((entry.since, self.policy.max_outage)))
        } else {
            outages.remove(origin);
            (Duration::ZERO, None)
        };
        Arc::new(OriginRules {
            robots,
            source,
            detail,
            fetched,
            retry_in,
            outage,
            unreachable,
        })
    }

    async fn fetch(&self, origin: String) -> Arc<OriginRules> {
        self.fetch_from(origin, true).await
    }

    /// Fetches an origin's rules, from the shared store first if `shared` and it
    /// has a fresh copy.
    async fn fetch_from(&self, origin: String, shared: bool) -> Arc<OriginRules> {
        if shared
            && let Some(store) = &self.store
            && let Some(stored) = store.get_robots(&origin).await
            && let Some((robots, source, detail, age)) = self.read_shared(&stored)
        {
            let fetched = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
            self.account(&origin, stored.body.len());
            let answer = Answer::new(robots, source, detail);
            return self.rules(&origin, answer, fetched);
        }
        let mut answer = self.fetch_rules(&origin).await;
        let source = answer.source;
        tracing::debug!(%origin, ?source, detail = %answer.detail, "robots.txt");
        if answer.unreachable.is_some() {
            // Not shared and not counted: such rules are never kept.
            return self.rules(&origin, answer, Instant::now());
        }
        let body = std::mem::take(&mut answer.body);
        let text_len = body.len();
        if let Some(store) = &self.store {
            let stored = StoredRobots {
                body,
                source: match source {
                    RobotsSource::Parsed => "parsed",
                    RobotsSource::Missing => "missing",
                    RobotsSource::Unavailable => "unavailable",
                }
                .to_string(),
                detail: answer.detail.clone(),
                fetched_unix: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            };
            store.put_robots(&origin, &stored).await;
        }
        self.account(&origin, text_len);
        self.rules(&origin, answer, Instant::now())
    }

    /// One GET of a robots.txt URL. A proxy's failure is no news of the
    /// origin: the request is made again (the pool has benched that proxy), a
    /// few times, before it counts as the file being unavailable.
    async fn get(
        &self,
        url: &Url,
    ) -> Result<crate::fetch::Response, crate::base::outcome::FetchFailure> {
        const PROXY_TRIES: usize = 3;
        let mut result = self.fetcher.get(url, Keep::Body).await;
        for _ in 1..PROXY_TRIES {
            match &result {
                Err(e) if e.kind == ErrorKind::Proxy => {
                    result = self.fetcher.get(url, Keep::Body).await;
                }
                _ => break,
            }
        }
        result
    }

    /// Fetches and classifies an origin's robots.txt.
    async fn fetch_rules(&self, origin: &str) -> Answer {
        let missing =
            |detail: String| Answer::new(Robots::allow_all(), RobotsSource::Missing, detail);
        let Ok(mut url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return missing("no origin".into());
        };
        for _ in 0..=MAX_REDIRECTS {
            let resp = match self.get(&url).await {
                Ok(resp) => resp,
                // A host that does not exist has no robots.txt to wait for;
                // its pages fail with this answer (see `OriginRules::unreachable`).
                Err(e) if matches!(e.kind, ErrorKind::Blocked | ErrorKind::NoSuchHost) => {
                    let mut answer = missing(format!("{}: {}", e.kind, e.message));
                    answer.unreachable = Some(e);
                    return answer;
                }
                Err(e) => return unavailable(format!("{}: {}", e.kind, e.message)),
            };
            match resp.status {
                200..=299 => {
                    let body = resp.body.clone().unwrap_or_default();
                    let coding = resp.header("content-encoding").map(str::to_owned);
                    // Decoding and parsing are CPU work a hostile file can make
                    // costly (stacked codings up to the cap, a file of 500 KiB of
                    // rules): off the async threads, where they would hold up
                    // timers such as a Redis lease's heartbeat.
                    let parsed = tokio::task::spawn_blocking(move || parse_file(coding, &body));
                    // A panic there is this file's failure: no rules, as for a
                    // body that cannot be decoded.
                    let (robots, text) = parsed
                        .await
                        .unwrap_or_else(|_| (Robots::parse(b""), String::new()));
                    let mut answer =
                        Answer::new(robots, RobotsSource::Parsed, resp.status.to_string());
                    answer.body = text;
                    return answer;
                }
                status if redirect::is_redirect(status) => match redirect::target(&resp, &url) {
                    Ok(next) if self.scope.as_ref().is_some_and(|s| !s.allows(&next)) => {
                        return missing(format!("redirect out of scope to {next}"));
                    }
                    Ok(next) => url = next,
                    Err(bad) => return missing(bad.message),
                },
                429 | 500..=599 => return unavailable(format!("status {}", resp.status)),
                status => return missing(format!("status {status}")),
            }
        }
        missing("too many redirects".into())
    }
}

/// `origin`'s slot in `map`, a new one if it has none.
fn slot_in(map: &Mutex<HashMap<String, Slot>>, origin: &str) -> Slot {
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(origin.to_string()).or_default().clone()
}

fn unavailable(detail: String) -> Answer {
    Answer::new(Robots::disallow_all(), RobotsSource::Unavailable, detail)
}

/// How one fetch of an origin's robots.txt came out.
struct Answer {
    robots: Robots,
    source: RobotsSource,
    /// The status or error that decided it.
    detail: String,
    /// The file's text (for sharing), empty unless parsed.
    body: String,
    /// See [`OriginRules::unreachable`].
    unreachable: Option<FetchFailure>,
}

impl Answer {
    fn new(robots: Robots, source: RobotsSource, detail: String) -> Answer {
        Answer {
            robots,
            source,
            detail,
            body: String::new(),
            unreachable: None,
        }
    }
}
/// Decodes and parses a fetched robots.txt. The size rule is on the decoded
/// file; a body that cannot be decoded has no rules in it (compressed bytes
/// are never parsed).
fn parse_file(coding: Option<String>, body: &[u8]) -> (Robots, String) {
    let decoded =
        crate::fetch::decode::decode_prefix(coding.as_deref(), body, MAX_ROBOTS_BYTES, false)
            .map(|d| d.body)
            .unwrap_or_default();
    (
        Robots::parse(&decoded),
        String::from_utf8_lossy(&decoded).into_owned(),
    )
}
