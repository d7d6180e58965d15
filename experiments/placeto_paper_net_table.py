#!/usr/bin/env python3
"""The table of experiments/placeto_paper_net.sh: for each graph and network, the
first update's per-decision entropy and its episodes' steps, from the cells in DIR.

  placeto_paper_net_table.py DIR
"""
import csv
import glob
import json
import os
import sys

out = sys.argv[1]
print("| graph | network | weights | first update's entropy (of ln 4 = 1.386) | its steps, min–max ms | seconds |")
print("|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(path)[:-5]
    graph, variant = name.rsplit("__", 1)
    cell = json.load(open(path))
    rows = list(csv.DictReader(open(path[:-5] + ".curve.csv")))
    first = rows[0]
    label = {"sum": "paper (sum pooling, the code's default)", "mean": "paper, pool=mean (--normalize-aggs)",
             "ours": "ours (net=ours)"}[variant]
    graph = cell.get("graph", graph)
    print(f"| {graph} | {label} | {cell.get('policy_parameters', '')} | {float(first['entropy']):.2g} | "
          f"{float(first['min_step_us'])/1e3:.1f}–{float(first['max_step_us'])/1e3:.1f} | {float(first['seconds']):.0f} |")
