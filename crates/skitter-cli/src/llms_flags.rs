//! The outputs for language models, shared by `skitter crawl` (and `worker`)
//! and `skitter fetch`: `--llms-txt FILE` and `--chunks FILE` with
//! `--chunk-tokens N`, and the sinks they make.

use std::path::PathBuf;

use clap::Args;
use skitter::output::{ChunksSink, DEFAULT_CHUNK_TOKENS, LlmsTxtSink, MIN_CHUNK_TOKENS, Sink};

/// Where pages go as text for language models.
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct LlmsFlags {
    /// Write an llms.txt index of the site to FILE (llmstxt.org's format:
    /// title, summary, sections of links with one-line descriptions) and
    /// every HTML page's Markdown to the file beside it, `-full` before the
    /// extension (llms.txt → llms-full.txt). Both appear when the crawl
    /// ends; see the book's "Text for language models".
    #[arg(long, value_name = "FILE")]
    pub llms_txt: Option<PathBuf>,
    /// Write every HTML page's Markdown to FILE as retrieval chunks, one JSON
    /// line each ({url, title, chunk, headings, tokens, markdown}): cut at
    /// headings, then between blocks, into pieces of at most --chunk-tokens
    /// tokens (OpenAI's cl100k_base count).
    #[arg(long, value_name = "FILE")]
    pub chunks: Option<PathBuf>,
    /// The most tokens in one chunk of --chunks.
    #[arg(
        long,
        value_name = "N",
        requires = "chunks",
        default_value_t = DEFAULT_CHUNK_TOKENS,
        value_parser = chunk_tokens,
    )]
    pub chunk_tokens: usize,
}

impl Default for LlmsFlags {
    fn default() -> Self {
        LlmsFlags {
            llms_txt: None,
            chunks: None,
            chunk_tokens: DEFAULT_CHUNK_TOKENS,
        }
    }
}

fn chunk_tokens(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n < MIN_CHUNK_TOKENS {
        return Err(format!("a chunk holds at least {MIN_CHUNK_TOKENS} tokens"));
    }
    Ok(n)
}

impl LlmsFlags {
    /// The sinks these flags ask for; their files are created now, so a
    /// path that cannot be written fails before anything is fetched.
    pub fn sinks(&self) -> anyhow::Result<Vec<Box<dyn Sink>>> {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        if let Some(path) = &self.llms_txt {
            sinks.push(Box::new(LlmsTxtSink::create(path)?));
        }
        if let Some(path) = &self.chunks {
            sinks.push(Box::new(ChunksSink::create(path, self.chunk_tokens)?));
        }
        Ok(sinks)
    }

    /// These outputs for one worker of a shared crawl: its id in each file
    /// name (each worker's llms.txt lists the pages it fetched).
    pub fn for_worker(mut self, id: &str) -> LlmsFlags {
        let rename = |p: &PathBuf| crate::flags::with_worker_id(p, id);
        self.llms_txt = self.llms_txt.as_ref().map(rename);
        self.chunks = self.chunks.as_ref().map(rename);
        self
    }
}
