"""Tests for the dependency optimization rules beyond bypassing tuples: Identities after a
Switch, nodes with only control outputs turned into NoOps, control edges implied by a
longer path, control edges from inputless Consts. Structures equal what TensorFlow's
grappler DependencyOptimizer leaves on the same graphs; the edges it must keep stay; a v1
while loop with a cond and its gradient (TensorFlow-built) gives TensorFlow's values with
fewer node executions."""

from __future__ import annotations

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op and kernel)
from common.graph.constructor import convert_graph_def_to_graph
from common.graph.graph import Graph
from common.optimizer.dependency import optimize_dependencies
from common.optimizer.simplify import remove_dead_nodes, remove_identity_nodes
from common.optimizer.transitive_reduction import remove_redundant_control_edges
from common.session import Session
from protos import config_pb2, graph_pb2, rewriter_config_pb2
from tests.common.test_dependency_optimizer import _tf_grappler_dependency, structure

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
raw = tf.raw_ops
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module
Toggle = rewriter_config_pb2.RewriterConfig


def _ours(g) -> graph_pb2.GraphDef:
    return graph_pb2.GraphDef.FromString(g.as_graph_def().SerializeToString())


def _optimized(gd: graph_pb2.GraphDef, keep: list[str]) -> Graph:
    """The dependency rules to a fixpoint, with the Identity and dead-node removal they
    run beside in optimize_graph (TensorFlow's pass does both)."""
    graph = convert_graph_def_to_graph(gd)
    while optimize_dependencies(graph, keep) + remove_identity_nodes(graph, keep):
        remove_dead_nodes(graph, keep)
    remove_dead_nodes(graph, keep)
    return graph


def _check_against_tensorflow(g, fetch: list[str]) -> dict:
    gd = _ours(g)
    expected = _tf_grappler_dependency(gd, fetch)
    got = structure(_optimized(gd, fetch))
    assert got == expected
    return got


def test_identities_after_a_switch_go_unless_waited_on_by_control():
    g = tf.Graph()
    with g.as_default():
        p = tf1.placeholder(tf.float32, [], name="p")
        pred = tf1.placeholder(tf.bool, [], name="pred")
        f, t = raw.Switch(data=p, pred=pred, name="sw")
        data_only = tf.identity(t, name="data_only")
        tf.negative(data_only, name="o1")
        tf.abs(data_only, name="o2")
        pivot = tf.identity(f, name="pivot")
        tf.negative(pivot, name="o3")
        with tf1.control_dependencies([pivot]):
            tf.abs(p, name="o4")
    got = _check_against_tensorflow(g, ["o1", "o2", "o3", "o4"])
    assert "data_only" not in got and got["o1"][1] == ["sw:1"]
    assert got["pivot"] == ("Identity", ["sw"], []) and got["o4"][2] == ["^pivot"]


def test_a_chain_with_only_control_outputs_becomes_noops_and_goes():
    """A gradient's Sum/Reshape for a constant operand, kept only by a tuple's NoOp."""
    g = tf.Graph()
    with g.as_default():
        p = tf1.placeholder(tf.float32, [2, 3], name="p")
        grad = tf.negative(p, name="grad")
        s = tf.reduce_sum(grad, [0, 1], name="sum")
        r = tf.reshape(s, [], name="reshape")
        group = tf.group(r, grad, name="group_deps")
        with tf1.control_dependencies([group]):
            tf.identity(grad, name="out")
    got = _check_against_tensorflow(g, ["out"])
    assert set(got) == {"p", "grad", "out"}


def test_control_edges_implied_by_a_longer_path_go():
    g = tf.Graph()
    with g.as_default():
        p = tf1.placeholder(tf.float32, [], name="p")
        a = tf.negative(p, name="a")
        b = tf.exp(a, name="b")
        with tf1.control_dependencies([a]):
            tf.add(b, p, name="c")  # ^a: b already waits for a
        k = tf.constant(2.0, name="k")
        with tf1.control_dependencies([k]):
            tf.multiply(p, p, name="d")  # ^k: an inputless Const orders nothing
    got = _check_against_tensorflow(g, ["c", "d"])
    assert got["c"] == ("AddV2", ["b", "p"], []) and got["d"] == ("Mul", ["p", "p"], [])


def _loop_graph():
    """A v1 while loop with a cond, a tuple and the gradient, built by TensorFlow."""
    from tensorflow.python.ops import control_flow_util

    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf1.disable_control_flow_v2()
    try:
        g = tf.Graph()
        with g.as_default():
            x = tf1.placeholder(tf.float32, [3, 4], name="x")
            w = tf.constant(np.linspace(-0.8, 0.8, 16, dtype=np.float32).reshape(4, 4))

            def body(i, h):
                z = tf.matmul(h, w)
                gate = tf.sigmoid(z + 1.0) * tf.tanh(z - 0.5)
                h = tf1.cond(i % 2 < 1, lambda: gate * h + 0.5, lambda: tf.nn.relu(gate - h))
                return i + 1, h

            _, h = tf1.while_loop(lambda i, h: i < 6, body, [tf.constant(0), x])
            loss = tf.reduce_sum(h * h)
            (gx,) = tf1.gradients(loss, [x], gate_gradients=True)
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was
    return g, x, [h, loss, gx]


def _run_ours(gd: graph_pb2.GraphDef, fetches: list[str], feeds: dict, toggle: int):
    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.dependency_optimization = toggle
    with Session(gd, config=config) as sess:
        metadata = config_pb2.RunMetadata()
        options = config_pb2.RunOptions(
            trace_level=config_pb2.RunOptions.FULL_TRACE, output_partition_graphs=True
        )
        values = sess.run(fetches, feeds, run_options=options, run_metadata=metadata)
    executed = sum(len(d.node_stats) for d in metadata.step_stats.dev_stats)
    return values, executed, [n for p in metadata.partition_graphs for n in p.node]


def test_a_loop_with_a_cond_and_its_gradient_gives_tensorflows_values():
    g, x, fetches = _loop_graph()
    feed = np.random.default_rng(3).normal(0, 1.0, (3, 4)).astype(np.float32)
    with tf1.Session(graph=g) as sess:
        expected = sess.run(fetches, {x: feed})
    names = [t.name for t in fetches]
    gd = _ours(g)
    off, executed_off, _ = _run_ours(gd, names, {x.name: feed}, Toggle.OFF)
    on, executed_on, nodes = _run_ours(gd, names, {x.name: feed}, Toggle.DEFAULT)
    for got, plain, want in zip(on, off, expected, strict=True):
        np.testing.assert_array_equal(got, plain)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert executed_on < executed_off
    by_name = {n.name: n for n in nodes}
    for n in nodes:  # every Identity left after a Switch is some node's pivot
        src = n.input[0].split(":")[0] if n.input else ""
        if n.op == "Identity" and by_name.get(src) is not None and by_name[src].op == "Switch":
            assert any(f"^{n.name}" in m.input for m in nodes), n.name


def test_paths_through_a_merge_or_a_control_trigger_do_not_imply_a_control_edge():
    g = tf.Graph()
    with g.as_default():
        p = tf1.placeholder(tf.float32, [], name="p")
        pred = tf1.placeholder(tf.bool, [], name="pred")
        a = tf.negative(p, name="a")
        f, t = raw.Switch(data=a, pred=pred, name="sw")
        m, _ = raw.Merge(inputs=[tf.exp(f), tf.abs(t)], name="m")
        with tf1.control_dependencies([a]):
            tf.negative(m, name="c")  # the Merge runs on its first live input only
        with tf1.control_dependencies([a]):
            trigger = raw.ControlTrigger(name="trigger")  # live even when a is dead
        with tf1.control_dependencies([a, trigger]):
            tf.abs(p, name="d")
    graph = convert_graph_def_to_graph(_ours(g))
    assert remove_redundant_control_edges(graph) == 0
    s = structure(graph)
    assert s["c"][2] == ["^a"] and s["d"][2] == ["^a", "^trigger"]
