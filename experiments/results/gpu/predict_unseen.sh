#!/usr/bin/env bash
# Predicts the two strategy steps the H200 run of 2026-12-01 measured but never
# profiled (zoo nmt2 under dp:2, whose replicas "r0/...", "r1/..." and collective
# steps no cost table names; and place:m-etf, whose ops the table does name), on
# any machine: no GPU needed. For each run (base: nmt2; scaled: nmt2 at batch 256)
# it fits per-op-type costs to the run's scoped cost table (`aware costs fit`,
# from the profiles of nmt2 and rnnlm that the run made) and predicts each step
#   table       the table as it was (ops it does not name: the calibrated roofline)
#   fits        the table + its per-type fits
# both with the run's calibrated two-at-once slowdowns and copies on the
# consumer's stream (as replay.md). Beside them, the trivial predictor: the mean
# measured step of the model's 9 validate placements (validate.json).
# Writes experiments/results/gpu/unseen.md and the fitted tables (costs-fitted.json).
#   experiments/results/gpu/predict_unseen.sh [AWARE]      (default build/cli/aware)
set -euo pipefail
cd "$(dirname "$0")/../../.."
AWARE="${1:-build/cli/aware}"
DIR=experiments/results/gpu
out="$DIR/unseen.md.tmp"
{
  echo "# Strategy steps the H200 run measured and nobody profiled: predicted with and without per-type fits"
  echo
  echo "Made by \`experiments/results/gpu/predict_unseen.sh\` from the committed measurements; analytic simulator,"
  echo "calibrated cluster, calibrated slowdowns, copies on the consumer. Error = predicted / measured - 1."
  echo
  echo "| run | step | measured ms | table ms (err) | fits ms (err) | model's mean measured ms (err) | ops priced without a profile |"
  echo "|---|---|---:|---:|---:|---:|---|"
} > "$out"
for run in base scaled; do
  d="$DIR/$run"
  if [ "$run" = base ]; then nmt=zoo:nmt2; rnn=zoo:rnnlm; else nmt=zoo:nmt2:batch=256; rnn=zoo:rnnlm:batch=512; fi
  "$AWARE" costs fit --costs "$d/costs-scoped.json" --graph "$nmt" --graph "$rnn" -o "$d/costs-fitted.json" > "$d/costs-fitted.txt"
  read -r sc sm < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["concurrent_gemm_slowdown"], d["concurrent_stream_slowdown"])' "$d/calibration.json")
  mean=$(python3 -c 'import json,sys; r=[x["measured_us"] for x in json.load(open(sys.argv[1]))["rows"] if x["graph"]=="nmt2"]; print(sum(r)/len(r))' "$d/validate.json")
  for step in dp-2 place-m-etf; do
    spec="${step/-2/:2}"; spec="${spec/place-m-etf/place:m-etf}"
    log=$(ls "$d"/measure-nmt2*-"$step".log)
    measured=$(sed -n '/^{/,$p' "$log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_us"])')
    common=(simulate --graph "$nmt" --cluster "$d/cluster.json" --strategy "$spec" --evaluator analytic
            --option "slowdown.compute=$sc" --option "slowdown.memory=$sm" --option copies=consumer)
    table=$("$AWARE" "${common[@]}" --option "costs=$d/costs-scoped.json" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_us"])')
    fits=$("$AWARE" "${common[@]}" --option "costs=$d/costs-fitted.json" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_us"])')
    cover=$("$AWARE" "${common[@]}" --option "costs=$d/costs-fitted.json" 2>/dev/null | sed -n 's/^.*costs-fitted.json priced [0-9]* of [0-9]* (op, device) pairs; //p' | head -1)
    python3 - "$run" "$spec" "$measured" "$table" "$fits" "$mean" "$cover" >> "$out" <<'PY'
import sys
run, spec, m, t, f, mean, cover = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:7]), sys.argv[7]
e = lambda p: f"{p/1e3:.1f} ({100*(p/m-1):+.1f}%)"
print(f"| {run} | {spec} | {m/1e3:.1f} | {e(t)} | {e(f)} | {e(mean)} | {cover} |")
PY
  done
done
mv "$out" "$DIR/unseen.md"
cat "$DIR/unseen.md"
