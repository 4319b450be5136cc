//! Where one crawl's data lives in Redis and how it is encoded: key names, the
//! split of a URL fingerprint into a seen-set bucket and field, and the compact
//! text form of a queued [`Request`].
//!
//! The encodings are the crawl's on-Redis format, shared by every worker, so
//! they are kept here in one place with their tests.

use url::Url;

use crate::frontier::{FrontierError, Request, RequestKind};
use crate::host::HostKey;

/// Bits of the fingerprint that pick the seen bucket of a one-shard crawl:
/// 2^18 hashes, so a crawl of up to ~25 million URLs keeps under Redis'
/// default 128 entries per hash and every bucket stays a compact listpack.
/// A crawl of S shards uses 2^18 buckets in all (fewer per shard, see
/// [`SeenSlots`]), so its buckets fill as densely.
const BUCKET_BITS: u32 = 18;

/// The most shards a crawl may have.
pub(crate) const MAX_SHARDS: u16 = 1024;

/// Marks a shard number in a hash tag (`{NAME#3}`), hence not allowed in names.
const SHARD_MARK: char = '#';

/// The key names of one slot of a crawl: all under one hash tag.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    /// The crawl-wide keys of crawl `crawl` (`skitter:{NAME}:`, also shard 0's);
    /// the braces make the name a cluster hash tag.
    pub(crate) fn new(crawl: &str) -> Result<Keys, FrontierError> {
        if crawl.is_empty()
            || crawl.contains(['{', '}', SHARD_MARK])
            || crawl.chars().any(char::is_control)
        {
            return Err(FrontierError::Setting(format!(
                "invalid crawl name {crawl:?}: it must be non-empty, without braces, \
                 '{SHARD_MARK}' or control characters"
            )));
        }
        Ok(Keys {
            prefix: format!("skitter:{{{crawl}}}:"),
        })
    }

    /// The keys of shard `k` of crawl `crawl`: shard 0 shares the crawl-wide
    /// tag (so a one-shard crawl has the layout of before shards), shard k > 0
    /// lives under `skitter:{NAME#k}:`, its own hash tag, so a cluster spreads
    /// the shards over its masters.
    pub(crate) fn shard(crawl: &str, k: u16) -> Result<Keys, FrontierError> {
        let base = Keys::new(crawl)?;
        if k == 0 {
            return Ok(base);
        }
        Ok(Keys {
            prefix: format!("skitter:{{{crawl}{SHARD_MARK}{k}}}:"),
        })
    }

    /// `skitter:{TAG}:`, the start of every key of this slot.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A key of the crawl.
    pub(crate) fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The fixed keys every script declares, in the order `common.lua` reads them.
    pub(crate) fn script_keys(&self) -> [String; 4] {
        ["count", "ready", "leases", "lease"].map(|k| self.key(k))
    }

    /// A SCAN pattern matching every key of this slot and nothing else.
    pub(crate) fn scan_pattern(&self) -> String {
        let mut pattern = String::with_capacity(self.prefix.len() + 1);
        for c in self.prefix.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push('*');
        pattern
    }
}

/// Which shard a host's keys live in: a fixed hash of `host:port`, so every
/// worker agrees without asking (xxh3 is stable across versions and machines).
pub(crate) fn shard_of(host: &HostKey, shards: u16) -> u16 {
    let h = xxhash_rust::xxh3::xxh3_64(host.as_str().as_bytes());
    // The remainder is below `shards`, a u16.
    u16::try_from(h % u64::from(shards.max(1))).unwrap_or(0)
}

/// How fingerprints map to seen buckets in a crawl of some number of shards.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeenSlots {
    bits: u32,
}

impl SeenSlots {
    /// The split for a crawl of `shards` shards: 2^18 buckets over all shards
    /// (at least 2^8 per shard).
    pub(crate) fn new(shards: u16) -> SeenSlots {
        let spread = u32::from(shards.max(1))
            .next_power_of_two()
            .trailing_zeros();
        SeenSlots {
            bits: BUCKET_BITS.saturating_sub(spread).max(8),
        }
    }

    /// The seen-set bucket (a hash key suffix) and field of a fingerprint. The
    /// field keeps the bits the bucket does not (14 bytes with 16 or more
    /// bucket bits, else 15), so dedup is exactly as strong as the fingerprint.
    pub(crate) fn slot(self, fingerprint: u128) -> (String, Vec<u8>) {
        let bucket = fingerprint >> (128 - self.bits);
        let skip = if self.bits >= 16 { 2 } else { 1 };
        let field = fingerprint.to_be_bytes()[skip..].to_vec();
        (format!("{bucket:x}"), field)
    }
}

/// The text stored in a host queue: `depth TAB redirects_left TAB url TAB parent`,
/// then `TAB kind` ([`RequestKind::to_byte`] in decimal) for a kind other than a
/// page, so that every worker claiming a sitemap reads it as one; entries
/// without it (pages, and all entries of older workers) are pages.
/// A parsed URL never contains a tab (the parser strips them), so the split is
/// unambiguous; this is about half the size of the JSON form.
pub(crate) fn encode_request(request: &Request) -> String {
    let mut entry = format!(
        "{}\t{}\t{}\t{}",
        request.depth,
        request.redirects_left,
        request.url,
        request.parent.as_ref().map_or("", Url::as_str)
    );
    if !request.kind.is_page() {
        entry.push_str(&format!("\t{}", request.kind.to_byte()));
    }
    entry
}

/// Reads a queue entry back; `None` if it is not one `encode_request` wrote.
pub(crate) fn decode_request(entry: &str) -> Option<Request> {
    let mut parts = entry.splitn(5, '\t');
    let depth = parts.next()?.parse().ok()?;
    let redirects_left = parts.next()?.parse().ok()?;
    let url = Url::parse(parts.next()?).ok()?;
    let parent = match parts.next()? {
        "" => None,
        p => Some(Url::parse(p).ok()?),
    };
    let kind = match parts.next() {
        None => RequestKind::Page,
        Some(k) => RequestKind::from_byte(k.parse().ok()?)?,
    };
    Some(Request {
        url,
        depth,
        redirects_left,
        parent,
        kind,
    })
}

/// The host name used in per-host keys.
pub(crate) fn host_of(request: &Request) -> HostKey {
    HostKey::of(&request.url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(url: &str, parent: Option<&str>) -> Request {
        Request {
            url: Url::parse(url).unwrap(),
            depth: 3,
            redirects_left: 7,
            parent: parent.map(|p| Url::parse(p).unwrap()),
            kind: RequestKind::Page,
        }
    }

    #[test]
    fn requests_round_trip() {
        let cases = [
            req("http://a.test/", None),
            req("https://a.test/x?q=1#f", Some("http://b.test/p")),
            req("http://a.test/%09tab", Some("http://a.test/")),
            req("http://[::1]:8080/ü", None),
            Request {
                kind: RequestKind::Sitemap {
                    trusted: true,
                    nesting: 1,
                },
                ..req(
                    "http://a.test/sitemap-1.xml",
                    Some("http://a.test/index.xml"),
                )
            },
        ];
        for case in cases {
            let text = encode_request(&case);
            assert_eq!(decode_request(&text).as_ref(), Some(&case), "{text}");
        }
        // An entry of a worker from before kinds: a page.
        let old = "3\t7\thttp://a.test/x\thttp://a.test/";
        assert_eq!(
            decode_request(old),
            Some(req("http://a.test/x", Some("http://a.test/")))
        );
        assert_eq!(
            encode_request(&req("http://a.test/x", Some("http://a.test/"))),
            old
        );
    }

    #[test]
    fn bad_entries_decode_to_none() {
        for bad in [
            "",
            "x",
            "1\t2",
            "a\t2\thttp://a/\t",
            "1\t2\tnot a url\t",
            "1\t2\thttp://a/\tbad",
            "1\t2\thttp://a/\t\t2",
            "1\t2\thttp://a/\t\tx",
        ] {
            assert_eq!(decode_request(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn seen_slot_keeps_every_bit() {
        let cases = [0u128, u128::MAX, 1 << 110, 1 << 111, 1 << 127, 0x1234_5678];
        for (shards, top) in [(1, "3ffff"), (3, "ffff"), (16, "3fff"), (1024, "ff")] {
            let slots = SeenSlots::new(shards);
            for fp in cases {
                let (bucket, field) = slots.slot(fp);
                let high = u128::from_str_radix(&bucket, 16).unwrap() << (128 - slots.bits);
                let low = field
                    .iter()
                    .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
                assert_eq!(high | low, fp, "{fp:x} in {shards} shards");
            }
            assert_eq!(slots.slot(u128::MAX).0, top, "{shards} shards");
        }
        assert_eq!(SeenSlots::new(1).slot(7).1.len(), 14);
    }

    #[test]
    fn shards_have_their_own_tags_and_hosts_spread() {
        assert_eq!(Keys::shard("n", 0).unwrap().prefix(), "skitter:{n}:");
        assert_eq!(Keys::shard("n", 5).unwrap().prefix(), "skitter:{n#5}:");
        assert!(Keys::new("a#1").is_err());
        let url = |i: u32| Url::parse(&format!("http://h{i}.test/")).unwrap();
        let mut used = [0u32; 4];
        for i in 0..400 {
            let host = HostKey::of(&url(i));
            let k = shard_of(&host, 4);
            assert_eq!(k, shard_of(&host, 4), "stable");
            used[usize::from(k)] += 1;
        }
        assert!(used.iter().all(|&n| n > 50), "{used:?}");
        assert_eq!(shard_of(&HostKey::of(&url(1)), 1), 0);
    }

    #[test]
    fn crawl_names_are_checked_and_patterns_escaped() {
        assert!(Keys::new("").is_err());
        assert!(Keys::new("a{b").is_err());
        assert!(Keys::new("a\nb").is_err());
        let keys = Keys::new("nightly*[1]").unwrap();
        assert_eq!(keys.key("ready"), "skitter:{nightly*[1]}:ready");
        assert_eq!(keys.scan_pattern(), "skitter:{nightly\\*\\[1\\]}:*");
    }
}
