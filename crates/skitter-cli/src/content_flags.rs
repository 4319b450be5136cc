//! The content options `crawl` and `fetch` share (`--content-scope`,
//! `--content-include`, `--content-exclude`): what of each HTML page the
//! Markdown and text outputs (`--markdown`, `--content`) keep, mapped onto
//! the library's [`ContentOptions`]. A shared (Redis) crawl's workers get
//! them through the crawl's spec, as every crawl setting.

use clap::{Args, ValueEnum};
use skitter::content::{ContentOptions, ContentScope};

/// Content options of `crawl` and `fetch`.
#[derive(Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentFlags {
    /// What of each HTML page --markdown and --content keep: `main`, the
    /// main content (navigation, headers, footers, cookie banners, share
    /// bars and ads dropped), or `full`, everything visible in the body.
    #[arg(long, value_enum, default_value_t = ScopeArg::Main, value_name = "SCOPE")]
    pub content_scope: ScopeArg,
    /// Keep only the elements this CSS selector matches (and what is inside
    /// them) in --markdown and --content; repeatable. (Not --include, which
    /// is the crawl's URL pattern.)
    #[arg(long, value_name = "SELECTOR")]
    pub content_include: Vec<String>,
    /// Drop the elements this CSS selector matches from --markdown and
    /// --content, whatever the scope; repeatable. (Not --exclude, which is
    /// the crawl's URL pattern.)
    #[arg(long, value_name = "SELECTOR")]
    pub content_exclude: Vec<String>,
}

/// `--content-scope`.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScopeArg {
    /// The main content only.
    #[default]
    Main,
    /// Everything visible in the page's body.
    Full,
}

impl ContentFlags {
    /// The library's options (selectors are checked when the crawl or
    /// fetch is built).
    pub fn options(&self) -> ContentOptions {
        ContentOptions {
            scope: match self.content_scope {
                ScopeArg::Main => ContentScope::Main,
                ScopeArg::Full => ContentScope::Full,
            },
            include: self.content_include.clone(),
            exclude: self.content_exclude.clone(),
        }
    }
}
