#!/usr/bin/env python3
"""Checks every project #include against the layer table in docs/architecture.md.

The table sits between the lines `<!-- layers -->` and `<!-- /layers -->` as
Markdown rows `| folder | target | may include |`, where "may include" is a
comma-separated list of folders (backticks allowed) whose headers the folder's
files may include, besides its own. A file belongs to the longest folder of the
table that is a prefix of its path. An include names a project header when its
first path component is a top-level folder of the repository; it belongs to the
longest folder of the table that prefixes it.

Exit 0 when every include goes where the table allows; otherwise one line per
offending include (file:line: folder -> included folder (path)), then a count,
and exit 1. A table that cannot be read is one line and exit 2.

  check_includes.py [REPO_ROOT]        (default: two folders up from this file)
"""
import os
import re
import sys

SOURCE_EXTENSIONS = (".cc", ".h", ".cu", ".cuh", ".cpp", ".hpp")
SKIPPED_DIRS = {".git", "experiments/results", "tests/fuzz/corpus", "tests/golden"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_table(root):
    path = os.path.join(root, "docs", "architecture.md")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        sys.exit(f"error: {path}: cannot be read ({e.strerror})")
    start, end = text.find("<!-- layers -->"), text.find("<!-- /layers -->")
    if start < 0 or end < start:
        sys.exit(f"error: {path}: no '<!-- layers -->' ... '<!-- /layers -->' block")
    table = {}
    for number, line in enumerate(text[start:end].splitlines(), text[:start].count("\n") + 1):
        cells = [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.lstrip().startswith("|"):
            continue
        folder = cells[0].rstrip("/")
        if folder in ("folder", "") or set(folder) <= set("-: "):
            continue  # the header row and the separator
        allowed = {a.strip().strip("`").rstrip("/") for a in cells[2].split(",")}
        allowed.discard("")
        allowed.discard("—")
        allowed.discard("-")
        if folder in table:
            sys.exit(f"error: {path}:{number}: folder '{folder}' is listed twice")
        table[folder] = allowed
    if not table:
        sys.exit(f"error: {path}: the layers block holds no rows")
    for folder, allowed in table.items():
        for a in allowed:
            if a not in table:
                sys.exit(f"error: {path}: '{folder}' may include '{a}', which is not a folder of the table")
    return table


def owner(path, folders):
    best = None
    for f in folders:
        if path == f or path.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    table = read_table(root)
    top_level = {f.split("/")[0] for f in table}
    problems, files = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        dirnames[:] = [d for d in dirnames
                       if os.path.join(rel_dir, d) not in SKIPPED_DIRS and not d.startswith("build")
                       and not d.startswith(".")]
        for name in filenames:
            if not name.endswith(SOURCE_EXTENSIONS):
                continue
            rel = os.path.join(rel_dir, name)
            src = owner(rel, table)
            if src is None:
                continue  # a folder outside the table (none today) is not checked
            files += 1
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1).split("/")[0] not in top_level:
                        continue
                    dst = owner(m.group(1), table)
                    if dst is None or dst == src or dst in table[src]:
                        continue
                    problems.append(f"{rel}:{number}: {src} -> {dst} ({m.group(1)})")
    for p in problems:
        print(p)
    print(f"{files} files checked against docs/architecture.md's layer table: "
          f"{len(problems)} include(s) against it")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
