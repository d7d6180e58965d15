#!/usr/bin/env python3
"""Issue 42's table from experiments/bounds_table.sh's cells.

For each row: every certified bound on the full graph (aware bound: the
solver-free terms on every row, the LP and MILP where they were run), the best
step known (the least of the means over the columns of the committed
20,000-evaluation table, experiments/results/aware-guided/table-20000.md, and of
the long anneal-graph runs of experiments/bounds_incumbents.sh), its gap to the
bound, fused-milp's step, its gap, and the bound it proved on the fused graph, and
`milp` on the full graph (the fused graph's solve, then windows over every op):
its step, its gap and its wall-clock. milp's placements count as known steps.
    experiments/bounds_table.py [CELLS_DIR [INCUMBENTS_DIR]] > table.md
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cells = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "experiments/results/bounds/cells")
known_table = os.path.join(ROOT, "experiments/results/aware-guided/table-20000.md")
incumbents = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "experiments/results/bounds/incumbents")

# Best known step per (model, devices): the least of the step columns.
known = {}
anneal_evals = {}  # anneal-graph at 20,000 evaluations, the yardstick for milp
with open(known_table) as f:
    header = None
    for line in f:
        if not line.startswith("|"):
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cols
            continue
        if cols[0].startswith("---"):
            continue
        steps = []
        for name, value in zip(header, cols):
            if name in ("guided", "guided-proposal", "no-policy", "anneal-graph (equal evals)",
                        "anneal-graph (equal time)"):
                steps.append((float(value), name))
        known[(cols[0], int(cols[1]))] = min(steps)
        anneal_evals[(cols[0], int(cols[1]))] = dict((n, v) for v, n in steps)["anneal-graph (equal evals)"]

# Long anneal-graph runs: the best of each row's runs (step in ms), with how many.
long_runs = {}
for path in sorted(glob.glob(os.path.join(incumbents, "anneal-graph-*-k40x*-e*-s*.json"))):
    if path.endswith(".placement.json"):
        continue
    j = json.load(open(path))
    key = (j["graph"], int(j["cluster"].replace("k40x", "")))
    evals = os.path.basename(path).rsplit("-e", 1)[1].split("-s")[0]
    step = j["step_time_us"] / 1000
    best = long_runs.get(key)
    runs = (best[2] if best else 0) + 1
    if best is None or step < best[0]:
        best = (step, evals, runs)
    long_runs[key] = (best[0], best[1], runs)

def ms(us):
    return f"{us / 1000:.1f}"

rows = []
for model in ["inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"]:
    for d in [2, 4]:
        b = os.path.join(cells, f"bound-{model}-k40x{d}.json")
        p = os.path.join(cells, f"place-{model}-k40x{d}.json")
        if not any(os.path.exists(x) for x in (b, p, os.path.join(cells, f"free-{model}-k40x{d}.json"))):
            continue
        row = {"model": model, "devices": d}
        f = os.path.join(cells, f"free-{model}-k40x{d}.json")
        row["terms"] = {}
        for path in (f, b):
            if not os.path.exists(path):
                continue
            j = json.load(open(path))
            for t in j["terms"]:
                if t["applies"] and t["us"] > row["terms"].get(t["name"], -1):
                    row["terms"][t["name"]] = t["us"]
            if path == b:
                row["bound_terms"] = [t["name"] for t in j["terms"]]
                row["bound_s"] = j.get("seconds")
                row["milp_s"] = j.get("milp_seconds")
            else:
                row["free_s"] = j.get("seconds")
        if row["terms"]:
            row["binding"], row["bound"] = max(row["terms"].items(), key=lambda kv: kv[1])
        full = os.path.join(cells, f"milp-{model}-k40x{d}.json")
        if os.path.exists(full):
            j = json.load(open(full))
            row["full_step"] = j["step_time_us"]
            row["full_wall"] = j.get("wall_s")
            row["full_report"] = j["milp_report"]
        if os.path.exists(p):
            j = json.load(open(p))
            row["milp_step"] = j["step_time_us"]
            row["milp_floor_terms"] = j.get("floor_terms")
            row["milp_report"] = j["milp_report"]
        rows.append(row)

print("Certified bounds and the exact placer on Table 1's rows (analytic simulator, contention mode); "
      "made by `experiments/bounds_table.sh` and `experiments/bounds_table.py`.\n")
print("| model | K40s | critical path | work | idle-ends | fork-join | chain-windows | LP | MILP | bound (binding) | long anneal-graph | best known (source) | gap | fused-milp step | its gap | fused-graph bound | source, status | milp step (full graph) | its gap | milp s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
within = 0
milp_rows = 0
full_rows = 0
for r in rows:
    t = r.get("terms", {})
    cell = lambda k: ms(t[k]) if k in t else "-"
    best, src = known.get((r["model"], r["devices"]), (None, ""))
    lr = long_runs.get((r["model"], r["devices"]))
    if lr and (best is None or lr[0] < best):
        best, src = lr[0], f"anneal-graph, {int(lr[1]):,} evaluations, best of {lr[2]} run{'s' if lr[2] > 1 else ''}"
    fstep = r.get("full_step")
    if fstep and (best is None or fstep / 1000 < best):
        best, src = fstep / 1000, f"milp, {r['full_report']['time_limit_s']:g} s"
    bound = r.get("bound")
    gap = f"{best * 1000 / bound:.3f}" if best and bound else "-"
    if best and bound and best * 1000 <= 1.10 * bound:
        within += 1
    rep = r.get("milp_report")
    mstep = r.get("milp_step")
    mgap = f"{mstep / bound:.3f}" if mstep and bound else "-"
    anneal = anneal_evals.get((r["model"], r["devices"]))
    if mstep and anneal and mstep <= anneal * 1000 * 1.005:
        milp_rows += 1
    if fstep and anneal and fstep <= anneal * 1000 * 1.005:
        full_rows += 1
    fgap = f"{fstep / bound:.3f}" if fstep and bound else "-"
    fwall = f"{r['full_wall']:.0f}" if r.get("full_wall") else "-"
    print(f"| {r['model']} | {r['devices']} | {cell('critical-path')} | {cell('work')} | {cell('idle-ends')} | "
          f"{cell('fork-join')} | {cell('chain-windows')} | {cell('lp')} | {cell('milp')} | {ms(bound) + ' (' + r['binding'] + ')' if bound else '-'} | "
          f"{f'{lr[0]:.1f}' if lr else '-'} | {f'{best:.1f} ({src})' if best else '-'} | {gap} | {ms(mstep) if mstep else '-'} | {mgap} | "
          f"{ms(rep['bound_us']) if rep else '-'} | {rep['source'] + ', ' + rep['status'] if rep else '-'} | "
          f"{ms(fstep) if fstep else '-'} | {fgap} | {fwall} |")
print()
with_bound = sum(1 for r in rows if r.get("bound"))
with_milp = sum(1 for r in rows if r.get("milp_step"))
with_full = sum(1 for r in rows if r.get("full_step"))
print(f"Best known within 1.10 x the certified bound: {within} of {with_bound} rows. "
      f"fused-milp at or below anneal-graph at 20,000 evaluations (within 0.5%): {milp_rows} of {with_milp} rows.")
if with_full:
    print(f"milp on the full graph at or below anneal-graph at 20,000 evaluations (within 0.5%): {full_rows} of "
          f"{with_full} rows; the anneal-graph figure is the 20,000-evaluation table's mean over seeds 1-3.")
    walls = [r["full_wall"] for r in rows if r.get("full_wall")]
    limits_full = sorted({r["full_report"]["time_limit_s"] for r in rows if r.get("full_report")})
    modes = sorted({r["full_report"]["mode"] for r in rows if r.get("full_report")})
    print(f"milp on the full graph was given {', '.join(f'{x:g}' for x in limits_full)} s a row (mode "
          f"{', '.join(modes)}: the fused graph's relaxed solve for 40% of it, then windows over every op); "
          f"each command took {min(walls):.0f}-{max(walls):.0f} s in all, two at once on the two cores.")
free = [r["free_s"] for r in rows if r.get("free_s") is not None]
if free:
    print(f"`aware bound --solver-free` took {min(free):.0f}-{max(free):.0f} s a row.")
secs = [r["bound_s"] for r in rows if r.get("bound_s") is not None]
limits = sorted({r["milp_report"]["time_limit_s"] for r in rows if r.get("milp_report")})
if secs:
    print(f"`aware bound` took {min(secs):.0f}-{max(secs):.0f} s a row, the MILP given {rows[0].get('milp_s'):g} s.")
if limits:
    print(f"fused-milp was given {', '.join(f'{x:g}' for x in limits)} s a row.")
old_place = [f"{r['model']} k40x{r['devices']}" for r in rows
             if r.get("milp_report") and "chain-windows" not in (r.get("milp_floor_terms") or "")]
if old_place:
    print(f"fused-milp cells made before the fork-join and chain-windows terms (which also raise the MILP's floor), "
          f"not re-run: {len(old_place)} of {with_milp} ({', '.join(old_place)}).")
old_bound = [f"{r['model']} k40x{r['devices']}" for r in rows if r.get("bound_terms") is not None
             and "chain-windows" not in r["bound_terms"]]
if old_bound:
    print(f"`aware bound` (LP and MILP) cells made before the chain-windows term, whose MILP floor it would raise, "
          f"not re-run: {len(old_bound)} ({', '.join(old_bound)}); the solver-free cells are of this code.")
print("Best known: the least of the committed 20,000-evaluation table's columns, each a mean over seeds 1-3 "
      "(anneal-graph at equal evaluations and at equal wall-clock, the guided hybrid and its variants), and of the "
      "long anneal-graph runs (`experiments/bounds_incumbents.sh`; each run's final step, the best run shown).")
