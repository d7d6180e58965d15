#!/usr/bin/env python3
"""Analytic against SimGrid per strategy: the step times of one what-to-run cluster
under both evaluators (experiments/strategies_table.sh ... analytic / simgrid).
   experiments/strategies_agreement.py [dir] [cluster]"""
import json
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "experiments/results/strategies"
cluster = sys.argv[2] if len(sys.argv) > 2 else "k40x4"
load = lambda ev: json.load(open(os.path.join(root, f"what-to-run-{cluster}-{ev}.json")))
a, s = load("analytic"), load("simgrid")
cells = lambda d: {(r["model"], x["method"]): x for r in d["rows"] for x in r["results"]}
ca, cs = cells(a), cells(s)
models = [r["model"] for r in s["rows"]]
print(f"{cluster}: analytic ms / SimGrid ms (SimGrid / analytic)\n")
print("| strategy | " + " | ".join(models) + " |")
print("|---|" + "---|" * len(models))
for m in s["methods"]:
    row = []
    for model in models:
        x, y = ca.get((model, m)), cs[(model, m)]
        if x and x["status"] == "ok" and y["status"] == "ok":
            row.append(f"{x['step_time_us'] / 1e3:.1f} / {y['step_time_us'] / 1e3:.1f} "
                       f"({y['step_time_us'] / x['step_time_us']:.3f})")
        else:
            row.append(f"{x['status'] if x else '-'} / {y['status']}")
    print(f"| {m} | " + " | ".join(row) + " |")
