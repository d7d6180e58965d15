# Chakra execution traces across implementations: a trace written by Python's
# protobuf from the same schema (datasets/chakra/et_def.proto) read by `aware graph
# import`, and `aware trace export`'s files read by Python's protobuf; a PyTorch
# execution graph made here by python3-torch, imported.
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
AWARE = os.environ.get("AWARE_CLI", str(ROOT / "build" / "cli" / "aware"))


def aware(*args):
    done = subprocess.run([AWARE, *args], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def et_def(tmp_path_factory):
    """The schema compiled for Python by protoc (Debian's protobuf-compiler)."""
    pytest.importorskip("google.protobuf")
    if shutil.which("protoc") is None:
        pytest.skip("protoc (protobuf-compiler) is not installed")
    if aware("trace", "export", "--help")[0] != 0:
        pytest.skip("this build has no aware binary")
    out = tmp_path_factory.mktemp("proto")
    subprocess.run(["protoc", f"--python_out={out}", f"-I{ROOT / 'datasets' / 'chakra'}", "et_def.proto"], check=True)
    sys.path.insert(0, str(out))
    import et_def_pb2  # noqa: E402
    return et_def_pb2


def frame(message):
    from google.protobuf.internal.encoder import _VarintBytes
    data = message.SerializeToString()
    return _VarintBytes(len(data)) + data


def unframe(data):
    from google.protobuf.internal.decoder import _DecodeVarint32
    pos, out = 0, []
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        out.append(data[pos:pos + size])
        pos += size
    return out


def attr(pb, node, name, **value):
    a = node.attr.add()
    a.name = name
    for key, v in value.items():
        setattr(a, key, v)


def test_a_trace_written_by_pythons_protobuf_reads_back(et_def, tmp_path):
    pb = et_def
    d = tmp_path / "ranks"
    d.mkdir()
    for rank in (0, 1):
        meta = pb.GlobalMetadata(version="0.0.4")
        data = frame(meta)
        if rank == 0:
            a = pb.Node(id=1, name="a", type=pb.COMP_NODE, duration_micros=10)
            attr(pb, a, "tensor_size", uint64_val=4096)
            send = pb.Node(id=2, name="send", type=pb.COMM_SEND_NODE, data_deps=[1])
            for key, v in (("comm_src", 0), ("comm_dst", 1), ("comm_tag", 7)):
                attr(pb, send, key, int32_val=v)
            attr(pb, send, "comm_size", int64_val=4096)
            data += frame(a) + frame(send)
        else:
            recv = pb.Node(id=1, name="recv", type=pb.COMM_RECV_NODE)
            for key, v in (("comm_src", 0), ("comm_dst", 1), ("comm_tag", 7)):
                attr(pb, recv, key, int32_val=v)
            attr(pb, recv, "comm_size", int64_val=4096)
            b = pb.Node(id=2, name="b", type=pb.COMP_NODE, duration_micros=20, data_deps=[1])
            data += frame(recv) + frame(b)
        (d / f"py.{rank}.et").write_bytes(data)
    out = tmp_path / "g.json"
    rc, stdout, stderr = aware("graph", "import", str(d), "-o", str(out), "--json")
    assert rc == 0, stderr
    report = json.loads(stdout)
    assert report["ranks"] == 2 and report["comm_pairs"] == 1 and report["ops"] == 2
    graph = json.loads(out.read_text())
    ops = {op["name"]: op for op in graph["ops"]}
    assert ops["a"]["compute_us"] == 10 and ops["b"]["compute_us"] == 20
    assert len(graph["edges"]) == 1
    edge = graph["edges"][0]
    assert (edge["src"], edge["dst"], edge["bytes"]) == ("a", "b", 4096)


def test_exported_traces_read_in_pythons_protobuf(et_def, tmp_path):
    pb = et_def
    rc, stdout, stderr = aware("trace", "export", "--graph", "family:ptb:1", "--cluster", "preset:k40x2",
                               "--placement", "round-robin", "-o", str(tmp_path / "et"), "--json")
    assert rc == 0, stderr
    report = json.loads(stdout)
    assert len(report["files"]) == 2
    total, sends, recvs = 0, 0, 0
    for path in report["files"]:
        messages = unframe(pathlib.Path(path).read_bytes())
        meta = pb.GlobalMetadata()
        meta.ParseFromString(messages[0])
        assert meta.version == "0.0.4"
        assert {a.name for a in meta.attr} >= {"graph", "rank", "ranks", "step_us"}
        for raw in messages[1:]:
            node = pb.Node()
            node.ParseFromString(raw)
            assert node.type in (pb.COMP_NODE, pb.COMM_SEND_NODE, pb.COMM_RECV_NODE)
            names = {a.name: a for a in node.attr}
            if node.type == pb.COMP_NODE:
                assert names["is_cpu_op"].WhichOneof("value") == "bool_val"
                assert names["num_ops"].WhichOneof("value") == "int64_val"
                assert names["tensor_size"].WhichOneof("value") == "uint64_val"
            else:
                assert names["comm_size"].WhichOneof("value") == "int64_val"
                assert names["comm_src"].WhichOneof("value") == "int32_val"
                sends += node.type == pb.COMM_SEND_NODE
                recvs += node.type == pb.COMM_RECV_NODE
            total += 1
    assert total == report["nodes"] and sends == recvs == report["comm_pairs"] > 0


def test_strategy_collectives_are_comm_coll_nodes(et_def, tmp_path):
    pb = et_def
    rc, stdout, stderr = aware("trace", "export", "--graph", "family:ptb:1", "--cluster", "preset:k40x2",
                               "--strategy", "dp:2", "-o", str(tmp_path / "et"), "--json")
    assert rc == 0, stderr
    report = json.loads(stdout)
    assert report["collectives"] >= 2
    seen = 0
    for path in report["files"]:
        for raw in unframe(pathlib.Path(path).read_bytes())[1:]:
            node = pb.Node()
            node.ParseFromString(raw)
            if node.type != pb.COMM_COLL_NODE:
                continue
            names = {a.name: a for a in node.attr}
            assert names["comm_type"].int64_val == pb.ALL_REDUCE
            assert names["comm_size"].int64_val > 0 and len(node.data_deps) > 0
            seen += 1
    assert seen == report["collectives"]


def test_a_pytorch_execution_graph_made_here_imports(tmp_path):
    pytest.importorskip("torch")
    if aware("graph", "import", "--help")[0] != 0:
        pytest.skip("this build has no aware binary")
    eg = tmp_path / "step.json"
    subprocess.run([sys.executable, str(ROOT / "tests" / "fixtures" / "pytorch-eg" / "make_mlp_eg.py"), str(eg)],
                   check=True)
    out = tmp_path / "g.json"
    rc, stdout, stderr = aware("graph", "import", str(eg), "-o", str(out), "--json")
    assert rc == 0, stderr
    report = json.loads(stdout)
    assert report["format"] == "pytorch-execution-graph" and report["ops"] > 20 and report["edges"] > 20
    phases = {op.get("phase", "forward") for op in json.loads(out.read_text())["ops"]}
    assert phases == {"forward", "backward", "update"}
