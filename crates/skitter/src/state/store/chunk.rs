//! Queue chunks: a run of one host's queued requests stored as a single row.
//!
//! One SQLite row per queued URL made every offer a B-tree insert and every
//! completion a B-tree delete. A chunk holds up to a few dozen of a host's requests
//! in two blobs — their fingerprints (16 bytes each, so the seen set is rebuilt
//! without decoding requests) and the requests themselves in a compact binary
//! form — so the database sees one insert and one delete per chunk instead.
//! A request of a kind other than a page starts with its kind's mark
//! ([`RequestKind::put_mark`]); chunks written before kinds were hold pages only.
//! Decoding checks every length: a damaged row is a [`StoreError::Corrupt`], never
//! a panic.

use url::Url;

use super::StoreError;
use crate::base::request::{Request, RequestKind};
use crate::base::varint::{get_bytes, get_varint, put_str, put_varint};

/// Requests being collected for one host's next chunk.
#[derive(Default)]
pub(crate) struct ChunkBuilder {
    fps: Vec<u8>,
    reqs: Vec<u8>,
}

impl ChunkBuilder {
    /// Appends a request with its fingerprint.
    pub(crate) fn push(&mut self, fp: u128, r: &Request) {
        self.fps.extend_from_slice(&fp.to_be_bytes());
        r.kind.put_mark(&mut self.reqs);
        put_varint(&mut self.reqs, u64::from(r.depth));
        put_varint(&mut self.reqs, u64::from(r.redirects_left));
        put_str(&mut self.reqs, r.url.as_str());
        match &r.parent {
            // Lengths are stored plus one so that zero can mean "no parent".
            Some(p) => {
                put_varint(&mut self.reqs, p.as_str().len() as u64 + 1);
                self.reqs.extend_from_slice(p.as_str().as_bytes());
            }
            None => put_varint(&mut self.reqs, 0),
        }
    }

    /// Requests collected.
    pub(crate) fn len(&self) -> usize {
        self.fps.len() / 16
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.fps.is_empty()
    }

    /// Seals the collected requests into chunk `id` of `host`, leaving this empty.
    pub(crate) fn seal(&mut self, id: i64, host: i64) -> Chunk {
        Chunk {
            id,
            host,
            fps: std::mem::take(&mut self.fps),
            reqs: std::mem::take(&mut self.reqs),
        }
    }
}

/// A sealed chunk, as stored in one `queue` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Unique and increasing in offer order, so a host's chunks read back FIFO.
    pub(crate) id: i64,
    pub(crate) host: i64,
    pub(crate) fps: Vec<u8>,
    pub(crate) reqs: Vec<u8>,
}

impl Chunk {
    /// Requests held.
    pub(crate) fn len(&self) -> usize {
        self.fps.len() / 16
    }

    /// Heap bytes held, for the read-ahead budget.
    pub(crate) fn bytes(&self) -> usize {
        self.fps.len() + self.reqs.len() + 64
    }

    /// The fingerprints, in queue order.
    pub(crate) fn fingerprints(&self) -> Result<Vec<u128>, StoreError> {
        fingerprints(&self.fps)
    }

    /// The requests with their fingerprints, in queue order.
    pub(crate) fn decode(&self) -> Result<Vec<(u128, Request)>, StoreError> {
        let fps = self.fingerprints()?;
        let mut reader = Reader {
            rest: &self.reqs,
            parent: None,
        };
        let mut out = Vec::with_capacity(fps.len());
        for fp in fps {
            out.push((fp, reader.request()?));
        }
        if !reader.rest.is_empty() {
            return Err(corrupt("trailing bytes"));
        }
        Ok(out)
    }

    /// The same chunk holding only the requests `keep` accepts.
    pub(crate) fn retain(&self, keep: impl Fn(u128) -> bool) -> Result<Chunk, StoreError> {
        let mut builder = ChunkBuilder::default();
        for (fp, request) in self.decode()? {
            if keep(fp) {
                builder.push(fp, &request);
            }
        }
        Ok(builder.seal(self.id, self.host))
    }
}

/// Decodes a fingerprint blob (16 big-endian bytes each).
pub(crate) fn fingerprints(blob: &[u8]) -> Result<Vec<u128>, StoreError> {
    if !blob.len().is_multiple_of(16) {
        return Err(corrupt("fingerprint blob length"));
    }
    Ok(blob
        .chunks_exact(16)
        .map(|b| {
            let mut arr = [0u8; 16];
            arr.copy_from_slice(b);
            u128::from_be_bytes(arr)
        })
        .collect())
}

fn parse(bytes: &[u8]) -> Result<Url, StoreError> {
    let text = std::str::from_utf8(bytes).map_err(|_| corrupt("URL is not UTF-8"))?;
    Url::parse(text).map_err(|e| StoreError::Corrupt(format!("queued URL {text:?}: {e}")))
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("queue chunk: {what}"))
}

struct Reader<'a> {
    /// What is left to read.
    rest: &'a [u8],
    /// The last parent read: a page's links share it, and a clone is much
    /// cheaper than parsing it again.
    parent: Option<(&'a [u8], Url)>,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, StoreError> {
        get_varint(&mut self.rest).ok_or_else(|| corrupt("truncated or overlong number"))
    }

    fn small(&mut self) -> Result<u32, StoreError> {
        u32::try_from(self.varint()?).map_err(|_| corrupt("number out of range"))
    }

    fn slice(&mut self, len: u64) -> Result<&'a [u8], StoreError> {
        get_bytes(&mut self.rest, len).ok_or_else(|| corrupt("truncated"))
    }

    fn url(&mut self, len: u64) -> Result<Url, StoreError> {
        parse(self.slice(len)?)
    }

    fn parent(&mut self, len: u64) -> Result<Url, StoreError> {
        let bytes = self.slice(len)?;
        if let Some((last, url)) = &self.parent
            && *last == bytes
        {
            return Ok(url.clone());
        }
        let url = parse(bytes)?;
        self.parent = Some((bytes, url.clone()));
        Ok(url)
    }

    fn request(&mut self) -> Result<Request, StoreError> {
        let (kind, depth) = RequestKind::get_with_depth(&mut self.rest)
            .ok_or_else(|| corrupt("bad kind or depth"))?;
        let redirects_left = self.small()?;
        let len = self.varint()?;
        let url = self.url(len)?;
        let parent = match self.varint()? {
            0 => None,
            n => Some(self.parent(n - 1)?),
        };
        Ok(Request {
            url,
            depth,
            redirects_left,
            parent,
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(url: &str, parent: Option<&str>, depth: u32) -> Request {
        Request {
            url: Url::parse(url).unwrap(),
            depth,
            redirects_left: 300,
            parent: parent.map(|p| Url::parse(p).unwrap()),
            kind: RequestKind::Page,
        }
    }

    #[test]
    fn round_trips_and_retains() {
        let items = [
            (1u128, req("http://a/1", None, 0)),
            (u128::MAX, req("http://a/2?q=é", Some("http://a/"), 200_000)),
            (5, req("http://a/3", Some("http://a/"), 1)),
            (7, req("https://a:8443/x#f", Some("http://b/"), 3)),
            (
                8,
                Request {
                    kind: RequestKind::Sitemap {
                        trusted: false,
                        nesting: 3,
                    },
                    ..req("http://a/sitemap-2.xml", Some("http://b/"), 3)
                },
            ),
        ];
        let mut b = ChunkBuilder::default();
        for (fp, r) in &items {
            b.push(*fp, r);
        }
        assert_eq!(b.len(), 5);
        let chunk = b.seal(9, 4);
        assert!(b.is_empty());
        assert_eq!((chunk.id, chunk.host, chunk.len()), (9, 4, 5));
        assert_eq!(chunk.decode().unwrap(), items.to_vec());
        let kept = chunk.retain(|fp| fp != u128::MAX).unwrap();
        assert_eq!(kept.fingerprints().unwrap(), [1, 5, 7, 8]);
        assert_eq!(kept.decode().unwrap()[3], items[4]);
        assert_eq!(kept.decode().unwrap()[2], items[3]);
    }

    #[test]
    fn damaged_chunks_are_errors_not_panics() {
        let mut b = ChunkBuilder::default();
        b.push(1, &req("http://a/1", Some("http://a/"), 1));
        let good = b.seal(1, 1);
        let mut cases = Vec::new();
        for cut in 0..good.reqs.len() {
            let mut c = good.clone();
            c.reqs.truncate(cut);
            cases.push(c);
        }
        let mut extra = good.clone();
        extra.reqs.push(0);
        cases.push(extra);
        let mut odd = good.clone();
        odd.fps.pop();
        cases.push(odd);
        let mut huge = good.clone();
        huge.reqs = vec![0xff; 12];
        cases.push(huge);
        let mut bad_url = good.clone();
        bad_url.reqs = vec![0, 0, 3, b'x', b'y', b'z', 0];
        cases.push(bad_url);
        for c in cases {
            assert!(
                matches!(c.decode(), Err(StoreError::Corrupt(_))),
                "{:?}",
                c.reqs
            );
        }
    }
}
