//! Where one crawl's data lives in Redis and how it is encoded: key names, the
//! split of a URL fingerprint into a seen-set bucket and field, and the compact
//! text form of a queued [`Request`].
//!
//! The encodings are the crawl's on-Redis format, shared by every worker, so
//! they are kept here in one place with their tests.

use url::Url;

use super::super::{FrontierError, HostKey, Request};

/// Bits of the fingerprint that pick the seen bucket: 2^18 hashes, so a crawl
/// of up to ~25 million URLs keeps under Redis' default 128 entries per hash
/// and every bucket stays a compact listpack.
const BUCKET_BITS: u32 = 18;

/// The key names of one crawl, all under `skitter:{NAME}:`.
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    /// Keys for crawl `crawl`; the braces make the name a cluster hash tag.
    pub(crate) fn new(crawl: &str) -> Result<Keys, FrontierError> {
        if crawl.is_empty() || crawl.contains(['{', '}']) || crawl.chars().any(char::is_control) {
            return Err(FrontierError::Storage(format!(
                "invalid crawl name {crawl:?}: it must be non-empty, without braces or control characters"
            )));
        }
        Ok(Keys {
            prefix: format!("skitter:{{{crawl}}}:"),
        })
    }

    /// `skitter:{NAME}:`, the start of every key of the crawl.
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

    /// A SCAN pattern matching every key of the crawl and nothing else.
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

/// The seen-set bucket (a hash key suffix) and field of a fingerprint. The
/// field keeps the low 112 bits; with the bucket's top 18 the whole 128-bit
/// fingerprint is kept, so dedup is exactly as strong as the fingerprint.
pub(crate) fn seen_slot(fingerprint: u128) -> (String, [u8; 14]) {
    let bucket = fingerprint >> (128 - BUCKET_BITS);
    let mut field = [0u8; 14];
    field.copy_from_slice(&fingerprint.to_be_bytes()[2..]);
    (format!("{bucket:x}"), field)
}

/// The text stored in a host queue: `depth TAB redirects_left TAB url TAB parent`.
/// A parsed URL never contains a tab (the parser strips them), so the split is
/// unambiguous; this is about half the size of the JSON form.
pub(crate) fn encode_request(request: &Request) -> String {
    format!(
        "{}\t{}\t{}\t{}",
        request.depth,
        request.redirects_left,
        request.url,
        request.parent.as_ref().map_or("", Url::as_str)
    )
}

/// Reads a queue entry back; `None` if it is not one `encode_request` wrote.
pub(crate) fn decode_request(entry: &str) -> Option<Request> {
    let mut parts = entry.splitn(4, '\t');
    let depth = parts.next()?.parse().ok()?;
    let redirects_left = parts.next()?.parse().ok()?;
    let url = Url::parse(parts.next()?).ok()?;
    let parent = match parts.next()? {
        "" => None,
        p => Some(Url::parse(p).ok()?),
    };
    Some(Request {
        url,
        depth,
        redirects_left,
        parent,
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
        }
    }

    #[test]
    fn requests_round_trip() {
        let cases = [
            req("http://a.test/", None),
            req("https://a.test/x?q=1#f", Some("http://b.test/p")),
            req("http://a.test/%09tab", Some("http://a.test/")),
            req("http://[::1]:8080/ü", None),
        ];
        for case in cases {
            let text = encode_request(&case);
            assert_eq!(decode_request(&text).as_ref(), Some(&case), "{text}");
        }
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
        ] {
            assert_eq!(decode_request(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn seen_slot_keeps_every_bit() {
        let cases = [0u128, u128::MAX, 1 << 110, 1 << 111, 1 << 127, 0x1234_5678];
        for fp in cases {
            let (bucket, field) = seen_slot(fp);
            let high = u128::from_str_radix(&bucket, 16).unwrap() << 110;
            let low = field
                .iter()
                .fold(0u128, |acc, b| (acc << 8) | u128::from(*b));
            assert_eq!(high | low, fp, "{fp:x}");
        }
        assert_eq!(seen_slot(u128::MAX).0, "3ffff");
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
