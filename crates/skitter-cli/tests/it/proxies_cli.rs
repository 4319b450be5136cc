//! Proxies end to end with the real binary: `skitter proxies check` over a
//! mixed list (its lines, good file, exit status), and `crawl`/`fetch` with
//! `--proxy-list` keeping credentials out of stdout, stderr and outputs.

use std::path::Path;
use std::process::{Output, Stdio};

use skitter_testsite::{ProxyMode, RunningSite, SiteConfig, TestProxy, TestSite, dead_proxy_url};

fn site() -> RunningSite {
    TestSite::start(SiteConfig {
        pages: 12,
        ..SiteConfig::default()
    })
    .expect("test site starts")
}

async fn skitter(dir: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_skitter"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .expect("the binary runs")
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test]
async fn check_prints_each_result_writes_the_good_file_and_exits_1() {
    let site = site();
    let good = TestProxy::http(ProxyMode::Good, Some(("user", "S3CRET"))).unwrap();
    let socks = TestProxy::socks5(ProxyMode::Good, None).unwrap();
    let slow = TestProxy::http(ProxyMode::Slow(std::time::Duration::from_secs(30)), None).unwrap();
    let refusing = TestProxy::http(ProxyMode::Refuse, None).unwrap();
    let dead = dead_proxy_url().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let list = format!(
        "# mixed\n{}\n{}\n\n{}\n{} # trailing comment\n{dead}\n",
        good.url(),
        socks.url(),
        slow.url(),
        refusing.url()
    );
    std::fs::write(dir.path().join("list"), list).unwrap();
    let test_url = site.url("/p/1");
    let args = [
        "proxies",
        "check",
        "list",
        "--test-url",
        &test_url,
        "-c",
        "3",
        "--timeout",
        "1s",
        "-o",
        "good",
    ];
    let out = skitter(dir.path(), &args).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{}", show(&out));
    let shown_good = format!("+ http://{} ", good.addr());
    assert!(
        lines.iter().any(|l| l.starts_with(&shown_good)),
        "{}",
        show(&out)
    );
    let shown_socks = format!("+ socks5://{} ", socks.addr());
    assert!(
        lines.iter().any(|l| l.starts_with(&shown_socks)),
        "{}",
        show(&out)
    );
    for bad in [
        slow.addr().to_string(),
        refusing.addr().to_string(),
        dead[7..].to_string(),
    ] {
        let prefix = format!("! http://{bad} ");
        assert!(
            lines.iter().any(|l| l.starts_with(&prefix)),
            "{bad}: {}",
            show(&out)
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("5 proxies checked"), "{}", show(&out));
    assert!(stderr.contains("2 good, 3 bad"), "{}", show(&out));
    assert!(!show(&out).contains("S3CRET"), "{}", show(&out));
    // The good file: --proxy-list's format, credentials kept, owner-only.
    let path = dir.path().join("good");
    let written = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = written
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(" #").next().unwrap().trim())
        .collect();
    let mut want = vec![good.url(), socks.url()];
    let mut got: Vec<String> = kept.iter().map(|s| s.to_string()).collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{written}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // All good: exit 0; JSON lines.
    let args = [
        "proxies",
        "check",
        "good",
        "--test-url",
        &test_url,
        "--timeout",
        "5s",
        "--json",
    ];
    let out = skitter(dir.path(), &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["ok"], true, "{line}");
    }
    assert!(!stdout.contains("S3CRET"));
}

#[tokio::test]
async fn a_bad_list_line_is_a_usage_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list"), "http://a:1\nftp://u:S3CRET@b:2\n").unwrap();
    let out = skitter(
        dir.path(),
        &[
            "proxies",
            "check",
            "list",
            "--test-url",
            "http://127.0.0.1:9/",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 2"), "{}", show(&out));
    assert!(!stderr.contains("S3CRET"), "{}", show(&out));
}

#[tokio::test]
async fn crawl_and_fetch_through_a_pool_show_the_proxy_never_its_credentials() {
    let site = site();
    let good = TestProxy::http(ProxyMode::Good, Some(("user", "S3CRET"))).unwrap();
    let wrong = TestProxy::http(ProxyMode::Good, Some(("user", "right"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wrong_url = format!("http://user:WR0NG@{}", wrong.addr());
    std::fs::write(
        dir.path().join("list"),
        format!("{}\n{wrong_url}\n", good.url()),
    )
    .unwrap();
    let root = site.url("/");
    let crawl = [
        "crawl",
        "--proxy-list",
        "list",
        "--retry-delay",
        "5ms",
        "--jsonl",
        "out.jsonl",
        "--warc",
        "out.warc",
        "--report",
        "text",
        "-v",
        &root,
    ];
    let out = skitter(dir.path(), &crawl).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let proxy_line = format!("Proxy: http://{}", good.addr());
    assert!(stdout.contains(&proxy_line), "{}", show(&out));
    let jsonl = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let shown = format!("\"proxy\":\"http://{}\"", good.addr());
    assert!(jsonl.contains(&shown), "{jsonl}");
    let warc =
        String::from_utf8_lossy(&std::fs::read(dir.path().join("out.warc")).unwrap()).into_owned();
    for text in [show(&out), jsonl, warc] {
        for secret in ["S3CRET", "WR0NG"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    // `skitter fetch` goes through the same pool and reports it too.
    let page = site.url("/p/3");
    let fetch = [
        "fetch",
        "--proxy-list",
        "list",
        "--retry-delay",
        "5ms",
        &page,
    ];
    let out = skitter(dir.path(), &fetch).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&proxy_line), "{}", show(&out));
    assert!(!show(&out).contains("S3CRET") && !show(&out).contains("WR0NG"));
}
