#!/usr/bin/env python3
"""The table of experiments/transfer_pretrain.sh's cells: transfer_pretrain_table.py DIR
prints, per held-out family member and seed, one GPU, m-ETF (the one-pass heuristic
zero-shot placement competes with), the pre-trained policy's zero-shot placement with the
paper's argmax decode and with the load-aware balanced decode, fine-tuned from it and from
scratch (the same evaluations), then the counts issue 44 asks for. The same thresholds as
experiments/zero_shot_table.py: better than one GPU = more than 0.1% below it; at or below
m-ETF = not above it. '-' = not run (yet).

transfer_pretrain_table.py DIR --beside OTHER also compares, run by run (held-out member
and seed, where both have it), DIR's placements with OTHER's: how often DIR's step is
lower, the same (within 0.1%) or higher."""
import json
import os
import sys

if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--beside"):
    sys.exit("usage: transfer_pretrain_table.py DIR [--beside OTHER_DIR]")
run = sys.argv[1]
beside = sys.argv[3] if len(sys.argv) == 4 else None


def load(name, where=None):
    path = os.path.join(where or run, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def step(name, where=None):
    doc = load(name, where)
    return None if doc is None or not doc.get("feasible", True) else doc["step_time_us"] / 1e3


pre = {}
for fam in ("cifar10", "ptb"):
    for s in (1, 2, 3):
        doc = load(f"pretrain__{fam}__s{s}.json")
        if doc is not None:
            pre[(fam, s)] = doc
if not pre:
    sys.exit(f"error: {run}: no pre-training finished (pretrain__FAMILY__sSEED.json)")
evals = sorted({d["evaluations"] for d in pre.values()})
print(f"Transfer after pre-training at {', '.join(f'{e:,}' for e in evals)} evaluations over each family's 9 "
      f"training members (dgx-v100, analytic simulator; {run}): step ms. Fine-tune and from scratch: the "
      "same evaluations each.\n")
print("| held-out graph | seed | one GPU | m-ETF | zero-shot, argmax | zero-shot, balanced | fine-tuned | from scratch |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
fmt = lambda v: "-" if v is None else f"{v:.2f}"
rows = []
for fam in ("cifar10", "ptb"):
    for m in (4, 8, 12):
        g = f"{fam}-{m}"
        for s in (1, 2, 3):
            if (fam, s) not in pre:
                continue
            r = (step(f"{g}__single.json"), step(f"{g}__m-etf.json"), step(f"{g}__s{s}__zero-shot.json"),
                 step(f"{g}__s{s}__zero-shot-balanced.json"), step(f"{g}__s{s}__finetune.json"),
                 step(f"{g}__s{s}__scratch.json"))
            rows.append(r)
            print(f"| {g} | {s} | " + " | ".join(fmt(v) for v in r) + " |")


def count(test):
    usable = [r for r in rows if test(r) is not None]
    return sum(1 for r in usable if test(r)), len(usable)


def both(a, b, f):
    return None if a is None or b is None else f(a, b)


lines = [
    ("argmax zero-shot better than one GPU", lambda r: both(r[2], r[0], lambda z, one: z < one * 0.999)),
    ("balanced zero-shot better than one GPU", lambda r: both(r[3], r[0], lambda z, one: z < one * 0.999)),
    ("argmax zero-shot at or below m-ETF", lambda r: both(r[2], r[1], lambda z, e: z <= e)),
    ("balanced zero-shot at or below m-ETF", lambda r: both(r[3], r[1], lambda z, e: z <= e)),
    ("fine-tuned below from scratch", lambda r: both(r[4], r[5], lambda f, s: f < s)),
    ("fine-tuned at or below m-ETF", lambda r: both(r[4], r[1], lambda f, e: f <= e)),
]
print("\n| | runs |\n|---|---|")
for label, test in lines:
    k, n = count(test)
    print(f"| {label} | {k} of {n} |")
print("\nPre-training, seconds (one thread): " +
      ", ".join(f"{fam} seed {s} {d['seconds']:.0f}" for (fam, s), d in sorted(pre.items())) + ".")

if beside is not None:
    if not os.path.isdir(beside):
        sys.exit(f"error: --beside {beside}: not a folder")
    kinds = [("argmax zero-shot", "zero-shot"), ("balanced zero-shot", "zero-shot-balanced"),
             ("fine-tuned", "finetune"), ("from scratch", "scratch")]
    print(f"\nBeside {beside}, run by run (held-out member and seed): this folder's step lower, the same "
          "(within 0.1%) or higher.\n")
    print("| placement | runs | lower | the same | higher |\n|---|---:|---:|---:|---:|")
    for label, kind in kinds:
        lower = same = higher = 0
        for fam in ("cifar10", "ptb"):
            for m in (4, 8, 12):
                for sd in (1, 2, 3):
                    name = f"{fam}-{m}__s{sd}__{kind}.json"
                    a, b = step(name), step(name, beside)
                    if a is None or b is None:
                        continue
                    if abs(a - b) <= 0.001 * b:
                        same += 1
                    elif a < b:
                        lower += 1
                    else:
                        higher += 1
        print(f"| {label} | {lower + same + higher} | {lower} | {same} | {higher} |")
