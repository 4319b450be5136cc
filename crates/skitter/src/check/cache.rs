//! The cache of recent results of external links (`skitter check --cache
//! FILE`): a JSON file of URL → status and when it was checked. A re-run
//! takes a link's result from it while it is younger than the maximum age,
//! and asks the link's host nothing.
//!
//! Only links that worked are cached: a broken link is asked again on every
//! run, so a fixed link (or a host back up) shows at once, and a link that
//! broke since is found after at most the maximum age. Links whose fragment
//! must be checked are not cached (their anchors are not kept).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The most entries a cache file keeps (the newest); a bound on its size and
/// on the memory reading it takes.
pub const MAX_CACHE_ENTRIES: usize = 1_000_000;

/// A cache file that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// Reading or writing the file failed.
    #[error("link cache {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a link cache.
    #[error("link cache {path} is not a cache file: {source}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        source: serde_json::Error,
    },
}

/// One cached result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The final status.
    pub status: u16,
    /// Where a permanent first redirect pointed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// When it was checked, in seconds since the Unix epoch.
    pub checked: u64,
}

/// The cache, loaded.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    path: Option<PathBuf>,
    max_age: Duration,
    entries: BTreeMap<String, Entry>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Cache {
    /// Reads `path` (a missing file is an empty cache); `None`: no cache.
    pub(crate) fn load(path: Option<&Path>, max_age: Duration) -> Result<Cache, CacheError> {
        let Some(path) = path else {
            return Ok(Cache::default());
        };
        let io = |source| CacheError::Io {
            path: path.to_owned(),
            source,
        };
        let entries = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| CacheError::Format {
                path: path.to_owned(),
                source,
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(io(e)),
        };
        Ok(Cache {
            path: Some(path.to_owned()),
            max_age,
            entries,
        })
    }

    /// The fresh entry of `url`, if any.
    pub(crate) fn get(&self, url: &str) -> Option<&Entry> {
        self.path.as_ref()?;
        let entry = self.entries.get(url)?;
        let age = now_secs().saturating_sub(entry.checked);
        (age <= self.max_age.as_secs()).then_some(entry)
    }

    /// Records a result that worked, checked now.
    pub(crate) fn put(&mut self, url: String, status: u16, moved_to: Option<String>) {
        if self.path.is_some() {
            let checked = now_secs();
            self.entries.insert(
                url,
                Entry {
                    status,
                    moved_to,
                    checked,
                },
            );
        }
    }

    /// Forgets `url` (it no longer works).
    pub(crate) fn forget(&mut self, url: &str) {
        self.entries.remove(url);
    }

    /// Writes the fresh entries back (to a temporary file renamed over the
    /// old one, so a kill leaves one or the other).
    pub(crate) fn save(&mut self) -> Result<(), CacheError> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        let now = now_secs();
        let max_age = self.max_age.as_secs();
        self.entries
            .retain(|_, e| now.saturating_sub(e.checked) <= max_age);
        if self.entries.len() > MAX_CACHE_ENTRIES {
            let mut by_age: Vec<(u64, String)> = self
                .entries
                .iter()
                .map(|(k, e)| (e.checked, k.clone()))
                .collect();
            by_age.sort_unstable();
            let drop = by_age.len() - MAX_CACHE_ENTRIES;
            for (_, k) in by_age.into_iter().take(drop) {
                self.entries.remove(&k);
            }
        }
        let io = |source| CacheError::Io {
            path: path.clone(),
            source,
        };
        let text = serde_json::to_vec_pretty(&self.entries).map_err(std::io::Error::other);
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text.map_err(io)?).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_entries_are_kept_and_old_ones_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("links.json");
        let mut cache = Cache::load(Some(&path), Duration::from_secs(3600)).unwrap();
        cache.put("http://a.test/".into(), 200, None);
        cache.entries.insert(
            "http://old.test/".into(),
            Entry {
                status: 200,
                moved_to: None,
                checked: now_secs() - 7200,
            },
        );
        assert!(cache.get("http://old.test/").is_none());
        cache.save().unwrap();
        let cache = Cache::load(Some(&path), Duration::from_secs(3600)).unwrap();
        assert_eq!(cache.get("http://a.test/").unwrap().status, 200);
        assert!(!cache.entries.contains_key("http://old.test/"));
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(
            Cache::load(Some(&path), Duration::from_secs(1)),
            Err(CacheError::Format { .. })
        ));
    }
}
