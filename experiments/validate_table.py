#!/usr/bin/env python3
"""The out-of-sample table of `aware validate --protocol out-of-sample -o V.json`:
one row per model, set and simulator (median and max error, Kendall tau with its
bootstrap 90% interval, the two trivial predictors beside them), the run-to-run
spread, and the measured against the predicted peak memory where the executor
measured it. Prints the Markdown and writes it to OUT.md.
    experiments/validate_table.py V.json OUT.md
Used by scripts/hw-validate (cpu) and scripts/gpu-check (cuda)."""
import json
import statistics
import sys


def main(path, out):
    doc = json.load(open(path))
    lines = ["| model | set | n | simulator | median err | max err | Kendall tau [90% CI] | "
             "mean-step predictor: median err | cut-edges predictor: tau |",
             "|---|---|---:|---|---:|---:|---|---:|---:|"]
    for s in doc["summary"]:
        lo, hi = s["kendall_tau_90"]
        lines.append(f"| {s['model']} | {s['set']} | {s['count']} | {s['simulator']} | "
                     f"{100 * s['median_abs_rel_error']:.1f}% | {100 * s['max_abs_rel_error']:.1f}% | "
                     f"{s['kendall_tau']:.2f} [{lo:.2f}, {hi:.2f}] | "
                     f"{100 * s['mean_step_median_abs_rel_error']:.1f}% | {s['cut_edges_kendall_tau']:.2f} |")
    lines.append("")
    lines.append("Run-to-run spread (median IQR/median over placements): "
                 f"{100 * doc['measurement_spread_median_iqr_over_median']:.2f}%")
    # Peak memory: the largest device's measured bytes against each simulator's prediction.
    ratios = {}
    for row in doc.get("rows", []):
        measured = row.get("measured_peak_bytes", -1)
        if measured is None or measured <= 0:
            continue
        for sim, predicted in row.get("predicted_peak_bytes", {}).items():
            if predicted > 0:
                ratios.setdefault(sim, []).append(measured / predicted)
    for sim, r in sorted(ratios.items()):
        lines.append(f"Peak memory, measured / {sim}'s prediction over {len(r)} runs: median "
                     f"{statistics.median(r):.3f}, range {min(r):.3f}-{max(r):.3f}")
    text = "\n".join(lines) + "\n"
    open(out, "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
