"""Tests for the elementwise fusion of each fusible op (common.ops.fused_ops): fused and
unfused graphs give the same bits (inf, nan, -0, denormals, scalars, broadcasting), the
same errors (code, message, node) and the fused node carries its members' names."""

from __future__ import annotations

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op and kernel)
from common.errors import OpError
from common.ops.fused_ops import FUSIBLE_OPS, UNARY
from common.session import Session
from protos import config_pb2, graph_pb2, rewriter_config_pb2

_BINARY = sorted(FUSIBLE_OPS - UNARY)
_UNARY = sorted(UNARY)
_SAME_SHAPE = {"SigmoidGrad", "TanhGrad", "ReluGrad"}


def _special(np_t: type) -> np.ndarray:
    info = np.finfo(np_t)
    return np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, info.smallest_subnormal, -info.smallest_subnormal,
         info.tiny, info.max, -info.max, 1.0, -1.0, 0.5, 20.0, -20.0, 88.7, -88.7, 710.0],
        np_t,
    )  # fmt: skip


def _data(np_t: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    special = _special(np_t)
    mixed = rng.permutation(np.concatenate([special, rng.normal(0, 8, 46).astype(np_t)]))
    return mixed.astype(np_t)


def _graph(op: str, dtype: int, shape_x=None, shape_y=None) -> graph_pb2.GraphDef:
    """x, y -> Neg -> op -> Neg: the op in the middle of a three-node cluster."""
    gd = graph_pb2.GraphDef()
    for name in ("x", "y"):
        n = gd.node.add(name=name, op="Placeholder")
        n.attr["dtype"].type = dtype
        n.attr["shape"].shape.unknown_rank = True

    def add(name: str, o: str, *inputs: str) -> None:
        n = gd.node.add(name=name, op=o)
        n.input.extend(inputs)
        n.attr["T"].type = dtype

    add("nx", "Neg", "x")
    add("op", op, *(["nx"] if op in UNARY else ["nx", "y"]))
    add("out", "Neg", "op")
    return gd


def _config(fuse: bool) -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    if not fuse:
        config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    return config


def _run(gd, feeds, fuse: bool):
    with Session(gd, config=_config(fuse)) as sess:
        meta = config_pb2.RunMetadata()
        out = sess.run(
            ["out:0"],
            feeds,
            run_options=config_pb2.RunOptions(output_partition_graphs=True),
            run_metadata=meta,
        )[0]
    ops = [n.op for g in meta.partition_graphs for n in g.node]
    assert ("_FusedElementwise" in ops) == fuse, ops
    return out


def _same_bits(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    uint = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(uint), want.view(uint))


@pytest.mark.parametrize("np_t", [np.float32, np.float64])
@pytest.mark.parametrize("op", _UNARY + _BINARY)
def test_each_op_fused_gives_the_unfused_bits(op, np_t):
    dtype = 1 if np_t is np.float32 else 2
    gd = _graph(op, dtype)
    x, y = _data(np_t, 1), _data(np_t, 2)
    cases = [{"x:0": x, "y:0": y}, {"x:0": x[:1].reshape(()), "y:0": y[:1].reshape(())}]
    if op not in _SAME_SHAPE:  # broadcasting, and a scalar with an array
        cases += [
            {"x:0": x[:12].reshape(4, 3), "y:0": y[:3]},
            {"x:0": np_t(1.5), "y:0": y},
            {"x:0": x, "y:0": np_t(-0.25)},
        ]
    for feeds in cases:
        _same_bits(_run(gd, feeds, True), _run(gd, feeds, False))


def _error(gd, feeds, fuse: bool) -> OpError:
    with pytest.raises(OpError) as info:
        _run(gd, feeds, fuse)
    return info.value


@pytest.mark.parametrize("op", ["AddV2", "Maximum", "SquaredDifference", "SigmoidGrad", "ReluGrad"])
def test_errors_are_the_members_own(op):
    gd = _graph(op, 1)
    feeds = {"x:0": np.zeros((2, 3), np.float32), "y:0": np.zeros((4,), np.float32)}
    if op in _SAME_SHAPE:  # shapes that broadcast: the kernel still refuses them
        feeds["y:0"] = np.zeros((3,), np.float32)
    fused, plain = _error(gd, feeds, True), _error(gd, feeds, False)
    assert (type(fused), fused.message, fused.node_name) == (
        type(plain),
        plain.message,
        plain.node_name,
    )
    assert plain.node_name == "op"


def test_the_fused_node_names_its_members_in_step_order():
    from common.graph.constructor import convert_graph_def_to_graph
    from common.optimizer.fuse_elementwise import fuse_elementwise

    g = convert_graph_def_to_graph(_graph("TanhGrad", 1))
    assert fuse_elementwise(g) == 2
    fused = g.node("out")
    assert fused.attr("program") == ["Neg i0", "TanhGrad t0 i1", "Neg t1"]
    assert fused.attr("names") == ["nx", "op", "out"]
