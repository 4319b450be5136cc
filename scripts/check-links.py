#!/usr/bin/env python3
"""Checks that every relative link in README.md and the book (docs/src/**/*.md)
leads somewhere: the file exists, a `#anchor` names a heading of that file (its
id as mdBook makes it), and a page the book links to is in docs/src/SUMMARY.md,
since mdBook renders nothing else. Links to other sites are not fetched.

    python3 scripts/check-links.py        exit status 1 and one line per broken link

Used by scripts/docs.sh, which CI runs."""
import html
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BOOK = os.path.join(ROOT, "docs", "src")

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target "title") and ![alt](target); text may hold one level of brackets.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks, with code
    spans blanked out, since neither holds links."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield number, line.rstrip("\n")


def heading_text(markdown):
    """The text a heading renders to, which is what mdBook makes its id from."""
    # Code spans render as they are written, so they are set aside first.
    spans = []

    def keep(m):
        spans.append(m.group(2).strip())
        return f"\0{len(spans) - 1}\0"

    text = CODE_SPAN.sub(keep, markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = re.sub(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1", r"\2", text)  # emphasis
    text = re.sub(r"\\(.)", r"\1", text)  # backslash escapes
    text = html.unescape(text)
    return re.sub(r"\0(\d+)\0", lambda m: spans[int(m.group(1))], text)


def slug(text):
    """mdBook's id for a heading (mdbook-html `id_from_content`): trimmed,
    lowercased, letters, digits, `_` and `-` kept, white space made `-`, all else
    dropped."""
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "_-":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    """Every id the page's headings get, duplicates numbered `-1`, `-2`, … as
    mdBook numbers them; an explicit `{#id}` wins."""
    if path not in _anchors:
        found, used = set(), set()
        for _, line in prose_lines(path):
            m = HEADING.match(line)
            if not m:
                continue
            text = m.group(2)
            explicit = re.search(r"\{[^}]*#([\w-]+)[^}]*\}\s*$", text)
            if explicit:
                found.add(explicit.group(1))
                used.add(explicit.group(1))
                continue
            base = slug(heading_text(text))
            candidate, n = base, 0
            while candidate in used:
                n += 1
                candidate = f"{base}-{n}"
            used.add(candidate)
            found.add(candidate)
        _anchors[path] = found
    return _anchors[path]


def summary_pages():
    summary = os.path.join(BOOK, "SUMMARY.md")
    pages = set()
    for _, line in prose_lines(summary):
        for target in INLINE_LINK.findall(CODE_SPAN.sub("", line)):
            if target:
                pages.add(os.path.normpath(os.path.join(BOOK, target.split("#")[0])))
    return pages


def sources():
    yield os.path.join(ROOT, "README.md")
    for folder, _, files in sorted(os.walk(BOOK)):
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def check(path, in_summary):
    in_book = path.startswith(BOOK + os.sep)
    problems = []
    for number, line in prose_lines(path):
        line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        targets = INLINE_LINK.findall(line)
        ref = REFERENCE_DEF.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            if not target or SCHEME.match(target):
                continue
            where = f"{os.path.relpath(path, ROOT)}:{number}: {target}"
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append(f"{where}: no such file")
                continue
            if in_book and not (dest == BOOK or dest.startswith(BOOK + os.sep)):
                problems.append(f"{where}: leaves the book (docs/src), so the built book cannot follow it")
                continue
            if in_book and file_part and dest.endswith(".md") and dest not in in_summary:
                problems.append(f"{where}: not in docs/src/SUMMARY.md, so mdBook does not render it")
                continue
            if anchor:
                if not dest.endswith(".md"):
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
                elif anchor not in anchors(dest):
                    near = sorted(a for a in anchors(dest) if anchor[:6] in a)[:5]
                    hint = f" (its headings include: {', '.join(near)})" if near else ""
                    problems.append(f"{where}: no heading #{anchor} in {os.path.relpath(dest, ROOT)}{hint}")
    return problems


def main():
    in_summary = summary_pages()
    problems, files = [], 0
    for path in sources():
        files += 1
        problems += check(path, in_summary)
    for problem in problems:
        print(problem)
    print(f"check-links: {files} files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
