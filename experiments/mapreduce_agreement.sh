#!/usr/bin/env bash
# The MapReduce strategies under both evaluators on a Hadoop cluster: one
# iteration of a small recurrent LM (batch 4096) as a Hadoop job and cached.
#   experiments/mapreduce_agreement.sh [out.md]
set -euo pipefail
cd "$(dirname "$0")/.."
AWARE=${AWARE:-build/cli/aware}
GRAPH=${GRAPH:-zoo:rnnlm:hidden=256,vocab=2000,seq_len=10,layers=1,batch=4096}
CLUSTER=${CLUSTER:-preset:hadoop:8}
OUT=${1:-experiments/results/strategies/mapreduce-agreement.md}
mkdir -p "$(dirname "$OUT")"
step_us() {
  "$AWARE" simulate --graph "$GRAPH" --cluster "$CLUSTER" --strategy "$1" --evaluator "$2" --json 2>/dev/null |
    sed -n 's/^ "step_time_us": \(.*\),$/\1/p'
}
{
  echo "$GRAPH on $CLUSTER: one iteration, s"
  echo
  echo "| strategy | analytic s | SimGrid s | SimGrid / analytic |"
  echo "|---|---|---|---|"
  for spec in mapreduce:4 mapreduce:8 mapreduce:4,cache=on mapreduce:8,cache=on; do
    a=$(step_us "$spec" analytic)
    s=$(step_us "$spec" simgrid)
    awk -v p="$spec" -v a="$a" -v s="$s" 'BEGIN { printf "| %s | %.3f | %.3f | %.3f |\n", p, a / 1e6, s / 1e6, s / a }'
  done
} | tee "$OUT.tmp"
# Only a finished table replaces the old one (set -e stops before this on a failure).
mv "$OUT.tmp" "$OUT"
