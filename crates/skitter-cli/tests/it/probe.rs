//! End-to-end tests of `skitter probe`: the real binary against the scripted
//! loopback responder. Every run passes `--resolver 127.0.0.1:<port>`, so no
//! test asks the system resolver.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::Stdio;

use skitter_testsite::dns::{Record, Reply, Responder};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

async fn responder() -> Responder {
    let a = |n| Record::A(Ipv4Addr::new(192, 0, 2, n));
    let mx = Record::Mx {
        preference: 10,
        exchange: "mail.example.test.".into(),
    };
    Responder::builder()
        .name("v4.test", Reply::Records(vec![a(1)]))
        .name("two.test", Reply::Records(vec![a(2), a(3)]))
        .name("mx.test", Reply::Records(vec![mx]))
        .name("servfail.test", Reply::ServFail)
        .name("refused.test", Reply::Refused)
        .name("silent.test", Reply::Silent)
        .fallback(Reply::NxDomain)
        .bind()
        .await
        .expect("bind loopback responder")
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Output lines sorted, since results come in completion order.
    fn sorted_lines(&self) -> Vec<&str> {
        let mut lines: Vec<&str> = self.stdout.lines().collect();
        lines.sort_unstable();
        lines
    }
}

async fn skitter(dns: &Responder, args: &[&str], stdin: &str) -> Run {
    let resolver = dns.addr().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_skitter"))
        .arg("probe")
        .args([
            "--resolver",
            &resolver,
            "--timeout",
            "200ms",
            "--retries",
            "1",
        ])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start skitter");
    let mut input = child.stdin.take().expect("piped stdin");
    input
        .write_all(stdin.as_bytes())
        .await
        .expect("write stdin");
    drop(input);
    let output = child.wait_with_output().await.expect("run skitter");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, contents).expect("write temp input");
    path
}

#[tokio::test]
async fn prints_each_outcome_and_a_summary() {
    let dns = responder().await;
    let names = [
        "v4.test",
        "mx.test",
        "nx.test",
        "servfail.test",
        "refused.test",
        "silent.test",
    ];
    let mut args = vec!["--type", "A,MX"];
    args.extend(names);
    let run = skitter(&dns, &args, "").await;
    assert_eq!(
        run.sorted_lines(),
        [
            "  nx.test",
            "! refused.test  REFUSED",
            "! servfail.test  SERVFAIL",
            "! silent.test  timeout",
            "+ mx.test  MX 10 mail.example.test.",
            "+ v4.test  192.0.2.1",
        ],
        "stderr: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "2 resolved, 1 not found, 3 failed (1 timeout, 1 SERVFAIL, 1 REFUSED, 0 other)"
        ),
        "stderr: {}",
        run.stderr
    );
    assert_eq!(run.code, Some(1));
}

#[tokio::test]
async fn exits_zero_when_all_resolve() {
    let dns = responder().await;
    let run = skitter(&dns, &["v4.test", "two.test"], "").await;
    assert_eq!(
        run.sorted_lines(),
        ["+ two.test  192.0.2.2 192.0.2.3", "+ v4.test  192.0.2.1"]
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
}

#[tokio::test]
async fn reads_a_file_and_reports_malformed_lines() {
    let dns = responder().await;
    let file = temp_file(
        "probe-input.txt",
        "# a comment\nv4.test\r\n\nbad..name\nnx.test\nhttp://x.test/\n",
    );
    let file = file.to_str().expect("utf-8 temp path");
    let run = skitter(&dns, &["--input", file], "").await;
    assert_eq!(run.sorted_lines(), ["  nx.test", "+ v4.test  192.0.2.1"]);
    let want = [
        format!("{file}:4: malformed name \"bad..name\": empty label"),
        format!("{file}:6: malformed name \"http://x.test/\": invalid character ':'"),
    ];
    for line in want {
        assert!(
            run.stderr.contains(&line),
            "missing {line:?} in {}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains(", 2 malformed"),
        "stderr: {}",
        run.stderr
    );
    assert_eq!(run.code, Some(2));
}

#[tokio::test]
async fn reads_names_from_stdin() {
    let dns = responder().await;
    let run = skitter(&dns, &["-"], "v4.test\nnx.test\n").await;
    assert_eq!(run.sorted_lines(), ["  nx.test", "+ v4.test  192.0.2.1"]);
    assert_eq!(run.code, Some(1));
}

#[tokio::test]
async fn unreadable_input_is_bad_usage() {
    let dns = responder().await;
    let run = skitter(&dns, &["--input", "/nonexistent/names.txt"], "").await;
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("cannot read /nonexistent/names.txt"),
        "{}",
        run.stderr
    );
    assert_eq!(run.code, Some(2));
}

#[tokio::test]
async fn bad_flags_are_bad_usage() {
    let dns = responder().await;
    for args in [
        &["--type", "CNAME", "v4.test"][..],
        &["--concurrency", "0", "v4.test"],
    ] {
        let run = skitter(&dns, args, "").await;
        assert_eq!(run.stdout, "");
        assert_eq!(run.code, Some(2), "args {args:?}: {}", run.stderr);
    }
}

#[tokio::test]
async fn json_has_one_object_per_line() {
    let dns = responder().await;
    let run = skitter(
        &dns,
        &["--json", "-t", "A", "two.test", "refused.test", "nx.test"],
        "",
    )
    .await;
    let mut objects: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    objects.sort_by_key(|o| o["name"].as_str().map(str::to_owned));
    for o in &mut objects {
        assert!(o["elapsed_ms"].is_u64(), "{o}");
        o["elapsed_ms"] = 0.into();
    }
    let want = serde_json::json!([
        {"name": "nx.test", "outcome": "not_found", "records": [], "addresses": [],
         "error": null, "detail": null, "elapsed_ms": 0},
        {"name": "refused.test", "outcome": "failed", "records": [], "addresses": [],
         "error": "refused", "detail": "REFUSED", "elapsed_ms": 0},
        {"name": "two.test", "outcome": "resolved",
         "records": [{"type": "A", "ttl": 60, "value": "192.0.2.2"},
                     {"type": "A", "ttl": 60, "value": "192.0.2.3"}],
         "addresses": ["192.0.2.2", "192.0.2.3"],
         "error": null, "detail": null, "elapsed_ms": 0},
    ]);
    assert_eq!(serde_json::Value::Array(objects), want);
}
