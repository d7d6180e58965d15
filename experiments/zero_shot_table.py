#!/usr/bin/env python3
"""Zero-shot transfer against one GPU and m-ETF, from an `aware reproduce` run's
transfer cells (loose or packed): zero_shot_table.py DIR prints, per held-out
family member and seed, the one-GPU step, the pre-trained policy's zero-shot
placement with the paper's argmax decode and with the load-aware balanced decode,
and m-ETF's (the one-pass heuristic zero-shot placement competes with), then the
counts issue 44 asks for: argmax better than one GPU, balanced at or below m-ETF."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cellpack import CellFiles  # noqa: E402

run = sys.argv[1]
cells = CellFiles(os.path.join(run, "cells"))


def step(name):
    text = cells.read(name)
    if text is None:
        return None
    doc = json.loads(text)
    return doc["step_time_us"] / 1e3 if doc.get("feasible", True) and "step_time_us" in doc else None


rows = []
for name in cells.names("search__*__aware__zero-shot__s*__e0.json"):
    m = re.match(r"search__(.+)__(.+)__aware__zero-shot__s(\d+)__e0\.json$", name)
    graph, cluster, seed = m.group(1), m.group(2), int(m.group(3))
    single = step(f"simulate__{graph}__{cluster}__single__s1__e0.json")
    argmax = step(name)
    balanced = step(f"search__{graph}__{cluster}__aware__zero-shot-balanced__s{seed}__e0.json")
    metf = [step(n) for n in cells.names(f"place__{graph}__{cluster}__m-etf__s{seed}__e*.json")]
    rows.append((graph, seed, single, argmax, balanced, metf[0] if metf else None))
rows.sort(key=lambda r: (r[0].split("-")[0], int(r[0].split("-")[1]), r[1]))
print(f"Zero-shot transfer, {run}: step ms\n")
print("| held-out graph | seed | one GPU | zero-shot, argmax | zero-shot, balanced | m-ETF |")
print("|---|---|---:|---:|---:|---:|")
fmt = lambda v: "-" if v is None else f"{v:.2f}"
for r in rows:
    print(f"| {r[0]} | {r[1]} | " + " | ".join(fmt(v) for v in r[2:]) + " |")
n = len(rows)
better = sum(1 for r in rows if r[2] and r[3] and r[3] < r[2] * 0.999)
bal_metf = sum(1 for r in rows if r[4] and r[5] and r[4] <= r[5])
arg_metf = sum(1 for r in rows if r[3] and r[5] and r[3] <= r[5])
print(f"\nArgmax decode better than one GPU on {better} of {n}; at or below m-ETF: balanced decode on "
      f"{bal_metf} of {n}, argmax on {arg_metf} of {n}.")
