#!/usr/bin/env python3
"""The table of experiments/aware_defaults.sh's cells: aware_defaults_table.py
CELLS_DIR BUDGET prints, per model and cluster, each variant's best step (mean ±
std over seeds) and seconds per run, at that budget."""
import json, os, statistics, sys
out, budget = sys.argv[1], sys.argv[2]
rows = {}
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"): continue
    m, dev, v, e, s = f[:-5].split("__")
    if e != "e" + budget: continue
    d = json.load(open(os.path.join(out, f)))
    rows.setdefault((m, dev), {}).setdefault(v, []).append((d["step_time_us"] / 1e3, d.get("wall_seconds", 0)))
variants = sorted({v for r in rows.values() for v in r}, key=lambda v: (v not in ("default", "floor"), v != "default", v))
print(f"Aware variants at {budget} evaluations: best step, ms, mean ± std over seeds (seconds per run)\n")
print("| model | devices | " + " | ".join(variants) + " |")
print("|---|---|" + "---|" * len(variants))
for (m, dev), r in sorted(rows.items()):
    cells = []
    for v in variants:
        xs = r.get(v, [])
        if not xs: cells.append("-"); continue
        ms = [x for x, _ in xs]
        sd = statistics.pstdev(ms) if len(ms) > 1 else 0.0
        cells.append(f"{statistics.mean(ms):.1f} ± {sd:.1f} ({statistics.mean(t for _, t in xs):.0f} s, n={len(ms)})")
    print(f"| {m} | {dev} | " + " | ".join(cells) + " |")
