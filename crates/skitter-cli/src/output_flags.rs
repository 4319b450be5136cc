//! The output flags of `skitter crawl` and `skitter worker` (WARC, CDXJ,
//! mirror, Markdown, JSONL) and the sinks they make: the one place to add an output to
//! the command line. A new output is a field here, its sink in
//! [`OutputFlags::sinks`], and its file in [`OutputFlags::for_worker`] if
//! workers must not share it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use skitter::frontier::DiskFrontier;
use skitter::output::{
    ContentField, MarkdownSink, MirrorOptions, MirrorSink, Sink, WARC_ROTATION, WaczOptions,
    WaczSink, WarcOptions, WarcSink, wacz_warc_dir,
};

use crate::flags::with_worker_id;
use crate::{flags, resume_outputs};

/// Where a crawl's pages go, besides the report.
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputFlags {
    /// Archive every response (and its request) as WARC 1.1; one gzip member per
    /// record when FILE ends in `.gz`. (A `skitter worker` inserts its id into
    /// every output file name.)
    #[arg(long, value_name = "FILE")]
    pub warc: Option<PathBuf>,
    /// Start a new numbered WARC file (`NAME-00000.warc.gz`, …) past this size.
    #[arg(long, value_parser = flags::size, value_name = "SIZE", requires = "warc")]
    pub warc_max_size: Option<u64>,
    /// Also write a CDXJ index of the WARC's response records (as pywb reads).
    #[arg(long, value_name = "FILE", requires = "warc")]
    pub cdx: Option<PathBuf>,
    /// Archive the crawl as one WACZ file (WARCs, index, pages with their text,
    /// manifest; ReplayWeb.page opens it). Its WARC files are written to
    /// FILE.warcs/ and packed when the crawl ends; FILE appears whole or not at
    /// all. With --state the folder is kept and each run packs the whole crawl.
    #[arg(long, value_name = "FILE", conflicts_with = "warc")]
    pub wacz: Option<PathBuf>,
    /// Save every 2xx response under DIR/host_port/path (the port only when it
    /// is not the scheme's), like `wget --mirror`.
    #[arg(long, value_name = "DIR")]
    pub mirror: Option<PathBuf>,
    /// Rewrite links in the mirror's HTML and CSS to relative local paths.
    #[arg(long, requires = "mirror")]
    pub convert_links: bool,
    /// Save a page rendered by --render as its DOM after its scripts ran
    /// (UTF-8), not the HTML the server sent (the default: a mirror copies
    /// what was fetched).
    #[arg(long, requires = "mirror")]
    pub mirror_rendered: bool,
    /// Write each HTML page's main content as Markdown to DIR/host/path.md
    /// (the mirror's names), with a front matter (url, title, fetched, lang,
    /// canonical, description); links to pages of the tree point at their
    /// files (see the book's "Pages as Markdown"). A worker writes its own
    /// tree (DIR-ID).
    #[arg(long, value_name = "DIR")]
    pub markdown: Option<PathBuf>,
    /// Write one JSON object per URL to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<String>,
    /// Add these fields of each HTML page's content to its --jsonl line
    /// (comma-separated): markdown, text, title, description, lang, author,
    /// published, canonical.
    #[arg(long, value_delimiter = ',', value_name = "FIELDS", requires = "jsonl")]
    pub content: Vec<ContentField>,
    /// Store the items of --extract/--field in a database: a SQLite file, or
    /// `postgres://user:pass@host/db` (a table per rule set; TLS as libpq's
    /// `?sslmode=` says, up to verify-full with `&sslrootcert=FILE`; see the
    /// book's "Database of items"). Workers of a shared crawl may all name one.
    #[arg(long, value_name = "DB")]
    pub items: Option<String>,
    #[command(flatten)]
    pub llms: crate::llms_flags::LlmsFlags,
}

impl OutputFlags {
    /// The sinks these flags ask for. `warcinfo` describes the crawl in each
    /// WARC; with `state` (a crawl kept in `--state`, maybe resumed) the
    /// outputs recorded there are continued, never overwritten.
    pub fn sinks(
        &self,
        state: Option<&DiskFrontier>,
        warcinfo: Vec<(String, String)>,
        max_body_size: u64,
    ) -> anyhow::Result<Vec<Box<dyn Sink>>> {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        let warcinfo_for_wacz = warcinfo.clone();
        if let Some(path) = &self.warc {
            let mut options = WarcOptions {
                max_size: self.warc_max_size,
                software: concat!("skitter/", env!("CARGO_PKG_VERSION")).to_string(),
                crawl_options: warcinfo,
                cdx: self.cdx.clone(),
                ..WarcOptions::default()
            };
            // A resumed crawl (--state) continues in a new file, never over the old one.
            let path = match state {
                Some(state) => {
                    let start = resume_outputs::continue_warc(state, path, self.cdx.as_deref())?;
                    options.already_archived = start.already_archived;
                    options.append_cdx = start.append_cdx;
                    start.path
                }
                None => path.clone(),
            };
            sinks.push(Box::new(WarcSink::create(&path, options)?));
        }
        if let Some(out) = &self.wacz {
            sinks.push(wacz_sink(out, state, warcinfo_for_wacz)?);
        }
        if let Some(dir) = &self.mirror {
            let options = MirrorOptions {
                convert_links: self.convert_links,
                max_body_size,
                rendered: self.mirror_rendered,
            };
            sinks.push(Box::new(MirrorSink::create(dir, options)?));
        }
        if let Some(dir) = &self.markdown {
            sinks.push(Box::new(MarkdownSink::create(dir)?));
        }
        if let Some(path) = &self.jsonl {
            // A crawl kept in --state may be a resumed one: continue its own JSONL.
            let append = match state {
                Some(state) if path != "-" => {
                    resume_outputs::continue_jsonl(state, Path::new(path))?
                }
                _ => None,
            };
            let sink = crate::output::jsonl_sink(path, append)?.with_content(self.content.clone());
            sinks.push(Box::new(sink));
        }
        sinks.extend(self.llms.sinks()?);
        Ok(sinks)
    }

    /// Whether the JSONL goes to stdout (the report then goes to stderr).
    pub fn jsonl_on_stdout(&self) -> bool {
        self.jsonl.as_deref() == Some("-")
    }

    /// These outputs for one worker of a shared crawl: each file gets the
    /// worker's id, so no two processes write one file (stdout stays stdout;
    /// a mirror directory is shared, its files being per URL; a Markdown
    /// tree is not, since its links are fixed at its writer's end).
    pub fn for_worker(mut self, id: &str) -> OutputFlags {
        self.warc = self.warc.as_deref().map(|p| with_worker_id(p, id));
        self.markdown = self.markdown.as_deref().map(|p| with_worker_id(p, id));
        self.cdx = self.cdx.as_deref().map(|p| with_worker_id(p, id));
        self.wacz = self.wacz.as_deref().map(|p| with_worker_id(p, id));
        if let Some(jsonl) = self.jsonl.as_mut().filter(|j| j.as_str() != "-") {
            *jsonl = with_worker_id(Path::new(jsonl.as_str()), id)
                .to_string_lossy()
                .into_owned();
        }
        self.llms = self.llms.for_worker(id);
        self
    }
}

/// The `--wacz` sink (of `crawl` and `fetch`): the run's WARC files go to the folder beside `out`
/// (emptied first, unless a crawl kept in `state` continues there) and are
/// packed into `out` when the crawl ends.
pub fn wacz_sink(
    out: &Path,
    state: Option<&DiskFrontier>,
    warcinfo: Vec<(String, String)>,
) -> anyhow::Result<Box<dyn Sink>> {
    let dir = wacz_warc_dir(out);
    if state.is_none() && dir.exists() {
        // WARCs a killed crawl left: not part of this one.
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut options = WarcOptions {
        max_size: Some(WARC_ROTATION),
        software: concat!("skitter/", env!("CARGO_PKG_VERSION")).to_string(),
        crawl_options: warcinfo,
        ..WarcOptions::default()
    };
    let base = dir.join("crawl.warc.gz");
    let path = match state {
        Some(state) => {
            let start = resume_outputs::continue_warc(state, &base, None)?;
            options.already_archived = start.already_archived;
            start.path
        }
        None => base,
    };
    let wacz = WaczOptions {
        software: crate::wacz_cmd::software(),
        title: None,
    };
    Ok(Box::new(WaczSink::create(
        &path,
        options,
        out.to_path_buf(),
        wacz,
        state.is_some(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ids_go_before_the_extensions() {
        let cases = [
            ("crawl.warc.gz", "crawl-wA-1.warc.gz"),
            ("out/crawl.jsonl", "out/crawl-wA-1.jsonl"),
            ("plain", "plain-wA-1"),
            (".hidden.gz", ".hidden-wA-1.gz"),
            ("dir.d/x", "dir.d/x-wA-1"),
            ("ü.warc", "ü-wA-1.warc"),
        ];
        for (given, want) in cases {
            assert_eq!(
                with_worker_id(Path::new(given), "wA-1"),
                PathBuf::from(want),
                "{given}"
            );
        }
    }
}
