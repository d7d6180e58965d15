#!/bin/bash
# Anneal speed of two builds of `aware`, alternated in one sitting: the same
# seeded anneal (the same placements, bit for bit) run RUNS times with each build;
# prints each build's fastest place_time_s and checks that the step times agree.
#   experiments/anneal_ab.sh BEFORE_BIN AFTER_BIN [GRAPH...]   (env: EVALS=5000 RUNS=7)
set -euo pipefail
before=$1; after=$2; shift 2
if [ $# -gt 0 ]; then graphs=("$@"); else graphs=(zoo:inception_v3 zoo:nmt4); fi
evals=${EVALS:-5000}; runs=${RUNS:-7}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf "%-18s %7s %10s %10s %8s  %s\n" graph evals before_s after_s speedup step_us
for g in "${graphs[@]}"; do
  results=""
  for ((i = 0; i < runs; ++i)); do
    for which in before after; do
      "${!which}" place --graph "$g" --cluster preset:k40x4 --method anneal --budget-evals "$evals" \
        --seed 1 --json > "$tmp" 2>/dev/null
      results+="$which $(python3 -c "import json; d = json.load(open('$tmp')); print(d['place_time_s'], repr(d['step_time_us']))")"$'\n'
    done
  done
  python3 - "$g" "$evals" <<PY
import sys
rows = [line.split() for line in """$results""".strip().splitlines()]
best = {w: min(float(t) for x, t, s in rows if x == w) for w in ("before", "after")}
steps = {s for _, _, s in rows}
if len(steps) != 1:
    sys.exit(f"{sys.argv[1]}: the builds' step times differ: {sorted(steps)}")
print(f"{sys.argv[1]:<18} {sys.argv[2]:>7} {best['before']:>10.3f} {best['after']:>10.3f} "
      f"{best['before'] / best['after']:>7.2f}x  {steps.pop()}")
PY
done
