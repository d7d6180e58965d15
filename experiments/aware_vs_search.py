#!/usr/bin/env python3
"""Aware's default preset against the strongest search, row by row, at one budget.

    aware_vs_search.py [--budget 2000] [--seeds 1[,2,...]] [--variant default] [--beside VARIANT]

Reads experiments/results/aware-defaults/cells (Aware's default preset, runs of
experiments/aware_defaults.sh) and the agents-vs-searches study's packed cells
(experiments/results/agents-vs-searches: `anneal-graph` and the earlier Aware, same
budget and seeds; the searches are unaffected by the agents' change). Prints one
markdown row per Table 1 row (means over the seeds, each method over the same seeds)
and the count at or below `anneal-graph` (within 0.5%). With --beside, a column with
another variant's cells of the same budget and seeds, and the count of rows where the
variant is below it (by more than 0.5%) and above it.
Run from the repository root."""
import gzip
import json
import os
import sys

MODELS = ["inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"]


def main(argv):
    budget, seeds, variant, beside = "2000", ["1"], "default", None
    for i in range(0, len(argv) - 1, 2):
        if argv[i] == "--budget":
            budget = argv[i + 1]
        elif argv[i] == "--seeds":
            seeds = argv[i + 1].split(",")
        elif argv[i] == "--variant":
            variant = argv[i + 1]
        elif argv[i] == "--beside":
            beside = argv[i + 1]
    with gzip.open("experiments/results/agents-vs-searches/cells.pack.json.gz", "rt", encoding="utf-8") as f:
        packed = json.load(f)["files"]
    mine = "experiments/results/aware-defaults/cells"
    if not any(os.path.exists(os.path.join(mine, f"{m}__k40x{n}__{variant}__e{budget}__s{sd}.json"))
               for m in MODELS for n in (2, 4, 8) for sd in seeds):
        sys.exit(f"error: aware_vs_search.py: {mine} has no cell of variant '{variant}' at {budget} evaluations, "
                 f"seeds {','.join(seeds)} (the default preset's runs are named noelite before 2026-12-07, "
                 "elite10 since)")

    def step(name, text=None):
        if text is None:
            path = os.path.join(mine, name)
            if not os.path.exists(path):
                return None
            text = open(path).read()
        d = json.loads(text)
        return d.get("step_time_us", d.get("best_step_us")) / 1e3

    label = "seed " + seeds[0] if len(seeds) == 1 else "mean over seeds " + ", ".join(seeds)
    name = {"default": "default preset", "nonorm": "default preset before 2026-12-05, norm=off",
            "noelite": "default preset before 2026-12-07, no elite step"}.get(variant, variant)
    print(f"Aware ({name}) against `anneal-graph` at {budget} evaluations, {label}, step ms\n")
    extra = f" Aware, {beside} |" if beside else ""
    print(f"| model | devices | Aware, {name} |{extra} the earlier Aware | anneal-graph | Aware / anneal-graph |")
    print("|---|---|---|---|---|---|" + ("---|" if beside else ""))

    def mean(values):
        return sum(values) / len(values) if values and None not in values else None

    rows = wins = below = above = 0
    for m in MODELS:
        for n in (2, 4, 8):
            key = lambda method, seed: f"{m}__k40x{n}__{method}__e{budget}__s{seed}.json"
            new = mean([step(key(variant, sd)) for sd in seeds])
            if new is None:
                continue
            old = mean([step("", packed[key("aware", sd)]) if key("aware", sd) in packed else None for sd in seeds])
            ref = mean([step("", packed[key("anneal-graph", sd)]) if key("anneal-graph", sd) in packed else None
                        for sd in seeds])
            ratio = f"{new / ref:.3f}" if ref else "-"
            rows += 1
            if ref and new <= ref * 1.005:
                wins += 1
            fmt = lambda x: f"{x:.1f}" if x is not None else "-"
            cell = ""
            if beside:
                other = mean([step(key(beside, sd)) for sd in seeds])
                cell = f" {fmt(other)} |"
                if other is not None:
                    below += new < other * 0.995
                    above += new > other * 1.005
            print(f"| {m} | {n} | {fmt(new)} |{cell} {fmt(old)} | {fmt(ref)} | {ratio} |")
    print(f"\nAt or below `anneal-graph` (within 0.5%) on {wins} of {rows} rows.")
    if beside:
        print(f"Below {beside} (by more than 0.5%) on {below} of {rows} rows, above it on {above}.")


if __name__ == "__main__":
    main(sys.argv[1:])
