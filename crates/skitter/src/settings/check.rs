//! [`CheckSettings`]: every setting of a link check (`skitter check`) as one
//! serialisable value: the crawl it runs on, and what counts as a broken link.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::CrawlSettings;

/// How long a cached result of an external link is trusted unless set.
pub const DEFAULT_MAX_CACHE_AGE: Duration = Duration::from_secs(24 * 3600);

/// Every setting of a link check; run one with
/// [`LinkChecker::from_settings`](crate::check::LinkChecker::from_settings).
///
/// ```
/// use skitter::settings::{CheckSettings, CrawlSettings};
///
/// let mut settings = CheckSettings::new(CrawlSettings::new(["http://127.0.0.1:8080/"]));
/// settings.accept = "200..=299,403".parse().unwrap();
/// assert!(settings.accept.contains(403));
/// assert!(!settings.accept.contains(404));
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckSettings {
    /// The crawl of the site: roots, scope, robots, politeness, retries.
    /// Its include/exclude patterns also say which links are checked at all.
    pub crawl: CrawlSettings,
    /// The statuses a link may end with (after redirects) and be fine.
    pub accept: StatusSet,
    /// URL prefixes replaced before a link is checked (`FROM`, `TO`): the
    /// first that matches applies.
    pub remap: Vec<(String, String)>,
    /// Only links to the crawled site are checked; links to other sites are
    /// counted as skipped.
    pub offline: bool,
    /// `#fragments` are checked against the target page's anchors.
    pub fragments: bool,
    /// A file of recent results of external links, read before and written
    /// after the check.
    pub cache: Option<PathBuf>,
    /// How old a cached result may be to be used (default
    /// [`DEFAULT_MAX_CACHE_AGE`]).
    pub max_cache_age: Duration,
    /// External links checked at once, over all their hosts (per host the
    /// crawl's politeness applies).
    pub external_concurrency: usize,
}

impl CheckSettings {
    /// The defaults, over `crawl`.
    pub fn new(crawl: CrawlSettings) -> CheckSettings {
        CheckSettings {
            crawl,
            ..CheckSettings::default()
        }
    }

    /// The first setting that cannot work, as the message a build error
    /// carries.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.external_concurrency == 0 {
            return Err("external concurrency must be at least 1".into());
        }
        if let Some((from, _)) = self.remap.iter().find(|(from, _)| from.is_empty()) {
            return Err(format!("a remap needs a prefix to replace (got {from:?})"));
        }
        self.crawl.check()
    }
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings {
            crawl: CrawlSettings::default(),
            accept: StatusSet::default(),
            remap: Vec::new(),
            offline: false,
            fragments: true,
            cache: None,
            max_cache_age: DEFAULT_MAX_CACHE_AGE,
            external_concurrency: 64,
        }
    }
}

/// A set of HTTP statuses, written `200..=299,403` (ranges and single codes,
/// comma-separated); the default is every 2xx.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct StatusSet(Vec<(u16, u16)>);

impl StatusSet {
    /// Whether `status` is in the set.
    pub fn contains(&self, status: u16) -> bool {
        self.0.iter().any(|&(lo, hi)| (lo..=hi).contains(&status))
    }
}

impl Default for StatusSet {
    fn default() -> Self {
        StatusSet(vec![(200, 299)])
    }
}

impl std::str::FromStr for StatusSet {
    type Err = String;

    fn from_str(text: &str) -> Result<StatusSet, String> {
        let code = |s: &str| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|c| (100..=999).contains(c))
                .ok_or_else(|| format!("{s:?} is not an HTTP status (100 to 999)"))
        };
        let mut set = Vec::new();
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let range = match part.split_once("..=").or_else(|| part.split_once("..")) {
                Some((lo, hi)) => (code(lo)?, code(hi)?),
                None => (code(part)?, code(part)?),
            };
            if range.0 > range.1 {
                return Err(format!("{part:?} is an empty range"));
            }
            set.push(range);
        }
        if set.is_empty() {
            return Err("no statuses given (as in 200..=299,403)".into());
        }
        Ok(StatusSet(set))
    }
}

impl std::fmt::Display for StatusSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &(lo, hi)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if lo == hi {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}..={hi}")?;
            }
        }
        Ok(())
    }
}

impl TryFrom<String> for StatusSet {
    type Error = String;
    fn try_from(text: String) -> Result<StatusSet, String> {
        text.parse()
    }
}

impl From<StatusSet> for String {
    fn from(set: StatusSet) -> String {
        set.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_sets_parse_and_print() {
        let set: StatusSet = "200..=299, 403,500..599".parse().unwrap();
        assert!(set.contains(204) && set.contains(403) && set.contains(599));
        assert!(!set.contains(404) && !set.contains(301));
        assert_eq!(set.to_string(), "200..=299,403,500..=599");
        for bad in ["", "abc", "299..=200", "42", "200..=x"] {
            assert!(bad.parse::<StatusSet>().is_err(), "{bad:?}");
        }
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(serde_json::from_str::<StatusSet>(&json).unwrap(), set);
    }
}
