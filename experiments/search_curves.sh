#!/bin/bash
# Best-so-far curves for search cells of scripts/agents-vs-searches that were
# made before `aware place --curve` existed: each search is run again with the
# same graph, cluster, budget and seed (searches are deterministic), its step is
# checked against the cell's to the last digit, and the curve is put beside the
# cell as CELL.curve.csv. Cells that have a curve are skipped.
#   experiments/search_curves.sh BUDGET METHOD...   (env: AWARE=build/cli/aware
#                                                    DIR=experiments/results/agents-vs-searches/cells)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: experiments/search_curves.sh BUDGET METHOD..." >&2; exit 2; }
budget=$1; shift
aware=${AWARE:-build/cli/aware}
dir=${DIR:-experiments/results/agents-vs-searches/cells}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for meth in "$@"; do
  for cell in "$dir"/*__"${meth}"__e"${budget}"__s*.json; do
    [[ -e $cell ]] || continue
    curve=${cell%.json}.curve.csv
    [[ -s $curve ]] && continue
    base=$(basename "$cell" .json)
    model=${base%%__*}; rest=${base#*__}; devices=${rest%%__*}; seed=${base##*__s}
    "$aware" place --method "$meth" --graph "zoo:$model" --cluster "preset:$devices" --budget-evals "$budget" \
      --seed "$seed" --curve "$tmp/curve.csv" --json > "$tmp/out.json" 2>/dev/null
    /usr/bin/python3 - "$cell" "$tmp/out.json" <<'PY'
import json, sys
cell, out = (json.load(open(p)) for p in sys.argv[1:3])
if repr(cell["step_time_us"]) != repr(out["step_time_us"]):
    sys.exit("error: %s: the run gave %r, the cell holds %r" % (sys.argv[1], out["step_time_us"], cell["step_time_us"]))
PY
    mv "$tmp/curve.csv" "$curve"
    basename "$curve"
  done
done
