#!/usr/bin/env bash
# Step time of the same placement under the analytic (contention) simulator and
# under SimGrid, per zoo model, on a PCIe K40 box and on a 2-node cluster.
# Placements come from m-etf (scheduled on the analytic model). SimGrid twice: each
# device running its first ready op in SimGrid's time (order=ready, the default),
# and in the analytic schedule's order (order=analytic, the only mode before).
#   experiments/analytic_vs_simgrid.sh [models] [out.md]
set -euo pipefail
cd "$(dirname "$0")/.."
AWARE=${AWARE:-build/cli/aware}
MODELS=${1:-inception_v3,resnet50,nasnet,nmt4,gnmt,rnnlm,transformer}
OUT=${2:-out/analytic-vs-simgrid.md}
mkdir -p out "$(dirname "$OUT")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "| model | cluster | placement | analytic ms | simgrid ms (ready) | simgrid / analytic | simgrid ms (analytic order) | simgrid / analytic |"
  echo "|---|---|---|---|---|---|---|---|"
  for cluster in preset:k40x4 preset:multi-node:2x4; do
    for model in ${MODELS//,/ }; do
      "$AWARE" place --graph "zoo:$model" --cluster "$cluster" --method m-etf -o "$tmp/p.json" >/dev/null
      a=$("$AWARE" simulate --graph "zoo:$model" --cluster "$cluster" --placement "$tmp/p.json" --json |
          sed -n 's/^ "step_time_us": \(.*\),$/\1/p')
      s=$("$AWARE" simulate --graph "zoo:$model" --cluster "$cluster" --placement "$tmp/p.json" \
          --evaluator simgrid --option workers=1 --json | sed -n 's/^ "step_time_us": \(.*\),$/\1/p')
      o=$("$AWARE" simulate --graph "zoo:$model" --cluster "$cluster" --placement "$tmp/p.json" \
          --evaluator simgrid --option workers=1 --option order=analytic --json |
          sed -n 's/^ "step_time_us": \(.*\),$/\1/p')
      awk -v m="$model" -v c="${cluster#preset:}" -v a="$a" -v s="$s" -v o="$o" \
        'BEGIN { printf "| %s | %s | m-etf | %.3f | %.3f | %.3f | %.3f | %.3f |\n", m, c, a / 1e3, s / 1e3, s / a, o / 1e3, o / a }'
    done
  done
} | tee "$OUT.tmp"
# Only a finished table replaces the old one (set -e stops before this on a failure).
mv "$OUT.tmp" "$OUT"
