#!/usr/bin/env python3
"""How far a search can go in the space Aware searches: Table 1's rows, the
strongest search (anneal-graph, 20,000 evaluations) on the full graph and on
Aware's fused graph with every candidate scored on the full graph (as Aware's
episodes are), beside Aware's own best.

Data: experiments/results/fused-ceiling/<space>-k40x<D>.json, written by
  aware fuse report --models inception_v3,resnet50,nasnet,nmt4,gnmt --cluster k40xD \\
      --target-size 200 --method anneal-graph --budget-evals 20000 --json -o groups200-k40xD.json
  (the same with --threshold 3 --target-size 400 for t3-groups400-k40xD.json)
and Aware's cells in experiments/results/aware-defaults/cells (variant noelite, the default
before 2026-12-07, and fine: threshold=3 groups=400).

  experiments/fused_ceiling.py [--root REPO]      prints the Markdown table
"""
import argparse
import json
import os

MODELS = ["inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"]
DEVICES = [2, 4, 8]


def load_space(root, space, d):
    path = os.path.join(root, "experiments/results/fused-ceiling", f"{space}-k40x{d}.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {r["model"]: r for r in json.load(f)}


def cell(root, model, d, variant, budget):
    path = os.path.join(root, "experiments/results/aware-defaults/cells",
                        f"{model}__k40x{d}__{variant}__e{budget}__s1.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["step_time_us"] / 1e3


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    root = args.root
    print("Anneal-graph at 20,000 evaluations (seed 1, analytic, contention) on the full graph and in "
          "Aware's search space: its fused graph, each candidate expanded and scored on the full graph "
          "as Aware's episodes are. Steps in ms; ceiling ratio = fused search / full-graph search. "
          "Aware (seed 1): its default before 2026-12-07 (`noelite`, 200 groups) at 2,000 and 20,000 evaluations, and `fine` "
          "(threshold 3, at most 400 groups) at 2,000.\n")
    print("| model | K40s | ops | groups | anneal-graph, full graph | in Aware's space | ceiling ratio | "
          "groups (fine) | in the fine space | ceiling ratio (fine) | Aware noelite, 2,000 | "
          "Aware noelite, 20,000 | Aware fine, 2,000 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    reachable = 0
    reachable_fine = 0
    rows = 0
    for m in MODELS:
        for d in DEVICES:
            r = load_space(root, "groups200", d).get(m)
            f = load_space(root, "t3-groups400", d).get(m)
            if r is None:
                continue
            rows += 1
            full = r["fine_step_us"] / 1e3
            space = r["fine_scored_step_us"] / 1e3
            ratio = space / full
            reachable += ratio <= 1.005
            fine_cols = ["-", "-", "-"]
            if f is not None:
                fr = f["fine_scored_step_us"] / f["fine_step_us"]
                reachable_fine += fr <= 1.005
                fine_cols = [str(f["fused_ops"]), fmt(f["fine_scored_step_us"] / 1e3), f"{fr:.3f}"]
            print(f"| {m} | {d} | {r['ops']} | {r['fused_ops']} | {full:.1f} | {space:.1f} | {ratio:.3f} | "
                  + " | ".join(fine_cols)
                  + f" | {fmt(cell(root, m, d, 'noelite', 2000))} | {fmt(cell(root, m, d, 'noelite', 20000))} | {fmt(cell(root, m, d, 'fine', 2000))} |")
    print(f"\nRows where the search in Aware's 200-group space reaches the full graph's step (ratio at "
          f"most 1.005): {reachable} of {rows}; in the fine space: {reachable_fine}.")


if __name__ == "__main__":
    main()
