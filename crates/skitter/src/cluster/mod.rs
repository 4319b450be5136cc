//! A crawl shared by several workers through Redis: the pieces that sit on top
//! of the Redis frontier ([`crate::frontier::RedisFrontier`]) and the outputs,
//! so that neither of those depends on the other: the crawl's spec that every
//! worker builds from ([`CrawlSpec`]), the crawl-wide totals
//! ([`RedisStatsSink`]), per-proxy ones included ([`take_proxy_stats`]), and
//! the whole crawl as a worker's dashboard shows it ([`ClusterWatch`]).

mod proxies;
mod spec;
mod stats;
mod watch;

pub use proxies::{PROXY_FIELD, proxy_fields, take_proxy_stats};
pub use spec::{CrawlSpec, SPEC_VERSION, SpecError};
pub use stats::RedisStatsSink;
pub use watch::{ClusterWatch, PUBLISH_INTERVAL, STALE_AFTER};
