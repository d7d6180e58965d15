#!/usr/bin/env bash
# The Aware paper's tables: now a thin call of `aware reproduce`, which runs them
# as resumable cells and writes one report with figures and the claims checklist.
#
#   experiments/aware_tables.sh [--table 1|2|3|4|all|agents] [--budget N] [--full] [--seeds "1 2 3"]
#                               [--out DIR] [--aware PATH]
#   --table 1 -> table1; 2 or 3 -> transfer (Tables 2 and 3 come from the same runs);
#   4 -> ablation; all (default) -> all three; agents -> the learned agents against the
#   searches (what experiments/rl_baselines.sh runs). --budget N: evaluations per run (default:
#   the small budget's 100); --full: the paper budget (2,000 evaluations, 3 seeds).
# The cases (models, clusters, families) are the budget's: `aware reproduce --list` shows
# them. The report is DIR/REPORT.md (default out/aware_tables/).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
aware="${AWARE:-$here/build/cli/aware}"
only="table1,transfer,ablation"
budget=small
args=()
out="$here/out/aware_tables"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --table)
      case "$2" in
        1) only=table1 ;; 2|3) only=transfer ;; 4) only=ablation ;; all) only="table1,transfer,ablation" ;;
        agents) only=agents ;;
        *) echo "error: --table must be 1, 2, 3, 4, all or agents" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --budget) args+=(--evals "$2"); shift 2 ;;
    --full) budget=paper; shift ;;
    --seeds) args+=(--seeds "$(echo "$2" | tr -s ' ' ',')"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --aware) aware="$2"; shift 2 ;;
    *) echo "error: $1 is no longer an option: aware reproduce runs the budget's cases (aware reproduce --list)" >&2; exit 2 ;;
  esac
done
exec "$aware" reproduce --budget "$budget" --only "$only" "${args[@]}" -o "$out"
