#!/usr/bin/env bash
# "What should I run": every zoo model on three clusters, each as a single device,
# placed by the list schedulers, and under the parallel strategies, scored by one
# evaluator as the time of one global batch. Resumable: each cluster's cells are
# journalled, so a killed run continues where it stopped.
#   experiments/strategies_table.sh [strategies] [evaluator] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
AWARE=${AWARE:-build/cli/aware}
MODELS=${MODELS:-inception_v3,resnet50,nasnet,nmt4,gnmt,rnnlm,transformer}
METHODS=${METHODS:-single,m-topo,m-etf,m-sct,heft}
STRATEGIES=${1:-dp:ring,dp:tree,dp:ps,dp:reduce,dp:ring,overlap=off,hybrid:2xm-etf,bagging}
EVALUATOR=${2:-analytic}
OUT=${3:-experiments/results/strategies}
CLUSTERS=${CLUSTERS:-k40x4 dgx-v100 multi-node:2x8}
mkdir -p "$OUT"
for cluster in $CLUSTERS; do
  name=${cluster//:/-}
  "$AWARE" compare --models "$MODELS" --cluster "$cluster" --methods "$METHODS" \
    --strategies "$STRATEGIES" --evaluator "$EVALUATOR" \
    --resume "$OUT/journal-$name-$EVALUATOR.jsonl" -o "$OUT/what-to-run-$name-$EVALUATOR.json" >/dev/null
  "$AWARE" compare --models "$MODELS" --cluster "$cluster" --methods "$METHODS" \
    --strategies "$STRATEGIES" --evaluator "$EVALUATOR" \
    --resume "$OUT/journal-$name-$EVALUATOR.jsonl" -o "$OUT/what-to-run-$name-$EVALUATOR.md" >/dev/null
  echo "wrote $OUT/what-to-run-$name-$EVALUATOR.md"
done
