#!/usr/bin/env python3
"""Repairs a cost table that `aware calibrate` wrote before it scoped shared op names.

The H200 run of 2026-12-01 profiled nmt2 and rnnlm into one table keyed by op name
alone; the names the two models share (softmax/logits/tN/grad_weight, ...) kept
rnnlm's times, so nmt2 was priced partly with rnnlm's smaller ops. This rewrites the
table the way calibrate now does: a shared name becomes "rnnlm::NAME" (the times the
table holds are rnnlm's: it was profiled second) and nmt2's own entries
"nmt2::NAME", taken from nmt2's measured single-device timeline of the same run
(each op's span in the median step; the profile's per-op medians are lost).

  scope_costs.py COSTS.json NMT2_SINGLE_TRACE.json RNNLM_GRAPH.json OUT.json
"""
import json
import os
import sys


def main():
    costs_path, trace_path, rnnlm_path, out_path = sys.argv[1:5]
    table = json.load(open(costs_path))
    trace = json.load(open(trace_path))
    rnnlm = json.load(open(rnnlm_path))
    rnnlm_ops = {op["name"] for op in rnnlm["ops"]}
    spans = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("pid") == 1:  # process "devices"
            spans[e["name"]] = e["dur"]
    shared = {name for name in spans if name in rnnlm_ops}
    out = {}
    for kind, per_op in table["costs"].items():
        fixed = {}
        for name, us in per_op.items():
            fixed[("rnnlm::" + name) if name in shared else name] = us
        for name in sorted(shared):
            fixed["nmt2::" + name] = spans[name]
        out[kind] = fixed
    table["costs"] = out
    table["graph"] = table.get("graph", "") + " (shared names scoped by scope_costs.py)"
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(table, f, indent=1)
    os.replace(tmp, out_path)
    print(f"{out_path}: {len(shared)} names shared by nmt2 and rnnlm scoped; "
          f"nmt2's from {len(spans)} measured spans")


if __name__ == "__main__":
    main()
