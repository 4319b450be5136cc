//! Hosts: the politeness key of a URL and the rules every host runs under,
//! shared by all hosts of a crawl and changeable while it runs (the live
//! per-host state is in `politeness`).
//!
//! A "host" is an authority — host name plus effective port — so two test servers
//! on one address but different ports are two hosts, as they are two servers.

use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use url::Url;

/// The politeness key of a URL: lowercased host and effective port.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostKey(String);

impl HostKey {
    /// The key for a URL (`host:port`, port always present).
    pub fn of(url: &Url) -> HostKey {
        let host = url.host_str().unwrap_or("");
        let port = url.port_or_known_default().unwrap_or(0);
        HostKey(format!("{host}:{port}"))
    }

    /// A key as stored by [`HostKey::as_str`] (in a crawl's state).
    pub(crate) fn from_stored(key: String) -> HostKey {
        HostKey(key)
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The politeness rules every host starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HostPolicy {
    /// At most this many requests in flight to one host, reached by slow
    /// start: a host not heard from yet gets one, doubled per clean answer.
    pub max_in_flight: usize,
    /// Minimum gap between the starts of two requests to one host.
    pub delay: Duration,
    /// Up to this much random extra gap is added to `delay` (0 = none).
    pub jitter: Duration,
}

/// Requests in flight per host unless set (see [`HostPolicy::max_in_flight`]).
pub const DEFAULT_PER_HOST: usize = 8;

impl Default for HostPolicy {
    fn default() -> Self {
        HostPolicy {
            max_in_flight: DEFAULT_PER_HOST,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
        }
    }
}

/// The politeness rules in force for every host of one crawl: one shared
/// value that each host reads at each request, so a change (`skitter ctl set
/// --per-host N --delay D`) reaches every host from its next request on,
/// including hosts that already exist. Cheap to clone; the clones share it.
#[derive(Clone, Debug, Default)]
pub struct LivePolicy(Arc<RwLock<HostPolicy>>);

impl LivePolicy {
    /// Rules starting as `policy`.
    pub fn new(policy: HostPolicy) -> LivePolicy {
        LivePolicy(Arc::new(RwLock::new(policy)))
    }

    /// The rules now.
    pub fn get(&self) -> HostPolicy {
        // A panic cannot leave a half-written `HostPolicy` (it is replaced
        // whole), so a poisoned lock still holds a valid value.
        *self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the rules. A host already waiting out a gap keeps that one
    /// wait; its later starts follow the new rules.
    pub fn set(&self, policy: HostPolicy) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = policy;
    }
}

impl From<HostPolicy> for LivePolicy {
    fn from(policy: HostPolicy) -> LivePolicy {
        LivePolicy::new(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_includes_effective_port() {
        let a = HostKey::of(&Url::parse("http://Example.com/x").unwrap());
        let b = HostKey::of(&Url::parse("https://example.com/x").unwrap());
        let c = HostKey::of(&Url::parse("http://example.com:8080/").unwrap());
        assert_eq!(a.as_str(), "example.com:80");
        assert_eq!(b.as_str(), "example.com:443");
        assert_eq!(c.as_str(), "example.com:8080");
    }
}
