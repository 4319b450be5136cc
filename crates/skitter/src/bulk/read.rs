//! Reading what a recipe wants from a step's final 2xx response — its
//! values and the next page of its chain — on the CPU pool, off the async
//! workers, the body decoded first as extraction decodes it. The first value
//! that cannot be read is the item's [`ValueError`], naming the value, its
//! rule and the URL.

use bytes::Bytes;
use reqwest::header::HeaderMap;
use url::Url;

use super::recipe::{Next, ValueError};
use crate::crawl::body::CpuPool;
use crate::fetch::decode;
use crate::parse::items::{PageInput, Pick};

/// What a recipe wants read from a step's final 2xx response.
#[derive(Clone, Copy)]
pub(super) struct Wanted<'a> {
    pub(super) picks: &'a [Pick],
    pub(super) next: Option<&'a Next>,
}

impl Wanted<'_> {
    /// Nothing: an item without a recipe.
    pub(super) const NOTHING: Wanted<'static> = Wanted {
        picks: &[],
        next: None,
    };

    pub(super) fn is_nothing(&self) -> bool {
        self.picks.is_empty() && self.next.is_none()
    }
}

/// What was read from one response: its values, or the first that failed.
pub(super) type Read = Result<Found, ValueError>;

/// The values read from one response, and the next page it names.
pub(super) struct Found {
    pub(super) values: Vec<(String, String)>,
    pub(super) next: Option<Url>,
}

/// The parts of a response a read needs.
pub(super) struct Received {
    /// The body as received (content-encoded).
    pub(super) body: Option<Bytes>,
    pub(super) content_encoding: Option<String>,
    pub(super) charset: Option<String>,
    pub(super) headers: HeaderMap,
    /// When its exchange started.
    pub(super) fetched_at: chrono::DateTime<chrono::Utc>,
}

/// Reads what `wanted` asks for from a final 2xx response of `url`, on the
/// CPU pool (the body decoded first, up to `max` bytes).
pub(super) async fn read(
    cpu: &CpuPool,
    max: u64,
    received: Received,
    url: &Url,
    wanted: Wanted<'_>,
) -> Read {
    let picks: Vec<Pick> = wanted.picks.to_vec();
    let next = wanted.next.cloned();
    let Received {
        body: raw,
        content_encoding: encoding,
        charset,
        headers,
        fetched_at,
    } = received;
    let raw = raw.unwrap_or_default();
    let page_url = url.clone();
    let failed = cpu
        .run(move || {
            let body = decode::decode(encoding.as_deref(), &raw, max).map_err(|e| {
                let why = format!("cannot decode the body: {e}");
                ("the response".to_string(), String::new(), why)
            })?;
            let page = PageInput {
                url: &page_url,
                body: &body,
                charset: charset.as_deref(),
                fetched_at,
            };
            let mut values = Vec::with_capacity(picks.len());
            for pick in &picks {
                let what = || (format!("value {}", pick.name()), pick.spec().to_string());
                match pick.read(&page, &headers) {
                    Ok(Some(v)) => values.push((pick.name().to_string(), v)),
                    Ok(None) => return Err((what().0, what().1, "missing".to_string())),
                    Err(why) => return Err((what().0, what().1, why)),
                }
            }
            let next = match &next {
                Some(rule) => rule.read(&page, &headers).map_err(|why| {
                    let spec = rule.pick().spec().to_string();
                    ("the next page".to_string(), spec, why)
                })?,
                None => None,
            };
            Ok(Found { values, next })
        })
        .await;
    failed.map_err(|(what, spec, why)| ValueError {
        what,
        spec,
        url: url.clone(),
        why,
    })
}
