//! Measures what a sharded crawl costs in a Redis Cluster's memory: bytes per
//! seen URL (fingerprints marked seen) and per queued URL (requests offered,
//! minus what their seen entries cost), summed over the masters' `INFO memory`
//! `used_memory`. The cluster is started by the caller
//! (`scripts/bench-cluster.sh`).
//!
//! `redis_cluster_bench CLUSTER_URL MASTER_URLS URLS SHARDS`, where
//! MASTER_URLS is a comma-separated list of `redis://` URLs of every master.

use std::time::Instant;

use futures_util::future::try_join_all;
use skitter::frontier::{Frontier, RedisFrontier, RedisOptions, Request, RequestKind};
use url::Url;

/// URLs generated and sent per step; several steps run at once.
const STEP: usize = 20_000;
const IN_FLIGHT: usize = 4;
/// Hosts the generated URLs are spread over (a broad crawl).
const HOSTS: usize = 10_000;

type Error = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cluster, masters, urls, shards] = args.as_slice() else {
        return Err("usage: redis_cluster_bench CLUSTER_URL MASTER_URLS URLS SHARDS".into());
    };
    let masters: Vec<&str> = masters.split(',').collect();
    let n: usize = urls.parse()?;
    let options = RedisOptions {
        shards: Some(shards.parse()?),
        ..RedisOptions::default()
    };

    let before = used_memory(&masters).await?;
    let seen = RedisFrontier::connect(cluster, "bench-seen", options).await?;
    let clock = Instant::now();
    for offset in (0..n).step_by(STEP * IN_FLIGHT) {
        let chunks: Vec<Vec<Url>> = (0..IN_FLIGHT)
            .map(|k| offset + k * STEP)
            .filter(|&from| from < n)
            .map(|from| (from..(from + STEP).min(n)).map(url).collect())
            .collect();
        try_join_all(chunks.iter().map(|urls| seen.mark_seen(urls))).await?;
    }
    let after_seen = used_memory(&masters).await?;
    println!("seen: {n} URLs marked in {:.1?}", clock.elapsed());

    let queue = RedisFrontier::connect(cluster, "bench-queue", options).await?;
    let clock = Instant::now();
    for offset in (0..n).step_by(STEP * IN_FLIGHT) {
        let steps = (0..IN_FLIGHT)
            .map(|k| offset + k * STEP)
            .filter(|&from| from < n);
        try_join_all(steps.map(|from| queue.offer(requests(from, (from + STEP).min(n))))).await?;
    }
    let after_queue = used_memory(&masters).await?;
    println!("queued: {n} URLs offered in {:.1?}", clock.elapsed());
    let per_seen = per(after_seen.saturating_sub(before), n);
    let per_both = per(after_queue.saturating_sub(after_seen), n);
    println!(
        "shards {shards} over {} masters: {per_seen:.1} bytes per seen URL, {:.1} bytes per queued URL ({per_both:.1} seen + queued)",
        masters.len(),
        per_both - per_seen
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

/// `used_memory` summed over the masters.
async fn used_memory(masters: &[&str]) -> Result<u64, Error> {
    let mut total = 0;
    for master in masters {
        let client = redis::Client::open(*master)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let info: String = redis::cmd("INFO")
            .arg("memory")
            .query_async(&mut conn)
            .await?;
        let line = info.lines().find_map(|l| l.strip_prefix("used_memory:"));
        total += line
            .ok_or("no used_memory in INFO")?
            .trim()
            .parse::<u64>()?;
    }
    Ok(total)
}
