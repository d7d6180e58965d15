#!/usr/bin/env bash
# Predicts the H200 measurements of 2026-12-01 again on any machine (no GPU needed):
# `aware validate --measured` takes the measured step times from validate.json and
# runs only the simulators. For each run (base: zoo nmt2 and rnnlm; scaled: nmt2 at
# batch 256, rnnlm at batch 512) it writes
#   costs-scoped.json   the run's cost table with shared op names scoped (scope_costs.py)
#   replay.md/.json     calibrated cluster + scoped table + calibrated slowdowns +
#                       copies on the consumer's stream (as the executor runs them)
#   replay-links.md     the same with copies on the links, overlapping compute
#   replay-noslow.md    copies on the links and no slowdowns (devices independent)
#   replay-asrun.md     what the run printed: the table as it was (shared names
#                       clashed), slowdowns, copies on the links
#   experiments/results/gpu/replay.sh [AWARE]      (default build/cli/aware)
set -euo pipefail
cd "$(dirname "$0")/../../.."
AWARE="${1:-build/cli/aware}"
DIR=experiments/results/gpu
for run in base scaled; do
  d="$DIR/$run"
  if [ "$run" = base ]; then nmt=zoo:nmt2; rnn=zoo:rnnlm; else nmt=zoo:nmt2:batch=256; rnn=zoo:rnnlm:batch=512; fi
  trace="$(ls "$d"/trace-*single.json)"
  tmp="$(mktemp -d)"
  "$AWARE" graph export "$rnn" --format json -o "$tmp/rnnlm.json" >/dev/null
  python3 "$DIR/scope_costs.py" "$d/costs.json" "$trace" "$tmp/rnnlm.json" "$d/costs-scoped.json"
  rm -rf "$tmp"
  read -r sc sm < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["concurrent_gemm_slowdown"], d["concurrent_stream_slowdown"])' "$d/calibration.json")
  common=(--graph "$nmt" --graph "$rnn" --cluster "$d/cluster.json" --uncalibrated "$d/uncalibrated.json"
          --backend cuda --methods m-etf,heft,m-topo --random 3 --measured "$d/validate.json")
  slow=(--sim-option "analytic:slowdown.compute=$sc" --sim-option "analytic:slowdown.memory=$sm")
  consumer=(--sim-option analytic:copies=consumer)
  "$AWARE" validate "${common[@]}" --costs "$d/costs-scoped.json" "${slow[@]}" "${consumer[@]}" -o "$d/replay.json" 2>/dev/null
  "$AWARE" validate "${common[@]}" --costs "$d/costs-scoped.json" "${slow[@]}" "${consumer[@]}" -o "$d/replay.md" 2>/dev/null
  "$AWARE" validate "${common[@]}" --costs "$d/costs-scoped.json" "${slow[@]}" -o "$d/replay-links.md" 2>/dev/null
  "$AWARE" validate "${common[@]}" --costs "$d/costs-scoped.json" -o "$d/replay-noslow.md" 2>/dev/null
  "$AWARE" validate "${common[@]}" --costs "$d/costs.json" "${slow[@]}" -o "$d/replay-asrun.md" 2>/dev/null
  echo "== $run (slowdown.compute=$sc slowdown.memory=$sm)"
  cat "$d/replay.md"
done
