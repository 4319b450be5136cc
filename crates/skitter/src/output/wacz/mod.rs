//! WACZ 1.1.1 (Web Archive Collection Zipped): one zip with the WARC files, their
//! index, the list of pages with their titles and text, and a manifest of hashes,
//! which ReplayWeb.page opens in a browser with no server.
//!
//! Layout: `archive/*.warc.gz` (stored, not deflated), `indexes/index.cdx.gz` and
//! `indexes/index.idx` (the compressed CDXJ index, see `zipnum`),
//! `pages/pages.jsonl`, `datapackage.json`, `datapackage-digest.json`.
//! [`pack_wacz`] writes one from WARC files (`pack`), reading them to index
//! them and list their pages (`scan`); [`validate_wacz`] checks one (`check`);
//! [`WaczSink`] archives a crawl as one (`sink`), indexing the WARC files as
//! they are written (`live`).

mod check;
mod live;
mod pack;
mod package;
mod scan;
mod sink;
mod sort;
#[cfg(test)]
mod tests;
mod zipnum;

pub use check::{WaczCheck, WaczProblem, validate_wacz};
pub use pack::{WaczOptions, WaczSummary, pack_wacz};
pub use package::WACZ_VERSION;
pub use sink::{WARC_ROTATION, WaczSink, wacz_warc_dir};

/// Packing or reading a WACZ file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaczError {
    /// Reading a WARC file or writing the WACZ failed (what, and the I/O error).
    #[error("{what}: {source}")]
    Io {
        /// What was being done, naming the file.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a zip archive.
    #[error("{0} is not a zip archive: {1}")]
    NotZip(String, #[source] zip::result::ZipError),
    /// The WARC files given cannot be packed as they are.
    #[error("{0}")]
    BadInput(String),
}

impl WaczError {
    fn io(what: String, source: std::io::Error) -> WaczError {
        WaczError::Io { what, source }
    }
}
