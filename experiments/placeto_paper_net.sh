#!/usr/bin/env bash
# Placeto's own network (net=paper, docs/agents.md) at its start: the first
# update's per-decision entropy (of ln D at most) and spread of step times, with
# the code's summed pooling and with --normalize-aggs (pool=mean), against our
# network (net=ours) under the same paper preset otherwise. One update (4
# episodes, one op a step, the simulator after every step), seed 1, analytic
# simulator, k40x4. A rerun skips finished cells; --table prints the rows.
#   [AWARE=BIN] experiments/placeto_paper_net.sh [--graphs "..."] [--variants "sum mean ours"] [--table]
set -euo pipefail
cd "$(dirname "$0")/.."
GRAPHS="family:cifar10:1 family:ptb:1 zoo:resnet50 zoo:inception_v3" VARIANTS="sum mean ours" TABLE=0
while (($#)); do
  case "$1" in
    --graphs) GRAPHS="$2"; shift 2 ;;
    --variants) VARIANTS="$2"; shift 2 ;;
    --table) TABLE=1; shift ;;
    *) echo "error: experiments/placeto_paper_net.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
OUT=experiments/results/placeto-paper/net
mkdir -p "$OUT"
if ((TABLE)); then
  exec /usr/bin/python3 experiments/placeto_paper_net_table.py "$OUT"
fi
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
for g in $GRAPHS; do for v in $VARIANTS; do
  cell="$OUT/${g//:/_}__$v.json"
  [[ -s "$cell" ]] && continue
  case "$v" in
    sum) extra=() ;;
    mean) extra=(--agent-option pool=mean) ;;
    ours) extra=(--agent-option net=ours) ;;
    *) echo "error: unknown variant '$v'" >&2; exit 2 ;;
  esac
  echo "$g $v" >&2
  "$AWARE" search --agent placeto --preset paper "${extra[@]}" --graph "$g" --cluster preset:k40x4 --seed 1 \
    --budget-episodes 4 --curve "${cell%.json}.curve.csv" --json > "$cell.tmp" 2>/dev/null
  mv "$cell.tmp" "$cell"
done; done
