#!/usr/bin/env python3
"""Dense BF16 (and TF32) matrix-product throughput on the GPU at the shapes of the zoo's
language models, against the datasheet peak: the GEMM efficiency a cluster preset's
device kind uses (core/cluster_presets.cc). Runs where PyTorch with CUDA is installed
(a lent GPU machine's image has it; Debian's python3-torch here is CPU-only).

    python3 experiments/gpu/gemm_efficiency.py --peak-bf16 989e12 --peak-tf32 494.5e12 --json OUT.json

Each shape: 3 warm-up products, then the mean of 20 timed with CUDA events, on random data.
"""
import argparse
import json
import os
import statistics

import torch

# (name, M tokens, K, N): GPT-3 175B's projections at 4,096 tokens a micro-batch (hidden
# 12,288, FFN 49,152), whole and split 8 ways by tensor parallelism, and Megatron 1.7B's.
SHAPES = [
    ("gpt3-175b qkv", 4096, 12288, 3 * 12288),
    ("gpt3-175b fc1", 4096, 12288, 49152),
    ("gpt3-175b fc2", 4096, 49152, 12288),
    ("gpt3-175b qkv tp8", 4096, 12288, 3 * 12288 // 8),
    ("gpt3-175b fc1 tp8", 4096, 12288, 49152 // 8),
    ("gpt3-175b fc2 tp8", 4096, 49152 // 8, 12288),
    ("megatron-1.7b fc1", 16384, 2304, 4 * 2304),
    ("megatron-1.7b fc2", 16384, 4 * 2304, 2304),
    ("square 8192", 8192, 8192, 8192),
]


def rate(m, k, n, dtype, iters=20):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        torch.matmul(a, b)
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / iters
    return 2.0 * m * k * n / seconds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--peak-bf16", type=float, required=True)
    p.add_argument("--peak-tf32", type=float, required=True)
    p.add_argument("--json", required=True)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    rows = []
    for name, m, k, n in SHAPES:
        bf16 = rate(m, k, n, torch.bfloat16)
        tf32 = rate(m, k, n, torch.float32)
        rows.append({"shape": name, "M": m, "K": k, "N": n, "bf16_flops": bf16, "tf32_flops": tf32,
                     "bf16_efficiency": bf16 / args.peak_bf16, "tf32_efficiency": tf32 / args.peak_tf32})
        print(f"{name:22s} {m:6d}x{k:6d}x{n:6d}  bf16 {bf16 / 1e12:6.1f} TFLOP/s ({bf16 / args.peak_bf16:.3f})"
              f"  tf32 {tf32 / 1e12:6.1f} ({tf32 / args.peak_tf32:.3f})", flush=True)
    doc = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "peak_bf16": args.peak_bf16, "peak_tf32": args.peak_tf32, "rows": rows,
           "median_bf16_efficiency": statistics.median(r["bf16_efficiency"] for r in rows),
           "median_tf32_efficiency": statistics.median(r["tf32_efficiency"] for r in rows)}
    print(f"median efficiency: bf16 {doc['median_bf16_efficiency']:.3f}, tf32 {doc['median_tf32_efficiency']:.3f}")
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
