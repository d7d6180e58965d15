#!/usr/bin/env bash
# Replays of an out-of-sample CUDA validate run (what scripts/gpu-check wrote in
# RUN_DIR) with and without one host that issues every task (the analytic
# simulator's host.op_us / host.copy_us). Nothing runs on a GPU: the run's
# measurements and profile are read back and only the predictions are made again.
# Writes RUN_DIR/replay-host-{none,launch,gemm}.md:
#   none    the run's own simulator settings (no host)
#   launch  ops and copies at the calibration's tiny-op chain (launch_overhead_us)
#   gemm    ops at the GEMM sweep's per-GEMM intercept (gemm_overhead_us), copies
#           at the tiny-op chain
# Both costs are the run's own calibration (RUN_DIR/calibration.json).
#   [AWARE=BIN] experiments/gpu_host_replay.sh RUN_DIR
set -euo pipefail
RUN="${1:?usage: experiments/gpu_host_replay.sh RUN_DIR}"
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
for f in validate.json costs.json calibration.json cluster.json logs/validate.log; do
  [[ -s "$RUN/$f" ]] || { echo "error: $RUN/$f is missing (not a gpu-check run?)" >&2; exit 1; }
done
# The run's graphs and held-out model, from its logged command.
read -r -a words < <(head -n1 "$RUN/logs/validate.log")
args=()
for ((i = 0; i < ${#words[@]} - 1; ++i)); do
  case "${words[i]}" in --graph|--holdout|--methods|--random|--seed) args+=("${words[i]}" "${words[i+1]}") ;; esac
done
cost() { python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$RUN/calibration.json" "$1"; }
launch="$(cost launch_overhead_us)"
gemm="$(cost gemm_overhead_us)"
replay() {
  local name="$1"
  shift
  "$AWARE" validate --backend cuda --cluster "$RUN/cluster.json" --uncalibrated "$RUN/cluster.json" "${args[@]}" \
    --simulators analytic --sim-option analytic:copies=consumer --slowdowns-from "$RUN/calibration.json" "$@" \
    --measured "$RUN/validate.json" --costs "$RUN/costs.json" --format md -o "$RUN/replay-host-$name.md.tmp" >/dev/null 2>&1 \
    || { echo "error: the $name replay failed" >&2; rm -f "$RUN/replay-host-$name.md.tmp"; exit 1; }
  # The table only: the replay's paths are this machine's.
  sed -n '/^| model/,/^$/p' "$RUN/replay-host-$name.md.tmp" >"$RUN/replay-host-$name.md"
  rm -f "$RUN/replay-host-$name.md.tmp"
  echo "$RUN/replay-host-$name.md"
}
replay none
replay launch --sim-option "analytic:host.op_us=$launch" --sim-option "analytic:host.copy_us=$launch"
replay gemm --sim-option "analytic:host.op_us=$gemm" --sim-option "analytic:host.copy_us=$launch"
