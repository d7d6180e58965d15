#!/usr/bin/env python3
"""The representative simulation against the full rewrite's step on the same
evaluator (the analytic simulator), at 8-64 GPUs, for the 3d configurations listed
below. Writes DIR/equivalence.md and DIR/equivalence.json.

usage: experiments/representative_check.py [-o DIR] [--aware build/cli/aware]
"""
import argparse, json, os, subprocess, sys, time

SMALL = "zoo:gpt:layers=4,hidden=256,heads=4,seq_len=128,vocab=1000,batch=16"
LARGE = "zoo:gpt:layers=8,hidden=256,heads=8,seq_len=128,vocab=1000,batch=64"
CASES = [
    (SMALL, "preset:dgx-a100-pod:2", s) for s in [
        "3d:dp=1,tp=1,pp=1,micro=4", "3d:dp=4,tp=1,pp=1,micro=4", "3d:dp=1,tp=8,pp=1,micro=1",
        "3d:dp=1,tp=1,pp=2,micro=2", "3d:dp=1,tp=1,pp=4,micro=8", "3d:dp=2,tp=2,pp=2,micro=4",
        "3d:dp=2,tp=2,pp=2,micro=4,schedule=1f1b", "3d:dp=2,tp=2,pp=2,micro=4,accumulate=sum",
        "3d:dp=4,tp=1,pp=1,micro=4,zero=1", "3d:dp=2,tp=2,pp=2,micro=4,zero=1",
        "3d:dp=1,tp=1,pp=2,micro=4,schedule=interleaved:2", "3d:dp=2,tp=2,pp=2,micro=4,schedule=interleaved:2",
    ]
] + [
    (LARGE, "preset:dgx-a100-pod:8", s) for s in [
        "3d:dp=8,tp=8,pp=1,micro=1", "3d:dp=16,tp=1,pp=1,micro=1,overlap=off", "3d:dp=16,tp=1,pp=1,micro=1",
        "3d:dp=64,tp=1,pp=1,micro=1", "3d:dp=2,tp=8,pp=1,micro=4", "3d:dp=2,tp=8,pp=2,micro=4",
        "3d:dp=1,tp=4,pp=4,micro=8,schedule=1f1b", "3d:dp=4,tp=4,pp=4,micro=8,schedule=1f1b",
        "3d:dp=2,tp=2,pp=4,micro=8", "3d:dp=2,tp=8,pp=4,micro=8", "3d:dp=1,tp=8,pp=4,micro=8,schedule=1f1b",
        "3d:dp=1,tp=1,pp=4,micro=8,schedule=1f1b,recompute=full",
        "3d:dp=2,tp=1,pp=4,micro=8,schedule=1f1b,recompute=full",
        "3d:dp=1,tp=8,pp=4,micro=8,schedule=1f1b,recompute=full",
        "3d:dp=2,tp=8,pp=4,micro=8,schedule=1f1b,recompute=full",
        "3d:dp=2,tp=8,pp=4,micro=8,recompute=full", "3d:dp=16,tp=2,pp=2,micro=4,recompute=selective",
        "3d:dp=2,tp=8,pp=4,micro=8,schedule=1f1b,recompute=full,zero=1",
        "3d:dp=2,tp=2,pp=4,micro=8,schedule=interleaved:2", "3d:dp=1,tp=4,pp=2,micro=8,schedule=interleaved:2,recompute=full",
        "3d:dp=4,tp=2,pp=2,micro=8,schedule=interleaved:4,zero=1",
    ]
]


def step(aware, graph, cluster, spec, representative):
    cmd = [aware, "simulate", "--graph", graph, "--cluster", cluster, "--strategy", spec, "--json"]
    if representative:
        cmd.append("--representative")
    begin = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{spec}: {out.stderr.strip()}")
    return json.loads(out.stdout)["step_time_us"], time.monotonic() - begin


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="experiments/results/representative")
    ap.add_argument("--aware", default=os.environ.get("AWARE_CLI", "build/cli/aware"))
    a = ap.parse_args()
    os.makedirs(a.output, exist_ok=True)
    rows = []
    for graph, cluster, spec in CASES:
        full, full_s = step(a.aware, graph, cluster, spec, False)
        rep, rep_s = step(a.aware, graph, cluster, spec, True)
        err = rep / full - 1
        rows.append(dict(graph=graph, cluster=cluster, spec=spec, full_us=full, representative_us=rep, error=err,
                         full_s=full_s, representative_s=rep_s))
        print(f"{spec:58s} {full:10.1f} {rep:10.1f} {100 * err:+6.2f}%  ({full_s:.1f} s, {rep_s:.1f} s)", flush=True)
    within = sum(abs(r["error"]) <= 0.01 for r in rows)
    lines = ["# The representative simulation against the full rewrite", "",
             f"Command: `experiments/representative_check.py -o {a.output}`; analytic simulator, contention mode.",
             f"Graphs: `{SMALL}` on `dgx-a100-pod:2` (first block), `{LARGE}` on `dgx-a100-pod:8`.", "",
             "| spec | cluster | full step (µs) | representative (µs) | error | full (s) | representative (s) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r['spec']}` | {r['cluster'].split(':', 1)[1]} | {r['full_us']:.1f} | "
                     f"{r['representative_us']:.1f} | {100 * r['error']:+.2f}% | {r['full_s']:.1f} | "
                     f"{r['representative_s']:.1f} |")
    lines += ["", f"Within 1%: {within} of {len(rows)}; largest error "
              f"{100 * max(abs(r['error']) for r in rows):.2f}%."]
    for name, text in (("equivalence.md", "\n".join(lines) + "\n"), ("equivalence.json", json.dumps(rows, indent=1))):
        tmp = os.path.join(a.output, "." + name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(a.output, name))
    print(f"within 1%: {within} of {len(rows)}")


if __name__ == "__main__":
    main()
