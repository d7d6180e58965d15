#!/usr/bin/env python3
"""Rows of experiments/aware_guided.sh's cells: aware_guided_table.py CELLS BUDGET.

One markdown row per (model, devices): means over the seeds every variant of the row
has, step ms; the guided hybrid's seconds; anneal-graph at the same evaluations and
given the hybrid's wall-clock (its evaluations in that time); and the counts of rows
where the hybrid is at or below anneal-graph (within 0.5%) on each footing."""
import collections
import json
import os
import sys

MODELS = ["inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"]
VARIANTS = ["guided", "guided-proposal", "no-policy", "anneal-graph", "anneal-graph-time"]


def main(argv):
    folder, budget = argv[0], argv[1]
    cells = collections.defaultdict(dict)  # (m, d) -> variant -> seed -> cell
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        parts = name[:-5].split("__")
        if len(parts) != 5 or parts[3] != "e" + budget:
            continue
        m, d, v, _, s = parts
        cells[(m, d)].setdefault(v, {})[s] = json.load(open(os.path.join(folder, name)))
    print(f"aware-guided against anneal-graph, {budget} evaluations, analytic simulator, one core per run; "
          "step ms (mean over the seeds shown)\n")
    header = ["model", "devices", "seeds", "guided", "guided s", "guided-proposal", "no-policy",
              "anneal-graph (equal evals)", "anneal-graph (equal time)", "its evals", "guided / anneal (evals)",
              "guided / anneal (time)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    wins_e = wins_t = rows_e = rows_t = 0
    for m in MODELS:
        for n in ("2", "4", "8"):
            row = cells.get((m, "k40x" + n))
            if not row or "guided" not in row:
                continue
            seeds = sorted(row["guided"])

            def mean(v, key=None):
                got = row.get(v, {})
                if any(s not in got for s in seeds):
                    return None
                vals = [(got[s].get("step_time_us") if key is None else got[s].get(key)) for s in seeds]
                if key is None:
                    vals = [x / 1e3 for x in vals]
                return sum(vals) / len(vals)

            def fmt(x, digits=1):
                return "-" if x is None else f"{x:.{digits}f}"

            g, ge = mean("guided"), mean("anneal-graph")
            gt = mean("anneal-graph-time")
            re = gt_ratio = None
            if ge:
                re = g / ge
                rows_e += 1
                wins_e += re <= 1.005
            if gt:
                gt_ratio = g / gt
                rows_t += 1
                wins_t += gt_ratio <= 1.005
            print(f"| {m} | {n} | {','.join(seeds)} | {fmt(g)} | {fmt(mean('guided', 'wall_seconds'))} | "
                  f"{fmt(mean('guided-proposal'))} | {fmt(mean('no-policy'))} | {fmt(ge)} | {fmt(gt)} | "
                  f"{fmt(mean('anneal-graph-time', 'evaluations'), 0)} | {fmt(re, 3)} | {fmt(gt_ratio, 3)} |")
    print(f"\nAt or below anneal-graph (within 0.5%): {wins_e} of {rows_e} rows at equal evaluations, "
          f"{wins_t} of {rows_t} at equal wall-clock.")


if __name__ == "__main__":
    main(sys.argv[1:])
