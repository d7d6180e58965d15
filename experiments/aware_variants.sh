#!/usr/bin/env bash
# Aware's anti-collapse variants at one equal budget, one cell per (model, devices,
# variant, seed) in scripts/agents-vs-searches' cell format and folder, so that script's
# table (--table-only --methods "aware aware-lr3 ...") shows them beside the searches.
# A rerun skips finished cells. The variants were defined for the trainer as it was
# before 2026-12-03 (the descriptions below are of that trainer): today `--entropy` is a
# weight per decision on the policy term's own normaliser (about 200 times stronger on
# Aware's ~200 groups than the same number was then), the learning rate decays by update
# count, and the default preset is another configuration (docs/agents.md;
# experiments/aware_defaults.sh is today's ablation). Variants (none is the paper's):
#   aware-lr3   Adam from 1e-3 (the default from 1e-2; both decay tenfold over the budget)
#   aware-ppo   PPO's clipped objective (4 epochs, clip 0.2) instead of REINFORCE
#   aware-ent   entropy bonus 0.05 per decision (default 0.01)
#   aware-ent02 entropy bonus 0.2 per decision: the bonus is the mean entropy per
#               decision against a log-probability summed over ~200 groups, so the
#               default 0.01 lets the policy collapse within ~50 updates and 0.5 and
#               more keep it uniform (experiments/results/aware-collapse/)
#   aware-entsched  entropy bonus from 0.1 down to 0.001 over the budget (--entropy-end)
#   aware-std-entsched  both the schedule and standardised advantages (aware-std in
#               scripts/agents-vs-searches)
#   aware-best  state=best: each episode starts from the best placement found so far
#               (iterative refinement; the paper's state is the fixed reference)
#   aware-sil   self-imitation: each update also clones the best placement found so far
#               (--self-imitation 0.5, on the policy-gradient term's scale; cap 0.9)
#   aware-sils  the same from the best the policy sampled (--self-imitation-from samples):
#               the reference state, which aware-sil may clone, is not a sample
#   [AWARE=BIN] experiments/aware_variants.sh [--budget 2000] [--seeds "1 2 3"] [--devices "4"]
#       [--models "inception_v3 resnet50 gnmt"] [--variants "aware-ent02 aware-entsched aware-std-entsched aware-best aware-lr3 aware-ppo aware-ent aware-sil aware-sils"]
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=2000 SEEDS="1 2 3" DEVICES="4" MODELS="inception_v3 resnet50 gnmt" VARIANTS="aware-ent02 aware-entsched aware-std-entsched aware-best aware-lr3 aware-ppo aware-ent"
while (($#)); do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --devices) DEVICES="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --variants) VARIANTS="$2"; shift 2 ;;
    *) echo "error: experiments/aware_variants.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
OUT=experiments/results/agents-vs-searches/cells
mkdir -p "$OUT"
for m in $MODELS; do for d in $DEVICES; do for v in $VARIANTS; do for s in $SEEDS; do
  cell="$OUT/${m}__k40x${d}__${v}__e${BUDGET}__s${s}.json"
  [[ -s "$cell" ]] && continue
  case "$v" in
    aware-lr3) extra=(--lr 0.001) ;;
    aware-ppo) extra=(--algorithm ppo) ;;
    aware-ent) extra=(--entropy 0.05) ;;
    aware-ent02) extra=(--entropy 0.2) ;;
    aware-entsched) extra=(--entropy 0.1 --entropy-end 0.001) ;;
    aware-std-entsched) extra=(--standardize-advantages on --entropy 0.1 --entropy-end 0.001) ;;
    aware-best) extra=(--agent-option state=best) ;;
    aware-sil) extra=(--self-imitation 0.5) ;;
    aware-sils) extra=(--self-imitation 0.5 --self-imitation-from samples) ;;
    *) echo "error: unknown variant '$v'" >&2; exit 2 ;;
  esac
  echo "$m k40x$d $v seed $s" >&2
  start=$(date +%s.%N)
  "$AWARE" search --agent aware --graph "zoo:$m" --cluster "preset:k40x$d" --budget-evals "$BUDGET" --seed "$s" \
    --workers 2 "${extra[@]}" --curve "${cell%.json}.curve.csv" --json > "$cell.tmp" 2>/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 experiments/stamp_cell.py "$cell.tmp" "$start" "$end"
  mv "$cell.tmp" "$cell"
done; done; done; done
