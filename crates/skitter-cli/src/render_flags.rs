//! The rendering options of `crawl` (`--render`, `--chromium`,
//! `--render-tasks`, `--render-timeout`, the render budget, `--screenshots`) and how they become the library's
//! [`RenderSettings`].

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use skitter::render::{RenderMode, RenderSettings};

use crate::flags;

/// `--render`'s values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum RenderArg {
    /// Never render: the plain fetch only.
    #[default]
    Never,
    /// Render the HTML pages that look script-built (the book, "Render
    /// pages that need JavaScript").
    Auto,
    /// Render every HTML page.
    Always,
}

/// Rendering options of `crawl`.
#[derive(Args, Debug, Clone)]
pub struct RenderFlags {
    /// Render pages in headless Chromium: `never`, `auto` (pages whose plain
    /// HTML looks script-built: a <noscript> asking for JavaScript, an empty
    /// #app/#root, or scripts with fewer than 2 links) or `always` (every HTML
    /// page). Links then come from the rendered DOM too; the browser's requests
    /// go through skitter (scope, robots.txt, address policy, --per-host and
    /// --delay) and into the WARC.
    #[arg(long, value_enum, default_value_t = RenderArg::Never)]
    pub render: RenderArg,
    /// The Chromium executable for --render.
    #[arg(
        long,
        env = "SKITTER_CHROMIUM",
        default_value = "chromium",
        value_name = "PATH"
    )]
    pub chromium: PathBuf,
    /// Browser tabs rendering at once (apart from --max-tasks).
    #[arg(long, default_value_t = 4, value_parser = flags::count, value_name = "N")]
    pub render_tasks: usize,
    /// Time limit of one render (load, scripts, settling); a page whose
    /// renders all time out or crash the browser is recorded as failed.
    #[arg(long, value_parser = flags::duration, default_value = "15s", value_name = "DURATION")]
    pub render_timeout: Duration,
    /// Requests the browser may have skitter fetch for one render (scripts,
    /// XHR, images, frames; the page itself aside); later ones fail in the
    /// browser (render_refused_budget in the report). They do not count
    /// against --max-pages or --max-per-host, which count pages.
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub render_max_requests: u64,
    /// Response bodies skitter may hand the browser in one render, e.g. 64M;
    /// a response past it fails in the browser (render_refused_budget).
    #[arg(long, value_parser = flags::size, default_value = "64M", value_name = "SIZE")]
    pub render_max_bytes: u64,
    /// Store a full-page PNG (at most 16,384 pixels tall) and a 640x360 JPEG
    /// thumbnail of every rendered page in the WARC (and so the WACZ), as
    /// resource records urn:fullPage:URL and urn:thumbnail:URL. Without
    /// --render, every HTML page is rendered for its pictures alone (its links
    /// and text stay the plain fetch's), under the render limits above.
    #[arg(long)]
    pub screenshots: bool,
}

impl RenderFlags {
    /// The library's settings for these flags.
    pub fn settings(&self) -> RenderSettings {
        RenderSettings {
            mode: match self.render {
                RenderArg::Never => RenderMode::Never,
                RenderArg::Auto => RenderMode::Auto,
                RenderArg::Always => RenderMode::Always,
            },
            chromium: self.chromium.clone(),
            tasks: self.render_tasks,
            timeout: self.render_timeout,
            max_requests: self.render_max_requests,
            max_bytes: self.render_max_bytes,
            screenshots: self.screenshots,
            ..RenderSettings::default()
        }
    }
}
