#!/usr/bin/env python3
"""For each row of Megatron-LM's weak-scaling table: `aware strategy search --three-d
--representative --budget-seconds S` on the row's model, batch and GPUs, against the row's
own configuration as experiments/megatron_table.py simulated it (its rows.json). Resumable:
each row's search is kept in DIR/search-MODEL.json and not re-run.

usage: experiments/megatron_search.py [-o DIR] [--budget-seconds 55] [--aware build/cli/aware]
Writes DIR/search.md.
"""
import argparse, json, os, subprocess, sys, time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="experiments/results/megatron-weak-scaling")
    ap.add_argument("--budget-seconds", type=float, default=55)
    ap.add_argument("--aware", default=os.environ.get("AWARE_CLI", "build/cli/aware"))
    a = ap.parse_args()
    rows = json.load(open(os.path.join(a.output, "rows.json")))
    lines = ["# The 3-D search against Megatron-LM's own configurations", "",
             f"Command: `experiments/megatron_search.py -o {a.output} --budget-seconds {a.budget_seconds:g}` "
             "(`aware strategy search --three-d --representative`, micro-batch sizes 1, 2, 4, every "
             "recomputation; 2 cores). The published configuration's step is the one "
             "`experiments/megatron_table.py` simulated (rows.json).", "",
             "| model | GPUs | published configuration | its step (s) | fits | search's best | its step (s) | "
             "TFLOP/s | MFU | peak GB | simulated | wall (s) | at least as fast |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    wins = 0
    for row in rows:
        path = os.path.join(a.output, f"search-{row['model']}.json")
        if not os.path.exists(path):
            cmd = [a.aware, "strategy", "search", "--graph", f"zoo:megatron-{row['model']}:bits=16", "--cluster",
                   f"preset:dgx-a100-pod:{row['gpus'] // 8}", "--three-d", "--representative", "--budget-seconds",
                   str(a.budget_seconds), "--json"]
            begin = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.monotonic() - begin
            try:
                # Printed also when nothing fits; then the exit status is 1 and an error object follows.
                doc, _ = json.JSONDecoder().raw_decode(out.stdout)
            except json.JSONDecodeError:
                sys.exit(f"{row['model']}: {out.stderr.strip()}")
            doc["stderr"] = out.stderr.strip()
            doc["wall_s"] = wall
            tmp = path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(tmp, path)
        doc = json.load(open(path))
        best = next((c for c in doc["candidates"] if c["spec"] == doc.get("best")), None)
        ok = best is not None and best["step_time_us"] * 1e-6 <= row["step_s"]
        wins += ok
        if best is None:
            lines.append(f"| {row['model']} | {row['gpus']} | `{row['spec']}` | {row['step_s']:.2f} | "
                         f"{'yes' if row['feasible'] else 'no'} | none fits | - | - | - | - | {doc['simulated']} | "
                         f"{doc['wall_s']:.0f} | no |")
            fits = sum(c["status"] == "ok" for c in doc["candidates"])
            lines[-1] += f" <!-- {fits} fit; {doc.get('stderr', '')} -->"
        else:
            lines.append(f"| {row['model']} | {row['gpus']} | `{row['spec']}` | {row['step_s']:.2f} | "
                         f"{'yes' if row['feasible'] else 'no'} | `{best['spec']}` | {best['step_time_us'] * 1e-6:.2f} | "
                         f"{best['tflops_per_device']:.1f} | {100 * best['mfu']:.1f}% | "
                         f"{best['peak_memory_bytes'] / 1e9:.1f} | {doc['simulated']} | {doc['wall_s']:.0f} | "
                         f"{'yes' if ok else 'no'} |")
        print(lines[-1], flush=True)
    lines += ["", f"The search's best is at least as fast as the published configuration (in this simulator) on "
              f"{wins} of {len(rows)} rows."]
    tmp = os.path.join(a.output, ".search.md.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(a.output, "search.md"))


if __name__ == "__main__":
    main()
