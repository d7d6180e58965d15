#!/usr/bin/env python3
"""What a learned agent's curve says about collapse and late learning.

    curve_summary.py CURVE.csv [CURVE.csv ...] [--at 2000]

For each curve (the trainer's CSV: evaluations, seconds, mean_step_us,
best_step_us, entropy, ...): the best step at `--at` evaluations and at the end,
the entropy per decision at the start, at half the run and at the end, and the
first evaluation count where the entropy fell below 10% of its start (the issue's
collapse criterion), and the spread of the last update's sampled steps (0: every
sample the same placement's time). Prints one markdown row per curve."""
import csv
import os
import sys


def summary(path, at):
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return None
    evals = [int(float(r["evaluations"])) for r in rows]
    best = [float(r["best_step_us"]) / 1e3 for r in rows]
    ent = [float(r["entropy"]) for r in rows]
    last = evals[-1]

    def best_at(n):
        xs = [b for e, b in zip(evals, best) if e <= n]
        return xs[-1] if xs else float("nan")

    def entropy_at(n):
        xs = [h for e, h in zip(evals, ent) if e <= n]
        return xs[-1] if xs else float("nan")

    start = ent[0]
    below = next((e for e, h in zip(evals, ent) if h < 0.1 * start), None)
    return {
        "curve": os.path.basename(path).replace(".curve.csv", ""),
        "best_at": best_at(at),
        "best_end": best[-1],
        "end": last,
        "h0": start,
        "h_half": entropy_at(last // 2),
        "h_end": ent[-1],
        "below": below,
        "seconds": float(rows[-1]["seconds"]),
        # The last update's sampled placements: slowest minus fastest over their
        # mean (0 when every sample is the same placement's time: collapsed).
        "spread": (float(rows[-1]["max_step_us"]) - float(rows[-1]["min_step_us"])) / float(rows[-1]["mean_step_us"]),
    }


def main(argv):
    at = 2000
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--at":
            at = int(argv[i + 1])
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    print(f"| run | best at {at} (ms) | best at the end (ms) | evaluations | entropy: start / half / end "
          f"| entropy < 10% of start from | spread of the last samples | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for p in paths:
        s = summary(p, at)
        if s is None:
            continue
        below = f"{s['below']:,}" if s["below"] is not None else "never"
        print(f"| {s['curve']} | {s['best_at']:.1f} | {s['best_end']:.1f} | {s['end']:,} | "
              f"{s['h0']:.3f} / {s['h_half']:.3f} / {s['h_end']:.4f} | {below} | {100 * s['spread']:.1f}% | "
              f"{s['seconds']:.0f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
