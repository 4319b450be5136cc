//! The command line's integration tests, one binary (as uv's `it`): each file
//! below is a module that runs the real `skitter` binary against the local test
//! site, a scripted DNS responder or a real `redis-server`. `support` holds the
//! process helpers and the library's Redis helpers, shared by path.
//!
//! Run one file's tests by its module path: `cargo test -p skitter-cli --test it
//! -- resume::`.

mod support;

mod check_cli;
mod config_cli;
mod crawl_cli;
mod extract_cli;
mod fetch_cli;
mod llms_cli;
mod markdown_cli;
mod probe;
mod proxies_cli;
mod redis_cluster;
mod redis_cluster_sharded;
mod redis_recrawl;
mod render_reap;
mod resume;
mod safety_files;
mod screenshots_cli;
mod wacz_cli;
mod wacz_replay;
mod watch_cli;
