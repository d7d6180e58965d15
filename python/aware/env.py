"""The placement MDP with Gymnasium's API.

    env = aware.env.PlacementEnv("family:cifar10:1", "preset:k40x4", mode="one-shot", budget_evals=2000)
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

The episode, reward and budget are the C++ placement MDP's (agents/rl/mdp.h), whose
evaluations go through the same PlacementEnv the learned agents train against:

- decisions are per colocation unit (ops of one colocation group share a device);
  observation["unit_of_op"] maps ops to units;
- mode "one-shot" (Aware, Hierarchical): the action gives every unit a device
  (MultiDiscrete, one entry per unit); one evaluation; reward = -(penalised step) in
  seconds; the episode ends;
- mode "per-node" (Placeto): reset() draws a whole start placement (start="random"
  each episode, "fixed" once per environment, "zero") and evaluates it; each step puts
  the next unit, in topological order, on the action's device (Discrete), evaluated
  incrementally; reward = (step before - step after) in seconds, so an episode's
  rewards sum to the start's step minus the final one;
- penalty "placeto": +2 s per GB over a device's memory (at most +10 s), 100 s when
  infeasible for another reason; "fixed": any infeasible placement counts as 100 s;
- budget_evals / budget_seconds (0: none): once spent, a step evaluates nothing and
  returns truncated=True; so does the step whose evaluation spends it.

Observations (a dict): "features" (ops, 7) float32 static per-op features
(aware.Graph.feature_names()), "edge_index" (2, edges) int64, "unit_of_op" (ops,)
int64, "placement" (ops,) int64 the current device of every op, "node" the unit the
next per-node step decides (num_units when done; 0 in one-shot mode). The static
arrays are the same objects every step: copy them before changing them.

When `import gymnasium` works the class subclasses gymnasium.Env and uses
gymnasium.spaces; otherwise it has the same methods, and spaces from aware.spaces.
"""

import numpy as np

from . import _aware

try:  # Gymnasium is optional (not a Debian package)
    import gymnasium as _gymnasium
    from gymnasium import spaces as _spaces

    _Base = _gymnasium.Env
    HAVE_GYMNASIUM = True
except ImportError:  # pragma: no cover - depends on the machine
    from . import spaces as _spaces

    _Base = object
    HAVE_GYMNASIUM = False


class PlacementEnv(_Base):
    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, graph, cluster, mode="one-shot", *, evaluator="analytic", options=None, penalty="placeto",
                 start="random", budget_evals=0, budget_seconds=0.0):
        if isinstance(graph, str):
            graph = _aware.graph(graph)
        if isinstance(cluster, str):
            cluster = _aware.cluster(cluster)
        self.graph = graph
        self.cluster = cluster
        self.mode = mode
        self._core = _aware.EnvCore(graph, cluster, mode=mode, evaluator=evaluator, options=options, penalty=penalty,
                                    start=start, budget_evals=int(budget_evals), budget_seconds=float(budget_seconds))
        self._per_node = mode == "per-node"
        n, units, devices = self._core.num_ops, self._core.num_units, self._core.num_devices
        self.num_ops, self.num_units, self.num_devices = n, units, devices
        self._features = graph.features(cluster)
        self._edge_index = graph.edge_index()
        self._unit_of_op = self._core.unit_of_op()
        for array in (self._features, self._edge_index, self._unit_of_op):
            array.flags.writeable = False
        self.observation_space = _spaces.Dict({
            "features": _spaces.Box(0.0, 1.0, shape=self._features.shape, dtype=np.float32),
            "edge_index": _spaces.Box(0, max(n - 1, 0), shape=self._edge_index.shape, dtype=np.int64),
            "unit_of_op": _spaces.Box(0, max(units - 1, 0), shape=(n,), dtype=np.int64),
            "placement": _spaces.MultiDiscrete(np.full(n, devices, dtype=np.int64)),
            "node": _spaces.Discrete(units + 1),
        })
        self.action_space = _spaces.Discrete(devices) if self._per_node else _spaces.MultiDiscrete(
            np.full(units, devices, dtype=np.int64))
        self._seeds = None
        self._pending = []

    # -- Gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        if HAVE_GYMNASIUM and isinstance(self, _gymnasium.Env):
            super().reset(seed=seed)
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
            self._pending = []
            episode_seed = int(seed)
        else:
            if self._seeds is None:
                self._seeds = np.random.default_rng()
            if not self._pending:  # drawn 256 at a time: one draw costs microseconds
                self._pending = self._seeds.integers(1, 2**62, size=256).tolist()[::-1]
            episode_seed = self._pending.pop()
        self._core.reset(episode_seed)
        return self._observation(), self._info(None)

    def step(self, action):
        if self._per_node:
            out = self._core.step_device(int(action))
        else:
            out = self._core.step_placement(action)
        reward, terminated, truncated = out[0], out[1], out[2]
        return self._observation(), reward, terminated, truncated, self._info(out)

    def close(self):
        pass

    # -- what a learner may want besides the observation ----------------------------------
    @property
    def evaluations(self):
        """Evaluations spent (per-node moves included)."""
        return self._core.evaluations

    @property
    def move_evaluations(self):
        """Of those, the incremental per-node ones."""
        return self._core.move_evaluations

    @property
    def exhausted(self):
        return self._core.exhausted

    def best(self):
        """(placement, step_us, feasible) of the best placement evaluated so far."""
        return self._core.best_placement(), self._core.best_step_us, self._core.best_feasible

    def unit_order(self):
        """The units in the order per-node steps decide them."""
        return self._core.unit_order()

    # -- internals ---------------------------------------------------------------------------
    def _observation(self):
        return {
            "features": self._features,
            "edge_index": self._edge_index,
            "unit_of_op": self._unit_of_op,
            "placement": self._core.placement(),
            "node": self._core.current_unit,
        }

    def _info(self, out):
        info = {"evaluations": self._core.evaluations, "best_step_us": self._core.best_step_us}
        if out is None:
            info["start_step_us"] = self._core.current_penalised_us if self._per_node else None
        else:
            info["evaluated"], info["step_us"], info["penalised_us"], info["feasible"] = out[3], out[4], out[5], out[6]
        return info
