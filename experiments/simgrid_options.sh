#!/bin/bash
# SimGrid evaluator throughput (one worker) on the 1,000-op random DAG over k40x4:
# each of SimGrid's own solver options, then placements with fewer transfers.
# Writes experiments/results/bench-simgrid/options.md (run from the repository root).
#   experiments/simgrid_options.sh [SECONDS]
set -euo pipefail
aware=${AWARE:-build/cli/aware}
seconds=${1:-4}
out=experiments/results/bench-simgrid
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rate() {  # evaluations/s of one bench run, or why SimGrid refused
  "$aware" bench simulate --graph random:1000:1 --cluster preset:k40x4 --evaluator simgrid \
    --option workers=1 "$@" --seconds "$seconds" --json -o "$tmp/b.json" > "$tmp/out" 2> "$tmp/err" &&
    python3 -c "import json; d = json.load(open('$tmp/b.json')); print(f\"{d['evaluations_per_second']:.1f}\")" ||
    echo "refused: $(grep -m1 -o 'killed by signal [0-9]* ([A-Z]*)' "$tmp/err" || head -c 80 "$tmp/err")"
}
{
  echo "# SimGrid evaluator, one worker, random:1000:1 on k40x4 (random placements)"
  echo
  echo "\`$0 $seconds\`, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)."
  echo
  echo "| SimGrid option | evaluations/s |"
  echo "|---|---:|"
  for cfg in "" network/optim=Full cpu/optim=Full cpu/optim=TI network/maxmin-selective-update=yes \
             network/maxmin-selective-update=no network/model=CM02 network/model=Constant \
             maxmin/concurrency-limit=100; do
    if [ -z "$cfg" ]; then echo "| (defaults: Lazy network and CPU) | $(rate) |"
    else echo "| \`$cfg\` | $(rate --option "cfg.$cfg") |"; fi
  done
  echo
  echo "| placement | transfers | evaluations/s |"
  echo "|---|---:|---:|"
  for method in m-topo m-etf; do
    "$aware" place --graph random:1000:1 --cluster preset:k40x4 --method "$method" -o "$tmp/$method.json" \
      --json 2>/dev/null > "$tmp/$method.out"
    t=$(python3 -c "import json; print(json.load(open('$tmp/$method.out'))['transfers'])")
    echo "| $method's | $t | $(rate --placement "$tmp/$method.json") |"
  done
  echo "| random (a new one per call) | ~1,153 | $(rate) |"
} | tee "$out/options.md.tmp"
# Only a finished table replaces the old one (set -e stops before this on a failure).
mv "$out/options.md.tmp" "$out/options.md"
