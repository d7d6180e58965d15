#!/usr/bin/env python3
"""Candidate configurations of a learned agent side by side at one long budget: which to make the default.

    aware_decision.py [--budget 20000] [--seed 1[,2,...]] [--at 2000] [--variants noelite,around97,elite10]

Reads experiments/results/aware-defaults/cells (runs of experiments/aware_defaults.sh)
and `anneal-graph` at the same budget and seed from the agents-vs-searches study's
packed cells. For each of Table 1's rows where every variant has a cell: each variant's
best step at `--at` evaluations (from its curve) and at the end, and `anneal-graph`'s.
Then, per variant, over those rows: how often its best at the end is below its best at
`--at` (the issue's no-collapse count), at or below `anneal-graph` (within 0.5%), the
lowest of the variants (within 0.5% of the lowest counts as lowest), and its entropy per
decision below a tenth of its start at some report before half the budget (the issue's
"stays above" read strictly) and at the last report before half (variants whose entropy
column is a sampling mixture's, `around*`, are marked n/a). Prints markdown. Run from the
repository root. With several seeds (--seed 1,2) it prints that for each seed, then the
rows where every variant ran every seed: each variant's mean best at the end, the counts
on those means, and per pair of variants how many (row, seed) runs the one ends below the
other."""
import gzip
import json
import os
import sys

from curve_summary import summary  # the curve's best at a count, entropy and first fall

MODELS = ["inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"]
CELLS = "experiments/results/aware-defaults/cells"


def one_seed(budget, seed, at, variants, packed):
    """The per-seed table (printed) and {(model, n): {variant: best at the end}} for its rows."""
    fields = ("improves", "at_or_below", "lowest", "collapsed", "low_at_half", "entropy_rows", "seconds")
    counts = {v: dict.fromkeys(fields, 0) for v in variants}
    lines, rows, ends = [], 0, {}
    for m in MODELS:
        for n in (2, 4, 8):
            key = f"{m}__k40x{n}__anneal-graph__e{budget}__s{seed}.json"
            if key not in packed:
                continue
            ref = json.loads(packed[key])["step_time_us"] / 1e3
            found = {}
            for v in variants:
                stem = os.path.join(CELLS, f"{m}__k40x{n}__{v}__e{budget}__s{seed}")
                if not (os.path.exists(stem + ".json") and os.path.exists(stem + ".curve.csv")):
                    break
                cell = json.load(open(stem + ".json"))
                c = summary(stem + ".curve.csv", at)
                # The entropy per decision below a tenth of its start at some report
                # before half the budget (the "stays above" read strictly),
                # and at the last report before half (curve_summary's h_half).
                collapsed = (c["below"] is not None and c["below"] <= int(budget) // 2, c["h_half"] < 0.1 * c["h0"])
                found[v] = (c["best_at"], cell["step_time_us"] / 1e3, cell.get("wall_seconds", 0.0), collapsed)
            if len(found) < len(variants):
                continue
            rows += 1
            ends[(m, n)] = ({v: found[v][1] for v in variants}, ref)
            lowest = min(end for _, end, _, _ in found.values())
            cells = []
            for v in variants:
                early, end, seconds, collapsed = found[v]
                c = counts[v]
                c["improves"] += end < early * (1 - 1e-6)  # not a last digit of the CSV
                c["at_or_below"] += end <= ref * 1.005
                c["lowest"] += end <= lowest * 1.005
                c["seconds"] += seconds
                if not v.startswith("around"):
                    c["entropy_rows"] += 1
                    c["collapsed"] += collapsed[0]
                    c["low_at_half"] += collapsed[1]
                mark = "**" if end <= lowest * 1.005 else ""
                cells.append(f"{early:.1f} / {mark}{end:.1f}{mark}")
            lines.append(f"| {m} | {n} | " + " | ".join(cells) + f" | {ref:.1f} |")

    print(f"The candidate configurations ({', '.join(variants)}) at {int(budget):,} evaluations, seed {seed}: "
          f"best step (ms) at {at:,} (from the curve) / at the end (the run's result, its greedy decode included) "
          f"(bold: the lowest of the variants, within 0.5%), beside `anneal-graph` at {int(budget):,}.\n")
    print("| model | K40s | " + " | ".join(variants) + " | anneal-graph |")
    print("|---|---|" + "---|" * (len(variants) + 1))
    for line in lines:
        print(line)
    print(f"\nOver the {rows} rows where every variant ran:\n")
    print("| | " + " | ".join(variants) + " |")
    print("|---|" + "---|" * len(variants))
    print(f"| best at the end below its best at {at:,} | " +
          " | ".join(str(counts[v]["improves"]) for v in variants) + " |")
    print("| at or below `anneal-graph` (within 0.5%) | " +
          " | ".join(str(counts[v]["at_or_below"]) for v in variants) + " |")
    print("| the lowest of the variants (within 0.5%) | " +
          " | ".join(str(counts[v]["lowest"]) for v in variants) + " |")
    print("| entropy below a tenth of its start at some report before half the budget | " +
          " | ".join(str(counts[v]["collapsed"]) if counts[v]["entropy_rows"] else "n/a" for v in variants) + " |")
    print("| entropy below a tenth of its start at half the budget | " +
          " | ".join(str(counts[v]["low_at_half"]) if counts[v]["entropy_rows"] else "n/a" for v in variants) + " |")
    print("| wall-clock, summed over the rows (s; runs not all alone) | " +
          " | ".join(f"{counts[v]['seconds']:,.0f}" for v in variants) + " |")
    return ends


def across_seeds(budget, seeds, variants, per_seed):
    """Rows where every variant ran every seed: means, counts on the means, and pairwise wins."""
    keys = [k for k in per_seed[0] if all(k in ends for ends in per_seed)]
    print(f"\n## Seeds {', '.join(seeds)} together\n")
    print(f"The {len(keys)} rows where every variant ran seeds {', '.join(seeds)}: the mean over the seeds of "
          f"each variant's best step (ms) at {int(budget):,} (bold: the lowest, within 0.5%), beside "
          "`anneal-graph`'s mean.\n")
    print("| model | K40s | " + " | ".join(variants) + " | anneal-graph |")
    print("|---|---|" + "---|" * (len(variants) + 1))
    at_or_below = dict.fromkeys(variants, 0)
    lowest_count = dict.fromkeys(variants, 0)
    for k in keys:
        mean = {v: sum(ends[k][0][v] for ends in per_seed) / len(seeds) for v in variants}
        ref = sum(ends[k][1] for ends in per_seed) / len(seeds)
        lowest = min(mean.values())
        cells = []
        for v in variants:
            mark = "**" if mean[v] <= lowest * 1.005 else ""
            cells.append(f"{mark}{mean[v]:.1f}{mark}")
            at_or_below[v] += mean[v] <= ref * 1.005
            lowest_count[v] += mean[v] <= lowest * 1.005
        print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + f" | {ref:.1f} |")
    print(f"\nOn the means over the {len(keys)} rows:\n")
    print("| | " + " | ".join(variants) + " |")
    print("|---|" + "---|" * len(variants))
    print("| at or below `anneal-graph` (within 0.5%) | " + " | ".join(str(at_or_below[v]) for v in variants) + " |")
    print("| the lowest of the variants (within 0.5%) | " + " | ".join(str(lowest_count[v]) for v in variants) + " |")
    print(f"\nRuns (row and seed, {len(keys) * len(seeds)} of them) where the first ends below the second "
          "by more than 0.5%:\n")
    print("| first | second | below | within 0.5% | above |")
    print("|---|---|---|---|---|")
    for i, a in enumerate(variants):
        for b in variants[i + 1:]:
            below = within = above = 0
            for k in keys:
                for ends in per_seed:
                    x, y = ends[k][0][a], ends[k][0][b]
                    if x < y * 0.995:
                        below += 1
                    elif x > y * 1.005:
                        above += 1
                    else:
                        within += 1
            print(f"| {a} | {b} | {below} | {within} | {above} |")


def main(argv):
    budget, seeds, at = "20000", ["1"], 2000
    variants = ["noelite", "around97", "elite10"]
    for i in range(0, len(argv) - 1, 2):
        flag, value = argv[i], argv[i + 1]
        if flag == "--budget":
            budget = value
        elif flag == "--seed":
            seeds = value.split(",")
        elif flag == "--at":
            at = int(value)
        elif flag == "--variants":
            variants = value.split(",")
        else:
            sys.exit(f"error: aware_decision.py: unknown argument '{flag}'")
    with gzip.open("experiments/results/agents-vs-searches/cells.pack.json.gz", "rt", encoding="utf-8") as f:
        packed = json.load(f)["files"]
    per_seed = []
    for i, seed in enumerate(seeds):
        if i > 0:
            print()
        per_seed.append(one_seed(budget, seed, at, variants, packed))
    if len(seeds) > 1:
        across_seeds(budget, seeds, variants, per_seed)


if __name__ == "__main__":
    main(sys.argv[1:])
