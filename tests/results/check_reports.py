#!/usr/bin/env python3
"""Rebuilds every committed study report from its committed data and compares.

For each folder of experiments/results that `aware reproduce` wrote (it has a
manifest.json and a REPORT.md): copies the folder's data (manifest, summary,
cells, cells.pack.json.gz) to a scratch folder, runs `aware reproduce --report-only`
there with the arguments the report's first lines name (its own list of tables
for --only), and checks that the tables (REPORT.md from its first "## " on) come
out identical. Cells that today's plan has and the study never ran count as
missing in both. For the
agents-vs-searches study: runs `scripts/agents-vs-searches --table-only` over a
copy of its cells for each committed table and compares the whole table.

Exit 0 when every report is rebuilt to the byte; otherwise one line per report
that differs (with the first differing line) and exit 1.

  check_reports.py REPO_ROOT AWARE_BIN SCRATCH_DIR
"""
import os
import re
import shutil
import subprocess
import sys


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines()), 1):
        if x != y:
            return f"line {i}: committed {x[:120]!r}, rebuilt {y[:120]!r}"
    return f"lengths differ ({len(a.splitlines())} and {len(b.splitlines())} lines)"


def copy_data(src, dst, names):
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for name in names:
        path = os.path.join(src, name)
        if os.path.isdir(path):
            shutil.copytree(path, os.path.join(dst, name))
        elif os.path.exists(path):
            shutil.copy(path, dst)


def reproduce_reports(root, aware, scratch):
    problems, checked = [], 0
    results = os.path.join(root, "experiments", "results")
    for study in sorted(os.listdir(results)):
        folder = os.path.join(results, study)
        report_path = os.path.join(folder, "REPORT.md")
        if not (os.path.exists(os.path.join(folder, "manifest.json")) and os.path.exists(report_path)):
            continue
        committed = open(report_path, encoding="utf-8").read()
        m = re.search(r"`aware reproduce ([^`]*)`", committed)
        if not m:
            problems.append(f"{study}: REPORT.md names no `aware reproduce ...` command")
            continue
        args = [a for a in m.group(1).split() if a != "--report-only"]
        if "-o" in args:
            i = args.index("-o")
            del args[i:i + 2]
        # The tables it holds, as the report names them: `--only all` grows as
        # tables are added, the report's own list does not.
        tables = re.search(r"^Tables: ([a-z0-9, ]+)\.", committed, re.MULTILINE)
        if tables and "--only" in args:
            args[args.index("--only") + 1] = tables.group(1).replace(" ", "")
        work = os.path.join(scratch, study)
        copy_data(folder, work, ["manifest.json", "summary.json", "cells", "cells.pack.json.gz"])
        run = subprocess.run([aware, "reproduce", *args, "--report-only", "-o", work],
                             capture_output=True, text=True)
        checked += 1
        # Cells the plan has gained since the study ran are reported missing (the
        # report says how many, and its tables show them as not run): the report is
        # still written, and it is the committed report that must match it.
        missing_only = run.returncode != 0 and "cells missing" in run.stderr
        if run.returncode != 0 and not missing_only:
            problems.append(f"{study}: aware reproduce --report-only failed: "
                            f"{(run.stderr.strip().splitlines() or ['?'])[-1]}")
            continue
        rebuilt = open(os.path.join(work, "REPORT.md"), encoding="utf-8").read()
        a, b = committed[committed.find("\n## "):], rebuilt[rebuilt.find("\n## "):]
        if a != b:
            problems.append(f"{study}: REPORT.md differs from its rebuild, {first_difference(a, b)}")
    return problems, checked


def agents_vs_searches(root, scratch):
    problems, checked = [], 0
    folder = os.path.join(root, "experiments", "results", "agents-vs-searches")
    if not os.path.isdir(folder):
        return problems, checked
    for name in sorted(os.listdir(folder)):
        m = re.fullmatch(r"agents-vs-searches-(\d+)\.md", name)
        if not m:
            continue
        committed = open(os.path.join(folder, name), encoding="utf-8").read()
        header = next(l for l in committed.splitlines() if l.startswith("| model | devices |"))
        methods = [c.strip() for c in header.strip("|").split("|")[2:]]
        rows = [l.split("|") for l in committed.splitlines() if re.match(r"\| \w+ \| \d+ \|", l)]
        models = list(dict.fromkeys(r[1].strip() for r in rows))
        devices = list(dict.fromkeys(r[2].strip() for r in rows))
        seeds = re.search(r"seeds ([\d, ]+),", committed).group(1).replace(",", " ").split()
        work = os.path.join(scratch, "agents-vs-searches")
        copy_data(folder, work, ["cells", "cells.pack.json.gz"])
        run = subprocess.run([os.path.join(root, "scripts", "agents-vs-searches"), "--table-only",
                              "--budget", m.group(1), "--methods", " ".join(methods),
                              "--models", " ".join(models), "--devices", " ".join(devices),
                              "--seeds", " ".join(seeds), "--out", work],
                             capture_output=True, text=True, cwd=root)
        checked += 1
        if run.returncode != 0:
            problems.append(f"agents-vs-searches {name}: the table script failed: "
                            f"{(run.stderr.strip().splitlines() or ['?'])[-1]}")
            continue
        rebuilt = open(os.path.join(work, name), encoding="utf-8").read()
        if rebuilt != committed:
            problems.append(f"agents-vs-searches {name}: differs from its rebuild, "
                            f"{first_difference(committed, rebuilt)}")
    return problems, checked


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    root, aware, scratch = sys.argv[1:]
    os.makedirs(scratch, exist_ok=True)
    p1, n1 = reproduce_reports(root, aware, scratch)
    os.environ["AWARE"] = aware
    p2, n2 = agents_vs_searches(root, scratch)
    for p in p1 + p2:
        print(p)
    print(f"{n1 + n2} committed reports rebuilt from their data: {len(p1 + p2)} differ")
    return 1 if p1 + p2 else 0


if __name__ == "__main__":
    sys.exit(main())
