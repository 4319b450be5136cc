//! The library's integration tests, one binary (as uv's `it`): each file below is
//! a module, `support` holds what several share (the frontier contract, a real
//! `redis-server` and Redis Cluster, the items database backends). One binary is
//! linked once instead of once per file; a test that needs a process of its own
//! starts this binary again as a child (`disk_frontier`'s kill test).
//!
//! Run one file's tests by its module path: `cargo test -p skitter --test it --
//! crawl::`. Recorded cases for the conformance tests are in `tests/corpora/`.

mod support;

mod bounded_memory;
mod bulk_chain;
mod bulk_fetch;
mod bulk_if_modified;
mod bulk_recipe;
mod cdx_pywb;
mod client_paths;
mod crawl;
mod crawl_outputs;
mod disk_frontier;
mod disk_frontier_hosts;
mod disk_lost;
mod extract_corpus;
mod faults;
mod fuzz;
mod hardening;
mod hostile;
mod items_db;
mod items_db_tls;
mod items_extract;
mod items_rules;
mod jsonl_items;
mod jsonl_sink;
mod link_check;
mod llms_outputs;
mod markdown_tree;
mod memory_frontier;
mod mirror_paths;
mod network_safety;
mod polite;
mod power_cut;
mod probe;
mod proxies;
mod recrawl;
mod redis_frontier;
mod redis_lost;
mod redis_malformed;
mod redis_quota;
mod redis_sharded;
mod render;
mod render_safety;
mod render_worker;
mod report_html;
mod request_options;
mod resumed_limits;
mod robots_corpus;
mod robots_stall;
mod sitemap_corpus;
mod sitemap_resume;
mod tls_http2;
mod traps;
mod url_corpus;
mod url_deadline;
mod wacz;
mod warc_revisit;
mod warc_validate;
mod watch;
