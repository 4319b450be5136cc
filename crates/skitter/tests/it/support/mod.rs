//! What several test modules share. `redis_server` and `redis_cluster` are also
//! compiled into the CLI's tests and the Redis benchmark example (by `#[path]`),
//! so they use nothing from this crate's tests.

pub mod frontier_contract;
pub mod items_db;
pub mod redis_cluster;
pub mod redis_server;
