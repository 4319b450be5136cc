//! The per-URL record: what happened when skitter tried one URL.
//!
//! A failed page is data, not an error: every URL the crawl touches ends as exactly
//! one [`PageRecord`] (fetched, redirected, failed, or skipped before fetching), and
//! the report, the sinks and the library's outcome stream all consume these records.
//! The fields extend the baseline crawler's `FetchStatistic` (`url, next_url, status,
//! exception, size, content_type, encoding, num_urls, num_new_urls`) with depth,
//! elapsed time, attempts and an error kind.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

/// How a URL ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// A 2xx HTML page that was parsed for links.
    Html,
    /// A 2xx response of any other type.
    Other,
    /// A 3xx redirect (its target is in `next_url` when it had a usable one).
    Redirect,
    /// A response with an error status (4xx, 5xx, or an unfollowable 3xx).
    HttpError,
    /// No usable response after all attempts (transport error, timeout, too large…).
    Failed,
    /// Never fetched: a rule or limit said no (see `skip`).
    Skipped,
}

/// Why a fetch failed; the suffix of the report's `fail_<kind>` counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The TCP or TLS connection could not be made.
    Connect,
    /// A connect, read or total timeout expired.
    Timeout,
    /// The host name could not be resolved now (SERVFAIL, REFUSED, no answer
    /// in time…): retried like other transient failures.
    Dns,
    /// The host name does not exist (NXDOMAIN) or has no address: a definite
    /// answer, not retried.
    NoSuchHost,
    /// TLS handshake or certificate failure.
    Tls,
    /// The connection broke while reading the body, or the body was malformed.
    Body,
    /// The body exceeded the configured maximum size.
    BodyTooLarge,
    /// The body's content coding (gzip, br, zstd, deflate) could not be decoded.
    Decode,
    /// A redirect response without a usable `Location` header.
    BadRedirect,
    /// The redirect chain exceeded `max_redirect` hops.
    TooManyRedirects,
    /// The server answered with something that is not valid HTTP.
    Protocol,
    /// The address policy refused the address (link-local, cloud metadata, or a
    /// private address the policy does not allow); nothing was sent.
    Blocked,
    /// The proxy of the pool the request went through failed it (no
    /// response through it, a 407, or its own 403 or 5xx), or every proxy was
    /// benched; the message names the proxy, never its credentials.
    Proxy,
    /// Any other transport error.
    Other,
    /// Not fetched again: the URL was claimed and its lease lost too often
    /// (the worker holding it died, was killed or stalled past its lease),
    /// so it is taken to be what brings workers down
    /// ([`RetryPolicy::quarantine_after`](crate::fetch::retry::RetryPolicy::quarantine_after)),
    /// or its last try was lost that way.
    Quarantined,
}

impl ErrorKind {
    /// The stable snake_case name used in counters, JSON and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Dns => "dns",
            ErrorKind::NoSuchHost => "no_such_host",
            ErrorKind::Tls => "tls",
            ErrorKind::Body => "body",
            ErrorKind::BodyTooLarge => "body_too_large",
            ErrorKind::Decode => "decode",
            ErrorKind::BadRedirect => "bad_redirect",
            ErrorKind::TooManyRedirects => "too_many_redirects",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Blocked => "blocked",
            ErrorKind::Proxy => "proxy",
            ErrorKind::Other => "other",
            ErrorKind::Quarantined => "quarantined",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a discovered URL was not fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Outside the host scope of the roots.
    Scope,
    /// Not `http` or `https`.
    Scheme,
    /// Matched an `--exclude` pattern, or no `--include` pattern.
    Exclude,
    /// The URL could not be parsed.
    Malformed,
    /// Disallowed by the origin's robots.txt.
    Robots,
    /// The origin's robots.txt stayed unavailable (5xx, 429, unreachable) for
    /// longer than the outage limit, so nothing of it may be fetched.
    RobotsUnavailable,
    /// A crawler-trap rule (URL too long, repeated segments, too many variants…).
    Trap,
    /// A crawl limit (depth, pages, time, per-host) was reached.
    Limit,
}

impl SkipReason {
    /// The stable snake_case name used in counters, JSON and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Scope => "scope",
            SkipReason::Scheme => "scheme",
            SkipReason::Exclude => "exclude",
            SkipReason::Malformed => "malformed",
            SkipReason::Robots => "robots",
            SkipReason::RobotsUnavailable => "robots_unavailable",
            SkipReason::Trap => "trap",
            SkipReason::Limit => "limit",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the message of a failure that is skitter's own fault starts: a panic
/// while handling one URL becomes that URL's `other` failure.
pub const INTERNAL_PREFIX: &str = "internal: ";

/// A failure with its kind and a human-readable message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FetchFailure {
    /// The category, stable across versions.
    pub kind: ErrorKind,
    /// The full cause chain, for people.
    pub message: String,
}

impl FetchFailure {
    /// A failure that is a bug in skitter, not in the page or the network.
    pub fn internal(message: &str) -> FetchFailure {
        FetchFailure {
            kind: ErrorKind::Other,
            message: format!("{INTERNAL_PREFIX}{message}"),
        }
    }

    /// Whether this is a failure made by [`FetchFailure::internal`].
    pub fn is_internal(&self) -> bool {
        self.kind == ErrorKind::Other && self.message.starts_with(INTERNAL_PREFIX)
    }
}

/// The record of one URL: the baseline's nine fields plus skitter's extras.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    /// The normalised URL that was requested.
    pub url: Url,
    /// For redirects, the normalised target.
    pub next_url: Option<Url>,
    /// The HTTP status of the last attempt, when a response arrived.
    pub status: Option<u16>,
    /// The failure, for `Failed` outcomes and redirects without a usable target.
    pub error: Option<FetchFailure>,
    /// Body bytes as received (after transfer decoding, before content decoding).
    pub size: u64,
    /// The media type of the response (`text/html`), lowercased, without parameters.
    pub content_type: Option<String>,
    /// The charset the body was decoded with (HTML) or declared with (others).
    pub encoding: Option<String>,
    /// Links found on the page (`a`/`area` hrefs, plus more with resources on).
    pub num_urls: usize,
    /// Of those, how many were new to the crawl and queued.
    pub num_new_urls: usize,
    /// Link distance from the roots (roots are 0; a redirect keeps its source's depth).
    pub depth: u32,
    /// Wall time from the first attempt's start to the end of the last.
    #[serde(with = "duration_ms")]
    pub elapsed: Duration,
    /// Attempts made (1 when the first succeeded; 0 for skipped URLs).
    pub attempts: u32,
    /// The page this URL was found on (absent for roots).
    pub parent: Option<Url>,
    /// How it ended.
    pub kind: OutcomeKind,
    /// Why it was skipped, for `Skipped` outcomes.
    pub skip: Option<SkipReason>,
    /// The body was longer than the size cap (wire or decoded) and only its
    /// first part was read, archived and searched for links.
    #[serde(default)]
    pub truncated: bool,
    /// The proxy that served the response, credentials removed
    /// (`http://proxy1:3128`); absent when the request went direct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<String>,
    /// Records the extraction rules found on the page (see [`crate::parse::items`]).
    /// Kept in the record, so the report's `items` counter covers every run
    /// of a resumed crawl and every worker of a shared one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub items: u64,
    /// Some extraction rule failed on the page (`extract_errors` counter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub extract_failed: bool,
    /// How the URL compares with the previous pass of a recrawl; absent on a
    /// first crawl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    /// Why the page was rendered in the browser (`--render`); absent when it
    /// was not. A render that failed makes the page `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendered: Option<RenderReason>,
}

/// Why `--render auto` rendered a page (or `always` did, or `--screenshots`
/// wanted its pictures), as counted in the report.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum RenderReason {
    /// `--render always`.
    Always,
    /// A `<noscript>` says JavaScript is needed.
    Noscript,
    /// An empty `#app`/`#root` element on a page with a script.
    EmptyRoot,
    /// Scripts and fewer than `FEW_LINKS` (see `render::auto`) links.
    ScriptFewLinks,
    /// `--screenshots` without `--render`: rendered for its pictures only
    /// (its links and text are the plain fetch's).
    Screenshot,
}

impl RenderReason {
    /// The name used in the report and the JSONL `rendered` field.
    pub fn as_str(self) -> &'static str {
        match self {
            RenderReason::Always => "always",
            RenderReason::Noscript => "noscript",
            RenderReason::EmptyRoot => "empty-root",
            RenderReason::ScriptFewLinks => "script-few-links",
            RenderReason::Screenshot => "screenshot",
        }
    }
}

/// How a URL fetched again in a recrawl pass compares with the last pass
/// that fetched it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Not known to the previous passes.
    New,
    /// Fetched again with a different payload.
    Changed,
    /// A `304 Not Modified`, or the same payload digest as before.
    Unchanged,
    /// `404`/`410` now, a success before.
    Gone,
    /// Failed this pass (the previous result is kept).
    Failed,
}

impl Change {
    /// The name used in reports and JSONL (`unchanged`).
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Changed => "changed",
            Change::Unchanged => "unchanged",
            Change::Gone => "gone",
            Change::Failed => "failed",
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PageRecord {
    /// A blank record for a URL about to be fetched (kind `Failed` until filled in).
    pub fn new(url: Url, depth: u32, parent: Option<Url>) -> Self {
        PageRecord {
            kind: OutcomeKind::Failed,
            skip: None,
            ..PageRecord::skipped(url, SkipReason::Limit, depth, parent)
        }
    }

    /// A record for a URL that was not fetched.
    pub fn skipped(url: Url, reason: SkipReason, depth: u32, parent: Option<Url>) -> Self {
        PageRecord {
            url,
            next_url: None,
            status: None,
            error: None,
            size: 0,
            content_type: None,
            encoding: None,
            num_urls: 0,
            num_new_urls: 0,
            depth,
            elapsed: Duration::ZERO,
            attempts: 0,
            parent,
            kind: OutcomeKind::Skipped,
            skip: Some(reason),
            truncated: false,
            items: 0,
            extract_failed: false,
            change: None,
            proxy: None,
            rendered: None,
        }
    }
}

/// Serialises a `Duration` as whole milliseconds, as the JSON outputs document.
mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}
