//! The structured-extraction options `crawl` and `fetch` share (`--extract
//! FILE`, `--field NAME=SPEC`), and how they become the library's [`Rules`].
//!
//! A shared (Redis) crawl's spec carries the rules file's content
//! ([`ExtractFlags::source`]), never its path: workers may run where the file
//! does not exist.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use skitter::parse::items::{Rules, RulesSource};

/// Extraction options of `crawl` and `fetch`.
#[derive(Args, Debug, Clone, Default)]
pub struct ExtractFlags {
    /// Extract structured records with the rules in this TOML file (rule sets
    /// with a URL pattern, an optional `item` selector and fields; see the
    /// book's "Extract data"). Items go to --jsonl as `item` lines.
    #[arg(long = "extract", value_name = "FILE")]
    pub extract_file: Option<PathBuf>,
    /// An inline field rule NAME=SPEC, e.g. `title=css:h1`, `link=css:a@href`,
    /// `body=html:article`, `price=regex:Price: ([0-9.]+)`, `id=json:/data/id`,
    /// or a TOML table `price={ css = ".price", type = "number" }`; repeatable.
    /// Inline fields form one rule set named `items` that matches every URL and
    /// makes one record per page.
    #[arg(long = "field", value_name = "NAME=SPEC")]
    pub fields: Vec<String>,
    /// The rules file's content, once read (what a shared crawl stores).
    #[arg(skip)]
    pub extract_rules: Option<String>,
}

impl ExtractFlags {
    /// The rules as text (the file read), unchecked; `None` without
    /// `--extract` or `--field`.
    pub fn source(&self) -> anyhow::Result<Option<RulesSource>> {
        let toml = match (&self.extract_rules, &self.extract_file) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(path)) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the rules file {}", path.display()))?,
            ),
            (None, None) => None,
        };
        if toml.is_none() && self.fields.is_empty() {
            return Ok(None);
        }
        Ok(Some(RulesSource {
            toml,
            fields: self.fields.clone(),
        }))
    }

    /// The rules, checked; `None` without `--extract` or `--field`.
    pub fn rules(&self) -> anyhow::Result<Option<Rules>> {
        self.source()?.map(|source| self.parse(source)).transpose()
    }

    /// Parses `source` (read by [`Self::source`]), naming the rules file in
    /// the error.
    pub fn parse(&self, source: RulesSource) -> anyhow::Result<Rules> {
        Rules::from_source(source).with_context(|| match &self.extract_file {
            Some(path) => format!("bad extraction rules in {}", path.display()),
            None => "bad extraction rules".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_carries_the_rules_not_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.toml");
        std::fs::write(&path, "[t]\n[t.fields]\ntitle = \"css:h1\"\n").unwrap();
        let flags = ExtractFlags {
            extract_file: Some(path.clone()),
            fields: vec!["h=css:h2".into()],
            extract_rules: None,
        };
        let stored = serde_json::to_string(&flags.source().unwrap()).unwrap();
        // The worker's machine has no such file.
        std::fs::remove_file(&path).unwrap();
        assert!(!stored.contains("rules.toml"), "{stored}");
        let on_worker: RulesSource = serde_json::from_str(&stored).unwrap();
        let rules = Rules::from_source(on_worker).unwrap();
        let names: Vec<String> = rules.schemas().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["t", "items"]);
    }
}
