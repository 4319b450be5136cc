use url::Url;

use super::*;

fn entry(url: &str, depth: u32, title: &str, description: Option<&str>) -> Entry {
    Entry {
        url: Url::parse(url).unwrap(),
        depth,
        title: title.into(),
        description: description.map(Into::into),
    }
}

#[test]
fn one_host_in_sections_root_first() {
    let mut entries = vec![
        entry("http://h/docs/b", 1, "B", None),
        entry("http://h/about", 1, "About [us]", Some("Who we are.")),
        entry("http://h/", 0, "Home", Some("The site.")),
        entry("http://h/docs/a", 1, "A", Some("First.")),
        entry("http://h/blog/x", 2, "X", None),
        entry("http://h/blog/?page=2", 2, "Blog, page 2", None),
        entry("http://h/docs/a", 1, "A", Some("First.")),
    ];
    let got = render(&mut entries, 0, "llms-full.txt");
    let want = "\
# Home

> The site.

## Pages

- [Home](http://h/): The site.
- [About \\[us\\]](http://h/about): Who we are.

## blog

- [X](http://h/blog/x)

## docs

- [A](http://h/docs/a): First.
- [B](http://h/docs/b)

## Optional

- [Blog, page 2](http://h/blog/?page=2)

";
    assert_eq!(got, want);
}

#[test]
fn several_hosts_get_a_section_each_and_the_main_one_names_the_file() {
    let mut entries = vec![
        entry("http://a.test/", 0, "A home", None),
        entry("http://b.test/", 0, "B home", None),
        entry("http://b.test/x/y", 1, "Y (b)", None),
    ];
    let got = render(&mut entries, 3, "llms-full.txt");
    let want = "\
# B home

> 2 pages of b.test.

Pages of 2 hosts: b.test, a.test.

3 more pages are in llms-full.txt but not listed here.

## b.test

- [B home](http://b.test/)

## b.test/x

- [Y (b)](http://b.test/x/y)

## a.test

- [A home](http://a.test/)

";
    assert_eq!(got, want);
}

#[test]
fn no_page_still_makes_a_valid_file() {
    assert_eq!(
        render(&mut Vec::new(), 0, "llms-full.txt"),
        "# Pages\n\n> No HTML page was crawled.\n"
    );
}
