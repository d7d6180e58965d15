#!/bin/bash
# Re-run: [SEEDS="1 2 3"] experiments/results/transfer-pretrain2000/run.sh [AWARE binary] (skips finished runs).
# Transfer with pre-training at 2,000 evaluations per training graph (the small budget's is
# 100): Aware pre-trained on each family's 9 training members (dgx-v100, 18,000 evaluations,
# seeds 1-3; one thread: `aware pretrain` takes more workers only under mpirun), then on each
# held-out member (4, 8, 12, 2 worker threads): zero-shot with the
# paper's argmax decode and with decode=balanced (one evaluation each), and fine-tuned for
# 2,000 evaluations with a learning curve. Compare with ../transfer-2000 (from scratch).
cd "$(dirname "$0")/../../.."
AWARE=${1:-build/cli/aware}
O=experiments/results/transfer-pretrain2000
json_ms() { /usr/bin/python3 -c "import json;print(round(json.load(open('$1'))['step_time_us']/1e3,2))" 2>/dev/null; }
for s in ${SEEDS:-1 2 3}; do for fam in cifar10 ptb; do
  pol=$O/pretrain__${fam}__s${s}.pt
  if [[ ! -s $O/pretrain__${fam}__s${s}.json ]]; then
    "$AWARE" pretrain --agent aware --family $fam --count 12 --cluster preset:dgx-v100 --seed $s \
      --budget-evals 18000 --save-policy $pol --curve $O/pretrain__${fam}__s${s}.curve.csv \
      --resume $O/pretrain__${fam}__s${s}.ckpt --json > $O/pretrain__${fam}__s${s}.json.tmp 2>/dev/null &&
      mv $O/pretrain__${fam}__s${s}.json.tmp $O/pretrain__${fam}__s${s}.json && rm -rf $O/pretrain__${fam}__s${s}.ckpt
    [[ -s $O/pretrain__${fam}__s${s}.json ]] || { echo "error: pre-training $fam seed $s failed (run it by hand to see why)" >&2; exit 1; }
    echo "pretrain $fam s$s done"
  fi
  for m in 4 8 12; do
    for how in zero-shot zero-shot-balanced finetune; do
      f=$O/${fam}-${m}__s${s}__${how}.json
      [[ -s $f ]] && continue
      case $how in
        zero-shot) args=() ;;
        zero-shot-balanced) args=(--agent-option decode=balanced) ;;
        finetune) args=(--budget-evals 2000 --workers 2 --curve $O/${fam}-${m}__s${s}__finetune.curve.csv) ;;
      esac
      "$AWARE" search --agent aware --graph family:$fam:$m --cluster preset:dgx-v100 --seed $s --init $pol \
        "${args[@]}" --json > $f.tmp 2>/dev/null && mv $f.tmp $f
      echo "$fam-$m s$s $how $(json_ms $f)"
    done
  done
done; done
