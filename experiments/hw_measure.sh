#!/usr/bin/env bash
# The real LibTorch training step against the cpu executor and the analytic
# simulator (issue 40, part 5), on one core, for two models written in plain torch
# (experiments/hw_measure_models.py: a ResNet-style CNN, a transformer encoder).
#  1. calibrate one core and profile two *zoo* models (resnet50 and transformer,
#     scaled) into a cost table with per-type fits;
#  2. for each imported model: `aware measure` (LibTorch, executor, analytic) with
#     that table, whose entries name none of the model's ops: the model is priced
#     by the fits alone (never profiled: out of sample);
#  3. the same model profiled itself, predicted from its own table (in sample);
#  4. the trivial predictor: the calibrated roofline, no table.
# Writes DIR/table.md and every file it used (default experiments/results/hw-measure).
#   experiments/hw_measure.sh [DIR] [AWARE]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="${1:-experiments/results/hw-measure}"
AWARE="${2:-build/cli/aware}"
mkdir -p "$DIR"
MODELS_DIR="$(mktemp -d)"
trap 'rm -rf "$MODELS_DIR"' EXIT
/usr/bin/python3 experiments/hw_measure_models.py "$MODELS_DIR"
declare -A SHAPE=([resnet_small]="x=8x3x64x64" [transformer_small]="x=8x64x256")
if [ ! -s "$DIR/costs-zoo.json" ]; then
  "$AWARE" calibrate --backend cpu --devices 1 -o "$DIR/cluster.json" --report "$DIR/calibration.json" \
    --profile-graph zoo:resnet50:batch=4,image_size=64 \
    --profile-graph zoo:transformer:batch=2,seq_len=64,hidden=256,layers=2 \
    --costs-out "$DIR/costs-zoo.json" --rounds 3 > "$DIR/calibrate.txt"
fi
for m in resnet_small transformer_small; do
  model="$MODELS_DIR/$m.pt"
  "$AWARE" graph import "$model" --input-shape "${SHAPE[$m]}" -o "$DIR/$m.graph.json" > /dev/null
  [ -s "$DIR/$m-fits.json" ] || "$AWARE" measure "$model" --input-shape "${SHAPE[$m]}" --cluster "$DIR/cluster.json" \
    --costs "$DIR/costs-zoo.json" --repeats 7 --warmup 2 -o "$DIR/$m-fits.json" > /dev/null
  if [ ! -s "$DIR/$m-own.json" ]; then
    "$AWARE" calibrate --backend cpu --devices 1 -o "$DIR/$m-cluster-own.json" --profile-graph "$DIR/$m.graph.json" \
      --costs-out "$DIR/$m-costs-own.json" --rounds 3 > /dev/null
    "$AWARE" measure "$model" --input-shape "${SHAPE[$m]}" --cluster "$DIR/$m-cluster-own.json" \
      --costs "$DIR/$m-costs-own.json" --repeats 7 --warmup 2 --no-executor -o "$DIR/$m-own.json" > /dev/null
  fi
  [ -s "$DIR/$m-roofline.json" ] || "$AWARE" measure "$model" --input-shape "${SHAPE[$m]}" --cluster "$DIR/cluster.json" \
    --repeats 7 --warmup 2 --no-executor -o "$DIR/$m-roofline.json" > /dev/null
done
python3 - "$DIR" > "$DIR/table.md.tmp" <<'PY'
import json, sys
d = sys.argv[1]
print("# The real LibTorch step against the cpu executor and the analytic simulator, one core\n")
print("Made by `experiments/hw_measure.sh`: median of 7 steps after 2 warm-ups each; error = x / LibTorch - 1. "
      "`fits`: a cost table profiled on two zoo models (resnet50, transformer, scaled), none of whose ops this model has, "
      "so every op is priced by the per-type fits (out of sample); `own`: the model profiled itself (in sample); "
      "`roofline`: the calibrated cluster without a table (the trivial predictor). LibTorch is timed again in each run.\n")
print("| model | ops | LibTorch ms | executor ms (err) | analytic, fits ms (err) | analytic, own profile ms (err) | roofline ms (err) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for m in ["resnet_small", "transformer_small"]:
    f = json.load(open(f"{d}/{m}-fits.json")); o = json.load(open(f"{d}/{m}-own.json")); r = json.load(open(f"{d}/{m}-roofline.json"))
    rows = {x["what"]: x for x in f["rows"]}
    lt = rows["libtorch"]["step_us"]
    e = lambda x, base: f"{x/1e3:.1f} ({100*(x/base-1):+.1f}%)"
    own = {x["what"]: x for x in o["rows"]}; roof = {x["what"]: x for x in r["rows"]}
    print(f"| {m} ({f['inputs']}) | {f['ops']} | {lt/1e3:.1f} | {e(rows['cpu executor']['step_us'], lt)} | "
          f"{e(rows['analytic']['step_us'], lt)} | {e(own['analytic']['step_us'], own['libtorch']['step_us'])} | "
          f"{e(roof['analytic']['step_us'], roof['libtorch']['step_us'])} |")
PY
mv "$DIR/table.md.tmp" "$DIR/table.md"
cat "$DIR/table.md"
