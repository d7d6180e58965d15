#!/usr/bin/env bash
# The Aware paper's tables, at an EQUAL evaluation budget per method, 3 seeds,
# analytic simulator (contention mode). Markdown + CSV into --out (default out/).
#
#   experiments/aware_tables.sh [--table 1|2|3|4|all] [--budget N] [--full] [--seeds "1 2 3"]
#                               [--models m1,m2] [--devices 2,4,8] [--aware PATH] [--out DIR]
#                               [--families cifar10,ptb] [--transfer-cluster dgx-v100]
#                               [--pretrain-evals N] [--zoo-model nasnet]
#   (1) step time of aware, placeto, hierarchical and the best non-learned placer
#       (m-etf, m-sct, heft, metis, anneal, random-search) on inception_v3, nmt4,
#       gnmt, nasnet, resnet50 with k40x2/4/8; per row: does Aware beat Placeto
#       (the paper: by up to 5%) and Hierarchical (the paper: by > 8%)?
#   (2) transplantation, on --transfer-cluster (default dgx-v100), per family in
#       --families (default cifar10,ptb): pre-train one policy over the family's training
#       members (--pretrain-evals per graph, default 100), then on each held-out member:
#       zero-shot (greedy, 1 evaluation), pre-trained + fine-tuned, Aware from scratch,
#       Placeto, one GPU, best non-learned.
#   (3) pre-training accelerates convergence: from the same runs, evaluations until the
#       best-so-far is within 5% of the better final best, from scratch vs pre-trained; plus
#       --zoo-model (default nasnet) fine-tuned from the cifar10 policy.
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
family_count=12   # family members 1..12; seeds % 4 == 0 held out (datasets/families.h)
families="cifar10,ptb"
# Transfer tables (2, 3) run on an NVLink box: on the K40 boxes (PCIe) one GPU is within
# ~1% of the best placement any placer finds for these cells, so a policy that collapses
# to one GPU could not be told apart from one that transfers (see README).
tcluster="dgx-v100"
pretrain_per_graph=100
zoo_model="nasnet"
summary_only=0   # --summary-only: table 1's Markdown from an existing raw CSV in --out
while [[ $# -gt 0 ]]; do
  case "$1" in
    --table) table="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --full) budget=20000; family_count=40; pretrain_per_graph=2000; shift ;;
    --aware) aware="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --seeds) seeds="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --devices) devices="$2"; shift 2 ;;
    --family-count) family_count="$2"; shift 2 ;;
    --families) families="$2"; shift 2 ;;
    --transfer-cluster) tcluster="$2"; shift 2 ;;
    --pretrain-evals) pretrain_per_graph="$2"; shift 2 ;;
    --zoo-model) zoo_model="$2"; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$aware" ]] || { echo "no aware binary at $aware (build it, or pass --aware)" >&2; exit 2; }
mkdir -p "$out"
nonlearned="m-etf,m-sct,heft,metis,anneal,random-search"

# ---------------------------------------------------------------- table 1
table1() {
  local raw="$out/aware_table1_raw_${budget}.csv" md="$out/aware_table1_${budget}.md"
  [[ "$summary_only" == 1 ]] || : > "$raw"
  for seed in $seeds; do
    [[ "$summary_only" == 1 ]] && break
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
        # Within 0.5% counts as a tie (the spread over seeds is often larger).
        verdict = (gp == "n/a" || gh == "n/a") ? "n/a" : \
          ((gp > 0.5 ? "beats P" : (gp < -0.5 ? "loses to P" : "ties P")) " / " \
           (gh > 8 ? "beats H by >8%" : (gh > 0.5 ? "beats H by <8%" : (gh < -0.5 ? "loses to H" : "ties H"))))
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
step_us() { python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_us"])'; }
search() {  # search GRAPH CLUSTER SEED EXTRA... -> prints step_time_us of the best placement
  "$aware" search --graph "$1" --cluster "$2" --seed "$3" "${@:4}" --json 2>/dev/null | step_us
}
train_seeds() { seq 1 "$family_count" | awk '$1 % 4 != 0'; }
test_seeds() { seq 1 "$family_count" | awk '$1 % 4 == 0'; }

pretrain() {  # pretrain FAMILY SEED -> writes $out/aware_FAMILY_CLUSTER_sSEED.pt, prints its path
  local family="$1" seed="$2" policy="$out/aware_${1}_${tcluster}_s${2}.pt"
  "$aware" pretrain --agent aware --family "$family" --count "$family_count" --cluster "preset:$tcluster" \
    --seed "$seed" --budget-evals $((pretrain_per_graph * $(train_seeds | wc -l))) \
    --save-policy "$policy" >/dev/null 2>&1
  echo "$policy"
}
ms() { awk -v x="$1" 'BEGIN { if (x == "" || x == "n/a") print "n/a"; else printf "%.2f", x / 1000 }'; }
# evaluations until the curve's best-so-far is <= TARGET_US (curve CSV: evaluations,seconds,mean,best,...)
evals_to() {
  awk -F, -v t="$2" 'NR > 1 && $4 <= t { print $1; found = 1; exit } END { if (!found) print "never" }' "$1"
}
final_best() { awk -F, 'NR > 1 { b = $4 } END { print b }' "$1"; }
# The common target of two runs: 5% above the better of their final bests (curve CSVs).
common_target() {
  awk -v a="$(final_best "$1")" -v b="$(final_best "$2")" 'BEGIN { m = a < b ? a : b; printf "%.3f", 1.05 * m }'
}

# ---------------------------------------------------------------- tables 2 and 3
# Both come from the same runs: per family and seed, one policy pre-trained over the
# family's training members; then on every held-out member: zero-shot (greedy, 1
# evaluation), pre-trained + fine-tuned for `budget` evaluations, Aware from scratch
# for `budget` evaluations, Placeto per graph, the single-GPU placement and the best
# non-learned placer. Table 3 reads the fine-tune and from-scratch learning curves
# (and one zoo model fine-tuned from the cifar10 policy).
transfer_tables() {
  local md2="$out/aware_table2_${budget}.md" md3="$out/aware_table3_${budget}.md"
  local raw="$out/aware_transfer_raw_${budget}.csv"
  echo "family,graph,seed,single_us,zero_shot_us,pretrained_ft_us,scratch_us,placeto_us,best_nonlearned,best_nonlearned_us,scratch_evals_to_target,pretrained_evals_to_target,target_us" > "$raw"
  for family in ${families//,/ }; do
    for seed in $seeds; do
      echo "transfer: $family seed $seed on $tcluster (pre-training $pretrain_per_graph evaluations per training graph)" >&2
      local policy; policy="$(pretrain "$family" "$seed")"
      for g in $(test_seeds); do
        local graph="family:$family:$g" tmp="$out/tmp_placement.json"
        local single zs ft sc pl bnl tgt
        single="$("$aware" simulate --graph "$graph" --cluster "preset:$tcluster" --placement single --json 2>/dev/null | step_us)"
        # No budget flag + --init: zero-shot, the pre-trained policy's greedy placement.
        zs="$(search "$graph" "preset:$tcluster" "$seed" --agent aware --init "$policy" -o "$tmp")"
        ft="$(search "$graph" "preset:$tcluster" "$seed" --agent aware --init "$policy" \
          --budget-evals "$budget" --curve "$out/t_pre.csv" -o "$tmp")"
        sc="$(search "$graph" "preset:$tcluster" "$seed" --agent aware \
          --budget-evals "$budget" --curve "$out/t_scratch.csv" -o "$tmp")"
        pl="$(search "$graph" "preset:$tcluster" "$seed" --agent placeto --budget-evals "$budget" -o "$tmp")"
        bnl="$("$aware" compare --models "$graph" --cluster "preset:$tcluster" --methods "$nonlearned" \
          --budget-evals "$budget" --seed "$seed" --format csv | awk -F, 'NR > 1 && $6 == "ok" { if (b == "" || $7 < b) { b = $7; m = $5 } }
          END { printf "%s,%s", m, b }')"
        tgt="$(common_target "$out/t_scratch.csv" "$out/t_pre.csv")"
        echo "$family,$family-$g,$seed,$single,$zs,$ft,$sc,$pl,$bnl,$(evals_to "$out/t_scratch.csv" "$tgt"),$(evals_to "$out/t_pre.csv" "$tgt"),$tgt" >> "$raw"
      done
    done
  done
  # One zoo model fine-tuned from the cifar10 policies (NASNet is built of the same kind of cells).
  local zoo_rows=()
  if [[ ",$families," == *",cifar10,"* ]]; then
    for seed in $seeds; do
      local policy="$out/aware_cifar10_${tcluster}_s${seed}.pt" tgt
      search "zoo:$zoo_model" "preset:$tcluster" "$seed" --agent aware --budget-evals "$budget" \
        --curve "$out/t_scratch.csv" -o "$out/tmp_placement.json" >/dev/null
      search "zoo:$zoo_model" "preset:$tcluster" "$seed" --agent aware --init "$policy" \
        --budget-evals "$budget" --curve "$out/t_pre.csv" -o "$out/tmp_placement.json" >/dev/null
      tgt="$(common_target "$out/t_scratch.csv" "$out/t_pre.csv")"
      zoo_rows+=("| $zoo_model (zoo, cifar10 policy) | $seed | $(evals_to "$out/t_scratch.csv" "$tgt") ($(ms "$(final_best "$out/t_scratch.csv")")) | $(evals_to "$out/t_pre.csv" "$tgt") ($(ms "$(final_best "$out/t_pre.csv")")) | $(ms "$tgt") |")
    done
  fi
  {
    echo "| held-out graph | seed | single GPU ms | Aware zero-shot ms (1 eval) | Aware pre-trained + $budget evals ms | Aware from scratch, $budget evals ms | Placeto, $budget evals ms | best non-learned ms |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s %.2f |\n", $2, $3, $4/1000, $5/1000, $6/1000, $7/1000, $8/1000, $9, $10/1000 }' "$raw"
    echo
    awk -F, 'NR > 1 { n++; if ($5 < $4 * 0.999) zs++; if ($6 < $7) ft++; if ($6 <= $10) nl++ }
      END { printf "Zero-shot better than one GPU on %d of %d; pre-trained + fine-tune better than from scratch on %d of %d; pre-trained + fine-tune at or below the best non-learned placer on %d of %d.\n", zs, n, ft, n, nl, n }' "$raw"
    printf "\n%s; pre-training: \`aware pretrain --agent aware\` over each family's training members (seed %% 4 != 0 of 1..%s), %s evaluations per training graph; held-out members: seed %% 4 == 0. " \
      "$tcluster" "$family_count" "$pretrain_per_graph"
    printf "Zero-shot = the pre-trained policy's greedy placement, evaluated once, no training on the graph. Non-learned placers get %s evaluations where they search.\n" "$budget"
  } > "$md2"
  {
    echo "| graph | seed | from scratch: evaluations to target (final ms) | pre-trained: evaluations to target (final ms) | target ms |"
    echo "|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %s (%.2f) | %s (%.2f) | %.2f |\n", $2, $3, $11, $7/1000, $12, $6/1000, $13/1000 }' "$raw"
    for r in "${zoo_rows[@]}"; do echo "$r"; done
    printf "\n%s, %s evaluations per run; target = 1.05 x the better of the two runs' final best step times; " "$tcluster" "$budget"
    printf "an entry is the evaluation count of the first curve point (one per update) whose best-so-far reaches it.\n"
  } > "$md3"
  cat "$md2" "$md3"
  echo "wrote $md2, $md3, $raw" >&2
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
  2|3) transfer_tables ;;
  4) table4 ;;
  all) table1; transfer_tables; table4 ;;
  *) echo "--table must be 1, 2, 3, 4 or all" >&2; exit 2 ;;
esac
