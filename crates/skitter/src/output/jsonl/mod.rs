//! The JSON Lines sink (`--jsonl FILE`, `-` for stdout): one object per finished URL.
//!
//! Every line is one complete UTF-8 JSON object ending in `\n`. Lines are built
//! whole in memory and handed to the file in batches of complete lines (one
//! `write_all` each, on the blocking pool), at least every [`FLUSH_EVERY`] records,
//! on every record for stdout, on `flush`, and at `finish`. An interrupted crawl
//! never leaves a torn line; with a crash-safe frontier the crawler flushes before
//! it completes a page's lease, so no completed URL is missing either (and,
//! when the frontier's completions survive a power cut, it also syncs the file
//! first: see [`Sink::unsynced`]).
//!
//! Resuming (`append`): a torn last line is cut, and URLs that the last
//! [`RESUME_TAIL_LINES`] lines already hold are not written again. Those are the
//! pages a killed run wrote but had not yet completed; the resumed run fetches them
//! again, and their first line stands. (Item lines do not count towards those
//! lines.) A page whose `item` lines a kill cut short is cut off whole, page line
//! included, and written again when it is fetched again: a page's items are
//! never in the file twice, nor in part.
//!
//! Schema. A URL that was fetched (or tried) is
//! ```text
//! {"type":"page","url":…,"final_url":…,"status":…,"content_type":…,"charset":…,
//!  "size":…,"digest":…,"depth":…,"parent":…,"elapsed_ms":…,"attempts":…,
//!  "retries":…,"kind":…,"error_kind":…,"error":…,"links_found":…,"links_new":…}
//! ```
//! - `final_url`: the redirect target for redirects, else `null`;
//! - `status`: the HTTP status of the last attempt, `null` when no response came;
//! - `content_type`: the media type without parameters; `charset`: the charset the
//!   page was decoded with or declared;
//! - `size`: body bytes as received; `digest`: base32 SHA-1 of those bytes (as in
//!   WARC `WARC-Payload-Digest`, without `sha1:`) when the body was kept, else `null`;
//! - `kind`: `html`, `other`, `redirect`, `http_error` or `failed`;
//!   `error_kind` (`timeout`, `connect`, `dns`, `tls`, `body`, `body_too_large`,
//!   `decode`, `bad_redirect`, `too_many_redirects`, `protocol`, `blocked`,
//!   `proxy`, `other`) and `error` (the message) are `null` unless something failed;
//! - `retries` is `attempts - 1`; `links_found`/`links_new` count links on the page
//!   and those new to the crawl;
//! - `items` (only when extraction rules matched the page): how many `item` lines
//!   follow; `extract_errors` (only when some rule failed on it): a list of
//!   `{"rule_set","field","message"}`.
//!
//! Each record extraction found on a page follows its page line:
//! `{"type":"item","url":…,"fetched_at":…,"rule_set":…,"index":…,"fields":{…}}`,
//! `fetched_at` when the page's exchange started (RFC 3339), `index` the record's
//! position among its rule set's records on the page, `fields` in rule order.
//! - `proxy` (only when a proxy served the response): the proxy, credentials
//!   removed (`http://proxy1:3128`).
//! - `rendered` (only when the page was rendered in the browser, `--render`):
//!   why (`always`, `noscript`, `empty-root`, `script-few-links`), and
//!   `rendered_html`: the rendered DOM, serialised.
//! - `markdown`, `text`, `title`, `description`, `lang`, `author`,
//!   `published`, `canonical` (only those asked for with
//!   [`JsonlSink::with_content`], only on HTML pages): the page's content
//!   (see `content.rs`).
//! - `change` (only when the URL was fetched again: a recrawl pass, `fetch
//!   --if-modified`): how it compares with the last fetch: `new`, `changed`,
//!   `unchanged` (a `304`, or the same digest), `gone` (`404`/`410` after a
//!   success) or `failed`.
//!
//! A URL that was never fetched is
//! `{"type":"skip","url":…,"reason":…,"depth":…,"parent":…}`, `reason` one of
//! `scope`, `scheme`, `exclude`, `malformed`, `robots`, `robots_unavailable`,
//! `trap`, `limit`.
//!
//! A host slowing the crawl down (see `frontier::politeness`) is
//! `{"type":"throttle","host":…,"reason":…,"cut":…,"limit":…,"gap_ms":…,"at":…}`:
//! `reason` is `429`, `retry_after`, `distress` or `robots_unavailable`; `cut`
//! whether its concurrency and pacing were cut (else only a pause); `limit` and
//! `gap_ms` what they are after it; `at` when (RFC 3339).

mod content;
mod tail;

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;

use super::{Page, Sink, SinkError, SinkSummary, Syncable, SyncedFile};
use crate::base::outcome::{OutcomeKind, PageRecord};

pub use content::{ContentField, UnknownField};

/// Records between two writes to a file.
pub const FLUSH_EVERY: usize = 64;

/// Lines at the end of a file being resumed whose URLs are not written again.
/// Pages written but not completed when a run was killed are at most the pages in
/// flight then, and they are among the last lines written.
pub const RESUME_TAIL_LINES: usize = 65_536;

/// A `page` line.
#[derive(Serialize)]
struct PageLine<'a> {
    r#type: &'static str,
    url: &'a str,
    final_url: Option<&'a str>,
    status: Option<u16>,
    content_type: Option<&'a str>,
    charset: Option<&'a str>,
    size: u64,
    digest: Option<String>,
    depth: u32,
    parent: Option<&'a str>,
    elapsed_ms: u64,
    attempts: u32,
    retries: u32,
    kind: OutcomeKind,
    error_kind: Option<&'static str>,
    error: Option<&'a str>,
    links_found: usize,
    links_new: usize,
    /// Present (and true) only when the body was cut at the size cap.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    truncated: bool,
    /// Present only when extraction rules matched the page: the number of
    /// `item` lines that follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    items: Option<usize>,
    /// Present only when extraction failed somewhere on the page.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    extract_errors: &'a [crate::parse::items::ExtractFailure],
    /// The proxy that served it (credentials removed); present only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    proxy: Option<&'a str>,
    /// How it compares with the last fetch (a recrawl pass, `fetch
    /// --if-modified`); present only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    change: Option<crate::base::outcome::Change>,
    /// Why the page was rendered in the browser (`--render`); present only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered: Option<crate::base::outcome::RenderReason>,
    /// The rendered DOM, serialised; present only when the page was rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered_html: Option<&'a str>,
    /// The content fields asked for (`--content`), on HTML pages only.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    content: Option<content::Fields<'a>>,
}

/// An `item` line.
#[derive(Serialize)]
struct ItemLine<'a> {
    r#type: &'static str,
    url: &'a str,
    fetched_at: String,
    rule_set: &'a str,
    index: u32,
    fields: Fields<'a>,
}

/// A record's fields as one JSON object, in field order.
struct Fields<'a>(&'a [(String, serde_json::Value)]);

impl Serialize for Fields<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// A `skip` line.
#[derive(Serialize)]
struct SkipLine<'a> {
    r#type: &'static str,
    url: &'a str,
    reason: Option<&'static str>,
    depth: u32,
    parent: Option<&'a str>,
}

/// Where the lines go.
enum Output {
    /// Shared with the crawler, which syncs it (see [`Sink::unsynced`]).
    File(Arc<SyncedFile>),
    Stdout,
}

impl Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::File(f) => f.file().write_all(buf),
            Output::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(buf)?;
                out.flush()
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Output::File(f) => f.path().display().to_string(),
            Output::Stdout => "stdout".into(),
        }
    }
}

/// Writes one JSON line per finished URL; see the module docs for the schema.
pub struct JsonlSink {
    /// `None` while a batch is being written, or after a write failed.
    output: Option<Output>,
    name: String,
    pending: Vec<u8>,
    pending_lines: usize,
    flush_every: usize,
    /// URLs already in the file being resumed (see the module docs).
    written_before: HashSet<String>,
    lines: u64,
    bytes: u64,
    /// Content fields each HTML page's line carries.
    content: Vec<ContentField>,
}

impl JsonlSink {
    /// Adds these content fields to every HTML page's line (the sink then
    /// asks for pages' content: [`Sink::wants_content`]).
    pub fn with_content(mut self, fields: Vec<ContentField>) -> JsonlSink {
        self.content = fields;
        self
    }

    /// Writes to standard output, one flush per line so a reader downstream
    /// sees each URL as it finishes.
    pub fn stdout() -> JsonlSink {
        JsonlSink::new(Output::Stdout, 1)
    }

    /// Writes to `path`, created or truncated now (a path `-` is a file named
    /// `-`; see [`JsonlSink::stdout`]). A symbolic link there is replaced.
    pub fn create(path: impl AsRef<Path>) -> Result<JsonlSink, SinkError> {
        let path = path.as_ref();
        let file = super::create_output(path)
            .map_err(|e| io_error(format!("cannot create {}", path.display()), e))?;
        Ok(JsonlSink::new(
            Output::File(Arc::new(SyncedFile::new(file, path.to_path_buf()))),
            FLUSH_EVERY,
        ))
    }

    /// Appends to `path` (a resumed crawl): a torn last line left by a crash is
    /// cut off first, so the file stays valid JSON Lines. Only call it for a file
    /// this crawl wrote: that cut would destroy a file that is not JSON Lines. A
    /// symbolic link there is refused.
    pub fn append(path: impl AsRef<Path>) -> Result<JsonlSink, SinkError> {
        JsonlSink::append_from(path, 0)
    }

    /// [`JsonlSink::append`], where only the lines from byte `floor` on are
    /// this run's to skip again: a recrawl pass that began with the file
    /// `floor` bytes long writes every URL again, though earlier passes'
    /// lines name them.
    pub fn append_from(path: impl AsRef<Path>, floor: u64) -> Result<JsonlSink, SinkError> {
        let path = path.as_ref();
        let cannot = |e| io_error(format!("cannot append to {}", path.display()), e);
        let mut file = super::open_output(path, true).map_err(cannot)?;
        let whole = tail::whole_lines_len(&mut file).map_err(cannot)?;
        let whole = tail::whole_pages_len(&mut file, whole).map_err(cannot)?;
        file.set_len(whole).map_err(cannot)?;
        let written_before =
            tail::tail_urls(&mut file, (floor, whole), RESUME_TAIL_LINES).map_err(cannot)?;
        io::Seek::seek(&mut file, io::SeekFrom::Start(whole)).map_err(cannot)?;
        let output = Output::File(Arc::new(SyncedFile::new(file, path.to_path_buf())));
        let mut sink = JsonlSink::new(output, FLUSH_EVERY);
        sink.written_before = written_before;
        Ok(sink)
    }

    fn new(output: Output, flush_every: usize) -> JsonlSink {
        JsonlSink {
            name: output.describe(),
            output: Some(output),
            pending: Vec::new(),
            pending_lines: 0,
            flush_every,
            written_before: HashSet::new(),
            lines: 0,
            bytes: 0,
            content: Vec::new(),
        }
    }

    /// Writes the pending lines with one `write_all`, on the blocking pool.
    async fn write_pending(&mut self, sync: bool) -> Result<(), SinkError> {
        let mut output = self.output.take().ok_or_else(|| {
            SinkError::new("jsonl", "an earlier write failed; the output is closed")
        })?;
        let buf = std::mem::take(&mut self.pending);
        let (output, result) = tokio::task::spawn_blocking(move || {
            let mut result = output.write(&buf);
            if let (Ok(()), true, Output::File(f)) = (&result, sync, &output) {
                result = f.file().sync_all();
            }
            (output, result.map(|()| buf.len()))
        })
        .await
        .map_err(|e| SinkError::new("jsonl", "writer task failed").with_source(e))?;
        let written = result.map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => {
                SinkError::reader_gone("jsonl", format!("{} closed by its reader", self.name), e)
            }
            _ => io_error(format!("cannot write {}", self.name), e),
        })?;
        self.output = Some(output);
        self.bytes += written as u64;
        self.pending_lines = 0;
        Ok(())
    }
}

#[async_trait]
impl Sink for JsonlSink {
    fn wants_content(&self) -> bool {
        !self.content.is_empty()
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        if !self.written_before.is_empty() && self.written_before.remove(page.record.url.as_str()) {
            return Ok(());
        }
        let digest = page
            .exchange
            .as_ref()
            .map(|ex| data_encoding::BASE32.encode(&ex.body_sha1()));
        let rendered = page.rendered.as_ref().and_then(|r| r.html.as_deref());
        let content = match (&page.content, self.content.is_empty()) {
            (Some(doc), false) => Some(content::Fields {
                doc,
                asked: &self.content,
            }),
            _ => None,
        };
        let extra = Extra {
            items: page.items.as_deref(),
            rendered,
            content,
        };
        let encoded = to_line(&page.record, digest, extra).and_then(|mut line| {
            // A page and its items go into one batch, so a kill tears at most
            // the last page's group, which `append` cuts off whole.
            if let Some(items) = &page.items {
                item_lines(&mut line, &page.record, items)?;
            }
            Ok(line)
        });
        let line = encoded.map_err(|e| {
            SinkError::new("jsonl", format!("cannot encode {}", page.record.url)).with_source(e)
        })?;
        self.pending.extend_from_slice(&line);
        self.pending_lines += 1;
        self.lines += 1;
        if self.pending_lines >= self.flush_every {
            self.write_pending(false).await?;
        }
        Ok(())
    }

    async fn throttled(
        &mut self,
        host: &str,
        throttle: &crate::host::Throttle,
    ) -> Result<(), SinkError> {
        let line = ThrottleLine {
            r#type: "throttle",
            host,
            reason: throttle.reason.as_str(),
            cut: throttle.cut,
            limit: throttle.limit,
            gap_ms: throttle.gap.as_millis().try_into().unwrap_or(u64::MAX),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        serde_json::to_writer(&mut self.pending, &line)
            .map_err(|e| SinkError::new("jsonl", "cannot encode a throttle line").with_source(e))?;
        self.pending.push(b'\n');
        self.pending_lines += 1;
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.write_pending(false).await
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        match &self.output {
            Some(Output::File(f)) => vec![f.clone()],
            _ => Vec::new(),
        }
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.write_pending(true).await?;
        Ok(SinkSummary {
            name: "jsonl".into(),
            files: vec![self.name.clone()],
            bytes: self.bytes,
            records: self.lines,
            refused: 0,
        })
    }
}

/// A host slow-down, as one line.
#[derive(Serialize)]
struct ThrottleLine<'a> {
    r#type: &'static str,
    host: &'a str,
    reason: &'static str,
    cut: bool,
    limit: usize,
    gap_ms: u64,
    at: String,
}

/// One `item` line per record, after the page's line.
fn item_lines(
    out: &mut Vec<u8>,
    r: &PageRecord,
    items: &crate::parse::items::Items,
) -> serde_json::Result<()> {
    let fetched_at = items
        .fetched_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    for item in &items.records {
        serde_json::to_writer(
            &mut *out,
            &ItemLine {
                r#type: "item",
                url: r.url.as_str(),
                fetched_at: fetched_at.clone(),
                rule_set: &item.rule_set,
                index: item.index,
                fields: Fields(&item.fields),
            },
        )?;
        out.push(b'\n');
    }
    Ok(())
}

/// One complete line, newline included.
/// What a page line carries besides its record.
struct Extra<'a> {
    items: Option<&'a crate::parse::items::Items>,
    rendered: Option<&'a str>,
    content: Option<content::Fields<'a>>,
}

fn to_line(
    r: &PageRecord,
    digest: Option<String>,
    extra: Extra<'_>,
) -> serde_json::Result<Vec<u8>> {
    let Extra {
        items,
        rendered: rendered_html,
        content,
    } = extra;
    let parent = r.parent.as_ref().map(|p| p.as_str());
    // Room for a typical line up front: growing from serde's default costs reallocations.
    let mut line = Vec::with_capacity(512);
    if r.kind == OutcomeKind::Skipped {
        serde_json::to_writer(
            &mut line,
            &SkipLine {
                r#type: "skip",
                url: r.url.as_str(),
                reason: r.skip.map(|s| s.as_str()),
                depth: r.depth,
                parent,
            },
        )?;
    } else {
        serde_json::to_writer(
            &mut line,
            &PageLine {
                r#type: "page",
                url: r.url.as_str(),
                final_url: r.next_url.as_ref().map(|u| u.as_str()),
                status: r.status,
                content_type: r.content_type.as_deref(),
                charset: r.encoding.as_deref(),
                size: r.size,
                digest,
                depth: r.depth,
                parent,
                elapsed_ms: r.elapsed.as_millis().try_into().unwrap_or(u64::MAX),
                attempts: r.attempts,
                retries: r.attempts.saturating_sub(1),
                kind: r.kind,
                error_kind: r.error.as_ref().map(|e| e.kind.as_str()),
                error: r.error.as_ref().map(|e| e.message.as_str()),
                links_found: r.num_urls,
                links_new: r.num_new_urls,
                truncated: r.truncated,
                items: items.map(|i| i.records.len()),
                extract_errors: items.map_or(&[], |i| &i.errors),
                proxy: r.proxy.as_deref(),
                change: r.change,
                rendered: r.rendered,
                rendered_html,
                content,
            },
        )?;
    }
    line.push(b'\n');
    Ok(line)
}

/// An I/O failure while doing `what` (naming the file).
fn io_error(what: String, e: io::Error) -> SinkError {
    SinkError::io("jsonl", what, e)
}
