#!/usr/bin/env python3
"""Plots one placed step's timeline with matplotlib: a row per device with its ops,
and a row per device pair with the transfers between them.

    PYTHONPATH=build/python python3 examples/python/timeline.py [--graph zoo:nmt4]
        [--cluster preset:k40x4] [--method m-etf] [-o timeline.png]
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import aware  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="zoo:nmt4")
    parser.add_argument("--cluster", default="preset:k40x4")
    parser.add_argument("--method", default="m-etf", help="a placer (aware.list('placers'))")
    parser.add_argument("-o", "--out", default="timeline.png")
    args = parser.parse_args(argv)
    graph, cluster = aware.graph(args.graph), aware.cluster(args.cluster)
    placement = aware.place(graph, cluster, args.method)
    result = aware.simulate(graph, cluster, placement)
    ops, transfers = result["trace"]["ops"], result["trace"]["transfers"]
    pairs = sorted({(int(s), int(d)) for s, d in zip(transfers["src_device"], transfers["dst_device"])})
    rows = [f"device {d}" for d in range(cluster.num_devices)] + [
        f"{s}->{d}" if d >= 0 else f"{s}->*" for s, d in pairs]
    fig, ax = plt.subplots(figsize=(12, 0.5 * len(rows) + 1.5))
    colours = plt.get_cmap("tab20")
    types = {t: i for i, t in enumerate(sorted(set(graph.op_types())))}
    op_types = graph.op_types()
    for op, device, start, end in zip(ops["op"], ops["device"], ops["start_us"], ops["end_us"]):
        ax.barh(int(device), (end - start) / 1e3, left=start / 1e3, height=0.8,
                color=colours(types[op_types[op]] % 20), linewidth=0)
    for s, d, start, end in zip(transfers["src_device"], transfers["dst_device"], transfers["start_us"],
                                transfers["end_us"]):
        row = cluster.num_devices + pairs.index((int(s), int(d)))
        ax.barh(row, (end - start) / 1e3, left=start / 1e3, height=0.6, color="0.4", linewidth=0)
    ax.set_yticks(np.arange(len(rows)), rows)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(f"{graph.name} on {cluster.name}, {args.method}: step {result['step_us'] / 1e3:.2f} ms, "
                 f"{result['transfers']} transfers")
    fig.tight_layout()
    tmp = args.out + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, args.out)
    print(f"{args.out}: {graph.name} on {cluster.name} by {args.method}, step {result['step_us'] / 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
