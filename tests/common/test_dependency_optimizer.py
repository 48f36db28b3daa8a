"""Tests for the dependency optimization pass (Identity and NoOp nodes that only order
others): the structures TensorFlow's grappler DependencyOptimizer leaves (the oracle),
the nodes it must keep, its switches, and unchanged results of a trained LSTM."""

from __future__ import annotations

import numpy as np
import pytest

import common.ops  # noqa: F401  (registers every op and kernel)
from common.dtypes import DataType
from common.graph.constructor import convert_graph_def_to_graph
from common.graph.graph import Graph
from common.optimizer import dependency
from common.optimizer.dependency import optimize_dependencies
from common.optimizer.graph_optimizer import optimize_graph
from common.session import Session
from protos import config_pb2, graph_pb2, rewriter_config_pb2

F = DataType.DT_FLOAT
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
Toggle = rewriter_config_pb2.RewriterConfig


def _graph_def(*nodes: tuple) -> graph_pb2.GraphDef:
    """(name, op, inputs, device) tuples; float attrs where the op needs them."""
    gd = graph_pb2.GraphDef()
    for name, op, inputs, *device in nodes:
        n = gd.node.add(name=name, op=op, device=device[0] if device else "")
        n.input.extend(inputs)
        if op == "Placeholder":
            n.attr["dtype"].type = F
        elif op != "NoOp":
            n.attr["T"].type = F
    return gd


def structure(graph: Graph) -> dict[str, tuple[str, list[str], list[str]]]:
    """{name: (op, data inputs, sorted control inputs)} of the op nodes."""
    out = {}
    for n in graph.to_graph_def().node:
        data = [i for i in n.input if not i.startswith("^")]
        out[n.name] = (n.op, data, sorted(i for i in n.input if i.startswith("^")))
    return out


def _tuple_graph(*consumers_of_b: str) -> graph_pb2.GraphDef:
    """a, b = tf.tuple([-p, p*p]) as tf.tuple builds it, then consumers."""
    nodes = [
        ("p", "Placeholder", []),
        ("a", "Neg", ["p"]),
        ("b", "Square", ["p"]),
        ("t/group_deps", "NoOp", ["^a", "^b"]),
        ("t/control_dependency", "Identity", ["a", "^t/group_deps"]),
        ("t/control_dependency_1", "Identity", ["b", "^t/group_deps"]),
        ("oa", "Neg", ["t/control_dependency"]),
    ]
    nodes += [(c, "Abs", ["t/control_dependency_1"]) for c in consumers_of_b]
    return _graph_def(*nodes)


def test_tuple_identities_and_a_two_way_noop_are_bypassed():
    graph = convert_graph_def_to_graph(_tuple_graph("ob"))
    assert optimize_dependencies(graph) == 3
    assert structure(graph) == {
        "p": ("Placeholder", [], []),
        "a": ("Neg", ["p"], []),
        "b": ("Square", ["p"], []),
        "oa": ("Neg", ["a"], ["^b"]),  # ^a is already a data input
        "ob": ("Abs", ["b"], ["^a"]),
    }


def test_a_noop_with_more_consumers_than_worth_it_stays():
    graph = convert_graph_def_to_graph(_tuple_graph("ob", "ob2"))
    assert optimize_dependencies(graph) == 2
    s = structure(graph)
    assert s["t/group_deps"] == ("NoOp", [], ["^a", "^b"])
    for name, src in (("oa", "a"), ("ob", "b"), ("ob2", "b")):
        assert s[name][1:] == ([src], ["^t/group_deps"])


def _tf_grappler_dependency(gd: graph_pb2.GraphDef, fetch: list[str]):
    """TensorFlow's own DependencyOptimizer on `gd`: {name: (op, data, controls)}."""
    tf = pytest.importorskip("tensorflow")
    from tensorflow.core.protobuf import config_pb2 as tf_config_pb2
    from tensorflow.python.grappler import tf_optimizer
    from tensorflow.python.training import saver

    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(
            tf.compat.v1.GraphDef.FromString(gd.SerializeToString()), name=""
        )
        for name in fetch:
            g.add_to_collection("train_op", g.get_operation_by_name(name))
    meta = saver.export_meta_graph(graph_def=g.as_graph_def(), graph=g)
    config = tf_config_pb2.ConfigProto()
    config.graph_options.rewrite_options.optimizers.append("dependency")
    config.graph_options.rewrite_options.min_graph_nodes = -1
    out = tf_optimizer.OptimizeGraph(config, meta)
    return {
        n.name: (
            n.op,
            [i for i in n.input if not i.startswith("^")],
            sorted(i for i in n.input if i.startswith("^")),
        )
        for n in out.node
    }


@pytest.mark.parametrize("consumers", [("ob",), ("ob", "ob2")])
def test_structures_match_tensorflows_dependency_optimizer(consumers):
    fetch = ["oa", *consumers]
    # TF's pass also drops Identities without control inputs: none in these graphs.
    gd = _tuple_graph(*consumers)
    expected = _tf_grappler_dependency(gd, fetch)
    graph = convert_graph_def_to_graph(gd)
    optimize_dependencies(graph, keep=fetch)
    assert structure(graph) == expected


def test_nodes_that_carry_meaning_are_kept():
    gd = _graph_def(
        ("p", "Placeholder", []),
        ("pred", "Placeholder", []),
        ("c", "Neg", ["p"]),
        ("use_c", "Neg", ["c"]),  # a data consumer: c stays what it is
        ("sw", "Switch", ["p", "pred"]),
        ("after_switch", "Identity", ["sw:1", "^c"]),
        ("use_switch", "Neg", ["after_switch"]),
        ("waits_on_switch", "Neg", ["p", "^after_switch"]),  # the branch, by control
        ("unfed", "Placeholder", []),  # must still fail when run
        ("after_unfed", "Neg", ["p", "^unfed"]),
        ("check", "CheckNumerics", ["p"]),
        ("after_check", "Neg", ["p", "^check"]),
        ("kept", "Identity", ["p", "^c"]),
        ("use_kept", "Neg", ["kept"]),
        ("to_merge", "Identity", ["p", "^c"]),
        ("merge", "Merge", ["to_merge", "p"]),
        ("other_device", "Identity", ["p", "^c"], CPU1),
        ("use_other_device", "Neg", ["other_device"], CPU1),
        ("plain", "Identity", ["p"]),
        ("use_plain", "Neg", ["plain"]),
        ("root_noop", "NoOp", []),
        ("use_root_noop", "Neg", ["p", "^root_noop"]),
    )
    gd.node[1].attr["dtype"].type = DataType.DT_BOOL
    next(n for n in gd.node if n.name == "check").attr["message"].s = b"bad"
    merge = next(n for n in gd.node if n.name == "merge")
    merge.attr["N"].i = 2
    graph = convert_graph_def_to_graph(gd)
    before = structure(graph)
    assert optimize_dependencies(graph, keep={"kept"}) == 0
    assert structure(graph) == before


def test_enabled_follows_rewriter_config():
    assert dependency.enabled(None)
    assert dependency.enabled(Toggle())
    assert dependency.enabled(Toggle(dependency_optimization=Toggle.ON))
    assert not dependency.enabled(Toggle(dependency_optimization=Toggle.OFF))
    assert not dependency.enabled(Toggle(disable_meta_optimizer=True))


def test_optimize_graph_runs_it_unless_turned_off():
    for rewrite, removed in ((None, 3), (Toggle(dependency_optimization=Toggle.OFF), 0)):
        graph = convert_graph_def_to_graph(_tuple_graph("ob"))
        stats = optimize_graph(graph, keep={"oa", "ob"}, rewrite_options=rewrite)
        assert stats.dependencies_removed == removed
        assert ("t/group_deps" in structure(graph)) == (removed == 0)


def _lstm_graph_def():
    import client as tf

    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [4, 5, 8], name="x")
        h = x
        for layer in range(2):
            with tf.variable_scope(f"rnn{layer}"):
                h, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(8), h, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(h))
        train = tf.train.AdamOptimizer(1e-2).minimize(loss)  # gate_gradients: tuples
        init = tf.global_variables_initializer()
        names = [v.name for v in tf.global_variables()]
    return g.as_graph_def(), loss.name, train.name, init.name, names


def test_a_trained_lstm_is_bit_for_bit_the_same_with_fewer_nodes():
    gd, loss, train, init, variables = _lstm_graph_def()
    feeds = {"x:0": np.random.default_rng(0).random((4, 5, 8), np.float32)}
    results, nodes = [], []
    for toggle in (Toggle.OFF, Toggle.DEFAULT):
        config = config_pb2.ConfigProto()
        config.graph_options.rewrite_options.dependency_optimization = toggle
        with Session(gd, config=config) as sess:
            sess.run([], targets=[init])
            losses = [sess.run([loss], feeds, [train])[0] for _ in range(3)]
            metadata = config_pb2.RunMetadata()
            sess.run(
                [loss],
                feeds,
                [train],
                run_options=config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE),
                run_metadata=metadata,
            )
            nodes.append(sum(len(d.node_stats) for d in metadata.step_stats.dev_stats))
            results.append(losses + sess.run(variables, {}))
    for off, on in zip(*results):
        np.testing.assert_array_equal(off, on)
    assert nodes[1] < nodes[0]
