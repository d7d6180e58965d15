#!/usr/bin/env python3
"""Simulators against measured steps on the cpu executor: runs a-d side by side.

Reads what the commands wrote for each run and nothing else:
  experiments/results/hw-cpu-{a,b,c}/validate.md, validate-*.md  (aware validate,
      and aware validate --measured for the replays), validate.json, calibration.json
  experiments/results/reproduce-small-hardware/REPORT.md           (aware reproduce, run d)
  experiments/results/hw-cpu-search/curve.csv                      (aware search --curve)
and writes experiments/results/hw-cpu-summary.md, which docs/results/hw-cpu.md links.
tests/results/check_tables.py rebuilds it and compares to the byte.

  experiments/tables/hw_cpu.py [--root ROOT] [-o OUT]
"""
import csv
import json
import os
import re

from mdtable import find_row, main, read_table, table

OUT = "experiments/results/hw-cpu-summary.md"
MODELS = ("resnet50", "rnnlm", "transformer")
RUNS = ("a", "b", "c")


def tau(row):
    return row.get("Kendall tau", row.get("Kendall τ"))


class Validation:
    """One validate*.md table: pooled and per-model rows by simulator."""

    def __init__(self, path):
        self.path = path
        self.rows = read_table(path)

    def row(self, graph, simulator):
        return find_row(self.rows, self.path, graph=graph, simulator=simulator)

    def per_model_tau(self, simulator):
        return ", ".join(tau(self.row(m, simulator)) for m in MODELS)


def run_dir(root, run):
    return os.path.join(root, "experiments", "results", f"hw-cpu-{run}")


def side_by_side_ab(root):
    v = {r: Validation(os.path.join(run_dir(root, r), "validate.md")) for r in "ab"}
    replay = {r: Validation(os.path.join(run_dir(root, r), "validate-replay.md")) for r in "ab"}
    settings = [("analytic, calibrated", v, "analytic"),
                ("SimGrid, calibrated (fixed analytic order, as run; `validate.md`)", v, "simgrid"),
                ("SimGrid, calibrated, ready-first (predicted again; `validate-replay.md`)", replay, "simgrid"),
                ("analytic, uncalibrated (`preset:cpu-host`, roofline)", v, "uncalibrated")]
    rows = []
    for label, source, sim in settings:
        a, b = source["a"].row("all", sim), source["b"].row("all", sim)
        rows.append([label] + [f"{a[c]} / {b[c]}" for c in ("median abs error", "mean", "max")] +
                    [f"{tau(a)} / {tau(b)}", source["a"].per_model_tau(sim), source["b"].per_model_tau(sim)])
    return table(["simulator", "median abs error (run a / b)", "mean", "max", "Kendall τ, all 42 (a / b)",
                  "τ per model, run a", "τ per model, run b"], rows, right=(1, 2, 3, 4))


def spread(root, run):
    with open(os.path.join(run_dir(root, run), "validate.json"), encoding="utf-8") as f:
        return "%.1f%%" % (100 * json.load(f)["measurement_spread_median_iqr_over_median"])


def run_d(root):
    """Run d's pooled and per-model rows, calibration line and spread, from its generated report."""
    path = os.path.join(root, "experiments", "results", "reproduce-small-hardware", "REPORT.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## hardware"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    rows = read_table(path, first_column="graph")
    m = re.search(r"spread \(median IQR / median over a placement's steps\): ([\d.]+%)", section)
    cal = re.search(r"^Calibration: (.*)$", section, re.MULTILINE)
    if not m or not cal:
        raise ValueError(f"{path}: its hardware section names no spread or calibration")
    return path, rows, m.group(1), cal.group(1)


def every_run(root):
    files = {"a": [("copies on links (`validate.md`)", "validate.md"),
                   ("copies on the consumer, no slowdowns recorded (`validate-consumer.md`)", "validate-consumer.md")],
             "b": [("copies on links (`validate.md`)", "validate.md"),
                   ("+ slowdowns (`validate-interference.md`)", "validate-interference.md"),
                   ("+ copies on the consumer (`validate-consumer.md`)", "validate-consumer.md")],
             "c": [("copies on links (`validate.md`)", "validate.md"),
                   ("+ slowdowns (`validate-interference.md`)", "validate-interference.md"),
                   ("+ copies on the consumer (`validate-consumer.md`)", "validate-consumer.md")]}
    rows = []
    for run in RUNS:
        for label, name in files[run]:
            v = Validation(os.path.join(run_dir(root, run), name))
            a = v.row("all", "analytic")
            rows.append([run, label, a["median abs error"], a["mean"], a["max"], tau(a),
                         v.per_model_tau("analytic"), spread(root, run)])
    path, d_rows, d_spread, _ = run_d(root)
    for label, sim in [("copies on links (`REPORT.md`)", "analytic"),
                       ("slowdowns + copies on the consumer (`REPORT.md`)",
                        "analytic, slowdowns + copies on the consumer")]:
        a = find_row(d_rows, path, graph="all", simulator=sim)
        per_model = ", ".join(tau(find_row(d_rows, path, graph=m, simulator=sim)) for m in MODELS)
        rows.append(["d", label, a["median abs error"], a["mean"], a["max"], tau(a), per_model, d_spread])
    return table(["run", "analytic, calibrated", "median abs error", "mean", "max", "τ pooled",
                  "τ per model (resnet50, rnnlm, transformer)", "measured spread"], rows, right=(2, 3, 4, 5, 7))


def measured(root):
    rows = []
    for run in RUNS:
        with open(os.path.join(run_dir(root, run), "validate.json"), encoding="utf-8") as f:
            doc = json.load(f)
        cells = []
        ratios = []
        for model in MODELS:
            ms = [r["measured_us"] / 1e3 for r in doc["rows"] if r["graph"] == model]
            if not ms:
                raise ValueError(f"{run_dir(root, run)}/validate.json: no row for graph '{model}'")
            cells.append("%.0f–%.0f (%.2f×)" % (min(ms), max(ms), max(ms) / min(ms)))
            ratios += [r["predicted_us"]["uncalibrated"] / r["measured_us"] for r in doc["rows"] if r["graph"] == model]
        with open(os.path.join(run_dir(root, run), "calibration.json"), encoding="utf-8") as f:
            cal = json.load(f)
        gemm = [g["flops_per_s"] / 1e9 for g in cal["gemm"]]
        two = ("×%.2f / ×%.2f" % (cal["concurrent_gemm_slowdown"], cal["concurrent_stream_slowdown"])
               if "concurrent_gemm_slowdown" in cal else "not measured")
        copies = ", ".join("%.1f" % (c["bandwidth_Bps"] / 1e9) for c in cal["copies"])
        rows.append([run] + cells + ["%.2f–%.2f×" % (min(ratios), max(ratios)),
                                     "%.1f–%.1f" % (min(gemm), max(gemm)), "%.1f" % (cal["memory_Bps"] / 1e9),
                                     copies, two])
    return table(["run", "resnet50 ms, min–max (max/min)", "rnnlm ms", "transformer ms",
                  "uncalibrated predicted / measured", "GEMM GFLOP/s (64–1024)", "streaming GB/s",
                  "copies GB/s (cpu0→cpu1, cpu1→cpu0)", "two at once: GEMM / streaming"],
                 rows, right=(1, 2, 3, 4, 5, 6))


def search(root):
    path = os.path.join(root, "experiments", "results", "hw-cpu-search", "curve.csv")
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    first, last = rows[0], rows[-1]
    return ("Hardware-in-the-loop search (`experiments/results/hw-cpu-search/curve.csv`, `aware search "
            "--evaluator cpu --curve`): best measured step %.1f ms after %s evaluations (first curve point: "
            "%.1f ms after %s); the last curve point is at %s evaluations, %.1f s." % (
                float(last["best_step_us"]) / 1e3, next(r["evaluations"] for r in rows
                                                        if r["best_step_us"] == last["best_step_us"]),
                float(first["best_step_us"]) / 1e3, first["evaluations"], last["evaluations"],
                float(last["seconds"])))


def generate(root):
    _, _, d_spread, d_cal = run_d(root)
    parts = [
        "# Simulators against measured steps (cpu executor): the runs side by side",
        "",
        "Generated by `experiments/tables/hw_cpu.py` from the files `aware validate`, `aware validate "
        "--measured` and `aware reproduce` wrote in `hw-cpu-a/`, `hw-cpu-b/`, `hw-cpu-c/` and "
        "`reproduce-small-hardware/` (run d); do not edit by hand. 14 placements of each of 3 models, "
        "42 in all; errors are |predicted − measured| / measured.",
        "",
        "## Runs a and b, as measured",
        "",
        side_by_side_ab(root),
        "",
        "## The analytic simulator with the options added for what it missed, every run",
        "",
        every_run(root),
        "",
        "## Measured steps and calibration",
        "",
        "Measured step per model, min–max over its 14 placements (and their ratio), from `validate.json`; "
        "the calibration from `calibration.json`.",
        "",
        measured(root),
        "",
        f"Run d (`reproduce-small-hardware/REPORT.md`): {d_cal} Measured spread {d_spread}.",
        "",
        search(root),
        "",
    ]
    return "\n".join(parts)


if __name__ == "__main__":
    main(generate, OUT, __doc__)
