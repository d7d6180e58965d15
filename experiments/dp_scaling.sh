#!/usr/bin/env bash
# Data-parallel scaling on a multi-node cluster, by the analytic simulator:
#  weak   - a fixed per-GPU batch (the global batch grows with N), as Horovod and
#           Goyal et al. measure: efficiency = T(1) / T(N);
#  strong - the zoo's fixed global batch split N ways: efficiency = T(1) / (N T(N)).
#   experiments/dp_scaling.sh [models] [cluster] [per-gpu batch] [out.md]
set -euo pipefail
cd "$(dirname "$0")/.."
AWARE=${AWARE:-build/cli/aware}
MODELS=${1:-resnet50,inception_v3,transformer}
CLUSTER=${2:-multi-node:2x8}
PER_GPU=${3:-32}
OUT=${4:-experiments/results/strategies/dp-scaling.md}
COLLECTIVE=${COLLECTIVE:-ring}
mkdir -p "$(dirname "$OUT")"
step_us() {  # graph N
  "$AWARE" simulate --graph "$1" --cluster "preset:$CLUSTER" --strategy "dp:$2,collective=$COLLECTIVE" --json 2>/dev/null |
    sed -n 's/^ "step_time_us": \(.*\),$/\1/p'
}
{
  echo "dp:N,collective=$COLLECTIVE on $CLUSTER (analytic simulator); weak: $PER_GPU samples per GPU; strong: the zoo's global batch"
  echo
  echo "| model | N | weak: global batch | weak: ms per step | weak efficiency | strong: ms per step | strong speed-up | strong efficiency |"
  echo "|---|---|---|---|---|---|---|---|"
  for model in ${MODELS//,/ }; do
    t1w=""; t1s=""
    for n in 1 2 4 8 16; do
      w=$(step_us "zoo:$model:batch=$((PER_GPU * n))" "$n")
      s=$(step_us "zoo:$model" "$n")
      [ -z "$t1w" ] && t1w=$w && t1s=$s
      awk -v m="$model" -v n="$n" -v b="$((PER_GPU * n))" -v w="$w" -v s="$s" -v t1w="$t1w" -v t1s="$t1s" \
        'BEGIN { printf "| %s | %d | %d | %.2f | %.0f%% | %.2f | %.2f | %.0f%% |\n", m, n, b, w / 1e3, 100 * t1w / w, s / 1e3, t1s / s, 100 * t1s / (n * s) }'
    done
  done
} | tee "$OUT.tmp"
# Only a finished table replaces the old one (set -e stops before this on a failure).
mv "$OUT.tmp" "$OUT"
