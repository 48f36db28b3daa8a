"""Tests for the graph optimization stage: CSE, constant folding, Identity and dead-node
removal (exact structures), and unchanged results through Session with and without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import common.ops  # noqa: F401  (registers every op and kernel)
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.graph.constructor import convert_graph_def_to_graph
from common.graph.graph import Graph
from common.optimizer.constant_folding import constant_fold
from common.optimizer.cse import eliminate_common_subexpressions
from common.optimizer.graph_optimizer import (
    DEFAULT_MAX_CONSTANT_BYTES,
    OptimizeStats,
    Passes,
    disabled_options,
    optimize_graph,
    resolve_passes,
)
from common.optimizer.simplify import remove_dead_nodes, remove_identity_nodes
from common.session import Session
from common.subgraph import DeviceInfo, rewrite_graph_for_execution
from common.tensor import from_numpy, to_numpy
from protos import attr_value_pb2, config_pb2, graph_pb2, tensor_shape_pb2

F = DataType.DT_FLOAT
I32 = DataType.DT_INT32
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


# -- GraphDef building ----------------------------------------------------------------------
def _type(dt: DataType) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(type=int(dt))


class G:
    """A GraphDef under construction: `g.op(name, op, *inputs, T=..., device=..., **attrs)`."""

    def __init__(self) -> None:
        self.gd = graph_pb2.GraphDef()

    def op(self, name: str, op: str, *inputs: str, device: str = "", **attrs) -> G:
        n = self.gd.node.add(name=name, op=op, device=device)
        n.input.extend(inputs)
        for k, v in attrs.items():
            if isinstance(v, DataType):
                v = _type(v)
            elif isinstance(v, bool):
                v = attr_value_pb2.AttrValue(b=v)
            elif isinstance(v, int):
                v = attr_value_pb2.AttrValue(i=v)
            n.attr[k].CopyFrom(v)
        return self

    def const(self, name: str, value, dt: DataType = F, *inputs: str, device: str = "") -> G:
        tensor = attr_value_pb2.AttrValue(tensor=from_numpy(np.asarray(value), dt))
        return self.op(name, "Const", *inputs, device=device, value=tensor, dtype=dt)

    def ph(self, name: str, dt: DataType = F) -> G:
        return self.op(name, "Placeholder", dtype=dt)

    def binary(self, name: str, op: str, x: str, y: str, dt: DataType = F, **kw) -> G:
        return self.op(name, op, x, y, T=dt, **kw)

    def unary(self, name: str, op: str, x: str, *controls: str, dt: DataType = F, **kw) -> G:
        return self.op(name, op, x, *controls, T=dt, **kw)


def rewritten(g: G, feeds=(), fetches=(), targets=()) -> Graph:
    """The client graph a step runs (function convention), before optimization."""
    graph = convert_graph_def_to_graph(g.gd)
    rewrite_graph_for_execution(
        graph,
        list(feeds),
        list(fetches),
        list(targets),
        device_info=DeviceInfo(CPU0, 1),
        use_function_convention=True,
    )
    return graph


def structure(graph: Graph) -> dict[str, tuple[str, list[str]]]:
    """{name: (op, inputs as GraphDef spells them)} of the op nodes."""
    return {n.name: (n.op, list(n.input)) for n in graph.to_graph_def().node}


def const_value(graph: Graph, name: str) -> np.ndarray:
    node = graph.node(name)
    assert node is not None and node.op == "Const"
    return to_numpy(node.attr_protos["value"].tensor)


ARG = "_arg_p_0_0"
SHAPE2 = attr_value_pb2.AttrValue(shape=tensor_shape_pb2.TensorShapeProto(dim=[{"size": 2}]))


def retval(name: str, i: int = 0) -> str:
    return f"_retval_{name}_0_{i}"


# -- CSE ----------------------------------------------------------------------------------
def test_cse_merges_duplicates_into_the_lowest_id_node():
    g = G().ph("p").binary("m1", "Mul", "p", "p").binary("m2", "Mul", "p", "p")
    g.binary("o", "AddV2", "m1", "m2")
    graph = rewritten(g, ["p"], ["o"])
    assert eliminate_common_subexpressions(graph) == 1
    assert structure(graph) == {
        "m1": ("Mul", [ARG, ARG]),
        "o": ("AddV2", ["m1", "m1"]),
        ARG: ("_Arg", []),
        retval("o"): ("_Retval", ["o"]),
    }


def test_cse_collapses_a_duplicated_chain_in_one_pass():
    g = G().ph("p")
    for s in "ab":
        g.unary(f"n{s}", "Neg", "p").binary(f"q{s}", "Mul", f"n{s}", "p")
        g.unary(f"r{s}", "Square", f"q{s}")
    g.binary("o", "Sub", "ra", "rb")
    graph = rewritten(g, ["p"], ["o"])
    assert eliminate_common_subexpressions(graph) == 3
    assert structure(graph)["o"] == ("Sub", ["ra", "ra"])
    assert {"nb", "qb", "rb"}.isdisjoint(structure(graph))


def test_cse_sorts_inputs_of_commutative_ops_only():
    g = G().ph("p").ph("q", F)
    g.binary("a1", "AddV2", "p", "q").binary("a2", "AddV2", "q", "p")
    g.binary("s1", "Sub", "p", "q").binary("s2", "Sub", "q", "p")
    g.op("o", "AddN", "a1", "a2", "s1", "s2", T=F, N=4)
    graph = rewritten(g, ["p", "q"], ["o"])
    assert eliminate_common_subexpressions(graph) == 1
    assert structure(graph)["o"] == ("AddN", ["a1", "a1", "s1", "s2"])


def test_cse_tells_apart_attrs_devices_and_control_inputs():
    g = G().ph("p").ph("c1").ph("c2")
    g.op("x1", "Cast", "p", SrcT=F, DstT=I32)
    g.op("x2", "Cast", "p", SrcT=F, DstT=DataType.DT_INT64)
    g.unary("d1", "Neg", "p", device=CPU0).unary("d2", "Neg", "p", device=CPU1)
    g.unary("k1", "Neg", "p", "^c1", "^c2").unary("k2", "Neg", "p", "^c2", "^c1")
    g.unary("k3", "Neg", "p", "^c1")
    fetches = ["x1", "x2", "d1", "d2", "k1", "k2", "k3"]
    graph = rewritten(g, ["p", "c1", "c2"], fetches)
    assert eliminate_common_subexpressions(graph) == 1  # only k2 (same control set as k1)
    assert graph.node("k2") is None
    assert structure(graph)[retval("k2", 5)] == ("_Retval", ["k1"])
    assert all(graph.node(n) is not None for n in ["x1", "x2", "d1", "d2", "k1", "k3"])


def test_cse_never_merges_stateful_ops_placeholders_or_kept_nodes():
    g = G().const("shape", [2], I32)
    g.op("r1", "RandomUniform", "shape", T=I32, dtype=F, seed=1, seed2=2)
    g.op("r2", "RandomUniform", "shape", T=I32, dtype=F, seed=1, seed2=2)
    g.ph("p1").ph("p2")
    g.unary("n1", "Neg", "p1").unary("n2", "Neg", "p1")
    graph = rewritten(g, [], ["r1", "r2", "n1", "n2"], [])
    # p1 is not fed here: the placeholders stay apart, and n2 survives by name.
    assert eliminate_common_subexpressions(graph, keep={"n2"}) == 0
    assert {"r1", "r2", "n1", "n2"} <= set(structure(graph))


def test_cse_moves_control_consumers_to_the_survivor():
    g = G().ph("p").unary("a", "Neg", "p").unary("b", "Neg", "p")
    g.unary("o", "Square", "p", "^b")
    graph = rewritten(g, ["p"], ["o", "a"])
    assert eliminate_common_subexpressions(graph) == 1
    assert structure(graph)["o"] == ("Square", [ARG, "^a"])


def test_cse_merges_identical_constants():
    g = G().const("c1", [1.0, 2.0]).const("c2", [1.0, 2.0]).const("c3", [1.0, 3.0])
    g.ph("p").binary("a", "Mul", "p", "c1").binary("b", "Mul", "p", "c2")
    g.binary("c", "Mul", "p", "c3")
    graph = rewritten(g, ["p"], ["a", "b", "c"])
    assert eliminate_common_subexpressions(graph) == 2  # c2, then b
    assert structure(graph)[retval("b", 1)] == ("_Retval", ["a"])
    assert graph.node("c3") is not None


# -- constant folding -----------------------------------------------------------------------
def test_constant_fold_replaces_the_foldable_frontier_with_one_const():
    g = G().const("a", [1.0, 2.0], device=CPU1).const("b", [3.0, 4.0])
    g.binary("s", "AddV2", "a", "b", device=CPU1).unary("sq", "Square", "s", device=CPU1)
    g.ph("p").binary("o", "Mul", "sq", "p")
    graph = rewritten(g, ["p"], ["o"])
    assert constant_fold(graph) == 1
    assert remove_dead_nodes(graph) == 4  # a, b, s, sq
    assert structure(graph) == {
        "o": ("Mul", ["sq/_0__cf__0", ARG]),
        ARG: ("_Arg", []),
        retval("o"): ("_Retval", ["o"]),
        "sq/_0__cf__0": ("Const", []),
    }
    np.testing.assert_array_equal(const_value(graph, "sq/_0__cf__0"), [16.0, 36.0])
    assert graph.node("sq/_0__cf__0").requested_device == CPU1


def test_constant_fold_folds_a_fetched_tensor_and_each_consumed_output():
    g = G().const("x", [[1, 2], [3, 4]], I32)
    g.op("u", "Unpack", "x", T=I32, num=2, axis=0)
    g.binary("o", "AddV2", "u:1", "u:0", dt=I32)
    graph = rewritten(g, [], ["u:0", "o"])
    assert constant_fold(graph) == 2  # u:0 for the fetch, o for its fetch; u:1 feeds o only
    remove_dead_nodes(graph)
    assert structure(graph) == {
        retval("u", 0): ("_Retval", ["u/_0__cf__0"]),
        "_retval_o_0_1": ("_Retval", ["o/_1__cf__1"]),
        "u/_0__cf__0": ("Const", []),
        "o/_1__cf__1": ("Const", []),
    }
    np.testing.assert_array_equal(const_value(graph, "o/_1__cf__1"), [4, 6])


def test_constant_fold_keeps_transitive_control_dependencies():
    g = G().ph("p").unary("gate", "Neg", "p")
    g.const("c", 2.0, F, "^gate").unary("sq", "Square", "c").const("d", 3.0)
    g.binary("prod", "Mul", "sq", "d").binary("o", "AddV2", "prod", "p")
    graph = rewritten(g, ["p"], ["o"])
    assert constant_fold(graph) == 1
    remove_dead_nodes(graph)
    s = structure(graph)
    assert s["prod/_0__cf__0"] == ("Const", ["^gate"])
    assert s["o"] == ("AddV2", ["prod/_0__cf__0", ARG])
    assert set(s) == {"gate", "prod/_0__cf__0", "o", ARG, retval("o")}
    assert float(const_value(graph, "prod/_0__cf__0")) == 12.0


def test_constant_fold_stops_at_stateful_placeholder_and_large_outputs():
    g = G().const("shape", [3], I32).const("one", 1.0)
    g.op("r", "RandomUniform", "shape", T=I32, dtype=F)
    g.binary("ra", "AddV2", "r", "one")
    g.op("big", "Fill", "shape", "one", T=F, index_type=I32)
    g.ph("p").binary("pa", "AddV2", "p", "one")
    graph = rewritten(g, ["p"], ["ra", "big", "pa"])
    before = structure(graph)
    assert constant_fold(graph, max_constant_bytes=8) == 0  # big is 12 bytes
    assert structure(graph) == before
    assert constant_fold(graph, max_constant_bytes=12) == 1
    np.testing.assert_array_equal(const_value(graph, "big/_0__cf__0"), [1.0, 1.0, 1.0])


def test_constant_fold_leaves_a_failing_subgraph_to_fail_at_run_time():
    g = G().const("x", [1.0, 2.0, 3.0]).const("shape", [2, 2], I32)
    g.op("bad", "Reshape", "x", "shape", T=F, Tshape=I32).unary("o", "Neg", "bad")
    graph = rewritten(g, [], ["o"])
    assert constant_fold(graph) == 0
    with Session(g.gd, optimize=True) as sess, pytest.raises(InvalidArgumentError) as info:
        sess.run(["o"])
    assert info.value.node_name == "bad"


def test_constant_fold_skips_consts_and_graphs_without_foldable_tensors():
    g = G().const("c", 1.0).ph("p").binary("o", "AddV2", "p", "c")
    graph = rewritten(g, ["p"], ["o"])
    before = structure(graph)
    assert constant_fold(graph) == 0
    assert structure(graph) == before


def test_shape_size_rank_fold_from_static_output_shapes():
    g = G().ph("p").ph("pred", DataType.DT_BOOL)
    shapes = attr_value_pb2.AttrValue()
    shapes.list.shape.add(dim=[{"size": 2}])
    g.op("sq", "Square", "p", T=F, _output_shapes=shapes)
    g.op("shp", "Shape", "sq", T=F, out_type=I32).op("sz", "Size", "sq", T=F, out_type=I32)
    g.op("rk", "Rank", "sq", T=F).op("unknown", "Shape", "p", T=F, out_type=I32)
    g.op("sw", "Switch", "sq", "pred", T=F).op("dead_shape", "Shape", "sw:1", T=F, out_type=I32)
    fetches = ["shp", "sz", "rk", "unknown", "dead_shape"]
    graph = rewritten(g, ["p", "pred"], fetches)
    assert constant_fold(graph) == 3
    remove_dead_nodes(graph)
    s = structure(graph)
    assert s["shp/_0__cf__0"] == ("Const", ["^sq"])
    assert s[retval("shp")] == ("_Retval", ["shp/_0__cf__0"])
    assert s[retval("rk", 2)] == ("_Retval", ["rk/_2__cf__2"])
    assert {"shp", "sz", "rk"}.isdisjoint(s) and {"unknown", "dead_shape"} <= set(s)
    np.testing.assert_array_equal(const_value(graph, "shp/_0__cf__0"), np.array([2], np.int32))
    assert const_value(graph, "sz/_1__cf__1").dtype == np.int32
    assert int(const_value(graph, "sz/_1__cf__1")) == 2
    assert int(const_value(graph, "rk/_2__cf__2")) == 1
    feeds = {"p": np.array([1.0, 2.0], np.float32), "pred": True}
    plain, optimized = _run_both(g.gd, fetches, feeds)
    for x, y in zip(plain, optimized):
        np.testing.assert_array_equal(x, y)


# -- Identity and dead nodes ----------------------------------------------------------------
def test_identity_chain_is_bypassed():
    g = G().ph("p").unary("i1", "Identity", "p").unary("i2", "Snapshot", "i1")
    g.unary("i3", "StopGradient", "i2").unary("o", "Neg", "i3").unary("n", "Square", "i2")
    g.op("t", "NoOp", "^i3")
    graph = rewritten(g, ["p"], ["o", "n"], ["t"])
    assert remove_identity_nodes(graph, keep={"t"}) == 3
    s = structure(graph)
    assert s["o"] == ("Neg", [ARG])
    assert s["n"] == ("Square", [ARG])
    assert s["t"] == ("NoOp", [f"^{ARG}"])
    assert {"i1", "i2", "i3"}.isdisjoint(s)


def test_identity_kept_when_it_carries_meaning():
    g = G().ph("p").ph("c").ph("pred", DataType.DT_BOOL)
    g.op("sw", "Switch", "p", "pred", T=F).unary("after_switch", "Identity", "sw:1")
    g.unary("with_ctrl", "Identity", "p", "^c").unary("kept", "Identity", "p")
    g.unary("moved", "Identity", "p", device=CPU1).unary("fetched_only", "Identity", "p")
    for name in ["after_switch", "with_ctrl", "kept", "moved"]:
        g.unary(f"use_{name}", "Neg", name)
    g.op("v", "VariableV2", shape=SHAPE2, dtype=F)
    g.op("deref", "Identity", "v", T=F).unary("use_deref", "Neg", "deref")
    fetches = [f"use_{n}" for n in ["after_switch", "with_ctrl", "kept", "moved", "deref"]]
    graph = rewritten(g, ["p", "c", "pred"], fetches + ["fetched_only"])
    assert remove_identity_nodes(graph, keep={"kept"}) == 1  # only the fetched one
    s = structure(graph)
    assert s["_retval_fetched_only_0_5"] == ("_Retval", [ARG])
    for name in ["after_switch", "with_ctrl", "kept", "moved", "deref"]:
        assert s[f"use_{name}"][1] == [name]


def test_dead_nodes_are_those_that_reach_nothing_that_must_run():
    g = G().ph("p").unary("a", "Neg", "p").unary("b", "Neg", "a").unary("t", "Neg", "p")
    g.op("v", "VarHandleOp", dtype=F, shape=SHAPE2, shared_name=attr_value_pb2.AttrValue(s=b"v"))
    graph = rewritten(g, ["p"], ["a"], ["t", "b", "v"])
    # b and t no longer needed: only the target list (keep) protects them.
    assert remove_dead_nodes(graph, keep={"t"}) == 1
    assert set(structure(graph)) == {"a", "t", "v", ARG, retval("a")}


# -- the driver -----------------------------------------------------------------------------
def test_resolve_passes_follows_optimizer_options():
    Opts = config_pb2.OptimizerOptions
    # Elementwise fusion is on by default (RewriterConfig, not opt_level, turns it off).
    assert resolve_passes(None) == Passes(True, True, DEFAULT_MAX_CONSTANT_BYTES, True)
    assert resolve_passes(Opts()) == Passes(True, True, DEFAULT_MAX_CONSTANT_BYTES, True)
    assert resolve_passes(Opts(opt_level=Opts.L0)) == Passes(
        False, False, DEFAULT_MAX_CONSTANT_BYTES, True
    )
    assert resolve_passes(Opts(opt_level=Opts.L0, do_constant_folding=True)) == Passes(
        False, True, DEFAULT_MAX_CONSTANT_BYTES, True
    )
    assert resolve_passes(Opts(max_folded_constant_in_bytes=100)).max_constant_bytes == 100


def _cse_fold_graph() -> G:
    g = G().const("a", [1.0, 2.0]).const("b", [3.0, 4.0]).ph("p")
    g.binary("s1", "AddV2", "a", "b").binary("s2", "AddV2", "b", "a")
    g.unary("i", "Identity", "p")
    g.binary("m1", "Mul", "s1", "i").binary("m2", "Mul", "s2", "i")
    return g.binary("o", "AddV2", "m1", "m2")


def test_optimize_graph_runs_every_pass_to_a_fixpoint():
    graph = rewritten(_cse_fold_graph(), ["p"], ["o"])
    stats = optimize_graph(graph)
    assert stats == OptimizeStats(
        rounds=2, cse_removed=2, constants_folded=2, identities_removed=1, dead_removed=4
    )
    assert structure(graph) == {
        "m1": ("Mul", ["s1/_0__cf__0", ARG]),
        "o": ("AddV2", ["m1", "m1"]),
        ARG: ("_Arg", []),
        retval("o"): ("_Retval", ["o"]),
        "s1/_0__cf__0": ("Const", []),
    }


def test_optimize_graph_l0_does_nothing():
    graph = rewritten(_cse_fold_graph(), ["p"], ["o"])
    before = structure(graph)
    assert optimize_graph(graph, options=disabled_options()) == OptimizeStats()
    assert structure(graph) == before


def test_optimize_graph_keeps_targets_and_transfers():
    g = G().const("a", 1.0).const("b", 2.0).binary("t", "AddV2", "a", "b")
    g.binary("o", "Mul", "t", "b")
    graph = rewritten(g, [], ["o"], ["t"])
    optimize_graph(graph, keep=["t"])
    s = structure(graph)
    assert s["t"] == ("AddV2", ["a", "b"])
    assert s[retval("o")] == ("_Retval", ["o/_0__cf__0"])
    assert set(s) == {"a", "b", "t", "o/_0__cf__0", retval("o")}


# -- results are unchanged -------------------------------------------------------------------
def _run_both(gd, fetches, feeds=None, targets=()):
    results = []
    for optimize in (False, True):
        with Session(gd, optimize=optimize, num_devices=2) as sess:
            results.append(sess.run(fetches, feeds, targets))
    return results


def test_session_results_are_unchanged_by_optimization():
    p = np.array([0.5, -1.5], np.float32)
    plain, optimized = _run_both(_cse_fold_graph().gd, ["o", "m2", "s2"], {"p": p})
    for x, y in zip(plain, optimized):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(optimized[0], 2 * np.array([4.0, 6.0], np.float32) * p)


def test_session_with_config_proto_optimizes_and_keeps_variables_working():
    g = G().const("init", [1.0, 2.0]).const("one", [1.0, 1.0]).const("one_b", [1.0, 1.0])
    g.op("v", "VariableV2", shape=SHAPE2, dtype=F)
    g.op("assign", "Assign", "v", "init", T=F)
    g.binary("inc", "AddV2", "one", "one_b")
    g.op("add", "AssignAdd", "v", "inc", T=F)
    g.unary("read", "Identity", "v")
    config = config_pb2.ConfigProto()
    with Session(g.gd, config=config) as sess:
        sess.run([], targets=["assign"])
        sess.run([], targets=["add"])
        sess.run([], targets=["add"])
        (value,) = sess.run(["read"])
    np.testing.assert_array_equal(value, [5.0, 6.0])


_UNARY = ["Neg", "Square", "Identity", "Abs"]
_BINARY = ["AddV2", "Mul", "Sub", "Maximum"]


@st.composite
def _random_dags(draw):
    g = G().ph("p").ph("q")
    names = ["p", "q"]
    for i in range(draw(st.integers(0, 3))):
        g.const(f"c{i}", draw(st.integers(-3, 3)) * 1.0)
        names.append(f"c{i}")
    for i in range(draw(st.integers(1, 12))):
        name = f"n{i}"
        if draw(st.booleans()):
            g.unary(name, draw(st.sampled_from(_UNARY)), draw(st.sampled_from(names)))
        else:
            x, y = draw(st.sampled_from(names)), draw(st.sampled_from(names))
            g.binary(name, draw(st.sampled_from(_BINARY)), x, y)
        names.append(name)
    fetches = draw(st.lists(st.sampled_from(names[2:] or names), min_size=1, max_size=3))
    return g, sorted(set(fetches))


@settings(max_examples=25, deadline=None)
@given(_random_dags())
def test_optimizing_random_pure_dags_never_changes_fetched_values(case):
    g, fetches = case
    feeds = {"p": np.array([0.5, -2.0], np.float32), "q": np.array([3.0, 1.5], np.float32)}
    feeds = {k: v for k, v in feeds.items() if k not in fetches}
    plain, optimized = _run_both(g.gd, fetches, feeds)
    for x, y in zip(plain, optimized):
        np.testing.assert_array_equal(x, y)


# -- TensorFlow-exported graphs ---------------------------------------------------------------
def _tf_loop_graph(control_flow_v2: bool):
    """A TF while loop (a constant expression in its body) and a cond, as a GraphDef."""
    tf = pytest.importorskip("tensorflow")
    v1 = tf.compat.v1
    graph = tf.Graph()
    if not control_flow_v2:
        v1.disable_control_flow_v2()
    try:
        with graph.as_default():
            x = v1.placeholder(v1.float32, [3], name="x")
            k = v1.constant([1.0, 2.0, 3.0]) * v1.constant(2.0)

            def body(i, a):
                return i + 1, a * (v1.constant(1.5) + v1.constant(0.5)) + k

            _, acc = v1.while_loop(lambda i, a: i < 4, body, [v1.constant(0), x])
            c = v1.cond(v1.reduce_sum(x) > 0.0, lambda: acc + k * v1.constant(3.0), lambda: acc - k)
            fetches = [acc.name, c.name, v1.identity(k + v1.constant(1.0)).name]
    finally:
        v1.enable_control_flow_v2()
    return graph_pb2.GraphDef.FromString(graph.as_graph_def().SerializeToString()), fetches


@pytest.mark.parametrize("control_flow_v2", [False, True])
def test_tf_while_loop_and_cond_give_the_same_results_optimized(control_flow_v2):
    gd, fetches = _tf_loop_graph(control_flow_v2)
    for x in ([1.0, 2.0, 3.0], [-5.0, 0.0, 1.0]):
        feeds = {"x:0": np.array(x, np.float32)}
        plain, optimized = _run_both(gd, fetches, feeds)
        for a, b in zip(plain, optimized):
            np.testing.assert_array_equal(a, b)


def test_tf_while_body_constants_fold_inside_their_frame():
    gd, fetches = _tf_loop_graph(control_flow_v2=False)
    graph = convert_graph_def_to_graph(gd)
    rewrite_graph_for_execution(
        graph,
        ["x:0"],
        fetches[:1],
        [],
        device_info=DeviceInfo(CPU0, 1),
        use_function_convention=True,
    )
    optimize_graph(graph)
    folded = {n: ins for n, (op, ins) in structure(graph).items() if "__cf__" in n}
    # The body's 1.5 + 0.5 keeps the pivot as control input, so it runs in the loop frame.
    assert folded == {"mul/_0__cf__0": [], "while/add_1/_1__cf__1": ["^while/Identity"]}
    assert float(const_value(graph, "while/add_1/_1__cf__1")) == 2.0


def test_constant_fold_never_runs_regex_kernels():
    # A regex's cost is not bounded by its inputs' sizes: it runs at step time, under the
    # step's deadline, never on the master's planning thread.
    g = G().const("s", np.array([b"aaaa!"], dtype=object), DataType.DT_STRING)
    pattern = attr_value_pb2.AttrValue(s=b"(a+)+$")
    g.op("m", "StaticRegexFullMatch", "s", pattern=pattern)
    graph = rewritten(g, [], ["m"])
    assert constant_fold(graph) == 0
    assert graph.node("m").op == "StaticRegexFullMatch"
