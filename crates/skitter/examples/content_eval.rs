//! The content benchmark's Rust side: extracts the main content of every
//! page of a labelled corpus and times only the extraction.
//!
//! ```text
//! cargo run --release -p skitter --example content_eval -- PAGES_DIR OUT.jsonl [--passes N] [--limit N]
//! ```
//!
//! `PAGES_DIR` holds one folder per page with `source.html.gz` (the page,
//! gzipped UTF-8) and either `expected.html.gz` (the gold main content, as in
//! Readability's tests, whose URL is `http://fakehost/test/page.html`) or
//! `snippets.json` (trafilatura's evaluation: the page's `url` and snippets
//! its text must and must not hold, scored by `bench/content/eval.py`). Each page's text
//! and Markdown size go to `OUT.jsonl`; the line printed holds the token F1
//! against the gold text (macro average over pages: see `bench/content/eval.py`
//! for the metric, which scores trafilatura the same way) and the timing:
//! pages, thread CPU seconds and pages per CPU second over `N` passes
//! (decompression and I/O outside the clock).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::path::PathBuf;

use skitter::content::Extractor;
use url::Url;

fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn gunzip(path: &Path) -> String {
    let file = std::fs::File::open(path).expect("page readable");
    let mut html = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut html)
        .expect("page is gzipped UTF-8");
    html
}

/// The lowercased whitespace-split words of `text`, counted.
fn tokens(text: &str) -> HashMap<String, u32> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_lowercase()).or_insert(0) += 1;
    }
    counts
}

/// Precision, recall and F1 of `got` against `gold` (multiset overlap).
fn score(got: &HashMap<String, u32>, gold: &HashMap<String, u32>) -> (f64, f64, f64) {
    let overlap: u32 = got
        .iter()
        .map(|(w, n)| (*n).min(gold.get(w).copied().unwrap_or(0)))
        .sum();
    let (n_got, n_gold) = (got.values().sum::<u32>(), gold.values().sum::<u32>());
    if n_got == 0 && n_gold == 0 {
        return (1.0, 1.0, 1.0);
    }
    let p = if n_got > 0 {
        overlap as f64 / n_got as f64
    } else {
        0.0
    };
    let r = if n_gold > 0 {
        overlap as f64 / n_gold as f64
    } else {
        0.0
    };
    let f = if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    (p, r, f)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("PAGES_DIR"));
    let out = PathBuf::from(args.next().expect("OUT.jsonl"));
    let mut passes = 5usize;
    let mut limit = usize::MAX;
    while let Some(flag) = args.next() {
        let value: usize = args
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a number after the flag");
        match flag.as_str() {
            "--passes" => passes = value.max(1),
            "--limit" => limit = value,
            other => panic!("unknown flag {other}"),
        }
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("PAGES_DIR readable")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("source.html.gz").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.truncate(limit);
    let pages: Vec<String> = names
        .iter()
        .map(|n| gunzip(&dir.join(n).join("source.html.gz")))
        .collect();
    let fakehost = Url::parse("http://fakehost/test/page.html").expect("static URL");
    let urls: Vec<Url> = names
        .iter()
        .map(|n| {
            std::fs::read_to_string(dir.join(n).join("snippets.json"))
                .ok()
                .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
                .and_then(|v| v["url"].as_str().and_then(|u| Url::parse(u).ok()))
                .unwrap_or_else(|| fakehost.clone())
        })
        .collect();
    let extractor = Extractor::new(&Default::default()).expect("default options");
    let bytes: usize = pages.iter().map(String::len).sum();

    let mut docs = Vec::new();
    let start = thread_cpu();
    for pass in 0..passes {
        for (html, url) in pages.iter().zip(&urls) {
            let doc = extractor.extract(html, url);
            if pass == 0 {
                docs.push(doc);
            }
        }
    }
    let cpu = thread_cpu() - start;

    let mut file = std::io::BufWriter::new(std::fs::File::create(&out).expect("OUT writable"));
    for (name, doc) in names.iter().zip(&docs) {
        let line = serde_json::json!({
            "name": name,
            "text": doc.text(),
            "markdown_bytes": doc.markdown().len(),
            "title": doc.title,
            "truncated": doc.truncated,
        });
        writeln!(file, "{line}").expect("OUT writable");
    }
    file.flush().expect("OUT writable");
    let (mut p, mut r, mut f, mut scored) = (0.0, 0.0, 0.0, 0usize);
    for (name, doc) in names.iter().zip(&docs) {
        let gold = dir.join(name).join("expected.html.gz");
        if !gold.exists() {
            continue;
        }
        scored += 1;
        let gold = scraper::Html::parse_document(&gunzip(&gold));
        let gold: String = gold.root_element().text().collect();
        let s = score(&tokens(&doc.text()), &tokens(&gold));
        p += s.0;
        r += s.1;
        f += s.2;
    }
    let n = scored.max(1) as f64;
    let runs = (pages.len() * passes) as f64;
    let quality = if scored > 0 {
        format!(
            "macro P {:.3} R {:.3} F1 {:.3} ({scored} with gold text)",
            p / n,
            r / n,
            f / n
        )
    } else {
        "no gold text (snippets: see eval.py)".to_string()
    };
    println!(
        "skitter: {} pages, {quality}; {passes} passes, {:.1} MB, {cpu:.3} cpu-s, {:.0} pages/cpu-s",
        pages.len(),
        bytes as f64 / 1e6,
        runs / cpu.max(1e-9)
    );
}
