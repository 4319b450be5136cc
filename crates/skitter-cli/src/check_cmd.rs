//! `skitter check`: the crawl's flags plus what counts as broken → one
//! [`skitter::settings::CheckSettings`] and the crawl's builder, run the
//! [`skitter::check::LinkChecker`], print the report (`check_output`).
//!
//! Exit status: 0 when no link is broken, 1 when one is, 2 on bad usage or a
//! fatal error (clap's and `main`'s), 130 when interrupted.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use skitter::check::{CheckReport, LinkChecker, check_folder};
use skitter::settings::{CheckSettings, StatusSet};
use tokio_util::sync::CancellationToken;

use crate::check_output::{self, CheckFormat};
use crate::crawl_cmd::CrawlArgs;
use crate::flags;

/// Options of `skitter check`: every option of `crawl` (scope, robots,
/// politeness, retries, --state…), and these.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub crawl: CrawlArgs,
    /// How the result is printed on stdout: `text` (broken links grouped by
    /// page), `json`, `markdown` (for a CI comment) or `junit` (XML for CI
    /// test reports).
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Also write the result, in --format, to FILE (stdout still gets the text).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The statuses a link may end with (after redirects) and count as
    /// working: ranges and codes, comma-separated.
    #[arg(long, default_value = "200..=299", value_parser = status_set, value_name = "STATUSES")]
    pub accept: StatusSet,
    /// Check links starting with FROM as if they started with TO
    /// (`https://example.org/=http://127.0.0.1:8000/`); repeatable, the first
    /// that matches applies.
    #[arg(long, value_name = "FROM=TO")]
    pub remap: Vec<String>,
    /// Check only links to the crawled site; links to other sites are skipped.
    #[arg(long)]
    pub offline: bool,
    /// Do not check `#fragments` against the target page's anchors.
    #[arg(long)]
    pub no_fragments: bool,
    /// Keep results of links to other sites in FILE (JSON): a re-run takes
    /// those younger than --max-cache-age from it instead of asking again.
    /// Only links that worked are kept.
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// How old a cached result may be.
    #[arg(long, value_parser = flags::duration, default_value = "1d", value_name = "DURATION")]
    pub max_cache_age: Duration,
    /// With a folder instead of a URL: the URL the folder will be deployed
    /// at. Links under it are looked up as files in the folder; the folder
    /// is read from disk, no server is started.
    #[arg(long, value_name = "URL", default_value = "http://localhost/")]
    pub base: String,
    /// Links to other sites checked at once, over all their hosts (each host
    /// also gets at most --per-host at a time).
    #[arg(long, default_value_t = 64, value_parser = flags::count, value_name = "N")]
    pub external_tasks: usize,
}

/// The folder to check, when the one root given is a folder on disk.
fn local_folder(args: &CheckArgs) -> Option<PathBuf> {
    match args.crawl.roots.as_slice() {
        [one] if std::path::Path::new(one).is_dir() => Some(PathBuf::from(one)),
        _ => None,
    }
}

fn status_set(text: &str) -> Result<StatusSet, String> {
    text.parse()
}

impl CheckArgs {
    /// The check's settings over `crawl` (the crawl flags' own settings).
    fn settings(&self, crawl: skitter::CrawlSettings) -> anyhow::Result<CheckSettings> {
        let mut s = CheckSettings::new(crawl);
        s.accept = self.accept.clone();
        s.remap = self
            .remap
            .iter()
            .map(|r| {
                r.split_once('=')
                    .filter(|(from, _)| !from.is_empty())
                    .map(|(from, to)| (from.to_owned(), to.to_owned()))
                    .with_context(|| format!("--remap {r:?}: expected FROM=TO"))
            })
            .collect::<anyhow::Result<_>>()?;
        s.offline = self.offline;
        s.fragments = !self.no_fragments;
        s.cache = self.cache.clone();
        s.max_cache_age = self.max_cache_age;
        s.external_concurrency = self.external_tasks;
        Ok(s)
    }
}

/// Runs the check and prints its result; returns the exit status.
pub async fn run(mut args: CheckArgs, cancel: CancellationToken) -> anyhow::Result<u8> {
    if args.crawl.redis.is_some() {
        anyhow::bail!("check runs in one process: --redis is crawl's");
    }
    if args.crawl.report_html.is_some() && local_folder(&args).is_some() {
        anyhow::bail!("--report-html reports a crawl: give a URL, not a folder");
    }
    args.crawl.request.load_proxy_list()?;
    // The crawl's own report is not printed (--report is crawl's): the check's is.
    args.crawl.report = crate::output::ReportFormat::None;
    let report = match local_folder(&args) {
        Some(dir) => {
            let base = skitter::base::urlnorm::parse_root(&args.base)
                .with_context(|| format!("--base {:?} is not a URL", args.base))?;
            let settings = args.settings(args.crawl.settings()?)?;
            check_folder(&dir, &base, settings, cancel.clone()).await?
        }
        None => {
            let builder = args.crawl.builder()?;
            let settings = args.settings(builder.settings().clone())?;
            let mut checker = LinkChecker::on_crawl(settings, builder)?;
            // Beside the crawl's state: a resumed check reports what the
            // earlier runs found too.
            if let Some(dir) = &args.crawl.state {
                checker = checker.keep_findings_in(dir.join("check"));
            }
            // The crawl's report with the check's sections (its records
            // are kept: the run settings see --report-html).
            if let Some(path) = &args.crawl.report_html {
                checker = checker.report_html(path);
            }
            checker.run(cancel.clone()).await?
        }
    };
    print(&args, &report)?;
    if cancel.is_cancelled() {
        return Ok(130);
    }
    // An output or the frontier failed: the check is not whole.
    if let Some(fatal) = report
        .stopped
        .as_deref()
        .and_then(|s| s.strip_prefix("fatal: "))
    {
        eprintln!("skitter: error: {fatal}");
        return Ok(2);
    }
    Ok(u8::from(report.broken().next().is_some()))
}

fn print(args: &CheckArgs, report: &CheckReport) -> anyhow::Result<()> {
    let text = check_output::render(report, args.format);
    if let Some(path) = &args.output {
        std::fs::write(path, &text)
            .with_context(|| format!("cannot write the check result to {}", path.display()))?;
        out(&check_output::render(report, CheckFormat::Text));
    } else {
        out(&text);
    }
    Ok(())
}

/// Writes to stdout; a reader that went away is no reason to fail.
fn out(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
