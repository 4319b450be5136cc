//! Pure CPU parsing of fetched bodies: link sources ([`links`]: HTML, CSS,
//! headers), structured extraction rules ([`items`]), sitemaps ([`sitemap`])
//! and where a crawl looks for them ([`discovery`]), near-duplicate
//! fingerprints of page text ([`fingerprint`]), a page's title and visible
//! text ([`text`]). Nothing here does I/O.

pub mod discovery;
pub mod fingerprint;
pub mod items;
pub mod links;
pub mod sitemap;
pub mod text;
