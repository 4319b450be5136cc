//! `--config FILE` with the real binary: a crawl and a fetch run from a file,
//! the command line winning over it, every command taking it, and bad files
//! refused with the file's line before anything runs.

use crate::support::cli::{show, skitter_in as skitter};
use skitter_testsite::{SiteConfig, TestSite};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_runs_from_the_file_and_the_command_line_wins() {
    let site = TestSite::start(SiteConfig {
        pages: 30,
        ..SiteConfig::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("site.toml"),
        format!(
            "max-tasks = 4\nreport = \"json\"\n\n[crawl]\nroots = [\"{}\"]\nmax-depth = 0\n",
            site.url("/")
        ),
    )
    .unwrap();
    // From the file alone: depth 0 is the root only.
    let out = skitter(dir.path(), &["-q", "crawl", "--config", "site.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["counters"]["html"], 1, "{}", show(&out));
    assert_eq!(json["max_tasks"], 4, "{}", show(&out));
    // A flag wins over the file; the rest of the file still applies.
    let out = skitter(
        dir.path(),
        &["-q", "crawl", "--config", "site.toml", "--max-depth", "1"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        json["counters"]["html"].as_u64().unwrap() > 1,
        "{}",
        show(&out)
    );
    assert_eq!(json["max_tasks"], 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_takes_its_urls_and_output_from_the_file() {
    let site = TestSite::start(SiteConfig::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("f.toml"),
        format!(
            "[fetch]\nurls = [\"{}\"]\noutput-dir = \"out\"\nname-template = \"{{n}}.html\"\n",
            site.url("/p/[1-3]")
        ),
    )
    .unwrap();
    let out = skitter(dir.path(), &["-q", "fetch", "--config", "f.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    for n in 1..=3 {
        assert!(
            dir.path().join(format!("out/{n}.html")).exists(),
            "{}",
            show(&out)
        );
    }
}

#[test]
fn every_command_takes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("all.toml"),
        "max-tasks = 7\n\n[probe]\ndomains = [\"a.example\"]\n\n[bench]\npages = 123\n\n\
         [worker]\nredis = \"redis://:secret@127.0.0.1:1/\"\ncrawl = \"docs\"\n",
    )
    .unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["probe"], &["domains = [\"a.example\"]  # config file"]),
        (
            &["bench"],
            &["pages = 123  # config file", "max-tasks = 7  # config file"],
        ),
        (
            &["worker"],
            &[
                "crawl = \"docs\"  # config file",
                "max-tasks = 7  # config file",
                "redis = \"redis://:[redacted]@127.0.0.1:1/\"  # config file",
            ],
        ),
        (
            &["crawl", "http://127.0.0.1:1/"],
            &["max-tasks = 7  # config file"],
        ),
    ];
    for (command, want) in cases {
        let mut args = command.to_vec();
        args.extend(["--config", "all.toml", "--print-config"]);
        let out = skitter(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{command:?}: {}", show(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        for line in *want {
            assert!(
                text.lines().any(|l| l == *line),
                "{command:?}: no {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("secret"), "{text}");
    }
}

#[test]
fn a_bad_file_is_refused_with_its_line_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "max-tasks = 5\nmax-taks = 3\n").unwrap();
    let out = skitter(
        dir.path(),
        &["crawl", "--config", "bad.toml", "http://127.0.0.1:1/"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.toml:2: unknown option `max-taks`"),
        "{}",
        show(&out)
    );
    assert!(out.stdout.is_empty(), "nothing ran: {}", show(&out));
    std::fs::write(
        dir.path().join("bad.toml"),
        "[crawl]\nper-host = \"many\"\n",
    )
    .unwrap();
    let out = skitter(
        dir.path(),
        &["crawl", "--config", "bad.toml", "http://127.0.0.1:1/"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("bad.toml:2: `per-host`: invalid value 'many'"),
        "{}",
        show(&out)
    );
}
