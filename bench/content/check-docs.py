"""Checks a `skitter crawl --markdown` tree of real documentation against the
HTML it came from (issue 33: "the Markdown of every page keeps every code
block and table of its main content, and contains none of the site's
navigation").

    check-docs.py [--strict-lists] DOCS_ROOT MD_HOST_DIR

DOCS_ROOT is the folder the server served (URL path /X is DOCS_ROOT/X);
MD_HOST_DIR is the tree's folder for that server (MD/127.0.0.1_PORT). Every
`.md` file of a package known here (python3*, sphinx-doc, postgresql-doc-*,
rust-doc's books and API crates) is paired with its HTML file (same path, `.html` for
`.md`); other pages are not checked.

A page that is a stub sending the browser on (`<meta http-equiv=refresh>`:
rustdoc's moved items, mdBook's renamed chapters) is counted as such and not
checked. Each generator's own markup says what is main content and what is
navigation, so the check does not depend on skitter's idea of either:

- Sphinx (Python, Sphinx): main `div[role=main]`; navigation
  `div.sphinxsidebar`, `div.related`, `div.footer`.
- DocBook (PostgreSQL): main the body without `div.navheader` and
  `div.navfooter`, which are the navigation.
- mdBook (rust-doc's books: the Rust book, the reference, the nomicon,
  Rust by Example…): main `main`; navigation `nav`, `.sidebar`, `.menu-bar`.
- rustdoc (rust-doc's `std`, `core`, `alloc`, `proc_macro`, `test`): main
  `section#main-content`; navigation every `nav` (the sidebar, the
  top bar, the search bar).

A code block is kept when each of its lines (whitespace collapsed) is in the
Markdown: lines of 4 characters or fewer are too common to say anything and
are not looked for. A table of two columns or more is kept when the
Markdown has a GFM table row holding the text of its first cell that has
text; a one-column table (skitter writes its cells as blocks) when that
text is in the Markdown (both compared without Markdown's link targets,
brackets, code and emphasis marks and escapes). A list (`ul`, `ol`, `dl`,
not inside another list or a table) is kept when the first line of its
first and of its last item is in the Markdown; a page's own table of
contents (70% of its text or more in links, every link to a place in the
page itself: DocBook's section pages) is the page's navigation and is not
looked for. Navigation leaks when a
link text of the navigation (8 characters or more, not also a link or
heading text of the main content) is a link text of the Markdown, or when
one line of the Markdown holds three or more link texts of the navigation
of any length (a bar of "Prev", "Up", "Next" copied whole). Prints
one line per failure, then the totals; exits 1 on any failure but a lost
list, which is counted and printed only (the issue's property names code
blocks, tables and navigation; lists are checked to see what else goes),
unless `--strict-lists` is given (the smoke run's fixture pages, which
lose none).
"""

import copy
import os
import re
import sys

import lxml.html

WS = re.compile(r"\s+")


def collapse(s):
    return WS.sub(" ", s).strip()


# rust-doc's books (mdBook) and its API crates (rustdoc), by folder.
MDBOOKS = ("book", "reference", "nomicon", "rust-by-example", "edition-guide", "rustc",
           "rustdoc", "unstable-book", "embedded-book")
RUSTDOC = ("std", "core", "alloc", "proc_macro", "test")


def generator(path):
    """The generator of a page by its package's folder; None for a page of
    no package known here (it is not checked)."""
    if path.startswith("postgresql"):
        return "docbook"
    if path.startswith("rust-doc/html/"):
        top = path.split("/")[2]
        if top in MDBOOKS:
            return "mdbook"
        if top in RUSTDOC:
            return "rustdoc"
        return None
    if path.startswith(("python3", "sphinx-doc/")):
        return "sphinx"
    return None


def parts(doc, kind):
    """(main elements, navigation elements) by the generator's markup."""
    if kind == "sphinx":
        main = doc.xpath('//div[@role="main"]') or doc.xpath('//div[contains(concat(" ", @class, " "), " body ")]')
        nav = doc.xpath(
            '//div[contains(concat(" ", @class, " "), " sphinxsidebar ")'
            ' or contains(concat(" ", @class, " "), " related ")'
            ' or contains(concat(" ", @class, " "), " footer ")]'
        )
        return main, nav
    if kind == "docbook":
        nav = doc.xpath(
            '//div[contains(concat(" ", @class, " "), " navheader ")'
            ' or contains(concat(" ", @class, " "), " navfooter ")]'
        )
        bodies = doc.xpath("//body")
        for n in nav:
            n.getparent().remove(n)
        return bodies, nav
    if kind == "rustdoc":
        main = doc.xpath('//section[@id="main-content"]')
        nav = doc.xpath('//nav')
        return main, nav
    main = doc.xpath("//main")
    nav = doc.xpath('//nav | //*[contains(concat(" ", @class, " "), " sidebar ")]'
                    ' | //*[contains(concat(" ", @class, " "), " menu-bar ")]')
    return main, nav


def md_link_texts(md):
    return {collapse(m) for m in re.findall(r"\[([^\]\n]{1,200})\]\(", md)}


LINK_TARGET = re.compile(r"\]\([^)\s]*\)")


def plain(s):
    """Text with Markdown's link targets, brackets, code and emphasis marks
    and escapes taken out, so a cell's text compares with the HTML's; a
    `<br>` (a line break inside a GFM cell) reads as the space it stands for."""
    s = LINK_TARGET.sub("", s).replace("<br>", " ")
    return collapse(re.sub(r"[\[\]`*\\]", "", s))


BLOCKS = ("p", "div", "br", "li", "dt", "dd", "pre", "table", "tr", "td", "th")


def cell_text(cell):
    """A cell's text with its blocks apart, as the Markdown writes them
    (paragraphs of a cell are separate lines, or `<br>` in a GFM row)."""
    cell = copy.deepcopy(cell)
    for e in cell.iter(*BLOCKS):
        e.text = " " + (e.text or "")
        e.tail = " " + (e.tail or "")
    return collapse(cell.text_content())


SEP = "\ue000"


def first_line(item):
    """The first line of a list item's own text: up to its first block (a
    nested list, a code block, a paragraph break), which the Markdown
    writes on a line of its own."""
    item = copy.deepcopy(item)
    for e in list(item.iter(*BLOCKS, "ul", "ol", "dl", "blockquote")):
        if e is item:
            continue
        tail = e.tail
        if e.tag in ("ul", "ol", "dl", "pre", "table", "blockquote"):
            e.clear()
        e.text = SEP + (e.text or "")
        e.tail = SEP + (tail or "")
    for part in item.text_content().split(SEP):
        part = collapse(part.replace("¶", ""))
        if part:
            return part
    return ""


def in_page(lst, page):
    """Whether list `lst` is a table of contents of the page itself: it has
    links, and each leads to a place in this page (`#…`, `page.html#…`)."""
    links = list(lst.iter("a"))
    hrefs = [a.get("href") or "" for a in links]
    if not hrefs or not all("#" in h and h.split("#")[0] in ("", page) for h in hrefs):
        return False
    text = len(collapse(lst.text_content()))
    return sum(len(collapse(a.text_content())) for a in links) >= 0.7 * text


def pre_text(pre):
    """A code block's text with its `<br>`s and blocks as the line breaks
    they are (rustdoc breaks a long signature's parameters with `<br>`, puts
    each attribute in a `div` and a struct's hidden fields in a `details`
    whose `summary` reads "Show 18 fields"): a block starts a line and ends
    one, as a browser shows it."""
    pre = copy.deepcopy(pre)
    for e in pre.iter("br", "div", "summary", "details"):
        if e is not pre:
            if e.tag != "br":
                e.text = "\n" + (e.text or "")
            e.tail = "\n" + (e.tail or "")
    return pre.text_content()


def table_rows(md):
    """The table rows of the Markdown, in quotes and list items too."""
    rows = []
    for line in md.splitlines():
        line = line.lstrip(" >")
        if line.startswith("|"):
            rows.append(plain(line))
    return rows


def check(html_path, md_path, kind, totals, out):
    with open(html_path, "rb") as f:
        doc = lxml.html.fromstring(f.read())
    with open(md_path, encoding="utf-8") as f:
        md = f.read()
    md_flat = collapse(md)
    md_plain = plain(md)
    if doc.xpath('//meta[translate(@http-equiv, "REFSH", "refsh")="refresh"]'):
        # A stub that sends the browser on (rustdoc's moved items): it has
        # no content of its own to check.
        totals["redirect stubs"] += 1
        return
    main, nav = parts(doc, kind)
    if not main:
        totals["no main"] += 1
        return
    rel = os.path.relpath(md_path)
    page = os.path.basename(html_path)
    for m in main:
        for pre in m.iter("pre"):
            totals["code blocks"] += 1
            lines = [collapse(line) for line in pre_text(pre).splitlines()]
            missing = [line for line in lines if len(line) > 4 and line not in md_flat]
            if missing:
                totals["code blocks lost"] += 1
                out.append(f"{rel}: code block line not in the Markdown: {missing[0][:80]!r}")
        rows = None
        for table in m.iter("table"):
            # A table inside a table is checked as part of its outer one.
            if any(a.tag == "table" for a in table.iterancestors()):
                continue
            cells = [cell_text(c) for c in table.iter("td", "th")]
            first = next((c for c in cells if c), None)
            if first is None:
                continue
            totals["tables"] += 1
            probe = first[:40]
            columns = max((len(tr.xpath("./td|./th")) for tr in table.iter("tr")), default=0)
            if columns < 2:
                # A one-column table is a list of blocks (PostgreSQL's
                # catalogs: a cell per column, its definition and its
                # description in paragraphs): kept when its text is.
                if plain(first.replace("¶", ""))[:40] not in md_plain:
                    totals["tables lost"] += 1
                    out.append(f"{rel}: one-column table's text not in the Markdown: {probe!r}")
                continue
            rows = rows if rows is not None else table_rows(md)
            if not any(plain(probe) in r for r in rows):
                totals["tables lost"] += 1
                out.append(f"{rel}: no table row holds {probe!r}")
    for m in main:
        for lst in m.iter("ul", "ol", "dl"):
            # A list inside a list or a table is checked with its outer one.
            if any(a.tag in ("ul", "ol", "dl", "table") for a in lst.iterancestors()):
                continue
            if in_page(lst, page):
                continue
            items = [first_line(i) for i in lst if i.tag in ("li", "dt", "dd")]
            items = [plain(i) for i in items if i]
            if not items:
                continue
            totals["lists"] += 1
            missing = [i[:40] for i in (items[0], items[-1]) if i[:40] not in md_plain]
            if missing:
                totals["lists lost"] += 1
                out.append(f"{rel}: list item not in the Markdown: {missing[0]!r}")
    main_texts = set()
    for m in main:
        for a in m.iter("a"):
            main_texts.add(collapse(a.text_content()))
        for h in m.xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6"):
            main_texts.add(collapse(h.text_content()).rstrip("¶#§ "))
    links = md_link_texts(md)
    leaked = set()
    for n in nav:
        for a in n.iter("a"):
            t = collapse(a.text_content())
            if len(t) >= 8 and t not in main_texts and t in links:
                leaked.add(t)
    # A bar of short links ("Prev", "Up", "Home", "Next") copied whole:
    # three or more of the navigation's link texts on one line.
    nav_texts = {collapse(a.text_content()) for n in nav for a in n.iter("a")} - main_texts
    for line in md.splitlines():
        bar = [t for t in md_link_texts(line) if t in nav_texts]
        if len(bar) >= 3:
            leaked.add(" · ".join(sorted(bar)))
            break
    totals["navigation links"] += sum(1 for n in nav for _ in n.iter("a"))
    if leaked:
        totals["pages with navigation"] += 1
        out.append(f"{rel}: navigation link texts in the Markdown: {sorted(leaked)[:3]}")


def main():
    args = [a for a in sys.argv[1:] if a != "--strict-lists"]
    strict_lists = len(args) < len(sys.argv) - 1
    docs, host_dir = args[0], args[1]
    totals = {k: 0 for k in ("pages", "redirect stubs", "no main", "code blocks", "code blocks lost", "tables",
                             "tables lost", "lists", "lists lost", "navigation links", "pages with navigation")}
    out = []
    for dirpath, _, files in os.walk(host_dir):
        for name in files:
            if not name.endswith(".md"):
                continue
            md_path = os.path.join(dirpath, name)
            rel = os.path.relpath(md_path, host_dir)
            html_path = os.path.join(docs, rel[:-3] + ".html")
            kind = generator(rel)
            if kind is None or not os.path.exists(html_path):
                continue
            totals["pages"] += 1
            check(html_path, md_path, kind, totals, out)
    for line in sorted(out):
        print(line)
    print("docs check: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    failed = totals["code blocks lost"] + totals["tables lost"] + totals["pages with navigation"] + totals["no main"]
    if strict_lists:
        failed += totals["lists lost"]
    sys.exit(1 if failed or totals["pages"] == 0 else 0)


if __name__ == "__main__":
    main()
