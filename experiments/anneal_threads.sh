#!/bin/bash
# Anneal on one thread against anneal with threads=2 (each move evaluated beside
# the proposal that would follow its rejection) and against two chains
# (--chains 2), in one sitting, for each graph:
#   - the same budget on one and two threads: the same placement (checked) and
#     the time each took (fastest of RUNS alternated runs);
#   - equal wall-clock: two threads given the evaluations they make in the
#     time one thread takes for EVALS, and the step time each ends with; and
#     two chains given 2 x EVALS (EVALS each), with the time they took.
#   experiments/anneal_threads.sh [GRAPH...]   (env: AWARE=build/cli/aware METHOD=anneal-graph
#                                                EVALS=5000 RUNS=3 SEEDS="1 2 3" OUT=file)
set -euo pipefail
aware=${AWARE:-build/cli/aware}
method=${METHOD:-anneal-graph}
evals=${EVALS:-5000}; runs=${RUNS:-3}; seeds=${SEEDS:-1 2 3}
if [ $# -gt 0 ]; then graphs=("$@"); else graphs=(zoo:inception_v3 zoo:nmt4); fi
out=${OUT:-}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# place GRAPH SEED BUDGET ARGS... -> "seconds step_us" (the search's own time)
place() {
  local g=$1 s=$2 b=$3; shift 3
  "$aware" place --graph "$g" --cluster preset:k40x4 --method "$method" --budget-evals "$b" \
    --seed "$s" "$@" --json > "$tmp" 2>/dev/null
  python3 -c "import json; d = json.load(open('$tmp')); print(d['place_time_s'], repr(d['step_time_us']))"
}
{
echo "| graph | seed | evals | 1 thread s | 2 threads s | speed-up | same placement | 2 threads in 1 thread's time: evals | step ms: 1 thread | 2 threads, equal time | 2 chains, 2 x evals | 2 chains s |"
echo "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
for g in "${graphs[@]}"; do
  for s in $seeds; do
    best1=1e9; best2=1e9; step1=""; step2=""
    for ((i = 0; i < runs; ++i)); do
      read -r t1 s1 <<< "$(place "$g" "$s" "$evals")"
      read -r t2 s2 <<< "$(place "$g" "$s" "$evals" --method-option threads=2)"
      best1=$(python3 -c "print(min($best1, $t1))"); best2=$(python3 -c "print(min($best2, $t2))")
      step1=$s1; step2=$s2
    done
    same=$([ "$step1" = "$step2" ] && echo yes || echo "NO ($step1 vs $step2)")
    more=$(python3 -c "print(int($evals * $best1 / $best2))")
    read -r _ s_eq <<< "$(place "$g" "$s" "$more" --method-option threads=2)"
    read -r t_ch s_ch <<< "$(place "$g" "$s" $((2 * evals)) --chains 2)"
    python3 -c "
print('| $g | $s | $evals | %.3f | %.3f | %.2fx | $same | $more | %.1f | %.1f | %.1f | %.3f |' % (
    $best1, $best2, $best1 / $best2, $step1 / 1e3, $s_eq / 1e3, $s_ch / 1e3, $t_ch))"
  done
done
} | if [ -n "$out" ]; then tee "$out.tmp" && mv "$out.tmp" "$out"; else cat; fi
