//! The WACZ sink: a crawl archived as one WACZ file, which appears when the
//! crawl finishes, whole, or not at all.
//!
//! The crawl's WARC files are written (by a [`WarcSink`], rotating at
//! [`WARC_ROTATION`]) into a folder beside the WACZ file, [`wacz_warc_dir`].
//! As they are written, the writer tells a `Live` (see `live`) each record
//! and each byte: the index lines, the page list (each page's title and text
//! as the crawl's own parse read them: see [`crate::parse::text`]) and every
//! file's SHA-256 are made while the crawl runs. When the crawl finishes the files are copied into the
//! WACZ (on the blocking pool), which is written under a temporary name and
//! renamed. A crawl that is killed leaves the folder and no WACZ file. When
//! the folder is kept (`keep_warcs`: a crawl kept in a state directory,
//! which a later run resumes), it holds the WARC files of every run, so each
//! run's WACZ is the whole crawl: the earlier runs' files, which this run's
//! index does not cover, are read again when it packs. Otherwise the folder
//! is removed once packed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;

use super::WaczOptions;
use super::live::Live;
use crate::output::warc::WarcOptions;
use crate::output::{Page, Sink, SinkError, SinkSummary, Syncable, WarcSink};
use crate::parse::text::{PageText, TEXT_MAX, collapse_within};

/// Size past which the crawl's WARC files rotate inside the WACZ (as
/// Browsertrix does at 1 GB): no one file in the archive grows without bound.
pub const WARC_ROTATION: u64 = 1 << 30;

/// The folder beside `wacz` where a crawl writes its WARC files until they are
/// packed: `site.wacz` → `site.wacz.warcs/`.
pub fn wacz_warc_dir(wacz: &Path) -> PathBuf {
    let mut name = wacz.file_name().unwrap_or_default().to_os_string();
    name.push(".warcs");
    wacz.with_file_name(name)
}

/// Archives a crawl as a WACZ file; see the module docs.
pub struct WaczSink {
    warc: WarcSink,
    out: PathBuf,
    options: WaczOptions,
    keep_warcs: bool,
}

impl WaczSink {
    /// A sink packing into `out` what it archives as WARC files at `warc`
    /// (a path in [`wacz_warc_dir`]`(out)`, written as `warc_options` say;
    /// rotation numbers the files); the folder is removed once packed
    /// unless `keep_warcs`. Fails when the first WARC file or the
    /// temporary files beside `out` cannot be created.
    pub fn create(
        warc: &Path,
        warc_options: WarcOptions,
        out: PathBuf,
        options: WaczOptions,
        keep_warcs: bool,
    ) -> Result<WaczSink, SinkError> {
        let dir = super::pack::folder_of(&out);
        let live = Live::new(dir)
            .map_err(|e| SinkError::io("wacz", format!("cannot write in {}", dir.display()), e))?;
        let warc = WarcSink::observed(warc, warc_options, Some(Box::new(live)))?;
        Ok(WaczSink {
            warc,
            out,
            options,
            keep_warcs,
        })
    }
}

#[async_trait]
impl Sink for WaczSink {
    fn wants_bodies(&self) -> bool {
        true
    }

    fn wants_text(&self) -> bool {
        true
    }

    async fn record(&mut self, page: &Page) -> Result<(), SinkError> {
        self.warc.record_with_text(page, listed_text(page)).await
    }

    async fn flush(&mut self) -> Result<(), SinkError> {
        self.warc.flush().await
    }

    fn unsynced(&mut self) -> Vec<Arc<dyn Syncable>> {
        self.warc.unsynced()
    }

    async fn finish(&mut self) -> Result<SinkSummary, SinkError> {
        self.warc.finish().await?;
        let live = self
            .warc
            .take_observer()
            .and_then(|o| o.into_any().downcast::<Live>().ok())
            .ok_or_else(|| SinkError::new("wacz", "the in-crawl index is gone"))?;
        let out = self.out.clone();
        let options = self.options.clone();
        let keep = self.keep_warcs;
        let summary = tokio::task::spawn_blocking(move || {
            let dir = wacz_warc_dir(&out);
            let warcs = warc_files(&dir)
                .map_err(|e| SinkError::io("wacz", format!("cannot list {}", dir.display()), e))?;
            let summary = live
                .pack(&warcs, &out, &options)
                .map_err(|e| SinkError::from_source("wacz", e))?;
            if !keep {
                std::fs::remove_dir_all(&dir).map_err(|e| {
                    SinkError::io("wacz", format!("cannot remove {}", dir.display()), e)
                })?;
            }
            Ok::<_, SinkError>(summary)
        })
        .await
        .map_err(|e| SinkError::new("wacz", "packing task failed").with_source(e))??;
        Ok(SinkSummary {
            name: "wacz".into(),
            files: vec![summary.path.display().to_string()],
            bytes: summary.bytes,
            records: summary.captures,
            refused: 0,
        })
    }
}

/// A page's title and text for the page list, from the crawl's own reading
/// of it: the main text of its content when the crawl extracted it for
/// another output (`--markdown`, `--content`; the rendered DOM's, when it
/// was rendered), else its visible text. `None` leaves the writer to read
/// the body, as `wacz create` does.
pub(super) fn listed_text(page: &Page) -> Option<Arc<PageText>> {
    match &page.content {
        Some(doc) => {
            let mut text = String::new();
            let cut = collapse_within(&mut text, &doc.text(), TEXT_MAX);
            Some(Arc::new(PageText {
                title: doc.title.clone(),
                text,
                cut,
            }))
        }
        None => page.text.clone(),
    }
}

/// The WARC files in `dir`, by name (a run's rotated files in order, the runs
/// of a resumed crawl one after another).
fn warc_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(".warc.gz") || name.ends_with(".warc") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
