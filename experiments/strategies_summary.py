#!/usr/bin/env python3
"""Condenses the what-to-run JSON tables (experiments/strategies_table.sh) into one
Markdown table: per model and cluster the single device, the best placement, each
strategy family's best, and the winner (bagging trains other models: never the winner).
   experiments/strategies_summary.py [dir] [evaluator]"""
import json
import os
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "experiments/results/strategies"
evaluator = sys.argv[2] if len(sys.argv) > 2 else "analytic"
clusters = ["k40x4", "dgx-v100", "multi-node-2x8"]
families = [("dp", lambda m: m.startswith("dp")), ("hybrid", lambda m: m.startswith("hybrid")),
            ("pipeline", lambda m: m.startswith("pipeline"))]
print("| model | cluster | single ms | best placement ms | best dp ms | hybrid ms | pipeline ms | winner | speed-up over single |")
print("|---|---|---|---|---|---|---|---|---|")
for cluster in clusters:
    path = os.path.join(root, f"what-to-run-{cluster}-{evaluator}.json")
    if not os.path.exists(path):
        continue
    doc = json.load(open(path))
    strategies = set(doc.get("strategies", []))
    for row in doc["rows"]:
        ok = {r["method"]: r["step_time_us"] / 1e3 for r in row["results"] if r["status"] == "ok"}
        def best(pred):
            cands = [(t, m) for m, t in ok.items() if pred(m)]
            return min(cands) if cands else None
        def cell(b, name=True):
            if b is None:
                return "-"
            return f"{b[0]:.1f} ({b[1]})" if name else f"{b[0]:.1f}"
        single = ok.get("single")
        placed = best(lambda m: m not in strategies)
        status = {r["method"]: r["status"] for r in row["results"]}
        def family_cell(pred):
            b = best(pred)
            if b is not None:
                return cell(b)
            failed = sorted({st for m, st in status.items() if pred(m)})
            return "/".join(failed).upper() if failed else "-"
        cells = [family_cell(p) for _, p in families]
        winner = row.get("winner") or "-"
        speed = f"{single / ok[winner]:.2f}x" if single and winner in ok else "-"
        print(f"| {row['model']} | {cluster} | {single:.1f} | {cell(placed)} | " + " | ".join(cells) +
              f" | {winner} | {speed} |")
