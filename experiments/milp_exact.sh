#!/usr/bin/env bash
# Issue 42's exactness benchmark: on generated graphs (random:N:SEED) of up to 16
# ops on two and three devices, the `milp` placer in exact mode (branch and
# bound, docs/bounds.md) against `exhaustive` (every placement simulated), both
# through the analytic simulator. Resumable: one JSON file per cell under
# OUT/cells, each written to a temporary file and renamed; --table prints the rows.
#   experiments/milp_exact.sh [--out DIR] [--sizes "10 13 16"] [--seeds "1 2 3 4 5 6 7 8"]
#                             [--clusters "k40x2 multi-node:1x3"] [--time-limit S] [--table]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=experiments/results/milp-exact
SIZES="10 13 16"
SEEDS="1 2 3 4 5 6 7 8"
CLUSTERS="k40x2 multi-node:1x3"
LIMIT=300
TABLE=0
while (($#)); do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --clusters) CLUSTERS="$2"; shift 2 ;;
    --time-limit) LIMIT="$2"; shift 2 ;;
    --table) TABLE=1; shift ;;
    *) echo "error: experiments/milp_exact.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if ((TABLE)); then
  exec /usr/bin/python3 experiments/milp_exact_table.py "$OUT/cells"
fi
AWARE=${AWARE:-build/cli/aware}
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
mkdir -p "$OUT/cells"
# run METHOD GRAPH CLUSTER CELL OPTIONS...: one placement; the placer's report
# (with the wall-clock added) becomes the cell.
run() {
  local method=$1 graph=$2 cluster=$3 cell=$4
  shift 4
  [[ -s "$cell" ]] && return 0
  echo "$method $graph $cluster" >&2
  local start end
  start=$(date +%s.%N)
  "$AWARE" place --method "$method" --graph "$graph" --cluster "preset:$cluster" \
    --method-option "report=$cell.report.tmp" "$@" --json > "$cell.place.tmp"
  end=$(date +%s.%N)
  /usr/bin/python3 - "$cell.report.tmp" "$cell.place.tmp" "$start" "$end" "$method" > "$cell.tmp" <<'PY'
import json, sys
report, placed, start, end, method = sys.argv[1:6]
j = json.load(open(report))
j["method"] = method
j["simulated_step_us"] = json.load(open(placed))["step_time_us"]
j["wall_seconds"] = float(end) - float(start)
print(json.dumps(j, indent=1))
PY
  rm -f "$cell.report.tmp" "$cell.place.tmp"
  mv "$cell.tmp" "$cell"
}
for n in $SIZES; do for s in $SEEDS; do for c in $CLUSTERS; do
  key="random-$n-${s}__${c//:/-}"
  run milp "random:$n:$s" "$c" "$OUT/cells/${key}__milp.json" \
    --method-option mode=exact --method-option "time_limit=$LIMIT"
  run exhaustive "random:$n:$s" "$c" "$OUT/cells/${key}__exhaustive.json" --method-option threads=2
done; done; done
