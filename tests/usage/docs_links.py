#!/usr/bin/env python3
"""Every relative link in the repository's Markdown files resolves.

`check --root DIR` reads every *.md under DIR (not build trees or hidden
directories) and, for each relative link or image, `[text](target)` or a
reference definition `[label]: target`, checks that the target exists and,
when it has a #fragment and is a Markdown file, that the file has a heading
whose GitHub anchor is that fragment (or an HTML id/name). Links in code
blocks and code spans are not links; absolute URLs are not checked. A link
that leaves DIR is broken too: on GitHub it would point outside the
repository. Each broken link is printed as `file:line: target: why`.

`self-test` runs the check on a small tree with known broken links and fails
unless it reports exactly those, so the check cannot pass by finding nothing.
"""

import argparse
import os
import re
import sys
import tempfile
import unicodedata
import urllib.parse

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# [text](target) or ![alt](target): target is <...> or has no spaces; an
# optional "title" follows. Text may hold one level of brackets.
INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HTML_ID = re.compile(r"<[^>]*\s(?:id|name)=[\"']([^\"']+)[\"']")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs
            if not d.startswith(".") and not d.startswith("build")
            and not os.path.exists(os.path.join(top, d, "CMakeCache.txt")))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(top, name)


def prose_lines(text, blank_code_spans=True):
    """(line number, line) outside fenced code blocks; code spans blanked."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            continue
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        if blank_code_spans:
            line = CODE_SPAN.sub(lambda s: " " * len(s.group(0)), line)
        yield number, line


def slug(heading):
    """GitHub's anchor for a heading's text (github-slugger)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in " -_" or category[0] in "LNM" or category == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(text):
    """Every anchor a Markdown file has: headings (repeats numbered -1, -2,
    ... as GitHub does) and HTML id and name attributes."""
    found, seen = set(), {}
    previous = ""
    for _, line in prose_lines(text, blank_code_spans=False):
        atx = ATX.match(line)
        heading = None
        if atx:
            heading = atx.group(2)
        elif (SETEXT.match(line) and previous.strip()
              and not previous.lstrip().startswith(("|", "-", "*", "#"))):
            heading = previous.strip()
        if heading is not None:
            base = slug(heading)
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        found.update(HTML_ID.findall(line))
        previous = line
    return found


def links(text):
    """(line number, target) of every link, image and reference definition
    outside code. A link's text may run over several lines."""
    lines = [""] * (text.count("\n") + 1)
    for number, line in prose_lines(text):
        lines[number - 1] = line
    prose = "\n".join(lines)
    for m in INLINE.finditer(prose):
        yield prose.count("\n", 0, m.start(1)) + 1, m.group(1)
    for number, line in enumerate(lines, 1):
        m = REFDEF.match(line)
        if m:
            yield number, m.group(1)


def broken_links(root):
    """[(file relative to root, line, target, why)] for every broken link."""
    root = os.path.realpath(root)
    cache = {}

    def anchors_of(path):
        if path not in cache:
            with open(path, encoding="utf-8") as f:
                cache[path] = anchors(f.read())
        return cache[path]

    broken = []
    for path in markdown_files(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        shown = os.path.relpath(path, root)
        for number, target in links(text):
            raw = target[1:-1] if target.startswith("<") else target
            if not raw or SCHEME.match(raw) or raw.startswith("//"):
                continue
            where, _, fragment = raw.partition("#")
            where = urllib.parse.unquote(where.partition("?")[0])
            fragment = urllib.parse.unquote(fragment)
            resolved = (os.path.realpath(os.path.join(os.path.dirname(path), where))
                        if where else path)
            if os.path.commonpath([root, resolved]) != root:
                broken.append((shown, number, target, "outside the repository"))
            elif not os.path.exists(resolved):
                broken.append((shown, number, target, "no such file"))
            elif (fragment and resolved.endswith(".md") and os.path.isfile(resolved)
                  and fragment not in anchors_of(resolved)):
                broken.append((shown, number, target,
                               f"{os.path.relpath(resolved, root)} has no heading "
                               f"with the anchor #{fragment}"))
    return broken


def check(root):
    broken = broken_links(root)
    for shown, number, target, why in broken:
        print(f"{shown}:{number}: broken link ({target}): {why}")
    if broken:
        print(f"{len(broken)} broken relative link(s) in the Markdown files under {root}")
        return 1
    count = sum(1 for p in markdown_files(root) for _ in links(open(p, encoding="utf-8").read()))
    print(f"every relative link resolves ({count} links and images in "
          f"{sum(1 for _ in markdown_files(root))} files)")
    return 0


# The self-test's tree: each broken link is marked "BROKEN: <why>" on its line.
FIXTURE = {
    "README.md": """# Title

[ok](docs/a.md) and [ok anchor](docs/a.md#the-store-outboxoptions), [here](#title),
[dir](docs/), [image](docs/pic.png), [web](https://example.com/missing.md), [mail](mailto:x@example.com)
`[in a code span](missing.md)` is not a link.

```text
[in a fence](missing.md)
```

[missing file](docs/missing.md) BROKEN: no such file
[missing anchor](docs/a.md#no-such-heading) BROKEN: no heading
[outside](../outside.md) BROKEN: outside the repository
[same file, missing anchor](#nope) BROKEN: no heading
[a link whose text runs
over two lines](docs/also-missing.md) BROKEN: no such file
[ref]: docs/gone.md BROKEN: no such file
""",
    "docs/a.md": """# A

## The store: `outbox::Options`

## Twice

## Twice

[second](#twice-1), [back](../README.md#title), [set](#setext-heading), [html](#kept)

Setext heading
--------------

<a id="kept"></a>

[first of two, wrong number](#twice-2) BROKEN: no heading
""",
    "docs/pic.png": "",
    "build/ignored.md": "[not checked](nowhere.md)\n",
}


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "repo")
        for name, text in FIXTURE.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        expected = set()
        for name, text in FIXTURE.items():
            for number, line in enumerate(text.split("\n"), 1):
                if "BROKEN: " in line:
                    expected.add((name, number, line.split("BROKEN: ")[1]))
        found = {(shown, number, why) for shown, number, _, why in broken_links(root)}
        failures = []
        for name, number, why in sorted(expected):
            if not any(f[0] == name and f[1] == number and why in f[2] for f in found):
                failures.append(f"not reported: {name}:{number} ({why})")
        for name, number, why in sorted(found):
            if not any(e[0] == name and e[1] == number for e in expected):
                failures.append(f"reported, but not broken: {name}:{number} ({why})")
        if check(root) == 0:
            failures.append("check exited 0 on a tree with broken links")
        for name in list(FIXTURE):  # the same tree without its broken lines
            path = os.path.join(root, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(line for line in FIXTURE[name].split("\n")
                                  if "BROKEN: " not in line))
        if check(root) != 0:
            failures.append("check failed on a tree whose links all resolve")
    for f in failures:
        print(f"self-test: {f}")
    if failures:
        return 1
    print(f"self-test: the {len(expected)} broken links were reported, and nothing else")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["check", "self-test"])
    parser.add_argument("--root", help="the repository (check)")
    args = parser.parse_args()
    if args.mode == "self-test":
        return self_test()
    if not args.root:
        parser.error("check needs --root")
    return check(args.root)


if __name__ == "__main__":
    sys.exit(main())
