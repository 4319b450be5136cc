use super::*;

fn pool(n: usize, rotation: Rotation) -> ProxyPool {
    let proxies: Vec<String> = (0..n).map(|i| format!("http://p{i}:3128")).collect();
    ProxyPool::new(&proxies, rotation, ProxyBench::default())
}

fn ready(c: Choice) -> usize {
    match c {
        Choice::Ready(i) => i,
        Choice::Wait(_) => panic!("expected a proxy, got a wait"),
    }
}

#[test]
fn parses_lists_and_names_bad_lines() {
    let text = "# pool\n\nhttp://a:3128\n  socks5h://u:p@b:1080  \nhttps://c\nsocks5://d:9\n";
    let got = parse_proxy_list(text).unwrap();
    assert_eq!(
        got,
        [
            "http://a:3128",
            "socks5h://u:p@b:1080",
            "https://c",
            "socks5://d:9"
        ]
    );
    let cases: &[(&str, usize, &str)] = &[
        ("http://a:1\nftp://u:S3CRET@b\n", 2, "scheme"),
        ("\n\nnot a url S3CRET\n", 3, "not a proxy URL"),
        ("http://a:1/path\n", 1, "no path"),
        ("socks5://:1\n", 1, ""),
    ];
    for (text, line, reason) in cases {
        let err = parse_proxy_list(text).unwrap_err();
        assert_eq!(err.line, *line, "{text:?}: {err}");
        assert!(err.reason.contains(reason), "{text:?}: {err}");
        assert!(!err.to_string().contains("S3CRET"), "{err}");
    }
}

#[test]
fn shown_proxies_have_no_credentials() {
    let cases = [
        ("http://user:pass@proxy1:3128", "http://proxy1:3128"),
        ("http://proxy1", "http://proxy1:80"),
        ("socks5h://u:p@[::1]:1080", "socks5h://[::1]:1080"),
        ("https://u@h:8443/", "https://h:8443"),
    ];
    for (given, want) in cases {
        assert_eq!(shown_proxy(given), want);
    }
}

#[test]
fn round_robin_takes_each_proxy_in_turn_and_skips_benched_ones() {
    let p = pool(3, Rotation::RoundRobin);
    let order: Vec<usize> = (0..6).map(|_| ready(p.choose("h"))).collect();
    assert_eq!(order, [0, 1, 2, 0, 1, 2]);
    p.failed(1);
    let order: Vec<usize> = (0..4).map(|_| ready(p.choose("h"))).collect();
    assert_eq!(order, [0, 2, 2, 0]);
}

#[test]
fn sticky_keeps_a_host_on_one_proxy_until_it_is_benched() {
    let p = pool(4, Rotation::Sticky);
    let first = ready(p.choose("a.example"));
    for _ in 0..10 {
        assert_eq!(ready(p.choose("a.example")), first);
    }
    p.failed(first);
    let moved = ready(p.choose("a.example"));
    assert_ne!(moved, first);
    assert_eq!(ready(p.choose("a.example")), moved);
}

#[tokio::test(start_paused = true)]
async fn benches_double_up_to_the_cap_and_a_success_clears_them() {
    let p = pool(1, Rotation::RoundRobin);
    let mut benches = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        p.failed(0);
        // A failure reported while benched does not lengthen the bench.
        p.failed(0);
        let Choice::Wait(until) = p.choose("h") else {
            panic!("benched proxy chosen")
        };
        benches.push((until - start).as_secs());
        tokio::time::sleep_until(until).await;
        assert_eq!(ready(p.choose("h")), 0);
    }
    assert_eq!(benches, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
    p.succeeded(0, Duration::from_millis(5));
    p.failed(0);
    let Choice::Wait(until) = p.choose("h") else {
        panic!("benched proxy chosen")
    };
    assert_eq!(until - Instant::now(), Duration::from_secs(1));
    let s = &p.stats()[0];
    assert_eq!((s.successes, s.failures, s.benchings), (1, 19, 10));
}

#[tokio::test(start_paused = true)]
async fn acquire_waits_for_the_first_proxy_back_then_gives_up() {
    let p = pool(2, Rotation::RoundRobin);
    p.failed(0);
    tokio::time::sleep(Duration::from_millis(500)).await;
    p.failed(1);
    let start = Instant::now();
    assert_eq!(p.acquire("h").await, Ok(0));
    assert_eq!(start.elapsed(), Duration::from_millis(500));
    // Proxy 0 fails again (2 s now); proxy 1, benched until 1.5 s, is not
    // benched longer by a second failure: it is the one waited for.
    p.failed(0);
    p.failed(1);
    let start = Instant::now();
    assert_eq!(p.acquire("h").await, Ok(1));
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}
