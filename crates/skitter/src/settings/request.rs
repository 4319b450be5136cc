//! [`RequestSettings`]: how requests are made and repeated, and how hard one
//! host is pressed — the part of the settings a crawl and a bulk fetch share,
//! so a flag or a file key of this kind means the same in both.

use serde::{Deserialize, Serialize};

use crate::fetch::FetchConfig;
use crate::fetch::retry::RetryPolicy;
use crate::host::HostPolicy;

/// Redirect hops followed per chain unless set.
pub const DEFAULT_MAX_REDIRECT: u32 = 10;

/// Requests, retries and per-host politeness, shared by
/// [`CrawlSettings`](super::CrawlSettings) and
/// [`BulkSettings`](super::BulkSettings). Every field has a default, so a
/// settings file names only what it changes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RequestSettings {
    /// Timeouts, user agent, body cap, TLS, proxies, headers, address policy,
    /// DNS.
    pub fetch: FetchConfig,
    /// Which failures are retried, how often and how far apart.
    pub retry: RetryPolicy,
    /// Requests in flight per host and the gap between their starts.
    pub politeness: HostPolicy,
    /// Redirect hops followed per chain (default [`DEFAULT_MAX_REDIRECT`];
    /// 0 = none).
    pub max_redirect: u32,
}

impl Default for RequestSettings {
    fn default() -> Self {
        RequestSettings {
            fetch: FetchConfig::default(),
            retry: RetryPolicy::default(),
            politeness: HostPolicy::default(),
            max_redirect: DEFAULT_MAX_REDIRECT,
        }
    }
}

impl RequestSettings {
    /// The first setting that cannot work, as the message a build error
    /// carries.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.retry.max_tries == 0 {
            return Err("max_tries must be at least 1".into());
        }
        if self.retry.quarantine_after == 0 {
            return Err("quarantine_after must be at least 1".into());
        }
        if self.politeness.max_in_flight == 0 {
            return Err("per_host must be at least 1".into());
        }
        Ok(())
    }

    /// These settings as they may be shown: header values and credentials
    /// replaced by `[redacted]` (see [`FetchConfig::redacted`]).
    pub fn redacted(&self) -> RequestSettings {
        RequestSettings {
            fetch: self.fetch.redacted(),
            ..self.clone()
        }
    }
}
