//! Secrets typed on skitter's own command line, which any process of the same
//! user can read in `/proc/PID/cmdline`. A rendering crawl runs a browser on
//! pages of the open web, so it says once which flags hold one and where they
//! belong instead: a `--config` file, which goes into the argument list clap
//! parses but never onto the process's command line.

use std::collections::BTreeSet;

use super::print::redact;
use crate::crawl_cmd::CrawlArgs;
use crate::render_flags::RenderArg;

/// The flags given on the command line (not from the `--config` file) whose
/// value holds a secret: a URL's password or user token (`--redis`,
/// `--items`, `--proxy`, a root URL), any `-H` value (any header may be one).
pub fn secret_flags(args: &CrawlArgs, from_file: &BTreeSet<String>) -> Vec<&'static str> {
    let flags: [(&str, &str, Vec<&String>); 5] = [
        ("roots", "a root URL", args.roots.iter().collect()),
        ("headers", "--header", args.request.headers.iter().collect()),
        ("redis", "--redis", args.redis.iter().collect()),
        ("items", "--items", args.outputs.items.iter().collect()),
        ("proxy", "--proxy", args.request.proxy.iter().collect()),
    ];
    flags
        .into_iter()
        .filter(|(id, _, _)| !from_file.contains(*id))
        .filter(|(id, _, values)| {
            let key = if *id == "headers" { "header" } else { id };
            values.iter().any(|v| redact(key, v) != **v)
        })
        .map(|(_, flag, _)| flag)
        .collect()
}

/// Warns once when a rendering crawl has a secret on its command line.
pub fn warn_if_rendering(args: &CrawlArgs, from_file: &BTreeSet<String>) {
    if args.render.render == RenderArg::Never {
        return;
    }
    let flags = secret_flags(args, from_file);
    if !flags.is_empty() {
        tracing::warn!(
            "a secret is on skitter's command line ({}), where any process of this user can \
             read it (/proc/PID/cmdline), and this crawl runs a browser on web pages: put it \
             in a --config file (readable by you alone) instead",
            flags.join(", ")
        );
    }
}
