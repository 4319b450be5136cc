//! The link results of a running check, sent as they are decided
//! ([`super::LinkChecker::stream`]): a link on the crawled site when the
//! crawl's record of it (and of its fragment's page) is in, a link to
//! another site when the network answered, each distinct link (URL and
//! fragment) once, with the places known then. What is not decided while
//! the crawl runs (a redirect whose end came later, a fragment first seen
//! after its target was decided, links checked after the crawl) is sent
//! when the check ends, before its report: every link of the report is sent
//! once. The channel is bounded: a reader that falls behind slows the check
//! down rather than letting results pile up.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use tokio::sync::mpsc;
use url::Url;

use super::assemble;
use super::collect::{Collected, lock};
use super::remote::Answer;
use super::result::LinkResult;
use super::route::Router;

/// Where decided results go.
pub(crate) struct Emitter {
    tx: mpsc::Sender<LinkResult>,
    /// Set once the crawl is built (the routing needs its scope).
    pub(crate) router: OnceLock<std::sync::Arc<Router>>,
    max_redirect: u32,
    /// The results sent, by URL with fragment.
    sent: Mutex<HashSet<Url>>,
}

impl Emitter {
    pub(crate) fn new(tx: mpsc::Sender<LinkResult>, max_redirect: u32) -> Emitter {
        Emitter {
            tx,
            router: OnceLock::new(),
            max_redirect,
            sent: Mutex::new(HashSet::new()),
        }
    }

    /// The results of `targets` that are decided and not sent yet (their
    /// names are marked sent).
    pub(crate) fn decided<'a>(
        &self,
        c: &Collected,
        answers: &HashMap<Url, Answer>,
        targets: impl IntoIterator<Item = &'a Url>,
    ) -> Vec<LinkResult> {
        let Some(router) = self.router.get() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut sent = lock(&self.sent);
        for url in targets {
            for result in assemble::decided(c, answers, router, url, self.max_redirect) {
                if sent.insert(result.url.clone()) {
                    out.push(result);
                }
            }
        }
        out
    }

    /// The results of the report not sent yet.
    pub(crate) fn rest<'a>(
        &self,
        links: impl IntoIterator<Item = &'a LinkResult>,
    ) -> Vec<LinkResult> {
        let mut sent = lock(&self.sent);
        links
            .into_iter()
            .filter(|l| sent.insert(l.url.clone()))
            .cloned()
            .collect()
    }

    /// Where results go.
    pub(crate) fn sender(&self) -> mpsc::Sender<LinkResult> {
        self.tx.clone()
    }

    /// Sends `results`; a reader that went away is not an error.
    pub(crate) async fn send(&self, results: Vec<LinkResult>) {
        for result in results {
            if self.tx.send(result).await.is_err() {
                return;
            }
        }
    }
}
