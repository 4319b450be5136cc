//! `datapackage.json` and `datapackage-digest.json`: the WACZ manifest (a
//! Frictionless data package listing every file with its size and SHA-256) and
//! the digest of the manifest itself.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The WACZ specification version written and checked.
pub const WACZ_VERSION: &str = "1.1.1";

/// The manifest's name in the zip.
pub(crate) const DATAPACKAGE: &str = "datapackage.json";

/// The manifest digest's name in the zip.
pub(crate) const DIGEST: &str = "datapackage-digest.json";

/// `datapackage.json`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DataPackage {
    pub profile: String,
    pub resources: Vec<Resource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "mainPageURL"
    )]
    pub main_page_url: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "mainPageDate"
    )]
    pub main_page_date: Option<String>,
    #[serde(default)]
    pub created: String,
    #[serde(default)]
    pub wacz_version: String,
    #[serde(default)]
    pub software: String,
}

/// One file of the WACZ, as the manifest lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Resource {
    /// The file's name, lowercased (as `py-wacz` writes it).
    pub name: String,
    /// Its path in the zip.
    pub path: String,
    /// `sha256:` and the hex digest of its bytes.
    pub hash: String,
    /// Its size.
    pub bytes: u64,
}

/// `datapackage-digest.json`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PackageDigest {
    pub path: String,
    pub hash: String,
}

/// `sha256:` and the hex digest, the manifest's form of a hash.
pub(crate) fn hash_text(digest: &[u8]) -> String {
    format!("sha256:{}", data_encoding::HEXLOWER.encode(digest))
}

/// A writer that hashes and counts what passes through it.
pub(crate) struct Hashing<W> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Hashing<W> {
    pub(crate) fn new(inner: W) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// The manifest entry of what was written, as `path` in the zip.
    pub(crate) fn resource(self, path: &str) -> Resource {
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        Resource {
            name,
            path: path.to_string(),
            hash: hash_text(&self.hasher.finalize()),
            bytes: self.bytes,
        }
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
