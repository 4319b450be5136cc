//! The compact form of a queued request, in the frontier's memory and in its
//! spill files: the URL as text and a parent shared by every link of one page.
//! Both keep the request's kind (a sitemap stays a sitemap however it is queued).

use std::sync::Arc;

use url::Url;

use super::{FrontierError, Request, RequestKind};
use crate::base::varint::{get_bytes, get_varint, put_str, put_varint};

/// A queued request as the frontier holds it in memory: the URL as text (parsed
/// again when claimed) and the parent shared by every link of the page it was
/// found on. 32 bytes plus the URL's text, against about 300 for a [`Request`].
#[derive(Debug)]
pub(crate) struct Queued {
    url: Box<str>,
    parent: Option<Arc<Url>>,
    depth: u32,
    /// Saturated at `u16::MAX` (far beyond any sane redirect limit), so the
    /// kind fits beside it in the 32 bytes.
    redirects_left: u16,
    /// [`RequestKind::to_byte`].
    kind: u8,
}

/// What the allocator adds to a heap block, roughly (glibc: 8 bytes, rounded to 16).
const ALLOC_OVERHEAD: usize = 16;

impl Queued {
    /// The compact form of `request`, sharing `last`'s parent when it is the same
    /// page (a page's links arrive together).
    pub(crate) fn new(request: Request, last: &mut Option<Arc<Url>>) -> Queued {
        let parent = request.parent.map(|p| share(p, last));
        Queued {
            url: String::from(request.url).into_boxed_str(),
            parent,
            depth: request.depth,
            redirects_left: u16::try_from(request.redirects_left).unwrap_or(u16::MAX),
            kind: request.kind.to_byte(),
        }
    }

    /// Memory held by this entry alone (its slot in a queue and its URL text).
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of::<Queued>() + self.url.len() + ALLOC_OVERHEAD
    }

    /// The bytes dropping this entry frees through its parent: all of the
    /// parent's when this entry holds its last reference, else none.
    pub(crate) fn sole_parent_bytes(&self) -> usize {
        match self.parent_refs() {
            1 => self.parent_bytes(),
            _ => 0,
        }
    }

    /// References to this entry's parent (0 without one).
    pub(crate) fn parent_refs(&self) -> usize {
        self.parent.as_ref().map_or(0, Arc::strong_count)
    }

    /// Memory the parent holds, however many entries share it.
    pub(crate) fn parent_bytes(&self) -> usize {
        self.parent.as_deref().map_or(0, parent_bytes)
    }

    /// Identifies the shared parent, to charge each one once.
    pub(crate) fn parent_ptr(&self) -> Option<*const Url> {
        self.parent.as_ref().map(Arc::as_ptr)
    }

    /// The request again. The URL was serialised from a parsed URL, so it parses.
    pub(crate) fn into_request(self) -> Result<Request, FrontierError> {
        let url = Url::parse(&self.url).map_err(|e| FrontierError::BadUrl {
            url: self.url.to_string(),
            source: e,
        })?;
        Ok(Request {
            url,
            depth: self.depth,
            redirects_left: u32::from(self.redirects_left),
            parent: self.parent.map(Arc::unwrap_or_clone),
            // Only `Queued::new` and `decode` fill it, from a valid kind.
            kind: RequestKind::from_byte(self.kind).unwrap_or_default(),
        })
    }
}

/// Memory one shared parent URL holds (the `Arc` block and the text).
fn parent_bytes(parent: &Url) -> usize {
    std::mem::size_of::<Url>() + 16 + parent.as_str().len() + 2 * ALLOC_OVERHEAD
}

/// `parent`, or `last` when it is the same URL; `last` becomes the result.
/// A new `Arc` is created only for a new parent.
fn share(parent: Url, last: &mut Option<Arc<Url>>) -> Arc<Url> {
    if let Some(prev) = last
        && prev.as_str() == parent.as_str()
    {
        return Arc::clone(prev);
    }
    let arc = Arc::new(parent);
    *last = Some(Arc::clone(&arc));
    arc
}

/// A run of encoded requests: one host's spilled queue segment. The parent is
/// written once per run of links from the same page.
///
/// Entry: the kind's mark (none for a page, see [`RequestKind::put_mark`]); then
/// varint depth, varint redirects left, varint length + URL, then a parent
/// tag: 0 none, 1 the previous entry's parent, 2 varint length + URL.
#[derive(Debug, Default)]
pub(crate) struct Encoded {
    bytes: Vec<u8>,
    count: u32,
    /// Where the previous entry's parent text sits in `bytes`.
    last_parent: Option<(usize, usize)>,
}

impl Encoded {
    /// Appends one request.
    pub(crate) fn push(&mut self, request: &Request) {
        request.kind.put_mark(&mut self.bytes);
        put_varint(&mut self.bytes, u64::from(request.depth));
        put_varint(&mut self.bytes, u64::from(request.redirects_left));
        put_str(&mut self.bytes, request.url.as_str());
        match &request.parent {
            None => {
                self.bytes.push(0);
                self.last_parent = None;
            }
            Some(p) => {
                let same = self
                    .last_parent
                    .is_some_and(|(at, len)| &self.bytes[at..at + len] == p.as_str().as_bytes());
                if same {
                    self.bytes.push(1);
                } else {
                    self.bytes.push(2);
                    put_varint(&mut self.bytes, p.as_str().len() as u64);
                    self.last_parent = Some((self.bytes.len(), p.as_str().len()));
                    self.bytes.extend_from_slice(p.as_str().as_bytes());
                }
            }
        }
        self.count += 1;
    }

    /// Encoded bytes so far.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Bytes allocated for the encoding.
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Entries so far.
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// The encoded bytes, leaving this empty.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        self.count = 0;
        self.last_parent = None;
        std::mem::take(&mut self.bytes)
    }
}

/// Decodes a run written by [`Encoded`] into in-memory entries, sharing parents
/// again. Fails on bytes that are not such a run (a damaged spill file).
pub(crate) fn decode(mut bytes: &[u8], out: &mut Vec<Queued>) -> Result<(), FrontierError> {
    let bad = || FrontierError::Malformed("a spill file holds damaged queue data".into());
    let mut last: Option<Arc<Url>> = None;
    while !bytes.is_empty() {
        let (kind, depth) = RequestKind::get_with_depth(&mut bytes).ok_or_else(bad)?;
        let redirects_left =
            u32::try_from(get_varint(&mut bytes).ok_or_else(bad)?).map_err(|_| bad())?;
        let url = get_str(&mut bytes).ok_or_else(bad)?;
        let (&tag, rest) = bytes.split_first().ok_or_else(bad)?;
        bytes = rest;
        let parent = match tag {
            0 => {
                last = None;
                None
            }
            1 => Some(Arc::clone(last.as_ref().ok_or_else(bad)?)),
            2 => {
                let text = get_str(&mut bytes).ok_or_else(bad)?;
                let parsed = Url::parse(text).map_err(|_| bad())?;
                let arc = Arc::new(parsed);
                last = Some(Arc::clone(&arc));
                Some(arc)
            }
            _ => return Err(bad()),
        };
        out.push(Queued {
            url: url.into(),
            parent,
            depth,
            redirects_left: u16::try_from(redirects_left).unwrap_or(u16::MAX),
            kind: kind.to_byte(),
        });
    }
    Ok(())
}

fn get_str<'a>(bytes: &mut &'a [u8]) -> Option<&'a str> {
    let len = get_varint(bytes)?;
    std::str::from_utf8(get_bytes(bytes, len)?).ok()
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
    fn encode_decode_round_trips_and_shares_parents() {
        let requests = vec![
            req("http://a/1", None, 0),
            req("http://a/2", Some("http://a/1"), 1),
            req("http://a/3", Some("http://a/1"), 1),
            req("http://a/%C3%A9?q=1", Some("http://a/2"), 200),
            req("http://a/5", None, 2),
            Request {
                kind: RequestKind::Sitemap {
                    trusted: true,
                    nesting: 2,
                },
                ..req("http://a/sitemap.xml", Some("http://a/2"), 2)
            },
        ];
        let mut enc = Encoded::default();
        for r in &requests {
            enc.push(r);
        }
        assert_eq!(enc.count(), 6);
        let bytes = enc.take();
        let mut out = Vec::new();
        decode(&bytes, &mut out).unwrap();
        assert!(Arc::ptr_eq(
            out[1].parent.as_ref().unwrap(),
            out[2].parent.as_ref().unwrap()
        ));
        let back: Vec<Request> = out.into_iter().map(|q| q.into_request().unwrap()).collect();
        assert_eq!(back, requests);
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let mut enc = Encoded::default();
        enc.push(&req("http://a/2", Some("http://a/1"), 1));
        let bytes = enc.take();
        for cut in 0..bytes.len() {
            let mut out = Vec::new();
            assert!(decode(&bytes[..cut], &mut out).is_err() || cut == 0);
        }
        let mut out = Vec::new();
        assert!(
            decode(&[0, 0, 1, b'x', 1], &mut out).is_err(),
            "tag 1 first"
        );
        assert!(decode(&[0, 0, 0, 9], &mut out).is_err(), "bad tag");
    }

    #[test]
    fn in_memory_form_shares_the_parent() {
        let mut last = None;
        let a = Queued::new(req("http://a/2", Some("http://a/1"), 1), &mut last);
        let b = Queued::new(req("http://a/3", Some("http://a/1"), 1), &mut last);
        assert!(Arc::ptr_eq(
            a.parent.as_ref().unwrap(),
            b.parent.as_ref().unwrap()
        ));
        assert_eq!(std::mem::size_of::<Queued>(), 32);
    }
}
