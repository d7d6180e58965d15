#!/usr/bin/env python3
"""Checks that every relative link and image in the repository's Markdown resolves.

Reads every tracked-looking *.md file (the build folders, .git and the
generated cells under experiments/results/*/cells are skipped) and every
Markdown link `[text](target)` and image `![alt](target)` in it, plus HTML
`<img src="...">`. A target with a scheme (http:, https:, mailto:) or a pure
anchor (#...) is not checked; any other target, with its #anchor and ?query cut,
must name an existing file or folder relative to the Markdown file (or to the
repository root when it starts with /). Links inside fenced code blocks and
inline code are ignored.

Exit 0 when all resolve; otherwise one line per broken link (file:line: target)
and exit 1.

  check_links.py [REPO_ROOT]
"""
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
IMG = re.compile(r'<img[^>]*\ssrc="([^"]+)"', re.IGNORECASE)
INLINE_CODE = re.compile(r"`[^`]*`")
SKIPPED = ("build", ".git")


def skipped(rel_dir):
    parts = rel_dir.split(os.sep)
    if parts[0].startswith(SKIPPED) or any(p.startswith(".") for p in parts if p):
        return True
    return len(parts) >= 4 and parts[:2] == ["experiments", "results"] and parts[3] == "cells"


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    broken, files, links = [], 0, 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir != "." and skipped(rel_dir):
            dirnames[:] = []
            continue
        for name in sorted(filenames):
            if not name.endswith(".md"):
                continue
            path = os.path.join(dirpath, name)
            files += 1
            fenced = False
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if line.lstrip().startswith(("```", "~~~")):
                        fenced = not fenced
                        continue
                    if fenced:
                        continue
                    text = INLINE_CODE.sub("", line)
                    for target in LINK.findall(text) + IMG.findall(text):
                        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                            continue
                        links += 1
                        clean = target.split("#")[0].split("?")[0]
                        base = root if clean.startswith("/") else dirpath
                        if not os.path.exists(os.path.join(base, clean.lstrip("/"))):
                            broken.append(f"{os.path.relpath(path, root)}:{number}: {target}")
    for b in broken:
        print(b)
    print(f"{files} Markdown files, {links} relative links and images: {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
