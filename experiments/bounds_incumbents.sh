#!/usr/bin/env bash
# Issue 42's incumbents: long anneal-graph runs on Table 1's rows (five models,
# k40x2 and k40x4), to tell the bound's slack from the searches' at the usual
# budgets. One run per cell, resumable (a cell's JSON is skipped when present),
# each written to a temporary file and renamed.
#   experiments/bounds_incumbents.sh [--out DIR] [--evals N] [--seed S]
#                                    [--models "..."] [--devices "2 4"]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=experiments/results/bounds/incumbents
EVALS=500000
SEED=1
MODELS="inception_v3 resnet50 nasnet nmt4 gnmt"
DEVICES="2 4"
while (($#)); do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --evals) EVALS="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --devices) DEVICES="$2"; shift 2 ;;
    *) echo "bounds_incumbents.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
for m in $MODELS; do
  for d in $DEVICES; do
    cell="$OUT/anneal-graph-$m-k40x$d-e$EVALS-s$SEED"
    [ -s "$cell.json" ] && continue
    echo "anneal-graph $m k40x$d ($EVALS evaluations, seed $SEED)" >&2
    start=$(date +%s)
    "${AWARE:-build/cli/aware}" place --graph "zoo:$m" --cluster "preset:k40x$d" --method anneal-graph \
      --budget-evals "$EVALS" --seed "$SEED" -o "$cell.placement.tmp" --json > "$cell.json.tmp"
    python3 - "$cell.json.tmp" "$(( $(date +%s) - start ))" "$cell.placement.json" <<'PY'
import json, sys
p, secs, placement = sys.argv[1], float(sys.argv[2]), sys.argv[3]
j = json.load(open(p)); j["seconds"] = secs; j["placement_file"] = placement
json.dump(j, open(p, "w"), indent=1)
PY
    mv "$cell.placement.tmp" "$cell.placement.json"
    mv "$cell.json.tmp" "$cell.json"
  done
done
