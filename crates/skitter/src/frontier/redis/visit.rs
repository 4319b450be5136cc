//! What a shared crawl remembers of each fetched URL for a recrawl (see
//! `recrawl`), in the crawl's own keys: `v:<b>` hashes bucketed like the seen
//! set (same bucket and 14-byte field), each value the URL's depth, its URL and
//! its encoded visit — about 60 bytes plus the URL, in compact listpacks.
//!
//! The visit is written just before the lease is completed, not atomically
//! with it: a worker dying in between leaves the fresh visit and a URL that
//! is fetched again, which then compares with its own latest answer.

use url::Url;

use super::RedisFrontier;
use crate::base::varint::{get_bytes, get_varint, put_str, put_varint};
use crate::frontier::FrontierError;
use crate::state::recrawl::{Visit, decode, encode};

impl RedisFrontier {
    /// Stores the URL's visit, replacing the earlier one.
    pub(super) async fn put_visit(
        &self,
        url: &Url,
        depth: u32,
        visit: &Visit,
    ) -> Result<(), FrontierError> {
        let (k, bucket, field) = self.shared.shards.seen_slot(url);
        let mut value = Vec::with_capacity(80 + url.as_str().len());
        put_varint(&mut value, u64::from(depth));
        put_str(&mut value, url.as_str());
        value.extend_from_slice(&encode(visit));
        let mut set = ::redis::cmd("HSET");
        set.arg(self.shared.shards.keys(k).key(&format!("v:{bucket}")))
            .arg(&field[..])
            .arg(value);
        self.shared.link.query::<()>("put_visit", &set).await
    }

    /// The URL's stored visit, if any (a damaged value reads as none).
    pub(super) async fn get_visit(&self, url: &Url) -> Result<Option<Visit>, FrontierError> {
        let (k, bucket, field) = self.shared.shards.seen_slot(url);
        let mut get = ::redis::cmd("HGET");
        get.arg(self.shared.shards.keys(k).key(&format!("v:{bucket}")))
            .arg(&field[..]);
        let value: Option<Vec<u8>> = self.shared.link.query("get_visit", &get).await?;
        Ok(value.and_then(|v| split(&v).map(|(_, _, visit)| visit)))
    }
}

/// A stored value's depth, URL and visit; `None` if it is damaged.
pub(super) fn split(mut value: &[u8]) -> Option<(u32, &str, Visit)> {
    let b = &mut value;
    let depth = u32::try_from(get_varint(b)?).ok()?;
    let len = get_varint(b)?;
    let url = std::str::from_utf8(get_bytes(b, len)?).ok()?;
    Some((depth, url, decode(b)?))
}
