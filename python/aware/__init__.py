"""The Aware workbench from Python: the C++ core as it is, in one module.

    import aware
    g = aware.graph("zoo:nmt4")                # the CLI's specs: zoo:, family:, random:, files
    c = aware.cluster("preset:k40x4")
    p = aware.place(g, c, "m-etf")             # any registered placer or agent
    r = aware.simulate(g, c, p)                 # step_us, per-device busy/peak, the trace as arrays
    steps = aware.evaluate_batch(g, c, many)    # (B, ops) int array, every core, GIL released
    aware.list("placers")                       # names and option specs, as `aware list`

Errors are aware.Error subclasses whose message is the CLI's one line:
ConfigError (bad options or names) and InputError (bad files, graphs,
placements, arrays; its ParseError, GraphError, DeviceError). Both are also
ValueError. aware.env.PlacementEnv is the placement MDP with Gymnasium's API.
"""

from ._aware import (  # noqa: F401  (the public API)
    Cluster,
    ConfigError,
    DeviceError,
    Error,
    Graph,
    GraphError,
    InputError,
    InternalError,
    ParseError,
    cluster,
    evaluate_batch,
    graph,
    list,
    place,
    plugins,
    simulate,
)
from . import env, strategy  # noqa: F401,E402

__all__ = [
    "Cluster", "ConfigError", "DeviceError", "Error", "Graph", "GraphError", "InputError", "InternalError",
    "ParseError", "cluster", "env", "evaluate_batch", "graph", "list", "place", "plugins", "simulate", "strategy",
]
