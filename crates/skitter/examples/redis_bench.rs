//! Measures what the Redis frontier costs in Redis memory: bytes per seen URL
//! (10,000,000 fingerprints) and per queued URL (1,000,000 requests), read from
//! `INFO memory` of a private `redis-server` this program starts and stops.
//!
//! `cargo run --release -p skitter --example redis_bench [SEEN [QUEUED]]`

#[allow(dead_code)] // The bench never restarts its server.
#[path = "../tests/it/support/redis_server.rs"]
mod redis_server;

use std::time::Instant;

use futures_util::future::try_join_all;
use redis_server::RedisServer;
use skitter::frontier::{Frontier, RedisFrontier, RedisOptions, Request, RequestKind};
use url::Url;

/// URLs generated and sent per step; several steps run at once to keep the
/// multiplexed connection's pipeline full.
const STEP: usize = 50_000;
const IN_FLIGHT: usize = 4;
const HOSTS: usize = 1000;

type Error = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let seen = args.next().transpose()?.unwrap_or(10_000_000);
    let queued = args.next().transpose()?.unwrap_or(1_000_000);
    let Some(server) = RedisServer::start(false) else {
        return Ok(());
    };
    let client = redis::Client::open(server.url())?;
    // KEYS and DEL over a million keys take longer than the default 500 ms.
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let mut conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;

    let start = used_memory(&mut conn).await?;
    let frontier =
        RedisFrontier::connect(&server.url(), "bench-queue", RedisOptions::default()).await?;
    let clock = Instant::now();
    for offset in (0..queued).step_by(STEP * IN_FLIGHT) {
        let steps = (0..IN_FLIGHT)
            .map(|k| offset + k * STEP)
            .filter(|&from| from < queued);
        try_join_all(steps.map(|from| frontier.offer(requests(from, (from + STEP).min(queued)))))
            .await?;
    }
    let offered = used_memory(&mut conn).await?;
    // Dropping the crawl's seen buckets leaves what the queue alone costs.
    let seen_keys: Vec<String> = redis::cmd("KEYS")
        .arg("skitter:{bench-queue}:seen:*")
        .query_async(&mut conn)
        .await?;
    for keys in seen_keys.chunks(10_000) {
        redis::cmd("DEL")
            .arg(keys)
            .query_async::<()>(&mut conn)
            .await?;
    }
    let queue_only = used_memory(&mut conn).await?;
    println!("queued: {queued} URLs offered in {:.1?}", clock.elapsed());
    println!(
        "  seen + queued: {:.1} bytes/URL",
        per(offered - start, queued)
    );
    println!(
        "  queued only:   {:.1} bytes/URL",
        per(queue_only - start, queued)
    );

    let before = used_memory(&mut conn).await?;
    let frontier =
        RedisFrontier::connect(&server.url(), "bench-seen", RedisOptions::default()).await?;
    let clock = Instant::now();
    for offset in (0..seen).step_by(STEP * IN_FLIGHT) {
        let chunks: Vec<Vec<Url>> = (0..IN_FLIGHT)
            .map(|k| offset + k * STEP)
            .filter(|&from| from < seen)
            .map(|from| (from..(from + STEP).min(seen)).map(url).collect())
            .collect();
        try_join_all(chunks.iter().map(|urls| frontier.mark_seen(urls))).await?;
    }
    let after = used_memory(&mut conn).await?;
    let encoding: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg("skitter:{bench-seen}:seen:0")
        .query_async(&mut conn)
        .await?;
    println!("seen: {seen} URLs marked in {:.1?}", clock.elapsed());
    println!(
        "  used_memory {} MB total, {:.1} bytes/seen URL, bucket encoding {encoding}",
        after / 1_000_000,
        per(after - before, seen)
    );
    Ok(())
}

fn url(i: usize) -> Url {
    let text = format!(
        "http://host{}.example.com/articles/{i}/index.html",
        i % HOSTS
    );
    Url::parse(&text).expect("generated URLs parse")
}

fn requests(from: usize, to: usize) -> Vec<Request> {
    (from..to)
        .map(|i| Request {
            url: url(i),
            depth: 3,
            redirects_left: 10,
            parent: Some(url(i / 10)),
            kind: RequestKind::Page,
        })
        .collect()
}

fn per(bytes: u64, n: usize) -> f64 {
    bytes as f64 / n.max(1) as f64
}

async fn used_memory(conn: &mut redis::aio::MultiplexedConnection) -> Result<u64, Error> {
    let info: String = redis::cmd("INFO").arg("memory").query_async(conn).await?;
    let line = info.lines().find_map(|l| l.strip_prefix("used_memory:"));
    Ok(line.ok_or("no used_memory in INFO")?.trim().parse()?)
}
