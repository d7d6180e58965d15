#!/usr/bin/env python3
"""REINFORCE on the placement MDP, in PyTorch (Debian's python3-torch), against random
sampling with the same number of evaluations.

    PYTHONPATH=build/python python3 examples/python/reinforce.py [--graph family:ptb:1]
        [--cluster preset:k40x4] [--budget 4000] [--seed 1] [--json out.json]

The policy is a table of logits, one row per colocation unit, plus a linear map of the
unit's static features (a shared prior for units never seen to matter); one-shot
episodes (aware.env.PlacementEnv), a batch of episodes per update, the batch's mean
reward as the baseline (leave-one-out), Adam. It prints the best step found by each
method; the script exits 0 either way (the comparison is the output, not a test).
"""

import argparse
import json
import sys
import time

import numpy as np
import torch

import aware
import aware.env


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="family:ptb:1")
    parser.add_argument("--cluster", default="preset:k40x4")
    parser.add_argument("--budget", type=int, default=4000, help="evaluations for each method")
    parser.add_argument("--batch", type=int, default=16, help="episodes per update")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if args.budget < 2 * args.batch:
        parser.error(f"--budget must be at least two batches ({2 * args.batch})")
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    graph, cluster = aware.graph(args.graph), aware.cluster(args.cluster)
    env = aware.env.PlacementEnv(graph, cluster, "one-shot", budget_evals=args.budget)
    obs, _ = env.reset(seed=args.seed)
    units, devices = env.num_units, env.num_devices
    # Features per unit: the mean of its ops' rows.
    unit_of_op = obs["unit_of_op"]
    feats = np.zeros((units, obs["features"].shape[1]), dtype=np.float32)
    np.add.at(feats, unit_of_op, obs["features"])
    feats /= np.bincount(unit_of_op, minlength=units)[:, None]
    features = torch.from_numpy(feats)
    table = torch.zeros(units, devices, requires_grad=True)
    linear = torch.nn.Linear(features.shape[1], devices)
    optimizer = torch.optim.Adam([table, *linear.parameters()], lr=args.lr)

    start = time.perf_counter()
    best_rl = float("inf")
    episode_seed = args.seed
    while not env.exhausted:
        logits = table + linear(features)
        dist = torch.distributions.Categorical(logits=logits)
        actions = dist.sample((args.batch,))                       # (batch, units)
        rewards = []
        for action in actions.numpy():
            if env.exhausted:
                break
            episode_seed += 1
            env.reset(seed=episode_seed)
            _, reward, _, truncated, info = env.step(action)
            if truncated:
                break
            rewards.append(reward)
            best_rl = min(best_rl, info["step_us"])
        if len(rewards) < 2:
            break
        r = torch.tensor(rewards)
        k = len(rewards)
        advantage = (r - (r.sum() - r) / (k - 1)) / (r.std() + 1e-9)  # leave-one-out, standardised
        log_prob = dist.log_prob(actions[:k]).sum(dim=1)
        loss = -(advantage * log_prob).mean() - 1e-3 * dist.entropy().sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    rl_seconds = time.perf_counter() - start

    # Random sampling: the same number of evaluations, a uniform device per unit.
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    per_unit = rng.integers(0, devices, size=(env.evaluations, units))
    random_steps = aware.evaluate_batch(graph, cluster, per_unit[:, unit_of_op])["step_us"]
    random_seconds = time.perf_counter() - start
    single = aware.simulate(graph, cluster, np.zeros(graph.num_ops, dtype=np.int64), trace=False)["step_us"]

    figures = {
        "graph": args.graph, "cluster": args.cluster, "evaluations": env.evaluations, "seed": args.seed,
        "reinforce_best_ms": best_rl / 1e3, "random_best_ms": float(random_steps.min()) / 1e3,
        "one_device_ms": single / 1e3, "reinforce_seconds": rl_seconds, "random_seconds": random_seconds,
    }
    print(f"{args.graph} on {args.cluster}, {env.evaluations} evaluations each (seed {args.seed})")
    print(f"  REINFORCE best step  {figures['reinforce_best_ms']:.3f} ms  ({rl_seconds:.1f} s)")
    print(f"  random sampling best {figures['random_best_ms']:.3f} ms  ({random_seconds:.1f} s)")
    print(f"  one device           {figures['one_device_ms']:.3f} ms")
    if args.json:
        with open(args.json + ".tmp", "w") as out:
            json.dump(figures, out, indent=1)
        import os
        os.replace(args.json + ".tmp", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
