//! Which way one link target goes: remapped (`--remap`), then skipped
//! (include/exclude patterns, `--offline`), answered by the crawl (on its
//! site), or checked over the network; and the cache of external results
//! the network side reads and fills.

use std::sync::Mutex;

use regex::Regex;
use url::Url;

use crate::base::scope::Scope;
use crate::base::urlnorm;
use crate::crawl::config::Config;
use crate::settings::{CheckSettings, StatusSet};

use super::cache::{Cache, CacheError};
use super::collect::lock;
use super::remote::{Answer, End};

/// Where a target goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Not checked, for this reason (`excluded`, `offline`).
    Skip(&'static str),
    /// On the crawled site: the crawl's record answers (this URL, remapped).
    Internal(Url),
    /// Checked over the network (this URL, remapped).
    Remote(Url),
}

/// The routing rules of one check.
pub(crate) struct Router {
    scope: Scope,
    include: Vec<Regex>,
    exclude: Vec<Regex>,
    remap: Vec<(String, String)>,
    offline: bool,
    pub(crate) accept: StatusSet,
    pub(crate) fragments: bool,
    cache: Mutex<Cache>,
}

impl Router {
    /// The rules of `settings` over the crawl `config` was built from.
    pub(crate) fn new(settings: &CheckSettings, config: &Config) -> Result<Router, CacheError> {
        let patterns = (config.include.clone(), config.exclude.clone());
        Router::with_scope(settings, config.scope.clone(), patterns)
    }

    /// The rules of `settings` with the site's `scope` and the `include`
    /// and `exclude` patterns.
    pub(crate) fn with_scope(
        settings: &CheckSettings,
        scope: Scope,
        (include, exclude): (Vec<Regex>, Vec<Regex>),
    ) -> Result<Router, CacheError> {
        Ok(Router {
            scope,
            include,
            exclude,
            remap: settings.remap.clone(),
            offline: settings.offline,
            accept: settings.accept.clone(),
            fragments: settings.fragments,
            cache: Mutex::new(Cache::load(
                settings.cache.as_deref(),
                settings.max_cache_age,
            )?),
        })
    }

    /// `url` after the first remap whose prefix it starts with.
    pub(crate) fn remapped(&self, url: &Url) -> Url {
        let text = url.as_str();
        for (from, to) in &self.remap {
            if let Some(rest) = text.strip_prefix(from.as_str())
                && let Ok(url) = Url::parse(&format!("{to}{rest}"))
            {
                return urlnorm::normalize(url);
            }
        }
        url.clone()
    }

    /// Where `url` (a normalised target, without fragment) goes.
    pub(crate) fn route(&self, url: &Url) -> Route {
        let url = self.remapped(url);
        let text = url.as_str();
        if self.exclude.iter().any(|r| r.is_match(text))
            || (!self.include.is_empty() && !self.include.iter().any(|r| r.is_match(text)))
        {
            return Route::Skip("excluded");
        }
        if self.scope.allows(&url) {
            return Route::Internal(url);
        }
        if self.offline {
            return Route::Skip("offline");
        }
        Route::Remote(url)
    }

    /// A cached answer for `url`, unless its anchors are needed.
    pub(crate) fn cached(&self, url: &Url, anchors: bool) -> Option<Answer> {
        if anchors {
            return None;
        }
        let cache = lock(&self.cache);
        let entry = cache.get(url.as_str())?;
        Some(Answer {
            end: End::Status(entry.status),
            moved_to: entry.moved_to.as_deref().and_then(|u| Url::parse(u).ok()),
            retried: None,
            anchors: None,
            cached: true,
        })
    }

    /// Files a network answer in the cache: one that works is kept, one
    /// that does not is forgotten.
    pub(crate) fn remember(&self, url: &Url, answer: &Answer) {
        let mut cache = lock(&self.cache);
        match answer.end {
            End::Status(status) if self.accept.contains(status) => {
                let moved = answer.moved_to.as_ref().map(Url::to_string);
                cache.put(url.to_string(), status, moved);
            }
            _ => cache.forget(url.as_str()),
        }
    }

    /// Writes the cache file, when there is one.
    pub(crate) fn save_cache(&self) -> Result<(), CacheError> {
        lock(&self.cache).save()
    }
}
