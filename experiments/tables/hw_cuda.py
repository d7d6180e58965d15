#!/usr/bin/env python3
"""Simulators against measured steps on one H200 (cuda executor): base and scaled side by side.

Reads what the commands wrote in experiments/results/gpu/{base,scaled}/ and nothing else:
  replay-asrun.md, replay-noslow.md, replay-links.md, replay.md   (experiments/results/gpu/replay.sh,
                                                                   i.e. aware validate --measured)
  validate.json (the measured steps), calibration.json, cuda-tests.log      (scripts/gpu-check)
and writes experiments/results/gpu/SUMMARY.md, which docs/results/hw-cuda-h200.md links.
tests/results/check_tables.py rebuilds it and compares to the byte.

  experiments/tables/hw_cuda.py [--root ROOT] [-o OUT]
"""
import json
import os
import re

from mdtable import find_row, main, read_table, table

OUT = "experiments/results/gpu/SUMMARY.md"
RUNS = ("base", "scaled")
MODELS = ("nmt2", "rnnlm")
SETTINGS = [  # label, file, simulator
    ("as the run printed (cost table with clashing names, slowdowns, copies on links; `replay-asrun.md`)",
     "replay-asrun.md", "analytic"),
    ("scoped cost table, devices independent (`replay-noslow.md`)", "replay-noslow.md", "analytic"),
    ("+ calibrated slowdowns (`replay-links.md`)", "replay-links.md", "analytic"),
    ("+ copies on the consumer's stream, `copies=consumer` (`replay.md`)", "replay.md", "analytic"),
    ("SimGrid, ready-first (no slowdowns, copies on links; `replay.md`)", "replay.md", "simgrid"),
]


def gpu_dir(root, run):
    return os.path.join(root, "experiments", "results", "gpu", run)


def tau2(text):
    """Kendall τ to two decimals, as the table prints it (−, not -, for negatives)."""
    return ("%.2f" % float(text)).replace("-", "−")


def replay_table(root):
    rows = []
    for label, name, sim in SETTINGS:
        row = [label]
        for run in RUNS:
            path = os.path.join(gpu_dir(root, run), name)
            rs = read_table(path)
            pooled = find_row(rs, path, graph="all", simulator=sim)
            per_model = ", ".join(tau2(find_row(rs, path, graph=m, simulator=sim)["Kendall tau"]) for m in MODELS)
            row += [pooled["median abs error"], "%s (%s)" % (tau2(pooled["Kendall tau"]), per_model)]
        rows.append(row)
    return table(["analytic simulator settings", "base: median err", "τ pooled (nmt2, rnnlm)",
                  "scaled: median err", "τ pooled (nmt2, rnnlm)"], rows, right=(1, 3))


def measured_table(root):
    rows = []
    for run in RUNS:
        with open(os.path.join(gpu_dir(root, run), "validate.json"), encoding="utf-8") as f:
            doc = json.load(f)
        for model in MODELS:
            steps = sorted((r["measured_us"] / 1e3, r["placement"]) for r in doc["rows"] if r["graph"] == model)
            if not steps:
                raise ValueError(f"{gpu_dir(root, run)}/validate.json: no row for graph '{model}'")
            fastest = steps[0][0]
            splits = [ms for ms, p in steps if not p.startswith("single")]
            rows.append([run, model, str(len(steps)), "%.1f–%.1f" % (steps[0][0], steps[-1][0]),
                         steps[0][1], "%.1f–%.1f%%" % (100 * (min(splits) / fastest - 1),
                                                       100 * (max(splits) / fastest - 1)),
                         "%.2f%%" % (100 * doc["measurement_spread_median_iqr_over_median"])])
    return table(["run", "model", "placements", "measured step, ms", "fastest",
                  "splits slower than the fastest by", "run's spread"], rows, right=(2, 3, 5, 6))


def calibration_table(root):
    rows = []
    for run in RUNS:
        with open(os.path.join(gpu_dir(root, run), "calibration.json"), encoding="utf-8") as f:
            cal = json.load(f)
        gemm = " / ".join("%.2f" % (g["flops_per_s"] / 1e12) for g in cal["gemm"])
        sizes = " / ".join(str(g["size"]) for g in cal["gemm"])
        copies = ", ".join("%s→%s %.2f TB/s + %.1f µs" % (c["src"], c["dst"], c["bandwidth_Bps"] / 1e12,
                                                        c["latency_us"]) for c in cal["copies"])
        rows.append([run, f"{gemm} (at {sizes})", "%.2f" % (cal["memory_Bps"] / 1e12),
                     "%.1f" % cal["launch_overhead_us"], copies,
                     "×%.2f / ×%.2f" % (cal["concurrent_gemm_slowdown"], cal["concurrent_stream_slowdown"])])
    return table(["run", "SGEMM TFLOP/s", "streaming TB/s", "launch µs", "copies between the logical devices",
                  "two at once: GEMM / streaming"], rows, right=(2, 3))


def tests_line(root):
    lines = []
    for run in RUNS:
        path = os.path.join(gpu_dir(root, run), "cuda-tests.log")
        with open(path, encoding="utf-8") as f:
            log = f.read()
        ran = re.search(r"\[==========\] (\d+) tests? from", log)
        passed = re.search(r"\[  PASSED  \] (\d+) tests?", log)
        skipped = re.search(r"\[  SKIPPED \] (\d+) tests?", log)
        if not (ran and passed):
            raise ValueError(f"{path}: no GoogleTest summary")
        lines.append("%s: %s of %s passed, %s skipped" % (run, passed.group(1), ran.group(1),
                                                          skipped.group(1) if skipped else "0"))
    return "CUDA tests on the GPU (`cuda-tests.log`): " + "; ".join(lines) + "."


def generate(root):
    return "\n".join([
        "# Simulators against measured steps (cuda executor, one H200): base and scaled side by side",
        "",
        "Generated by `experiments/tables/hw_cuda.py` from what `scripts/gpu-check` (on the GPU machine) and "
        "`experiments/results/gpu/replay.sh` (anywhere) wrote in `base/` (zoo nmt2 and rnnlm) and `scaled/` "
        "(nmt2 at batch 256, rnnlm at batch 512); do not edit by hand.",
        "",
        "## Median |error| and Kendall τ over each run's 18 placements",
        "",
        "The pooled rows (`all`) of each replay table, calibrated cluster + cost table; τ per model in brackets.",
        "",
        replay_table(root),
        "",
        "## Measured steps",
        "",
        measured_table(root),
        "",
        "## Calibration",
        "",
        calibration_table(root),
        "",
        tests_line(root),
        "",
    ])


if __name__ == "__main__":
    main(generate, OUT, __doc__)
