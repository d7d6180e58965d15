#!/usr/bin/env python3
"""The benchmark tables of docs/performance.md that committed command output gives.

Reads, under experiments/results/ (each written by the command named in its section):
  bench-threads/*.json                 aware bench simulate --threads (-o)
  bench-anneal-threads/*.md            experiments/anneal_threads.sh
  bench-moves/*.json                   aware bench moves (-o)
  bench-moves/anneal_ab*.txt           experiments/anneal_ab.sh
  anneal-budgets/equal-time-2000.txt   aware place --json, one line per run (graph method seed step time)
  bench-100k/analytic-hgx-h200.json    aware bench simulate
  bench-100k/gui-open.txt              aware-gui --bench-layout
and writes experiments/results/bench-tables.md, which docs/performance.md links.
tests/results/check_tables.py rebuilds it and compares to the byte. Figures that no
committed file holds stay on the page, marked there as hand-collected.

  experiments/tables/performance.py [--root ROOT] [-o OUT]
"""
import json
import os
import re
from decimal import ROUND_HALF_UP, Decimal

from mdtable import main, read_table, table

OUT = "experiments/results/bench-tables.md"
NAMES = {"inception_v3": "Inception-V3", "nmt4": "NMT-4", "zoo:inception_v3": "Inception-V3",
         "zoo:nmt4": "NMT-4", "family:ptb:1": "ptb family, seed 1", "ptb-1": "ptb family, seed 1",
         "random:1000:1": "random DAG, 1,000 ops", "random-1000-s1": "random DAG, 1,000 ops",
         "random-100000-s1": "random DAG, 100,000 ops"}


def results(root, *parts):
    return os.path.join(root, "experiments", "results", *parts)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def json_results(folder):
    """(file name, parsed document) of each .json file in folder, by name."""
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            yield name, load(os.path.join(folder, name))


def per_s(v):
    return "{:,.0f}/s".format(v)


def threads(root):
    rows = []
    for name, d in json_results(results(root, "bench-threads")):
        evaluator = d["evaluator"].split(" (")[0]
        detail = re.search(r"\((\w+):", d["evaluator"])
        if evaluator == "analytic" and detail:
            evaluator += ", " + detail.group(1)
        elif "ready op" in d["evaluator"]:
            evaluator += ", ready-first"
        elif "analytic" in d["evaluator"].split("(", 1)[-1] and "order" in d["evaluator"]:
            evaluator += ", analytic order"
        by = {t["threads"]: t for t in d["by_threads"]}
        one, two = by.get(1), by.get(2)
        rows.append([f"`{name}`", NAMES.get(d["graph"], d["graph"]) + ", " + d["cluster"], evaluator,
                     per_s(one["evaluations_per_second"]) if one else "-",
                     per_s(two["evaluations_per_second"]) if two else "-",
                     "%.2f×" % two["speedup"] if two else "-",
                     "%.1f" % one["seconds"] if one else "-"])
    return table(["file", "graph, cluster", "evaluator", "1 thread", "2 threads", "speed-up", "seconds per count"],
                 rows, right=(3, 4, 5, 6))


def anneal_threads(root):
    folder = results(root, "bench-anneal-threads")
    by_graph = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".md"):
            for r in read_table(os.path.join(folder, name)):
                by_graph.setdefault(r["graph"], []).append(r)
    rows = []
    for graph, rs in by_graph.items():
        rs.sort(key=lambda r: int(r["seed"]))
        speedups = [float(r["speed-up"].rstrip("x")) for r in rs]
        # Decimal: the means of one-decimal figures, rounded half up as a reader would.
        one = [Decimal(r["step ms: 1 thread"]) for r in rs]
        two = [Decimal(r["2 threads, equal time"]) for r in rs]
        mean = lambda v: (sum(v) / len(v)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
        evals = [int(r["2 threads in 1 thread's time: evals"]) for r in rs]
        same = sum(r["same placement"] == "yes" for r in rs)
        better = sum(b < a for a, b in zip(one, two))
        rows.append([NAMES.get(graph, graph), ", ".join(r["seed"] for r in rs),
                     "%.2f–%.2f×" % (min(speedups), max(speedups)), "%d of %d" % (same, len(rs)),
                     "{:,}–{:,}".format(min(evals), max(evals)),
                     "%s → %s ms" % (mean(one), mean(two)),
                     "%d of %d" % (better, len(rs))])
    return table(["graph", "seeds", "speed-up, same budget", "same placement",
                  "2 threads' evaluations in 1 thread's time", "step at equal wall-clock, mean (1 → 2 threads)",
                  "2 threads better"], rows, right=(2, 4, 5))


def moves(root):
    rows = []
    for name, d in json_results(results(root, "bench-moves")):
        graph = NAMES.get(d["graph"], d["graph"])
        if "ops" not in graph:
            graph += " (%s ops)" % "{:,}".format(d["ops"])
        rows.append([graph,
                     per_s(d["evaluate_move_per_second"]), per_s(d["evaluate_per_second"]),
                     "%.2f×" % d["speedup"], "yes" if d["identical"] else "**no**", f"`{name}`"])
    return table(["graph", "evaluate_move", "evaluate", "speed-up", "same step times", "file"],
                 rows, right=(1, 2, 3))


def anneal_ab(root, name):
    path = results(root, "bench-moves", name)
    with open(path, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
    if not lines or lines[0].split()[:2] != ["graph", "evals"]:
        raise ValueError(f"{path}: not experiments/anneal_ab.sh output (no 'graph evals ...' header)")
    rows = []
    for line in lines[1:]:
        graph, evals, before, after, speedup, step = line.split()
        rows.append([NAMES.get(graph, graph), "{:,}".format(int(evals)), before + " s", after + " s", speedup.replace("x", "×"),
                     "%.2f" % (float(step) / 1e3)])
    return table(["graph", "evaluations", "before", "after", "speed-up", "step, ms (both)"], rows, right=(1, 2, 3, 4, 5))


def equal_time(root):
    path = results(root, "anneal-budgets", "equal-time-2000.txt")
    runs = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.fullmatch(r"(\S+) (\S+) seed (\d+) ([\d.]+) ms ([\d.]+) s", line.strip())
            if not m:
                raise ValueError(f"{path}: unexpected line {line.strip()!r}")
            runs.setdefault(m.group(1), {}).setdefault(m.group(2), []).append((float(m.group(4)), float(m.group(5))))
    rows = []
    span = lambda v, fmt: fmt % min(v) if min(v) == max(v) else (fmt + "–" + fmt) % (min(v), max(v))
    methods = ("anneal", "anneal-graph")
    for graph, by in runs.items():
        row = [NAMES.get(graph, graph)]
        for m in methods:
            steps, secs = [s for s, _ in by[m]], [t for _, t in by[m]]
            row += [span(steps, "%.1f"), span(secs, "%.3f")]
        rows.append(row)
    return table(["graph", "`anneal` ms", "`anneal` s", "`anneal-graph` ms", "`anneal-graph` s"], rows,
                 right=(1, 2, 3, 4))


def hundred_k(root):
    d = load(results(root, "bench-100k", "analytic-hgx-h200.json"))
    one = d["by_threads"][0]
    analytic = "%.0f/s (%.1f ms each, %d evaluations in %.1f s), %s ops, %s edges, %s" % (
        one["evaluations_per_second"], d["us_per_evaluation"] / 1e3, one["evaluations"], one["seconds"],
        "{:,}".format(d["ops"]), "{:,}".format(d["edges"]), d["cluster"])
    path = results(root, "bench-100k", "gui-open.txt")
    sittings, label = [], "before the detached scene"
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                label = "after the detached scene"
                continue
            m = re.search(r"load ([\d.]+) s .* scene ([\d.]+) s\s+open total ([\d.]+) s .* pan frame ([\d.]+) ms", line)
            if m:
                if not sittings or sittings[-1][0] != label:
                    sittings.append((label, []))
                sittings[-1][1].append([float(x) for x in m.groups()])
    rows = []
    for label, runs in sittings:
        col = lambda i, fmt: (fmt + "–" + fmt) % (min(r[i] for r in runs), max(r[i] for r in runs))
        rows.append([label, str(len(runs)), col(0, "%.2f") + " s", col(1, "%.2f") + " s", col(2, "%.2f") + " s",
                     col(3, "%.1f") + " ms"])
    gui = table(["build", "runs", "load", "scene", "open total", "pan frame"], rows, right=(1, 2, 3, 4, 5))
    return analytic, gui


def generate(root):
    analytic, gui = hundred_k(root)
    return "\n".join([
        "# Benchmark tables (generated)",
        "",
        "Generated by `experiments/tables/performance.py` from the benchmark output committed under "
        "`experiments/results/`; do not edit by hand. Measured on the shared 2-core development machine: "
        "compare ratios within one file, not absolute rates across files. `docs/performance.md` says what "
        "each shows.",
        "",
        "## All cores: `aware bench simulate --threads` (`bench-threads/`)",
        "",
        "Random placements, k40x4; the speed-up is relative to one thread in the same run.",
        "",
        threads(root),
        "",
        "## Anneal on two threads: `experiments/anneal_threads.sh` (`bench-anneal-threads/`)",
        "",
        "`anneal-graph`, 5,000 evaluations, k40x4, fastest of the alternated runs per seed; every seed's row "
        "is in the folder's tables.",
        "",
        anneal_threads(root),
        "",
        "## Moves: `aware bench moves` (`bench-moves/*.json`)",
        "",
        "One seeded sequence of single-op moves, 25% accepted, random start, k40x4.",
        "",
        moves(root),
        "",
        "## Anneal, two builds: `experiments/anneal_ab.sh` (`bench-moves/anneal_ab.txt`)",
        "",
        "Fastest `place_time_s` of the alternated runs at 5,000 evaluations, seed 1, anneal; the two builds "
        "are the ones `docs/performance.md` names.",
        "",
        anneal_ab(root, "anneal_ab.txt"),
        "",
        "## Anneal, the dispatch change: `experiments/anneal_ab.sh` (`bench-moves/anneal_ab-dispatch.txt`)",
        "",
        anneal_ab(root, "anneal_ab-dispatch.txt"),
        "",
        "## `anneal` against `anneal-graph` at 2,000 evaluations (`anneal-budgets/equal-time-2000.txt`)",
        "",
        "`aware place --graph zoo:G --cluster preset:k40x4 --method M --budget-evals 2000 --seed S --json`, "
        "seeds 1–3: the step and `place_time_s` ranges.",
        "",
        equal_time(root),
        "",
        "## 100,000-op graph (`bench-100k/`)",
        "",
        f"Analytic evaluations, random placements (`analytic-hgx-h200.json`): {analytic}.",
        "",
        "`aware-gui --bench-layout --graph random:100000:1 --cluster preset:hgx-h200` (`gui-open.txt`):",
        "",
        gui,
        "",
    ])


if __name__ == "__main__":
    main(generate, OUT, __doc__)
