#!/usr/bin/env bash
# The GA-placed hybrid claim (Akintoye et al. 2022, F5: model + data parallelism with
# a GA placing the partitions, ~20% faster than the plain split): the genetic placer on
# the unsplit step (model parallel only) against hybrid:RxGENETIC (R data-parallel
# groups, each placed by the same GA), with the same evaluation budget, and m-ETF's
# hybrid beside them. Analytic simulator.
#   experiments/ga_hybrid.sh [models] [cluster] [budget] [out.md]
set -euo pipefail
cd "$(dirname "$0")/.."
AWARE=${AWARE:-build/cli/aware}
MODELS=${1:-rnnlm,nmt4,gnmt,resnet50,transformer}
CLUSTER=${2:-multi-node:2x8}
BUDGET=${3:-300}
OUT=${4:-experiments/results/strategies/ga-hybrid.md}
mkdir -p "$(dirname "$OUT")"
"$AWARE" compare --models "$MODELS" --cluster "$CLUSTER" --methods m-etf,genetic \
  --strategies hybrid:2xgenetic,hybrid:4xgenetic,hybrid:2xm-etf --budget-evals "$BUDGET" \
  -o "$OUT" >/dev/null
cat "$OUT"
