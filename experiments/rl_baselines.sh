#!/usr/bin/env bash
# Learned agents against the search baselines at an EQUAL number of simulator
# evaluations: placeto, hierarchical, random-sampling (best of uniform random
# placements), random-search (the best cheap placer, then random placements) and
# anneal on inception_v3, nmt4 and nasnet on k40x4, 3 seeds, analytic simulator
# (contention mode).
# Writes a Markdown table (mean, spread, wall-clock) and the raw + summary CSV.
#
#   experiments/rl_baselines.sh [--budget N] [--full] [--aware PATH] [--out DIR]
#     --budget N   evaluations per method and run (default 200: small for a 2-core box)
#     --full       the papers' scale: 20,000 evaluations
#     --seeds "1 2 3"  seeds (default 1 2 3)
#     --models a,b  zoo models (default inception_v3,nmt4,nasnet)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
aware="${AWARE:-$here/build/cli/aware}"
budget=200
seeds="1 2 3"
models="inception_v3,nmt4,nasnet"
methods="random-sampling,random-search,anneal,placeto,hierarchical"
out="$here/out/rl_baselines"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) budget="$2"; shift 2 ;;
    --full) budget=20000; shift ;;
    --aware) aware="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --methods) methods="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$aware" ]] || { echo "no aware binary at $aware (build it, or pass --aware)" >&2; exit 2; }
mkdir -p "$out"
raw="$out/rl_baselines_raw_${budget}.csv"
: > "$raw"
for seed in $seeds; do
  echo "seed $seed: $methods on $models, $budget evaluations each" >&2
  "$aware" compare --models "$models" --cluster k40x4 --methods "$methods" \
    --budget-evals "$budget" --seed "$seed" --format csv -o "$out/compare_seed${seed}.csv" >/dev/null
  # model,cluster,devices,lower_bound_us,method,status,step_time_us,ratio_to_bound,place_time_s,...
  tail -n +2 "$out/compare_seed${seed}.csv" | awk -F, -v s="$seed" '{print s","$0}' >> "$raw"
done
summary="$out/rl_baselines_${budget}.csv"
md="$out/rl_baselines_${budget}.md"
awk -F, -v budget="$budget" -v summary="$summary" '
  { key=$2"|"$6; n[key]++; st[key]=$7; if ($7=="ok") { ok[key]++; x=$8/1000; s[key]+=x; ss[key]+=x*x;
      if (!(key in lo) || x<lo[key]) lo[key]=x; if (!(key in hi) || x>hi[key]) hi[key]=x }
    t[key]+=$10; lb[$2]=$5/1000; if (!($2 in seen)) { seen[$2]=1; order[++nm]=$2 }
    if (!($6 in mseen)) { mseen[$6]=1; morder[++nmeth]=$6 } }
  END {
    print "model,method,runs,feasible,mean_step_ms,std_step_ms,min_step_ms,max_step_ms,mean_wall_s,lower_bound_ms" > summary
    printf "| model | method | step ms (mean ± std over seeds) | min – max | ratio to bound | wall-clock s (mean) |\n|---|---|---|---|---|---|\n"
    for (i=1;i<=nm;i++) for (j=1;j<=nmeth;j++) { key=order[i]"|"morder[j]; if (!(key in n)) continue
      if (ok[key]>0) { m=s[key]/ok[key]; v=ss[key]/ok[key]-m*m; if (v<0) v=0; sd=sqrt(v) } else { m=-1; sd=0 }
      printf "%s,%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f\n", order[i], morder[j], n[key], ok[key], m, sd, lo[key], hi[key], t[key]/n[key], lb[order[i]] >> summary
      if (ok[key]>0) printf "| %s | %s | %.2f ± %.2f | %.2f – %.2f | %.3f | %.1f |\n", order[i], morder[j], m, sd, lo[key], hi[key], m/lb[order[i]], t[key]/n[key]
      else printf "| %s | %s | no feasible placement (%s) | | | %.1f |\n", order[i], morder[j], st[key], t[key]/n[key] }
  }' "$raw" > "$md"
{ echo; echo "Budget: $budget simulator evaluations per method and run; seeds: $seeds; cluster k40x4;"
  echo "evaluator: analytic (contention); spread = population std over seeds."; } >> "$md"
cat "$md"
echo "wrote $md, $summary, $raw" >&2
