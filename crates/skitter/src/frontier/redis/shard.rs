//! How one crawl is split into shards, so a Redis Cluster can spread it over
//! its masters: each host belongs to one shard (a fixed hash of `host:port`),
//! and a shard's keys — its hosts' queues, retries and politeness, the seen
//! fingerprints of its hosts' URLs, its `ready`/`leases`/`lease`/`count` — all
//! share one hash tag, so every script still touches one slot only.
//!
//! The number of shards is fixed when the crawl is created and kept in the
//! crawl's `meta` hash (field `shards`); a crawl created before shards existed
//! has none and is one shard, laid out exactly as before.

use url::Url;

use super::layout::{Keys, MAX_SHARDS, SeenSlots, shard_of};
use super::link::Link;
use crate::frontier::FrontierError;
use crate::frontier::memory::fingerprint;
use crate::host::HostKey;

/// Meta field holding the crawl's shard count.
const META_SHARDS: &str = "shards";

/// The shards of one crawl and where each URL's data goes.
#[derive(Clone, Debug)]
pub(crate) struct Shards {
    keys: Vec<Keys>,
    seen: SeenSlots,
}

impl Shards {
    /// The `n` shards of crawl `crawl`.
    pub(crate) fn new(crawl: &str, n: u16) -> Result<Shards, FrontierError> {
        let keys = (0..n.max(1))
            .map(|k| Keys::shard(crawl, k))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Shards {
            keys,
            seen: SeenSlots::new(n),
        })
    }

    /// How many shards there are.
    pub(crate) fn len(&self) -> u16 {
        // At most MAX_SHARDS, checked when the count is read.
        u16::try_from(self.keys.len()).unwrap_or(MAX_SHARDS)
    }

    /// Every shard's keys, shard 0 first.
    pub(crate) fn all(&self) -> impl Iterator<Item = (u16, &Keys)> {
        (0..self.len()).zip(&self.keys)
    }

    /// Shard `k`'s keys.
    pub(crate) fn keys(&self, k: u16) -> &Keys {
        &self.keys[usize::from(k) % self.keys.len()]
    }

    /// The shard of a host.
    pub(crate) fn of_host(&self, host: &HostKey) -> u16 {
        shard_of(host, self.len())
    }

    /// The shard of a URL (its host's), and its seen bucket and field there.
    pub(crate) fn seen_slot(&self, url: &Url) -> (u16, String, Vec<u8>) {
        let (bucket, field) = self.seen.slot(fingerprint(url));
        (self.of_host(&HostKey::of(url)), bucket, field)
    }

    /// The crawl-wide id of lease `seq` of shard `k`: lease numbers count per
    /// shard, so the shard is folded in (`seq * shards + k`; with one shard
    /// the id is the shard's own number).
    pub(crate) fn lease_id(&self, k: u16, seq: u64) -> u64 {
        seq.saturating_mul(u64::from(self.len())) + u64::from(k)
    }

    /// The shard and shard-local number of a crawl-wide lease id.
    pub(crate) fn split_lease(&self, id: u64) -> (u16, u64) {
        let n = u64::from(self.len());
        (u16::try_from(id % n).unwrap_or(0), id / n)
    }
}

/// The crawl's shard count: the stored one; or, for a new crawl, `requested`
/// (stored so every later worker agrees); or 1 when joining a crawl that
/// never stored one (made before shards) or with nothing requested.
/// One script on the crawl-wide slot, so two starters agree on one count.
pub(crate) async fn resolve(
    link: &Link,
    global: &Keys,
    requested: Option<u16>,
) -> Result<u16, FrontierError> {
    if let Some(n) = requested
        && !(1..=MAX_SHARDS).contains(&n)
    {
        return Err(FrontierError::Setting(format!(
            "{n} shards: a crawl has 1 to {MAX_SHARDS}"
        )));
    }
    let script = ::redis::Script::new(
        r"
local s = redis.call('HGET', KEYS[1], ARGV[1])
if s then return s end
if ARGV[2] == '0' or redis.call('HLEN', KEYS[1]) > 0 or redis.call('EXISTS', KEYS[2]) == 1 then
  return '1'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]
",
    );
    let mut call = script.prepare_invoke();
    call.key(global.key("meta"))
        .key(global.key("count"))
        .arg(META_SHARDS)
        .arg(requested.unwrap_or(0));
    let stored: String = link.invoke("shard count", &call).await?;
    match stored.parse::<u16>() {
        Ok(n) if (1..=MAX_SHARDS).contains(&n) => Ok(n),
        _ => Err(FrontierError::Malformed(format!(
            "field {META_SHARDS} of {} holds {:?}, not a shard count \
             from 1 to {MAX_SHARDS}",
            global.key("meta"),
            stored.chars().take(40).collect::<String>()
        ))),
    }
}
