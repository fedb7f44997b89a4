#!/usr/bin/env python3
"""Checks every link to a heading (page.md#anchor) in README.md and docs/.

Usage: doc-links.py ROOT

`mkdocs build --strict` (Debian's 1.4) checks that linked pages exist, not
their anchors; this checks the anchors, with the slugs MkDocs' toc extension
makes (lower case, punctuation dropped, spaces to hyphens). Exit 1 and one
line per broken link.
"""

import glob
import os
import re
import sys


def slug(title):
    title = re.sub(r"[`*]", "", title).strip().lower()
    title = re.sub(r"[^\w\- ]", "", title)
    return re.sub(r"\s+", "-", title)


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    root = argv[0]
    pages = glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True)
    headings = {}
    for page in pages:
        text = open(page, encoding="utf-8").read()
        text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # no headings in code
        headings[os.path.normpath(page)] = {slug(h) for h in re.findall(r"^#+\s+(.*)$", text, re.M)}
    broken = 0
    for page in pages + [os.path.join(root, "README.md")]:
        for m in re.finditer(r"\]\(([^)#\s]*\.md)?#([^)\s]+)\)", open(page, encoding="utf-8").read()):
            target = os.path.normpath(os.path.join(os.path.dirname(page), m.group(1))) if m.group(1) else os.path.normpath(page)
            if target not in headings:
                print(f"{os.path.relpath(page, root)}: link to {m.group(0)}: no page {os.path.relpath(target, root)}")
                broken += 1
            elif m.group(2) not in headings[target]:
                print(f"{os.path.relpath(page, root)}: link {m.group(0)}: no heading '#{m.group(2)}' in "
                      f"{os.path.relpath(target, root)}")
                broken += 1
    print(f"doc-links: {broken} broken link(s) to headings")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
