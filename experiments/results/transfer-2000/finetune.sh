#!/bin/bash
# Re-run: experiments/results/transfer-2000/finetune.sh [AWARE binary] (skips finished runs).
# Pre-trained + fine-tune against from scratch, both at 2,000 evaluations with learning
# curves, on the held-out family members (dgx-v100, workers 2). The policies are the
# `aware reproduce --budget small` pre-training cells (100 evaluations per training graph).
# From scratch is run again with a curve: its result must equal the run.sh JSON beside it.
cd "$(dirname "$0")/../../.."
AWARE=${1:-build/cli/aware}
O=experiments/results/transfer-2000
P=experiments/results/reproduce-small-3seeds-b/cells
for fam in cifar10 ptb; do for m in 4 8 12; do for s in 1 2 3; do
  for how in scratch finetune; do
    f=$O/${fam}-${m}__s${s}__${how}.json
    [[ -s $f ]] && continue
    init=()
    [[ $how == finetune ]] && init=(--init "$P/pretrain__${fam}__dgx-v100__aware__n12__s${s}__e900.pt")
    "$AWARE" search --agent aware --graph family:$fam:$m --cluster preset:dgx-v100 --budget-evals 2000 --seed $s \
      --workers 2 "${init[@]}" --curve "$O/${fam}-${m}__s${s}__${how}.curve.csv" --json > $f.tmp 2>/dev/null && mv $f.tmp $f
    echo "$fam-$m s$s $how $(/usr/bin/python3 -c "import json;print(round(json.load(open('$f'))['step_time_us']/1e3,2))" 2>/dev/null)"
  done
done; done; done
