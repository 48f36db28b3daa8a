"""Tests for the elementwise fusion pass (common.optimizer.fuse_elementwise) and its kernel
(_FusedElementwise): the exact clusters fused, what is never fused, the switch, and
results equal to the unfused graph's, bit for bit, through Session."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import common.ops  # noqa: F401  (registers every op and kernel)
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.graph.constructor import convert_graph_def_to_graph
from common.ops.fused_ops import compile_program
from common.optimizer import fuse_elementwise as fusion
from common.optimizer.fuse_elementwise import fuse_elementwise
from common.optimizer.graph_optimizer import resolve_passes
from common.session import Session
from protos import attr_value_pb2, config_pb2, graph_pb2, rewriter_config_pb2

F, D, I32 = DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32


class _Builder:
    def __init__(self, dtype: DataType = F) -> None:
        self.gd = graph_pb2.GraphDef()
        self.dtype = dtype

    def placeholder(self, name: str, shape: list[int] | None = None) -> str:
        n = self.gd.node.add(name=name, op="Placeholder")
        n.attr["dtype"].type = int(self.dtype)
        if shape is None:
            n.attr["shape"].shape.unknown_rank = True
        else:
            n.attr["shape"].shape.dim.extend(
                [attr_value_pb2.tensor_shape_pb2.TensorShapeProto.Dim(size=s) for s in shape]
            )
        return name

    def op(self, name: str, op: str, *inputs: str, device: str = "") -> str:
        n = self.gd.node.add(name=name, op=op, device=device)
        n.input.extend(inputs)
        n.attr["T"].type = int(self.dtype)
        return name


def _fused_graph(gd, keep=()):
    g = convert_graph_def_to_graph(gd)
    removed = fuse_elementwise(g, keep)
    return g, removed


def _config(fuse: bool) -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    if not fuse:
        config.graph_options.rewrite_options.remapping = rewriter_config_pb2.RewriterConfig.OFF
    return config


def _run(gd, fetches, feeds, fuse):
    with Session(gd, config=_config(fuse)) as sess:
        return sess.run(fetches, feeds)


def test_a_chain_becomes_one_node_named_as_its_end():
    b = _Builder()
    x = b.placeholder("x")
    prev = x
    for k in range(5):
        prev = b.op(f"add_{k}", "AddV2", prev, x)
    b.op("out", "Neg", prev)
    g, removed = _fused_graph(b.gd)
    assert removed == 5
    (fused,) = [n for n in g.op_nodes() if n.op == "_FusedElementwise"]
    assert fused.name == "out"
    assert fused.attr("program") == [
        "AddV2 i0 i0",
        "AddV2 t0 i0",
        "AddV2 t1 i0",
        "AddV2 t2 i0",
        "AddV2 t3 i0",
        "Neg t4",
    ]
    assert [e.src.name for e in fused.data_inputs()] == ["x"]


def test_a_tree_keeps_operand_order_and_shares_repeated_inputs():
    b = _Builder()
    x, y = b.placeholder("x"), b.placeholder("y")
    a = b.op("a", "Sub", x, y)
    m = b.op("m", "Mul", y, x)
    b.op("d", "RealDiv", a, m)
    g, removed = _fused_graph(b.gd)
    assert removed == 2
    fused = g.node("d")
    assert fused.op == "_FusedElementwise"
    assert fused.attr("program") == ["Sub i0 i1", "Mul i1 i0", "RealDiv t0 t1"]


def test_never_fused_multiple_consumers_kept_control_ints_devices_control_flow():
    b = _Builder()
    x = b.placeholder("x")
    shared = b.op("shared", "Neg", x)  # two consumers: stays
    b.op("u1", "Square", shared)
    b.op("u2", "Square", shared)
    kept = b.op("kept", "Neg", x)
    b.op("after_kept", "Neg", kept)
    other = b.op("other_dev", "Neg", x, device="/device:CPU:1")
    b.op("this_dev", "Neg", other, device="/device:CPU:0")
    ctl = b.op("ctl", "Neg", x)
    b.op("ctl_user", "Neg", ctl, "^x")
    g, removed = _fused_graph(b.gd, keep=["kept"])
    assert removed == 0
    assert not [n for n in g.op_nodes() if n.op == "_FusedElementwise"]
    bi = _Builder(I32)
    xi = bi.placeholder("x")
    bi.op("b", "Neg", bi.op("a", "Neg", xi))
    assert _fused_graph(bi.gd)[1] == 0


def test_on_by_default_off_where_tensorflows_remapper_is_off_explicit_on_wins():
    rc = rewriter_config_pb2.RewriterConfig
    oo = config_pb2.OptimizerOptions
    assert resolve_passes(None).fuse_elementwise
    assert resolve_passes(oo()).fuse_elementwise
    assert resolve_passes(oo(), rc()).fuse_elementwise
    assert not resolve_passes(None, rc(remapping=rc.OFF)).fuse_elementwise
    assert not resolve_passes(None, rc(disable_meta_optimizer=True)).fuse_elementwise
    assert not resolve_passes(oo(global_jit_level=oo.OFF)).fuse_elementwise
    assert resolve_passes(oo(global_jit_level=oo.ON_1), rc(remapping=rc.OFF)).fuse_elementwise
    assert resolve_passes(None, rc(remapping=rc.ON, disable_meta_optimizer=True)).fuse_elementwise
    assert fusion.enabled(None, None) is True


def test_session_results_equal_unfused_for_scalars_and_broadcast_arrays():
    b = _Builder()
    x, y = b.placeholder("x"), b.placeholder("y")
    prev = x
    for k in range(200):
        op = ["AddV2", "Mul", "Sub", "RealDiv"][k % 4]
        prev = b.op(f"n{k}", op, prev, y if k % 3 else x)
    b.op("sq", "Square", prev)
    rng = np.random.default_rng(3)
    for xv, yv in [
        (np.float32(1.25), np.float32(1.0001)),
        (rng.random((3, 4), np.float32) + 0.5, rng.random((4,), np.float32) + 0.5),
    ]:
        feeds = {"x:0": xv, "y:0": yv}
        fused = _run(b.gd, ["sq:0", "n7:0"], feeds, True)
        plain = _run(b.gd, ["sq:0", "n7:0"], feeds, False)
        for got, want in zip(fused, plain):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["AddV2", "Sub", "Mul", "RealDiv", "Neg", "Square"]),
            st.integers(0, 100),
            st.integers(0, 100),
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([F, D]),
)
def test_random_trees_equal_unfused(steps, dtype):
    b = _Builder(dtype)
    names = [b.placeholder("x"), b.placeholder("y")]
    for k, (op, a, c) in enumerate(steps):
        ins = [names[a % len(names)]] + (
            [names[c % len(names)]] if op not in ("Neg", "Square") else []
        )
        names.append(b.op(f"s{k}", op, *ins))
    np_t = np.float32 if dtype == F else np.float64
    feeds = {"x:0": np.array([1.5, -2.0, 0.0], np_t), "y:0": np.array([0.25, 3.0, -0.0], np_t)}
    fetch = [f"{names[-1]}:0"]
    got, want = _run(b.gd, fetch, feeds, True)[0], _run(b.gd, fetch, feeds, False)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_incompatible_shapes_are_invalid_argument():
    b = _Builder()
    x, y = b.placeholder("x"), b.placeholder("y")
    b.op("b", "Neg", b.op("a", "AddV2", x, y))
    with pytest.raises(InvalidArgumentError, match="Incompatible shapes"):
        _run(b.gd, ["b:0"], {"x:0": np.zeros(2, np.float32), "y:0": np.zeros(3, np.float32)}, True)


def test_a_malformed_program_is_rejected():
    with pytest.raises(InvalidArgumentError, match="bad program step 0"):
        compile_program(("AddV2 i0 t0",), 1)
    with pytest.raises(InvalidArgumentError, match="bad program step 1"):
        compile_program(("Neg i0", "Floor t0"), 1)
    assert compile_program(("Mul i0 i1", "Neg t0"), 2)(np.float32(2), np.float32(3)) == -6
