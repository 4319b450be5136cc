//! A crawl shared by several workers through Redis: the pieces that sit on top
//! of the Redis frontier ([`crate::frontier::RedisFrontier`]) and the outputs,
//! so that neither of those depends on the other: the crawl's spec that every
//! worker builds from ([`CrawlSpec`]) and the crawl-wide totals
//! ([`RedisStatsSink`]), per-proxy ones included ([`take_proxy_stats`]).

mod proxies;
mod spec;
mod stats;

pub use proxies::{PROXY_FIELD, proxy_fields, take_proxy_stats};
pub use spec::{CrawlSpec, SPEC_VERSION, SpecError};
pub use stats::RedisStatsSink;
