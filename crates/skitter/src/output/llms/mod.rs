//! Outputs for language models: an `llms.txt` index of the site with
//! `llms-full.txt` beside it ([`LlmsTxtSink`], `--llms-txt FILE`), and
//! retrieval chunks of at most N tokens as JSON Lines ([`ChunksSink`],
//! `--chunks FILE`). Both read each HTML page's [`crate::content::Document`].

mod chunk;
mod chunks_sink;
mod entry;
mod index;
mod llms_sink;
mod split;
mod token;

pub use chunk::{Chunk, MIN_CHUNK_TOKENS, chunk_document};
pub use chunks_sink::{ChunksSink, DEFAULT_CHUNK_TOKENS};
pub use llms_sink::{LlmsTxtSink, MAX_LISTED, full_path};
pub use token::count as count_tokens;
