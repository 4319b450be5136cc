//! Manual benchmark: the site must not be a crawl's bottleneck.
//!
//! Ignored by default (it measures wall-clock time):
//! `cargo test --release -p skitter-testsite --test it -- throughput:: --ignored
//! --nocapture`.
//! The server runs on a single-threaded runtime, i.e. one core.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use skitter_testsite::{SiteConfig, serve};

use crate::support::{get, h1};

const CONNECTIONS: usize = 32;
const RUN: Duration = Duration::from_secs(3);

#[test]
#[ignore = "wall-clock benchmark; run with --release --ignored"]
fn serves_at_least_15k_small_pages_per_second_on_one_core() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let config = SiteConfig {
                pages: 10_000,
                page_size: 1024,
                ..SiteConfig::default()
            };
            serve(config, listener, async move { drop(stopped.await) })
                .await
                .unwrap();
        });
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    rt.block_on(async {
        let client = h1();
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|t| {
                let (client, done) = (client.clone(), Arc::clone(&done));
                tokio::spawn(async move {
                    let mut i = t;
                    while started.elapsed() < RUN {
                        let got = get(&client, &format!("http://{addr}/p/{}", i % 10_000)).await;
                        assert_eq!(got.status, 200);
                        done.fetch_add(1, Ordering::Relaxed);
                        i += CONNECTIONS;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    let rate = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
    println!("{rate:.0} responses/s over {CONNECTIONS} keep-alive connections");
    let _ = stop.send(());
    server.join().unwrap();
    if !cfg!(debug_assertions) {
        assert!(rate >= 15_000.0, "only {rate:.0} responses/s");
    }
}
