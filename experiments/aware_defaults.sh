#!/usr/bin/env bash
# The ablation behind the learned agents' default configuration (docs/agents.md):
# one cell per (model, devices, variant, seed), Aware's default preset and variants
# of it, at one equal evaluation budget, analytic simulator, two worker threads.
# A rerun skips finished cells; --table prints the means per row.
# The ablation of 2026-12-03 chose the default: it was run around a candidate with
# an exploration floor (explore=0.01, variant `floor`), which the variants marked
# (+floor) keep; `noexplore` won, and is the default preset since.
#   default     the default preset (ours; since 2026-12-05 with norm=on, since
#               2026-12-07 with the elite step and, later that day, the entropy
#               floor: the same runs as hold20-elite10)
#   noelite     --elite 0: the default preset before 2026-12-07 (cells named
#               default before then were renamed noelite)
#   nonorm      norm=off: the default preset before 2026-12-05 (cells named
#               default before then were renamed nonorm)
#   floor       explore=0.01 (the candidate the ablation was run around)
#   paper       --preset paper (Placeto's training choices; docs/agents.md)
#   lr3         --lr 0.003 (+floor)
#   ppo         --algorithm ppo, one clipped ratio per decision, 4 epochs (+floor)
#   ent0        --entropy 0 (+floor)
#   ent01       --entropy 0.01 (+floor)
#   nofloor     bound=0 explore=0 (no bounded logits, no exploration floor)
#   nostd       --standardize-advantages off (+floor)
#   noexplore   explore=0 (bounded logits, no exploration floor)
#   ppo-nofloor --algorithm ppo with bound=0 explore=0
#   ep8         --episodes-per-update 8 (+floor)
#   lr03        --lr 0.03 (+floor)
#   ent01-nofloor --entropy 0.01 (no floor)
#   imitate     --imitate cheap: behaviour cloning of the best one-pass placer first
#   hinge       logit_penalty=0.01: the raw logits' hinge past the bound (default's network)
#   fine        threshold=3 groups=400: a finer fused graph (default's network)
#   explore5    explore=0.05: an exploration floor of 5% (1/40 per device on two
#               devices), which holds the entropy per decision above a tenth of
#               ln D on 2, 4 and 8 devices by construction (default's network)
#   hierarchical-explore5  Hierarchical's default with the same floor (explore=0.05 on
#               every grouper and placer decision; ours, an option)
#   around90, around97  around=0.9 / 0.97: sampling around the incumbent, each
#               decision keeping the best sampled placement's device with that
#               probability, else the policy's sample (ours, an option; default's network)
#   elite10     --elite 0.1 --elite-window 64: a cross-entropy step on the fastest tenth
#               of each worker's last 64 samples every update (ours, after Post, Gao et
#               al. NeurIPS 2018; agents/rl/elite.h; default's network). The default
#               preset from its switch on 2026-12-07 until the entropy floor joined it
#               the same day (run with --entropy-floor 0 since)
#   around97-elite10  both: sampling around the incumbent and the elite step
#   hold20-elite10  the elite step with an entropy floor (--entropy-floor 0.2: the bonus
#               weight rises by dual ascent to hold the entropy per decision at a fifth
#               of its start until half the budget; ours, agents/rl/entropy_floor.h).
#               The default preset's values since 2026-12-07 (seventh sitting), so its
#               runs are the default's, bit for bit
#   paper-ent0, paper-norm  the paper preset without its entropy bonus (--entropy 0) /
#               with our graph normalisation (norm=on): which holds it uniform
# Every variant but default, noelite, paper*, hinge, fine, explore5, around*, elite*, hold* and the Hierarchical ones was run
# around the default before 2026-12-05 and keeps its network: norm=off.
# Every Aware variant but default, noelite (explicitly) and those named elite runs without the
# elite step (--elite 0), as it was measured before the default took it on 2026-12-07.
# Every Aware variant but default and hold* runs without the entropy floor
# (--entropy-floor 0), as it was measured before the default took it (2026-12-07).
#   hierarchical, hierarchical-paper   the Hierarchical planner, default and paper presets
#   [AWARE=BIN] experiments/aware_defaults.sh [--budget 2000] [--seeds "1 2"] [--devices "4"]
#       [--models "inception_v3 resnet50 nasnet nmt4 gnmt"] [--variants "default paper ..."] [--table]
# Table 1's five models by default. A cell's name carries its variant, not the settings the
# variant ran with: when Aware's default preset changes, move the old `default` cells to a
# variant name of their own first (as `nonorm` on 2026-12-05 and `noelite` on 2026-12-07), or a
# re-run skips them as done.
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=2000 SEEDS="1 2" DEVICES="4" MODELS="inception_v3 resnet50 nasnet nmt4 gnmt"
VARIANTS="default paper lr3 ppo ent0 ent01 nofloor nostd" TABLE=0
while (($#)); do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --seeds) SEEDS="$2"; shift 2 ;;
    --devices) DEVICES="$2"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --variants) VARIANTS="$2"; shift 2 ;;
    --table) TABLE=1; shift ;;
    *) echo "error: experiments/aware_defaults.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
OUT=experiments/results/aware-defaults/cells
mkdir -p "$OUT"
if ((TABLE)); then
  exec /usr/bin/python3 experiments/aware_defaults_table.py "$OUT" "$BUDGET"
fi
AWARE="${AWARE:-build/cli/aware}"
[[ -x "$AWARE" ]] || { echo "error: $AWARE is missing: run scripts/setup first" >&2; exit 1; }
for m in $MODELS; do for d in $DEVICES; do for v in $VARIANTS; do for s in $SEEDS; do
  cell="$OUT/${m}__k40x${d}__${v}__e${BUDGET}__s${s}.json"
  [[ -s "$cell" ]] && continue
  agent=aware
  case "$v" in
    hierarchical) agent=hierarchical; extra=() ;;
    hierarchical-paper) agent=hierarchical; extra=(--preset paper) ;;
    default) extra=() ;;
    floor) extra=(--agent-option explore=0.01) ;;
    paper) extra=(--preset paper) ;;
    paper-ent0) extra=(--preset paper --entropy 0) ;;
    paper-norm) extra=(--preset paper --agent-option norm=on) ;;
    lr3) extra=(--lr 0.003 --agent-option explore=0.01) ;;
    ppo) extra=(--algorithm ppo --agent-option explore=0.01) ;;
    ent0) extra=(--entropy 0 --agent-option explore=0.01) ;;
    ent01) extra=(--entropy 0.01 --agent-option explore=0.01) ;;
    nofloor) extra=(--agent-option bound=0 --agent-option explore=0) ;;
    nostd) extra=(--standardize-advantages off --agent-option explore=0.01) ;;
    noexplore) extra=(--agent-option explore=0) ;;
    ppo-nofloor) extra=(--algorithm ppo --agent-option bound=0 --agent-option explore=0) ;;
    ep8) extra=(--episodes-per-update 8 --agent-option explore=0.01) ;;
    lr03) extra=(--lr 0.03 --agent-option explore=0.01) ;;
    ent01-nofloor) extra=(--entropy 0.01) ;;
    imitate) extra=(--imitate cheap) ;;
    nonorm) extra=() ;;
    noelite) extra=(--elite 0) ;;
    hinge) extra=(--agent-option logit_penalty=0.01) ;;
    fine) extra=(--agent-option threshold=3 --agent-option groups=400) ;;
    explore5) extra=(--agent-option explore=0.05) ;;
    hierarchical-explore5) agent=hierarchical; extra=(--agent-option explore=0.05) ;;
    around90) extra=(--agent-option around=0.9) ;;
    around97) extra=(--agent-option around=0.97) ;;
    elite10) extra=(--elite 0.1 --elite-window 64) ;;
    around97-elite10) extra=(--agent-option around=0.97 --elite 0.1 --elite-window 64) ;;
    hold20-elite10) extra=(--elite 0.1 --elite-window 64 --entropy-floor 0.2) ;;
    *) echo "error: unknown variant '$v'" >&2; exit 2 ;;
  esac
  case "$v" in default|noelite|paper*|hierarchical*|hinge|fine|explore5|around*|elite*|hold*) ;; *) extra+=(--agent-option norm=off) ;; esac
  case "$v" in default|noelite|paper*|hierarchical*|*elite10) ;; *) extra+=(--elite 0) ;; esac
  case "$v" in default|hold*|paper*|hierarchical*) ;; *) extra+=(--entropy-floor 0) ;; esac
  echo "$m k40x$d $v seed $s" >&2
  start=$(date +%s.%N)
  "$AWARE" search --agent "$agent" --graph "zoo:$m" --cluster "preset:k40x$d" --budget-evals "$BUDGET" --seed "$s" \
    --workers 2 "${extra[@]}" --curve "${cell%.json}.curve.csv" --json > "$cell.tmp" 2>/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 experiments/stamp_cell.py "$cell.tmp" "$start" "$end"
  mv "$cell.tmp" "$cell"
done; done; done; done
