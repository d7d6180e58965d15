# aware: graphs, clusters, simulate, evaluate_batch, place, strategies, list, errors.
import numpy as np
import pytest

import aware
from conftest import random_placements


def test_graph_and_cluster_by_the_cli_specs(small):
    g, c = small
    assert g.num_ops == len(g) == len(g.op_names()) > 10
    assert g.edge_index().shape == (2, g.num_edges) and g.edge_index().dtype == np.int64
    assert g.edge_index().max() < g.num_ops
    assert g.features(c).shape == (g.num_ops, len(aware.Graph.feature_names()))
    assert g.features(c).dtype == np.float32
    assert 0.0 <= g.features(c).min() and g.features(c).max() <= 1.0
    assert c.num_devices == 4 and [d["kind"] for d in c.devices()] == ["K40"] * 4
    assert g.op(0)["name"] == g.op_names()[0]
    assert aware.graph("zoo:nmt4").num_ops > 100


def test_simulate_matches_one_device_work_on_one_device(small):
    g, c = small
    r = aware.simulate(g, c, np.zeros(g.num_ops, dtype=np.int64))
    busy = r["device_busy_us"]
    assert r["feasible"] and r["transfers"] == 0 and r["bytes_moved"] == 0
    assert busy[1:].sum() == 0
    # One device, no transfers: the step is that device's work.
    assert r["step_us"] == pytest.approx(busy[0], rel=1e-9)
    trace = r["trace"]
    assert sorted(trace["ops"]["op"].tolist()) == list(range(g.num_ops))
    assert (trace["ops"]["end_us"] >= trace["ops"]["start_us"]).all()
    assert trace["ops"]["end_us"].max() == pytest.approx(r["step_us"])


def test_simulate_trace_respects_every_dependency(small):
    g, c = small
    p = random_placements(g, c, 1, seed=4)[0]
    r = aware.simulate(g, c, p)
    start = np.empty(g.num_ops)
    end = np.empty(g.num_ops)
    start[r["trace"]["ops"]["op"]] = r["trace"]["ops"]["start_us"]
    end[r["trace"]["ops"]["op"]] = r["trace"]["ops"]["end_us"]
    src, dst = g.edge_index()
    assert (start[dst] >= end[src] - 1e-6).all()
    assert r["transfers"] > 0 and len(r["trace"]["transfers"]["bytes"]) == r["transfers"]


def test_evaluate_batch_equals_simulate_one_at_a_time(small):
    g, c = small
    batch = random_placements(g, c, 9, seed=7)
    out = aware.evaluate_batch(g, c, batch, threads=2)
    assert out["step_us"].shape == (9,) and out["feasible"].dtype == np.bool_
    assert out["peak_memory_bytes"].shape == (9, 4)
    for i in range(9):
        one = aware.simulate(g, c, batch[i], trace=False)
        assert out["step_us"][i] == one["step_us"]  # bit for bit
        assert (out["peak_memory_bytes"][i] == one["peak_memory_bytes"]).all()
    # Any integer dtype, the same answer.
    again = aware.evaluate_batch(g, c, batch.astype(np.int32), threads=1)
    assert (again["step_us"] == out["step_us"]).all()


def test_place_with_a_placer_and_its_options(small):
    g, c = small
    p = aware.place(g, c, "m-etf")
    assert p.shape == (g.num_ops,) and p.min() >= 0 and p.max() < 4
    searched = aware.place(g, c, "anneal", seed=3, budget_evals=300, start=p)
    # A search from m-ETF's placement keeps it or finds better.
    assert aware.simulate(g, c, searched)["step_us"] <= aware.simulate(g, c, p)["step_us"]
    assert (aware.place(g, c, "anneal", seed=3, budget_evals=300, start=p) == searched).all()  # seeded


def test_place_with_a_learned_agent(small):
    if "rl" not in aware.plugins():
        pytest.skip("this build has no learned agents (LibTorch)")
    g, c = small
    p = aware.place(g, c, "aware", seed=1, budget_evals=40)
    assert p.shape == (g.num_ops,) and aware.simulate(g, c, p)["feasible"]


def test_strategy_apply(small):
    g, c = small
    out = aware.strategy.apply(g, c, "dp:4")
    assert out.replicas == 4 and out.devices_used == 4
    assert out.graph.num_ops > g.num_ops and out.placement.shape == (out.graph.num_ops,)
    assert aware.simulate(out.graph, c, out.placement)["feasible"]
    assert "dp" in aware.strategy.kinds()


def test_language_models_and_their_strategies():
    g = aware.graph("zoo:mixtral-8x7b:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=200,seq_len=8,batch=4")
    c = aware.cluster("preset:dgx-a100-pod:1")
    assert c.num_devices == 8 and c.devices()[0]["kind"] == "A100-BF16"
    for spec in ("tp:2", "ep:4", "zero:3,replicas=2", "pipeline:2,micro=2,schedule=1f1b"):
        out = aware.strategy.apply(g, c, spec)
        assert aware.simulate(out.graph, c, out.placement, trace=False)["feasible"], spec
    assert "tp" in aware.strategy.kinds() and "fsdp" in aware.strategy.kinds()
    names = [m["name"] for m in aware.list("models")]
    assert "zoo:gpt3-175b" in names and "zoo:llama3-405b" in names


def test_list_names_and_option_specs():
    placers = aware.list("placers")
    names = [p["name"] for p in placers]
    assert "m-etf" in names and "anneal" in names
    anneal = next(p for p in placers if p["name"] == "anneal")
    assert any(o["name"] for o in anneal["options"])
    assert {"evaluators", "placers", "agents", "strategies", "clusters", "models", "plugins"} <= set(aware.list())
    with pytest.raises(aware.ConfigError, match="unknown kind 'gadgets'"):
        aware.list("gadgets")


def test_errors_are_one_line_exceptions_of_the_right_kind(small, tmp_path):
    g, c = small
    with pytest.raises(aware.ConfigError) as e:
        aware.graph("zoo:no_such_model")
    assert "no_such_model" in str(e.value) and "\n" not in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, aware.Error)
    bad = tmp_path / "bad.json"
    bad.write_text('{"ops": [')
    with pytest.raises(aware.ParseError, match="bad.json"):
        aware.graph(str(bad))
    assert issubclass(aware.ParseError, aware.InputError)
    with pytest.raises(aware.ConfigError, match="unknown"):
        aware.place(g, c, "no-such-placer")
    with pytest.raises(aware.ConfigError, match="budget_evals"):
        aware.place(g, c, "anneal", budget_evals=-1)
    with pytest.raises(aware.ConfigError):
        aware.place(g, c, "anneal", options={"no_such_option": 1})
    with pytest.raises(aware.ConfigError):
        aware.simulate(g, c, np.zeros(g.num_ops, dtype=np.int64), evaluator="no-such-evaluator")


def test_wrong_shapes_and_dtypes_name_the_expected_one(small):
    g, c = small
    n = g.num_ops
    with pytest.raises(aware.InputError, match=rf"shape \(ops,\) = \({n},\); got shape \(3,\)"):
        aware.simulate(g, c, np.zeros(3, dtype=np.int64))
    with pytest.raises(aware.InputError, match="integer array.*got dtype float64"):
        aware.simulate(g, c, np.zeros(n))
    with pytest.raises(aware.InputError, match=rf"\(B, {n}\); got shape \(2, {n + 1}\)"):
        aware.evaluate_batch(g, c, np.zeros((2, n + 1), dtype=np.int64))
    with pytest.raises(aware.InputError, match=rf"\(B, {n}\); got shape \({n},\)"):
        aware.evaluate_batch(g, c, np.zeros(n, dtype=np.int64))
    with pytest.raises(aware.InputError, match="on device 4; cluster .* has devices 0..3"):
        aware.simulate(g, c, np.full(n, 4))
    with pytest.raises(aware.InputError, match="row 1 puts op"):
        aware.evaluate_batch(g, c, np.stack([np.zeros(n, dtype=np.int64), np.full(n, -1)]))
