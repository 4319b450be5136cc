//! A crawl shared by several workers through Redis: the pieces that sit on top
//! of the Redis frontier ([`crate::frontier::RedisFrontier`]) and the outputs,
//! so that neither of those depends on the other. Today that is the crawl-wide
//! totals ([`RedisStatsSink`]).

mod stats;

pub use stats::RedisStatsSink;
