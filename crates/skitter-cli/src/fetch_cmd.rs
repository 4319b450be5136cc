//! `skitter fetch`: flags → [`skitter::bulk::BulkFetcherBuilder`] in one place,
//! the input sources chained into one stream, a progress bar, the end summary.
//!
//! Exit statuses: 0 when every item succeeded (or was skipped because its file
//! exists), 1 when some failed (including malformed input lines or patterns),
//! 2 on bad usage (bad flags, unreadable input, unusable output) or when an output
//! failed mid-run, 130 when interrupted.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use futures_util::stream::{self, Stream, StreamExt};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use skitter::bulk::{
    self, BulkFetcher, BulkFetcherBuilder, BulkSettings, ChainStop, InputItem, ItemReport, Outcome,
    RecipeSettings, StopReason, Summary,
};
use skitter::host::HostPolicy;
use skitter::output::{ContentField, MarkdownSink, WarcOptions, WarcSink};
use skitter::watch::fetch::FetchWatch;
use tokio::io::BufReader;
use tokio_util::sync::CancellationToken;

use crate::content_flags::ContentFlags;
use crate::extract_flags::ExtractFlags;
use crate::flags;
use crate::request_flags::RequestFlags;
use crate::watch_flags::WatchFlags;

/// Options of `skitter fetch`.
#[derive(Args, Debug, Clone)]
pub struct FetchArgs {
    /// URLs or curl-style patterns (`http://h/p?page=[1-20]`, `http://h/{a,b}.gif`,
    /// `[001-100]`, `[a-z]`); `-` reads more from stdin, one per line.
    #[arg(value_name = "URL|PATTERN")]
    pub urls: Vec<String>,
    /// Read URLs or patterns from FILE, one per line (`#` comments); `-` is stdin.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Take `[]` and `{}` literally instead of as patterns.
    #[arg(long)]
    pub no_glob: bool,
    /// Requests in flight at most, over all hosts.
    #[arg(short = 'c', long, default_value_t = bulk::DEFAULT_CONCURRENCY, value_parser = flags::count, value_name = "N")]
    pub concurrency: usize,
    /// Requests in flight at most to one host (host:port); a host starts at 6
    /// (or this, if lower) and doubles on each clean answer (slow start).
    #[arg(long, default_value_t = bulk::DEFAULT_PER_HOST, value_parser = flags::count, value_name = "N")]
    pub per_host: usize,
    /// Minimum gap between request starts to one host, e.g. 250ms (the
    /// crawl's rule; a 429 or Retry-After pauses the host either way).
    #[arg(long, value_parser = flags::duration, default_value = "0s", value_name = "DURATION")]
    pub delay: std::time::Duration,
    /// Up to this much random extra gap on top of --delay.
    #[arg(long, value_parser = flags::duration, default_value = "0s", value_name = "DURATION")]
    pub jitter: std::time::Duration,
    /// Redirect hops followed per URL.
    #[arg(long, alias = "max_redirect", default_value_t = bulk::DEFAULT_MAX_REDIRECT, value_name = "N")]
    pub max_redirect: u32,
    /// Bodies larger than this fail (error body_too_large); bodies are held in
    /// memory up to this size, one per request in flight.
    #[arg(long, value_parser = flags::size, default_value = "10M", value_name = "SIZE")]
    pub max_body_size: u64,
    #[command(flatten)]
    pub request: RequestFlags,
    /// Save each 2xx body under DIR (as DIR/host/path unless --name-template).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// File names under --output-dir: {host}, {path}, {basename}, {query}, and
    /// {num} for the 1-based input position (also spelled as n in braces), e.g.
    /// 'pages/{num}.json'; with a recipe also {1}, {2}… (the input pattern's
    /// ranges), {page} (a page's place in its chain) and --let values by
    /// name. (The help cannot print the short form: clap reads it as a line
    /// break.)
    #[arg(long, value_name = "TEMPLATE", requires = "output_dir")]
    pub name_template: Option<String>,
    /// Read a value from each item's response for later steps and file
    /// names: NAME=SPEC from the item's URL, STEP:NAME=SPEC from step STEP
    /// (1 is the item's URL, 2 the first --then). SPEC is a --field rule
    /// (json:/country, css:SEL@attr, regex:RE) or header:NAME or link:REL. A
    /// missing value, or one that is not a single string or number, fails
    /// the item.
    #[arg(long = "let", value_name = "[STEP:]NAME=SPEC")]
    pub lets: Vec<String>,
    /// A further step of each item: fetch this URL template after the step
    /// before, resolved against its URL ({NAME} a --let value, {1}, {2}…
    /// the values of the input pattern's ranges, percent-encoded). Repeat
    /// for more steps; the last step's body is the one saved.
    #[arg(long, value_name = "URL_TEMPLATE")]
    pub then: Vec<String>,
    /// Follow the last step's next pages until none: link:next (the Link
    /// header), json:/next, css:a[rel=next]@href, header:NAME, or
    /// PARAM=SPEC for a cursor put into query parameter PARAM (e.g.
    /// after=json:/cursor). A page already fetched ends the chain with a
    /// note. Pages of one item come in order, items side by side.
    #[arg(long, value_name = "RULE")]
    pub next: Option<String>,
    /// Pages one chain of --next may have.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), default_value_t = bulk::DEFAULT_MAX_PAGES)]
    pub max_pages: u32,
    /// With a recipe (--then, --let, --next): record in FILE (SQLite) where
    /// each item has got to, after each step and page; the same command run
    /// again skips finished items and resumes the others at their last step
    /// or page, without fetching again what was finished.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Do not fetch URLs whose file already exists (resume a download).
    #[arg(long, requires = "output_dir")]
    pub skip_existing: bool,
    /// Re-download only what changed: keep an index of saved URLs
    /// (DIR/.skitter-fetch-index) and send its validators (If-None-Match,
    /// If-Modified-Since); a 304, or the same body again, leaves the file
    /// untouched. The summary counts new/changed/unchanged/gone/failed; with
    /// --warc, unchanged URLs are archived as revisit records. With
    /// --skip-existing, files the index does not know are skipped.
    #[arg(long, requires = "output_dir")]
    pub if_modified: bool,
    /// Write one JSON line per response to FILE (`-` for stdout), as `crawl` does.
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
    /// Add these fields of each HTML page's content to its --jsonl line
    /// (comma-separated): markdown, text, title, description, lang, author,
    /// published, canonical.
    #[arg(long, value_delimiter = ',', value_name = "FIELDS", requires = "jsonl")]
    pub content: Vec<ContentField>,
    /// Write each HTML page's main content as Markdown to DIR/host/path.md,
    /// as `crawl --markdown` does.
    #[arg(long, value_name = "DIR")]
    pub markdown: Option<PathBuf>,
    /// Archive every request and response to a WARC file (.gz: compressed).
    #[arg(long, value_name = "FILE")]
    pub warc: Option<PathBuf>,
    /// Archive every response as one WACZ file (WARC, index, pages with their
    /// text, manifest), packed when the fetch ends: FILE appears whole or not
    /// at all. Each run packs its own responses.
    #[arg(long, value_name = "FILE", conflicts_with = "warc")]
    pub wacz: Option<PathBuf>,
    /// Store the items of --extract/--field in a database (a SQLite file or a
    /// `postgres://` URL), as `crawl` does.
    #[arg(long = "items", value_name = "DB")]
    pub items_db: Option<String>,
    /// No progress bar (it is also off when stderr is not a terminal, and with -q).
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub extract: ExtractFlags,
    #[command(flatten)]
    pub content_options: ContentFlags,
    #[command(flatten)]
    pub llms: crate::llms_flags::LlmsFlags,
    #[command(flatten)]
    pub watch: WatchFlags,
}

type Items = Pin<Box<dyn Stream<Item = InputItem> + Send>>;

impl FetchArgs {
    /// Everything these flags set, as the library's one settings value.
    /// Reads the rules file, so the settings carry its contents.
    pub fn settings(&self) -> anyhow::Result<BulkSettings> {
        let mut s = BulkSettings::default();
        s.request.fetch = self.request.fetch_config(self.max_body_size)?;
        s.request.retry = self.request.retry_policy();
        s.request.politeness = HostPolicy {
            max_in_flight: self.per_host,
            delay: self.delay,
            jitter: self.jitter,
        };
        s.request.max_redirect = self.max_redirect;
        s.concurrency = self.concurrency;
        s.grace = self.request.grace;
        s.output_dir = self.output_dir.clone();
        s.name_template = self.name_template.clone();
        s.skip_existing = self.skip_existing;
        s.if_modified = self.if_modified;
        s.extract = self.extract.source()?;
        s.content = self.content_options.options();
        s.recipe = RecipeSettings {
            lets: self.lets.clone(),
            then: self.then.clone(),
            next: self.next.clone(),
            max_pages: (self.next.is_some() && self.max_pages != bulk::DEFAULT_MAX_PAGES)
                .then_some(self.max_pages),
        };
        s.state = self.state.clone();
        // Checked here, for the message that names the rules file.
        if let Some(source) = &s.extract {
            self.extract.parse(source.clone())?;
        }
        Ok(s)
    }

    /// Maps the flags onto the library's builder; the only place that does.
    pub fn builder(&self) -> anyhow::Result<BulkFetcherBuilder> {
        let mut b = BulkFetcher::from_settings(self.settings()?);
        if let Some(path) = &self.jsonl {
            let sink = crate::output::jsonl_sink(path, None)?.with_content(self.content.clone());
            b = b.sink(Box::new(sink));
        }
        if let Some(dir) = &self.markdown {
            b = b.sink(Box::new(MarkdownSink::create(dir)?));
        }
        if let Some(path) = &self.warc {
            let options = WarcOptions {
                software: concat!("skitter/", env!("CARGO_PKG_VERSION")).into(),
                crawl_options: vec![
                    ("command".into(), "fetch".into()),
                    ("concurrency".into(), self.concurrency.to_string()),
                ],
                ..WarcOptions::default()
            };
            b = b.sink(Box::new(WarcSink::create(path, options)?));
        }
        if let Some(path) = &self.wacz {
            let described = vec![("command".into(), "fetch".into())];
            b = b.sink(crate::output_flags::wacz_sink(path, None, described)?);
        }
        for sink in self.llms.sinks()? {
            b = b.sink(sink);
        }
        Ok(b)
    }

    /// The URL count when it is known before reading (arguments only).
    fn known_total(&self) -> Option<u64> {
        let from_stdin = self.urls.iter().any(|u| u == "-");
        (self.input.is_none() && !from_stdin).then(|| bulk::count_args(&self.urls, !self.no_glob))
    }

    /// Arguments, `-` (stdin) where it appears among them, then `--input`.
    async fn items(&self) -> anyhow::Result<Items> {
        let glob = !self.no_glob;
        // A pattern typed on the command line is usage: a bad one stops here
        // (exit 2), while a bad line of a file or stdin is skipped and reported.
        if glob {
            for arg in self.urls.iter().filter(|a| *a != "-") {
                if let Err(e) = bulk::Glob::parse(arg) {
                    anyhow::bail!("bad pattern {arg:?}: {e} (--no-glob takes it literally)");
                }
            }
        }
        let mut sources: Vec<Items> = Vec::new();
        let mut args = self.urls.as_slice();
        while !args.is_empty() {
            let cut = args.iter().position(|a| a == "-").unwrap_or(args.len());
            if cut > 0 {
                sources.push(Box::pin(bulk::from_args(args[..cut].to_vec(), glob)));
            }
            if cut < args.len() {
                sources.push(stdin_items(glob));
            }
            args = args.get(cut + 1..).unwrap_or_default();
        }
        match &self.input {
            Some(path) if path.as_os_str() == "-" => sources.push(stdin_items(glob)),
            Some(path) => {
                let file = tokio::fs::File::open(path)
                    .await
                    .with_context(|| format!("cannot read input file {}", path.display()))?;
                let name = path.display().to_string();
                sources.push(Box::pin(bulk::from_reader(
                    BufReader::new(file),
                    &name,
                    glob,
                )));
            }
            None => {}
        }
        if sources.is_empty() {
            anyhow::bail!("no URLs given: pass URLs or patterns, --input FILE, or - for stdin");
        }
        Ok(Box::pin(stream::iter(sources).flatten()))
    }
}

fn stdin_items(glob: bool) -> Items {
    Box::pin(bulk::from_reader(
        BufReader::new(tokio::io::stdin()),
        "stdin",
        glob,
    ))
}

/// Runs the fetch, prints the summary on stderr; returns the exit status.
pub async fn run(
    args: FetchArgs,
    verbose: u8,
    quiet: bool,
    cancel: CancellationToken,
) -> anyhow::Result<u8> {
    let items = args.items().await?;
    let show_bar = !args.no_progress && !quiet && std::io::stderr().is_terminal();
    let bar = progress_bar(show_bar, args.known_total());
    let mut builder = args.builder()?;
    if let Some(db) =
        crate::output::items_sink(args.items_db.as_deref(), args.extract.rules()?).await?
    {
        builder = builder.sink(Box::new(db));
    }
    let watch = args.watch.metrics.map(|_| FetchWatch::new());
    let fetcher = builder
        .on_item(observer(bar.clone(), verbose > 0, watch.clone()))
        .build()?;
    let server = match watch {
        Some(watch) => args.watch.start_fetch(watch, &cancel).await?,
        None => None,
    };
    let summary = fetcher.run(items, cancel.clone()).await;
    bar.finish_and_clear();
    if !quiet || summary.failed() > 0 || summary.stopped.is_some() {
        eprint!("{summary}");
        print_outputs(&summary);
    }
    args.watch.linger(server, None, &cancel).await;
    Ok(exit_status(&summary))
}

/// 0 all fine, 1 some failed, 2 an output failed, 130 interrupted. A
/// reader that left (`skitter fetch --jsonl - … | head`) is not a failure,
/// as for `crawl`.
fn exit_status(summary: &Summary) -> u8 {
    match &summary.stopped {
        Some(StopReason::Interrupted) => 130,
        Some(StopReason::Fatal(_)) => 2,
        None | Some(StopReason::OutputClosed(_) | StopReason::Limit(_)) if summary.failed() > 0 => {
            1
        }
        None | Some(StopReason::OutputClosed(_) | StopReason::Limit(_)) => 0,
    }
}

fn print_outputs(summary: &Summary) {
    for s in &summary.sinks {
        eprintln!(
            "  {}: {} records, {} bytes to {}",
            s.name,
            s.records,
            s.bytes,
            s.files.join(", ")
        );
    }
}

fn progress_bar(show: bool, total: Option<u64>) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let (bar, template) = match total {
        Some(n) => (
            ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} {per_sec} eta {eta} {msg}",
        ),
        None => (
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            "{elapsed_precise} {spinner} {human_pos} done {per_sec} {msg}",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("errors: 0");
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Advances the bar (and counts for `--metrics`); prints malformed input,
/// values that could not be read and chains that looped always, other
/// failures with -v.
fn observer(
    bar: ProgressBar,
    verbose: bool,
    watch: Option<FetchWatch>,
) -> impl Fn(&ItemReport) + Send + Sync + 'static {
    let errors = Arc::new(AtomicU64::new(0));
    move |report: &ItemReport| {
        bar.inc(1);
        if let Some(watch) = &watch {
            watch.observe(report);
        }
        if !report.outcome.is_failure() {
            if matches!(report.chain_stop, Some(ChainStop::Loop(_))) {
                bar.suspend(|| eprintln!("skitter: note: {report}"));
            }
            return;
        }
        let n = errors.fetch_add(1, Ordering::Relaxed) + 1;
        bar.set_message(format!("errors: {n}"));
        if verbose || matches!(report.outcome, Outcome::Malformed(_) | Outcome::Value(_)) {
            bar.suspend(|| eprintln!("skitter: {report}"));
        }
    }
}
