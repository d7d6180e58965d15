# Shared fixtures for the Python module's tests (run by ctest with PYTHONPATH set to
# build/python; label `python`).
import numpy as np
import pytest

import aware


@pytest.fixture(scope="session")
def small():
    """A seeded family graph and a four-GPU box: small enough for hundreds of evaluations."""
    return aware.graph("family:cifar10:1"), aware.cluster("preset:k40x4")


@pytest.fixture(scope="session")
def chain():
    """A three-op chain with no colocation: units are ops."""
    return aware.graph("random:12:3"), aware.cluster("preset:k40x2")


def random_placements(graph, cluster, count, seed):
    """`count` random placements that respect colocation (a device per unit)."""
    rng = np.random.default_rng(seed)
    units = graph.unit_of_op()
    per_unit = rng.integers(0, cluster.num_devices, size=(count, units.max() + 1))
    return per_unit[:, units]
