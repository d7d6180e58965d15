#!/bin/bash
# Re-run: experiments/results/transfer-2000/run.sh (skips finished runs).
# From-scratch Aware at 2,000 evaluations on the held-out family members (dgx-v100), one JSON per run.
cd "$(dirname "$0")/../../.."
O=experiments/results/transfer-2000
for fam in cifar10 ptb; do for m in 4 8 12; do for s in 1 2 3; do
  f=$O/${fam}-${m}__s${s}.json
  [[ -s $f ]] && continue
  build/cli/aware search --agent aware --graph family:$fam:$m --cluster preset:dgx-v100 --budget-evals 2000 --seed $s --workers 2 --json > $f.tmp 2>/dev/null && mv $f.tmp $f
  echo "$fam-$m s$s $(/usr/bin/python3 -c "import json;print(round(json.load(open('$f'))['step_time_us']/1e3,2))" 2>/dev/null)"
done; done; done
