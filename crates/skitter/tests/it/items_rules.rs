//! Extraction rules as a user writes them: the accepted forms, the table
//! schemas they give, and each kind of mistake refused at load time with the
//! rule set and field named.

use skitter::parse::items::{ColumnType, Rules, RulesError};

const GOOD: &str = r#"
[proxies]
url = "/items/list/"
item = "table.proxies tbody tr"
[proxies.fields]
address = "css:td.address"
port = { css = "td.port", type = "integer", required = true }
speed = { css = "td.speed", regex = "([0-9]+) ms", type = "number" }
details = { css = "a@href", type = "url" }

[detail]
url = "/items/detail/"
[detail.fields]
title = "css:h1"
notes = "html:div.notes"
tags = { css = "ul.tags li", all = true }
endpoint = "regex:Endpoint: (\\S+)"

[api]
url = "\\.json$"
item = "json:/items"
[api.fields]
id = "json:/id"
price = { json = "/price", type = "number" }
tags = "json:/tags"
"#;

#[test]
fn a_good_file_gives_one_table_per_rule_set_in_order() {
    let rules = Rules::from_toml(GOOD).unwrap();
    let schemas = rules.schemas();
    let names: Vec<&str> = schemas.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["proxies", "detail", "api"]);
    let columns = |i: usize| -> Vec<(String, ColumnType)> {
        schemas[i]
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.ty))
            .collect()
    };
    let want = |v: &[(&str, ColumnType)]| -> Vec<(String, ColumnType)> {
        v.iter().map(|(n, t)| (n.to_string(), *t)).collect()
    };
    assert_eq!(
        columns(0),
        want(&[
            ("address", ColumnType::Text),
            ("port", ColumnType::Integer),
            ("speed", ColumnType::Number),
            ("details", ColumnType::Url),
        ])
    );
    assert_eq!(
        columns(1),
        want(&[
            ("title", ColumnType::Text),
            ("notes", ColumnType::Text),
            ("tags", ColumnType::Json),
            ("endpoint", ColumnType::Text),
        ])
    );
    // An untyped JSON pointer keeps the JSON value; a typed one converts.
    assert_eq!(
        columns(2),
        want(&[
            ("id", ColumnType::Json),
            ("price", ColumnType::Number),
            ("tags", ColumnType::Json),
        ])
    );
}

#[test]
fn url_patterns_select_the_rule_sets() {
    let rules = Rules::from_toml(GOOD).unwrap();
    let url = |s: &str| url::Url::parse(s).unwrap();
    assert!(rules.matches(&url("http://h/items/list/1")));
    assert!(rules.matches(&url("http://h/items/api/1.json")));
    assert!(!rules.matches(&url("http://h/p/1")));
    assert!(rules.wants_any_body(&url("http://h/items/api/1.json")));
    assert!(!rules.wants_any_body(&url("http://h/items/list/1")));
}

#[test]
fn inline_fields_form_the_items_set_matching_every_url() {
    let rules = Rules::from_fields(&[
        "title=css:h1",
        "link=css:a.next@href",
        r#"price={ css = ".price", type = "number" }"#,
    ])
    .unwrap();
    let schemas = rules.schemas();
    assert_eq!(schemas.len(), 1);
    assert_eq!(schemas[0].name, "items");
    assert_eq!(schemas[0].columns[2].ty, ColumnType::Number);
    assert!(rules.matches(&url::Url::parse("http://anything/at/all").unwrap()));
    assert_eq!(rules.source().fields.len(), 3);
}

/// Every mistake, and the words its message must contain.
#[test]
fn mistakes_are_refused_naming_the_rule_set_and_field() {
    let cases: &[(&str, &[&str])] = &[
        (
            "[a]\nfields = { t = \"css:h1[\" }",
            &["`a`", "`t`", "bad CSS selector"],
        ),
        (
            "[a]\nitem = \"tr >\"\nfields = { t = \"css:td\" }",
            &["`a`", "item", "bad CSS selector"],
        ),
        (
            "[a]\nfields = { t = { regex = \"(\" } }",
            &["`a`", "`t`", "regex"],
        ),
        (
            "[a]\nurl = \"[\"\nfields = { t = \"css:h1\" }",
            &["`a`", "url"],
        ),
        (
            "[a]\nfields = { t = \"json:a/b\" }",
            &["`t`", "JSON pointer"],
        ),
        ("[a]\nfields = { t = \"json:/a~2\" }", &["`t`", "~0 or ~1"]),
        (
            "[a]\nfields = { t = { css = \"h1\", colour = \"red\" } }",
            &["`t`", "unknown key `colour`"],
        ),
        (
            "[a]\nselector = \"x\"\nfields = { t = \"css:h1\" }",
            &["`a`", "unknown key `selector`"],
        ),
        (
            "[a]\nfields = { t = { css = \"h1\", type = \"date\" } }",
            &["`t`", "unknown type `date`"],
        ),
        (
            "[a]\nfields = { t = \"xpath://h1\" }",
            &["`t`", "unknown prefix"],
        ),
        ("[a]\nfields = { t = \"h1\" }", &["`t`", "needs a prefix"]),
        (
            "[a]\nfields = { t = { type = \"integer\" } }",
            &["`t`", "needs one of"],
        ),
        (
            "[a]\nfields = { t = { css = \"h1\", json = \"/a\" } }",
            &["`t`", "one of css, html and json"],
        ),
        (
            "[a]\nfields = { t = { css = \"h1\", all = \"yes\" } }",
            &["`t`", "true or false"],
        ),
        (
            "[a]\nfields = { \"bad name\" = \"css:h1\" }",
            &["`bad name`", "[A-Za-z_]"],
        ),
        (
            "[\"drop table\"]\nfields = { t = \"css:h1\" }",
            &["`drop table`", "SQL"],
        ),
        (
            "[a]\nfields = { 1st = \"css:h1\" }",
            &["`1st`", "[A-Za-z_]"],
        ),
        ("[a]\nurl = \"x\"", &["`a`", "fields"]),
        ("[a]\nfields = {}", &["`a`", "no fields"]),
        ("a = 1", &["`a`", "must be a table"]),
        ("", &["no rule set"]),
        ("[a", &["not valid TOML"]),
        (
            "[a]\nitem = \"json:/x\"\nfields = { t = \"css:h1\" }",
            &["`t`", "JSON pointers"],
        ),
        (
            "[a]\nitem = \"tr\"\nfields = { t = \"json:/x\" }",
            &["`t`", "JSON pointer cannot"],
        ),
    ];
    for (text, words) in cases {
        let err = Rules::from_toml(text).expect_err(text);
        let message = error_chain(&err);
        for w in *words {
            assert!(
                message.contains(w),
                "rules {text:?}: {message:?} lacks {w:?}"
            );
        }
    }
    let long = format!("[a]\nfields = {{ {} = \"css:h1\" }}", "x".repeat(64));
    assert!(error_chain(&Rules::from_toml(&long).unwrap_err()).contains("63"));
    let ok = format!("[a]\nfields = {{ {} = \"css:h1\" }}", "x".repeat(63));
    assert!(Rules::from_toml(&ok).is_ok());
}

#[test]
fn bad_inline_fields_are_refused() {
    for (spec, word) in [
        ("title", "NAME=SPEC"),
        ("title=h1", "needs a prefix"),
        ("t={ css = ", "TOML inline table"),
        ("bad-name=css:h1", "[A-Za-z_]"),
    ] {
        let err = Rules::from_fields(&[spec]).expect_err(spec);
        assert!(error_chain(&err).contains(word), "{spec}: {err}");
    }
    let twice = Rules::from_fields(&["t=css:h1", "t=css:h2"]).unwrap_err();
    assert!(error_chain(&twice).contains("given twice"));
    // The inline set's name is taken by the file.
    let source = skitter::parse::items::RulesSource {
        toml: Some("[items]\nfields = { t = \"css:h1\" }".into()),
        fields: vec!["u=css:h2".into()],
    };
    assert!(matches!(
        Rules::from_source(source),
        Err(RulesError::Set { .. })
    ));
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
