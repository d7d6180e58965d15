#!/usr/bin/env bash
# Learned agents against the searches at an equal evaluation budget: now a thin call
# of `aware reproduce --only agents` (resumable cells, a report with learning curves).
#
#   experiments/rl_baselines.sh [--budget N] [--full] [--seeds "1 2 3"] [--out DIR] [--aware PATH]
#   --budget N: evaluations per method and run (default: the small budget's 100);
#   --full: the paper budget (2,000 evaluations, 3 seeds). The models and cluster are the
#   budget's (aware reproduce --list). The report is DIR/REPORT.md (default out/rl_baselines/).
set -euo pipefail
# The options are aware_tables.sh's; its --table agents is this table. A later --out wins.
here="$(cd "$(dirname "$0")/.." && pwd)"
exec "$here/experiments/aware_tables.sh" --table agents --out "$here/out/rl_baselines" "$@"
