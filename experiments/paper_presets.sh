#!/usr/bin/env bash
# The paper's claims re-measured with the agents' paper presets (docs/agents.md):
# Aware, Placeto and Hierarchical, each `--preset paper`, on Table 1's rows
# (5 models x k40x2/4/8), analytic simulator, one core per run, at one equal
# budget: wall-clock seconds (--seconds S) or complete placements sampled
# (--episodes E). One resumable cell per (model, devices, agent, budget, seed);
# a rerun skips finished cells. --shard K/N runs every N-th cell from the K-th, so
# two shards in the background use both cores. --table prints the rows, Aware's
# margin over each baseline and the verdict on the paper's two claims.
#   [AWARE=BIN] experiments/paper_presets.sh [--seconds 120 | --episodes 2000] [--seeds "1"]
#       [--models "inception_v3 resnet50 nasnet nmt4 gnmt"] [--devices "2 4 8"]
#       [--agents "aware placeto hierarchical"] [--shard 0/1] [--table]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_BUDGET="" EPISODES="" SEEDS="1" DEVICES="2 4 8" MODELS="inception_v3 resnet50 nasnet nmt4 gnmt"
AGENTS="aware placeto hierarchical" SHARD="0/1" TABLE=0
while (($#)); do
  case "$1" in
    --seconds) SECONDS_BUDGET="$2"; shift 2 ;;
    --episodes) EPISODES="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --devices) DEVICES="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --agents) AGENTS="$2"; shift 2 ;;
    --shard) SHARD="$2"; shift 2 ;;
    --table) TABLE=1; shift ;;
    *) echo "error: experiments/paper_presets.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -n "$SECONDS_BUDGET" && -n "$EPISODES" ]] || [[ -z "$SECONDS_BUDGET" && -z "$EPISODES" ]]; then
  echo "error: experiments/paper_presets.sh: give one budget, --seconds S or --episodes E" >&2; exit 2
fi
if [[ -n "$SECONDS_BUDGET" ]]; then tag="t$SECONDS_BUDGET"; budget=(--budget-seconds "$SECONDS_BUDGET")
else tag="e$EPISODES"; budget=(--budget-episodes "$EPISODES" --budget-evals 1000000000000); fi
[[ "$SHARD" =~ ^([0-9]+)/([0-9]+)$ ]] || { echo "error: --shard K/N, got '$SHARD'" >&2; exit 2; }
K=${BASH_REMATCH[1]} N=${BASH_REMATCH[2]}
OUT=experiments/results/paper-presets/cells
mkdir -p "$OUT"
if ((TABLE)); then
  exec /usr/bin/python3 experiments/paper_presets_table.py "$OUT" "$tag"
fi
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
i=-1
for s in $SEEDS; do for m in $MODELS; do for d in $DEVICES; do for a in $AGENTS; do
  i=$((i + 1))
  ((i % N == K)) || continue
  cell="$OUT/${m}__k40x${d}__${a}__${tag}__s${s}.json"
  [[ -s "$cell" ]] && continue
  echo "$m k40x$d $a $tag seed $s" >&2
  start=$(date +%s.%N)
  "$AWARE" search --agent "$a" --preset paper --graph "zoo:$m" --cluster "preset:k40x$d" "${budget[@]}" \
    --seed "$s" --curve "${cell%.json}.curve.csv" --json > "$cell.tmp" 2>/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 experiments/stamp_cell.py "$cell.tmp" "$start" "$end"
  mv "$cell.tmp" "$cell"
done; done; done; done
