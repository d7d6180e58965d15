# examples/python: each runs end to end on a small budget (the README's figures come
# from the full runs, scripts/bench-python and docs/python.md).
import importlib.util
import json
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reinforce_runs_and_reports_both_methods(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "figures.json"
    assert load("reinforce").main(["--budget", "160", "--batch", "16", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["evaluations"] == 160
    assert 0 < figures["reinforce_best_ms"] <= figures["one_device_ms"] * 10
    assert 0 < figures["random_best_ms"]
    assert "REINFORCE best step" in capsys.readouterr().out


def test_timeline_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.png"
    assert load("timeline").main(["--graph", "family:ptb:1", "--cluster", "preset:k40x2", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
