#!/usr/bin/env python3
"""The table of experiments/paper_presets.sh's cells: paper_presets_table.py
CELLS_DIR TAG (t<seconds> or e<episodes>) prints, per model and cluster, each paper
preset's best step (mean over seeds; episodes played), Aware's margin over Placeto
and over Hierarchical, and the verdict on the paper's two claims: Aware faster
than Placeto (the paper: by up to 5%) and more than 8% faster than Hierarchical."""
import json, os, statistics, sys

out, tag = sys.argv[1], sys.argv[2]
rows = {}
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"):
        continue
    m, dev, agent, t, seed = f[:-5].split("__")
    if t != tag:
        continue
    d = json.load(open(os.path.join(out, f)))
    rows.setdefault((m, dev), {}).setdefault(agent, []).append(
        (d["step_time_us"] / 1e3, d.get("episodes", 0), d.get("wall_seconds", 0)))
budget = f"{tag[1:]} s of wall-clock" if tag.startswith("t") else f"{tag[1:]} episodes"
order = {"inception_v3": 0, "resnet50": 1, "nasnet": 2, "nmt4": 3, "gnmt": 4}
print(f"Paper presets at {budget} each: best step, ms, mean over seeds (episodes played)\n")
print("| model | devices | Aware | Placeto | Hierarchical | Aware vs Placeto | claim 1: faster | "
      "Aware vs Hierarchical | claim 2: > 8% faster |")
print("|---|---|---|---|---|---|---|---|---|")
held = [0, 0]
counted = [0, 0]
for (m, dev), r in sorted(rows.items(), key=lambda kv: (order.get(kv[0][0], 9), kv[0][1])):
    mean = {a: statistics.mean(x for x, _, _ in v) for a, v in r.items()}
    cells = []
    for a in ("aware", "placeto", "hierarchical"):
        v = r.get(a)
        if not v:
            cells.append("-")
            continue
        n = f", n={len(v)}" if len(v) > 1 else ""
        cells.append(f"{mean[a]:.1f} ({statistics.mean(e for _, e, _ in v):.0f} ep{n})")
    verdicts = []
    for k, (base, need) in enumerate((("placeto", 0.0), ("hierarchical", 8.0))):
        if "aware" not in mean or base not in mean:
            verdicts += ["-", "-"]
            continue
        gain = 100 * (mean[base] - mean["aware"]) / mean[base]
        ok = gain > need if need > 0 else gain > 0
        counted[k] += 1
        held[k] += ok
        verdicts += [f"{gain:+.1f}%", "holds" if ok else "does not hold"]
    print(f"| {m} | {dev.replace('k40x', '')} | " + " | ".join(cells) + " | " + " | ".join(verdicts) + " |")
print(f"\nClaim 1 (Aware faster than Placeto) holds on {held[0]} of {counted[0]} rows; "
      f"claim 2 (Aware more than 8% faster than Hierarchical) on {held[1]} of {counted[1]}.")
