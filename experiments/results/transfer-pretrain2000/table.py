#!/usr/bin/python3
"""Pre-training at 2,000 evaluations per training graph against the small budget's 100
(run.sh's runs against ../reproduce-small-3seeds-b and ../transfer-2000): zero-shot with
both decodes, fine-tune, from scratch. Writes TABLE.md beside this script; '-' = not run.
The small budget's cells are read loose or packed (experiments/cellpack.py)."""
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", ".."))
import cellpack  # experiments/cellpack.py
small = cellpack.CellFiles(os.path.join(here, "..", "reproduce-small-3seeds-b", "cells"))
scratch = os.path.join(here, "..", "transfer-2000")
def ms(path):
    return json.load(open(path))["step_time_us"] / 1e3 if os.path.exists(path) else None
def cell_ms(name):
    text = small.read(name)
    return None if text is None else json.loads(text)["step_time_us"] / 1e3
f = lambda v: "-" if v is None else "%.2f" % v
lines = ["# Pre-training at 2,000 evaluations per training graph (dgx-v100)", "",
         "`run.sh` then `table.py`. *small*: the `aware reproduce --budget small` policies (100 evaluations "
         "per training graph); *2,000*: this folder's (18,000 over the 9 training graphs). From scratch and "
         "fine-tune: 2,000 evaluations.", "",
         "| graph | seed | one GPU | zero-shot argmax: small / 2,000 | zero-shot balanced: small / 2,000 "
         "| fine-tune: small / 2,000 | from scratch |", "|---|---|---:|---:|---:|---:|---:|"]
n = beat = within = 0
for s in (1, 2, 3):
    for fam in ("cifar10", "ptb"):
        for m in (4, 8, 12):
            g = "%s-%d" % (fam, m)
            one = cell_ms("simulate__%s__dgx-v100__single__s1__e0.json" % g)
            zs = cell_ms("search__%s__dgx-v100__aware__zero-shot__s%d__e0.json" % (g, s))
            zb = cell_ms("search__%s__dgx-v100__aware__zero-shot-balanced__s%d__e0.json" % (g, s))
            fs = ms(os.path.join(scratch, "%s__s%d__finetune.json" % (g, s)))
            z2 = ms(os.path.join(here, "%s__s%d__zero-shot.json" % (g, s)))
            b2 = ms(os.path.join(here, "%s__s%d__zero-shot-balanced.json" % (g, s)))
            f2 = ms(os.path.join(here, "%s__s%d__finetune.json" % (g, s)))
            sc = ms(os.path.join(scratch, "%s__s%d.json" % (g, s)))
            if b2 is None:
                continue
            n += 1
            beat += one is not None and b2 < one
            within += sc is not None and b2 <= 1.10 * sc
            lines.append("| %s | %d | %s | %s / %s | %s / %s | %s / %s | %s |" %
                         (g, s, f(one), f(zs), f(z2), f(zb), f(b2), f(fs), f(f2), f(sc)))
lines += ["", "With the 2,000-evaluation policies, the balanced zero-shot beats one GPU on %d of %d runs and is "
          "within 10%% of from scratch on %d of %d." % (beat, n, within, n), ""]
open(os.path.join(here, "TABLE.md"), "w").write("\n".join(lines))
print("\n".join(lines))
