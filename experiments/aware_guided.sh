#!/usr/bin/env bash
# The guided hybrid (aware-guided, docs/agents.md) against anneal-graph, at equal
# evaluations and at equal wall-clock: one cell per (model, devices, variant,
# budget, seed), analytic simulator, one core per run (no worker threads, run
# one at a time so that the wall-clock is comparable). A rerun skips finished
# cells; --table prints the rows.
#   guided            aware-guided, its preset
#   guided-proposal   --guide-from proposal (every refinement from the policy's best sample)
#   no-policy         --guide-share 0.999: the refiner alone (restarts from the best), the policy
#                     making one evaluation in a thousand
#   anneal-graph      anneal-graph, the same evaluations
#   anneal-rate       anneal-graph at 20,000 evaluations: its evaluations per second on the row
#   anneal-graph-time anneal-graph given the evaluations it makes in the guided cell's wall-clock
#                     (anneal-rate's evaluations per second x the guided cell's seconds)
#   [AWARE=BIN] experiments/aware_guided.sh [--budget 2000] [--seeds "1"] [--devices "2 4 8"]
#       [--models "inception_v3 resnet50 nasnet nmt4 gnmt"] [--variants "..."] [--table]
#       [--out DIR]   (cells under DIR/cells; experiments/results/aware-guided by default)
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=2000 SEEDS="1" DEVICES="2 4 8" MODELS="inception_v3 resnet50 nasnet nmt4 gnmt"
VARIANTS="guided anneal-graph anneal-rate anneal-graph-time" TABLE=0
DIR=experiments/results/aware-guided
while (($#)); do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --devices) DEVICES="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --variants) VARIANTS="$2"; shift 2 ;;
    --table) TABLE=1; shift ;;
    --out) DIR="$2"; shift 2 ;;
    *) echo "error: experiments/aware_guided.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
OUT=$DIR/cells
mkdir -p "$OUT"
if ((TABLE)); then
  exec /usr/bin/python3 experiments/aware_guided_table.py "$OUT" "$BUDGET"
fi
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
cell_of() { echo "$OUT/${1}__k40x${2}__${3}__e${4}__s${5}.json"; }
# place M D SEED EVALS CELL: one anneal-graph run into CELL, stamped with its wall-clock.
place() {
  local start end
  start=$(date +%s.%N)
  "$AWARE" place --method anneal-graph --graph "zoo:$1" --cluster "preset:k40x$2" --seed "$3" \
    --budget-evals "$4" --json > "$5.tmp" 2>/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 experiments/stamp_cell.py "$5.tmp" "$start" "$end"
  mv "$5.tmp" "$5"
}
for m in $MODELS; do for d in $DEVICES; do for s in $SEEDS; do for v in $VARIANTS; do
  cell=$(cell_of "$m" "$d" "$v" "$BUDGET" "$s")
  [[ -s "$cell" ]] && continue
  echo "$m k40x$d $v e$BUDGET seed $s" >&2
  case "$v" in
    guided|guided-proposal|no-policy)
      extra=()
      [[ "$v" == guided-proposal ]] && extra=(--guide-from proposal)
      [[ "$v" == no-policy ]] && extra=(--guide-share 0.999)
      start=$(date +%s.%N)
      "$AWARE" search --agent aware-guided --graph "zoo:$m" --cluster "preset:k40x$d" --budget-evals "$BUDGET" \
        --seed "$s" "${extra[@]}" --curve "${cell%.json}.curve.csv" --json > "$cell.tmp" 2>/dev/null
      end=$(date +%s.%N)
      /usr/bin/python3 experiments/stamp_cell.py "$cell.tmp" "$start" "$end"
      mv "$cell.tmp" "$cell" ;;
    anneal-graph) place "$m" "$d" "$s" "$BUDGET" "$cell" ;;
    anneal-rate)
      # Keyed by the budget it serves; always 20,000 evaluations.
      place "$m" "$d" "$s" 20000 "$cell" ;;
    anneal-graph-time)
      guided=$(cell_of "$m" "$d" guided "$BUDGET" "$s")
      rate=$(cell_of "$m" "$d" anneal-rate "$BUDGET" "$s")
      [[ -s "$guided" && -s "$rate" ]] || { echo "error: $v needs the guided and anneal-rate cells first" >&2; exit 1; }
      evals=$(/usr/bin/python3 -c "
import json,sys
g=json.load(open('$guided')); r=json.load(open('$rate'))
print(max(1, round(20000 / r['wall_seconds'] * g['wall_seconds'])))")
      place "$m" "$d" "$s" "$evals" "$cell"
      /usr/bin/python3 - "$cell" "$evals" <<'PY'
import json, sys
path, evals = sys.argv[1], int(sys.argv[2])
cell = json.load(open(path))
cell["evaluations"] = evals
json.dump(cell, open(path, "w"), indent=1)
PY
      ;;
    *) echo "error: unknown variant '$v'" >&2; exit 2 ;;
  esac
done; done; done; done
