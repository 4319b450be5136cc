//! Link checking (`skitter check`): every link on every page of a site,
//! links to other sites included, with where each broken one appears.
//!
//! The check runs on a crawl (same scope, robots.txt and politeness; page
//! requisites fetched too, as `--resources`), which answers for every link
//! on the site: its record is the link's result. A sink of its own
//! (`collect`) takes the links the crawl's parse found on each page (HTML
//! pages, stylesheets, sitemaps, `Link` headers: `Page::links`), with
//! their lines and an HTML page's anchors, and hands each new target on
//! through a bounded channel;
//! links the crawl will not answer for (other sites, mostly) are checked
//! meanwhile by `remote` (HEAD then GET, each distinct URL once, per-host
//! politeness, retries, no crawl beyond them). When the crawl is done,
//! `assemble` joins the two into one [`LinkResult`] per distinct link (URL
//! and fragment), fragments checked against the target page's anchors.
//!
//! ```
//! use skitter::check::LinkChecker;
//! use skitter::settings::{CheckSettings, CrawlSettings};
//! use skitter_testsite::{SiteConfig, TestSite};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let site = TestSite::start(SiteConfig { pages: 5, ..SiteConfig::default() })?;
//! let settings = CheckSettings::new(CrawlSettings::new([site.url("/")]));
//! let report = LinkChecker::from_settings(settings)?
//!     .run(CancellationToken::new())
//!     .await?;
//! // The generated site has two broken links: `/P/N` where `/p/N` is
//! // meant, and a `#frag` that no page has.
//! let broken: Vec<_> = report.broken().collect();
//! assert_eq!(broken.len(), 2);
//! assert!(broken.iter().any(|l| l.url.path().starts_with("/P/")));
//! assert!(broken.iter().any(|l| l.url.fragment() == Some("frag")));
//! assert!(broken.iter().all(|l| l.occurrences[0].line > 0));
//! # Ok(())
//! # }
//! ```

mod assemble;
mod cache;
mod collect;
mod html;
mod journal;
mod local;
mod remote;
mod result;
mod route;
mod stream;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::crawl::body::CpuPool;
use crate::fetch::Fetcher;
use crate::host::slots::HostLimits;
use crate::output::report_html::{self, TimelineSink, timeline};
use crate::parse::links::ExtractMode;
use crate::settings::CheckSettings;
use crate::{BuildError, CrawlError, Crawler, CrawlerBuilder};

pub use cache::{CacheError, MAX_CACHE_ENTRIES};
pub use collect::MAX_OCCURRENCES;
pub use html::MAX_ROWS as MAX_REPORT_ROWS;
pub use journal::{JournalError, MAX_STATE_LINE};
pub use local::{MAX_FILES, check_folder};
pub use result::{CheckReport, CheckSummary, LinkResult, LinkState, Occurrence, Problem};

use collect::Collected;
use collect::{Collector, NewTarget, lock};
use journal::{Earlier, Journal};
use remote::{Answer, Remote};
use route::{Route, Router};
use stream::Emitter;

/// Targets waiting for the checker; the crawl's sink waits when it is full.
const QUEUE: usize = 1024;

/// A check that could not run (a broken link is a result, not an error).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The settings do not make a crawl.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The crawl could not start.
    #[error(transparent)]
    Crawl(#[from] CrawlError),
    /// The cache file cannot be read or written.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The findings of earlier runs cannot be read, or kept.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The HTML report cannot be written.
    #[error("cannot write the HTML report {path}: {source}")]
    ReportHtml {
        /// The report's file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A link check, ready to run.
pub struct LinkChecker {
    settings: CheckSettings,
    builder: CrawlerBuilder,
    state: Option<PathBuf>,
    report_html: Option<PathBuf>,
}

impl LinkChecker {
    /// The check `settings` describe, on a crawl of `settings.crawl`.
    pub fn from_settings(settings: CheckSettings) -> Result<LinkChecker, BuildError> {
        let builder = Crawler::from_settings(settings.crawl.clone());
        LinkChecker::on_crawl(settings, builder)
    }

    /// The check on a crawl built elsewhere (with outputs, a state directory
    /// to resume…), whose settings replace `settings.crawl`. Page requisites
    /// are always fetched: they are links to check.
    pub fn on_crawl(
        mut settings: CheckSettings,
        builder: CrawlerBuilder,
    ) -> Result<LinkChecker, BuildError> {
        let builder = builder.extract_mode(ExtractMode::Resources);
        settings.crawl = builder.settings().clone();
        settings.check().map_err(BuildError::Value)?;
        Ok(LinkChecker {
            settings,
            builder,
            state: None,
            report_html: None,
        })
    }

    /// Writes the crawl's HTML report to `path` when the check is done,
    /// with the check's sections (broken links grouped by page, with line,
    /// element and attribute; permanent redirects; flaky links) after the
    /// totals. The crawl's report records must be kept for its figures
    /// (`RunSettings::records`).
    pub fn report_html(mut self, path: impl Into<PathBuf>) -> LinkChecker {
        self.report_html = Some(path.into());
        self
    }

    /// Keeps the check's findings in `dir` (the links found on each page,
    /// its anchors, the crawl's record of it, the answers of links to other
    /// sites), and starts from what an earlier run kept there: with a crawl
    /// that resumes from its own state (a disk frontier in the same
    /// directory, `skitter check --state DIR`), a resumed check reports
    /// everything found before and after, each once.
    pub fn keep_findings_in(mut self, dir: impl Into<PathBuf>) -> LinkChecker {
        self.state = Some(dir.into());
        self
    }

    /// Crawls and checks; the report lists every distinct link found.
    pub async fn run(self, cancel: CancellationToken) -> Result<CheckReport, CheckError> {
        self.run_inner(cancel, None).await
    }

    /// Crawls and checks as [`LinkChecker::run`] does, and sends each
    /// distinct link's result to `results` as it is decided: a link on the
    /// site when the crawl's record of it is in, a link elsewhere when it
    /// answered, with the places known then; what is decided only at the
    /// end (a redirect's result, a fragment first seen after its target was
    /// decided, links checked after the crawl) before the report is
    /// returned. Every link of the report is sent once (the report's copy
    /// has all its places). The channel is bounded: a reader that falls
    /// behind slows the check down; one that goes away does not stop it.
    ///
    /// ```
    /// use skitter::check::{LinkChecker, LinkResult};
    /// use skitter::settings::{CheckSettings, CrawlSettings};
    /// use skitter_testsite::{SiteConfig, TestSite};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let site = TestSite::start(SiteConfig { pages: 5, ..SiteConfig::default() })?;
    /// let settings = CheckSettings::new(CrawlSettings::new([site.url("/")]));
    /// let checker = LinkChecker::from_settings(settings)?;
    /// let (tx, mut rx) = tokio::sync::mpsc::channel::<LinkResult>(64);
    /// let reading = async move {
    ///     let (mut all, mut broken) = (std::collections::BTreeSet::new(), 0);
    ///     while let Some(result) = rx.recv().await {
    ///         broken += usize::from(result.is_broken());
    ///         assert!(all.insert(result.url), "each link once");
    ///     }
    ///     (all, broken)
    /// };
    /// let cancel = CancellationToken::new();
    /// let (report, (all, broken)) = tokio::join!(checker.run_streaming(cancel, tx), reading);
    /// // Every link of the report was streamed, the two broken ones too.
    /// let report = report?;
    /// assert_eq!(all.len(), report.links.len());
    /// assert_eq!(broken, 2);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_streaming(
        self,
        cancel: CancellationToken,
        results: mpsc::Sender<LinkResult>,
    ) -> Result<CheckReport, CheckError> {
        self.run_inner(cancel, Some(results)).await
    }

    async fn run_inner(
        self,
        cancel: CancellationToken,
        results: Option<mpsc::Sender<LinkResult>>,
    ) -> Result<CheckReport, CheckError> {
        let started = std::time::Instant::now();
        let max_redirect = self.settings.crawl.request.max_redirect;
        let emitter = results.map(|tx| Arc::new(Emitter::new(tx, max_redirect)));
        let cpu = Arc::new(CpuPool::new());
        let (journal, earlier) = match &self.state {
            Some(dir) => {
                let (journal, earlier) = Journal::open(dir)?;
                (Some(Arc::new(journal)), earlier)
            }
            None => (None, Earlier::default()),
        };
        // The targets earlier runs found are sent: the checker asks those
        // it has no answer for (and the crawl answers for its own).
        let sent: HashMap<Url, bool> = (earlier.collected.targets.iter())
            .map(|(url, t)| (url.clone(), t.fragments))
            .collect();
        let pending: Vec<NewTarget> = (sent.iter())
            .filter(|(url, _)| !earlier.answers.contains_key(*url))
            .map(|(url, &anchors)| NewTarget {
                url: url.clone(),
                anchors,
            })
            .collect();
        let shared = Arc::new(Mutex::new(earlier.collected));
        let (tx, rx) = mpsc::channel(QUEUE);
        if !pending.is_empty() {
            let tx = tx.clone();
            tokio::spawn(async move {
                for target in pending {
                    if tx.send(target).await.is_err() {
                        break;
                    }
                }
            });
        }
        let collector = Collector {
            shared: shared.clone(),
            tx: Some(tx),
            keep: journal.clone().map(|journal| {
                Box::new(move |record: &_, filed: Option<&_>| journal.page(record, filed))
                    as collect::KeepPage
            }),
            sent,
            decide: emitter.clone().map(|emitter| {
                let tx = emitter.sender();
                let decide = move |c: &Collected, targets: &[&Url]| {
                    emitter.decided(c, &HashMap::new(), targets.iter().copied())
                };
                (Box::new(decide) as collect::Decide, tx)
            }),
            pages: 0,
        };
        let mut builder = self.builder.sink(Box::new(collector));
        let mut timeline = None;
        if self.report_html.is_some() {
            let (sink, handle) = TimelineSink::new();
            builder = builder.sink(Box::new(sink));
            timeline = Some(handle);
        }
        let crawler = builder.build()?;
        let config = crawler.config();
        let router = Arc::new(Router::new(&self.settings, config)?);
        if let Some(emitter) = &emitter {
            let _ = emitter.router.set(router.clone());
        }
        let remote = Arc::new(Remote {
            fetcher: Fetcher::new(config.fetch.clone()).map_err(BuildError::from)?,
            hosts: HostLimits::new(config.host_policy),
            global: Arc::new(Semaphore::new(self.settings.external_concurrency)),
            retry: config.retry,
            max_redirect: config.max_redirect,
            cpu,
        });
        let max_redirect = config.max_redirect;
        let stream =
            futures_util::stream::unfold(rx, |mut rx| async { rx.recv().await.map(|t| (t, rx)) });
        let sides = Arc::new(Checking {
            router: router.clone(),
            remote,
            journal,
            emit: emitter.clone().map(|e| (e, shared.clone())),
        });
        let checking = tokio::spawn(check_all(
            stream,
            sides.clone(),
            self.settings.external_concurrency,
            false,
            cancel.clone(),
        ));
        let report = crawler.run(cancel.clone()).await?;
        let mut answers = earlier.answers;
        let checked = match checking.await {
            Ok(answers) => answers,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => HashMap::new(),
        };
        for (url, answer) in checked {
            keep(&mut answers, url, answer);
        }
        // Links the crawl did not answer for although on its site (a
        // redirect off the site, a link it never got to): checked now.
        let collected = std::mem::take(&mut *lock(&shared));
        let left = assemble::unanswered(&collected, &answers, &router, max_redirect);
        if !left.is_empty() && !cancel.is_cancelled() {
            let stream = futures_util::stream::iter(left);
            let more = check_all(
                stream,
                sides,
                self.settings.external_concurrency,
                true,
                cancel.clone(),
            )
            .await;
            for (url, answer) in more {
                keep(&mut answers, url, answer);
            }
        }
        let mut out = assemble::report(&collected, &answers, &router, &self.settings);
        out.summary.elapsed_secs = started.elapsed().as_secs_f64();
        out.stopped = report.stopped.as_ref().map(stop_text);
        router.save_cache()?;
        if let (Some(path), Some(timeline)) = (&self.report_html, &timeline) {
            let mut crawl = report;
            crawl.sinks.retain(|s| s.name != timeline::SINK_NAME);
            report_html::write_with(path, &crawl, &timeline.timeline(), &|html| {
                html::sections(&out, html)
            })
            .map_err(|source| CheckError::ReportHtml {
                path: path.clone(),
                source,
            })?;
        }
        if let Some(emitter) = &emitter {
            emitter.send(emitter.rest(&out.links)).await;
        }
        Ok(out)
    }
}

/// What checking links over the network uses.
pub(crate) struct Checking {
    pub router: Arc<Router>,
    pub remote: Arc<Remote>,
    /// Where answers are kept for a resumed check.
    pub journal: Option<Arc<Journal>>,
    /// Where results go as they are decided, and the crawl's findings
    /// they are decided with, when results are streamed.
    pub emit: Option<(Arc<Emitter>, Arc<Mutex<Collected>>)>,
}

/// Checks every target of `targets` the router sends to the network (and,
/// with `leftover`, those on the crawled site too: the crawl is over),
/// `concurrency` tasks at once (each request also waits for its host's
/// gate); the answers by (remapped) URL, each also kept in `journal` when
/// there is one.
async fn check_all(
    targets: impl futures_util::Stream<Item = NewTarget>,
    sides: Arc<Checking>,
    concurrency: usize,
    leftover: bool,
    cancel: CancellationToken,
) -> HashMap<Url, Answer> {
    let answers = Mutex::new(HashMap::new());
    let Checking {
        router,
        remote,
        journal,
        emit,
    } = &*sides;
    targets
        .for_each_concurrent(concurrency.saturating_mul(4), |target| {
            let (cancel, answers) = (&cancel, &answers);
            async move {
                let url = match router.route(&target.url) {
                    Route::Remote(url) => url,
                    Route::Internal(url) if leftover => url,
                    _ => return,
                };
                let answer = match router.cached(&url, target.anchors) {
                    Some(answer) => answer,
                    None => {
                        let Some(answer) = remote.check(&url, target.anchors, cancel).await else {
                            return;
                        };
                        router.remember(&url, &answer);
                        answer
                    }
                };
                if let Some(journal) = journal {
                    journal.answer(&url, &answer);
                }
                keep(&mut lock(answers), url, answer);
                if let Some((emitter, shared)) = emit {
                    let decided = {
                        let answers = lock(answers);
                        emitter.decided(&lock(shared), &answers, [&target.url])
                    };
                    emitter.send(decided).await;
                }
            }
        })
        .await;
    answers.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Files `answer` for `url`, unless the one there has anchors and it has
/// not (a second check of a URL is made for its anchors).
fn keep(answers: &mut HashMap<Url, Answer>, url: Url, answer: Answer) {
    match answers.get(&url) {
        Some(old) if old.anchors.is_some() && answer.anchors.is_none() => {}
        _ => {
            answers.insert(url, answer);
        }
    }
}

/// A crawl's stop reason as the report says it (`interrupted`, the limit's
/// flag, the failure).
fn stop_text(stop: &crate::output::report::StopReason) -> String {
    use crate::output::report::StopReason;
    match stop {
        StopReason::Interrupted => "interrupted".into(),
        StopReason::Limit(limit) => limit.to_string(),
        StopReason::Fatal(e) => format!("fatal: {e}"),
        StopReason::OutputClosed(e) => format!("output closed: {e}"),
    }
}
