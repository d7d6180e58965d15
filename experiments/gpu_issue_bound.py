#!/usr/bin/env python3
"""Is a measured CUDA step bound by the one host thread that issues its tasks?

    gpu_issue_bound.py RUN_DIR [--aware build/cli/aware]

Reads an out-of-sample `aware validate` run that scripts/gpu-check wrote
(RUN_DIR/validate.json, and RUN_DIR/costs.json: the profile and its per-type
fits) and prints three markdown tables:

1. Per model and set: the measured step per task issued (ops + cut edges, the
   edges' copies being roughly one task each) over its placements, and the
   analytic simulator's median error. A step bound by the host's issue rate
   costs about the same per task whatever the placement; a step bound by the
   GPU's work costs more per task where the work per op is larger.
2. Per model, one device: the measured step against the sum of its ops' times
   as the simulator prices them (a profiled model: its own profile; the held-out
   model: the per-type fits), and that sum if no op could take less than L µs
   (what a host that needs L µs to issue each op would impose on a stream of
   short ops).
3. The same with the host as a pipeline: op k cannot start before k·h µs.
4. Where the run measured it (builds from 2026-12-07 on), the host's own issue
   time of each model's one-device step (the `host issue:` note of
   RUN_DIR/kernels-*-real.json).

Nothing is run on a GPU: this reads what a run measured. The graphs are built
with `aware graph export` at the sizes the run's log names. Run from the
repository root."""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile


def build_graph(aware, spec, tmp):
    """A graph spec (zoo:NAME:key=value,...) -> the graph's op list (via aware graph export)."""
    out = os.path.join(tmp, "graph.json")
    done = subprocess.run([aware, "graph", "export", spec, "--format", "json", "-o", out],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"error: gpu_issue_bound.py: {aware} graph export {spec}: {done.stderr.strip()}")
    with open(out, encoding="utf-8") as f:
        return json.load(f)["ops"]


def graph_specs(run_dir):
    """The profiled graphs and the held-out one, from the run's logged command."""
    log = os.path.join(run_dir, "logs", "validate.log")
    with open(log, encoding="utf-8") as f:
        words = f.readline().split()
    profiled = [words[i + 1] for i, w in enumerate(words) if w == "--graph"]
    holdout = [words[i + 1] for i, w in enumerate(words) if w == "--holdout"]
    if not profiled:
        sys.exit(f"error: gpu_issue_bound.py: {log}: its first line names no --graph")
    return profiled, holdout


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    run_dir, aware = argv[0], "build/cli/aware"
    if len(argv) == 3 and argv[1] == "--aware":
        aware = argv[2]
    elif len(argv) != 1:
        sys.exit(__doc__)
    with open(os.path.join(run_dir, "validate.json"), encoding="utf-8") as f:
        run = json.load(f)
    with open(os.path.join(run_dir, "costs.json"), encoding="utf-8") as f:
        costs = json.load(f)
    if len(costs["costs"]) != 1:
        sys.exit("error: gpu_issue_bound.py: costs.json prices more than one device kind")
    kind = next(iter(costs["costs"]))
    table, fits = costs["costs"][kind], costs["fits"][kind]
    profiled, holdout = graph_specs(run_dir)

    with tempfile.TemporaryDirectory() as tmp:
        ops_of = {}
        for spec in profiled + holdout:
            ops_of[spec.split(":")[1]] = (build_graph(aware, spec, tmp), spec in holdout)

    def fitted(op):
        f = fits.get(op["type"], fits["*"])
        return f["overhead_us"] + f["us_per_flop"] * op.get("flops", 0) + f["us_per_byte"] * op.get("bytes_accessed", 0)

    def priced(name):
        ops, held_out = ops_of[name]
        if held_out:  # the held-out model is predicted from the fits alone
            return [fitted(o) for o in ops]
        return [table.get(name + "::" + o["name"], table.get(o["name"], fitted(o))) for o in ops]

    rows = run["rows"]
    print("| model | set | placements | measured step per task issued (µs): min / median / max | analytic's median error |")
    print("|---|---|---:|---|---:|")
    for graph in dict.fromkeys(r["graph"] for r in rows):
        base = graph.split("@")[0]
        if base not in ops_of:
            continue
        n_ops = len(ops_of[base][0])
        mine = [r for r in rows if r["graph"] == graph]
        per_task = [r["measured_us"] / (n_ops + r["cut_edges"]) for r in mine]
        errors = [abs(r["predicted_us"]["analytic"] / r["measured_us"] - 1) for r in mine]
        what = "never profiled" if ops_of[base][1] else ("batch 2B" if "@" in graph else "held-out placements")
        print(f"| {graph} | {what} | {len(mine)} | {min(per_task):.1f} / {statistics.median(per_task):.1f} / "
              f"{max(per_task):.1f} | {100 * statistics.median(errors):.1f}% |")

    floors = [8.2, 10, 12, 13.5]
    print()
    print("| model (one device) | ops | ops under 8.2 µs | measured | sum of ops | "
          + " | ".join(f"each op ≥ {L:g} µs" for L in floors) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(floors))
    singles = {}
    for name in ops_of:
        mine = [r["measured_us"] for r in rows if r["graph"] == name and r["placement"].startswith("single:")]
        if not mine:
            continue
        singles[name] = statistics.median(mine)
        ts = priced(name)
        cells = " | ".join(f"{sum(max(t, L) for t in ts) / 1e3:.1f}" for L in floors)
        print(f"| {name}{' (fits only)' if ops_of[name][1] else ''} | {len(ts)} | {sum(t < 8.2 for t in ts)} | "
              f"{singles[name] / 1e3:.1f} | {sum(ts) / 1e3:.1f} | {cells} |")

    print()
    print("| model (one device) | measured | " + " | ".join(f"host issues an op every {h:g} µs" for h in floors) + " |")
    print("|---|---:|" + "---:|" * len(floors))
    for name, measured in singles.items():
        ts = priced(name)
        cells = []
        for h in floors:
            host = gpu = 0.0
            for t in ts:  # in the graph's op order, which is topological
                host += h
                gpu = max(gpu, host) + t
            cells.append(f"{gpu / 1e3:.1f}")
        print(f"| {name} | {measured / 1e3:.1f} | " + " | ".join(cells) + " |")

    measured_issue = []
    for path in sorted(glob.glob(os.path.join(run_dir, "kernels-*-real.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for note in doc.get("notes", []):
            if note.startswith("host issue:"):
                measured_issue.append((doc.get("graph", os.path.basename(path)), note[len("host issue:"):].strip()))
    print()
    if measured_issue:
        print("| model (one device) | the host's issue time, as measured |")
        print("|---|---|")
        for graph, note in measured_issue:
            print(f"| {graph} | {note} |")
    else:
        print("This run did not measure the host's issue time (built before 2026-12-07).")


if __name__ == "__main__":
    main(sys.argv[1:])
