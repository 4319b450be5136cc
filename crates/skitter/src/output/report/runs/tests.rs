//! Tests of the external merge sort: ordering, ties, and damaged spill files.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn dir() -> (tempfile::TempDir, SpillDir) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = SpillDir::new(Some(tmp.path().to_path_buf()));
    (tmp, dir)
}

/// Feeds `(url, value)` pairs through a buffer of `limit` bytes, spilling as
/// the log does, and answers the merged frames and the runs written.
fn sort_externally(input: &[(String, u8)], limit: usize) -> (Vec<(String, u8)>, u64) {
    let (_tmp, dir) = dir();
    let mut runs = Runs::new(dir);
    let mut buffer = Buffer::default();
    for (url, value) in input {
        buffer.push(url, &[*value], limit);
        if buffer.bytes() >= limit {
            runs.spill(&mut buffer).unwrap();
        }
    }
    buffer.sort();
    let mut merge = runs.merge(Arc::new(buffer)).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = merge.next_frame().unwrap() {
        out.push((frame.url, frame.json[0]));
    }
    (out, runs.files_created())
}

fn stable_sort(input: &[(String, u8)]) -> Vec<(String, u8)> {
    let mut sorted = input.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted
}

#[test]
fn many_runs_merge_into_sorted_order_keeping_ties_in_arrival_order() {
    // Reversed, with every URL twice: a merge that reorders ties or drops a
    // run shows up as a difference from the stable sort.
    let input: Vec<(String, u8)> = (0..3000u32)
        .rev()
        .map(|i| (format!("http://h/{}", i / 2), (i % 251) as u8))
        .collect();
    let (merged, files) = sort_externally(&input, 1024);
    assert!(
        files > FAN_IN as u64 * 2,
        "a 1 KiB buffer must spill many runs and merge levels, wrote {files}"
    );
    assert_eq!(merged, stable_sort(&input));
}

#[test]
fn nothing_is_written_within_the_budget() {
    let input = vec![("http://b/".to_string(), 1), ("http://a/".to_string(), 2)];
    let (merged, files) = sort_externally(&input, 1 << 20);
    assert_eq!(files, 0);
    assert_eq!(merged, stable_sort(&input));
}

fn one_run(frames: usize) -> (tempfile::TempDir, Runs) {
    let (tmp, dir) = dir();
    let mut runs = Runs::new(dir);
    let mut buffer = Buffer::default();
    for i in 0..frames {
        buffer.push(&format!("http://h/{i}"), b"{}", usize::MAX);
    }
    runs.spill(&mut buffer).unwrap();
    (tmp, runs)
}

fn drain(runs: &Runs) -> Result<usize, ReportError> {
    let mut merge = runs.merge(Arc::default())?;
    let mut n = 0;
    while merge.next_frame()?.is_some() {
        n += 1;
    }
    Ok(n)
}

#[test]
fn a_run_cut_short_is_a_damaged_error_at_every_length() {
    let (_tmp, runs) = one_run(3);
    assert_eq!(drain(&runs).unwrap(), 3);
    let full = runs.runs[0].len;
    for cut in 0..full {
        runs.runs[0].file.set_len(cut).unwrap();
        // The reader trusts the recorded length; the file is shorter.
        match drain(&runs) {
            Err(ReportError::Damaged(_)) => {}
            other => panic!("cut at {cut} of {full}: {other:?}"),
        }
    }
}

#[test]
fn garbage_in_a_run_is_an_error_not_a_panic() {
    for garbage in [
        vec![0xff; 16],                     // a varint longer than 64 bits
        vec![0xff, 0xff, 0xff, 0xff, 0x7f], // a 34 GB length
        vec![2, b'h', 0xc3, 1, b'x'],       // a URL that is not UTF-8
        vec![1, b'h'],                      // no JSON part
    ] {
        let (_tmp, mut runs) = one_run(1);
        let run = &mut runs.runs[0];
        run.file.set_len(0).unwrap();
        {
            use std::io::Write as _;
            // Just emptied: the cursor's position past the end makes no hole
            // for an appending write.
            let mut f: &std::fs::File = &run.file;
            std::io::Seek::rewind(&mut f).unwrap();
            f.write_all(&garbage).unwrap();
        }
        run.len = garbage.len() as u64;
        assert!(
            matches!(drain(&runs), Err(ReportError::Damaged(_))),
            "{garbage:?}"
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_spill_dir_is_a_spill_error() {
    let mut runs = Runs::new(SpillDir::failing_for_tests());
    let mut buffer = Buffer::default();
    buffer.push("http://h/", b"{}", usize::MAX);
    let err = runs.spill(&mut buffer).unwrap_err();
    assert!(
        matches!(err, ReportError::Io { what: "write", .. }),
        "{err}"
    );
    // The cause is kept, not only its text.
    let io = std::error::Error::source(&err)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("an io::Error source");
    // ENOSPC (28 on Linux), which /dev/full answers every write with.
    assert_eq!(io.raw_os_error(), Some(28));
}

proptest! {
    #![proptest_config(Config {
        cases: 64,
        rng_seed: RngSeed::Fixed(0x5eed_5017),
        failure_persistence: None,
        ..Config::default()
    })]

    /// Merge output equals a stable sort of the input, whatever the budget.
    #[test]
    fn merge_equals_sort(
        input in proptest::collection::vec(("[a-c]{0,4}", any::<u8>()), 0..400),
        limit in 1usize..600,
    ) {
        let (merged, _) = sort_externally(&input, limit);
        prop_assert_eq!(merged, stable_sort(&input));
    }
}
