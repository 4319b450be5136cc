//! A check's findings kept on disk (`skitter check --state DIR`, in
//! `DIR/check/`), so that a resumed check reports what its earlier runs
//! found as well as what it finds itself, each once: the crawl resumes from
//! its own state and does not read the pages it finished again, so their
//! links, anchors and records must come from here, and the answers of links
//! to other sites are not asked again.
//!
//! Two append-only JSON-lines files: `pages.jsonl`, one line per URL the
//! crawl finished (its record, and for a page read for links what was filed
//! of it), and `answers.jsonl`, one line per answer of the network side.
//! Each line is written whole with one `write` as the page is recorded;
//! a line cut short by a kill is skipped when read back (the crawl's state
//! has that page in flight, and the resumed crawl reads it again). Lines
//! longer than [`MAX_STATE_LINE`] are skipped unread.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::base::outcome::PageRecord;

use super::collect::{Collected, Filed, lock};
use super::remote::Answer;

/// The longest line read back: far above a page of [`crate::parse::links::DEFAULT_MAX_LINKS`]
/// links' worth of places, and what bounds the memory one line takes.
pub const MAX_STATE_LINE: u64 = 256 * 1024 * 1024;

/// A journal that could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[error("check state {path}: {source}")]
pub struct JournalError {
    /// The file or directory.
    pub path: PathBuf,
    /// The I/O error.
    pub source: std::io::Error,
}

/// One line of `pages.jsonl`.
#[derive(Serialize, Deserialize)]
struct PageLine {
    record: PageRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    filed: Option<Filed>,
}

/// One line of `answers.jsonl`.
#[derive(Serialize, Deserialize)]
struct AnswerLine {
    url: Url,
    answer: Answer,
}

/// The open journal: lines are appended as findings come.
pub(crate) struct Journal {
    pages: Mutex<(File, PathBuf)>,
    answers: Mutex<(File, PathBuf)>,
}

/// What earlier runs found.
#[derive(Default)]
pub(crate) struct Earlier {
    pub collected: Collected,
    pub answers: HashMap<Url, Answer>,
}

impl Journal {
    /// Opens (or starts) the journal in `dir`, with what it holds.
    pub(crate) fn open(dir: &Path) -> Result<(Journal, Earlier), JournalError> {
        let fail = |path: &Path| {
            let path = path.to_path_buf();
            move |source| JournalError { path, source }
        };
        std::fs::create_dir_all(dir).map_err(fail(dir))?;
        let mut earlier = Earlier::default();
        let pages_path = dir.join("pages.jsonl");
        let answers_path = dir.join("answers.jsonl");
        read_lines(&pages_path, |line: PageLine| {
            let page = line.record.url.clone();
            earlier.collected.crawled.insert(page.clone(), line.record);
            if let Some(filed) = line.filed {
                earlier.collected.apply(&page, filed);
            }
        })?;
        read_lines(&answers_path, |line: AnswerLine| {
            super::keep(&mut earlier.answers, line.url, line.answer);
        })?;
        let append = |path: &Path| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(fail(path))
        };
        let journal = Journal {
            pages: Mutex::new((append(&pages_path)?, pages_path)),
            answers: Mutex::new((append(&answers_path)?, answers_path)),
        };
        Ok((journal, earlier))
    }

    /// Appends a finished URL, with what was filed of it.
    pub(crate) fn page(&self, record: &PageRecord, filed: Option<&Filed>) {
        #[derive(Serialize)]
        struct Ref<'a> {
            record: &'a PageRecord,
            #[serde(skip_serializing_if = "Option::is_none")]
            filed: Option<&'a Filed>,
        }
        append(&self.pages, &Ref { record, filed });
    }

    /// Appends an answer of the network side.
    pub(crate) fn answer(&self, url: &Url, answer: &Answer) {
        #[derive(Serialize)]
        struct Ref<'a> {
            url: &'a Url,
            answer: &'a Answer,
        }
        append(&self.answers, &Ref { url, answer });
    }
}

/// Writes `value` as one line with one `write`; a failure is logged, not
/// fatal: the check goes on, and a resumed one asks again what is missing.
fn append(file: &Mutex<(File, PathBuf)>, value: &impl Serialize) {
    let Ok(mut line) = serde_json::to_vec(value) else {
        return;
    };
    line.push(b'\n');
    let mut file = lock(file);
    if let Err(error) = file.0.write_all(&line) {
        tracing::warn!(path = %file.1.display(), %error, "check state: a finding not kept");
    }
}

/// Calls `each` with every whole, readable line of `path` (none when it
/// does not exist).
fn read_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
    mut each: impl FnMut(T),
) -> Result<(), JournalError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(JournalError {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_STATE_LINE)
            .read_until(b'\n', &mut line)
            .map_err(|source| JournalError {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') {
            // Cut by a kill, or over the cap: skip to the next line.
            if read as u64 == MAX_STATE_LINE {
                let mut rest = Vec::new();
                let _ = reader.read_until(b'\n', &mut rest);
            }
            continue;
        }
        if let Ok(value) = serde_json::from_slice(&line) {
            each(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::outcome::OutcomeKind;
    use crate::check::remote::End;

    #[test]
    fn what_is_written_is_read_back_and_a_cut_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let page = Url::parse("http://h/").unwrap();
        let target = Url::parse("http://other/x").unwrap();
        {
            let (journal, earlier) = Journal::open(dir.path()).unwrap();
            assert!(earlier.collected.crawled.is_empty());
            let mut record = PageRecord::new(page.clone(), 0, None);
            record.kind = OutcomeKind::Html;
            let place = crate::check::Occurrence {
                page: page.clone(),
                element: "a".into(),
                attribute: "href".into(),
                line: 3,
                raw: "http://other/x".into(),
                fragment: None,
            };
            let filed = Filed {
                places: vec![(target.clone(), place)],
                ..Filed::default()
            };
            journal.page(&record, Some(&filed));
            let answer = Answer {
                end: End::Status(404),
                moved_to: None,
                retried: None,
                anchors: None,
                cached: false,
            };
            journal.answer(&target, &answer);
        }
        let mut pages = OpenOptions::new()
            .append(true)
            .open(dir.path().join("pages.jsonl"))
            .unwrap();
        pages
            .write_all(b"{\"record\":{\"url\":\"http://h/cut")
            .unwrap();
        let (_, earlier) = Journal::open(dir.path()).unwrap();
        assert_eq!(earlier.collected.crawled.len(), 1);
        assert_eq!(earlier.collected.targets[&target].places.len(), 1);
        assert_eq!(earlier.answers[&target].end, End::Status(404));
    }
}
