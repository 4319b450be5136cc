//! The bridge between the browser's network and skitter's: every request a tab
//! makes arrives here paused (CDP `Fetch.requestPaused`) and is answered with
//! `Fetch.fulfillRequest` from skitter's own fetch, or `Fetch.failRequest`.
//!
//! Three kinds of request: the page itself (served from the plain fetch, so the
//! page is not fetched twice), a navigation of the main frame the page's
//! scripts attempt (recorded as a link and refused: a render stays on its
//! page), and everything else (scripts, XHR, images, frames), handed to the
//! pipeline's [`SubFetch`], which applies scope, robots.txt and the address
//! policy and may refuse. Those are held to the render's `Budget`: a
//! request past its count, or a response past its bytes, fails in the
//! browser, so a page's scripts cannot make one render fetch or hold without
//! end.

use std::sync::{Arc, Mutex};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use url::Url;

use super::{Budget, Prefetched, Refusal, Rendered, SubFetch, SubRequest};

/// What a render's requests left behind, filled in as they are answered.
#[derive(Default)]
struct Log {
    /// The main frame, known once the page's own request was seen.
    main_frame: Option<FrameId>,
    navigations: Vec<String>,
    exchanges: Vec<(Url, crate::fetch::Exchange)>,
    fetched: u64,
    refused: Vec<(String, Refusal)>,
    /// Requests so far (the page's own aside), and body bytes answered.
    spent: Spent,
    /// Requests failed past the budget.
    over_budget: u64,
}

/// What a render's requests took of its budget.
#[derive(Default)]
struct Spent {
    requests: u64,
    bytes: u64,
}

/// Answers one tab's paused requests.
pub(super) struct Bridge<'a, F> {
    page: &'a Prefetched,
    via: &'a F,
    budget: Budget,
    log: Mutex<Log>,
}

/// Longest wait for the browser to take the answer to one of its requests.
const ANSWER_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How a paused request is answered.
enum Kind {
    Main,
    Navigation(String),
    Sub(Url),
    Refuse(String, Refusal),
    /// Past the render's budget: failed, and only counted.
    OverBudget,
}

impl<'a, F: SubFetch> Bridge<'a, F> {
    pub(super) fn new(page: &'a Prefetched, via: &'a F, budget: Budget) -> Self {
        Bridge {
            page,
            via,
            budget,
            log: Mutex::new(Log::default()),
        }
    }

    /// Answers one paused request; errors answering (the tab went away, the
    /// page cancelled the request) only lose that request.
    pub(super) async fn answer(&self, tab: &Page, ev: Arc<EventRequestPaused>) {
        let id = ev.request_id.clone();
        let kind = match self.classify(&ev) {
            Kind::Main => Kind::Main,
            // Every other request, refused or not, takes from the budget, so
            // that what the render keeps of them is bounded too.
            _ if !self.admit() => Kind::OverBudget,
            kind => kind,
        };
        let reply = match kind {
            Kind::Main => Ok(fulfil(
                id,
                self.page.status,
                &self.page.headers,
                &self.page.body,
            )),
            Kind::Navigation(to) => {
                self.lock().navigations.push(to);
                Err(FailRequestParams::new(id, ErrorReason::Aborted))
            }
            Kind::Refuse(url, why) => {
                self.lock().refused.push((url, why));
                Err(FailRequestParams::new(id, ErrorReason::BlockedByClient))
            }
            Kind::OverBudget => {
                self.lock().over_budget += 1;
                Err(FailRequestParams::new(id, ErrorReason::BlockedByClient))
            }
            Kind::Sub(url) => {
                let req = SubRequest {
                    url: url.clone(),
                    page: self.page.url.clone(),
                };
                match self.via.fetch(req).await {
                    Ok(resp) if !self.hold(resp.body.len()) => {
                        self.lock().over_budget += 1;
                        Err(FailRequestParams::new(id, ErrorReason::BlockedByClient))
                    }
                    Ok(resp) => {
                        let reply = fulfil(id, resp.status, &resp.headers, &resp.body);
                        let mut log = self.lock();
                        log.fetched += 1;
                        if let Some(x) = resp.exchange {
                            log.exchanges.push((url, x));
                        }
                        Ok(reply)
                    }
                    Err(why) => {
                        self.lock().refused.push((url.to_string(), why));
                        Err(FailRequestParams::new(id, ErrorReason::BlockedByClient))
                    }
                }
            }
        };
        // The browser may never reply to an answer (seen for a navigation a
        // timer starts while the page loads): bounded, so one lost reply
        // cannot hold the render until its limit.
        let sent = tokio::time::timeout(ANSWER_LIMIT, async {
            match reply {
                Ok(fulfil) => tab.execute(fulfil).await.map(drop),
                Err(fail) => tab.execute(fail).await.map(drop),
            }
        })
        .await;
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!(url = %ev.request.url, error = %e, "answering a browser request failed");
            }
            Err(_) => {
                tracing::debug!(url = %ev.request.url, "the browser never took the answer to a request");
            }
        }
    }

    /// Takes one request of the budget, if the budget has room for it.
    fn admit(&self) -> bool {
        let mut log = self.lock();
        let room = log.spent.requests < self.budget.requests && log.spent.bytes < self.budget.bytes;
        log.spent.requests += u64::from(room);
        room
    }

    /// Takes `len` body bytes of the budget, if they fit in it.
    fn hold(&self, len: usize) -> bool {
        let mut log = self.lock();
        let total = log.spent.bytes.saturating_add(len as u64);
        let fits = total <= self.budget.bytes;
        if fits {
            log.spent.bytes = total;
        }
        fits
    }

    fn classify(&self, ev: &EventRequestPaused) -> Kind {
        let raw = &ev.request.url;
        let Ok(mut url) = Url::parse(raw) else {
            return Kind::Refuse(raw.clone(), Refusal::Scope);
        };
        url.set_fragment(None);
        let mut log = self.lock();
        if ev.resource_type == ResourceType::Document {
            match &log.main_frame {
                // The first document of a tab is the page: nothing else can
                // load before it (the URL may be spelled differently).
                None => {
                    log.main_frame = Some(ev.frame_id.clone());
                    return Kind::Main;
                }
                Some(main) if *main == ev.frame_id => return Kind::Navigation(url.into()),
                _ => {}
            }
        }
        if !matches!(ev.request.method.as_str(), "GET" | "HEAD") {
            // skitter only reads: a form post or a beacon is not its to send.
            return Kind::Refuse(url.into(), Refusal::Method);
        }
        Kind::Sub(url)
    }

    /// Whether the page tried to navigate its main frame away (answered by
    /// aborting it, and recorded): its own load event may then never come.
    pub(super) fn navigated(&self) -> bool {
        !self.lock().navigations.is_empty()
    }

    /// What the render's requests produced, moved into `out`.
    pub(super) fn finish(self, out: &mut Rendered) {
        let log = self.log.into_inner().unwrap_or_else(|e| e.into_inner());
        out.navigations.extend(log.navigations);
        out.exchanges = log.exchanges;
        out.fetched = log.fetched;
        out.refused = log.refused;
        out.over_budget = log.over_budget;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn fulfil(
    id: chromiumoxide::cdp::browser_protocol::fetch::RequestId,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> FulfillRequestParams {
    let mut reply = FulfillRequestParams::new(id, i64::from(status));
    reply.response_headers = Some(
        headers
            .iter()
            .map(|(name, value)| HeaderEntry::new(name.clone(), value.clone()))
            .collect(),
    );
    reply.body = Some(data_encoding::BASE64.encode(body).into());
    reply
}
