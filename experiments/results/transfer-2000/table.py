#!/usr/bin/python3
"""The balanced zero-shot against Aware from scratch at 2,000 evaluations (run.sh's runs), per
held-out graph and seed: one GPU and the zero-shot from the `aware reproduce --budget small`
3-seed study's cells (../reproduce-small-3seeds-b, loose or packed), from scratch from this
folder's run.sh JSON. Writes TABLE.md beside this script (or OUT); '-' = not run.

  experiments/results/transfer-2000/table.py [OUT]"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import cellpack  # noqa: E402  experiments/cellpack.py: the reader of packed cells

cells = cellpack.CellFiles(os.path.join(here, "..", "reproduce-small-3seeds-b", "cells"))
out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "TABLE.md")


def cell_ms(name):
    text = cells.read(name)
    return None if text is None else json.loads(text)["step_time_us"] / 1e3


def file_ms(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)["step_time_us"] / 1e3


f2 = lambda v: "-" if v is None else "%.2f" % v
lines = ["# Zero-shot against Aware from scratch at 2,000 evaluations (dgx-v100)", "",
         "`run.sh`, then `table.py` (do not edit by hand): one GPU and the balanced zero-shot from the "
         "`aware reproduce --budget small` pre-training at 3 seeds (`../reproduce-small-3seeds-b`, its cells), "
         "from scratch from this folder's JSON; the ratio from the unrounded step times.", "",
         "| held-out graph | seed | one GPU ms | zero-shot, balanced ms | from scratch, 2,000 evaluations ms "
         "| zero-shot / from scratch |", "|---|---|---:|---:|---:|---:|"]
n = within = 0
for fam in ("cifar10", "ptb"):
    for m in (4, 8, 12):
        g = "%s-%d" % (fam, m)
        for s in (1, 2, 3):
            one = cell_ms("simulate__%s__dgx-v100__single__s1__e0.json" % g)
            zb = cell_ms("search__%s__dgx-v100__aware__zero-shot-balanced__s%d__e0.json" % (g, s))
            sc = file_ms(os.path.join(here, "%s__s%d.json" % (g, s)))
            ratio = None if zb is None or sc is None else zb / sc
            if ratio is not None:
                n += 1
                within += ratio <= 1.10
            lines.append("| %s | %d | %s | %s | %s | %s |" % (
                g, s, f2(one), f2(zb), f2(sc), "-" if ratio is None else "%.3f" % ratio))
lines += ["", "Zero-shot (balanced decode, one evaluation) within 10%% of a from-scratch 2,000-evaluation Aware "
          "search on %d of %d." % (within, n), ""]
with open(out_path, "w", encoding="utf-8") as f:
    f.write("\n".join(lines))
