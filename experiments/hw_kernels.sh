#!/usr/bin/env bash
# Real kernels on the cpu executor (issue 40, parts 1 and 2): for every zoo model,
# scaled to fit two cores, one device, the executor's step with ATen's kernels
# (kernels=aten) and with the synthetic stand-ins (kernels=synthetic); the share of
# FLOPs and of op time that ran real kernels; and each device's peak memory as
# allocated (buffers live in the measured run + the kernels' tensors and
# temporaries, counted) against the analytic simulator's prediction. Writes
# DIR/table.md (default experiments/results/hw-kernels), each run's JSON beside it.
#   experiments/hw_kernels.sh [DIR] [AWARE]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:-experiments/results/hw-kernels}"
AWARE="${2:-build/cli/aware}"
mkdir -p "$DIR"
MODELS=(
  "zoo:inception_v3:batch=2,image_size=96"
  "zoo:resnet50:batch=4,image_size=64"
  "zoo:nasnet:batch=1,image_size=64"
  "zoo:nmt2:batch=8,vocab=2000,hidden=256"
  "zoo:gnmt:batch=4,vocab=2000,hidden=256"
  "zoo:rnnlm:batch=8,vocab=2000,hidden=256"
  "zoo:transformer:batch=2,seq_len=64,hidden=256,layers=2"
)
for spec in "${MODELS[@]}"; do
  name="$(echo "$spec" | cut -d: -f2)"
  for k in aten synthetic; do
    out="$DIR/$name-$k.json"
    [ -s "$out" ] && continue   # resumable: a finished run is kept
    echo "hw_kernels: $spec kernels=$k" >&2
    "$AWARE" simulate --graph "$spec" --cluster preset:cpu-host --placement single --evaluator cpu \
      --option kernels=$k --option repeats=5 --option warmup=1 --json > "$out.tmp"
    mv "$out.tmp" "$out"
  done
  out="$DIR/$name-analytic.json"
  [ -s "$out" ] || { "$AWARE" simulate --graph "$spec" --cluster preset:cpu-host --placement single --json > "$out.tmp" && mv "$out.tmp" "$out"; }
done
python3 - "$DIR" "${MODELS[@]}" > "$DIR/table.md.tmp" <<'PY'
import json, re, sys
d = sys.argv[1]
print("# Real kernels on the cpu executor: coverage, step and memory, one device\n")
print("Made by `experiments/hw_kernels.sh` (median of 5 steps after 1 warm-up, one pinned core, "
      "`preset:cpu-host`). Shares from the executor's note; memory in MB, as allocated: each "
      "buffer from its writer's start to its last reader's end in the measured run, plus (ATen) the "
      "kernels' own tensors and the peak of their temporaries (a counting allocator); the synthetic "
      "run has only the buffers. The analytic prediction counts parameters too, and a variable both "
      "as a parameter and as its op's output.\n")
print("| model | ops | FLOPs on real kernels | op time on real kernels | synthetic work for | step ATen ms | step synthetic ms | peak ATen MB | peak synthetic MB | analytic predicted MB | ATen / predicted |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
for spec in sys.argv[2:]:
    name = spec.split(":")[1]
    a = json.load(open(f"{d}/{name}-aten.json"))
    s = json.load(open(f"{d}/{name}-synthetic.json"))
    p = json.load(open(f"{d}/{name}-analytic.json"))
    note = next(n for n in a["notes"] if n.startswith("real kernels"))
    m = re.search(r"([\d.]+)% of the FLOPs, ([\d.]+)% of the op time; (\d+) of (\d+) ops(?:; synthetic work for (.*))?", note)
    measured = a["devices"][0]["peak_memory_bytes"] / 1e6
    planned = s["devices"][0]["peak_memory_bytes"] / 1e6
    predicted = p["devices"][0]["peak_memory_bytes"] / 1e6
    print(f"| `{spec}` | {m.group(4)} | {m.group(1)}% | {m.group(2)}% | {m.group(5) or '-'} | "
          f"{a['step_time_us']/1e3:.1f} | {s['step_time_us']/1e3:.1f} | {measured:.0f} | {planned:.0f} | {predicted:.0f} | {measured/predicted:.2f} |")
PY
mv "$DIR/table.md.tmp" "$DIR/table.md"
cat "$DIR/table.md"
