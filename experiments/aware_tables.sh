#!/usr/bin/env bash
# The Aware paper's tables, at an EQUAL evaluation budget per method, 3 seeds,
# analytic simulator (contention mode). Markdown + CSV into --out (default out/).
#
#   experiments/aware_tables.sh [--table 1|2|3|4|all] [--budget N] [--full] [--seeds "1 2 3"]
#                               [--models m1,m2] [--devices 2,4,8] [--aware PATH] [--out DIR]
#   (1) step time of aware, placeto, hierarchical and the best non-learned placer
#       (m-etf, m-sct, heft, metis, anneal, random-search) on inception_v3, nmt4,
#       gnmt, nasnet, resnet50 with k40x2/4/8; per row: does Aware beat Placeto
#       (the paper: by up to 5%) and Hierarchical (the paper: by > 8%)?
#   (2) transplantation: pre-train on cifar10's training split, place the held-out
#       cifar10 graphs zero-shot (one greedy evaluation), vs per-graph placeto and the
#       non-learned placers. Uses `aware pretrain` when the binary has it, else a
#       sequential warm start (search --init/--save-policy graph after graph).
#   (3) pre-training accelerates convergence: evaluations until the best step time is
#       within 5% of the run's final best, from scratch vs from the pre-trained policy.
#   (4) ablations: aware vs fusion=off vs position=off.
#   --budget N  evaluations per run (default 100: minutes on 2 cores); --full: 20,000.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
aware="${AWARE:-$here/build/cli/aware}"
budget=100
seeds="1 2 3"
models="inception_v3,nmt4,gnmt,nasnet,resnet50"
devices="2,4,8"
table=all
out="$here/out"
family_count=12   # cifar10 members 1..12; seeds % 4 == 0 held out (datasets/families.h)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --table) table="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --full) budget=20000; family_count=40; shift ;;
    --aware) aware="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --devices) devices="$2"; shift 2 ;;
    --family-count) family_count="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$aware" ]] || { echo "no aware binary at $aware (build it, or pass --aware)" >&2; exit 2; }
mkdir -p "$out"
nonlearned="m-etf,m-sct,heft,metis,anneal,random-search"

# ---------------------------------------------------------------- table 1
table1() {
  local raw="$out/aware_table1_raw_${budget}.csv" md="$out/aware_table1_${budget}.md"
  : > "$raw"
  for seed in $seeds; do
    echo "table 1, seed $seed: $models on k40x{$devices}, $budget evaluations each" >&2
    "$aware" compare --models "$models" --cluster k40x4 --devices "$devices" \
      --methods "aware,placeto,hierarchical,$nonlearned" --budget-evals "$budget" --seed "$seed" \
      --format csv -o "$out/aware_table1_seed${seed}.csv" >/dev/null
    # model,cluster,devices,lower_bound_us,method,status,step_time_us,ratio_to_bound,place_time_s,...
    tail -n +2 "$out/aware_table1_seed${seed}.csv" | awk -F, -v s="$seed" '{print s","$0}' >> "$raw"
  done
  awk -F, -v nl="$nonlearned" -v budget="$budget" -v seeds="$seeds" '
    BEGIN { split(nl, a, ","); for (i in a) isnl[a[i]] = 1 }
    { row = $2 " | " $4; key = row "|" $6
      if (!(row in seen)) { seen[row] = 1; order[++nr] = row }
      if ($7 == "ok") { x = $8 / 1000; n[key]++; s[key] += x; ss[key] += x * x
        if (!(key in lo) || x < lo[key]) lo[key] = x; if (!(key in hi) || x > hi[key]) hi[key] = x }
      else bad[key] = $7
      methods[row] = methods[row] "," $6 }
    function mean(k) { return n[k] > 0 ? s[k] / n[k] : -1 }
    function cell(k,   m, v) { if (n[k] == 0) return "infeasible" (k in bad ? " (" bad[k] ")" : "")
      m = mean(k); v = ss[k] / n[k] - m * m; if (v < 0) v = 0
      return sprintf("%.2f ± %.2f", m, sqrt(v)) }
    END {
      print "| model | GPUs | Aware ms | Placeto ms | Hierarchical ms | best non-learned ms | Aware vs Placeto | Aware vs Hierarchical | paper claim (≤5% vs P, >8% vs H) |"
      print "|---|---|---|---|---|---|---|---|---|"
      for (i = 1; i <= nr; i++) { r = order[i]; best = ""; bm = -1
        for (m in isnl) { k = r "|" m; if (n[k] > 0 && (bm < 0 || mean(k) < bm)) { bm = mean(k); best = m } }
        ka = r "|aware"; kp = r "|placeto"; kh = r "|hierarchical"
        gp = (n[ka] > 0 && n[kp] > 0) ? 100 * (mean(kp) - mean(ka)) / mean(kp) : "n/a"
        gh = (n[ka] > 0 && n[kh] > 0) ? 100 * (mean(kh) - mean(ka)) / mean(kh) : "n/a"
        verdict = (gp == "n/a" || gh == "n/a") ? "n/a" : \
          ((gp > 0 ? "beats P" : "loses to P") " / " (gh > 8 ? "beats H by >8%" : (gh > 0 ? "beats H by <8%" : "loses to H")))
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r == "" ? "?" : substr(r, 1, index(r, " |") - 1), \
          substr(r, index(r, "| ") + 2), cell(ka), cell(kp), cell(kh), best == "" ? "n/a" : best " " cell(r "|" best), \
          gp == "n/a" ? gp : sprintf("%+.1f%%", gp), gh == "n/a" ? gh : sprintf("%+.1f%%", gh), verdict }
      printf "\nBudget %s evaluations per method and run; seeds %s; analytic simulator (contention); ", budget, seeds
      printf "mean ± population std over seeds; gains = (other − Aware) / other of the means.\n"
    }' "$raw" > "$md"
  cat "$md"
  echo "wrote $md, $raw" >&2
}

# ---------------------------------------------------------------- helpers
search() {  # search GRAPH CLUSTER SEED EXTRA... -> prints step_time_us of the best placement
  "$aware" search --graph "$1" --cluster "$2" --seed "$3" "${@:4}" --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_us"])'
}
# evaluations until best_step_us <= 1.05 x the final best (curve CSV: evaluations,seconds,mean,best,...)
evals_to_5pct() {
  awk -F, 'NR > 1 { e[NR] = $1; b[NR] = $4; last = $4; nr = NR }
    END { for (i = 2; i <= nr; i++) if (b[i] <= 1.05 * last) { print e[i]; exit } print "n/a" }' "$1"
}
train_seeds() { seq 1 "$family_count" | awk '$1 % 4 != 0'; }
test_seeds() { seq 1 "$family_count" | awk '$1 % 4 == 0'; }

pretrain() {  # pretrain DEVICES SEED -> writes $out/aware_cifar10_k40xD_sSEED.pt
  local d="$1" seed="$2" policy="$out/aware_cifar10_k40x${1}_s${2}.pt"
  if "$aware" pretrain --help >/dev/null 2>&1; then
    "$aware" pretrain --agent aware --family cifar10 --count "$family_count" --cluster "preset:k40x$d" \
      --seed "$seed" --budget-evals $((budget * $(train_seeds | wc -l))) --save-policy "$policy" >/dev/null 2>&1
  else
    # Fallback until `aware pretrain` exists: one agent warm-started graph after graph.
    local init=()
    for g in $(train_seeds); do
      "$aware" search --agent aware --graph "family:cifar10:$g" --cluster "preset:k40x$d" --seed "$seed" \
        --budget-evals "$budget" "${init[@]}" --save-policy "$policy.tmp" -o "$out/tmp_placement.json" >/dev/null 2>&1
      mv "$policy.tmp" "$policy"
      init=(--init "$policy")
    done
  fi
  echo "$policy"
}

# ---------------------------------------------------------------- table 2
table2() {
  local d=4 md="$out/aware_table2_${budget}.md"
  local mode="sequential warm start (no aware pretrain in this binary)"
  "$aware" pretrain --help >/dev/null 2>&1 && mode="aware pretrain"
  echo "| held-out graph | seed | Aware zero-shot ms (1 evaluation) | Placeto per-graph ms ($budget evals) | best non-learned ms |" > "$md"
  echo "|---|---|---|---|---|" >> "$md"
  for seed in $seeds; do
    local policy; policy="$(pretrain "$d" "$seed")"
    for g in $(test_seeds); do
      local zs pl bnl
      # No budget flag + --init: zero-shot, the pre-trained policy's greedy placement.
      zs="$(search "family:cifar10:$g" "preset:k40x$d" "$seed" --agent aware --init "$policy" -o "$out/tmp_placement.json")"
      pl="$(search "family:cifar10:$g" "preset:k40x$d" "$seed" --agent placeto --budget-evals "$budget" -o "$out/tmp_placement.json")"
      bnl="$("$aware" compare --models "family:cifar10:$g" --cluster "preset:k40x$d" --methods "$nonlearned" \
        --budget-evals "$budget" --seed "$seed" --format csv | awk -F, 'NR > 1 && $6 == "ok" { if (b == "" || $7 < b) { b = $7; m = $5 } }
        END { printf "%s %.2f", m, b / 1000 }')"
      printf "| cifar10-%s | %s | %.2f | %.2f | %s |\n" "$g" "$seed" "$(echo "$zs / 1000" | bc -l)" \
        "$(echo "$pl / 1000" | bc -l)" "$bnl" >> "$md"
    done
  done
  printf "\nk40x%s; pre-training: %s over cifar10 training members (seed %% 4 != 0 of 1..%s), %s evaluations per graph.\n" \
    "$d" "$mode" "$family_count" "$budget" >> "$md"
  printf "Zero-shot = no training on the held-out graph: the pre-trained policy's greedy placement, evaluated once.\n" >> "$md"
  cat "$md"
}

# ---------------------------------------------------------------- table 3
table3() {
  local d=4 md="$out/aware_table3_${budget}.md"
  echo "| graph | seed | from scratch: evals to 5% of final (final ms) | pre-trained: evals to 5% of final (final ms) |" > "$md"
  echo "|---|---|---|---|" >> "$md"
  for seed in $seeds; do
    local policy="$out/aware_cifar10_k40x${d}_s${seed}.pt"
    [[ -f "$policy" ]] || policy="$(pretrain "$d" "$seed")"
    for g in $(test_seeds); do
      local a b
      a="$(search "family:cifar10:$g" "preset:k40x$d" "$seed" --agent aware --budget-evals "$budget" \
        --curve "$out/t3_scratch.csv" -o "$out/tmp_placement.json")"
      b="$(search "family:cifar10:$g" "preset:k40x$d" "$seed" --agent aware --budget-evals "$budget" \
        --init "$policy" --curve "$out/t3_pre.csv" -o "$out/tmp_placement.json")"
      printf "| cifar10-%s | %s | %s (%.2f) | %s (%.2f) |\n" "$g" "$seed" "$(evals_to_5pct "$out/t3_scratch.csv")" \
        "$(echo "$a / 1000" | bc -l)" "$(evals_to_5pct "$out/t3_pre.csv")" "$(echo "$b / 1000" | bc -l)" >> "$md"
    done
  done
  printf "\nk40x%s, %s evaluations per run (the first curve point is after the first update).\n" "$d" "$budget" >> "$md"
  cat "$md"
}

# ---------------------------------------------------------------- table 4
table4() {
  local md="$out/aware_table4_${budget}.md" d
  echo "| model | GPUs | Aware ms | fusion=off ms | position=off ms |" > "$md"
  echo "|---|---|---|---|---|" >> "$md"
  for m in ${models//,/ }; do
    for d in ${devices//,/ }; do
      local cells=()
      for variant in "" "fusion=off" "position=off"; do
        local vals=() opt=()
        [[ -n "$variant" ]] && opt=(--agent-option "$variant")
        for seed in $seeds; do
          vals+=("$(search "zoo:$m" "preset:k40x$d" "$seed" --agent aware --budget-evals "$budget" "${opt[@]}" -o "$out/tmp_placement.json" || echo nan)")
        done
        cells+=("$(printf '%s\n' "${vals[@]}" | awk '$1 != "nan" { x = $1 / 1000; s += x; ss += x * x; n++ }
          END { if (n == 0) print "failed"; else { m = s / n; v = ss / n - m * m; if (v < 0) v = 0; printf "%.2f ± %.2f", m, sqrt(v) } }')")
      done
      printf "| %s | %s | %s | %s | %s |\n" "$m" "$d" "${cells[@]}" >> "$md"
    done
  done
  printf "\n%s evaluations per run, seeds %s, mean ± population std.\n" "$budget" "$seeds" >> "$md"
  cat "$md"
}

case "$table" in
  1) table1 ;;
  2) table2 ;;
  3) table3 ;;
  4) table4 ;;
  all) table1; table2; table3; table4 ;;
  *) echo "--table must be 1, 2, 3, 4 or all" >&2; exit 2 ;;
esac
