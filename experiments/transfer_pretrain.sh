#!/usr/bin/env bash
# Transfer with a longer pre-training, with the agents as they are now (Aware's default
# preset; `aware reproduce --budget small` pre-trains at 100 evaluations per training
# graph). Per seed and family (cifar10, ptb; 12 members, every fourth held out: 4, 8, 12):
# `aware pretrain` over the 9 training members (one thread; the two families side by
# side), then on each held-out member: zero-shot with the paper's argmax decode and with
# decode=balanced (one evaluation each), fine-tuned from the policy, from scratch (both
# FINETUNE evaluations, two worker threads), and the references: one GPU and m-ETF.
# dgx-v100, analytic simulator. Cells are DIR/GRAPH__sSEED__HOW.json, written to a
# temporary file and renamed; a rerun skips finished cells (and resumes a pre-training
# from its checkpoint). The table: experiments/transfer_pretrain_table.py DIR.
#   [AWARE=BIN] experiments/transfer_pretrain.sh --out DIR [--seeds "1 2 3"]
#       [--pretrain 18000] [--finetune 2000] [--agent-args "--elite 0 ..."]
# --agent-args: words added to every pre-training and Aware search (e.g. "--elite 0", the
# default preset before 2026-12-07); use a folder of its own for each setting.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="" SEEDS="1 2 3" PRETRAIN=18000 FINETUNE=2000 AGENT_ARGS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --pretrain) PRETRAIN="$2"; shift 2 ;;
    --finetune) FINETUNE="$2"; shift 2 ;;
    --agent-args) AGENT_ARGS="$2"; shift 2 ;;
    *) echo "error: experiments/transfer_pretrain.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$OUT" ]] || { echo "error: experiments/transfer_pretrain.sh: --out DIR is required" >&2; exit 2; }
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
mkdir -p "$OUT"
CLUSTER=preset:dgx-v100
read -r -a EXTRA <<< "$AGENT_ARGS"

# run FILE COMMAND...: COMMAND's stdout into FILE, atomically; skipped when FILE exists.
run() {
  local file="$1"; shift
  [[ -s "$file" ]] && return 0
  if ! "$@" > "$file.tmp" 2> "$file.err"; then
    echo "error: $file: $* failed (stderr in $file.err)" >&2
    rm -f "$file.tmp"
    return 1
  fi
  mv "$file.tmp" "$file" && rm -f "$file.err"
}

pretrain() {  # FAMILY SEED
  local p="$OUT/pretrain__$1__s$2"
  run "$p.json" "$AWARE" pretrain --agent aware --family "$1" --count 12 --cluster "$CLUSTER" --seed "$2" \
    --budget-evals "$PRETRAIN" --save-policy "$p.pt" --curve "$p.curve.csv" --resume "$p.ckpt" ${EXTRA[@]+"${EXTRA[@]}"} --json
  rm -rf "$p.ckpt"
}

for s in $SEEDS; do
  echo "seed $s: pre-training cifar10 and ptb, $PRETRAIN evaluations each" >&2
  pretrain cifar10 "$s" & a=$!
  pretrain ptb "$s" & b=$!
  wait $a && wait $b || { echo "error: pre-training failed for seed $s" >&2; exit 1; }
  for fam in cifar10 ptb; do
    pol="$OUT/pretrain__${fam}__s${s}.pt"
    for m in 4 8 12; do
      g="$fam-$m" graph="family:$fam:$m"
      echo "seed $s: $g" >&2
      run "$OUT/${g}__single.json" "$AWARE" simulate --graph "$graph" --cluster "$CLUSTER" --placement single --json
      run "$OUT/${g}__m-etf.json" "$AWARE" place --graph "$graph" --cluster "$CLUSTER" --method m-etf --json
      run "$OUT/${g}__s${s}__zero-shot.json" "$AWARE" search --agent aware --graph "$graph" --cluster "$CLUSTER" \
        --seed "$s" --init "$pol" ${EXTRA[@]+"${EXTRA[@]}"} --json
      run "$OUT/${g}__s${s}__zero-shot-balanced.json" "$AWARE" search --agent aware --graph "$graph" \
        --cluster "$CLUSTER" --seed "$s" --init "$pol" --agent-option decode=balanced ${EXTRA[@]+"${EXTRA[@]}"} --json
      run "$OUT/${g}__s${s}__finetune.json" "$AWARE" search --agent aware --graph "$graph" --cluster "$CLUSTER" \
        --seed "$s" --init "$pol" --budget-evals "$FINETUNE" --workers 2 --curve "$OUT/${g}__s${s}__finetune.curve.csv" ${EXTRA[@]+"${EXTRA[@]}"} --json
      run "$OUT/${g}__s${s}__scratch.json" "$AWARE" search --agent aware --graph "$graph" --cluster "$CLUSTER" \
        --seed "$s" --budget-evals "$FINETUNE" --workers 2 --curve "$OUT/${g}__s${s}__scratch.curve.csv" ${EXTRA[@]+"${EXTRA[@]}"} --json
    done
  done
done
echo "done: experiments/transfer_pretrain_table.py $OUT" >&2
