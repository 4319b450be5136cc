//! Outputs for language models: an `llms.txt` index of the site with
//! `llms-full.txt` beside it ([`LlmsTxtSink`], `--llms-txt FILE`), and
//! retrieval chunks of at most N tokens as JSON Lines ([`ChunksSink`],
//! `--chunks FILE`). Both read each HTML page's [`crate::content::Document`].

mod chunk;
mod chunks_sink;
mod entry;
mod frame;
mod index;
mod llms_sink;
mod split;
mod token;

pub use chunk::{Chunk, MIN_CHUNK_TOKENS, chunk_document};
pub use chunks_sink::{ChunksSink, DEFAULT_CHUNK_TOKENS};
pub use llms_sink::{LlmsTxtSink, MAX_LISTED, full_path};
pub use token::count as count_tokens;

use std::sync::Arc;

use crate::content::Document;
use crate::output::Page;

/// The page's content, when it is a page to write: a 2xx HTML page (a crawl's
/// `html` outcome, a fetch's final answer; never an error page's body).
fn document(page: &Page) -> Option<&Arc<Document>> {
    let ok = matches!(page.record.status, Some(200..=299));
    page.content.as_ref().filter(|_| ok)
}
