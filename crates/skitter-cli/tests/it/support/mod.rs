//! What several test modules share: running the binary (`cli`), a headless
//! Chromium (`browser`) and a static file server (`files`), and a real
//! `redis-server` or Redis Cluster, the library's own test helpers included by
//! path rather than copied.

use tokio::sync::Mutex;

pub mod browser;
pub mod cli;
pub mod files;
// The library's tests use all of these; the ones here use a part.
#[allow(dead_code)]
#[path = "../../../../skitter/tests/it/support/redis_cluster.rs"]
pub mod redis_cluster;
#[allow(dead_code)]
#[path = "../../../../skitter/tests/it/support/redis_server.rs"]
pub mod redis_server;

/// Held by every test that crawls through Redis with several processes
/// (`redis_cluster`, `redis_cluster_sharded`), so that no two run at once, as when
/// each file was a binary of its own: the delay checks need a machine not busy
/// with another shared crawl.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());
