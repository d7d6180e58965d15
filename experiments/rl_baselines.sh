#!/usr/bin/env bash
# Learned agents against the searches at an equal evaluation budget: now a thin call
# of `aware reproduce --only agents` (resumable cells, a report with learning curves).
#
#   experiments/rl_baselines.sh [--budget N] [--full] [--seeds "1 2 3"] [--out DIR] [--aware PATH]
#   --budget N: evaluations per method and run (default: the small budget's 100);
#   --full: the paper budget (2,000 evaluations, 3 seeds). The models and cluster are the
#   budget's (aware reproduce --list). The report is DIR/REPORT.md (default out/rl_baselines/).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
aware="${AWARE:-$here/build/cli/aware}"
budget=small
args=()
out="$here/out/rl_baselines"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) args+=(--evals "$2"); shift 2 ;;
    --full) budget=paper; shift ;;
    --seeds) args+=(--seeds "$(echo "$2" | tr -s ' ' ',')"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --aware) aware="$2"; shift 2 ;;
    *) echo "error: $1 is no longer an option: aware reproduce runs the budget's cases (aware reproduce --list)" >&2; exit 2 ;;
  esac
done
exec "$aware" reproduce --budget "$budget" --only agents "${args[@]}" -o "$out"
