#!/usr/bin/env bash
# Every non-learned placer (and the fused ones) on the five models of the Aware
# paper's Table 1, at each search's default 2,000 evaluations, seed 1: on K40 boxes
# of 2, 4 and 8 GPUs and on an 8-GPU NVLink box. Writes the two Markdown tables
# that docs/results/baselines.md links (step times are deterministic; the
# placement-time tables are this machine's wall clock). About 8 minutes on 2 cores.
#   experiments/compare_2000.sh [OUT]     (default experiments/results/compare-2000)
set -euo pipefail
cd "$(dirname "$0")/.."
AWARE="${AWARE:-build/cli/aware}"
OUT="${1:-experiments/results/compare-2000}"
mkdir -p "$OUT"
models=inception_v3,resnet50,nasnet,nmt4,gnmt
methods=all,fused-m-etf,fused-anneal
"$AWARE" compare --models "$models" --cluster k40x4 --devices 2,4,8 --methods "$methods" --format md -o "$OUT/k40.md"
"$AWARE" compare --models "$models" --cluster dgx-v100 --devices 8 --methods "$methods" --format md -o "$OUT/dgx-v100.md"
