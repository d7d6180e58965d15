"""Parallel strategies as graph rewrites (docs/strategies.md): dp:4, pipeline:4,micro=8,
hybrid:2xm-etf, bagging:4, mapreduce:8, ... The result is a new graph and its placement,
which simulate() and evaluate_batch() take like any other."""

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from . import _aware


@dataclass
class StrategyResult:
    spec: str                 # canonical spec, every option spelled out
    graph: "_aware.Graph"     # the rewritten step (the whole global batch)
    placement: np.ndarray     # a device per op of `graph`
    replicas: int
    devices_used: int
    global_batch: float
    notes: List[str] = field(default_factory=list)


def apply(graph, cluster, spec: str, *, seed: int = 1, budget_evals: int = 0, budget_seconds: float = 0.0,
          evaluator: str = "analytic", evaluator_options: Optional[dict] = None,
          placer_options: Optional[dict] = None) -> StrategyResult:
    """Applies `spec` to `graph` on `cluster` (specs as `aware strategy apply` takes them)."""
    if isinstance(graph, str):
        graph = _aware.graph(graph)
    if isinstance(cluster, str):
        cluster = _aware.cluster(cluster)
    out = _aware.apply_strategy(graph, cluster, spec, seed=seed, budget_evals=budget_evals,
                                budget_seconds=budget_seconds, evaluator=evaluator,
                                evaluator_options=evaluator_options, placer_options=placer_options)
    return StrategyResult(**out)


def kinds() -> Dict[str, str]:
    """Every strategy kind and what it does."""
    return dict(_aware.strategy_kinds())
