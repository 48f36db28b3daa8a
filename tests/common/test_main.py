"""The single-process CLI (`python -m common run`), called in-process through `main`:
fetched values land in the --out npz keyed by fetch name, whatever the names are."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from common.__main__ import main
from common.tensor import make_tensor_proto
from protos import attr_value_pb2, graph_pb2


def _const_graph(values: dict[str, np.ndarray]) -> graph_pb2.GraphDef:
    gd = graph_pb2.GraphDef()
    for name, value in values.items():
        nd = gd.node.add(name=name, op="Const")
        nd.attr["dtype"].CopyFrom(attr_value_pb2.AttrValue(type=1))  # DT_FLOAT
        nd.attr["value"].tensor.CopyFrom(make_tensor_proto(value))
    return gd


def test_run_writes_fetches_named_like_savez_parameters(tmp_path: Path) -> None:
    # Regression: np.savez(path, **outputs) raised TypeError for a fetch named "file" and
    # took one named "allow_pickle" as its flag; mypy flagged the keyword collision.
    values = {
        "file": np.array([1.0, 2.0], np.float32),
        "allow_pickle": np.array(3.0, np.float32),
        "x": np.zeros((2, 0), np.float32),
    }
    graph = tmp_path / "g.pb"
    graph.write_bytes(_const_graph(values).SerializeToString())
    out = tmp_path / "out.npz"
    argv = ["run", str(graph), "--out", str(out)]
    for name in values:
        argv += ["--fetch", name]
    assert main(argv) == 0
    with np.load(out, allow_pickle=False) as results:
        assert sorted(results.files) == ["allow_pickle", "file", "x"]
        for name, want in values.items():
            assert results[name].dtype == want.dtype
            np.testing.assert_array_equal(results[name], want)


def test_run_appends_npz_suffix_like_savez(tmp_path: Path) -> None:
    graph = tmp_path / "g.pb"
    graph.write_bytes(_const_graph({"c": np.array([7.0], np.float32)}).SerializeToString())
    assert main(["run", str(graph), "--fetch", "c:0", "--out", str(tmp_path / "out")]) == 0
    with np.load(tmp_path / "out.npz", allow_pickle=False) as results:
        assert results.files == ["c:0"]
        np.testing.assert_array_equal(results["c:0"], np.array([7.0], np.float32))


def _string_graph() -> graph_pb2.GraphDef:
    """s = placeholder(string); n = StringLength(s); c = Identity(s)."""
    gd = graph_pb2.GraphDef()
    ph = gd.node.add(name="s", op="Placeholder")
    ph.attr["dtype"].CopyFrom(attr_value_pb2.AttrValue(type=7))  # DT_STRING
    length = gd.node.add(name="n", op="StringLength", input=["s"])
    length.attr["unit"].CopyFrom(attr_value_pb2.AttrValue(s=b"BYTE"))
    copy = gd.node.add(name="c", op="Identity", input=["s"])
    copy.attr["T"].CopyFrom(attr_value_pb2.AttrValue(type=7))
    return gd


def test_run_takes_bytes_and_unicode_string_feeds(tmp_path: Path) -> None:
    graph = tmp_path / "g.pb"
    graph.write_bytes(_string_graph().SerializeToString())
    for feed in (np.array([b"ab", b"\xffxyz", b""], dtype=bytes), np.array(["ab", "é", ""])):
        np.savez(tmp_path / "feeds.npz", **{"s:0": feed})
        out = tmp_path / "out.npz"
        argv = ["run", str(graph), "--feeds", str(tmp_path / "feeds.npz"), "--out", str(out)]
        assert main([*argv, "--fetch", "c:0", "--fetch", "n:0"]) == 0
        with np.load(out, allow_pickle=False) as results:
            want = [v.encode() if isinstance(v, str) else v for v in feed.tolist()]
            assert results["c:0"].tolist() == want
            np.testing.assert_array_equal(results["n:0"], [len(v) for v in want])


def test_run_refuses_object_feeds_saying_why(tmp_path: Path, capsys) -> None:
    graph = tmp_path / "g.pb"
    graph.write_bytes(_string_graph().SerializeToString())
    np.savez(tmp_path / "feeds.npz", **{"s:0": np.array([b"ab"], dtype=object)})
    argv = ["run", str(graph), "--feeds", str(tmp_path / "feeds.npz"), "--fetch", "n:0"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "'s:0'" in err and "pickle" in err and "dtype=bytes" in err
