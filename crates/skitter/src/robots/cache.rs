//! The per-origin robots.txt cache: fetched once per origin (scheme, host and
//! port), before any other request to it, and kept for the crawl (at most 24 h).
//!
//! Status rules (RFC 9309 §2.3.1): 2xx → parse; 4xx → everything allowed;
//! 5xx, 429, a timeout or a network failure → everything disallowed, and the
//! file is fetched again after `retry_unavailable` (a long outage keeps the origin
//! disallowed). Up to five redirects are followed; more count as "unavailable" in
//! the RFC's 4xx sense (allowed). Concurrent first requests to one origin share a
//! single fetch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;
use url::Url;

use super::{Robots, product_token};
use crate::fetch::{Fetcher, Keep};

/// Redirects followed when fetching robots.txt (RFC 9309: at least five).
const MAX_REDIRECTS: usize = 5;

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
}

/// Settings of the cache.
#[derive(Clone, Debug)]
pub struct RobotsPolicy {
    /// Longest a fetched robots.txt is trusted (RFC 9309 caps it at 24 h).
    pub max_age: Duration,
    /// When an unavailable robots.txt is fetched again.
    pub retry_unavailable: Duration,
}

impl Default for RobotsPolicy {
    fn default() -> Self {
        RobotsPolicy {
            max_age: Duration::from_secs(24 * 3600),
            retry_unavailable: Duration::from_secs(60),
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
    store: Option<Arc<dyn RobotsStore>>,
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
            store: None,
        }
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
        if self.expired(&rules) {
            self.forget(&origin, &slot);
            let fresh = self.slot(&origin);
            return fresh.get_or_init(|| self.fetch(origin)).await.clone();
        }
        rules
    }

    fn slot(&self, origin: &str) -> Slot {
        let mut map = self.origins.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(origin.to_string()).or_default().clone()
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
            RobotsSource::Unavailable => age >= self.policy.retry_unavailable,
            _ => age >= self.policy.max_age,
        }
    }

    async fn fetch(&self, origin: String) -> Arc<OriginRules> {
        if let Some(store) = &self.store
            && let Some(stored) = store.get_robots(&origin).await
            && let Some((robots, source, detail, age)) = self.read_shared(&stored)
        {
            let fetched = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
            return Arc::new(OriginRules {
                robots,
                source,
                detail,
                fetched,
            });
        }
        let (robots, source, detail, body) = self.fetch_rules(&origin).await;
        tracing::debug!(%origin, ?source, %detail, "robots.txt");
        if let Some(store) = &self.store {
            let stored = StoredRobots {
                body,
                source: match source {
                    RobotsSource::Parsed => "parsed",
                    RobotsSource::Missing => "missing",
                    RobotsSource::Unavailable => "unavailable",
                }
                .to_string(),
                detail: detail.clone(),
                fetched_unix: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            };
            store.put_robots(&origin, &stored).await;
        }
        Arc::new(OriginRules {
            robots,
            source,
            detail,
            fetched: Instant::now(),
        })
    }

    /// Fetches and classifies an origin's robots.txt; the last item is the body
    /// text (for sharing), empty unless parsed.
    async fn fetch_rules(&self, origin: &str) -> (Robots, RobotsSource, String, String) {
        let missing = |detail: String| {
            (
                Robots::allow_all(),
                RobotsSource::Missing,
                detail,
                String::new(),
            )
        };
        let Ok(mut url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return missing("no origin".into());
        };
        for _ in 0..=MAX_REDIRECTS {
            let resp = match self.fetcher.get(&url, Keep::Body).await {
                Ok(resp) => resp,
                Err(e) => return unavailable(format!("{}: {}", e.kind, e.message)),
            };
            match resp.status {
                200..=299 => {
                    let body = resp.body.as_deref().unwrap_or_default();
                    let decoded = crate::fetch::decode::decode(
                        resp.header("content-encoding"),
                        body,
                        512 * 1024,
                    )
                    .unwrap_or(std::borrow::Cow::Borrowed(body));
                    let text = String::from_utf8_lossy(&decoded).into_owned();
                    return (
                        Robots::parse(&decoded),
                        RobotsSource::Parsed,
                        resp.status.to_string(),
                        text,
                    );
                }
                300..=399 => match resp.location().and_then(|l| url.join(l).ok()) {
                    Some(next) => url = next,
                    None => break,
                },
                429 | 500..=599 => return unavailable(format!("status {}", resp.status)),
                status => return missing(format!("status {status}")),
            }
        }
        missing("too many redirects".into())
    }
}

fn unavailable(detail: String) -> (Robots, RobotsSource, String, String) {
    (
        Robots::disallow_all(),
        RobotsSource::Unavailable,
        detail,
        String::new(),
    )
}
