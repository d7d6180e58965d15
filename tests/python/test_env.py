# aware.env.PlacementEnv: the placement MDP with Gymnasium's API, on a hand-made
# graph whose steps are computed by hand, then on a family graph.
import importlib
import json
import sys
import types

import numpy as np
import pytest

import aware
import aware.env


@pytest.fixture(scope="module")
def fork(tmp_path_factory):
    """a -> b, a -> c with measured costs (10, 20, 30 µs) and no bytes on the edges;
    w and its update u share a colocation group: 4 units for 5 ops."""
    doc = {
        "format": "aware-graph", "version": 1, "name": "fork",
        "ops": [
            {"name": "a", "compute_us": 10, "output_bytes": [0]},
            {"name": "b", "compute_us": 20, "output_bytes": [0]},
            {"name": "c", "compute_us": 30, "output_bytes": [0]},
            {"name": "w", "compute_us": 0, "output_bytes": [0], "colocation_group": "w"},
            {"name": "u", "compute_us": 0, "phase": "update", "output_bytes": [0], "colocation_group": "w"},
        ],
        "edges": [{"src": "a", "dst": "b"}, {"src": "a", "dst": "c"}, {"src": "w", "dst": "u"}],
    }
    path = tmp_path_factory.mktemp("graphs") / "fork.json"
    path.write_text(json.dumps(doc))
    return aware.graph(str(path)), aware.cluster("preset:k40x2")


def step_us(graph, cluster, placement):
    return aware.simulate(graph, cluster, np.asarray(placement), trace=False)["step_us"]


def test_one_shot_episode_by_hand(fork):
    g, c = fork
    env = aware.env.PlacementEnv(g, c, "one-shot")
    assert env.num_units == 4 and env.action_space.nvec.tolist() == [2, 2, 2, 2]
    obs, info = env.reset(seed=1)
    assert obs["unit_of_op"].tolist() == [0, 1, 2, 3, 3]
    assert env.observation_space.contains(obs)
    # b and c on different devices run side by side: 10 + 30 = 40 µs (no bytes move);
    # all on one device: 10 + 20 + 30 = 60 µs.
    obs, reward, terminated, truncated, info = env.step(np.array([0, 0, 1, 1]))
    assert terminated and not truncated
    assert info["step_us"] == pytest.approx(step_us(g, c, [0, 0, 1, 1, 1]))
    assert reward == pytest.approx(-info["step_us"] / 1e6)
    assert obs["placement"].tolist() == [0, 0, 1, 1, 1]  # u follows w's unit
    assert env.best()[1] == info["step_us"] and env.evaluations == 1
    with pytest.raises(aware.ConfigError, match="after the episode ended"):
        env.step(np.array([0, 0, 0, 0]))
    env.reset(seed=2)
    _, r_single, *_ = env.step(np.zeros(4, dtype=np.int64))
    assert r_single < reward  # one device is slower


def test_per_node_rewards_sum_to_the_start_minus_the_end(fork):
    g, c = fork
    env = aware.env.PlacementEnv(g, c, "per-node", start="zero")
    obs, info = env.reset(seed=5)
    assert obs["placement"].tolist() == [0] * 5 and obs["node"] == env.unit_order()[0]
    assert info["start_step_us"] == pytest.approx(step_us(g, c, [0] * 5))
    total, rewards = 0.0, []
    actions = {0: 0, 1: 0, 2: 1, 3: 1}  # by unit
    done = False
    while not done:
        unit = obs["node"]
        obs, reward, terminated, truncated, info = env.step(actions[unit])
        rewards.append(reward)
        total += reward
        done = terminated or truncated
    assert terminated and len(rewards) == 4 and obs["node"] == 4
    final = step_us(g, c, [0, 0, 1, 1, 1])
    assert info["step_us"] == pytest.approx(final)
    assert total == pytest.approx((step_us(g, c, [0] * 5) - final) / 1e6)
    assert env.evaluations == 5 and env.move_evaluations == 4


def test_per_node_moves_equal_full_evaluations_on_a_family_graph():
    g, c = aware.graph("family:ptb:2"), aware.cluster("preset:k40x4")
    env = aware.env.PlacementEnv(g, c, "per-node", start="random")
    obs, _ = env.reset(seed=11)
    rng = np.random.default_rng(3)
    for _ in range(25):
        obs, _, terminated, truncated, info = env.step(int(rng.integers(4)))
        # The incremental evaluation is the full one, bit for bit.
        assert info["step_us"] == step_us(g, c, obs["placement"])
        assert not (terminated or truncated)


def test_starts_random_fixed_and_seeds():
    g, c = aware.graph("family:cifar10:1"), aware.cluster("preset:k40x4")
    rand = aware.env.PlacementEnv(g, c, "per-node", start="random")
    a = rand.reset(seed=1)[0]["placement"]
    b = rand.reset(seed=2)[0]["placement"]
    assert (a != b).any() and (rand.reset(seed=1)[0]["placement"] == a).all()
    fixed = aware.env.PlacementEnv(g, c, "per-node", start="fixed")
    f1 = fixed.reset(seed=1)[0]["placement"]
    assert (fixed.reset(seed=9)[0]["placement"] == f1).all()


def test_budget_truncates(fork):
    g, c = fork
    env = aware.env.PlacementEnv(g, c, "one-shot", budget_evals=2)
    for _ in range(2):
        env.reset()
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        assert info["evaluated"] and terminated
    env.reset()
    _, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert truncated and not info["evaluated"] and reward == 0 and env.evaluations == 2
    per_node = aware.env.PlacementEnv(g, c, "per-node", start="zero", budget_evals=3)
    per_node.reset(seed=1)  # evaluation 1
    _, _, _, truncated, _ = per_node.step(1)  # 2
    assert not truncated
    _, _, terminated, truncated, _ = per_node.step(1)  # 3: spends the budget mid-episode
    assert truncated and not terminated


def test_bad_actions_and_settings(fork):
    g, c = fork
    env = aware.env.PlacementEnv(g, c, "one-shot")
    with pytest.raises(aware.ConfigError, match="before reset"):
        env.step(np.zeros(4, dtype=np.int64))
    env.reset(seed=1)
    with pytest.raises(aware.InputError, match=r"shape \(units,\) = \(4,\).*got shape \(5,\)"):
        env.step(np.zeros(5, dtype=np.int64))
    with pytest.raises(aware.InputError, match="got dtype float64"):
        env.step(np.zeros(4))
    with pytest.raises(aware.InputError, match="on device 2; the cluster has devices 0..1"):
        env.step(np.array([0, 0, 2, 0]))
    with pytest.raises(aware.ConfigError, match="mode must be one-shot or per-node"):
        aware.env.PlacementEnv(g, c, "sideways")
    with pytest.raises(aware.ConfigError, match="start must be random, fixed or zero"):
        aware.env.PlacementEnv(g, c, "per-node", start="best")
    with pytest.raises(aware.ConfigError, match="penalty must be placeto or fixed"):
        aware.env.PlacementEnv(g, c, penalty="none")


def test_spaces_sample_valid_actions_and_observations(fork):
    g, c = fork
    for mode in ("one-shot", "per-node"):
        env = aware.env.PlacementEnv(g, c, mode)
        env.action_space.seed(4)
        obs, _ = env.reset(seed=3)
        assert env.observation_space.contains(obs)
        obs, *_ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)


def test_with_gymnasium_the_class_is_a_gymnasium_env(monkeypatch):
    """A stand-in `gymnasium` module: the class must subclass its Env and use its spaces."""
    fake = types.ModuleType("gymnasium")
    fake_spaces = importlib.import_module("aware.spaces")
    made = []

    class Env:
        def reset(self, *, seed=None, options=None):
            made.append(seed)

    class Dict(fake_spaces.Dict):
        pass

    spaces = types.ModuleType("gymnasium.spaces")
    for name in ("Box", "Discrete", "MultiDiscrete"):
        setattr(spaces, name, getattr(fake_spaces, name))
    spaces.Dict = Dict
    fake.Env = Env
    fake.spaces = spaces
    monkeypatch.setitem(sys.modules, "gymnasium", fake)
    monkeypatch.setitem(sys.modules, "gymnasium.spaces", spaces)
    try:
        module = importlib.reload(aware.env)
        assert module.HAVE_GYMNASIUM and issubclass(module.PlacementEnv, Env)
        env = module.PlacementEnv("random:12:3", "preset:k40x2")
        assert isinstance(env.observation_space, Dict)
        env.reset(seed=7)
        assert made == [7]  # Env.reset(seed=...) was called, as Gymnasium wants
    finally:
        monkeypatch.delitem(sys.modules, "gymnasium")
        monkeypatch.delitem(sys.modules, "gymnasium.spaces")
        module = importlib.reload(aware.env)
    assert module.HAVE_GYMNASIUM is False or "gymnasium" in sys.modules
    if not module.HAVE_GYMNASIUM:
        assert module.PlacementEnv.__bases__ == (object,)
