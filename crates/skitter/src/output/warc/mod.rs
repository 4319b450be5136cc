//! The WARC sink: every response skitter received, archived as WARC 1.1 (ISO 28500).
//!
//! Each file starts with a `warcinfo` record (software, format, `conformsTo`, the
//! crawl options). Each page that has an [`Exchange`](crate::output::Exchange) adds a
//! `request` and a `response` record linked by `WARC-Concurrent-To`; redirects and
//! error pages are archived like any response, while failures and skips (no
//! exchange) are not. An exchange that revisits an earlier capture
//! ([`Exchange::revisit`]: a `304` to a conditional request, or a body
//! identical to the one archived before) gets a `revisit` record instead of the
//! `response` (WARC 1.1 section 6.7): the response head alone, with
//! `WARC-Profile`, `WARC-Refers-To-Target-URI`, `WARC-Refers-To-Date` and the
//! original's `WARC-Payload-Digest`; its index line has media type
//! `warc/revisit`, as pywb's indexer writes it. The response block is the response head followed by the body
//! *as received*, before content decoding, so a `Content-Encoding: gzip` header
//! still describes the bytes that follow it; `WARC-Payload-Digest` is the SHA-1 of
//! those bytes. The client de-chunks bodies, so a `Transfer-Encoding` header is
//! archived as `X-Skitter-Original-Transfer-Encoding`.
//!
//! Files: with `gzip` (the default for a path ending in `.gz`) every record is its
//! own gzip member, so readers can seek to any record. With `max_size`, output
//! rotates through numbered files: `crawl.warc.gz` becomes `crawl-00000.warc.gz`,
//! `crawl-00001.warc.gz`, … (the number goes before `.warc.gz`, `.warc` or `.gz`,
//! else at the end), each starting with its own `warcinfo`. A file is rotated before
//! a request/response pair that would take it past `max_size`, so pairs never
//! straddle files; a pair larger than `max_size` gets a file of its own.
//!
//! Crash safety: the records of a batch of pages are built fully in memory and
//! written with one `write_all` (one system call for up to [`BATCH`] pages, not
//! one per page), so an interrupted crawl leaves whole records, except when the
//! process dies inside that call: then [`repair_warc`] cuts the torn tail off
//! before a resumed crawl goes on. `finish` fsyncs, and so does a rotation
//! (the file it closes); in between, a crawl whose completions survive a power
//! cut syncs the current file and the index after each flush (see
//! [`Sink::unsynced`]). All file work runs in
//! `spawn_blocking`, off the async workers. The index (`cdx`) is appended to
//! after each batch's records are written and sorted at `finish` (see `cdx`).
//! A symbolic link at a WARC or index file's name is replaced, not followed.

pub(crate) mod cdx;
mod gzip;
pub(crate) mod read;
mod record;
mod repair;
pub(crate) mod surt;

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use url::Url;

use super::{Exchange, Page, Sink, SinkError, SinkSummary, Syncable, SyncedFile};
use crate::parse::text::PageText;

pub use cdx::resume as resume_cdx;
pub use repair::{WarcRepair, repair_warc};

/// How to write WARC files.
#[derive(Clone, Debug, Default)]
pub struct WarcOptions {
    /// Rotate to a new numbered file before one would exceed this many bytes.
    pub max_size: Option<u64>,
    /// Gzip each record; `None` means "if the path ends in `.gz`".
    pub gzip: Option<bool>,
    /// The `software` line of `warcinfo` (e.g. `skitter/0.1.0`).
    pub software: String,
    /// Crawl settings recorded in `warcinfo`, one `name: value` line each.
    pub crawl_options: Vec<(String, String)>,
    /// Also write a sorted CDXJ index of the response records here.
    pub cdx: Option<PathBuf>,
    /// Continue the index at `cdx` (a resumed crawl, readied by [`resume_cdx`])
    /// instead of starting it afresh.
    pub append_cdx: bool,
    /// URLs whose response an interrupted run already archived without completing
    /// them (see [`repair_warc`]): their refetch is not archived a second time.
    pub already_archived: HashSet<String>,
}

/// Archives exchanges as WARC files; see the module docs for the format.
pub struct WarcSink {
    /// `None` while a write is in flight on the blocking pool, or after one failed.
    writer: Option<Writer>,
    /// See [`WarcOptions::already_archived`].
    already_archived: HashSet<String>,
    /// Pages waiting to be written as the next batch.
    pending: Vec<Job>,
    /// The batch being built and written on the blocking pool, which hands the
    /// writer back when done; the crawl goes on meanwhile.
    in_flight: Option<tokio::task::JoinHandle<(Writer, Result<(), SinkError>)>>,
}

/// Pages per batch: records are built (digests, gzip) and written off the sink
/// task, a batch at a time, so archiving overlaps with crawling. Each record is
/// still written whole.
const BATCH: usize = 32;

impl WarcSink {
    /// Creates the first WARC file (and checks the index path can be written), so a
    /// bad path fails before the crawl starts.
    pub fn create(path: impl AsRef<Path>, options: WarcOptions) -> Result<WarcSink, SinkError> {
        WarcSink::observed(path.as_ref(), options, None)
    }

    /// [`WarcSink::create`], telling `observer` what it writes from the
    /// first byte on.
    pub(crate) fn observed(
        path: &Path,
        mut options: WarcOptions,
        observer: Option<Box<dyn Observer>>,
    ) -> Result<WarcSink, SinkError> {
        let already_archived = std::mem::take(&mut options.already_archived);
        let writer = Writer::open(path.to_path_buf(), options, observer)?;
        Ok(WarcSink {
            already_archived,
            writer: Some(writer),
            pending: Vec::new(),
            in_flight: None,
        })
    }

    /// Waits for the batch in flight, if any, and takes the writer back.
    async fn take_writer(&mut self) -> Result<Writer, SinkError> {
        if let Some(handle) = self.in_flight.take() {
            let (writer, result) = handle.await.map_err(writer_task_failed)?;
            result?;
            return Ok(writer);
        }
        self.writer.take().ok_or_else(closed)
    }

    /// Starts writing the pending pages on the blocking pool.
    async fn start_batch(&mut self) -> Result<(), SinkError> {
        let mut writer = self.take_writer().await?;
        let jobs = std::mem::take(&mut self.pending);
        self.in_flight = Some(tokio::task::spawn_blocking(move || {
            let built = jobs.iter().try_for_each(|job| match job {
                Job::Pair(job) => writer.write_page(job),
                Job::Resource(job) => writer.write_resource(job),
            });
            // The pages built before a failure are still written.
            let written = writer.write_out();
            (writer, built.and(written))
        }));
        Ok(())
    }

    /// Runs `f` on the writer in the blocking pool and takes the writer back.
    async fn with_writer<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&mut Writer) -> Result<T, SinkError> + Send + 'static,
    ) -> Result<T, SinkError> {
        let mut writer = self.writer.take().ok_or_else(closed)?;
        let (writer, result) = tokio::task::spawn_blocking(move || {
            let result = f(&mut writer);
            (writer, result)
        })
        .await
        .map_err(writer_task_failed)?;
        if result.is_ok() {
            self.writer = Some(writer);
        }
        result
    }

    /// [`Sink::record`], handing the observer `text` as the page's title and
    /// text with its response record ([`Built::text`]).
    pub(crate) async fn record_with_text(
        &mut self,
        page: &Page,
        text: Option<Arc<PageText>>,
    ) -> Result<(), SinkError> {
        let Some(exchange) = page.exchange.clone() else {
            return Ok(());
        };
        if !self.already_archived.is_empty()
            && self.already_archived.remove(page.record.url.as_str())
        {
            return Ok(());
        }
        let date = exchange.started;
        self.pending.push(Job::Pair(Box::new(PairJob {
            url: page.record.url.clone(),
            status: page.record.status,
            mime: page.record.content_type.clone(),
            exchange,
            text,
        })));
        // A rendered page's requests (scripts, XHR, images) follow it, each
        // a request/response pair like the page's own; then its pictures.
        for (url, exchange) in page.rendered.iter().flat_map(|r| &r.exchanges) {
            let (status, mime) = head_status_and_type(&exchange.response_head);
            self.pending.push(Job::Pair(Box::new(PairJob {
                url: url.clone(),
                status,
                mime,
                exchange: exchange.clone(),
                text: None,
            })));
        }
        for shot in page.rendered.iter().flat_map(|r| &r.screenshots) {
            let uri = format!("urn:{}:{}", shot.kind, page.record.url);
            let Ok(uri) = Url::parse(&uri) else { continue };
            self.pending.push(Job::Resource(ResourceJob {
                uri,
                date,
                mime: shot.mime,
                data: shot.data.clone(),
            }));
        }
        if self.pending.len() >= BATCH {
            self.start_batch().await?;
        }
        Ok(())
    }

    /// The observer given at creation, taken back (after [`Sink::finish`]).
    pub(crate) fn take_observer(&mut self) -> Option<Box<dyn Observer>> {
        self.writer.as_mut()?.observer.take()
    }
}

#[async_trait]
impl Sink for WarcSink {
    fn wants_bodies(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        self.record_with_text(page, None).await
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        if !self.pending.is_empty() {
            self.start_batch().await?;
        }
        if self.in_flight.is_some() {
            let writer = self.take_writer().await?;
            self.writer = Some(writer);
        }
        Ok(())
    }

    /// The current file and the index: a file rotated away was synced when
    /// it was closed.
    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        let Some(writer) = &self.writer else {
            return Vec::new();
        };
        let mut files: Vec<Arc<dyn Syncable>> = vec![writer.current.file.clone()];
        files.extend(writer.cdx.iter().map(|f| f.clone() as Arc<dyn Syncable>));
        files
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        if !self.pending.is_empty() {
            self.start_batch().await?;
        }
        let writer = self.take_writer().await?;
        self.writer = Some(writer);
        self.with_writer(Writer::finish).await
    }
}

/// The status code and media type of a response head, for the index.
fn head_status_and_type(head: &[u8]) -> (Option<u16>, Option<String>) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok());
    let mime = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-type"))
        .and_then(|(_, v)| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    (status, mime)
}

/// Why the writer is missing: a write failed before (and said so then).
fn closed() -> SinkError {
    SinkError::new("warc", "an earlier write failed; the archive is closed")
}

/// The blocking-pool task writing the archive panicked or was cancelled.
fn writer_task_failed(e: tokio::task::JoinError) -> SinkError {
    SinkError::new("warc", "writer task failed").with_source(e)
}

/// An I/O failure while doing `what` (naming the file or URL).
fn io_error(what: String, e: std::io::Error) -> SinkError {
    SinkError::io("warc", what, e)
}

/// Watches a [`WarcSink`] write: every byte appended to each file, and each
/// record an index lists, with its place. The WACZ sink indexes and hashes a
/// crawl's WARC files this way as they are written, instead of reading them
/// again when the crawl ends. Called on the writer's blocking-pool thread,
/// in file order; an error stops the archive as a failed write does.
pub(crate) trait Observer: Send {
    /// `bytes` were built to be appended to the file `name` at `path` (each
    /// file's first bytes are its `warcinfo` record). Called just before the
    /// write: a failed write stops the archive.
    fn wrote(&mut self, name: &str, path: &Path, bytes: &[u8]) -> std::io::Result<()>;

    /// A record an index lists (a response, revisit or resource) was built
    /// for the file its `filename` names.
    fn record(&mut self, record: &Built<'_>) -> std::io::Result<()>;

    /// The observer itself, for its owner to take back after the crawl.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send>;
}

/// A record the writer built, as an index needs it.
pub(crate) struct Built<'a> {
    /// `response`, `revisit` or `resource`.
    pub kind: &'a str,
    /// The target URI.
    pub url: &'a Url,
    /// `WARC-Date`.
    pub date: chrono::DateTime<chrono::Utc>,
    /// The HTTP response head as archived (empty for a resource).
    pub head: &'a [u8],
    /// The payload as archived: the body as received (empty for a revisit),
    /// or a resource's data.
    pub body: &'a [u8],
    /// The body stops short of the payload: the record says `WARC-Truncated`
    /// (the fetch cap).
    pub truncated: bool,
    /// A resource's media type.
    pub mime: Option<&'a str>,
    /// Base32 SHA-1 of the payload, `-` when none is known.
    pub digest: &'a str,
    /// The record's length in the file (its gzip member's, in a gzip file).
    pub length: u64,
    /// Its offset in the file.
    pub offset: u64,
    /// The file's name.
    pub filename: &'a str,
    /// The page's title and text as the crawl read them, when it did; a
    /// reader of the file reads them from the body.
    pub text: Option<&'a PageText>,
}

/// What the writer needs from one page or picture (owned, to cross into the
/// blocking pool).
enum Job {
    /// An exchange: a request and its response (or revisit); boxed, the
    /// exchange being most of the size.
    Pair(Box<PairJob>),
    /// A picture of a rendered page.
    Resource(ResourceJob),
}

/// A picture of a rendered page, for a `resource` record.
struct ResourceJob {
    /// `urn:{kind}:{page URL}`.
    uri: Url,
    /// The page's fetch, so the picture's index line sorts with it.
    date: chrono::DateTime<chrono::Utc>,
    mime: &'static str,
    data: bytes::Bytes,
}

/// An exchange to archive.
struct PairJob {
    url: Url,
    status: Option<u16>,
    mime: Option<String>,
    exchange: Exchange,
    /// The page's title and text, for the observer.
    text: Option<Arc<PageText>>,
}

/// The open file being appended to.
struct Current {
    /// Shared with the crawler, which syncs it (see [`Sink::unsynced`]).
    file: Arc<SyncedFile>,
    path: PathBuf,
    name: String,
    size: u64,
    /// Size after the `warcinfo` record: a file this size holds no pages yet.
    empty_size: u64,
    warcinfo_id: String,
}

/// The synchronous writer behind [`WarcSink`]; lives on the blocking pool while it
/// works.
struct Writer {
    base: PathBuf,
    options: WarcOptions,
    gzip: bool,
    /// The reused compressor, when writing `.gz`.
    deflater: Option<gzip::Deflater>,
    current: Current,
    /// Records built for the current file but not yet written to it.
    unwritten: Vec<u8>,
    next_index: u32,
    files: Vec<String>,
    bytes: u64,
    records: u64,
    /// The index file, appended to after each write of records.
    cdx: Option<Arc<SyncedFile>>,
    /// Index lines of records built but not yet written.
    cdx_lines: Vec<u8>,
    /// Told of every byte and every indexed record (see [`Observer`]).
    observer: Option<Box<dyn Observer>>,
}

impl Writer {
    fn open(
        base: PathBuf,
        options: WarcOptions,
        mut observer: Option<Box<dyn Observer>>,
    ) -> Result<Writer, SinkError> {
        let gzip = options
            .gzip
            .unwrap_or_else(|| base.to_string_lossy().ends_with(".gz"));
        let cdx = match &options.cdx {
            Some(path) => Some(Arc::new(SyncedFile::new(
                open_cdx(path, options.append_cdx)?,
                path.clone(),
            ))),
            None => None,
        };
        let path = match options.max_size {
            Some(_) => numbered(&base, 0),
            None => base.clone(),
        };
        let current = new_file(path, &options, gzip, observer.as_mut())?;
        Ok(Writer {
            files: vec![current.path.display().to_string()],
            bytes: current.size,
            records: 1,
            base,
            options,
            gzip,
            deflater: gzip.then(gzip::Deflater::new),
            current,
            unwritten: Vec::new(),
            next_index: 1,
            cdx,
            cdx_lines: Vec::new(),
            observer,
        })
    }

    fn write_page(&mut self, job: &PairJob) -> Result<(), SinkError> {
        let build = |warcinfo_id: &str, deflater: Option<&mut gzip::Deflater>| {
            record::exchange_pair(&job.url, &job.exchange, warcinfo_id, deflater)
                .map_err(|e| io_error(format!("cannot build records for {}", job.url), e))
        };
        let mut pair = build(&self.current.warcinfo_id, self.deflater.as_mut())?;
        if self.should_rotate((pair.request.len() + pair.response.len()) as u64) {
            self.rotate()?;
            // The records name their file's warcinfo, so they are built again
            // (and their gzip members may come out a byte longer or shorter:
            // the length is taken after).
            pair = build(&self.current.warcinfo_id, self.deflater.as_mut())?;
        }
        let len = (pair.request.len() + pair.response.len()) as u64;
        let offset = self.current.size + pair.request.len() as u64;
        if let Some(observer) = &mut self.observer {
            let revisit = job.exchange.revisit.is_some();
            let built = Built {
                kind: if revisit { "revisit" } else { "response" },
                url: &job.url,
                date: job.exchange.started,
                head: &pair.head,
                body: if revisit { &[] } else { &job.exchange.body },
                truncated: !revisit && job.exchange.truncated,
                mime: None,
                digest: &pair.payload_digest,
                length: pair.response.len() as u64,
                offset,
                filename: &self.current.name,
                text: job.text.as_deref(),
            };
            observer
                .record(&built)
                .map_err(|e| io_error(format!("cannot index {}", job.url), e))?;
        }
        self.unwritten.extend_from_slice(&pair.request);
        self.unwritten.extend_from_slice(&pair.response);
        let cur = &mut self.current;
        cur.size += len;
        self.bytes += len;
        self.records += 2;
        if self.cdx.is_some() {
            let line = cdx::line(&cdx::Entry {
                url: &job.url,
                date: job.exchange.started,
                // pywb's and warcio's indexers give a revisit this media
                // type; replay finds the original by the digest.
                mime: match job.exchange.revisit {
                    Some(_) => Some("warc/revisit"),
                    None => job.mime.as_deref(),
                },
                status: job.status,
                digest: &pair.payload_digest,
                length: pair.response.len() as u64,
                offset,
                filename: &cur.name,
            });
            self.cdx_lines.extend_from_slice(line.as_bytes());
            self.cdx_lines.push(b'\n');
        }
        Ok(())
    }

    fn write_resource(&mut self, job: &ResourceJob) -> Result<(), SinkError> {
        let build = |warcinfo_id: &str, deflater: Option<&mut gzip::Deflater>| {
            let built = record::resource(
                &job.uri,
                job.date,
                job.mime,
                &job.data,
                warcinfo_id,
                deflater,
            );
            built.map_err(|e| io_error(format!("cannot build the record of {}", job.uri), e))
        };
        let mut built = build(&self.current.warcinfo_id, self.deflater.as_mut())?;
        if self.should_rotate(built.0.len() as u64) {
            self.rotate()?;
            built = build(&self.current.warcinfo_id, self.deflater.as_mut())?;
        }
        let (bytes, digest) = built;
        let (offset, len) = (self.current.size, bytes.len() as u64);
        if let Some(observer) = &mut self.observer {
            let built = Built {
                kind: "resource",
                url: &job.uri,
                date: job.date,
                head: &[],
                body: &job.data,
                truncated: false,
                mime: Some(job.mime),
                digest: &digest,
                length: len,
                offset,
                filename: &self.current.name,
                text: None,
            };
            observer
                .record(&built)
                .map_err(|e| io_error(format!("cannot index {}", job.uri), e))?;
        }
        self.unwritten.extend_from_slice(&bytes);
        self.current.size += len;
        self.bytes += len;
        self.records += 1;
        if self.cdx.is_some() {
            // pywb's indexer gives a resource record status 200 and its own
            // media type.
            let line = cdx::line(&cdx::Entry {
                url: &job.uri,
                date: job.date,
                mime: Some(job.mime),
                status: Some(200),
                digest: &digest,
                length: len,
                offset,
                filename: &self.current.name,
            });
            self.cdx_lines.extend_from_slice(line.as_bytes());
            self.cdx_lines.push(b'\n');
        }
        Ok(())
    }

    /// Writes the records built so far to the current file, in one call, then
    /// their index lines (never before: a line must not point at a record that a
    /// kill could still tear).
    fn write_out(&mut self) -> Result<(), SinkError> {
        if !self.unwritten.is_empty() {
            let cur = &mut self.current;
            if let Some(observer) = &mut self.observer {
                let noted = observer.wrote(&cur.name, &cur.path, &self.unwritten);
                noted.map_err(|e| io_error(format!("cannot index {}", cur.path.display()), e))?;
            }
            let result = cur.file.file().write_all(&self.unwritten);
            self.unwritten.clear();
            result.map_err(|e| io_error(format!("cannot write {}", cur.path.display()), e))?;
        }
        if let (Some(file), false) = (&self.cdx, self.cdx_lines.is_empty()) {
            let result = file.file().write_all(&self.cdx_lines);
            self.cdx_lines.clear();
            result
                .map_err(|e| io_error(format!("cannot write {}", self.cdx_path().display()), e))?;
        }
        Ok(())
    }

    fn cdx_path(&self) -> &Path {
        self.options.cdx.as_deref().unwrap_or(Path::new("cdx"))
    }

    fn should_rotate(&self, len: u64) -> bool {
        match self.options.max_size {
            Some(max) => {
                self.current.size > self.current.empty_size && self.current.size + len > max
            }
            None => false,
        }
    }

    fn rotate(&mut self) -> Result<(), SinkError> {
        self.write_out()?;
        sync(&self.current)?;
        let path = numbered(&self.base, self.next_index);
        self.next_index += 1;
        self.current = new_file(path, &self.options, self.gzip, self.observer.as_mut())?;
        self.files.push(self.current.path.display().to_string());
        self.bytes += self.current.size;
        self.records += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.write_out()?;
        sync(&self.current)?;
        let mut files = self.files.clone();
        if let (Some(_), Some(path)) = (self.cdx.take(), &self.options.cdx) {
            self.bytes += cdx::sort_file(path)
                .map_err(|e| io_error(format!("cannot sort {}", path.display()), e))?;
            files.push(path.display().to_string());
        }
        Ok(SinkSummary {
            name: "warc".into(),
            files,
            bytes: self.bytes,
            records: self.records,
            refused: 0,
        })
    }
}

fn sync(cur: &Current) -> Result<(), SinkError> {
    cur.file
        .file()
        .sync_all()
        .map_err(|e| io_error(format!("cannot sync {}", cur.path.display()), e))
}

/// Creates a WARC file and writes its `warcinfo` record.
fn new_file(
    path: PathBuf,
    options: &WarcOptions,
    gzip: bool,
    observer: Option<&mut Box<dyn Observer>>,
) -> Result<Current, SinkError> {
    let fail = |e| io_error(format!("cannot write {}", path.display()), e);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let warcinfo_id = record::new_record_id();
    let info = record::warcinfo(
        &warcinfo_id,
        &name,
        &options.software,
        &options.crawl_options,
        gzip,
    )
    .map_err(fail)?;
    let mut file = super::create_output(&path).map_err(fail)?;
    if let Some(observer) = observer {
        observer.wrote(&name, &path, &info).map_err(fail)?;
    }
    file.write_all(&info).map_err(fail)?;
    let size = info.len() as u64;
    Ok(Current {
        file: Arc::new(SyncedFile::new(file, path.clone())),
        path,
        name,
        size,
        empty_size: size,
        warcinfo_id,
    })
}

/// Opens the index file: continued at its end, or started afresh.
fn open_cdx(path: &Path, append: bool) -> Result<File, SinkError> {
    let opened = if append {
        super::open_output(path, true).and_then(|mut f| {
            std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0))?;
            Ok(f)
        })
    } else {
        super::create_output(path)
    };
    opened.map_err(|e| io_error(format!("cannot open {}", path.display()), e))
}

/// The name of rotated file `n` of `base` (`--warc-max-size`): the number goes
/// before the WARC suffix. `crawl.warc.gz` → `crawl-00003.warc.gz`; `out` → `out-00003`.
pub fn rotated_warc_name(base: &Path, n: u32) -> PathBuf {
    numbered(base, n)
}

fn numbered(base: &Path, n: u32) -> PathBuf {
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, suffix) = [".warc.gz", ".warc", ".gz"]
        .iter()
        .find_map(|s| {
            name.strip_suffix(s)
                .filter(|stem| !stem.is_empty())
                .map(|stem| (stem, *s))
        })
        .unwrap_or((name.as_str(), ""));
    base.with_file_name(format!("{stem}-{n:05}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subresource_head_gives_its_status_and_type() {
        type Want = (Option<u16>, Option<&'static str>);
        let cases: [(&[u8], Want); 3] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Type: Text/JavaScript; charset=utf-8\r\n\r\n",
                (Some(200), Some("text/javascript")),
            ),
            (b"HTTP/1.1 404 Not Found\r\n\r\n", (Some(404), None)),
            (b"garbage", (None, None)),
        ];
        for (head, (status, mime)) in cases {
            let got = head_status_and_type(head);
            assert_eq!((got.0, got.1.as_deref()), (status, mime));
        }
    }

    #[test]
    fn a_file_that_cannot_be_created_keeps_the_io_error_as_source() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/x.warc");
        let Err(err) = WarcSink::create(&path, WarcOptions::default()) else {
            panic!("created a WARC file in a missing directory");
        };
        let source = std::error::Error::source(&err).expect("a source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert_eq!((err.sink(), err.is_reader_gone()), ("warc", false));
        assert_eq!(
            err.to_string(),
            format!("warc: cannot write {}: {io}", path.display())
        );
    }

    #[test]
    fn numbered_names() {
        let cases = [
            ("out/crawl.warc.gz", "out/crawl-00000.warc.gz"),
            ("crawl.warc", "crawl-00000.warc"),
            ("crawl.gz", "crawl-00000.gz"),
            ("crawl", "crawl-00000"),
            (".warc", ".warc-00000"),
        ];
        for (base, want) in cases {
            assert_eq!(numbered(Path::new(base), 0), PathBuf::from(want), "{base}");
        }
        assert_eq!(
            numbered(Path::new("a.warc.gz"), 12),
            PathBuf::from("a-00012.warc.gz")
        );
    }
}
